/* The session methods: launch, list, status, wait, stop, signal and exec. */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "lease.h"
#include "conn.h"
#include "method.h"
#include "request.h"
#include "signame.h"
#include "status-page.h"

/* Rows of a list page by default; names a list may pick. */
#define LIST_LIMIT 1000
#define LIST_FIELDS_MAX 64

/* Free a launch's waiting state: whether it said the session runs. */
static void
method_launch_free(struct request *req)
{
	free(req->data);
}

/*
 * The launch's answer: the session's status, and for a leased one its
 * lease's token, which only the launching connection is ever told.
 */
static json_t *
method_launch_reply(struct session *s)
{
	json_t *st = status_json(s);

	if (s->l.lease_token[0] != '\0')
		json_object_set_new(st, "lease_token", json_string(
		    s->l.lease_token));
	return st;
}

/*
 * Tell the launching connection the session runs: session.launched with
 * the request's id, for a client with several launches open, and the
 * session; only its id when the session would not fit in a line.
 */
static void
method_launch_told(struct request *req, struct session *s)
{
	json_t	*id = req->id != NULL ? req->id : json_null(), *note;
	size_t	 len;
	char	*line;

	note = rpc_notification_new("session.launched", json_pack("{s:O, s:o}",
	    "request", id, "session", method_launch_reply(s)));
	if ((line = rpc_dump(note, &len)) == NULL) {
		json_decref(note);
		note = rpc_notification_new("session.launched", json_pack(
		    "{s:O, s:{s:I, s:s*}}", "request", id, "session", "id",
		    (json_int_t)s->id, "lease_token", s->l.lease_token[0] !=
		    '\0' ? s->l.lease_token : NULL));
		line = rpc_dump(note, &len);
	}
	json_decref(note);
	conn_send_text(req->conn, line, len);
}

/*
 * A launch completes when the session runs, fails once it has ended.
 * With "wait", running is told by a session.launched notification on the
 * launching connection, and the answer comes when the session has ended,
 * as wait's does: one round trip for launch --wait.
 */
static void
method_launch_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request	*req = k->arg;
	bool		*launched = req->data;	/* NULL: it never waited */

	(void)ev;
	if (s->state == S_RUNNING && !request_bool(req, "wait")) {
		request_done(req, method_launch_reply(s));
		return;
	}
	if (s->state == S_RUNNING && launched != NULL && !*launched) {
		*launched = true;
		if (req->conn != NULL)
			method_launch_told(req, s);
		return;
	}
	if (!session_ended(s))
		return;
	if (launched != NULL && *launched) {
		request_done(req, status_json(s));
		return;
	}
	request_error_data(req, s->why.code != 0 ? s->why.code :
	    RPC_SPAWN_FAILED, json_pack("{s:I, s:i}", "session",
	    (json_int_t)s->id, "errno", s->why.err), "%s", s->why.msg != NULL ?
	    s->why.msg : "the session ended while starting");
}

/*
 * launch: start a session; answered once it runs or has failed, or with
 * "wait" once it has ended (method_launch_state).
 */
static enum method_return
method_launch_exec(struct request *req)
{
	struct rpc_error	 err;
	struct launch		 l;
	struct session		*s;
	struct sink		 k = { .arg = req };

	if (launch_parse(&l, req->params, &err) != 0)
		return request_fail(req, &err);
	/* Made before the spawn, whose record keeps it for an adoption. */
	if (l.lease && req->conn != NULL)
		lease_token_new(&l);
	if ((s = session_create(&l, &err)) == NULL) {
		launch_free(&l);
		return request_fail(req, &err);
	}
	/* Its expects start at its first byte (method-expect.c). */
	if (req->conn != NULL)
		s->launched_by = req->conn->serial;
	if (session_ended(s)) {
		method_launch_state(&k, s, NULL);
		return METHOD_ERROR;
	}
	/* A reply too long for a line is an error that names it. */
	req->session = s;
	session_ref(s);
	if (s->l.lease && req->conn != NULL)
		lease_add(s, req->conn, s->l.lease_grace);
	pending_wait(req, xcalloc(1, sizeof (bool)), method_launch_free);
	pending_sink(req, s, SE_STATE, method_launch_state);
	return METHOD_WAIT;
}

