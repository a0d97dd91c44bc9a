/* The protocol's methods: one table, one handler each. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "b64.h"
#include "daemon.h"
#include "signame.h"

#define PROTOCOL_VERSION 1

/* Refuse a request; notifications are never answered. */
static void
method_fail(struct conn *c, struct rpc_request *req, struct rpc_error *err,
    json_t *data)
{
	if (req->id == NULL) {
		json_decref(data);
		return;
	}
	conn_error(c, req->id, err, data);
}

/* hello: who this daemon is. */
static void
method_hello(struct conn *c, struct rpc_request *req)
{
	conn_reply(c, req->id, json_pack("{s:s, s:i, s:i, s:o}",
	    "version", DBGCTL_VERSION, "protocol", PROTOCOL_VERSION,
	    "pid", (int)getpid(), "capabilities", backend_names()));
}

/* ping: proof of life. */
static void
method_ping(struct conn *c, struct rpc_request *req)
{
	conn_reply(c, req->id, json_pack("{s:b}", "pong", 1));
}

/* launch: start a session; answered once it runs or has failed. */
static void
method_launch(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;
	struct pending		*p;

	if ((s = session_create(req->params, &err)) == NULL) {
		method_fail(c, req, &err, NULL);
		return;
	}
	p = pending_new(P_LAUNCH, c, req->id, req->params);
	pending_add_session(p, s);
	pending_poke();
}

/* list: every session of this daemon's life. */
static void
method_list(struct conn *c, struct rpc_request *req)
{
	struct session	*s;
	json_t		*list = json_array();

	TAILQ_FOREACH(s, &dmn.sessions, entry)
		json_array_append_new(list, status_json(s));
	conn_reply(c, req->id, json_pack("{s:o}", "sessions", list));
}

/* status: one session. */
static void
method_status(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;

	if ((s = session_find(json_object_get(req->params, "session"),
	    &err)) == NULL) {
		method_fail(c, req, &err, NULL);
		return;
	}
	conn_reply(c, req->id, status_json(s));
}

/* wait: answered when the session has ended. */
static void
method_wait(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;
	struct pending		*p;
	long long		 timeout = -1;

	if ((s = session_find(json_object_get(req->params, "session"),
	    &err)) == NULL ||
	    rpc_param_int(req->params, "timeout", false, 0, INT32_MAX,
	    &timeout, &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	p = pending_new(P_WAIT, c, req->id, req->params);
	pending_add_session(p, s);
	if (timeout >= 0)
		pending_arm_timeout(p, timeout);
	pending_poke();
}

/* Append a session to a growing list. */
static void
method_push(struct session ***list, size_t *n, struct session *s)
{
	*list = reallocarray(*list, *n + 1, sizeof **list);
	if (*list == NULL)
		log_fatal("out of memory");
	(*list)[(*n)++] = s;
}

/* Collect the sessions a stop names (session, sessions or all), all or none. */
static int
method_stop_targets(json_t *params, struct session ***list, size_t *n,
    struct rpc_error *err)
{
	struct session	*s;
	json_t		*many, *ref;
	size_t		 i;
	bool		 all = false;

	if (rpc_param_bool(params, "all", &all, err) != 0)
		return -1;
	if (all) {
		TAILQ_FOREACH(s, &dmn.sessions, entry)
			if (!session_ended(s))
				method_push(list, n, s);
		return 0;
	}
	many = json_object_get(params, "sessions");
	if ((ref = json_object_get(params, "session")) != NULL &&
	    json_is_null(ref))
		ref = NULL;
	if ((many == NULL || !json_is_array(many)) && ref == NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "name a \"session\", "
		    "\"sessions\" (an array) or \"all\"");
		return -1;
	}
	if (ref != NULL) {
		if ((s = session_find(ref, err)) == NULL)
			return -1;
		method_push(list, n, s);
	}
	json_array_foreach(many, i, ref) {
		if ((s = session_find(ref, err)) == NULL)
			return -1;
		method_push(list, n, s);
	}
	return 0;
}

/* stop: end sessions; answered when every process of them is gone. */
static void
method_stop(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct pending		*p;
	struct session	       **list = NULL;
	long long		 timeout = -1;
	size_t			 i, n = 0;

	if (rpc_param_int(req->params, "timeout", false, 0, STOP_TIMEOUT_MAX,
	    &timeout, &err) != 0 ||
	    method_stop_targets(req->params, &list, &n, &err) != 0) {
		free(list);
		method_fail(c, req, &err, NULL);
		return;
	}
	p = pending_new(P_STOP, c, req->id, req->params);
	for (i = 0; i < n; i++)
		pending_add_session(p, list[i]);
	/* Stopping may answer (and free) p; the list is ours. */
	for (i = 0; i < n; i++)
		session_stop(list[i], timeout);
	free(list);
	pending_poke();
}

/* Parse the signal parameter: a name or a number, INT by default. */
static int
method_signal_number(json_t *params, struct rpc_error *err)
{
	json_t	*v = json_object_get(params, "signal");
	int	 sig = -1;

	if (v == NULL || json_is_null(v))
		return SIGINT;
	if (json_is_string(v))
		sig = signame_parse(json_string_value(v));
	else if (json_is_integer(v) && json_integer_value(v) > 0 &&
	    json_integer_value(v) < NSIG)
		sig = (int)json_integer_value(v);
	if (sig <= 0)
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"signal\" must name "
		    "a signal (INT, SIGINT or 2)");
	return sig;
}

