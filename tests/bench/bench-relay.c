/*
 * The floor of a relay: the least a program can do to give a client what
 * `write` and `expect` give it, written by hand. A forked process of the
 * bench that serves one client on a socketpair, runs `cat` (or a target
 * of the caller's: the board's QEMU) on pipes,
 * writes every byte each way to a transcript file before anything is
 * answered about it, answers a write once its bytes are in the pipe, and
 * an expect of a literal once it is found in the output, with a reply of
 * the daemon's size, fields and JSON; an epoll loop, nonblocking
 * descriptors, one write a reply, no allocation a request. What dbgctld
 * adds above it is the daemon's own cost; what is left is the relay's.
 */
#include "bench.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The most bytes of a request line, of a literal, and of the output window. */
#define RELAY_LINE	4096
#define RELAY_LIT	256
#define RELAY_WIN	65536

/* The relay's state: its client, cat's pipes, the transcripts, what waits. */
struct relay_state {
	int		 sock, to, from;
	int		 log_in, log_out;
	uint64_t	 in_off;		/* bytes written to cat so far */
	uint64_t	 base;			/* the window's first offset */
	char		 win[RELAY_WIN];
	size_t		 wlen;
	char		 line[RELAY_LINE];
	size_t		 llen;
	long		 expect_id;		/* 0: no expect waits */
	uint64_t	 expect_from;
	char		 lit[RELAY_LIT];
	size_t		 litlen;
	char		 out[4 * RELAY_LIT + 512];
};

/* Append len bytes to a transcript at off, as the daemon's log does. */
static void
relay_log(int fd, const char *buf, size_t len, uint64_t off)
{
	if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
		_exit(3);
}

/* The integer after key in line, or -1. */
static long long
relay_int(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p != NULL ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* JSON-escape len bytes of s into out (room 6x); how many it wrote. */
static size_t
relay_escape(const char *s, size_t len, char *out)
{
	size_t	n = 0, i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else if (c == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else if (c < 0x20)
			n += (size_t)sprintf(out + n, "\\u%04x", c);
		else
			out[n++] = (char)c;
	}
	return n;
}

/* The literal of an expect, its escapes undone; false if it is too long. */
static bool
relay_literal(struct relay_state *st, const char *line)
{
	const char	*p = strstr(line, "\"exact\":\"");
	size_t		 n = 0;

	if (p == NULL)
		return false;
	for (p += 9; *p != '"' && *p != '\0' && n < RELAY_LIT; p++) {
		if (*p == '\\' && p[1] != '\0')
			p++, st->lit[n++] = *p == 'n' ? '\n' : *p;
		else
			st->lit[n++] = *p;
	}
	st->litlen = n;
	return *p == '"';
}

/* Answer the waiting expect if the window has its literal from its start. */
static int
relay_match(struct relay_state *st)
{
	char		*at, *o = st->out;
	uint64_t	 off, end, from = st->expect_from;
	size_t		 skip, n;

	if (st->expect_id == 0 || from < st->base)
		return 0;
	skip = (size_t)(from - st->base);
	if (skip > st->wlen || (at = memmem(st->win + skip, st->wlen - skip,
	    st->lit, st->litlen)) == NULL)
		return 0;
	off = st->base + (uint64_t)(at - st->win);
	end = off + st->litlen;
	n = (size_t)sprintf(o, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{"
	    "\"stream\":\"target\",\"index\":0,\"from\":%llu,\"offset\":%llu,"
	    "\"end\":%llu,\"text\":\"", st->expect_id,
	    (unsigned long long)from, (unsigned long long)off,
	    (unsigned long long)end);
	n += relay_escape(at, st->litlen, o + n);
	n += (size_t)sprintf(o + n, "\",\"groups\":[],\"spans\":[],\"named\":"
	    "{},\"next\":%llu,\"before\":\"", (unsigned long long)end);
	n += relay_escape(st->win + skip, (size_t)(at - st->win) - skip, o + n);
	n += (size_t)sprintf(o + n, "\",\"before_offset\":%llu}}\n",
	    (unsigned long long)from);
	st->expect_id = 0;
	/* What the match passed is never looked at again. */
	st->wlen -= (size_t)(end - st->base);
	memmove(st->win, st->win + (end - st->base), st->wlen);
	st->base = end;
	return proc_write_all(st->sock, o, n);
}

/* A write request: its bytes to cat and its transcript, then the answer. */
static int
relay_do_write(struct relay_state *st, const char *line, long id)
{
	unsigned char	 data[RELAY_LINE];
	char		 reply[128], *p, *q;
	size_t		 len;
	int		 n;

	if ((p = strstr(line, "\"data\":\"")) == NULL ||
	    (q = strchr(p + 8, '"')) == NULL)
		return -1;
	*q = '\0';
	len = b64_decode(p + 8, data);
	if (proc_write_all(st->to, (char *)data, len) == -1)
		return -1;
	relay_log(st->log_in, (char *)data, len, st->in_off);
	st->in_off += len;
	n = snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"result\":{\"written\":%zu}}\n", id, len);
	return proc_write_all(st->sock, reply, (size_t)n);
}

/* One request line: a write or an expect of a literal from an offset. */
static int
relay_request(struct relay_state *st, char *line)
{
	long id = (long)relay_int(line, "\"id\":");

	if (strstr(line, "\"method\":\"write\"") != NULL)
		return relay_do_write(st, line, id);
	if (strstr(line, "\"method\":\"expect\"") == NULL ||
	    !relay_literal(st, line))
		return -1;
	st->expect_id = id;
	st->expect_from = (uint64_t)relay_int(line, "\"from\":");
	return relay_match(st);
}

/* The client sent bytes: run every whole line; -1 at its end. */
static int
relay_client(struct relay_state *st)
{
	char	*nl;
	ssize_t	 n;
	size_t	 used;

	n = read(st->sock, st->line + st->llen, sizeof st->line - 1 - st->llen);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	st->llen += (size_t)n;
	st->line[st->llen] = '\0';
	while ((nl = memchr(st->line, '\n', st->llen)) != NULL) {
		*nl = '\0';
		if (relay_request(st, st->line) == -1)
			return -1;
		used = (size_t)(nl + 1 - st->line);
		memmove(st->line, nl + 1, st->llen - used + 1);
		st->llen -= used;
	}
	return 0;
}

/* cat wrote: into the transcript first, then the window, then the match. */
static int
relay_output(struct relay_state *st)
{
	ssize_t n;

	if (st->wlen == sizeof st->win)
		st->wlen = 0, st->base += sizeof st->win;
	n = read(st->from, st->win + st->wlen, sizeof st->win - st->wlen);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	relay_log(st->log_out, st->win + st->wlen, (size_t)n, st->base +
	    st->wlen);
	st->wlen += (size_t)n;
	return relay_match(st);
}

/* The relay's loop, in the forked child; it ends when the client goes. */
static void
relay_main(struct relay_state *st)
{
	struct epoll_event	ev[2];
	int			ep, i, n;

	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		_exit(2);
	ev[0] = (struct epoll_event){ .events = EPOLLIN, .data.fd = st->sock };
	ev[1] = (struct epoll_event){ .events = EPOLLIN, .data.fd = st->from };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, st->sock, &ev[0]) == -1 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, st->from, &ev[1]) == -1)
		_exit(2);
	for (;;) {
		if ((n = epoll_wait(ep, ev, 2, -1)) == -1 && errno == EINTR)
			continue;
		for (i = 0; i < n; i++)
			if ((ev[i].data.fd == st->sock ? relay_client(st) :
			    relay_output(st)) == -1)
				return;
	}
}

