/*
 * The two copies of dbgctl pipe: stdin to the raw socket and the socket to
 * stdout. Where stdin or stdout is a pipe, splice(2) moves the pages
 * without passing them through this process; elsewhere read and write do.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* Bytes one splice or read moves at most. */
#define PUMP_CHUNK (1024 * 1024)
/* The buffer of the upward copy where it cannot splice. */
#define PUMP_BUF (256 * 1024)

/* The upward direction: stdin to the socket. */
struct pump_up {
	bool	 splice;	/* stdin is a pipe */
	bool	 eof;		/* stdin ended, or the daemon stopped taking */
	bool	 shut;		/* the socket's write side is shut */
	bool	 wait_out;	/* stdin has bytes the socket had no room for */
	char	*buf;		/* home, or what is sent again first */
	char	*home;
	size_t	 len;
	size_t	 off;
	struct pump_resume *r;	/* keeps what is read, or NULL */
};

/* Whether fd is a pipe (splice needs one end to be). */
static bool
pump_is_pipe(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* The bytes waiting in the pipe fd, 0 if none or unknown. */
static int
pump_pending(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 ? n : 0;
}

/*
 * Ask for a pipe of PUMP_CHUNK on fd where it is a smaller pipe: each
 * splice then moves up to that much, and the program at its other end is
 * woken a sixteenth as often. The pipe is the caller's: one already as
 * large is never made smaller, and where the kernel refuses (the user's
 * pipe pages are used up, or PUMP_CHUNK is past pipe-max-size) it stays
 * as it is.
 */
static void
pump_widen(int fd, bool pipe)
{
	int size = pipe ? fcntl(fd, F_GETPIPE_SZ) : -1;

	if (size != -1 && size < PUMP_CHUNK)
		(void)fcntl(fd, F_SETPIPE_SZ, PUMP_CHUNK);
}

/* A write to the daemon failed: stop sending, but read what it still has. */
static void
pump_up_refused(struct pump_up *u, int error)
{
	if (error != EPIPE && error != ECONNRESET)
		client_fatal("lost connection to the daemon: %s",
		    strerror(error));
	/* What was read is kept, for the next daemon if this one died. */
	u->eof = u->shut = true;
	u->len = u->off = 0;
}

/* Splice what stdin has into the socket. */
static void
pump_up_splice(struct pump_up *u, int sock)
{
	ssize_t n;

	n = splice(STDIN_FILENO, NULL, sock, NULL, PUMP_CHUNK,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	u->wait_out = false;
	if (n == 0)
		u->eof = true;
	else if (n < 0 && errno == EAGAIN)
		/* Either side may say so: the pipe tells whether it has bytes. */
		u->wait_out = pump_pending(STDIN_FILENO) > 0;
	else if (n < 0 && errno != EINTR)
		pump_up_refused(u, errno);
}

/* Read stdin into the buffer, then send what the socket takes. */
static void
pump_up_copy(struct pump_up *u, int sock, bool readable)
{
	size_t	room = PUMP_BUF;
	ssize_t	n;

	/* What was sent again after a restart is out: back to stdin. */
	if (u->len == u->off)
		u->buf = u->r != NULL ? pump_keep_room(u->r, PUMP_BUF, &room) :
		    u->home;
	if (readable && u->len == u->off) {
		n = read(STDIN_FILENO, u->buf, room);
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			client_fatal("read: stdin: %s", strerror(errno));
		if (n == 0) {
			u->eof = true;
			if (u->r != NULL)
				u->r->in_ended = true;
		}
		if (n > 0) {
			u->len = (size_t)n;
			u->off = 0;
			if (u->r != NULL)
				pump_keep_add(u->r, (size_t)n);
		}
	}
	if (u->len == u->off)
		return;
	n = send(sock, u->buf + u->off, u->len - u->off, MSG_NOSIGNAL);
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		pump_up_refused(u, errno);
		return;
	}
	if (n > 0)
		u->off += (size_t)n;
	if (u->off == u->len)
		u->len = u->off = 0;
	u->wait_out = u->len > u->off;
}

/*
 * Move what the socket has to stdout, counted into *moved (if not NULL);
 * 0 once the daemon has closed.
 */
int
pump_down(int sock, int splice_out, uint64_t *moved)
{
	static char	buf[PUMP_CHUNK];
	ssize_t		n;

	if (splice_out)
		n = splice(sock, NULL, STDOUT_FILENO, NULL, PUMP_CHUNK,
		    SPLICE_F_MOVE);
	else
		n = read(sock, buf, sizeof buf);
	/*
	 * A stdout someone made non-blocking may be full: wait for room, or
	 * the socket's POLLIN would wake the loop again at once.
	 */
	if (n < 0 && errno == EAGAIN && splice_out)
		(void)poll(&(struct pollfd){ STDOUT_FILENO, POLLOUT, 0 }, 1, -1);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n < 0 && errno == ECONNRESET)
		return false;
	if (n < 0)
		client_fatal(splice_out ? "splice to stdout: %s" :
		    "lost connection to the daemon: %s", strerror(errno));
	if (n == 0)
		return false;
	if (!splice_out && cmd_write_all(STDOUT_FILENO, buf, (size_t)n) != 0)
		cmd_stdout_failed();
	if (moved != NULL)
		*moved += (uint64_t)n;
	return true;
}

