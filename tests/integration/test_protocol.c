/*
 * The wire protocol over a raw socket: error replies for bad input, the line
 * limit, pipelining, and a stop that arrives while a launch is starting.
 */
#include "b64.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(protocol, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* Assert the daemon answers ping on c and on a fresh connection. */
static void
still_serving(struct h_conn *c, const char *after)
{
	json_t *r = h_conn_call(c, "ping", "{}", 10000);

	cr_assert(json_is_true(json_object_get(json_object_get(r, "result"),
	    "pong")), "after %s: no pong on the same connection", after);
	json_decref(r);
	cr_assert(h_daemon_ping(), "after %s: no pong on a new connection",
	    after);
}

/*
 * Send line on a fresh connection and assert the error reply: code, kind and
 * the echoed id (id_json is the id as JSON text: "null", "1", "\"x\"").
 */
static void
expect_error(const char *line, int code, const char *kind, const char *id_json)
{
	struct h_conn c;
	json_t *r, *want_id;
	char *shown;
	int e;

	e = h_conn_open(&c, H->sock);
	cr_assert_eq(e, 0, "connect %s: %s", H->sock, strerror(-e));
	cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0, "send");
	r = h_conn_recv(&c, 10000);
	cr_assert_not_null(r, "sent %s: expected an error reply, got none",
	    line);
	shown = json_dumps(r, JSON_COMPACT);
	cr_assert_not_null(json_object_get(r, "error"), "sent %s: expected an "
	    "error, got %s", line, shown);
	cr_assert_eq(h_jint(r, "error.code", 0), code, "sent %s: expected code "
	    "%d, got %s", line, code, shown);
	cr_assert(strcmp(h_jkind(r), kind) == 0, "sent %s: expected data.kind "
	    "%s, got %s", line, kind, shown);
	cr_assert(h_jstr(r, "error.message") && *h_jstr(r, "error.message"),
	    "sent %s: expected a message, got %s", line, shown);
	cr_assert_str_eq(h_jstr(r, "jsonrpc") ? h_jstr(r, "jsonrpc") : "",
	    "2.0", "sent %s: reply without jsonrpc 2.0: %s", line, shown);
	want_id = json_loads(id_json, JSON_DECODE_ANY, NULL);
	cr_assert(json_object_get(r, "id") != NULL, "sent %s: expected id %s, "
	    "got no id: %s", line, id_json, shown);
	cr_assert(json_equal(json_object_get(r, "id"), want_id), "sent %s: "
	    "expected id %s, got %s", line, id_json, shown);
	json_decref(want_id);
	free(shown);
	json_decref(r);
	still_serving(&c, line);
	h_conn_close(&c);
}

/* Not JSON: -32700 parse_error with id null; the daemon carries on. */
Test(protocol, parse_error)
{
	h_daemon_fg();
	expect_error("this is not json\n", -32700, "parse_error", "null");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\n", -32700, "parse_error",
	    "null");
}

/* Unknown method: -32601 method_not_found, id echoed. */
Test(protocol, method_not_found)
{
	h_daemon_fg();
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}\n",
	    -32601, "method_not_found", "1");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"nope\"}\n",
	    -32601, "method_not_found", "\"abc\"");
}

/* Bad params: -32602 invalid_params, id echoed. */
Test(protocol, invalid_params)
{
	h_daemon_fg();
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"launch\","
	    "\"params\":{\"kind\":\"exec\",\"argv\":42}}\n", -32602,
	    "invalid_params", "2");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"launch\","
	    "\"params\":{\"kind\":\"exec\",\"argv\":[]}}\n", -32602,
	    "invalid_params", "3");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\","
	    "\"params\":[1]}\n", -32602, "invalid_params", "4");
}

/* Invalid envelope: -32600 invalid_request. */
Test(protocol, invalid_request)
{
	h_daemon_fg();
	expect_error("{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}\n",
	    -32600, "invalid_request", "5");
	expect_error("[]\n", -32600, "invalid_request", "null");
}

/* Unknown session: code 1 no_such_session, id echoed. */
Test(protocol, no_such_session)
{
	h_daemon_fg();
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"status\","
	    "\"params\":{\"session\":999}}\n", 1, "no_such_session", "7");
	expect_error("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"stop\","
	    "\"params\":{\"session\":999}}\n", 1, "no_such_session", "8");
}

/* Build a ping request padded with spaces to exactly len content bytes + LF. */
static char *
padded_ping(size_t len)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":5,"
	    "\"method\":\"ping\"";
	char *s = malloc(len + 2);
	size_t h = strlen(head);

	memcpy(s, head, h);
	memset(s + h, ' ', len - h - 1);
	s[len - 1] = '}';
	s[len] = '\n';
	s[len + 1] = '\0';
	return s;
}

