/*
 * The MI bridge of dbgctl mi: stdin to a joined channel and the channel to
 * stdout, a line at a time as it comes, with SIGINT turned into the
 * channel's interrupt line between two of the front end's lines; or, when
 * the daemon took stdin and stdout itself, SIGINT alone, on the socket.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* What the daemon takes as the bridge's SIGINT (dbgctl-protocol(7)). */
#define BRIDGE_INTERRUPT	"-dbgctl-interrupt\n"

/* Bytes read from either side at a time. */
#define BRIDGE_CHUNK		65536

/* One bridge: the channel, the signal pipe, what stdin gave not yet sent. */
struct bridge {
	int	 sock;
	bool	 in_eof;		/* stdin ended */
	bool	 shut;			/* the channel's write side is shut */
	bool	 mid_line;		/* the last byte sent ended no line */
	bool	 interrupt;		/* a SIGINT not passed on yet */
	char	 buf[BRIDGE_CHUNK];
	size_t	 len;
	size_t	 off;
};

/*
 * The signal pipe, made before the join so that a SIGINT that comes while
 * it is answered is kept for the channel; the handler reads the write end.
 */
static int bridge_sig_read = -1;
static volatile sig_atomic_t bridge_sig_fd = -1;

/* SIGINT: tell the loop, which writes the interrupt line; signal safe. */
static void
bridge_sigint(int sig)
{
	int	saved = errno;
	ssize_t	n;

	(void)sig;
	/* A full pipe already holds an interrupt for the loop. */
	if (bridge_sig_fd != -1)
		n = write(bridge_sig_fd, "i", 1);
	(void)n;
	errno = saved;
}

/*
 * Catch SIGINT into the signal pipe, from now on, for the bridge to come;
 * a closed stdout is an error then, not death by SIGPIPE.
 */
void
bridge_catch(void)
{
	struct sigaction	sa;
	int			fd[2];

	if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) != 0)
		client_fatal("pipe: %s", strerror(errno));
	bridge_sig_read = fd[0];
	bridge_sig_fd = fd[1];
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = bridge_sigint;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	sigaction(SIGPIPE, &sa, NULL);
}

/* Take what the signal pipe holds: one interrupt however many came. */
static void
bridge_take_signals(struct bridge *b)
{
	char	buf[64];

	while (read(bridge_sig_read, buf, sizeof buf) > 0)
		b->interrupt = true;
}

/*
 * Fill the buffer when it is empty: the interrupt line first, but only
 * between two lines of the front end's, else what stdin has.
 */
static void
bridge_fill(struct bridge *b, bool readable)
{
	ssize_t n;

	if (b->off < b->len || b->shut)
		return;
	b->len = b->off = 0;
	if (b->interrupt && !b->mid_line) {
		memcpy(b->buf, BRIDGE_INTERRUPT, strlen(BRIDGE_INTERRUPT));
		b->len = strlen(BRIDGE_INTERRUPT);
		b->interrupt = false;
		return;
	}
	if (!readable || b->in_eof)
		return;
	n = read(STDIN_FILENO, b->buf, sizeof b->buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		b->in_eof = true;
		return;
	}
	b->len = (size_t)n;
}

/* Send what the buffer holds as far as the channel takes it. */
static void
bridge_send(struct bridge *b)
{
	ssize_t n;

	if (b->off == b->len || b->shut)
		return;
	n = send(b->sock, b->buf + b->off, b->len - b->off, MSG_NOSIGNAL);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		/* The daemon stopped reading: what it still says is read. */
		b->in_eof = b->shut = true;
		b->len = b->off = 0;
		return;
	}
	b->off += (size_t)n;
	b->mid_line = b->buf[b->off - 1] != '\n';
}

/*
 * stdin ended and all it gave is sent: the daemon is told by a half close.
 * An interrupt that can still go goes first; one after a last line cut
 * short cannot, and is dropped.
 */
static void
bridge_shut(struct bridge *b)
{
	if (b->shut || !b->in_eof || b->off < b->len ||
	    (b->interrupt && !b->mid_line))
		return;
	shutdown(b->sock, SHUT_WR);
	b->shut = true;
}

/*
 * Bridge stdin and stdout to the joined channel sock until the daemon
 * closes it (after ^exit, after stdin's end, or with the session); the
 * exit status. bridge_catch has been called, before the join.
 */
int
bridge_run(int sock)
{
	static struct bridge	b;
	struct pollfd		pfd[3];

	memset(&b, 0, sizeof b);
	b.sock = sock;
	/* A SIGINT during the join is the channel's first line. */
	bridge_take_signals(&b);
	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	for (;;) {
		bridge_fill(&b, false);
		bridge_send(&b);
		bridge_shut(&b);
		pfd[0].fd = !b.in_eof && b.off == b.len ? STDIN_FILENO : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = sock;
		pfd[1].events = POLLIN | (b.off < b.len ? POLLOUT : 0);
		pfd[2].fd = bridge_sig_read;
		pfd[2].events = POLLIN;
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			client_fatal("poll: %s", strerror(errno));
		}
		if (pfd[2].revents != 0)
			bridge_take_signals(&b);
		if (pfd[0].revents != 0)
			bridge_fill(&b, true);
		if ((pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !pump_down(sock, false, NULL))
			return EXIT_OK;
	}
}

/*
 * The daemon reads stdin and writes stdout itself (mi's stdio): let go of
 * them, send each SIGINT on the socket as an interrupt line, and wait for
 * the daemon to close it; the exit status. bridge_catch has been called.
 */
int
bridge_handed(int sock)
{
	static struct bridge	b;
	struct pollfd		pfd[2];
	char			buf[256];
	ssize_t			n;

	handover_release();
	memset(&b, 0, sizeof b);
	b.sock = sock;
	for (;;) {
		bridge_take_signals(&b);
		if (b.interrupt) {
			n = send(sock, BRIDGE_INTERRUPT,
			    strlen(BRIDGE_INTERRUPT), MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			/* The daemon closed it: the join is over. */
			if (n < 0)
				return EXIT_OK;
			b.interrupt = false;
		}
		pfd[0].fd = sock;
		pfd[0].events = POLLIN;
		pfd[1].fd = bridge_sig_read;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			client_fatal("poll: %s", strerror(errno));
		}
		if (pfd[0].revents == 0)
			continue;
		if ((n = read(sock, buf, sizeof buf)) == 0 ||
		    (n < 0 && errno != EINTR && errno != EAGAIN))
			return EXIT_OK;
	}
}
