/*
 * A session driven over one connection of the test's own: a call with the
 * session filled in, its result or an error of a kind asserted, a launch
 * (a board's, up to its banner), and its stop. The live memory, RTT and
 * watch suites share it.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A short form of a JSON value for messages (a static buffer, reused). */
const char *
h_sess_shown(json_t *j)
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

/* Call method on the session with params (taken); the whole reply. */
json_t *
h_sess_call(struct h_sess *t, const char *method, json_t *params)
{
	json_t	*r;
	char	*p;

	if (params == NULL)
		params = json_object();
	json_object_set_new(params, "session", json_integer(t->id));
	p = json_dumps(params, JSON_COMPACT);
	r = h_conn_call(&t->c, method, p, H_SESS_BOUND);
	cr_assert_not_null(r, "session %s: no reply to %s %s within %d ms",
	    t->ids, method, p, H_SESS_BOUND);
	free(p);
	json_decref(params);
	return r;
}

/* Call method (params taken); its result, asserted to be one. */
json_t *
h_sess_ok(struct h_sess *t, const char *method, json_t *params)
{
	char	 what[512];
	json_t	*r, *res;

	snprintf(what, sizeof(what), "%s %s", method, h_sess_shown(params));
	r = h_sess_call(t, method, params);
	res = json_object_get(r, "result");
	cr_assert_not_null(res, "session %s: %s: expected a result, got %s",
	    t->ids, what, h_sess_shown(json_object_get(r, "error")));
	json_incref(res);
	json_decref(r);
	return res;
}

/* Call method (params taken); assert an error of kind with text in it. */
void
h_sess_fail(struct h_sess *t, const char *kind, const char *text,
    const char *method, json_t *params)
{
	const char	*msg;
	char		 what[512];
	json_t		*r;

	snprintf(what, sizeof(what), "%s %s", method, h_sess_shown(params));
	r = h_sess_call(t, method, params);
	cr_assert_not_null(json_object_get(r, "error"), "session %s: %s: "
	    "expected the error %s, got %s", t->ids, what, kind,
	    h_sess_shown(r));
	cr_assert_str_eq(h_jkind(r), kind, "session %s: %s: expected an error "
	    "of kind %s, got %s", t->ids, what, kind, h_sess_shown(r));
	msg = h_jstr(r, "error.message");
	cr_assert(msg != NULL && strstr(msg, text) != NULL, "session %s: %s: "
	    "expected \"%s\" in the message, got %s", t->ids, what, text,
	    h_sess_shown(r));
	json_decref(r);
}

/* Launch with params (taken) on the test's own daemon; note the id. */
void
h_sess_launch(struct h_sess *t, json_t *params)
{
	char	*p = json_dumps(params, JSON_COMPACT);
	json_t	*r;

	memset(t, 0, sizeof(*t));
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&t->c, H->sock), 0, "connect to %s",
	    H->sock);
	r = h_conn_call(&t->c, "launch", p, H_SESS_BOUND);
	cr_assert_not_null(r, "no reply to launch %s", p);
	t->id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(t->id, 0, "launch %s: expected a session, got %s", p,
	    h_sess_shown(r));
	h_idstr(t->id, t->ids, sizeof(t->ids));
	free(p);
	json_decref(r);
	json_decref(params);
}

/* Launch the board firmware of var on machine; wait for its banner. */
void
h_sess_board(struct h_sess *t, const char *var, const char *machine,
    const char *banner)
{
	const char	*fw = h_board_firmware(var);
	struct h_bytes	 got = { calloc(1, 1), 0 };

	h_sess_launch(t, json_pack("{s:s, s:s, s:[s]}", "kind", "qemu",
	    "machine", machine, "argv", fw));
	cr_assert_eq(h_cli_recv_until(t->ids, banner, &got, H_WAIT_BOUND), 0,
	    "board %s: expected \"%s\" within %d ms, got \"%s\"", machine,
	    banner, H_WAIT_BOUND, h_shown(got.p, got.len, 300));
	free(got.p);
}

/* Stop the session and let go of the connection. */
void
h_sess_end(struct h_sess *t)
{
	json_decref(h_sess_ok(t, "stop", NULL));
	h_conn_close(&t->c);
}
