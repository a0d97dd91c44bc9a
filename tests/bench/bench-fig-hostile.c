/*
 * The owner's ping under attack: the soak's hostile phase (tokenless TCP
 * floods, slowloris lines, token guesses, the owner's slowly read batch
 * of 1500 lists and 1500 pipelined lists, a stalled target subscriber)
 * beside 150 idle sessions, against the same daemon's quiet ping just
 * before; and the target bytes the stalled subscriber lost meanwhile.
 */
#include "bench.h"
#include "../soak/hostile.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scene of the soak's hostile phase (tests/soak/test_hostile.c). */
#define FIG_HOSTILE_SESSIONS	150
#define FIG_HOSTILE_SEQ		"1000000"
#define FIG_HOSTILE_SEQ_BYTES	6888896L
/* The quiet pings' time before the attack (ms). */
#define FIG_HOSTILE_QUIET_MS	2000

/* Ping on r for ms, each round trip into s; -1 at a failed one. */
static int
fig_hostile_pings(struct rpc *r, double ms, struct samples *s)
{
	double	end = stat_now_ms() + ms, us;

	while (stat_now_ms() < end) {
		if (!((us = rpc_roundtrip_us(r, rpc_ping_line,
		    rpc_ping_len)) >= 0))
			return -1;
		stat_add(s, us);
	}
	return 0;
}

/* Subscribe sub to session id's target output, then read nothing. */
static int
fig_hostile_subscribe(struct bench *b, struct rpc *sub, json_int_t id)
{
	json_t *res;

	if (rpc_open(sub, b->sock) == -1)
		return bench_fail(b, "%s", sub->err);
	res = rpc_call(sub, "subscribe", json_pack("{s:I, s:[s]}", "session",
	    id, "streams", "target"));
	if (res == NULL)
		return bench_fail(b, "subscribe: %s", sub->err);
	json_decref(res);
	return 0;
}

/* Read the subscriber's target output to its end; the bytes it got. */
static long
fig_hostile_drain(struct rpc *sub)
{
	json_t		*n, *params;
	const char	*data;
	long		 got = 0;
	char		*line;
	bool		 eof = false;

	while (!eof && (line = rpc_line(sub)) != NULL) {
		if ((n = json_loads(line, 0, NULL)) == NULL)
			return -1;
		if (json_object_get(n, "error") != NULL) {
			json_decref(n);
			return -1;
		}
		params = json_object_get(n, "params");
		if ((data = json_string_value(json_object_get(params,
		    "data"))) != NULL)
			got += (long)b64_size(data, strlen(data));
		eof = json_is_true(json_object_get(params, "eof"));
		json_decref(n);
	}
	return eof ? got : -1;
}

/* The attack itself, beside pings on r into s; its report in b->why. */
static int
fig_hostile_attack(struct bench *b, struct rpc *r, struct samples *s)
{
	struct hostile	h = { 0 };
	int		rv;

	h.unix_path = b->sock;
	h.tcp_port = b->tcp_port;
	h.flood = 300;
	h.slowloris = 50;
	h.guessers = 2;
	h.batch = 1500;
	h.pipelined = 1500;
	h.seconds = b->hostile_s;
	if (hostile_start(&h) == -1)
		return bench_fail(b, "cannot start the hostile peers");
	rv = fig_hostile_pings(r, b->hostile_s * 1000.0, s);
	if (hostile_wait(&h, b->hostile_s + 20) == -1)
		return bench_fail(b, "the hostile peers did not report");
	fprintf(stderr, "bench: hostile peers: %s\n", h.report);
	if (rv == -1)
		return bench_fail(b, "a ping under attack: %s", r->err);
	return 0;
}

/* Figure: ping p50, p99 and max under attack beside the quiet ones. */
int
fig_hostile(struct bench *b)
{
	struct samples	 quiet = { 0 }, hot = { 0 };
	struct rpc	 r, sub;
	json_t		*res;
	json_int_t	 id;
	long		 got = -1;
	int		 rv;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	if (rpc_launch_many(&r, FIG_HOSTILE_SESSIONS, NULL) == -1 ||
	    (res = rpc_call(&r, "launch", json_pack("{s:s, s:b, s:[s, s, s]}",
	    "kind", "exec", "transport", 1, "argv", "seq", "1",
	    FIG_HOSTILE_SEQ))) == NULL) {
		rv = bench_fail(b, "launch: %s", r.err);
		rpc_close(&r);
		return rv;
	}
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	rv = fig_hostile_subscribe(b, &sub, id);
	daemon_settle(b);
	if (rv == 0 && fig_hostile_pings(&r, FIG_HOSTILE_QUIET_MS, &quiet) ==
	    -1)
		rv = bench_fail(b, "a quiet ping: %s", r.err);
	if (rv == 0)
		rv = fig_hostile_attack(b, &r, &hot);
	if (rv == 0)
		got = fig_hostile_drain(&sub);
	if (rv == 0) {
		table_row("us", stat_pct(&hot, 50), stat_pct(&quiet, 50),
		    NO_TARGET, "owner's pings, Unix socket",
		    "ping p50 under hostile peers [vs quiet]");
		table_row("us", stat_pct(&hot, 99), stat_pct(&quiet, 99),
		    NO_TARGET, "dbgctld(8) LIMITS",
		    "ping p99 under hostile peers [vs quiet]");
		table_row("ms", stat_pct(&hot, 100) / 1000, stat_pct(&quiet,
		    100) / 1000, TARGET(MAX, 1000), "the soak's bound",
		    "slowest ping under hostile peers [vs quiet]");
		table_row("B", got < 0 ? NA : (double)(FIG_HOSTILE_SEQ_BYTES -
		    got), NA, TARGET(ZERO, 0), "a stalled subscriber",
		    "target bytes lost under hostile peers");
	}
	rpc_close(&sub);
	rpc_close(&r);
	stat_free(&quiet);
	stat_free(&hot);
	return rv;
}
