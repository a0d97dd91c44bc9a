/*
 * dbgctl mi and its dbgctl-gdb alias, driven as a front end drives its gdb:
 * MI lines on the client's stdin and stdout pipes, against a running gdb
 * session of tests/fixtures' loop. The first prompt and the seed, an
 * answer, -gdb-exit and stdin's end leaving the program as it was, SIGINT
 * as the interrupt, the pipes handed to the daemon and a terminal bridged,
 * gdb's version text, gdb's command line, refusals.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>
#include <sys/stat.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(cli_mi, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* Bound for one answer (ms). */
#define CM_BOUND	(30000 * H_SLOW)

/* One bridge under test: the client, its stdin, what it printed. */
struct cm {
	long		 id;
	char		 ids[32];
	pid_t		 inferior;	/* the session's program */
	struct h_proc	 p;
	int		 in;
	struct h_bytes	 out;
};

/* The dbgctl-gdb link beside the client in the build tree. */
static const char *
cm_gdb_bin(void)
{
	return h_ctx_fixture("DBGCTL_GDB_BIN");
}

/* Start the daemon and a gdb session running the loop; wait until it runs. */
static void
cm_session(struct cm *t)
{
	memset(t, 0, sizeof(*t));
	t->in = -1;
	h_daemon_fg();
	t->id = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(t->id, t->ids, sizeof(t->ids));
	cr_assert(h_cli_wait_status(t->id, "target.state", "running",
	    H_WAIT_BOUND), "session %s: its target never ran", t->ids);
	t->inferior = h_cli_status_pid(t->id, "inferior_pid");
	cr_assert_gt(t->inferior, 0, "session %s: no inferior_pid", t->ids);
}

/* Start argv with its stdin on a pipe; wait for its first prompt. */
static void
cm_start(struct cm *t, const char *const argv[])
{
	char cmd[1024];

	h_join_args(argv, cmd, sizeof(cmd));
	cr_assert_eq(h_run_start_fed(&t->p, &t->in, argv), 0, "start %s",
	    cmd);
	cr_assert_neq(h_run_out_until(&t->p, &t->out, 0, "(gdb) \n",
	    CM_BOUND), 0, "%s: no first prompt within %d ms; stdout: %s", cmd,
	    CM_BOUND, h_shown(t->out.p, t->out.len, 2000));
}

/* Start dbgctl -s SOCK mi ARGS... and wait for its first prompt. */
static void
cm_mi(struct cm *t, const char *const args[])
{
	const char **v = h_cli_argv(args);

	cm_start(t, v);
	free(v);
}

/* Write one MI line to the bridge. */
static void
cm_send(struct cm *t, const char *line)
{
	char	buf[512];
	size_t	len = (size_t)snprintf(buf, sizeof(buf), "%s\n", line);

	cr_assert_eq(write(t->in, buf, len), (ssize_t)len, "write %s", line);
}

/* Wait until the bridge has printed text at or after offset from; past it. */
static size_t
cm_expect(struct cm *t, size_t from, const char *text)
{
	size_t past = h_run_out_until(&t->p, &t->out, from, text, CM_BOUND);

	cr_assert_neq(past, 0, "no \"%s\" within %d ms; stdout: %s", text,
	    CM_BOUND, h_shown(t->out.p, t->out.len, 2000));
	return past;
}

/* Close the bridge's stdin if open; its exit code within the bound. */
static int
cm_finish(struct cm *t)
{
	if (t->in != -1)
		close(t->in);
	t->in = -1;
	h_run_wait(&t->p, CM_BOUND);
	return t->p.res.code;
}

