/*
 * Bad params never kill the daemon and always get a clear error: every param
 * of every method of dbgctl-protocol(7), sent with each wrong JSON type and
 * as null (which counts as absent), over a raw connection; a pipe of the
 * console; reads at the end of the target's output.
 *
 * The tables below are the contract: one line per param, with its type and
 * what the request does without it. Adding a param is adding a line.
 */
#include "b64.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The test's raw connection; the suite's fini closes it after a failure. */
static struct h_conn conn = { .fd = -1 };

/* Close the raw connection, then the daemon and the test's files. */
static void
params_fini(void)
{
	h_conn_close(&conn);
	h_ctx_teardown();
}

TestSuite(params, .init = h_ctx_setup, .fini = params_fini, .timeout = 60);

/* Bound for one request of the tables (ms): a refusal comes at once. */
#define CALL_BOUND	5000

/* What a param without value does: refused as missing. */
#define REQUIRED	"required"

/* The JSON types a param is declared with. */
enum ptype {
	T_INT,		/* an integer */
	T_STR,		/* a string */
	T_BOOL,		/* a boolean */
	T_STRS,		/* an array of strings */
	T_ENV,		/* an object of strings */
	T_REF,		/* a string or an integer: a session, a signal */
	T_REFS,		/* an array of session refs */
};

/*
 * Values of the wrong type for each type, as JSON text. Each is in range
 * for every param of its type ("1" for integers), so only the type is wrong.
 */
static const char *const wrong[][6] = {
	[T_INT] = { "\"1\"", "1.5", "true", "{}", "[]", NULL },
	[T_STR] = { "1", "true", "{}", "[]", NULL },
	[T_BOOL] = { "1", "\"true\"", NULL },
	[T_STRS] = { "\"x\"", "{}", "[1]", "[\"x\",true]", NULL },
	[T_ENV] = { "\"A=1\"", "1", "true", "[]", "{\"A\":1}", NULL },
	[T_REF] = { "true", "{}", "[]", "1.5", NULL },
	[T_REFS] = { "\"x\"", "{}", "[true]", NULL },
};

/* The session a method's requests name, started before its rows. */
enum fixture {
	F_NONE,		/* none: the daemon only */
	F_ECHO,		/* FIX_ECHO with a transport, running */
	F_FLOOD,	/* yes with a transport: target output always waiting */
	F_ENDED,	/* true, already exited: wait answers at once */
};

/* A method: its session, and params that succeed; "$S" is the session. */
static const struct method {
	const char	*name;
	enum fixture	 fix;
	const char	*base;
	unsigned	 flags;
#define M_RAW	0x1	/* a success turns the connection into raw bytes */
#define M_STOP	0x2	/* a success made a session: stop everything after */
#define M_ENDS	0x4	/* a success ends the daemon */
} methods[] = {
	{ "launch", F_NONE, "{\"kind\":\"exec\",\"argv\":[\"sleep\",\"30\"]}",
	    M_STOP },
	{ "status", F_ECHO, "{\"session\":\"$S\"}", 0 },
	{ "wait", F_ENDED, "{\"session\":\"$S\"}", 0 },
	{ "stop", F_ECHO, "{\"session\":\"$S\"}", 0 },
	{ "signal", F_ECHO, "{\"session\":\"$S\"}", 0 },
	{ "logs", F_ECHO, "{\"session\":\"$S\"}", 0 },
	{ "read", F_FLOOD, "{\"session\":\"$S\",\"timeout\":0}", 0 },
	{ "write", F_ECHO, "{\"session\":\"$S\",\"data\":\"eA==\"}", 0 },
	{ "pipe", F_ECHO, "{\"session\":\"$S\"}", M_RAW },
	{ "attach", F_ECHO, "{\"session\":\"$S\"}", M_RAW },
	{ "resize", F_ECHO, "{\"session\":\"$S\",\"rows\":24,\"cols\":80}", 0 },
	{ "subscribe", F_ECHO, "{\"session\":\"$S\"}", 0 },
	{ "unsubscribe", F_ECHO, "{\"session\":\"$S\"}", 0 },
	{ "exec", F_ECHO, "{\"session\":\"$S\",\"command\":\"info frame\"}",
	    0 },
	{ "shutdown", F_ECHO, "{}", M_ENDS },
};

