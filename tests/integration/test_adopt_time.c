/*
 * Holds and deadlines keep their time across adoptions: a session adopted
 * again and again by one new daemon after another (SIGKILL each time)
 * has a deadline due when it was and a hold with all it had left, none
 * of it lost or added at an adoption.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdlib.h>

TestSuite(adopt_time, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 150);

/* Adoptions in a row: what each adds or loses adds up. */
#define ADOPT_AGAIN 8
/* What a time left may be off by: ms the daemon and the test round to. */
#define ADOPT_SLACK_MS 10

/*
 * A gdb session's deadline runs out when it was due, however many times
 * it was adopted: the time a new daemon takes to ask gdb again what it
 * knows before the session runs is not added to it each time.
 */
Test(adopt_time, a_deadline_stays_due_when_it_was_across_adoptions)
{
	char ids[32];
	struct h_res r;
	double t0, since;
	json_t *st;
	long id, left;
	int i;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "gdb", "-x", "run", "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "session %ld never ran its program", id);
	h_cli_exit(&r, 0, H_ARGS("deadline", ids, "600000"));
	h_run_free(&r);
	t0 = h_now();
	for (i = 0; i < ADOPT_AGAIN; i++) {
		h_daemon_fg_kill();
		h_daemon_fg();
		cr_assert(h_cli_wait_status(id, "state", "running",
		    H_WAIT_BOUND), "the adopted session never ran again");
	}
	since = h_now() - t0;
	st = h_cli_status(id);
	left = (long)h_jint(st, "deadline.in_ms", -1);
	json_decref(st);
	/* What it has left is at most what it had less the time gone by. */
	cr_assert(left > 0 && left <= 600000 - (long)(since * 1000) +
	    ADOPT_SLACK_MS, "after %d adoptions in %.3f s, the deadline of "
	    "600 s is due in %ld ms", ADOPT_AGAIN, since, left);
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
}

/*
 * A hold goes on with what it had left, to the ms, however many times its
 * session is adopted: none of it is lost to a rounding at each adoption.
 */
Test(adopt_time, a_hold_keeps_what_it_had_left_across_adoptions)
{
	char ids[32];
	struct h_res r;
	double t0, upto;
	json_t *st;
	long id, left;
	int i;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	h_idstr(id, ids, sizeof ids);
	t0 = h_now();
	h_cli_exit(&r, 0, H_ARGS("hold", "--ttl", "600", ids));
	h_run_free(&r);
	for (i = 0; i < ADOPT_AGAIN; i++) {
		h_daemon_fg_kill();
		h_daemon_fg();
		cr_assert(h_cli_wait_status(id, "state", "running",
		    H_WAIT_BOUND), "the adopted session never ran again");
	}
	st = h_cli_status(id);
	upto = h_now() - t0;
	left = (long)h_jint(st, "hold.left_ms", -1);
	json_decref(st);
	/*
	 * What it has left is at least what it had less the time gone by,
	 * and the loop's clock each daemon set it by (as old as its turn).
	 */
	cr_assert(left >= 600000 - (long)(upto * 1000) - ADOPT_AGAIN *
	    ADOPT_SLACK_MS,
	    "after %d adoptions in %.3f s, the hold of 600 s has %ld ms left",
	    ADOPT_AGAIN, upto, left);
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
}
