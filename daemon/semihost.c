/*
 * Semihosting: with the launch param "semihosting", a qemu session's
 * firmware talks to the host through Arm semihosting. Its console comes
 * to the daemon on a socket pair of its own, apart from the UART, as the
 * session's stream "semihost"; its SYS_EXIT is the target's exit record,
 * by "semihosting", and ends the session, whose wait then exits with the
 * firmware's code.
 *
 * The socket is QEMU's standard output, and its console chardev "stdio":
 * QEMU 7.2 writes SYS_WRITE on a ":tt" handle to its standard output, not
 * to the console chardev, so both must be the one socket. Its standard
 * input is /dev/null: the chardev makes its stdin non-blocking, which a
 * copy of the socket would share with stdout, where a full socket would
 * then lose a SYS_WRITE's bytes instead of holding the firmware back.
 * The UART moves to a chardev "pipe" on the transport's pipes, which QEMU
 * opens by name (PATH.in, PATH.out): two links in the state directory to
 * /dev/fd/4 and /dev/fd/5, removed once the session runs.
 *
 * The exit: QEMU tells gdb (a W packet) and exits with the code; the
 * daemon hears the two in either order, and before or after the session
 * counts as running. Once it has both and the session runs, the session
 * stops in order; QEMU's end without gdb's word within a bound is a
 * failure, as without semihosting.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "adopt.h"
#include "pump.h"
#include "semihost.h"

/*
 * How long the end of QEMU waits for gdb to say the program exited (the
 * semihosting exit's W packet), which may come after it, before the end
 * counts as QEMU's own.
 */
#define SEMIHOST_EXIT_WAIT_MS	2000
/* Most bytes read at the session's end, after QEMU is gone. */
#define SEMIHOST_DRAIN_MAX	(1024 * 1024)

/* A session's semihosting console: the daemon's end, and QEMU's until spawned. */
struct semihost {
	struct session	*s;		/* NULL once the session has ended */
	uv_pipe_t	 pipe;
	int		 child;		/* QEMU's end, its stdout, or -1 */
	int		 child_in;	/* /dev/null, its stdin, or -1 */
	char		*links;		/* the UART's links' PATH, until gone */
	bool		 open;		/* the pipe handle is open */
	bool		 reading;
	struct pump	*pump;		/* its keeper's copy of the socket, or NULL */
	struct timer	*wait;		/* for gdb's word after QEMU's end */
	struct timer	*soon;		/* the stop, out of the event */
	struct sink	*sink;		/* the target's records, the state */
	int		 server_code;	/* QEMU's exit code, once it ended */
	bool		 server_gone;
};

/* Whether the launch asked for semihosting. */
bool
semihost_wanted(const struct session *s)
{
	return json_is_true(json_object_get(s->l.kind_params, "semihosting"));
}

/* The console has ended: readers hear that nothing more will come. */
static void
semihost_eof(struct semihost *sh)
{
	struct session *s = sh->s;

	if (s == NULL || output_ended(s->semihost_out))
		return;
	output_end(s->semihost_out);
	session_fire(s, &(struct session_event){ .kind = SE_STREAM,
	    .stream = "semihost", .offset = output_size(s->semihost_out) });
}

/* Bytes of the console: into the transcript, then to the readers. */
static void
semihost_add(struct semihost *sh, const char *data, size_t len)
{
	struct session		*s = sh->s;
	struct session_event	 ev = { .kind = SE_STREAM,
				    .stream = "semihost", .data = data,
				    .len = len };

	ev.offset = output_size(s->semihost_out);
	output_add(s->semihost_out, data, len);
	session_fire(s, &ev);
}

static void	semihost_read_cb(uv_stream_t *, ssize_t, const uv_buf_t *);

/*
 * The keeper's copy of the console brought bytes, now in the transcript at
 * at; or it ended, with the keeper, and what it left is read here.
 */
static void
semihost_pump_cb(void *arg, const char *data, size_t len, uint64_t at)
{
	struct semihost *sh = arg;

	if (sh->s == NULL)
		return;
	if (len > 0) {
		session_fire(sh->s, &(struct session_event){ .kind = SE_STREAM,
		    .stream = "semihost", .data = data, .len = len,
		    .offset = at });
		return;
	}
	if (sh->open && !sh->reading && !output_ended(sh->s->semihost_out)) {
		uv_read_start((uv_stream_t *)&sh->pipe, loop_alloc_cb,
		    semihost_read_cb);
		sh->reading = true;
	}
}

