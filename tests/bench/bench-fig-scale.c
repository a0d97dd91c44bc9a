/*
 * Figures as live sessions grow: at each count of BENCH_SCALE (`sleep
 * 1000` exec sessions launched over the socket), the whole-process launch
 * --wait, list and --json list, one stop, the daemon's RSS per session and
 * one keeper's private memory; then, with the most sessions live, the daemon's
 * wake-ups over BENCH_IDLE_SECONDS without a request, beside an idle
 * libuv echo server's; and list at 10,000 sessions with BENCH_LIST10K=1.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

/* The scale of the optional list figure. */
/* Samples of the list at 10,000: it is the slowest figure there is. */
#define FIG_SCALE_10K_RUNS 5

/* The samples of one scale point. */
struct fig_scale_samples {
	struct samples launch, launch_b, stop, stop_b, list, list_b, json;
};

/* Free the samples of one scale point. */
static void
fig_scale_free(struct fig_scale_samples *s)
{
	stat_free(&s->launch);
	stat_free(&s->launch_b);
	stat_free(&s->stop);
	stat_free(&s->stop_b);
	stat_free(&s->list);
	stat_free(&s->list_b);
	stat_free(&s->json);
}

/* One run at a scale: each figure beside its baseline; -1 on a failure. */
static int
fig_scale_sample(struct bench *b, struct rpc *r, struct fig_scale_samples *s)
{
	const char	*launch[] = { "launch", "--kind", "exec", "--wait",
			    "--", "/bin/true", NULL };
	const char	*list[] = { "list", NULL }, *bare[] = { "/bin/true",
			    NULL }, *json[] = { "--json", "list", NULL };
	double		 v[7];
	int		 i;

	v[0] = daemon_client_ms(b, launch);
	v[1] = proc_time_ms(bare, NULL);
	v[2] = fig_stop_session_ms(r);
	v[3] = fig_stop_bare_ms();
	v[4] = daemon_client_ms(b, list);
	v[5] = proc_time_ms(bare, NULL);
	v[6] = daemon_client_ms(b, json);
	for (i = 0; i < 7; i++)
		if (!(v[i] >= 0))
			return bench_fail(b, "a sample failed (%s)", r->err);
	stat_add(&s->launch, v[0]);
	stat_add(&s->launch_b, v[1]);
	stat_add(&s->stop, v[2]);
	stat_add(&s->stop_b, v[3]);
	stat_add(&s->list, v[4]);
	stat_add(&s->list_b, v[5]);
	stat_add(&s->json, v[6]);
	return 0;
}

/*
 * The private memory of up to BENCH_RUNS keepers, and of the sleeps they
 * keep, as the median Private_Dirty of smaps_rollup: a keeper's text and
 * read-only data are shared among all of them, so only what it wrote is
 * its own.
 */
static int
fig_scale_keepers(struct bench *b, struct rpc *r, double *keeper,
    double *program)
{
	struct samples	 sk = { 0 }, sp = { 0 };
	json_t		*res, *row;
	size_t		 i;
	long		 k, p;

	res = rpc_call(r, "list", json_pack("{s:i}", "limit", b->runs));
	if (res == NULL)
		return bench_fail(b, "list: %s", r->err);
	json_array_foreach(json_object_get(res, "sessions"), i, row) {
		k = proc_rollup_kib(json_integer_value(json_object_get(row,
		    "keeper_pid")), "Private_Dirty");
		p = proc_rollup_kib(json_integer_value(json_object_get(row,
		    "pid")), "Private_Dirty");
		if (k >= 0 && p >= 0) {
			stat_add(&sk, k);
			stat_add(&sp, p);
		}
	}
	json_decref(res);
	*keeper = stat_median(&sk);
	*program = stat_median(&sp);
	stat_free(&sk);
	stat_free(&sp);
	return 0;
}

/* The rows of one scale point. */
static void
fig_scale_rows(int n, struct fig_scale_samples *s, double rss_per,
    double keeper, double program)
{
	table_row("ms", stat_median(&s->launch), stat_median(&s->launch_b),
	    TARGET(RATIO_MAX, 1.5), NULL, "%5d live: launch --wait /bin/true, "
	    "whole [vs posix_spawn]", n);
	table_row("ms", stat_median(&s->stop), stat_median(&s->stop_b),
	    TARGET(OVER_MAX, 1), NULL, "%5d live: one stop [vs kill "
	    "TERM+waitpid]", n);
	table_row("ms", stat_median(&s->list), stat_median(&s->list_b),
	    n == 1000 ? TARGET(MAX, 2) : NO_TARGET, NULL, "%5d live: dbgctl "
	    "list, whole [vs spawn /bin/true]", n);
	table_row("ms", stat_median(&s->json), stat_median(&s->list_b),
	    NO_TARGET, "every member of every row", "%5d live: dbgctl --json "
	    "list, whole [vs spawn /bin/true]", n);
	table_row("KB", rss_per, NA, TARGET(MAX, 6), "VmRSS delta / n, once",
	    "%5d live: daemon RSS per session", n);
	table_row("KiB", keeper, program, TARGET(MAX, 48), "Private_Dirty, "
	    "median of keepers", "%5d live: keeper private memory [vs its "
	    "sleep]", n);
}

