/*
 * Where a session's readers stand, kept for the next daemon
 * (sessions/ID.cursors beside its logs): the named expect cursors (the
 * command line's "cli" among them) and how far the target's output was
 * taken by read (recv), a pipe or a subscriber. The streams' logs let an
 * adopted session go on at their ends, but not these: without them a new
 * expect matched from byte 0 again and a recv skipped what was held.
 *
 * Each move appends one line, "KEY OFFSET", to a descriptor kept open, so
 * an expect's match costs one small write, not the rewrite of a record;
 * the last line of a key wins. Past CURSOR_FILE_MAX bytes the file is
 * written again with one line a key (a new file renamed over it), as it
 * is at an adoption, so a daemon that handed the session over and writes
 * on meanwhile writes into a file nobody reads. Only sessions a new
 * daemon can adopt have one, and only while they run.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "cursor-file.h"
#include "method.h"

/* Bytes the file may grow to before it is written again, a key a line. */
#define CURSOR_FILE_MAX (16 * 1024)
/* Keys a session keeps: its named cursors and the target's taken offset. */
#define CURSOR_FILE_KEYS 64
/* A key: "c STREAM NAME" or "t" (a stream is 15 bytes, a name 32). */
#define CURSOR_FILE_KEY 64
/* The offset a pipe or a subscriber reads on from: nobody knows how far. */
#define CURSOR_FILE_PASSING UINT64_MAX

/* One key's last value. */
struct cursor_file_entry {
	char		 key[CURSOR_FILE_KEY];
	uint64_t	 off;
};

/* A session's file: its descriptor and the last value of each key. */
struct cursor_file {
	int				 fd;
	size_t				 bytes;	/* in the file now */
	struct cursor_file_entry	 v[CURSOR_FILE_KEYS];
	size_t				 n;
};

/* The file's path. */
static void
cursor_file_path(unsigned long id, char *path, size_t len)
{
	snprintf(path, len, "%s/sessions/%lu.cursors", dmn.state_dir, id);
}

/* Whether s may have a file: a new daemon could adopt it. */
static bool
cursor_file_wanted(const struct session *s)
{
	return dmn.adopt_grace_ms > 0 && s->backend->flags & BACKEND_ADOPT &&
	    !session_ended(s);
}

/* s's file's state, made (with no file yet) the first time. */
static struct cursor_file *
cursor_file_of(struct session *s)
{
	if (s->cursor_file == NULL) {
		s->cursor_file = xcalloc(1, sizeof *s->cursor_file);
		s->cursor_file->fd = -1;
	}
	return s->cursor_file;
}

/* One line as written: "KEY OFFSET\n", "-" for a reader passing through. */
static int
cursor_file_line(const struct cursor_file_entry *e, char *buf, size_t len)
{
	if (e->off == CURSOR_FILE_PASSING)
		return snprintf(buf, len, "%s -\n", e->key);
	return snprintf(buf, len, "%s %" PRIu64 "\n", e->key, e->off);
}

/*
 * Write the file again, one line a key, as a new file renamed over the
 * old one, and append to it from now on; the old one's descriptor goes.
 */
static void
cursor_file_compact(struct session *s, struct cursor_file *f)
{
	char	path[PATH_MAX + 64], tmp[PATH_MAX + 80];
	char	text[CURSOR_FILE_KEYS * (CURSOR_FILE_KEY + 24)];
	size_t	i, len = 0;

	for (i = 0; i < f->n; i++)
		len += (size_t)cursor_file_line(&f->v[i], text + len,
		    sizeof text - len);
	cursor_file_path(s->id, path, sizeof path);
	snprintf(tmp, sizeof tmp, "%s.new", path);
	if (f->fd != -1)
		close(f->fd);
	f->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (f->fd == -1 || write(f->fd, text, len) != (ssize_t)len ||
	    rename(tmp, path) != 0) {
		log_warn("%s: %s; a new daemon would not find session %lu's "
		    "cursors", path, strerror(errno), s->id);
		if (f->fd != -1)
			close(f->fd);
		f->fd = -1;
		(void)unlink(tmp);
		return;
	}
	f->bytes = len;
}

/* Set key's value in the map: its entry, or NULL if unchanged or full. */
static struct cursor_file_entry *
cursor_file_set(struct cursor_file *f, const char *key, uint64_t off)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		if (strcmp(f->v[i].key, key) != 0)
			continue;
		if (f->v[i].off == off)
			return NULL;
		f->v[i].off = off;
		return &f->v[i];
	}
	if (f->n == CURSOR_FILE_KEYS)
		return NULL;
	strlcpy(f->v[f->n].key, key, sizeof f->v[f->n].key);
	f->v[f->n].off = off;
	return &f->v[f->n++];
}

/* key of s stands at off now: one line appended (the file made first). */
static void
cursor_file_note(struct session *s, const char *key, uint64_t off)
{
	struct cursor_file		*f;
	struct cursor_file_entry	*e;
	char				 line[CURSOR_FILE_KEY + 24];
	int				 len;

	if (!cursor_file_wanted(s) || (e = cursor_file_set((f =
	    cursor_file_of(s)), key, off)) == NULL)
		return;
	if (f->fd == -1 || f->bytes >= CURSOR_FILE_MAX) {
		cursor_file_compact(s, f);
		return;
	}
	len = cursor_file_line(e, line, sizeof line);
	if (write(f->fd, line, (size_t)len) != len) {
		log_warn("session %lu: its cursors file: %s", s->id,
		    strerror(errno));
		close(f->fd);
		f->fd = -1;
		return;
	}
	f->bytes += (size_t)len;
}

