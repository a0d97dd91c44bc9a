/*
 * Peers that must not crowd out the owner: TCP clients without the token
 * are few at once, closed at a deadline and held to a short line, so the
 * owner's connections keep their descriptors and their budget of
 * unfinished lines; a storm of wrong tokens, or of clients of other uids,
 * leaves a few summary lines in a log that is turned over at its cap; a
 * burst of connections all get in.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <linux/sockios.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(peers, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 120);

#define TOKEN		"the-token-of-the-peers-suite"
#define HELLO_WRONG	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\"," \
			"\"params\":{\"token\":\"not-the-token-of-this-suite\"}}\n"

/* Start the daemon with a loopback TCP listener and TOKEN; its port. */
static int
peers_daemon(void)
{
	char token[PATH_MAX];

	h_daemon_token(token, sizeof token, TOKEN, 0600);
	return h_daemon_fg_tcp("127.0.0.1:0", token);
}

/* The same with fd limits soft and hard, which it raises to hard. */
static int
peers_daemon_nofile(rlim_t soft, rlim_t hard)
{
	int port;

	h_daemon_nofile(soft, hard);
	port = peers_daemon();
	h_daemon_nofile_back();
	return port;
}

/* An owner's ping on a connection of its own, answered within bound_ms. */
static bool
peers_owner_pings(int bound_ms)
{
	struct h_conn	 c;
	json_t		*r;
	bool		 ok;

	if (h_conn_open(&c, H->sock) != 0)
		return false;
	r = h_conn_call(&c, "ping", "{}", bound_ms);
	ok = json_is_true(h_jpath(r, "result.pong"));
	json_decref(r);
	h_conn_close(&c);
	return ok;
}

/*
 * An attacker holds as many idle TCP connections as the test may open,
 * with the daemon at 400 descriptors: the owner's ping on the Unix
 * socket is answered all the same, within 2 s, and the attacker's
 * connections past the cap are told why and closed.
 */
Test(peers, tokenless_clients_cannot_lock_the_owner_out)
{
	enum { N = 360 };
	struct h_conn	*c = calloc(N, sizeof *c);
	char		*line;
	double		 t0;
	int		 i, port, opened = 0, told = 0;

	port = peers_daemon_nofile(150, 400);
	for (i = 0; i < N && h_conn_open_tcp(&c[i], port) == 0; i++)
		opened++;
	cr_assert_eq(opened, N, "only %d TCP connections could be made",
	    opened);
	t0 = h_now();
	cr_assert(peers_owner_pings(5000), "the owner's ping went unanswered "
	    "beside %d tokenless TCP connections", N);
	cr_assert_lt(h_now() - t0, 2.0, "the owner's ping took %.2f s",
	    h_now() - t0);
	for (i = 0; i < opened; i++) {
		if ((line = h_conn_line(&c[i], 100)) == NULL)
			continue;
		/* Why: too many without the token (or, in a rush, no fds). */
		cr_assert_not_null(strstr(line, "\"kind\":\"limit\""),
		    "connection %d: %s", i, line);
		told++;
		free(line);
	}
	cr_assert_geq(told, N - 16, "only %d of %d connections past the cap "
	    "were told why", told, N);
	for (i = 0; i < opened; i++)
		h_conn_close(&c[i]);
	free(c);
}

/*
 * A TCP connection that presents no token is closed at the deadline
 * (DBGCTLD_AUTH_TIMEOUT), told why; one that presented it stays open.
 */
Test(peers, a_tokenless_client_is_closed_at_its_deadline)
{
	struct h_conn	 owner, idle;
	json_t		*r;
	double		 t0;
	int		 port;

	h_ctx_env_add("DBGCTLD_AUTH_TIMEOUT=300");
	port = peers_daemon();
	cr_assert_eq(h_conn_open_tcp(&owner, port), 0, "connect");
	r = h_conn_call(&owner, "hello", "{\"token\":\"" TOKEN "\"}", 10000);
	cr_assert(json_is_true(h_jpath(r, "result.authentication."
	    "authenticated")), "hello with the token: %s",
	    r ? json_dumps(r, JSON_COMPACT) : "no reply");
	json_decref(r);
	t0 = h_now();
	cr_assert_eq(h_conn_open_tcp(&idle, port), 0, "connect");
	r = h_conn_recv(&idle, H_WAIT_BOUND);
	cr_assert_not_null(r, "no word to an idle tokenless connection "
	    "within %d ms", H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(r), "unauthorized", "%s",
	    json_dumps(r, JSON_COMPACT));
	cr_assert_not_null(strstr(h_jstr(r, "error.message"), "no token"),
	    "%s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	cr_assert_null(h_conn_recv(&idle, H_WAIT_BOUND), "more after the "
	    "deadline's error");
	cr_assert(idle.eof, "the idle connection is still open");
	cr_assert_geq(h_now() - t0, 0.25, "closed before its deadline");
	r = h_conn_call(&owner, "ping", "{}", 10000);
	cr_assert(json_is_true(h_jpath(r, "result.pong")), "the connection "
	    "with the token was closed too");
	json_decref(r);
	h_conn_close(&idle);
	h_conn_close(&owner);
}

