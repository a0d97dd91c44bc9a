/*
 * The terminal is left exactly as found: dbgctl attach on a pty the test
 * owns, every byte the client writes to it recorded, driven as a user at
 * a terminal would. Checked: the modes a full-screen program set (the
 * alternate screen, a hidden cursor, keypad keys, bracketed paste, mouse
 * and focus reports, attributes, a scroll region) are undone on every way
 * out (the detach key, SIGHUP, SIGTERM, the session stopped from outside,
 * the daemon killed), also when the client attached long after they were
 * set; the termios modes are bit-identical; attaching says how to leave
 * and -q keeps quiet; the end says how the session ended; ^Z typed into
 * an attached gdb is shown (status, a notification, the console, exec's
 * error) and the next key resumes it, as `dbgctl signal S CONT` does, and
 * exec answers again.
 *
 * Fixtures (meson passes their paths): FIX_MODES sets the modes top sets
 * and waits for input; FIX_ECHO is a small program for gdb to load.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(term, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 90);

/* The detach key of attach (^\). */
#define KEY_DETACH	"\x1c"

/* What undoes each mode FIX_MODES sets, as the client must write it. */
static const char *const modes_resets[] = {
	"\033[?1049l",		/* the alternate screen */
	"\033[23;0t",		/* the title ncurses pushed with it */
	"\033[?25h",		/* the cursor shown again */
	"\033[?1l",		/* normal cursor keys */
	"\033>",		/* numeric keypad */
	"\033[?2004l",		/* no bracketed paste */
	"\033[?1000l",		/* no mouse reports */
	"\033[?1006l",
	"\033[?1004l",		/* no focus reports */
	"\033[0m",		/* plain attributes */
	"\033[r",		/* the whole screen scrolls */
	NULL
};

/* An exec session of FIX_MODES (with arg, or NULL); its id as ids too. */
static long
launch_modes(const char *arg, char *ids, size_t len)
{
	const char *modes = h_ctx_fixture("FIX_MODES");
	long id;

	id = arg != NULL ? h_cli_launch_exec(NULL, H_ARGS(modes, arg)) :
	    h_cli_launch_exec(NULL, H_ARGS(modes));
	h_idstr(id, ids, len);
	return id;
}

/* dbgctl attach [extra] ID on a fresh pty; the offset past ready, raw. */
static size_t
attach_pty(struct h_pty *p, const char *ids, const char *extra,
    const char *ready)
{
	size_t off;

	h_pty_open(p, 30, 100);
	if (extra != NULL)
		h_pty_spawn(p, H_ARGS("attach", extra, ids));
	else
		h_pty_spawn(p, H_ARGS("attach", ids));
	off = h_pty_expect(p, 0, ready, H_WAIT_BOUND);
	h_pty_expect_raw(p, H_WAIT_BOUND, "once attached");
	return off;
}

/*
 * Assert every reset of FIX_MODES's modes is in what followed from; but
 * the attributes' if sgr is false (the terminal never got them).
 */
static void
expect_resets_of(struct h_pty *p, size_t from, bool sgr, const char *when)
{
	size_t i, len = p->seen.len > from ? p->seen.len - from : 0;

	for (i = 0; modes_resets[i] != NULL; i++)
		cr_assert((!sgr && strcmp(modes_resets[i], "\033[0m") == 0) ||
		    memmem(p->seen.p + from, len, modes_resets[i],
		    strlen(modes_resets[i])) != NULL, "dbgctl %s %s: the "
		    "terminal did not get \"%s\" to undo the mode the session "
		    "set; after the session's last output it got:\n%s", p->cmd,
		    when, h_shown(modes_resets[i], strlen(modes_resets[i]), 40),
		    h_shown(p->seen.p + from, len, 1500));
}

/* Assert every reset of FIX_MODES's modes is in what followed from. */
static void
expect_resets(struct h_pty *p, size_t from, const char *when)
{
	expect_resets_of(p, from, true, when);
}