/* A line of exactly 1 MiB is served. */
Test(protocol, line_at_limit_served)
{
	struct h_conn c;
	char *s = padded_ping(1048576);
	json_t *r;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_send(&c, s, 1048577, 10000), 0, "send 1 MiB line");
	r = h_conn_recv(&c, 10000);
	cr_assert(json_is_true(json_object_get(json_object_get(r, "result"),
	    "pong")), "a ping line of exactly 1048576 bytes: expected pong, "
	    "got %s", r ? json_dumps(r, 0) : "nothing");
	cr_assert_eq(h_jint(r, "id", -1), 5, "expected id 5");
	json_decref(r);
	free(s);
	still_serving(&c, "a 1 MiB line");
	h_conn_close(&c);
}

/* A line over 1 MiB gets a limit error, then the connection closes. */
Test(protocol, line_over_limit_closes)
{
	struct h_conn c;
	char *s = padded_ping(1048577), *line;
	json_t *r;
	int e;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	e = h_conn_send(&c, s, 1048578, 10000);
	free(s);
	cr_assert(e == 0 || e == -EPIPE || e == -ECONNRESET, "send: %s",
	    strerror(-e));
	r = h_conn_recv(&c, 10000);
	cr_assert_not_null(r, "a 1048577-byte line: expected an error reply, "
	    "got none");
	cr_assert_eq(h_jint(r, "error.code", 0), 7, "over-long line: expected "
	    "error code 7, got %s", json_dumps(r, 0));
	cr_assert_str_eq(h_jkind(r), "limit", "over-long line: expected "
	    "data.kind limit, got %s", json_dumps(r, 0));
	cr_assert(json_is_null(json_object_get(r, "id")), "over-long line: "
	    "expected id null, got %s", json_dumps(r, 0));
	json_decref(r);
	line = h_conn_line(&c, 10000);
	cr_assert_null(line, "after the limit error: expected the connection "
	    "closed, got another line: %.200s", line);
	cr_assert(c.eof, "after the limit error: the connection is still open "
	    "10 s later");
	h_conn_close(&c);
	cr_assert(h_daemon_ping(), "after an over-long line: no pong on a new "
	    "connection");
}

/* 200 requests written in one go get 200 replies, one per id. */
Test(protocol, pipelined_200)
{
	struct h_conn c;
	char *buf, seen[201] = { 0 };
	size_t len = 0;
	json_t *r;
	long id;
	int i, n = 0, dup = 0;

	h_daemon_fg();
	buf = malloc(200 * 64);
	for (i = 1; i <= 200; i++)
		len += (size_t)sprintf(buf + len, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\"}\n", i);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_send(&c, buf, len, 10000), 0, "send");
	free(buf);
	while (n + dup < 200 && (r = h_conn_recv(&c, 10000)) != NULL) {
		id = (long)h_jint(r, "id", -1);
		cr_assert(json_is_true(json_object_get(json_object_get(r,
		    "result"), "pong")), "reply for id %ld: expected pong, got %s",
		    id, json_dumps(r, 0));
		cr_assert(id >= 1 && id <= 200, "unexpected id %ld", id);
		if (seen[id])
			dup++;
		else
			n++;
		seen[id] = 1;
		json_decref(r);
	}
	cr_assert_eq(dup, 0, "got %d duplicate replies", dup);
	for (i = 1; i <= 200; i++)
		cr_assert(seen[i], "no reply for id %d (got %d of 200)", i, n);
	h_conn_close(&c);
}

/*
 * A stop pipelined right behind a launch, by name, in the same write: the
 * daemon reads both before the keeper can report "started", so the stop
 * finds the session starting and the launch fails, once, with not_running.
 * (This relies on the daemon handling the lines of one read in order; the
 * launch cannot have completed in between.)
 */
