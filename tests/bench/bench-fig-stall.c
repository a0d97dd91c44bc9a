/*
 * The daemon beside clients that do not keep up: ping latency and the
 * daemon's growth with three stalled subscribers on a session printing as
 * fast as it can, beside the same session with none; and a ping sent
 * right behind 100 pipelined `logs` tail lookups on a 64 MiB log without
 * a line feed, beside a ping with no burst.
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stalled subscribers, and ms the session prints before the pings. */
#define FIG_STALL_SUBSCRIBERS 3
#define FIG_STALL_PRINT_MS 200
/* Round trips of one sample of ping beside them. */
#define FIG_STALL_PINGS 200
/* The log of the burst, and its lookups. */
#define FIG_STALL_LOG_MIB 64
#define FIG_STALL_BURST 100


/* Subscribe n connections, which then never read again. */
static int
fig_stall_subscribe(struct bench *b, struct rpc *subs, int n)
{
	json_t	*res;
	int	 i;

	for (i = 0; i < n; i++) {
		if (rpc_open(&subs[i], b->sock) == -1 ||
		    (res = rpc_call(&subs[i], "subscribe", NULL)) == NULL) {
			bench_fail(b, "subscribe: %s", subs[i].err);
			while (i >= 0)
				rpc_close(&subs[i--]);
			return -1;
		}
		json_decref(res);
	}
	return 0;
}

/*
 * One phase: n stalled subscribers, a session running `yes`, pings from
 * another connection; the daemon's growth meanwhile, in KiB.
 */
static int
fig_stall_phase(struct bench *b, struct rpc *r, int n, double *p50,
    double *p99, double *grown)
{
	struct rpc	 subs[FIG_STALL_SUBSCRIBERS];
	json_t		*res;
	json_int_t	 id;
	long		 rss0;
	int		 i, rv;

	if (fig_stall_subscribe(b, subs, n) == -1)
		return -1;
	rss0 = proc_status_kib(b->daemon, "VmRSS");
	res = rpc_call(r, "launch", json_pack("{s:s, s:[s, s], s:s}", "kind",
	    "exec", "argv", "yes", "a line a session prints as fast as it can",
	    "cwd", "/"));
	if (res == NULL) {
		rv = bench_fail(b, "launch yes: %s", r->err);
	} else {
		id = json_integer_value(json_object_get(res, "id"));
		json_decref(res);
		stat_sleep_ms(FIG_STALL_PRINT_MS);
		rv = rpc_ping_pct(r, FIG_STALL_PINGS, p50, p99);
		*grown = proc_status_kib(b->daemon, "VmRSS") - rss0;
		if (rv == -1 || rpc_stop(r, id) == -1)
			rv = bench_fail(b, "ping or stop: %s", r->err);
	}
	for (i = 0; i < n; i++)
		rpc_close(&subs[i]);
	return rv;
}

/* Figure: ping and growth beside three stalled subscribers. */
int
fig_stall_subscribers(struct bench *b)
{
	struct samples	p50[2] = { 0 }, p99[2] = { 0 };
	struct rpc	r;
	double		a = NA, c = NA, grown[2] = { NA, NA }, g = NA;
	int		run, k, rv = 0;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	for (run = 0; run < b->runs && rv == 0; run++)
		for (k = 0; k < 2 && rv == 0; k++) {
			/* k 0: none stalled (the baseline); 1: three. */
			rv = fig_stall_phase(b, &r, k * FIG_STALL_SUBSCRIBERS,
			    &a, &c, &g);
			stat_add(&p50[k], a);
			stat_add(&p99[k], c);
			if (run == 0)
				grown[k] = g;
		}
	rpc_close(&r);
	if (rv == 0) {
		table_row("us", stat_median(&p50[1]), stat_median(&p50[0]),
		    NO_TARGET, "beside a session running yes",
		    "ping p50, 3 stalled subscribers [vs none]");
		table_row("us", stat_median(&p99[1]), stat_median(&p99[0]),
		    NO_TARGET, "beside a session running yes",
		    "ping p99, 3 stalled subscribers [vs none]");
		table_row("KiB", grown[1], grown[0], NO_TARGET, "first run",
		    "daemon RSS growth, 3 stalled subscribers [vs none]");
	}
	for (k = 0; k < 2; k++) {
		stat_free(&p50[k]);
		stat_free(&p99[k]);
	}
	return rv;
}

/* The burst: its connection, session, and when its last reply came. */
struct fig_stall_burst {
	struct rpc		 r;
	json_int_t		 session;
	pthread_mutex_t		 lock;
	pthread_cond_t		 cond;
	int			 sent, failed;
	double			 t0, ms;
};

