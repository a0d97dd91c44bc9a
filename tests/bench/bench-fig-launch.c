/*
 * Launch: `dbgctl launch --kind exec --wait -- /bin/true` as a whole
 * process beside a posix_spawn and waitpid of /bin/true; and a gdb
 * session's launch until gdb has run its first -x command, beside a bare
 * `gdb -batch -ex` of the same command from start to exit.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The pause before each sample of the idle row: long enough for the
 * kernel to have let go of its last cgroup move (one RCU grace period).
 */
#define FIG_LAUNCH_IDLE_MS 50

/* The command gdb runs first, and what it prints. */
#define FIG_LAUNCH_GDB_CMD "echo READY\\n"
#define FIG_LAUNCH_GDB_MARK "READY"

/*
 * The floor of a launch --wait by hand: a keeper in a new cgroup runs
 * /bin/true and is read to its end, reaped and its cgroup removed; NA
 * where cgroup2 cannot be written.
 */
static double
fig_launch_keeper_ms(const struct bench *b, int n)
{
	const char		*argv[] = { "/bin/true", NULL };
	struct keeper_run	 k;
	double			 t0 = stat_now_ms();

	if (keeper_start(b, &k, n, argv) == -1 || keeper_finish(&k) == -1)
		return NA;
	return stat_now_ms() - t0;
}

/*
 * The same launch, spawn and keeper by hand, each after a pause: samples
 * into s[0], s[1] and s[2] (none where cgroup2 cannot be written); -1 if
 * the launch or the spawn failed.
 */
static int
fig_launch_idle(struct bench *b, const char *args[], const char *bare[],
    struct samples s[3])
{
	double	d, t, k;
	int	run;

	for (run = 0; run < b->runs; run++) {
		stat_sleep_ms(FIG_LAUNCH_IDLE_MS);
		d = daemon_client_ms(b, args);
		stat_sleep_ms(FIG_LAUNCH_IDLE_MS);
		t = proc_time_ms(bare, NULL);
		stat_sleep_ms(FIG_LAUNCH_IDLE_MS);
		k = fig_launch_keeper_ms(b, run);
		if (!(d >= 0) || !(t >= 0))
			return -1;
		stat_add(&s[0], d);
		stat_add(&s[1], t);
		if (k >= 0)
			stat_add(&s[2], k);
	}
	keeper_cg_done();
	return 0;
}

/* Figure: the launch, spawn and keeper by hand, each after a pause. */
static int
fig_launch_exec_idle(struct bench *b, const char *args[],
    const char *bare[])
{
	struct samples	s[3] = { { 0 } };
	int		i, rv = 0;

	if (fig_launch_idle(b, args, bare, s) == 0) {
		table_row("ms", stat_median(&s[0]), stat_median(&s[1]),
		    TARGET(RATIO_MAX, 1.5), "each after 50 ms idle, as a "
		    "rig's first", "launch exec --wait /bin/true after a pause "
		    "[vs posix_spawn]");
		table_row("ms", stat_median(&s[0]), s[2].n > 0 ?
		    stat_median(&s[2]) : NA, NO_TARGET, "the floor, each after "
		    "50 ms idle", "launch exec --wait /bin/true after a pause "
		    "[vs keeper by hand]");
	} else
		rv = bench_fail(b, "dbgctl launch or /bin/true failed");
	for (i = 0; i < 3; i++)
		stat_free(&s[i]);
	return rv;
}

/*
 * Figure: an exec launch with --wait, whole, beside spawning /bin/true;
 * and beside the keeper by hand, the part of it no launch can leave out.
 */
int
fig_launch_exec(struct bench *b)
{
	const char	*args[] = { "launch", "--kind", "exec", "--wait", "--",
			    "/bin/true", NULL };
	const char	*bare[] = { "/bin/true", NULL };
	struct samples	 sd = { 0 }, sb = { 0 }, sk = { 0 };
	double		 d, t, k;
	int		 run;

	for (run = 0; run < b->runs; run++) {
		d = daemon_client_ms(b, args);
		t = proc_time_ms(bare, NULL);
		k = fig_launch_keeper_ms(b, run);
		if (!(d >= 0) || !(t >= 0)) {
			stat_free(&sd);
			stat_free(&sb);
			stat_free(&sk);
			return bench_fail(b, "dbgctl launch or /bin/true "
			    "failed");
		}
		stat_add(&sd, d);
		stat_add(&sb, t);
		if (k >= 0)
			stat_add(&sk, k);
	}
	keeper_cg_done();
	table_row("ms", stat_median(&sd), stat_median(&sb),
	    TARGET(RATIO_MAX, 1.5), NULL, "launch exec --wait /bin/true, whole "
	    "[vs posix_spawn+waitpid]");
	table_row("ms", stat_median(&sd), sk.n > 0 ? stat_median(&sk) : NA,
	    NO_TARGET, "the floor: cgroup, pty, keeper, program",
	    "launch exec --wait /bin/true, whole [vs keeper by hand]");
	stat_free(&sd);
	stat_free(&sb);
	stat_free(&sk);
	return fig_launch_exec_idle(b, args, bare);
}

