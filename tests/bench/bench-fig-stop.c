/*
 * Stop: the reply to `stop` of one live `sleep 1000` session, beside a
 * kill(SIGTERM) and waitpid of a sleep we spawned ourselves; and `stop
 * --all` of 1000 such sessions, beside the same of 1000 sleeps, and
 * beside its two floors: 1000 keepers by hand (bench-keeper.c), and 1000
 * pairs of processes in as many cgroups killed, reaped and removed.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Sessions, and our own sleeps, that stop --all takes down. */
#define FIG_STOP_ALL_N 1000

/* Spawn n `sleep 1000` into pids; the count spawned. */
static int
fig_stop_spawn(pid_t *pids, int n)
{
	const char	*argv[] = { "sleep", "1000", NULL };
	int		 i;

	for (i = 0; i < n; i++)
		if ((pids[i] = proc_spawn(argv, NULL, -1, -1, -1)) == -1)
			break;
	return i;
}

/* SIGTERM n processes and reap them all: the ms it takes. */
static double
fig_stop_kill(pid_t *pids, int n)
{
	double	t0 = stat_now_ms();
	int	i;

	for (i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (i = 0; i < n; i++)
		proc_wait(pids[i], -1);
	return stat_now_ms() - t0;
}

/* One stop of a fresh live session, timed from request to reply; or NA. */
double
fig_stop_session_ms(struct rpc *r)
{
	json_int_t	 id;
	json_t		*res;
	double		 t0;

	if ((res = rpc_launch_sleep(r)) == NULL)
		return NA;
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	t0 = stat_now_ms();
	if (rpc_stop(r, id) == -1)
		return NA;
	return stat_now_ms() - t0;
}

/* One stop of a sleep of ours, timed from kill to reap; or NA. */
double
fig_stop_bare_ms(void)
{
	pid_t pid;

	if (fig_stop_spawn(&pid, 1) != 1)
		return NA;
	/* As the session's sleep is, ours is running before we stop it. */
	stat_sleep_ms(1);
	return fig_stop_kill(&pid, 1);
}

/* Figure: stop of one session beside kill+waitpid. */
int
fig_stop_one(struct bench *b)
{
	struct samples	sd = { 0 }, sb = { 0 };
	struct rpc	r;
	double		d = NA, t = NA;
	int		run, rv = 0;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	for (run = 0; run < b->runs && rv == 0; run++) {
		d = fig_stop_session_ms(&r);
		t = fig_stop_bare_ms();
		if (!(d >= 0) || !(t >= 0))
			rv = bench_fail(b, "stop: %s", r.err);
		stat_add(&sd, d);
		stat_add(&sb, t);
	}
	rpc_close(&r);
	if (rv == 0)
		table_row("ms", stat_median(&sd), stat_median(&sb),
		    TARGET(OVER_MAX, 1), NULL, "stop of a live sleep session "
		    "[vs kill TERM+waitpid]");
	stat_free(&sd);
	stat_free(&sb);
	return rv;
}

/*
 * A shell in cgroup cg and a process group of its own that runs a sleep
 * and waits for it: the two processes a session is at its least; its pid,
 * or -1. Between fork and exec only system calls.
 */
static pid_t
fig_stop_pair_spawn(const char *cg)
{
	char	path[PATH_MAX + 16];
	pid_t	pid;
	int	fd;

	snprintf(path, sizeof path, "%s/cgroup.procs", cg);
	if ((pid = fork()) != 0)
		return pid;
	(void)setpgid(0, 0);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd == -1 || write(fd, "0", 1) != 1)
		_exit(127);
	close(fd);
	execl("/bin/sh", "sh", "-c", "sleep 1000; exit 0", (char *)NULL);
	_exit(127);
}

/* How many processes cgroup cg holds; -1 if it cannot be read. */
static int
fig_stop_cg_count(const char *cg)
{
	char	path[PATH_MAX + 16], buf[256];
	ssize_t	n;
	int	fd, lines = 0;

	snprintf(path, sizeof path, "%s/cgroup.procs", cg);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		while (n-- > 0)
			lines += buf[n] == '\n';
	close(fd);
	return lines;
}

/* SIGTERM to every pair's group, reap both of each, remove the cgroups. */
static int
fig_stop_pairs_end(pid_t *pids, char (*cg)[PATH_MAX], int n)
{
	int	i, st, bad = 0;

	for (i = 0; i < n; i++)
		(void)kill(-pids[i], SIGTERM);
	/* The bench is their subreaper: a sleep whose shell ended first is ours. */
	for (i = 0; i < n; i++)
		while (waitpid(-pids[i], &st, 0) > 0 || errno == EINTR)
			continue;
	for (i = 0; i < n; i++)
		bad |= rmdir(cg[i]);
	return bad;
}

/*
 * The floor of stop --all whatever keeps the sessions: n pairs of a shell
 * and its sleep, each pair in a cgroup and a process group of its own,
 * SIGTERM to every group, the 2n processes reaped and the n cgroups
 * removed; the time from the first kill to the last rmdir, or NA where
 * cgroup2 cannot be written.
 */
