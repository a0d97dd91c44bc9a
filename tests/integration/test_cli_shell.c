/*
 * What a person at a shell trips on, smaller things: options by their
 * whole names with a suggestion for a mistyped one, usage errors that are
 * usage errors, refusals that name options as typed, break --list and
 * wait that say what there is, list's COMMAND of a --pid session, an
 * attach whose reader went away, typing at a console from a script
 * (send-keys), and regs by gdb's standard names and general registers.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

TestSuite(clishell, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 180);

/*
 * dbgctl ARGS is a usage error saying want: exit 2, "dbgctl: <want>" and a
 * usage line on stderr, nothing on stdout, and no daemon started.
 */
static void
shell_usage_error(const char *const args[], const char *want)
{
	struct h_res r;
	char cmd[512];

	h_join_args(args, cmd, sizeof(cmd));
	h_cli(&r, args);
	cr_assert_eq(r.code, 2, "dbgctl %s: expected exit 2, got %d (stderr: "
	    "%s)", cmd, r.code, r.err);
	cr_assert(strstr(r.err, want) != NULL, "dbgctl %s: expected \"%s\" on "
	    "stderr, got \"%s\"", cmd, want, r.err);
	cr_assert(strstr(r.err, "\nusage: dbgctl") != NULL, "dbgctl %s: no "
	    "usage line on stderr: \"%s\"", cmd, r.err);
	cr_assert_eq(r.out_len, 0, "dbgctl %s: expected nothing on stdout, got "
	    "\"%s\"", cmd, r.out);
	h_run_free(&r);
	h_cli_expect_no_daemon(cmd);
}

/*
 * A long option is taken by its whole name only: `stop --al` is not
 * `stop --all` (which would end everything), and a mistyped option is
 * named with the ones it may mean, as a mistyped command is.
 */
Test(clishell, options_are_taken_by_their_whole_names_with_a_suggestion)
{
	shell_usage_error(H_ARGS("stop", "--al"),
	    "dbgctl: unknown option: --al; did you mean --all?");
	shell_usage_error(H_ARGS("stop", "--alll"),
	    "unknown option: --alll; did you mean --all?");
	shell_usage_error(H_ARGS("launch", "--kinds", "exec", "true"),
	    "unknown option: --kinds; did you mean --kind?");
	shell_usage_error(H_ARGS("launch", "--kid", "exec", "true"),
	    "unknown option: --kid; did you mean --kind or --pid?");
	shell_usage_error(H_ARGS("recv", "--t", "1", "1"),
	    "unknown option: --t; did you mean --timeout or --token-file?");
	shell_usage_error(H_ARGS("list", "--js"),
	    "unknown option: --js; did you mean --json?");
	shell_usage_error(H_ARGS("--js", "list"),
	    "unknown option: --js; did you mean --json?");
	shell_usage_error(H_ARGS("--sock", H->sock, "list"),
	    "unknown option: --sock; did you mean --socket?");
	shell_usage_error(H_ARGS("logs", "--zzzzzz", "1"),
	    "unknown option: --zzzzzz\n");
}

/* A live session is not stopped by a prefix of --all. */
Test(clishell, stop_al_stops_nothing)
{
	struct h_res r;
	long id;

	h_daemon_fg();
	id = h_cli_launch_sh(NULL, "exec sleep 1000");
	h_cli(&r, H_ARGS("stop", "--al"));
	cr_assert_eq(r.code, 2, "stop --al: exit %d (stderr: %s)", r.code,
	    r.err);
	h_run_free(&r);
	h_cli_expect_state(id, "running", "after stop --al");
	json_decref(h_cli_stop(id, NULL, NULL));
}

/*
 * launch: a name of digits is a usage error (it would be taken for an
 * id), PROGRAM is optional in the usage line as it is with --pid, and the
 * daemon's refusal of a param names the option as typed.
 */
