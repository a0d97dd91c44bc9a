/*
 * The client as a person at a shell meets it: help that names each option
 * with what it does and its default, global options after the command, a
 * suggestion for a mistyped command, bad values as usage errors, a stop that
 * says what it did and when it escalates, read-only commands that start no
 * daemon, and logs --plain for grep.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(shell, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 180);

/*
 * The line of text that starts with prefix, with the lines it is folded
 * onto (those indented past an option's), joined by spaces; or NULL. A
 * static copy.
 */
static const char *
shell_line(const char *text, const char *prefix)
{
	static char	 line[1024];
	const char	*p;
	size_t		 len, n;

	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p != NULL ? p + 1 : NULL) {
		if (strncmp(p, prefix, strlen(prefix)) != 0)
			continue;
		len = strcspn(p, "\n");
		n = snprintf(line, sizeof line, "%.*s", (int)len, p);
		for (p += len; strncmp(p, "\n        ", 9) == 0 &&
		    n < sizeof line; p += len) {
			p += 1 + strspn(p + 1, " ");
			len = strcspn(p, "\n");
			n += snprintf(line + n, sizeof line - n, " %.*s",
			    (int)len, p);
		}
		return line;
	}
	return NULL;
}

/*
 * help COMMAND and COMMAND --help say the same: the usage, then a line an
 * option with what it does and its default (the detach key's among them);
 * help alone names every command with a line of its own.
 */
Test(shell, help_describes_each_option_and_command)
{
	static const char *const commands[] = { "launch", "list", "status",
	    "stop", "signal", "logs", "send", "recv", "pipe", "attach", "exec",
	    "ping", "shutdown", "version", "daemon", "help" };
	struct h_res	 a, b, r;
	const char	*line;
	char		 want[64];
	size_t		 i;

	cr_assert_eq(h_cli(&a, H_ARGS("help", "attach")), 0, "help attach: "
	    "exit %d (%s)", a.code, a.err);
	cr_assert_eq(h_cli(&b, H_ARGS("attach", "--help")), 0, "attach "
	    "--help: exit %d (%s)", b.code, b.err);
	cr_assert_str_eq(a.out, b.out, "help attach and attach --help differ");
	line = shell_line(a.out, "  --detach-key KEY");
	cr_assert_not_null(line, "help attach: no line for --detach-key:\n%s",
	    a.out);
	cr_assert(strstr(line, "default: ^\\") != NULL, "help attach: "
	    "--detach-key does not give its default ^\\: \"%s\"", line);
	h_run_free(&a);
	h_run_free(&b);

	cr_assert_eq(h_cli(&r, H_ARGS("help", "launch")), 0, "help launch");
	line = shell_line(r.out, "  --stop-timeout MS");
	cr_assert(line != NULL && strstr(line, "default: 5000") != NULL,
	    "help launch: --stop-timeout without its default 5000:\n%s", r.out);
	line = shell_line(r.out, "  --detach-key KEY");
	cr_assert(line != NULL && strstr(line, "default: ^\\") != NULL,
	    "help launch: --detach-key without its default:\n%s", r.out);
	cr_assert_not_null(shell_line(r.out, "  -x CMD"), "help launch: no "
	    "line for -x:\n%s", r.out);
	h_run_free(&r);

	cr_assert_eq(h_cli(&r, H_ARGS("help")), 0, "help");
	for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		snprintf(want, sizeof want, "  %s ", commands[i]);
		line = shell_line(r.out, want);
		cr_assert(line != NULL && strlen(line) > strlen(want) + 8,
		    "dbgctl help: no line that says what %s does:\n%s",
		    commands[i], r.out);
	}
	h_run_free(&r);
	h_cli_expect_no_daemon("help");
}

/*
 * --json and -s after the command work as before it; after "--" they are
 * the program's words, never the client's.
 */
