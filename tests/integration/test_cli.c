/*
 * The client's contract as scripts see it: exit statuses, error messages,
 * usage errors that start no daemon, names, environment and cwd of launched
 * programs, and signal.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(cli, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 120);

/* ping does not auto-start a daemon: exit 3 and still no daemon. */
Test(cli, ping_does_not_autostart)
{
	struct h_res r;
	pid_t d[4];

	h_cli(&r, H_ARGS("ping"));
	cr_assert_eq(r.code, 3, "dbgctl ping with no daemon: expected exit 3, "
	    "got %d (stderr: %s)", r.code, r.err);
	cr_assert(strncmp(r.err, "dbgctl: ", 8) == 0, "dbgctl ping: expected "
	    "\"dbgctl: <message>\" on stderr, got \"%s\"", r.err);
	h_run_free(&r);
	cr_assert_eq(h_daemon_list(d, 4), 0, "dbgctl ping started a daemon");
	cr_assert(!h_daemon_ping(), "a daemon answers after dbgctl ping");
}

/* An unknown session: exit 1 and "dbgctl: <message>" on stderr. */
Test(cli, unknown_session_exits_1)
{
	struct h_res r;

	h_daemon_fg();
	h_cli(&r, H_ARGS("status", "999"));
	cr_assert_eq(r.code, 1, "dbgctl status 999: expected exit 1, got %d "
	    "(stderr: %s)", r.code, r.err);
	cr_assert(strncmp(r.err, "dbgctl: ", 8) == 0, "dbgctl status 999: "
	    "expected \"dbgctl: <message>\", got \"%s\"", r.err);
	cr_assert_eq(r.out_len, 0, "dbgctl status 999: expected nothing on "
	    "stdout, got \"%s\"", r.out);
	h_run_free(&r);
	h_cli(&r, H_ARGS("stop", "999"));
	cr_assert_eq(r.code, 1, "dbgctl stop 999: expected exit 1, got %d "
	    "(stderr: %s)", r.code, r.err);
	h_run_free(&r);
}

