/* Requests that wait for events: each has its own record and completes once. */
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"

/* Record a request that will be answered later. */
struct pending *
pending_new(enum ptype type, struct conn *c, json_t *id, json_t *params)
{
	struct pending *p;

	if ((p = calloc(1, sizeof *p)) == NULL)
		log_fatal("out of memory");
	p->type = type;
	p->conn = c;
	p->id = json_incref(id);
	p->params = json_incref(params);
	c->npending++;
	p->len = 0;
	TAILQ_INSERT_TAIL(&dmn.pendings, p, entry);
	return p;
}

/* Name one more session the request waits on. */
void
pending_add_session(struct pending *p, struct session *s)
{
	p->sessions = reallocarray(p->sessions, p->nsessions + 1,
	    sizeof *p->sessions);
	if (p->sessions == NULL)
		log_fatal("out of memory");
	p->sessions[p->nsessions++] = s;
}

/* Free a timer once libuv has let go of it. */
static void
pending_timer_free(uv_handle_t *h)
{
	free(h);
}

/* Remove the record; it has been answered or its client is gone. */
static void
pending_free(struct pending *p)
{
	TAILQ_REMOVE(&dmn.pendings, p, entry);
	if (p->timer != NULL)
		uv_close((uv_handle_t *)p->timer, pending_timer_free);
	if (p->type == P_WRITE) {
		p->sessions[0]->transport.nwrites--;
		if (p->conn != NULL)
			conn_resume(p->conn);
	}
	json_decref(p->id);
	json_decref(p->params);
	free(p->sessions);
	free(p->data);
	if (p->conn != NULL) {
		p->conn->npending--;
		conn_request_done(p->conn);
	}
	free(p);
}

/* Answer with a result and forget the request. */
static void
pending_reply(struct pending *p, json_t *result)
{
	if (p->conn != NULL)
		conn_reply(p->conn, p->id, result);
	else
		json_decref(result);
	pending_free(p);
}

/* Answer with an error and forget the request. */
static void
pending_fail(struct pending *p, int code, const char *msg, json_t *data)
{
	struct rpc_error err;

	rpc_error_set(&err, code, "%s", msg);
	if (p->conn != NULL)
		conn_error(p->conn, p->id, &err, data);
	else
		json_decref(data);
	pending_free(p);
}

/* A wait ran out of time. */
static void
pending_timeout_cb(uv_timer_t *t)
{
	struct pending *p = t->data;

	pending_fail(p, RPC_TIMEOUT, p->type == P_READ ? "no target output "
	    "before the timeout" : "timed out waiting for the session to end",
	    NULL);
}

/* Give up on the request after ms milliseconds. */
void
pending_arm_timeout(struct pending *p, uint64_t ms)
{
	if ((p->timer = malloc(sizeof *p->timer)) == NULL)
		log_fatal("out of memory");
	uv_timer_init(dmn.loop, p->timer);
	p->timer->data = p;
	uv_timer_start(p->timer, pending_timeout_cb, ms, 0);
}

/* A launch completes when the session runs, fails when it ends first. */
static void
pending_check_launch(struct pending *p)
{
	struct session	*s = p->sessions[0];
	json_t		*data;

	if (s->state == S_RUNNING) {
		pending_reply(p, status_json(s));
		return;
	}
	/* A launch that fails answers once everything of it is gone. */
	if (!session_ended(s))
		return;
	data = json_pack("{s:I, s:i}", "session", (json_int_t)s->id,
	    "errno", s->error_errno);
	pending_fail(p, s->fail_code != 0 ? s->fail_code : s->ran ?
	    RPC_NOT_RUNNING : RPC_SPAWN_FAILED, s->error ? s->error :
	    "the session ended while starting", data);
}

/* A stop or wait completes when every session it names has ended. */
static void
pending_check_ended(struct pending *p)
{
	json_t	*list;
	size_t	 i;

	for (i = 0; i < p->nsessions; i++)
		if (!session_ended(p->sessions[i]))
			return;
	if (p->type == P_WAIT) {
		pending_reply(p, status_json(p->sessions[0]));
		return;
	}
	list = json_array();
	for (i = 0; i < p->nsessions; i++)
		json_array_append_new(list, status_json(p->sessions[i]));
	pending_reply(p, json_pack("{s:o}", "sessions", list));
}