/* ^\ detaches: every mode the session set is undone, termios restored. */
Test(term, detach_key_undoes_modes)
{
	char ids[32], want[96];
	struct h_pty p;
	size_t off;
	long id;

	id = launch_modes(NULL, ids, sizeof(ids));
	off = attach_pty(&p, ids, NULL, "modes-ready");
	snprintf(want, sizeof(want), "[attached to session %ld (exec); "
	    "detach: Ctrl-\\]", id);
	cr_assert(memmem(p.seen.p, p.seen.len, want, strlen(want)) != NULL,
	    "dbgctl %s: expected \"%s\" on attaching; its terminal shows:\n%s",
	    p.cmd, want, h_pty_screen(&p));
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\");
	expect_resets(&p, off, "after ^\\");
	snprintf(want, sizeof(want), "[detached from session %ld]", id);
	h_pty_expect(&p, off, want, H_WAIT_BOUND);
	h_pty_expect_restored(&p, "after ^\\");
	h_cli_expect_state(id, "running", "after the detach");
	h_pty_close(&p);
}

/* A signal to the client: it undoes the modes, then dies of it. */
static void
signal_undoes_modes(int sig)
{
	char ids[32], ws[96], when[64];
	struct h_pty p;
	size_t off;
	long id;

	id = launch_modes(NULL, ids, sizeof(ids));
	off = attach_pty(&p, ids, NULL, "modes-ready");
	snprintf(when, sizeof(when), "after SIG%s", sigabbrev_np(sig));
	cr_assert_eq(kill(p.pid, sig), 0, "kill: %s", strerror(errno));
	cr_assert(h_pty_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still running "
	    "%d ms %s", p.cmd, H_WAIT_BOUND, when);
	cr_assert(WIFSIGNALED(p.status) && WTERMSIG(p.status) == sig,
	    "dbgctl %s %s: expected it to die of it, got %s", p.cmd, when,
	    h_run_wstatus(p.status, ws, sizeof(ws)));
	expect_resets(&p, off, when);
	h_pty_expect_restored(&p, when);
	h_cli_expect_state(id, "running", when);
	h_pty_close(&p);
}

Test(term, sighup_undoes_modes)
{
	signal_undoes_modes(SIGHUP);
}

Test(term, sigterm_undoes_modes)
{
	signal_undoes_modes(SIGTERM);
}

/* Predicate: the pid is stopped (state T in /proc/PID/stat). */
static bool
is_stopped(void *arg)
{
	return h_pid_state(*(pid_t *)arg) == 'T';
}

/*
 * SIGTSTP to the client: the modes are undone while it is stopped, set
 * again when it is continued, and undone once more at the detach.
 */
Test(term, sigtstp_undoes_modes_while_stopped)
{
	char ids[32];
	struct h_pty p;
	size_t off;

	launch_modes(NULL, ids, sizeof(ids));
	off = attach_pty(&p, ids, NULL, "modes-ready");
	cr_assert_eq(kill(p.pid, SIGTSTP), 0, "kill: %s", strerror(errno));
	cr_assert(h_wait_for(is_stopped, &p.pid, H_WAIT_BOUND), "dbgctl %s: "
	    "not stopped after SIGTSTP", p.cmd);
	h_pty_pump(&p, 100);
	expect_resets(&p, off, "stopped by SIGTSTP");
	h_pty_expect_restored(&p, "stopped by SIGTSTP");
	off = p.seen.len;
	cr_assert_eq(kill(p.pid, SIGCONT), 0, "kill: %s", strerror(errno));
	off = h_pty_expect(&p, off, "\033[?1049h", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "after SIGCONT");
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after SIGTSTP, SIGCONT, ^\\");
	expect_resets_of(&p, off, false, "after SIGTSTP, SIGCONT and ^\\");
	h_pty_expect_restored(&p, "after SIGTSTP, SIGCONT and ^\\");
	h_pty_close(&p);
}

/*
 * The session stopped from outside: the modes are undone and the client
 * says how the session ended, from its exit record.
 */
