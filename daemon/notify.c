/* Subscriptions: one sink on every session per subscribed connection. */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "attach.h"
#include "notify.h"
#include "conn.h"

/* The last output notification, as the line sent, and what it said. */
static struct {
	char		*line;
	size_t		 size;
	unsigned long	 session;
	const char	*stream;
	uint64_t	 offset;
	size_t		 len;
} notify_last;

/*
 * Bytes queued for a subscriber past which its streams' output is skipped
 * (and said so once it drains): a stalled reader costs little.
 */
#define NOTIFY_QUEUE_MAX (256 * 1024)
/* The most bytes one session.output carries: base64 and all, under a line. */
#define NOTIFY_PIECE_MAX (512 * 1024)

/* Output one subscriber missed of one session's stream. */
struct notify_gap {
	unsigned long	 id;
	const char	*stream;	/* its name, static: "console", "rtt0", ... */
	uint64_t	 offset;	/* where the first missed byte is */
	uint64_t	 bytes;
};

/* What one connection asked to hear. */
struct notify {
	TAILQ_ENTRY(notify)	 entry;
	struct conn		*c;
	struct sink		*sink;
	bool			 all;		/* every session */
	unsigned		 streams;	/* whose output: session_stream_bit */
	unsigned long		*ids;
	size_t			 n;
	struct notify_gap	*gaps;		/* output it missed */
	size_t			 ngaps;
};

static TAILQ_HEAD(, notify) notify_list = TAILQ_HEAD_INITIALIZER(notify_list);

/* The subscription of c, if it has one. */
static struct notify *
notify_find(const struct conn *c)
{
	struct notify *n;

	TAILQ_FOREACH(n, &notify_list, entry)
		if (n->c == c)
			return n;
	return NULL;
}

/* Whether n wants news of s. */
static bool
notify_wants(const struct notify *n, const struct session *s)
{
	size_t i;

	if (n->all)
		return true;
	for (i = 0; i < n->n; i++)
		if (n->ids[i] == s->id)
			return true;
	return false;
}

/* The session.state notification of s. */
static json_t *
notify_state(struct session *s)
{
	json_t	*params, *exit;

	params = json_pack("{s:I, s:s}", "session", (json_int_t)s->id,
	    "state", session_state_name(s->state));
	if ((exit = status_exit(s)) != NULL)
		json_object_set_new(params, "exit", exit);
	if (s->suspended != 0)
		json_object_set_new(params, "suspended",
		    attach_suspended_json(s));
	/* A failed session says why, as its status does. */
	if (session_ended(s) && s->why.msg != NULL)
		json_object_set_new(params, "error", json_string(s->why.msg));
	return rpc_notification_new("session.state", params);
}

/*
 * Send a notification about s (taken); one too long for a line is logged
 * and goes as its method with {"session", "truncated": true} instead, so
 * that a subscriber never gets an error without an id for it.
 */
static void
notify_send(struct conn *c, struct session *s, json_t *msg)
{
	const char	*method;
	json_t		*cut;
	size_t		 len;
	char		*line;

	if (c->closing || c->dropped) {
		json_decref(msg);
		return;
	}
	if ((line = rpc_dump(msg, &len)) == NULL) {
		method = json_string_value(json_object_get(msg, "method"));
		log_warn("session %lu: a %s notification is longer than the "
		    "line limit: sent as truncated", s->id, method);
		cut = rpc_notification_new(method, json_pack("{s:I, s:b}",
		    "session", (json_int_t)s->id, "truncated", 1));
		if ((line = rpc_dump(cut, &len)) == NULL)
			log_fatal("cannot write a %s notification", method);
		json_decref(cut);
	}
	json_decref(msg);
	conn_send_line(c, line, len);
	free(line);
}

/* The stream an output event is of. */
static const char *
notify_stream(const struct session_event *ev)
{
	return ev->kind == SE_STREAM ? ev->stream : "console";
}

/*
 * The session.output line of a piece of a stream's output, encoded
 * (base64, then JSON) once however many subscribers it goes to: the last
 * one is kept, keyed by session, stream and offset. NULL if it would not
 * fit a line.
 */
