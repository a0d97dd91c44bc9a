/*
 * Bundles: the `bundle` method's request to reply for a native gdb
 * session running `sleep` (without a core, and with one), beside
 * `gdb -batch -p PID` printing the same backtrace and registers of a
 * sleep of ours; and for the QEMU board (without its core, and with the
 * ELF core of its 64 KiB of RAM that gdb reads), beside `cp -r` of the
 * bundle it wrote. Samples alternate with their baseline.
 */
#include "bench.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bound no bundle of these figures should come near, in ms. */
#define FIG_BUNDLE_GOAL_MS 1000

/* One bundle of session at a new path under the bench's directory; ms or NA. */
static double
fig_bundle_once(struct bench *b, struct rpc *r, json_int_t session,
    bool core, char *path, size_t len)
{
	static int	 n;
	json_t		*res;
	double		 t0;

	snprintf(path, len, "%s/bundle-%d", b->dir, ++n);
	t0 = stat_now_ms();
	res = rpc_call(r, "bundle", json_pack("{s:I, s:s, s:b}", "session",
	    session, "path", path, "core", core));
	if (res == NULL) {
		bench_fail(b, "bundle: %s", r->err);
		return NA;
	}
	json_decref(res);
	return stat_now_ms() - t0;
}

/* Launch params' session, running: its id, or -1 with b->why. */
static json_int_t
fig_bundle_launch(struct bench *b, struct rpc *r, json_t *params)
{
	json_t		*res;
	json_int_t	 id;

	if ((res = rpc_call(r, "launch", params)) == NULL) {
		bench_fail(b, "launch: %s", r->err);
		return -1;
	}
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	/* Until gdb says the target runs: a bundle then halts it, for real. */
	res = rpc_call(r, "wait_target", json_pack("{s:I, s:s, s:i}",
	    "session", id, "state", "running", "timeout", 30000));
	if (res == NULL) {
		bench_fail(b, "wait_target: %s", r->err);
		return -1;
	}
	json_decref(res);
	return id;
}

/* gdb -batch attached to a sleep of ours, printing what a bundle holds: ms. */
static double
fig_bundle_gdb_batch(pid_t sleeper)
{
	char		 pid[32];
	const char	*argv[] = { "gdb", "-nx", "-q", "-batch", "-p", pid,
			    "-ex", "thread apply all bt full", "-ex",
			    "info registers", NULL };

	snprintf(pid, sizeof pid, "%ld", (long)sleeper);
	return proc_time_ms(argv, NULL);
}

/* Figure rows of one kind of bundle beside its baseline. */
static void
fig_bundle_rows(struct samples *sd, struct samples *sb, struct target t,
    const char *name)
{
	table_row("ms", stat_median(sd), stat_median(sb), t, NULL, "%s", name);
}

/* The native figures: a gdb session's bundle with and without a core. */
static int
fig_bundle_native(struct bench *b, struct rpc *r)
{
	struct samples	 sd = { 0 }, sc = { 0 }, sb = { 0 };
	const char	*sleep_argv[] = { "sleep", "1000", NULL };
	char		 path[256];
	json_int_t	 id;
	pid_t		 sleeper;
	double		 v;
	int		 run, rv = 0;

	id = fig_bundle_launch(b, r, json_pack("{s:s, s:[s, s], s:[s], s:s}",
	    "kind", "gdb", "argv", "/bin/sleep", "1000", "commands", "run",
	    "cwd", "/"));
	if (id == -1)
		return -1;
	if ((sleeper = proc_spawn(sleep_argv, NULL, -1, -1, -1)) == -1)
		return bench_fail(b, "spawn sleep");
	for (run = 0; run < b->runs && rv == 0; run++) {
		if ((v = fig_bundle_once(b, r, id, false, path,
		    sizeof path)) == NA)
			rv = -1;
		stat_add(&sd, v);
		if (rv == 0 && (v = fig_bundle_once(b, r, id, true, path,
		    sizeof path)) == NA)
			rv = -1;
		stat_add(&sc, v);
		if (rv == 0 && (v = fig_bundle_gdb_batch(sleeper)) == NA)
			rv = bench_fail(b, "gdb -batch -p failed");
		stat_add(&sb, v);
	}
	kill(sleeper, SIGKILL);
	proc_wait(sleeper, -1);
	rpc_stop(r, id);
	if (rv == 0) {
		fig_bundle_rows(&sd, &sb, TARGET(MAX, FIG_BUNDLE_GOAL_MS),
		    "bundle, native gdb, no core [vs gdb -batch -p bt full]");
		fig_bundle_rows(&sc, &sb, NO_TARGET,
		    "bundle, native gdb, with core [vs gdb -batch -p bt full]");
	}
	stat_free(&sd);
	stat_free(&sc);
	stat_free(&sb);
	return rv;
}