/* The session's program is the one it had, alive, and exec still answers. */
static void
cm_expect_program_goes_on(struct cm *t, const char *when)
{
	struct h_res r;

	cr_assert_eq(h_cli_status_pid(t->id, "inferior_pid"), t->inferior,
	    "%s: the session's program is pid %d, not %d as before", when,
	    h_cli_status_pid(t->id, "inferior_pid"), t->inferior);
	cr_assert(!h_pid_gone(t->inferior), "%s: pid %d is gone", when,
	    t->inferior);
	cr_assert_neq(h_pid_state(t->inferior), 'Z', "%s: pid %d is a zombie",
	    when, t->inferior);
	cr_assert_str_eq(h_jstr(h_cli_status(t->id), "state"), "running",
	    "%s: the session is not running", when);
	h_cli_exit(&r, 0, H_ARGS("exec", t->ids, "--",
	    "-data-evaluate-expression", "2+5"));
	cr_assert(strstr(r.out, "\"7\"") != NULL, "%s: exec answered %s",
	    when, r.out);
	h_run_free(&r);
}

Test(cli_mi, the_first_output_is_the_seed_and_a_prompt_then_answers)
{
	struct cm	 t;
	const char	*prompt;

	cm_session(&t);
	cm_mi(&t, H_ARGS("mi", t.ids));
	prompt = strstr(t.out.p, "(gdb) \n");
	cr_assert(prompt == t.out.p || prompt[-1] == '\n', "the prompt is not "
	    "a line of its own: %s", t.out.p);
	cr_assert(h_count(t.out.p, (size_t)(prompt - t.out.p),
	    "=thread-group-added,id=\"i1\"") == 1, "no thread group before the "
	    "prompt: %s", t.out.p);
	cr_assert(h_count(t.out.p, (size_t)(prompt - t.out.p),
	    "*running,thread-id=\"all\"") == 1, "the running target is not "
	    "said to run before the prompt: %s", t.out.p);
	cm_send(&t, "-data-evaluate-expression 1+2");
	cm_expect(&t, 0, "^done,value=\"3\"\n(gdb) \n");
	cr_assert_eq(cm_finish(&t), 0, "dbgctl mi after stdin's end: %s",
	    t.p.res.err);
}

Test(cli_mi, gdb_exit_answers_exit_and_leaves_the_program_as_it_was)
{
	struct cm t;

	cm_session(&t);
	cm_mi(&t, H_ARGS("mi", t.ids));
	cm_send(&t, "7-gdb-exit");
	cm_expect(&t, 0, "7^exit\n");
	/* stdin stays open: the daemon's close alone ends the bridge. */
	h_run_wait(&t.p, CM_BOUND);
	cr_assert_eq(t.p.res.code, 0, "dbgctl mi after ^exit: exit %d (%s)",
	    t.p.res.code, t.p.res.err);
	cm_expect_program_goes_on(&t, "after -gdb-exit");
	close(t.in);
}

Test(cli_mi, sigint_to_the_bridge_interrupts_the_target_and_it_goes_on)
{
	struct cm	t;
	size_t		at;
	int		st;

	cm_session(&t);
	cm_mi(&t, H_ARGS("mi", t.ids));
	at = t.out.len;
	cr_assert_eq(kill(t.p.pid, SIGINT), 0);
	at = cm_expect(&t, at, "*stopped,");
	cr_assert(h_cli_wait_status(t.id, "target.state", "stopped",
	    H_WAIT_BOUND), "the target is not stopped after SIGINT");
	cr_assert_eq(waitpid(t.p.pid, &st, WNOHANG), 0, "dbgctl mi ended at "
	    "SIGINT");
	cm_send(&t, "8-exec-continue");
	cm_expect(&t, at, "8^running\n");
	cm_expect(&t, at, "*running,thread-id=\"all\"\n");
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND), "the target is not running after -exec-continue");
	cr_assert_eq(cm_finish(&t), 0, "dbgctl mi: %s", t.p.res.err);
	cm_expect_program_goes_on(&t, "after the interrupt and continue");
}

Test(cli_mi, stdin_eof_exits_0_and_the_program_runs_on)
{
	struct cm t;

	cm_session(&t);
	cm_mi(&t, H_ARGS("mi", t.ids));
	cr_assert_eq(cm_finish(&t), 0, "dbgctl mi at stdin's end: exit %d (%s)",
	    t.p.res.code, t.p.res.err);
	cm_expect_program_goes_on(&t, "after stdin's end");
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND), "the target does not run after the bridge left");
}