Test(clishell, launch_speaks_of_options_as_typed)
{
	struct h_res r;

	shell_usage_error(H_ARGS("launch", "--name", "123", "--kind", "exec",
	    "true"), "bad --name 123");
	shell_usage_error(H_ARGS("launch", "--kind", "exec"),
	    "missing PROGRAM (or --pid, --remote, --server)");
	h_cli_exit(&r, 0, H_ARGS("help", "launch"));
	cr_assert(strstr(r.out, "[--] [PROGRAM [ARG...]]") != NULL, "launch's "
	    "usage calls PROGRAM required: %s", r.out);
	h_run_free(&r);
	h_daemon_fg();
	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--pid", "1", "true"));
	cr_assert_eq(r.code, 1, "exit %d (stderr: %s)", r.code, r.err);
	cr_assert(strstr(r.err, "dbgctl: --pid belongs to the gdb and "
	    "gdbserver kinds") != NULL, "the refusal does not name --pid: %s",
	    r.err);
	h_run_free(&r);
}

/* Any command's refusal by the daemon names its params as options. */
Test(clishell, refusals_name_params_as_the_options_typed)
{
	struct h_res r;
	char id[32];
	long sid;

	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "exec sleep 1000");
	h_idstr(sid, id, sizeof id);
	h_cli(&r, H_ARGS("hold", "--ttl", "99999999999", id));
	cr_assert(r.code == 1 && strstr(r.err, "dbgctl: --ttl must be") !=
	    NULL, "hold --ttl out of range: exit %d: %s", r.code, r.err);
	h_run_free(&r);
	h_cli(&r, H_ARGS("stop", "--timeout", "99999999", id));
	cr_assert(r.code == 1 && strstr(r.err, "dbgctl: --timeout must be") !=
	    NULL, "stop --timeout out of range: exit %d: %s", r.code, r.err);
	h_run_free(&r);
	h_cli_expect_state(sid, "running", "after the refusals");
	json_decref(h_cli_stop(sid, NULL, NULL));
}

