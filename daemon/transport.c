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
#include "transport.h"

/* The size asked of the transport's pipes. */
#define TRANSPORT_PIPE_SIZE (1024 * 1024)

/* A handle has closed; the last one frees a closed transport. */
void
transport_handle_closed(uv_handle_t *h)
{
	struct transport *t = h->data;

	if (--t->handles > 0 || !t->closing)
		return;
	free(t);
}

/*
 * Close one of the pipes; the target's stdin closing is told, so that no
 * copy its keeper holds keeps the EOF from the target.
 */
void
transport_close_handle(uv_pipe_t *p, bool *open)
{
	struct transport *t = p->data;

	if (!*open)
		return;
	*open = false;
	uv_close((uv_handle_t *)p, transport_handle_closed);
	if (p == &t->in && !t->closing)
		t->cb(t->arg, TRANSPORT_IN_CLOSED, NULL, 0);
}

/* The daemon's ends of the pipes, for the keeper to hold; -1 once closed. */
void
transport_daemon_fds(const struct transport *t, int *in, int *out)
{
	uv_os_fd_t fd;

	*in = *out = -1;
	if (t->in_open && uv_fileno((const uv_handle_t *)&t->in, &fd) == 0)
		*in = fd;
	if (t->out_open)
		*out = t->out_fd;
}

/*
 * Read out and write in, the daemon's ends of the target's pipes (in is
 * -1 for an adopted session whose stdin was closed).
 */
static struct transport *
transport_watch(struct output *log, struct output *in_log, transport_cb cb,
    void *arg, int in, int out)
{
	struct transport *t = xcalloc(1, sizeof *t);

	t->cb = cb;
	t->arg = arg;
	t->log = log;
	t->in_log = in_log;
	t->child_in = t->child_out = -1;
	t->in_poll_fd = -1;
	t->in.data = t;
	transport_out_watch(t, out);
	if (in != -1) {
		uv_pipe_init(dmn.loop, &t->in, 0);
		uv_pipe_open(&t->in, in);
		t->in_open = true;
		t->handles++;
	} else
		t->in_closed = true;
	t->open = true;
	t->run = 1;
	transport_out_start(t);
	return t;
}

/* Create the two pipes; the child ends go to the keeper. */
struct transport *
transport_open(struct output *log, struct output *in_log, transport_cb cb,
    void *arg, char *err, size_t errlen)
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
	t = transport_watch(log, in_log, cb, arg, in[1], out[0]);
	t->child_in = in[0];
	t->child_out = out[1];
	return t;
}

/*
 * Go on with an adopted session's pipes, whose daemon ends its keeper
 * held: the transcripts go on at their ends; what the target wrote while
 * no daemon read waited in the pipe, and comes now.
 */
struct transport *
transport_adopt(struct output *log, struct output *in_log, transport_cb cb,
    void *arg, int in, int out)
{
	struct transport *t = transport_watch(log, in_log, cb, arg, in, out);

	/* What was logged before is readable by offset, not held. */
	t->taken = output_size(log);
	if (in_log != NULL)
		t->in_at = output_size(in_log);
	return t;
}

/* The ends the target's keeper is handed: its stdin's read end, its stdout's write end. */
void
transport_child_fds(const struct transport *t, int *in, int *out)
{
	*in = t->child_in;
	*out = t->child_out;
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
	transport_in_poll_close(t);
	transport_close_handle(&t->in, &t->in_open);
	t->in_closed = true;
}

/*
 * Copy up to max held bytes from the transcript, none past the run's end;
 * bytes it can no longer give (its log failed and the ring moved on,
 * which flow control prevents) are skipped, said once in the daemon log.
 */
static size_t
transport_peek(struct transport *t, char *dst, size_t max)
{
	uint64_t	next;
	size_t		n;

	for (;;) {
		n = transport_held(t) < max ? transport_held(t) : max;
		if (t->nends > 0 && t->ends[0] - t->taken < n)
			n = t->ends[0] - t->taken;
		if (n == 0)
			return 0;
		if ((n = output_read(t->log, t->taken, dst, n)) > 0)
			return n;
		next = output_missing(t->log, t->taken);
		if (next <= t->taken)
			log_fatal("target output at %llu cannot be had",
			    (unsigned long long)t->taken);
		if (t->nends > 0 && next > t->ends[0])
			next = t->ends[0];
		log_warn("target output [%llu, %llu) is lost: the transcript "
		    "could not keep it", (unsigned long long)t->taken,
		    (unsigned long long)next);
		t->taken = next;
	}
}

/* Take up to max bytes of held target output, none past its run's end. */
size_t
transport_take(struct transport *t, char *dst, size_t max)
{
	size_t n = transport_peek(t, dst, max);

	if (n == 0)
		return 0;
	t->taken += n;
	transport_advance(t);
	return n;
}

/*
 * Hold bytes handed out again, ahead of what is held: a consumer that
 * could not pass them on gives them back, and the next reader gets them
 * from the transcript, which still has them.
 */
void
transport_unread(struct transport *t, const char *data, size_t len)
{
	(void)data;
	if (len == 0)
		return;
	if (len > t->taken)
		log_fatal("%zu target bytes given back of %llu handed out", len,
		    (unsigned long long)t->taken);
	t->taken -= len;
}