Test(shell, global_options_after_the_command)
{
	struct h_res	 r;
	json_t		*j;
	char		 ids[32];
	long		 id;

	h_daemon_fg();
	id = h_cli_launch_exec(NULL, H_ARGS("sleep", "100"));
	h_idstr(id, ids, sizeof ids);

	h_run(&r, H_RUN_BOUND, H_ARGS(H->dbgctl, "status", "--json", "-s",
	    H->sock, ids));
	cr_assert_eq(r.code, 0, "dbgctl status --json -s SOCK %s: exit %d "
	    "(%s)", ids, r.code, r.err);
	j = json_loads(r.out, 0, NULL);
	cr_assert_eq(h_jint(j, "id", -1), id, "status --json after the "
	    "command: not the session's JSON: %s", r.out);
	json_decref(j);
	h_run_free(&r);

	h_run(&r, H_RUN_BOUND, H_ARGS(H->dbgctl, "list", "--socket", H->sock,
	    "--json"));
	cr_assert_eq(r.code, 0, "dbgctl list --socket SOCK --json: exit %d "
	    "(%s)", r.code, r.err);
	cr_assert(r.out[0] == '{', "list --json after the command: not "
	    "JSON: %s", r.out);
	h_run_free(&r);

	/* After "--", --json is the program's argument. */
	cr_assert_eq(h_cli(&r, H_ARGS("launch", "--kind", "exec", "--wait",
	    "--", "sh", "-c", "test \"$1\" = --json", "sh", "--json")), 0,
	    "launch -- sh -c ... --json: the program did not get --json: exit "
	    "%d (%s)", r.code, r.err);
	cr_assert(r.out[0] >= '1' && r.out[0] <= '9', "launch -- ... --json "
	    "printed JSON, taking the program's --json: %s", r.out);
	h_run_free(&r);
}

/* A mistyped command suggests the nearest one; a word near none, nothing. */
Test(shell, unknown_command_suggests_the_nearest)
{
	struct h_res r;

	cr_assert_eq(h_cli(&r, H_ARGS("lauch", "--kind", "exec", "true")), 2,
	    "dbgctl lauch: exit %d", r.code);
	cr_assert(strstr(r.err, "dbgctl: unknown command: lauch; did you mean "
	    "launch?\n") != NULL, "dbgctl lauch: no suggestion: %s", r.err);
	h_run_free(&r);
	cr_assert_eq(h_cli(&r, H_ARGS("stpo", "1")), 2, "dbgctl stpo");
	cr_assert(strstr(r.err, "did you mean stop?") != NULL, "dbgctl stpo: "
	    "no suggestion: %s", r.err);
	h_run_free(&r);
	cr_assert_eq(h_cli(&r, H_ARGS("help", "stauts")), 2, "help stauts");
	cr_assert(strstr(r.err, "did you mean status?") != NULL, "dbgctl help "
	    "stauts: no suggestion: %s", r.err);
	h_run_free(&r);
	cr_assert_eq(h_cli(&r, H_ARGS("xyzzy")), 2, "dbgctl xyzzy");
	cr_assert(strstr(r.err, "unknown command: xyzzy\n") != NULL &&
	    strstr(r.err, "did you mean") == NULL, "dbgctl xyzzy: want no "
	    "suggestion: %s", r.err);
	h_run_free(&r);
	h_cli_expect_no_daemon("lauch");
}

/* dbgctl ARGS is a usage error (exit 2, the usage line) that starts no daemon. */
static void
shell_usage_error(const char *const args[], const char *says)
{
	struct h_res	r;
	char		cmd[512];

	h_join_args(args, cmd, sizeof cmd);
	h_cli(&r, args);
	cr_assert_eq(r.code, 2, "dbgctl %s: expected exit 2, got %d (stderr: "
	    "%s)", cmd, r.code, r.err);
	cr_assert(strstr(r.err, says) != NULL && strstr(r.err, "\nusage: "
	    "dbgctl ") != NULL, "dbgctl %s: expected \"%s\" and the usage on "
	    "stderr, got \"%s\"", cmd, says, r.err);
	h_run_free(&r);
	h_cli_expect_no_daemon(cmd);
}

/* A bad --kind, --stop-target or signal is a usage error, found before any daemon. */
Test(shell, bad_kind_or_signal_is_a_usage_error)
{
	shell_usage_error(H_ARGS("launch", "--kind", "gbd", "--", "true"),
	    "bad --kind gbd");
	shell_usage_error(H_ARGS("launch", "--stop-target", "leave", "--",
	    "true"), "bad --stop-target leave");
	shell_usage_error(H_ARGS("signal", "1", "NOPE"), "bad signal: NOPE");
	shell_usage_error(H_ARGS("signal", "1", "SIGNOPE"), "bad signal");
	shell_usage_error(H_ARGS("signal", "1", "99"), "bad signal: 99");
	shell_usage_error(H_ARGS("signal", "1", "0"), "bad signal: 0");
}

