/*
 * Live watch (issue 36): watch samples expressions of the running QEMU
 * board at a rate over live memory into the session's "watch" stream,
 * as JSON lines {"watch", "seq", "t", "values"}.
 *
 * What a user checks: `watch counter` at 100 Hz gives samples whose own
 * timestamps (the daemon's clock) are 10 ms apart on average within 10%,
 * the counter rising, and the target never halted (its seq kept, still
 * running); through QEMU's monitor (lm3s6965evb) too; a wait for
 * "counter > N" answers with a sample meeting it; a bundle holds the
 * samples; a stop ends them with a last line; an expression that is not
 * an lvalue, a type watch does not decode, a rate over the documented
 * maximum are refused, saying why. No wall-clock assertion: the rate is
 * judged by the samples' own timestamps.
 */
#include "harness.h"
#include "b64.h"

#include <criterion/criterion.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(watch, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 240);

/* Bound for one call (ms). */

/* One session under test and the connection that drives it. */
struct wt {
	struct h_sess	 s;
	long long	 offset;	/* read so far of the watch stream */
	char		*partial;	/* a line not whole yet */
};

/* Launch the board firmware of var on machine; wait for its banner. */
static void
wt_board(struct wt *t, const char *var, const char *machine,
    const char *banner)
{
	memset(t, 0, sizeof(*t));
	h_sess_board(&t->s, var, machine, banner);
}

/* Stop the session and let go of the connection. */
static void
wt_end(struct wt *t)
{
	json_decref(h_sess_ok(&t->s, "stop", NULL));
	h_conn_close(&t->s.c);
	free(t->partial);
}

/* The target's seq now, asserting it still runs. */
static long long
wt_target_running(struct wt *t)
{
	json_t		*st = h_sess_ok(&t->s, "status", NULL);
	long long	 seq = h_jint(st, "target.seq", -1);

	cr_assert_str_eq(h_jstr(st, "target.state") ? h_jstr(st,
	    "target.state") : "", "running", "session %s: the target must "
	    "run: %s", t->s.ids, h_sess_shown(json_object_get(st, "target")));
	json_decref(st);
	return seq;
}

/* Start a watch of expr at hz; its answer. */
static json_t *
wt_start(struct wt *t, const char *expr, int hz)
{
	json_t *res;

	res = h_sess_ok(&t->s,
	    "watch", json_pack("{s:[s], s:i}", "expressions", expr,
	    "hz", hz));
	t->offset = h_jint(res, "offset", -1);
	cr_assert_geq(t->offset, 0, "watch: no offset: %s", h_sess_shown(res));
	return res;
}

/*
 * The next line of watch id on the stream (waiting for it, bounded), as
 * JSON; lines of other watches are skipped.
 */
static json_t *
wt_next(struct wt *t, long long id)
{
	json_t		*res, *line;
	const char	*data;
	char		*nl;
	unsigned char	*text;
	size_t		 have, len;

	for (;;) {
		if (t->partial != NULL && (nl = strchr(t->partial, '\n')) !=
		    NULL) {
			*nl = '\0';
			line = json_loads(t->partial, 0, NULL);
			cr_assert_not_null(line, "a watch line that is not "
			    "JSON: %s", t->partial);
			memmove(t->partial, nl + 1, strlen(nl + 1) + 1);
			if (h_jint(line, "watch", -1) == id)
				return line;
			json_decref(line);
			continue;
		}
		res = h_sess_ok(&t->s, "logs", json_pack("{s:s, s:I, s:b}",
		    "stream", "watch", "offset", (json_int_t)t->offset,
		    "wait", 1));
		data = h_jstr(res, "data");
		cr_assert_not_null(data, "logs of the watch stream: %s",
		    h_sess_shown(res));
		text = b64_decode(data, strlen(data), &len);
		cr_assert_not_null(text, "logs: data not base64");
		have = t->partial != NULL ? strlen(t->partial) : 0;
		t->partial = realloc(t->partial, have + len + 1);
		memcpy(t->partial + have, text, len);
		t->partial[have + len] = '\0';
		free(text);
		t->offset = h_jint(res, "next_offset", t->offset);
		json_decref(res);
	}
}

/*
 * Take n samples of watch id of expr "counter": assert the seq (the
 * tick's number) rises, the counter never falls and moves, the samples'
 * own timestamps are 1/hz apart a tick within 10%, and at least half the
 * ticks between the first and the last were sampled: a loaded machine
 * may make the daemon skip some, which each sample says. The last one.
 */