static const char *
notify_output(struct session *s, const struct session_event *ev,
    size_t *size)
{
	const char	*stream = notify_stream(ev);
	json_t		*params, *msg;
	char		*text;

	if (notify_last.line == NULL || notify_last.session != s->id ||
	    strcmp(notify_last.stream, stream) != 0 ||
	    notify_last.offset != ev->offset || notify_last.len != ev->len) {
		text = xb64_encode(ev->data, ev->len);
		params = json_pack("{s:I, s:s, s:s, s:I}", "session",
		    (json_int_t)s->id, "stream", stream, "data", text,
		    "offset", (json_int_t)ev->offset);
		free(text);
		msg = rpc_notification_new("session.output", params);
		free(notify_last.line);
		/* A piece is at most NOTIFY_PIECE_MAX: below the line limit. */
		notify_last.line = rpc_dump(msg, &notify_last.size);
		json_decref(msg);
		if (notify_last.line == NULL)
			return NULL;
		notify_last.session = s->id;
		notify_last.stream = stream;
		notify_last.offset = ev->offset;
		notify_last.len = ev->len;
	}
	*size = notify_last.size;
	return notify_last.line;
}

/* Note output a stalled subscriber misses. */
static void
notify_skip(struct notify *n, struct session *s,
    const struct session_event *ev)
{
	const char	*stream = notify_stream(ev);
	size_t		 i;

	for (i = 0; i < n->ngaps; i++) {
		if (n->gaps[i].id == s->id &&
		    strcmp(n->gaps[i].stream, stream) == 0) {
			n->gaps[i].bytes += ev->len;
			return;
		}
	}
	n->gaps = xreallocarray(n->gaps, n->ngaps + 1, sizeof *n->gaps);
	n->gaps[n->ngaps].id = s->id;
	n->gaps[n->ngaps].stream = stream;
	n->gaps[n->ngaps].offset = ev->offset;
	n->gaps[n->ngaps].bytes = ev->len;
	n->ngaps++;
}

/*
 * Say what a subscriber missed, once it has room again: one
 * session.output.dropped a session, with where to catch up with logs.
 */
static void
notify_gaps(struct notify *n)
{
	struct notify_gap	*g;
	size_t			 i;

	if (n->ngaps == 0 || !flow_room(conn_queued(n->c), NOTIFY_QUEUE_MAX))
		return;
	for (i = 0; i < n->ngaps; i++) {
		g = &n->gaps[i];
		conn_send(n->c, rpc_notification_new("session.output.dropped",
		    json_pack("{s:I, s:s, s:I, s:I}", "session",
		    (json_int_t)g->id, "stream", g->stream, "offset",
		    (json_int_t)g->offset, "bytes", (json_int_t)g->bytes)));
	}
	free(n->gaps);
	n->gaps = NULL;
	n->ngaps = 0;
}

/* A subscriber took what was queued: tell it what it missed. */
void
notify_drained(struct conn *c)
{
	struct notify *n = notify_find(c);

	if (n != NULL)
		notify_gaps(n);
}

/* Send one piece of a stream's output, or note it skipped. */
static void
notify_piece(struct notify *n, struct session *s,
    const struct session_event *ev)
{
	const char	*line;
	size_t		 size;

	/* Past the bound, output is skipped: it is in the log. */
	if (n->ngaps > 0 || conn_queued(n->c) > NOTIFY_QUEUE_MAX) {
		notify_skip(n, s, ev);
		notify_gaps(n);
		return;
	}
	/* A piece too long for a line is skipped and said so too. */
	if ((line = notify_output(s, ev, &size)) == NULL) {
		log_warn("session %lu: %zu bytes of the %s stream do not fit a "
		    "line: sent as dropped", s->id, ev->len,
		    notify_stream(ev));
		notify_skip(n, s, ev);
		notify_gaps(n);
		return;
	}
	conn_send_line(n->c, line, size);
}

/*
 * Send a stream's output in pieces of at most NOTIFY_PIECE_MAX bytes: a
 * read of a pipe (semihost's) may be 1 MiB, whose base64 would not fit a
 * line.
 */
