/*
 * ping on held connections: the round trip, p50 and p99, beside a blocking
 * and a libuv echo server answering the same line; and requests per
 * second with 1, 8 and 64 clients, each keeping one request in flight (not
 * pipelined), beside the blocking echo with as many clients.
 */
#include "bench.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Round trips a sample of the RTT takes, and a warm-up's. */
#define FIG_PING_BATCH 200
#define FIG_PING_WARM 50
/* Milliseconds a sample of requests per second lasts. */
#define FIG_PING_RPS_MS 250
/* The client counts of requests per second. */
static const int fig_ping_clients[] = { 1, 8, 64 };
#define FIG_PING_MAX_CLIENTS 64

/* The servers of the RTT figure, in the order the table has them. */
enum { FIG_PING_DAEMON, FIG_PING_BLOCKING, FIG_PING_LIBUV, FIG_PING_N };

/* One batch of round trips: its p50 and p99 added to the samples. */
static int
fig_ping_batch(struct rpc *r, int n, struct samples *p50,
    struct samples *p99)
{
	double a, b;

	if (rpc_ping_pct(r, n, &a, &b) == -1)
		return -1;
	if (p50 != NULL)
		stat_add(p50, a);
	if (p99 != NULL)
		stat_add(p99, b);
	return 0;
}

/* Start both echo servers in the daemon's directory. */
static int
fig_ping_echoes(struct bench *b, struct echo *blocking, struct echo *uv)
{
	if (echo_start(blocking, ECHO_BLOCKING, b->dir) == -1)
		return bench_fail(b, "the blocking echo server did not start");
	if (echo_start(uv, ECHO_LIBUV, b->dir) == -1) {
		echo_stop(blocking);
		return bench_fail(b, "the libuv echo server did not start");
	}
	return 0;
}

/* Open one connection to each server of the RTT figure. */
static int
fig_ping_connect(struct bench *b, struct rpc r[FIG_PING_N],
    const struct echo *blocking, const struct echo *uv)
{
	const char	*path[FIG_PING_N] = { b->sock, blocking->path,
			    uv->path };
	int		 i;

	for (i = 0; i < FIG_PING_N; i++)
		if (rpc_open(&r[i], path[i]) == -1) {
			bench_fail(b, "%s", r[i].err);
			while (i-- > 0)
				rpc_close(&r[i]);
			return -1;
		}
	return 0;
}

/* Interleave batches on the three servers, a run at a time. */
static int
fig_ping_rtt_runs(struct bench *b, struct rpc r[FIG_PING_N],
    struct samples p50[FIG_PING_N], struct samples p99[FIG_PING_N])
{
	int run, k, i;

	for (i = 0; i < FIG_PING_N; i++)
		if (fig_ping_batch(&r[i], FIG_PING_WARM, NULL, NULL) == -1)
			return bench_fail(b, "warm-up: %s", r[i].err);
	for (run = 0; run < b->runs; run++)
		for (k = 0; k < FIG_PING_N; k++) {
			/* Rotate who goes first, so no one owns a slot. */
			i = (run + k) % FIG_PING_N;
			if (fig_ping_batch(&r[i], FIG_PING_BATCH, &p50[i],
			    &p99[i]) == -1)
				return bench_fail(b, "ping: %s", r[i].err);
		}
	return 0;
}

