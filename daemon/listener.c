/* Listening sockets, each with the hook that admits its peers. */
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "listener.h"
#include "paths.h"
#include "peer.h"

/* Clients one listener accepts at one loop time; the rest wait a turn. */
#define LISTENER_TURN_ACCEPTS 32

/* Every listener, from its opening until listener_close_all. */
static TAILQ_HEAD(, listener) listener_all =
    TAILQ_HEAD_INITIALIZER(listener_all);

static struct log_burst listener_uid_log = {
	.more = "refused %lu more clients of other uids in the last second"
};

/* A Unix socket admits its peer's uid if it is the daemon's own, or root. */
static int
listener_auth_peercred(struct listener *l, struct conn *c,
    struct rpc_error *err)
{
	struct ucred	cred;
	socklen_t	len = sizeof cred;
	uv_os_fd_t	fd;

	(void)l;
	if (uv_fileno(&c->h.handle, &fd) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		rpc_error_set(err, RPC_UNAUTHORIZED, "cannot tell who the "
		    "peer is");
		return -1;
	}
	c->uid = cred.uid;
	c->pid = cred.pid;
	if (cred.uid == geteuid() || cred.uid == 0) {
		c->authed = true;
		return 0;
	}
	log_burst(&listener_uid_log, "refused a client of uid %u",
	    (unsigned)c->uid);
	rpc_error_set(err, RPC_UNAUTHORIZED, "uid %u may not use the daemon "
	    "of uid %u", (unsigned)c->uid, (unsigned)geteuid());
	return -1;
}

static void	listener_connection_cb(uv_stream_t *, int);
static void	listener_closed(uv_handle_t *);

/*
 * A TCP peer may be anyone who can reach the port: it is admitted, if
 * there is room for one more without the token, but may use nothing but
 * hello until it presents the token there.
 */
static int
listener_auth_token(struct listener *l, struct conn *c, struct rpc_error *err)
{
	(void)l;
	return peer_admit(c, err);
}

/*
 * The port of an IPv4 or IPv6 address, and whether it is the any address;
 * -1 for another family.
 */
static int
listener_inet(const struct sockaddr_storage *ss, bool *any)
{
	const struct sockaddr_in	*in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6	*in6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET) {
		*any = in4->sin_addr.s_addr == htonl(INADDR_ANY);
		return ntohs(in4->sin_port);
	}
	if (ss->ss_family == AF_INET6) {
		*any = IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
		return ntohs(in6->sin6_port);
	}
	return -1;
}

/*
 * Whether peer, the address a socket is connected to, is where l listens:
 * its path, or its port at its address or (a listener on the any address,
 * which a dual-stack one also serves for IPv4) at any.
 */
static bool
listener_at(const struct sockaddr_storage *peer, socklen_t plen,
    struct listener *l)
{
	struct sockaddr_storage	ls;
	socklen_t		llen = sizeof ls;
	uv_os_fd_t		lfd;
	bool			lany, pany;
	int			lport;

	if (uv_fileno(&l->h.handle, &lfd) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&ls, &llen) != 0)
		return false;
	if (peer->ss_family == AF_UNIX)
		return ls.ss_family == AF_UNIX && llen == plen &&
		    llen > offsetof(struct sockaddr_un, sun_path) &&
		    memcmp(&ls, peer, llen) == 0;
	lport = listener_inet(&ls, &lany);
	if (lport < 0 || lport != listener_inet(peer, &pany))
		return false;
	return lany || (llen == plen && memcmp(&ls, peer, llen) == 0);
}

/* Whether peer, where a socket is connected, is one of the listeners. */
bool
listener_serves(const struct sockaddr_storage *peer, socklen_t plen)
{
	struct listener *l;

	TAILQ_FOREACH(l, &listener_all, entry)
		if (listener_at(peer, plen, l))
			return true;
	return false;
}

/* A new listener of either kind, its handle ready, not yet listening. */
static struct listener *
listener_new(bool tcp, const char *path, const struct conn_mode *mode)
{
	struct listener *l;

	l = xcalloc(1, sizeof *l);
	l->tcp = tcp;
	l->path = xstrdup(path);
	l->auth = tcp ? listener_auth_token : listener_auth_peercred;
	l->mode = mode;
	if (tcp)
		uv_tcp_init(dmn.loop, &l->h.tcp);
	else
		uv_pipe_init(dmn.loop, &l->h.pipe, 0);
	l->h.handle.data = l;
	return l;
}

