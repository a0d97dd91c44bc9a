/*
 * Run control over the raw protocol (issue 21): halt, resume, break,
 * eval, memory, registers, reset and load, and the sequenced target
 * records and waits they answer with, on native gdb (tests/fixtures'
 * loop and fault) and on the QEMU board (examples/board).
 *
 * What a user checks: a breakpoint hit at once after a resume is the
 * resume's answer every time; seq only grows; a wait never takes a stop
 * it has seen; a reset forgets the fault but the next one is recorded;
 * deleting every breakpoint leaves fault triage armed; a second build
 * loaded says a different banner; memory written reads back; the verbs
 * refuse an exec session by name.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(control, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* Bound for one call (ms): longer than any verb's own timeout here. */
#define CTL_BOUND	(60000 * H_SLOW)
/* A verb's timeout (ms) where something must happen. */
#define CTL_VERB_MS	(20000 * H_SLOW)
/* A wait's timeout (ms) where nothing may happen. */
#define CTL_QUIET_MS	500

/* What the board's firmware prints at reset. */
#define CTL_BANNER	"dbgctl board ready\r\n"

/* One session under test and the connection that drives it. */
struct ctl {
	struct h_conn	 c;
	long		 id;
	char		 ids[32];
};

/* A short form of a JSON value for messages (a static buffer, reused). */
static const char *
ctl_shown(json_t *j)
{
	static char	 buf[4][2048];
	static int	 next;
	char		*s;

	next = (next + 1) % 4;
	s = j != NULL ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	snprintf(buf[next], sizeof(buf[next]), "%s", s != NULL ? s : "(none)");
	free(s);
	return buf[next];
}

/*
 * Call method on the session with params (taken; "session" added) and
 * return the whole reply; asserted to come within CTL_BOUND.
 */
static json_t *
ctl_call(struct ctl *t, const char *method, json_t *params)
{
	json_t	*r;
	char	*p;

	if (params == NULL)
		params = json_object();
	json_object_set_new(params, "session", json_integer(t->id));
	p = json_dumps(params, JSON_COMPACT);
	cr_assert_not_null(p, "%s: params do not encode", method);
	r = h_conn_call(&t->c, method, p, CTL_BOUND);
	cr_assert_not_null(r, "session %s: no reply to %s %s within %d ms",
	    t->ids, method, p, CTL_BOUND);
	free(p);
	json_decref(params);
	return r;
}

/* Call method (params taken) and return its result, asserted to be one. */
static json_t *
ctl_ok(struct ctl *t, const char *method, json_t *params)
{
	char	 what[1024];
	json_t	*r, *res;

	snprintf(what, sizeof(what), "%s %s", method, ctl_shown(params));
	r = ctl_call(t, method, params);
	res = json_object_get(r, "result");
	cr_assert_not_null(res, "session %s: %s: expected a result, got the "
	    "error %s", t->ids, what, ctl_shown(json_object_get(r, "error")));
	json_incref(res);
	json_decref(r);
	return res;
}

/*
 * Call method (params taken) and return its error object, asserted to be
 * of kind and, if text is not NULL, to have it in its message.
 */
static json_t *
ctl_fail(struct ctl *t, const char *kind, const char *text,
    const char *method, json_t *params)
{
	const char	*msg;
	char		 what[1024];
	json_t		*r, *err;

	snprintf(what, sizeof(what), "%s %s", method, ctl_shown(params));
	r = ctl_call(t, method, params);
	err = json_object_get(r, "error");
	cr_assert_not_null(err, "session %s: %s: expected the error %s, got "
	    "the result %s", t->ids, what, kind,
	    ctl_shown(json_object_get(r, "result")));
	cr_assert_str_eq(h_jkind(r), kind, "session %s: %s: expected an "
	    "error of kind %s, got %s", t->ids, what, kind, ctl_shown(err));
	msg = h_jstr(err, "message");
	cr_assert(text == NULL || (msg != NULL && strstr(msg, text) != NULL),
	    "session %s: %s: expected \"%s\" in the error's message, got %s",
	    t->ids, what, text, ctl_shown(err));
	json_incref(err);
	json_decref(r);
	return err;
}

/* The session's status object (asserted). */
static json_t *
ctl_status(struct ctl *t)
{
	return ctl_ok(t, "status", NULL);
}

/* The seq of a target record, -1 if it has none. */
static long long
ctl_seq(json_t *target)
{
	return h_jint(target, "seq", -1);
}

/* A string member of a stop record's "stop" at name, or "". */
static const char *
ctl_stop_str(json_t *target, const char *name)
{
	json_t *v = json_object_get(json_object_get(target, "stop"), name);

	return json_is_string(v) ? json_string_value(v) : "";
}

/*
 * Assert target is a stop with reason; when says what it answers. A stop
 * record has a seq.
 */
static void
ctl_expect_stop(json_t *target, const char *reason, const char *when)
{
	cr_assert_str_eq(h_jstr(target, "state") ? h_jstr(target, "state") :
	    "", "stopped", "%s: expected a stopped target, got %s", when,
	    ctl_shown(target));
	cr_assert_str_eq(ctl_stop_str(target, "reason"), reason, "%s: "
	    "expected stop.reason %s, got %s", when, reason,
	    ctl_shown(target));
	cr_assert_gt(ctl_seq(target), 0, "%s: the stop has no seq: %s", when,
	    ctl_shown(target));
}

/* Assert the target record's state is want; when says what it is. */
static void
ctl_expect_state(json_t *target, const char *want, const char *when)
{
	const char *state = h_jstr(target, "state");

	cr_assert_str_eq(state != NULL ? state : "", want, "%s: expected "
	    "target state %s, got %s", when, want, ctl_shown(target));
}

/* Assert status.target's state is want; the record is returned. */
static json_t *
ctl_expect_status_state(struct ctl *t, const char *want, const char *when)
{
	json_t *st = ctl_status(t), *target;

	target = json_incref(json_object_get(st, "target"));
	json_decref(st);
	ctl_expect_state(target, want, when);
	return target;
}

/* Open the connection and start the test's foreground daemon. */
static void
ctl_open(struct ctl *t)
{
	memset(t, 0, sizeof(*t));
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&t->c, H->sock), 0, "connect to %s",
	    H->sock);
}

/* Launch with params (taken) over the connection; note the session's id. */
static void
ctl_launch(struct ctl *t, json_t *params)
{
	char	*p = json_dumps(params, JSON_COMPACT);
	json_t	*r;

	r = h_conn_call(&t->c, "launch", p, CTL_BOUND);
	cr_assert_not_null(r, "no reply to launch %s within %d ms", p,
	    CTL_BOUND);
	t->id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(t->id, 0, "launch %s: expected a session, got %s", p,
	    ctl_shown(r));
	h_idstr(t->id, t->ids, sizeof(t->ids));
	free(p);
	json_decref(r);
	json_decref(params);
}