/* Whether the console of session, from *offset on, shows the mark yet. */
static int
fig_launch_gdb_seen(struct rpc *r, json_int_t session, json_int_t *offset,
    char *tail, size_t *tail_len)
{
	json_t		*res;
	const char	*data;
	unsigned char	*bytes;
	size_t		 n, keep;
	int		 seen;

	res = rpc_call(r, "logs", json_pack("{s:I, s:I, s:b}", "session",
	    session, "offset", *offset, "wait", 1));
	if (res == NULL)
		return -1;
	*offset = json_integer_value(json_object_get(res, "next_offset"));
	data = json_string_value(json_object_get(res, "data"));
	/* The session ended without the mark: it never will show it. */
	if (data != NULL && *data == '\0' &&
	    json_is_true(json_object_get(res, "ended")))
		data = NULL;
	if (data == NULL || (bytes = malloc(strlen(data) + *tail_len + 1)) ==
	    NULL) {
		json_decref(res);
		return -1;
	}
	/* Keep the end of the last piece: the mark may straddle two. */
	memcpy(bytes, tail, *tail_len);
	n = *tail_len + b64_decode(data, bytes + *tail_len);
	json_decref(res);
	seen = memmem(bytes, n, FIG_LAUNCH_GDB_MARK,
	    strlen(FIG_LAUNCH_GDB_MARK)) != NULL;
	keep = n < 8 ? n : 8;
	memcpy(tail, bytes + n - keep, keep);
	*tail_len = keep;
	free(bytes);
	return seen;
}

/* One gdb launch: ms to the reply and to the mark; stopped after. */
static int
fig_launch_gdb_once(struct rpc *r, double *running, double *ready)
{
	json_int_t	 session, offset = 0;
	json_t		*res;
	double		 t0 = stat_now_ms();
	char		 tail[8];
	size_t		 tail_len = 0;
	int		 seen = 0;

	res = rpc_call(r, "launch", json_pack("{s:s, s:[s], s:[s], s:s}",
	    "kind", "gdb", "argv", "/bin/true", "commands",
	    FIG_LAUNCH_GDB_CMD, "cwd", "/"));
	if (res == NULL)
		return -1;
	*running = stat_now_ms() - t0;
	session = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	while (seen == 0)
		seen = fig_launch_gdb_seen(r, session, &offset, tail,
		    &tail_len);
	*ready = stat_now_ms() - t0;
	if (rpc_stop(r, session) == -1 || seen == -1)
		return -1;
	return 0;
}

/* Figure: gdb's launch to its first command, beside a bare gdb -batch. */
int
fig_launch_gdb(struct bench *b)
{
	const char	*bare[] = { "gdb", "-q", "-batch", "-ex",
			    FIG_LAUNCH_GDB_CMD, "/bin/true", NULL };
	struct samples	 run_s = { 0 }, ready_s = { 0 }, bare_s = { 0 };
	struct rpc	 r;
	double		 running = NA, ready = NA, t;
	int		 run, rv = 0;

	if (!proc_exists("gdb")) {
		table_na(NO_TARGET, "gdb is not installed", "gdb launch to "
		    "its first -x command [vs gdb -batch -ex]");
		return 0;
	}
	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	for (run = 0; run < b->runs && rv == 0; run++) {
		if (fig_launch_gdb_once(&r, &running, &ready) == -1)
			rv = bench_fail(b, "gdb launch: %s", r.err);
		if (!((t = proc_time_ms(bare, NULL)) >= 0))
			rv = bench_fail(b, "bare gdb -batch failed");
		stat_add(&run_s, running);
		stat_add(&ready_s, ready);
		stat_add(&bare_s, t);
	}
	rpc_close(&r);
	if (rv == 0) {
		table_row("ms", stat_median(&ready_s), stat_median(&bare_s),
		    NO_TARGET, NULL, "gdb launch to its first -x command [vs "
		    "gdb -batch -ex]");
		table_row("ms", stat_median(&run_s), stat_median(&bare_s),
		    NO_TARGET, NULL, "gdb launch to its reply (running) [vs "
		    "gdb -batch -ex]");
	}
	stat_free(&run_s);
	stat_free(&ready_s);
	stat_free(&bare_s);
	return rv;
}
