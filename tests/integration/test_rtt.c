/*
 * RTT (issue 36): the board firmware's RTT channels (examples/board/rtt.c)
 * as streams, polled over the shared RAM of mps2-an385 while the core
 * runs.
 *
 * What a user checks: the up-channel's lines are matched by expect while
 * the target never halts (its seq unchanged, its counter advancing
 * throughout); a down-channel write changes what the firmware prints; a
 * bundle holds the rtt0 transcript; a full transcript stops the reading
 * (backpressure), and block mode then waits; no control block, a bad
 * channel, a rate over the maximum and a machine without shared RAM are
 * refused, saying why.
 */
#include "harness.h"
#include "b64.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TestSuite(rtt, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 240);

/* One session under test and the connection that drives it. */
struct rtt {
	struct h_sess	 s;
	long long	 seq;		/* the target's seq at the start */
};

/* Launch the board firmware of var on machine; wait for its banner. */
static void
rtt_board(struct rtt *t, const char *var, const char *machine,
    const char *banner)
{
	memset(t, 0, sizeof(*t));
	t->seq = -1;
	h_sess_board(&t->s, var, machine, banner);
}

/*
 * The counter, read live: the target still running and its seq where it
 * was at the first read (nothing halted it).
 */
static unsigned long
rtt_counter(struct rtt *t)
{
	const char	*hex;
	unsigned long	 v = 0;
	unsigned	 b;
	json_t		*res;
	int		 i;

	res = h_sess_ok(&t->s, "memory", json_pack("{s:s, s:i, s:b}", "address",
	    "&counter", "length", 4, "live", 1));
	cr_assert_str_eq(h_jstr(res, "target.state") ? h_jstr(res,
	    "target.state") : "", "running", "the target must run: %s",
	    h_sess_shown(res));
	if (t->seq == -1)
		t->seq = h_jint(res, "target.seq", -1);
	cr_assert_eq(h_jint(res, "target.seq", -2), t->seq, "the target's seq "
	    "must not move (no halt): %s", h_sess_shown(res));
	hex = h_jstr(res, "hex");
	cr_assert(hex != NULL && strlen(hex) == 8, "counter: %s",
	    h_sess_shown(res));
	for (i = 3; i >= 0; i--) {
		cr_assert_eq(sscanf(hex + 2 * i, "%2x", &b), 1, "hex %s", hex);
		v = v << 8 | b;
	}
	json_decref(res);
	return v;
}

/* expect pattern on stream from offset from; the match's result. */
static json_t *
rtt_expect(struct rtt *t, const char *stream, const char *pattern,
    long long from)
{
	return h_sess_ok(&t->s, "expect", json_pack("{s:s, s:s, s:I, s:i}",
	    "stream",
	    stream, "patterns", pattern, "from", from, "timeout",
	    H_WAIT_BOUND));
}

/* Member key of the first up-channel of an rtt answer, or "". */
static const char *
rtt_up0(json_t *rtt, const char *key)
{
	const char *v = json_string_value(json_object_get(json_array_get(
	    json_object_get(rtt, "up"), 0), key));

	return v != NULL ? v : "";
}

/* RTT on: found by the symbol, channel 0 up and down, named "Terminal". */
static json_t *
rtt_on(struct rtt *t)
{
	json_t *res = h_sess_ok(&t->s, "rtt", NULL);

	cr_assert_str_eq(h_jstr(res, "found_by") ? h_jstr(res, "found_by") :
	    "", "symbol", "rtt: %s", h_sess_shown(res));
	cr_assert(strcmp(rtt_up0(res, "stream"), "rtt0") == 0 &&
	    strcmp(rtt_up0(res, "name"), "Terminal") == 0 &&
	    json_array_size(json_object_get(res, "down")) == 1 &&
	    h_jint(res, "poll_hz", 0) == 100, "rtt: %s", h_sess_shown(res));
	return res;
}

/*
 * Lines of rtt0 are matched by expect, one after another, while the
 * counter moves on between them and the target's seq never changes.
 */
Test(rtt, up_channel_lines_matched_while_target_never_halts)
{
	struct rtt	 t;
	unsigned long	 before, after;
	long long	 next;
	json_t		*res;
	int		 i;

	rtt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	json_decref(rtt_on(&t));
	before = rtt_counter(&t);
	res = rtt_expect(&t, "rtt0", "rtt ready\n", 0);
	next = h_jint(res, "next", -1);
	json_decref(res);
	for (i = 0; i < 3; i++) {
		res = rtt_expect(&t, "rtt0", "rtt [0-9]+ counter [0-9]+\n",
		    next);
		next = h_jint(res, "next", -1);
		json_decref(res);
		after = rtt_counter(&t);
		cr_assert_neq(after, before, "the counter stayed at %lu while "
		    "RTT lines came", before);
		before = after;
	}
	res = h_sess_ok(&t.s, "status", NULL);
	cr_assert_str_eq(rtt_up0(json_object_get(res, "rtt"), "name"),
	    "Terminal", "status: %s", h_sess_shown(res));
	json_decref(res);
	h_sess_end(&t.s);
}

