/*
 * The target's stdin and stdout: two daemon-owned pipes, bounded both ways.
 * The output is one stream of offsets, cut into runs: a debugger holds the
 * pipes across its program's runs, so a run's end is where the pipe's bytes
 * ended when the program exited, and the next run's bytes follow it.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

static void	transport_read_cb(uv_stream_t *, ssize_t, const uv_buf_t *);
static void	transport_close_input(struct transport *);
static void	transport_advance(struct transport *);

/* Bytes read from the target's pipe so far: those handed out and those held. */
static uint64_t
transport_got(const struct transport *t)
{
	return t->taken + t->len;
}

/*
 * How far the pipe may be read now: to the end of the last run while no
 * run has begun since, and when passing through, to the next run's end,
 * which the consumer hears of before any byte after it.
 */
static uint64_t
transport_limit(const struct transport *t)
{
	if (t->nends == 0)
		return UINT64_MAX;
	if (t->passthrough)
		return t->ends[0];
	if (!t->open)
		return t->ends[t->nends - 1];
	return UINT64_MAX;
}

/* Read into the loop's buffer, never past where reading stops. */
static void
transport_alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct transport	*t = h->data;
	uint64_t		 room = transport_limit(t) - transport_got(t);

	loop_alloc_cb(h, hint, buf);
	if (room < buf->len)
		buf->len = room;
}

/* Stop reading the target. */
static void
transport_stop_reading(struct transport *t)
{
	if (!t->reading)
		return;
	uv_read_stop((uv_stream_t *)&t->out);
	t->reading = false;
}

/* Read the target, unless its output is held in full or a consumer waits. */
static void
transport_start_reading(struct transport *t)
{
	if (t->reading || t->out_eof || !t->out_open || t->paused ||
	    t->closing || transport_got(t) >= transport_limit(t))
		return;
	if (!t->passthrough && t->len >= TRANSPORT_MAX)
		return;
	/* Passing through, what was given back goes before anything new. */
	if (t->passthrough && t->len > 0)
		return;
	uv_read_start((uv_stream_t *)&t->out, transport_alloc_cb,
	    transport_read_cb);
	t->reading = true;
}

/* A pipe handle has closed; the last one frees a closed transport. */
static void
transport_handle_closed(uv_handle_t *h)
{
	struct transport *t = h->data;

	if (--t->handles > 0 || !t->closing)
		return;
	free(t->buf);
	free(t);
}

/* Close one of the pipes. */
static void
transport_close_handle(uv_pipe_t *p, bool *open)
{
	if (!*open)
		return;
	*open = false;
	uv_close((uv_handle_t *)p, transport_handle_closed);
}

/* Every writer is gone: nothing more will come. */
static void
transport_out_eof(struct transport *t)
{
	t->out_eof = true;
	transport_stop_reading(t);
	transport_close_handle(&t->out, &t->out_open);
	t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
}

/*
 * Reading has come to where it stops, a run's end: no more for now; the
 * readers hear of it, one passing through once it has every byte before.
 */
static void
transport_reached(struct transport *t)
{
	if (t->nends == 0 || transport_got(t) < transport_limit(t))
		return;
	transport_stop_reading(t);
	if (t->passthrough && t->taken != t->ends[0])
		return;
	t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
	transport_advance(t);
}

/* Keep target output for readers, or pass it straight to the owner. */
static void
transport_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct transport *t = st->data;

	if (nread == 0 || nread == UV_EAGAIN || t->closing)
		return;
	/* No room was given: reading stops at a run's end, not at EOF. */
	if (nread == UV_ENOBUFS) {
		transport_stop_reading(t);
		return;
	}
	if (nread < 0) {
		transport_out_eof(t);
		return;
	}
	if (t->passthrough) {
		t->taken += nread;
		t->cb(t->arg, TRANSPORT_OUTPUT, buf->base, nread);
		transport_reached(t);
		return;
	}
	/* The allocation is fixed-size; the buffer grows to the bound. */
	if (t->len + nread > t->cap) {
		t->cap = t->len + nread > 2 * t->cap ? t->len + nread :
		    2 * t->cap;
		t->buf = xreallocarray(t->buf, t->cap, 1);
	}
	memcpy(t->buf + t->len, buf->base, nread);
	t->len += nread;
	if (t->len >= TRANSPORT_MAX)
		transport_stop_reading(t);
	t->cb(t->arg, TRANSPORT_OUTPUT, NULL, 0);
	transport_reached(t);
}

