/*
 * The two echo servers that ping is measured against, each in a forked
 * child on a Unix socket of its own: a blocking one, a thread a connection
 * doing read and write, the floor of any server; and a libuv one, the same
 * event loop the daemon runs on, doing nothing but echo.
 */
#include "bench.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

/* Bytes an echo server reads at a time. */
#define ECHO_BUF (64 * 1024)
/* Milliseconds a server may take to listen. */
#define ECHO_START_MS 5000

/* One connection of the blocking server: echo until the peer leaves. */
static void *
echo_blocking_conn(void *arg)
{
	char	buf[ECHO_BUF];
	int	fd = (int)(long)arg;
	ssize_t	n, w, off;

	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (off = 0; off < n; off += w)
			if ((w = write(fd, buf + off, n - off)) <= 0)
				goto out;
out:
	close(fd);
	return NULL;
}

/* The blocking server: accept, and a detached thread a connection. */
static void
echo_blocking_main(const char *path)
{
	struct sockaddr_un	sun;
	pthread_attr_t		attr;
	pthread_t		th;
	int			ls, fd;

	if (rpc_addr(&sun, path) == -1 ||
	    (ls = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(ls, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    listen(ls, 128) == -1)
		_exit(1);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (;;) {
		if ((fd = accept(ls, NULL, NULL)) == -1)
			continue;
		if (pthread_create(&th, &attr, echo_blocking_conn,
		    (void *)(long)fd) != 0)
			close(fd);
	}
}

/* libuv: a buffer for the next read. */
static void
echo_uv_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	(void)h, (void)hint;
	buf->base = malloc(ECHO_BUF);
	buf->len = buf->base != NULL ? ECHO_BUF : 0;
}

/* libuv: a write is done; free its buffer, which the request carries. */
static void
echo_uv_written(uv_write_t *req, int status)
{
	(void)status;
	free(req->data);
	free(req);
}

/* libuv: write back what was read; close at the end. */
static void
echo_uv_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	uv_write_t	*req;
	uv_buf_t	 out;

	if (n < 0) {
		free(buf->base);
		uv_close((uv_handle_t *)s, (uv_close_cb)free);
		return;
	}
	if (n == 0 || (req = malloc(sizeof *req)) == NULL) {
		free(buf->base);
		return;
	}
	req->data = buf->base;
	out = uv_buf_init(buf->base, n);
	if (uv_write(req, s, &out, 1, echo_uv_written) != 0)
		echo_uv_written(req, 0);
}

/* libuv: accept a connection and start echoing it. */
static void
echo_uv_accept(uv_stream_t *server, int status)
{
	uv_pipe_t *c;

	if (status != 0 || (c = malloc(sizeof *c)) == NULL)
		return;
	uv_pipe_init(server->loop, c, 0);
	if (uv_accept(server, (uv_stream_t *)c) != 0) {
		uv_close((uv_handle_t *)c, (uv_close_cb)free);
		return;
	}
	uv_read_start((uv_stream_t *)c, echo_uv_alloc, echo_uv_read);
}

/* The libuv server: one loop, as the daemon's. */
static void
echo_uv_main(const char *path)
{
	uv_loop_t	*loop = uv_default_loop();
	uv_pipe_t	 server;

	uv_pipe_init(loop, &server, 0);
	if (uv_pipe_bind(&server, path) != 0 ||
	    uv_listen((uv_stream_t *)&server, 128, echo_uv_accept) != 0)
		_exit(1);
	uv_run(loop, UV_RUN_DEFAULT);
	_exit(0);
}

/* Start a server of this kind on DIR/echo-KIND; -1 if it does not listen. */
int
echo_start(struct echo *e, enum echo_kind kind, const char *dir)
{
	double end = stat_now_ms() + ECHO_START_MS;

	snprintf(e->path, sizeof e->path, "%s/echo-%s", dir,
	    kind == ECHO_LIBUV ? "libuv" : "blocking");
	unlink(e->path);
	if ((e->pid = fork()) == -1)
		return -1;
	if (e->pid == 0) {
		/* Hold none of our sockets, so that their peers see a close. */
		close_range(3, ~0U, 0);
		signal(SIGPIPE, SIG_IGN);
		if (kind == ECHO_LIBUV)
			echo_uv_main(e->path);
		echo_blocking_main(e->path);
		_exit(1);
	}
	while (!rpc_listens(e->path)) {
		if (proc_wait(e->pid, 0) != -1)
			e->pid = 0;
		if (e->pid == 0 || stat_now_ms() > end) {
			echo_stop(e);
			return -1;
		}
		stat_sleep_ms(1);
	}
	return 0;
}

/* Stop the server and reap it. */
void
echo_stop(struct echo *e)
{
	if (e->pid > 0) {
		kill(e->pid, SIGKILL);
		proc_wait(e->pid, -1);
	}
	e->pid = 0;
	unlink(e->path);
}