/* A down-channel write ("u"): the firmware prints in upper case from then. */
Test(rtt, down_channel_write_changes_the_firmware)
{
	struct rtt	 t;
	json_t		*res;
	long long	 next;

	rtt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	json_decref(rtt_on(&t));
	(void)rtt_counter(&t);
	res = h_sess_ok(&t.s, "write", json_pack("{s:s, s:s}", "stream", "rtt0",
	    "data", "dQ=="));
	cr_assert_eq(h_jint(res, "written", -1), 1, "write: %s",
	    h_sess_shown(res));
	json_decref(res);
	res = rtt_expect(&t, "rtt0", "MODE UPPER\n", 0);
	next = h_jint(res, "next", -1);
	json_decref(res);
	json_decref(rtt_expect(&t, "rtt0", "RTT [0-9]+ COUNTER [0-9]+\n",
	    next));
	(void)rtt_counter(&t);
	h_sess_end(&t.s);
}

/* A bundle holds rtt0.log, the channel's transcript, with its lines. */
Test(rtt, bundle_holds_the_rtt_transcript)
{
	struct rtt	 t;
	char		 out[PATH_MAX], path[PATH_MAX + 16], buf[4096];
	FILE		*f;
	size_t		 n;

	rtt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	json_decref(rtt_on(&t));
	json_decref(rtt_expect(&t, "rtt0", "rtt 2 counter", 0));
	h_ctx_path(out, sizeof out, "bundle");
	json_decref(h_sess_ok(&t.s, "bundle", json_pack("{s:s}", "path", out)));
	snprintf(path, sizeof path, "%s/rtt0.log", out);
	f = fopen(path, "r");
	cr_assert_not_null(f, "the bundle has no %s", path);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	cr_assert(strstr(buf, "rtt ready\n") != NULL && strstr(buf,
	    "rtt 2 counter") != NULL, "%s: \"%s\"", path, h_shown(buf, n,
	    300));
	h_sess_end(&t.s);
}

/*
 * Refusals: a rate over the maximum, no control block at an address, a
 * channel the block does not have (write and logs), a write before RTT
 * is on; the board goes on running through them.
 */
Test(rtt, bad_params_refused_saying_why)
{
	struct rtt t;

	rtt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	h_sess_fail(&t.s, "not_supported", "no RTT", "write", json_pack(
	    "{s:s, s:s}", "stream", "rtt0", "data", "dQ=="));
	h_sess_fail(&t.s, "invalid_params", "poll_hz", "rtt", json_pack("{s:i}",
	    "poll_hz", 5000));
	h_sess_fail(&t.s, "invalid_params",
	    "no RTT control block at 0x21000100",
	    "rtt", json_pack("{s:s}", "address", "0x21000100"));
	h_sess_fail(&t.s, "invalid_params", "shared RAM", "rtt",
	    json_pack("{s:s}",
	    "address", "0x100"));
	h_sess_fail(&t.s, "invalid_params", "no_such_symbol", "rtt", json_pack(
	    "{s:s}", "address", "&no_such_symbol"));
	h_sess_fail(&t.s, "not_supported", "no rtt0 stream", "logs", json_pack(
	    "{s:s}", "stream", "rtt0"));
	json_decref(rtt_on(&t));
	h_sess_fail(&t.s, "invalid_params", "rtt1 is not one", "write",
	    json_pack(
	    "{s:s, s:s}", "stream", "rtt1", "data", "dQ=="));
	h_sess_fail(&t.s, "not_supported", "no rtt1 stream", "expect",
	    json_pack(
	    "{s:s, s:s, s:i}", "stream", "rtt1", "patterns", "x", "timeout",
	    1));
	h_sess_fail(&t.s, "invalid_params", "\"rtt0\" to \"rtt3\"", "logs",
	    json_pack("{s:s}", "stream", "rtt9"));
	(void)rtt_counter(&t);
	(void)rtt_counter(&t);
	h_sess_end(&t.s);
}

/*
 * The text of one stream's session.output notifications on c, joined,
 * once it holds want (NULL if it does not within the bound): each piece
 * must start where the one before ended, with no gap and no repeat.
 */