/* break --list with none says so; a breakpoint then is listed. */
Test(clishell, break_list_says_when_there_are_none)
{
	struct h_res r;
	char id[32];
	long sid;

	h_daemon_fg();
	sid = h_cli_launch(H_ARGS("--no-fault-break", "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(sid, id, sizeof id);
	h_cli_exit(&r, 0, H_ARGS("break", "--list", id));
	cr_assert_str_eq(r.out, "no breakpoints\n", "break --list with none: "
	    "\"%s\"", r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("break", id, "main"));
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("break", "--list", id));
	cr_assert(strstr(r.out, "main") != NULL && strstr(r.out,
	    "no breakpoints") == NULL, "break --list with one: \"%s\"", r.out);
	h_run_free(&r);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

/* wait on a session whose target faulted prints the fault, as status does. */
Test(clishell, wait_prints_the_fault)
{
	struct h_res r;
	char id[32];
	long sid;

	h_daemon_fg();
	sid = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	cr_assert(h_cli_wait_status(sid, "faulted", "SIGSEGV", H_WAIT_BOUND),
	    "the target never faulted");
	json_decref(h_cli_stop(sid, NULL, NULL));
	h_cli_exit(&r, 7, H_ARGS("wait", h_idstr(sid, id, sizeof id)));
	cr_assert(strstr(r.out, "fault: SIGSEGV") != NULL && strstr(r.out,
	    "crash_here") != NULL, "wait does not print the fault: %s", r.out);
	h_run_free(&r);
}

/*
 * Skip, saying why, where the kernel would not let gdb attach to a
 * process of ours: Yama's ptrace_scope 3 always, 1 or 2 without root.
 */
static void
shell_need_ptrace(void)
{
	char *scope = h_read_file("/proc/sys/kernel/yama/ptrace_scope", NULL);
	int level = scope != NULL ? atoi(scope) : 0;

	free(scope);
	if (level >= 3 || (level >= 1 && geteuid() != 0))
		cr_skip_test("kernel.yama.ptrace_scope is %d: gdb may not "
		    "attach to the test's own sleep", level);
}

/* Predicate for h_wait_for: the pid (a pid_t *) runs sleep. */
static bool
shell_is_sleep(void *arg)
{
	char comm[64];

	h_pid_comm(*(pid_t *)arg, comm, sizeof comm);
	return strcmp(comm, "sleep") == 0;
}

/* list's COMMAND of a --pid session is that process's command line. */
Test(clishell, list_shows_the_command_of_a_process_attached_by_pid)
{
	struct h_res r;
	char pids[32], id[32];
	pid_t pid;
	long sid;

	shell_need_ptrace();
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sleep", "sleep", "1001", (char *)NULL);
		_exit(127);
	}
	/* Its command line is sleep's once it has run it, not the fork's. */
	cr_assert(h_wait_for(shell_is_sleep, &pid, H_WAIT_BOUND), "the sleep "
	    "never ran");
	snprintf(pids, sizeof pids, "%d", pid);
	h_daemon_fg();
	sid = h_cli_launch(H_ARGS("--pid", pids));
	h_idstr(sid, id, sizeof id);
	h_cli_exit(&r, 0, H_ARGS("list"));
	cr_assert(strstr(r.out, "sleep 1001") != NULL, "list has no COMMAND "
	    "for launch --pid %s:\n%s", pids, r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("status", id));
	cr_assert(strstr(r.out, "command: sleep 1001\n") != NULL, "status has "
	    "no command for launch --pid %s:\n%s", pids, r.out);
	h_run_free(&r);
	json_decref(h_cli_stop(sid, NULL, NULL));
	kill(pid, SIGKILL);
	h_run_reap(pid, H_WAIT_BOUND);
}

/*
 * Run dbgctl ARGS with stdin and stderr on p's terminal (its controlling
 * one) and stdout on a pipe; *out gets the pipe's reading end.
 */
static pid_t
shell_spawn_piped(struct h_pty *p, const char *const args[], int *out)
{
	const char **v = h_cli_argv(args);
	int fds[2];
	pid_t pid;

	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setsid() == -1 || ioctl(p->slave, TIOCSCTTY, 0) == -1)
			_exit(126);
		signal(SIGPIPE, SIG_DFL);
		dup2(p->slave, 0);
		dup2(fds[1], 1);
		dup2(p->slave, 2);
		execve(v[0], (char *const *)v, H->envp);
		_exit(127);
	}
	free(v);
	close(fds[1]);
	*out = fds[0];
	return pid;
}

/* Read from fd until n newlines have come (bounded); false if they did not. */
static bool
shell_read_lines(int fd, int n, struct h_bytes *b)
{
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	struct pollfd pfd = { fd, POLLIN, 0 };
	char buf[4096];
	ssize_t len;

	while (h_count(b->p, b->len, "\n") < n && h_now() < end) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if ((len = read(fd, buf, sizeof buf)) <= 0)
			return false;
		h_bytes_add(b, buf, (size_t)len);
	}
	return h_count(b->p, b->len, "\n") >= n;
}

/*
 * `dbgctl attach S | head -3` on a terminal: once head has its lines and
 * leaves, the client ends as cat would, by SIGPIPE, quietly, the terminal
 * as it was found, and the session runs on; the daemon is not blamed.
 */
Test(clishell, attach_whose_reader_leaves_ends_by_sigpipe_as_cat_does)
{
	struct h_bytes out = { 0 };
	struct h_pty p;
	char id[32];
	pid_t pid;
	long sid;
	int fd, st = 0;

	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "while :; do echo tick; sleep 0.05; done");
	h_idstr(sid, id, sizeof id);
	h_pty_open(&p, 24, 80);
	pid = shell_spawn_piped(&p, H_ARGS("attach", id), &fd);
	cr_assert(shell_read_lines(fd, 3, &out), "attach printed no 3 lines: "
	    "%s", h_shown(out.p, out.len, 200));
	close(fd);
	cr_assert(h_run_waitpid(pid, H_WAIT_BOUND, &st), "attach went on "
	    "after its reader left");
	h_pty_pump(&p, 100);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE, "attach ended "
	    "with %s, not SIGPIPE; its terminal shows: %s", h_run_wstatus(st,
	    (char[64]){ 0 }, 64), h_pty_screen(&p));
	cr_assert(strstr(p.seen.p != NULL ? p.seen.p : "", "daemon") ==
	    NULL, "attach blamed the daemon: %s", h_pty_screen(&p));
	h_pty_expect_restored(&p, "after attach's reader left");
	h_cli_expect_state(sid, "running", "after attach's reader left");
	h_pty_close(&p);
	free(out.p);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

