/* A client bridged to a session's transport: raw bytes both ways. */
#include <stdlib.h>

#include "daemon.h"
#include "cursor-file.h"
#include "conn.h"

/* One bridged client. */
struct pipe {
	struct conn	*c;
	struct session	*s;
	struct sink	*sink;
	bool		 ended;		/* the output ended: let go of it */
};

/*
 * The output has ended (for good, or the program's run): the client is
 * let go, and a later run's bytes are held for the next reader, not sent
 * to a client that is being closed.
 */
static void
pipe_end(struct pipe *p)
{
	if (p->ended)
		return;
	p->ended = true;
	/* The sink may hold the last reference: the session goes with it. */
	transport_passthrough(p->s->transport, false);
	cursor_file_taken(p->s);
	session_sink_remove(p->sink);
	p->sink = NULL;
	p->s = NULL;
}

/*
 * Send target bytes, those just before the reader's offset, which the
 * transcript holds: from its pages while the socket takes them and
 * nothing waits before them, so they are not copied through the daemon;
 * what is left is queued as a copy.
 */
static void
pipe_send(struct conn *c, struct transport *t, const char *data, size_t len)
{
	uv_os_fd_t	fd;
	ssize_t		sent = 0;

	if (!c->closing && !c->dropped && conn_queued(c) == 0 &&
	    uv_fileno((uv_handle_t *)conn_out(c), &fd) == 0 &&
	    (sent = transport_send_taken(t, fd, len)) < 0)
		sent = 0;
	conn_send_raw(c, data + sent, len - (size_t)sent);
}

/* The target printed, ended, or took input: move bytes on, or wait. */
static void
pipe_event(struct sink *k, struct session *s, const struct session_event *ev)
{
	struct pipe		*p = k->arg;
	struct conn		*c = p->c;
	struct transport	*t = s->transport;

	switch (ev->kind) {
	case SE_TARGET:
		/* A client that is gone has taken p with it; c lasts the turn. */
		pipe_send(c, t, ev->data, ev->len);
		if (!c->closing && flow_full(conn_queued(c), TRANSPORT_MAX))
			transport_pause(t);
		return;
	case SE_TARGET_EOF:
		/* The target's output ended: flush and close the client. */
		pipe_end(p);
		conn_finish(c);
		return;
	case SE_INPUT:
		if (flow_room(transport_in_queued(t), TRANSPORT_MAX))
			conn_resume(c);
		return;
	default:
		return;
	}
}

/* The client's bytes go to the target. */
static size_t
pipe_input(struct conn *c, const char *data, size_t len)
{
	struct pipe		*p = c->mode_data;
	struct transport	*t;

	/* A target that stopped reading for good: the rest is dropped. */
	if (p->ended || transport_in_write((t = p->s->transport), data,
	    len) != 0)
		return len;
	if (flow_full(transport_in_queued(t), TRANSPORT_MAX))
		conn_pause(c);
	return len;
}

/*
 * The client's half close is the target's EOF (a full close never gets
 * here: conn.c closes the connection, and the bridge with it).
 */
static void
pipe_eof(struct conn *c)
{
	struct pipe *p = c->mode_data;

	if (!p->ended)
		transport_in_eof(p->s->transport);
}

/* The client took what was queued: the target may print more. */
static void
pipe_drained(struct conn *c)
{
	struct pipe *p = c->mode_data;

	if (!p->ended && flow_room(conn_queued(c), TRANSPORT_MAX))
		transport_resume(p->s->transport);
}

/* The client is gone: output is held for readers again. */
static void
pipe_close(struct conn *c)
{
	struct pipe *p = c->mode_data;

	pipe_end(p);
	free(p);
}

static const struct conn_mode pipe_mode = {
	.name = "pipe",
	.raw = true,
	.input = pipe_input,
	.eof = pipe_eof,
	.drained = pipe_drained,
	.close = pipe_close,
};

/*
 * Let the client's socket hold as much as the bridge may queue for it:
 * with its default buffer (208 KiB) a read of the target's pipe went out
 * half at once and half through a copy queued in the daemon; now the
 * kernel holds those bytes instead. The system's cap (wmem_max) may keep
 * it smaller; a dialed client's pipe is left as it is.
 */
static void
pipe_room(struct conn *c)
{
	int size = TRANSPORT_MAX;

	(void)uv_send_buffer_size((uv_handle_t *)conn_out(c), &size);
}

/* From now on the connection carries the target's bytes both ways. */
void
pipe_start(struct conn *c, struct session *s)
{
	struct pipe *p = xcalloc(1, sizeof *p);

	pipe_room(c);
	p->c = c;
	p->s = s;
	conn_set_mode(c, &pipe_mode, p);
	p->sink = session_sink_add(s, SE_TARGET | SE_TARGET_EOF | SE_INPUT,
	    pipe_event, p);
	/* Before the flush, which may end the pipe and let s go. */
	cursor_file_passing(s);
	/* What was held goes first, through the sink, and then an end. */
	transport_passthrough(s->transport, true);
}