Test(term, session_stopped_undoes_modes_and_says_so)
{
	char ids[32], want[96];
	struct h_pty p;
	struct h_res r;
	size_t off;
	long id;

	id = launch_modes(NULL, ids, sizeof(ids));
	off = attach_pty(&p, ids, NULL, "modes-ready");
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: %s",
	    ids, r.err);
	h_run_free(&r);
	cr_assert(h_pty_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still running "
	    "after its session was stopped", p.cmd);
	expect_resets(&p, off, "after its session was stopped");
	snprintf(want, sizeof(want), "[session %ld ended: signal 15 (TERM), by "
	    "term]", id);
	h_pty_expect(&p, off, want, H_WAIT_BOUND);
	h_pty_expect_restored(&p, "after its session was stopped");
	h_pty_close(&p);
}

/*
 * The daemon SIGKILLed under the client, its session gone with it (no
 * adoption): the modes are undone all the same.
 */
Test(term, daemon_killed_undoes_modes)
{
	char ids[32];
	struct h_pty p;
	size_t off;
	pid_t d;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=0");
	launch_modes(NULL, ids, sizeof(ids));
	off = attach_pty(&p, ids, NULL, "modes-ready");
	d = h_daemon_pid();
	cr_assert_gt(d, 0, "no daemon answers hello");
	cr_assert_eq(kill(d, SIGKILL), 0, "kill %d: %s", d, strerror(errno));
	cr_assert(h_pty_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still running "
	    "after the daemon was SIGKILLed", p.cmd);
	expect_resets(&p, off, "after the daemon was SIGKILLed");
	h_pty_expect_restored(&p, "after the daemon was SIGKILLed");
	h_pty_close(&p);
}

/*
 * Attaching long after the modes were set (past the replayed lines): the
 * terminal is put into them, and they are undone at the detach.
 */
Test(term, late_attach_knows_modes)
{
	char ids[32];
	struct h_pty p;
	size_t off;

	launch_modes("filler", ids, sizeof(ids));
	h_cli_wait_log(ids, "modes-ready", H_WAIT_BOUND);
	off = attach_pty(&p, ids, NULL, "modes-ready");
	cr_assert(memmem(p.seen.p, off, "\033[?1049h", 8) != NULL &&
	    memmem(p.seen.p, off, "\033[?25l", 6) != NULL, "dbgctl %s: the "
	    "terminal was not put into the session's alternate screen and "
	    "hidden cursor on attaching; it got:\n%s", p.cmd,
	    h_shown(p.seen.p, off < 400 ? off : 400, 400));
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\");
	/* Its attributes were set before the replay: the terminal has none. */
	expect_resets_of(&p, off, false, "after ^\\ (attached late)");
	h_pty_expect_restored(&p, "after ^\\ (attached late)");
	h_pty_close(&p);
}

/* A session that sets no mode: nothing but its output and our lines. */
Test(term, plain_session_gets_no_resets)
{
	char ids[32];
	struct h_pty p;
	size_t off;
	long id;

	id = h_cli_launch_sh(NULL, "echo plain-ready; exec sleep 300");
	h_idstr(id, ids, sizeof(ids));
	off = attach_pty(&p, ids, NULL, "plain-ready");
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\");
	cr_assert(memchr(p.seen.p + off, '\033', p.seen.len - off) == NULL,
	    "dbgctl %s: wrote escape sequences although the session set no "
	    "mode:\n%s", p.cmd, h_shown(p.seen.p + off, p.seen.len - off,
	    500));
	h_pty_close(&p);
}

/* -q: no line of the client's own, on attaching or detaching. */
Test(term, quiet_attach_prints_nothing_of_its_own)
{
	char ids[32];
	struct h_pty p;
	long id;

	id = h_cli_launch_sh(NULL, "echo quiet-ready; exec sleep 300");
	h_idstr(id, ids, sizeof(ids));
	attach_pty(&p, ids, "-q", "quiet-ready");
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\ (-q)");
	cr_assert(memmem(p.seen.p, p.seen.len, "[attached", 9) == NULL &&
	    memmem(p.seen.p, p.seen.len, "[detached", 9) == NULL,
	    "dbgctl %s: printed its own lines although -q was given:\n%s",
	    p.cmd, h_pty_screen(&p));
	h_pty_expect_restored(&p, "after ^\\ (-q)");
	h_pty_close(&p);
}