/* A transcript file of the relay's in dir; exits the child if it fails. */
static int
relay_open_log(const char *dir, const char *name)
{
	char	path[PATH_MAX];
	int	fd;

	snprintf(path, sizeof path, "%s/relay.%s.log", dir, name);
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		_exit(2);
	return fd;
}

/* Serve the client on sock with target's pipes, in the forked child. */
static void
relay_child(const char *dir, int sock, int to, int from)
{
	static struct relay_state st;

	memset(&st, 0, sizeof st);
	st.sock = sock;
	st.to = to;
	st.from = from;
	st.log_in = relay_open_log(dir, "target-in");
	st.log_out = relay_open_log(dir, "target");
	(void)fcntl(st.sock, F_SETFL, O_NONBLOCK);
	(void)fcntl(st.to, F_SETFL, O_NONBLOCK);
	(void)fcntl(st.from, F_SETFL, O_NONBLOCK);
	relay_main(&st);
	close(st.to);
	close(st.from);
}

/*
 * Fork the relay for a target on the pipes to and from (closed here);
 * *sock is the client's end. The relay's pid, or -1.
 */
static pid_t
relay_fork(const char *dir, int to, int from, int *sock)
{
	pid_t	pid;
	int	sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		relay_child(dir, sv[1], to, from);
		_exit(0);
	}
	close(sv[1]);
	close(to);
	close(from);
	*sock = sv[0];
	return pid;
}

/*
 * Start the relay in dir (its transcripts go there) with its cat; *sock
 * is the client's end. The relay's pid, or -1.
 */
pid_t
relay_start(const char *dir, int *sock)
{
	const char	*argv[] = { "cat", NULL };
	pid_t		 pid, cat;
	int		 sv[2], to, from;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid > 0) {
		close(sv[1]);
		*sock = sv[0];
		return pid;
	}
	close(sv[0]);
	if ((cat = proc_spawn_piped(argv, &to, &from)) <= 0)
		_exit(2);
	relay_child(dir, sv[1], to, from);
	(void)proc_wait(cat, 10000);
	_exit(0);
}

/*
 * Start the relay in dir for a target of ours, argv on pipes, which the
 * caller ends (it may be stopped and continued); *sock is the client's
 * end, *target the target's pid. The relay's pid, or -1, the target
 * ended then.
 */
pid_t
relay_start_target(const char *dir, const char *const argv[], int *sock,
    pid_t *target)
{
	pid_t	pid;
	int	to, from;

	if ((*target = proc_spawn_piped(argv, &to, &from)) <= 0)
		return -1;
	if ((pid = relay_fork(dir, to, from, sock)) == -1) {
		close(to);
		close(from);
		kill(*target, SIGKILL);
		proc_wait(*target, -1);
		*target = -1;
	}
	return pid;
}

/* End the relay: its client's end closed, it ends its cat and exits. */
void
relay_stop(pid_t pid, int sock)
{
	close(sock);
	if (pid > 0 && proc_wait(pid, 10000) == -1) {
		kill(pid, SIGKILL);
		proc_wait(pid, -1);
	}
}
