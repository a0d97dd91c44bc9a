/*
 * A pty master on the loop: its output to the owner, the owner's input to
 * it. The output is read from the master, or from the pipes a keeper
 * copies it into while it lives (console_pump).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "pty.h"
#include "pump.h"

/* Bytes read from the master in one plain read() while draining. */
#define CONSOLE_CHUNK 65536
/* The most one drain reads, so a writer that never stops cannot hold the loop. */
#define CONSOLE_DRAIN_MAX (16 * CONSOLE_CHUNK)
/* How long a console whose processes are gone may stay open by another's doing. */
#define CONSOLE_FINISH_MS 500

/* Pipes a keeper may copy one pty's output into (keeper-pump.c). */
#define CONSOLE_PUMPS 2

/* A pipe a keeper copies the pty's output into (pump.c): its news. */
struct console_pipe {
	struct console		*c;
	struct pump		*pump;
	enum console_event	 ev;	/* what the owner is told of bytes */
};

struct console {
	int			 master;
	int			 slave;		/* ours until released */
	char			 pts[64];
	uv_pipe_t		 pipe;
	bool			 eof;
	bool			 closing;
	struct timer		*finish;	/* bounds the end once processes are gone */
	console_cb		 cb;
	void			*arg;
	struct console_pipe	 pipes[CONSOLE_PUMPS];
	size_t			 npipes;
	bool			 pumped;	/* the keeper reads the master */
	uint64_t		 spliced_at;	/* the last bytes' offset in their log */
};

static void	console_pump_drain(struct console *, size_t *);

/*
 * Everything is read: say so once, and read no more. A second pump's pipe
 * ended with the first, when its keeper did: what it still holds goes
 * into its log first, so that its stream ends after all of it.
 */
static void
console_eof(struct console *c)
{
	size_t total = 0;

	if (c->eof || c->closing)
		return;
	console_pump_drain(c, &total);
	c->eof = true;
	uv_read_stop((uv_stream_t *)&c->pipe);
	c->cb(c->arg, CONSOLE_EOF, NULL, 0);
}

static void	console_read_cb(uv_stream_t *, ssize_t, const uv_buf_t *);

/*
 * Read the master with plain read() until EIO (every slave is closed) or
 * EAGAIN, because libuv 1.44 can drop the tail of the output at POLLHUP;
 * a pumped console drains its pipes first, and the master only once the
 * keeper has stopped reading it.
 */