/*
 * Copy both ways between stdin/stdout and the raw socket until the
 * target's output ends; stdin's end is passed on as a half close. With
 * out_ends, stdout's reader going away (dial-stdio: the ssh connection
 * closed) ends the copy too, and so closes the socket altogether. With
 * r, what is read is kept and what comes counted, to go on after a
 * restart (pump-keep.c): stdin is then read, not spliced, as a splice
 * leaves no copy to send again; r's bytes to send again go first.
 */
int
pump_run(int sock, int out_ends, struct pump_resume *r)
{
	static char	upbuf[PUMP_BUF];
	struct pump_up	u = { .buf = upbuf, .home = upbuf, .r = r };
	struct pollfd	pfd[3];
	bool		splice_out = pump_is_pipe(STDOUT_FILENO);

	u.splice = r == NULL && pump_is_pipe(STDIN_FILENO);
	if (r != NULL && r->again_len > 0) {
		u.buf = r->again;
		u.len = r->again_len;
		u.wait_out = true;
	}
	u.eof = r != NULL && r->in_ended;
	/* Read or spliced, a larger pipe wakes its writer less often. */
	pump_widen(STDIN_FILENO, pump_is_pipe(STDIN_FILENO));
	pump_widen(STDOUT_FILENO, splice_out);
	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	for (;;) {
		if (u.eof && u.len == u.off && !u.shut) {
			shutdown(sock, SHUT_WR);
			u.shut = true;
		}
		/* Wait for stdin, or for room when it has bytes already. */
		pfd[0].fd = !u.eof && !u.wait_out ? STDIN_FILENO : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = sock;
		pfd[1].events = POLLIN | (u.wait_out ? POLLOUT : 0);
		/* A pipe whose reader is gone polls POLLERR, asked or not. */
		pfd[2].fd = out_ends ? STDOUT_FILENO : -1;
		pfd[2].events = 0;
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			client_fatal("poll: %s", strerror(errno));
		}
		/* After stdin's end, what is sent again still goes. */
		if ((!u.eof || u.len > u.off) && (pfd[0].revents != 0 ||
		    (pfd[1].revents & POLLOUT))) {
			if (u.splice)
				pump_up_splice(&u, sock);
			else
				pump_up_copy(&u, sock, pfd[0].revents != 0);
		}
		if ((pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !pump_down(sock, splice_out, r != NULL ? &r->out : NULL))
			return EXIT_OK;
		if (pfd[2].revents & (POLLERR | POLLHUP))
			return EXIT_OK;
	}
}