/*
 * Listen on l once its socket is bound or opened (rc: how that went);
 * -1 with err, l closed, otherwise.
 */
static int
listener_start(struct listener *l, int rc, char *err, size_t errlen)
{
	/* As many as the system lets wait (a service manager's Backlog=). */
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&l->h, SOMAXCONN,
		    listener_connection_cb);
	if (rc != 0) {
		snprintf(err, errlen, "listen on %s%s: %s", l->tcp ? "tcp:" : "",
		    l->path, uv_strerror(rc));
		uv_close(&l->h.handle, listener_closed);
		return -1;
	}
	TAILQ_INSERT_TAIL(&listener_all, l, entry);
	return 0;
}

/* Listen on TCP at HOST:PORT (an empty HOST is loopback); -1 with err. */
int
listener_tcp(const char *hostport, const struct conn_mode *mode, char *err,
    size_t errlen)
{
	struct sockaddr_storage	 ss;
	struct listener		*l;
	const char		*colon = strrchr(hostport, ':');
	char			 host[256];
	int			 port, len;

	if (colon == NULL || (port = atoi(colon + 1)) < 0 || port > 65535 ||
	    (size_t)(colon - hostport) >= sizeof host) {
		snprintf(err, errlen, "cannot listen on \"tcp:%s\": want "
		    "tcp:HOST:PORT", hostport);
		return -1;
	}
	snprintf(host, sizeof host, "%.*s", (int)(colon - hostport), hostport);
	if (*host == '\0')
		strlcpy(host, "127.0.0.1", sizeof host);
	if (uv_ip4_addr(host, port, (struct sockaddr_in *)&ss) != 0 &&
	    uv_ip6_addr(host, port, (struct sockaddr_in6 *)&ss) != 0) {
		snprintf(err, errlen, "cannot listen on \"tcp:%s\": %s is not "
		    "an address", hostport, host);
		return -1;
	}
	l = listener_new(true, hostport, mode);
	if (listener_start(l, uv_tcp_bind(&l->h.tcp, (struct sockaddr *)&ss,
	    0), err, errlen) != 0)
		return -1;
	/* Port 0 picked one: say which. */
	len = sizeof ss;
	if (uv_tcp_getsockname(&l->h.tcp, (struct sockaddr *)&ss, &len) == 0)
		port = ntohs(ss.ss_family == AF_INET6 ?
		    ((struct sockaddr_in6 *)&ss)->sin6_port :
		    ((struct sockaddr_in *)&ss)->sin_port);
	log_info("listening on tcp:%s:%d", host, port);
	return 0;
}

/*
 * Serve a listening socket that a service manager passed, Unix (at path
 * addr) or TCP (at HOST:PORT addr), as listener_unix and listener_tcp
 * would; -1 with err. Its path is the manager's, and stays at exit,
 * unless own says a daemon made it (one this daemon replaced).
 */
int
listener_fd(int fd, bool tcp, bool own, const char *addr,
    const struct conn_mode *mode, char *err, size_t errlen)
{
	struct listener	*l;
	int		 rc;

	l = listener_new(tcp, addr, mode);
	l->activated = !own;
	rc = tcp ? uv_tcp_open(&l->h.tcp, fd) : uv_pipe_open(&l->h.pipe, fd);
	if (listener_start(l, rc, err, errlen) != 0)
		return -1;
	log_info("listening on %s%s (%s, fd %d)", tcp ? "tcp:" : "", addr,
	    own ? "handed over" : "socket-activated", fd);
	return 0;
}

/* Take the client held back on a later loop turn, with a new budget. */
static void
listener_again(void *arg)
{
	struct listener *l = arg;

	l->turn = uv_now(dmn.loop);
	l->accepts = 1;
	conn_accept(l);
}

/*
 * A client is knocking. libuv accepts in a loop until the backlog is
 * empty, which a flood of connects refills as fast as they are refused:
 * past LISTENER_TURN_ACCEPTS at one loop time the client is left unaccepted,
 * which makes libuv stop watching the listener, and is taken on the next
 * turn, after the other connections' I/O.
 */