static double
fig_stop_pairs_ms(int n)
{
	char	(*cg)[PATH_MAX];
	pid_t	*pids;
	double	 t0, t = NA, end;
	int	 i, started;

	if ((cg = calloc(n, sizeof *cg)) == NULL ||
	    (pids = calloc(n, sizeof *pids)) == NULL)
		abort();
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (started = 0; started < n; started++) {
		if (keeper_cg_new(started, cg[started], sizeof cg[started]) ==
		    -1)
			break;
		if ((pids[started] = fig_stop_pair_spawn(cg[started])) == -1) {
			rmdir(cg[started]);
			break;
		}
	}
	/* Timed from when every shell has its sleep. */
	end = stat_now_ms() + 30000;
	for (i = 0; started == n && i < n && stat_now_ms() < end; )
		if (fig_stop_cg_count(cg[i]) >= 2)
			i++;
		else
			stat_sleep_ms(1);
	t0 = stat_now_ms();
	if (fig_stop_pairs_end(pids, cg, started) == 0 && started == n &&
	    i == n)
		t = stat_now_ms() - t0;
	(void)prctl(PR_SET_CHILD_SUBREAPER, 0);
	free(cg);
	free(pids);
	keeper_cg_done();
	return t;
}

/*
 * The floor of stop --all by hand: n keepers, each with its sleep in a
 * cgroup of its own, told to stop at once, then each read to its end,
 * reaped and its cgroup removed; the time from the first stop to the last
 * rmdir, or NA where cgroup2 cannot be written.
 */
static double
fig_stop_keepers_ms(const struct bench *b, int n)
{
	const char		*argv[] = { "sleep", "1000", NULL };
	struct keeper_run	*k;
	double			 t0, t = NA;
	int			 i, started, bad = 0;

	if ((k = calloc(n, sizeof *k)) == NULL)
		abort();
	for (started = 0; started < n; started++) {
		if (keeper_start(b, &k[started], started, argv) == -1)
			break;
		if (keeper_started(&k[started]) == -1) {
			(void)keeper_finish(&k[started]);
			break;
		}
	}
	if (started == n) {
		t0 = stat_now_ms();
		for (i = 0; i < n; i++)
			bad |= keeper_stop(&k[i]);
		for (i = 0; i < n; i++)
			bad |= keeper_finish(&k[i]);
		t = bad ? NA : stat_now_ms() - t0;
	}
	for (i = 0; started < n && i < started; i++) {
		(void)keeper_stop(&k[i]);
		(void)keeper_finish(&k[i]);
	}
	free(k);
	keeper_cg_done();
	return t;
}

/* One sample of stop --all: ms for the sessions' and for our sleeps'. */
static int
fig_stop_all_once(struct bench *b, struct rpc *r, double *d, double *t,
    double *k, double *p)
{
	pid_t	*pids;
	json_t	*res;
	double	 t0;
	int	 n;

	if (rpc_launch_many(r, FIG_STOP_ALL_N, NULL) == -1)
		return bench_fail(b, "launch: %s", r->err);
	t0 = stat_now_ms();
	res = rpc_call(r, "stop", json_pack("{s:b}", "all", 1));
	*d = stat_now_ms() - t0;
	if (res == NULL)
		return bench_fail(b, "stop --all: %s", r->err);
	json_decref(res);
	if ((pids = calloc(FIG_STOP_ALL_N, sizeof *pids)) == NULL)
		abort();
	n = fig_stop_spawn(pids, FIG_STOP_ALL_N);
	stat_sleep_ms(10);
	*t = fig_stop_kill(pids, n);
	free(pids);
	*k = fig_stop_keepers_ms(b, FIG_STOP_ALL_N);
	*p = fig_stop_pairs_ms(FIG_STOP_ALL_N);
	if (n != FIG_STOP_ALL_N)
		return bench_fail(b, "could not spawn %d sleeps",
		    FIG_STOP_ALL_N);
	return 0;
}

/* Figure: stop --all of 1000 sessions beside killing 1000 sleeps. */
int
fig_stop_all(struct bench *b)
{
	struct samples	sd = { 0 }, sb = { 0 }, sk = { 0 }, sp = { 0 };
	struct rpc	r;
	double		d = NA, t = NA, k = NA, p = NA;
	char		note[64];
	int		run, rv = 0;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	snprintf(note, sizeof note, "median of %d runs (BENCH_STOPALL_RUNS)",
	    b->stopall_runs);
	for (run = 0; run < b->stopall_runs && rv == 0; run++)
		if ((rv = fig_stop_all_once(b, &r, &d, &t, &k, &p)) == 0) {
			stat_add(&sd, d);
			stat_add(&sb, t);
			if (k >= 0)
				stat_add(&sk, k);
			if (p >= 0)
				stat_add(&sp, p);
		}
	rpc_close(&r);
	if (rv == 0)
		table_row("ms", stat_median(&sd), stat_median(&sb),
		    TARGET(MAX, 150), note, "stop --all "
		    "of %d sessions [vs kill+waitpid of as many]",
		    FIG_STOP_ALL_N);
	if (rv == 0)
		table_row("ms", stat_median(&sd), stat_median(&sk), NO_TARGET,
		    "the floor: keepers, their cgroups, no daemon", "stop "
		    "--all of %d sessions [vs %d keepers by hand]",
		    FIG_STOP_ALL_N, FIG_STOP_ALL_N);
	if (rv == 0)
		table_row("ms", stat_median(&sd), stat_median(&sp), NO_TARGET,
		    "the floor of any keeping: kill, reap, rmdir", "stop --all "
		    "of %d sessions [vs %d processes in %d cgroups]",
		    FIG_STOP_ALL_N, 2 * FIG_STOP_ALL_N, FIG_STOP_ALL_N);
	stat_free(&sd);
	stat_free(&sb);
	stat_free(&sk);
	stat_free(&sp);
	return rv;
}
