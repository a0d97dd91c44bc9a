/*
 * Faults, each on a daemon of its own: the debugger or a managed server
 * SIGKILLed mid-session, a stop that arrives while the launch is still
 * starting, and a client that leaves while its stop, read or exec waits.
 * What a user checks: the session ends saying how, its log is whole,
 * nothing of it is left, each request is answered once and nothing is
 * written to a client that is gone.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(faults, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* The processes status names for a session, tracked if there. */
static const char *const session_pids[] = { "keeper_pid", "pid",
    "server_pid", "inferior_pid", NULL };

/* Whether a status has the state "exited" or "failed". */
static bool
is_ended(json_t *st)
{
	const char *state = h_jstr(st, "state");

	return state != NULL && (strcmp(state, "exited") == 0 ||
	    strcmp(state, "failed") == 0);
}

/*
 * Launch a session whose processes carry the marker m, wait until its log
 * holds text (the target runs), SIGKILL the process status names at
 * field, and return the status once it has ended: by then every process
 * the session had is gone, checked at once.
 */
static json_t *
kill_mid_session(const char *const launch[], const char *m, const char *text,
    const char *field, char *ids, size_t len)
{
	struct h_tracked t[8] = { { 0 } };
	struct h_snap snap;
	char report[4096];
	json_t *st;
	pid_t victim;
	long id;
	int i, n = 0, left;

	id = h_cli_launch(launch);
	h_idstr(id, ids, len);
	h_cli_wait_log(ids, text, H_WAIT_BOUND);
	st = h_cli_status(id);
	cr_assert_gt(h_jint(st, "inferior_pid", -1), 0, "status %s: expected "
	    "an inferior_pid while the target runs", ids);
	for (i = 0; session_pids[i] != NULL; i++)
		if (h_jint(st, session_pids[i], -1) > 0)
			h_pid_track(&t[n++], session_pids[i],
			    (pid_t)h_jint(st, session_pids[i], -1));
	victim = (pid_t)h_jint(st, field, -1);
	json_decref(st);
	cr_assert_gt(victim, 0, "status %s: no %s to kill", ids, field);
	h_snap_take(&snap, m);

	cr_assert_eq(kill(victim, SIGKILL), 0, "kill -9 %d (%s): %s", victim,
	    field, strerror(errno));
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %s did not end within %d ms of kill -9 "
	    "of its %s", ids, H_WAIT_BOUND, field);
	cr_assert(h_pid_tracked_gone(t), "session %s ended after kill -9 of "
	    "its %s but processes exist: %s", ids, field,
	    h_pid_tracked_left(t, report, sizeof(report)));
	left = h_snap_leftovers(&snap, m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "session %s ended after kill -9 of its %s: "
	    "expected no process of it, got %d: %s", ids, field, left, report);
	return st;
}

/*
 * gdb SIGKILLed while its target runs: the session ends exited with
 * exit.signal 9, its log still holds what the target printed, and the
 * target's child, which gdb's death does not kill, is gone too.
 */
Test(faults, a_killed_debugger_ends_the_session_with_its_log)
{
	char m[96], ids[32], printed[128];
	json_t *st;

	/*
	 * The target prints the marker's value from its environment (gdb's
	 * "Starting program" line shows only the variable's name), then
	 * waits for a child of its own.
	 */
	h_marker_new("DBGI_GDBKILL", m, sizeof(m));
	snprintf(printed, sizeof(printed), "printed-%s", strchr(m, '=') + 1);
	st = kill_mid_session(H_ARGS("--env", m, "-x", "run", "--", "/bin/sh",
	    "-c", "echo \"printed-$DBGI_GDBKILL\"; sleep 300 & wait"), m,
	    printed, "pid", ids, sizeof(ids));
	cr_assert_str_eq(h_jstr(st, "state"), "exited", "status %s after kill "
	    "-9 of gdb: expected exited (error: %s)", ids,
	    h_jstr(st, "error") ? h_jstr(st, "error") : "none");
	cr_assert_eq(h_jint(st, "exit.signal", -1), SIGKILL, "status %s after "
	    "kill -9 of gdb: expected exit.signal 9, got %lld (exit.code "
	    "%lld)", ids, h_jint(st, "exit.signal", -1),
	    h_jint(st, "exit.code", -1));
	json_decref(st);
	cr_assert(h_cli_log_has(ids, printed), "dbgctl logs %s after gdb was "
	    "killed: \"%s\", printed before, is gone", ids, printed);
}

