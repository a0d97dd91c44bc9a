/*
 * Verdict: from a deadline's expiry to its session.verdict at a
 * subscriber, for a native program under gdb and for the board, beside
 * the halt of the same target (a halt request to its answer), which the
 * verdict does before it asks gdb where every thread is.
 */
#include "bench.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The deadline given, ms from when it is set. */
#define FIG_VERDICT_DEADLINE_MS 200

/* The wall clock in ms, as the daemon's deadline "at" is (in seconds). */
static double
fig_verdict_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The launch params of the target: a gdb-run sleep, or the board in QEMU. */
static json_t *
fig_verdict_params(struct bench *b, bool board)
{
	char server[4096];

	if (!board)
		return json_pack("{s:s, s:[s, s], s:[s], s:s}", "kind", "gdb",
		    "argv", "/bin/sleep", "1000", "commands", "run", "cwd", "/");
	snprintf(server, sizeof server, "qemu-system-arm -M lm3s6965evb "
	    "-nographic -kernel '%s' -serial stdio -monitor none "
	    "-gdb tcp:127.0.0.1:{port} -S", b->board);
	return json_pack("{s:s, s:[s], s:s, s:s, s:[s], s:s}", "kind",
	    "gdbserver", "argv", b->board, "server", server, "debugger",
	    "gdb-multiarch", "commands", "continue", "cwd", "/");
}

/* Launch the target and wait until it runs; its id, or -1 with r->err. */
static json_int_t
fig_verdict_launch(struct bench *b, struct rpc *r, bool board)
{
	json_t		*res;
	json_int_t	 id;
	const char	*st;
	int		 i;

	if ((res = rpc_call(r, "launch", fig_verdict_params(b, board))) == NULL)
		return -1;
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	for (i = 0; i < 3000; i++) {
		res = rpc_call(r, "status", json_pack("{s:I}", "session", id));
		st = json_string_value(json_object_get(json_object_get(res,
		    "target"), "state"));
		if (st != NULL && strcmp(st, "running") == 0) {
			json_decref(res);
			return id;
		}
		json_decref(res);
		stat_sleep_ms(10);
	}
	snprintf(r->err, sizeof r->err, "session %lld never ran",
	    (long long)id);
	return -1;
}

/* Read until the session.verdict of id: when it came (wall ms), or NA. */
static double
fig_verdict_heard(struct rpc *r, json_int_t id)
{
	json_t		*msg;
	json_error_t	 e;
	char		*line;
	bool		 ours;

	while ((line = rpc_line(r)) != NULL) {
		if ((msg = json_loads(line, 0, &e)) == NULL)
			return NA;
		ours = json_is_string(json_object_get(msg, "method")) &&
		    strcmp(json_string_value(json_object_get(msg, "method")),
		    "session.verdict") == 0 && json_integer_value(
		    json_object_get(json_object_get(msg, "params"), "session"))
		    == id;
		json_decref(msg);
		if (ours)
			return fig_verdict_wall_ms();
	}
	return NA;
}

/* One verdict: ms from the deadline's expiry to its notification, or NA. */
static double
fig_verdict_once(struct bench *b, struct rpc *r, bool board)
{
	json_int_t	 id;
	json_t		*res;
	double		 at, heard;

	if ((id = fig_verdict_launch(b, r, board)) == -1)
		return NA;
	json_decref(rpc_call(r, "subscribe", json_pack("{s:I, s:[]}",
	    "session", id, "streams")));
	res = rpc_call(r, "deadline", json_pack("{s:I, s:i}", "session", id,
	    "ms", FIG_VERDICT_DEADLINE_MS));
	at = json_real_value(json_object_get(json_object_get(res, "deadline"),
	    "at")) * 1e3;
	json_decref(res);
	heard = fig_verdict_heard(r, id);
	json_decref(rpc_call(r, "unsubscribe", json_pack("{s:I}", "session",
	    id)));
	rpc_stop(r, id);
	return heard - at;
}

/* One halt of a running target: ms from the request to its answer, or NA. */
static double
fig_verdict_halt(struct bench *b, struct rpc *r, bool board)
{
	json_int_t	 id;
	json_t		*res;
	double		 t0, t;

	if ((id = fig_verdict_launch(b, r, board)) == -1)
		return NA;
	t0 = stat_now_ms();
	res = rpc_call(r, "halt", json_pack("{s:I}", "session", id));
	t = stat_now_ms() - t0;
	json_decref(res);
	rpc_stop(r, id);
	return res != NULL ? t : NA;
}

/* Figure: deadline expiry to verdict beside a halt, native or the board. */
static int
fig_verdict_run(struct bench *b, bool board)
{
	struct samples	sd = { 0 }, sb = { 0 };
	struct rpc	r;
	double		d, t;
	char		note[32];
	int		run, rv = 0, runs = b->runs < 5 ? b->runs : 5;

	if (board && b->board == NULL) {
		table_na(TARGET(OVER_MAX, 200), "BENCH_BOARD is not set",
		    "board deadline expiry to its verdict [vs a halt]");
		return 0;
	}
	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	for (run = 0; run < runs && rv == 0; run++) {
		d = fig_verdict_once(b, &r, board);
		t = fig_verdict_halt(b, &r, board);
		if (!(d >= 0) || !(t >= 0))
			rv = bench_fail(b, "verdict: %s", r.err);
		stat_add(&sd, d);
		stat_add(&sb, t);
	}
	rpc_close(&r);
	snprintf(note, sizeof note, "median of %d", runs);
	if (rv == 0)
		table_row("ms", stat_median(&sd), stat_median(&sb),
		    TARGET(OVER_MAX, 200), note, "%s deadline expiry "
		    "to its session.verdict [vs a halt of it]", board ?
		    "board" : "native gdb");
	stat_free(&sd);
	stat_free(&sb);
	return rv;
}

/* Figure: a native program's verdict. */
int
fig_verdict_native(struct bench *b)
{
	return fig_verdict_run(b, false);
}

/* Figure: the board's verdict. */
int
fig_verdict_board(struct bench *b)
{
	return fig_verdict_run(b, true);
}