/* stop prints a line a session with how it ended, and a count for several; -q nothing. */
Test(shell, stop_says_what_it_did)
{
	struct h_res	 r;
	char		 a[32], b[32], want[128];
	long		 id1, id2, id3;

	h_daemon_fg();
	id1 = h_cli_launch(H_ARGS("--kind", "exec", "--name", "web", "--",
	    "sleep", "100"));
	id2 = h_cli_launch_exec(NULL, H_ARGS("sleep", "100"));
	id3 = h_cli_launch_exec(NULL, H_ARGS("sleep", "100"));
	h_idstr(id1, a, sizeof a);
	h_idstr(id2, b, sizeof b);

	cr_assert_eq(h_cli(&r, H_ARGS("stop", "web")), 0, "stop web: %s",
	    r.err);
	snprintf(want, sizeof want, "session %ld (web): exit signal 15 (TERM), "
	    "by term\n", id1);
	cr_assert_str_eq(r.out, want, "dbgctl stop web: stdout");
	cr_assert_eq(r.err_len, 0, "dbgctl stop web: stderr \"%s\"", r.err);
	h_run_free(&r);

	cr_assert_eq(h_cli(&r, H_ARGS("stop", "-q", b)), 0, "stop -q");
	cr_assert(r.out_len == 0 && r.err_len == 0, "dbgctl stop -q %s printed "
	    "\"%s\" / \"%s\"", b, r.out, r.err);
	h_run_free(&r);

	cr_assert_eq(h_cli(&r, H_ARGS("stop", "--all")), 0, "stop --all");
	snprintf(want, sizeof want, "session %ld: exit signal 15 (TERM), by "
	    "term\nstopped 1 session\n", id3);
	cr_assert_str_eq(r.out, want, "dbgctl stop --all: stdout");
	h_run_free(&r);

	/* Two already ended: each as it ended, and the count. */
	cr_assert_eq(h_cli(&r, H_ARGS("stop", a, b)), 0, "stop %s %s", a, b);
	snprintf(want, sizeof want, "session %ld (web): exit signal 15 (TERM), "
	    "by term\nsession %ld: exit signal 15 (TERM), by term\nstopped 2 "
	    "sessions\n", id1, id2);
	cr_assert_str_eq(r.out, want, "dbgctl stop %s %s: stdout", a, b);
	h_run_free(&r);
}

/*
 * A program that ignores SIGTERM and SIGHUP: stop says, as it happens, that
 * SIGKILL is sent at the timeout, before it prints how the session ended.
 */
Test(shell, stop_says_when_it_escalates)
{
	struct h_proc	 p;
	struct h_res	 r;
	char		 ids[32], want[128];
	json_t		*st;
	pid_t		 pid;
	long		 id;

	h_daemon_fg();
	id = h_cli_launch_sh(NULL, "trap '' TERM HUP; echo ready; "
	    "while :; do sleep 0.1; done");
	h_idstr(id, ids, sizeof ids);
	h_cli_wait_log(ids, "ready", H_WAIT_BOUND);
	pid = h_cli_status_pid(id, "pid");
	cr_assert(h_pid_wait_sigmask(pid, "SigIgn", SIGTERM, H_WAIT_BOUND),
	    "pid %d never ignored SIGTERM", pid);

	cr_assert_eq(h_cli_start(&p, H_ARGS("stop", "--timeout", "1500",
	    ids)), 0, "start dbgctl stop");
	snprintf(want, sizeof want, "dbgctl: sending SIGKILL to session %ld "
	    "after 1500 ms\n", id);
	h_run_wait(&p, H_RUN_BOUND);
	cr_assert_eq(p.res.code, 0, "stop: exit %d (%s)", p.res.code,
	    p.res.err);
	cr_assert(strstr(p.res.err, want) != NULL, "dbgctl stop --timeout 1500 "
	    "of a program that ignores SIGTERM: expected \"%s\" on stderr, got "
	    "\"%s\"", want, p.res.err);
	snprintf(want, sizeof want, "session %ld: exit signal 9 (KILL), by "
	    "kill\n", id);
	cr_assert_str_eq(p.res.out, want, "dbgctl stop: stdout");
	h_run_free(&p.res);

	/* -q: nothing, the escalation neither. */
	id = h_cli_launch_sh(NULL, "trap '' TERM HUP; echo ready; "
	    "while :; do sleep 0.1; done");
	h_idstr(id, ids, sizeof ids);
	h_cli_wait_log(ids, "ready", H_WAIT_BOUND);
	pid = h_cli_status_pid(id, "pid");
	cr_assert(h_pid_wait_sigmask(pid, "SigIgn", SIGTERM, H_WAIT_BOUND),
	    "pid %d never ignored SIGTERM", pid);
	cr_assert_eq(h_cli(&r, H_ARGS("stop", "-q", "--timeout", "200", ids)),
	    0, "stop -q");
	cr_assert(r.out_len == 0 && r.err_len == 0, "dbgctl stop -q printed "
	    "\"%s\" / \"%s\"", r.out, r.err);
	h_run_free(&r);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "exit.by") ? h_jstr(st, "exit.by") : "",
	    "kill", "stop -q --timeout 200: not killed");
	json_decref(st);
}