/* Whether our TCP connections to the daemon's port hold no unread byte. */
static bool
peers_all_read(void *arg)
{
	unsigned	 local, remote, state, tx, rx;
	char		*text = h_read_file("/proc/net/tcp", NULL), *p;
	bool		 all = true;
	int		 port = *(int *)arg;

	if (text == NULL)
		return false;
	for (p = strchr(text, '\n'); p != NULL && all; p = strchr(p + 1, '\n'))
		if (sscanf(p + 1, "%*d: %*x:%x %*x:%x %x %x:%x", &local,
		    &remote, &state, &tx, &rx) == 5 && state == 1 &&
		    (int)local == port && rx != 0)
			all = false;
	free(text);
	return all;
}

/* Whether the daemon has read what c sent on a Unix socket. */
static bool
peers_unix_read(void *arg)
{
	struct h_conn	*c = arg;
	int		 queued = -1;

	return ioctl(c->fd, SIOCOUTQ, &queued) == 0 && queued == 0;
}

/*
 * Before the token a line may hold 4 KiB: a tokenless client that sends
 * 5 KiB without a line feed gets a limit error and is closed.
 */
Test(peers, a_long_tokenless_line_is_refused)
{
	struct h_conn	 c;
	char		 fill[5 * 1024];
	json_t		*r;
	int		 port = peers_daemon();

	memset(fill, ' ', sizeof fill);
	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect");
	(void)h_conn_send(&c, fill, sizeof fill, 10000);
	r = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(r), "limit", "5 KiB without a line feed "
	    "before the token: %s", r ? json_dumps(r, JSON_COMPACT) :
	    "no reply");
	cr_assert_not_null(strstr(h_jstr(r, "error.message"), "before the "
	    "token"), "%s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	cr_assert_null(h_conn_recv(&c, H_WAIT_BOUND), "more after the limit "
	    "error");
	cr_assert(c.eof, "the connection is still open");
	h_conn_close(&c);
}

/*
 * Before the token a connection may send 16 request lines: each of them
 * is answered, the next one gets an error that says why, and the
 * connection is closed.
 */
Test(peers, a_tokenless_client_has_few_lines)
{
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}\n";
	struct h_conn	 c;
	json_t		*r;
	int		 i, port = peers_daemon(), answered = 0;

	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect");
	for (i = 0; i < 20; i++)
		(void)h_conn_send(&c, ping, strlen(ping), 10000);
	while ((r = h_conn_recv(&c, H_WAIT_BOUND)) != NULL) {
		if (h_jpath(r, "id") != NULL && !json_is_null(h_jpath(r, "id")))
			answered++;
		else
			cr_assert_not_null(strstr(h_jstr(r, "error.message"),
			    "16 request lines without the token"), "%s",
			    json_dumps(r, JSON_COMPACT));
		json_decref(r);
	}
	cr_assert(c.eof, "the connection is still open after 20 lines");
	cr_assert_eq(answered, 16, "%d of 20 lines answered", answered);
	h_conn_close(&c);
}

/*
 * Before the token a line is one request: a batch, whose replies would be
 * many for one short line, gets an error that says why, and the
 * connection is closed.
 */