static char *
rtt_note_text(struct h_conn *c, const char *stream, const char *want,
    int bound_ms)
{
	double		 end = h_now() + bound_ms / 1000.0;
	const char	*data;
	unsigned char	*piece;
	char		*text = calloc(1, 1);
	size_t		 have = 0, len;
	long long	 next = -1;
	json_t		*msg;
	int		 left;

	while (strstr(text, want) == NULL) {
		if ((left = (int)((end - h_now()) * 1000)) <= 0 ||
		    (msg = h_conn_recv(c, left)) == NULL) {
			free(text);
			return NULL;
		}
		data = h_jstr(msg, "params.data");
		if (strcmp(h_jstr(msg, "method") ?: "", "session.output") != 0 ||
		    strcmp(h_jstr(msg, "params.stream") ?: "", stream) != 0 ||
		    data == NULL) {
			json_decref(msg);
			continue;
		}
		cr_assert(next == -1 || h_jint(msg, "params.offset", -1) == next,
		    "a %s piece at %lld, not at %lld where the last ended",
		    stream, h_jint(msg, "params.offset", -1), next);
		piece = b64_decode(data, strlen(data), &len);
		cr_assert_not_null(piece, "%s: data not base64", stream);
		next = h_jint(msg, "params.offset", -1) + (long long)len;
		text = realloc(text, have + len + 1);
		memcpy(text + have, piece, len);
		text[have += len] = '\0';
		free(piece);
		json_decref(msg);
	}
	return text;
}

/*
 * A subscriber to rtt0 and watch gets both as session.output, each piece
 * where the last ended: rtt0 from its first byte, subscribed before RTT
 * began; watch, one JSON line a sample of the watch it started.
 */
Test(rtt, a_subscriber_gets_rtt_and_watch_output)
{
	struct rtt	 t;
	struct h_conn	 c;
	json_t		*rep, *line;
	char		*text, params[96];
	long long	 id;

	rtt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	h_sess_fail(&t.s, "invalid_params", "\"watch\", \"rtt0\", "
	    "\"rtt1\", \"rtt2\", \"rtt3\"", "subscribe", json_pack("{s:[s]}",
	    "streams", "rtt9"));
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(params, sizeof params, "{\"session\":%ld,\"streams\":"
	    "[\"rtt0\",\"watch\"]}", t.s.id);
	rep = h_conn_call(&c, "subscribe", params, H_WAIT_BOUND);
	cr_assert(json_is_true(h_jpath(rep, "result.subscribed")), "%s",
	    h_sess_shown(rep));
	json_decref(rep);
	json_decref(rtt_on(&t));
	text = rtt_note_text(&c, "rtt0", " counter ", H_WAIT_BOUND);
	cr_assert_not_null(text, "no session.output of rtt0 with a counter");
	cr_assert(strncmp(text, "rtt ready\n", 10) == 0, "rtt0 to a "
	    "subscriber does not begin with the firmware's first line: %.80s",
	    text);
	free(text);
	rep = h_sess_ok(&t.s, "watch", json_pack("{s:[s], s:i}",
	    "expressions", "counter", "hz", 50));
	id = h_jint(rep, "watch", -1);
	json_decref(rep);
	text = rtt_note_text(&c, "watch", "}\n", H_WAIT_BOUND);
	cr_assert_not_null(text, "no session.output of the watch stream");
	line = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
	cr_assert(line != NULL && h_jint(line, "watch", -1) == id &&
	    json_object_get(line, "values") != NULL, "the watch stream's "
	    "first line to a subscriber: %s", text);
	json_decref(line);
	free(text);
	h_conn_close(&c);
	h_sess_end(&t.s);
}

/*
 * Assert that the rtt0 log at path numbers its lines "rtt N counter M"
 * one after another from its "mode block" line on: none lost, none twice.
 */
static void
rtt_expect_consecutive(const char *path)
{
	FILE		*f = fopen(path, "r");
	char		 line[128];
	long		 n, last = -1, lines = 0;
	bool		 blocking = false;

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof line, f) != NULL) {
		if (strcmp(line, "mode block\n") == 0)
			blocking = true;
		if (!blocking || sscanf(line, "rtt %ld counter", &n) != 1)
			continue;
		cr_assert(last == -1 || n == last + 1, "%s: line \"rtt %ld\" "
		    "after \"rtt %ld\": a line was lost or repeated across the "
		    "adoption", path, n, last);
		last = n;
		lines++;
	}
	fclose(f);
	cr_assert_geq(lines, 6, "%s: only %ld numbered lines", path, lines);
}

/*
 * RTT goes on across an adoption: the new daemon reads the channel on
 * from the target's read offset, so with the channel blocking (nothing
 * dropped by the firmware while no daemon read) every line comes once.
 */
