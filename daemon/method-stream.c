/* The stream methods: logs, read, pipe, attach and resize (write: method-write.c). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"
#include "cursor-file.h"
#include "attach.h"
#include "jtext.h"
#include "conn.h"
#include "method.h"
#include "method-stream.h"
#include "request.h"
#include "rtt.h"

/* Console lines replayed to a client when it attaches. */
#define ATTACH_REPLAY_LINES 200

/* Most bytes one logs reply carries (before base64). */
#define LOGS_MAX (256 * 1024)
/* Most bytes one read reply carries (before base64). */
#define READ_MAX (512 * 1024)

/* Where a logs request reads from, and how much. */
struct method_logs_data {
	struct output	*o;
	const char	*stream;
	uint64_t	 off;
	size_t		 max;
};

/*
 * A result {"data":"BASE64", and rest's members (taken)} as text: base64
 * needs no escapes, and writing a reply's half megabyte of it through the
 * JSON writer, a byte at a time, cost more than the rest of the request.
 */
static enum method_return
method_stream_done(struct request *req, char *b64, json_t *rest)
{
	char	*head;
	size_t	 len;

	len = xasprintf(&head, "{\"data\":\"%s\"", b64);
	free(b64);
	return request_done_head(req, head, len, rest);
}

/* The logs result: up to max bytes of a stream's output from offset off. */
static enum method_return
method_logs_reply(struct request *req, struct method_logs_data *d)
{
	struct session	*s = req->session;
	struct output	*o = d->o;
	char		*buf = xmalloc(d->max), *text;
	uint64_t	 off = d->off, next;
	size_t		 n;
	json_t		*v;

	n = output_read(o, off, buf, d->max);
	next = off + n;
	/* Bytes that cannot be had are skipped and named, so readers move on. */
	if (n == 0 && off < output_size(o))
		next = output_missing(o, off);
	text = xb64_encode(buf, n);
	free(buf);
	v = json_pack("{s:s, s:I, s:I, s:I, s:b}", "stream", d->stream,
	    "offset", (json_int_t)off, "next_offset", (json_int_t)next, "size",
	    (json_int_t)output_size(o), "ended", session_stream_ended(s,
	    d->stream, true));
	if (request_bool(req, "timestamps"))
		json_object_set_new(v, "times", output_times_get(o, off, next));
	if (next > off + n)
		json_object_set_new(v, "missing", json_pack("{s:I, s:I}",
		    "offset", (json_int_t)off, "bytes", (json_int_t)(next -
		    off)));
	return method_stream_done(req, text, v);
}

/* A waiting logs request answers once there is a byte past its offset, or the end. */
static void
method_logs_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request		*req = k->arg;
	struct method_logs_data	*d = req->data;

	(void)ev;
	if (d->off < output_size(d->o) || session_stream_ended(s, d->stream, true))
		method_logs_reply(req, d);
}

/* Free a logs request's state. */
static void
method_logs_free(struct request *req)
{
	free(req->data);
}

/*
 * logs: a stream's output from an offset or the last lines, maybe
 * waiting. The start is resolved once here; a waiting request only
 * compares sizes.
 */
static enum method_return
method_logs_exec(struct request *req)
{
	struct session		*s = req->session;
	struct method_logs_data	 now, *d;
	struct rpc_error	 err;
	long long		 lines = request_int(req, "lines", -1);

	now.stream = request_str(req, "stream", "console");
	if ((now.o = session_stream_find(s, now.stream, &err)) == NULL)
		return request_fail(req, &err);
	now.off = request_int(req, "offset", 0);
	now.max = request_int(req, "max", LOGS_MAX);
	if (lines >= 0)
		now.off = output_lines_tail(now.o, lines,
		    OUTPUT_TAIL_SCAN_MAX);
	if (now.max > LOGS_MAX)
		now.max = LOGS_MAX;
	if (!request_bool(req, "wait") || now.off < output_size(now.o) ||
	    session_stream_ended(s, now.stream, true))
		return method_logs_reply(req, &now);
	d = xmalloc(sizeof *d);
	*d = now;
	pending_wait(req, d, method_logs_free);
	pending_sink(req, s, session_stream_events(), method_logs_event);
	return METHOD_WAIT;
}