/* Put a process on the CPU this one runs on, if it is known. */
void
fig_ping_pin_pid(pid_t pid)
{
	cpu_set_t one;

	if (pid <= 0 || sched_getcpu() < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	(void)sched_setaffinity(pid, sizeof one, &one);
}

/*
 * Put this process (and so the echo servers it forks next) and the daemon
 * on one CPU, or back on every CPU it had: a wake-up across CPUs costs
 * tens of microseconds on a virtual machine and lands on either side at
 * random, which would measure the hypervisor, not the request path.
 */
void
fig_ping_pin(struct bench *b, cpu_set_t *saved)
{
	cpu_set_t one;

	if (saved != NULL && sched_getaffinity(0, sizeof *saved, saved) == 0) {
		CPU_ZERO(&one);
		CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
		(void)sched_setaffinity(0, sizeof one, &one);
		(void)sched_setaffinity(b->daemon, sizeof one, &one);
	}
}

/* Let this process and the daemon run on every CPU again. */
void
fig_ping_unpin(struct bench *b, const cpu_set_t *saved)
{
	(void)sched_setaffinity(0, sizeof *saved, saved);
	(void)sched_setaffinity(b->daemon, sizeof *saved, saved);
}

/* Figure: ping's round trip beside the two echo servers, all on one CPU. */
int
fig_ping_rtt(struct bench *b)
{
	struct samples	p50[FIG_PING_N] = { 0 }, p99[FIG_PING_N] = { 0 };
	struct echo	blocking, uv;
	struct rpc	r[FIG_PING_N];
	cpu_set_t	saved;
	int		rv, i;

	fig_ping_pin(b, &saved);
	if (fig_ping_echoes(b, &blocking, &uv) == -1) {
		fig_ping_unpin(b, &saved);
		return -1;
	}
	if ((rv = fig_ping_connect(b, r, &blocking, &uv)) == 0) {
		rv = fig_ping_rtt_runs(b, r, p50, p99);
		for (i = 0; i < FIG_PING_N; i++)
			rpc_close(&r[i]);
	}
	echo_stop(&blocking);
	echo_stop(&uv);
	fig_ping_unpin(b, &saved);
	if (rv == 0) {
		table_row("us", stat_median(&p50[0]), stat_median(&p50[1]),
		    TARGET(RATIO_MAX, 1.3), "all pinned to one CPU",
		    "ping RTT p50, held conn [vs blocking echo]");
		table_row("us", stat_median(&p99[0]), stat_median(&p99[1]),
		    TARGET(RATIO_MAX, 1.3), "all pinned to one CPU",
		    "ping RTT p99, held conn [vs blocking echo]");
		table_row("us", stat_median(&p50[0]), stat_median(&p50[2]),
		    NO_TARGET, NULL, "ping RTT p50, held conn [vs libuv echo]");
		table_row("us", stat_median(&p99[0]), stat_median(&p99[2]),
		    NO_TARGET, NULL, "ping RTT p99, held conn [vs libuv echo]");
	}
	for (i = 0; i < FIG_PING_N; i++) {
		stat_free(&p50[i]);
		stat_free(&p99[i]);
	}
	return rv;
}

/* One client of a requests-per-second sample. */
struct fig_ping_client {
	struct rpc		 r;
	pthread_barrier_t	*start;
	double			 end_ms;
	long			 done;
	int			 failed;
};

/* A client's thread: round trips, one in flight, until the sample ends. */
static void *
fig_ping_client_main(void *arg)
{
	struct fig_ping_client *c = arg;

	pthread_barrier_wait(c->start);
	c->done = 0;
	while (stat_now_ms() < c->end_ms) {
		if (!(rpc_roundtrip_us(&c->r, rpc_ping_line,
		    rpc_ping_len) >= 0)) {
			c->failed = 1;
			break;
		}
		c->done++;
	}
	return NULL;
}

/* One sample: n clients for FIG_PING_RPS_MS; requests per second, or NA. */
static double
fig_ping_rps_sample(struct fig_ping_client *c, int n)
{
	pthread_barrier_t	bar;
	pthread_t		th[FIG_PING_MAX_CLIENTS];
	double			t0, end;
	long			sum = 0;
	int			i, failed = 0;

	pthread_barrier_init(&bar, NULL, n + 1);
	end = stat_now_ms() + FIG_PING_RPS_MS + 5;
	for (i = 0; i < n; i++) {
		c[i].start = &bar;
		c[i].end_ms = end;
		if (pthread_create(&th[i], NULL, fig_ping_client_main,
		    &c[i]) != 0)
			abort();
	}
	pthread_barrier_wait(&bar);
	t0 = stat_now_ms();
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		sum += c[i].done;
		failed |= c[i].failed;
	}
	pthread_barrier_destroy(&bar);
	return failed ? NA : sum / ((stat_now_ms() - t0) / 1000);
}

/* n connections to path; -1 with b->why if one cannot be opened. */
static int
fig_ping_open_clients(struct bench *b, struct fig_ping_client *c, int n,
    const char *path)
{
	int i;

	for (i = 0; i < n; i++) {
		memset(&c[i], 0, sizeof c[i]);
		if (rpc_open(&c[i].r, path) == -1) {
			bench_fail(b, "%s", c[i].r.err);
			while (i-- > 0)
				rpc_close(&c[i].r);
			return -1;
		}
	}
	return 0;
}

/* Requests per second of n clients, daemon and echo interleaved. */
static int
fig_ping_rps_at(struct bench *b, int n, const struct echo *echo)
{
	struct fig_ping_client	d[FIG_PING_MAX_CLIENTS];
	struct fig_ping_client	e[FIG_PING_MAX_CLIENTS];
	struct samples		sd = { 0 }, se = { 0 };
	int			run, i, rv = 0;

	if (fig_ping_open_clients(b, d, n, b->sock) == -1)
		return -1;
	if (fig_ping_open_clients(b, e, n, echo->path) == -1) {
		for (i = 0; i < n; i++)
			rpc_close(&d[i].r);
		return -1;
	}
	for (run = 0; run < b->runs && rv == 0; run++) {
		if (run % 2 == 0) {
			stat_add(&sd, fig_ping_rps_sample(d, n));
			stat_add(&se, fig_ping_rps_sample(e, n));
		} else {
			stat_add(&se, fig_ping_rps_sample(e, n));
			stat_add(&sd, fig_ping_rps_sample(d, n));
		}
		if (!(sd.v[sd.n - 1] >= 0) || !(se.v[se.n - 1] >= 0))
			rv = bench_fail(b, "a client lost its connection");
	}
	if (rv == 0)
		table_row("req/s", stat_median(&sd), stat_median(&se),
		    NO_TARGET, "one request in flight a client",
		    "ping req/s, %d client%s [vs blocking echo]", n,
		    n > 1 ? "s" : "");
	for (i = 0; i < n; i++) {
		rpc_close(&d[i].r);
		rpc_close(&e[i].r);
	}
	stat_free(&sd);
	stat_free(&se);
	return rv;
}

/* Figure: requests per second at 1, 8 and 64 clients. */
int
fig_ping_rps(struct bench *b)
{
	struct echo	echo;
	size_t		i;
	int		rv = 0;

	if (echo_start(&echo, ECHO_BLOCKING, b->dir) == -1)
		return bench_fail(b, "the blocking echo server did not start");
	for (i = 0; i < sizeof fig_ping_clients / sizeof fig_ping_clients[0] &&
	    rv == 0; i++)
		rv = fig_ping_rps_at(b, fig_ping_clients[i], &echo);
	echo_stop(&echo);
	return rv;
}
