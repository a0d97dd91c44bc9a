/* Attached clients: raw connections that see the console and type into it. */
#include <sys/ioctl.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>

#include "daemon.h"
#include "attach.h"
#include "conn.h"
#include "signame.h"

static void	attach_resume(struct session *);

/* One attached client. */
struct attach {
	struct conn	*c;
	struct session	*s;
	struct sink	*sink;
	bool		 server;	/* types into the server's terminal */
	unsigned	 rows;		/* its terminal's size, 0 until sent */
	unsigned	 cols;
	LIST_ENTRY(attach) entry;	/* in s->attached, the latest first */
};

/*
 * The session's window follows tmux's window-size latest: it has the size
 * of the attached client used last (attached, resized or typed) that has
 * sent one, and goes back to the one used before when that client leaves.
 * a (NULL when one left) is the one used now; with redraw, the program
 * redraws even at the same size.
 */
static void
attach_latest(struct session *s, struct attach *a, bool redraw)
{
	struct attach	*v;

	if (a != NULL && LIST_FIRST(&s->attached) != a) {
		LIST_REMOVE(a, entry);
		LIST_INSERT_HEAD(&s->attached, a, entry);
	}
	LIST_FOREACH(v, &s->attached, entry)
		if (v->rows != 0)
			break;
	if (v != NULL && !session_ended(s))
		attach_resize(s, v->rows, v->cols, redraw && v == a);
}

/* Where a viewer's typing goes: the server's terminal, or as at the console. */
static struct console *
attach_keys(const struct attach *a)
{
	if (a->server)
		return session_console_of(a->s, "server");
	return session_keyboard(a->s);
}

/*
 * Put back the modes a debugger may have left off: signals from ^C, output
 * processing, CR to NL on input. Canonical mode and echo stay as they are,
 * since readline turns them off on purpose while it reads a line.
 */
static void
attach_sane(struct session *s)
{
	struct console	*con = session_console(s);
	struct termios	 t, was;

	/* tcgetattr leaves the struct's padding alone; memcmp reads it. */
	memset(&t, 0, sizeof t);
	if (con == NULL || tcgetattr(console_master(con), &t) != 0)
		return;
	was = t;
	t.c_iflag |= ICRNL;
	t.c_iflag &= ~(INLCR | IGNCR | ISTRIP);
	t.c_oflag |= OPOST | ONLCR;
	t.c_lflag |= ISIG;
	if (t.c_cc[VINTR] == _POSIX_VDISABLE)
		t.c_cc[VINTR] = 0x03;
	if (memcmp(&was, &t, sizeof t) == 0)
		return;
	log_info("session %lu: restoring sane pty modes for an attach", s->id);
	tcsetattr(console_master(con), TCSANOW, &t);
}

/* New output, the end, or room in the console: the viewer hears of it. */
static void
attach_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct attach	*a = k->arg;
	struct console	*con = attach_keys(a);

	switch (ev->kind) {
	case SE_OUTPUT:
		/* A viewer that reads nothing is dropped, not buffered for. */
		if (conn_queued(a->c) + ev->len > CONN_WQ_MAX) {
			log_warn("session %lu: dropping an attached client "
			    "that reads nothing", s->id);
			conn_drop(a->c);
			return;
		}
		conn_send_raw(a->c, ev->data, ev->len);
		return;
	case SE_STATE:
		/* The console ended: the viewer gets what is queued, then EOF. */
		if (session_ended(s))
			conn_finish(a->c);
		return;
	case SE_CONSOLE_ROOM:
		if (con != NULL && flow_room(console_queued(con),
		    CONSOLE_INPUT_MAX))
			conn_resume(a->c);
		return;
	default:
		return;
	}
}

/* The viewer typed: the bytes go to the pty, as at its terminal. */
static size_t
attach_input(struct conn *c, const char *data, size_t len)
{
	struct attach	*a = c->mode_data;
	struct console	*con = attach_keys(a);

	if (con == NULL || session_ended(a->s))
		return len;
	/* Any key resumes a suspended session; it is not typed into it. */
	if (a->s->suspended != 0) {
		attach_resume(a->s);
		return len;
	}
	/* The one typing is the latest: its size, if it is not already. */
	if (LIST_FIRST(&a->s->attached) != a)
		attach_latest(a->s, a, false);
	console_write(con, data, len);
	/* A pty takes input slowly: stop reading a viewer that pastes a lot. */
	if (flow_full(console_queued(con), CONSOLE_INPUT_MAX))
		conn_pause(c);
	return len;
}

/* A viewer that stops sending has detached. */
static void
attach_eof(struct conn *c)
{
	conn_finish(c);
}

/* Forget a viewer (it detached or its connection closed). */
static void
attach_close(struct conn *c)
{
	struct attach *a = c->mode_data;

	a->s->viewers--;
	log_info("session %lu: a client detached", a->s->id);
	/* The size goes back to the client used before this one. */
	LIST_REMOVE(a, entry);
	attach_latest(a->s, NULL, false);
	/* The sink may hold the last reference: the session goes with it. */
	session_sink_remove(a->sink);
	free(a);
}

static const struct conn_mode attach_mode = {
	.name = "attach",
	.raw = true,
	.input = attach_input,
	.eof = attach_eof,
	.close = attach_close,
};