/* Usage errors exit 2 without touching the daemon. */
Test(cli, usage_exits_2)
{
	struct h_res r;

	h_cli(&r, H_ARGS("launch", "--kind", "exec"));
	cr_assert_eq(r.code, 2, "dbgctl launch without a program: expected "
	    "exit 2, got %d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
	h_cli(&r, H_ARGS("no-such-command"));
	cr_assert_eq(r.code, 2, "dbgctl no-such-command: expected exit 2, got "
	    "%d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
}

/*
 * dbgctl ARGS is a usage error: exit 2, "dbgctl: <message>" and the
 * command's usage line on stderr, nothing on stdout, and no daemon started.
 */
static void
cli_usage_error(const char *const args[])
{
	struct h_res r;
	char cmd[512], usage[128];

	h_join_args(args, cmd, sizeof(cmd));
	snprintf(usage, sizeof(usage), "\nusage: dbgctl %s", args[0]);
	h_cli(&r, args);
	cr_assert_eq(r.code, 2, "dbgctl %s: expected exit 2, got %d (stderr: "
	    "%s)", cmd, r.code, r.err);
	cr_assert(strncmp(r.err, "dbgctl: ", 8) == 0, "dbgctl %s: expected "
	    "\"dbgctl: <message>\" on stderr, got \"%s\"", cmd, r.err);
	cr_assert(strstr(r.err, usage) != NULL, "dbgctl %s: expected the usage "
	    "line on stderr, got \"%s\"", cmd, r.err);
	cr_assert_eq(r.out_len, 0, "dbgctl %s: expected nothing on stdout, got "
	    "\"%s\"", cmd, r.out);
	h_run_free(&r);
	h_cli_expect_no_daemon(cmd);
}

/* launch: bad options and a missing PROGRAM are usage errors. */
Test(cli, launch_usage_errors_exit_2)
{
	cli_usage_error(H_ARGS("launch", "-Z", "--kind", "exec", "true"));
	cli_usage_error(H_ARGS("launch", "-n", "x", "--kind", "exec", "true"));
	cli_usage_error(H_ARGS("launch", "--kind"));
	cli_usage_error(H_ARGS("launch", "--kind", "exec", "-x"));
	cli_usage_error(H_ARGS("launch", "--port", "x", "--kind", "exec",
	    "true"));
	cli_usage_error(H_ARGS("launch", "--transport=yes", "true"));
	cli_usage_error(H_ARGS("launch", "--kind", "exec"));
	cli_usage_error(H_ARGS("launch", "--wait", "--attach", "true"));
	cli_usage_error(H_ARGS("launch", "--detach-key", "bad", "true"));
	cli_usage_error(H_ARGS("launch", "--env", "novalue", "true"));
}

/* list, status and signal: bad options and operand counts. */
Test(cli, list_status_signal_usage_errors_exit_2)
{
	cli_usage_error(H_ARGS("list", "-Z"));
	cli_usage_error(H_ARGS("list", "1"));
	cli_usage_error(H_ARGS("status", "-Z", "1"));
	cli_usage_error(H_ARGS("status"));
	cli_usage_error(H_ARGS("status", "1", "2"));
	cli_usage_error(H_ARGS("signal", "-Z", "1"));
	cli_usage_error(H_ARGS("signal", "-n", "INT", "1"));
	cli_usage_error(H_ARGS("signal"));
	cli_usage_error(H_ARGS("signal", "1", "INT", "2"));
}

/* stop: bad options, no SESSION, or SESSION with --all. */
Test(cli, stop_usage_errors_exit_2)
{
	cli_usage_error(H_ARGS("stop", "-Z", "1"));
	cli_usage_error(H_ARGS("stop", "-t", "1", "1"));
	cli_usage_error(H_ARGS("stop", "-a"));
	cli_usage_error(H_ARGS("stop", "--timeout"));
	cli_usage_error(H_ARGS("stop", "--timeout", "soon", "1"));
	cli_usage_error(H_ARGS("stop"));
	cli_usage_error(H_ARGS("stop", "--all", "1"));
}

/* logs: bad options, a bad -n, and operand counts. */
Test(cli, logs_usage_errors_exit_2)
{
	cli_usage_error(H_ARGS("logs", "-Z", "1"));
	cli_usage_error(H_ARGS("logs", "-fZ", "1"));
	cli_usage_error(H_ARGS("logs", "--follow", "1"));
	cli_usage_error(H_ARGS("logs", "-n"));
	cli_usage_error(H_ARGS("logs", "-n", "-1", "1"));
	cli_usage_error(H_ARGS("logs"));
	cli_usage_error(H_ARGS("logs", "1", "2"));
}

/* send: an unknown option stops it before it connects or starts a daemon. */
Test(cli, send_usage_errors_exit_2)
{
	cli_usage_error(H_ARGS("send", "-Z", "x", "hi"));
	cli_usage_error(H_ARGS("send", "-e", "x"));
	cli_usage_error(H_ARGS("send", "--eof=yes", "x"));
	cli_usage_error(H_ARGS("send"));
	cli_usage_error(H_ARGS("send", "x", "hi", "there"));
}

/* recv: an unknown option stops it before it starts a daemon. */
Test(cli, recv_usage_errors_exit_2)
{
	cli_usage_error(H_ARGS("recv", "-Z", "x"));
	cli_usage_error(H_ARGS("recv", "-m", "1", "-t", "1", "x"));
	cli_usage_error(H_ARGS("recv", "-t", "1", "x"));
	cli_usage_error(H_ARGS("recv", "--max"));
	cli_usage_error(H_ARGS("recv", "--max", "0", "x"));
	cli_usage_error(H_ARGS("recv", "--timeout", "1s", "x"));
	cli_usage_error(H_ARGS("recv"));
	cli_usage_error(H_ARGS("recv", "x", "y"));
}

/* pipe and attach: bad options and operand counts, before any terminal check. */
Test(cli, pipe_attach_usage_errors_exit_2)
{
	cli_usage_error(H_ARGS("pipe", "-Z", "1"));
	cli_usage_error(H_ARGS("pipe"));
	cli_usage_error(H_ARGS("pipe", "1", "2"));
	cli_usage_error(H_ARGS("attach", "-Z", "x"));
	cli_usage_error(H_ARGS("attach", "-k", "x", "1"));
	cli_usage_error(H_ARGS("attach", "--detach-key"));
	cli_usage_error(H_ARGS("attach", "--detach-key", "^^^", "1"));
	cli_usage_error(H_ARGS("attach"));
	cli_usage_error(H_ARGS("attach", "1", "2"));
}

/* ping, shutdown, version, daemon and help: bad options and operands. */
Test(cli, daemon_commands_usage_errors_exit_2)
{
	cli_usage_error(H_ARGS("ping", "-Z"));
	cli_usage_error(H_ARGS("ping", "1"));
	cli_usage_error(H_ARGS("shutdown", "-Z"));
	cli_usage_error(H_ARGS("shutdown", "-t", "1"));
	cli_usage_error(H_ARGS("shutdown", "--timeout"));
	cli_usage_error(H_ARGS("shutdown", "--timeout", "x"));
	cli_usage_error(H_ARGS("shutdown", "1"));
	cli_usage_error(H_ARGS("version", "-Z"));
	cli_usage_error(H_ARGS("version", "1"));
	cli_usage_error(H_ARGS("daemon", "-Z"));
	cli_usage_error(H_ARGS("daemon", "-f"));
	cli_usage_error(H_ARGS("daemon", "--listen"));
	cli_usage_error(H_ARGS("daemon", "--foreground", "now"));
	cli_usage_error(H_ARGS("help", "-Z"));
	cli_usage_error(H_ARGS("help", "stop", "list"));
	cli_usage_error(H_ARGS("help", "no-such-command"));
}

/* -h and --help print a command's usage on stdout, exit 0, start nothing. */
Test(cli, help_option_prints_usage_and_exits_0)
{
	static const char *const names[] = { "launch", "list", "status",
	    "stop", "signal", "logs", "expect", "send", "recv", "pipe", "attach",
	    "ping", "shutdown", "version", "daemon", "help" };
	static const char *const opts[] = { "-h", "--help" };
	struct h_res r;
	char cmd[128], usage[128];
	size_t i, j;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (j = 0; j < 2; j++) {
			snprintf(cmd, sizeof(cmd), "%s %s", names[i], opts[j]);
			snprintf(usage, sizeof(usage), "usage: dbgctl %s",
			    names[i]);
			h_cli(&r, H_ARGS(names[i], opts[j]));
			cr_assert_eq(r.code, 0, "dbgctl %s: expected exit 0, "
			    "got %d (stderr: %s)", cmd, r.code, r.err);
			cr_assert(strncmp(r.out, usage, strlen(usage)) == 0,
			    "dbgctl %s: expected \"%s\" on stdout, got \"%s\"",
			    cmd, usage, r.out);
			h_run_free(&r);
			h_cli_expect_no_daemon(cmd);
		}
	}
}

/* A program that cannot be executed: exit 1 with the cause. */
Test(cli, spawn_failure_reported)
{
	struct h_res r;

	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--",
	    "/nonexistent/prog"));
	cr_assert_eq(r.code, 1, "dbgctl launch -- /nonexistent/prog: expected "
	    "exit 1, got %d (stdout: %s, stderr: %s)", r.code, r.out, r.err);
	cr_assert(strstr(r.err, "No such file or directory") != NULL, "dbgctl "
	    "launch -- /nonexistent/prog: expected the cause on stderr, got "
	    "\"%s\"", r.err);
	h_run_free(&r);
}

