/*
 * A connection served from the pipes dial-stdio passed: sshd's stdin and
 * stdout for the command, handed over its Unix socket (SCM_RIGHTS) with
 * the dial request, so that the daemon reads and writes them itself and
 * no process copies bytes between. The socket stays open only to tell
 * dial-stdio when the connection ends; the peer's uid, checked when the
 * socket was accepted, remains the connection's.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "daemon.h"

/*
 * Take the descriptors libuv received with the last read of c's socket,
 * as pipes not yet read. Only a connection's first read may carry them,
 * and no more than DIAL_FDS: -1 otherwise, for the caller to drop it
 * (closing the socket closes what libuv still holds).
 */
int
dial_take(struct conn *c)
{
	int n;

	if (c->h.handle.type != UV_NAMED_PIPE ||
	    (n = uv_pipe_pending_count(&c->h.pipe)) == 0)
		return 0;
	if (c->fed || c->nfds + n > DIAL_FDS) {
		log_warn("dropping a client that passed %d descriptors%s", n,
		    c->fed ? " after its first request" : "");
		return -1;
	}
	while (n-- > 0) {
		uv_pipe_init(dmn.loop, &c->fds[c->nfds], 0);
		c->fds[c->nfds].data = c;
		c->nfds++;
		if (uv_accept((uv_stream_t *)&c->h,
		    (uv_stream_t *)&c->fds[c->nfds - 1]) != 0)
			return -1;
	}
	return 0;
}

/* Whether c was passed descriptors that no dial took (it is then dropped). */
bool
dial_untaken(struct conn *c)
{
	if (c->nfds == 0 || c->dialed)
		return false;
	log_warn("dropping a client that passed descriptors without dial");
	return true;
}

/* Whether fd may be served as a stream: a pipe or a socket, open for acc. */
static bool
dial_usable(int fd, int acc)
{
	struct stat	st;
	int		fl;

	/* epoll refuses regular files and most devices: libuv would abort. */
	if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) ||
	    S_ISSOCK(st.st_mode)))
		return false;
	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return false;
	return (fl & O_ACCMODE) == O_RDWR || (fl & O_ACCMODE) == acc;
}

/* After dial, anything on the socket (dial-stdio gone, or talking) ends c. */
static void
dial_sock_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct conn *c = st->data;

	(void)buf;
	if (nread == 0)
		return;
	uv_read_stop(st);
	if (nread > 0)
		log_warn("closing a dialed client whose dial-stdio sent more");
	conn_close(c);
}

/* Whether c holds a stdin and stdout to serve; -1 with err if not. */
int
dial_check(struct conn *c, struct rpc_error *err)
{
	uv_os_fd_t in, out;

	if (c->nfds != DIAL_FDS || c->dialed) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "dial takes stdin and "
		    "stdout, passed with the request (SCM_RIGHTS), once");
		return -1;
	}
	if (uv_fileno((uv_handle_t *)&c->fds[0], &in) != 0 ||
	    uv_fileno((uv_handle_t *)&c->fds[1], &out) != 0 ||
	    !dial_usable(in, O_RDONLY) || !dial_usable(out, O_WRONLY)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "dial: stdin must be "
		    "a readable pipe or socket, stdout a writable one");
		return -1;
	}
	if (uv_stream_set_blocking((uv_stream_t *)&c->fds[0], 0) != 0 ||
	    uv_stream_set_blocking((uv_stream_t *)&c->fds[1], 0) != 0) {
		rpc_error_set(err, RPC_INTERNAL_ERROR, "dial: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Serve c from the stdin and stdout dial_check approved: read requests
 * from the first, write replies to the second, and watch the socket only
 * for dial-stdio's end.
 */
void
dial_start(struct conn *c)
{
	c->dialed = true;
	c->rd = (uv_stream_t *)&c->fds[0];
	c->wr = (uv_stream_t *)&c->fds[1];
	uv_read_stop((uv_stream_t *)&c->h);
	uv_read_start((uv_stream_t *)&c->h, loop_alloc_cb, dial_sock_read_cb);
	if (!c->paused && c->in == NULL)
		uv_read_start(c->rd, loop_alloc_cb, conn_read_cb);
}

/*
 * Whether stdout's reader is gone (ssh closed): a pipe whose reader left
 * polls POLLERR, a socket POLLHUP; a poll of no time asks without blocking.
 */
bool
dial_out_gone(struct conn *c)
{
	struct pollfd	pfd;
	uv_os_fd_t	fd;

	if (uv_fileno((uv_handle_t *)conn_out(c), &fd) != 0)
		return true;
	pfd.fd = fd;
	pfd.events = 0;
	pfd.revents = 0;
	while (poll(&pfd, 1, 0) == -1)
		if (errno != EINTR)
			return true;
	return (pfd.revents & (POLLERR | POLLHUP)) != 0;
}

/* Close the pipes c was passed; the connection is freed after their close. */
void
dial_close(struct conn *c)
{
	unsigned i;

	for (i = 0; i < c->nfds; i++) {
		c->nhandles++;
		uv_close((uv_handle_t *)&c->fds[i], conn_free_cb);
	}
	c->nfds = 0;
}
