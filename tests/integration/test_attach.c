/*
 * The interactive terminal on real ptys: dbgctl attach and launch --attach
 * driven through a pseudo-terminal the test owns, as a user at a terminal
 * would drive them. Checked: ^C reaches gdb's inferior, ^\ (or
 * --detach-key) detaches, the terminal's modes are bit-identical after
 * every way out (detach, session end, SIGTERM/SIGHUP/SIGINT, ^Z and
 * continue, the daemon killed), the window size reaches the program,
 * several clients see the same output, and the replay on attach.
 *
 * Each client runs as the job of a shell-like session leader on a pty of
 * the test's own (harness-pty.c), so that job control and SIGWINCH reach
 * it as they would at a real terminal.
 *
 * Fixtures (meson passes their paths): FIX_ECHO prints its arguments and
 * copies stdin; FIX_SPINNER prints "spinning" and loops forever.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(attach, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 60);

/* The detach key of attach and launch --attach (^\). */
#define KEY_DETACH	"\x1c"

/* An exec session running sh -c SCRIPT; its id, also as a string in ids. */
static long
launch_sh(const char *script, char *ids, size_t len)
{
	long id = h_cli_launch_sh(NULL, script);

	h_idstr(id, ids, len);
	return id;
}

/* Predicate: the pid is stopped (state T in /proc/PID/stat). */
static bool
is_stopped(void *arg)
{
	return h_pid_state(*(pid_t *)arg) == 'T';
}

/*
 * `dbgctl attach ID` on a fresh 30x100 pty p: wait for ready on its
 * terminal, then for raw mode (asserted, saying when). Returns the offset
 * just past ready.
 */
static size_t
pty_attach(struct h_pty *p, const char *ids, const char *ready,
    const char *when)
{
	size_t off;

	h_pty_open(p, 30, 100);
	h_pty_spawn(p, H_ARGS("attach", ids));
	off = h_pty_expect(p, 0, ready, H_WAIT_BOUND);
	h_pty_expect_raw(p, H_WAIT_BOUND, when);
	return off;
}

/* Type ^\; assert the client exits 0 and the terminal's modes are restored. */
static void
pty_detach(struct h_pty *p, const char *when)
{
	h_pty_type(p, KEY_DETACH, 1);
	h_pty_expect_exit(p, 0, H_WAIT_BOUND, when);
	h_pty_expect_restored(p, when);
}

/*
 * An exec session that prints tag once and then idles, and a client
 * attached to it on p whose terminal is raw. Returns the session id.
 */
static long
attached_idle(struct h_pty *p, const char *tag, char *ids, size_t idlen)
{
	char script[256];
	long id;

	snprintf(script, sizeof(script), "echo %s; while :; do sleep 1; done",
	    tag);
	id = launch_sh(script, ids, idlen);
	/* The tag can only come back through the attach (replay). */
	pty_attach(p, ids, tag, "once attached");
	return id;
}

/* The Ctrl-C byte interrupts gdb's running inferior; the session runs on. */
Test(attach, ctrl_c_interrupts_gdb_inferior)
{
	const char *spinner = h_ctx_fixture("FIX_SPINNER");
	char ids[32];
	size_t off;
	struct h_pty p;
	pid_t inf;
	long id;

	id = h_cli_launch(H_ARGS("-x", "run", "--", spinner));
	h_idstr(id, ids, sizeof(ids));
	off = pty_attach(&p, ids, "spinning", "once attached");
	cr_assert(memmem(p.seen.p, p.seen.len, "Program received signal",
	    23) == NULL, "dbgctl attach %s: a signal was reported before ^C "
	    "was typed:\n%s",
	    ids, h_pty_screen(&p));
	inf = h_cli_status_pid(id, "inferior_pid");

	h_pty_type(&p, "\x03", 1);
	h_pty_expect(&p, off, "Program received signal SIGINT", H_WAIT_BOUND);
	h_cli_wait_log(ids, "Program received signal SIGINT", H_WAIT_BOUND);
	h_cli_expect_state(id, "running", "after ^C");
	if (inf > 0)
		cr_assert(!h_pid_gone(inf), "inferior %d died of the ^C that "
		    "gdb should have stopped it with", inf);
	cr_assert(!p.done, "dbgctl attach %s ended on ^C: the byte should go "
	    "to the session, not signal the client", ids);
	/* With gdb's MI beside it (mi-async on), the console still drives. */
	off = h_pty_expect(&p, off, "(gdb) ", H_WAIT_BOUND);
	h_pty_type(&p, "continue\n", 9);
	off = h_pty_expect(&p, off, "Continuing.", H_WAIT_BOUND);
	h_pty_type(&p, "\x03", 1);
	h_pty_expect(&p, off, "Program received signal SIGINT", H_WAIT_BOUND);
	if (inf > 0)
		cr_assert(!h_pid_gone(inf), "inferior %d died of the second ^C",
		    inf);

	pty_detach(&p, "after ^\\");
	h_pty_close(&p);
}

