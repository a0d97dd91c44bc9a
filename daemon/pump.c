/*
 * The daemon's end of a keeper's pump (keeper-pump.c): a pipe the keeper
 * copies a terminal's or a socket's output into, which cannot be spliced
 * themselves. Each byte is spliced from the pipe into its log before the
 * daemon reads it back, as the target's output is (transport-out.c), so a
 * daemon killed at any moment leaves it in the log or in the pipe for the
 * next one. The pipe's end is the keeper's: what the keeper left in the
 * source, its owner reads there directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "pump.h"

struct pump {
	int		 fd;		/* the pipe's read end */
	uv_poll_t	 poll;
	struct output	*log;
	bool		 ended;		/* every byte is read, and its end */
	bool		 closing;
	pump_cb		 cb;
	void		*arg;
};

/* The pipe has ended: say so once, and watch it no more. */
static void
pump_end(struct pump *p)
{
	/* The fd stays open until the handle closes, as libuv wants. */
	uv_poll_stop(&p->poll);
	p->ended = true;
	p->cb(p->arg, NULL, 0, output_size(p->log));
}

/*
 * Move one read of the pipe into the log, then tell the owner: the bytes
 * that came, 0 if none now, -1 at its end.
 */
ssize_t
pump_read(struct pump *p, char *buf, size_t len)
{
	uint64_t	at;
	ssize_t		n;

	if (p->ended || p->closing)
		return -1;
	at = output_size(p->log);
	n = output_splice(p->log, p->fd, buf, len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		pump_end(p);
		return -1;
	}
	p->cb(p->arg, buf, (size_t)n, at);
	return n;
}

/* The pipe has bytes, or its end: one read a loop turn. */
static void
pump_ready(uv_poll_t *h, int status, int events)
{
	struct pump	*p = h->data;
	uv_buf_t	 buf;

	(void)status;
	(void)events;
	loop_alloc_cb((uv_handle_t *)h, 0, &buf);
	(void)pump_read(p, buf.base, buf.len);
}

/* Move what the pipe holds now into the log, adding to *total up to max. */
void
pump_drain(struct pump *p, size_t *total, size_t max)
{
	char	buf[PUMP_CHUNK];
	ssize_t	n;

	while (*total < max && (n = pump_read(p, buf, sizeof buf)) > 0)
		*total += (size_t)n;
}

/* Whether the keeper's end of the pipe has closed and all of it is read. */
bool
pump_ended(const struct pump *p)
{
	return p->ended;
}

/*
 * Read fd, a pump's pipe, spliced into log; cb hears of each read's bytes
 * and where in log they begin, and of the end (len 0). Made before the
 * loop has read the source the keeper now reads, so no byte goes another
 * way.
 */
struct pump *
pump_open(int fd, struct output *log, pump_cb cb, void *arg)
{
	struct pump	*p = xcalloc(1, sizeof *p);
	int		 fl = fcntl(fd, F_GETFL);

	if (fl == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    uv_poll_init(dmn.loop, &p->poll, fd) != 0)
		log_fatal("pump fd %d: %s", fd, strerror(errno));
	p->fd = fd;
	p->log = log;
	p->cb = cb;
	p->arg = arg;
	p->poll.data = p;
	uv_poll_start(&p->poll, UV_READABLE, pump_ready);
	return p;
}

/* Free the pump once libuv has let go of its handle. */
static void
pump_closed(uv_handle_t *h)
{
	free(h->data);
}

/* Stop reading and close the daemon's end; the owner hears no more. */
void
pump_close(struct pump *p)
{
	if (p == NULL || p->closing)
		return;
	p->closing = true;
	/* A poll handle closes no descriptor; stopped, its fd may go. */
	uv_close((uv_handle_t *)&p->poll, pump_closed);
	close(p->fd);
}