/* signal: to the foreground process group of the session's pty. */
static void
method_signal(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;
	pid_t			 pgrp;
	int			 sig;

	if ((s = session_find(json_object_get(req->params, "session"),
	    &err)) == NULL ||
	    (sig = method_signal_number(req->params, &err)) < 0 ||
	    session_signal(s, sig, &pgrp, &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	conn_reply(c, req->id, json_pack("{s:i, s:i}", "signal", sig, "pgrp",
	    (int)pgrp));
}

/* The logs result: up to max bytes of console output from offset off. */
json_t *
method_logs_result(struct session *s, uint64_t off, size_t max)
{
	json_t	*v;
	size_t	 n;
	char	*buf, *text;

	if ((buf = malloc(max)) == NULL)
		log_fatal("out of memory");
	n = console_read(&s->console, off, buf, max);
	text = b64_encode((unsigned char *)buf, n);
	free(buf);
	if (text == NULL)
		log_fatal("out of memory");
	v = json_pack("{s:s, s:I, s:I, s:I, s:b}", "data", text,
	    "offset", (json_int_t)off, "next_offset", (json_int_t)(off + n),
	    "size", (json_int_t)console_size(&s->console), "ended",
	    session_ended(s));
	free(text);
	return v;
}

/*
 * logs: console output from an offset or the last lines, maybe waiting.
 * The start is resolved once here; a waiting request only compares sizes.
 */
static void
method_logs(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;
	struct pending		*p;
	json_t			*params;
	long long		 off = 0, lines = -1, max = LOGS_MAX;
	bool			 wait = false;

	if ((s = session_find(json_object_get(req->params, "session"),
	    &err)) == NULL ||
	    rpc_param_int(req->params, "offset", false, 0, 1LL << 53, &off,
	    &err) != 0 ||
	    rpc_param_int(req->params, "lines", false, 0, 100000000, &lines,
	    &err) != 0 ||
	    rpc_param_int(req->params, "max", false, 1, 1LL << 30, &max,
	    &err) != 0 ||
	    rpc_param_bool(req->params, "wait", &wait, &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	if (lines >= 0)
		off = console_tail_offset(&s->console, lines);
	if (max > LOGS_MAX)
		max = LOGS_MAX;
	params = json_pack("{s:I, s:I, s:b}", "offset", (json_int_t)off, "max",
	    (json_int_t)max, "wait", wait);
	p = pending_new(P_LOGS, c, req->id, params);
	json_decref(params);
	pending_add_session(p, s);
	pending_poke();
}

/* Find the session a transport request names, and check it has a transport. */
static struct session *
method_transport(struct rpc_request *req, struct rpc_error *err)
{
	struct session	*s;
	const char	*stream = "target";

	if ((s = session_find(json_object_get(req->params, "session"),
	    err)) == NULL ||
	    rpc_param_string(req->params, "stream", false, &stream, err) != 0)
		return NULL;
	if (strcmp(stream, "target") != 0 && strcmp(stream, "console") != 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"stream\" must be "
		    "\"target\" or \"console\"");
		return NULL;
	}
	if (strcmp(stream, "target") == 0 && !s->transport.enabled) {
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu was "
		    "launched without --transport", s->id);
		return NULL;
	}
	return s;
}

/* read: 1..max bytes of target output as soon as any are there. */
static void
method_read(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;
	struct pending		*p;
	long long		 n, timeout = -1;

	if ((s = method_transport(req, &err)) == NULL ||
	    rpc_param_int(req->params, "max", false, 1, 1LL << 30, &n,
	    &err) != 0 ||
	    rpc_param_int(req->params, "timeout", false, 0, INT32_MAX,
	    &timeout, &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	if (json_object_get(req->params, "stream") != NULL &&
	    strcmp(json_string_value(json_object_get(req->params, "stream")),
	    "console") == 0) {
		rpc_error_set(&err, RPC_INVALID_PARAMS, "read the console "
		    "with the logs method");
		method_fail(c, req, &err, NULL);
		return;
	}
	/* A timeout of 0 means: answer now, with data, EOF or timeout. */
	if (timeout == 0 && s->transport.len == 0 && !s->transport.out_eof) {
		rpc_error_set(&err, RPC_TIMEOUT, "no target output is waiting");
		method_fail(c, req, &err, NULL);
		return;
	}
	p = pending_new(P_READ, c, req->id, req->params);
	pending_add_session(p, s);
	if (timeout > 0)
		pending_arm_timeout(p, timeout);
	pending_poke();
}

/* Write bytes to the console pty, as typed at its terminal. */
static int
method_write_console(struct session *s, const char *data, size_t len,
    struct rpc_error *err)
{
	if (session_ended(s) || s->console.master == -1) {
		rpc_error_set(err, RPC_NOT_RUNNING, "session %lu has ended",
		    s->id);
		return -1;
	}
	/* A pty takes input slowly; its queue is bounded like the target's. */
	if (console_queued(&s->console) > TRANSPORT_MAX) {
		rpc_error_set(err, RPC_LIMIT, "the console of session %lu is "
		    "not taking input (%zu bytes queued); try again", s->id,
		    console_queued(&s->console));
		return -1;
	}
	if (console_write(&s->console, data, len) != 0) {
		rpc_error_set(err, RPC_NOT_RUNNING, "the console of session "
		    "%lu is closed", s->id);
		return -1;
	}
	return 0;
}

/* write: bytes for the target's stdin (or the console); waits for room. */
static void
method_write(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;
	struct pending		*p;
	const char		*text = "", *stream = "target";
	unsigned char		*data;
	size_t			 len;
	bool			 eof = false;

	if ((s = method_transport(req, &err)) == NULL ||
	    rpc_param_string(req->params, "data", false, &text, &err) != 0 ||
	    rpc_param_string(req->params, "stream", false, &stream, &err) != 0 ||
	    rpc_param_bool(req->params, "eof", &eof, &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	if ((data = b64_decode(text, strlen(text), &len)) == NULL) {
		rpc_error_set(&err, RPC_INVALID_PARAMS, "\"data\" is not "
		    "base64");
		method_fail(c, req, &err, NULL);
		return;
	}
	if (strcmp(stream, "console") == 0) {
		if (method_write_console(s, (char *)data, len, &err) != 0)
			method_fail(c, req, &err, NULL);
		else
			conn_reply(c, req->id, json_pack("{s:I}", "written",
			    (json_int_t)len));
		free(data);
		return;
	}
	p = pending_new(P_WRITE, c, req->id, req->params);
	pending_add_session(p, s);
	p->data = (char *)data;
	p->len = len;
	s->transport.nwrites++;
	/* Writes leave in order; while this one waits, read no more requests. */
	if (s->transport.nwrites > 1 ||
	    transport_queued(&s->transport) > TRANSPORT_MAX)
		conn_pause(c);
	pending_poke();
}

/* pipe: the connection becomes a raw byte stream to and from the target. */
static void
method_pipe(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;

	if ((s = method_transport(req, &err)) == NULL) {
		method_fail(c, req, &err, NULL);
		return;
	}
	if (!s->transport.enabled) {
		rpc_error_set(&err, RPC_NOT_SUPPORTED, "session %lu was "
		    "launched without --transport", s->id);
		method_fail(c, req, &err, NULL);
		return;
	}
	if (s->transport.out_eof && s->transport.len == 0) {
		rpc_error_set(&err, RPC_NOT_RUNNING, "the target's output of "
		    "session %lu has ended", s->id);
		method_fail(c, req, &err, NULL);
		return;
	}
	if (s->transport.raw != NULL) {
		rpc_error_set(&err, RPC_LIMIT, "session %lu is already piped",
		    s->id);
		method_fail(c, req, &err, NULL);
		return;
	}
	if (c->npending > 0 || req->id == NULL) {
		rpc_error_set(&err, RPC_INVALID_REQUEST, "pipe must be the only "
		    "request in flight on its connection");
		method_fail(c, req, &err, NULL);
		return;
	}
	conn_reply(c, req->id, json_pack("{s:b}", "raw", 1));
	conn_go_raw(c, &s->transport);
}

/* attach: the connection becomes the console's, raw both ways. */
static void
method_attach(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;
	struct pending		*p;
	long long		 lines = ATTACH_REPLAY_LINES;

	if ((s = session_find(json_object_get(req->params, "session"),
	    &err)) == NULL ||
	    rpc_param_int(req->params, "lines", false, 0, 100000, &lines,
	    &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	if (c->npending > 0 || req->id == NULL || c->raw != NULL) {
		rpc_error_set(&err, RPC_INVALID_REQUEST, "attach must be the "
		    "only request in flight on its connection");
		method_fail(c, req, &err, NULL);
		return;
	}
	/* A session still starting is attached to once it runs. */
	p = pending_new(P_ATTACH, c, req->id, req->params);
	pending_add_session(p, s);
	pending_poke();
}

/* resize: the console's window size, with a forced redraw if asked. */
static void
method_resize(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s;
	long long		 rows = 0, cols = 0;
	bool			 redraw = false;

	if ((s = session_find(json_object_get(req->params, "session"),
	    &err)) == NULL ||
	    rpc_param_int(req->params, "rows", true, 1, 65535, &rows,
	    &err) != 0 ||
	    rpc_param_int(req->params, "cols", true, 1, 65535, &cols,
	    &err) != 0 ||
	    rpc_param_bool(req->params, "redraw", &redraw, &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	if (session_ended(s) || attach_resize(s, rows, cols, redraw) != 0) {
		rpc_error_set(&err, RPC_NOT_RUNNING, "session %lu has no "
		    "console", s->id);
		method_fail(c, req, &err, NULL);
		return;
	}
	conn_reply(c, req->id, json_pack("{s:I, s:I}", "rows",
	    (json_int_t)rows, "cols", (json_int_t)cols));
}

/* subscribe: session.state (and session.output) notifications from now on. */
static void
method_subscribe(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s = NULL;
	json_t			*ref = json_object_get(req->params, "session");
	bool			 output = true;

	if ((ref != NULL && !json_is_null(ref) &&
	    (s = session_find(ref, &err)) == NULL) ||
	    rpc_param_bool(req->params, "output", &output, &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	notify_subscribe(c, s != NULL ? s->id : 0, output);
	conn_reply(c, req->id, json_pack("{s:b}", "subscribed", 1));
}

/* unsubscribe: no more notifications (of one session, or of any). */
static void
method_unsubscribe(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	struct session		*s = NULL;
	json_t			*ref = json_object_get(req->params, "session");

	if (ref != NULL && !json_is_null(ref) &&
	    (s = session_find(ref, &err)) == NULL) {
		method_fail(c, req, &err, NULL);
		return;
	}
	notify_unsubscribe(c, s != NULL ? s->id : 0);
	conn_reply(c, req->id, json_pack("{s:b}", "subscribed", 0));
}

/* shutdown: stop every session, answer, then exit. */
static void
method_shutdown(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	 err;
	long long		 timeout = -1;
	json_t			*params;

	if (rpc_param_int(req->params, "timeout", false, 0, STOP_TIMEOUT_MAX,
	    &timeout, &err) != 0) {
		method_fail(c, req, &err, NULL);
		return;
	}
	params = json_pack("{s:I}", "stopped", (json_int_t)session_live_count());
	pending_new(P_SHUTDOWN, c, req->id, params);
	json_decref(params);
	daemon_shutdown(timeout);
	pending_poke();
}

static const struct {
	const char	*name;
	void		(*fn)(struct conn *, struct rpc_request *);
	bool		 while_shutting_down;
} method_table[] = {
	{ "hello", method_hello, true },
	{ "ping", method_ping, true },
	{ "launch", method_launch, false },
	{ "list", method_list, true },
	{ "status", method_status, true },
	{ "wait", method_wait, true },
	{ "stop", method_stop, true },
	{ "signal", method_signal, true },
	{ "logs", method_logs, true },
	{ "read", method_read, true },
	{ "write", method_write, true },
	{ "pipe", method_pipe, true },
	{ "attach", method_attach, true },
	{ "resize", method_resize, true },
	{ "subscribe", method_subscribe, true },
	{ "unsubscribe", method_unsubscribe, true },
	{ "shutdown", method_shutdown, true },
};

/* Route a request to its handler. */
void
method_dispatch(struct conn *c, struct rpc_request *req)
{
	struct rpc_error	err;
	size_t			i;

	for (i = 0; i < sizeof method_table / sizeof *method_table; i++) {
		if (strcmp(method_table[i].name, req->method) != 0)
			continue;
		if (dmn.shutting_down && !method_table[i].while_shutting_down) {
			rpc_error_set(&err, RPC_SHUTTING_DOWN, "the daemon is "
			    "shutting down");
			method_fail(c, req, &err, NULL);
			return;
		}
		method_table[i].fn(c, req);
		return;
	}
	rpc_error_set(&err, RPC_METHOD_NOT_FOUND, "no method \"%.64s\"",
	    req->method);
	method_fail(c, req, &err, NULL);
}