static void
listener_connection_cb(uv_stream_t *server, int status)
{
	struct listener *l = server->data;

	if (status != 0) {
		log_warn("accept: %s", uv_strerror(status));
		return;
	}
	if (l->turn != uv_now(dmn.loop)) {
		l->turn = uv_now(dmn.loop);
		l->accepts = 0;
	}
	if (++l->accepts > LISTENER_TURN_ACCEPTS) {
		if (l->again == NULL)
			l->again = timer_new(listener_again, l);
		timer_start(l->again, 0);
		return;
	}
	conn_accept(l);
}

/* Free a listener once its handle is closed. */
static void
listener_closed(uv_handle_t *h)
{
	struct listener *l = h->data;

	timer_free(l->again);
	free(l->path);
	free(l);
}

/*
 * Remove the socket file a dead daemon left at path, and nothing else: a
 * file that is not a socket is not ours to remove, nor a socket another
 * process has bound there. The caller holds the start lock, so that is no
 * live daemon's, but it may be a service manager's. -1 with err.
 */
static int
listener_unlink_stale(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket: it is "
		    "left as it is; remove it or choose another socket", path);
		return -1;
	}
	if (paths_socket_bound(path) == 1) {
		snprintf(err, errlen, "%s: another process has a socket bound "
		    "there (a service manager's, about to listen?): it is left "
		    "as it is", path);
		return -1;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "unlink %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Bind a Unix socket at path, of mode 0600 from the start; its fd, or a
 * libuv error (a negative errno). Bound here, not by uv_pipe_bind, whose
 * handle removes the file when it closes: a daemon that hands its sockets
 * over closes its handles, but the file is the next daemon's to serve.
 */
static int
listener_bind_unix(const char *path)
{
	struct sockaddr_un	sa;
	mode_t			old;
	int			fd, rc;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlcpy(sa.sun_path, path, sizeof sa.sun_path) >=
	    sizeof sa.sun_path)
		return UV_ENAMETOOLONG;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -errno;
	/* Nobody else may connect in the moment before chmod. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (rc == 0)
		return fd;
	rc = -errno;
	close(fd);
	return rc;
}

/* Listen on a Unix socket at path, its connections starting in mode. */
int
listener_unix(const char *path, const struct conn_mode *mode, char *err,
    size_t errlen)
{
	struct listener	*l;
	int		 fd, rc;

	if (listener_unlink_stale(path, err, errlen) != 0)
		return -1;
	l = listener_new(false, path, mode);
	if ((fd = rc = listener_bind_unix(path)) >= 0 &&
	    (rc = uv_pipe_open(&l->h.pipe, fd)) != 0)
		close(fd);
	if (listener_start(l, rc, err, errlen) == 0)
		return 0;
	if (fd >= 0)
		unlink(path);
	return -1;
}

/*
 * The listening fds, at most max of them, into fds, with in own whether
 * the daemon made each (false: a service manager passed it): what a
 * replacing daemon is handed. Returns how many there are.
 */
size_t
listener_fds(int *fds, bool *own, size_t max)
{
	struct listener	*l;
	uv_os_fd_t	 fd;
	size_t		 n = 0;

	TAILQ_FOREACH(l, &listener_all, entry) {
		if (n == max || uv_fileno(&l->h.handle, &fd) != 0)
			continue;
		own[n] = !l->activated;
		fds[n++] = fd;
	}
	return n;
}

/*
 * Stop listening, but leave the sockets bound and their files in place:
 * the daemon that replaces this one holds them and accepts from now on,
 * so a client that connects meanwhile waits in the backlog.
 */
void
listener_hand_over(void)
{
	struct listener *l;

	while ((l = TAILQ_FIRST(&listener_all)) != NULL) {
		TAILQ_REMOVE(&listener_all, l, entry);
		uv_close(&l->h.handle, listener_closed);
	}
}

/*
 * Stop listening and remove the socket files, but not an activated one's:
 * its manager still listens there and starts the next daemon from it.
 */
void
listener_close_all(void)
{
	struct listener *l;

	while ((l = TAILQ_FIRST(&listener_all)) != NULL) {
		TAILQ_REMOVE(&listener_all, l, entry);
		if (!l->tcp && !l->activated)
			unlink(l->path);
		uv_close(&l->h.handle, listener_closed);
	}
}