/*
 * Every param of dbgctl-protocol(7), in the order its rows are sent. absent
 * is what the method's base request does with the param removed, and so
 * what it must do with the param null: REQUIRED, or "result" and error
 * kinds separated by '|'. hello, ping and list take no params.
 */
static const struct param {
	const char	*method;
	const char	*name;
	enum ptype	 type;
	const char	*absent;
} params[] = {
	{ "launch", "kind", T_STR, "result" },	/* gdb, the default */
	{ "launch", "name", T_STR, "result" },
	{ "launch", "argv", T_STRS, REQUIRED },	/* by kind exec */
	{ "launch", "commands", T_STRS, "result" },
	{ "launch", "cwd", T_STR, "result" },
	{ "launch", "env", T_ENV, "result" },
	{ "launch", "term_env", T_ENV, "result" },
	{ "launch", "debugger", T_STR, "result" },
	{ "launch", "remote", T_STR, "result" },
	{ "launch", "server", T_STR, "result" },
	{ "launch", "port", T_INT, "result" },
	{ "launch", "connect_timeout", T_INT, "result" },
	{ "launch", "stop_timeout", T_INT, "result" },
	{ "launch", "transport", T_BOOL, "result" },
	{ "launch", "fault_breaks", T_STRS, "result" },
	{ "launch", "fault_break_defaults", T_BOOL, "result" },
	{ "launch", "core", T_BOOL, "result" },
	{ "launch", "lease", T_BOOL, "result" },
	{ "launch", "lease_grace", T_INT, "result" },
	{ "status", "session", T_REF, REQUIRED },
	{ "wait", "session", T_REF, REQUIRED },
	{ "wait", "timeout", T_INT, "result" },
	{ "stop", "session", T_REF, "invalid_params" },	/* names nothing */
	{ "stop", "sessions", T_REFS, "result" },
	{ "stop", "all", T_BOOL, "result" },
	{ "stop", "timeout", T_INT, "result" },
	{ "signal", "session", T_REF, REQUIRED },
	{ "signal", "signal", T_REF, "result" },
	{ "logs", "session", T_REF, REQUIRED },
	{ "logs", "offset", T_INT, "result" },
	{ "logs", "lines", T_INT, "result" },
	{ "logs", "max", T_INT, "result" },
	{ "logs", "wait", T_BOOL, "result" },
	{ "read", "session", T_REF, REQUIRED },
	{ "read", "max", T_INT, "result|timeout" },
	{ "read", "timeout", T_INT, "result|timeout" },
	{ "read", "stream", T_STR, "result|timeout" },
	{ "write", "session", T_REF, REQUIRED },
	{ "write", "data", T_STR, "result" },
	{ "write", "stream", T_STR, "result" },
	{ "write", "eof", T_BOOL, "result" },
	{ "pipe", "session", T_REF, REQUIRED },
	{ "pipe", "stream", T_STR, "result" },
	{ "attach", "session", T_REF, REQUIRED },
	{ "attach", "lines", T_INT, "result" },
	{ "resize", "session", T_REF, REQUIRED },
	{ "resize", "rows", T_INT, REQUIRED },
	{ "resize", "cols", T_INT, REQUIRED },
	{ "resize", "redraw", T_BOOL, "result" },
	{ "resize", "viewer", T_INT, "result" },
	{ "subscribe", "session", T_REF, "result" },
	{ "subscribe", "output", T_BOOL, "result" },
	{ "subscribe", "streams", T_STRS, "result" },
	{ "unsubscribe", "session", T_REF, "result" },
	/* An exec session takes no commands: not_supported, once checked. */
	{ "exec", "session", T_REF, REQUIRED },
	{ "exec", "command", T_STR, REQUIRED },
	{ "exec", "timeout", T_INT, "not_supported" },
	{ "shutdown", "timeout", T_INT, "result" },
};