/*
 * The gdbserver of a session SIGKILLed: the session ends, its error names
 * the server and how it ended, and server_exit says signal 9.
 * (debuggers::gdbserver_killed_ends_session asks only for "server" in the
 * error and reads server_exit only if it is there.)
 */
Test(faults, a_killed_server_ends_the_session_saying_how)
{
	const char *spinner = h_ctx_fixture("FIX_SPINNER");
	const char *error;
	char m[96], ids[32];
	json_t *st;

	h_marker_new("DBGI_SRVKILL", m, sizeof(m));
	st = kill_mid_session(H_ARGS("--kind", "gdbserver", "--env", m, "-x",
	    "continue", "--", spinner), m, "spinning", "server_pid", ids,
	    sizeof(ids));
	cr_assert(is_ended(st), "status %s: expected exited or failed, got %s",
	    ids, h_jstr(st, "state"));
	error = h_jstr(st, "error");
	cr_assert(error != NULL && strstr(error, "gdbserver") != NULL &&
	    strstr(error, "signal 9") != NULL, "status %s after kill -9 of "
	    "the server: expected an error that names gdbserver and signal 9, "
	    "got %s", ids, error ? error : "none");
	cr_assert_eq(h_jint(st, "server_exit.signal", -1), SIGKILL, "status "
	    "%s: expected server_exit.signal 9, got %lld", ids,
	    h_jint(st, "server_exit.signal", -1));
	json_decref(st);
}

/* Send one request line with id on c, without reading the reply. */
static void
send_request(struct h_conn *c, long id, const char *method,
    const char *params)
{
	char *line;
	int n;

	n = asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\","
	    "\"params\":%s}\n", id, method, params);
	cr_assert_gt(n, 0, "asprintf");
	cr_assert_eq(h_conn_send(c, line, (size_t)n, 10000), 0, "send %s",
	    line);
	free(line);
}

/*
 * The reply with id on c within bound_ms (asserted); messages before it
 * with that id again, or with other ids, count in *extra.
 */
static json_t *
reply_of(struct h_conn *c, long id, int bound_ms, int *extra,
    const char *what)
{
	double end = h_now() + bound_ms / 1000.0;
	json_t *r;
	int left;

	while ((left = (int)((end - h_now()) * 1000)) > 0 &&
	    (r = h_conn_recv(c, left)) != NULL) {
		if (h_jint(r, "id", -1) == id)
			return r;
		(*extra)++;
		json_decref(r);
	}
	cr_assert_fail("no reply to the %s within %d ms", what, bound_ms);
	return NULL;
}

/* Poll status of racer on c until its server and gdb run; still starting. */
static void
wait_server_up(struct h_conn *c)
{
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	const char *state;
	json_t *r;

	for (;;) {
		r = h_conn_call(c, "status", "{\"session\":\"racer\"}", 10000);
		state = h_jstr(r, "result.state");
		if (h_jint(r, "result.server_pid", -1) > 0 &&
		    h_jint(r, "result.pid", -1) > 0) {
			cr_assert(state != NULL && strcmp(state, "starting") == 0,
			    "racer ran before its server and gdb were seen: "
			    "state %s", state ? state : "(none)");
			json_decref(r);
			return;
		}
		json_decref(r);
		cr_assert(h_now() < end, "racer's server and gdb did not start "
		    "within %d ms", H_WAIT_BOUND);
		h_nap(2);
	}
}

/*
 * A launch (params, name "racer", marked m) on one connection and a stop
 * of it on another, without waiting for the launch. frozen: both sent
 * while the daemon is SIGSTOPped, so that it reads them in one turn;
 * else the stop goes once status shows the session's server and gdb.
 * The launch fails, once, with not_running; the stop answers with the
 * session ended, and by then nothing of it is alive.
 */
