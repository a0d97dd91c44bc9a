/*
 * Requests that wait: each is in one list, listens on the sinks it needs,
 * and is completed exactly once by one of them, by its timer, or dropped
 * when its client leaves; it is never answered on a closed connection.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "conn.h"
#include "method.h"
#include "request.h"

/* Every request that waits, from pending_wait until pending_finish. */
static TAILQ_HEAD(, request) pending_all = TAILQ_HEAD_INITIALIZER(pending_all);

/* The request waits from now on; data is its method's state, freed by free. */
enum method_return
pending_wait(struct request *req, void *data, void (*free)(struct request *))
{
	if (req->waiting)
		log_fatal("request %s waits twice", req->method->name);
	req->waiting = true;
	req->data = data;
	req->free = free;
	TAILQ_INSERT_TAIL(&pending_all, req, entry);
	if (req->conn != NULL)
		req->conn->npending++;
	return METHOD_WAIT;
}

/* Call cb(sink, session, event) for s's events in mask while it waits. */
void
pending_sink(struct request *req, struct session *s, unsigned mask,
    sink_cb cb)
{
	req->sinks = xreallocarray(req->sinks, req->nsinks + 1,
	    sizeof *req->sinks);
	req->sinks[req->nsinks++] = session_sink_add(s, mask, cb, req);
}

/* The wait ran out. */
static void
pending_timer_cb(void *arg)
{
	struct request *req = arg;

	req->timeout(req);
}

/* Call fn(req) if it still waits after ms milliseconds. */
void
pending_timeout(struct request *req, uint64_t ms, void (*fn)(struct request *))
{
	req->timeout = fn;
	req->timer = timer_new(pending_timer_cb, req);
	timer_start(req->timer, ms);
}

/* The request is done waiting: drop its sinks, timer and state. */
void
pending_finish(struct request *req)
{
	struct conn	*c = req->conn;
	size_t		 i;

	TAILQ_REMOVE(&pending_all, req, entry);
	req->waiting = false;
	for (i = 0; i < req->nsinks; i++)
		session_sink_remove(req->sinks[i]);
	free(req->sinks);
	req->sinks = NULL;
	req->nsinks = 0;
	timer_free(req->timer);
	req->timer = NULL;
	if (req->free != NULL)
		req->free(req);
	if (c == NULL)
		return;
	c->npending--;
	/* A half-closed client goes once its last request is answered. */
	if (c->npending == 0 && c->eof)
		conn_finish(c);
}

/* A parked request's params, dropped with it if its client leaves. */
static void
pending_park_free(struct request *req)
{
	json_decref(req->data);
	req->data = NULL;
}

/*
 * Hold req before its method runs (its params kept) until the daemon can
 * run it: it has yet to adopt the sessions a request may name.
 */
enum method_return
pending_park(struct request *req, json_t *params)
{
	return pending_wait(req, json_incref(params), pending_park_free);
}

/*
 * Run each parked request with its params, in the order they came; their
 * connections stay open for them meanwhile, as while they waited.
 */
void
pending_unpark_all(void (*run)(struct request *, json_t *))
{
	struct request	*req;
	struct conn	*c;
	json_t		*params;

	/* Running one may answer, free or park others: look again each time. */
	for (;;) {
		TAILQ_FOREACH(req, &pending_all, entry)
			if (req->free == pending_park_free)
				break;
		if (req == NULL)
			return;
		params = req->data;
		req->data = NULL;
		req->free = NULL;
		if ((c = req->conn) != NULL)
			c->npending++;
		pending_finish(req);
		run(req, params);
		json_decref(params);
		if (c != NULL && --c->npending == 0 && c->eof)
			conn_finish(c);
	}
}

/* The client left: its requests finish unanswered, or go on if they must. */
void
pending_forget_conn(struct conn *c)
{
	struct request *req, *next;

	TAILQ_FOREACH_SAFE(req, &pending_all, entry, next) {
		if (req->conn != c)
			continue;
		req->conn = NULL;
		c->npending--;
		/* One being answered or run up the stack is freed there. */
		if (!req->keep_orphan && !req->finished && !req->in_exec)
			request_free(req);
	}
}

/*
 * Whether a deadline's or a silence's verdict is s's, its automatic bundle
 * written, and its hold keeps s (a hold a client set since is waited out
 * like any other). Before the bundle is written a call waits: the bundle's
 * end ends it (pending_verdict), so no client acts before the evidence is
 * on disk.
 */
static bool
pending_verdict_holds(const struct session *s)
{
	return s->verdict != NULL && verdict_bundled_yet(s) &&
	    hold_by_verdict(s) && strcmp(
	    json_string_value(json_object_get(s->verdict, "kind")), "fault") !=
	    0;
}

/*
 * End req with its session's verdict; data (taken; NULL: none) is what
 * else the error says, such as what an expect got.
 */
enum method_return
pending_verdict_end(struct request *req, json_t *data)
{
	struct session	*s = req->session;
	json_t		*bundle;

	if (data == NULL)
		data = json_object();
	json_object_set(data, "verdict", s->verdict);
	json_object_set_new(data, "session", json_integer((json_int_t)s->id));
	/* The automatic bundle, written before the verdict ends anything. */
	if ((bundle = bundle_status(s)) != NULL)
		json_object_set_new(data, "bundle", bundle);
	return request_error_data(req, RPC_VERDICT, data, "session %lu has a "
	    "%s verdict: the session is %s, so %s waits no more", s->id,
	    json_string_value(json_object_get(s->verdict, "kind")),
	    hold_active(s) ? "held, its target halted" : "stopped",
	    req->method->name);
}

/*
 * Whether req, about to wait, would wait on a session its verdict holds
 * (nothing it does next can answer): then the caller ends it at once.
 */
bool
pending_held(const struct request *req)
{
	return req->session != NULL && (req->method->flags &
	    (METHOD_VERDICT_ENDS | METHOD_HOLD_ENDS)) != 0 &&
	    pending_verdict_holds(req->session);
}

/*
 * s's verdict is out (held: it holds s): each request that waits for s to
 * act ends now with the verdict, not at its own time, for nothing the
 * session does next can answer it.
 */
void
pending_verdict(struct session *s, bool held)
{
	struct request	*req;
	int		 ends = METHOD_VERDICT_ENDS | (held ? METHOD_HOLD_ENDS : 0);

	/* Answering one frees it and may free others: look again each time. */
	for (;;) {
		TAILQ_FOREACH(req, &pending_all, entry)
			if (req->session == s && !req->finished &&
			    (req->method->flags & ends) != 0)
				break;
		if (req == NULL)
			return;
		pending_verdict_end(req, req->method->waited != NULL ?
		    req->method->waited(req) : NULL);
	}
}