/* A reply as text for failure messages; a static buffer, reused after 4. */
static const char *
shown(json_t *r)
{
	static char buf[4][512];
	static int next;
	char *s, *out = buf[next++ % 4];

	if (r == NULL)
		return "no reply";
	s = json_dumps(r, JSON_COMPACT);
	snprintf(out, sizeof(buf[0]), "%s", s ? s : "?");
	free(s);
	return out;
}

/* True if r is an invalid_params error whose message holds word and also. */
static bool
invalid_naming(json_t *r, const char *word, const char *also)
{
	const char *kind = h_jstr(r, "error.data.kind");
	const char *msg = h_jstr(r, "error.message");

	return h_jint(r, "error.code", 0) == -32602 && kind != NULL &&
	    strcmp(kind, "invalid_params") == 0 && msg != NULL &&
	    strstr(msg, word) != NULL && (also == NULL ||
	    strstr(msg, also) != NULL);
}

/* True if word is one of the '|'-separated words of list. */
static bool
one_of(const char *list, const char *word)
{
	char l[128], w[64];

	snprintf(l, sizeof(l), "|%s|", list);
	snprintf(w, sizeof(w), "|%s|", word);
	return strstr(l, w) != NULL;
}

/* True if r is a result whose member key is true. */
static bool
result_true(json_t *r, const char *key)
{
	return json_is_true(json_object_get(json_object_get(r, "result"), key));
}

/* Connect c to the test's daemon (asserted). */
static void
conn_open(struct h_conn *c)
{
	cr_assert_eq(h_conn_open(c, H->sock), 0, "connect to %s", H->sock);
}

/*
 * Check that the daemon still serves c: ping answers and hello reports the
 * same pid. A dead daemon ends the test; a connection that no longer speaks
 * JSON is a failure too, but c is reconnected so the other rows still run.
 */
static void
alive(struct h_conn *c, pid_t pid, const char *after)
{
	json_t *r = h_conn_call(c, "ping", "{}", CALL_BOUND);

	if (!result_true(r, "pong")) {
		cr_assert_eq(h_daemon_pid(), pid, "after %s: the daemon (pid "
		    "%d) is gone", after, pid);
		cr_expect_fail("after %s: the connection no longer answers "
		    "ping (got %s)", after, shown(r));
		json_decref(r);
		h_conn_close(c);
		conn_open(c);
		return;
	}
	json_decref(r);
	r = h_conn_call(c, "hello", "{}", CALL_BOUND);
	cr_expect_eq(h_jint(r, "result.pid", -1), pid, "after %s: hello "
	    "should report the daemon's pid %d, got %s", after, pid, shown(r));
	json_decref(r);
}

/* Check the daemon's log, its stderr, holds no sanitizer report. */
static void
log_clean(const char *when)
{
	char path[PATH_MAX], *log, *bad;

	snprintf(path, sizeof(path), "%s/dbgctld.log", H->state);
	log = h_read_file(path, NULL);
	cr_assert_not_null(log, "%s: no daemon log at %s", when, path);
	bad = strstr(log, "runtime error");
	if (bad == NULL)
		bad = strstr(log, "Sanitizer");
	cr_expect_null(bad, "%s: %s reports: %.600s", when, path, bad);
	free(log);
}

/*
 * Start the daemon through the client (detached, so its stderr is
 * dbgctld.log) and the session a method's requests name: its id, or 0.
 */