/*
 * Launch the fixture at var under native gdb (gdb -ex run); with running,
 * wait until status says its target runs.
 */
static void
ctl_native(struct ctl *t, const char *var, bool running)
{
	const char *prog = h_ctx_fixture(var);

	ctl_open(t);
	ctl_launch(t, json_pack("{s:s, s:[s], s:[s]}", "kind", "gdb", "argv",
	    prog, "commands", "run"));
	cr_assert(!running || h_cli_wait_status(t->id, "target.state",
	    "running", H_WAIT_BOUND), "session %s: status never said the "
	    "target runs", t->ids);
}

/* Add the board's UART output to b until want is in it; asserted. */
static void
ctl_board_read(struct ctl *t, const char *want, struct h_bytes *b,
    const char *when)
{
	int code = h_cli_recv_until(t->ids, want, b, H_WAIT_BOUND);

	cr_assert_eq(code, 0, "board session %s, %s: expected \"%s\" from "
	    "UART0 within %d ms, got %s after \"%s\"", t->ids, when,
	    h_shown(want, strlen(want), 200), H_WAIT_BOUND, code == 5 ?
	    "end of stream" : "nothing more", h_shown(b->p, b->len, 600));
}

/* Assert exactly want comes next from the board's UART0. */
static void
ctl_board_expect(struct ctl *t, const char *want, const char *when)
{
	struct h_bytes got = { calloc(1, 1), 0 };

	ctl_board_read(t, want, &got, when);
	cr_assert(got.len == strlen(want) && strcmp(got.p, want) == 0,
	    "board session %s, %s: expected exactly \"%s\" from UART0, got "
	    "\"%s\"", t->ids, when, h_shown(want, strlen(want), 200),
	    h_shown(got.p, got.len, 600));
	free(got.p);
}

/*
 * Launch the board: the qemu kind runs QEMU's lm3s6965evb halted with its
 * gdb stub, gdb-multiarch on the ELF, the UART on the transport, the
 * Cortex-M fault breaks, then continues it; read the banner. The one
 * place the board is launched.
 */
static void
ctl_board(struct ctl *t)
{
	const char *fw = h_board_firmware("FIX_BOARD");

	ctl_open(t);
	ctl_launch(t, json_pack("{s:s, s:s, s:[s]}", "kind", "qemu",
	    "machine", "lm3s6965evb", "argv", fw));
	ctl_board_expect(t, CTL_BANNER, "after launch");
}

/* Send bytes to the board's UART0 through the session's transport. */
static void
ctl_board_send(struct ctl *t, const char *data)
{
	struct h_res r;

	cr_assert_eq(h_cli_input(&r, data, H_ARGS("send", t->ids)), 0,
	    "dbgctl send %s < \"%s\": expected exit 0, got %d (stderr: %s)",
	    t->ids, data, r.code, r.err);
	h_run_free(&r);
}

/* Stop the session and let go of the connection. */
static void
ctl_end(struct ctl *t)
{
	json_decref(ctl_ok(t, "stop", NULL));
	h_conn_close(&t->c);
}

/* Insert a breakpoint at location; its number (MI's string) into num. */
static void
ctl_break(struct ctl *t, const char *location, char *num, size_t len)
{
	json_t		*res;
	const char	*n;

	res = ctl_ok(t, "break", json_pack("{s:s, s:s}", "action", "insert",
	    "location", location));
	n = h_jstr(res, "breakpoint.number");
	cr_assert_not_null(n, "break %s: no breakpoint.number in %s",
	    location, ctl_shown(res));
	cr_assert(json_is_false(h_jpath(res, "breakpoint.internal")),
	    "break %s: a user's breakpoint has internal false: %s", location,
	    ctl_shown(res));
	snprintf(num, len, "%s", n);
	json_decref(res);
}

/*
 * The first stop at breakpoint num after a resume, then n resumes until
 * a stop: each answer is a stop at num (breakpoint-hit, by the target)
 * with a seq above the one before. Returns the last seq.
 */
static long long
ctl_hit_every_time(struct ctl *t, const char *num, int n)
{
	char		 when[128];
	json_t		*target, *res;
	long long	 last, seq;
	int		 i;

	target = ctl_ok(t, "wait_target", json_pack("{s:s, s:i}", "state",
	    "stopped", "timeout", CTL_VERB_MS));
	ctl_expect_stop(target, "breakpoint-hit", "the first stop at the "
	    "breakpoint");
	last = ctl_seq(target);
	json_decref(target);
	for (i = 0; i < n; i++) {
		snprintf(when, sizeof(when), "resume until_stop %d of %d",
		    i + 1, n);
		res = ctl_ok(t, "resume", json_pack("{s:b, s:i}", "until_stop",
		    1, "timeout", CTL_VERB_MS));
		target = json_object_get(res, "target");
		ctl_expect_stop(target, "breakpoint-hit", when);
		cr_assert_eq(h_jint(target, "stop.bkptno", -1), atol(num),
		    "%s: expected stop.bkptno %s, got %s", when, num,
		    ctl_shown(target));
		cr_assert_str_eq(ctl_stop_str(target, "by"), "target", "%s: "
		    "expected stop.by target, got %s", when, ctl_shown(target));
		seq = ctl_seq(target);
		cr_assert_gt(seq, last, "%s: expected a seq above %lld (the "
		    "stop before), got %s", when, last, ctl_shown(target));
		last = seq;
		json_decref(res);
	}
	return last;
}

/* Subscribe a second connection to the session's notifications. */
static void
ctl_subscribe(struct ctl *t, struct h_conn *sub)
{
	char	 p[128];
	json_t	*r;

	cr_assert_eq(h_conn_open(sub, H->sock), 0, "connect to %s", H->sock);
	snprintf(p, sizeof(p), "{\"session\":%ld,\"output\":false}", t->id);
	r = h_conn_call(sub, "subscribe", p, CTL_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.subscribed")), "subscribe "
	    "%s: %s", p, ctl_shown(r));
	json_decref(r);
}

/*
 * Read sub's session.target notifications until one has seq upto: each
 * seq one above the one before; how many came.
 */
