/*
 * Requests that wait: each is in one list, listens on the sinks it needs,
 * and is completed exactly once by one of them, by its timer, or dropped
 * when its client leaves; it is never answered on a closed connection.
 */
#include <stdlib.h>

#include "daemon.h"

/* The request waits from now on; data is its method's state, freed by free. */
enum method_return
pending_wait(struct request *req, void *data, void (*free)(struct request *))
{
	if (req->waiting)
		log_fatal("request %s waits twice", req->method->name);
	req->waiting = true;
	req->data = data;
	req->free = free;
	TAILQ_INSERT_TAIL(&dmn.waiting, req, entry);
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

	TAILQ_REMOVE(&dmn.waiting, req, entry);
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

/* The client left: its requests finish unanswered, or go on if they must. */
void
pending_forget_conn(struct conn *c)
{
	struct request *req, *next;

	TAILQ_FOREACH_SAFE(req, &dmn.waiting, entry, next) {
		if (req->conn != c)
			continue;
		req->conn = NULL;
		c->npending--;
		/* One being answered or run up the stack is freed there. */
		if (!req->keep_orphan && !req->finished && !req->in_exec)
			request_free(req);
	}
}