Test(peers, a_tokenless_batch_is_refused)
{
	static const char batch[] = "[{},{},{},{},{},{},{},{},{},{}]\n";
	struct h_conn	 c;
	json_t		*r;
	int		 port = peers_daemon();

	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect");
	(void)h_conn_send(&c, batch, strlen(batch), 10000);
	r = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert(r != NULL && json_is_object(r) && strstr(h_jstr(r,
	    "error.message"), "no batch before the token") != NULL,
	    "a batch before the token: %s", r ? json_dumps(r, JSON_COMPACT) :
	    "no reply");
	json_decref(r);
	cr_assert_null(h_conn_recv(&c, H_WAIT_BOUND), "more after the error");
	cr_assert(c.eof, "the connection is still open");
	h_conn_close(&c);
}

/*
 * 70 tokenless clients that send ~1 MiB each without a line feed do not
 * use the budget of unfinished lines that the owner's 300 KB request,
 * sent in two writes, needs.
 */
Test(peers, tokenless_clients_leave_the_owner_its_line_budget)
{
	enum { N = 70, PART = 1000000, HALF = 150000 };
	struct h_conn	 c[N], owner;
	char		*fill = malloc(PART), head[128], *line;
	int		 i, port = peers_daemon(), n;

	memset(fill, ' ', PART);
	for (i = 0; i < N; i++) {
		cr_assert_eq(h_conn_open_tcp(&c[i], port), 0, "connect %d", i);
		/* A peer that closes us makes the send fail: so be it. */
		(void)h_conn_send(&c[i], fill, PART, 10000);
	}
	cr_assert(h_wait_for(peers_all_read, &port, H_WAIT_BOUND), "the "
	    "daemon left bytes of the tokenless clients unread");
	cr_assert_eq(h_conn_open(&owner, H->sock), 0, "connect");
	n = snprintf(head, sizeof head, "{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"ping\",\"params\":{\"pad\":\"");
	cr_assert_eq(h_conn_send(&owner, head, (size_t)n, 10000), 0, "send");
	cr_assert_eq(h_conn_send(&owner, fill, HALF, 10000), 0, "send");
	cr_assert(h_wait_for(peers_unix_read, &owner, H_WAIT_BOUND), "the "
	    "daemon never read the first half of the owner's request");
	/* A dropped owner fails here: its reply says why. */
	if (h_conn_send(&owner, fill, HALF, 10000) == 0)
		(void)h_conn_send(&owner, "\"}}\n", 4, 10000);
	line = h_conn_line(&owner, H_WAIT_BOUND);
	cr_assert(line != NULL && strstr(line, "\"pong\":true") != NULL,
	    "the owner's 300 KB request beside %d tokenless clients: %s", N,
	    line ? h_shown(line, strlen(line), 300) : "no reply");
	free(line);
	h_conn_close(&owner);
	for (i = 0; i < N; i++)
		h_conn_close(&c[i]);
	free(fill);
}

/* Lines of the daemon's log that tell of TCP clients or their tokens. */
static int
peers_log_lines(int *summaries)
{
	char	*log = h_daemon_log(), *p, *nl;
	int	 n = 0;

	*summaries = 0;
	for (p = log; *p != '\0'; p = nl + 1) {
		if ((nl = strchr(p, '\n')) == NULL)
			nl = p + strlen(p) - 1;
		*nl = '\0';
		if (strstr(p, "TCP client") == NULL &&
		    strstr(p, "wrong token") == NULL)
			continue;
		n++;
		*summaries += strstr(p, "in the last second") != NULL;
	}
	free(log);
	return n;
}

/* Open storm connection i and send it a wrong token. */
static void
peers_storm_open(struct h_conn *c, int port)
{
	cr_assert_eq(h_conn_open_tcp(c, port), 0, "connect");
	(void)h_conn_send(c, HELLO_WRONG, strlen(HELLO_WRONG), 1000);
}

/*
 * A storm of wrong tokens, 40 connections at once for 3 s: at most 16
 * tokens from one address are judged a second, each answered after 1 s,
 * and the log gets summaries of the rest, not a line each.
 */
