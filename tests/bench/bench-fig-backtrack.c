/*
 * Figure: ping beside expects whose pattern backtracks exponentially
 * (`(a|aa)+c` over 30,000 bytes of 25 a's and a b), each of which takes
 * the daemon's matching for its whole budget before it fails with
 * `limit`, beside pings on the same daemon idle. dbgctld(8) LIMITS
 * promises a p99 within 50 ms under any expect load.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Connections and expects on each, pings a sample, ms before the pings. */
#define FIG_BT_CONNS 4
#define FIG_BT_EACH 16
#define FIG_BT_PINGS 200
#define FIG_BT_SETTLE_MS 100

/* Launch the backtracking target with a transport on r; its id, or -1. */
static json_int_t
fig_bt_launch(struct rpc *r)
{
	json_int_t	 id;
	json_t		*res;

	res = rpc_call(r, "launch", json_pack("{s:s, s:[sss], s:s, s:b}",
	    "kind", "exec", "argv", "sh", "-c", "yes aaaaaaaaaaaaaaaaaaaaaaaaab"
	    " | head -c 30000; exec sleep 600", "cwd", "/", "transport", 1));
	if (res == NULL)
		return -1;
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	return id;
}

/* The loaded phase: the backtracking expects sent, then pings; -1 with b->why. */
static int
fig_bt_loaded(struct bench *b, struct rpc *r, double *p50, double *p99)
{
	struct rpc	 w[FIG_BT_CONNS];
	json_int_t	 session;
	int		 i, k, n = 0, rv = 0;

	if ((session = fig_bt_launch(r)) == -1)
		return bench_fail(b, "launch: %s", r->err);
	for (i = 0; i < FIG_BT_CONNS && rv == 0; i++, n++) {
		if (rpc_open(&w[i], b->sock) == -1) {
			rv = bench_fail(b, "%s", w[i].err);
			break;
		}
		for (k = 0; k < FIG_BT_EACH && rv == 0; k++)
			if (rpc_send(&w[i], "expect", json_pack("{s:I, s:s, "
			    "s:i, s:i}", "session", session, "patterns",
			    "(a|aa)+c", "from", 0, "timeout", 600000)) == -1)
				rv = bench_fail(b, "expect: %s", w[i].err);
	}
	if (rv == 0) {
		stat_sleep_ms(FIG_BT_SETTLE_MS);
		if (rpc_ping_pct(r, FIG_BT_PINGS, p50, p99) == -1)
			rv = bench_fail(b, "ping: %s", r->err);
	}
	for (i = 0; i < n; i++)
		rpc_close(&w[i]);
	json_decref(rpc_call(r, "stop", json_pack("{s:I}", "session",
	    session)));
	json_decref(rpc_call(r, "remove", json_pack("{s:I}", "session",
	    session)));
	return rv;
}

/* Pings beside backtracking expects, and on the idle daemon, interleaved. */
int
fig_backtrack_ping(struct bench *b)
{
	struct samples	 s[2][2] = { { { 0 } } };
	struct rpc	 r;
	double		 p50 = NA, p99 = NA;
	int		 run, k, ph, rv = 0, i;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	for (run = 0; run < b->runs && rv == 0; run++)
		for (k = 0; k < 2 && rv == 0; k++) {
			ph = (run + k) % 2;
			daemon_settle(b);
			if (ph == 0)
				rv = fig_bt_loaded(b, &r, &p50, &p99);
			else if (rpc_ping_pct(&r, FIG_BT_PINGS, &p50, &p99) == -1)
				rv = bench_fail(b, "ping: %s", r.err);
			stat_add(&s[ph][0], p50);
			stat_add(&s[ph][1], p99);
		}
	if (rv == 0) {
		table_row("us", stat_median(&s[0][0]), stat_median(&s[1][0]),
		    NO_TARGET, "64 expects of (a|aa)+c over runs of a's",
		    "ping p50, backtracking expects [vs idle]");
		table_row("us", stat_median(&s[0][1]), stat_median(&s[1][1]),
		    TARGET(MAX, 50000), "dbgctld(8) LIMITS: within 50 ms",
		    "ping p99, backtracking expects [vs idle]");
	}
	rpc_close(&r);
	for (i = 0; i < 4; i++)
		stat_free(&s[i / 2][i % 2]);
	return rv;
}