static const struct method_param method_logs_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "offset", PT_INT, false, 0, 1LL << 53 },
	{ "lines", PT_INT, false, 0, 100000000 },
	{ "max", PT_INT, false, 1, 1LL << 30 },
	{ "wait", PT_BOOL, false, 0, 0 },
	{ "stream", PT_STRING, false, 0, 0 },
	{ "timestamps", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_logs = {
	.name = "logs",
	.params = method_logs_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_logs_exec,
};

/* The transport a request names, or NULL with the error answered. */
struct transport *
method_stream_transport(struct request *req)
{
	if (req->session->transport != NULL)
		return req->session->transport;
	request_error(req, RPC_NOT_SUPPORTED, "session %lu was launched "
	    "without --transport", req->session->id);
	return NULL;
}

/* Whether a request names the console stream (the default is the target). */
bool
method_stream_console(struct request *req)
{
	return strcmp(request_str(req, "stream", "target"), "console") == 0;
}

/* Whether a stream name is one of the two. */
bool
method_stream_ok(struct request *req)
{
	const char *stream = request_str(req, "stream", "target");

	return strcmp(stream, "target") == 0 || strcmp(stream, "console") == 0;
}

/* Answer a read with what the target wrote, at its offset, or with EOF. */
static enum method_return
method_read_reply(struct request *req, struct transport *t)
{
	size_t		 want = request_int(req, "max", READ_MAX), n;
	unsigned long	 run = transport_run(t);
	uint64_t	 off;
	char		*buf, *text;
	json_t		*v;

	if (want > READ_MAX)
		want = READ_MAX;
	buf = xmalloc(want);
	n = transport_take(t, buf, want);
	/* The next daemon's read goes on after these. */
	if (n > 0)
		cursor_file_taken(req->session);
	/* After the take: bytes its transcript lost are skipped before them. */
	off = transport_offset(t) - n;
	text = xb64_encode(buf, n);
	free(buf);
	/*
	 * The offset is the stream's, as a target subscriber's pieces name;
	 * the run is the program's run the bytes (or the EOF) belong to.
	 */
	v = json_pack("{s:I, s:I, s:b, s:I}", "offset", (json_int_t)off,
	    "next_offset", (json_int_t)(off + n), "eof", n == 0 &&
	    transport_drained(t), "run", (json_int_t)run);
	return method_stream_done(req, text, v);
}

/* Target output arrived or ended: a waiting read takes it. */
static void
method_read_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request *req = k->arg;

	(void)ev;
	if (transport_held(s->transport) > 0 ||
	    transport_drained(s->transport))
		method_read_reply(req, s->transport);
}

/* A read ran out of time. */
static void
method_read_timeout(struct request *req)
{
	request_error(req, RPC_TIMEOUT, "no target output before the timeout");
}

/* read: 1..max bytes of target output as soon as any are there. */
static enum method_return
method_read_exec(struct request *req)
{
	struct transport	*t;
	long long		 timeout = request_int(req, "timeout", -1);

	if (!method_stream_ok(req))
		return request_error(req, RPC_INVALID_PARAMS, "\"stream\" must "
		    "be \"target\" or \"console\"");
	if (method_stream_console(req))
		return request_error(req, RPC_INVALID_PARAMS, "read the "
		    "console with the logs method");
	if ((t = method_stream_transport(req)) == NULL)
		return METHOD_ERROR;
	if (transport_piped(t))
		return request_error(req, RPC_BUSY, "the target output of "
		    "session %lu has its reader (a pipe or a subscriber)",
		    req->session->id);
	if (transport_held(t) > 0 || transport_drained(t))
		return method_read_reply(req, t);
	/* A timeout of 0 means: answer now, with data, EOF or timeout. */
	if (timeout == 0)
		return request_error(req, RPC_TIMEOUT, "no target output is "
		    "waiting");
	if (pending_held(req))
		return pending_verdict_end(req, NULL);
	pending_wait(req, NULL, NULL);
	pending_sink(req, req->session, SE_TARGET | SE_TARGET_EOF,
	    method_read_event);
	if (timeout > 0)
		pending_timeout(req, timeout, method_read_timeout);
	return METHOD_WAIT;
}