Test(peers, a_storm_of_wrong_tokens_is_slowed_and_summarised)
{
	enum { K = 40, SECONDS = 3 };
	struct h_conn	 c[K];
	struct pollfd	 pfd[K];
	char		*line;
	double		 end;
	int		 i, port = peers_daemon(), wrong = 0, refused = 0;
	int		 lines, summaries;

	for (i = 0; i < K; i++)
		peers_storm_open(&c[i], port);
	for (end = h_now() + SECONDS; h_now() < end;) {
		for (i = 0; i < K; i++)
			pfd[i] = (struct pollfd){ c[i].fd, POLLIN, 0 };
		if (poll(pfd, K, 100) <= 0)
			continue;
		for (i = 0; i < K; i++) {
			if (pfd[i].revents == 0)
				continue;
			line = h_conn_line(&c[i], 50);
			if (line == NULL && !c[i].eof)
				continue;
			if (line != NULL && strstr(line, "\"wrong token\""))
				wrong++;
			else if (line != NULL && strstr(line, "\"code\":7"))
				refused++;
			free(line);
			h_conn_close(&c[i]);
			peers_storm_open(&c[i], port);
		}
	}
	for (i = 0; i < K; i++)
		h_conn_close(&c[i]);
	h_note("wrong-token storm: %d tokens judged in %d s (%.0f a second), "
	    "%d clients refused", wrong, SECONDS, (double)wrong / SECONDS,
	    refused);
	cr_assert_gt(wrong, 0, "no token was judged");
	cr_assert_leq(wrong, 16 * (SECONDS + 2), "%d tokens judged in %d s",
	    wrong, SECONDS);
	h_daemon_wait_log("more wrong tokens presented in the last second",
	    H_WAIT_BOUND);
	lines = peers_log_lines(&summaries);
	h_note("wrong-token storm: %d log lines, %d of them summaries", lines,
	    summaries);
	cr_assert_leq(lines, 4 * (SECONDS + 3), "%d log lines for %d wrong "
	    "tokens and %d refusals", lines, wrong, refused);
	cr_assert(peers_owner_pings(5000), "the owner's ping after the storm");
}

/* Lines of the daemon's log that hold text. */
static int
peers_log_count(const char *text)
{
	char	*log = h_daemon_log();
	int	 n = h_count(log, strlen(log), text);

	free(log);
	return n;
}

/*
 * As uid 65534, connect to the Unix socket n times, each time until the
 * refusal is read; exits 0 if each was refused. Never returns.
 */
static void
peers_stranger(int n)
{
	struct h_conn	 c;
	char		*line;
	int		 i, bad = 0;

	if (setgid(65534) != 0 || setuid(65534) != 0)
		_exit(2);
	for (i = 0; i < n; i++) {
		if (h_conn_open(&c, H->sock) != 0) {
			bad++;
			continue;
		}
		line = h_conn_line(&c, 10000);
		bad += line == NULL || strstr(line, "may not use the daemon") ==
		    NULL;
		free(line);
		h_conn_close(&c);
	}
	_exit(bad == 0 ? 0 : 1);
}

/*
 * Through a socket an administrator opened to others, 3000 connections of
 * uid 65534 in a row are each refused, and the log gets a few lines, the
 * rest counted in summaries, not a line each.
 */
Test(peers, a_flood_of_other_uids_leaves_few_log_lines)
{
	enum { N = 3000 };
	double	t0;
	pid_t	pid;
	int	lines;

	if (geteuid() != 0)
		cr_skip_test("needs root, to connect as uid 65534");
	h_daemon_fg();
	cr_assert_eq(chmod(H->dir, 0711), 0, "chmod %s", H->dir);
	cr_assert_eq(chmod(H->sock, 0666), 0, "chmod %s", H->sock);
	t0 = h_now();
	cr_assert_neq(pid = fork(), -1, "fork");
	if (pid == 0)
		peers_stranger(N);
	cr_assert_eq(h_run_reap(pid, 60000), 0, "the connections of uid "
	    "65534 were not each refused");
	h_daemon_wait_log("more clients of other uids in the last second",
	    H_WAIT_BOUND);
	lines = peers_log_count("uid");
	h_note("uid 65534: %d connections refused in %.1f s, %d log lines",
	    N, h_now() - t0, lines);
	cr_assert_leq(lines, 2 * (int)(h_now() - t0 + 2), "%d log lines for "
	    "%d refusals in %.1f s", lines, N, h_now() - t0);
	cr_assert(peers_owner_pings(5000), "the owner's ping after the flood");
}

/* Whether the daemon log has been turned over: dbgctld.log.1 is there. */
static bool
peers_log_turned(void *arg)
{
	char		path[PATH_MAX];
	struct stat	st;

	(void)arg;
	snprintf(path, sizeof path, "%s/dbgctld.log.1", H->state);
	return stat(path, &st) == 0;
}

