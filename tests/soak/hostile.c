/*
 * Hostile peers: one child process that polls every attacking connection
 * at once and ends after the attack's time, reporting what it did on a
 * pipe. Each kind reconnects when the daemon closes it, as an attacker
 * would; an owner connection the daemon closes is counted, since the
 * daemon must serve the owner's heavy work, however slowly it is read.
 */
#include "hostile.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Most connections of all kinds the child holds. */
#define HOSTILE_MAX	4096
/* Bytes a slow reader takes a tick, and the tick (ms). */
#define HOSTILE_SIP	(64 * 1024)
#define HOSTILE_TICK	50

/* The kinds of attacking connection. */
enum hostile_kind {
	HK_FLOOD,	/* tokenless TCP, connected and idle */
	HK_SLOW,	/* tokenless TCP, a byte of an endless line a tick */
	HK_GUESS,	/* tokenless TCP, a wrong token, again and again */
	HK_BATCH,	/* owner: a batch of lists, its reply read slowly */
	HK_PIPE,	/* owner: many list lines, their replies read slowly */
};

/* One attacking connection. */
struct hostile_peer {
	enum hostile_kind	 kind;
	int			 fd;		/* -1: to connect again */
	char			*out;		/* what is left to write */
	size_t			 outlen;
	long			 lines;		/* LFs read since the last write */
};

/* The child's whole state. */
struct hostile_run {
	struct hostile		*h;
	struct hostile_peer	 peer[HOSTILE_MAX];
	int			 n;
	char			*batch_line, *pipe_lines;
	size_t			 batch_len, pipe_len;
	long			 closed[5];	/* closes by the daemon, by kind */
	long			 guesses, slow_bytes;
};

