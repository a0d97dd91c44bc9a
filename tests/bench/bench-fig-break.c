/*
 * The native breakpoint round trip: a program of this bench's that calls
 * a function in a loop (`bench --target loop`), under the gdb kind with a
 * breakpoint on that function; `resume` until_stop to its next hit, timed
 * to the answer, beside -exec-continue to *stopped on a gdb of ours whose
 * MI is on our pipes (bench-mi.c), with nothing between it and gdb, and
 * beside the same on a gdb in the daemon's layout, its MI on a new-ui pty
 * beside its console (bench-mi-pty.c): the floor of that layout.
 */
#include "bench.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The function the loop calls, where both sides break. */
#define FIG_BREAK_FN "fig_break_tick"
/* Round trips of a sample, and of the warm-up. */
#define FIG_BREAK_ROUNDS 200
#define FIG_BREAK_WARM 20
/* A bound no answer of this figure should come near, in ms. */
#define FIG_BREAK_TIMEOUT_MS 30000

/* The figure's three gdbs: the daemon's session, the direct one, the floor. */
struct fig_break {
	struct bench	*b;
	struct rpc	 r;
	json_int_t	 session;
	struct mi	 m;
	struct mi	 pty;		/* the floor: the daemon's layout */
	int		 direct;	/* the baselines' gdbs were started */
};

/* The function the target's loop calls: kept out of line for gdb. */
__attribute__((noinline)) void
fig_break_tick(void)
{
	__asm__ volatile("" ::: "memory");
}

/* `bench --target loop`: call the function forever. */
int
fig_break_target(void)
{
	for (;;)
		fig_break_tick();
}

/* The target's state in a status result, or "". */
static const char *
fig_break_state(json_t *res)
{
	const char *st;

	st = json_string_value(json_object_get(json_object_get(res,
	    "target"), "state"));
	return st != NULL ? st : "";
}

/*
 * Launch the loop under the gdb kind, the breakpoint set and the program
 * run by its commands, and wait for its first stop; -1 with b->why.
 */
static int
fig_break_launch(struct fig_break *f, const char *self)
{
	json_t	*res;
	int	 i;

	res = rpc_call(&f->r, "launch", json_pack("{s:s, s:[s, s, s], s:[s, s],"
	    " s:s}", "kind", "gdb", "argv", self, "--target", "loop",
	    "commands", "break " FIG_BREAK_FN, "run", "cwd", "/"));
	if (res == NULL)
		return bench_fail(f->b, "launch: %s", f->r.err);
	f->session = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	for (i = 0; i < FIG_BREAK_TIMEOUT_MS / 10; i++) {
		res = rpc_call(&f->r, "status", json_pack("{s:I}", "session",
		    f->session));
		if (strcmp(fig_break_state(res), "stopped") == 0) {
			json_decref(res);
			return 0;
		}
		json_decref(res);
		stat_sleep_ms(10);
	}
	return bench_fail(f->b, "the loop under gdb never stopped at "
	    FIG_BREAK_FN);
}

/* A baseline's gdb, started, on the loop, run to the breakpoint's first hit. */
static int
fig_break_run(struct fig_break *f, struct mi *m)
{
	if (mi_command(m, "-break-insert " FIG_BREAK_FN, NULL) == -1 ||
	    mi_command(m, "-exec-run", NULL) == -1 ||
	    mi_wait(m, "*stopped", NULL) == -1)
		return bench_fail(f->b, "%s", m->err);
	return 0;
}