static json_t *
wt_samples(struct wt *t, long long id, int n, int hz)
{
	json_t		*s, *first = NULL, *prev = NULL;
	double		 spacing;
	long long	 skipped = 0, ticks;
	int		 i;

	for (i = 0; i < n; i++) {
		s = wt_next(t, id);
		cr_assert(json_is_integer(json_object_get(json_object_get(s,
		    "values"), "counter")), "a sample without counter: %s",
		    h_sess_shown(s));
		if (prev != NULL) {
			skipped += h_jint(s, "skipped", 0);
			cr_assert_gt(h_jint(s, "seq", -1), h_jint(prev, "seq",
			    -1), "seq must rise: %s after %s", h_sess_shown(s),
			    h_sess_shown(prev));
			cr_assert_geq(h_jint(s, "values.counter", -1),
			    h_jint(prev, "values.counter", -1), "the counter "
			    "fell: %s after %s", h_sess_shown(s),
			    h_sess_shown(prev));
		}
		if (first == NULL)
			first = json_incref(s);
		json_decref(prev);
		prev = s;
	}
	cr_assert_gt(h_jint(prev, "values.counter", -1), h_jint(first,
	    "values.counter", -1), "the counter did not move over %d samples: "
	    "%s to %s", n, h_sess_shown(first), h_sess_shown(prev));
	ticks = h_jint(prev, "seq", -1) - h_jint(first, "seq", -1);
	spacing = (json_real_value(json_object_get(prev, "t")) -
	    json_real_value(json_object_get(first, "t"))) / (double)ticks;
	cr_assert(spacing > 0.9 / hz && spacing < 1.1 / hz, "%d samples at %d "
	    "Hz over %lld ticks: %.6f s a tick, not within 10%% of %.6f: %s to "
	    "%s", n, hz, ticks, spacing, 1.0 / hz, h_sess_shown(first),
	    h_sess_shown(prev));
	cr_assert_geq(2 * (long long)(n - 1), ticks, "%d samples at %d Hz "
	    "span %lld ticks (%lld said skipped): fewer than half sampled: %s "
	    "to %s", n, hz, ticks, skipped, h_sess_shown(first),
	    h_sess_shown(prev));
	json_decref(first);
	return prev;
}

/*
 * mps2-an385 (shared RAM): 100 Hz for two seconds of samples, the counter
 * rising, the target never halted; then a stop ends the stream's lines of
 * it, and the list is empty.
 */
Test(watch, an385_counter_at_100hz_without_a_halt)
{
	struct wt	 t;
	json_t		*res, *line;
	long long	 seq, id;

	wt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	seq = wt_target_running(&t);
	res = wt_start(&t, "counter", 100);
	id = h_jint(res, "watch", -1);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "expressions"), 0), "type")), "uint32",
	    "counter's type: %s", h_sess_shown(res));
	json_decref(res);
	json_decref(wt_samples(&t, id, 200, 100));
	cr_assert_eq(wt_target_running(&t), seq, "the target's seq moved "
	    "while it was watched: it was halted");
	res = h_sess_ok(&t.s, "watch", json_pack("{s:s}", "action", "list"));
	cr_assert_eq(json_array_size(json_object_get(res, "watches")), 1,
	    "list: %s", h_sess_shown(res));
	json_decref(res);
	json_decref(h_sess_ok(&t.s, "watch", json_pack("{s:s, s:I}", "action",
	    "stop", "watch", (json_int_t)id)));
	do {
		line = wt_next(&t, id);
	} while (!json_is_true(json_object_get(line, "stopped")) &&
	    (json_decref(line), 1));
	json_decref(line);
	res = h_sess_ok(&t.s, "watch", json_pack("{s:s}", "action", "list"));
	cr_assert_eq(json_array_size(json_object_get(res, "watches")), 0,
	    "list after the stop: %s", h_sess_shown(res));
	json_decref(res);
	wt_end(&t);
}

