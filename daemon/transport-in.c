/*
 * The target's stdin: what a client writes goes into the input's
 * transcript first and to the pipe from the transcript's pages, so it is
 * not copied through the daemon again; what the pipe has no room for
 * waits in the transcript, and the owner hears when it moves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "transport.h"

static void	transport_in_ready(uv_poll_t *, int, int);
static int	transport_in_unpend(struct transport *, uint64_t);
static void	transport_in_resend(struct transport *, int);
static void	transport_in_close_drained(struct transport *);
static uint64_t	transport_in_pending(const struct transport *);

/* Bytes accepted for the target's stdin but not yet written. */
size_t
transport_in_queued(struct transport *t)
{
	if (!t->in_open)
		return 0;
	return stream_queued((uv_stream_t *)&t->in) + transport_in_pending(t);
}

/* A write reached the pipe (or failed: then the target's stdin is closed). */
static void
transport_in_written(void *arg, int status)
{
	struct transport *t = arg;

	t->writes--;
	if (t->closing)
		return;
	if (status != 0 && status != UV_ECANCELED) {
		log_info("target input closed: %s", uv_strerror(status));
		t->in_closed = true;
	}
	transport_in_close_drained(t);
	t->cb(t->arg, TRANSPORT_INPUT, NULL, 0);
}

/* Bytes of the input's transcript not yet written to stdin nor queued. */
static uint64_t
transport_in_pending(const struct transport *t)
{
	return t->in_log != NULL ? output_size(t->in_log) - t->in_at : 0;
}

/* Stop waiting for room in stdin, and let its descriptor go. */
void
transport_in_poll_close(struct transport *t)
{
	if (t->in_poll_fd == -1)
		return;
	t->in_polling = false;
	uv_close((uv_handle_t *)&t->in_poll, transport_handle_closed);
	close(t->in_poll_fd);
	t->in_poll_fd = -1;
}

/*
 * The target's stdin is gone (EPIPE), or what waited for it cannot be had:
 * what waited is dropped, as a queued write that failed drops its bytes,
 * and later writes are refused.
 */
static void
transport_in_gone(struct transport *t, int error)
{
	log_info("target input closed: %s", strerror(error));
	t->in_closed = true;
	t->in_at = output_size(t->in_log);
	transport_in_poll_close(t);
}

/*
 * A descriptor of stdin's own to poll for room, as libuv polls one
 * descriptor once; -1 without one to spare (descriptors run short) or if
 * libuv will not poll it.
 */