Test(protocol, stop_while_starting)
{
	char m[96], *req, *shown;
	struct h_conn c;
	json_t *r, *launch = NULL, *stop = NULL, *s;
	int n, extra = 0;
	long id;

	h_daemon_fg();
	h_marker_new("DBGI_RACE", m, sizeof(m));
	*strchr(m, '=') = '\0';
	n = asprintf(&req,
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"launch\",\"params\":"
	    "{\"kind\":\"exec\",\"name\":\"racer\",\"argv\":[\"sleep\",\"100\"],"
	    "\"env\":{\"%s\":\"%s\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"stop\",\"params\":"
	    "{\"session\":\"racer\"}}\n", m, m + strlen(m) + 1);
	cr_assert_gt(n, 0, "asprintf");
	m[strlen(m)] = '=';
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_send(&c, req, (size_t)n, 10000), 0, "send");
	free(req);
	while ((launch == NULL || stop == NULL) &&
	    (r = h_conn_recv(&c, 20000)) != NULL) {
		id = (long)h_jint(r, "id", -1);
		if (id == 1 && launch == NULL)
			launch = r;
		else if (id == 2 && stop == NULL)
			stop = r;
		else {
			extra++;
			json_decref(r);
		}
	}
	cr_assert_not_null(launch, "no reply to the launch");
	cr_assert_not_null(stop, "no reply to the stop");

	/* Whatever the timing, the stop ends the session and nothing is left. */
	shown = json_dumps(stop, 0);
	s = json_array_get(json_object_get(json_object_get(stop, "result"),
	    "sessions"), 0);
	cr_assert_not_null(s, "stop: expected a result with the session, got "
	    "%s", shown);
	cr_assert(h_jstr(s, "state") && (strcmp(h_jstr(s, "state"), "exited") ==
	    0 || strcmp(h_jstr(s, "state"), "failed") == 0), "stop: expected "
	    "the session exited or failed, got %s", shown);
	free(shown);
	cr_assert(h_marker_gone(m), "after stop returned, processes carrying "
	    "%s are alive", m);

	/* Each request is answered exactly once. */
	r = h_conn_call(&c, "ping", "{}", 10000);
	cr_assert_not_null(r, "no pong after the race");
	json_decref(r);
	while ((r = h_conn_recv(&c, 500)) != NULL) {
		extra++;
		json_decref(r);
	}
	cr_assert_eq(extra, 0, "got %d replies beyond one per request", extra);

	shown = json_dumps(launch, 0);
	/*
	 * Both lines arrive in one segment and are handled in order before
	 * the loop can read the keeper's "started": a launch that still
	 * succeeds means the stop did not act on the starting session.
	 */
	cr_assert_null(json_object_get(launch, "result"), "launch and a stop "
	    "of it sent in one write: expected the launch to fail with "
	    "not_running (stopped while starting), got a result: %s", shown);
	cr_assert_eq(h_jint(launch, "error.code", 0), 2, "launch stopped while "
	    "starting: expected error code 2 (not_running), got %s", shown);
	cr_assert_str_eq(h_jkind(launch), "not_running", "launch: expected kind "
	    "not_running, got %s", shown);
	cr_assert(strstr(h_jstr(launch, "error.message"), "stopped while "
	    "starting") != NULL, "launch: expected a message saying it was "
	    "stopped while starting, got %s", shown);
	free(shown);
	json_decref(launch);
	json_decref(stop);
	h_conn_close(&c);
}

/*
 * subscribe: a launch that follows is reported as session.state
 * notifications, starting to exited with its exit record, and its console
 * output arrives as session.output, offsets contiguous from 0; after
 * unsubscribe nothing more comes.
 */
Test(protocol, subscribe_state_and_output)
{
	struct h_conn	 c;
	json_t		*m;
	char		 states[256] = "", line[256], *out = NULL;
	const char	*method, *data;
	unsigned char	*bytes;
	size_t		 n, outlen = 0;
	long long	 off;
	int		 e;

	h_daemon_fg();
	e = h_conn_open(&c, H->sock);
	cr_assert_eq(e, 0, "connect %s: %s", H->sock, strerror(-e));
	snprintf(line, sizeof line, "%s\n%s\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"launch\",\"params\":"
	    "{\"kind\":\"exec\",\"argv\":[\"sh\",\"-c\",\"echo hi; exit 4\"]}}");
	cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0, "send");
	while (strstr(states, "exited") == NULL) {
		m = h_conn_recv(&c, 20000);
		cr_assert_not_null(m, "no more messages; states so far: %s",
		    states);
		method = h_jstr(m, "method");
		if (method != NULL && strcmp(method, "session.state") == 0) {
			n = strlen(states);
			snprintf(states + n, sizeof states - n, "%s ",
			    h_jstr(m, "params.state"));
			if (strcmp(h_jstr(m, "params.state"), "exited") == 0)
				cr_assert_eq(h_jint(m, "params.exit.code", -1),
				    4, "exited without exit.code 4");
		} else if (method != NULL &&
		    strcmp(method, "session.output") == 0) {
			off = h_jint(m, "params.offset", -1);
			cr_assert_eq(off, (long long)outlen, "output offset %lld, "
			    "expected %zu", off, outlen);
			data = h_jstr(m, "params.data");
			bytes = b64_decode(data, strlen(data), &n);
			cr_assert_not_null(bytes, "output data is not base64");
			out = realloc(out, outlen + n + 1);
			memcpy(out + outlen, bytes, n);
			outlen += n;
			out[outlen] = '\0';
			free(bytes);
		}
		json_decref(m);
	}
	cr_assert_str_eq(states, "starting running stopping exited ",
	    "states seen: %s", states);
	cr_assert(out != NULL && strcmp(out, "hi\r\n") == 0,
	    "console output seen: \"%s\"", out ? out : "");
	free(out);

	m = h_conn_call(&c, "unsubscribe", "{}", 10000);
	cr_assert(json_is_false(json_object_get(json_object_get(m, "result"),
	    "subscribed")), "unsubscribe did not answer subscribed:false");
	json_decref(m);
	snprintf(line, sizeof line, "%s\n%s\n",
	    "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"launch\",\"params\":"
	    "{\"kind\":\"exec\",\"argv\":[\"true\"]}}",
	    "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\"}");
	cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0, "send");
	/* Only the two replies come back, in either order, no notification. */
	for (e = 0; e < 2; e++) {
		m = h_conn_recv(&c, 20000);
		cr_assert(m != NULL && h_jstr(m, "method") == NULL &&
		    (h_jint(m, "id", -1) == 10 || h_jint(m, "id", -1) == 11),
		    "expected the launch or ping reply, got %s",
		    m ? json_dumps(m, JSON_COMPACT) : "nothing");
		json_decref(m);
	}
	h_conn_close(&c);
}