static void
stop_during_launch(const char *params, const char *m, bool frozen)
{
	struct h_conn a, b;
	json_t *launch, *stop, *s, *r;
	const char *msg;
	char *shown;
	pid_t pid = h_daemon_pid();
	int extra = 0;

	cr_assert_gt(pid, 0, "no daemon answers hello");
	/*
	 * Frozen, the daemon accepts both connections in one turn in the
	 * order they came and reads a's line first (a daemon that had them
	 * already may be woken by b first: epoll's order of wakeups).
	 */
	if (frozen)
		cr_assert_eq(kill(pid, SIGSTOP), 0, "SIGSTOP the daemon");
	cr_assert_eq(h_conn_open(&a, H->sock), 0, "connect");
	cr_assert_eq(h_conn_open(&b, H->sock), 0, "connect");
	send_request(&a, 1, "launch", params);
	if (!frozen)
		wait_server_up(&b);
	send_request(&b, 2, "stop", "{\"session\":\"racer\"}");
	if (frozen)
		cr_assert_eq(kill(pid, SIGCONT), 0, "SIGCONT the daemon");
	stop = reply_of(&b, 2, 2 * H_WAIT_BOUND, &extra, "stop");
	shown = json_dumps(stop, JSON_COMPACT);
	s = json_array_get(h_jpath(stop, "result.sessions"), 0);
	cr_assert(s != NULL && is_ended(s), "stop of a starting session: "
	    "expected the session exited or failed, got %s", shown);
	free(shown);
	cr_assert(h_marker_gone(m), "after the stop returned, processes "
	    "carrying %s are alive", m);

	launch = reply_of(&a, 1, H_WAIT_BOUND, &extra, "launch");
	shown = json_dumps(launch, JSON_COMPACT);
	msg = h_jstr(launch, "error.message");
	cr_assert_null(json_object_get(launch, "result"), "launch stopped "
	    "while starting: expected an error, got %s", shown);
	cr_assert_str_eq(h_jkind(launch), "not_running", "launch stopped while "
	    "starting: expected kind not_running, got %s", shown);
	cr_assert(msg != NULL && strstr(msg, "stopped while starting") != NULL,
	    "launch: expected a message saying it was stopped while "
	    "starting, got %s", shown);
	free(shown);
	json_decref(launch);
	json_decref(stop);

	/* One reply each: nothing more before the pings' answers. */
	send_request(&a, 3, "ping", "{}");
	json_decref(reply_of(&a, 3, H_WAIT_BOUND, &extra, "ping"));
	send_request(&b, 4, "ping", "{}");
	json_decref(reply_of(&b, 4, H_WAIT_BOUND, &extra, "ping"));
	cr_assert_eq(extra, 0, "got %d messages beyond one reply per request",
	    extra);
	r = h_cli_json(H_ARGS("status", "racer"));
	cr_assert(is_ended(r), "status racer after the stop: expected it "
	    "ended, got %s", h_jstr(r, "state"));
	json_decref(r);
	h_conn_close(&a);
	h_conn_close(&b);
}

/* The params of a launch named racer, marked m, with more before them. */
static char *
racer_params(const char *m, const char *more)
{
	char *p;
	int n;

	n = asprintf(&p, "{%s,\"name\":\"racer\",\"env\":{\"%.*s\":\"%s\"}}",
	    more, (int)strcspn(m, "="), m, strchr(m, '=') + 1);
	cr_assert_gt(n, 0, "asprintf");
	return p;
}

/* An exec launch and its stop read in one turn: the launch fails once. */
Test(faults, a_stop_during_an_exec_launch_fails_it_once)
{
	char m[96], *params;

	json_decref(h_cli_json(H_ARGS("version")));	/* starts the daemon */
	h_marker_new("DBGI_EXECRACE", m, sizeof(m));
	params = racer_params(m, "\"kind\":\"exec\",\"argv\":[\"sleep\","
	    "\"300\"]");
	stop_during_launch(params, m, true);
	free(params);
}

/*
 * A gdbserver launch, slow to start (a server, then gdb connecting), and
 * a stop on another connection once its server and gdb run: the launch
 * fails once, and the server and gdb go with the session.
 */
Test(faults, a_stop_during_a_gdbserver_launch_fails_it_once)
{
	const char *spinner = h_ctx_fixture("FIX_SPINNER");
	char m[96], more[PATH_MAX + 64], *params;

	json_decref(h_cli_json(H_ARGS("version")));	/* starts the daemon */
	h_marker_new("DBGI_SRVRACE", m, sizeof(m));
	snprintf(more, sizeof(more), "\"kind\":\"gdbserver\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"continue\"]", spinner);
	params = racer_params(m, more);
	stop_during_launch(params, m, false);
	free(params);
}

