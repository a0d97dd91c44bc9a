/*
 * Kinds as plug-ins, and the qemu kind: the board firmware (examples/board)
 * launched with --kind qemu prints its banner on the transport, status
 * shows the kind, QEMU's pid and port; a machine QEMU does not know fails
 * with QEMU's words; a missing --machine, or one given to another kind, is
 * refused naming it; a launch answers with the firmware running, every
 * time; stop leaves nothing alive; and the kinds hello lists
 * are the ones the schema, the completion and the client's --kind know.
 *
 * FIX_BOARD and FIX_BOARD_B (set by meson when clang and ld.lld built
 * them) are the firmware; without them, qemu-system-arm or gdb-multiarch
 * the board tests are skipped. DBGCTL_SOURCE_ROOT is the source tree.
 */
#include <sys/stat.h>

#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(kinds, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* The words of text as a JSON array of strings (split at blanks). */
static json_t *
kinds_words(const char *text, size_t len)
{
	json_t *a = json_array();
	size_t i = 0, k;

	while (i < len) {
		for (; i < len && strchr(" \t\n,", text[i]) != NULL; i++)
			;
		for (k = i; k < len && strchr(" \t\n,", text[k]) == NULL; k++)
			;
		if (k > i)
			json_array_append_new(a, json_stringn(text + i, k - i));
		i = k;
	}
	return a;
}

/* A file of the source tree (DBGCTL_SOURCE_ROOT/rel), read whole. */
static char *
kinds_source(const char *rel)
{
	const char *root = getenv("DBGCTL_SOURCE_ROOT");
	char path[PATH_MAX], *text;
	size_t len;

	cr_assert(root != NULL && *root != '\0', "DBGCTL_SOURCE_ROOT is not "
	    "set (tests/integration/meson.build sets it)");
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	text = h_read_file(path, &len);
	cr_assert_not_null(text, "cannot read %s", path);
	return text;
}

/* The kinds hello lists, asserted there. */
static json_t *
kinds_hello(void)
{
	json_t *hello, *kinds;

	h_daemon_fg();
	hello = h_daemon_hello();
	cr_assert_not_null(hello, "no hello from the daemon");
	kinds = json_incref(json_object_get(hello, "capabilities"));
	json_decref(hello);
	cr_assert(json_is_array(kinds), "hello has no capabilities array");
	return kinds;
}

/* Assert that two lists of kinds are equal, in order. */
static void
kinds_same(json_t *want, json_t *got, const char *what)
{
	char *w = json_dumps(want, JSON_COMPACT), *g = json_dumps(got,
	    JSON_COMPACT);

	cr_assert(json_equal(want, got), "%s: expected the kinds hello lists, "
	    "%s, got %s", what, w, g);
	free(w);
	free(g);
}

/*
 * The qemu kind launches the board: the banner comes through the transport
 * (on by default), status says kind qemu, gdb-multiarch, QEMU's pid and
 * its port; stop leaves no process of the session alive.
 */