/* What cm_holding waits for: a process holding a descriptor on target. */
struct cm_hold {
	pid_t		 pid;
	const char	*target;	/* as /proc/PID/fd's links name it */
	bool		 want;		/* holding it, or not */
};

/* Predicate: the process holds target (or does not, as want says). */
static bool
cm_holding(void *arg)
{
	static char		 targets[H_MAXFDS][PATH_MAX];
	const struct cm_hold	*h = arg;
	int			 fds[H_MAXFDS], n, i;
	bool			 holds = false;

	n = h_pid_fds(h->pid, fds, targets, H_MAXFDS);
	for (i = 0; i < n; i++)
		holds = holds || strcmp(targets[i], h->target) == 0;
	return holds == h->want;
}

/* Assert pid comes to hold target or to let go of it, as want says. */
static void
cm_expect_holding(pid_t pid, const char *who, const char *target, bool want)
{
	struct cm_hold	h = { pid, target, want };
	char		fds[4096];

	if (h_wait_for(cm_holding, &h, CM_BOUND))
		return;
	h_pid_fds_text(pid, fds, sizeof(fds));
	cr_assert_fail("%s (pid %d) %s %s: it holds %s", who, (int)pid,
	    want ? "does not hold" : "still holds", target, fds);
}

/* The /proc/PID/fd link text of pipe fd: "pipe:[INODE]". */
static void
cm_pipe_name(int fd, char *buf, size_t len)
{
	struct stat st;

	cr_assert_eq(fstat(fd, &st), 0, "fstat %d", fd);
	snprintf(buf, len, "pipe:[%lu]", (unsigned long)st.st_ino);
}

/*
 * A front end's pipes are the daemon's to read and write once joined:
 * the client holds /dev/null in their place, answers still come, and at
 * stdin's end the daemon lets go of both and the client exits 0.
 */
Test(cli_mi, a_front_ends_pipes_are_handed_to_the_daemon)
{
	struct cm	t;
	char		in[64], out[64];

	cm_session(&t);
	cm_mi(&t, H_ARGS("mi", t.ids));
	cm_pipe_name(t.in, in, sizeof(in));
	cm_pipe_name(t.p.outfd, out, sizeof(out));
	cm_expect_holding(h_daemon_pid(), "the daemon", in, true);
	cm_expect_holding(h_daemon_pid(), "the daemon", out, true);
	cm_expect_holding(t.p.pid, "dbgctl mi", in, false);
	cm_expect_holding(t.p.pid, "dbgctl mi", out, false);
	cm_expect_holding(t.p.pid, "dbgctl mi", "/dev/null", true);
	cm_send(&t, "-data-evaluate-expression 1+2");
	cm_expect(&t, 0, "^done,value=\"3\"\n(gdb) \n");
	cr_assert_eq(cm_finish(&t), 0, "dbgctl mi after stdin's end: %s",
	    t.p.res.err);
	cm_expect_holding(h_daemon_pid(), "the daemon", in, false);
	cm_expect_holding(h_daemon_pid(), "the daemon", out, false);
	cm_expect_program_goes_on(&t, "after stdin's end");
}

/*
 * MI typed at a terminal: the client keeps its terminal and copies both
 * ways; Ctrl-C interrupts the target, Ctrl-D leaves, the modes stay.
 */
