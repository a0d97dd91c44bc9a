/* Attached clients: raw connections that see the console and type into it. */
#include <sys/ioctl.h>

#include <stdlib.h>
#include <string.h>
#include <termios.h>

#include "daemon.h"

/*
 * Put back the modes a debugger may have left off: signals from ^C, output
 * processing, CR to NL on input. Canonical mode and echo stay as they are,
 * since readline turns them off on purpose while it reads a line.
 */
static void
attach_sane(struct session *s)
{
	struct termios	t, was;

	if (s->console.master == -1 || tcgetattr(s->console.master, &t) != 0)
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
	tcsetattr(s->console.master, TCSANOW, &t);
}

/* Make c a viewer of s: it gets the last lines, then everything new. */
void
attach_add(struct session *s, struct conn *c, unsigned long lines)
{
	uint64_t	 off, size = console_size(&s->console);
	char		*buf;
	size_t		 n;

	attach_sane(s);
	s->viewers = reallocarray(s->viewers, s->nviewers + 1,
	    sizeof *s->viewers);
	if (s->viewers == NULL)
		log_fatal("out of memory");
	s->viewers[s->nviewers++] = c;
	c->viewing = s;
	off = console_tail_offset(&s->console, lines);
	/* The replay comes from memory, never more than the ring holds. */
	if (size - off > RING_SIZE)
		off = size - RING_SIZE;
	if (size > off && (buf = malloc(size - off)) != NULL) {
		n = console_read(&s->console, off, buf, size - off);
		conn_send_raw(c, buf, n);
		free(buf);
	}
	log_info("session %lu: a client attached (%zu now)", s->id,
	    s->nviewers);
}

/* Forget a viewer (it detached or its connection closed). */
void
attach_remove(struct conn *c)
{
	struct session	*s = c->viewing;
	size_t		 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nviewers; i++) {
		if (s->viewers[i] != c)
			continue;
		s->viewers[i] = s->viewers[--s->nviewers];
		break;
	}
	c->viewing = NULL;
	log_info("session %lu: a client detached (%zu left)", s->id,
	    s->nviewers);
}

/* New console output: every viewer gets it; one that does not read is dropped. */
void
attach_output(struct session *s, const char *data, size_t len)
{
	struct conn	*c;
	size_t		 i;

	for (i = s->nviewers; i > 0; i--) {
		c = s->viewers[i - 1];
		if (conn_write_queue(c) + len > CONN_WQ_MAX) {
			log_warn("session %lu: dropping an attached client that "
			    "reads nothing", s->id);
			conn_close(c);
			continue;
		}
		conn_send_raw(c, data, len);
	}
}

/* The console ended: viewers get what is queued, then EOF. */
void
attach_end(struct session *s)
{
	size_t i;

	for (i = s->nviewers; i > 0; i--)
		conn_raw_eof(s->viewers[i - 1]);
}

/* A viewer typed: the bytes go to the pty, as at its terminal. */
void
attach_input(struct conn *c, const char *data, size_t len)
{
	struct session *s = c->viewing;

	if (s == NULL || session_ended(s))
		return;
	console_write(&s->console, data, len);
	/* A pty takes input slowly: stop reading a viewer that pastes a lot. */
	if (console_queued(&s->console) > TRANSPORT_MAX)
		conn_pause(c);
}

/* The pty took its input: viewers may type again. */
void
attach_drained(struct session *s)
{
	size_t i;

	if (console_queued(&s->console) > TRANSPORT_MAX / 2)
		return;
	for (i = 0; i < s->nviewers; i++)
		conn_resume(s->viewers[i]);
}

/* Set the pty's window size; redraw forces a SIGWINCH even if it is the same. */
int
attach_resize(struct session *s, unsigned rows, unsigned cols, bool redraw)
{
	struct winsize	ws, old;

	if (s->console.master == -1)
		return -1;
	memset(&ws, 0, sizeof ws);
	ws.ws_row = rows;
	ws.ws_col = cols;
	/* An unchanged size sends no SIGWINCH: step through another one. */
	if (redraw && ioctl(s->console.master, TIOCGWINSZ, &old) == 0 &&
	    old.ws_row == rows && old.ws_col == cols) {
		old.ws_row = rows > 1 ? rows - 1 : rows + 1;
		ioctl(s->console.master, TIOCSWINSZ, &old);
	}
	return ioctl(s->console.master, TIOCSWINSZ, &ws);
}