/*
 * Clients that leave in the middle: a pipe of a target that prints without
 * end, a read and a logs request left waiting, and a subscriber, each
 * closed while the daemon is writing to it. The daemon serves on, and the
 * session still stops.
 */
Test(protocol, clients_that_leave_mid_stream)
{
	struct h_conn	 c;
	char		 line[256], ids[32];
	pid_t		 pid;
	json_t		*r;
	long		 yes, quiet;
	int		 i;

	/* Slow output: each write finds the queue empty and meets the close. */
	yes = h_cli_launch(H_ARGS("--kind", "exec", "--transport",
	    "--", "sh", "-c", "while :; do echo tick; sleep 0.01; done"));
	quiet = h_cli_launch(H_ARGS("--kind", "exec", "--transport",
	    "--", "sleep", "60"));
	pid = h_daemon_pid();
	cr_assert_gt(pid, 0, "no daemon answers hello");
	for (i = 0; i < 20; i++) {
		cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
		switch (i % 4) {
		case 0:
			snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\","
			    "\"id\":1,\"method\":\"pipe\",\"params\":"
			    "{\"session\":%ld}}\n", yes);
			break;
		case 1:
			snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\","
			    "\"id\":1,\"method\":\"read\",\"params\":"
			    "{\"session\":%ld}}\n", quiet);
			break;
		case 2:
			snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\","
			    "\"id\":1,\"method\":\"logs\",\"params\":"
			    "{\"session\":%ld,\"wait\":true,\"offset\":"
			    "1000000000}}\n", quiet);
			break;
		default:
			snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\","
			    "\"id\":1,\"method\":\"subscribe\",\"params\":"
			    "{}}\n");
			break;
		}
		cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0,
		    "send %s", line);
		/* A pipe's first bytes, or a subscriber's reply, are in flight. */
		if (i % 4 == 0 || i % 4 == 3)
			free(h_conn_line(&c, 10000));
		h_conn_close(&c);
		/* Let the daemon write into each closed connection. */
		if (i % 4 == 0)
			h_nap(50);
	}
	cr_assert_eq(h_daemon_pid(), pid, "the daemon did not survive clients "
	    "that left mid-stream");
	r = h_cli_json(H_ARGS("stop", "--timeout", "2000",
	    h_idstr(yes, ids, sizeof ids)));
	cr_assert_str_eq(h_jstr(json_array_get(json_object_get(r, "sessions"),
	    0), "state"), "exited", "stop after the clients left");
	json_decref(r);
	cr_assert(h_daemon_ping(), "no pong after the clients left");
}

/* The next message's method or reply id and state, as "state:S" or "reply:N". */
static void
next_message(struct h_conn *c, char *buf, size_t len)
{
	json_t *m = h_conn_recv(c, 10000);

	cr_assert_not_null(m, "expected a message, got none");
	if (json_object_get(m, "method") != NULL)
		snprintf(buf, len, "state:%s", h_jstr(m, "params.state") ?
		    h_jstr(m, "params.state") : "?");
	else
		snprintf(buf, len, "reply:%lld", h_jint(m, "id", -1));
	json_decref(m);
}

/*
 * A subscriber that launches and stops on one connection hears each state
 * before the reply it leads to, so reading until the stop's reply misses
 * no state.
 */
Test(protocol, states_come_before_the_replies_they_lead_to)
{
	static const char *const want[] = { "state:starting",
	    "state:running", "reply:2", "state:stopping", "state:exited",
	    "reply:3" };
	struct h_conn	 c;
	char		 got[6][64], line[256], all[512];
	size_t		 o = 0;
	json_t		*r;
	long long	 id;
	int		 i;

	/* The client starts the daemon; the raw connection then talks to it. */
	json_decref(h_cli_json(H_ARGS("version")));	/* starts the daemon */
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	r = h_conn_call(&c, "subscribe", "{\"output\":false}", 10000);
	json_decref(r);
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"exec\",\"argv\":[\"sleep\","
	    "\"30\"]}}\n");
	cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0, "send");
	for (i = 0; i < 3; i++)
		next_message(&c, got[i], sizeof got[i]);
	r = h_cli_json(H_ARGS("list"));
	id = h_jint(json_array_get(json_object_get(r, "sessions"), 0), "id",
	    0);
	json_decref(r);
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"
	    "\"stop\",\"params\":{\"session\":%lld}}\n", id);
	cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0, "send");
	for (i = 3; i < 6; i++)
		next_message(&c, got[i], sizeof got[i]);
	all[0] = '\0';
	for (i = 0; i < 6; i++)
		o += (size_t)snprintf(all + o, sizeof all - o, "%s ", got[i]);
	for (i = 0; i < 6; i++)
		cr_assert_str_eq(got[i], want[i], "messages in this order: %s",
		    all);
	h_conn_close(&c);
}

