/*
 * The target's stdout, read into its transcript: each byte is spliced from
 * the pipe into the log before the daemon reads it back, so a daemon
 * killed at any moment leaves every byte in the log or still in the pipe
 * for the next one; reading stops where a run ends, where memory would
 * have to hold what the log cannot, and while a consumer waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "transport.h"

/* Bytes read from the target's pipe so far: those handed out and those held. */
uint64_t
transport_out_got(const struct transport *t)
{
	return output_size(t->log);
}

/*
 * How many more bytes may be read for readers now: unread output waits in
 * the transcript, on disk, so as many as come; but what its log could not
 * take (a failing disk, its size limit) is only in its ring, of
 * TRANSPORT_MAX bytes, and no read may push an unread byte out of it: the
 * target is held back instead, and no byte is lost for a slow reader.
 */
static uint64_t
transport_out_room(const struct transport *t)
{
	uint64_t from = output_unkept(t->log, t->taken), mem;

	if (from == transport_out_got(t))
		return UINT64_MAX;
	mem = transport_out_got(t) - from;
	return mem < TRANSPORT_MAX ? TRANSPORT_MAX - mem : 0;
}

/*
 * How far the pipe may be read now: to the end of the last run while no
 * run has begun since, and when passing through, to the next run's end,
 * which the consumer hears of before any byte after it.
 */
static uint64_t
transport_out_limit(const struct transport *t)
{
	if (t->nends == 0)
		return UINT64_MAX;
	if (t->passthrough)
		return t->ends[0];
	if (!t->open)
		return t->ends[t->nends - 1];
	return UINT64_MAX;
}

/* How many bytes one read may take, never past where reading stops. */
static size_t
transport_out_want(const struct transport *t, size_t len)
{
	uint64_t room = transport_out_limit(t) - transport_out_got(t), kept;

	if (!t->passthrough && (kept = transport_out_room(t)) < room)
		room = kept;
	return room < len ? (size_t)room : len;
}

/* Stop reading the target. */
void
transport_out_stop(struct transport *t)
{
	if (!t->reading)
		return;
	uv_poll_stop(&t->out);
	t->reading = false;
}

static void	transport_out_ready(uv_poll_t *, int, int);

/* Read the target, unless its output is held in full or a consumer waits. */
void
transport_out_start(struct transport *t)
{
	if (t->reading || t->out_eof || !t->out_open ||
	    t->paused || t->closing ||
	    transport_out_got(t) >= transport_out_limit(t))
		return;
	if (!t->passthrough && transport_out_room(t) == 0)
		return;
	/* Passing through, what was given back goes before anything new. */
	if (t->passthrough && transport_held(t) > 0)
		return;
	uv_poll_start(&t->out, UV_READABLE, transport_out_ready);
	t->reading = true;
}

/* Watch the daemon's end of the target's stdout, which reads never block on. */
void
transport_out_watch(struct transport *t, int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		log_fatal("target output fd %d: %s", fd, strerror(errno));
	if (uv_poll_init(dmn.loop, &t->out, fd) != 0)
		log_fatal("target output fd %d cannot be watched", fd);
	t->out.data = t;
	t->out_fd = fd;
	t->out_open = true;
	t->handles++;
}

/* Close the daemon's end of the target's stdout. */
void
transport_out_close(struct transport *t)
{
	if (!t->out_open)
		return;
	t->out_open = false;
	t->reading = false;
	uv_close((uv_handle_t *)&t->out, transport_handle_closed);
	/* A poll handle closes no descriptor; stopped, its fd may go. */
	close(t->out_fd);
	t->out_fd = -1;
}

/* Every writer is gone: nothing more will come. */
static void
transport_out_eof(struct transport *t)
{
	t->out_eof = true;
	transport_out_stop(t);
	transport_out_close(t);
	/* Passing through, every byte before it has been handed on. */
	if (t->passthrough)
		t->eof_told = true;
	t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
}

/*
 * Reading has come to where it stops, a run's end: no more for now; the
 * readers hear of it, one passing through once it has every byte before.
 */
void
transport_out_reached(struct transport *t)
{
	if (t->nends == 0 || transport_out_got(t) < transport_out_limit(t))
		return;
	transport_out_stop(t);
	if (t->passthrough && t->taken != t->ends[0])
		return;
	t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
	transport_advance(t);
}

/*
 * The pipe has bytes (or its end): every byte goes into the transcript
 * first; then it is held there for readers, or passed straight to the
 * owner. One read a loop turn: the loop's other handles have theirs
 * between two.
 */
static void
transport_out_ready(uv_poll_t *p, int status, int events)
{
	struct transport	*t = p->data;
	uv_buf_t		 buf;
	size_t			 want;
	ssize_t			 n;

	/* A pipe's read end has no error of its own: its end is read as 0. */
	(void)status;
	(void)events;
	if (t->closing || !t->reading)
		return;
	loop_alloc_cb((uv_handle_t *)p, 0, &buf);
	if ((want = transport_out_want(t, buf.len)) == 0) {
		transport_out_stop(t);
		return;
	}
	/* What the reader has yet to take stays in the page cache. */
	output_cache_want(t->log, t->taken);
	n = output_splice(t->log, t->out_fd, buf.base, want);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		transport_out_eof(t);
		return;
	}
	if (t->passthrough) {
		t->taken += n;
		t->cb(t->arg, TRANSPORT_OUTPUT, buf.base, n);
	} else {
		if (transport_out_room(t) == 0)
			transport_out_stop(t);
		t->cb(t->arg, TRANSPORT_OUTPUT, NULL, 0);
	}
	transport_out_reached(t);
}