/* Make c a viewer of s: it gets the last lines, then everything new. */
void
attach_start(struct conn *c, struct session *s, unsigned long lines)
{
	struct attach	*a = xcalloc(1, sizeof *a);
	uint64_t	 off, size = output_size(&s->output);
	char		*buf, modes[TERM_SEQ_MAX];
	size_t		 n;

	attach_sane(s);
	a->c = c;
	a->s = s;
	s->viewers++;
	/* The latest to attach; its size is the session's once it sends one. */
	LIST_INSERT_HEAD(&s->attached, a, entry);
	conn_set_mode(c, &attach_mode, a);
	a->sink = session_sink_add(s, SE_OUTPUT | SE_STATE | SE_CONSOLE_ROOM,
	    attach_event, a);
	/*
	 * First the modes the console's output set, however long ago (the
	 * alternate screen, a hidden cursor, keypad keys): the terminal is
	 * then the one the program drew on, and the client, which reads
	 * them too, knows what to undo when it lets go.
	 */
	if ((n = term_write_set(&s->modes, modes, sizeof modes)) > 0)
		conn_send_raw(c, modes, n);
	/* The replay comes from memory: never look back past the ring. */
	off = output_lines_tail(&s->output, lines, OUTPUT_RING_SIZE);
	if (size > off) {
		buf = xmalloc(size - off);
		n = output_read(&s->output, off, buf, size - off);
		conn_send_raw(c, buf, n);
		free(buf);
	}
	log_info("session %lu: a client attached", s->id);
}

/* An attached viewer types into the session's server, not its console. */
void
attach_server(struct conn *c)
{
	struct attach *a = c->mode_data;

	a->server = true;
	log_info("session %lu: the client types into the server", a->s->id);
}

/*
 * The client attached on the connection of serial viewer has a terminal
 * of rows x cols: it is the latest, and the session takes its size. 0,
 * or -1 if no such client is attached to s.
 */
int
attach_viewer_resize(struct session *s, uint64_t viewer, unsigned rows,
    unsigned cols, bool redraw)
{
	struct attach	*a;

	LIST_FOREACH(a, &s->attached, entry)
		if (a->c->serial == viewer)
			break;
	if (a == NULL)
		return -1;
	a->rows = rows;
	a->cols = cols;
	attach_latest(s, a, redraw);
	return 0;
}

/* Give one more of the session's terminals the viewer's size. */
static void
attach_resize_other(struct console *con, const struct winsize *ws)
{
	if (con != NULL)
		ioctl(console_master(con), TIOCSWINSZ, ws);
}

/* Set the pty's window size; redraw forces a SIGWINCH even if it is the same. */
int
attach_resize(struct session *s, unsigned rows, unsigned cols, bool redraw)
{
	struct console	*con = session_console(s);
	struct winsize	 ws, old;

	if (con == NULL)
		return -1;
	memset(&ws, 0, sizeof ws);
	ws.ws_row = rows;
	ws.ws_col = cols;
	/* An unchanged size sends no SIGWINCH: step through another one. */
	if (redraw && ioctl(console_master(con), TIOCGWINSZ, &old) == 0 &&
	    old.ws_row == rows && old.ws_col == cols) {
		old.ws_row = rows > 1 ? rows - 1 : rows + 1;
		ioctl(console_master(con), TIOCSWINSZ, &old);
	}
	/* The program's and the server's terminals show on the same screen. */
	attach_resize_other(s->tty, &ws);
	attach_resize_other(session_console_of(s, "server"), &ws);
	return ioctl(console_master(con), TIOCSWINSZ, &ws);
}

/* The suspension of s as the protocol gives it, or NULL if none. */
json_t *
attach_suspended_json(const struct session *s)
{
	const char	*name = signame_name(s->suspended);
	char		 full[32];

	if (s->suspended == 0)
		return NULL;
	snprintf(full, sizeof full, "SIG%s", name != NULL ? name : "?");
	return json_pack("{s:i, s:s}", "signal", s->suspended, "name", full);
}

/*
 * The session's main process was stopped by sig (^Z at its console,
 * SIGSTOP) or continued (0). Nothing in the session resumes it, as a
 * shell would: say so in the console, the status and a notification.
 */
static void
attach_suspended(struct session *s, int sig)
{
	const char	*name = signame_name(sig);
	char		*text;

	if (s->suspended == sig || session_ended(s))
		return;
	s->suspended = sig;
	if (sig != 0)
		xasprintf(&text, "session %lu suspended (SIG%s): press a key "
		    "here, or run dbgctl signal %lu CONT, to resume it", s->id,
		    name != NULL ? name : "?", s->id);
	else
		xasprintf(&text, "session %lu resumed", s->id);
	log_info("%s", text);
	session_note(s, text);
	free(text);
	session_fire(s, &(struct session_event){ .kind = SE_STATE });
}

/* A stop was asked (SE_STOP): a suspended debugger cannot quit, continue it. */
void
attach_stop(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	attach_resume(s);
}

/* The main process was stopped or continued (SE_SUSPENDED): say so. */
void
attach_stopped(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	attach_suspended(s, ev->sig);
}

/* Continue a suspended session's main process group, as SIGCONT would. */
static void
attach_resume(struct session *s)
{
	struct proc	*main = s->procs[0].proc;

	if (s->suspended == 0 || main == NULL || proc_pid(main) <= 0 ||
	    proc_exit(main, NULL, NULL))
		return;
	/* The keeper made it a group's leader; it may have left the group. */
	if (kill(-proc_pid(main), SIGCONT) != 0)
		(void)kill(proc_pid(main), SIGCONT);
	attach_suspended(s, 0);
}
