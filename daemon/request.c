/*
 * Requests: lines of a connection in rpc mode, checked against the entry
 * of their method (every param's type, the session resolved) before the
 * method runs, and answered exactly once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "notify.h"
#include "conn.h"
#include "method.h"
#include "peer.h"
#include "request.h"
#include "watch.h"

/* Unfinished request bytes, of all connections. */
static size_t	 request_half_lines;

/* The longest request line such a peer may send. */
#define PEER_LINE_MAX 4096
/* Bytes of unfinished request lines all connections may hold together. */
#define REQUEST_HALF_LINES_MAX (64 * 1024 * 1024)

/* The method of what names none, or is no request. */
static const struct method request_none = { .name = "?" };

/* The lines one connection runs in a loop turn at most, and how long. */
#define REQUEST_TURN_LINES	64
#define REQUEST_TURN_NS		(5 * 1000 * 1000)
/* Bytes of replies a client leaves unread after which its lines wait. */
#define REQUEST_QUEUE_MAX	(1024 * 1024)

static struct log_burst request_half_log = {
	.more = "dropped %lu more clients in the last second: too many "
	    "unfinished request lines"
};

/* What feeding stops with: the connection changed, or its turn is over. */
#define REQUEST_LEFT		1
#define REQUEST_YIELD		2

/* The rpc mode's own state of a connection. */
struct request_rpc {
	struct frame	 frame;
	bool		 feeding;	/* inside frame_feed */
	bool		 closed;	/* the mode was left meanwhile */
	size_t		 counted;	/* of its frame, in request_half_lines */
	unsigned	 turn_lines;	/* lines run in this loop turn */
	uint64_t	 turn_start;	/* when the turn's first line ran */
};

/* Count what the connection's framer holds in the daemon's total. */
static void
request_count_half(struct request_rpc *r, size_t now)
{
	request_half_lines = request_half_lines - r->counted + now;
	r->counted = now;
}

/* Free the rpc mode's state, and take its part out of the total. */
static void
request_rpc_free(struct request_rpc *r)
{
	request_count_half(r, 0);
	frame_free(&r->frame);
	free(r);
}

/* Free a request that is finished, or whose client is gone. */
void
request_free(struct request *req)
{
	/* Dropped unanswered (its client left): its batch will not be sent. */
	if (req->batch != NULL && !req->finished)
		request_batch_gone(req->batch, req);
	if (req->waiting)
		pending_finish(req);
	if (req->session != NULL)
		session_unref(req->session);
	json_decref(req->id);
	free(req->id_text);
	json_decref(req->params);
	free(req);
}

/*
 * The limit error that stands for a request's reply (malloc'd line): with
 * its id, and the session it is about, so that one it launched is known.
 */
char *
request_limit_line(struct request *req, const char *why, size_t *len)
{
	json_t	*data = json_object(), *msg;
	char	*line;

	if (req->session != NULL)
		json_object_set_new(data, "session",
		    json_integer((json_int_t)req->session->id));
	msg = rpc_error_new(req->id, RPC_LIMIT, why, data);
	line = msg != NULL ? rpc_dump_id(msg, req->id_text, len) : NULL;
	json_decref(msg);
	if (line == NULL)
		log_fatal("cannot write a limit error for %s",
		    req->method->name);
	return line;
}

/* The limit error for a reply of its own that would exceed a line. */
static char *
request_long_line(struct request *req, size_t *len)
{
	char why[96];

	if (req->session == NULL)
		return request_limit_line(req, "the reply would exceed the "
		    "1 MiB line limit", len);
	snprintf(why, sizeof why, "the reply about session %lu would exceed "
	    "the 1 MiB line limit", req->session->id);
	return request_limit_line(req, why, len);
}

/* Mark the request answered; free it unless its method is still running. */
static enum method_return
request_answered(struct request *req)
{
	if (req->finished)
		log_fatal("request %s answered twice", req->method->name);
	req->finished = true;
	if (!req->in_exec)
		request_free(req);
	return METHOD_DONE;
}

/*
 * Answer with a line (taken; NULL: it would exceed the line limit): into
 * its batch, to its client (a limit error with its id for a line too
 * long), or nowhere.
 */
static enum method_return
request_send(struct request *req, char *line, size_t len)
{
	if (req->finished)
		log_fatal("request %s answered twice", req->method->name);
	if (req->batch != NULL)
		request_batch_add(req->batch, req, line, len);
	else if (req->conn != NULL && req->id != NULL) {
		if (line == NULL)
			line = request_long_line(req, &len);
		conn_send_text(req->conn, line, len);
	} else
		free(line);
	return request_answered(req);
}

