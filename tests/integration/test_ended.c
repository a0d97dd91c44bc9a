/*
 * What a person sees of sessions that faulted or ended: list's TARGET
 * column with the fault, one wording for a session that has exited, an
 * lldb command that failed, a gdbserver session quit normally.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(ended, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 180 * H_SLOW);

/* One call of method with params on a connection of its own; the reply. */
static json_t *
ended_call(const char *method, const char *params)
{
	struct h_conn	 c;
	json_t		*r;

	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect %s", H->sock);
	r = h_conn_call(&c, method, params, H_RUN_BOUND);
	h_conn_close(&c);
	cr_assert_not_null(r, "%s %s: no reply", method, params);
	return r;
}

/* A session and a member of its status, to wait for. */
struct ended_has {
	long		 id;
	const char	*path;
};

/* Poll predicate: status of the session holds the member at path. */
static bool
ended_status_has(void *arg)
{
	struct ended_has	*h = arg;
	json_t			*st = h_cli_status(h->id);
	bool			 has = h_jpath(st, h->path) != NULL;

	json_decref(st);
	return has;
}

/* Wait until status of id holds path (asserted within the bound). */
static void
ended_wait_member(long id, const char *path)
{
	struct ended_has h = { id, path };

	cr_assert(h_wait_for(ended_status_has, &h, H_WAIT_BOUND), "status "
	    "of session %ld: no %s within %d ms", id, path, H_WAIT_BOUND);
}

/* The line of `dbgctl list` for session id (malloc'd), the header in head. */
static char *
ended_list_line(long id, char **head)
{
	struct h_res	 r;
	char		 want[32], *line, *next, *found = NULL;

	h_cli(&r, H_ARGS("list"));
	cr_assert_eq(r.code, 0, "dbgctl list: exit %d (%s)", r.code, r.err);
	snprintf(want, sizeof want, "%ld ", id);
	*head = NULL;
	for (line = r.out; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (*head == NULL)
			*head = strdup(line);
		else if (strncmp(line, want, strlen(want)) == 0)
			found = strdup(line);
	}
	h_run_free(&r);
	return found;
}

/*
 * A gdb session whose target dies of SIGSEGV: list's TARGET column says
 * "faulted SIGSEGV" while the target is stopped at the fault, and the
 * rows of list --json say "faulted"; a plain exec session has "-".
 */
Test(ended, list_shows_a_faulted_target)
{
	char	 ids[32], *head, *line;
	json_t	*l, *row;
	long	 id, plain;
	size_t	 i;
	bool	 seen = false;

	id = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	plain = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	h_idstr(id, ids, sizeof ids);
	ended_wait_member(id, "fault");
	line = ended_list_line(id, &head);
	cr_assert(head != NULL && strstr(head, "TARGET") != NULL, "list's "
	    "header has no TARGET column: %s", head ? head : "(none)");
	cr_assert(line != NULL && strstr(line, "faulted SIGSEGV") != NULL,
	    "list's row of session %s (its target died of SIGSEGV) does not "
	    "say \"faulted SIGSEGV\":\n%s\n%s", ids, head, line ? line :
	    "(no row)");
	free(line);
	free(head);
	l = h_cli_json(H_ARGS("list"));
	json_array_foreach(h_jpath(l, "sessions"), i, row) {
		if (h_jint(row, "id", -1) == plain)
			cr_assert_null(h_jpath(row, "faulted"), "the exec "
			    "session's row says faulted");
		if (h_jint(row, "id", -1) != id)
			continue;
		seen = true;
		cr_assert(h_jstr(row, "faulted") != NULL &&
		    strcmp(h_jstr(row, "faulted"), "SIGSEGV") == 0, "list "
		    "--json: session %s's row has faulted %s, want SIGSEGV",
		    ids, h_jstr(row, "faulted") ? h_jstr(row, "faulted") :
		    "(none)");
	}
	cr_assert(seen, "list --json has no row of session %s", ids);
	json_decref(l);
	line = ended_list_line(plain, &head);
	cr_assert(line != NULL && strstr(line, " running  -  ") != NULL,
	    "the exec session's TARGET is not \"-\":\n%s\n%s", head, line ?
	    line : "(no row)");
	free(line);
	free(head);
}

/*
 * exec on a session that has exited says so in signal's words: "session N
 * has exited", exit 1, for a gdb session as for signal.
 */
