/* The target's stdin and stdout: two daemon-owned pipes, bounded both ways. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

static void	transport_read_cb(uv_stream_t *, ssize_t, const uv_buf_t *);
static void	transport_close_input(struct transport *);

/* Stop reading the target. */
static void
transport_stop_reading(struct transport *t)
{
	if (!t->reading)
		return;
	uv_read_stop((uv_stream_t *)&t->out);
	t->reading = false;
}

/* Read the target, unless its output is held in full or a consumer waits. */
static void
transport_start_reading(struct transport *t)
{
	if (t->reading || t->out_eof || !t->out_open || t->paused ||
	    t->closing)
		return;
	if (!t->passthrough && t->len >= TRANSPORT_MAX)
		return;
	/* Passing through, what was given back goes before anything new. */
	if (t->passthrough && t->len > 0)
		return;
	uv_read_start((uv_stream_t *)&t->out, loop_alloc_cb,
	    transport_read_cb);
	t->reading = true;
}

/* A pipe handle has closed; the last one frees a closed transport. */
static void
transport_handle_closed(uv_handle_t *h)
{
	struct transport *t = h->data;

	if (--t->handles > 0 || !t->closing)
		return;
	free(t->buf);
	free(t);
}

/* Close one of the pipes. */
static void
transport_close_handle(uv_pipe_t *p, bool *open)
{
	if (!*open)
		return;
	*open = false;
	uv_close((uv_handle_t *)p, transport_handle_closed);
}

/* Every writer is gone: nothing more will come. */
static void
transport_out_eof(struct transport *t)
{
	t->out_eof = true;
	transport_stop_reading(t);
	transport_close_handle(&t->out, &t->out_open);
	t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
}

/* Keep target output for readers, or pass it straight to the owner. */
static void
transport_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct transport *t = st->data;

	if (nread == 0 || nread == UV_EAGAIN || t->closing)
		return;
	if (nread < 0) {
		transport_out_eof(t);
		return;
	}
	if (t->passthrough) {
		t->taken += nread;
		t->cb(t->arg, TRANSPORT_OUTPUT, buf->base, nread);
		return;
	}
	/* The allocation is fixed-size; the buffer grows to the bound. */
	if (t->len + nread > t->cap) {
		t->cap = t->len + nread > 2 * t->cap ? t->len + nread :
		    2 * t->cap;
		t->buf = xreallocarray(t->buf, t->cap, 1);
	}
	memcpy(t->buf + t->len, buf->base, nread);
	t->len += nread;
	if (t->len >= TRANSPORT_MAX)
		transport_stop_reading(t);
	t->cb(t->arg, TRANSPORT_OUTPUT, NULL, 0);
}

