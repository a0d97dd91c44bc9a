/*
 * Adoption's steps that several suites share: where a keeper waits, a
 * resume that must stop at its breakpoint again, and a managed server
 * that a SIGKILL of the daemon must leave as it was.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <sys/types.h>

/* Assert that a resume of session ids stops at loop_tick again; its seq. */
long
h_adopt_resume_hits(const char *ids, const char *after)
{
	json_t	*hit = h_cli_json(H_ARGS("resume", "--wait", ids));
	long	 seq = (long)h_jint(hit, "target.seq", -1);

	cr_assert_str_eq(h_jstr(hit, "target.stop.func") ? h_jstr(hit,
	    "target.stop.func") : "(none)", "loop_tick", "the resume after "
	    "%s did not stop at the breakpoint", after);
	json_decref(hit);
	return seq;
}

/*
 * SIGKILL the daemon and start the next; assert that session id runs again
 * under it with the same managed server, at the same port; what: messages.
 */
void
h_adopt_keeps_server(long id, const char *what)
{
	json_t	*st = h_cli_status(id);
	pid_t	 srv = (pid_t)h_jint(st, "server_pid", -1);
	long	 port = (long)h_jint(st, "port", -1);

	json_decref(st);
	cr_assert(srv > 0 && port > 0, "the %s session's server and port", what);
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted %s session never ran again", what);
	st = h_cli_status(id);
	cr_assert_eq((pid_t)h_jint(st, "server_pid", -1), srv, "the %s "
	    "session has another server", what);
	cr_assert_eq((long)h_jint(st, "port", -1), port, "the %s session has "
	    "another port", what);
	json_decref(st);
}

/* The path of the socket keeper n of session id waits at. */
void
h_adopt_keeper_sock(long id, int n, char *buf, size_t len)
{
	snprintf(buf, len, "%s.k%ld.%d", H->sock, id, n);
}
