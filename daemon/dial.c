/*
 * A connection served from the pipes its client passed: sshd's stdin and
 * stdout for dial-stdio's command, or a front end's for dbgctl mi, handed
 * over the Unix socket (SCM_RIGHTS) with the request (dial, or mi with
 * stdio), so that the daemon reads and writes them itself and no process
 * copies bytes between. The socket stays open to tell when the client
 * ends (and, for mi, to carry its interrupts); the peer's uid, checked
 * when the socket was accepted, remains the connection's.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "conn.h"
#include "dial.h"
#include "listener.h"

/* The descriptors a connection may pass: its client's stdin and stdout. */
#define DIAL_FDS 2

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

/*
 * After its first read, which alone may carry dial's descriptors, read c's
 * socket with read(2) instead of recvmsg(2) with room for descriptors,
 * which cost every request of a held connection a quarter of a microsecond
 * more here. Descriptors sent later are then closed unread by the kernel,
 * and a dial after the first request is refused for want of them. Only
 * once a read did not fill the buffer: libuv then ends its run of reads,
 * so none of that run, which still uses recvmsg, is left unchecked.
 */
void
dial_settle(struct conn *c, uv_stream_t *st, ssize_t nread,
    const uv_buf_t *buf)
{
	if (st != (uv_stream_t *)&c->h || c->h.handle.type != UV_NAMED_PIPE ||
	    !c->h.pipe.ipc || !c->fed || (size_t)nread >= buf->len)
		return;
	c->h.pipe.ipc = 0;
}

/*
 * Whether c was passed descriptors that no request took, dial or mi's
 * stdio (it is then dropped).
 */
bool
dial_untaken(struct conn *c)
{
	if (c->nfds == 0 || c->claimed)
		return false;
	log_warn("dropping a client that passed descriptors without dial or "
	    "mi's stdio");
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
void
dial_sock_end_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
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

/* Whether socket fd is connected to one of the daemon's own listeners. */
static bool
dial_sock_ours(int fd)
{
	struct sockaddr_storage	 peer;
	socklen_t		 plen = sizeof peer;

	memset(&peer, 0, sizeof peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0)
		return false;
	return listener_serves(&peer, plen);
}

/*
 * Whether pipe st is one the daemon held before c passed it (a session's
 * transport, a keeper's control pipe, another dial's): any descriptor but
 * c's own two on the same pipe. Its other end could be the daemon's.
 */
static bool
dial_pipe_ours(const struct stat *st, int in, int out)
{
	struct dirent	*de;
	struct stat	 o;
	DIR		*d;
	bool		 ours = false;
	int		 fd;

	/* Unreadable /proc: nothing to compare, as without this check. */
	if ((d = opendir("/proc/self/fd")) == NULL)
		return false;
	while (!ours && (de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd == in || fd == out ||
		    fd == dirfd(d) || fstat(fd, &o) != 0)
			continue;
		ours = o.st_dev == st->st_dev && o.st_ino == st->st_ino;
	}
	closedir(d);
	return ours;
}

/*
 * Whether in and out lead back to the daemon, so that it would read its
 * own replies as requests and answer them without end: a socket
 * connected to one of its listeners (another of the client's own
 * connections), one pipe as both, or a pipe the daemon already holds.
 * A socket's peer is found by its address, which names the daemon's
 * listener whoever holds the other end; a pipe has no address, but it
 * can reach the daemon only if the daemon holds it.
 */
static int
dial_loops(const char *who, int in, int out, struct rpc_error *err)
{
	struct stat	si, so;
	int		fds[2] = { in, out }, i;
	struct stat	*st[2] = { &si, &so };

	if (fstat(in, &si) != 0 || fstat(out, &so) != 0)
		return 0;
	if (S_ISFIFO(si.st_mode) && S_ISFIFO(so.st_mode) &&
	    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "%s: stdin and stdout "
		    "are one pipe: the daemon would read its own replies", who);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (S_ISSOCK(st[i]->st_mode) && dial_sock_ours(fds[i])) {
			rpc_error_set(err, RPC_INVALID_PARAMS, "%s: %s is a "
			    "connection to this daemon's own socket: it would "
			    "answer its own replies", who, i == 0 ? "stdin" :
			    "stdout");
			return -1;
		}
		if (S_ISFIFO(st[i]->st_mode) && dial_pipe_ours(st[i], in, out)) {
			rpc_error_set(err, RPC_INVALID_PARAMS, "%s: %s is a "
			    "pipe this daemon already holds", who, i == 0 ?
			    "stdin" : "stdout");
			return -1;
		}
	}
	return 0;
}

/*
 * Whether c holds a stdin and stdout to serve, for the request who names
 * in errors; they are then its to start (dial_start). -1 with err if not.
 */
int
dial_check(struct conn *c, const char *who, struct rpc_error *err)
{
	uv_os_fd_t in, out;

	if (c->nfds != DIAL_FDS || c->claimed) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "%s takes stdin and "
		    "stdout, passed with the request (SCM_RIGHTS), once", who);
		return -1;
	}
	if (uv_fileno((uv_handle_t *)&c->fds[0], &in) != 0 ||
	    uv_fileno((uv_handle_t *)&c->fds[1], &out) != 0 ||
	    !dial_usable(in, O_RDONLY) || !dial_usable(out, O_WRONLY)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "%s: stdin must be "
		    "a readable pipe or socket, stdout a writable one", who);
		return -1;
	}
	if (dial_loops(who, in, out, err) != 0)
		return -1;
	if (uv_stream_set_blocking((uv_stream_t *)&c->fds[0], 0) != 0 ||
	    uv_stream_set_blocking((uv_stream_t *)&c->fds[1], 0) != 0) {
		rpc_error_set(err, RPC_INTERNAL_ERROR, "%s: %s", who,
		    strerror(errno));
		return -1;
	}
	c->claimed = true;
	return 0;
}

/*
 * Serve c from the stdin and stdout dial_check approved: read what the
 * client sends from the first, write to the second, and read the socket
 * with on_sock (dial_sock_end_cb: only for the client's end).
 */
void
dial_start(struct conn *c, uv_read_cb on_sock)
{
	if (!c->claimed)
		log_fatal("dial_start on descriptors dial_check did not approve");
	c->dialed = true;
	c->rd = (uv_stream_t *)&c->fds[0];
	c->wr = (uv_stream_t *)&c->fds[1];
	uv_read_stop((uv_stream_t *)&c->h);
	uv_read_start((uv_stream_t *)&c->h, loop_alloc_cb, on_sock);
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

/*
 * Close the pipes c was passed, with c or before it (a request that lets
 * go of them): c is not freed before their close callbacks have run.
 */
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