/* The size of the file at STATE/name, or -1. */
static long
peers_log_size(const char *name)
{
	char		path[PATH_MAX];
	struct stat	st;

	snprintf(path, sizeof path, "%s/%s", H->state, name);
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/*
 * A detached daemon's log is turned over at its cap (DBGCTLD_LOG_MAX,
 * here 4096 bytes): dbgctld.log becomes dbgctld.log.1, neither passes
 * the cap, there is no third, and the newest lines are in dbgctld.log.
 */
Test(peers, the_daemon_log_is_turned_over_at_its_cap)
{
	char	 listen[PATH_MAX + 8], ids[32], want[64], *log;
	long	 id = 0;
	int	 i;
	struct h_res r;

	h_ctx_env_add("DBGCTLD_LOG_MAX=4096");
	snprintf(listen, sizeof listen, "unix:%s", H->sock);
	cr_assert_eq(h_run(&r, H_RUN_BOUND, H_ARGS(H->dbgctld, "--listen",
	    listen)), 0, "dbgctld: %s", r.err);
	h_run_free(&r);
	for (i = 0; i < 100 && !peers_log_turned(NULL); i++)
		id = h_cli_launch_exec(H->marker, H_ARGS("true"));
	cr_assert(peers_log_turned(NULL), "no dbgctld.log.1 after %d "
	    "launches; dbgctld.log has %ld bytes", i,
	    peers_log_size("dbgctld.log"));
	/* Once more over the cap: still two files, each under it. */
	for (i = 0; i < 100 && peers_log_size("dbgctld.log") < 2048; i++)
		id = h_cli_launch_exec(H->marker, H_ARGS("true"));
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "(true)");
	cr_assert_leq(peers_log_size("dbgctld.log"), 4096, "dbgctld.log");
	cr_assert_leq(peers_log_size("dbgctld.log.1"), 4096, "dbgctld.log.1");
	cr_assert_eq(peers_log_size("dbgctld.log.2"), -1, "a dbgctld.log.2");
	log = h_daemon_log();
	snprintf(want, sizeof want, "session %s", h_idstr(id, ids, sizeof ids));
	cr_assert_not_null(strstr(log, want), "the newest lines are not in "
	    "dbgctld.log: %s", log);
	free(log);
}

/* A non-blocking connect to the Unix socket at path: the fd, or -errno. */
static int
peers_connect_nonblock(const char *path)
{
	struct sockaddr_un	sa = { .sun_family = AF_UNIX };
	size_t			len = strlen(path);
	int			fd, e;

	if (len >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
		return fd;
	e = errno;
	close(fd);
	return -e;
}

/*
 * 500 clients connect at once, with non-blocking connects, while the
 * daemon accepts none (it is stopped): none is refused with EAGAIN, as
 * with a backlog of 128, and each is served once the daemon goes on.
 */
Test(peers, a_burst_of_connections_all_get_in)
{
	enum { N = 500 };
	struct h_conn	*c = calloc(N, sizeof *c);
	char		*text;
	json_t		*r;
	pid_t		 d = h_daemon_fg();
	int		 i, fd, failed = 0, first = 0;

	text = h_read_file("/proc/sys/net/core/somaxconn", NULL);
	if (text != NULL && atoi(text) < N)
		cr_skip_test("net.core.somaxconn is %d", atoi(text));
	free(text);
	cr_assert_eq(kill(d, SIGSTOP), 0, "SIGSTOP");
	for (i = 0; i < N; i++) {
		if ((fd = peers_connect_nonblock(H->sock)) < 0) {
			if (failed++ == 0)
				first = -fd;
			c[i].fd = -1;
			continue;
		}
		c[i].fd = fd;
		c[i].next_id = 1000;
	}
	cr_assert_eq(kill(d, SIGCONT), 0, "SIGCONT");
	cr_assert_eq(failed, 0, "%d of %d connects failed, the first with %s",
	    failed, N, strerror(first));
	for (i = 0; i < N; i++) {
		r = h_conn_call(&c[i], "ping", "{}", 10000);
		cr_assert(json_is_true(h_jpath(r, "result.pong")), "client %d: "
		    "%s", i, r ? json_dumps(r, JSON_COMPACT) : "no reply");
		json_decref(r);
		h_conn_close(&c[i]);
	}
	free(c);
}