void
console_drain(struct console *c)
{
	char	buf[CONSOLE_CHUNK];
	ssize_t	n;
	size_t	total = 0;

	console_pump_drain(c, &total);
	while (!c->pumped && !c->eof && !c->closing &&
	    total < CONSOLE_DRAIN_MAX) {
		n = read(c->master, buf, sizeof buf);
		if (n > 0) {
			total += n;
			c->cb(c->arg, CONSOLE_OUTPUT, buf, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		console_eof(c);
	}
}

/* Take output from the master; at EOF or EIO drain the rest by hand. */
static void
console_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct console *c = st->data;

	if (c->closing)
		return;
	if (nread > 0) {
		c->cb(c->arg, CONSOLE_OUTPUT, buf->base, nread);
		return;
	}
	if (nread == 0 || nread == UV_EAGAIN)
		return;
	console_drain(c);
	console_eof(c);
}

/*
 * A pump's pipe brought bytes, now in its log at at; or it ended, as every
 * pipe does when the keeper stops reading the master: once all have, and
 * every byte they held went before, the rest is read from the master here.
 */
static void
console_pipe_cb(void *arg, const char *data, size_t len, uint64_t at)
{
	struct console_pipe	*cp = arg;
	struct console		*c = cp->c;
	size_t			 i;

	if (len > 0) {
		c->spliced_at = at;
		c->cb(c->arg, cp->ev, data, len);
		return;
	}
	for (i = 0; i < c->npipes; i++)
		if (!pump_ended(c->pipes[i].pump))
			return;
	if (c->closing)
		return;
	c->pumped = false;
	if (!c->eof)
		uv_read_start((uv_stream_t *)&c->pipe, loop_alloc_cb,
		    console_read_cb);
}

/* Move what the pumps' pipes hold now into their logs, up to the bound. */
static void
console_pump_drain(struct console *c, size_t *total)
{
	size_t	i;

	for (i = 0; i < c->npipes && !c->closing; i++)
		pump_drain(c->pipes[i].pump, total, CONSOLE_DRAIN_MAX);
}

/*
 * Read the pty's output from fd, a pipe its keeper copies it into, spliced
 * into log; the owner is told ev with the bytes, already in log at
 * console_spliced_at. The first pump is the master's reader from now on,
 * so it is made before the loop has read the master.
 */
void
console_pump(struct console *c, int fd, struct output *log,
    enum console_event ev)
{
	struct console_pipe *cp;

	if (c->npipes == CONSOLE_PUMPS || c->closing)
		log_fatal("console %s: pump %zu", c->pts, c->npipes);
	cp = &c->pipes[c->npipes++];
	cp->c = c;
	cp->ev = ev;
	cp->pump = pump_open(fd, log, console_pipe_cb, cp);
	if (cp == &c->pipes[0]) {
		c->pumped = true;
		uv_read_stop((uv_stream_t *)&c->pipe);
	}
}

/* Where in their log the bytes of the last CONSOLE_SPLICED begin. */
uint64_t
console_spliced_at(const struct console *c)
{
	return c->spliced_at;
}

/* The pty's master, for its terminal settings and size. */
int
console_master(const struct console *c)
{
	return c->master;
}

/* The pty's slave, which a keeper is handed, while it is ours. */
int
console_slave(const struct console *c)
{
	return c->slave;
}

/* The slave's path, for a debugger told to open it. */
const char *
console_pts(const struct console *c)
{
	return c->pts;
}

/* Start reading c's master; the handle owns it from here. */
static struct console *
console_watch(struct console *c, char *err, size_t errlen)
{
	uv_pipe_init(dmn.loop, &c->pipe, 0);
	c->pipe.data = c;
	/* From here the handle owns the master: closing it closes the fd. */
	if (uv_pipe_open(&c->pipe, c->master) != 0) {
		snprintf(err, errlen, "pty: cannot watch the master");
		close(c->master);
		c->master = -1;
		console_close(c);
		return NULL;
	}
	uv_read_start((uv_stream_t *)&c->pipe, loop_alloc_cb,
	    console_read_cb);
	return c;
}

/* Create a pty and start reading its master. */
struct console *
console_open(bool raw, console_cb cb, void *arg, char *err, size_t errlen)
{
	struct console *c = xcalloc(1, sizeof *c);

	c->cb = cb;
	c->arg = arg;
	if (pty_open(&c->master, &c->slave, c->pts, sizeof c->pts, raw, err,
	    errlen) != 0) {
		free(c);
		return NULL;
	}
	return console_watch(c, err, errlen);
}

/*
 * Go on with the master of an adopted session's pty, which its keeper
 * held; with keep_slave, hold its slave too, as one of the daemon's own
 * that outlives its processes does (a program's terminal under gdb).
 */
struct console *
console_adopt(int master, bool keep_slave, console_cb cb, void *arg,
    char *err, size_t errlen)
{
	struct console *c = xcalloc(1, sizeof *c);

	c->cb = cb;
	c->arg = arg;
	c->master = master;
	c->slave = -1;
	if (ptsname_r(master, c->pts, sizeof c->pts) != 0 || (keep_slave &&
	    (c->slave = open(c->pts, O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1)) {
		snprintf(err, errlen, "pty: %s", strerror(errno));
		close(master);
		free(c);
		return NULL;
	}
	return console_watch(c, err, errlen);
}

/* The keeper holds the slave now: our copy would keep EOF from coming. */
void
console_release_slave(struct console *c)
{
	if (c->slave != -1)
		close(c->slave);
	c->slave = -1;
}

/* A queued write to the master has been taken by the pty. */
static void
console_written(void *arg, int status)
{
	struct console *c = arg;

	if (status != UV_ECANCELED && !c->closing)
		c->cb(c->arg, CONSOLE_WRITTEN, NULL, 0);
}

/* Bytes waiting to be written to the pty. */
size_t
console_queued(struct console *c)
{
	return stream_queued((uv_stream_t *)&c->pipe);
}

/* Send bytes to the pty, as if typed at its terminal; -1 once closed. */
int
console_write(struct console *c, const char *data, size_t len)
{
	if (c->closing)
		return -1;
	return stream_write((uv_stream_t *)&c->pipe, data, len,
	    console_written, c) < 0 ? -1 : 0;
}

/* The bound is up and someone outside still holds the pty: end it here. */
static void
console_finish_cb(void *arg)
{
	struct console *c = arg;

	console_drain(c);
	if (c->eof || c->closing)
		return;
	log_warn("pty %s: held open after its processes ended: closed", c->pts);
	console_eof(c);
}

/*
 * The processes on the pty are gone: read what they wrote, and if another
 * process still holds the pty open, end the console after a bound anyway.
 */
void
console_finish(struct console *c)
{
	console_drain(c);
	if (c->eof || c->closing)
		return;
	if (c->finish == NULL)
		c->finish = timer_new(console_finish_cb, c);
	timer_start(c->finish, CONSOLE_FINISH_MS);
}

/* Free the console once libuv has let go of its handle. */
static void
console_closed(uv_handle_t *h)
{
	free(h->data);
}

/* Close the pty; the console calls back no more and frees itself. */
void
console_close(struct console *c)
{
	size_t i;

	if (c == NULL || c->closing)
		return;
	c->closing = true;
	timer_free(c->finish);
	c->finish = NULL;
	console_release_slave(c);
	for (i = 0; i < c->npipes; i++)
		pump_close(c->pipes[i].pump);
	uv_close((uv_handle_t *)&c->pipe, console_closed);
}
