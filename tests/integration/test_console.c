/*
 * The console as a person at it sees it, with a script working beside
 * them: a program resumed by exec reads what is typed (no SIGTTIN), the
 * daemon's own lines stay out of it or on lines of their own, and under
 * gdbserver the program's terminal can be attached to (attach --server).
 *
 * Clients run on ptys of the test's own (harness-pty.c). Fixtures (meson
 * passes their paths): FIX_ECHO prints its arguments and copies stdin;
 * FIX_FAULT dereferences NULL.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(console, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* The detach key of attach (^\). */
#define KEY_DETACH	"\x1c"

/* The session's log with its occurrences of text counted. */
static int
log_count(const char *ids, const char *text)
{
	char	*log = h_cli_logs(ids);
	int	 n = h_count(log, strlen(log), text);

	free(log);
	return n;
}

/*
 * A gdb session of the echo fixture stopped at main, a client attached to
 * it on p (raw, at gdb's prompt). Returns the id; ids gets it as text.
 */
static long
echo_at_main(struct h_pty *p, char *ids, size_t len)
{
	long id;

	id = h_cli_launch(H_ARGS("-x", "break main", "-x", "run", "--",
	    h_ctx_fixture("FIX_ECHO"), "typed"));
	h_idstr(id, ids, len);
	cr_assert(h_cli_wait_status(id, "target.state", "stopped",
	    H_WAIT_BOUND), "session %s never stopped at main", ids);
	h_pty_open(p, 30, 100);
	h_pty_spawn(p, H_ARGS("attach", ids));
	h_pty_expect(p, 0, "(gdb) ", H_WAIT_BOUND);
	h_pty_expect_raw(p, H_WAIT_BOUND, "once attached");
	return id;
}

/*
 * Resume the program stopped at main with `exec ID -- cmd`; type a line at
 * the attached terminal: the program answers it (its terminal echoes the
 * line, then the program copies it), and gdb never reports SIGTTIN.
 */
static void
resume_and_type(const char *cmd)
{
	struct h_pty	 p;
	struct h_res	 r;
	json_t		*st;
	char		 ids[32];
	size_t		 off;
	long		 id;

	id = echo_at_main(&p, ids, sizeof ids);
	off = p.seen.len;
	h_cli(&r, H_ARGS("exec", ids, "--", cmd));
	cr_assert_eq(r.code, 0, "exec %s -- %s: exit %d (%s)", ids, cmd,
	    r.code, r.err);
	h_run_free(&r);
	/* The program runs once it prints its arguments. */
	off = h_pty_expect(&p, off, "arg1=[typed]", H_WAIT_BOUND);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "after exec %s the target is not running", cmd);
	h_pty_type(&p, "line-for-the-program\r", 21);
	h_pty_expect(&p, off, "line-for-the-program\r\nline-for-the-program"
	    "\r\n", H_WAIT_BOUND);
	cr_assert_eq(log_count(ids, "SIGTTIN"), 0, "after exec -- %s the "
	    "program was stopped reading its terminal:\n%s", cmd,
	    h_pty_screen(&p));
	h_cli_expect_state(id, "running", "after the program read its line");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "target.state"), "running", "the program "
	    "stopped after it read its line:\n%s", h_pty_screen(&p));
	json_decref(st);
	/* ^D at its terminal is the end of its input: it exits 3. */
	h_pty_type(&p, "\x04", 1);
	cr_assert(h_cli_wait_status(id, "target.state", "exited",
	    H_WAIT_BOUND), "^D did not end the program's input:\n%s",
	    h_pty_screen(&p));
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\");
	h_pty_close(&p);
}

/* exec -- continue: the resumed program reads the console, no SIGTTIN. */
Test(console, exec_continue_lets_the_program_read_the_console)
{
	resume_and_type("continue");
}

/* exec -- -exec-continue (MI) does the same. */
Test(console, exec_mi_continue_lets_the_program_read_the_console)
{
	resume_and_type("-exec-continue");
}