static long
fixture(enum fixture f)
{
	struct h_res r;
	json_t *st;
	long id = 0;

	switch (f) {
	case F_NONE:
		cr_assert_eq(h_cli(&r, H_ARGS("version")), 0, "dbgctl version "
		    "(which starts the daemon): %s", r.err);
		h_run_free(&r);
		break;
	case F_ECHO:
		id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
		    h_ctx_fixture("FIX_ECHO")));
		break;
	case F_FLOOD:
		id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
		    "yes"));
		break;
	case F_ENDED:
		id = h_cli_launch_exec(NULL, H_ARGS("true"));
		st = h_cli_wait_ended(id, H_WAIT_BOUND);
		cr_assert_not_null(st, "session %ld (true) did not end", id);
		json_decref(st);
		break;
	}
	return id;
}

/* The method named name (asserted). */
static const struct method *
method_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(*methods); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	cr_assert_fail("no method %s in the table", name);
	return NULL;
}

/* A method's base params with the session filled in and key set to value. */
static char *
build(const struct method *m, long id, const char *key, const char *value)
{
	json_t *p = json_loads(m->base, 0, NULL), *v;
	char *text;

	cr_assert_not_null(p, "bad base params of %s", m->name);
	v = json_object_get(p, "session");
	if (json_is_string(v) && strcmp(json_string_value(v), "$S") == 0)
		json_object_set_new(p, "session", json_integer(id));
	v = json_loads(value, JSON_DECODE_ANY, NULL);
	cr_assert_not_null(v, "bad value %s in the table", value);
	json_object_set_new(p, key, v);
	text = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	return text;
}

/* Check a reply to a request with the param null against the row's absent. */
static void
expect_absent(json_t *r, const struct param *p, const char *what)
{
	const char *kind = h_jstr(r, "error.data.kind");
	bool ok;

	if (strcmp(p->absent, REQUIRED) == 0) {
		cr_expect(invalid_naming(r, p->name, "required"), "%s: null "
		    "counts as absent: expected -32602 invalid_params saying "
		    "\"%s\" is required, got %s", what, p->name, shown(r));
		return;
	}
	if (json_object_get(r, "result") != NULL)
		ok = one_of(p->absent, "result");
	else
		ok = kind != NULL && one_of(p->absent, kind) &&
		    (strcmp(kind, "invalid_params") != 0 ||
		    invalid_naming(r, p->name, NULL));
	cr_expect(ok, "%s: null counts as absent: expected %s as without "
	    "\"%s\", got %s", what, p->absent, p->name, shown(r));
}

/* Undo what a request of m that succeeded did, so the next row starts alike. */
static void
after_success(const struct method *m, const char *what)
{
	json_t *r;

	if (m->flags & M_STOP) {
		r = h_conn_call(&conn, "stop", "{\"all\":true,\"timeout\":0}",
		    H_WAIT_BOUND);
		cr_assert_not_null(json_object_get(r, "result"), "after %s: "
		    "stop all: %s", what, shown(r));
		json_decref(r);
	}
	if (m->flags & M_RAW) {
		/* That connection carries raw bytes now. */
		h_conn_close(&conn);
		conn_open(&conn);
	}
}

/*
 * Send every param of a method in turn with each wrong type (refused with
 * -32602 invalid_params naming the param), or as null (as if absent); after
 * each request the daemon still serves the connection, but after shutdown.
 */
static void
send_rows(const char *name, bool as_null)
{
	static const char *const null[] = { "null", NULL };
	const struct method *m = method_find(name);
	const struct param *p;
	const char *const *v;
	long id = fixture(m->fix);
	pid_t pid = h_daemon_pid();
	struct h_conn *c = &conn;
	char what[1024], *text;
	size_t rows = 0;
	json_t *r;
	bool done;

	cr_assert_gt(pid, 0, "no daemon answers hello");
	conn_open(c);
	for (p = params; p < params + sizeof(params) / sizeof(*params); p++) {
		if (strcmp(p->method, name) != 0)
			continue;
		for (v = as_null ? null : wrong[p->type]; *v != NULL; v++) {
			rows++;
			text = build(m, id, p->name, *v);
			snprintf(what, sizeof(what), "%s %s", name, text);
			free(text);
			r = h_conn_call(c, name, strchr(what, ' ') + 1,
			    CALL_BOUND);
			if (as_null)
				expect_absent(r, p, what);
			else
				cr_expect(invalid_naming(r, p->name, NULL),
				    "%s: expected error -32602 invalid_params "
				    "naming \"%s\", got %s", what, p->name,
				    shown(r));
			done = json_object_get(r, "result") != NULL;
			json_decref(r);
			if (done && as_null && (m->flags & M_ENDS))
				return;
			if (done)
				after_success(m, what);
			alive(c, pid, what);
		}
	}
	cr_assert_gt(rows, 0, "the table has no param of %s", name);
	h_conn_close(c);
	log_clean(name);
}