static const struct method_param method_read_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "stream", PT_STRING, false, 0, 0 },
	{ "max", PT_INT, false, 1, 1LL << 30 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_read = {
	.name = "read",
	.params = method_read_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_VERDICT_ENDS,
	.exec = method_read_exec,
};

/*
 * A pipe that goes on where one before it stopped ("from": the offset of
 * the next target byte its client needs) starts there; 0, or -1 answered.
 */
static int
method_pipe_from(struct request *req, struct transport *t)
{
	uint64_t from;

	if (request_get(req, "from") == NULL)
		return 0;
	from = (uint64_t)request_int(req, "from", 0);
	if (transport_seek(t, from) == 0)
		return 0;
	request_error(req, RPC_INVALID_PARAMS, "the target stream of session "
	    "%lu cannot be piped from offset %llu: it has %llu bytes, and "
	    "its reader is at %llu", req->session->id, (unsigned long long)from,
	    (unsigned long long)output_size(req->session->target_out),
	    (unsigned long long)transport_offset(t));
	return -1;
}

/* pipe: the connection becomes a raw byte stream to and from the target. */
static enum method_return
method_pipe_exec(struct request *req)
{
	struct session		*s = req->session;
	struct transport	*t;
	struct conn		*c = req->conn;

	if (!method_stream_ok(req) || method_stream_console(req))
		return request_error(req, RPC_INVALID_PARAMS, "pipe reaches "
		    "the target (\"stream\": \"target\"); attach reaches the "
		    "console");
	if ((t = method_stream_transport(req)) == NULL)
		return METHOD_ERROR;
	if (transport_piped(t))
		return request_error(req, RPC_BUSY, "session %lu is already "
		    "piped, or its target output has a subscriber", s->id);
	if (method_pipe_from(req, t) != 0)
		return METHOD_ERROR;
	if (transport_drained(t) && transport_exited(t))
		return request_error(req, RPC_NOT_RUNNING, "the program of "
		    "session %lu has exited and its output has ended", s->id);
	if (transport_drained(t))
		return request_error(req, RPC_NOT_RUNNING, "the target's "
		    "output of session %lu has ended", s->id);
	/*
	 * Where its bytes begin both ways, for a client that has to connect
	 * again after a restart of the daemon to say where it stands.
	 */
	request_done(req, json_pack("{s:b, s:I, s:I}", "raw", 1, "offset",
	    (json_int_t)transport_offset(t), "in_offset", (json_int_t)
	    output_size(s->target_in)));
	pipe_start(c, s);
	return METHOD_DONE;
}

static const struct method_param method_pipe_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "stream", PT_STRING, false, 0, 0 },
	{ "from", PT_INT, false, 0, 1LL << 53 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_pipe = {
	.name = "pipe",
	.params = method_pipe_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_ALONE,
	.exec = method_pipe_exec,
};

/*
 * attach --server: only a session with a server has its terminal, and a
 * server on the transport reads the pipes, not its terminal. 0 if it has.
 */
static int
method_attach_server_check(struct request *req, struct session *s)
{
	if (session_console_of(s, "server") == NULL) {
		request_error(req, RPC_NOT_SUPPORTED, "session %lu has no "
		    "server (a %s session); attach without --server reaches "
		    "its console", s->id, s->backend->name);
		return -1;
	}
	if (s->transport != NULL) {
		request_error(req, RPC_NOT_SUPPORTED, "the server of session "
		    "%lu reads the transport, not its terminal: use send or "
		    "pipe", s->id);
		return -1;
	}
	return 0;
}

/* Attach now if the session runs; refuse if it never will. */
static enum method_return
method_attach_step(struct request *req, struct session *s)
{
	unsigned long	 lines = request_int(req, "lines", ATTACH_REPLAY_LINES);
	struct conn	*c = req->conn;
	bool		 server = request_bool(req, "server");

	if (s->state != S_RUNNING)
		return request_error_data(req, RPC_NOT_RUNNING,
		    json_pack("{s:o}", "session", status_json(s)),
		    "session %lu %s", s->id, session_is(s));
	if (server && method_attach_server_check(req, s) != 0)
		return METHOD_ERROR;
	/*
	 * The reply may free the request: what attaching needs is kept. The
	 * viewer is the connection's serial, for its resizes to name.
	 */
	request_done(req, json_pack("{s:b, s:I, s:s, s:I}", "raw", 1,
	    "session", (json_int_t)s->id, "terminal", server ? "server" :
	    "console", "viewer", (json_int_t)(c != NULL ? c->serial : 0)));
	if (c != NULL)
		attach_start(c, s, lines);
	if (c != NULL && server)
		attach_server(c);
	return METHOD_DONE;
}

/* A session that was starting has moved on: attach, or refuse. */
static void
method_attach_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)ev;
	if (s->state != S_STARTING)
		method_attach_step(k->arg, s);
}