static const struct method_param method_launch_params[] = {
	{ "kind", PT_STRING, false, 0, 0 },
	{ "argv", PT_STRINGS, false, 0, 0 },
	{ "commands", PT_STRINGS, false, 0, 0 },
	{ "env", PT_OBJECT, false, 0, 0 },
	{ "term_env", PT_OBJECT, false, 0, 0 },
	{ "name", PT_STRING, false, 0, 0 },
	{ "cwd", PT_STRING, false, 0, 0 },
	{ "debugger", PT_STRING, false, 0, 0 },
	{ "reset_commands", PT_STRINGS, false, 0, 0 },
	{ "load_commands", PT_STRINGS, false, 0, 0 },
	{ "connect_timeout", PT_INT, false, 1, STOP_TIMEOUT_MAX },
	{ "stop_timeout", PT_INT, false, 0, STOP_TIMEOUT_MAX },
	{ "stop_target", PT_STRING, false, 0, 0 },
	{ "pid", PT_INT, false, 1, INT_MAX },
	{ "transport", PT_BOOL, false, 0, 0 },
	{ "fault_breaks", PT_STRINGS, false, 0, 0 },
	{ "fault_break_defaults", PT_BOOL, false, 0, 0 },
	{ "core", PT_BOOL, false, 0, 0 },
	{ "lease", PT_BOOL, false, 0, 0 },
	{ "lease_grace", PT_INT, false, 0, STOP_TIMEOUT_MAX },
	{ "deadline", PT_INT, false, 1, INT_MAX },
	{ "silence_timeout", PT_INT, false, 1, INT_MAX },
	{ "on_deadline", PT_STRING, false, 0, 0 },
	{ "artifacts", PT_STRING, false, 0, 0 },
	{ "wait", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_launch = {
	.name = "launch",
	.params = method_launch_params,
	.exec = method_launch_exec,
	/* Each kind declares its own params (struct backend's). */
	.check = launch_check_params,
};

/*
 * list with table: the page's lines as dbgctl list prints them, the
 * header first on the first page, columns sized over every session.
 */
static enum method_return
method_list_table(struct request *req, long offset)
{
	struct session		*s, *next;
	struct status_table	 tab;
	long			 i = 0;
	size_t			 len;
	char			*text;

	status_table_init(&tab, (size_t)request_int(req, "width", 0),
	    (size_t)request_int(req, "limit", LIST_LIMIT));
	TAILQ_FOREACH(s, &dmn.sessions, entry) {
		/* The next row's pointers, and the one after's fields. */
		if ((next = TAILQ_NEXT(s, entry)) != NULL) {
			status_table_ahead(next);
			status_page_ahead(TAILQ_NEXT(next, entry));
		}
		status_table_measure(&tab, s);
	}
	if (offset == 0)
		status_table_header(&tab);
	TAILQ_FOREACH(s, &dmn.sessions, entry) {
		if (i++ < offset || tab.full)
			continue;
		(void)status_table_add(&tab, s);
	}
	text = status_table_done(&tab, &len);
	return request_done_head(req, text, len, json_pack("{s:I, s:o}",
	    "total", (json_int_t)i, "next_offset", tab.full ?
	    json_integer(offset + (long)tab.n) : json_null()));
}

/*
 * list: a page of the sessions the table holds, in id order, from offset:
 * at most limit rows and as many as fit the reply, each with every member
 * or with id and the members fields names; next_offset is where the next
 * page starts, or null after the last.
 */
static enum method_return
method_list_exec(struct request *req)
{
	struct session		*s, *next;
	struct status_page	 page;
	struct status_pick	 pick;
	json_t			*fields = request_get(req, "fields");
	long			 offset = request_int(req, "offset", 0);
	long			 i = 0;
	size_t			 len;
	char			*text;

	if (request_bool(req, "table"))
		return method_list_table(req, offset);
	if (json_array_size(fields) > LIST_FIELDS_MAX)
		return request_error(req, RPC_INVALID_PARAMS, "\"fields\" names "
		    "at most %d members", LIST_FIELDS_MAX);
	status_page_pick(&pick, fields);
	status_page_init(&page, "sessions", request_int(req, "limit",
	    LIST_LIMIT), &pick);
	TAILQ_FOREACH(s, &dmn.sessions, entry) {
		if (i++ < offset || page.full)
			continue;
		/* The next row's pointers, and the one after's fields. */
		if ((next = TAILQ_NEXT(s, entry)) != NULL) {
			status_page_ahead_more(next);
			status_page_ahead(TAILQ_NEXT(next, entry));
		}
		(void)status_page_add(&page, s);
	}
	text = status_page_done(&page, &len);
	return request_done_head(req, text, len, json_pack("{s:I, s:o}",
	    "total", (json_int_t)i, "next_offset", page.full ?
	    json_integer(offset + (long)page.n) : json_null()));
}

static const struct method_param method_list_params[] = {
	{ "offset", PT_INT, false, 0, INT32_MAX },
	{ "limit", PT_INT, false, 1, LIST_LIMIT_MAX },
	{ "fields", PT_STRINGS, false, 0, 0 },
	{ "table", PT_BOOL, false, 0, 0 },
	{ "width", PT_INT, false, 0, 65535 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_list = {
	.name = "list",
	.params = method_list_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_list_exec,
};

/* status: one session. */
static enum method_return
method_status_exec(struct request *req)
{
	return request_done(req, status_json(req->session));
}

static const struct method_param method_session_only[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_status = {
	.name = "status",
	.params = method_session_only,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_status_exec,
};

/* A wait completes when its session has ended. */
static void
method_wait_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)ev;
	if (session_ended(s))
		request_done(k->arg, status_json(s));
}

/* A wait ran out of time. */
static void
method_wait_timeout(struct request *req)
{
	request_error(req, RPC_TIMEOUT, "timed out waiting for the session "
	    "to end");
}

/* wait: answered when the session has ended. */
static enum method_return
method_wait_exec(struct request *req)
{
	long long timeout = request_int(req, "timeout", -1);

	if (session_ended(req->session))
		return request_done(req, status_json(req->session));
	if (pending_held(req))
		return pending_verdict_end(req, NULL);
	pending_wait(req, NULL, NULL);
	pending_sink(req, req->session, SE_STATE, method_wait_state);
	if (timeout >= 0)
		pending_timeout(req, timeout, method_wait_timeout);
	return METHOD_WAIT;
}

static const struct method_param method_wait_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_wait = {
	.name = "wait",
	.params = method_wait_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_HOLD_ENDS,
	.exec = method_wait_exec,
};

/* What a stop waits for: its sessions, each referenced, and how many live. */
struct method_stop_data {
	struct session	**list;
	size_t		  n;
	size_t		  left;
};

/* Append a session (referenced) to a stop's list. */
static void
method_stop_push(struct method_stop_data *d, struct session *s)
{
	d->list = xreallocarray(d->list, d->n + 1, sizeof *d->list);
	d->list[d->n++] = s;
	session_ref(s);
}

/* Release a stop's list. */
static void
method_stop_free(struct request *req)
{
	struct method_stop_data	*d = req->data;
	size_t			 i;

	for (i = 0; i < d->n; i++)
		session_unref(d->list[i]);
	free(d->list);
	free(d);
}

/*
 * The stop's answer: how many it stopped, and the sessions it names as
 * rows, as many as fit the reply; "truncated" says some were left out.
 */
static void
method_stop_reply(struct request *req)
{
	struct method_stop_data	*d = req->data;
	struct status_page	 page;
	size_t			 i, len;
	char			*text;

	status_page_init(&page, "sessions", SIZE_MAX, NULL);
	for (i = 0; i < d->n; i++) {
		/* As list does: the next rows' lines asked for ahead. */
		if (i + 1 < d->n)
			status_page_ahead_more(d->list[i + 1]);
		if (i + 2 < d->n)
			status_page_ahead(d->list[i + 2]);
		if (!status_page_add(&page, d->list[i]))
			break;
	}
	text = status_page_done(&page, &len);
	request_done_head(req, text, len, json_pack("{s:I, s:b}", "stopped",
	    (json_int_t)d->n, "truncated", page.full));
}

/*
 * Tell the stop's connection that the stop of s escalates, as it happens:
 * session.stopping with the request's id, the session's, the step and
 * how long after the stop began.
 */
static void
method_stop_told(struct request *req, struct session *s, json_t *step)
{
	json_t	*note;
	size_t	 len;
	char	*line;

	if (req->conn == NULL)
		return;
	note = rpc_notification_new("session.stopping", json_pack(
	    "{s:O, s:I, s:O, s:O}", "request", req->id != NULL ? req->id :
	    json_null(), "session", (json_int_t)s->id, "step",
	    json_object_get(step, "step"), "after_ms",
	    json_object_get(step, "after_ms")));
	if ((line = rpc_dump(note, &len)) != NULL)
		conn_send_text(req->conn, line, len);
	json_decref(note);
}

/* One of the stop's sessions changed state, or escalates; the last to end answers. */
static void
method_stop_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request		*req = k->arg;
	struct method_stop_data	*d = req->data;

	if (ev != NULL && ev->kind == SE_STOPPING) {
		method_stop_told(req, s, ev->json);
		return;
	}
	if (session_ended(s) && --d->left == 0)
		method_stop_reply(req);
}

/* Collect the sessions a stop names (session, sessions or all), all or none. */
static int
method_stop_targets(struct request *req, struct method_stop_data *d,
    struct rpc_error *err)
{
	struct session	*s;
	json_t		*many = request_get(req, "sessions"), *ref;
	size_t		 i;

	if (request_bool(req, "all")) {
		TAILQ_FOREACH(s, &dmn.sessions, entry)
			if (!session_ended(s))
				method_stop_push(d, s);
		return 0;
	}
	if (many == NULL && req->session == NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "name a \"session\", "
		    "\"sessions\" (an array) or \"all\"");
		return -1;
	}
	if (req->session != NULL)
		method_stop_push(d, req->session);
	json_array_foreach(many, i, ref) {
		if ((s = session_find(ref, err)) == NULL)
			return -1;
		method_stop_push(d, s);
	}
	return 0;
}

/* stop: end sessions; answered when every process of them is gone. */
static enum method_return
method_stop_exec(struct request *req)
{
	struct method_stop_data	*d = xcalloc(1, sizeof *d);
	struct rpc_error	 err;
	size_t			 i;

	pending_wait(req, d, method_stop_free);
	if (method_stop_targets(req, d, &err) != 0)
		return request_fail(req, &err);
	for (i = 0; i < d->n; i++) {
		if (session_ended(d->list[i]))
			continue;
		d->left++;
		pending_sink(req, d->list[i], SE_STATE | SE_STOPPING,
		    method_stop_state);
	}
	if (d->left == 0) {
		method_stop_reply(req);
		return METHOD_DONE;
	}
	/* A stop may end a session at once, and answer before this returns. */
	for (i = 0; i < d->n && !req->finished; i++)
		session_stop(d->list[i], request_int(req, "timeout", -1));
	return METHOD_WAIT;
}

static const struct method_param method_stop_params[] = {
	{ "session", PT_SESSION, false, 0, 0 },
	{ "sessions", PT_SESSIONS, false, 0, 0 },
	{ "all", PT_BOOL, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, STOP_TIMEOUT_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_stop = {
	.name = "stop",
	.params = method_stop_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_stop_exec,
};

/* signal: to the foreground process group of the session's pty. */
static enum method_return
method_signal_exec(struct request *req)
{
	struct rpc_error	 err;
	json_t			*v = request_get(req, "signal");
	pid_t			 pgrp;
	int			 sig = SIGINT;

	if (json_is_string(v))
		sig = signame_parse(json_string_value(v));
	else if (json_is_integer(v))
		sig = json_integer_value(v) > 0 && json_integer_value(v) < NSIG ?
		    (int)json_integer_value(v) : -1;
	if (sig <= 0)
		return request_error(req, RPC_INVALID_PARAMS, "\"signal\" must "
		    "name a signal (INT, SIGINT or 2)");
	if (session_signal(req->session, sig, &pgrp, &err) != 0)
		return request_fail(req, &err);
	return request_done(req, json_pack("{s:i, s:i}", "signal", sig,
	    "pgrp", (int)pgrp));
}

static const struct method_param method_signal_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "signal", PT_STRING | PT_INT, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_signal = {
	.name = "signal",
	.params = method_signal_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_signal_exec,
};

/* exec: a debugger command, answered with its result. */
static enum method_return
method_exec_exec(struct request *req)
{
	struct session *s = req->session;

	if (s->backend->command == NULL)
		return request_error(req, RPC_NOT_SUPPORTED, "session %lu (%s) "
		    "takes no debugger commands", s->id, s->backend->name);
	/* In signal's words, whatever the kind. */
	if (session_ended(s))
		return request_error(req, RPC_NOT_RUNNING, "session %lu %s",
		    s->id, session_is(s));
	/* A stopped debugger answers nothing: say so rather than time out. */
	if (s->suspended != 0)
		return request_error(req, RPC_NOT_READY, "session %lu is "
		    "suspended (SIG%s): press a key at its console, or run "
		    "dbgctl signal %lu CONT, to resume it", s->id,
		    signame_name(s->suspended) ? signame_name(s->suspended) :
		    "?", s->id);
	return s->backend->command(s, req);
}

static const struct method_param method_exec_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "command", PT_STRING, true, 0, 0 },
	{ "timeout", PT_INT, false, 1, STOP_TIMEOUT_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_exec = {
	.name = "exec",
	.params = method_exec_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_exec_exec,
};

const struct method *const method_session[] = {
	&method_launch,
	&method_list,
	&method_status,
	&method_wait,
	&method_stop,
	&method_signal,
	&method_exec,
	NULL
};