/* lm3s6965evb (no shared RAM): through QEMU's monitor, 50 Hz, no halt. */
Test(watch, lm3s_counter_through_qmp_without_a_halt)
{
	struct wt	 t;
	json_t		*res;
	long long	 seq, id;

	wt_board(&t, "FIX_BOARD", "lm3s6965evb", "dbgctl board ready\r\n");
	seq = wt_target_running(&t);
	h_sess_fail(&t.s, "invalid_params", "200 Hz",
	    "watch", json_pack("{s:[s], s:i}",
	    "expressions", "counter", "hz", 500));
	res = wt_start(&t, "counter", 50);
	id = h_jint(res, "watch", -1);
	json_decref(res);
	json_decref(wt_samples(&t, id, 60, 50));
	cr_assert_eq(wt_target_running(&t), seq, "the target's seq moved "
	    "while it was watched through QMP: it was halted");
	wt_end(&t);
}

/*
 * A wait for "counter > N", N past the counter now, answers with the
 * first sample meeting it; a condition on no expression of the watch,
 * or of no operator, is refused.
 */
Test(watch, an385_wait_for_a_condition)
{
	struct wt	 t;
	json_t		*res, *s;
	long long	 id, now;
	char		 cond[64];

	wt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	res = wt_start(&t, "counter", 50);
	id = h_jint(res, "watch", -1);
	json_decref(res);
	s = wt_next(&t, id);
	now = h_jint(s, "values.counter", -1);
	json_decref(s);
	snprintf(cond, sizeof(cond), "counter > %lld", now + 1000);
	res = h_sess_ok(&t.s,
	    "watch", json_pack("{s:s, s:I, s:s}", "action", "wait",
	    "watch", (json_int_t)id, "condition", cond));
	cr_assert_gt(h_jint(res, "sample.values.counter", -1), now + 1000,
	    "wait for %s: %s", cond, h_sess_shown(res));
	json_decref(res);
	/* expect on the stream: a pattern on its JSON lines, from now on. */
	res = h_sess_ok(&t.s, "expect", json_pack("{s:s, s:s, s:I, s:i}",
	    "stream",
	    "watch", "patterns", "\"counter\":[0-9]{7,}", "from",
	    (json_int_t)t.offset, "timeout", H_WAIT_BOUND));
	cr_assert_not_null(h_jstr(res, "text"), "expect on the watch "
	    "stream: %s", h_sess_shown(res));
	json_decref(res);
	h_sess_fail(&t.s, "invalid_params", "not an expression of watch",
	    "watch",
	    json_pack("{s:s, s:I, s:s}", "action", "wait", "watch",
	    (json_int_t)id, "condition", "ticks > 3"));
	h_sess_fail(&t.s, "invalid_params", "EXPRESSION OP NUMBER",
	    "watch", json_pack(
	    "{s:s, s:I, s:s}", "action", "wait", "watch", (json_int_t)id,
	    "condition", "counter"));
	wt_end(&t);
}

/* What watch refuses, saying why: no lvalue, no decodable type, too fast. */
Test(watch, an385_refusals)
{
	struct wt t;

	wt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	h_sess_fail(&t.s, "invalid_params", "not an lvalue",
	    "watch", json_pack("{s:[s]}",
	    "expressions", "counter + 1"));
	h_sess_fail(&t.s, "invalid_params", "type watch does not decode",
	    "watch", json_pack(
	    "{s:[s]}", "expressions", "main"));
	h_sess_fail(&t.s, "invalid_params", "1 to 1000",
	    "watch", json_pack("{s:[s], s:i}",
	    "expressions", "counter", "hz", 1001));
	h_sess_fail(&t.s, "invalid_params", "no watch 9",
	    "watch", json_pack("{s:s, s:i}",
	    "action", "stop", "watch", 9));
	h_sess_fail(&t.s, "invalid_params", "expressions",
	    "watch", json_pack("{s:[]}",
	    "expressions"));
	wt_end(&t);
}

/* A bundle of a watched session holds the watch stream's samples. */
Test(watch, an385_bundle_holds_the_samples)
{
	struct wt	 t;
	json_t		*res;
	char		 out[PATH_MAX], path[PATH_MAX + 32];
	long long	 id;
	FILE		*f;
	char		 line[512];
	int		 samples = 0;

	wt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	res = wt_start(&t, "counter", 100);
	id = h_jint(res, "watch", -1);
	json_decref(res);
	json_decref(wt_samples(&t, id, 20, 100));
	h_ctx_path(out, sizeof(out), "b1");
	json_decref(h_sess_ok(&t.s, "bundle", json_pack("{s:s}", "path", out)));
	snprintf(path, sizeof(path), "%s/watch.log", out);
	f = fopen(path, "r");
	cr_assert_not_null(f, "the bundle %s has no watch.log", out);
	while (fgets(line, sizeof(line), f) != NULL)
		samples += strstr(line, "\"values\":{\"counter\":") != NULL;
	fclose(f);
	cr_assert_geq(samples, 20, "watch.log of the bundle holds %d samples",
	    samples);
	wt_end(&t);
}

