/*
 * gdb's MI channel, the daemon's second pty, which gdb opens by name with
 * new-ui. new-ui says "New UI allocated" on the console, which is the
 * user's. gdb 12 and later run it from a script of the session's, with
 * the console's output sent to /dev/null for that one command: a script's
 * commands are not typed, so gdb says nothing of the redirection, and
 * "with" puts the user's logging settings back. Older ones send the
 * message through a pipe to nowhere, which costs a shell and a cat (about
 * 3 ms of a launch, that gdb waits for before it reads on).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "argv.h"
#include "gdb.h"

/* The session's script, beside its MI transcript. */
static void
gdb_newui_path(const struct session *s, char *path, size_t len)
{
	snprintf(path, len, "%s/sessions/%lu.mi.gdb", dmn.state_dir, s->id);
}

/* Write the script that opens pts as gdb's MI channel; -1 with errno. */
static int
gdb_newui_write(const char *path, const char *pts)
{
	char	*text;
	size_t	 len;
	ssize_t	 n;
	int	 fd, saved;

	xasprintf(&text, "if $_gdb_major >= 12\n"
	    "  with logging file /dev/null -- with logging redirect on -- "
	    "with logging enabled on -- new-ui mi3 %s\n"
	    "else\n"
	    "  pipe new-ui mi3 %s | cat >/dev/null\n"
	    "end\n", pts, pts);
	len = strlen(text);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1) {
		free(text);
		return -1;
	}
	n = write(fd, text, len);
	free(text);
	if (n != (ssize_t)len) {
		saved = n == -1 ? errno : ENOSPC;
		close(fd);
		errno = saved;
		return -1;
	}
	return close(fd);
}

/*
 * Give gdb its MI channel on pts: the session's script, or if it cannot
 * be written, the pipe.
 */
void
gdb_newui_args(struct argv *av, struct session *s, const char *pts)
{
	char path[PATH_MAX + 64];

	gdb_newui_path(s, path, sizeof path);
	if (gdb_newui_write(path, pts) == 0) {
		argv_push(av, "-x");
		argv_push(av, path);
		return;
	}
	log_warn("session %lu: %s: %s; gdb's MI channel goes through a pipe",
	    s->id, path, strerror(errno));
	(void)unlink(path);
	argv_push(av, "-ex");
	argv_pushf(av, "pipe new-ui mi3 %s | cat >/dev/null", pts);
}

/* The session ended: its script goes (one never written is fine). */
void
gdb_newui_remove(struct session *s)
{
	char path[PATH_MAX + 64];

	gdb_newui_path(s, path, sizeof path);
	session_prune_unlink(s, path);
}
