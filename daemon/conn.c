/*
 * One client connection: a stream in a mode (rpc, pipe or attach) whose
 * input, eof, drained and close hooks it calls; it knows nothing of them.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "conn.h"
#include "dial.h"
#include "listener.h"

/* Every open connection, from its accept until conn_close. */
static TAILQ_HEAD(, conn) conn_all = TAILQ_HEAD_INITIALIZER(conn_all);
/* Closes dropped connections. */
static struct timer	*conn_sweep_timer;

static void	conn_keep(struct conn *, const char *, size_t);
static void	conn_again_add(struct conn *);
static void	conn_again_remove(struct conn *);

/* Feeds connections what they left of a read, on the coming loop turns. */
static uv_idle_t	*conn_again_idle;
/* The connections it is to feed: left bytes, and may go on. */
static TAILQ_HEAD(, conn) conn_waiting = TAILQ_HEAD_INITIALIZER(conn_waiting);

static struct log_burst conn_fd_log = {
	.more = "refused %lu more clients in the last second: out of file "
	    "descriptors"
};

/* Someone to tell when the connection closes. */
struct conn_hook {
	struct conn_hook	*next;
	conn_hook_cb		 cb;
	void			*arg;
};

/* Call cb(c, arg) when c closes. */
void
conn_hook_add(struct conn *c, conn_hook_cb cb, void *arg)
{
	struct conn_hook *h = xcalloc(1, sizeof *h);

	h->cb = cb;
	h->arg = arg;
	h->next = c->hooks;
	c->hooks = h;
}

/* Forget a hook added with the same cb and arg. */
void
conn_hook_remove(struct conn *c, conn_hook_cb cb, void *arg)
{
	struct conn_hook **p, *h;

	for (p = &c->hooks; (h = *p) != NULL; p = &h->next) {
		if (h->cb != cb || h->arg != arg)
			continue;
		*p = h->next;
		free(h);
		return;
	}
}

/* Free a connection once libuv is done with the last of its handles. */
void
conn_free_cb(uv_handle_t *h)
{
	struct conn *c = h->data;

	if (--c->nhandles == 0)
		free(c);
}

/* The stream the connection reads: its socket, or the stdin dial passed. */
static uv_stream_t *
conn_in(struct conn *c)
{
	return c->rd;
}

/* The stream the connection writes: its socket, or the stdout dial passed. */
uv_stream_t *
conn_out(struct conn *c)
{
	return c->wr;
}

/* Close now: queued writes are dropped; the mode lets go of its state. */
void
conn_close(struct conn *c)
{
	struct conn_hook *h;

	if (c->closing)
		return;
	c->closing = true;
	TAILQ_REMOVE(&conn_all, c, entry);
	if (c->mode != NULL && c->mode->close != NULL)
		c->mode->close(c);
	c->mode = NULL;
	conn_again_remove(c);
	free(c->in);
	c->in = NULL;
	while ((h = c->hooks) != NULL) {
		c->hooks = h->next;
		h->cb(c, h->arg);
		free(h);
	}
	dial_close(c);
	uv_close((uv_handle_t *)&c->h, conn_free_cb);
}

/* Close every dropped connection, with nothing of theirs up the stack. */
static void
conn_sweep(void *arg)
{
	struct conn *c, *next;

	(void)arg;
	TAILQ_FOREACH_SAFE(c, &conn_all, entry, next)
		if (c->dropped && !c->again)
			conn_close(c);
}

/* Have the sweep close dropped connections on the next loop turn. */
static void
conn_sweep_soon(void)
{
	if (conn_sweep_timer == NULL)
		conn_sweep_timer = timer_new(conn_sweep, NULL);
	timer_start(conn_sweep_timer, 0);
}

/*
 * The peer is gone or reads nothing: send and read no more, and close on
 * a later loop turn, so that no caller (a reply, a sink, a mode switch)
 * finds its connection freed under it. Requests it sent that wait for
 * their turn (conn_keep) still run, unanswered, as they would have had
 * they come in the same read: a client that writes and goes loses nothing
 * to the daemon's turn-taking.
 */
void
conn_drop(struct conn *c)
{
	if (c->closing || c->dropped)
		return;
	c->dropped = true;
	uv_read_stop(conn_in(c));
	uv_read_stop((uv_stream_t *)&c->h);
	conn_sweep_soon();
}