/* A read completes with buffered target output, or with EOF. */
static void
pending_check_read(struct pending *p)
{
	struct transport	*t = &p->sessions[0]->transport;
	json_t			*max = json_object_get(p->params, "max");
	char			*buf, *text;
	size_t			 n, want = READ_MAX;

	if (t->len == 0 && !t->out_eof)
		return;
	if (json_is_integer(max) && (size_t)json_integer_value(max) < want)
		want = json_integer_value(max);
	if ((buf = malloc(want)) == NULL)
		log_fatal("out of memory");
	n = transport_take(t, buf, want);
	text = b64_encode((unsigned char *)buf, n);
	free(buf);
	if (text == NULL)
		log_fatal("out of memory");
	pending_reply(p, json_pack("{s:s, s:b}", "data", text, "eof",
	    n == 0 && t->out_eof));
	free(text);
}

/* A write completes once the bounded input queue has room for it. */
static void
pending_check_write(struct pending *p)
{
	struct transport	*t = &p->sessions[0]->transport;
	size_t			 len = p->len;

	if (t->in_closed) {
		pending_fail(p, RPC_NOT_RUNNING, "the target's input is closed",
		    NULL);
		return;
	}
	if (transport_queued(t) > TRANSPORT_MAX)
		return;
	if (transport_write(t, p->data, p->len) != 0) {
		pending_fail(p, RPC_NOT_RUNNING, "the target's input is closed",
		    NULL);
		return;
	}
	if (json_is_true(json_object_get(p->params, "eof")))
		transport_eof(t);
	pending_reply(p, json_pack("{s:I}", "written", (json_int_t)len));
}

/* An attach completes once the session runs; it fails if it never will. */
static void
pending_check_attach(struct pending *p)
{
	struct session	*s = p->sessions[0];
	struct conn	*c = p->conn;
	json_t		*v;
	unsigned long	 lines;
	char		 msg[128];

	if (s->state == S_STARTING)
		return;
	if (s->state != S_RUNNING) {
		snprintf(msg, sizeof msg, "session %lu is %s", s->id,
		    session_state_name(s->state));
		pending_fail(p, RPC_NOT_RUNNING, msg, json_pack("{s:I, s:s}",
		    "session", (json_int_t)s->id, "state",
		    session_state_name(s->state)));
		return;
	}
	v = json_object_get(p->params, "lines");
	lines = json_is_integer(v) ? (unsigned long)json_integer_value(v) :
	    ATTACH_REPLAY_LINES;
	/* The reply frees p and its params. */
	pending_reply(p, json_pack("{s:b, s:I}", "raw", 1, "session",
	    (json_int_t)s->id));
	attach_add(s, c, lines);
}

/* A logs request answers at once, or when a waited-for byte or the end comes. */
static void
pending_check_logs(struct pending *p)
{
	struct session	*s = p->sessions[0];
	uint64_t	 off;

	off = json_integer_value(json_object_get(p->params, "offset"));
	if (json_is_true(json_object_get(p->params, "wait")) &&
	    off >= console_size(&s->console) && !session_ended(s))
		return;
	pending_reply(p, method_logs_result(s, off,
	    json_integer_value(json_object_get(p->params, "max"))));
}

/* See whether one request can be answered now. */
static void
pending_check(struct pending *p)
{
	/* Nobody can read these results; the others still do their work. */
	if (p->conn == NULL && (p->type == P_LOGS || p->type == P_WAIT ||
	    p->type == P_READ || p->type == P_ATTACH)) {
		pending_free(p);
		return;
	}
	switch (p->type) {
	case P_LAUNCH:
		pending_check_launch(p);
		return;
	case P_WAIT:
	case P_STOP:
		pending_check_ended(p);
		return;
	case P_LOGS:
		pending_check_logs(p);
		return;
	case P_READ:
		pending_check_read(p);
		return;
	case P_WRITE:
		pending_check_write(p);
		return;
	case P_ATTACH:
		pending_check_attach(p);
		return;
	case P_SHUTDOWN:
		if (session_live_count() == 0)
			pending_reply(p, json_pack("{s:I}", "stopped",
			    json_integer_value(json_object_get(p->params,
			    "stopped"))));
		return;
	}
	log_fatal("pending request of unknown type %d", p->type);
}

/* Something happened: answer every request that can be answered now. */
void
pending_poke(void)
{
	struct pending *p, *next;

	/* Answering one request can cause more events; loop, never nest. */
	if (dmn.poking) {
		dmn.poke_again = true;
		return;
	}
	dmn.poking = true;
	do {
		dmn.poke_again = false;
		TAILQ_FOREACH_SAFE(p, &dmn.pendings, entry, next)
			pending_check(p);
	} while (dmn.poke_again);
	dmn.poking = false;
}

/* The client left: its requests still finish, but are never answered. */
void
pending_forget_conn(struct conn *c)
{
	struct pending *p, *next;

	TAILQ_FOREACH_SAFE(p, &dmn.pendings, entry, next)
		if (p->conn == c)
			p->conn = NULL;
	pending_poke();
}