static int
ctl_notes_increase(struct h_conn *sub, long long upto)
{
	double		 end = h_now() + H_WAIT_BOUND / 1000.0;
	long long	 last = -1, seq;
	const char	*m;
	json_t		*msg;
	int		 left, n = 0;

	while (last < upto && (left = (int)((end - h_now()) * 1000)) > 0 &&
	    (msg = h_conn_recv(sub, left)) != NULL) {
		m = h_jstr(msg, "method");
		if (m == NULL || strcmp(m, "session.target") != 0) {
			json_decref(msg);
			continue;
		}
		seq = h_jint(msg, "params.target.seq", -1);
		cr_assert_gt(seq, last, "session.target notification %d: "
		    "expected a seq above %lld, got %s", n + 1, last,
		    ctl_shown(msg));
		/* Every record is published: none is skipped. */
		cr_assert(last == -1 || seq == last + 1, "session.target "
		    "notification %d: expected seq %lld (one record after the "
		    "last heard), got %s", n + 1, last + 1, ctl_shown(msg));
		last = seq;
		n++;
		json_decref(msg);
	}
	cr_assert_eq(last, upto, "after %d session.target notifications: "
	    "expected one with seq %lld (status.target's), the last had %lld",
	    n, upto, last);
	return n;
}

/* The number of a JSON array's members at path of j, -1 if not an array. */
static long
ctl_count(json_t *j, const char *path)
{
	json_t *a = h_jpath(j, path);

	return json_is_array(a) ? (long)json_array_size(a) : -1;
}

/* The seq status.target has now. */
static long long
ctl_status_seq(struct ctl *t)
{
	json_t		*st = ctl_status(t);
	long long	 seq = h_jint(st, "target.seq", -1);

	json_decref(st);
	return seq;
}

/* Send a request with id on the connection c, not waiting for its reply. */
static void
ctl_send(struct h_conn *c, long id, const char *method, json_t *params)
{
	char	*p = json_dumps(params, JSON_COMPACT), *line;
	int	 n;

	n = asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\","
	    "\"params\":%s}\n", id, method, p);
	cr_assert_gt(n, 0, "asprintf");
	cr_assert_eq(h_conn_send(c, line, (size_t)n, CTL_BOUND), 0, "send %s",
	    line);
	free(line);
	free(p);
	json_decref(params);
}

/*
 * A breakpoint in a tight loop under native gdb: 200 resumes until a
 * stop, each answered by the next hit of it, never a miss or a stale stop.
 */
Test(control, native_breakpoint_after_resume_never_missed)
{
	struct ctl	 t;
	char		 num[32];

	ctl_native(&t, "FIX_LOOP", true);
	ctl_break(&t, "loop_tick", num, sizeof(num));
	ctl_hit_every_time(&t, num, 200);
	ctl_end(&t);
}

/*
 * Every session.target notification a subscriber hears, through
 * breakpoint hits, a halt and resumes, has the seq one above the one before,
 * up to the one status says last.
 */
Test(control, native_seq_increases_across_notifications)
{
	struct h_conn	 sub;
	struct ctl	 t;
	char		 num[32];
	json_t		*res;
	int		 n;

	ctl_native(&t, "FIX_LOOP", true);
	ctl_subscribe(&t, &sub);
	ctl_break(&t, "loop_tick", num, sizeof(num));
	ctl_hit_every_time(&t, num, 20);
	json_decref(ctl_ok(&t, "break", json_pack("{s:s}", "action",
	    "delete")));
	res = ctl_ok(&t, "resume", NULL);
	ctl_expect_state(json_object_get(res, "target"), "running",
	    "resume without until_stop");
	json_decref(res);
	res = ctl_ok(&t, "halt", NULL);
	ctl_expect_state(json_object_get(res, "target"), "stopped", "halt");
	json_decref(res);
	n = ctl_notes_increase(&sub, ctl_status_seq(&t));
	cr_assert_geq(n, 42, "expected at least 42 session.target "
	    "notifications (20 resumes and stops, and more), heard %d", n);
	h_conn_close(&sub);
	ctl_end(&t);
}

/*
 * Stopped at a breakpoint at location with seq S: wait_target without
 * after gives S, with after S it times out while nothing happens
 * (data.target is S), and a wait with after S sent before a resume gets
 * the next stop, not S.
 */
static void
ctl_no_stale_stop(struct ctl *t, const char *location)
{
	struct h_conn	 other;
	char		 num[32];
	json_t		*target, *err, *r, *res;
	long long	 s, running;

	ctl_break(t, location, num, sizeof(num));
	s = ctl_hit_every_time(t, num, 1);
	target = ctl_ok(t, "wait_target", NULL);
	cr_assert_eq(ctl_seq(target), s, "wait_target while stopped: expected "
	    "the current stop (seq %lld), got %s", s, ctl_shown(target));
	json_decref(target);
	err = ctl_fail(t, "timeout", NULL, "wait_target", json_pack("{s:I, "
	    "s:i}", "after", (json_int_t)s, "timeout", CTL_QUIET_MS));
	cr_assert_eq(h_jint(err, "data.target.seq", -1), s, "wait_target "
	    "after %lld timed out: expected data.target to be the current "
	    "stop, got %s", s, ctl_shown(err));
	json_decref(err);

	cr_assert_eq(h_conn_open(&other, H->sock), 0, "connect");
	ctl_send(&other, 7, "wait_target", json_pack("{s:I, s:I, s:i}",
	    "session", (json_int_t)t->id, "after", (json_int_t)s, "timeout",
	    CTL_VERB_MS));
	res = ctl_ok(t, "resume", NULL);
	running = ctl_seq(json_object_get(res, "target"));
	ctl_expect_state(json_object_get(res, "target"), "running", "resume");
	cr_assert_gt(running, s, "resume: expected a seq above %lld: %s", s,
	    ctl_shown(res));
	json_decref(res);
	r = h_conn_reply(&other, 7, CTL_BOUND);
	cr_assert_not_null(r, "no reply to wait_target after S within %d ms",
	    CTL_BOUND);
	target = json_object_get(r, "result");
	ctl_expect_stop(target, "breakpoint-hit", "wait_target after the "
	    "stop before a resume");
	cr_assert_gt(ctl_seq(target), running, "wait_target after %lld: "
	    "expected the stop after the resume's running record (seq %lld), "
	    "got %s", s, running, ctl_shown(r));
	json_decref(r);
	h_conn_close(&other);
}

/* On native gdb, at the loop's breakpoint. */
Test(control, native_wait_never_returns_a_stale_stop)
{
	struct ctl t;

	ctl_native(&t, "FIX_LOOP", true);
	ctl_no_stale_stop(&t, "loop_tick");
	ctl_end(&t);
}

/*
 * halt on the running loop answers the stop, by halt; halt again answers
 * the same record with already true and no new seq.
 */