/* The queued bytes are out: now close. */
static void
conn_shutdown_cb(uv_shutdown_t *req, int status)
{
	struct conn *c = req->data;

	(void)status;
	free(req);
	conn_close(c);
}

/* Stop reading, send what is queued, then close. */
void
conn_finish(struct conn *c)
{
	uv_shutdown_t *req;

	if (c->closing || c->finishing || c->dropped)
		return;
	c->finishing = true;
	uv_read_stop(conn_in(c));
	req = xmalloc(sizeof *req);
	req->data = c;
	/* A pipe has no shutdown(2): it fails once the queue is out, and closes. */
	if (uv_shutdown(req, conn_out(c), conn_shutdown_cb) != 0) {
		free(req);
		conn_close(c);
	}
}

/* Close every connection after its queued bytes (daemon exit). */
void
conn_close_all(void)
{
	struct conn *c, *next;

	TAILQ_FOREACH_SAFE(c, &conn_all, entry, next)
		conn_finish(c);
}

/* How many connections are open, closing ones not counted. */
size_t
conn_count(void)
{
	struct conn	*c;
	size_t		 n = 0;

	TAILQ_FOREACH(c, &conn_all, entry)
		n++;
	return n;
}

/* Close those still flushing at exit now: their clients read nothing. */
void
conn_abandon_all(void)
{
	struct conn *c, *next;

	TAILQ_FOREACH_SAFE(c, &conn_all, entry, next) {
		log_warn("closing a client that did not read its last replies");
		conn_close(c);
	}
}

/* Bytes queued for the client but not yet written. */
size_t
conn_queued(struct conn *c)
{
	return stream_queued(conn_out(c));
}

/* A queued write is out (or failed: the client is gone). */
static void
conn_written(void *arg, int status)
{
	struct conn *c = arg;

	if (c->closing || c->dropped || status == UV_ECANCELED)
		return;
	if (status != 0) {
		conn_drop(c);
		return;
	}
	if (c->mode->drained != NULL)
		c->mode->drained(c);
}

/* Whether a peer at EOF closed the connection, not only its sending side. */
static bool
conn_peer_closed(struct conn *c)
{
	struct pollfd	pfd;
	uv_os_fd_t	fd;

	/* Over dial's pipes, stdin's end is a half close unless stdout's reader went. */
	if (c->dialed)
		return dial_out_gone(c);
	/* TCP sends the same FIN for close(2) and shutdown(2): a half close. */
	if (c->h.handle.type != UV_NAMED_PIPE ||
	    uv_fileno(&c->h.handle, &fd) != 0)
		return false;
	/*
	 * A Unix stream socket reports POLLHUP once both directions are shut
	 * (the peer closed, or shut down both), but only POLLIN and POLLRDHUP
	 * after its shutdown(SHUT_WR); a poll of no time asks without blocking.
	 */
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	while (poll(&pfd, 1, 0) == -1)
		if (errno != EINTR)
			return false;
	return (pfd.revents & POLLHUP) != 0;
}

/* Send bytes as they are (raw modes). */
void
conn_send_raw(struct conn *c, const char *data, size_t len)
{
	if (c->closing || c->dropped || len == 0)
		return;
	if (stream_write(conn_out(c), data, len, conn_written,
	    c) < 0)
		conn_drop(c);
}

/* Send one message as a line; takes the reference to msg. */
void
conn_send(struct conn *c, json_t *msg)
{
	conn_send_id(c, msg, NULL);
}

/* Send a reply with its id spelled as the request spelled it (id_text). */
void
conn_send_id(struct conn *c, json_t *msg, const char *id_text)
{
	size_t	 len;
	char	*line;

	if (c->closing || c->dropped) {
		json_decref(msg);
		return;
	}
	line = rpc_dump_id(msg, id_text, &len);
	json_decref(msg);
	conn_send_text(c, line, len);
}

/* Send a reply line (taken); NULL, for one that could not be written, sends an error. */
void
conn_send_text(struct conn *c, char *line, size_t len)
{
	json_t	*msg;

	if (line == NULL) {
		msg = rpc_error_new(NULL, RPC_INTERNAL_ERROR, "the daemon could "
		    "not write its reply", NULL);
		line = rpc_dump(msg, &len);
		json_decref(msg);
	}
	if (!c->closing && !c->dropped)
		conn_send_line(c, line, len);
	free(line);
}

