/* Client connections: peer check, framing, replies, and closing cleanly. */
#include <sys/socket.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

static void	conn_read_cb(uv_stream_t *, ssize_t, const uv_buf_t *);

/* One queued reply. */
struct conn_write {
	uv_write_t	 req;
	char		*data;
};

/* Free a connection once libuv is done with its handle. */
static void
conn_free_cb(uv_handle_t *h)
{
	struct conn *c = h->data;

	frame_free(&c->frame);
	notify_unsubscribe(c, 0);
	free(c);
}

/* Close now: queued writes are dropped, waiting requests go unanswered. */
void
conn_close(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	TAILQ_REMOVE(&dmn.conns, c, entry);
	if (c->raw != NULL)
		transport_detach(c->raw);
	c->raw = NULL;
	attach_remove(c);
	pending_forget_conn(c);
	uv_close((uv_handle_t *)&c->pipe, conn_free_cb);
}

/* The queued replies are out: now close. */
static void
conn_shutdown_cb(uv_shutdown_t *req, int status)
{
	struct conn *c = req->data;

	(void)status;
	free(req);
	conn_close(c);
}

/* Stop reading, send what is queued, then close. */
static void
conn_finish(struct conn *c)
{
	uv_shutdown_t *req;

	if (c->closing || c->finishing)
		return;
	c->finishing = true;
	uv_read_stop((uv_stream_t *)&c->pipe);
	if ((req = malloc(sizeof *req)) == NULL)
		log_fatal("out of memory");
	req->data = c;
	if (uv_shutdown(req, (uv_stream_t *)&c->pipe, conn_shutdown_cb) != 0) {
		free(req);
		conn_close(c);
	}
}

/* Close every connection after its queued replies (daemon exit). */
void
conn_close_all(void)
{
	struct conn *c, *next;

	TAILQ_FOREACH_SAFE(c, &dmn.conns, entry, next)
		conn_finish(c);
}

/* A reply has been written (or dropped); free its buffer. */
static void
conn_write_cb(uv_write_t *req, int status)
{
	struct conn_write	*w = (struct conn_write *)req;
	struct conn		*c = req->data;

	free(w->data);
	free(w);
	if (status != 0 && status != UV_ECANCELED) {
		conn_close(c);
		return;
	}
	if (c->raw != NULL && conn_write_queue(c) <= TRANSPORT_MAX / 2)
		transport_resume(c->raw);
}

/* Bytes queued for the client but not yet written. */
size_t
conn_write_queue(struct conn *c)
{
	return uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe);
}

/* Queue a copy of len bytes for the client. */
static void
conn_write_bytes(struct conn *c, char *line, size_t len)
{
	struct conn_write	*w;
	uv_buf_t		 buf;

	if ((w = malloc(sizeof *w)) == NULL)
		log_fatal("out of memory");
	w->data = line;
	w->req.data = c;
	buf = uv_buf_init(line, len);
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &buf, 1,
	    conn_write_cb) != 0) {
		free(line);
		free(w);
		conn_close(c);
	}
}

/* Queue raw target output for a bridged client. */
void
conn_send_raw(struct conn *c, const char *data, size_t len)
{
	uv_buf_t	 buf;
	char		*copy;
	int		 n;

	if (c->closing || len == 0)
		return;
	/* Most chunks go out at once; only the rest is copied and queued. */
	buf = uv_buf_init((char *)data, len);
	if ((n = uv_try_write((uv_stream_t *)&c->pipe, &buf, 1)) > 0) {
		data += n;
		len -= n;
	}
	if (len == 0)
		return;
	if ((copy = malloc(len)) == NULL)
		log_fatal("out of memory");
	memcpy(copy, data, len);
	conn_write_bytes(c, copy, len);
}

/* The target's output ended: flush and close the bridged client. */
void
conn_raw_eof(struct conn *c)
{
	conn_finish(c);
}

/* Read nothing more from the client while what it sent waits for room. */
void
conn_pause(struct conn *c)
{
	if (c->paused || c->closing || c->finishing || c->eof)
		return;
	c->paused = true;
	uv_read_stop((uv_stream_t *)&c->pipe);
}

/* Read from the client again. */
void
conn_resume(struct conn *c)
{
	if (!c->paused || c->closing || c->finishing)
		return;
	c->paused = false;
	uv_read_start((uv_stream_t *)&c->pipe, daemon_alloc_cb, conn_read_cb);
}

/* From now on the connection carries the target's bytes both ways. */
void
conn_go_raw(struct conn *c, struct transport *t)
{
	c->raw = t;
	transport_attach(t, c);
}

/* Queue one message on the connection; takes the reference to msg. */
void
conn_send(struct conn *c, json_t *msg)
{
	size_t	 len;
	char	*line;

	if (c->closing) {
		json_decref(msg);
		return;
	}
	line = rpc_dump(msg, &len);
	json_decref(msg);
	if (line == NULL) {
		msg = rpc_error_new(NULL, RPC_INTERNAL_ERROR, "the reply would "
		    "exceed the 1 MiB line limit", NULL);
		line = rpc_dump(msg, &len);
		json_decref(msg);
	}
	if (conn_write_queue(c) + len > CONN_WQ_MAX) {
		log_warn("dropping a client that reads no replies");
		free(line);
		conn_close(c);
		return;
	}
	conn_write_bytes(c, line, len);
}