static void
notify_pieces(struct notify *n, struct session *s,
    const struct session_event *ev)
{
	struct session_event	piece = *ev;
	size_t			done = 0;

	while (done < ev->len) {
		piece.data = ev->data + done;
		piece.offset = ev->offset + done;
		piece.len = ev->len - done < NOTIFY_PIECE_MAX ? ev->len - done :
		    NOTIFY_PIECE_MAX;
		notify_piece(n, s, &piece);
		done += piece.len;
	}
}

/* A session changed state or printed: tell the subscriber if it wants it. */
static void
notify_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct notify	*n = k->arg;

	if (n->c->mode->raw || !notify_wants(n, s))
		return;
	if (ev->kind == SE_STATE)
		notify_send(n->c, s, notify_state(s));
	else if (ev->kind == SE_FAULT)
		notify_send(n->c, s, rpc_notification_new("session.fault",
		    json_pack("{s:I, s:O}", "session", (json_int_t)s->id,
		    "fault", ev->json)));
	else if (ev->kind == SE_RUNSTATE)
		notify_send(n->c, s, rpc_notification_new("session.target",
		    json_pack("{s:I, s:O}", "session", (json_int_t)s->id,
		    "target", ev->json)));
	else if (ev->kind == SE_VERDICT)
		notify_send(n->c, s, rpc_notification_new("session.verdict",
		    json_pack("{s:I, s:O}", "session", (json_int_t)s->id,
		    "verdict", ev->json)));
	else if (ev->kind == SE_BUNDLE)
		notify_send(n->c, s, rpc_notification_new("session.bundle",
		    json_pack("{s:I, s:O, s:O}", "session", (json_int_t)s->id,
		    "path", json_object_get(ev->json, "path"), "reason",
		    json_object_get(ev->json, "reason"))));
	else if (ev->kind == SE_BREAKPOINT)
		notify_send(n->c, s, rpc_notification_new("session.breakpoint",
		    json_pack("{s:I, s:O}", "session", (json_int_t)s->id,
		    "breakpoint", ev->json)));
	else if ((ev->kind == SE_OUTPUT || ev->kind == SE_STREAM) &&
	    ev->len > 0 && (n->streams & session_stream_bit(
	    notify_stream(ev))) != 0)
		notify_pieces(n, s, ev);
}

/*
 * Subscribe c to session id (0 for every session); streams, a set of
 * session_stream_bit, says whose output to send.
 */
void
notify_subscribe(struct conn *c, unsigned long id, unsigned streams)
{
	struct notify	*n;
	size_t		 i;

	if ((n = notify_find(c)) == NULL) {
		n = xcalloc(1, sizeof *n);
		n->c = c;
		n->sink = session_sink_add(NULL, SE_STATE | SE_OUTPUT |
		    SE_RUNSTATE | SE_FAULT | SE_BREAKPOINT | SE_VERDICT |
		    SE_BUNDLE | SE_STREAM,
		    notify_event, n);
		TAILQ_INSERT_TAIL(&notify_list, n, entry);
	}
	n->streams = streams;
	if (id == 0) {
		n->all = true;
		return;
	}
	for (i = 0; i < n->n; i++)
		if (n->ids[i] == id)
			return;
	n->ids = xreallocarray(n->ids, n->n + 1, sizeof *n->ids);
	n->ids[n->n++] = id;
}

/*
 * Drop c's subscription to id, or every one when id is 0; -1 when c hears
 * of every session, so that one cannot be taken out.
 */
int
notify_unsubscribe(struct conn *c, unsigned long id)
{
	struct notify	*n = notify_find(c);
	size_t		 i;

	if (n == NULL)
		return 0;
	if (id != 0 && n->all)
		return -1;
	if (id == 0) {
		notify_forget(c);
		return 0;
	}
	for (i = 0; i < n->n; i++) {
		if (n->ids[i] == id) {
			n->ids[i] = n->ids[--n->n];
			return 0;
		}
	}
	return 0;
}

/* The connection is going: it hears nothing more. */
void
notify_forget(struct conn *c)
{
	struct notify *n = notify_find(c);

	if (n == NULL)
		return;
	TAILQ_REMOVE(&notify_list, n, entry);
	session_sink_remove(n->sink);
	free(n->ids);
	free(n->gaps);
	free(n);
}