/* Whether an answer goes anywhere: a notification's outside a batch does not. */
static bool
request_answers(const struct request *req)
{
	return req->id != NULL || req->batch != NULL;
}

/*
 * Answer with a result (taken), written as one line around the result,
 * with no envelope object built.
 */
enum method_return
request_done(struct request *req, json_t *result)
{
	size_t	 len = 0;
	char	*line = NULL;

	/* A line too long was made up to the limit: that much was spent. */
	if (request_answers(req) && (line = rpc_dump_result(req->id,
	    req->id_text, result, &len)) == NULL)
		len = FRAME_MAX;
	json_decref(result);
	return request_send(req, line, len);
}

/*
 * Answer with a result written as text up to its last members: head
 * (taken) opens the object and holds its first members, extra's members
 * (taken) follow it, and the object is closed here.
 */
enum method_return
request_done_head(struct request *req, char *head, size_t hlen,
    json_t *extra)
{
	char	*more;
	size_t	 mlen;

	more = json_dumps(extra, JSON_COMPACT);
	json_decref(extra);
	if (more == NULL)
		log_fatal("cannot write a %s result", req->method->name);
	/* more is {...}: its members go on after head's, then its brace. */
	mlen = strlen(more);
	head = xreallocarray(head, hlen + mlen + 1, 1);
	if (mlen > 2)
		head[hlen++] = ',';
	memcpy(head + hlen, more + 1, mlen);
	free(more);
	return request_done_text(req, head, hlen + mlen - 1);
}

/* Answer with a result already written as JSON text (taken). */
enum method_return
request_done_text(struct request *req, char *text, size_t tlen)
{
	size_t	 len = 0;
	char	*line = NULL;

	if (request_answers(req) && (line = rpc_dump_result_text(req->id,
	    req->id_text, text, tlen, &len)) == NULL)
		len = FRAME_MAX;
	free(text);
	return request_send(req, line, len);
}

/* Answer with an error: code, its kind and more in data (taken), a message. */
static enum method_return
request_verror(struct request *req, int code, json_t *data, const char *fmt,
    va_list ap)
{
	json_t	*reply = NULL;
	char	*msg, *line = NULL;
	size_t	 len = 0;

	xvasprintf(&msg, fmt, ap);
	/* A notification hears of no error, in a batch or not. */
	if (req->id != NULL)
		reply = rpc_error_new(req->id, code, msg, data);
	else
		json_decref(data);
	free(msg);
	if (reply != NULL && (line = rpc_dump_id(reply, req->id_text,
	    &len)) == NULL)
		len = FRAME_MAX;
	json_decref(reply);
	request_send(req, line, len);
	return METHOD_ERROR;
}

/* Answer with an error whose message reaches the client verbatim. */
enum method_return
request_error(struct request *req, int code, const char *fmt, ...)
{
	enum method_return	rv;
	va_list			ap;

	va_start(ap, fmt);
	rv = request_verror(req, code, NULL, fmt, ap);
	va_end(ap);
	return rv;
}

/* Answer with an error that carries more than its kind in data (taken). */
enum method_return
request_error_data(struct request *req, int code, json_t *data,
    const char *fmt, ...)
{
	enum method_return	rv;
	va_list			ap;

	va_start(ap, fmt);
	rv = request_verror(req, code, data, fmt, ap);
	va_end(ap);
	return rv;
}

/* Answer with an error another part of the daemon set. */
enum method_return
request_fail(struct request *req, const struct rpc_error *err)
{
	return request_error(req, err->code, "%s", err->message);
}

/* A checked param, or NULL when it was absent. */
json_t *
request_get(struct request *req, const char *key)
{
	return json_object_get(req->params, key);
}

/* A checked string param, or dflt. */
const char *
request_str(struct request *req, const char *key, const char *dflt)
{
	json_t *v = request_get(req, key);

	return v != NULL ? json_string_value(v) : dflt;
}

/* A checked integer param, or dflt. */
long long
request_int(struct request *req, const char *key, long long dflt)
{
	json_t *v = request_get(req, key);

	return v != NULL ? json_integer_value(v) : dflt;
}

/* A checked boolean param; absent is false. */
bool
request_bool(struct request *req, const char *key)
{
	return json_is_true(request_get(req, key));
}

/* A request of a connection with its id (taken), in batch b or none. */
static struct request *
request_new(struct conn *c, json_t *id, const char *id_text,
    struct request_batch *b, size_t room)
{
	struct request *req = xcalloc(1, sizeof *req);