/* After shutdown, list, status and logs say no daemon runs, and start none. */
Test(shell, read_only_commands_never_start_a_daemon)
{
	static const char *const cmds[][3] = {
		{ "list", NULL, NULL },
		{ "status", "1", NULL },
		{ "logs", "1", NULL },
		{ "ping", NULL, NULL },
	};
	struct h_res	r;
	size_t		i;

	h_daemon_fg();
	h_cli_launch_exec(NULL, H_ARGS("true"));
	cr_assert_eq(h_cli(&r, H_ARGS("shutdown")), 0, "shutdown: %s", r.err);
	h_run_free(&r);
	cr_assert_eq(h_daemon_fg_wait(H_WAIT_BOUND), 0, "the daemon did not "
	    "exit 0 after shutdown");
	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		h_cli(&r, cmds[i]);
		cr_assert_eq(r.code, 3, "dbgctl %s after shutdown: expected exit "
		    "3, got %d (stdout: %s)", cmds[i][0], r.code, r.out);
		cr_assert(strstr(r.err, "no daemon is running") != NULL,
		    "dbgctl %s after shutdown: stderr \"%s\"", cmds[i][0],
		    r.err);
		cr_assert_eq(r.out_len, 0, "dbgctl %s after shutdown printed "
		    "\"%s\"", cmds[i][0], r.out);
		h_run_free(&r);
		h_cli_expect_no_daemon(cmds[i][0]);
	}
}

/* The escapes, title, hyperlink, charset and CR LF that --plain takes out. */
#define SHELL_ESCAPES \
	"printf '\\033[1;31mRED\\033[0m \\033]0;title\\007T2 \\033(Bcs " \
	"\\033]8;;http://x/\\033\\\\link\\033]8;;\\033\\\\ a\\r\\nb" \
	"\\033[?1049h\\033=\\033>\\033[?25lc\\033[?25h\\033[2J\\033[Hd\\n'"

/* logs --plain: no escape sequence, LF for CR LF; the default stays raw. */
Test(shell, logs_plain_strips_escapes)
{
	struct h_res	 r;
	char		 ids[32];
	long		 id;

	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "exec", "--wait", "--", "sh", "-c",
	    SHELL_ESCAPES));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_cli(&r, H_ARGS("logs", "--plain", ids)), 0, "logs "
	    "--plain: exit %d (%s)", r.code, r.err);
	cr_assert_str_eq(r.out, "RED T2 cs link a\nbcd\n", "logs --plain: got "
	    "\"%s\"", h_shown(r.out, r.out_len, 300));
	h_run_free(&r);
	cr_assert_eq(h_cli(&r, H_ARGS("logs", ids)), 0, "logs");
	cr_assert(strstr(r.out, "\033[1;31mRED\033[0m") != NULL &&
	    strstr(r.out, "a\r\r\nb") != NULL, "logs without --plain is not "
	    "byte for byte: \"%s\"", h_shown(r.out, r.out_len, 300));
	h_run_free(&r);
}

/* Read what the started client prints until out holds text; false at the bound. */
static bool
shell_read_until(struct h_proc *p, struct h_bytes *out, const char *text)
{
	double	end = h_now() + H_WAIT_BOUND / 1000.0;
	char	buf[4096];
	ssize_t	n;

	while (out->p == NULL || strstr(out->p, text) == NULL) {
		if (h_now() >= end)
			return false;
		poll(&(struct pollfd){ p->outfd, POLLIN, 0 }, 1, 50);
		n = read(p->outfd, buf, sizeof buf);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return false;
		if (n > 0)
			h_bytes_add(out, buf, (size_t)n);
	}
	return true;
}