/* A connection whose writes the trace shows: its fd in the daemon. */
struct traced_conn {
	struct h_conn	 c;
	int		 fd;
	char		 seen[64];	/* the last reply the trace showed */
};

/*
 * Open a connection to the traced daemon and ping it until the trace
 * shows the daemon writing a pong to it (strace has begun to see
 * syscalls): that gives the daemon's fd of the connection.
 */
static void
traced_conn_open(struct traced_conn *tc, struct h_trace *t)
{
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	json_t *r;
	long id;

	cr_assert_eq(h_conn_open(&tc->c, H->sock), 0, "connect");
	for (id = 700001; ; id++) {
		cr_assert(h_now() < end, "the trace of the daemon shows none of "
		    "its pongs within %d ms", H_WAIT_BOUND);
		send_request(&tc->c, id, "ping", "{}");
		r = h_conn_recv(&tc->c, H_WAIT_BOUND);
		cr_assert(h_jint(r, "id", -1) == id, "no pong %ld", id);
		json_decref(r);
		snprintf(tc->seen, sizeof(tc->seen), "\"id\":%ld,", id);
		h_nap(50);
		if ((tc->fd = h_trace_fd_of(t, tc->seen)) >= 0)
			return;
	}
}

/* Arguments of a wait for the daemon to close a traced connection. */
struct closed_arg {
	struct h_trace		*t;
	struct traced_conn	*tc;
	int			 writes;
	char			 report[4096];
};

/* Predicate: the trace shows the connection's fd closed. */
static bool
conn_closed(void *arg)
{
	struct closed_arg *a = arg;
	bool closed;

	a->writes = h_trace_writes_after(a->t, a->tc->seen, a->tc->fd, &closed,
	    a->report, sizeof(a->report));
	if (!closed)
		h_nap(50);
	return closed;
}

/*
 * A client that sends method with params on a traced connection and
 * leaves at once; done(arg) waits until the operation has completed (and
 * asserts that it has). Meanwhile a bystander connection is open. The
 * daemon lets go of the connection writing nothing to it, the bystander
 * gets only its own reply, and the daemon serves on.
 */
static void
leave_while_waiting(const char *method, const char *params,
    void (*done)(void *), void *arg)
{
	struct traced_conn tc;
	struct closed_arg ca = { 0 };
	struct h_conn by;
	struct h_trace t;
	json_t *r;
	pid_t pid = h_daemon_pid();

	cr_assert_gt(pid, 0, "no daemon answers hello");
	h_trace_start(&t, pid);
	traced_conn_open(&tc, &t);
	send_request(&tc.c, 2, method, params);
	h_conn_close(&tc.c);
	cr_assert_eq(h_conn_open(&by, H->sock), 0, "connect");

	done(arg);
	ca.t = &t;
	ca.tc = &tc;
	cr_assert(h_wait_for(conn_closed, &ca, H_WAIT_BOUND), "%s: the daemon "
	    "did not close the connection (fd %d) of the client that left "
	    "within %d ms", method, tc.fd, H_WAIT_BOUND);
	cr_assert_eq(ca.writes, 0, "%s: the daemon wrote %d times to the "
	    "connection (fd %d) of a client that had left: %s", method,
	    ca.writes, tc.fd, ca.report);
	h_trace_stop(&t);

	send_request(&by, 9, "ping", "{}");
	r = h_conn_recv(&by, H_WAIT_BOUND);
	cr_assert(h_jint(r, "id", -1) == 9 && json_is_true(h_jpath(r,
	    "result.pong")), "a bystander connection: expected only its "
	    "pong, got %s", r ? json_dumps(r, JSON_COMPACT) : "nothing");
	json_decref(r);
	h_conn_close(&by);
	cr_assert_eq(h_daemon_pid(), pid, "the daemon did not survive a "
	    "client that left while its %s waited", method);
}

/* Predicate: a session (a long id) has ended. */
static bool
session_ended(void *arg)
{
	json_t *st = h_cli_status(*(long *)arg);
	bool ended = is_ended(st);

	json_decref(st);
	if (!ended)
		h_nap(50);
	return ended;
}