/* Create the two pipes; the child ends go to the keeper. */
struct transport *
transport_open(transport_cb cb, void *arg, char *err, size_t errlen)
{
	struct transport	*t;
	int			 in[2], out[2];

	/* Real pipes: /dev/fd/N on a socketpair fails with ENXIO. */
	if (pipe2(in, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return NULL;
	}
	if (pipe2(out, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		return NULL;
	}
	/*
	 * 1 MiB pipes (the unprivileged maximum) move a fast target's bytes
	 * in a sixteenth of the wakeups; where refused, the default stays.
	 */
	(void)fcntl(in[1], F_SETPIPE_SZ, TRANSPORT_PIPE_SIZE);
	(void)fcntl(out[1], F_SETPIPE_SZ, TRANSPORT_PIPE_SIZE);
	t = xcalloc(1, sizeof *t);
	t->cb = cb;
	t->arg = arg;
	t->child_in = in[0];
	t->child_out = out[1];
	uv_pipe_init(dmn.loop, &t->in, 0);
	uv_pipe_init(dmn.loop, &t->out, 0);
	t->in.data = t->out.data = t;
	uv_pipe_open(&t->in, in[1]);
	uv_pipe_open(&t->out, out[0]);
	t->in_open = t->out_open = true;
	t->handles = 2;
	t->open = true;
	t->run = 1;
	transport_start_reading(t);
	return t;
}

/* The keeper has the child ends: drop ours so EOF can arrive. */
void
transport_spawned(struct transport *t)
{
	if (t->child_in != -1)
		close(t->child_in);
	if (t->child_out != -1)
		close(t->child_out);
	t->child_in = t->child_out = -1;
}

/*
 * The session has ended: its input closes; its output pipe stays open until
 * EOF has been read, so nothing the target wrote is lost.
 */
void
transport_finish(struct transport *t)
{
	transport_spawned(t);
	transport_close_handle(&t->in, &t->in_open);
	t->in_closed = true;
}

/* Take up to max bytes of held target output, none past its run's end. */
size_t
transport_take(struct transport *t, char *dst, size_t max)
{
	size_t n = t->len < max ? t->len : max;

	if (t->nends > 0 && t->ends[0] - t->taken < n)
		n = t->ends[0] - t->taken;
	if (n == 0)
		return 0;
	memcpy(dst, t->buf, n);
	memmove(t->buf, t->buf + n, t->len - n);
	t->len -= n;
	t->taken += n;
	if (t->len == 0 && t->cap > 65536) {
		free(t->buf);
		t->buf = NULL;
		t->cap = 0;
	}
	transport_advance(t);
	return n;
}

/*
 * Hold bytes handed out again, ahead of what is held: a consumer that
 * could not pass them on gives them back, and the next reader gets them.
 */
void
transport_unread(struct transport *t, const char *data, size_t len)
{
	if (len == 0)
		return;
	if (len > t->taken)
		log_fatal("%zu target bytes given back of %llu handed out", len,
		    (unsigned long long)t->taken);
	if (t->len + len > t->cap) {
		t->cap = t->len + len;
		t->buf = xreallocarray(t->buf, t->cap, 1);
	}
	memmove(t->buf + len, t->buf, t->len);
	memcpy(t->buf, data, len);
	t->len += len;
	t->taken -= len;
}

/* The target-stream offset of the next byte a reader gets. */
uint64_t
transport_offset(const struct transport *t)
{
	return t->taken;
}

/* Bytes of target output held for readers. */
size_t
transport_held(const struct transport *t)
{
	return t->len;
}

/* Whether the output passes straight through to a bridged client. */
bool
transport_piped(const struct transport *t)
{
	return t->passthrough;
}

/*
 * Whether the reader has every byte of the output: of a run that no later
 * run follows yet, or for good.
 */
bool
transport_drained(const struct transport *t)
{
	if (t->nends > 0 && t->taken == t->ends[0])
		return true;
	return t->out_eof && t->len == 0;
}

/* The run of the next byte a reader gets (the first is 1). */
unsigned long
transport_run(const struct transport *t)
{
	return t->run;
}

/* Whether the program has exited and not run again: its input is refused. */
bool
transport_exited(const struct transport *t)
{
	return t->exited;
}

/* A reader with all of a run's output goes on to the next, once one began. */
static void
transport_advance(struct transport *t)
{
	while (t->nends > 0 && t->taken == t->ends[0] &&
	    (t->nends > 1 || t->open)) {
		memmove(t->ends, t->ends + 1, (t->nends - 1) * sizeof *t->ends);
		t->nends--;
		t->run++;
	}
	transport_start_reading(t);
}

/*
 * The program has exited: all it wrote is in the pipe, but the debugger
 * holds the pipe open, so no EOF comes; its run ends where the pipe's
 * bytes end now, and reading stops there until the next run.
 */
void
transport_run_end(struct transport *t)
{
	uv_os_fd_t	fd;
	int		pending = 0;

	t->exited = true;
	if (t->closing)
		return;
	/* Writes that wait for room learn that the input is closed. */
	t->cb(t->arg, TRANSPORT_INPUT, NULL, 0);
	if (t->out_eof || !t->open)
		return;
	if (uv_fileno((uv_handle_t *)&t->out, &fd) != 0 ||
	    ioctl(fd, FIONREAD, &pending) != 0 || pending < 0)
		pending = 0;
	/* Past the bound, the newest two runs become one. */
	if (t->nends == TRANSPORT_RUNS_MAX)
		t->nends--;
	t->ends[t->nends++] = transport_got(t) + (uint64_t)pending;
	t->open = false;
	transport_start_reading(t);
	transport_reached(t);
}

/* The program runs (again): its input is open, its output a new run. */
void
transport_run_start(struct transport *t)
{
	t->exited = false;
	if (t->closing || t->out_eof)
		return;
	t->open = true;
	transport_advance(t);
}

/* Bytes accepted for the target's stdin but not yet written. */
size_t
transport_queued(struct transport *t)
{
	if (!t->in_open)
		return 0;
	return stream_queued((uv_stream_t *)&t->in);
}

/* A write reached the pipe (or failed: then the target's stdin is closed). */
static void
transport_written(void *arg, int status)
{
	struct transport *t = arg;

	t->writes--;
	if (t->closing)
		return;
	if (status != 0 && status != UV_ECANCELED) {
		log_info("target input closed: %s", uv_strerror(status));
		t->in_closed = true;
	}
	transport_close_input(t);
	t->cb(t->arg, TRANSPORT_INPUT, NULL, 0);
}

/* Queue bytes for the target's stdin; -1 once it is closed. */
int
transport_write(struct transport *t, const char *data, size_t len)
{
	int rc;

	if (t->in_closed || !t->in_open || t->exited)
		return -1;
	if (len == 0)
		return 0;
	rc = stream_write((uv_stream_t *)&t->in, data, len, transport_written,
	    t);
	if (rc < 0) {
		t->in_closed = true;
		return -1;
	}
	if (rc == 0)
		t->writes++;
	return 0;
}

/* Close the target's stdin now if an EOF was asked for and nothing is queued. */
static void
transport_close_input(struct transport *t)
{
	if (!t->eof_wanted || !t->in_open || transport_queued(t) > 0 ||
	    t->writes > 0)
		return;
	/* shutdown(2) does not apply to a pipe: closing it is the EOF. */
	transport_close_handle(&t->in, &t->in_open);
}

/*
 * Send EOF to the target once what is queued is written; a program that
 * has exited is told nothing, so the next run's input stays open.
 */
void
transport_eof(struct transport *t)
{
	if (!t->in_open || t->exited)
		return;
	t->in_closed = true;
	t->eof_wanted = true;
	transport_close_input(t);
}

/* A consumer cannot take more for now: stop reading the target. */
void
transport_pause(struct transport *t)
{
	t->paused = true;
	transport_stop_reading(t);
}

/* Hand the owner the first len held bytes; it may give some back. */
static void
transport_flush_part(struct transport *t, size_t len)
{
	char *held = t->buf;

	if (len == t->len) {
		t->buf = NULL;
		t->len = t->cap = 0;
	} else {
		held = xmalloc(len);
		memcpy(held, t->buf, len);
		memmove(t->buf, t->buf + len, t->len - len);
		t->len -= len;
	}
	t->taken += len;
	t->cb(t->arg, TRANSPORT_OUTPUT, held, len);
	free(held);
}

/*
 * Hand what is held to the owner, which passes output through: it may
 * give some back (transport_unread), into a buffer of its own. A run's
 * end among it is told between the two runs' bytes. Whether one was.
 */
static bool
transport_flush(struct transport *t)
{
	size_t	len, nends;
	bool	told = false;

	while (t->passthrough && !t->paused && t->len > 0) {
		len = t->len;
		if (t->nends > 0 && t->ends[0] - t->taken < len)
			len = t->ends[0] - t->taken;
		if (len > 0)
			transport_flush_part(t, len);
		if (t->nends == 0 || t->taken != t->ends[0])
			continue;
		nends = t->nends;
		t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
		told = true;
		transport_advance(t);
		/* Nothing moved: what is held waits for a later run. */
		if (len == 0 && t->nends == nends)
			break;
	}
	return told;
}

/* The consumer has room again: what it gave back goes first. */
void
transport_resume(struct transport *t)
{
	t->paused = false;
	transport_flush(t);
	transport_start_reading(t);
}

/*
 * Pass output straight to the owner (a bridged client) or hold it for
 * readers; what is held goes out first when passing through begins.
 */
void
transport_passthrough(struct transport *t, bool on)
{
	t->passthrough = on;
	t->paused = false;
	if (on) {
		transport_advance(t);
		/* A consumer that comes at the end hears of it at once. */
		if (!transport_flush(t) && t->passthrough && t->len == 0 &&
		    transport_drained(t))
			t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
	}
	transport_start_reading(t);
}

/* Close both pipes and free the transport once libuv has let go. */
void
transport_close(struct transport *t)
{
	if (t == NULL || t->closing)
		return;
	transport_spawned(t);
	transport_stop_reading(t);
	t->closing = true;
	transport_close_handle(&t->in, &t->in_open);
	transport_close_handle(&t->out, &t->out_open);
	if (t->handles == 0) {
		free(t->buf);
		free(t);
	}
}
