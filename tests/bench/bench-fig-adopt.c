/*
 * Adoption: with 10, 100 and 1000 live exec sessions (`sleep 1000`, one in
 * ten with a transport), the daemon is killed with SIGKILL and a new one
 * started on the same socket; the time from its spawn to its first answer
 * to a list is the adoption's, since a list waits for the last session
 * adopted (a ping is answered at once). Beside it, the same start of a
 * daemon on a socket of its own with nothing to adopt.
 * Every session must be listed, running, after each adoption.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The session counts, cumulative: sessions are only ever added. */
static const int fig_adopt_counts[] = { 10, 100, 1000 };
/* How long a new daemon may take to answer, in ms. */
#define FIG_ADOPT_START_MS 60000

/* Spawn dbgctld --foreground on sock, its output appended to the log. */
static pid_t
fig_adopt_spawn(struct bench *b, const char *sock)
{
	char		 listen[128], log[128];
	const char	*argv[] = { b->dbgctld, "--foreground", "--listen",
			    listen, NULL };
	pid_t		 pid;
	int		 fd;

	snprintf(listen, sizeof listen, "unix:%s", sock);
	snprintf(log, sizeof log, "%s/daemon.log", b->dir);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	pid = proc_spawn(argv, b->envp, -1, fd, fd);
	if (fd >= 0)
		close(fd);
	return pid;
}

/*
 * Start a daemon on sock and time its spawn to its first answer to a list,
 * connecting again while it does not listen; the ms, or NA with b->why.
 */
static double
fig_adopt_start(struct bench *b, const char *sock, pid_t *pid)
{
	double	 t0 = stat_now_ms(), end = t0 + FIG_ADOPT_START_MS;
	json_t	*res;
	struct rpc r;

	if ((*pid = fig_adopt_spawn(b, sock)) == -1) {
		bench_fail(b, "cannot spawn %s", b->dbgctld);
		return NA;
	}
	for (;;) {
		if (rpc_open(&r, sock) == 0) {
			res = rpc_call(&r, "list", json_object());
			rpc_close(&r);
			if (res != NULL) {
				json_decref(res);
				return stat_now_ms() - t0;
			}
		}
		if (proc_wait(*pid, 0) != -1 || stat_now_ms() > end) {
			*pid = 0;
			bench_fail(b, "dbgctld on %s did not answer", sock);
			return NA;
		}
		stat_sleep_ms(0.2);
	}
}

/* Shut down the daemon on sock and reap it. */
static void
fig_adopt_shutdown(const char *sock, pid_t pid)
{
	struct rpc	 r;
	json_t		*res;

	if (rpc_open(&r, sock) == 0) {
		res = rpc_call(&r, "shutdown", json_object());
		json_decref(res);
		rpc_close(&r);
	}
	if (proc_wait(pid, 30000) == -1) {
		kill(pid, SIGKILL);
		proc_wait(pid, -1);
	}
}

/* How many sessions a list's result shows running (res taken). */
int
fig_adopt_count_running(json_t *res)
{
	json_t	*row;
	size_t	 i;
	int	 n = 0;

	if (res == NULL)
		return -1;
	json_array_foreach(json_object_get(res, "sessions"), i, row)
		n += json_is_string(json_object_get(row, "state")) &&
		    strcmp(json_string_value(json_object_get(row, "state")),
		    "running") == 0;
	json_decref(res);
	return n;
}

/* The sessions list shows running; -1 with r->err if it cannot be asked. */
static int
fig_adopt_running(struct rpc *r)
{
	return fig_adopt_count_running(rpc_call(r, "list", json_object()));
}

/* Launch n more sessions, one in ten with a transport; 0 or -1. */
int
fig_adopt_grow(struct bench *b, int n)
{
	json_t	*tx = json_pack("{s:s, s:[s, s], s:s, s:b}", "kind", "exec",
		    "argv", "sleep", "1000", "cwd", "/", "transport", 1);
	struct rpc r;
	int	 rv;

	if (rpc_open(&r, b->sock) == -1) {
		json_decref(tx);
		return bench_fail(b, "%s", r.err);
	}
	rv = rpc_launch_many(&r, n / 10, tx) == -1 ||
	    rpc_launch_many(&r, n - n / 10, NULL) == -1 ?
	    bench_fail(b, "launch: %s", r.err) : 0;
	rpc_close(&r);
	json_decref(tx);
	return rv;
}

/*
 * One adoption of n sessions: SIGKILL, a new daemon timed to its first
 * list, and all n listed running; its ms into *ms, or -1 with b->why.
 */
static int
fig_adopt_once(struct bench *b, int n, double *ms)
{
	struct rpc	r;
	int		running;

	kill(b->daemon, SIGKILL);
	proc_wait(b->daemon, -1);
	if (!((*ms = fig_adopt_start(b, b->sock, &b->daemon)) >= 0))
		return -1;
	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	running = fig_adopt_running(&r);
	rpc_close(&r);
	if (running != n)
		return bench_fail(b, "%d of %d sessions running after the "
		    "adoption", running, n);
	return 0;
}

/* The start of a daemon with nothing to adopt: the baseline, in ms. */
static double
fig_adopt_base(struct bench *b)
{
	char	sock[128];
	pid_t	pid;
	double	ms;

	snprintf(sock, sizeof sock, "%s/base", b->dir);
	ms = fig_adopt_start(b, sock, &pid);
	if (pid > 0)
		fig_adopt_shutdown(sock, pid);
	unlink(sock);
	return ms;
}

/* The rows of one count: p50 and p99 of its adoptions beside the base. */
static void
fig_adopt_rows(struct samples *sa, struct samples *sb, int n)
{
	table_row("ms", stat_median(sa), stat_median(sb), n == 1000 ?
	    TARGET(MAX, 1000) : NO_TARGET, "spawn to first list", "adoption "
	    "of %d sessions after SIGKILL, p50 [vs a start with none]", n);
	table_row("ms", stat_pct(sa, 99), stat_pct(sb, 99), NO_TARGET, NULL,
	    "adoption of %d sessions after SIGKILL, p99 [vs a start with "
	    "none]", n);
}

/* Figure: adoption of 10, 100 and 1000 sessions. */
int
fig_adopt(struct bench *b)
{
	struct samples	sa = { 0 }, sb = { 0 };
	double		ms, base;
	size_t		c;
	int		have = 0, run, rv = 0;

	for (c = 0; c < sizeof fig_adopt_counts / sizeof fig_adopt_counts[0] &&
	    rv == 0; c++) {
		rv = fig_adopt_grow(b, fig_adopt_counts[c] - have);
		have = fig_adopt_counts[c];
		daemon_settle(b);
		for (run = 0; run < b->runs && rv == 0; run++) {
			rv = fig_adopt_once(b, have, &ms);
			base = fig_adopt_base(b);
			if (rv == 0 && !(base >= 0))
				rv = -1;
			stat_add(&sa, ms);
			stat_add(&sb, base);
		}
		if (rv == 0)
			fig_adopt_rows(&sa, &sb, have);
		stat_free(&sa);
		stat_free(&sb);
	}
	return rv;
}