/* Whether the session's watches are all gone within the bound. */
static bool
wt_no_watch(struct wt *t)
{
	double	 until = h_now() + H_WAIT_BOUND / 1000.0;
	json_t	*res;
	size_t	 n;

	do {
		res = h_sess_ok(&t->s,
	    "watch", json_pack("{s:s}", "action", "list"));
		n = json_array_size(json_object_get(res, "watches"));
		json_decref(res);
		if (n == 0)
			return true;
		h_nap(20);
	} while (h_now() < until);
	return false;
}

/*
 * dbgctl watch: plain lines "SEQ T counter=V" off a terminal; SIGINT
 * (Ctrl-C) stops the watch it started and ends it with 0; --until prints
 * the sample meeting the condition and stops its watch too.
 */
Test(watch, cli_lines_ctrl_c_and_until)
{
	struct wt	 t;
	struct h_proc	 p;
	struct h_bytes	 out = { calloc(1, 1), 0 };
	struct h_res	 r;
	json_t		*res;
	int		 st;

	wt_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	cr_assert_eq(h_cli_start(&p, H_ARGS("watch", "--hz", "50", t.s.ids,
	    "counter")), 0, "start dbgctl watch");
	cr_assert_neq(h_run_out_until(&p, &out, 0, "\n2 ", H_WAIT_BOUND), 0,
	    "dbgctl watch: expected lines \"SEQ T counter=V\", got \"%s\"",
	    h_shown(out.p, out.len, 300));
	cr_assert(strstr(out.p, " counter=") != NULL, "dbgctl watch: \"%s\"",
	    h_shown(out.p, out.len, 300));
	kill(p.pid, SIGINT);
	cr_assert(h_run_waitpid(p.pid, H_WAIT_BOUND, &st), "dbgctl watch did "
	    "not end on SIGINT");
	cr_assert_eq(h_run_code(st), 0, "dbgctl watch after SIGINT: exit %d",
	    h_run_code(st));
	res = h_sess_ok(&t.s, "watch", json_pack("{s:s}", "action", "list"));
	cr_assert_eq(json_array_size(json_object_get(res, "watches")), 0,
	    "the watch of dbgctl watch outlived its SIGINT: %s",
	    h_sess_shown(res));
	json_decref(res);
	/* Killed, its connection closes: the daemon stops its watch. */
	cr_assert_eq(h_cli_start(&p, H_ARGS("watch", t.s.ids, "counter")), 0,
	    "start dbgctl watch");
	out.len = 0;
	out.p[0] = '\0';
	cr_assert_neq(h_run_out_until(&p, &out, 0, "counter=", H_WAIT_BOUND),
	    0, "dbgctl watch printed no sample: \"%s\"", h_shown(out.p,
	    out.len, 300));
	kill(p.pid, SIGKILL);
	cr_assert(h_run_waitpid(p.pid, H_WAIT_BOUND, &st), "dbgctl watch "
	    "outlived SIGKILL");
	cr_assert(wt_no_watch(&t), "the watch of a killed dbgctl watch "
	    "outlived its connection");
	h_cli_exit(&r, 0, H_ARGS("watch", "--until", "counter > 1000", t.s.ids,
	    "counter"));
	cr_assert(strstr(r.out, " counter=") != NULL, "dbgctl watch --until: "
	    "\"%s\"", r.out);
	h_run_free(&r);
	h_cli_exit(&r, 1, H_ARGS("watch", t.s.ids, "counter + 1"));
	cr_assert(strstr(r.err, "not an lvalue") != NULL, "dbgctl watch of a "
	    "non-lvalue: \"%s\"", r.err);
	h_run_free(&r);
	res = h_sess_ok(&t.s, "watch", json_pack("{s:s}", "action", "list"));
	cr_assert_eq(json_array_size(json_object_get(res, "watches")), 0,
	    "the watch of dbgctl watch --until outlived it: %s",
	    h_sess_shown(res));
	json_decref(res);
	free(out.p);
	wt_end(&t);
}