/* Send a line already encoded, unless the client has stopped reading. */
void
conn_send_line(struct conn *c, const char *line, size_t len)
{
	if (conn_queued(c) + len > CONN_WQ_MAX) {
		log_warn("dropping a client that reads no replies");
		conn_drop(c);
		return;
	}
	conn_send_raw(c, line, len);
}

/* Read nothing more from the client while what it sent waits for room. */
void
conn_pause(struct conn *c)
{
	if (c->paused || c->closing || c->finishing || c->eof)
		return;
	c->paused = true;
	conn_again_remove(c);
	uv_read_stop(conn_in(c));
	/* Nobody reads a dropped one's replies: what it left waits for nothing. */
	if (c->dropped)
		conn_sweep_soon();
}

/* Read from the client again, once what it left of a read is taken. */
void
conn_resume(struct conn *c)
{
	if (!c->paused || c->closing || c->finishing || c->dropped)
		return;
	c->paused = false;
	if (c->in != NULL)
		conn_again_add(c);
	else
		uv_read_start(conn_in(c), loop_alloc_cb, conn_read_cb);
}

/*
 * Feed bytes to the connection's mode; what follows a switch goes to the
 * next mode, and what a mode leaves while it stays is kept for a later turn.
 */
static void
conn_feed(struct conn *c, const char *data, size_t len)
{
	const struct conn_mode	*mode;
	size_t			 used = 0;

	while (used < len && !c->closing && !c->finishing) {
		mode = c->mode;
		used += mode->input(c, data + used, len - used);
		if (c->mode == mode && used < len && !c->finishing) {
			conn_keep(c, data + used, len - used);
			return;
		}
	}
}

/*
 * Keep what the mode left of a read and read no more meanwhile: it is fed
 * again on a later loop turn (or once the mode resumes a paused connection),
 * so one client's lines never keep the loop from the others'.
 */
static void
conn_keep(struct conn *c, const char *data, size_t len)
{
	c->in = xmalloc(len);
	memcpy(c->in, data, len);
	c->inlen = len;
	uv_read_stop(conn_in(c));
	if (!c->paused)
		conn_again_add(c);
}

/* Feed a connection what it left; read from it again once all is taken. */
static void
conn_again(struct conn *c)
{
	char	*data = c->in;
	size_t	 len = c->inlen;

	c->in = NULL;
	c->inlen = 0;
	conn_feed(c, data, len);
	free(data);
	if (c->dropped && !c->again)
		conn_sweep_soon();
	if (c->in == NULL && !c->paused && !c->closing && !c->finishing &&
	    !c->dropped && !c->eof)
		uv_read_start(conn_in(c), loop_alloc_cb, conn_read_cb);
}

/*
 * Once a loop turn, before it polls (with no wait while this runs): the
 * connections waiting to be fed get what they left, each once; one that
 * leaves bytes again waits for the next turn, and the handle stops when
 * none waits.
 */
static void
conn_again_cb(uv_idle_t *h)
{
	struct conn	*c;
	size_t		 n = 0;

	TAILQ_FOREACH(c, &conn_waiting, again_entry)
		n++;
	while (n-- > 0 && (c = TAILQ_FIRST(&conn_waiting)) != NULL) {
		conn_again_remove(c);
		if (!c->finishing && !c->closing)
			conn_again(c);
	}
	if (TAILQ_EMPTY(&conn_waiting))
		uv_idle_stop(h);
}

/* Have c fed what it left on the coming loop turns. */
static void
conn_again_add(struct conn *c)
{
	if (c->again)
		return;
	c->again = true;
	TAILQ_INSERT_TAIL(&conn_waiting, c, again_entry);
	if (conn_again_idle == NULL) {
		conn_again_idle = xmalloc(sizeof *conn_again_idle);
		uv_idle_init(dmn.loop, conn_again_idle);
	}
	uv_idle_start(conn_again_idle, conn_again_cb);
}

/* c is fed no more by the idle handle (paused, fed, or closing). */
static void
conn_again_remove(struct conn *c)
{
	if (!c->again)
		return;
	c->again = false;
	TAILQ_REMOVE(&conn_waiting, c, again_entry);
}