Test(control, native_halt_running_then_stopped)
{
	struct ctl	 t;
	json_t		*res, *again;
	long long	 seq;

	ctl_native(&t, "FIX_LOOP", true);
	json_decref(ctl_expect_status_state(&t, "running", "after launch"));
	res = ctl_ok(&t, "halt", NULL);
	ctl_expect_state(json_object_get(res, "target"), "stopped", "halt");
	cr_assert_str_eq(ctl_stop_str(json_object_get(res, "target"), "by"),
	    "halt", "halt of a running target: expected stop.by halt: %s",
	    ctl_shown(res));
	cr_assert(!json_is_true(json_object_get(res, "already")), "halt of a "
	    "running target: already true: %s", ctl_shown(res));
	seq = ctl_seq(json_object_get(res, "target"));
	json_decref(res);
	again = ctl_ok(&t, "halt", NULL);
	cr_assert(json_is_true(json_object_get(again, "already")), "halt of "
	    "a stopped target: expected already true, got %s",
	    ctl_shown(again));
	cr_assert_eq(ctl_seq(json_object_get(again, "target")), seq, "halt of "
	    "a stopped target: expected the current record (seq %lld), got "
	    "%s", seq, ctl_shown(again));
	json_decref(again);
	cr_assert_eq(ctl_status_seq(&t), seq, "status after a second halt: "
	    "expected seq %lld still", seq);
	ctl_end(&t);
}

/*
 * resume until_stop that no stop ends: the timeout error leaves the
 * target running; with halt_on_timeout, halted (a stop by halt), and
 * status says stopped.
 */
static void
ctl_timeout_leaves_as_asked(struct ctl *t)
{
	json_t *err, *target;

	err = ctl_fail(t, "timeout", NULL, "resume", json_pack("{s:b, s:i}",
	    "until_stop", 1, "timeout", CTL_QUIET_MS));
	ctl_expect_state(h_jpath(err, "data.target"), "running", "resume "
	    "until_stop timed out: data.target");
	json_decref(err);
	json_decref(ctl_expect_status_state(t, "running", "status after "
	    "resume until_stop timed out"));
	err = ctl_fail(t, "timeout", NULL, "resume", json_pack("{s:b, s:i, "
	    "s:b}", "until_stop", 1, "timeout", CTL_QUIET_MS,
	    "halt_on_timeout", 1));
	ctl_expect_state(h_jpath(err, "data.target"), "stopped", "resume "
	    "until_stop halt_on_timeout timed out: data.target");
	cr_assert_str_eq(ctl_stop_str(h_jpath(err, "data.target"), "by"),
	    "halt", "halt_on_timeout: expected stop.by halt: %s",
	    ctl_shown(err));
	json_decref(err);
	target = ctl_expect_status_state(t, "stopped", "status after resume "
	    "until_stop halt_on_timeout timed out");
	json_decref(target);
}

/* On native gdb: the loop, with no breakpoint, never stops of itself. */
Test(control, native_timeout_leaves_target_as_asked)
{
	struct ctl t;

	ctl_native(&t, "FIX_LOOP", true);
	ctl_timeout_leaves_as_asked(&t);
	ctl_end(&t);
}

/*
 * Memory written reads back, as hex and base64, on a running target
 * (halted_for, left running) and a stopped one; eval sees it too.
 */
Test(control, native_memory_round_trips)
{
	struct ctl	 t;
	json_t		*res;

	ctl_native(&t, "FIX_LOOP", true);
	res = ctl_ok(&t, "memory", json_pack("{s:s, s:s, s:{s:s}}", "action",
	    "write", "address", "&scratch", "data", "hex", "00ff10a5c3"));
	cr_assert_eq(h_jint(res, "length", -1), 5, "memory write of 5 bytes: "
	    "%s", ctl_shown(res));
	cr_assert(json_is_true(json_object_get(res, "halted_for")), "memory "
	    "write on a running target: expected halted_for true: %s",
	    ctl_shown(res));
	ctl_expect_state(json_object_get(res, "target"), "running", "memory "
	    "write on a running target: the target it left");
	json_decref(res);
	json_decref(ctl_ok(&t, "halt", NULL));
	res = ctl_ok(&t, "memory", json_pack("{s:s, s:i}", "address",
	    "&scratch", "length", 5));
	cr_assert_str_eq(h_jstr(res, "hex") ? h_jstr(res, "hex") : "",
	    "00ff10a5c3", "memory read of what was written: %s",
	    ctl_shown(res));
	cr_assert_str_eq(h_jstr(res, "base64") ? h_jstr(res, "base64") : "",
	    "AP8QpcM=", "memory read of what was written: %s", ctl_shown(res));
	json_decref(res);
	json_decref(ctl_ok(&t, "memory", json_pack("{s:s, s:s, s:{s:s}}",
	    "action", "write", "address", "&scratch[8]", "data", "base64",
	    "3q2+7w==")));
	res = ctl_ok(&t, "memory", json_pack("{s:s, s:i}", "address",
	    "&scratch[8]", "length", 4));
	cr_assert_str_eq(h_jstr(res, "hex") ? h_jstr(res, "hex") : "",
	    "deadbeef", "memory read of what was written in base64: %s",
	    ctl_shown(res));
	json_decref(res);
	res = ctl_ok(&t, "eval", json_pack("{s:s}", "expression",
	    "(int)scratch[1]"));
	cr_assert_str_eq(h_jstr(res, "value") ? h_jstr(res, "value") : "",
	    "255", "eval (int)scratch[1] after writing ff there: %s",
	    ctl_shown(res));
	json_decref(res);
	ctl_end(&t);
}

/*
 * A native target faults (SIGSEGV): reset clears status.fault (faults
 * keeps it), the re-run faults again and wait_fault after the first
 * fault's seq gets the new one.
 */
Test(control, native_reset_clears_fault_next_recorded)
{
	struct ctl	 t;
	json_t		*f1, *f2, *res, *st;
	long long	 s1;

	ctl_native(&t, "FIX_FAULT", false);
	f1 = ctl_ok(&t, "wait_fault", json_pack("{s:i}", "timeout",
	    CTL_VERB_MS));
	s1 = h_jint(f1, "seq", -1);
	cr_assert_gt(s1, 0, "the first fault has no seq: %s", ctl_shown(f1));
	res = ctl_ok(&t, "reset", json_pack("{s:b, s:i}", "halt", 1,
	    "timeout", CTL_VERB_MS));
	cr_assert(json_is_true(json_object_get(res, "fault_cleared")), "reset "
	    "after a fault: expected fault_cleared true: %s", ctl_shown(res));
	ctl_expect_state(json_object_get(res, "target"), "stopped", "reset "
	    "halt");
	cr_assert_str_eq(ctl_stop_str(json_object_get(res, "target"), "by"),
	    "reset", "reset halt: expected stop.by reset: %s", ctl_shown(res));
	cr_assert_gt(ctl_seq(json_object_get(res, "target")), s1, "reset: "
	    "expected a seq above the fault's %lld: %s", s1, ctl_shown(res));
	json_decref(res);
	st = ctl_status(&t);
	cr_assert(json_is_null(json_object_get(st, "fault")) ||
	    json_object_get(st, "fault") == NULL, "status after reset: "
	    "expected no fault, got %s", ctl_shown(json_object_get(st,
	    "fault")));
	cr_assert_eq(ctl_count(st, "faults"), 1, "status after reset: "
	    "expected the first fault in faults, got %s",
	    ctl_shown(json_object_get(st, "faults")));
	json_decref(st);
	json_decref(ctl_ok(&t, "resume", NULL));
	f2 = ctl_ok(&t, "wait_fault", json_pack("{s:I, s:i}", "after",
	    (json_int_t)s1, "timeout", CTL_VERB_MS));
	cr_assert_gt(h_jint(f2, "seq", -1), s1, "wait_fault after %lld: "
	    "expected a later fault, got %s", s1, ctl_shown(f2));
	st = ctl_status(&t);
	cr_assert_eq(ctl_count(st, "faults"), 2, "status after the second "
	    "fault: expected 2 in faults, got %s",
	    ctl_shown(json_object_get(st, "faults")));
	json_decref(st);
	json_decref(f1);
	json_decref(f2);
	ctl_end(&t);
}

