/* A session's console: the pty master, its recent output and its log file. */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "daemon.h"

/* Bytes read from the master in one plain read() while draining. */
#define CONSOLE_CHUNK 65536

/* Keep freshly read bytes: in the ring, in the log file, for waiting readers. */
static void
console_keep(struct console *c, const char *data, size_t len)
{
	size_t	done = 0;
	ssize_t	n;

	if (c->sink != NULL) {
		console_keep(c->sink, data, len);
		return;
	}
	ring_write(&c->ring, data, len);
	/*
	 * A regular file write does not wait on a peer, so it is done in the
	 * loop; losing console output would be worse than a slow disk.
	 */
	while (c->log_fd != -1 && done < len) {
		n = write(c->log_fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_warn("%s: %s", c->log_path, strerror(errno));
			break;
		}
		done += n;
	}
	attach_output(c->s, data, len);
	notify_output(c->s, data, len, c->ring.end);
	pending_poke();
}

/* Mark the output complete and tell the session. */
static void
console_eof(struct console *c)
{
	if (c->drained)
		return;
	c->drained = true;
	if (c->reading) {
		uv_read_stop((uv_stream_t *)&c->pipe);
		c->reading = false;
	}
	session_check_done(c->s);
}

/*
 * Read the master with plain read() until EIO (every slave is closed) or
 * EAGAIN, because libuv 1.44 can drop the tail of the output at POLLHUP.
 */
void
console_drain(struct console *c)
{
	char	buf[CONSOLE_CHUNK];
	ssize_t	n;

	if (c->drained || c->master == -1)
		return;
	for (;;) {
		n = read(c->master, buf, sizeof buf);
		if (n > 0) {
			console_keep(c, buf, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		break;
	}
	console_eof(c);
}

/* Take output from the master; at EOF or EIO drain the rest by hand. */
static void
console_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct console *c = st->data;

	if (nread > 0) {
		console_keep(c, buf->base, nread);
		return;
	}
	if (nread == 0 || nread == UV_EAGAIN)
		return;
	console_drain(c);
	if (!c->drained)
		console_eof(c);
}

/* Create the pty, its master reader and the session log. */
int
console_open(struct console *c, struct session *s, const char *logpath,
    struct console *sink, char *err, size_t errlen)
{
	struct winsize	ws = { .ws_row = 24, .ws_col = 80 };

	memset(c, 0, sizeof *c);
	c->s = s;
	c->sink = sink;
	c->master = c->slave = c->log_fd = -1;
	if (sink == NULL) {
		ring_init(&c->ring, RING_SIZE);
		if ((c->log_path = strdup(logpath)) == NULL)
			log_fatal("out of memory");
	}
	/* openpty() would hand out fds without close-on-exec. */
	c->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (c->master == -1 || grantpt(c->master) != 0 ||
	    unlockpt(c->master) != 0 ||
	    ptsname_r(c->master, c->pts, sizeof c->pts) != 0)
		goto fail;
	c->slave = ioctl(c->master, TIOCGPTPEER,
	    O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (c->slave == -1)
		goto fail;
	ioctl(c->master, TIOCSWINSZ, &ws);
	if (sink == NULL)
		c->log_fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND |
		    O_CLOEXEC, 0600);
	if (sink == NULL && c->log_fd == -1) {
		snprintf(err, errlen, "%s: %s", logpath, strerror(errno));
		return -1;
	}
	uv_pipe_init(dmn.loop, &c->pipe, 0);
	c->pipe.data = c;
	c->handle = true;
	if (uv_pipe_open(&c->pipe, c->master) != 0) {
		snprintf(err, errlen, "pty: cannot watch the master");
		return -1;
	}
	c->owned = true;
	uv_read_start((uv_stream_t *)&c->pipe, daemon_alloc_cb,
	    console_read_cb);
	c->reading = true;
	return 0;
fail:
	snprintf(err, errlen, "pty: %s", strerror(errno));
	return -1;
}

/* A write to the master has been taken by the pty. */
static void
console_write_cb(uv_write_t *req, int status)
{
	struct console *c = req->handle->data;

	(void)status;
	free(req->data);
	free(req);
	if (status != UV_ECANCELED)
		attach_drained(c->s);
}

/* Bytes waiting to be written to the pty. */
size_t
console_queued(struct console *c)
{
	if (!c->owned || c->master == -1)
		return 0;
	return uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe);
}