/* --name, --env and --cwd reach the program; the name works as SESSION. */
Test(cli, name_env_cwd)
{
	struct h_res r;
	char ids[32], want[128];
	json_t *st;
	long id;

	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--name", "fw", "--env",
	    "FOO=bar baz", "--cwd", "/usr", "--", "sh", "-c",
	    "echo \"v=$FOO s=$DBGCTL_SESSION d=$(pwd)\"; sleep 100"));
	cr_assert_eq(r.code, 0, "dbgctl launch --name fw: exit %d (stderr: %s)",
	    r.code, r.err);
	id = strtol(r.out, NULL, 10);
	cr_assert_gt(id, 0, "launch: expected an id, got \"%s\"", r.out);
	h_run_free(&r);
	h_idstr(id, ids, sizeof(ids));

	st = h_cli_json(H_ARGS("status", "fw"));
	cr_assert_eq(h_jint(st, "id", -1), id, "status fw: expected id %ld, got "
	    "%lld", id, h_jint(st, "id", -1));
	cr_assert_str_eq(h_jstr(st, "name") ? h_jstr(st, "name") : "", "fw",
	    "status fw: name");
	cr_assert_str_eq(h_jstr(st, "cwd") ? h_jstr(st, "cwd") : "", "/usr",
	    "status fw: cwd");
	json_decref(st);

	snprintf(want, sizeof(want), "v=bar baz s=%ld d=/usr", id);
	h_cli_wait_log(ids, want, H_WAIT_BOUND);

	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--name", "fw", "--",
	    "sleep", "100"));
	cr_assert_eq(r.code, 1, "a second launch --name fw: expected exit 1 "
	    "(name in use), got %d (stderr: %s)", r.code, r.err);
	h_run_free(&r);

	cr_assert_eq(h_cli(&r, H_ARGS("stop", "fw")), 0, "dbgctl stop fw: exit "
	    "%d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
}

