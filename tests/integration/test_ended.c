/*
 * What a person sees of sessions that faulted or ended: list's TARGET
 * column with the fault, rm and prune of ended sessions (a live one
 * refused, naming stop) and how long ended ones are kept, one wording
 * for a session that has exited, an lldb command that failed, a
 * gdbserver session quit normally, and the core file's path and mode.
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

/* The path of session id's file with suffix (".log", ".core") into buf. */
static const char *
ended_file(char *buf, size_t len, long id, const char *suffix)
{
	snprintf(buf, len, "%s/sessions/%ld%s", H->state, id, suffix);
	return buf;
}

/* Whether a path exists (not following a link). */
static bool
ended_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

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

/* Whether session ids is no longer known to status (arg: the id string). */
static bool
ended_forgotten(void *arg)
{
	struct h_res	r;
	bool		gone;

	h_cli(&r, H_ARGS("status", (const char *)arg));
	gone = r.code == 1 && strstr(r.err, "no session") != NULL;
	h_run_free(&r);
	return gone;
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
 * rm of an ended session: exit 0, status then says there is no such
 * session, and its log is gone with it; list no longer shows it.
 */
Test(ended, rm_removes_an_ended_session_and_its_log)
{
	struct h_res	 r;
	char		 ids[32], log[PATH_MAX];
	json_t		*st;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	h_idstr(id, ids, sizeof ids);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %s did not end", ids);
	json_decref(st);
	ended_file(log, sizeof log, id, ".log");
	cr_assert(ended_exists(log), "no log %s before rm", log);
	h_cli(&r, H_ARGS("rm", ids));
	cr_assert_eq(r.code, 0, "dbgctl rm %s (ended): exit %d, stderr: %s",
	    ids, r.code, r.err);
	h_run_free(&r);
	cr_assert(ended_forgotten(ids), "status %s after rm: still known",
	    ids);
	cr_assert(!ended_exists(log), "rm %s left its log %s", ids, log);
	h_cli_expect_list(0, NULL, "after rm of the only session");
}

/*
 * rm of a live session is refused, all or none: exit 1 with an error that
 * names stop, and neither it nor the ended one named with it is removed.
 */
Test(ended, rm_refuses_a_live_session_naming_stop)
{
	struct h_res	 r;
	char		 live[32], done[32], log[PATH_MAX];
	json_t		*st;
	long		 id, old;

	old = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	st = h_cli_wait_ended(old, H_WAIT_BOUND);
	json_decref(st);
	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	h_idstr(id, live, sizeof live);
	h_idstr(old, done, sizeof done);
	h_cli(&r, H_ARGS("rm", done, live));
	cr_assert_eq(r.code, 1, "dbgctl rm of a running session: exit %d "
	    "(stdout %s, stderr %s), want 1", r.code, r.out, r.err);
	cr_assert(strstr(r.err, "stop") != NULL && strstr(r.err, live) !=
	    NULL, "rm of running session %s: the error does not name stop "
	    "and the session: %s", live, r.err);
	h_run_free(&r);
	h_cli_expect_state(id, "running", "after a refused rm");
	h_cli_expect_state(old, "exited", "after an rm refused for another");
	cr_assert(ended_exists(ended_file(log, sizeof log, old, ".log")),
	    "a refused rm removed %s", log);
}

/* rm --keep-files: the session goes, its log stays. */
Test(ended, rm_keep_files_keeps_the_log)
{
	struct h_res	 r;
	char		 ids[32], log[PATH_MAX];
	json_t		*st;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	h_idstr(id, ids, sizeof ids);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	json_decref(st);
	h_cli(&r, H_ARGS("rm", "--keep-files", ids));
	cr_assert_eq(r.code, 0, "dbgctl rm --keep-files %s: exit %d (%s)",
	    ids, r.code, r.err);
	h_run_free(&r);
	cr_assert(ended_forgotten(ids), "status %s after rm: still known",
	    ids);
	cr_assert(ended_exists(ended_file(log, sizeof log, id, ".log")),
	    "rm --keep-files removed %s", log);
}

/*
 * prune removes every ended session and says how many; the live one stays.
 * Over the protocol, remove answers the ids, and refuses a live one with
 * busy and an unknown one with no_such_session.
 */
Test(ended, prune_removes_every_ended_session_only)
{
	struct h_res	 r;
	char		 params[128];
	json_t		*st, *rep;
	long		 a, b, live, c;

	a = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	b = h_cli_launch(H_ARGS("--kind", "exec", "--", "false"));
	live = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	json_decref(h_cli_wait_ended(a, H_WAIT_BOUND));
	json_decref(h_cli_wait_ended(b, H_WAIT_BOUND));
	h_cli(&r, H_ARGS("prune"));
	cr_assert_eq(r.code, 0, "dbgctl prune: exit %d (%s)", r.code, r.err);
	cr_assert_str_eq(r.out, "removed 2 sessions\n", "dbgctl prune said "
	    "\"%s\"", r.out);
	h_run_free(&r);
	h_cli_expect_list(1, "running", "after prune");
	snprintf(params, sizeof params, "{\"sessions\":[%ld]}", live);
	rep = ended_call("remove", params);
	cr_assert_str_eq(h_jkind(rep), "busy", "remove of a live session: "
	    "%s", json_dumps(rep, 0));
	json_decref(rep);
	rep = ended_call("remove", "{\"sessions\":[99999]}");
	cr_assert_str_eq(h_jkind(rep), "no_such_session", "remove of no "
	    "session: %s", json_dumps(rep, 0));
	json_decref(rep);
	c = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	st = h_cli_wait_ended(c, H_WAIT_BOUND);
	json_decref(st);
	snprintf(params, sizeof params, "{\"session\":%ld}", c);
	rep = ended_call("remove", params);
	cr_assert(json_array_size(h_jpath(rep, "result.removed")) == 1 &&
	    json_integer_value(json_array_get(h_jpath(rep, "result.removed"),
	    0)) == c, "remove's result: %s", json_dumps(rep, 0));
	json_decref(rep);
	rep = ended_call("prune", "{}");
	cr_assert_eq(json_array_size(h_jpath(rep, "result.removed")), 0,
	    "prune with nothing ended: %s", json_dumps(rep, 0));
	json_decref(rep);
}

/*
 * Ended sessions are kept DBGCTLD_KEEP_ENDED_SECONDS at most: with 1, an
 * ended session is forgotten within the bound (its log stays, as when the
 * number kept is passed), and a live one is not.
 */
Test(ended, ended_sessions_are_forgotten_after_the_time_kept)
{
	char	 ids[32], log[PATH_MAX];
	json_t	*st;
	long	 id, live;

	h_ctx_env_add("DBGCTLD_KEEP_ENDED_SECONDS=1");
	h_daemon_fg();
	live = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	h_idstr(id, ids, sizeof ids);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %s did not end", ids);
	json_decref(st);
	cr_assert(h_wait_for(ended_forgotten, ids, H_WAIT_BOUND), "session "
	    "%s, ended, is still known %d ms later, keeping ended sessions "
	    "1 s", ids, H_WAIT_BOUND);
	cr_assert(ended_exists(ended_file(log, sizeof log, id, ".log")),
	    "the forgotten session's log %s is gone", log);
	h_cli_expect_state(live, "running", "after an ended session expired");
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

/* attach with no terminal names the commands that work: send, recv, logs. */
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
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "lldb "
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

/*
 * launch --core of a faulting program: the core file is written 0600, as
 * the log is, and status prints its path on a line of its own; rm of the
 * stopped session removes the core with the log.
 */
Test(ended, status_shows_the_core_written_0600)
{
	struct h_res	 r;
	struct stat	 st;
	char		 ids[32], core[PATH_MAX], line[PATH_MAX + 16];
	json_t		*s;
	long		 id;

	id = h_cli_launch(H_ARGS("--core", "-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	h_idstr(id, ids, sizeof ids);
	ended_wait_member(id, "fault.core");
	s = h_cli_status(id);
	snprintf(core, sizeof core, "%s", h_jstr(s, "fault.core"));
	json_decref(s);
	cr_assert_eq(lstat(core, &st), 0, "no core file at %s", core);
	cr_assert_eq(st.st_mode & 07777, 0600, "the core %s has mode %o, "
	    "want 0600 (as the logs)", core, (unsigned)(st.st_mode & 07777));
	h_cli(&r, H_ARGS("status", ids));
	snprintf(line, sizeof line, "\ncore: %s\n", core);
	cr_assert_not_null(strstr(r.out, line), "status %s has no line "
	    "\"core: %s\":\n%s", ids, core, r.out);
	h_run_free(&r);
	json_decref(h_cli_stop(id, NULL, NULL));
	h_cli(&r, H_ARGS("rm", ids));
	cr_assert_eq(r.code, 0, "rm %s: exit %d (%s)", ids, r.code, r.err);
	h_run_free(&r);
	cr_assert(!ended_exists(core), "rm %s left its core %s", ids, core);
}

/*
 * A link planted where the core goes is not followed: there is no core,
 * the fault record says why, and the file the link names stays as it was.
 */
Test(ended, a_link_planted_at_the_core_is_not_followed)
{
	char	 ids[32], core[PATH_MAX], victim[PATH_MAX];
	const char	*step;
	json_t	*s;
	long	 id;

	id = h_cli_launch(H_ARGS("--core", "--", h_ctx_fixture("FIX_FAULT")));
	h_idstr(id, ids, sizeof ids);
	ended_file(core, sizeof core, id, ".core");
	h_ctx_path(victim, sizeof victim, "victim");
	cr_assert_eq(symlink(victim, core), 0, "symlink %s", core);
	json_decref(h_cli_json(H_ARGS("exec", ids, "--", "run")));
	ended_wait_member(id, "fault");
	s = h_cli_status(id);
	cr_assert_null(h_jpath(s, "fault.core"), "a core at a planted link: "
	    "%s", h_jstr(s, "fault.core"));
	cr_assert_not_null(h_jpath(s, "fault.incomplete"), "the record does "
	    "not say why there is no core");
	step = json_string_value(json_object_get(json_array_get(h_jpath(s,
	    "fault.incomplete"), 0), "step"));
	cr_assert_str_eq(step != NULL ? step : "(none)", "core", "the step "
	    "the record names as incomplete");
	json_decref(s);
	cr_assert(!ended_exists(victim), "gdb wrote the core through the "
	    "link %s to %s", core, victim);
}

/*
 * A subscriber to an ended session's target output may hold the last
 * reference once rm has dropped the table's: its leaving frees the session
 * and the daemon goes on (under ASan, a use after that free aborts it).
 */
Test(ended, rm_while_a_subscriber_holds_the_session)
{
	struct h_conn	 c;
	struct h_res	 r;
	char		 ids[32], params[128];
	json_t		*st;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "true"));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect %s", H->sock);
	snprintf(params, sizeof params, "{\"session\":%ld,\"streams\":"
	    "[\"target\"]}", id);
	st = h_conn_call(&c, "subscribe", params, H_RUN_BOUND);
	cr_assert_not_null(st, "subscribe: no reply");
	json_decref(st);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %s did not end", ids);
	json_decref(st);
	h_cli(&r, H_ARGS("rm", ids));
	cr_assert_eq(r.code, 0, "rm %s: exit %d (%s)", ids, r.code, r.err);
	h_run_free(&r);
	h_conn_close(&c);
	h_cli(&r, H_ARGS("ping"));
	cr_assert_eq(r.code, 0, "ping after the subscriber left: exit %d (%s)",
	    r.code, r.err);
	h_run_free(&r);
}

/* An array param names at most 1024 sessions; more is refused whole. */
Test(ended, remove_refuses_more_than_1024_sessions)
{
	json_t	*st, *r, *err;
	char	*params, *p;
	long	 id;
	int	 i;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	json_decref(st);
	p = params = malloc(1025 * 24 + 32);
	cr_assert_not_null(params);
	p += sprintf(p, "{\"sessions\":[");
	for (i = 0; i < 1025; i++)
		p += sprintf(p, "%s%ld", i > 0 ? "," : "", id);
	sprintf(p, "]}");
	r = ended_call("remove", params);
	free(params);
	err = json_object_get(r, "error");
	cr_assert_not_null(err, "remove of 1025 sessions was not refused");
	cr_assert(strstr(json_string_value(json_object_get(err, "message")),
	    "at most 1024") != NULL, "the refusal does not name the limit: %s",
	    json_string_value(json_object_get(err, "message")));
	json_decref(r);
	h_cli_expect_state(id, "exited", "after a refused remove");
}