/* Whether status says fault triage is armed, rearmed at least min times. */
static bool
ctl_armed(json_t *st, long long min)
{
	return json_is_true(h_jpath(st, "fault_breaks.armed")) &&
	    ctl_count(st, "fault_breaks.numbers") > 0 &&
	    h_jint(st, "fault_breaks.rearmed", -1) >= min;
}

/*
 * Assert status.fault_breaks says armed, with numbers, and rearmed at
 * least min, now; if not, fail saying whether (and how late) it did.
 */
static void
ctl_expect_armed(struct ctl *t, long long min, const char *when)
{
	double	 t0 = h_now(), end = t0 + H_WAIT_BOUND / 1000.0;
	json_t	*st = ctl_status(t), *later = NULL;
	char	 first[1024];

	if (ctl_armed(st, min)) {
		json_decref(st);
		return;
	}
	snprintf(first, sizeof(first), "%s", ctl_shown(json_object_get(st,
	    "fault_breaks")));
	while (later == NULL && h_now() < end) {
		h_nap(10);
		later = ctl_status(t);
		if (!ctl_armed(later, min)) {
			json_decref(later);
			later = NULL;
		}
	}
	cr_assert_fail("%s: expected fault_breaks armed true, with numbers, "
	    "rearmed %lld or more; status said %s; %s %.0f ms later", when,
	    min, first, later != NULL ? "it said so only" : "still not",
	    (h_now() - t0) * 1000);
}

/*
 * A native session whose fault break is crash_here, not yet run: break
 * delete and a raw exec -break-delete leave it armed, and the run that
 * a reset starts stops there with a fault record.
 */
Test(control, native_delete_all_breaks_keeps_fault_triage)
{
	struct ctl	 t;
	char		 num[32];
	json_t		*res, *f;

	ctl_open(&t);
	ctl_launch(&t, json_pack("{s:s, s:[s], s:[s]}", "kind", "gdb", "argv",
	    h_ctx_fixture("FIX_FAULT"), "fault_breaks", "crash_here"));
	ctl_break(&t, "main", num, sizeof(num));
	/* gdb ran its -ex breaks before it read the break's MI. */
	ctl_expect_armed(&t, 0, "after a break insert");
	res = ctl_ok(&t, "break", json_pack("{s:s}", "action", "delete"));
	cr_assert(ctl_count(res, "deleted") == 1 && strcmp(json_string_value(
	    json_array_get(h_jpath(res, "deleted"), 0)), num) == 0, "break "
	    "delete with one user breakpoint: expected deleted [\"%s\"], got "
	    "%s", num, ctl_shown(res));
	json_decref(res);
	ctl_expect_armed(&t, 0, "after break delete");
	json_decref(ctl_ok(&t, "exec", json_pack("{s:s}", "command",
	    "-break-delete")));
	ctl_expect_armed(&t, 1, "right after exec -break-delete");
	json_decref(ctl_ok(&t, "reset", json_pack("{s:i}", "timeout",
	    CTL_VERB_MS)));
	f = ctl_ok(&t, "wait_fault", json_pack("{s:i}", "timeout",
	    CTL_VERB_MS));
	cr_assert_str_eq(h_jstr(f, "location") ? h_jstr(f, "location") : "",
	    "crash_here", "the fault after every breakpoint was deleted: %s",
	    ctl_shown(f));
	json_decref(f);
	ctl_end(&t);
}

/*
 * Every verb, and the waits, on an exec session: not_supported, the
 * message naming an exec session.
 */
Test(control, exec_session_refuses_every_verb)
{
	struct {
		const char	*method;
		const char	*params;
	} verbs[] = {
		{ "halt", "{}" },
		{ "resume", "{\"until_stop\":true}" },
		{ "break", "{\"action\":\"insert\",\"location\":\"main\"}" },
		{ "break", "{\"action\":\"list\"}" },
		{ "break", "{\"action\":\"delete\"}" },
		{ "eval", "{\"expression\":\"1\"}" },
		{ "memory", "{\"address\":\"0x1000\",\"length\":4}" },
		{ "memory", "{\"action\":\"write\",\"address\":\"0x1000\","
		    "\"data\":{\"hex\":\"00\"}}" },
		{ "registers", "{}" },
		{ "reset", "{}" },
		{ "load", "{}" },
		{ "wait_target", "{\"timeout\":100}" },
		{ "wait_fault", "{\"timeout\":100}" },
	};
	struct ctl	 t;
	size_t		 i;

	ctl_open(&t);
	ctl_launch(&t, json_pack("{s:s, s:[s, s]}", "kind", "exec", "argv",
	    "sleep", "300"));
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		json_decref(ctl_fail(&t, "not_supported", "exec session",
		    verbs[i].method, json_loads(verbs[i].params, 0, NULL)));
	ctl_end(&t);
}

/*
 * The line of the board's main loop that counts (counter++), as
 * FILE:LINE: gdb names the source of main, and the loop is in it.
 */
static void
ctl_board_loop_line(struct ctl *t, char *loc, size_t len)
{
	char		 num[32], *src, *at, *p;
	const char	*file;
	json_t		*res;
	size_t		 n;
	int		 line = 1;

	res = ctl_ok(t, "break", json_pack("{s:s, s:s}", "action", "insert",
	    "location", "main"));
	file = h_jstr(res, "breakpoint.fullname");
	cr_assert_not_null(file, "break main: no fullname in %s",
	    ctl_shown(res));
	snprintf(num, sizeof(num), "%s", h_jstr(res, "breakpoint.number"));
	src = h_read_file(file, &n);
	cr_assert_not_null(src, "board source %s cannot be read", file);
	at = strstr(src, "\t\tcounter++;");
	cr_assert_not_null(at, "%s has no \"counter++;\" line", file);
	for (p = src; p < at; p++)
		line += *p == '\n';
	snprintf(loc, len, "%s:%d", file, line);
	free(src);
	json_decref(res);
	json_decref(ctl_ok(t, "break", json_pack("{s:s, s:[s]}", "action",
	    "delete", "numbers", num)));
}