Test(cli_mi, a_front_end_at_a_terminal_is_bridged_by_the_client)
{
	static const char eval[] = "-data-evaluate-expression 1+2\n";
	struct cm	t;
	struct h_pty	p;
	size_t		at;

	cm_session(&t);
	h_pty_open(&p, 24, 80);
	h_pty_spawn(&p, H_ARGS("mi", t.ids));
	at = h_pty_expect(&p, 0, "(gdb) ", CM_BOUND);
	cm_expect_holding(p.pid, "dbgctl mi", ttyname(p.slave), true);
	cm_expect_holding(h_daemon_pid(), "the daemon", ttyname(p.slave),
	    false);
	h_pty_type(&p, eval, strlen(eval));
	at = h_pty_expect(&p, at, "^done,value=\"3\"", CM_BOUND);
	h_pty_type(&p, "\003", 1);
	at = h_pty_expect(&p, at, "*stopped,", CM_BOUND);
	cr_assert(h_cli_wait_status(t.id, "target.state", "stopped",
	    H_WAIT_BOUND), "the target is not stopped after Ctrl-C");
	h_pty_type(&p, "\004", 1);
	h_pty_expect_exit(&p, 0, CM_BOUND, "after Ctrl-D");
	h_pty_expect_restored(&p, "after Ctrl-D");
	h_pty_close(&p);
	cm_expect_program_goes_on(&t, "after the terminal's leave");
}

/*
 * A daemon from before mi's stdio, two connections long: it drops the
 * first, which passed descriptors (as such a daemon does), and on the
 * second answers a join without stdio, a prompt, and one answer to the
 * line after it, then closes. Runs in a child; never returns.
 */