	req->conn = c;
	req->id = id;
	if (id_text != NULL)
		req->id_text = xstrdup(id_text);
	req->batch = b;
	req->room = room;
	if (b != NULL)
		request_batch_join(b);
	return req;
}

/* Check req's params and run its method, as it came or once unparked. */
static void
request_exec(struct request *req, json_t *params)
{
	struct rpc_error	 err;
	enum method_return	 rv;

	req->in_exec = true;
	if (dmn.shutting_down && !(req->method->flags & METHOD_WHILE_SHUTDOWN))
		request_error(req, RPC_SHUTTING_DOWN, "the daemon is shutting "
		    "down");
	else if (request_check(req, params, &err) != 0)
		request_fail(req, &err);
	else {
		rv = req->method->exec(req);
		if (rv == METHOD_WAIT ? !req->waiting && !req->finished :
		    !req->finished)
			log_fatal("method %s returned %d unanswered",
			    req->method->name, rv);
	}
	req->in_exec = false;
	if (req->finished)
		request_free(req);
}

/* Run a parsed request: find its method, check it, run it. */
void
request_dispatch(struct conn *c, struct rpc_request *rr,
    struct request_batch *b, size_t room)
{
	struct request		*req;
	const char		*why;

	req = request_new(c, json_incref(rr->id), rr->id_text, b, room);
	req->in_exec = true;
	if ((req->method = request_check_method(rr->method)) == NULL)
		req->method = &request_none;
	/*
	 * The token first: an unknown name (request_none, served to no one
	 * before it) gets the same answer as a known one, so that a peer
	 * without the token learns nothing, not even which methods there are.
	 */
	if (!c->authed && !(req->method->flags & METHOD_NOAUTH))
		request_error(req, RPC_UNAUTHORIZED, "present the token first: "
		    "hello with \"token\"");
	else if (req->method == &request_none)
		request_error(req, RPC_METHOD_NOT_FOUND, "no method \"%.64s\"",
		    rr->method);
	else if (b != NULL && (why = request_batch_refusal(b)) != NULL)
		request_error(req, RPC_LIMIT, "%s", why);
	else if ((req->method->flags & METHOD_ALONE) &&
	    (c->npending > 0 || req->id == NULL || b != NULL))
		request_error(req, RPC_INVALID_REQUEST, "%s must be the only "
		    "request in flight on its connection", req->method->name);
	/* Sessions a dead daemon left are being adopted: it waits for them. */
	else if (dmn.adoption != NULL &&
	    !(req->method->flags & METHOD_WHILE_ADOPTING))
		(void)pending_park(req, rr->params);
	else {
		request_exec(req, rr->params);
		return;
	}
	req->in_exec = false;
	if (req->finished)
		request_free(req);
}

/* The daemon has its sessions: run the requests that waited, in order. */
void
request_unpark_all(void)
{
	pending_unpark_all(request_exec);
}

/*
 * Answer what is not a request (its id taken from err; null when it has
 * none), in a batch among its replies.
 */
void
request_refuse(struct conn *c, struct rpc_error *err, struct request_batch *b,
    size_t room)
{
	struct request *req;

	/* A response (perhaps a reply of ours come back): answered, it loops. */
	if (err->code == RPC_NO_REPLY) {
		json_decref(err->id);
		err->id = NULL;
		return;
	}
	req = request_new(c, err->id != NULL ? err->id : json_null(), NULL, b,
	    room);
	err->id = NULL;
	req->method = &request_none;
	request_error(req, err->code, "%s", err->message);
}

/* Run one request line. */
static void
request_run(struct conn *c, const char *text, size_t len)
{
	struct rpc_request	 rr;
	struct rpc_error	 err;

	memset(&err, 0, sizeof err);
	if (rpc_parse(text, len, &rr, &err) != 0) {
		request_refuse(c, &err, NULL, 0);
		return;
	}
	request_dispatch(c, &rr, NULL, 0);
	rpc_parse_free(&rr);
}

/* Whether the client has taken enough of its replies for its lines to go on. */
static bool
request_room_ok(struct conn *c)
{
	return flow_room(conn_queued(c), REQUEST_QUEUE_MAX) &&
	    flow_room(c->held, CONN_HOLD_MAX);
}

/*
 * Parse one line and run it; stop feeding once the connection changed,
 * once the client leaves its replies unread (until it has taken them), and
 * once the connection's turn is over (the rest goes on a later turn).
 */
