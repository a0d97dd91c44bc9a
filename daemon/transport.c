/* The target's stdin and stdout: two daemon-owned pipes, bounded both ways. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* One queued write to the target's stdin. */
struct transport_write {
	uv_write_t	 req;
	char		*data;
};

static void	transport_read_cb(uv_stream_t *, ssize_t, const uv_buf_t *);
static void	transport_close_input(struct transport *);

/* Stop reading the target while nobody takes its output. */
static void
transport_pause(struct transport *t)
{
	if (!t->reading)
		return;
	uv_read_stop((uv_stream_t *)&t->out);
	t->reading = false;
}

/* Read the target again once there is room for its output. */
void
transport_resume(struct transport *t)
{
	if (t->reading || t->out_eof || !t->out_open)
		return;
	if (t->raw != NULL ? conn_write_queue(t->raw) > TRANSPORT_MAX :
	    t->len >= TRANSPORT_MAX)
		return;
	uv_read_start((uv_stream_t *)&t->out, daemon_alloc_cb,
	    transport_read_cb);
	t->reading = true;
}

/* Keep target output for readers, or pass it straight to a piped client. */
static void
transport_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct transport *t = st->data;

	if (nread == 0 || nread == UV_EAGAIN)
		return;
	if (nread < 0) {
		/* Every writer is gone: nothing more will come. */
		t->out_eof = true;
		transport_pause(t);
		uv_close((uv_handle_t *)&t->out, NULL);
		t->out_open = false;
		if (t->raw != NULL)
			conn_raw_eof(t->raw);
		pending_poke();
		return;
	}
	if (t->raw != NULL) {
		conn_send_raw(t->raw, buf->base, nread);
		if (conn_write_queue(t->raw) > TRANSPORT_MAX)
			transport_pause(t);
		return;
	}
	/* The allocation is fixed-size; the buffer grows to the bound. */
	if (t->len + nread > t->cap) {
		t->cap = t->len + nread > 2 * t->cap ? t->len + nread :
		    2 * t->cap;
		if ((t->buf = realloc(t->buf, t->cap)) == NULL)
			log_fatal("out of memory");
	}
	memcpy(t->buf + t->len, buf->base, nread);
	t->len += nread;
	if (t->len >= TRANSPORT_MAX)
		transport_pause(t);
	pending_poke();
}

/* Create the two pipes; the child ends go to the keeper. */
int
transport_open(struct transport *t, struct session *s, char *err,
    size_t errlen)
{
	int in[2], out[2];

	memset(t, 0, sizeof *t);
	t->s = s;
	t->child_in = t->child_out = -1;
	/* Real pipes: /dev/fd/N on a socketpair fails with ENXIO. */
	if (pipe2(in, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(out, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		return -1;
	}
	t->child_in = in[0];
	t->child_out = out[1];
	uv_pipe_init(dmn.loop, &t->in, 0);
	uv_pipe_init(dmn.loop, &t->out, 0);
	t->in.data = t->out.data = t;
	uv_pipe_open(&t->in, in[1]);
	uv_pipe_open(&t->out, out[0]);
	t->in_open = t->out_open = true;
	t->enabled = true;
	transport_resume(t);
	return 0;
}

/* The keeper has the child ends: drop ours so EOF can arrive. */
void
transport_spawned(struct transport *t)
{
	if (!t->enabled)
		return;
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
	if (!t->enabled)
		return;
	transport_spawned(t);
	if (t->in_open)
		uv_close((uv_handle_t *)&t->in, NULL);
	t->in_open = false;
	t->in_closed = true;
}

/* Take up to max bytes of buffered target output. */
size_t
transport_take(struct transport *t, char *dst, size_t max)
{
	size_t n = t->len < max ? t->len : max;

	memcpy(dst, t->buf, n);
	memmove(t->buf, t->buf + n, t->len - n);
	t->len -= n;
	if (t->len == 0 && t->cap > 65536) {
		free(t->buf);
		t->buf = NULL;
		t->cap = 0;
	}
	transport_resume(t);
	return n;
}

/* Bytes accepted for the target's stdin but not yet written. */
size_t
transport_queued(struct transport *t)
{
	if (!t->in_open)
		return 0;
	return uv_stream_get_write_queue_size((uv_stream_t *)&t->in);
}

/* A write reached the pipe (or failed: then the target's stdin is closed). */
static void
transport_write_cb(uv_write_t *req, int status)
{
	struct transport_write	*w = (struct transport_write *)req;
	struct transport	*t = req->data;

	free(w->data);
	free(w);
	t->writes_in_flight--;
	if (status != 0 && status != UV_ECANCELED) {
		log_info("session %lu: target input closed: %s", t->s->id,
		    uv_strerror(status));
		t->in_closed = true;
	}
	transport_close_input(t);
	if (t->raw != NULL && transport_queued(t) <= TRANSPORT_MAX / 2)
		conn_resume(t->raw);
	pending_poke();
}

/* Queue bytes for the target's stdin; -1 once it is closed. */
int
transport_write(struct transport *t, const char *data, size_t len)
{
	struct transport_write	*w;
	uv_buf_t		 buf;

	int			 n;

	if (t->in_closed || !t->in_open)
		return -1;
	/* Most chunks go in at once; only the rest is copied and queued. */
	buf = uv_buf_init((char *)data, len);
	n = len > 0 ? uv_try_write((uv_stream_t *)&t->in, &buf, 1) : 0;
	if (n == UV_EPIPE) {
		t->in_closed = true;
		return -1;
	}
	if (n > 0) {
		data += n;
		len -= n;
	}
	if (len == 0)
		return 0;
	if ((w = malloc(sizeof *w)) == NULL || (w->data = malloc(len)) == NULL)
		log_fatal("out of memory");
	memcpy(w->data, data, len);
	w->req.data = t;
	buf = uv_buf_init(w->data, len);
	if (uv_write(&w->req, (uv_stream_t *)&t->in, &buf, 1,
	    transport_write_cb) != 0) {
		free(w->data);
		free(w);
		t->in_closed = true;
		return -1;
	}
	t->writes_in_flight++;
	return 0;
}

/* Close the target's stdin now if an EOF was asked for and nothing is queued. */
static void
transport_close_input(struct transport *t)
{
	if (!t->eof_wanted || !t->in_open ||
	    uv_stream_get_write_queue_size((uv_stream_t *)&t->in) > 0 ||
	    t->writes_in_flight > 0)
		return;
	/* shutdown(2) does not apply to a pipe: closing it is the EOF. */
	uv_close((uv_handle_t *)&t->in, NULL);
	t->in_open = false;
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

/* Bridge a client connection to the pipes: buffered output goes first. */
void
transport_attach(struct transport *t, struct conn *c)
{
	t->raw = c;
	if (t->len > 0)
		conn_send_raw(c, t->buf, t->len);
	t->len = 0;
	if (t->out_eof)
		conn_raw_eof(c);
	transport_resume(t);
}

/* The bridged client is gone: output is buffered for readers again. */
void
transport_detach(struct transport *t)
{
	t->raw = NULL;
	transport_resume(t);
}