/* Queue bytes for the pty, as if typed at its terminal. */
int
console_write(struct console *c, const char *data, size_t len)
{
	uv_write_t	*req;
	uv_buf_t	 buf;
	char		*copy;

	if (!c->owned || c->master == -1)
		return -1;
	if ((req = malloc(sizeof *req)) == NULL ||
	    (copy = malloc(len ? len : 1)) == NULL)
		log_fatal("out of memory");
	memcpy(copy, data, len);
	req->data = copy;
	buf = uv_buf_init(copy, len);
	if (uv_write(req, (uv_stream_t *)&c->pipe, &buf, 1,
	    console_write_cb) != 0) {
		free(copy);
		free(req);
		return -1;
	}
	return 0;
}

/* Release the pty and the log file; the byte count and log path stay. */
void
console_close(struct console *c)
{
	if (c->slave != -1)
		close(c->slave);
	c->slave = -1;
	if (c->log_fd != -1)
		close(c->log_fd);
	c->log_fd = -1;
	/* Once libuv owns the master, closing the handle closes the fd. */
	if (c->master != -1 && !c->owned)
		close(c->master);
	c->master = -1;
	if (c->handle && !uv_is_closing((uv_handle_t *)&c->pipe))
		uv_close((uv_handle_t *)&c->pipe, NULL);
	ring_free(&c->ring);
}

/* Bytes of console output so far. */
uint64_t
console_size(const struct console *c)
{
	return c->ring.end;
}

/*
 * Copy output from offset off, from memory if held, else from the log
 * through *fd, which is opened on first need and left for the caller.
 */
static size_t
console_fetch(struct console *c, int *fd, uint64_t off, char *dst, size_t max)
{
	size_t	n = 0;
	ssize_t	r;

	if (off >= c->ring.end)
		return 0;
	if (max > c->ring.end - off)
		max = c->ring.end - off;
	if (c->ring.buf != NULL && off >= ring_start(&c->ring))
		return ring_read(&c->ring, off, dst, max);
	if (*fd == -1 &&
	    (*fd = open(c->log_path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	while (n < max) {
		r = pread(*fd, dst + n, max - n, off + n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	return n;
}

/* Copy output from offset off, from memory if held, else from the log. */
size_t
console_read(struct console *c, uint64_t off, char *dst, size_t max)
{
	size_t	n;
	int	fd = -1;

	n = console_fetch(c, &fd, off, dst, max);
	if (fd != -1)
		close(fd);
	return n;
}

/* The offset where the last `lines` lines of the output begin (within TAIL_SCAN_MAX). */
uint64_t
console_tail_offset(struct console *c, unsigned long lines)
{
	char		*buf;
	uint64_t	 pos = c->ring.end, start, found = 0;
	size_t		 n, i, chunk = 65536;
	int		 fd = -1;
	bool		 done = false;

	if (lines == 0)
		return c->ring.end;
	if ((buf = malloc(chunk)) == NULL)
		log_fatal("out of memory");
	/* The scan reads the log in the loop: it stops after TAIL_SCAN_MAX. */
	while (!done && pos > 0 && c->ring.end - pos < TAIL_SCAN_MAX) {
		start = pos > chunk ? pos - chunk : 0;
		n = console_fetch(c, &fd, start, buf, pos - start);
		if (n != pos - start)
			break;
		for (i = n; i > 0 && !done; i--) {
			/* A final newline ends the last line, it does not start one. */
			if (buf[i - 1] != '\n' || start + i == c->ring.end)
				continue;
			if (--lines == 0) {
				found = start + i;
				done = true;
			}
		}
		pos = start;
	}
	if (fd != -1)
		close(fd);
	free(buf);
	return done ? found : pos;
}