static void __attribute__((noreturn))
cm_old_daemon(int lfd)
{
	static const char joined[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"result\":{\"raw\":true,\"session\":1,\"channel\":1,"
	    "\"mi\":\"mi3\"}}\n(gdb) \n";
	static const char done[] = "4^done,value=\"3\"\n(gdb) \n";
	char	line[4096];
	int	fd;

	if ((fd = accept(lfd, NULL, NULL)) == -1 ||
	    h_read_line(fd, line, sizeof line) == 0 ||
	    strstr(line, "\"stdio\":true") == NULL)
		_exit(1);
	close(fd);
	if ((fd = accept(lfd, NULL, NULL)) == -1 ||
	    h_read_line(fd, line, sizeof line) == 0 ||
	    strstr(line, "\"mi\"") == NULL || strstr(line, "stdio") != NULL ||
	    write(fd, joined, sizeof joined - 1) != sizeof joined - 1)
		_exit(2);
	if (h_read_line(fd, line, sizeof line) == 0 ||
	    strcmp(line, "4-data-evaluate-expression 1+2\n") != 0 ||
	    write(fd, done, sizeof done - 1) != sizeof done - 1)
		_exit(3);
	_exit(0);
}

/*
 * A daemon older than mi's stdio drops the client that passed its pipes:
 * the client joins again without them and copies both ways itself.
 */
Test(cli_mi, a_daemon_without_stdio_is_joined_again_and_bridged)
{
	struct cm	t;
	char		path[256];
	pid_t		pid;
	int		lfd, st;

	memset(&t, 0, sizeof(t));
	lfd = h_unix_listen("old.sock", path, sizeof path);
	pid = fork();
	cr_assert_neq(pid, -1, "fork");
	if (pid == 0)
		cm_old_daemon(lfd);
	close(lfd);
	cm_start(&t, H_ARGS(H->dbgctl, "-s", path, "mi", "1"));
	cm_send(&t, "4-data-evaluate-expression 1+2");
	cm_expect(&t, 0, "4^done,value=\"3\"\n(gdb) \n");
	cr_assert(h_run_waitpid(pid, H_WAIT_BOUND, &st) && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0, "the old daemon: status %#x", st);
	cr_assert_eq(cm_finish(&t), 0, "dbgctl mi: %s", t.p.res.err);
}

/* Run dbgctl-gdb ARGS... with DBGCTL_SESSION as given ("" for none). */
static int
cm_gdb_run(struct h_res *r, const char *session, const char *const args[])
{
	const char	*v[16];
	char		 env[64];
	int		 i = 0, k;

	snprintf(env, sizeof(env), "DBGCTL_SESSION=%s", session);
	h_ctx_env_add(env);
	v[i++] = cm_gdb_bin();
	for (k = 0; args[k] != NULL && i < 15; k++)
		v[i++] = args[k];
	v[i] = NULL;
	return h_run(r, H_RUN_BOUND, v);
}

Test(cli_mi, dbgctl_gdb_version_is_gdbs_with_a_session_and_without)
{
	struct cm	t;
	struct h_res	r;
	char		sock[600];

	cm_session(&t);
	/* With a session only its gdb may answer: no local one to fall back on. */
	h_ctx_env_add("DBGCTL_GDB=/nonexistent/gdb");
	snprintf(sock, sizeof(sock), "--socket=%s", H->sock);
	cm_gdb_run(&r, t.ids, H_ARGS("--version", sock));
	cr_assert_eq(r.code, 0, "dbgctl-gdb --version with DBGCTL_SESSION: "
	    "exit %d (%s)", r.code, r.err);
	cr_assert(strncmp(r.out, "GNU gdb", 7) == 0, "with a session: %s",
	    r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("mi", "--version", t.ids));
	cr_assert(strncmp(r.out, "GNU gdb", 7) == 0, "dbgctl mi --version: %s",
	    r.out);
	h_run_free(&r);
	/* No session: the local gdb's own text; no daemon asked. */
	h_ctx_env_add("DBGCTL_GDB=gdb");
	cm_gdb_run(&r, "", H_ARGS("--version", "--socket=/nonexistent/sock"));
	cr_assert_eq(r.code, 0, "dbgctl-gdb --version without a session: "
	    "exit %d (%s)", r.code, r.err);
	cr_assert(strncmp(r.out, "GNU gdb", 7) == 0, "without a session: %s",
	    r.out);
	h_run_free(&r);
}

Test(cli_mi, dbgctl_gdb_joins_as_mi2_taking_gdbs_flags)
{
	struct cm	 t;
	struct h_trace	 tr;
	char		 env[64], sock[600];
	pid_t		 daemon;

	cm_session(&t);
	daemon = h_daemon_pid();
	cr_assert_gt(daemon, 0);
	/* The daemon's words to gdb say which MI the channel speaks. */
	h_trace_start(&tr, daemon);
	snprintf(env, sizeof(env), "DBGCTL_SESSION=%s", t.ids);
	h_ctx_env_add(env);
	snprintf(sock, sizeof(sock), "--socket=%s", H->sock);
	cm_start(&t, H_ARGS(cm_gdb_bin(), "--interpreter=mi2", "-q", "-nx",
	    sock));
	/* The first prompt came after the new-ui; strace's log may lag it. */
	h_trace_stop(&tr);
	cr_assert(h_trace_fd_of(&tr, "new-ui mi2") != -1, "the daemon did not "
	    "open an mi2 channel in gdb");
	cr_assert(strstr(t.out.p, "^error") == NULL, "an error on joining: %s",
	    t.out.p);
	cm_send(&t, "3-data-evaluate-expression 40+2");
	cm_expect(&t, 0, "3^done,value=\"42\"\n");
	cm_send(&t, "4-gdb-exit");
	cm_expect(&t, 0, "4^exit\n");
	cr_assert_eq(cm_finish(&t), 0, "dbgctl-gdb: %s", t.p.res.err);
	cm_expect_program_goes_on(&t, "after dbgctl-gdb left");
}

Test(cli_mi, an_lldb_session_and_a_missing_one_are_refused)
{
	struct h_res	r;
	char		lldb[256], ids[32];
	long		id;

	h_daemon_fg();
	h_ctx_env_add("DBGCTL_SESSION=");
	h_cli_exit(&r, 1, H_ARGS("mi", "999"));
	cr_assert(strstr(r.err, "999") != NULL, "no such session: %s", r.err);
	h_run_free(&r);
	h_cli_exit(&r, 2, H_ARGS("mi"));
	cr_assert(strstr(r.err, "dbgctl: missing SESSION") != NULL,
	    "no session at all: %s", r.err);
	cr_assert_eq(r.out_len, 0, "no session at all printed %s", r.out);
	h_run_free(&r);
	if (h_which("lldb", lldb, sizeof(lldb)) == NULL)
		cr_skip_test("lldb is not installed");
	id = h_cli_launch(H_ARGS("--kind", "lldb", "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof(ids));
	h_cli_exit(&r, 1, H_ARGS("mi", ids));
	cr_assert(strstr(r.err, "dbgctl: ") == r.err && strstr(r.err,
	    "lldb") != NULL, "an lldb session: %s", r.err);
	cr_assert_eq(r.out_len, 0, "an lldb session printed %s", r.out);
	h_run_free(&r);
}

Test(cli_mi, dbgctl_gdb_refuses_what_a_joined_channel_cannot_take)
{
	static const char *const refused[][3] = {
		{ "-ex", "foo", NULL },
		{ "-batch", NULL, NULL },
		{ "--args", "/bin/true", NULL },
		{ "/bin/true", NULL, NULL },
		{ "--interpreter=console", NULL, NULL },
	};
	struct h_res	r;
	size_t		i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		cm_gdb_run(&r, "1", H_ARGS(refused[i][0], refused[i][1]));
		cr_assert_eq(r.code, 2, "dbgctl-gdb %s: exit %d (%s)",
		    refused[i][0], r.code, r.err);
		cr_assert(strstr(r.err, refused[i][0]) != NULL &&
		    (strstr(r.err, "joined channel") != NULL),
		    "dbgctl-gdb %s: %s", refused[i][0], r.err);
		cr_assert_eq(r.out_len, 0);
		h_run_free(&r);
	}
}

/* Let the bridge go: its exit code asserted 0, its output forgotten. */
static void
cm_leave(struct cm *t, const char *what)
{
	cr_assert_eq(cm_finish(t), 0, "%s at stdin's end: exit %d (%s)", what,
	    t->p.res.code, t->p.res.err);
	h_run_free(&t->p.res);
	free(t->out.p);
	t->out = (struct h_bytes){ NULL, 0 };
}

Test(cli_mi, observe_keep_breakpoints_and_leave_halted_reach_the_daemon)
{
	struct cm	t;
	size_t		at;

	cm_session(&t);
	/* An observer may look, not halt. */
	cm_mi(&t, H_ARGS("mi", "--observe", t.ids));
	cm_send(&t, "1-exec-interrupt");
	at = cm_expect(&t, 0, "1^error,msg=\"");
	cm_expect(&t, at, "observer");
	cm_send(&t, "2-data-evaluate-expression 3*3");
	cm_expect(&t, at, "2^done,value=\"9\"");
	cm_leave(&t, "mi --observe");
	/* A breakpoint made with --keep-breakpoints stays after the leave. */
	cm_mi(&t, H_ARGS("mi", "--keep-breakpoints", t.ids));
	cm_send(&t, "3-break-list");
	cm_expect(&t, 0, "3^done,BreakpointTable={nr_rows=\"0\"");
	/*
	 * Disabled: the program may not be past main yet (a loaded machine),
	 * and a hit would leave the target stopped for the steps after.
	 */
	cm_send(&t, "4-break-insert -d main");
	cm_expect(&t, 0, "4^done,bkpt={number=\"");
	cm_leave(&t, "mi --keep-breakpoints");
	/* Again with no options, on the channel the leave was done on. */
	cm_mi(&t, H_ARGS("mi", t.ids));
	cm_send(&t, "5-break-list");
	cm_expect(&t, 0, "5^done,BreakpointTable={nr_rows=\"1\"");
	cm_leave(&t, "mi after --keep-breakpoints");
	/* A target halted with --leave-halted stays halted. */
	cm_mi(&t, H_ARGS("mi", "--leave-halted", t.ids));
	cm_send(&t, "6-exec-interrupt");
	cm_expect(&t, 0, "*stopped,");
	cm_leave(&t, "mi --leave-halted");
	/* Again with no options, on the channel the leave was done on. */
	cm_mi(&t, H_ARGS("mi", t.ids));
	cr_assert(strstr(t.out.p, "*running") == NULL, "the target halted with "
	    "--leave-halted was resumed: the seed says %s", t.out.p);
	cr_assert_str_eq(h_jstr(h_cli_status(t.id), "target.state"),
	    "stopped", "the target halted with --leave-halted was resumed");
	cm_leave(&t, "mi after --leave-halted");
}