/*
 * A breakpoint in the board's main loop: 50 resumes until a stop, each
 * the next hit; a subscriber hears every record with a growing seq.
 */
Test(control, board_breakpoint_after_resume_never_missed)
{
	struct h_conn	 sub;
	struct ctl	 t;
	char		 loc[4200], num[32];

	ctl_board(&t);
	ctl_subscribe(&t, &sub);
	ctl_board_loop_line(&t, loc, sizeof(loc));
	ctl_break(&t, loc, num, sizeof(num));
	ctl_hit_every_time(&t, num, 50);
	cr_assert_geq(ctl_notes_increase(&sub, ctl_status_seq(&t)), 100,
	    "expected at least 100 session.target notifications for 50 "
	    "resumes and stops");
	h_conn_close(&sub);
	ctl_end(&t);
}

/* On the board, at the main loop's line. */
Test(control, board_wait_never_returns_a_stale_stop)
{
	struct ctl	 t;
	char		 loc[4200];

	ctl_board(&t);
	ctl_board_loop_line(&t, loc, sizeof(loc));
	ctl_no_stale_stop(&t, loc);
	ctl_end(&t);
}

/*
 * The fault byte, wait_fault, reset: status has no fault and faults has
 * it, the firmware starts again (the banner), and the next fault byte is
 * recorded with a higher seq (wait_fault after the first).
 */
Test(control, board_reset_clears_fault_next_recorded)
{
	struct ctl	 t;
	json_t		*f1, *f2, *res, *st;
	long long	 s1;

	ctl_board(&t);
	ctl_board_send(&t, "!");
	f1 = ctl_ok(&t, "wait_fault", json_pack("{s:i}", "timeout",
	    CTL_VERB_MS));
	s1 = h_jint(f1, "seq", -1);
	cr_assert_gt(s1, 0, "the first fault has no seq: %s", ctl_shown(f1));
	cr_assert_str_eq(h_jstr(f1, "location") ? h_jstr(f1, "location") : "",
	    "*HardFault_Handler", "the fault: %s", ctl_shown(f1));
	res = ctl_ok(&t, "reset", json_pack("{s:i}", "timeout", CTL_VERB_MS));
	cr_assert(json_is_true(json_object_get(res, "fault_cleared")), "reset "
	    "after a fault: expected fault_cleared true: %s", ctl_shown(res));
	ctl_expect_state(json_object_get(res, "target"), "running", "reset "
	    "without halt");
	json_decref(res);
	st = ctl_status(&t);
	cr_assert(json_object_get(st, "fault") == NULL ||
	    json_is_null(json_object_get(st, "fault")), "status after reset: "
	    "expected no fault, got %s", ctl_shown(json_object_get(st,
	    "fault")));
	cr_assert_eq(ctl_count(st, "faults"), 1, "status after reset: "
	    "expected the first fault in faults, got %s",
	    ctl_shown(json_object_get(st, "faults")));
	json_decref(st);
	ctl_board_expect(&t, CTL_BANNER, "after reset");
	ctl_board_send(&t, "!");
	f2 = ctl_ok(&t, "wait_fault", json_pack("{s:I, s:i}", "after",
	    (json_int_t)s1, "timeout", CTL_VERB_MS));
	cr_assert_gt(h_jint(f2, "seq", -1), s1, "wait_fault after %lld: "
	    "expected a later fault, got %s", s1, ctl_shown(f2));
	json_decref(f1);
	json_decref(f2);
	ctl_end(&t);
}

/*
 * break delete (every user breakpoint) and a raw exec -break-delete leave
 * fault triage armed: status says so, an internal number is refused, and
 * the fault byte still yields a record.
 */
Test(control, board_delete_all_breaks_keeps_fault_triage)
{
	struct ctl	 t;
	char		 num[32], internal[32];
	json_t		*res, *f;

	ctl_board(&t);
	ctl_break(&t, "fault_undefined_instruction", num, sizeof(num));
	res = ctl_ok(&t, "break", json_pack("{s:s}", "action", "delete"));
	cr_assert_eq(ctl_count(res, "deleted"), 1, "break delete with one "
	    "user breakpoint: expected deleted [\"%s\"], got %s", num,
	    ctl_shown(res));
	cr_assert_str_eq(json_string_value(json_array_get(h_jpath(res,
	    "deleted"), 0)) ? json_string_value(json_array_get(h_jpath(res,
	    "deleted"), 0)) : "", num, "break delete: %s", ctl_shown(res));
	json_decref(res);
	ctl_expect_armed(&t, 0, "after break delete");
	res = ctl_ok(&t, "status", NULL);
	snprintf(internal, sizeof(internal), "%s", json_string_value(
	    json_array_get(h_jpath(res, "fault_breaks.numbers"), 0)));
	json_decref(res);
	json_decref(ctl_fail(&t, "invalid_params", "fault breakpoint",
	    "break", json_pack("{s:s, s:[s]}", "action", "delete", "numbers",
	    internal)));
	/* gdb deletes on a stopped target: the raw exec is the user's own. */
	json_decref(ctl_ok(&t, "halt", NULL));
	json_decref(ctl_ok(&t, "exec", json_pack("{s:s}", "command",
	    "-break-delete")));
	ctl_expect_armed(&t, 1, "right after exec -break-delete");
	json_decref(ctl_ok(&t, "resume", NULL));
	ctl_board_send(&t, "!");
	f = ctl_ok(&t, "wait_fault", json_pack("{s:i}", "timeout",
	    CTL_VERB_MS));
	cr_assert_str_eq(h_jstr(f, "location") ? h_jstr(f, "location") : "",
	    "*HardFault_Handler", "the fault after every breakpoint was "
	    "deleted: %s", ctl_shown(f));
	json_decref(f);
	ctl_expect_armed(&t, 1, "after the fault");
	ctl_end(&t);
}

/*
 * load of the second build (FIX_BOARD_B: another banner) says its banner;
 * load of the first build says the first again.
 */
