/* The user's terminal while attached: raw mode, and restored on every path. */
#include <sys/ioctl.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "dbgctl.h"
#include "term.h"

/* Which of a pair of sequences: what undoes the modes, what sets them. */
enum { TTY_RESET, TTY_SET };

/*
 * Signal handlers must reach the saved modes, so they live here, written
 * only before the handlers are installed and read by async-signal-safe code.
 * The escape sequences are made by the main loop into the pair a handler
 * does not read, then switched to with one store.
 */
static struct {
	struct termios		saved;
	struct termios		raw;	/* made before any handler needs it */
	volatile sig_atomic_t	fd;	/* the terminal, -1 when not raw */
	int		notify;		/* write end of the event pipe */
	volatile sig_atomic_t	out;	/* the console's terminal, or -1 */
	char			seq[2][2][TERM_SEQ_MAX];
	size_t			seqlen[2][2];
	volatile sig_atomic_t	cur;	/* the pair handlers read */
	struct term		shown;	/* what the pair cur was made from */
} tty = { .fd = -1, .notify = -1, .out = -1 };

/* Write one sequence of the current pair to the terminal; signal safe. */
static void
tty_seq(int which)
{
	const char	*p = tty.seq[tty.cur][which];
	size_t		 len = tty.seqlen[tty.cur][which];
	ssize_t		 n;
	int		 fd = tty.out, saved = errno;

	while (fd != -1 && len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		len -= (size_t)n;
	}
	errno = saved;
}

/*
 * The modes the console's output has set now are t: make the sequences
 * that undo them and set them again (for a stop and continue).
 */
void
tty_modes(const struct term *t)
{
	int	next = !tty.cur;

	if (term_write_same(t, &tty.shown))
		return;
	tty.seqlen[next][TTY_RESET] = term_write_reset(t,
	    tty.seq[next][TTY_RESET], TERM_SEQ_MAX);
	tty.seqlen[next][TTY_SET] = term_write_set(t, tty.seq[next][TTY_SET],
	    TERM_SEQ_MAX);
	tty.shown = *t;
	tty.cur = next;
}

/*
 * The console's output goes to fd: where it is a terminal, the modes the
 * output sets there are undone on every way out.
 */
void
tty_output(int fd)
{
	tty.out = isatty(fd) ? fd : -1;
}

static const int tty_fatal[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGSEGV,
    SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS };

/*
 * Undo the modes the console's output set and put the saved termios
 * back; safe inside a signal handler.
 */
void
tty_restore(void)
{
	tty_seq(TTY_RESET);
	if (tty.fd != -1)
		tcsetattr(tty.fd, TCSADRAIN, &tty.saved);
}

/* Raw mode; safe inside a signal handler. */
static void
tty_enter_raw(void)
{
	tcsetattr(tty.fd, TCSADRAIN, &tty.raw);
}

/* Tell the main loop about an event without doing its work here. */
static void
tty_notify(char what)
{
	int	saved = errno;
	ssize_t	n;

	/* A full pipe already holds an event for the loop: nothing is lost. */
	if (tty.notify != -1)
		n = write(tty.notify, &what, 1);
	(void)n;
	errno = saved;
}

/* Restore the terminal, then die of the same signal as if never caught. */
static void
tty_fatal_handler(int sig)
{
	tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ^Z from outside: restore, stop; raw again with a redraw when continued. */
static void
tty_stop_handler(int sig)
{
	(void)sig;
	tty_restore();
	/*
	 * SIGSTOP, not a re-raised SIGTSTP: that one would stay blocked in
	 * this handler, and is discarded in an orphaned process group.
	 */
	raise(SIGSTOP);
	/* Here only once continued: the program's modes again, and raw. */
	tty_seq(TTY_SET);
	if (tty.fd != -1)
		tty_enter_raw();
	tty_notify('c');
}

/* The window changed: the main loop sends the new size. */
static void
tty_winch_handler(int sig)
{
	(void)sig;
	tty_notify('w');
}

/* Install the handlers; events reach the main loop through notify. */
static void
tty_handlers(int notify)
{
	struct sigaction	sa;
	size_t			i;

	tty.notify = notify;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = tty_fatal_handler;
	for (i = 0; i < sizeof tty_fatal / sizeof *tty_fatal; i++)
		sigaction(tty_fatal[i], &sa, NULL);
	sa.sa_handler = tty_stop_handler;
	sigaction(SIGTSTP, &sa, NULL);
	sa.sa_handler = tty_winch_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* Save fd's modes, catch the signals that must restore them, go raw. */
int
tty_raw(int fd, int notify)
{
	if (tcgetattr(fd, &tty.saved) != 0)
		return -1;
	tty.raw = tty.saved;
	cfmakeraw(&tty.raw);
	tty.raw.c_cc[VMIN] = 1;
	tty.raw.c_cc[VTIME] = 0;
	tty.fd = fd;
	tty_handlers(notify);
	/* client_fatal and every other exit() restore it too. */
	atexit(tty_restore);
	tty_enter_raw();
	return 0;
}

/* Watch the signals without a terminal to restore (no tty on stdin). */
void
tty_plain(int notify)
{
	tty_handlers(notify);
	/* The output's modes are still undone at exit(), as in raw mode. */
	atexit(tty_restore);
}

/* Leave raw mode for good, undoing the modes the output set. */
void
tty_leave(void)
{
	int fd = tty.fd;

	/* fd first: a ^Z handler running now must not go raw again. */
	tty.fd = -1;
	tty_seq(TTY_RESET);
	tty.out = -1;
	if (fd != -1)
		tcsetattr(fd, TCSADRAIN, &tty.saved);
}

/* The terminal's size; 0 if fd is not a terminal. */
int
tty_size(int fd, unsigned *rows, unsigned *cols)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 ||
	    ws.ws_col == 0)
		return -1;
	*rows = ws.ws_row;
	*cols = ws.ws_col;
	return 0;
}