/* Why the board cannot run here, or NULL if it can. */
static const char *
fig_bundle_no_board(const struct bench *b)
{
	if (b->board == NULL || *b->board == '\0')
		return "BENCH_BOARD is not set (no board.elf)";
	if (!proc_exists("qemu-system-arm"))
		return "qemu-system-arm is not installed";
	if (!proc_exists("gdb-multiarch"))
		return "gdb-multiarch is not installed";
	return NULL;
}

/* The board's figures: its bundle without and with its core, beside cp -r of what it wrote. */
static int
fig_bundle_board(struct bench *b, struct rpc *r)
{
	struct samples	 sd = { 0 }, sc = { 0 }, sb = { 0 };
	const char	*why = fig_bundle_no_board(b);
	const char	*cp[] = { "cp", "-r", NULL, NULL, NULL };
	char		 path[256], copy[300];
	json_int_t	 id;
	double		 v;
	int		 run, rv = 0;

	if (why != NULL) {
		table_na(TARGET(MAX, FIG_BUNDLE_GOAL_MS), why, "bundle, QEMU "
		    "board [vs cp -r of its files]");
		return 0;
	}
	id = fig_bundle_launch(b, r, json_pack("{s:s, s:s, s:[s], s:s}",
	    "kind", "qemu", "machine", "lm3s6965evb", "argv", b->board, "cwd",
	    "/"));
	if (id == -1)
		return -1;
	for (run = 0; run < b->runs && rv == 0; run++) {
		if ((v = fig_bundle_once(b, r, id, false, path,
		    sizeof path)) == NA)
			rv = -1;
		stat_add(&sd, v);
		snprintf(copy, sizeof copy, "%s.cp", path);
		cp[2] = path;
		cp[3] = copy;
		if (rv == 0 && (v = proc_time_ms(cp, NULL)) == NA)
			rv = bench_fail(b, "cp -r %s failed", path);
		stat_add(&sb, v);
		/* With its core: gdb reads the board's 64 KiB of RAM. */
		if (rv == 0 && (v = fig_bundle_once(b, r, id, true, path,
		    sizeof path)) == NA)
			rv = -1;
		stat_add(&sc, v);
	}
	rpc_stop(r, id);
	if (rv == 0) {
		fig_bundle_rows(&sd, &sb, TARGET(MAX, FIG_BUNDLE_GOAL_MS),
		    "bundle, QEMU board [vs cp -r of its files]");
		fig_bundle_rows(&sc, &sb, NO_TARGET,
		    "bundle, QEMU board, with core [vs cp -r of its files]");
	}
	stat_free(&sd);
	stat_free(&sc);
	stat_free(&sb);
	return rv;
}

/* Figure: bundles of a native gdb session and of the board. */
int
fig_bundle(struct bench *b)
{
	struct rpc	r;
	int		rv;

	if (!proc_exists("gdb")) {
		table_na(TARGET(MAX, FIG_BUNDLE_GOAL_MS), "gdb is not "
		    "installed", "bundle, native gdb, no core [vs gdb -batch "
		    "-p bt full]");
		return 0;
	}
	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	rv = fig_bundle_native(b, &r);
	if (rv == 0)
		rv = fig_bundle_board(b, &r);
	rpc_close(&r);
	return rv;
}