/* Ctrl-\ detaches: exit 0, the session runs on, the modes are identical. */
Test(attach, detach_key_restores_terminal)
{
	char ids[32];
	struct h_pty p;
	long id;

	id = attached_idle(&p, "idle-ready", ids, sizeof(ids));
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\");
	h_pty_expect_restored(&p, "after ^\\");
	h_cli_expect_state(id, "running", "after a detach");
	h_pty_close(&p);

	/* It can be attached again: the detach left nothing behind. */
	pty_attach(&p, ids, "idle-ready", "on a second attach");
	pty_detach(&p, "after ^\\ (second attach)");
	h_pty_close(&p);
}

/* --detach-key: ^\ then reaches the session (SIGQUIT), ^A detaches. */
Test(attach, detach_key_option)
{
	char ids[32];
	size_t off;
	struct h_pty p;
	long id;

	id = launch_sh("trap 'echo got-quit' QUIT; echo quit-ready; "
	    "while :; do sleep 0.1; done", ids, sizeof(ids));
	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("attach", "--detach-key", "^A", ids));
	off = h_pty_expect(&p, 0, "quit-ready", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "once attached");
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect(&p, off, "got-quit", H_WAIT_BOUND);
	cr_assert(!p.done, "dbgctl %s: ^\\ detached although --detach-key ^A "
	    "was given", p.cmd);
	h_pty_type(&p, "\x01", 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^A");
	h_pty_expect_restored(&p, "after ^A");
	h_cli_expect_state(id, "running", "after a detach with ^A");
	h_pty_close(&p);
}

/* The session ends while attached: the client exits with its status. */
Test(attach, session_end_exits_with_status)
{
	char ids[32];
	struct h_pty p;

	launch_sh("echo end-ready; read x; exit 7", ids, sizeof(ids));
	pty_attach(&p, ids, "end-ready", "once attached");
	h_pty_type(&p, "go\r", 3);
	h_pty_expect_exit(&p, 7, H_WAIT_BOUND, "when its session exits 7");
	h_pty_expect_restored(&p, "after the session ended");
	h_pty_close(&p);
}

/* A signal to the attached client: restored, then it dies of that signal. */
static void
dies_of(int sig)
{
	char ids[32], ws[96], when[64];
	struct h_pty p;
	long id;

	id = attached_idle(&p, "sig-ready", ids, sizeof(ids));
	snprintf(when, sizeof(when), "after SIG%s", sigabbrev_np(sig));
	cr_assert_eq(kill(p.pid, sig), 0, "kill: %s", strerror(errno));
	cr_assert(h_pty_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still running "
	    "%d ms after SIG%s", p.cmd, H_WAIT_BOUND, sigabbrev_np(sig));
	cr_assert(WIFSIGNALED(p.status) && WTERMSIG(p.status) == sig,
	    "dbgctl %s %s: expected it to die of SIG%s, got %s; its terminal "
	    "shows:\n%s", p.cmd, when, sigabbrev_np(sig),
	    h_run_wstatus(p.status, ws, sizeof(ws)),
	    h_pty_screen(&p));
	h_pty_expect_restored(&p, when);
	h_cli_expect_state(id, "running", when);
	h_pty_close(&p);
}

Test(attach, sigterm_restores_and_dies)
{
	dies_of(SIGTERM);
}

Test(attach, sighup_restores_and_dies)
{
	dies_of(SIGHUP);
}

Test(attach, sigint_restores_and_dies)
{
	dies_of(SIGINT);
}

/*
 * SIGTSTP: restored while stopped, raw again after SIGCONT, still attached,
 * restored identically on detach.
 */