/* The baselines' gdbs: MI on our pipes, and the daemon's layout. */
static int
fig_break_direct(struct fig_break *f, const char *self)
{
	const char *argv[] = { self, "--target", "loop", NULL };

	f->direct = 1;
	mi_init(&f->pty);
	if (mi_start_native(&f->m, argv) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	if (mi_start_native_pty(&f->pty, argv) == -1)
		return bench_fail(f->b, "%s", f->pty.err);
	if (fig_break_run(f, &f->m) == -1 || fig_break_run(f, &f->pty) == -1)
		return -1;
	return 0;
}

/* A round through the daemon: resume until_stop, timed; µs or NA. */
static double
fig_break_daemon_round(struct fig_break *f)
{
	const char	*reason;
	json_t		*res;
	double		 t0, us;

	t0 = stat_now_ms();
	res = rpc_call(&f->r, "resume", json_pack("{s:I, s:b, s:i}",
	    "session", f->session, "until_stop", 1, "timeout",
	    FIG_BREAK_TIMEOUT_MS));
	us = (stat_now_ms() - t0) * 1000;
	if (res == NULL)
		return bench_fail(f->b, "resume: %s", f->r.err);
	reason = json_string_value(json_object_get(json_object_get(
	    json_object_get(res, "target"), "stop"), "reason"));
	if (reason == NULL || strcmp(reason, "breakpoint-hit") != 0)
		us = bench_fail(f->b, "resume until_stop answered a stop by "
		    "\"%s\", not the breakpoint", reason ? reason : "");
	json_decref(res);
	return us;
}

/* The same over a direct MI: -exec-continue to *stopped; µs or NA. */
static double
fig_break_direct_round(struct fig_break *f, struct mi *m)
{
	double us = mi_break_round(m);

	return us >= 0 ? us : bench_fail(f->b, "%s", m->err);
}

/* One round of side 0 (the daemon), 1 (the baseline) or 2 (the floor). */
static double
fig_break_round(void *arg, int side)
{
	struct fig_break *f = arg;

	if (side == 0)
		return fig_break_daemon_round(f);
	return fig_break_direct_round(f, side == 1 ? &f->m : &f->pty);
}

/* Batches of each side in turn, p50 and p99 of each into s[side]. */
static int
fig_break_batches(struct fig_break *f, struct samples s[3][2])
{
	return stat_batches(f->b->runs, 3, FIG_BREAK_ROUNDS, FIG_BREAK_WARM,
	    fig_break_round, f, s);
}

/*
 * The rows: p50 against the goal of 1.2x + 0.3 ms, p99 beside, then both
 * beside the floor of the daemon's layout.
 */
static void
fig_break_rows(struct samples s[3][2])
{
	double base;

	base = stat_median(&s[1][0]);
	table_row("us", stat_median(&s[0][0]), base,
	    TARGET(OVER_MAX, round(0.2 * base + 300)),
	    "goal <= 1.2x base + 0.3 ms", "native breakpoint round trip p50, "
	    "resume until_stop [vs MI]");
	table_row("us", stat_median(&s[0][1]), stat_median(&s[1][1]),
	    NO_TARGET, NULL, "native breakpoint round trip p99, resume "
	    "until_stop [vs MI]");
	table_row("us", stat_median(&s[0][0]), stat_median(&s[2][0]),
	    NO_TARGET, "floor: gdb alone, console pty, MI on a new-ui pty",
	    "native breakpoint round trip p50 [vs MI on a new-ui pty]");
	table_row("us", stat_median(&s[0][1]), stat_median(&s[2][1]),
	    NO_TARGET, "floor: gdb alone, console pty, MI on a new-ui pty",
	    "native breakpoint round trip p99 [vs MI on a new-ui pty]");
}

/*
 * Figure: the native breakpoint round trip, p50 and p99, beside
 * -exec-continue to *stopped on gdb's own MI.
 */
int
fig_break_native(struct bench *b)
{
	const char		*self = fig_expect_self();
	struct samples		 s[3][2] = { { { 0 } } };
	struct fig_break	 f = { .b = b };
	int			 rv = -1, i;

	if (self == NULL)
		return bench_fail(b, "cannot read /proc/self/exe");
	if (!proc_exists("gdb"))
		return bench_fail(b, "gdb is not installed");
	if (rpc_open(&f.r, b->sock) == -1)
		return bench_fail(b, "%s", f.r.err);
	if (fig_break_launch(&f, self) == 0 && fig_break_direct(&f, self) == 0)
		rv = fig_break_batches(&f, s);
	if (f.session > 0)
		rpc_stop(&f.r, f.session);
	if (f.direct) {
		mi_stop(&f.m);
		mi_stop(&f.pty);
	}
	rpc_close(&f.r);
	if (rv == 0)
		fig_break_rows(s);
	for (i = 0; i < 6; i++)
		stat_free(&s[i / 2][i % 2]);
	return rv;
}