/*
 * Send text on a new connection and close it while the daemon is stopped,
 * so that every reply the daemon makes meets a client already gone.
 */
static void
send_and_vanish(pid_t daemon, const char *text)
{
	struct h_conn c;

	cr_assert_eq(kill(daemon, SIGSTOP), 0, "SIGSTOP the daemon");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_send(&c, text, strlen(text), 10000), 0, "send");
	h_conn_close(&c);
	cr_assert_eq(kill(daemon, SIGCONT), 0, "SIGCONT the daemon");
}

/*
 * Replies that meet a closed peer: a pipe, an attach, a launch by a
 * subscriber, and a launch after a line that is not JSON. The daemon (the
 * sanitizer build's most of all) serves on, a second pipe of the same
 * session is taken, and the launches' sessions run.
 */
Test(protocol, replies_to_clients_already_gone)
{
	struct h_conn	 c;
	char		 line[512], ids[32];
	json_t		*r;
	pid_t		 pid;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport",
	    "--", "sh", "-c", "while :; do echo tick; sleep 0.01; done"));
	pid = h_daemon_pid();
	cr_assert_gt(pid, 0, "no daemon answers hello");
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"pipe\",\"params\":{\"session\":%ld}}\n", id);
	send_and_vanish(pid, line);
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"attach\",\"params\":{\"session\":%ld}}\n", id);
	send_and_vanish(pid, line);
	send_and_vanish(pid, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"subscribe\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"exec\",\"name\":\"sub\","
	    "\"argv\":[\"sleep\",\"30\"]}}\n");
	send_and_vanish(pid, "not json\n{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"launch\",\"params\":{\"kind\":\"exec\",\"name\":"
	    "\"bad\",\"argv\":[\"sleep\",\"30\"]}}\n");
	cr_assert_eq(h_daemon_pid(), pid, "the daemon did not survive replies "
	    "to clients that were gone");
	/* The first pipe's client is gone: the session may be piped again. */
	h_idstr(id, ids, sizeof ids);
	h_cli_expect_state(id, "running", "after the vanished pipe");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(line, sizeof line, "{\"session\":%ld}", id);
	r = h_conn_call(&c, "pipe", line, 10000);
	cr_assert(json_is_true(json_object_get(json_object_get(r, "result"),
	    "raw")), "a second pipe of session %s: %s", ids,
	    h_jstr(r, "error.message") ? h_jstr(r, "error.message") : "?");
	json_decref(r);
	h_conn_close(&c);
	/* Both launches went on without their clients. */
	cr_assert(h_cli_wait_status(id + 1, "state", "running", H_WAIT_BOUND),
	    "the subscriber's launch never ran");
	cr_assert(h_cli_wait_status(id + 2, "state", "running", H_WAIT_BOUND),
	    "the launch after bad JSON never ran");
	r = h_cli_json(H_ARGS("stop", "--all", "--timeout", "2000"));
	json_decref(r);
	cr_assert_eq(h_daemon_pid(), pid, "the daemon did not survive stop");
}

/*
 * A client that writes more lines than the daemon runs in one turn (64)
 * and goes: the lines past the turn run on a later turn, though the first
 * reply already found the client gone, so its last line's launch runs.
 */
Test(protocol, a_gone_clients_lines_past_one_turn_all_run)
{
	struct h_conn	 c;
	char	*text, *p;
	size_t	 size = 96 * 80 + 512;
	pid_t	 pid;
	long	 id;
	int	 i;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "30"));
	pid = h_daemon_pid();
	cr_assert_gt(pid, 0, "no daemon answers hello");
	text = p = malloc(size);
	cr_assert_not_null(text);
	p += sprintf(p, "not json\n");
	for (i = 0; i < 96; i++)
		p += sprintf(p, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"ping\"}\n", i + 1);
	sprintf(p, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"launch\","
	    "\"params\":{\"kind\":\"exec\",\"name\":\"last\","
	    "\"argv\":[\"sleep\",\"30\"]}}\n");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	json_decref(h_conn_call(&c, "subscribe", "{\"output\":false}", 10000));
	send_and_vanish(pid, text);
	free(text);
	cr_assert(h_conn_wait_note(&c, "session.state", "params.state", "running",
	    H_WAIT_BOUND), "the launch on the 98th line of a client gone "
	    "never ran");
	h_conn_close(&c);
	cr_assert(h_cli_wait_status(id + 1, "state", "running", H_WAIT_BOUND),
	    "the 98th line's session never ran");
	cr_assert_eq(h_daemon_pid(), pid, "the daemon did not survive");
	json_decref(h_cli_json(H_ARGS("stop", "--all", "--timeout", "2000")));
}

