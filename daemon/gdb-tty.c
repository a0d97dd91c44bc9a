/*
 * The program's own terminal in a gdb session: a pty of the daemon's that
 * gdb starts the program on (set inferior-tty). gdb hands its console to
 * the program only for a resume typed on that console; one resumed from
 * MI (exec) would be a background group there and stop with SIGTTIN when
 * it read. On a terminal of its own the program is always in front. What
 * it prints joins the console's stream; what is typed reaches it while it
 * runs (session_keyboard).
 */
#include <stdio.h>

#include "daemon.h"
#include "argv.h"
#include "gdb.h"

/* The program printed, or took typed bytes: like the console's own news. */
static void
gdb_tty_cb(void *arg, enum console_event ev, const char *data, size_t len)
{
	struct session		*s = arg;
	struct session_event	 out = { .kind = SE_OUTPUT, .data = data,
				    .len = len };

	switch (ev) {
	case CONSOLE_SPLICED:
		/* Its keeper's pump put them in the console's log already. */
		out.offset = console_spliced_at(s->tty);
		term_feed(&s->modes, data, len);
		session_fire(s, &out);
		return;
	case CONSOLE_OUTPUT:
		out.offset = output_size(&s->output);
		output_add(&s->output, data, len);
		/* The program's modes are the screen's, as gdb's are. */
		term_feed(&s->modes, data, len);
		session_fire(s, &out);
		return;
	case CONSOLE_EOF:
		/* The daemon holds the slave: only a closing pty ends. */
		return;
	case CONSOLE_WRITTEN:
		session_fire(s, &(struct session_event){ .kind = SE_CONSOLE_ROOM });
		return;
	case CONSOLE_SPLICED_ALSO:
		break;
	}
	log_fatal("tty event %d", ev);
}

/*
 * Open the program's terminal. The daemon keeps the slave open, so the pty
 * outlives each run of the program and a new run finds it.
 */
int
gdb_tty_open(struct session *s, char *err, size_t errlen)
{
	if (dmn.adopting != NULL)
		s->tty = gdb_adopt_tty(s, gdb_tty_cb, err, errlen);
	else
		s->tty = console_open(false, gdb_tty_cb, s, err, errlen);
	return s->tty == NULL ? -1 : 0;
}

/* Tell gdb to start the program on its terminal, before any -x runs it. */
void
gdb_tty_args(struct argv *av, struct session *s)
{
	if (s->tty == NULL)
		return;
	argv_push(av, "-ex");
	argv_pushf(av, "set inferior-tty %s", console_pts(s->tty));
}

/*
 * The session ended (SE_ENDING, before its log closes): take what the
 * program printed last, then close.
 */
void
gdb_tty_ended(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	if (s->tty == NULL)
		return;
	console_drain(s->tty);
	console_close(s->tty);
	s->tty = NULL;
}