/*
 * Make off the offset of the next byte a reader gets: back over bytes
 * handed out (the transcript has them still) or on past held ones, as a
 * reader that comes back after a restart says where it stands. -1 past
 * what was read, or while a run's end waits ahead of the reader: runs are
 * known only from the moment a daemon saw the program exit.
 */
int
transport_seek(struct transport *t, uint64_t off)
{
	if (off > transport_out_got(t) || (t->nends > 0 && off != t->taken))
		return -1;
	t->taken = off;
	/* Reading may have to wait for the reader now, or may go on. */
	transport_out_stop(t);
	transport_out_start(t);
	return 0;
}

/* The target-stream offset of the next byte a reader gets. */
uint64_t
transport_offset(const struct transport *t)
{
	return t->taken;
}

/*
 * Send the last len bytes handed out to fd from the transcript's pages,
 * not copied through the daemon again: as output_send.
 */
ssize_t
transport_send_taken(struct transport *t, int fd, size_t len)
{
	return output_send(t->log, fd, t->taken - len, len);
}

/* Bytes of target output held for readers (in the transcript). */
uint64_t
transport_held(const struct transport *t)
{
	return transport_out_got(t) - t->taken;
}

/* Whether the target's output has reached EOF: every writer has closed. */
bool
transport_at_eof(const struct transport *t)
{
	return t->out_eof;
}

/*
 * Whether the target stream has ended for a reader of it: for good, or the
 * program has exited, every byte it wrote is in, and it has not run again.
 */
bool
transport_ended(const struct transport *t)
{
	if (t->out_eof)
		return true;
	return !t->open && t->nends > 0 &&
	    transport_out_got(t) >= t->ends[t->nends - 1];
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
	return t->out_eof && transport_held(t) == 0;
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
void
transport_advance(struct transport *t)
{
	while (t->nends > 0 && t->taken == t->ends[0] &&
	    (t->nends > 1 || t->open)) {
		memmove(t->ends, t->ends + 1, (t->nends - 1) * sizeof *t->ends);
		t->nends--;
		t->run++;
	}
	transport_out_start(t);
}

/*
 * The program has exited: all it wrote is in the pipe, but the debugger
 * holds the pipe open, so no EOF comes; its run ends where the pipe's
 * bytes end now, and reading stops there until the next run.
 */
void
transport_run_end(struct transport *t)
{
	int	pending = 0;

	t->exited = true;
	if (t->closing)
		return;
	/* Writes that wait for room learn that the input is closed. */
	t->cb(t->arg, TRANSPORT_INPUT, NULL, 0);
	if (t->out_eof || !t->open)
		return;
	if (ioctl(t->out_fd, FIONREAD, &pending) != 0 || pending < 0)
		pending = 0;
	/* Past the bound, the newest two runs become one. */
	if (t->nends == TRANSPORT_RUNS_MAX)
		t->nends--;
	t->ends[t->nends++] = transport_out_got(t) + (uint64_t)pending;
	t->open = false;
	transport_out_start(t);
	transport_out_reached(t);
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

/* A consumer cannot take more for now: stop reading the target. */
void
transport_pause(struct transport *t)
{
	t->paused = true;
	transport_out_stop(t);
}

/* Hand the owner up to max held bytes; it may give some back. */
static void
transport_flush_part(struct transport *t, size_t max)
{
	char	*held = xmalloc(max);
	size_t	 len;

	if ((len = transport_peek(t, held, max)) > 0) {
		t->taken += len;
		t->cb(t->arg, TRANSPORT_OUTPUT, held, len);
	}
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

	while (t->passthrough && !t->paused && transport_held(t) > 0) {
		len = transport_held(t) < TRANSPORT_MAX ? transport_held(t) :
		    TRANSPORT_MAX;
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

/*
 * A consumer passed through to that has every byte of an output that has
 * ended hears of the end, once: the EOF may have been read while the
 * output was held, before it came, and it may have had to wait for room.
 */
static void
transport_tell_eof(struct transport *t)
{
	if (!t->passthrough || t->paused || !t->out_eof || t->eof_told ||
	    transport_held(t) > 0)
		return;
	t->eof_told = true;
	t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
}

/* The consumer has room again: what it gave back goes first. */
void
transport_resume(struct transport *t)
{
	t->paused = false;
	transport_flush(t);
	transport_tell_eof(t);
	transport_out_start(t);
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
	t->eof_told = false;
	if (on) {
		transport_advance(t);
		/* A consumer that comes at the end hears of it at once. */
		if (!transport_flush(t) && t->passthrough &&
		    transport_held(t) == 0 && transport_drained(t)) {
			t->eof_told = t->out_eof;
			t->cb(t->arg, TRANSPORT_EOF, NULL, 0);
		}
	}
	transport_out_start(t);
}

/* Close both pipes and free the transport once libuv has let go. */
void
transport_close(struct transport *t)
{
	if (t == NULL || t->closing)
		return;
	transport_spawned(t);
	transport_out_stop(t);
	t->closing = true;
	transport_in_poll_close(t);
	transport_close_handle(&t->in, &t->in_open);
	transport_out_close(t);
	if (t->handles == 0)
		free(t);
}
