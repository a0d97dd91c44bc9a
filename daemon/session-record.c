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

/* The port s's kind says its server listens on (status's "port"), or 0. */
static int
session_record_port(const struct session *s)
{
	json_t	*o;
	int	 port = 0;

	if (s->backend->status == NULL)
		return 0;
	o = json_object();
	s->backend->status(s, o);
	if (json_is_integer(json_object_get(o, "port")))
		port = (int)json_integer_value(json_object_get(o, "port"));
	json_decref(o);
	return port;
}

/* The record of s as JSON. */
static json_t *
session_record_json(struct session *s)
{
	struct session_event	 ev = { .kind = SE_RECORD };
	json_t			*procs = json_array(), *p, *rec;
	size_t			 i;
	int			 port;

	for (i = 0; i < s->nprocs; i++) {
		p = json_pack("{s:s}", "role", s->procs[i].role);
		if (s->procs[i].proc != NULL && proc_cgroup(s->procs[i].proc) !=
		    NULL)
			json_object_set_new(p, "cgroup", json_string(
			    proc_cgroup(s->procs[i].proc)));
		json_array_append_new(procs, p);
	}
	rec = json_pack("{s:I, s:O, s:f, s:o}", "id", (json_int_t)s->id,
	    "params", s->l.params, "started_at", s->started_at, "procs",
	    procs);
	/* A managed server's port, which a new daemon cannot look for. */
	if ((port = session_record_port(s)) > 0)
		json_object_set_new(rec, "port", json_integer(port));
	/* Its lease's token, for its client's claim after an adoption. */
	if (s->l.lease_token[0] != '\0')
		json_object_set_new(rec, "lease_token", json_string(
		    s->l.lease_token));
	/* Its hold, its RTT, its deadline: the features' own (daemon.c). */
	ev.json = rec;
	session_fire(s, &ev);
	return rec;
}

/*
 * Write s's record, a small file, whole, in place of the one before (a
 * new file renamed over it, so a daemon that dies meanwhile leaves one or
 * the other): at the spawn, and when its hold or its deadline changes. A
 * daemon that dies before the first leaves a session no new daemon
 * adopts, which its keeper ends at its grace, as if it were not adoptable.
 */
void
session_record_write(struct session *s)
{
	char	 path[PATH_MAX + 64], tmp[PATH_MAX + 80], *text;
	json_t	*rec;
	size_t	 len;
	int	 fd, ok;

	if (s->l.params == NULL || dmn.adopt_grace_ms == 0)
		return;
	rec = session_record_json(s);
	text = json_dumps(rec, JSON_COMPACT);
	json_decref(rec);
	if (text == NULL)
		log_fatal("session %lu: its record cannot be written", s->id);
	len = strlen(text);
	session_record_path(s->id, path, sizeof path);
	snprintf(tmp, sizeof tmp, "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	ok = fd != -1 && write(fd, text, len) == (ssize_t)len;
	if (fd != -1 && close(fd) != 0)
		ok = 0;
	if (!ok || rename(tmp, path) != 0) {
		log_warn("%s: %s; a new daemon cannot adopt session %lu as it "
		    "is now", path, strerror(errno), s->id);
		(void)unlink(tmp);
	}
	free(text);
}

/* s's hold or deadline changed: its record says so, if it has one. */
void
session_record_note(struct session *s)
{
	if (s->backend->flags & BACKEND_ADOPT && !session_ended(s) &&
	    s->nprocs > 0 && s->procs[0].proc != NULL)
		session_record_write(s);
}

/*
 * Parse the size bytes of the record at fd, read at once: jansson's own
 * reader of a descriptor reads it a byte a system call, a thousand records
 * 150,000 reads on the way of an adoption.
 */
static json_t *
session_record_load(int fd, size_t size, json_error_t *jerr)
{
	char	*text = xmalloc(size + 1);
	size_t	 have = 0;
	ssize_t	 n;
	json_t	*rec;

	while (have <= size &&
	    (n = read(fd, text + have, size + 1 - have)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(jerr->text, sizeof jerr->text, "%s",
			    strerror(errno));
			free(text);
			return NULL;
		}
		have += (size_t)n;
	}
	rec = json_loadb(text, have, 0, jerr);
	free(text);
	return rec;
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
	else if ((rec = session_record_load(fd, (size_t)st.st_size,
	    &jerr)) == NULL)
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