/* The MI channel's "New UI allocated" never reaches the console. */
Test(console, new_ui_message_stays_off_the_console)
{
	struct h_res	 r;
	char		 ids[32];
	long		 id;

	id = h_cli_launch(H_ARGS("--", h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	h_cli_wait_log(ids, "(gdb) ", H_WAIT_BOUND);
	/* MI answers: the channel is made, and its message would be in. */
	h_cli(&r, H_ARGS("exec", ids, "--", "-gdb-version"));
	cr_assert_eq(r.code, 0, "exec -gdb-version: exit %d (%s)", r.code,
	    r.err);
	h_run_free(&r);
	cr_assert_eq(log_count(ids, "New UI allocated"), 0, "the console "
	    "shows the daemon's new-ui:\n%s", h_cli_logs(ids));
}

/* gdb's answer to -gdb-show of a setting of session ids ("" if none). */
static char *
console_show(const char *ids, const char *setting)
{
	json_t	*j;
	char	*v;

	j = h_cli_json(H_ARGS("exec", ids, "--", "-gdb-show", setting));
	v = strdup(h_jstr(j, "results.value") ? h_jstr(j, "results.value") :
	    "");
	json_decref(j);
	return v;
}

/*
 * Opening the MI channel leaves the user's logging as gdb's defaults
 * have it, says nothing of it on the console, and the session's script
 * for it is gone once the session ends.
 */
Test(console, the_mi_channel_leaves_logging_as_it_was)
{
	static const char *const want[][2] = { { "logging enabled", "off" },
	    { "logging redirect", "off" }, { "logging file", "gdb.txt" } };
	char	 ids[32], path[PATH_MAX], *v;
	size_t	 i;
	long	 id;

	id = h_cli_launch(H_ARGS("--", h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	h_cli_wait_log(ids, "(gdb) ", H_WAIT_BOUND);
	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		v = console_show(ids, want[i][0]);
		cr_assert_str_eq(v, want[i][1], "%s after the MI channel was "
		    "opened", want[i][0]);
		free(v);
	}
	cr_assert_eq(log_count(ids, "logging") + log_count(ids, "Redirecting") +
	    log_count(ids, "Copying output"), 0, "the console speaks of "
	    "logging:\n%s", h_cli_logs(ids));
	json_decref(h_cli_stop(id, NULL, NULL));
	snprintf(path, sizeof path, "%s/sessions/%ld.mi.gdb", H->state, id);
	cr_assert_neq(access(path, F_OK), 0, "%s is left after the session "
	    "ended", path);
}

/*
 * What the console printed after the fault notice's last line (malloc'd),
 * or NULL while nothing follows it.
 */
static char *
after_notice(const char *ids)
{
	char	*log = h_cli_logs(ids), *at, *next, *rest = NULL;

	if ((at = strstr(log, "[dbgctl] fault:")) != NULL) {
		while ((next = strstr(at, "\n[dbgctl] ")) != NULL)
			at = next + 1;
		if ((next = strchr(at, '\n')) != NULL && next[1] != '\0')
			rest = strdup(next + 1);
	}
	free(log);
	return rest;
}

/* Predicate: a prompt follows the fault notice. */
static bool
prompt_after_notice(void *ids)
{
	char	*rest = after_notice(ids);
	bool	 yes = rest != NULL && strstr(rest, "(gdb) ") != NULL;

	free(rest);
	return yes;
}

/*
 * The fault notice starts a line of its own, never after "(gdb) ", and a
 * prompt is drawn on the line after it, so the person at the console sees
 * where to type.
 */
Test(console, fault_notice_is_on_its_own_line_before_a_prompt)
{
	char	 ids[32], *log, *at, *rest;
	long	 id;

	id = h_cli_launch(H_ARGS("-x", "run", "--", h_ctx_fixture("FIX_FAULT")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "fault.signal", "SIGSEGV",
	    H_WAIT_BOUND), "no fault record");
	h_cli_wait_log(ids, "[dbgctl] fault:", H_WAIT_BOUND);
	log = h_cli_logs(ids);
	at = strstr(log, "[dbgctl] fault:");
	cr_assert(at > log && at[-1] == '\n', "the fault notice does not "
	    "start a line: \"%s\"", h_shown(log, at + 16 - log, 80));
	free(log);
	cr_assert(h_wait_for(prompt_after_notice, ids, H_WAIT_BOUND), "no "
	    "prompt after the fault notice:\n%s", h_cli_logs(ids));
	rest = after_notice(ids);
	cr_assert(strstr(rest, "(gdb) ") < strchr(rest, '\n') ||
	    strchr(rest, '\n') == NULL, "the line after the notice is not a "
	    "prompt: \"%s\"", h_shown(rest, strlen(rest), 80));
	free(rest);
}

/*
 * A gdbserver session: plain attach types into gdb; attach --server types
 * into the server's terminal, where the program reads and answers.
 */
Test(console, attach_server_reaches_the_program_under_gdbserver)
{
	struct h_pty	 p;
	struct h_res	 r;
	char		 ids[32];
	size_t		 off;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "-x", "break main",
	    "-x", "continue", "--", h_ctx_fixture("FIX_ECHO"), "served"));
	h_idstr(id, ids, sizeof ids);
	/* The stop at the server's start comes first: wait for main's. */
	h_cli_wait_log(ids, "Breakpoint 1, ", H_WAIT_BOUND);
	cr_assert(h_cli_wait_status(id, "target.state", "stopped",
	    H_WAIT_BOUND), "session %s never stopped at main", ids);
	/* Plain attach: gdb's console. */
	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	off = h_pty_expect(&p, 0, "(gdb) ", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "once attached");
	h_pty_type(&p, "print 6*7\r", 10);
	h_pty_expect(&p, off, "= 42", H_WAIT_BOUND);
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\");
	h_pty_close(&p);

	h_cli(&r, H_ARGS("exec", ids, "--", "continue"));
	cr_assert_eq(r.code, 0, "exec continue: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	h_cli_wait_log(ids, "arg1=[served]", H_WAIT_BOUND);
	/* attach --server: the program's terminal, both ways. */
	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("attach", "--server", ids));
	off = h_pty_expect(&p, 0, "arg1=[served]", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "once attached to the server");
	h_pty_type(&p, "to-the-server\r", 14);
	h_pty_expect(&p, off, "to-the-server\r\nto-the-server\r\n",
	    H_WAIT_BOUND);
	cr_assert_eq(log_count(ids, "Undefined command"), 0, "gdb took the "
	    "line typed at the server's terminal:\n%s", h_pty_screen(&p));
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\ from the server");
	h_pty_close(&p);
}

/*
 * attach --server on a session without a server is refused with the
 * reason (exit 1); attach's reply names the terminal it reaches.
 */
Test(console, attach_server_needs_a_server)
{
	struct h_conn	 c;
	struct h_pty	 p;
	json_t		*rep;
	char		 ids[32], params[96];
	long		 id;

	id = h_cli_launch(H_ARGS("--", h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	h_cli_wait_log(ids, "(gdb) ", H_WAIT_BOUND);
	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("attach", "--server", ids));
	h_pty_expect(&p, 0, "has no server", H_WAIT_BOUND);
	h_pty_expect_exit(&p, 1, H_WAIT_BOUND, "attach --server refused");
	h_pty_expect_restored(&p, "attach --server refused");
	h_pty_close(&p);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(params, sizeof params, "{\"session\":%ld,\"server\":true}",
	    id);
	rep = h_conn_call(&c, "attach", params, H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(rep), "not_supported", "attach with "
	    "\"server\" on a gdb session: %s", json_dumps(rep, 0));
	json_decref(rep);
	snprintf(params, sizeof params, "{\"session\":%ld}", id);
	rep = h_conn_call(&c, "attach", params, H_WAIT_BOUND);
	cr_assert_str_eq(h_jstr(rep, "result.terminal"), "console",
	    "attach's reply names no terminal: %s", json_dumps(rep, 0));
	json_decref(rep);
	h_conn_close(&c);
}