static int
request_line(void *arg, char *line, size_t len)
{
	struct conn		*c = arg;
	struct request_rpc	*r = c->mode_data;
	struct rpc_error	 err;

	/* Before the token, a few lines (and short ones: request_input). */
	if (!c->authed && peer_line(c, line, &err) != 0) {
		conn_send(c, rpc_error_new(NULL, err.code, err.message, NULL));
		conn_finish(c);
		return REQUEST_LEFT;
	}
	if (!request_batch_line(c, line, len))
		request_run(c, line, len);
	if (c->closing || c->finishing || c->mode != &request_rpc_mode)
		return REQUEST_LEFT;
	/* Past the token, a line may be as long as any. */
	if (c->authed)
		r->frame.max = FRAME_MAX;
	if (flow_full(conn_queued(c), REQUEST_QUEUE_MAX)) {
		conn_pause(c);
		return REQUEST_YIELD;
	}
	/* A write that holds too much paused it: the rest waits too. */
	if (c->paused)
		return REQUEST_YIELD;
	if (++r->turn_lines >= REQUEST_TURN_LINES ||
	    uv_hrtime() - r->turn_start >= REQUEST_TURN_NS)
		return REQUEST_YIELD;
	return 0;
}

/*
 * Bytes from the client: lines of requests; returns how many were used.
 * Before the token a line is short and is not counted in the total of
 * unfinished lines, which is the owner's connections' alone.
 */
static size_t
request_input(struct conn *c, const char *data, size_t len)
{
	struct request_rpc	*r = c->mode_data;
	size_t			 used;
	int			 rv;

	if (!c->authed)
		r->frame.max = PEER_LINE_MAX;
	/* Replies left unread: what it sent waits (request_drained). */
	if (flow_full(conn_queued(c), REQUEST_QUEUE_MAX)) {
		conn_pause(c);
		return 0;
	}
	r->turn_lines = 0;
	r->turn_start = uv_hrtime();
	r->feeding = true;
	rv = frame_feed(&r->frame, data, len, request_line, c);
	r->feeding = false;
	used = rv != 0 ? r->frame.used : len;
	/* A request switched the connection's mode: the framer goes now. */
	if (r->closed) {
		request_rpc_free(r);
		return used;
	}
	request_count_half(r, rv == FRAME_OVERFLOW || !c->authed ? 0 :
	    r->frame.len);
	if (r->counted > 0 && request_half_lines > REQUEST_HALF_LINES_MAX) {
		char msg[128];

		snprintf(msg, sizeof msg, "the daemon holds %zu MiB of unfinished "
		    "request lines, its limit: end each request with a line "
		    "feed", request_half_lines >> 20);
		log_burst(&request_half_log, "dropped a client: %s", msg);
		request_count_half(r, 0);
		frame_free(&r->frame);
		r->frame.dead = 1;
		conn_send(c, rpc_error_new(NULL, RPC_LIMIT, msg, NULL));
		conn_finish(c);
		return len;
	}
	if (rv == FRAME_OVERFLOW) {
		char msg[96];

		snprintf(msg, sizeof msg, "request line exceeds %zu bytes%s",
		    r->frame.max, c->authed ? "" : " before the token");
		conn_send(c, rpc_error_new(NULL, RPC_LIMIT, msg, NULL));
		conn_finish(c);
		return len;
	}
	return used;
}

/* The client shut down its sending side: answer what waits, then close. */
static void
request_eof(struct conn *c)
{
	c->eof = true;
	if (c->npending == 0)
		conn_finish(c);
}

/* The connection leaves rpc mode or closes: forget what it asked for. */
static void
request_close(struct conn *c)
{
	struct request_rpc *r = c->mode_data;

	pending_forget_conn(c);
	notify_forget(c);
	watch_forget_conn(c);
	tap_stop(c, NULL);
	if (r->feeding) {
		r->closed = true;
		return;
	}
	request_rpc_free(r);
}

/* The client took what was queued: subscribers and target readers go on. */
static void
request_drained(struct conn *c)
{
	notify_drained(c);
	tap_drained(c);
	if (c->paused && request_room_ok(c))
		conn_resume(c);
}

/* Set up rpc mode on a connection. */
static void *
request_open(void)
{
	struct request_rpc *r = xcalloc(1, sizeof *r);

	frame_init(&r->frame, FRAME_MAX);
	return r;
}

const struct conn_mode request_rpc_mode = {
	.name = "rpc",
	.open = request_open,
	.input = request_input,
	.eof = request_eof,
	.drained = request_drained,
	.close = request_close,
};