/* Launch on c (the reply read), exec kind, marked, with params extra. */
static long
launch_on(struct h_conn *c, const char *marker, const char *extra)
{
	char params[1024];
	json_t *r;
	long id;

	snprintf(params, sizeof params, "{\"kind\":\"exec\",\"argv\":[\"sh\","
	    "\"-c\",\"%s\"],\"env\":{\"%.*s\":\"%s\"}%s}", H_ESCAPING_TREE,
	    (int)strcspn(marker, "="), marker, strchr(marker, '=') + 1, extra);
	r = h_conn_call(c, "launch", params, 10000);
	id = h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "launch %s: %s", params, json_dumps(r,
	    JSON_COMPACT));
	json_decref(r);
	return id;
}

/*
 * A leased session ends, tree and all, when the connection that launched
 * it closes; one without a lease launched on the same connection runs on;
 * one with a grace runs through it, then ends.
 */
Test(protocol, a_lease_ends_with_its_connection)
{
	struct h_conn c;
	struct h_snap snap;
	char m1[96], m2[96], m3[96], report[4096];
	long leased, free_id, graced;
	json_t *st;
	double t0;

	json_decref(h_cli_json(H_ARGS("version")));	/* starts the daemon */
	h_marker_new("DBGT_LEASE", m1, sizeof m1);
	h_marker_new("DBGT_FREE", m2, sizeof m2);
	h_marker_new("DBGT_GRACE", m3, sizeof m3);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	leased = launch_on(&c, m1, ",\"lease\":true");
	free_id = launch_on(&c, m2, "");
	graced = launch_on(&c, m3, ",\"lease\":true,\"lease_grace\":3000");
	h_marker_wait(m1, "sleep", 4);
	h_snap_take(&snap, m1);
	h_conn_close(&c);
	t0 = h_now();
	st = h_cli_wait_ended(leased, H_WAIT_BOUND);
	cr_assert_not_null(st, "the leased session did not end when its "
	    "connection closed");
	json_decref(st);
	cr_assert(h_snap_wait_gone(&snap, m1, H_WAIT_BOUND, report,
	    sizeof report), "processes of the leased session left: %s",
	    report);
	if (h_now() - t0 < 2.5)
		h_cli_expect_state(graced, "running", "inside its lease grace");
	h_cli_expect_state(free_id, "running", "without a lease");
	st = h_cli_wait_ended(graced, H_WAIT_BOUND);
	cr_assert_not_null(st, "the graced session did not end after its "
	    "grace");
	json_decref(st);
	h_cli_expect_state(free_id, "running", "without a lease, later");
}

/* launch --lease alone would end at once: a usage error, no daemon asked. */
Test(protocol, lease_without_wait_is_a_usage_error)
{
	struct h_res r;

	h_cli(&r, H_ARGS("launch", "--lease", "--kind", "exec", "--", "true"));
	cr_assert_eq(r.code, 2, "exit %d (%s)", r.code, r.err);
	cr_assert_not_null(strstr(r.err, "--lease goes with"), "%s", r.err);
	h_run_free(&r);
}

/*
 * The manual's promises a rig author checked: an attach to an ended
 * session carries the session object in data.session, and the
 * session.state of a failed session says why in "error".
 */
Test(protocol, ended_sessions_say_how_they_ended)
{
	struct h_conn c;
	char params[256];
	json_t *r;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	json_decref(h_cli_wait_ended(id, H_WAIT_BOUND));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(params, sizeof params, "{\"session\":%ld}", id);
	r = h_conn_call(&c, "attach", params, 10000);
	cr_assert_eq(h_jint(r, "error.data.session.id", -1), id, "attach to "
	    "an ended session: %s", json_dumps(r, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(r, "error.data.session.state") ? h_jstr(r,
	    "error.data.session.state") : "", "exited");
	json_decref(r);
	json_decref(h_conn_call(&c, "subscribe", "{\"output\":false}", 10000));
	/* Sent raw: the notification comes before the reply it leads to. */
	snprintf(params, sizeof params, "{\"jsonrpc\":\"2.0\",\"id\":9,"
	    "\"method\":\"launch\",\"params\":{\"kind\":\"exec\",\"argv\":"
	    "[\"/nonexistent/program\"]}}\n");
	cr_assert_eq(h_conn_send(&c, params, strlen(params), 10000), 0, "send");
	cr_assert(h_conn_wait_note(&c, "session.state", "params.error", NULL,
	    H_WAIT_BOUND), "no session.state with the error");
	h_conn_close(&c);
}

/*
 * A connection never blocks itself: six 512 KiB writes to a target that
 * never reads wait for room, and a ping sent behind them is answered at
 * once, before any of them.
 */
Test(protocol, a_ping_behind_waiting_writes_is_answered)
{
	struct h_conn c;
	char *line, *b64, *req;
	size_t n = 512 * 1024, i;
	unsigned char *raw;
	json_t *m;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "sleep", "60"));
	raw = calloc(1, n);
	memset(raw, 'x', n);
	b64 = b64_encode(raw, n);
	free(raw);
	cr_assert_not_null(b64, "base64");
	req = malloc(strlen(b64) + 256);
	cr_assert_not_null(req, "out of memory");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	for (i = 0; i < 6; i++) {
		sprintf(req, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":"
		    "\"write\",\"params\":{\"session\":%ld,\"data\":\"%s\"}}\n",
		    i + 1, id, b64);
		cr_assert_eq(h_conn_send(&c, req, strlen(req), 10000), 0,
		    "send write %zu", i + 1);
	}
	free(b64);
	sprintf(req, "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}\n");
	cr_assert_eq(h_conn_send(&c, req, strlen(req), 10000), 0, "send ping");
	free(req);
	/* The first writes fit the pipe and the queue; the ping comes next. */
	for (;;) {
		line = h_conn_line(&c, 5000);
		cr_assert_not_null(line, "no ping reply while writes wait");
		m = json_loads(line, 0, NULL);
		free(line);
		if (h_jint(m, "id", -1) == 99) {
			cr_assert(json_is_true(h_jpath(m, "result.pong")),
			    "ping: not a pong");
			json_decref(m);
			break;
		}
		json_decref(m);
	}
	h_conn_close(&c);
}