Test(ended, exec_on_an_exited_session_says_it_has_exited)
{
	struct h_res	 r;
	char		 ids[32], want[64];
	long		 id;

	id = h_cli_launch(H_ARGS("--", h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	json_decref(h_cli_stop(id, NULL, NULL));
	snprintf(want, sizeof want, "session %s has exited", ids);
	h_cli(&r, H_ARGS("exec", ids, "--", "bt"));
	cr_assert_eq(r.code, 1, "exec on an exited session: exit %d", r.code);
	cr_assert(strstr(r.err, want) != NULL, "exec on exited session %s: "
	    "stderr \"%s\", want \"%s\"", ids, r.err, want);
	h_run_free(&r);
	h_cli(&r, H_ARGS("signal", ids, "INT"));
	cr_assert_eq(r.code, 1, "signal to an exited session: exit %d",
	    r.code);
	cr_assert(strstr(r.err, want) != NULL, "signal to exited session %s: "
	    "stderr \"%s\", want \"%s\"", ids, r.err, want);
	h_run_free(&r);
}

/* attach with no terminal on stdin names the commands that work: send, recv, logs. */
Test(ended, attach_without_a_terminal_names_send_recv_logs)
{
	struct h_res	 r;
	char		 ids[32];
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	h_idstr(id, ids, sizeof ids);
	h_cli_input(&r, "", H_ARGS("attach", ids));
	cr_assert_eq(r.code, 1, "attach with stdin a pipe: exit %d", r.code);
	cr_assert(strstr(r.err, "send") != NULL && strstr(r.err, "recv") !=
	    NULL && strstr(r.err, "logs") != NULL, "attach without a "
	    "terminal does not name send, recv and logs: %s", r.err);
	h_run_free(&r);
}

/*
 * gdbserver: quit in gdb kills the program, and the server ends with it,
 * exit code 0. That is the session's normal end: no error in status (JSON
 * or text), the exit records code 0.
 */
Test(ended, a_gdbserver_session_quit_shows_no_error)
{
	struct h_res	 r;
	char		 ids[32];
	json_t		*st;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--",
	    h_ctx_fixture("FIX_SPINNER")));
	h_idstr(id, ids, sizeof ids);
	ended_wait_member(id, "inferior_pid");
	/* gdb goes before it answers: the exec's own outcome is no matter. */
	h_cli(&r, H_ARGS("exec", ids, "--", "quit"));
	h_run_free(&r);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %s did not end after quit", ids);
	cr_assert_str_eq(h_jstr(st, "state"), "exited", "state after quit");
	cr_assert_null(h_jpath(st, "error"), "session %s quit normally, yet "
	    "status has an error: %s", ids, h_jstr(st, "error"));
	cr_assert_eq(h_jint(st, "exit.code", -1), 0, "gdb's exit code");
	cr_assert_eq(h_jint(st, "server_exit.code", -1), 0, "the server's "
	    "exit code");
	json_decref(st);
	h_cli(&r, H_ARGS("status", ids));
	cr_assert_null(strstr(r.out, "error:"), "status text of session %s "
	    "shows an error:\n%s", ids, r.out);
	h_run_free(&r);
}

/* Whether an lldb exec answers (lldb has shown its first prompt). */
static bool
ended_lldb_answers(void *arg)
{
	struct h_res	r;
	bool		ok;

	h_cli(&r, H_ARGS("exec", (const char *)arg, "--", "version"));
	ok = r.code == 0 && strstr(r.out, "lldb version") != NULL;
	h_run_free(&r);
	return ok;
}

/*
 * An lldb command that fails exits 1, as gdb's do, with lldb's words on
 * stderr; over the protocol it is debugger_error with data.class "error".
 */
Test(ended, an_lldb_command_that_fails_exits_1_with_class_error)
{
	struct h_res	 r;
	char		 ids[32], params[128];
	json_t		*rep;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "lldb", "--",
	    h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_wait_for(ended_lldb_answers, ids, H_WAIT_BOUND), "lldb "
	    "exec of session %s never answered \"version\"", ids);
	h_cli(&r, H_ARGS("exec", ids, "--", "nosuchcommand"));
	cr_assert_eq(r.code, 1, "exec of an unknown lldb command: exit %d "
	    "(stdout %s)", r.code, r.out);
	cr_assert(strstr(r.err, "not a valid command") != NULL, "stderr: %s",
	    r.err);
	h_run_free(&r);
	snprintf(params, sizeof params, "{\"session\":%ld,\"command\":"
	    "\"nosuchcommand\"}", id);
	rep = ended_call("exec", params);
	cr_assert_str_eq(h_jkind(rep), "debugger_error", "exec reply: %s",
	    json_dumps(rep, 0));
	cr_assert(h_jstr(rep, "error.data.class") != NULL &&
	    strcmp(h_jstr(rep, "error.data.class"), "error") == 0, "exec "
	    "reply has no class error: %s", json_dumps(rep, 0));
	json_decref(rep);
	h_cli(&r, H_ARGS("exec", ids, "--", "breakpoint", "set", "-n",
	    "main"));
	cr_assert_eq(r.code, 0, "a command that works: exit %d (%s)", r.code,
	    r.err);
	h_run_free(&r);
}
