/*
 * TCP peers that have not presented the token yet: few at once, fewer from
 * one address, each with a deadline and a few short request lines, and
 * one guess at the token, answered late when wrong; so that anyone who can
 * reach the port can neither lock the owner out nor guess quickly.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "conn.h"
#include "peer.h"
#include "request.h"

/* Such peers at once, in all and from one address. */
#define PEER_MAX 64
#define PEER_PER_ADDR_MAX 16
/* The request lines one may send. */
#define PEER_LINES 16
/* How long a wrong token waits for its answer. */
#define PEER_WRONG_DELAY_MS 1000
/* The fewest characters a token may have. */
#define PEER_TOKEN_MIN 16

/* A connection that has not presented the token. */
struct peer {
	TAILQ_ENTRY(peer)	 entry;
	struct conn		*conn;
	char			 addr[64];	/* its address, for counts */
	struct timer		*deadline;	/* closes it without the token */
	unsigned		 lines;		/* request lines so far */
	bool			 wrong;		/* presented a wrong token */
	bool			 delayed;	/* its refusal is on its way */
};

static TAILQ_HEAD(, peer)	peer_list = TAILQ_HEAD_INITIALIZER(peer_list);
static unsigned			peer_count;
static uint64_t			peer_timeout_ms = PEER_TIMEOUT_DEFAULT;
/* What TCP clients present (the token file's first line), or NULL. */
static char			*peer_secret;

static struct log_burst peer_refused_log = {
	.more = "refused %lu more TCP clients in the last second: too many "
	    "without the token"
};
static struct log_burst peer_wrong_log = {
	.more = "%lu more wrong tokens presented in the last second"
};
static struct log_burst peer_late_log = {
	.more = "closed %lu more TCP clients in the last second that "
	    "presented no token in time"
};

/*
 * Load the token TCP clients must present: a regular file only its owner
 * may read, its first line, of PEER_TOKEN_MIN characters or more (a
 * short one is guessed soon); -1 with err otherwise.
 */
int
peer_token_load(const char *path, char *err, size_t errlen)
{
	struct stat	st;
	char		buf[4096];
	ssize_t		n;
	int		fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 ||
	    fstat(fd, &st) != 0) {
		snprintf(err, errlen, "token file %s: %s", path,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
		snprintf(err, errlen, "token file %s is not a regular file "
		    "that only its owner may read (mode %04o): chmod 600 it",
		    path, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (strlen(buf) < PEER_TOKEN_MIN) {
		snprintf(err, errlen, "token file %s: its first line holds %zu "
		    "characters, a token needs at least %d: make one with "
		    "(umask 077; head -c 24 /dev/urandom | base64 > %s)", path,
		    strlen(buf), PEER_TOKEN_MIN, path);
		explicit_bzero(buf, sizeof buf);
		return -1;
	}
	peer_secret = xstrdup(buf);
	explicit_bzero(buf, sizeof buf);
	return 0;
}

/* Take the deadline to present the token (DBGCTLD_AUTH_TIMEOUT). */
void
peer_init(long long timeout_ms)
{
	peer_timeout_ms = (uint64_t)timeout_ms;
}

/* The peer record of a connection, or NULL once it has the token. */
static struct peer *
peer_of(struct conn *c)
{
	struct peer *p;

	TAILQ_FOREACH(p, &peer_list, entry)
		if (p->conn == c)
			return p;
	return NULL;
}

/* Forget a peer: it presented the token, or its connection closed. */
static void
peer_free(struct peer *p)
{
	TAILQ_REMOVE(&peer_list, p, entry);
	peer_count--;
	timer_free(p->deadline);
	free(p);
}

/* The connection closed before the token. */
static void
peer_closed(struct conn *c, void *arg)
{
	(void)c;
	peer_free(arg);
}

/* The deadline passed without the token: say so and close. */
static void
peer_late(void *arg)
{
	struct peer	*p = arg;
	struct conn	*c = p->conn;
	char		 msg[96];

	/* A wrong token's answer is on its way, and closes it then. */
	if (p->delayed || c->closing || c->finishing || c->dropped)
		return;
	log_burst(&peer_late_log, "closed a TCP client at %s that presented "
	    "no token within %.1f s", p->addr, peer_timeout_ms / 1000.0);
	snprintf(msg, sizeof msg, "no token was presented within %.1f s",
	    peer_timeout_ms / 1000.0);
	conn_send(c, rpc_error_new(NULL, RPC_UNAUTHORIZED, msg, NULL));
	conn_finish(c);
}

/* The address of a TCP peer, as text into buf ("?" if unknown). */
static void
peer_addr(struct conn *c, char *buf, size_t len)
{
	struct sockaddr_storage	ss;
	int			sslen = sizeof ss;

	snprintf(buf, len, "?");
	if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&ss,
	    &sslen) != 0)
		return;
	if (ss.ss_family == AF_INET6)
		uv_ip6_name((struct sockaddr_in6 *)&ss, buf, len);
	else if (ss.ss_family == AF_INET)
		uv_ip4_name((struct sockaddr_in *)&ss, buf, len);
}