/* Grow to n live sessions and take that scale point's figures. */
static int
fig_scale_at(struct bench *b, struct rpc *r, int *live, int n, long rss0)
{
	struct fig_scale_samples	s = { 0 };
	double				rss_per, keeper = NA, program = NA;
	int				run, rv = 0;

	fprintf(stderr, "bench: growing to %d live sessions\n", n);
	if (n > *live && rpc_launch_many(r, n - *live, NULL) == -1)
		return bench_fail(b, "launch at %d: %s", *live, r->err);
	*live = n;
	daemon_settle(b);
	/* KB of 1000 bytes, as the target has it. */
	rss_per = (proc_status_kib(b->daemon, "VmRSS") - rss0) * 1.024 / n;
	if (fig_scale_keepers(b, r, &keeper, &program) == -1)
		return -1;
	for (run = 0; run < b->runs && rv == 0; run++)
		rv = fig_scale_sample(b, r, &s);
	if (rv == 0)
		fig_scale_rows(n, &s, rss_per, keeper, program);
	fig_scale_free(&s);
	return rv;
}

/* The daemon's wake-ups over BENCH_IDLE_SECONDS, beside an idle echo's. */
static int
fig_scale_idle(struct bench *b, int live)
{
	struct echo	echo;
	long		d0, e0, d1, e1;
	char		note[64];

	if (echo_start(&echo, ECHO_LIBUV, b->dir) == -1)
		return bench_fail(b, "the libuv echo server did not start");
	/* Let the last replies and reaps settle before counting. */
	stat_sleep_ms(500);
	d0 = proc_ctxsw(b->daemon);
	e0 = proc_ctxsw(echo.pid);
	stat_sleep_ms(b->idle_s * 1000.0);
	d1 = proc_ctxsw(b->daemon);
	e1 = proc_ctxsw(echo.pid);
	echo_stop(&echo);
	if (d0 < 0 || d1 < 0 || e0 < 0 || e1 < 0)
		return bench_fail(b, "cannot read the context switches");
	snprintf(note, sizeof note, "context switches over %d s, 1 run",
	    b->idle_s);
	table_row("", d1 - d0, e1 - e0, TARGET(ZERO, 0), note, "%5d live: "
	    "daemon idle wake-ups [vs idle libuv echo]", live);
	return 0;
}

/*
 * Figure, with BENCH_LIST10K=1: dbgctl list of 10,000 sessions, on a
 * daemon that keeps 10,000 ended ones. They are ended `/bin/true`s: a live
 * session holds a pty, and Linux has 4096 by default (kernel.pty.max).
 */
int
fig_list10k(struct bench *b)
{
	const char	*list[] = { "list", NULL }, *bare[] = { "/bin/true",
			    NULL };
	struct samples	 s = { 0 }, sb = { 0 };
	struct rpc	 r;
	json_t		*params;
	double		 v, t;
	int		 run, rv = 0;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	fprintf(stderr, "bench: launching %d sessions of /bin/true\n",
	    FIG_LIST10K);
	params = json_pack("{s:s, s:[s], s:s}", "kind", "exec", "argv",
	    "/bin/true", "cwd", "/");
	if (rpc_launch_many(&r, FIG_LIST10K, params) == -1)
		rv = bench_fail(b, "%s", r.err);
	json_decref(params);
	for (run = 0; run < FIG_SCALE_10K_RUNS && rv == 0; run++) {
		v = daemon_client_ms(b, list);
		t = proc_time_ms(bare, NULL);
		if (!(v >= 0) || !(t >= 0))
			rv = bench_fail(b, "list at %d failed", FIG_LIST10K);
		stat_add(&s, v);
		stat_add(&sb, t);
	}
	rpc_close(&r);
	if (rv == 0)
		table_row("ms", stat_median(&s), stat_median(&sb), NO_TARGET,
		    "ended sessions; median of 5 runs", "%5d rows: dbgctl "
		    "list, whole [vs spawn /bin/true]", FIG_LIST10K);
	stat_free(&s);
	stat_free(&sb);
	return rv;
}

/* Figure: every scale point in turn, then the idle wake-ups. */
int
fig_scale_run(struct bench *b)
{
	struct rpc	r;
	long		rss0;
	int		i, live = 0, rv = 0;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	rss0 = proc_status_kib(b->daemon, "VmRSS");
	for (i = 0; i < b->nscale && rv == 0; i++)
		rv = fig_scale_at(b, &r, &live, b->scale[i], rss0);
	if (rv == 0)
		rv = fig_scale_idle(b, live);
	rpc_close(&r);
	return rv;
}
