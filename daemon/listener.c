/* Listening sockets, each with the hook that admits its peers. */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* A Unix socket admits its peer's uid if it is the daemon's own, or root. */
static int
listener_auth_peercred(struct listener *l, struct conn *c,
    struct rpc_error *err)
{
	struct ucred	cred;
	socklen_t	len = sizeof cred;
	uv_os_fd_t	fd;

	(void)l;
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
		rpc_error_set(err, RPC_UNAUTHORIZED, "cannot tell who the "
		    "peer is");
		return -1;
	}
	c->uid = cred.uid;
	if (cred.uid == geteuid() || cred.uid == 0)
		return 0;
	log_warn("refused a client of uid %u", (unsigned)c->uid);
	rpc_error_set(err, RPC_UNAUTHORIZED, "uid %u may not use the daemon "
	    "of uid %u", (unsigned)c->uid, (unsigned)geteuid());
	return -1;
}

/* A client is knocking. */
static void
listener_connection_cb(uv_stream_t *server, int status)
{
	if (status != 0) {
		log_warn("accept: %s", uv_strerror(status));
		return;
	}
	conn_accept(server->data);
}

/* Free a listener once its handle is closed. */
static void
listener_closed(uv_handle_t *h)
{
	struct listener *l = h->data;

	free(l->path);
	free(l);
}

/*
 * Listen on a Unix socket at path, its connections starting in mode.
 * The caller holds the start lock, so a
 * socket file left there belongs to a dead daemon and is removed.
 */
int
listener_unix(const char *path, const struct conn_mode *mode, char *err,
    size_t errlen)
{
	struct listener	*l;
	mode_t		 old;
	int		 rc;

	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "unlink %s: %s", path, strerror(errno));
		return -1;
	}
	l = xcalloc(1, sizeof *l);
	l->path = xstrdup(path);
	l->auth = listener_auth_peercred;
	l->mode = mode;
	uv_pipe_init(dmn.loop, &l->pipe, 0);
	l->pipe.data = l;
	/* Nobody else may connect in the moment before chmod. */
	old = umask(0177);
	rc = uv_pipe_bind(&l->pipe, path);
	umask(old);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&l->pipe, 128,
		    listener_connection_cb);
	if (rc != 0) {
		snprintf(err, errlen, "listen on %s: %s", path, uv_strerror(rc));
		uv_close((uv_handle_t *)&l->pipe, listener_closed);
		return -1;
	}
	TAILQ_INSERT_TAIL(&dmn.listeners, l, entry);
	return 0;
}

/* Stop listening and remove the socket files. */
void
listener_close_all(void)
{
	struct listener *l;

	while ((l = TAILQ_FIRST(&dmn.listeners)) != NULL) {
		TAILQ_REMOVE(&dmn.listeners, l, entry);
		unlink(l->path);
		uv_close((uv_handle_t *)&l->pipe, listener_closed);
	}
}