/*
 * A subscriber to a session's target stream gets every byte of 80 KiB of
 * target output, in order, as session.output with stream "target", then
 * its end; meanwhile read says the output is busy.
 */
Test(protocol, a_target_stream_subscriber_gets_every_byte)
{
	struct h_conn c;
	char params[256], *want, *line;
	struct h_bytes got = { calloc(1, 1), 0 };
	size_t n = 8192 * 10, i, len;
	unsigned char *bytes;
	json_t *m, *r;
	bool eof = false;
	double end;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", "read go; i=0; while [ $i -lt 8192 ]; do printf '%09d\\n' "
	    "$i; i=$((i+1)); done"));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(params, sizeof params, "{\"session\":%ld,\"streams\":"
	    "[\"target\"]}", id);
	r = h_conn_call(&c, "subscribe", params, 10000);
	cr_assert(json_is_true(h_jpath(r, "result.subscribed")), "subscribe: "
	    "%s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	snprintf(params, sizeof params, "{\"session\":%ld,\"timeout\":0}", id);
	r = h_conn_call(&c, "read", params, 10000);
	cr_assert_str_eq(h_jkind(r), "busy", "read beside a target subscriber");
	json_decref(r);
	snprintf(params, sizeof params, "{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"write\",\"params\":{\"session\":%ld,\"data\":"
	    "\"Z28K\"}}\n", id);
	cr_assert_eq(h_conn_send(&c, params, strlen(params), 10000), 0, "go");
	end = h_now() + H_WAIT_BOUND / 1000.0;
	while (!eof && h_now() < end &&
	    (line = h_conn_line(&c, 5000)) != NULL) {
		m = json_loads(line, 0, NULL);
		free(line);
		if (h_jstr(m, "params.stream") != NULL &&
		    strcmp(h_jstr(m, "params.stream"), "target") == 0) {
			cr_assert_eq(h_jint(m, "params.offset", -1),
			    (long long)got.len, "offsets follow each other");
			bytes = b64_decode(h_jstr(m, "params.data"),
			    strlen(h_jstr(m, "params.data")), &len);
			h_bytes_add(&got, bytes, len);
			free(bytes);
			eof = json_is_true(h_jpath(m, "params.eof"));
		}
		json_decref(m);
	}
	cr_assert(eof, "no end of the target stream after %zu bytes", got.len);
	want = malloc(n + 1);
	for (i = 0; i < 8192; i++)
		snprintf(want + i * 10, 11, "%09zu\n", i);
	cr_assert_eq(got.len, n, "got %zu bytes of %zu", got.len, n);
	cr_assert(memcmp(got.p, want, n) == 0, "the bytes differ");
	free(want);
	free(got.p);
	h_conn_close(&c);
}

/* The resident memory of a process in KiB, from /proc/PID/status. */
static long
rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Whether the session's console log holds at least 32 MiB. */
static bool
log_is_big(void *arg)
{
	struct h_conn *c = arg;
	json_t *r = h_conn_call(c, "logs", "{\"session\":1,\"max\":1}", 10000);
	bool big = h_jint(r, "result.size", 0) >= 32LL * 1024 * 1024;

	json_decref(r);
	return big;
}

/*
 * Three subscribers that stop reading while a session prints as fast as it
 * can cost the daemon little (under 16 MiB more), a ping is answered
 * meanwhile, and a stalled one, once it reads, is told what it missed with
 * session.output.dropped (where to catch up with logs).
 */
