/* The listening Unix socket. */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* A client is knocking. */
static void
server_connection_cb(uv_stream_t *server, int status)
{
	if (status != 0) {
		log_warn("accept: %s", uv_strerror(status));
		return;
	}
	conn_accept(server);
}

/*
 * Listen on path. The caller holds the start lock, so a socket file left
 * there belongs to a dead daemon and is removed.
 */
int
server_listen(const char *path, char *err, size_t errlen)
{
	mode_t	old;
	int	rc;

	uv_pipe_init(dmn.loop, &dmn.listener, 0);
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(err, errlen, "unlink %s: %s", path, strerror(errno));
		return -1;
	}
	/* Nobody else may connect in the moment before chmod. */
	old = umask(0177);
	rc = uv_pipe_bind(&dmn.listener, path);
	umask(old);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&dmn.listener, 128,
		    server_connection_cb);
	if (rc != 0) {
		snprintf(err, errlen, "listen on %s: %s", path, uv_strerror(rc));
		uv_close((uv_handle_t *)&dmn.listener, NULL);
		return -1;
	}
	dmn.listening = true;
	return 0;
}

/* Stop listening and remove the socket file. */
void
server_close(void)
{
	if (!dmn.listening)
		return;
	dmn.listening = false;
	uv_close((uv_handle_t *)&dmn.listener, NULL);
	unlink(dmn.sock_path);
}