/* How many peers without the token there are from addr. */
static unsigned
peer_from(const char *addr)
{
	struct peer	*p;
	unsigned	 n = 0;

	TAILQ_FOREACH(p, &peer_list, entry)
		n += strcmp(p->addr, addr) == 0;
	return n;
}

/*
 * Admit a TCP peer that has yet to present the token, unless there are
 * too many such already, from its address or in all, or descriptors are
 * low: those past CONN_FD_RESERVE + PEER_MAX are kept for the owner's
 * connections. -1 with err to refuse it.
 */
int
peer_admit(struct conn *c, struct rpc_error *err)
{
	struct peer	*p;
	uv_os_fd_t	 fd;
	char		 addr[64];

	peer_addr(c, addr, sizeof addr);
	if (peer_count >= PEER_MAX)
		rpc_error_set(err, RPC_LIMIT, "%u TCP clients have not "
		    "presented the token yet: try again later", peer_count);
	else if (peer_from(addr) >= PEER_PER_ADDR_MAX)
		rpc_error_set(err, RPC_LIMIT, "%d TCP clients at %s have not "
		    "presented the token yet: try again later",
		    PEER_PER_ADDR_MAX, addr);
	else if (dmn.nofile != 0 && uv_fileno(&c->h.handle, &fd) == 0 &&
	    (unsigned long)fd + CONN_FD_RESERVE + PEER_MAX >= dmn.nofile)
		rpc_error_set(err, RPC_LIMIT, "the daemon is short of file "
		    "descriptors: try again later");
	else {
		p = xcalloc(1, sizeof *p);
		p->conn = c;
		strlcpy(p->addr, addr, sizeof p->addr);
		p->deadline = timer_new(peer_late, p);
		timer_start(p->deadline, peer_timeout_ms);
		TAILQ_INSERT_TAIL(&peer_list, p, entry);
		peer_count++;
		conn_hook_add(c, peer_closed, p);
		c->authed = false;
		return 0;
	}
	log_burst(&peer_refused_log, "refused a TCP client at %s: %s", addr,
	    err->message);
	return -1;
}

/*
 * Count a request line of a connection without the token: past
 * PEER_LINES of them, or a batch (its replies would be many), -1 with
 * err, and the connection is to be closed.
 */
int
peer_line(struct conn *c, const char *line, struct rpc_error *err)
{
	struct peer *p = peer_of(c);

	if (p == NULL)
		return 0;
	if (rpc_parse_is_batch(line)) {
		rpc_error_set(err, RPC_UNAUTHORIZED, "no batch before the "
		    "token: present it with hello");
		return -1;
	}
	if (++p->lines <= PEER_LINES)
		return 0;
	rpc_error_set(err, RPC_UNAUTHORIZED, "%d request lines without the "
	    "token: present it with hello", PEER_LINES);
	return -1;
}

/* Whether two strings are equal, in time that does not depend on where they differ. */
static bool
peer_equal(const char *a, const char *b)
{
	size_t		 la = strlen(a), lb = strlen(b), i;
	unsigned char	 d = la != lb;

	for (i = 0; i < la; i++)
		d |= (unsigned char)a[i] ^ (unsigned char)b[i % (lb ? lb : 1)];
	return d == 0;
}

/*
 * Check the token a connection presents: true, and it may use every
 * method from now on, if it is the daemon's and the connection has not
 * presented a wrong one before; false otherwise, for peer_refuse.
 */
bool
peer_token(struct conn *c, const char *token)
{
	struct peer *p = peer_of(c);

	if (p == NULL || p->wrong)
		return false;
	if (peer_secret == NULL || !peer_equal(token, peer_secret)) {
		p->wrong = true;
		log_burst(&peer_wrong_log, "a TCP client at %s presented a "
		    "wrong token", p->addr);
		return false;
	}
	conn_hook_remove(c, peer_closed, p);
	peer_free(p);
	c->authed = true;
	return true;
}

/* The wrong token's delay is over: refuse it and close. */
static void
peer_refused(struct request *req)
{
	struct conn *c = req->conn;

	request_error(req, RPC_UNAUTHORIZED, "wrong token");
	if (c != NULL)
		conn_finish(c);
}

/*
 * Answer a hello whose token peer_token refused: "wrong token", after
 * PEER_WRONG_DELAY_MS for the first, so that an address can try at most
 * PEER_PER_ADDR_MAX tokens a second; then the connection closes.
 */
enum method_return
peer_refuse(struct request *req)
{
	struct peer *p = peer_of(req->conn);

	if (p == NULL || !p->wrong)
		log_fatal("a token refused on a connection that needs none");
	if (p->delayed)
		return request_error(req, RPC_UNAUTHORIZED, "a wrong token "
		    "was presented on this connection: it closes");
	p->delayed = true;
	pending_wait(req, NULL, NULL);
	pending_timeout(req, PEER_WRONG_DELAY_MS, peer_refused);
	return METHOD_WAIT;
}