Test(rtt, rtt_goes_on_across_an_adoption)
{
	struct rtt	 t;
	struct stat	 st;
	char		 path[PATH_MAX + 64];
	json_t		*res;
	long long	 next;
	int		 i;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	rtt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	json_decref(rtt_on(&t));
	json_decref(h_sess_ok(&t.s, "write", json_pack("{s:s, s:s}", "stream",
	    "rtt0", "data", "Yg==")));
	res = rtt_expect(&t, "rtt0", "mode block\n", 0);
	next = h_jint(res, "next", -1);
	json_decref(res);
	json_decref(rtt_expect(&t, "rtt0", "rtt [0-9]+ counter [0-9]+\n",
	    next));
	h_conn_close(&t.s.c);
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&t.s.c, H->sock), 0, "connect again");
	snprintf(path, sizeof path, "%s/sessions/%ld.rtt0.log", H->state,
	    t.s.id);
	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	res = h_sess_ok(&t.s, "status", NULL);
	cr_assert_eq(h_jint(res, "rtt.poll_hz", -1), 100, "the adopted "
	    "session's RTT: %s", h_sess_shown(json_object_get(res, "rtt")));
	json_decref(res);
	next = st.st_size;
	for (i = 0; i < 5; i++) {
		res = rtt_expect(&t, "rtt0", "rtt [0-9]+ counter [0-9]+\n",
		    next);
		next = h_jint(res, "next", -1);
		json_decref(res);
	}
	rtt_expect_consecutive(path);
	h_sess_end(&t.s);
}

/* With the control block's id wiped (a live write of zeros), no block. */
Test(rtt, no_control_block_refused)
{
	struct rtt t;

	rtt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	json_decref(h_sess_ok(&t.s, "memory",
	    json_pack("{s:s, s:s, s:{s:s}, s:b}",
	    "action", "write", "address", "&_SEGGER_RTT", "data", "hex",
	    "0000000000000000", "live", 1)));
	h_sess_fail(&t.s, "invalid_params", "its id is not \"SEGGER RTT\"",
	    "rtt",
	    NULL);
	h_sess_end(&t.s);
}

/* lm3s6965evb shares no RAM: QMP cannot write RdOff back, so no RTT. */
Test(rtt, no_shared_ram_refused)
{
	struct rtt t;

	rtt_board(&t, "FIX_BOARD", "lm3s6965evb", "dbgctl board ready\r\n");
	h_sess_fail(&t.s, "not_supported", "machine lm3s6965evb has none",
	    "rtt",
	    NULL);
	h_sess_end(&t.s);
}

/* status's rtt.stalls: the polls that left bytes in the target, full. */
static long long
rtt_stalls(struct rtt *t)
{
	json_t		*res = h_sess_ok(&t->s, "status", NULL);
	long long	 n = h_jint(res, "rtt.stalls", -1);

	json_decref(res);
	return n;
}

/* Wait (bounded) until the daemon has stalled more than n times. */
static long long
rtt_stalls_over(struct rtt *t, long long n)
{
	double		 until = h_now() + H_WAIT_BOUND / 1000.0;
	long long	 now;

	while ((now = rtt_stalls(t)) <= n && h_now() < until)
		h_nap(10);
	cr_assert_gt(now, n, "the daemon never stopped reading rtt0 (stalls "
	    "%lld) though its transcript is at its size limit", now);
	return now;
}

/*
 * Backpressure: once rtt0's transcript reaches its size limit the daemon
 * stops reading the channel; the firmware, in block mode, then waits in
 * its write: its up-buffer stays full and its counter stands still across
 * polls the daemon made, and nothing was taken that the log lost.
 */
Test(rtt, full_transcript_stops_reading_and_block_mode_waits)
{
	struct rtt	 t;
	unsigned long	 c1, c2;
	long long	 n;
	json_t		*res;

	h_ctx_env_add("DBGCTLD_TRANSCRIPT_MAX=4096");
	rtt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	json_decref(rtt_on(&t));
	json_decref(h_sess_ok(&t.s, "write", json_pack("{s:s, s:s}", "stream",
	    "rtt0", "data", "YmY=")));
	n = rtt_stalls_over(&t, 0);
	c1 = rtt_counter(&t);
	n = rtt_stalls_over(&t, n + 2);
	c2 = rtt_counter(&t);
	cr_assert_eq(c1, c2, "the firmware in block mode went on (counter "
	    "%lu, then %lu) while the daemon did not read", c1, c2);
	res = h_sess_ok(&t.s, "logs", json_pack("{s:s, s:i}", "stream", "rtt0",
	    "max", 1));
	cr_assert_leq(h_jint(res, "size", -1), 4096 + 65536, "rtt0 took %lld "
	    "bytes past its limit: %s", h_jint(res, "size", -1),
	    h_sess_shown(res));
	json_decref(res);
	h_sess_end(&t.s);
}