Test(control, board_load_second_build_changes_banner)
{
	const char	*fw2 = h_board_firmware("FIX_BOARD_B");
	struct h_bytes	 got = { calloc(1, 1), 0 };
	struct ctl	 t;
	json_t		*res;

	ctl_board(&t);
	res = ctl_ok(&t, "load", json_pack("{s:s}", "file", fw2));
	cr_assert_str_eq(h_jstr(res, "file") ? h_jstr(res, "file") : "", fw2,
	    "load %s: %s", fw2, ctl_shown(res));
	json_decref(res);
	ctl_board_read(&t, "\r\n", &got, "after load of the second build");
	cr_assert(got.len > 2 && strcmp(got.p, CTL_BANNER) != 0, "after load "
	    "of %s: expected a banner that is not \"%s\", got \"%s\"", fw2,
	    h_shown(CTL_BANNER, strlen(CTL_BANNER), 100),
	    h_shown(got.p, got.len, 300));
	free(got.p);
	json_decref(ctl_ok(&t, "load", json_pack("{s:s}", "file",
	    getenv("FIX_BOARD"))));
	ctl_board_expect(&t, CTL_BANNER, "after load of the first build");
	ctl_end(&t);
}

/*
 * Board SRAM written reads back; registers include pc, sp and xpsr (hex),
 * names pick them, and an unknown name is refused naming it.
 */
Test(control, board_memory_round_trips_registers_named)
{
	static const char hex[] = "000102030405060708090a0b0c0dfeff";
	struct ctl	 t;
	json_t		*res, *regs;
	const char	*names[] = { "pc", "sp", "xpsr" }, *v;
	size_t		 i;

	ctl_board(&t);
	json_decref(ctl_ok(&t, "halt", NULL));
	res = ctl_ok(&t, "memory", json_pack("{s:s, s:s, s:{s:s}}", "action",
	    "write", "address", "0x20008000", "data", "hex", hex));
	cr_assert_eq(h_jint(res, "length", -1), 16, "memory write: %s",
	    ctl_shown(res));
	json_decref(res);
	res = ctl_ok(&t, "memory", json_pack("{s:s, s:i}", "address",
	    "0x20008000", "length", 16));
	cr_assert_str_eq(h_jstr(res, "hex") ? h_jstr(res, "hex") : "", hex,
	    "memory read of what was written: %s", ctl_shown(res));
	json_decref(res);
	res = ctl_ok(&t, "registers", NULL);
	regs = json_object_get(res, "registers");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		v = json_string_value(json_object_get(regs, names[i]));
		cr_assert(v != NULL && strncmp(v, "0x", 2) == 0, "registers of "
		    "the Cortex-M: expected %s in hex, got %s", names[i],
		    ctl_shown(res));
	}
	json_decref(res);
	res = ctl_ok(&t, "registers", json_pack("{s:[s, s]}", "names", "pc",
	    "xpsr"));
	cr_assert(json_object_size(json_object_get(res, "registers")) == 2 &&
	    json_object_get(h_jpath(res, "registers"), "pc") != NULL,
	    "registers pc xpsr: expected those two, got %s", ctl_shown(res));
	json_decref(res);
	json_decref(ctl_fail(&t, "invalid_params", "no register \"foo\"",
	    "registers", json_pack("{s:[s]}", "names", "foo")));
	ctl_end(&t);
}

/* On the board: the firmware, with no breakpoint, never stops of itself. */
Test(control, board_timeout_leaves_target_as_asked)
{
	struct ctl t;

	ctl_board(&t);
	ctl_timeout_leaves_as_asked(&t);
	ctl_end(&t);
}

/* halt on the running board answers by halt; again, already true. */
Test(control, board_halt_running_then_stopped)
{
	struct ctl	 t;
	json_t		*res;
	long long	 seq;

	ctl_board(&t);
	res = ctl_ok(&t, "halt", NULL);
	ctl_expect_state(json_object_get(res, "target"), "stopped", "halt");
	cr_assert_str_eq(ctl_stop_str(json_object_get(res, "target"), "by"),
	    "halt", "halt of the running board: expected stop.by halt: %s",
	    ctl_shown(res));
	seq = ctl_seq(json_object_get(res, "target"));
	json_decref(res);
	res = ctl_ok(&t, "halt", NULL);
	cr_assert(json_is_true(json_object_get(res, "already")) &&
	    ctl_seq(json_object_get(res, "target")) == seq, "halt of the "
	    "stopped board: expected already true and seq %lld, got %s", seq,
	    ctl_shown(res));
	json_decref(res);
	ctl_end(&t);
}

/* Whether break list's answer has breakpoint num. */
static bool
ctl_listed(struct ctl *t, const char *num)
{
	json_t	*res, *b;
	size_t	 i;
	bool	 found = false;

	res = ctl_ok(t, "break", json_pack("{s:s}", "action", "list"));
	json_array_foreach(json_object_get(res, "breakpoints"), i, b)
		if (strcmp(h_jstr(b, "number") ? h_jstr(b, "number") : "",
		    num) == 0)
			found = true;
	json_decref(res);
	return found;
}

/*
 * Breakpoint num, still there after the refused deletes before, is
 * deleted alone: the answer names it and the list no longer has it.
 */
static void
ctl_break_delete(struct ctl *t, const char *num)
{
	json_t *res;

	cr_assert(ctl_listed(t, num), "breakpoint %s went with a refused "
	    "delete", num);
	res = ctl_ok(t, "break", json_pack("{s:s, s:[s]}", "action",
	    "delete", "numbers", num));
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(res,
	    "deleted"), 0)) ?: "(none)", num, "delete %s: %s", num,
	    ctl_shown(res));
	json_decref(res);
	cr_assert(!ctl_listed(t, num), "breakpoint %s is still listed after "
	    "its delete", num);
}

/*
 * break delete asks gdb about the numbers it names only: one that is no
 * breakpoint is refused, and so is the session's fault break, deleting
 * nothing, not even the user's breakpoint named beside it, which goes
 * when named alone.
 */
Test(control, board_break_delete_refuses_unknown_and_fault_numbers)
{
	struct ctl	 t;
	char		 num[32], fault[32];
	json_t		*st;

	ctl_board(&t);
	ctl_break(&t, "uart_putc", num, sizeof(num));
	st = ctl_status(&t);
	snprintf(fault, sizeof(fault), "%s", json_string_value(json_array_get(
	    h_jpath(st, "fault_breaks.numbers"), 0)) ?: "");
	json_decref(st);
	cr_assert(*fault != '\0', "the board session has no fault breaks");
	json_decref(ctl_fail(&t, "invalid_params", "no breakpoint 999",
	    "break", json_pack("{s:s, s:[s, s]}", "action", "delete",
	    "numbers", num, "999")));
	json_decref(ctl_fail(&t, "invalid_params", "fault breakpoint", "break",
	    json_pack("{s:s, s:[s, s]}", "action", "delete", "numbers", num,
	    fault)));
	json_decref(ctl_fail(&t, "invalid_params", "fault breakpoint", "break",
	    json_pack("{s:s, s:[s]}", "action", "delete", "numbers", fault)));
	ctl_break_delete(&t, num);
	cr_assert(ctl_listed(&t, fault), "the fault break %s went", fault);
	ctl_end(&t);
}