/* Switch the connection to another mode; the old one lets go first. */
void
conn_set_mode(struct conn *c, const struct conn_mode *mode, void *data)
{
	if (c->mode != NULL && c->mode->close != NULL)
		c->mode->close(c);
	c->mode = mode;
	c->mode_data = data;
}

/*
 * Feed what the client sent to its mode; what follows a switch goes to the
 * next. Descriptors passed with it are dial's to take, with the request.
 */
void
conn_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct conn	*c = st->data;

	if (dial_take(c) != 0) {
		conn_drop(c);
		return;
	}
	if (nread == 0)
		return;
	if (nread < 0) {
		uv_read_stop(st);
		c->eof = true;
		/*
		 * A client gone altogether is neither answered nor flushed:
		 * every mode lets go of it now (a pipe leaves the target's
		 * stdin open, waiting requests go on unanswered). Only a half
		 * close is the mode's to act on. Nothing of c is on the stack.
		 */
		if (conn_peer_closed(c)) {
			conn_close(c);
			return;
		}
		c->mode->eof(c);
		return;
	}
	conn_feed(c, buf->base, nread);
	c->fed = true;
	if (dial_untaken(c))
		conn_drop(c);
	else
		dial_settle(c, st, nread, buf);
}

/*
 * Refuse a client just accepted with an error line that says why, and
 * close it at once when the line fits in its socket's buffer, as on a new
 * connection it does: a flood of refused clients then holds no descriptor
 * past the turn of the loop that accepted them.
 */
static void
conn_refuse(struct conn *c, int code, const char *why)
{
	json_t		*msg = rpc_error_new(NULL, code, why, NULL);
	uv_buf_t	 buf;
	size_t		 len;
	char		*line;

	line = rpc_dump(msg, &len);
	json_decref(msg);
	if (line == NULL)
		log_fatal("cannot write a refusal");
	buf = uv_buf_init(line, len);
	if (uv_try_write(conn_out(c), &buf, 1) == (int)len) {
		free(line);
		conn_close(c);
		return;
	}
	conn_send_text(c, line, len);
	conn_finish(c);
}

/*
 * Refuse a client, with a reply that says why, when descriptors run low:
 * kept in reserve, they let this refusal be sent rather than libuv
 * resetting connections at EMFILE, and let launches and logs still open.
 */
static bool
conn_fds_low(struct conn *c)
{
	uv_os_fd_t	fd;
	char		msg[128];

	if (uv_fileno(&c->h.handle, &fd) != 0 || dmn.nofile == 0 ||
	    (unsigned long)fd + CONN_FD_RESERVE < dmn.nofile)
		return false;
	snprintf(msg, sizeof msg, "the daemon is out of file descriptors "
	    "(%d of %lu in use): close idle connections", fd + 1, dmn.nofile);
	log_burst(&conn_fd_log, "refused a client: %s", msg);
	conn_refuse(c, RPC_LIMIT, msg);
	return true;
}

/* Accept a client; the listener's auth hook decides whether it may stay. */
void
conn_accept(struct listener *l)
{
	static uint64_t		 serial;
	struct conn		*c = xcalloc(1, sizeof *c);
	struct rpc_error	 err;

	/* Its socket's, closed by conn_close; passed pipes add theirs. */
	c->nhandles = 1;
	/* ipc: read with recvmsg, for what dial passes, until dial_settle. */
	if (l->tcp)
		uv_tcp_init(dmn.loop, &c->h.tcp);
	else
		uv_pipe_init(dmn.loop, &c->h.pipe, 1);
	c->h.handle.data = c;
	c->rd = c->wr = (uv_stream_t *)&c->h;
	c->serial = ++serial;
	TAILQ_INSERT_TAIL(&conn_all, c, entry);
	conn_set_mode(c, l->mode, l->mode->open != NULL ? l->mode->open() :
	    NULL);
	if (uv_accept((uv_stream_t *)&l->h, (uv_stream_t *)&c->h) != 0) {
		conn_close(c);
		return;
	}
	if (conn_fds_low(c))
		return;
	if (l->auth(l, c, &err) != 0) {
		conn_refuse(c, err.code, err.message);
		return;
	}
	uv_read_start(conn_in(c), loop_alloc_cb, conn_read_cb);
}