/* A gdb session with TERM=xterm and the given -x command; its id. */
static long
launch_gdb(const char *cmd, char *ids, size_t len)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	long id;

	if (cmd != NULL)
		id = h_cli_launch(H_ARGS("--env", "TERM=xterm", "-x", cmd,
		    "--", echo));
	else
		id = h_cli_launch(H_ARGS("--env", "TERM=xterm", "--", echo));
	h_idstr(id, ids, len);
	return id;
}

/* gdb's TUI, entered while attached: its alternate screen is left at detach. */
Test(term, gdb_tui_alternate_screen_left)
{
	char ids[32];
	struct h_pty p;
	size_t off;

	launch_gdb(NULL, ids, sizeof(ids));
	off = attach_pty(&p, ids, NULL, "(gdb) ");
	h_pty_type(&p, "tui enable\r", 11);
	off = h_pty_expect(&p, off, "\033[?1049h", H_WAIT_BOUND);
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\ from gdb's TUI");
	cr_assert(memmem(p.seen.p + off, p.seen.len - off, "\033[?1049l", 8) !=
	    NULL, "dbgctl %s: gdb's TUI alternate screen was not left at the "
	    "detach; after it was entered the terminal got:\n%s", p.cmd,
	    h_shown(p.seen.p + off, p.seen.len - off, 1500));
	h_pty_expect_restored(&p, "after ^\\ from gdb's TUI");
	h_pty_close(&p);
}

/* Predicate: the status of session *arg has no "suspended" member. */
static bool
not_suspended(void *arg)
{
	json_t *st = h_cli_status(*(long *)arg);
	bool none = h_jpath(st, "suspended") == NULL;

	json_decref(st);
	return none;
}

/* Assert `dbgctl exec ID -- print 6*7` answers $N = 42; when: messages. */
static void
expect_exec_answers(const char *ids, const char *when)
{
	struct h_res r;

	h_cli(&r, H_ARGS("exec", "--timeout", "20000", ids, "--",
	    "print 6*7"));
	cr_assert(r.code == 0 && strstr(r.out, "= 42") != NULL, "dbgctl exec "
	    "%s -- print 6*7 %s: expected exit 0 and \"= 42\", got %d, "
	    "stdout: %s, stderr: %s", ids, when, r.code, r.out, r.err);
	h_run_free(&r);
}

/*
 * ^Z typed into an attached gdb: gdb stops, and it is shown (status,
 * a session.state notification, a line on the terminal); resumed by
 * resume (a key typed, or dbgctl signal CONT), exec answers again.
 */