Test(attach, sigtstp_restores_while_stopped)
{
	char ids[32];
	size_t off;
	struct h_pty p;
	long id;

	id = launch_sh("echo tstp-ready; while read l; do echo got-$l; done",
	    ids, sizeof(ids));
	off = pty_attach(&p, ids, "tstp-ready", "once attached");

	cr_assert_eq(kill(p.pid, SIGTSTP), 0, "kill: %s", strerror(errno));
	cr_assert(h_wait_for(is_stopped, &p.pid, H_WAIT_BOUND), "dbgctl %s: "
	    "not stopped (state %c) %d ms after SIGTSTP", p.cmd,
	    h_pid_state(p.pid) ? h_pid_state(p.pid) : '-', H_WAIT_BOUND);
	h_pty_expect_restored(&p, "stopped by SIGTSTP, while it is stopped");

	cr_assert_eq(kill(p.pid, SIGCONT), 0, "kill: %s", strerror(errno));
	h_pty_expect_raw(&p, H_WAIT_BOUND, "after SIGCONT");
	cr_assert(!p.done, "dbgctl %s ended after SIGTSTP + SIGCONT", p.cmd);
	/* Still attached: typing reaches the session. */
	h_pty_type(&p, "again\r", 6);
	h_pty_expect(&p, off, "got-again", H_WAIT_BOUND);

	pty_detach(&p, "after SIGTSTP, SIGCONT and ^\\");
	h_cli_expect_state(id, "running", "after the detach");
	h_pty_close(&p);
}

/*
 * The daemon SIGKILLed under the client, its session gone with it (no
 * adoption): it exits non-zero, restored.
 */
Test(attach, daemon_killed_restores)
{
	char ids[32], ws[96];
	struct h_pty p;
	pid_t d;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=0");
	attached_idle(&p, "kill-ready", ids, sizeof(ids));
	d = h_daemon_pid();
	cr_assert_gt(d, 0, "no daemon answers hello");
	cr_assert_eq(kill(d, SIGKILL), 0, "kill %d: %s", d, strerror(errno));
	cr_assert(h_pty_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still running "
	    "%d ms after the daemon (pid %d) was SIGKILLed; its terminal "
	    "shows:\n%s", p.cmd, H_WAIT_BOUND, d,
	    h_pty_screen(&p));
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) != 0,
	    "dbgctl %s after the daemon was SIGKILLed: expected a non-zero "
	    "exit, got %s; its terminal shows:\n%s", p.cmd,
	    h_run_wstatus(p.status, ws, sizeof(ws)),
	    h_pty_screen(&p));
	h_pty_expect_restored(&p, "after the daemon was SIGKILLed");
	h_pty_close(&p);
}

/* The client terminal's size is the program's; every change follows. */
Test(attach, window_size_follows)
{
	char ids[32], probe[PATH_MAX], script[PATH_MAX * 2 + 256];
	size_t off;
	struct h_pty p;
	int fd;

	h_ctx_path(probe, sizeof(probe), "probe");
	snprintf(script, sizeof(script), "trap 'echo size=$(stty size)' WINCH; "
	    "echo start=$(stty size); while :; do if [ -e '%s' ]; then "
	    "rm -f '%s'; echo probe=$(stty size); fi; sleep 0.1; done", probe,
	    probe);
	launch_sh(script, ids, sizeof(ids));
	h_cli_wait_log(ids, "start=", H_WAIT_BOUND);

	h_pty_open(&p, 37, 101);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	off = h_pty_expect(&p, 0, "size=37 101", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "once attached");

	h_pty_winsize(&p, 45, 120);
	off = h_pty_expect(&p, off, "size=45 120", H_WAIT_BOUND);

	/* A burst: the last size wins. */
	h_pty_winsize(&p, 50, 130);
	h_pty_winsize(&p, 51, 131);
	h_pty_winsize(&p, 52, 132);
	off = h_pty_expect(&p, off, "size=52 132", H_WAIT_BOUND);
	fd = open(probe, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0, "create %s: %s", probe, strerror(errno));
	close(fd);
	h_pty_expect(&p, off, "probe=52 132", H_WAIT_BOUND);

	pty_detach(&p, "after ^\\");
	h_pty_close(&p);
}