Test(kinds, qemu_launches_the_board_and_stop_leaves_nothing)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	struct h_tracked t[6] = { { 0 } };
	char marker[96], ids[32];
	struct h_res r;
	json_t *st, *argv;
	pid_t srv;
	long id;

	h_marker_new("DBGI_KINDS", marker, sizeof(marker));
	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--env", marker, "--", fw));
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("expect", "--timeout", "20000", ids,
	    "board ready")), 0, "dbgctl expect %s 'board ready': expected exit "
	    "0 (the banner on the transport), got %d: %s%s", ids, r.code,
	    r.out, r.err);
	h_run_free(&r);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "kind") ? h_jstr(st, "kind") : "", "qemu");
	cr_assert_str_eq(h_jstr(st, "state") ? h_jstr(st, "state") : "",
	    "running");
	cr_assert_str_eq(h_jstr(st, "debugger") ? h_jstr(st, "debugger") : "",
	    "gdb-multiarch");
	cr_assert(json_is_true(json_object_get(st, "transport")),
	    "status %s: the transport is on by default for qemu", ids);
	srv = (pid_t)h_jint(st, "server_pid", -1);
	cr_assert_gt(srv, 0, "status %s: no server_pid", ids);
	h_pid_expect_comm(srv, "server_pid", "qemu-system-arm");
	cr_assert_gt(h_jint(st, "port", 0), 0, "status %s: no port", ids);
	cr_assert_eq(h_jint(st, "server.port", 0), h_jint(st, "port", 0));
	argv = h_jpath(st, "server.argv");
	cr_assert(h_jhas(argv, "lm3s6965evb") && h_jhas(argv, "-S") &&
	    h_jhas(argv, fw), "server.argv: %s", json_dumps(argv,
	    JSON_COMPACT));
	h_pid_track(&t[0], "gdb-multiarch", (pid_t)h_jint(st, "pid", -1));
	h_pid_track(&t[1], "gdb's keeper", (pid_t)h_jint(st, "keeper_pid",
	    -1));
	h_pid_track(&t[2], "qemu-system-arm", srv);
	h_pid_track(&t[3], "QEMU's keeper", h_pid_ppid(srv));
	h_pid_expect_comm(t[3].pid, "server_pid's parent", "dbgctl-keeper");
	json_decref(st);
	h_cli_stop_leaves_nothing(id, t, marker);
}

/*
 * One launch of the board on c, which is subscribed: the launch's answer
 * says running, its target record running, and that record (by its seq)
 * and the session's running state were told before the answer; status
 * right after says the target runs; stop. round: messages.
 */
static void
kinds_qemu_launch_runs(struct h_conn *c, const char *fw, int round)
{
	char req[PATH_MAX + 256];
	long rid = c->next_id++, id = -1, tid = -1, tseq = -1;
	bool told_state = false;
	json_t *msg, *reply = NULL, *st;
	const char *m;

	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"launch\",\"params\":{\"kind\":\"qemu\","
	    "\"machine\":\"lm3s6965evb\",\"argv\":[\"%s\"]}}\n", rid, fw);
	cr_assert_eq(h_conn_send(c, req, strlen(req), H_WAIT_BOUND), 0,
	    "round %d: send the launch", round);
	/* Lines in order: what is told of the new session, then the answer. */
	while (reply == NULL && (msg = h_conn_recv(c, H_WAIT_BOUND)) != NULL) {
		if (h_jint(msg, "id", -1) == rid) {
			reply = msg;
			break;
		}
		m = h_jstr(msg, "method");
		if (m != NULL && strcmp(m, "session.target") == 0 &&
		    h_jstr(msg, "params.target.state") != NULL &&
		    strcmp(h_jstr(msg, "params.target.state"), "running") == 0) {
			tid = h_jint(msg, "params.session", -1);
			tseq = h_jint(msg, "params.target.seq", -1);
		}
		if (m != NULL && strcmp(m, "session.state") == 0 &&
		    h_jstr(msg, "params.state") != NULL &&
		    strcmp(h_jstr(msg, "params.state"), "running") == 0) {
			id = h_jint(msg, "params.session", -1);
			told_state = true;
		}
		json_decref(msg);
	}
	cr_assert_not_null(reply, "round %d: no answer to the launch", round);
	cr_assert_str_eq(h_jstr(reply, "result.target.state") ? h_jstr(reply,
	    "result.target.state") : "(none)", "running", "round %d: the "
	    "launch answered with the target %s", round, json_dumps(h_jpath(
	    reply, "result.target"), JSON_COMPACT));
	cr_assert_eq(h_jint(reply, "result.id", -2), id, "round %d: the "
	    "answer's session is not the one told running", round);
	cr_assert(told_state && tid == id && tseq == h_jint(reply,
	    "result.target.seq", -2), "round %d: before the launch's answer "
	    "(session %ld, target seq %lld), the subscriber was told: session "
	    "running %s, target running of session %ld at seq %ld", round, id,
	    h_jint(reply, "result.target.seq", -2), told_state ? "yes" : "no",
	    tid, tseq);
	json_decref(reply);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "target.state") ? h_jstr(st,
	    "target.state") : "(none)", "running", "round %d: status %ld right "
	    "after the launch", round, id);
	json_decref(st);
	snprintf(req, sizeof(req), "{\"session\":%ld}", id);
	json_decref(h_conn_call(c, "stop", req, H_WAIT_BOUND));
	h_cli_expect_state(id, "exited", "after stop");
}