static void
ctrl_z_shown_then_resumed(bool by_key)
{
	char ids[32];
	struct h_pty p;
	struct h_conn c;
	struct h_res r;
	size_t off;
	pid_t gdb;
	long id;

	id = launch_gdb(NULL, ids, sizeof(ids));
	expect_exec_answers(ids, "before ^Z");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	json_decref(h_conn_call(&c, "subscribe", "{\"output\":false}", 10000));
	off = attach_pty(&p, ids, NULL, "(gdb) ");
	gdb = h_cli_status_pid(id, "pid");

	h_pty_type(&p, "\x1a", 1);
	cr_assert(h_cli_wait_status(id, "suspended.name", "SIGTSTP",
	    H_WAIT_BOUND), "dbgctl status %s: not shown suspended (SIGTSTP) "
	    "after ^Z; gdb (pid %d) is in state %c", ids, gdb,
	    h_pid_state(gdb) ? h_pid_state(gdb) : '-');
	cr_assert(h_conn_wait_note(&c, "session.state",
	    "params.suspended.name", "SIGTSTP", H_WAIT_BOUND), "no "
	    "session.state notification with suspended SIGTSTP after ^Z");
	off = h_pty_expect(&p, off, "suspended (SIGTSTP)", H_WAIT_BOUND);
	h_cli(&r, H_ARGS("status", ids));
	cr_assert(strstr(r.out, "suspended: SIGTSTP") != NULL, "dbgctl status "
	    "%s after ^Z: expected \"suspended: SIGTSTP\", got:\n%s", ids,
	    r.out);
	h_run_free(&r);
	h_cli(&r, H_ARGS("exec", ids, "--", "print 6*7"));
	cr_assert(r.code == 1 && strstr(r.err, "suspended (SIGTSTP)") != NULL &&
	    r.elapsed < 10, "dbgctl exec %s while suspended: expected exit 1 "
	    "at once saying it is suspended, got %d after %.1f s: %s", ids,
	    r.code, r.elapsed, r.err);
	h_run_free(&r);

	if (by_key)
		h_pty_type(&p, "x", 1);
	else {
		cr_assert_eq(h_cli(&r, H_ARGS("signal", ids, "CONT")), 0,
		    "dbgctl signal %s CONT: %s", ids, r.err);
		h_run_free(&r);
	}
	cr_assert(h_wait_for(not_suspended, &id, H_WAIT_BOUND), "dbgctl status "
	    "%s: still suspended after %s", ids, by_key ? "a key was typed" :
	    "signal CONT");
	cr_assert_neq(h_pid_state(gdb), 'T', "gdb (pid %d) still stopped after "
	    "it was resumed", gdb);
	h_pty_expect(&p, off, "resumed", H_WAIT_BOUND);
	expect_exec_answers(ids, "after the resume");
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\");
	h_pty_expect_restored(&p, "after ^Z, the resume and ^\\");
	h_conn_close(&c);
	h_pty_close(&p);
}

Test(term, ctrl_z_shown_then_next_key_resumes)
{
	ctrl_z_shown_then_resumed(true);
}

Test(term, ctrl_z_shown_then_signal_cont_resumes)
{
	ctrl_z_shown_then_resumed(false);
}

/*
 * A suspended gdb is stopped the way a running one is: continued first,
 * it quits (by quit), rather than taking SIGTERM it cannot act on and
 * SIGKILL at the deadline.
 */
Test(term, stop_of_suspended_gdb_quits_it)
{
	char ids[32];
	struct h_pty p;
	json_t *s;
	long id;

	id = launch_gdb(NULL, ids, sizeof(ids));
	attach_pty(&p, ids, NULL, "(gdb) ");
	h_pty_type(&p, "\x1a", 1);
	cr_assert(h_cli_wait_status(id, "suspended.name", "SIGTSTP",
	    H_WAIT_BOUND), "dbgctl status %s: not shown suspended after ^Z",
	    ids);
	s = h_cli_stop(id, "20000", NULL);
	cr_assert(h_jint(s, "exit.code", -1) == 0 && h_jstr(s, "exit.by") !=
	    NULL && strcmp(h_jstr(s, "exit.by"), "quit") == 0, "dbgctl stop "
	    "%s of a suspended gdb: expected exit code 0 by quit, got %s", ids,
	    json_dumps(json_object_get(s, "exit"), JSON_COMPACT));
	json_decref(s);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after its session was stopped");
	h_pty_expect_restored(&p, "after its suspended session was stopped");
	h_pty_close(&p);
}

/* dbgctl logs [extra] ID of a FIX_MODES session, on a fresh pty. */
static size_t
logs_pty(struct h_pty *p, const char *ids, const char *extra)
{
	h_cli_wait_log(ids, "modes-ready", H_WAIT_BOUND);
	h_pty_open(p, 30, 100);
	if (extra != NULL)
		h_pty_spawn(p, H_ARGS("logs", extra, ids));
	else
		h_pty_spawn(p, H_ARGS("logs", ids));
	return h_pty_expect(p, 0, "modes-ready", H_WAIT_BOUND);
}

/*
 * logs to a terminal: once the log is printed, every mode it set (the
 * alternate screen, a hidden cursor, keypad keys, bracketed paste, mouse
 * reports) is undone, as attach undoes them.
 */