static int
transport_in_poll_open(struct transport *t)
{
	uv_os_fd_t fd;

	if (uv_fileno((uv_handle_t *)&t->in, &fd) != 0 ||
	    (t->in_poll_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1)
		return -1;
	/* A handle libuv refused is not one: nothing for uv_close. */
	if (uv_poll_init(dmn.loop, &t->in_poll, t->in_poll_fd) != 0) {
		close(t->in_poll_fd);
		t->in_poll_fd = -1;
		return -1;
	}
	t->in_poll.data = t;
	t->handles++;
	return 0;
}

/*
 * Wait for room in stdin (or stop). Where that cannot be, -1: the caller
 * queues what waits as a copy instead.
 */
static int
transport_in_wait(struct transport *t, bool on)
{
	if (on == t->in_polling || t->closing)
		return 0;
	if (!on) {
		t->in_polling = false;
		uv_poll_stop(&t->in_poll);
		return 0;
	}
	/*
	 * A handle that will not start stays, stopped, for the next try:
	 * closing it would leave it closing when it is opened again.
	 */
	if ((t->in_poll_fd == -1 && transport_in_poll_open(t) != 0) ||
	    uv_poll_start(&t->in_poll, UV_WRITABLE, transport_in_ready) != 0)
		return -1;
	t->in_polling = true;
	return 0;
}

/*
 * Write what the input's transcript holds past in_at to stdin from its
 * pages, with no copy through the daemon, as far as the pipe takes it;
 * wait for room for the rest.
 */
static void
transport_in_push(struct transport *t)
{
	uint64_t	pending = transport_in_pending(t);
	uv_os_fd_t	fd;
	ssize_t		n;

	/* An EOF asked for (in_closed) comes after what waits: go on. */
	if (pending == 0 || !t->in_open) {
		transport_in_wait(t, false);
		return;
	}
	if (uv_fileno((uv_handle_t *)&t->in, &fd) != 0)
		log_fatal("target input has no descriptor");
	n = output_send(t->in_log, fd, t->in_at, pending);
	if (n < 0 && (errno == EPIPE || errno == EBADF)) {
		transport_in_gone(t, errno);
		return;
	}
	if (n < 0 && errno != EAGAIN) {
		transport_in_resend(t, errno);
		return;
	}
	if (n > 0)
		t->in_at += (uint64_t)n;
	if (transport_in_wait(t, transport_in_pending(t) > 0) != 0 &&
	    transport_in_unpend(t, output_size(t->in_log)) != 0)
		t->in_closed = true;
}

/*
 * The transcript cannot give what waits from its pages: its file ends
 * before them (EIO: cut short behind the daemon's back) or lacks them
 * (EINVAL), or the kernel would not send them. The pipe is fine: what
 * waits goes as a copy, from memory where the file lost it.
 */
static void
transport_in_resend(struct transport *t, int error)
{
	log_warn("%s: the target's input from offset %llu cannot be sent "
	    "from the file: %s; it is sent as a copy instead",
	    output_path(t->in_log), (unsigned long long)t->in_at,
	    strerror(error));
	if (transport_in_unpend(t, output_size(t->in_log)) != 0)
		t->in_closed = true;
}

/* Room in stdin (or its reader is gone): write on, and tell the owner. */
static void
transport_in_ready(uv_poll_t *h, int status, int events)
{
	struct transport *t = h->data;

	(void)events;
	if (t->closing)
		return;
	if (status < 0)
		transport_in_gone(t, -status);
	else
		transport_in_push(t);
	transport_in_close_drained(t);
	t->cb(t->arg, TRANSPORT_INPUT, NULL, 0);
}

/*
 * Bytes that waited in the input's transcript cannot be read back from
 * it (its file was cut short, or lacks them, and memory no longer holds
 * them): the target would get a stream with a hole, so its input ends
 * here instead, and the daemon's log says what was lost. The session
 * and every other one go on.
 */
static void
transport_in_lost(struct transport *t, uint64_t lost)
{
	log_warn("%s: %llu bytes of the target's input from offset %llu "
	    "cannot be read back from it: they are lost, and the target's "
	    "input takes no more", output_path(t->in_log),
	    (unsigned long long)lost, (unsigned long long)t->in_at);
	transport_in_gone(t, EIO);
}

/*
 * What waits in the transcript before end goes to libuv's queue as a
 * copy, ahead of bytes the transcript lacks (its size limit, a failing
 * disk), which must follow it in order; those from end on are the
 * caller's to queue, once. -1 if stdin is closed, or if only a part of
 * what waited could be had: that part is queued, the rest lost.
 */
static int
transport_in_unpend(struct transport *t, uint64_t end)
{
	uint64_t	pending = t->in_log != NULL && end > t->in_at ?
			    end - t->in_at : 0;
	char		*buf;
	size_t		 n;
	int		 rc = 1;

	transport_in_wait(t, false);
	if (pending == 0)
		return 0;
	buf = xmalloc(pending);
	n = output_read(t->in_log, t->in_at, buf, pending);
	if (n > 0)
		rc = stream_write((uv_stream_t *)&t->in, buf, n,
		    transport_in_written, t);
	free(buf);
	if (rc < 0) {
		/* Dropped with stdin, as a queued write that failed. */
		t->in_at += pending;
		return -1;
	}
	if (rc == 0)
		t->writes++;
	t->in_at += n;
	if (n != pending) {
		transport_in_lost(t, pending - n);
		return -1;
	}
	return 0;
}

/*
 * Queue bytes for the target's stdin; -1 once it is closed. They go into
 * the input's transcript first, and to the pipe from there: what it has
 * no room for now waits in the transcript, not in a copy.
 */
int
transport_in_write(struct transport *t, const char *data, size_t len)
{
	uint64_t	at;
	int		rc;

	if (t->in_closed || !t->in_open || t->exited)
		return -1;
	if (len == 0)
		return 0;
	at = t->in_log != NULL ? output_size(t->in_log) : 0;
	/* What the target was given, as it was given, for the transcript. */
	if (t->in_log != NULL)
		output_add(t->in_log, data, len);
	if (t->in_log != NULL && output_logged(t->in_log, at, len) &&
	    stream_queued((uv_stream_t *)&t->in) == 0 && t->writes == 0) {
		transport_in_push(t);
		return t->in_closed ? -1 : 0;
	}
	if (transport_in_unpend(t, at) != 0) {
		t->in_closed = true;
		return -1;
	}
	rc = stream_write((uv_stream_t *)&t->in, data, len,
	    transport_in_written, t);
	if (rc < 0) {
		t->in_closed = true;
		return -1;
	}
	t->in_at = at + len;
	if (rc == 0)
		t->writes++;
	return 0;
}

/* Close the target's stdin if an EOF was asked for and nothing is queued. */
static void
transport_in_close_drained(struct transport *t)
{
	if (!t->eof_wanted || !t->in_open || transport_in_queued(t) > 0 ||
	    t->writes > 0)
		return;
	/* shutdown(2) does not apply to a pipe: closing it is the EOF. */
	transport_in_poll_close(t);
	transport_close_handle(&t->in, &t->in_open);
}

/*
 * Send EOF to the target once what is queued is written; a program that
 * has exited is told nothing, so the next run's input stays open.
 */
void
transport_in_eof(struct transport *t)
{
	if (!t->in_open || t->exited)
		return;
	t->in_closed = true;
	t->eof_wanted = true;
	transport_in_close_drained(t);
}
