/* The write method: bytes to a session's target, console or RTT down-channel, waiting for room. */
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"
#include "jtext.h"
#include "conn.h"
#include "method.h"
#include "method-stream.h"
#include "request.h"
#include "rtt.h"

/* Bytes a write carries, decoded. */
struct method_write_data {
	struct session	*s;
	char		*data;
	size_t		 len;
};

/* Write to the target if there is room: 1 done, 0 not yet, -1 closed. */
static int
method_write_try(struct request *req)
{
	struct method_write_data	*d = req->data;
	struct transport		*t = d->s->transport;

	/* Writing nothing tells whether the input is still open. */
	if (transport_in_write(t, NULL, 0) != 0)
		return -1;
	if (flow_full(transport_in_queued(t), TRANSPORT_MAX))
		return 0;
	if (transport_in_write(t, d->data, d->len) != 0)
		return -1;
	if (request_bool(req, "eof"))
		transport_in_eof(t);
	return 1;
}

/* Answer a write: {"written": len}, as text, on every write's way back. */
static enum method_return
method_write_done(struct request *req, size_t len)
{
	struct jtext	 t = { 0 };
	char		*text;
	size_t		 tlen;

	jtext_open(&t);
	jtext_key(&t, "written");
	jtext_int(&t, (long long)len);
	text = jtext_close(&t, &tlen);
	return request_done_text(req, text, tlen);
}

/* Write now, or answer that the input is closed; 0 if it must wait. */
static int
method_write_step(struct request *req)
{
	struct method_write_data *d = req->data;

	switch (method_write_try(req)) {
	case 1:
		method_write_done(req, d->len);
		return 1;
	case -1:
		if (transport_exited(d->s->transport))
			request_error(req, RPC_NOT_RUNNING, "the program of "
			    "session %lu has exited: its input is closed",
			    d->s->id);
		else
			request_error(req, RPC_NOT_RUNNING, "the target's "
			    "input is closed");
		return 1;
	}
	return 0;
}

/* The target's input moved: a waiting write tries again. */
static void
method_write_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)s;
	(void)ev;
	method_write_step(k->arg);
}

/* A write is answered: the next one may go, and its client may send more. */
static void
method_write_free(struct request *req)
{
	struct method_write_data *d = req->data;

	d->s->writers--;
	if (req->conn != NULL) {
		req->conn->held -= d->len;
		if (flow_room(req->conn->held, CONN_HOLD_MAX))
			conn_resume(req->conn);
	}
	free(d->data);
	free(d);
}

/* Write bytes to the console pty, as typed at its terminal. */
static enum method_return
method_write_console(struct request *req, const char *data, size_t len)
{
	struct session	*s = req->session;
	struct console	*con;

	if (session_ended(s))
		return request_error(req, RPC_NOT_RUNNING, "session %lu %s",
		    s->id, session_is(s));
	if (session_console(s) == NULL)
		return request_error(req, RPC_NOT_RUNNING, "the console of "
		    "session %lu is closed", s->id);
	/* As at its terminal: the running program's, if it has its own. */
	con = session_keyboard(s);
	/* A pty takes input slowly; its queue is bounded. */
	if (flow_full(console_queued(con), CONSOLE_INPUT_MAX))
		return request_error(req, RPC_LIMIT, "the console of session "
		    "%lu is not taking input (%zu bytes queued); try again",
		    s->id, console_queued(con));
	if (console_write(con, data, len) != 0)
		return request_error(req, RPC_NOT_RUNNING, "the console of "
		    "session %lu is closed", s->id);
	return request_done(req, json_pack("{s:I}", "written",
	    (json_int_t)len));
}

/* Write bytes to an RTT down-channel: queued for the target's buffer. */
static enum method_return
method_write_rtt(struct request *req, unsigned channel, const char *data,
    size_t len)
{
	struct rpc_error err = { 0 };

	if (rtt_write(req->session, channel, data, len, &err) != 0)
		return request_error(req, err.code, "%s", err.message);
	return request_done(req, json_pack("{s:I}", "written",
	    (json_int_t)len));
}

/* write: bytes for the target's stdin (or the console); waits for room. */
static enum method_return
method_write_exec(struct request *req)
{
	struct method_write_data	*d;
	const char			*text = request_str(req, "data", "");
	enum method_return		 rv;
	unsigned char			*data;
	size_t				 len;
	unsigned			 channel;

	if (!method_stream_ok(req) && !rtt_stream(request_str(req, "stream",
	    ""), &channel))
		return request_error(req, RPC_INVALID_PARAMS, "\"stream\" must "
		    "be \"target\", \"console\" or an RTT channel (\"rtt0\" "
		    "to \"rtt3\")");
	if ((data = b64_decode(text, strlen(text), &len)) == NULL)
		return request_error(req, RPC_INVALID_PARAMS, "\"data\" is not "
		    "base64");
	if (!method_stream_ok(req)) {
		rv = method_write_rtt(req, channel, (char *)data, len);
		free(data);
		return rv;
	}
	if (method_stream_console(req)) {
		rv = method_write_console(req, (char *)data, len);
		free(data);
		return rv;
	}
	if (method_stream_transport(req) == NULL) {
		free(data);
		return METHOD_ERROR;
	}
	d = xcalloc(1, sizeof *d);
	d->s = req->session;
	d->data = (char *)data;
	d->len = len;
	req->data = d;
	/* Writes leave in order: behind another, this one waits its turn. */
	if (d->s->writers == 0 && method_write_step(req)) {
		req->data = NULL;
		free(d->data);
		free(d);
		return METHOD_DONE;
	}
	/* A session its verdict holds takes no more input: not waited on. */
	if (pending_held(req)) {
		req->data = NULL;
		free(d->data);
		free(d);
		return pending_verdict_end(req, NULL);
	}
	req->keep_orphan = true;
	pending_wait(req, d, method_write_free);
	d->s->writers++;
	/*
	 * The connection goes on reading (a ping behind a waiting write is
	 * answered) until its waiting writes hold CONN_HOLD_MAX bytes.
	 */
	req->conn->held += len;
	if (flow_full(req->conn->held, CONN_HOLD_MAX))
		conn_pause(req->conn);
	pending_sink(req, d->s, SE_INPUT | SE_STATE, method_write_event);
	return METHOD_WAIT;
}

static const struct method_param method_write_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "stream", PT_STRING, false, 0, 0 },
	{ "data", PT_STRING, false, 0, 0 },
	{ "eof", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

const struct method method_write = {
	.name = "write",
	.params = method_write_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_VERDICT_ENDS,
	.exec = method_write_exec,
};