/* How many lines of session t's MI transcript are line, whole. */
static int
ctl_transcript_count(struct ctl *t, const char *line)
{
	char	 path[PATH_MAX], *log, *l, *save;
	int	 n = 0;

	snprintf(path, sizeof(path), "%s/sessions/%ld.mi.log", H->state, t->id);
	log = h_read_file(path, NULL);
	cr_assert_not_null(log, "no MI transcript %s", path);
	for (l = strtok_r(log, "\n", &save); l != NULL;
	    l = strtok_r(NULL, "\n", &save))
		/* A sent line is "> TOKEN-command": past the token. */
		if (strncmp(l, "> ", 2) == 0 && strcmp(l + 2 + strspn(l + 2,
		    "0123456789"), line) == 0)
			n++;
	free(log);
	return n;
}

/*
 * break delete of one number sends its -break-delete alone, with no
 * listing before it: a number gdb has not is refused from gdb's answer,
 * with the target's record, deleting nothing; one written otherwise than
 * gdb writes it ("0N", which gdb reads as N) is listed first and refused.
 */
Test(control, native_break_delete_of_one_is_its_delete_alone)
{
	struct ctl	 t;
	char		 num[32], zero[40], line[64];
	json_t		*err;

	ctl_native(&t, "FIX_LOOP", true);
	ctl_break(&t, "loop_tick", num, sizeof(num));
	err = ctl_fail(&t, "invalid_params", "no breakpoint 999", "break",
	    json_pack("{s:s, s:[s]}", "action", "delete", "numbers", "999"));
	cr_assert_not_null(h_jpath(err, "data.target"), "the refusal has no "
	    "target record: %s", ctl_shown(err));
	json_decref(err);
	snprintf(zero, sizeof(zero), "0%s", num);
	json_decref(ctl_fail(&t, "invalid_params", "no breakpoint 0", "break",
	    json_pack("{s:s, s:[s]}", "action", "delete", "numbers", zero)));
	ctl_break_delete(&t, num);
	cr_assert_eq(ctl_transcript_count(&t, "-break-info 999"), 0, "999 was "
	    "listed before its delete");
	snprintf(line, sizeof(line), "-break-info %s", num);
	cr_assert_eq(ctl_transcript_count(&t, line), 0, "%s was listed before "
	    "its delete", num);
	cr_assert_eq(ctl_transcript_count(&t, "-break-delete 999"), 1,
	    "-break-delete 999 was not sent once");
	snprintf(line, sizeof(line), "-break-delete %s", num);
	cr_assert_eq(ctl_transcript_count(&t, line), 1, "%s was not sent once",
	    line);
	snprintf(line, sizeof(line), "-break-info %s", zero);
	cr_assert_eq(ctl_transcript_count(&t, line), 1, "%s was not listed "
	    "first", zero);
	ctl_end(&t);
}

/*
 * gdb's MI transcript holds every line whole and in order, one per line,
 * though gdb writes a stop a byte at a time and the daemon writes a
 * read's lines at once: each resume's -exec-continue, then its ^running,
 * then a breakpoint's *stopped, 30 times; nothing else on a line.
 */
Test(control, native_mi_transcript_keeps_every_line_in_order)
{
	struct ctl	 t;
	char		 num[32], path[PATH_MAX], tok[32];
	char		*log, *line, *save;
	int		 sent = 0, running = 0, stops = 0, want = 0;

	ctl_native(&t, "FIX_LOOP", true);
	ctl_break(&t, "loop_tick", num, sizeof(num));
	ctl_hit_every_time(&t, num, 30);
	snprintf(path, sizeof(path), "%s/sessions/%ld.mi.log", H->state, t.id);
	log = h_read_file(path, NULL);
	cr_assert_not_null(log, "no MI transcript %s", path);
	cr_assert(*log != '\0' && log[strlen(log) - 1] == '\n', "the "
	    "transcript does not end with a whole line");
	for (line = strtok_r(log, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		cr_assert(strncmp(line, "> ", 2) == 0 || strncmp(line, "< ",
		    2) == 0, "a transcript line neither sent nor read: %s",
		    line);
		if (strncmp(line, "> ", 2) == 0 && strstr(line,
		    "-exec-continue") != NULL) {
			cr_assert_eq(want, 0, "-exec-continue before the last "
			    "one's ^running: %s", line);
			snprintf(tok, sizeof(tok), "< %.*s^running",
			    (int)strspn(line + 2, "0123456789"), line + 2);
			want = 1;
			sent++;
		} else if (want && strcmp(line, tok) == 0) {
			want = 0;
			running++;
		} else if (strncmp(line, "< *stopped,reason=\"breakpoint-hit\"",
		    34) == 0)
			stops++;
	}
	free(log);
	cr_assert_geq(sent, 30, "resumes in the transcript: %d", sent);
	cr_assert_eq(running, sent, "each -exec-continue's ^running: %d of "
	    "%d", running, sent);
	cr_assert_geq(stops, 30, "breakpoint stops in the transcript: %d",
	    stops);
	ctl_end(&t);
}

/*
 * At its size bound gdb's MI transcript ends with a line saying it was
 * cut there, after whole lines only, though the daemon writes a read's
 * lines at once: nothing past the bound, no line cut in two.
 */
Test(control, native_mi_transcript_is_cut_after_whole_lines)
{
	static const char cut[] = "# the transcript is cut here: it reached "
	    "its size bound\n";
	struct ctl	 t;
	char		 num[32], path[PATH_MAX];
	char		*log, *line, *save, *end;
	size_t		 len;

	h_ctx_env_add("DBGCTLD_TRANSCRIPT_MAX=6000");
	ctl_native(&t, "FIX_LOOP", true);
	ctl_break(&t, "loop_tick", num, sizeof(num));
	ctl_hit_every_time(&t, num, 10);
	snprintf(path, sizeof(path), "%s/sessions/%ld.mi.log", H->state, t.id);
	log = h_read_file(path, &len);
	cr_assert_not_null(log, "no MI transcript %s", path);
	cr_assert_leq(len, 6000 + sizeof(cut), "the transcript is %zu bytes, "
	    "past its bound", len);
	cr_assert(len >= sizeof(cut) - 1 && strcmp(log + len - (sizeof(cut) -
	    1), cut) == 0, "the transcript does not end with the cut line: "
	    "...%s", log + (len > 200 ? len - 200 : 0));
	end = log + len - (sizeof(cut) - 1);
	*end = '\0';
	cr_assert(end == log || end[-1] == '\n', "a line cut in two before "
	    "the cut line");
	for (line = strtok_r(log, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		cr_assert(strncmp(line, "> ", 2) == 0 || strncmp(line, "< ",
		    2) == 0, "a transcript line neither sent nor read: %s",
		    line);
	free(log);
	ctl_end(&t);
}