/*
 * Run dbgctl ARGS with SIGPIPE ignored, as a parent that ignores it leaves
 * it, stdout and stderr on pipes whose reading ends go to *out and *err.
 */
static pid_t
shell_spawn_sigpipe_ignored(const char *const args[], int *out, int *err)
{
	const char **v = h_cli_argv(args);
	int o[2], e[2];
	pid_t pid;

	cr_assert_eq(pipe2(o, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	cr_assert_eq(pipe2(e, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGPIPE, SIG_IGN);
		dup2(o[1], 1);
		dup2(e[1], 2);
		execve(v[0], (char *const *)v, H->envp);
		_exit(127);
	}
	free(v);
	close(o[1]);
	close(e[1]);
	*out = o[0];
	*err = e[0];
	return pid;
}

/*
 * `dbgctl logs -f S | head -1` where SIGPIPE is ignored: the reader that
 * left ends it as it ends cat, by SIGPIPE and quietly, never with the
 * status of a daemon that cannot be reached (3).
 */
Test(clishell, logs_whose_reader_leaves_ends_by_sigpipe_not_status_3)
{
	struct h_bytes out = { 0 }, err = { 0 };
	char id[32], buf[512];
	ssize_t n;
	pid_t pid;
	long sid;
	int o, e, st = 0;

	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "while :; do echo tick; sleep 0.05; done");
	h_idstr(sid, id, sizeof id);
	h_cli_wait_log(id, "tick", H_WAIT_BOUND);
	pid = shell_spawn_sigpipe_ignored(H_ARGS("logs", "-f", id), &o, &e);
	cr_assert(shell_read_lines(o, 1, &out), "logs -f printed no line");
	close(o);
	cr_assert(h_run_waitpid(pid, H_WAIT_BOUND, &st), "logs -f went on "
	    "after its reader left");
	while ((n = read(e, buf, sizeof buf)) > 0)
		h_bytes_add(&err, buf, (size_t)n);
	close(e);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE, "logs -f ended "
	    "with %s, not SIGPIPE (stderr: %s)", h_run_wstatus(st,
	    (char[64]){ 0 }, 64), h_shown(err.p, err.len, 200));
	cr_assert_eq(err.len, 0, "logs -f said: %s", h_shown(err.p, err.len,
	    200));
	free(out.p);
	free(err.p);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

/*
 * send-keys types at a session's console as a person would: text as
 * given, named keys as their bytes (Enter, C-c), -l all as text.
 */
Test(clishell, send_keys_types_text_and_keys_at_the_console)
{
	struct h_res r;
	json_t *s;
	char id[32];
	long sid;

	shell_usage_error(H_ARGS("send-keys", "1"), "usage");
	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "echo ready; while read l; do "
	    "echo \"got:$l.\"; done");
	h_idstr(sid, id, sizeof id);
	h_cli_wait_log(id, "ready", H_WAIT_BOUND);
	h_cli_exit(&r, 0, H_ARGS("send-keys", id, "hello world", "Enter"));
	cr_assert_eq(r.out_len, 0, "send-keys printed: %s", r.out);
	h_run_free(&r);
	h_cli_wait_log(id, "got:hello world.", H_WAIT_BOUND);
	h_cli_exit(&r, 0, H_ARGS("send-keys", "-l", id, "Enter", "Tab"));
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("send-keys", id, "C-m"));
	h_run_free(&r);
	h_cli_wait_log(id, "got:EnterTab.", H_WAIT_BOUND);
	/* Ctrl-C at the console: the line discipline's SIGINT. */
	h_cli_exit(&r, 0, H_ARGS("send-keys", id, "C-c"));
	h_run_free(&r);
	s = h_cli_wait_ended(sid, H_WAIT_BOUND);
	cr_assert_not_null(s, "C-c did not end the shell");
	cr_assert_eq(h_jint(s, "exit.signal", -1), SIGINT, "exit: %s",
	    json_dumps(json_object_get(s, "exit"), JSON_COMPACT));
	json_decref(s);
	h_cli_exit(&r, 5, H_ARGS("send-keys", id, "Enter"));
	h_run_free(&r);
}