/*
 * Read the console from fd, the pipe its keeper copies it into (pump.c),
 * instead of the socket, before the loop has read the socket.
 */
void
semihost_pump(struct session *s, int fd)
{
	struct semihost *sh = s->semihost;

	if (sh == NULL || sh->pump != NULL || !sh->open)
		log_fatal("session %lu: a semihosting pump", s->id);
	sh->pump = pump_open(fd, s->semihost_out, semihost_pump_cb, sh);
	uv_read_stop((uv_stream_t *)&sh->pipe);
	sh->reading = false;
}

/* Free what is left once nothing refers to it. */
static void
semihost_free(struct semihost *sh)
{
	timer_free(sh->wait);
	timer_free(sh->soon);
	free(sh->links);
	free(sh);
}

/* The handle is closed: free the rest. */
static void
semihost_closed(uv_handle_t *h)
{
	semihost_free(h->data);
}

/* Close the daemon's end (and QEMU's, if still ours) and let go. */
static void
semihost_close(struct semihost *sh)
{
	sh->s = NULL;
	session_sink_remove(sh->sink);
	sh->sink = NULL;
	if (sh->child != -1)
		close(sh->child);
	if (sh->child_in != -1)
		close(sh->child_in);
	sh->child = sh->child_in = -1;
	timer_stop(sh->wait);
	timer_stop(sh->soon);
	pump_close(sh->pump);
	sh->pump = NULL;
	if (!sh->open) {
		semihost_free(sh);
		return;
	}
	sh->open = false;
	uv_close((uv_handle_t *)&sh->pipe, semihost_closed);
}

/* The console printed, or ended. */
static void
semihost_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct semihost *sh = st->data;

	if (nread == 0 || nread == UV_EAGAIN || sh->s == NULL)
		return;
	if (nread > 0) {
		semihost_add(sh, buf->base, nread);
		return;
	}
	uv_read_stop(st);
	sh->reading = false;
	semihost_eof(sh);
}

/*
 * Watch the daemon's end of the console: a new socket pair, or the end
 * an adopted session's keeper held.
 */
static int
semihost_watch(struct semihost *sh, char *err, size_t errlen)
{
	int	fds[2], fd;

	if (dmn.adopting != NULL) {
		if ((fd = adopt_take_fd_any("semihost")) == -1) {
			snprintf(err, errlen, "its keeper did not hold the "
			    "semihosting console");
			return -1;
		}
	} else {
		/* A socket: QEMU's chardev takes a socket's fd, not a pipe's. */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
		    fds) != 0) {
			snprintf(err, errlen, "socketpair: %s",
			    strerror(errno));
			return -1;
		}
		fd = fds[0];
		sh->child = fds[1];
		if ((sh->child_in = open("/dev/null", O_RDONLY |
		    O_CLOEXEC)) == -1) {
			snprintf(err, errlen, "/dev/null: %s", strerror(errno));
			close(fds[0]);
			return -1;
		}
	}
	uv_pipe_init(dmn.loop, &sh->pipe, 0);
	sh->pipe.data = sh;
	uv_pipe_open(&sh->pipe, fd);
	sh->open = true;
	uv_read_start((uv_stream_t *)&sh->pipe, loop_alloc_cb,
	    semihost_read_cb);
	sh->reading = true;
	/* The keeper's copy, if it made one, goes on being read. */
	if (dmn.adopting != NULL &&
	    (fd = adopt_take_fd_any("semihost.pump")) != -1)
		semihost_pump(sh->s, fd);
	return 0;
}

/* QEMU's ends of the console, its stdin and stdout, for its keeper; -1 if none. */
void
semihost_child_fds(const struct session *s, int *in, int *out)
{
	*in = *out = -1;
	if (s->semihost == NULL || s->semihost->child == -1)
		return;
	*in = s->semihost->child_in;
	*out = s->semihost->child;
}

/* Remove the UART's links: QEMU has opened them, or never will. */
static void
semihost_unlink(struct semihost *sh)
{
	char path[PATH_MAX + 80];

	if (sh->links == NULL)
		return;
	snprintf(path, sizeof path, "%s.in", sh->links);
	(void)unlink(path);
	snprintf(path, sizeof path, "%s.out", sh->links);
	(void)unlink(path);
	free(sh->links);
	sh->links = NULL;
}