/* `dbgctl attach ID` on a fresh rows x cols pty; raw, the offset past want. */
static size_t
pty_attach_sized(struct h_pty *p, const char *ids, unsigned rows,
    unsigned cols, const char *want)
{
	size_t off;

	h_pty_open(p, rows, cols);
	h_pty_spawn(p, H_ARGS("attach", ids));
	off = h_pty_expect(p, 0, want, H_WAIT_BOUND);
	h_pty_expect_raw(p, H_WAIT_BOUND, "once attached");
	return off;
}

/*
 * Two clients, as tmux's window-size latest: the session has the size of
 * the client that attached, resized or typed last, and when that one
 * detaches, the size of the one left: a 150x40 window is not left at the
 * 100x30 of a smaller client that came and went. The session numbers the
 * sizes it is given, so that a replay of earlier ones is told apart.
 */
Test(attach, window_size_is_the_latest_clients)
{
	char ids[32];
	struct h_pty a, b;
	size_t offa;

	launch_sh("n=0; trap 'n=$((n+1)); echo \"size#$n=$(stty size)\"' "
	    "WINCH; echo start; while :; do sleep 0.1; done", ids,
	    sizeof(ids));
	h_cli_wait_log(ids, "start", H_WAIT_BOUND);
	offa = pty_attach_sized(&a, ids, 40, 150, "size#1=40 150");

	/* The smaller one attaches, then leaves: back to the big window. */
	pty_attach_sized(&b, ids, 30, 100, "size#2=30 100");
	offa = h_pty_expect(&a, offa, "size#2=30 100", H_WAIT_BOUND);
	pty_detach(&b, "after ^\\ (the smaller client)");
	h_pty_close(&b);
	offa = h_pty_expect(&a, offa, "size#3=40 150", H_WAIT_BOUND);

	/* Typing makes a client the latest; when it leaves, the other's size. */
	pty_attach_sized(&b, ids, 30, 100, "size#4=30 100");
	offa = h_pty_expect(&a, offa, "size#4=30 100", H_WAIT_BOUND);
	h_pty_type(&a, "x", 1);
	h_pty_expect(&a, offa, "size#5=40 150", H_WAIT_BOUND);
	pty_detach(&a, "after ^\\ (the bigger client)");
	h_pty_close(&a);
	h_pty_expect(&b, 0, "size#6=30 100", H_WAIT_BOUND);
	pty_detach(&b, "after ^\\ (the last client)");
	h_pty_close(&b);
}

/* launch --attach of gdb: the prompt, quit ends it, exit 0, restored. */
Test(attach, launch_attach_gdb_quit)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	const char *state;
	char *end;
	struct h_pty p;
	json_t *l, *s;
	long lead;

	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("launch", "--attach", "--", echo));
	h_pty_expect(&p, 0, "(gdb)", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "once attached");
	lead = strtol(p.seen.p, &end, 10);
	cr_assert(!(end != p.seen.p && lead > 0 && (*end == '\r' ||
	    *end == '\n')), "dbgctl %s: printed the session id (%ld) on the "
	    "terminal; it should not:\n%s", p.cmd, lead,
	    h_shown(p.seen.p, p.seen.len, 500));

	h_pty_type(&p, "quit\r", 5);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after quit at the (gdb) prompt");
	h_pty_expect_restored(&p, "after gdb quit");

	l = h_cli_json(H_ARGS("list"));
	s = json_is_array(l) ? json_array_get(l, 0) :
	    json_array_get(json_object_get(l, "sessions"), 0);
	state = h_jstr(s, "state");
	cr_assert(state != NULL && strcmp(state, "exited") == 0 &&
	    h_jint(s, "exit.code", -1) == 0, "dbgctl list after gdb quit: "
	    "expected the session exited with code 0, got state %s, code %lld",
	    state ? state : "(none)", h_jint(s, "exit.code", -1));
	json_decref(l);
	h_pty_close(&p);
}

/* attach with stdin not a terminal: exit 1 and a message, nothing else. */
Test(attach, attach_needs_a_terminal)
{
	char ids[32];
	struct h_res r;
	long id;

	id = launch_sh("echo notty-ready; while :; do sleep 1; done", ids,
	    sizeof(ids));
	h_cli(&r, H_ARGS("attach", ids));
	cr_assert_eq(r.code, 1, "dbgctl attach %s with stdin /dev/null: "
	    "expected exit 1, got %d (stderr: %s)", ids, r.code, r.err);
	cr_assert(strstr(r.err, "dbgctl: ") != NULL &&
	    strstr(r.err, "terminal") != NULL, "dbgctl attach %s with stdin "
	    "/dev/null: expected a \"dbgctl: ...terminal...\" message on "
	    "stderr, got \"%s\"", ids, r.err);
	cr_assert(strstr(r.out, "notty-ready") == NULL, "dbgctl attach %s "
	    "without a terminal printed the console anyway: %s", ids, r.out);
	h_run_free(&r);
	h_cli_expect_state(id, "running", "after a refused attach");
}