/* attach: the connection becomes the console's, raw both ways. */
static enum method_return
method_attach_exec(struct request *req)
{
	/* A session still starting is attached to once it runs. */
	if (req->session->state != S_STARTING)
		return method_attach_step(req, req->session);
	pending_wait(req, NULL, NULL);
	pending_sink(req, req->session, SE_STATE, method_attach_state);
	return METHOD_WAIT;
}

static const struct method_param method_attach_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "lines", PT_INT, false, 0, 100000 },
	{ "server", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_attach = {
	.name = "attach",
	.params = method_attach_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_ALONE,
	.exec = method_attach_exec,
};

/*
 * resize: the console's window size, with a forced redraw if asked; with
 * viewer, the size of that attached client's terminal, which the session
 * takes as the latest client's (attach.c).
 */
static enum method_return
method_resize_exec(struct request *req)
{
	struct session	*s = req->session;
	long long	 rows = request_int(req, "rows", 0);
	long long	 cols = request_int(req, "cols", 0);
	long long	 viewer = request_int(req, "viewer", 0);
	bool		 redraw = request_bool(req, "redraw");

	if (session_ended(s) || session_console(s) == NULL)
		return request_error(req, RPC_NOT_RUNNING, "session %lu has no "
		    "console", s->id);
	if (viewer != 0 && attach_viewer_resize(s, viewer, rows, cols,
	    redraw) != 0)
		return request_error(req, RPC_INVALID_PARAMS, "no client is "
		    "attached to session %lu as viewer %lld", s->id, viewer);
	if (viewer == 0 && attach_resize(s, rows, cols, redraw) != 0)
		return request_error(req, RPC_NOT_RUNNING, "session %lu has no "
		    "console", s->id);
	return request_done(req, json_pack("{s:I, s:I}", "rows",
	    (json_int_t)rows, "cols", (json_int_t)cols));
}

static const struct method_param method_resize_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "rows", PT_INT, true, 1, 65535 },
	{ "cols", PT_INT, true, 1, 65535 },
	{ "redraw", PT_BOOL, false, 0, 0 },
	{ "viewer", PT_INT, false, 1, LLONG_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_resize = {
	.name = "resize",
	.params = method_resize_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_resize_exec,
};

const struct method *const method_stream[] = {
	&method_logs,
	&method_read,
	&method_write,
	&method_pipe,
	&method_attach,
	&method_resize,
	NULL
};