/* Reply to a request with a result; notifications get nothing. */
void
conn_reply(struct conn *c, json_t *id, json_t *result)
{
	if (id == NULL) {
		json_decref(result);
		return;
	}
	conn_send(c, rpc_result_new(id, result));
}

/* Reply with an error; data (taken) may carry more than the kind. */
void
conn_error(struct conn *c, json_t *id, const struct rpc_error *err,
    json_t *data)
{
	conn_send(c, rpc_error_new(id, err->code, err->message, data));
}

/* Parse one line and hand the request on. */
static int
conn_line(void *arg, char *line, size_t len)
{
	struct conn		*c = arg;
	struct rpc_request	 req;
	struct rpc_error	 err;

	memset(&err, 0, sizeof err);
	if (rpc_parse(line, len, &req, &err) != 0) {
		conn_error(c, err.id, &err, NULL);
		json_decref(err.id);
		return 0;
	}
	method_dispatch(c, &req);
	rpc_request_free(&req);
	return c->closing || c->finishing || c->raw != NULL ||
	    c->viewing != NULL;
}

/* A bridged client's bytes go to the target; its EOF becomes the target's. */
static void
conn_raw_read(struct conn *c, ssize_t nread, const char *data)
{
	if (nread < 0 && c->viewing != NULL) {
		/* A viewer that stops sending has detached. */
		conn_finish(c);
		return;
	}
	if (nread < 0) {
		uv_read_stop((uv_stream_t *)&c->pipe);
		transport_eof(c->raw);
		return;
	}
	if (nread == 0)
		return;
	if (c->viewing != NULL) {
		attach_input(c, data, nread);
		return;
	}
	if (transport_write(c->raw, data, nread) != 0) {
		/* The target stopped reading for good; drop the rest. */
		return;
	}
	if (transport_queued(c->raw) > TRANSPORT_MAX)
		conn_pause(c);
}

/* Feed what the client sent to the framer; EOF ends the connection. */
static void
conn_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct conn		*c = st->data;
	struct rpc_error	 err;
	char			 msg[128];
	int			 rv;

	if (nread == 0)
		return;
	if (c->raw != NULL || c->viewing != NULL) {
		conn_raw_read(c, nread, buf->base);
		return;
	}
	if (nread < 0) {
		/* Half-closed: answer what is queued, then go. */
		if (nread == UV_EOF && c->npending > 0) {
			uv_read_stop(st);
			c->eof = true;
			return;
		}
		conn_finish(c);
		return;
	}
	rv = frame_feed(&c->frame, buf->base, nread, conn_line, c);
	/* What follows a pipe request in the same read is already raw. */
	if (rv != FRAME_OVERFLOW && (c->raw != NULL || c->viewing != NULL))
		conn_raw_read(c, nread - c->frame.used,
		    buf->base + c->frame.used);
	if (rv != FRAME_OVERFLOW)
		return;
	snprintf(msg, sizeof msg, "request line exceeds %d bytes", FRAME_MAX);
	rpc_error_set(&err, RPC_LIMIT, "%s", msg);
	conn_error(c, NULL, &err, NULL);
	conn_finish(c);
}

/* Close a half-closed connection once its last request is answered. */
void
conn_request_done(struct conn *c)
{
	if (c->npending == 0 && c->eof)
		conn_finish(c);
}

/* Whether the peer may use this daemon: its own user, or root. */
static bool
conn_peer_ok(struct conn *c)
{
	struct ucred	cred;
	socklen_t	len = sizeof cred;
	uv_os_fd_t	fd;

	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return false;
	c->uid = cred.uid;
	return cred.uid == geteuid() || cred.uid == 0;
}

/* Accept a client; refuse it with an error if it is another user. */
void
conn_accept(uv_stream_t *server)
{
	struct conn		*c;
	struct rpc_error	 err;

	if ((c = calloc(1, sizeof *c)) == NULL)
		log_fatal("out of memory");
	uv_pipe_init(dmn.loop, &c->pipe, 0);
	c->pipe.data = c;
	frame_init(&c->frame, FRAME_MAX);
	TAILQ_INSERT_TAIL(&dmn.conns, c, entry);
	if (uv_accept(server, (uv_stream_t *)&c->pipe) != 0) {
		conn_close(c);
		return;
	}
	if (!conn_peer_ok(c)) {
		log_warn("refused a client of uid %u", (unsigned)c->uid);
		rpc_error_set(&err, RPC_UNAUTHORIZED, "uid %u may not use the "
		    "daemon of uid %u", (unsigned)c->uid, (unsigned)geteuid());
		conn_error(c, NULL, &err, NULL);
		conn_finish(c);
		return;
	}
	uv_read_start((uv_stream_t *)&c->pipe, daemon_alloc_cb, conn_read_cb);
}