/* Link PATH.ext to QEMU's descriptor fd; -1 with err. */
static int
semihost_link_one(struct semihost *sh, const char *ext, int fd, char *err,
    size_t errlen)
{
	char path[PATH_MAX + 80], to[32];

	snprintf(path, sizeof path, "%s.%s", sh->links, ext);
	snprintf(to, sizeof to, "/dev/fd/%d", fd);
	(void)unlink(path);
	if (symlink(to, path) == 0)
		return 0;
	snprintf(err, errlen, "symlink %s: %s", path, strerror(errno));
	return -1;
}

/*
 * Link PATH.in and PATH.out to the descriptors QEMU's UART reads and
 * writes: the transport's pipes (4 and 5), or without a transport its
 * terminal (2), as "-serial stdio" had it.
 */
static int
semihost_link(struct semihost *sh, char *err, size_t errlen)
{
	struct session	*s = sh->s;
	int		 fdin = s->l.transport ? PROC_FD_IN : STDERR_FILENO;
	int		 fdout = s->l.transport ? PROC_FD_OUT : STDERR_FILENO;

	xasprintf(&sh->links, "%s/sessions/%lu.uart", dmn.state_dir, s->id);
	if (semihost_link_one(sh, "in", fdin, err, errlen) != 0)
		return -1;
	return semihost_link_one(sh, "out", fdout, err, errlen);
}

/*
 * QEMU's -chardev for the UART: a pipe at the links' PATH, a comma in it
 * doubled as QEMU's option syntax wants; NULL without semihosting.
 */
char *
semihost_uart_chardev(const struct session *s)
{
	const char	*p;
	char		*arg;
	size_t		 n = 0;

	if (s->semihost == NULL || s->semihost->links == NULL)
		return NULL;
	arg = xmalloc(strlen(s->semihost->links) * 2 + 64);
	n = (size_t)sprintf(arg, "pipe,id=dbgctl-uart,path=");
	for (p = s->semihost->links; *p != '\0'; p++) {
		if (*p == ',')
			arg[n++] = ',';
		arg[n++] = *p;
	}
	arg[n] = '\0';
	return arg;
}

/* The daemon's end, for a keeper to hold while no daemon does; -1 if none. */
int
semihost_daemon_fd(const struct session *s)
{
	uv_os_fd_t fd;

	if (s->semihost == NULL || !s->semihost->open ||
	    uv_fileno((const uv_handle_t *)&s->semihost->pipe, &fd) != 0)
		return -1;
	return fd;
}

/* The keeper has QEMU's ends: drop ours, so they are QEMU's alone. */
void
semihost_spawned(struct session *s)
{
	if (s->semihost == NULL || s->semihost->child == -1)
		return;
	close(s->semihost->child);
	close(s->semihost->child_in);
	s->semihost->child = s->semihost->child_in = -1;
}

/* The session runs (a sink): QEMU has opened the UART's links. */
void
semihost_ready(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	if (s->semihost != NULL)
		semihost_unlink(s->semihost);
}

/* Whether the target's last record is an exit by semihosting. */
static bool
semihost_exited(const struct session *s)
{
	const char *by = json_string_value(json_object_get(s->target, "by"));

	return by != NULL && strcmp(by, "semihosting") == 0;
}

/* Both have told of the exit, and the session runs: it ends in order. */
static void
semihost_soon_cb(void *arg)
{
	struct semihost	*sh = arg;
	struct session	*s = sh->s;

	if (s == NULL || !sh->server_gone || !semihost_exited(s) ||
	    s->state != S_RUNNING)
		return;
	timer_stop(sh->wait);
	log_info("session %lu: the firmware exited by semihosting; the "
	    "session stops", s->id);
	session_stop(s, -1);
}

/*
 * A target record or a state (a sink): once QEMU's end and gdb's word
 * are both in and the session runs, it stops, after the event is told.
 */
static void
semihost_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct semihost *sh = k->arg;

	(void)ev;
	if (sh->s == NULL || !sh->server_gone || !semihost_exited(s) ||
	    s->state != S_RUNNING)
		return;
	if (sh->soon == NULL)
		sh->soon = timer_new(semihost_soon_cb, sh);
	timer_start(sh->soon, 0);
}