/*
 * logs --plain -f: a sequence and a CR LF that the log gets in two pieces,
 * read apart, come out as if whole.
 */
Test(shell, logs_plain_follows_across_reads)
{
	struct h_bytes	 seen = { NULL, 0 };
	struct h_proc	 follow;
	struct h_res	 r;
	char		 ids[32], all[256];
	long		 id;

	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", "exec >&2; printf 'A\\033[3'; read x; printf "
	    "'1mRED\\033[0m\\r'; read y; printf '\\nend\\r\\n'"));
	h_idstr(id, ids, sizeof ids);
	h_cli_wait_log(ids, "A\033[3", H_WAIT_BOUND);
	cr_assert_eq(h_cli_start(&follow, H_ARGS("logs", "--plain", "-f",
	    ids)), 0, "start logs --plain -f");
	cr_assert(shell_read_until(&follow, &seen, "A"), "logs --plain -f: no "
	    "\"A\" before the rest: \"%s\"", seen.p ? seen.p : "");

	cr_assert_eq(h_cli(&r, H_ARGS("send", ids, "go\n")), 0, "send");
	h_run_free(&r);
	h_cli_wait_log(ids, "\033[0m\r", H_WAIT_BOUND);
	cr_assert(shell_read_until(&follow, &seen, "RED"), "logs --plain -f: "
	    "no \"RED\": \"%s\"", h_shown(seen.p, seen.len, 200));
	cr_assert_eq(h_cli(&r, H_ARGS("send", "--eof", ids, "go\n")), 0,
	    "send --eof");
	h_run_free(&r);

	h_run_wait(&follow, H_RUN_BOUND);
	cr_assert_eq(follow.res.code, 0, "logs --plain -f: exit %d (%s)",
	    follow.res.code, follow.res.err);
	snprintf(all, sizeof all, "%s%s", seen.p, follow.res.out);
	cr_assert_str_eq(all, "ARED\nend\n", "logs --plain -f across reads: "
	    "got \"%s\"", h_shown(all, strlen(all), 200));
	h_run_free(&follow.res);
	free(seen.p);
}

/* "shell sleep 100\n" in base64: at gdb's console it keeps gdb busy. */
#define SHELL_BUSY_B64	"c2hlbGwgc2xlZXAgMTAwCg=="

/*
 * A gdb kept busy by a shell command does not quit: stop says, as it
 * happens, that SIGTERM follows at half the timeout.
 */
Test(shell, stop_says_when_the_quit_takes_too_long)
{
	struct h_conn	 c;
	struct h_res	 r;
	char		 ids[32], m[96], params[128], want[128];
	json_t		*j;
	long		 id;

	h_daemon_fg();
	h_marker_new("DBGI_SHELLBUSY", m, sizeof m);
	id = h_cli_launch(H_ARGS("--env", m, "--", "/bin/sleep", "100"));
	h_idstr(id, ids, sizeof ids);
	snprintf(params, sizeof params, "{\"session\":%ld,\"stream\":"
	    "\"console\",\"data\":\"%s\"}", id, SHELL_BUSY_B64);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect to %s", H->sock);
	j = h_conn_call(&c, "write", params, H_WAIT_BOUND);
	cr_assert_not_null(h_jpath(j, "result"), "write to the console");
	json_decref(j);
	h_conn_close(&c);
	/* gdb's file is not run: the one sleep with the marker is the shell's. */
	h_marker_wait(m, "sleep", 1);

	cr_assert_eq(h_cli(&r, H_ARGS("stop", "--timeout", "3000", ids)), 0,
	    "stop: exit %d (%s)", r.code, r.err);
	snprintf(want, sizeof want, "dbgctl: sending SIGTERM to session %ld "
	    "after 1500 ms\n", id);
	cr_assert(strstr(r.err, want) != NULL, "dbgctl stop --timeout 3000 of "
	    "a busy gdb: expected \"%s\" on stderr, got \"%s\"", want, r.err);
	snprintf(want, sizeof want, "session %ld: exit ", id);
	cr_assert(strncmp(r.out, want, strlen(want)) == 0 &&
	    (strstr(r.out, ", by term\n") != NULL ||
	    strstr(r.out, ", by kill\n") != NULL), "dbgctl stop of a busy gdb: "
	    "stdout \"%s\"", r.out);
	h_run_free(&r);
}
