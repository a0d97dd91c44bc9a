/*
 * Pushed target output: a subscriber to a session's target stream becomes
 * its transport's reader and gets every byte, in order, as session.output
 * notifications; a slow one holds the target back by flow control.
 */
#include <stdlib.h>

#include "daemon.h"

/* One subscriber reading one session's target output. */
struct tap {
	TAILQ_ENTRY(tap)	 entry;
	struct conn		*c;
	struct session		*s;
	struct sink		*sink;
	uint64_t		 offset;	/* target bytes sent so far */
};

static TAILQ_HEAD(, tap) tap_list = TAILQ_HEAD_INITIALIZER(tap_list);

/* Send bytes of target output (or its end) to the subscriber. */
static void
tap_send(struct tap *t, const char *data, size_t len, bool eof)
{
	json_t	*params;
	char	*text;

	text = xb64_encode(data, len);
	params = json_pack("{s:I, s:s, s:s, s:I}", "session",
	    (json_int_t)t->s->id, "stream", "target", "data", text, "offset",
	    (json_int_t)t->offset);
	if (eof)
		json_object_set_new(params, "eof", json_true());
	free(text);
	t->offset += len;
	conn_send(t->c, rpc_notification_new("session.output", params));
}

/* The target printed or ended: pass it on, and hold it back when full. */
static void
tap_event(struct sink *k, struct session *s, const struct session_event *ev)
{
	struct tap	*t = k->arg;
	struct conn	*c = t->c;

	if (ev->kind == SE_TARGET_EOF) {
		tap_send(t, "", 0, true);
		return;
	}
	if (ev->data == NULL || ev->len == 0)
		return;
	tap_send(t, ev->data, ev->len, false);
	/* The send may have dropped the client: c lasts the turn. */
	if (!c->closing && !c->dropped &&
	    flow_full(conn_queued(c), TRANSPORT_MAX))
		transport_pause(s->transport);
}

/* Stop reading s's target output for c. */
static void
tap_free(struct tap *t)
{
	TAILQ_REMOVE(&tap_list, t, entry);
	session_sink_remove(t->sink);
	transport_passthrough(t->s->transport, false);
	free(t);
}

/* Make c the reader of s's target output; -1 with err if it cannot be. */
int
tap_start(struct conn *c, struct session *s, struct rpc_error *err)
{
	struct tap *t;

	TAILQ_FOREACH(t, &tap_list, entry)
		if (t->s == s && t->c == c)
			return 0;
	if (s->transport == NULL) {
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu was "
		    "launched without --transport", s->id);
		return -1;
	}
	if (transport_piped(s->transport)) {
		rpc_error_set(err, RPC_BUSY, "the target output of session %lu "
		    "already has its reader", s->id);
		return -1;
	}
	t = xcalloc(1, sizeof *t);
	t->c = c;
	t->s = s;
	TAILQ_INSERT_TAIL(&tap_list, t, entry);
	t->sink = session_sink_add(s, SE_TARGET | SE_TARGET_EOF, tap_event, t);
	/* What was held goes first, through the sink. */
	transport_passthrough(s->transport, true);
	if (transport_ended(s->transport))
		tap_send(t, "", 0, true);
	return 0;
}

/* c no longer reads s's target output (s NULL: any session's). */
void
tap_stop(struct conn *c, struct session *s)
{
	struct tap *t, *next;

	TAILQ_FOREACH_SAFE(t, &tap_list, entry, next)
		if (t->c == c && (s == NULL || t->s == s))
			tap_free(t);
}

/* c took what was queued for it: its targets may print again. */
void
tap_drained(struct conn *c)
{
	struct tap *t;

	if (!flow_room(conn_queued(c), TRANSPORT_MAX))
		return;
	TAILQ_FOREACH(t, &tap_list, entry)
		if (t->c == c)
			transport_resume(t->s->transport);
}
