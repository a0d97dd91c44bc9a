/*
 * The adoption soak's clients, started once and riding out every kill:
 * `dbgctl attach` on a pty of the test's own, to a session that answers
 * each line typed at it, attaches again after each kill and still carries
 * what is typed there and back; `dbgctl logs -f` of a streamer's console
 * prints every byte of it once, in order, and ends with the session. The
 * test alone starts daemons, so neither client starts one of its own.
 */
#include "harness.h"
#include "adopt-soak.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the unix socket of inode ino is connected (/proc/net/unix). */
static bool
sa_client_inode_connected(unsigned long ino)
{
	char line[512];
	unsigned long i;
	unsigned st;
	bool found = false;
	FILE *f = fopen("/proc/net/unix", "r");

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof line, f) != NULL)
		found = sscanf(line, "%*s %*s %*s %*s %*s %x %lu", &st, &i) ==
		    2 && i == ino && st == 3;
	fclose(f);
	return found;
}

/*
 * Whether pid runs the client already: between fork and exec it is a copy
 * of this test, with this test's own connected sockets (Criterion's).
 */
static bool
sa_client_execed(pid_t pid)
{
	char exe[64];
	struct stat a, b;

	snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
	return stat(exe, &a) == 0 && stat(H->dbgctl, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Predicate: the client *(pid_t *)arg holds a connected unix socket, its
 * connection to the daemon: from then on, the daemon's death is one it
 * rides out, not a start it must make.
 */
static bool
sa_client_connected(void *arg)
{
	char dir[64], path[PATH_MAX], link[64];
	unsigned long ino;
	struct dirent *de;
	bool found = false;
	DIR *d;
	ssize_t n;

	/* One that ended already had its answer. */
	if (h_pid_state(*(pid_t *)arg) == 'Z')
		return true;
	if (!sa_client_execed(*(pid_t *)arg)) {
		h_nap(5);
		return false;
	}
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)*(pid_t *)arg);
	if ((d = opendir(dir)) == NULL)
		return true;
	while (!found && (de = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = sscanf(link, "socket:[%lu]", &ino) == 1 &&
		    sa_client_inode_connected(ino);
	}
	closedir(d);
	if (!found)
		h_nap(5);
	return found;
}

/* Wait until the client p has connected to the daemon; asserted. */
void
sa_client_wait_connected(struct sa *s, struct h_proc *p, const char *what)
{
	cr_assert(h_wait_for(sa_client_connected, &p->pid, H_WAIT_BOUND),
	    "%s: %s never connected to the daemon", s->where, what);
}

/* Add what logs -f has printed so far to its buffer, waiting up to ms. */
static void
sa_client_pump(struct sa *s, int ms)
{
	struct pollfd pfd = { .fd = s->cl.follow.outfd, .events = POLLIN };
	char buf[65536];
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return;
	n = read(s->cl.follow.outfd, buf, sizeof buf);
	if (n > 0)
		h_bytes_add(&s->cl.out, buf, (size_t)n);
}

/*
 * The clients: attach to a session that answers "got-LINE" for each line,
 * and logs -f of the stream followed.
 */
void
sa_client_start(struct sa *s, struct sa_stream *followed)
{
	char ids[32];
	const char *script = "echo attach-ready; while read l; do echo "
	    "got-$l; done";

	/* Only the test starts daemons: a client's start would race it. */
	h_ctx_env_add("DBGCTL_DAEMON=/nonexistent/dbgctld");
	s->cl.attached = h_cli_launch_sh(NULL, script);
	h_pty_open(&s->cl.pty, 30, 100);
	h_pty_spawn(&s->cl.pty, H_ARGS("attach", h_idstr(s->cl.attached, ids,
	    sizeof ids)));
	s->cl.pty_off = h_pty_expect(&s->cl.pty, 0, "attach-ready",
	    H_WAIT_BOUND);
	h_pty_expect_raw(&s->cl.pty, H_WAIT_BOUND, "once attached");
	s->cl.followed = followed;
	cr_assert_eq(h_cli_start(&s->cl.follow, H_ARGS("logs", "-f",
	    h_idstr(followed->id, ids, sizeof ids))), 0, "start logs -f");
}

/*
 * logs -f has printed at least what the stream held when last read, and
 * all it printed is the stream's bytes, once, in order.
 */
static void
sa_client_follows(struct sa *s)
{
	struct sa_stream *st = s->cl.followed;
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	size_t n;

	while (s->cl.out.len < st->seen.len && h_now() < end)
		sa_client_pump(s, 100);
	n = s->cl.out.len < st->seen.len ? s->cl.out.len : st->seen.len;
	cr_assert(n == st->seen.len && memcmp(s->cl.out.p, st->seen.p, n) ==
	    0, "%s: logs -f of session %ld printed %zu bytes, not the %zu of "
	    "its stream once, in order: %s; the daemons' logs: %s", s->where,
	    st->id, s->cl.out.len, st->seen.len, h_shown(s->cl.out.p,
	    s->cl.out.len, 400), sa_logs(s));
}

/*
 * After an adoption: attach has attached again, and a line typed at it
 * comes back answered; logs -f has carried on.
 */
void
sa_client_check(struct sa *s)
{
	struct h_pty *p = &s->cl.pty;
	char line[32], answer[40];

	s->cl.pty_off = h_pty_expect(p, s->cl.pty_off, "attached again to "
	    "session", H_WAIT_BOUND);
	cr_assert(!p->done, "%s: attach ended across the restart: %s",
	    s->where, h_pty_screen(p));
	s->cl.again++;
	snprintf(line, sizeof line, "r%d\r", s->round);
	snprintf(answer, sizeof answer, "got-r%d", s->round);
	h_pty_type(p, line, strlen(line));
	s->cl.pty_off = h_pty_expect(p, s->cl.pty_off, answer, H_WAIT_BOUND);
	sa_client_follows(s);
}

/*
 * At the end, once stop --all has returned: attach ends with its session
 * and leaves the terminal as it was; logs -f ends with its stream, having
 * printed all of it once, in order.
 */
void
sa_client_end(struct sa *s)
{
	struct sa_stream *st = s->cl.followed;
	size_t len;
	char *all;

	cr_assert(h_pty_wait_exit(&s->cl.pty, H_WAIT_BOUND), "%s: attach did "
	    "not end with its session: %s", s->where, h_pty_screen(&s->cl.pty));
	h_pty_expect_restored(&s->cl.pty, "after the kills and the end");
	h_pty_close(&s->cl.pty);
	h_run_wait(&s->cl.follow, H_RUN_BOUND);
	h_bytes_add(&s->cl.out, s->cl.follow.res.out, s->cl.follow.res.out_len);
	cr_assert_eq(s->cl.follow.res.code, 0, "%s: logs -f exited %d: %s",
	    s->where, s->cl.follow.res.code, s->cl.follow.res.err);
	all = sa_stream_read(s, st->id, st->name, &len);
	cr_assert(s->cl.out.len == len && memcmp(s->cl.out.p, all, len) == 0,
	    "%s: logs -f of session %ld printed %zu bytes, not the %zu of its "
	    "stream once, in order: %s", s->where, st->id, s->cl.out.len, len,
	    h_shown(s->cl.out.p, s->cl.out.len, 400));
	free(all);
	h_run_free(&s->cl.follow.res);
	free(s->cl.out.p);
}