/* The value regs prints for name: the word after it on its line. */
static void
shell_reg(const char *out, const char *name, char *value, size_t len)
{
	const char *p = out;
	size_t n = strlen(name);

	*value = '\0';
	for (; p != NULL && *p != '\0'; p = strchr(p, '\n'), p += p != NULL) {
		if (strncmp(p, name, n) != 0 || p[n] != ' ')
			continue;
		p += n + strspn(p + n, " ");
		snprintf(value, len, "%.*s", (int)strcspn(p, "\n"), p);
		return;
	}
}

/*
 * regs on x86-64: gdb's standard names pc and sp are rip's and rsp's
 * values, regs prints the general registers (not the vector ones) unless
 * --all, and an unknown name's refusal lists names whole and how many
 * more there are.
 */
Test(clishell, regs_takes_standard_names_and_prints_the_general_registers)
{
	char id[32], pc[64], rip[64], sp[64], rsp[64], last[64];
	struct h_res r, all;
	const char *p, *q, *end;
	long sid;

#ifndef __x86_64__
	cr_skip_test("the registers checked are x86-64's");
#endif
	h_daemon_fg();
	sid = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	h_idstr(sid, id, sizeof id);
	cr_assert(h_cli_wait_status(sid, "faulted", "SIGSEGV", H_WAIT_BOUND),
	    "the target never faulted");
	h_cli_exit(&r, 0, H_ARGS("regs", id, "pc", "sp", "fp", "ps"));
	shell_reg(r.out, "pc", pc, sizeof pc);
	shell_reg(r.out, "sp", sp, sizeof sp);
	cr_assert(strncmp(pc, "0x", 2) == 0 && strncmp(sp, "0x", 2) == 0,
	    "regs pc sp: %s", r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("regs", id));
	shell_reg(r.out, "rip", rip, sizeof rip);
	shell_reg(r.out, "rsp", rsp, sizeof rsp);
	cr_assert_str_eq(pc, rip, "pc %s is not rip %s", pc, rip);
	cr_assert_str_eq(sp, rsp, "sp %s is not rsp %s", sp, rsp);
	cr_assert(h_count(r.out, r.out_len, "\n") < 64 && strstr(r.out,
	    "xmm0") == NULL, "regs printed more than the general registers "
	    "(%d lines)", h_count(r.out, r.out_len, "\n"));
	h_run_free(&r);
	h_cli_exit(&all, 0, H_ARGS("regs", "--all", id));
	cr_assert(strstr(all.out, "\nxmm0 ") != NULL && strstr(all.out,
	    "\nrip ") != NULL, "regs --all lacks xmm0 or rip");
	h_cli_exit(&r, 1, H_ARGS("regs", id, "nosuch"));
	cr_assert(strstr(r.err, "(this target has: rax, ") != NULL, "%s", r.err);
	cr_assert_not_null(end = strstr(r.err, " more)"), "the refusal does not "
	    "say how many more: %s", r.err);
	/* The last name listed, before " and N more", is a whole one. */
	for (p = end; p > r.err && strncmp(p, " and ", 5) != 0; p--)
		;
	for (q = p; q > r.err && q[-1] != ' '; q--)
		;
	snprintf(last, sizeof last, "\n%.*s ", (int)(p - q), q);
	cr_assert(p > q && strstr(all.out, last) != NULL, "the refusal's last "
	    "name \"%.*s\" is no register: %s", (int)(p - q), q, r.err);
	h_run_free(&r);
	h_run_free(&all);
	json_decref(h_cli_stop(sid, NULL, NULL));
}