/*
 * A qemu launch answers once the firmware runs from its reset vector,
 * never with the target stopped at Reset_Handler where QEMU's -S and
 * gdb's connection left it: twenty launches in a row, each told in order.
 */
Test(kinds, qemu_launch_answers_with_the_firmware_running_every_time)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	struct h_conn c;
	int i;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	json_decref(h_conn_call(&c, "subscribe", "{\"output\":false}",
	    H_WAIT_BOUND));
	for (i = 1; i <= 20; i++)
		kinds_qemu_launch_runs(&c, fw, i);
	h_conn_close(&c);
}

/* The second build says which it is: the banner a load test will look for. */
Test(kinds, qemu_runs_the_second_build)
{
	const char *fw = h_board_firmware("FIX_BOARD_B");
	char ids[32];
	struct h_res r;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--", fw));
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("expect", "--timeout", "20000", ids,
	    "board b ready")), 0, "dbgctl expect %s 'board b ready' on "
	    "board-b.elf: expected exit 0, got %d: %s%s", ids, r.code, r.out,
	    r.err);
	h_run_free(&r);
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "stop %s", ids);
	h_run_free(&r);
}

/* Run dbgctl expect on the session's target stream; assert it matches. */
static void
kinds_expect(const char *ids, const char *pattern, const char *when)
{
	struct h_res r;

	cr_assert_eq(h_cli(&r, H_ARGS("expect", "--timeout", "20000", ids,
	    pattern)), 0, "%s: dbgctl expect %s '%s': expected exit 0, got %d: "
	    "%s%s", when, ids, pattern, r.code, r.out, r.err);
	h_run_free(&r);
}

/* A request on a connection of its own; the reply. */
static json_t *
kinds_call(const char *method, const char *params)
{
	struct h_conn c;
	json_t *reply;

	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	reply = h_conn_call(&c, method, params, H_WAIT_BOUND);
	h_conn_close(&c);
	cr_assert_not_null(reply, "no reply to %s %s", method, params);
	return reply;
}

/*
 * The kind's recipes: reset (monitor system_reset, flushregs) runs the
 * firmware from its reset vector again, so the banner comes again; load
 * of the second build, then its reset, makes the banner say "board b".
 */