/* Create the two pipes; the child ends go to the keeper. */
struct transport *
transport_open(transport_cb cb, void *arg, char *err, size_t errlen)
{
	struct transport	*t;
	int			 in[2], out[2];

	/* Real pipes: /dev/fd/N on a socketpair fails with ENXIO. */
	if (pipe2(in, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return NULL;
	}
	if (pipe2(out, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		return NULL;
	}
	/*
	 * 1 MiB pipes (the unprivileged maximum) move a fast target's bytes
	 * in a sixteenth of the wakeups; where refused, the default stays.
	 */
	(void)fcntl(in[1], F_SETPIPE_SZ, TRANSPORT_PIPE_SIZE);
	(void)fcntl(out[1], F_SETPIPE_SZ, TRANSPORT_PIPE_SIZE);
	t = xcalloc(1, sizeof *t);
	t->cb = cb;
	t->arg = arg;
	t->child_in = in[0];
	t->child_out = out[1];
	uv_pipe_init(dmn.loop, &t->in, 0);
	uv_pipe_init(dmn.loop, &t->out, 0);
	t->in.data = t->out.data = t;
	uv_pipe_open(&t->in, in[1]);
	uv_pipe_open(&t->out, out[0]);
	t->in_open = t->out_open = true;
	t->handles = 2;
	transport_start_reading(t);
	return t;
}

/* The keeper has the child ends: drop ours so EOF can arrive. */
void
transport_spawned(struct transport *t)
{
	if (t->child_in != -1)
		close(t->child_in);
	if (t->child_out != -1)
		close(t->child_out);
	t->child_in = t->child_out = -1;
}

/*
 * The session has ended: its input closes; its output pipe stays open until
 * EOF has been read, so nothing the target wrote is lost.
 */
void
transport_finish(struct transport *t)
{
	transport_spawned(t);
	transport_close_handle(&t->in, &t->in_open);
	t->in_closed = true;
}

/* Take up to max bytes of held target output. */
size_t
transport_take(struct transport *t, char *dst, size_t max)
{
	size_t n = t->len < max ? t->len : max;

	if (n == 0)
		return 0;
	memcpy(dst, t->buf, n);
	memmove(t->buf, t->buf + n, t->len - n);
	t->len -= n;
	t->taken += n;
	if (t->len == 0 && t->cap > 65536) {
		free(t->buf);
		t->buf = NULL;
		t->cap = 0;
	}
	transport_start_reading(t);
	return n;
}

/*
 * Hold bytes handed out again, ahead of what is held: a consumer that
 * could not pass them on gives them back, and the next reader gets them.
 */
void
transport_unread(struct transport *t, const char *data, size_t len)
{
	if (len == 0)
		return;
	if (len > t->taken)
		log_fatal("%zu target bytes given back of %llu handed out", len,
		    (unsigned long long)t->taken);
	if (t->len + len > t->cap) {
		t->cap = t->len + len;
		t->buf = xreallocarray(t->buf, t->cap, 1);
	}
	memmove(t->buf + len, t->buf, t->len);
	memcpy(t->buf, data, len);
	t->len += len;
	t->taken -= len;
}

/* The target-stream offset of the next byte a reader gets. */
uint64_t
transport_offset(const struct transport *t)
{
	return t->taken;
}

/* Bytes of target output held for readers. */
size_t
transport_held(const struct transport *t)
{
	return t->len;
}

/* Whether every writer of the target's output is gone. */
bool
transport_ended(const struct transport *t)
{
	return t->out_eof;
}

/* Whether the output passes straight through to a bridged client. */
bool
transport_piped(const struct transport *t)
{
	return t->passthrough;
}

/* Whether the output has ended and every byte of it was taken. */
bool
transport_drained(const struct transport *t)
{
	return t->out_eof && t->len == 0;
}

/* Bytes accepted for the target's stdin but not yet written. */
size_t
transport_queued(struct transport *t)
{
	if (!t->in_open)
		return 0;
	return stream_queued((uv_stream_t *)&t->in);
}

/* A write reached the pipe (or failed: then the target's stdin is closed). */
static void
transport_written(void *arg, int status)
{
	struct transport *t = arg;

	t->writes--;
	if (t->closing)
		return;
	if (status != 0 && status != UV_ECANCELED) {
		log_info("target input closed: %s", uv_strerror(status));
		t->in_closed = true;
	}
	transport_close_input(t);
	t->cb(t->arg, TRANSPORT_INPUT, NULL, 0);
}

/* Queue bytes for the target's stdin; -1 once it is closed. */
int
transport_write(struct transport *t, const char *data, size_t len)
{
	int rc;

	if (t->in_closed || !t->in_open)
		return -1;
	if (len == 0)
		return 0;
	rc = stream_write((uv_stream_t *)&t->in, data, len, transport_written,
	    t);
	if (rc < 0) {
		t->in_closed = true;
		return -1;
	}
	if (rc == 0)
		t->writes++;
	return 0;
}

/* Close the target's stdin now if an EOF was asked for and nothing is queued. */
static void
transport_close_input(struct transport *t)
{
	if (!t->eof_wanted || !t->in_open || transport_queued(t) > 0 ||
	    t->writes > 0)
		return;
	/* shutdown(2) does not apply to a pipe: closing it is the EOF. */
	transport_close_handle(&t->in, &t->in_open);
}

/* Send EOF to the target once what is queued is written. */
void
transport_eof(struct transport *t)
{
	if (!t->in_open)
		return;
	t->in_closed = true;
	t->eof_wanted = true;
	transport_close_input(t);
}

/* A consumer cannot take more for now: stop reading the target. */
void
transport_pause(struct transport *t)
{
	t->paused = true;
	transport_stop_reading(t);
}

/*
 * Hand what is held to the owner, which passes output through: it may
 * give some back (transport_unread), into a buffer of its own.
 */
static void
transport_flush(struct transport *t)
{
	char	*held = t->buf;
	size_t	 len = t->len;

	if (!t->passthrough || len == 0)
		return;
	t->buf = NULL;
	t->len = t->cap = 0;
	t->taken += len;
	t->cb(t->arg, TRANSPORT_OUTPUT, held, len);
	free(held);
}

/* The consumer has room again: what it gave back goes first. */
void
transport_resume(struct transport *t)
{
	t->paused = false;
	transport_flush(t);
	transport_start_reading(t);
}

/*
 * Pass output straight to the owner (a bridged client) or hold it for
 * readers; what is held goes out first when passing through begins.
 */
void
transport_passthrough(struct transport *t, bool on)
{
	t->passthrough = on;
	t->paused = false;
	transport_flush(t);
	transport_start_reading(t);
}

/* Close both pipes and free the transport once libuv has let go. */
void
transport_close(struct transport *t)
{
	if (t == NULL || t->closing)
		return;
	transport_spawned(t);
	transport_stop_reading(t);
	t->closing = true;
	transport_close_handle(&t->in, &t->in_open);
	transport_close_handle(&t->out, &t->out_open);
	if (t->handles == 0) {
		free(t->buf);
		free(t);
	}
}