/* The stop's work: the session ends, killed at the stop's timeout. */
static void
stop_done(void *arg)
{
	long id = *(long *)arg;
	json_t *st;

	cr_assert(h_wait_for(session_ended, arg, H_WAIT_BOUND), "session %ld "
	    "did not end after a stop whose client left", id);
	st = h_cli_status(id);
	cr_assert_eq(h_jint(st, "exit.signal", -1), SIGKILL, "session %ld: "
	    "expected exit.signal 9 at the stop's timeout, got %lld", id,
	    h_jint(st, "exit.signal", -1));
	json_decref(st);
}

/*
 * A client that leaves while its stop waits (the target ignores SIGTERM,
 * the stop's timeout is 500 ms): the session is stopped all the same.
 */
Test(faults, a_client_that_leaves_while_its_stop_waits)
{
	char m[96], params[64];
	long id;

	h_marker_new("DBGI_STOPLEFT", m, sizeof(m));
	id = h_cli_launch_sh(m, "trap '' TERM; exec sleep 300");
	cr_assert(h_pid_wait_sigmask(h_cli_status_pid(id, "pid"), "SigIgn",
	    SIGTERM, H_WAIT_BOUND), "session %ld never ignored SIGTERM", id);
	snprintf(params, sizeof(params), "{\"session\":%ld,\"timeout\":500}",
	    id);
	leave_while_waiting("stop", params, stop_done, &id);
	cr_assert(h_marker_gone(m), "processes carrying %s outlived the stop",
	    m);
}

/* The read's work: its timeout passes; another reader then reads. */
static void
read_done(void *arg)
{
	char ids[32];
	struct h_res r;

	h_idstr(*(long *)arg, ids, sizeof(ids));
	h_cli(&r, H_ARGS("recv", "--timeout", "3000", ids));
	cr_assert_eq(r.code, 4, "recv --timeout 3000 %s after a reader left: "
	    "expected exit 4 (timeout), got %d (stderr: %s)", ids, r.code,
	    r.err);
	h_run_free(&r);
}

/* A client that leaves while its read with a timeout waits for output. */
Test(faults, a_client_that_leaves_while_its_read_waits)
{
	char params[64], ids[32];
	struct h_res r;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "sleep", "300"));
	snprintf(params, sizeof(params), "{\"session\":%ld,\"timeout\":1500}",
	    id);
	leave_while_waiting("read", params, read_done, &id);
	h_cli(&r, H_ARGS("stop", h_idstr(id, ids, sizeof(ids))));
	cr_assert_eq(r.code, 0, "stop %s: exit %d (%s)", ids, r.code, r.err);
	h_run_free(&r);
	h_cli_expect_state(id, "exited", "after the stop");
}

/* The exec's work: gdb finishes the shell command and answers the next. */
static void
exec_done(void *arg)
{
	char ids[32];
	struct h_res r;

	h_idstr(*(long *)arg, ids, sizeof(ids));
	h_cli(&r, H_ARGS("exec", "--timeout", "20000", ids, "--", "print",
	    "6*7"));
	cr_assert(r.code == 0 && strstr(r.out, "= 42") != NULL, "exec %s print "
	    "6*7 after a client left its exec: expected \"= 42\", got exit %d: "
	    "%s (stderr: %s)", ids, r.code, r.out, r.err);
	h_run_free(&r);
}

/* A client that leaves while its exec (shell sleep 2) waits on gdb. */
Test(faults, a_client_that_leaves_while_its_exec_waits)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	char params[128], ids[32];
	struct h_res r;
	long id;

	id = h_cli_launch(H_ARGS("--", echo));
	snprintf(params, sizeof(params), "{\"session\":%ld,\"command\":"
	    "\"shell sleep 2\",\"timeout\":60000}", id);
	leave_while_waiting("exec", params, exec_done, &id);
	h_cli(&r, H_ARGS("stop", h_idstr(id, ids, sizeof(ids))));
	cr_assert_eq(r.code, 0, "stop %s: exit %d (%s)", ids, r.code, r.err);
	h_run_free(&r);
	h_cli_expect_state(id, "exited", "after the stop");
}