Test(kinds, qemu_reset_and_load_use_the_kinds_recipes)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	const char *fw_b = h_board_firmware("FIX_BOARD_B");
	char ids[32], params[4096];
	json_t *reply;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--", fw));
	h_idstr(id, ids, sizeof(ids));
	kinds_expect(ids, "board ready", "at launch");
	snprintf(params, sizeof(params), "{\"session\":%ld}", id);
	reply = kinds_call("reset", params);
	cr_assert_str_eq(h_jstr(reply, "result.target.state") ? h_jstr(reply,
	    "result.target.state") : "", "running", "reset of a qemu session: "
	    "%s", json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	/* expect goes on after the first banner: this is the reset's. */
	kinds_expect(ids, "board ready", "after reset");
	snprintf(params, sizeof(params), "{\"session\":%ld,\"file\":\"%s\"}",
	    id, fw_b);
	reply = kinds_call("load", params);
	cr_assert_not_null(json_object_get(reply, "result"), "load of "
	    "board-b.elf: %s", json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	kinds_expect(ids, "board b ready", "after load of board-b.elf");
	json_decref(h_cli_stop(id, NULL, NULL));
}

/* Run dbgctl ARGS... on the session; assert exit 0; its stdout. */
static char *
kinds_cli_ok(const char *const args[], const char *when)
{
	char line[1024], *out;
	struct h_res r;

	h_join_args(args, line, sizeof(line));
	h_cli(&r, args);
	cr_assert_eq(r.code, 0, "%s: dbgctl %s: expected exit 0, got %d: %s%s",
	    when, line, r.code, r.out, r.err);
	out = strdup(r.out);
	h_run_free(&r);
	return out;
}

/*
 * A board keeps its breakpoints in the target while it is halted (gdb's
 * always-inserted), so that no resume sends them again: gdb says so; a
 * breakpoint on uart_putc is hit for an echoed byte, and still after a
 * reset, which QEMU does with them in place: the banner stops there.
 */
Test(kinds, qemu_breakpoints_stay_in_while_halted_and_across_a_reset)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	char ids[32], params[256], *out;
	struct h_res r;
	json_t *j;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--", fw));
	h_idstr(id, ids, sizeof(ids));
	kinds_expect(ids, "board ready", "at launch");
	free(kinds_cli_ok(H_ARGS("halt", ids), "halt"));
	j = h_cli_json(H_ARGS("exec", ids, "--", "-gdb-show", "breakpoint",
	    "always-inserted"));
	cr_assert_str_eq(h_jstr(j, "results.value") ? h_jstr(j,
	    "results.value") : "(none)", "on", "gdb's breakpoint "
	    "always-inserted in a qemu session");
	json_decref(j);
	free(kinds_cli_ok(H_ARGS("break", ids, "uart_putc"), "break"));
	cr_assert_eq(h_cli_input(&r, "x", H_ARGS("send", ids)), 0, "send x: "
	    "exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	out = kinds_cli_ok(H_ARGS("resume", "--wait", ids), "resume to the "
	    "echo");
	cr_assert(strstr(out, "breakpoint-hit") != NULL && strstr(out,
	    "uart_putc") != NULL, "resume --wait after a byte: expected the "
	    "breakpoint's hit in uart_putc, got: %s", out);
	free(out);
	snprintf(params, sizeof(params), "{\"session\":%ld}", id);
	j = kinds_call("reset", params);
	cr_assert_not_null(json_object_get(j, "result"), "reset: %s",
	    json_dumps(j, JSON_COMPACT));
	json_decref(j);
	cr_assert(h_cli_wait_status(id, "target.state", "stopped",
	    H_WAIT_BOUND), "after the reset, the banner never stopped at "
	    "the breakpoint");
	j = h_cli_status(id);
	cr_assert_str_eq(h_jstr(j, "target.stop.reason") ? h_jstr(j,
	    "target.stop.reason") : "(none)", "breakpoint-hit", "the stop "
	    "after the reset: %s", json_dumps(j, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(j, "target.stop.func") ? h_jstr(j,
	    "target.stop.func") : "(none)", "uart_putc", "where the banner "
	    "stopped after the reset");
	json_decref(j);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/* The "socket:[N]" pid holds as fd, or "" if none. */
static void
kinds_fd_socket(pid_t pid, int fd, char *out, size_t len)
{
	static char targets[H_MAXFDS][PATH_MAX];
	int fds[H_MAXFDS], i, n;

	*out = '\0';
	n = h_pid_fds(pid, fds, targets, H_MAXFDS);
	for (i = 0; i < n; i++)
		if (fds[i] == fd && strncmp(targets[i], "socket:", 7) == 0)
			snprintf(out, len, "%s", targets[i]);
}

/* Whether pid holds the socket "socket:[N]" on any fd. */
static bool
kinds_holds(pid_t pid, const char *sock)
{
	static char targets[H_MAXFDS][PATH_MAX];
	int fds[H_MAXFDS], i, n;

	n = h_pid_fds(pid, fds, targets, H_MAXFDS);
	for (i = 0; i < n; i++)
		if (strcmp(targets[i], sock) == 0)
			return true;
	return false;
}

/*
 * QEMU gets its gdb stub's socket from the daemon, listening before QEMU
 * runs, so that gdb connects while QEMU still starts: a QEMU that takes
 * 3 s to start, longer than gdb's own 2 s wait for a first answer, is
 * connected all the same; QEMU holds the socket as its fd 6 and the
 * daemon keeps no copy, which would hold gdb on a QEMU that died.
 */
Test(kinds, qemu_gets_its_stub_socket_from_the_daemon_and_a_slow_start_connects)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	char ids[32], qemu[512], sock[PATH_MAX];
	json_t *st;
	FILE *f;
	pid_t srv;
	long id;

	snprintf(qemu, sizeof(qemu), "%s/slow-qemu", H->dir);
	cr_assert_not_null(f = fopen(qemu, "w"), "%s", qemu);
	fputs("#!/bin/sh\nsleep 3\nexec qemu-system-arm \"$@\"\n", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(qemu, 0755), 0);
	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--qemu", qemu, "--", fw));
	h_idstr(id, ids, sizeof(ids));
	kinds_expect(ids, "board ready", "after QEMU's slow start");
	st = h_cli_status(id);
	srv = (pid_t)h_jint(st, "server_pid", -1);
	json_decref(st);
	cr_assert_gt(srv, 0, "status %s: no server_pid", ids);
	kinds_fd_socket(srv, 6, sock, sizeof(sock));
	cr_assert(*sock != '\0', "QEMU (pid %d) holds no socket as its fd 6",
	    (int)srv);
	cr_assert(!kinds_holds(h_daemon_pid(), sock), "the daemon still holds "
	    "QEMU's listening socket %s", sock);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/* --reset-command replaces the kind's recipe: gdb's words for a bad one. */
Test(kinds, qemu_reset_command_overrides_the_kinds)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	char ids[32], params[256];
	const char *msg;
	json_t *reply;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--reset-command", "no-such-gdb-command", "--", fw));
	h_idstr(id, ids, sizeof(ids));
	kinds_expect(ids, "board ready", "at launch");
	snprintf(params, sizeof(params), "{\"session\":%ld}", id);
	reply = kinds_call("reset", params);
	msg = h_jstr(reply, "error.message");
	cr_assert(msg != NULL && strstr(msg, "no-such-gdb-command") != NULL,
	    "reset with --reset-command no-such-gdb-command: expected gdb's "
	    "error naming it, got %s", json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/* A machine QEMU does not know fails the launch with QEMU's own words. */
Test(kinds, qemu_bad_machine_fails_with_qemus_message)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	char marker[96], report[4096];
	struct h_res r;

	h_marker_new("DBGI_KINDS", marker, sizeof(marker));
	h_cli(&r, H_ARGS("launch", "--kind", "qemu", "--machine",
	    "no-such-board", "--env", marker, "--", fw));
	cr_assert_eq(r.code, 1, "launch --machine no-such-board: expected exit "
	    "1, got %d (stdout: %s, stderr: %s)", r.code, r.out, r.err);
	cr_assert(strstr(r.err, "unsupported machine type") != NULL,
	    "launch --machine no-such-board: expected QEMU's \"unsupported "
	    "machine type\" in the error, got: %s", r.err);
	h_run_free(&r);
	cr_assert(h_marker_describe(marker, report, sizeof(report)) == 0,
	    "after the failed launch, processes are left: %s", report);
}

/*
 * A QEMU that lets go of its stub's socket, so gdb is refused, and only a
 * moment later says why and exits: the launch fails with its words, not
 * gdb's refusal, which came first.
 */
Test(kinds, a_qemu_that_refuses_gdb_then_exits_is_quoted_not_gdb)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	char marker[96], report[4096], qemu[512];
	struct h_res r;
	FILE *f;

	snprintf(qemu, sizeof(qemu), "%s/dying-qemu", H->dir);
	cr_assert_not_null(f = fopen(qemu, "w"), "%s", qemu);
	fputs("#!/bin/sh\nexec 6<&-\nsleep 0.3\n"
	    "echo 'dying-qemu: the board caught fire' >&2\nexit 1\n", f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(qemu, 0755), 0);
	h_marker_new("DBGI_KINDS", marker, sizeof(marker));
	h_cli(&r, H_ARGS("launch", "--kind", "qemu", "--machine",
	    "lm3s6965evb", "--qemu", qemu, "--env", marker, "--", fw));
	cr_assert_eq(r.code, 1, "launch with a QEMU that exits: expected exit "
	    "1, got %d (stdout: %s, stderr: %s)", r.code, r.out, r.err);
	cr_assert(strstr(r.err, "the board caught fire") != NULL &&
	    strstr(r.err, "exited with code 1") != NULL, "launch with a QEMU "
	    "that exits after refusing gdb: expected its own words and exit, "
	    "got: %s", r.err);
	h_run_free(&r);
	cr_assert(h_marker_describe(marker, report, sizeof(report)) == 0,
	    "after the failed launch, processes are left: %s", report);
}

/*
 * Without --machine the qemu kind is refused naming it, with the kind;
 * over RPC it is invalid_params; nothing is launched.
 */
Test(kinds, qemu_missing_machine_is_refused_naming_it)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	char params[4096];
	struct h_conn c;
	struct h_res r;
	json_t *reply, *list;

	h_cli(&r, H_ARGS("launch", "--kind", "qemu", "--", fw));
	cr_assert(r.code == 1 || r.code == 2, "launch --kind qemu without "
	    "--machine: expected exit 1 or 2, got %d (stdout: %s)", r.code,
	    r.out);
	cr_assert(strstr(r.err, "machine") != NULL && strstr(r.err,
	    "required") != NULL, "launch without --machine: expected the error "
	    "to name \"machine\" as required, got: %s", r.err);
	h_run_free(&r);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(params, sizeof(params), "{\"kind\":\"qemu\",\"argv\":[\"%s\"]}",
	    fw);
	reply = h_conn_call(&c, "launch", params, H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(reply), "invalid_params", "launch without "
	    "machine: %s", json_dumps(reply, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(reply, "error.message"), "\"machine\" is "
	    "required by kind qemu");
	json_decref(reply);
	/* A machine of the wrong type is named too. */
	snprintf(params, sizeof(params), "{\"kind\":\"qemu\",\"machine\":7,"
	    "\"argv\":[\"%s\"]}", fw);
	reply = h_conn_call(&c, "launch", params, H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(reply), "invalid_params");
	cr_assert_str_eq(h_jstr(reply, "error.message"), "\"machine\" must be "
	    "a string");
	json_decref(reply);
	reply = h_conn_call(&c, "list", "{}", H_WAIT_BOUND);
	list = h_jpath(reply, "result.sessions");
	cr_assert_eq(json_array_size(list), 0, "something was launched: %s",
	    json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	h_conn_close(&c);
}

/* Run dbgctl ARGS...; assert it fails with exit 1 and want in its error. */
static void
kinds_refused(const char *const args[], const char *want)
{
	char line[1024];
	struct h_res r;

	h_join_args(args, line, sizeof(line));
	h_cli(&r, args);
	cr_assert_eq(r.code, 1, "dbgctl %s: expected exit 1, got %d (stderr: "
	    "%s)", line, r.code, r.err);
	cr_assert(strstr(r.err, want) != NULL, "dbgctl %s: expected \"%s\" in "
	    "the error, got: %s", line, want, r.err);
	h_run_free(&r);
}

/* Whether the kind's params table (daemon/backend-KIND.c) declares param. */
static bool
kinds_declares(const char *kind, const char *param)
{
	char rel[128], head[128], entry[128], *text, *start, *end, *p;
	bool found;

	snprintf(rel, sizeof(rel), "daemon/backend-%s.c", kind);
	text = kinds_source(rel);
	/* A kind named with a "-" spells it "_" in C (as client/kinds.py reads). */
	snprintf(head, sizeof(head), "backend_%s_params[] = {", kind);
	for (p = head; *p != '\0'; p++)
		if (*p == '-')
			*p = '_';
	snprintf(entry, sizeof(entry), "{ \"%s\",", param);
	start = strstr(text, head);
	end = start != NULL ? strstr(start, "};") : NULL;
	found = end != NULL && (start = strstr(start, entry)) != NULL &&
	    start < end;
	free(text);
	return found;
}

/*
 * "--param belongs to the K kind" (or "the K1, K2 and K3 kinds"), the kinds
 * whose params table declares param in the kind table's order, into buf.
 */
static void
kinds_belongs(json_t *hello, const char *param, char *buf, size_t len)
{
	const char *names[16];
	size_t i, n = 0;
	json_t *v;

	json_array_foreach(hello, i, v)
		if (n < 16 && kinds_declares(json_string_value(v), param))
			names[n++] = json_string_value(v);
	cr_assert_gt(n, 0, "no kind's params table declares %s", param);
	snprintf(buf, len, "dbgctl: --%s belongs to the", param);
	for (i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s %s", i == 0 ?
		    "" : i + 1 == n ? " and" : ",", names[i]);
	snprintf(buf + strlen(buf), len - strlen(buf), " kind%s", n == 1 ?
	    "" : "s");
}

/*
 * A kind's params belong to it: --machine to another kind, --server to
 * qemu, --port to exec, is refused naming the option as it was typed and
 * the kinds whose params table in the kind table declares it.
 */
Test(kinds, a_kinds_params_belong_to_it)
{
	json_t *hello = kinds_hello();
	char want[256];

	kinds_belongs(hello, "machine", want, sizeof(want));
	kinds_refused(H_ARGS("launch", "--kind", "exec", "--machine",
	    "lm3s6965evb", "--", "true"), want);
	kinds_belongs(hello, "server", want, sizeof(want));
	kinds_refused(H_ARGS("launch", "--kind", "qemu", "--machine",
	    "lm3s6965evb", "--server", "x", "--", "/bin/true"), want);
	kinds_belongs(hello, "port", want, sizeof(want));
	kinds_refused(H_ARGS("launch", "--kind", "exec", "--port", "4444", "--",
	    "true"), want);
	json_decref(hello);
}

/*
 * reset_commands and load_commands are launch params: arrays of strings,
 * each one console line; a command with a line break is refused.
 */
Test(kinds, reset_and_load_commands_are_checked)
{
	struct h_conn c;
	json_t *reply;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	reply = h_conn_call(&c, "launch", "{\"kind\":\"exec\",\"argv\":"
	    "[\"true\"],\"reset_commands\":\"monitor reset\"}", H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(reply), "invalid_params", "reset_commands as "
	    "a string: %s", json_dumps(reply, JSON_COMPACT));
	cr_assert(strstr(h_jstr(reply, "error.message"), "reset_commands") !=
	    NULL, "%s", h_jstr(reply, "error.message"));
	json_decref(reply);
	reply = h_conn_call(&c, "launch", "{\"kind\":\"exec\",\"argv\":"
	    "[\"true\"],\"load_commands\":[\"load\",\"shell touch x\\nload\"]}",
	    H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(reply), "invalid_params", "a load command "
	    "with a line break: %s", json_dumps(reply, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(reply, "error.message"), "load command 2 holds "
	    "a line break or another control character: a command is one "
	    "line");
	json_decref(reply);
	reply = h_conn_call(&c, "launch", "{\"kind\":\"exec\",\"argv\":"
	    "[\"true\"],\"reset_commands\":[\"monitor reset halt\"],"
	    "\"load_commands\":[\"load\"]}", H_WAIT_BOUND);
	cr_assert_not_null(json_object_get(reply, "result"), "good reset and "
	    "load commands: %s", json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	h_conn_close(&c);
}

/* The CLI's --reset-command and --load-command reach the daemon's check. */
Test(kinds, cli_reset_and_load_commands)
{
	struct h_res r;

	kinds_refused(H_ARGS("launch", "--kind", "exec", "--reset-command",
	    "monitor reset\001", "--", "true"), "reset command 1 holds");
	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--reset-command",
	    "monitor reset", "--load-command", "load", "--wait", "--",
	    "true"));
	cr_assert_eq(r.code, 0, "good --reset-command and --load-command: "
	    "expected exit 0, got %d (%s)", r.code, r.err);
	h_run_free(&r);
}

/*
 * hello's kinds include qemu and are what the schema's $defs/kind lists
 * once tests/schema/kinds.c has written it from the kind table.
 */
Test(kinds, hello_kinds_are_the_schemas)
{
	json_t *hello = kinds_hello(), *schema, *kinds;
	const char *path = getenv("DBGCTL_SCHEMA");
	json_error_t e;

	cr_assert(h_jhas(hello, "qemu"), "hello's capabilities lack qemu");
	cr_assert(path != NULL, "DBGCTL_SCHEMA is not set (tests/integration/"
	    "meson.build sets it)");
	schema = json_load_file(path, 0, &e);
	cr_assert_not_null(schema, "%s: %s", path, e.text);
	kinds = h_jpath(schema, "$defs.kind.enum");
	cr_assert_not_null(kinds, "proto/schema.json has no $defs/kind enum");
	kinds_same(hello, kinds, "the schema's $defs/kind");
	json_decref(schema);
	json_decref(hello);
}

/*
 * The completion's --kind words are hello's kinds: the completion reads
 * them from the client's "help --completion", its "kinds" line.
 */
Test(kinds, hello_kinds_are_the_completions)
{
	json_t *hello = kinds_hello(), *words;
	char *text = kinds_source("completion/dbgctl.bash"), *p;
	struct h_res r;

	cr_assert_not_null(strstr(text, "help --completion"), "completion/"
	    "dbgctl.bash does not read the client's help --completion");
	free(text);
	h_cli(&r, H_ARGS("help", "--completion"));
	cr_assert_eq(r.code, 0, "dbgctl help --completion: exit %d (%s)",
	    r.code, r.err);
	p = strstr(r.out, "\nkinds ");
	cr_assert_not_null(p, "dbgctl help --completion prints no kinds line: "
	    "%s", r.out);
	p += strlen("\nkinds ");
	words = kinds_words(p, strcspn(p, "\n"));
	kinds_same(hello, words, "dbgctl help --completion's kinds");
	json_decref(words);
	h_run_free(&r);
	json_decref(hello);
}

/* The client's --kind takes hello's kinds: a bad one's usage error lists them. */
Test(kinds, hello_kinds_are_the_clients)
{
	json_t *hello = kinds_hello(), *words;
	const char *want = "want one of ";
	struct h_res r;
	char *p;

	h_cli(&r, H_ARGS("launch", "--kind", "no-such-kind", "--", "true"));
	cr_assert_eq(r.code, 2, "launch --kind no-such-kind: expected a usage "
	    "error (2), got %d", r.code);
	p = strstr(r.err, want);
	cr_assert_not_null(p, "launch --kind no-such-kind: %s", r.err);
	p += strlen(want);
	words = kinds_words(p, strcspn(p, "\n"));
	kinds_same(hello, words, "dbgctl launch --kind's words");
	json_decref(words);
	h_run_free(&r);
	h_cli(&r, H_ARGS("help", "launch"));
	cr_assert(strstr(r.out, "qemu") != NULL, "dbgctl help launch names no "
	    "qemu: %s", r.out);
	h_run_free(&r);
	json_decref(hello);
}
