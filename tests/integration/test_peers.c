/*
 * Peers that must not crowd out the owner: the daemon log that tells of
 * them is turned over at its cap; a burst of connections all get in.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(peers, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 120);

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