Test(protocol, stalled_subscribers_cost_little)
{
	struct h_conn stalled[3], c;
	long before, after;
	pid_t pid;
	int i;

	json_decref(h_cli_json(H_ARGS("version")));	/* starts the daemon */
	pid = h_daemon_pid();
	for (i = 0; i < 3; i++) {
		cr_assert_eq(h_conn_open(&stalled[i], H->sock), 0, "connect");
		json_decref(h_conn_call(&stalled[i], "subscribe", "{}", 10000));
	}
	before = rss_kib(pid);
	cr_assert_eq(h_cli_launch(H_ARGS("--kind", "exec", "--", "yes",
	    "a line of output that a session prints as fast as it can")), 1,
	    "the printing session is session 1");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	/* A daemon under valgrind moves output some ten times slower. */
	cr_assert(h_wait_for(log_is_big, &c, H->wrapper[0] != '\0' ?
	    10 * H_WAIT_BOUND : H_WAIT_BOUND), "32 MiB of output never came");
	after = rss_kib(pid);
	cr_assert(h_daemon_ping(), "no ping while subscribers stall");
	cr_assert_lt(after - before, 16 * 1024, "three stalled subscribers "
	    "cost %ld KiB", after - before);
	json_decref(h_conn_call(&c, "stop", "{\"session\":1,\"timeout\":0}",
	    H_WAIT_BOUND));
	h_conn_close(&c);
	cr_assert(h_conn_wait_note(&stalled[0], "session.output.dropped",
	    "params.bytes", NULL, H_WAIT_BOUND), "a stalled subscriber was not "
	    "told what it missed");
	for (i = 0; i < 3; i++)
		h_conn_close(&stalled[i]);
}

/*
 * subscribe answers with a snapshot of the sessions it covers, so status
 * and notifications leave no gap; taking one session out of a
 * subscription to all of them is refused rather than silently ignored.
 */
Test(protocol, subscribe_snapshots_and_unsubscribe_says_what_it_does)
{
	struct h_conn c;
	char params[64];
	json_t *r;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "30"));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	r = h_conn_call(&c, "subscribe", "{\"output\":false}", 10000);
	cr_assert_eq(h_jint(json_array_get(h_jpath(r, "result.sessions"), 0),
	    "id", -1), id, "the snapshot: %s", json_dumps(r, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(json_array_get(h_jpath(r, "result.sessions"),
	    0), "state"), "running");
	json_decref(r);
	snprintf(params, sizeof params, "{\"session\":%ld}", id);
	r = h_conn_call(&c, "unsubscribe", params, 10000);
	cr_assert_str_eq(h_jkind(r), "invalid_params", "one session out of "
	    "all: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	r = h_conn_call(&c, "unsubscribe", "{}", 10000);
	cr_assert(json_is_false(h_jpath(r, "result.subscribed")), "unsubscribe "
	    "all");
	json_decref(r);
	h_conn_close(&c);
}

/*
 * A batch (JSON-RPC 2.0 section 6) gets one array of replies, in the
 * order they are answered, none for its notifications; a member that is
 * no request gets its own error in the array; a batch of notifications
 * only gets nothing, and a request after it is answered as usual.
 */
Test(protocol, a_batch_gets_an_array_of_replies)
{
	struct h_conn c;
	const char *batch = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"ping\"},1,"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}]\n";
	const char *quiet = "[{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}]\n"
	    "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n";
	json_t *r;

	json_decref(h_cli_json(H_ARGS("version")));	/* starts the daemon */
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_send(&c, batch, strlen(batch), 10000), 0, "send");
	r = h_conn_recv(&c, 10000);
	cr_assert(json_is_array(r) && json_array_size(r) == 3, "a batch of "
	    "four with one notification: %s", json_dumps(r, JSON_COMPACT));
	cr_assert_eq(h_jint(json_array_get(r, 0), "id", -1), 1);
	cr_assert(json_is_true(h_jpath(json_array_get(r, 0), "result.pong")));
	cr_assert_eq(h_jint(json_array_get(r, 1), "error.code", 0), -32600,
	    "the member that is no request");
	cr_assert_eq(h_jint(json_array_get(r, 2), "error.code", 0), -32601,
	    "the unknown method");
	json_decref(r);
	cr_assert_eq(h_conn_send(&c, quiet, strlen(quiet), 10000), 0, "send");
	r = h_conn_recv(&c, 10000);
	cr_assert_eq(h_jint(r, "id", -1), 9, "after a batch of notifications, "
	    "the next reply is the ping's: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	h_conn_close(&c);
}

/*
 * A subscriber that reads nothing does not hold the daemon's exit: after
 * shutdown its unread replies get a second, then it is closed.
 */
Test(protocol, a_client_that_reads_nothing_does_not_hold_the_exit)
{
	struct h_conn stalled;
	struct h_res r;
	long id;
	int st;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&stalled, H->sock), 0, "connect");
	json_decref(h_conn_call(&stalled, "subscribe", "{}", 10000));
	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "yes", "printing"));
	cr_assert_gt(id, 0, "launch");
	/* Fill the stalled client's socket and the daemon's queue for it. */
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND));
	h_cli(&r, H_ARGS("shutdown"));
	cr_assert_eq(r.code, 0, "shutdown: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	st = h_daemon_fg_wait(H_WAIT_BOUND);
	cr_assert_neq(st, -1, "the daemon did not exit beside a client that "
	    "reads nothing");
	h_conn_close(&stalled);
}