/* A named expect cursor of s moved: to off on stream. */
void
cursor_file_cursor(struct session *s, const char *stream, const char *name,
    uint64_t off)
{
	char key[CURSOR_FILE_KEY];

	snprintf(key, sizeof key, "c %s %s", stream, name);
	cursor_file_note(s, key, off);
}

/*
 * s's target output was taken (by read, or a reader passing through
 * stopped): the next daemon's reader goes on from there.
 */
void
cursor_file_taken(struct session *s)
{
	if (s->transport != NULL)
		cursor_file_note(s, "t", transport_offset(s->transport));
}

/*
 * A pipe or a subscriber is to pass s's target output through: how far it
 * gets cannot be kept at each byte's cost, so a pipe that reconnects says
 * where it stands, and otherwise the next daemon goes on at the stream's
 * end, as it would with no file.
 */
void
cursor_file_passing(struct session *s)
{
	if (s->transport != NULL)
		cursor_file_note(s, "t", CURSOR_FILE_PASSING);
}

/* Parse one line of the file into key and off; false if it is not one. */
static bool
cursor_file_parse(char *line, char **key, uint64_t *off)
{
	char	*sp = strrchr(line, ' '), *end;

	if (sp == NULL || sp == line || sp - line >= CURSOR_FILE_KEY)
		return false;
	*sp = '\0';
	*key = line;
	if (strcmp(sp + 1, "-") == 0) {
		*off = CURSOR_FILE_PASSING;
		return true;
	}
	errno = 0;
	*off = strtoull(sp + 1, &end, 10);
	return errno == 0 && end != sp + 1 && *end == '\0';
}

/* Give one key read back to whom it belongs. */
static void
cursor_file_restore(struct session *s, const char *key, uint64_t off)
{
	char	stream[CURSOR_FILE_KEY], name[CURSOR_FILE_KEY];

	if (strcmp(key, "t") == 0) {
		if (s->transport != NULL && off != CURSOR_FILE_PASSING)
			(void)transport_seek(s->transport, off);
		return;
	}
	if (sscanf(key, "c %63s %63s", stream, name) == 2 &&
	    session_stream(s, stream) != NULL)
		method_expect_restore(s, stream, name, off);
}

/* Read the file at path into f's map; false if there is none of ours. */
static bool
cursor_file_load(struct cursor_file *f, const char *path)
{
	char		*line = NULL, *key;
	struct stat	 st;
	size_t		 cap = 0;
	uint64_t	 off;
	FILE		*fp;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != getuid() || (fp = fdopen(fd, "r")) == NULL) {
		log_warn("%s: not a file of ours", path);
		close(fd);
		return false;
	}
	while (getline(&line, &cap, fp) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (cursor_file_parse(line, &key, &off))
			(void)cursor_file_set(f, key, off);
	}
	free(line);
	fclose(fp);
	return true;
}

/*
 * Read adopted s's file back: each key's last value goes where it
 * belongs, and the file is written anew, this daemon's from now on.
 * With no "t" key nothing of the target's output was taken: all of it
 * is held for the next reader, as it was.
 */
void
cursor_file_adopt(struct session *s)
{
	char			 path[PATH_MAX + 64];
	struct cursor_file	*f = cursor_file_of(s);
	size_t			 i;
	bool			 taken = false;

	cursor_file_path(s->id, path, sizeof path);
	if (!cursor_file_load(f, path)) {
		if (s->transport != NULL)
			(void)transport_seek(s->transport, 0);
		return;
	}
	for (i = 0; i < f->n; i++) {
		cursor_file_restore(s, f->v[i].key, f->v[i].off);
		taken = taken || strcmp(f->v[i].key, "t") == 0;
	}
	if (!taken && s->transport != NULL)
		(void)transport_seek(s->transport, 0);
	if (cursor_file_wanted(s))
		cursor_file_compact(s, f);
}

/* A session ended: no daemon will adopt it, its file goes. */
void
cursor_file_ended(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	char path[PATH_MAX + 64];

	(void)k;
	(void)ev;
	if (s->cursor_file == NULL)
		return;
	if (s->cursor_file->fd != -1)
		close(s->cursor_file->fd);
	s->cursor_file->fd = -1;
	cursor_file_path(s->id, path, sizeof path);
	session_prune_unlink(s, path);
}

/* Session id was not adopted: its file, if it left one, goes. */
void
cursor_file_remove(unsigned long id)
{
	char path[PATH_MAX + 64];

	cursor_file_path(id, path, sizeof path);
	if (unlink(path) != 0 && errno != ENOENT)
		log_warn("%s: %s", path, strerror(errno));
}

/* A session is freed: its file's state goes. */
void
cursor_file_freed(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	if (s->cursor_file != NULL && s->cursor_file->fd != -1)
		close(s->cursor_file->fd);
	free(s->cursor_file);
	s->cursor_file = NULL;
}