/* launch --attach with stdin a pipe: bridges it; ends when gdb quits. */
Test(attach, launch_attach_pipe_quit)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	struct h_res r;

	h_cli_input(&r, "quit\n", H_ARGS("launch", "--attach", "--", echo));
	cr_assert(!r.timed_out, "printf 'quit\\n' | dbgctl launch --attach -- "
	    "%s: still running after %d ms; stdout: %s; stderr: %s", echo,
	    H_RUN_BOUND, h_shown(r.out, r.out_len, 1500), r.err);
	cr_assert_eq(r.code, 0, "printf 'quit\\n' | dbgctl launch --attach -- "
	    "%s: expected exit 0 (gdb's status), got %d; stdout: %s; stderr: "
	    "%s", echo, r.code, h_shown(r.out, r.out_len, 1500), r.err);
	h_run_free(&r);
}

/* Two clients on one session both see what is printed after they attached. */
Test(attach, two_clients_see_output)
{
	char ids[32];
	size_t offa, offb;
	struct h_pty a, b;
	long id;

	id = launch_sh("echo two-ready; read x; echo got-$x; sleep 100", ids,
	    sizeof(ids));
	offa = pty_attach(&a, ids, "two-ready", "once attached (client A)");
	offb = pty_attach(&b, ids, "two-ready", "once attached (client B)");
	cr_assert(memmem(a.seen.p, a.seen.len, "got-", 4) == NULL &&
	    memmem(b.seen.p, b.seen.len, "got-", 4) == NULL,
	    "output before any input");

	h_pty_type(&a, "hello\r", 6);
	h_pty_expect(&a, offa, "got-hello", H_WAIT_BOUND);
	h_pty_expect(&b, offb, "got-hello", H_WAIT_BOUND);

	pty_detach(&a, "after ^\\ (client A)");
	cr_assert(!b.done, "client B ended when client A detached");
	pty_detach(&b, "after ^\\ (client B)");
	h_cli_expect_state(id, "running", "after both detached");
	h_pty_close(&a);
	h_pty_close(&b);
}

/* True if data holds "<line>\r\n" as a whole line. */
static bool
has_line(const char *data, size_t len, const char *line)
{
	char want[64];
	size_t n;

	n = (size_t)snprintf(want, sizeof(want), "%s\r\n", line);
	if (len >= n && memcmp(data, want, n) == 0)
		return true;
	n = (size_t)snprintf(want, sizeof(want), "\n%s\r\n", line);
	return memmem(data, len, want, n) != NULL;
}

/* Attaching replays the last 200 lines: 101..300 of 300, not 1..100. */
Test(attach, replay_last_200_lines)
{
	char ids[32];
	size_t off;
	struct h_pty p;

	launch_sh("i=1; while [ $i -le 300 ]; do echo line-$i; "
	    "i=$((i+1)); done; exec sleep 100", ids, sizeof(ids));
	h_cli_wait_log(ids, "line-300", H_WAIT_BOUND);

	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	off = h_pty_expect(&p, 0, "line-300\r\n", H_WAIT_BOUND);
	cr_assert(!has_line(p.seen.p, off, "line-1"), "dbgctl attach %s: "
	    "line-1 was replayed; only the last 200 lines should be:\n%s", ids,
	    h_shown(p.seen.p, off, 600));
	cr_assert(has_line(p.seen.p, off, "line-101") &&
	    !has_line(p.seen.p, off, "line-100") &&
	    h_count(p.seen.p, off, "line-") == 200, "dbgctl attach %s: "
	    "expected exactly lines 101..300 replayed (200), got %d lines "
	    "starting with:\n%s", ids, h_count(p.seen.p, off, "line-"),
	    h_shown(p.seen.p, off < 300 ? off : 300, 300));
	h_pty_expect_raw(&p, H_WAIT_BOUND, "once attached");

	pty_detach(&p, "after ^\\");
	h_pty_close(&p);
}