/* Both tests of a method, each with its own daemon and session. */
#define PARAM_TESTS(m)							\
	Test(params, wrong_types_##m) { send_rows(#m, false); }	\
	Test(params, null_is_absent_##m) { send_rows(#m, true); }

PARAM_TESTS(launch)
PARAM_TESTS(status)
PARAM_TESTS(wait)
PARAM_TESTS(stop)
PARAM_TESTS(signal)
PARAM_TESTS(logs)
PARAM_TESTS(read)
PARAM_TESTS(write)
PARAM_TESTS(pipe)
PARAM_TESTS(exec)
PARAM_TESTS(attach)
PARAM_TESTS(resize)
PARAM_TESTS(subscribe)
PARAM_TESTS(unsubscribe)
PARAM_TESTS(shutdown)

/*
 * A pipe to the console is refused, naming attach (the console's way in),
 * rather than piping the target; the connection goes on carrying JSON.
 */
Test(params, pipe_console_refused)
{
	long id = fixture(F_ECHO);
	pid_t pid = h_daemon_pid();
	struct h_conn *c = &conn;
	char text[96];
	json_t *r;

	snprintf(text, sizeof(text), "{\"session\":%ld,\"stream\":\"console\"}",
	    id);
	conn_open(c);
	r = h_conn_call(c, "pipe", text, CALL_BOUND);
	cr_expect(invalid_naming(r, "attach", NULL), "pipe %s: expected "
	    "-32602 invalid_params mentioning attach, got %s", text, shown(r));
	json_decref(r);
	alive(c, pid, "a pipe of the console");
	h_conn_close(c);
}

/*
 * term_env carries the client's TERM and COLORTERM: another name is
 * refused, naming it and pointing to env; the daemon serves on.
 */
Test(params, term_env_holds_the_terminal_only)
{
	static const char text[] = "{\"kind\":\"exec\",\"argv\":[\"true\"],"
	    "\"term_env\":{\"TERM\":\"xterm\",\"PATH\":\"/x\"}}";
	struct h_conn *c = &conn;
	pid_t pid;
	json_t *r;

	fixture(F_NONE);
	pid = h_daemon_pid();
	conn_open(c);
	r = h_conn_call(c, "launch", text, CALL_BOUND);
	cr_expect(invalid_naming(r, "term_env", "\"PATH\""), "launch %s: "
	    "expected -32602 invalid_params naming term_env and PATH, got %s",
	    text, shown(r));
	json_decref(r);
	alive(c, pid, "a term_env with PATH");
	h_conn_close(c);
}

/*
 * A resize naming a viewer that is not attached is refused, naming it;
 * the daemon serves on.
 */
Test(params, resize_of_a_viewer_not_attached)
{
	long id = fixture(F_ECHO);
	pid_t pid = h_daemon_pid();
	struct h_conn *c = &conn;
	char text[128];
	json_t *r;

	snprintf(text, sizeof(text), "{\"session\":%ld,\"rows\":30,"
	    "\"cols\":100,\"viewer\":999999}", id);
	conn_open(c);
	r = h_conn_call(c, "resize", text, CALL_BOUND);
	cr_expect(invalid_naming(r, "viewer 999999", NULL), "resize %s: "
	    "expected -32602 invalid_params naming the viewer, got %s", text,
	    shown(r));
	json_decref(r);
	alive(c, pid, "a resize of a viewer not attached");
	h_conn_close(c);
}

/*
 * Read a transport session running sh -c script until eof, then twice more:
 * each further read answers at once with no data and eof, and the daemon
 * gets there without undefined behaviour (its log holds no report).
 */
static void
reads_at_eof(const char *script, const char *want)
{
	long id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "/bin/sh", "-c", script));
	pid_t pid = h_daemon_pid();
	struct h_bytes got = { NULL, 0 };
	struct h_conn *c = &conn;
	unsigned char *bytes;
	const char *data;
	char text[96];
	size_t n;
	json_t *r;
	int i;

	snprintf(text, sizeof(text), "{\"session\":%ld,\"timeout\":2000}", id);
	conn_open(c);
	for (i = 0;; i++) {
		cr_assert_lt(i, 100, "read %s: no eof after 100 reads", text);
		r = h_conn_call(c, "read", text, CALL_BOUND);
		data = h_jstr(r, "result.data");
		cr_assert_not_null(data, "read %s (%d, sh -c '%s'): expected "
		    "data or eof, got %s", text, i, script, shown(r));
		bytes = b64_decode(data, strlen(data), &n);
		cr_assert_not_null(bytes, "read: data not base64: %s", data);
		h_bytes_add(&got, bytes, n);
		free(bytes);
		if (result_true(r, "eof"))
			break;
		json_decref(r);
	}
	json_decref(r);
	cr_expect_str_eq(got.p ? got.p : "", want, "sh -c '%s': the target's "
	    "output", script);
	free(got.p);
	for (i = 0; i < 2; i++) {
		r = h_conn_call(c, "read", text, CALL_BOUND);
		cr_expect(h_jstr(r, "result.data") != NULL &&
		    *h_jstr(r, "result.data") == '\0' && result_true(r, "eof"),
		    "read %s %d after eof (sh -c '%s'): expected "
		    "{\"data\":\"\",\"eof\":true} at once, got %s", text, i + 1,
		    script, shown(r));
		json_decref(r);
	}
	alive(c, pid, "reads at eof");
	h_conn_close(c);
	log_clean("reads at eof");
}