/* Seconds on the monotonic clock. */
static double
hostile_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A non-blocking connection started to the peer's place; -1 if none. */
static int
hostile_connect(const struct hostile *h, enum hostile_kind kind)
{
	struct sockaddr_un	 un = { .sun_family = AF_UNIX };
	struct sockaddr_in	 in = { .sin_family = AF_INET };
	struct sockaddr		*sa;
	socklen_t		 salen;
	bool			 tcp = kind <= HK_GUESS;
	int			 fd;

	if (tcp) {
		in.sin_port = htons((unsigned short)h->tcp_port);
		in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa = (struct sockaddr *)&in;
		salen = sizeof in;
	} else {
		snprintf(un.sun_path, sizeof un.sun_path, "%s", h->unix_path);
		sa = (struct sockaddr *)&un;
		salen = sizeof un;
	}
	fd = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (connect(fd, sa, salen) == -1 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

/* What a peer of a kind writes first on each connection. */
static void
hostile_greet(struct hostile_run *r, struct hostile_peer *p)
{
	static char slow[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"hello\",\"params\":{\"pad\":\"";
	static char guess[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"hello\",\"params\":{\"token\":\"a-guess-of-the-token\"}}\n";

	p->lines = 0;
	p->out = NULL;
	p->outlen = 0;
	if (p->kind == HK_SLOW) {
		p->out = slow;
		p->outlen = sizeof slow - 1;
	} else if (p->kind == HK_GUESS) {
		p->out = guess;
		p->outlen = sizeof guess - 1;
		r->guesses++;
	} else if (p->kind == HK_BATCH) {
		p->out = r->batch_line;
		p->outlen = r->batch_len;
	} else if (p->kind == HK_PIPE) {
		p->out = r->pipe_lines;
		p->outlen = r->pipe_len;
	}
}

/* Open (or open again) a peer's connection. */
static void
hostile_open(struct hostile_run *r, struct hostile_peer *p)
{
	p->fd = hostile_connect(r->h, p->kind);
	if (p->fd != -1)
		hostile_greet(r, p);
}

/* The daemon closed a peer: count it, and let it come back. */
static void
hostile_lost(struct hostile_run *r, struct hostile_peer *p)
{
	close(p->fd);
	p->fd = -1;
	/* A guesser's close after its refusal is the expected end. */
	if (p->kind != HK_GUESS)
		r->closed[p->kind]++;
}

/* Write what the peer has queued, as far as the socket takes it. */
static void
hostile_write(struct hostile_run *r, struct hostile_peer *p)
{
	ssize_t n;

	if (p->outlen == 0)
		return;
	n = send(p->fd, p->out, p->outlen, MSG_NOSIGNAL);
	if (n == -1 && (errno == EAGAIN || errno == EINPROGRESS ||
	    errno == ENOTCONN))
		return;
	if (n <= 0) {
		hostile_lost(r, p);
		return;
	}
	p->out += n;
	p->outlen -= (size_t)n;
}

/* Whether a peer's replies are all in, so that it asks again. */
static bool
hostile_answered(const struct hostile_run *r, const struct hostile_peer *p)
{
	if (p->kind == HK_BATCH)
		return p->lines >= 1;
	return p->kind == HK_PIPE && p->lines >= r->h->pipelined;
}

/* Read a sip of what the daemon sent; count lines, and ask again. */
static void
hostile_read(struct hostile_run *r, struct hostile_peer *p)
{
	static char buf[HOSTILE_SIP];
	ssize_t n, i;

	n = recv(p->fd, buf, sizeof buf, 0);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (p->kind == HK_GUESS) {
			close(p->fd);
			p->fd = -1;
			return;
		}
		hostile_lost(r, p);
		return;
	}
	for (i = 0; i < n; i++)
		if (buf[i] == '\n') {
			p->lines++;
			if (p->kind == HK_PIPE)
				r->h->pipelined_replies++;
		}
	if (!hostile_answered(r, p))
		return;
	if (p->kind == HK_BATCH)
		r->h->batch_replies++;
	hostile_greet(r, p);
}

/*
 * One wake-up: a sip of input and output for each ready peer; on a tick
 * (every HOSTILE_TICK ms, however often poll returns) also the reconnects
 * and slowloris bytes, so the attack's rate is the same on any machine.
 */
static void
hostile_tick(struct hostile_run *r, struct pollfd *pfd, bool tick)
{
	struct hostile_peer	*p;
	int			 i;

	for (i = 0; i < r->n; i++) {
		p = &r->peer[i];
		if (p->fd == -1) {
			if (tick)
				hostile_open(r, p);
			continue;
		}
		if (tick && p->kind == HK_SLOW && p->outlen == 0) {
			p->out = "x";
			p->outlen = 1;
			r->slow_bytes++;
		}
		if (pfd[i].revents & (POLLOUT | POLLERR | POLLHUP))
			hostile_write(r, p);
		if (p->fd != -1 && (pfd[i].revents & (POLLIN | POLLHUP |
		    POLLERR)))
			hostile_read(r, p);
	}
}

/* Add n peers of a kind. */
static void
hostile_add(struct hostile_run *r, enum hostile_kind kind, int n)
{
	while (n-- > 0 && r->n < HOSTILE_MAX) {
		r->peer[r->n].kind = kind;
		hostile_open(r, &r->peer[r->n++]);
	}
}

/* Text of n list requests, as one batch line or as n lines. */
static char *
hostile_lists(int n, bool batch, size_t *len)
{
	size_t	 cap = (size_t)n * 64 + 16, off = 0;
	char	*s = malloc(cap);
	int	 i;

	if (s == NULL)
		_exit(3);
	if (batch)
		s[off++] = '[';
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(s + off, cap - off, "%s{\"jsonrpc\":"
		    "\"2.0\",\"id\":%d,\"method\":\"list\"}%s", batch && i > 0 ?
		    "," : "", i + 1, batch ? "" : "\n");
	if (batch)
		off += (size_t)snprintf(s + off, cap - off, "]\n");
	*len = off;
	return s;
}

/* The child: attack until the time is up, then write the counts on fd. */
static void
hostile_child(struct hostile *h, int fd)
{
	static struct hostile_run	 r;
	static struct pollfd		 pfd[HOSTILE_MAX];
	double				 end = hostile_now() + h->seconds;
	double				 next = 0, now;
	char				 line[512];
	int				 i;

	r.h = h;
	if (h->tcp_port > 0) {
		hostile_add(&r, HK_FLOOD, h->flood);
		hostile_add(&r, HK_SLOW, h->slowloris);
		hostile_add(&r, HK_GUESS, h->guessers);
	}
	if (h->unix_path != NULL && h->batch > 0) {
		r.batch_line = hostile_lists(h->batch, true, &r.batch_len);
		hostile_add(&r, HK_BATCH, 1);
	}
	if (h->unix_path != NULL && h->pipelined > 0) {
		r.pipe_lines = hostile_lists(h->pipelined, false, &r.pipe_len);
		hostile_add(&r, HK_PIPE, 1);
	}
	while (hostile_now() < end) {
		for (i = 0; i < r.n; i++) {
			pfd[i].fd = r.peer[i].fd;
			pfd[i].events = POLLIN | (r.peer[i].outlen > 0 ?
			    POLLOUT : 0);
			pfd[i].revents = 0;
		}
		if (poll(pfd, (nfds_t)r.n, HOSTILE_TICK) == -1 &&
		    errno != EINTR)
			_exit(4);
		now = hostile_now();
		hostile_tick(&r, pfd, now >= next);
		if (now >= next)
			next = now + HOSTILE_TICK / 1000.0;
	}
	snprintf(line, sizeof line, "%d %ld %ld tokenless connections %d held "
	    "(%ld closed by the daemon), slowloris %d (%ld closed, %ld bytes), "
	    "%ld token guesses, %ld batch replies of %d lists, %ld of %d "
	    "pipelined lists answered, owner connections closed %ld\n",
	    (int)(r.closed[HK_BATCH] + r.closed[HK_PIPE]), h->batch_replies,
	    h->pipelined_replies, h->flood, r.closed[HK_FLOOD], h->slowloris,
	    r.closed[HK_SLOW], r.slow_bytes, r.guesses, h->batch_replies,
	    h->batch, h->pipelined_replies, h->pipelined,
	    r.closed[HK_BATCH] + r.closed[HK_PIPE]);
	if (write(fd, line, strlen(line)) == -1)
		_exit(5);
	_exit(0);
}

/* Start the peers in a child process; 0, or -1 with errno. */
int
hostile_start(struct hostile *h)
{
	int p[2];

	h->report[0] = '\0';
	h->owner_dropped = -1;
	h->batch_replies = h->pipelined_replies = 0;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((h->pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (h->pid == 0) {
		close(p[0]);
		hostile_child(h, p[1]);
	}
	close(p[1]);
	h->fd = p[0];
	return 0;
}

/* Wait up to bound_s for the peers to end; 0 with the report, or -1. */
int
hostile_wait(struct hostile *h, double bound_s)
{
	struct pollfd	 pfd = { .fd = h->fd, .events = POLLIN };
	double		 end = hostile_now() + bound_s;
	size_t		 off = 0;
	ssize_t		 n;
	int		 skip = 0;

	while (off < sizeof h->report - 1 && hostile_now() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if ((n = read(h->fd, h->report + off, sizeof h->report - 1 -
		    off)) <= 0)
			break;
		off += (size_t)n;
	}
	h->report[off] = '\0';
	close(h->fd);
	hostile_kill(h);
	if (sscanf(h->report, "%d %ld %ld %n", &h->owner_dropped,
	    &h->batch_replies, &h->pipelined_replies, &skip) != 3)
		return -1;
	memmove(h->report, h->report + skip, strlen(h->report + skip) + 1);
	h->report[strcspn(h->report, "\n")] = '\0';
	return 0;
}

/* Kill the peers if they still run (for a failing test's cleanup). */
void
hostile_kill(struct hostile *h)
{
	if (h->pid <= 0)
		return;
	kill(h->pid, SIGKILL);
	waitpid(h->pid, NULL, 0);
	h->pid = 0;
}
