/*
 * Peers that must not crowd out the owner: the daemon log that tells of
 * them is turned over at its cap.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
