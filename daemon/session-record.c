/*
 * A session's record in the state directory (sessions/ID.rec): what a new
 * daemon needs to adopt it should this one die: the launch as asked, when
 * it began, and its processes' cgroups. Written once, when its main
 * process is spawned; removed when the session has ended, since nothing
 * of it is left to adopt then.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "adopt.h"
#include "proc.h"

/* The most a record may be: a launch is bounded by the request's size. */
#define SESSION_RECORD_MAX (4 * 1024 * 1024)

/* The record's path. */
static void
session_record_path(unsigned long id, char *path, size_t len)
{
	snprintf(path, len, "%s/sessions/%lu.rec", dmn.state_dir, id);
}

/* The record of s as JSON. */
static json_t *
session_record_json(const struct session *s)
{
	json_t	*procs = json_array(), *p;
	size_t	 i;

	for (i = 0; i < s->nprocs; i++) {
		p = json_pack("{s:s}", "role", s->procs[i].role);
		if (s->procs[i].proc != NULL && proc_cgroup(s->procs[i].proc) !=
		    NULL)
			json_object_set_new(p, "cgroup", json_string(
			    proc_cgroup(s->procs[i].proc)));
		json_array_append_new(procs, p);
	}
	return json_pack("{s:I, s:O, s:f, s:o}", "id", (json_int_t)s->id,
	    "params", s->l.params, "started_at", s->started_at, "procs",
	    procs);
}

/*
 * Write s's record, a small file, whole: a daemon that dies before it is
 * written leaves a session no new daemon adopts, which its keeper ends at
 * its grace, as if it had not been adoptable.
 */
void
session_record_write(struct session *s)
{
	char	 path[PATH_MAX + 64], *text;
	json_t	*rec;
	size_t	 len;
	int	 fd;

	if (s->l.params == NULL)
		return;
	rec = session_record_json(s);
	text = json_dumps(rec, JSON_COMPACT);
	json_decref(rec);
	if (text == NULL)
		log_fatal("session %lu: its record cannot be written", s->id);
	len = strlen(text);
	session_record_path(s->id, path, sizeof path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1 || write(fd, text, len) != (ssize_t)len)
		log_warn("%s: %s; a new daemon cannot adopt session %lu", path,
		    strerror(errno), s->id);
	if (fd != -1)
		close(fd);
	free(text);
}

/* The record of session id, or NULL (logged) if there is none to trust. */
json_t *
session_record_read(unsigned long id)
{
	char		 path[PATH_MAX + 64];
	json_error_t	 jerr;
	struct stat	 st;
	json_t		*rec = NULL;
	int		 fd;

	session_record_path(id, path, sizeof path);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != getuid() || st.st_size > SESSION_RECORD_MAX)
		log_warn("%s: %s", path, fd == -1 ? strerror(errno) :
		    "not a record of ours");
	else if ((rec = json_loadfd(fd, 0, &jerr)) == NULL)
		log_warn("%s: %s", path, jerr.text);
	else if (!json_is_object(json_object_get(rec, "params")) ||
	    json_integer_value(json_object_get(rec, "id")) != (json_int_t)id) {
		log_warn("%s: not a session's record", path);
		json_decref(rec);
		rec = NULL;
	}
	if (fd != -1)
		close(fd);
	return rec;
}

/* Remove session id's record. */
void
session_record_remove(unsigned long id)
{
	char path[PATH_MAX + 64];

	session_record_path(id, path, sizeof path);
	if (unlink(path) != 0 && errno != ENOENT)
		log_warn("%s: %s", path, strerror(errno));
}

/* A session ended: nothing of it is left to adopt. */
void
session_record_ended(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	if (s->backend->flags & BACKEND_ADOPT && dmn.adopt_grace_ms > 0)
		session_record_remove(s->id);
}