/*
 * gdb says the program exited (its record, not yet published): with
 * semihosting that is the firmware's SYS_EXIT, which QEMU's gdb stub
 * reports before it exits itself; the record says so, with the code as
 * a number (gdb's exit-code is octal text).
 */
void
semihost_target(struct session *s, json_t *exit)
{
	const char	*reason, *text;
	long		 code = 0;

	if (s->semihost == NULL || s->semihost->s == NULL)
		return;
	reason = json_string_value(json_object_get(exit, "reason"));
	if (reason == NULL || (strcmp(reason, "exited") != 0 &&
	    strcmp(reason, "exited-normally") != 0))
		return;
	if ((text = json_string_value(json_object_get(exit, "exit_code"))) !=
	    NULL)
		code = strtol(text, NULL, 8);
	json_object_set_new(exit, "by", json_string("semihosting"));
	json_object_set_new(exit, "code", json_integer(code));
}

/* QEMU ended and gdb never said the program exited: QEMU's own end. */
static void
semihost_wait_cb(void *arg)
{
	struct semihost *sh = arg;

	if (sh->s == NULL || semihost_exited(sh->s))
		return;
	session_fail(sh->s, RPC_NOT_READY, "QEMU exited with code %d, and "
	    "gdb did not say the firmware exited by semihosting",
	    sh->server_code);
}

/*
 * QEMU exited with code while the session started or ran: with
 * semihosting that is the firmware's exit if gdb says so too, before or
 * within a bound, and the session then ends in order (semihost_event).
 * Whether the exit is semihosting's to judge.
 */
bool
semihost_server_exited(struct session *s, int code)
{
	struct semihost		*sh = s->semihost;
	struct session_event	 ev = { .kind = SE_STATE };

	if (sh == NULL || sh->s == NULL || (s->state != S_RUNNING &&
	    s->state != S_STARTING))
		return false;
	sh->server_gone = true;
	sh->server_code = code;
	if (sh->wait == NULL)
		sh->wait = timer_new(semihost_wait_cb, sh);
	timer_start(sh->wait, SEMIHOST_EXIT_WAIT_MS);
	semihost_event(sh->sink, s, &ev);
	return true;
}

/*
 * Give the session its semihosting console, if the launch asked for one
 * and its kind has one (qemu): the stream and the socket pair; -1 with err.
 */
int
semihost_open(struct session *s, char *err, size_t errlen)
{
	struct semihost *sh;

	if (!semihost_wanted(s) || !(s->backend->flags & BACKEND_SERVER))
		return 0;
	if (session_stream_open(s, "semihost", err, errlen) != 0)
		return -1;
	sh = xcalloc(1, sizeof *sh);
	sh->s = s;
	sh->child = sh->child_in = -1;
	sh->sink = session_sink_add(s, SE_RUNSTATE | SE_STATE, semihost_event,
	    sh);
	s->semihost = sh;
	if (semihost_watch(sh, err, errlen) != 0)
		return -1;
	/* An adopted QEMU has its UART open: links a dead daemon left go. */
	if (dmn.adopting != NULL) {
		xasprintf(&sh->links, "%s/sessions/%lu.uart", dmn.state_dir,
		    s->id);
		semihost_unlink(sh);
		return 0;
	}
	return semihost_link(sh, err, errlen);
}

/*
 * Read what is left once QEMU is gone (its end closed, so EOF comes
 * after the last byte), while the transcript is still open.
 */
static void
semihost_drain(struct semihost *sh)
{
	char	buf[4096];
	ssize_t	n;
	size_t	total = 0;
	int	fd = semihost_daemon_fd(sh->s);

	/* The keeper's copy first: the socket is read once it has ended. */
	if (sh->pump != NULL)
		pump_drain(sh->pump, &total, SEMIHOST_DRAIN_MAX);
	while (fd != -1 && sh->reading && total < SEMIHOST_DRAIN_MAX) {
		n = read(fd, buf, sizeof buf);
		if (n > 0) {
			total += n;
			semihost_add(sh, buf, n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			semihost_eof(sh);
		return;
	}
}

/* The session has ended (a sink): the console's last bytes, then its end. */
void
semihost_ended(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct semihost *sh = s->semihost;

	(void)k;
	(void)ev;
	if (sh == NULL)
		return;
	semihost_drain(sh);
	semihost_eof(sh);
	semihost_unlink(sh);
	s->semihost = NULL;
	semihost_close(sh);
}