/* Reads at the end of a few bytes of output. */
Test(params, read_at_eof_after_output)
{
	reads_at_eof("printf abc", "abc");
}

/* Reads at the end of output that never had a byte: no buffer at all. */
Test(params, read_at_eof_without_output)
{
	reads_at_eof("exit 0", "");
}

/*
 * A fault break is one location: one holding a line break, a carriage
 * return or another control byte, or an empty one, is refused as invalid
 * params naming it, and nothing is launched.
 */
Test(params, fault_breaks_are_one_line_each)
{
	static const char *const bad[] = { "\"main\\nrun\"", "\"main\\rrun\"",
	    "\"ma\\u0001in\"", "\"main\\u007f\"", "\"a\\tb\"", "\"\"" };
	struct h_conn *c = &conn;
	char params[256];
	json_t *r;
	size_t i;

	h_daemon_fg();
	conn_open(c);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(params, sizeof params, "{\"argv\":[\"%s\"],"
		    "\"fault_breaks\":[\"main\",%s]}",
		    h_ctx_fixture("FIX_ECHO"), bad[i]);
		r = h_conn_call(c, "launch", params, CALL_BOUND);
		cr_expect(invalid_naming(r, "fault break 2", NULL), "launch "
		    "%s: expected -32602 invalid_params naming fault break 2, "
		    "got %s", params, shown(r));
		json_decref(r);
	}
	r = h_conn_call(c, "list", NULL, CALL_BOUND);
	cr_expect_eq(json_array_size(h_jpath(r, "result.sessions")), 0,
	    "something was launched: %s", shown(r));
	json_decref(r);
	h_conn_close(c);
}