/* signal SESSION INT reaches the program's foreground process group. */
Test(cli, signal_int)
{
	struct h_res r;
	char ids[32];
	json_t *st;
	pid_t pid;
	long id;

	id = h_cli_launch_sh(NULL, "trap 'echo GOT-INT; exit 3' INT; "
	    "while :; do sleep 0.1; done");
	h_idstr(id, ids, sizeof(ids));
	pid = h_cli_status_pid(id, "pid");
	cr_assert(h_pid_wait_sigmask(pid, "SigCgt", SIGINT, H_WAIT_BOUND),
	    "pid %d never installed its INT trap", pid);
	h_cli(&r, H_ARGS("signal", ids, "INT"));
	cr_assert_eq(r.code, 0, "dbgctl signal %s INT: expected exit 0, got %d "
	    "(stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %ld did not end after SIGINT", id);
	cr_assert_eq(h_jint(st, "exit.code", -1), 3, "after SIGINT: expected "
	    "the trap's exit.code 3, got %lld (exit.signal %lld)",
	    h_jint(st, "exit.code", -1), h_jint(st, "exit.signal", -1));
	json_decref(st);
	cr_assert(h_cli_log_has(ids, "GOT-INT"), "dbgctl logs %s: expected "
	    "GOT-INT", ids);
	h_cli(&r, H_ARGS("signal", ids, "INT"));
	cr_assert_eq(r.code, 1, "dbgctl signal to an ended session: expected "
	    "exit 1 (not_running), got %d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
}

/* logs -f prints what comes later and returns when the session ends. */
Test(cli, logs_follow_to_the_end)
{
	struct h_proc	 follow;
	struct h_res	 r;
	char		 ids[32];
	long		 id;

	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "sh", "-c", "echo first >&2; read x; echo second-$x >&2"));
	h_idstr(id, ids, sizeof(ids));
	h_cli_wait_log(ids, "first", H_WAIT_BOUND);
	cr_assert_eq(h_cli_start(&follow, H_ARGS("logs", "-f", ids)), 0,
	    "start dbgctl logs -f %s", ids);
	cr_assert_eq(h_cli(&r, H_ARGS("send", "--eof", ids, "go\n")), 0,
	    "dbgctl send: exit %d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
	h_run_wait(&follow, H_RUN_BOUND);
	cr_assert_eq(follow.res.code, 0, "dbgctl logs -f %s: expected exit 0 "
	    "once the session ended, got %d (stderr: %s)", ids,
	    follow.res.code, follow.res.err);
	cr_assert(strstr(follow.res.out, "first") != NULL &&
	    strstr(follow.res.out, "second-go") != NULL, "dbgctl logs -f %s: "
	    "expected \"first\" and \"second-go\", got \"%s\"", ids,
	    follow.res.out);
	h_run_free(&follow.res);
}

/* version names both ends; shutdown ends the daemon, and ping then finds none. */
Test(cli, version_then_shutdown)
{
	struct h_res	 r;
	json_t		*v;
	pid_t		 pid, d[4];

	pid = h_daemon_fg();
	v = h_cli_json(H_ARGS("version"));
	cr_assert_str_eq(h_jstr(v, "client") ? h_jstr(v, "client") : "",
	    "0.1.0", "version --json: client version");
	cr_assert_str_eq(h_jstr(v, "daemon.version") ?
	    h_jstr(v, "daemon.version") : "", "0.1.0",
	    "version --json: daemon version");
	cr_assert_eq(h_jint(v, "daemon.pid", -1), pid, "version --json: daemon "
	    "pid %lld, expected %d", h_jint(v, "daemon.pid", -1), (int)pid);
	json_decref(v);
	cr_assert_eq(h_cli(&r, H_ARGS("shutdown")), 0, "dbgctl shutdown: exit "
	    "%d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
	cr_assert_eq(h_daemon_fg_wait(H_WAIT_BOUND), 0, "the daemon did not "
	    "exit 0 after dbgctl shutdown");
	cr_assert_eq(h_cli(&r, H_ARGS("ping")), 3, "dbgctl ping after shutdown: "
	    "expected exit 3, got %d", r.code);
	h_run_free(&r);
	cr_assert_eq(h_daemon_list(d, 4), 0, "a dbgctld still runs after "
	    "shutdown");
}