Test(term, logs_to_a_terminal_undoes_modes)
{
	char ids[32];
	struct h_pty p;
	size_t off;

	launch_modes(NULL, ids, sizeof(ids));
	off = logs_pty(&p, ids, NULL);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after printing the log");
	expect_resets(&p, off, "after printing the log");
	h_pty_expect_restored(&p, "after printing the log");
	h_pty_close(&p);
}

/* logs -f ended by ^C typed at its terminal: the modes are undone. */
Test(term, logs_follow_ctrl_c_undoes_modes)
{
	char ids[32], ws[96];
	struct h_pty p;
	size_t off;

	launch_modes(NULL, ids, sizeof(ids));
	off = logs_pty(&p, ids, "-f");
	h_pty_type(&p, "\x03", 1);
	cr_assert(h_pty_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still running "
	    "%d ms after ^C", p.cmd, H_WAIT_BOUND);
	cr_assert(WIFSIGNALED(p.status) && WTERMSIG(p.status) == SIGINT,
	    "dbgctl %s after ^C: expected it to die of SIGINT, got %s", p.cmd,
	    h_run_wstatus(p.status, ws, sizeof(ws)));
	expect_resets(&p, off, "after ^C");
	h_pty_expect_restored(&p, "after ^C");
	h_pty_close(&p);
}

/*
 * logs -f: ^Z undoes the modes while it is stopped, SIGCONT sets them
 * again, and the session's end undoes them once more.
 */
Test(term, logs_follow_ctrl_z_and_end_undo_modes)
{
	char ids[32];
	struct h_pty p;
	struct h_res r;
	size_t off;

	launch_modes(NULL, ids, sizeof(ids));
	off = logs_pty(&p, ids, "-f");
	h_pty_type(&p, "\x1a", 1);
	cr_assert(h_wait_for(is_stopped, &p.pid, H_WAIT_BOUND), "dbgctl %s: "
	    "not stopped after ^Z", p.cmd);
	h_pty_pump(&p, 100);
	expect_resets(&p, off, "stopped by ^Z");
	off = p.seen.len;
	cr_assert_eq(kill(p.pid, SIGCONT), 0, "kill: %s", strerror(errno));
	off = h_pty_expect(&p, off, "\033[?1049h", H_WAIT_BOUND);
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: %s",
	    ids, r.err);
	h_run_free(&r);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after its session was stopped");
	expect_resets_of(&p, off, false, "after ^Z, SIGCONT and the end");
	h_pty_expect_restored(&p, "after ^Z, SIGCONT and the end");
	h_pty_close(&p);
}

/*
 * logs --raw to a terminal, and logs to a pipe: the log's bytes and
 * nothing after them.
 */
Test(term, logs_raw_and_to_a_pipe_are_byte_for_byte)
{
	static const char tail[] = "modes-ready\r\n";
	char ids[32], *log;
	struct h_pty p;
	struct h_res r;
	size_t off;

	launch_modes(NULL, ids, sizeof(ids));
	off = logs_pty(&p, ids, "--raw");
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after printing the log");
	cr_assert(memchr(p.seen.p + off, '\033', p.seen.len - off) == NULL,
	    "dbgctl %s: wrote escape sequences after the log's last line:\n%s",
	    p.cmd, h_shown(p.seen.p + off, p.seen.len - off, 500));
	h_pty_close(&p);
	cr_assert_eq(h_cli(&r, H_ARGS("logs", ids)), 0, "dbgctl logs %s: %s",
	    ids, r.err);
	log = r.out;
	cr_assert(r.out_len >= strlen(tail) && memcmp(log + r.out_len -
	    strlen(tail), tail, strlen(tail)) == 0 && memmem(log, r.out_len,
	    "\033[?1049l", 8) == NULL, "dbgctl logs %s to a pipe: expected the "
	    "log's bytes alone, ending with its last line; got:\n%s", ids,
	    h_shown(log, r.out_len, 500));
	h_run_free(&r);
}