/* The burst's thread: send every lookup at once, then read the replies. */
static void *
fig_stall_burst_main(void *arg)
{
	struct fig_stall_burst	*bu = arg;
	char			*buf, *p;
	size_t			 cap = FIG_STALL_BURST * 160;
	int			 i;

	if ((buf = p = malloc(cap)) == NULL)
		abort();
	for (i = 0; i < FIG_STALL_BURST; i++)
		p += sprintf(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
		    "\"logs\",\"params\":{\"session\":%lld,\"lines\":"
		    "100000000,\"max\":1}}\n", i + 1, (long long)bu->session);
	bu->t0 = stat_now_ms();
	bu->failed = rpc_write(&bu->r, buf, p - buf) == -1;
	free(buf);
	pthread_mutex_lock(&bu->lock);
	bu->sent = 1;
	pthread_cond_signal(&bu->cond);
	pthread_mutex_unlock(&bu->lock);
	for (i = 0; i < FIG_STALL_BURST && !bu->failed; i++)
		bu->failed = rpc_line(&bu->r) == NULL;
	bu->ms = stat_now_ms() - bu->t0;
	return NULL;
}

/* One sample: a burst, and the ping sent right behind it, in ms. */
static int
fig_stall_burst_once(struct bench *b, json_int_t session, struct rpc *r,
    double *burst, double *ping)
{
	struct fig_stall_burst	bu = { .session = session };
	pthread_t		th;

	if (rpc_open(&bu.r, b->sock) == -1)
		return bench_fail(b, "%s", bu.r.err);
	pthread_mutex_init(&bu.lock, NULL);
	pthread_cond_init(&bu.cond, NULL);
	if (pthread_create(&th, NULL, fig_stall_burst_main, &bu) != 0)
		abort();
	pthread_mutex_lock(&bu.lock);
	while (!bu.sent)
		pthread_cond_wait(&bu.cond, &bu.lock);
	pthread_mutex_unlock(&bu.lock);
	*ping = rpc_roundtrip_us(r, rpc_ping_line, rpc_ping_len)
	    / 1000;
	pthread_join(th, NULL);
	*burst = bu.ms;
	rpc_close(&bu.r);
	pthread_mutex_destroy(&bu.lock);
	pthread_cond_destroy(&bu.cond);
	if (bu.failed || !(*ping >= 0))
		return bench_fail(b, "the burst or the ping failed");
	return 0;
}

/* Write the 64 MiB log without a line feed: a session that prints it. */
static json_int_t
fig_stall_log(struct bench *b, struct rpc *r)
{
	char		 cmd[96];
	json_t		*res;
	json_int_t	 id, size;

	snprintf(cmd, sizeof cmd, "head -c %d /dev/zero | tr '\\0' x",
	    FIG_STALL_LOG_MIB << 20);
	res = rpc_call(r, "launch", json_pack("{s:s, s:[s, s, s], s:s}",
	    "kind", "exec", "argv", "sh", "-c", cmd, "cwd", "/"));
	if (res == NULL)
		return bench_fail(b, "launch: %s", r->err);
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	if ((res = rpc_call(r, "wait", json_pack("{s:I}", "session", id))) ==
	    NULL)
		return bench_fail(b, "wait: %s", r->err);
	json_decref(res);
	res = rpc_call(r, "logs", json_pack("{s:I, s:i}", "session", id, "max",
	    1));
	size = res != NULL ? json_integer_value(json_object_get(res, "size")) :
	    0;
	json_decref(res);
	if (size < (json_int_t)FIG_STALL_LOG_MIB << 20)
		return bench_fail(b, "the log holds %lld bytes only",
		    (long long)size);
	return id;
}

/* Figure: a ping behind a burst of logs tail lookups, beside a quiet one. */
int
fig_stall_logs(struct bench *b)
{
	struct samples	sb = { 0 }, sp = { 0 }, sq = { 0 };
	struct rpc	r;
	json_int_t	session;
	double		burst = NA, ping = NA, quiet;
	int		run, rv = 0;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	if ((session = fig_stall_log(b, &r)) == -1)
		rv = -1;
	for (run = 0; run < b->runs && rv == 0; run++) {
		quiet = rpc_roundtrip_us(&r, rpc_ping_line,
		    rpc_ping_len) / 1000;
		rv = fig_stall_burst_once(b, session, &r, &burst, &ping);
		stat_add(&sq, quiet);
		stat_add(&sp, ping);
		stat_add(&sb, burst);
	}
	rpc_close(&r);
	if (rv == 0) {
		table_row("ms", stat_median(&sp), stat_median(&sq),
		    TARGET(OVER_MAX, 3), "target: a few ms", "ping behind 100 "
		    "logs tail lookups, 64 MiB log [vs no burst]");
		table_row("ms", stat_median(&sb), NA, NO_TARGET, "pipelined, "
		    "lines=1e8 max=1, no line feed", "100 logs tail lookups "
		    "on a 64 MiB log, to the last reply");
	}
	stat_free(&sb);
	stat_free(&sp);
	stat_free(&sq);
	return rv;
}
