/*
 * Pushed target output: a subscriber to a session's target stream becomes
 * its transport's reader and gets every byte, in order, as session.output
 * notifications of at most TAP_CHUNK_MAX bytes, each at its offset in the
 * stream; a slow one holds the target back by flow control.
 */
#include <stdlib.h>

#include "daemon.h"
#include "cursor-file.h"
#include "notify.h"
#include "conn.h"

/*
 * Most target bytes one session.output line carries: its base64 (4/3 of
 * it) and the envelope stay well inside the 1 MiB line limit, however
 * much one read of the pipe or the held output brings.
 */
#define TAP_CHUNK_MAX (512 * 1024)

/* One subscriber reading one session's target output. */
struct tap {
	TAILQ_ENTRY(tap)	 entry;
	struct conn		*c;
	struct session		*s;
	struct sink		*sink;
	uint64_t		 offset;	/* of the next byte, in the stream */
};

static TAILQ_HEAD(, tap) tap_list = TAILQ_HEAD_INITIALIZER(tap_list);

/*
 * The session.output line of len (at most TAP_CHUNK_MAX) bytes at the
 * tap's offset, written as text: it fits the line limit by construction,
 * so it cannot fail the way a dumped tree too long for a line does.
 */
static size_t
tap_line(const struct tap *t, const char *data, size_t len, bool eof,
    char **line)
{
	char *text;
	size_t n;

	if (len > TAP_CHUNK_MAX)
		log_fatal("a target chunk of %zu bytes", len);
	text = xb64_encode(data, len);
	n = xasprintf(line, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"session.output\",\"params\":{\"session\":%lu,\"stream\":"
	    "\"target\",\"offset\":%llu,\"run\":%lu,\"data\":\"%s\"%s}}\n",
	    t->s->id, (unsigned long long)t->offset,
	    transport_run(t->s->transport), text, eof ? ",\"eof\":true" : "");
	free(text);
	return n;
}

/*
 * Send bytes of target output (or its end) to the subscriber, a line a
 * chunk; how many it took, fewer once its connection is dropped.
 */
static size_t
tap_send(struct tap *t, const char *data, size_t len, bool eof)
{
	size_t	 done = 0, n, size;
	char	*line;

	do {
		if (t->c->closing || t->c->dropped)
			return done;
		n = len - done < TAP_CHUNK_MAX ? len - done : TAP_CHUNK_MAX;
		size = tap_line(t, data + done, n, eof && done + n == len,
		    &line);
		conn_send_line(t->c, line, size);
		free(line);
		/* A line the connection was dropped for never went out. */
		if (t->c->dropped)
			return done;
		done += n;
		t->offset += n;
	} while (done < len);
	return done;
}

/*
 * The target printed or ended: pass it on, and hold it back when full.
 * What a dropped subscriber could not take goes back to the transport,
 * for the next reader: a byte is never consumed for nobody.
 */
static void
tap_event(struct sink *k, struct session *s, const struct session_event *ev)
{
	struct tap	*t = k->arg;
	struct conn	*c = t->c;
	size_t		 sent;

	if (ev->kind == SE_TARGET_EOF) {
		tap_send(t, "", 0, true);
		return;
	}
	if (ev->data == NULL || ev->len == 0)
		return;
	sent = tap_send(t, ev->data, ev->len, false);
	/* The send may have dropped the client: c lasts the turn. */
	if (sent < ev->len) {
		log_info("session %lu: %zu target bytes kept for the next "
		    "reader: their subscriber was dropped", s->id,
		    ev->len - sent);
		transport_unread(s->transport, ev->data + sent,
		    ev->len - sent);
		transport_pause(s->transport);
		return;
	}
	if (!c->closing && !c->dropped &&
	    flow_full(conn_queued(c), TRANSPORT_MAX))
		transport_pause(s->transport);
}

/* Stop reading s's target output for c. */
static void
tap_free(struct tap *t)
{
	TAILQ_REMOVE(&tap_list, t, entry);
	/* The sink may hold the last reference: the session goes with it. */
	transport_passthrough(t->s->transport, false);
	cursor_file_taken(t->s);
	session_sink_remove(t->sink);
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
	t->offset = transport_offset(s->transport);
	TAILQ_INSERT_TAIL(&tap_list, t, entry);
	t->sink = session_sink_add(s, SE_TARGET | SE_TARGET_EOF, tap_event, t);
	/* Before the flush, which may end the subscription and let s go. */
	cursor_file_passing(s);
	/* What was held goes first, through the sink, and then an end. */
	transport_passthrough(s->transport, true);
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
