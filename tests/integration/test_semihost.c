/*
 * Semihosting (issue 36): a qemu session launched with --semihosting has
 * the firmware's semihosting console as its stream "semihost", apart from
 * the UART's "target"; the firmware's SYS_EXIT_EXTENDED is the target's
 * exit record, by "semihosting" with the code, which ends the session, so
 * that wait exits with the firmware's status; logs, expect, subscribe
 * and bundles have the stream; a QEMU that dies otherwise is not taken
 * for the firmware's exit; bad params are refused, saying why.
 *
 * FIX_SEMIHOST is examples/board/semihost.c built to exit 3 and
 * FIX_SEMIHOST_OK the same exiting 0: each prints UART_TEXT on UART0,
 * LINE1 and LINE2 on the semihosting console (SYS_WRITE0, SYS_WRITEC) and
 * LINE3 with SYS_WRITE on the handle ":tt", then exits. FIX_BOARD is the
 * board, which never exits. Without them, qemu-system-arm or
 * gdb-multiarch the tests are skipped.
 */
#include <sys/stat.h>

#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(semihost, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* What the firmware prints, on the UART and on the semihosting console. */
#define UART_TEXT	"dbgctl semihost board on the UART"
#define LINE1		"semihost: hello from the board\n"
#define LINE2		"semihost: exiting with 3\n"
#define LINE3		"semihost: a line on the handle :tt\n"

/* Launch firmware fw as a qemu session with --semihosting; its id. */
static long
sh_launch(const char *fw, char *ids, size_t len)
{
	long id;

	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--semihosting", "--", fw));
	h_idstr(id, ids, len);
	return id;
}

/* A stream's whole transcript, as `dbgctl logs --stream` prints it. */
static char *
sh_logs(const char *ids, const char *stream)
{
	struct h_res r;

	h_cli_exit(&r, 0, H_ARGS("logs", "--stream", stream, ids));
	free(r.err);
	return r.out;
}

/* `dbgctl wait` on the session: its result, asserted to end in time. */
static void
sh_wait(struct h_res *r, const char *ids)
{
	h_cli(r, H_ARGS("wait", "--timeout", "60000", ids));
	cr_assert(r->code != 4 && !r->timed_out, "dbgctl wait %s: the session "
	    "did not end: %s%s", ids, r->out, r->err);
}

Test(semihost, wait_exits_with_the_firmware_status_and_the_transcript_holds_its_text)
{
	const char	*fw = h_board_firmware("FIX_SEMIHOST");
	struct h_res	 r;
	struct stat	 sb;
	char		 ids[32], *sh, *uart, links[PATH_MAX];
	json_t		*st;
	long		 id;

	id = sh_launch(fw, ids, sizeof ids);
	sh_wait(&r, ids);
	cr_assert_eq(r.code, 3, "dbgctl wait %s: expected exit 3, the "
	    "firmware's SYS_EXIT_EXTENDED code, got %d: %s%s", ids, r.code,
	    r.out, r.err);
	cr_assert(strstr(r.out, "firmware exit code 3, by semihosting") !=
	    NULL, "dbgctl wait %s says: %s", ids, r.out);
	h_run_free(&r);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "exited", "%s",
	    json_dumps(st, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "target.state"), "exited");
	cr_assert_str_eq(h_jstr(st, "target.by") ? h_jstr(st, "target.by") :
	    "", "semihosting", "the target's record: %s",
	    json_dumps(json_object_get(st, "target"), JSON_COMPACT));
	cr_assert_eq(h_jint(st, "target.code", -1), 3);
	cr_assert_null(json_object_get(st, "error"), "an exit by semihosting "
	    "is no failure: %s", h_jstr(st, "error"));
	/* The links QEMU opened its UART by are gone. */
	snprintf(links, sizeof links, "%.*s.uart.in",
	    (int)strlen(h_jstr(st, "log")) - 4, h_jstr(st, "log"));
	cr_assert(lstat(links, &sb) == -1 && errno == ENOENT, "%s is left",
	    links);
	json_decref(st);
	/* Each channel holds its own text, and only its own. */
	sh = sh_logs(ids, "semihost");
	cr_assert_str_eq(sh, LINE1 LINE2 LINE3, "the semihost transcript");
	uart = sh_logs(ids, "target");
	cr_assert(strstr(uart, UART_TEXT) != NULL && strstr(uart,
	    "semihost:") == NULL, "the target (UART) transcript: %s", uart);
	free(sh);
	free(uart);
}

Test(semihost, an_exit_with_0_ends_the_session_and_wait_exits_0)
{
	const char	*fw = h_board_firmware("FIX_SEMIHOST_OK");
	struct h_res	 r;
	char		 ids[32], *sh;
	json_t		*st;
	long		 id;

	id = sh_launch(fw, ids, sizeof ids);
	sh_wait(&r, ids);
	cr_assert_eq(r.code, 0, "dbgctl wait %s: expected exit 0, got %d: "
	    "%s%s", ids, r.code, r.out, r.err);
	h_run_free(&r);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "exited");
	cr_assert_str_eq(h_jstr(st, "target.by") ? h_jstr(st, "target.by") :
	    "", "semihosting");
	cr_assert_eq(h_jint(st, "target.code", -1), 0);
	json_decref(st);
	sh = sh_logs(ids, "semihost");
	cr_assert(strstr(sh, "semihost: exiting with 0\n") != NULL, "%s", sh);
	free(sh);
}

Test(semihost, expect_matches_on_the_semihost_stream)
{
	const char	*fw = h_board_firmware("FIX_SEMIHOST");
	struct h_res	 r;
	char		 ids[32];

	sh_launch(fw, ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--stream", "semihost",
	    "--timeout", "60000", ids, "exiting with (\\d)"));
	cr_assert(strstr(r.out, "exiting with 3") != NULL, "expect printed: %s",
	    r.out);
	h_run_free(&r);
	/* The UART's words are not on it: the stream ends without them. */
	h_cli(&r, H_ARGS("expect", "--stream", "semihost", "--timeout",
	    "60000", ids, UART_TEXT));
	cr_assert(r.code == 1 && strstr(r.err, "semihost stream ended with "
	    "no match") != NULL, "expect %s on the semihost stream: expected "
	    "exit 1 (the stream ended without it), got %d: %s%s", UART_TEXT,
	    r.code, r.out, r.err);
	h_run_free(&r);
	sh_wait(&r, ids);
	h_run_free(&r);
}

Test(semihost, a_bundle_holds_the_semihost_transcript)
{
	const char	*fw = h_board_firmware("FIX_SEMIHOST");
	struct h_res	 r;
	char		 ids[32], out[PATH_MAX], path[PATH_MAX + 32], *text;
	json_t		*res;
	size_t		 len;

	sh_launch(fw, ids, sizeof ids);
	sh_wait(&r, ids);
	h_run_free(&r);
	h_ctx_path(out, sizeof out, "bundle");
	res = h_cli_json(H_ARGS("bundle", ids, out));
	cr_assert_str_eq(h_jstr(res, "path"), out);
	json_decref(res);
	snprintf(path, sizeof path, "%s/semihost.log", out);
	text = h_read_file(path, &len);
	cr_assert_not_null(text, "the bundle %s has no semihost.log", out);
	cr_assert_str_eq(text, LINE1 LINE2 LINE3, "the bundle's semihost.log");
	free(text);
}

Test(semihost, a_subscriber_gets_the_semihost_output)
{
	const char	*fw = h_board_firmware("FIX_SEMIHOST");
	struct h_conn	 c;
	struct h_res	 r;
	char		 ids[32];
	json_t		*rep;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	rep = h_conn_call(&c, "subscribe", "{\"streams\":[\"semihost\"]}",
	    H_WAIT_BOUND);
	cr_assert(json_is_true(h_jpath(rep, "result.subscribed")), "%s",
	    json_dumps(rep, JSON_COMPACT));
	json_decref(rep);
	sh_launch(fw, ids, sizeof ids);
	cr_assert(h_conn_wait_note(&c, "session.output", "params.stream",
	    "semihost", H_WAIT_BOUND), "no session.output of the semihost "
	    "stream came");
	h_conn_close(&c);
	sh_wait(&r, ids);
	h_run_free(&r);
}

Test(semihost, a_qemu_killed_is_not_the_firmware_exit)
{
	const char	*fw = h_board_firmware("FIX_BOARD");
	struct h_res	 r;
	char		 ids[32];
	json_t		*st;
	pid_t		 qemu;
	long		 id;

	id = sh_launch(fw, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the board never ran");
	qemu = h_cli_status_pid(id, "server_pid");
	cr_assert_eq(kill(qemu, SIGKILL), 0);
	sh_wait(&r, ids);
	cr_assert(strstr(r.out, "firmware exit") == NULL, "dbgctl wait %s: a "
	    "killed QEMU was taken for the firmware's exit: %s", ids, r.out);
	h_run_free(&r);
	st = h_cli_status(id);
	cr_assert(h_jstr(st, "target.by") == NULL || strcmp(h_jstr(st,
	    "target.by"), "semihosting") != 0, "a killed QEMU was taken for "
	    "the firmware's exit: %s", json_dumps(st, JSON_COMPACT));
	cr_assert_not_null(h_jstr(st, "error"), "no error for a killed QEMU");
	json_decref(st);
}

Test(semihost, bad_params_are_refused_saying_why)
{
	const char	*fw = h_board_firmware("FIX_BOARD");
	struct h_conn	 c;
	struct h_res	 r;
	char		 ids[32], params[1024];
	json_t		*rep;
	long		 id;

	/* A kind with no semihosting switch. */
	h_cli(&r, H_ARGS("launch", "--kind", "gdbserver", "--semihosting",
	    "--", "/bin/true"));
	cr_assert_neq(r.code, 0);
	cr_assert(strstr(r.err, "--semihosting belongs to the remote and "
	    "qemu kinds") != NULL, "%s", r.err);
	h_run_free(&r);
	/* Not a boolean. */
	h_daemon_fg();
	snprintf(params, sizeof params, "{\"kind\":\"qemu\",\"machine\":"
	    "\"lm3s6965evb\",\"semihosting\":\"yes\",\"argv\":[\"%s\"]}", fw);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	rep = h_conn_call(&c, "launch", params, H_WAIT_BOUND);
	cr_assert(h_jstr(rep, "error.message") != NULL && strstr(h_jstr(rep,
	    "error.message"), "semihosting") != NULL, "%s", json_dumps(rep,
	    JSON_COMPACT));
	json_decref(rep);
	/* A session without it has no such stream, and says why. */
	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--", fw));
	h_idstr(id, ids, sizeof ids);
	h_cli(&r, H_ARGS("logs", "--stream", "semihost", ids));
	cr_assert_neq(r.code, 0);
	cr_assert(strstr(r.err, "launched without --semihosting") != NULL,
	    "%s", r.err);
	h_run_free(&r);
	snprintf(params, sizeof params, "{\"session\":%ld,\"streams\":"
	    "[\"semihost\"]}", id);
	rep = h_conn_call(&c, "subscribe", params, H_WAIT_BOUND);
	cr_assert(h_jstr(rep, "error.message") != NULL && strstr(h_jstr(rep,
	    "error.message"), "without --semihosting") != NULL, "%s",
	    json_dumps(rep, JSON_COMPACT));
	json_decref(rep);
	h_conn_close(&c);
	h_cli(&r, H_ARGS("logs", "--stream", "semihosting", ids));
	cr_assert_eq(r.code, 2);
	cr_assert(strstr(r.err, "server, semihost") != NULL, "%s", r.err);
	h_run_free(&r);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/*
 * A daemon that dies while the firmware runs leaves the semihosting
 * console to its keeper: the next daemon adopts it, the transcript goes
 * on where it was, and the firmware's exit after the adoption is still
 * the session's end and wait's status.
 */
Test(semihost, an_adopted_session_keeps_its_console_and_its_exit)
{
	const char	*fw = h_board_firmware("FIX_SEMIHOST_WAIT");
	struct h_res	 r;
	char		 ids[32], *sh;
	long		 id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	id = sh_launch(fw, ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--stream", "semihost",
	    "--timeout", "60000", ids, "hello from the board"));
	h_run_free(&r);
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted session never ran again");
	h_cli_exit(&r, 0, H_ARGS("send", ids, "x"));
	h_run_free(&r);
	sh_wait(&r, ids);
	cr_assert_eq(r.code, 3, "dbgctl wait %s after the adoption: expected "
	    "exit 3, got %d: %s%s", ids, r.code, r.out, r.err);
	h_run_free(&r);
	sh = sh_logs(ids, "semihost");
	cr_assert_str_eq(sh, LINE1 LINE2 LINE3, "the semihost transcript "
	    "across the adoption");
	free(sh);
}

/*
 * The semihosting console is one of the streams a silence watches: a
 * silence's verdict names it, with how far it got.
 */
Test(semihost, a_silence_verdict_names_the_semihost_stream)
{
	const char	*fw = h_board_firmware("FIX_SEMIHOST_WAIT");
	char		 ids[32];
	json_t		*st;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--semihosting", "--silence-timeout", "1500", "--", fw));
	h_idstr(id, ids, sizeof ids);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %s did not end at its silence", ids);
	cr_assert_str_eq(h_jstr(st, "verdict.kind") ? h_jstr(st,
	    "verdict.kind") : "", "silent", "%s", json_dumps(st, JSON_COMPACT));
	cr_assert_eq(h_jint(st, "verdict.streams.semihost.offset", -1),
	    (long long)strlen(LINE1), "the verdict's streams: %s",
	    json_dumps(h_jpath(st, "verdict.streams"), JSON_COMPACT));
	json_decref(st);
}

/*
 * remote: --semihosting types OpenOCD's documented switch before the -x
 * commands. No OpenOCD here: a gdbserver stands in as the server, which
 * refuses the monitor command, and the session runs all the same.
 */
Test(semihost, remote_types_the_servers_switch)
{
	const char	*echo = h_ctx_fixture("FIX_ECHO");
	struct h_bytes	 b = { calloc(1, 1), 0 };
	char		 ids[32], remote[64];
	struct h_proc	 srv;
	struct h_res	 r;
	json_t		*st;
	long		 id;

	snprintf(remote, sizeof(remote), "127.0.0.1:%d",
	    h_run_gdbserver(&srv, &b, echo));
	id = h_cli_launch(H_ARGS("--remote", remote, "--semihosting", "-x",
	    "echo after-the-switch\\n", "--", echo));
	h_idstr(id, ids, sizeof(ids));
	h_cli_wait_log(ids, "after-the-switch", H_WAIT_BOUND);
	cr_assert(h_cli_log_has(ids, "monitor arm semihosting enable"),
	    "the console of %s does not show the switch typed", ids);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "running");
	json_decref(st);
	/* The console stays the server's: no stream, and why. */
	h_cli(&r, H_ARGS("logs", "--stream", "semihost", ids));
	cr_assert(r.code == 1 && strstr(r.err, "its remote server keeps the "
	    "semihosting console") != NULL, "logs --stream semihost of a "
	    "remote session: %d %s", r.code, r.err);
	h_run_free(&r);
	json_decref(h_cli_stop(id, NULL, NULL));
	kill(srv.pid, SIGKILL);
	h_run_wait(&srv, 60000);
	h_run_free(&srv.res);
	free(b.p);
}

/* launch --wait exits with the firmware's status too, saying so. */
Test(semihost, launch_wait_exits_with_the_firmware_status)
{
	const char	*fw = h_board_firmware("FIX_SEMIHOST");
	struct h_res	 r;

	h_cli(&r, H_ARGS("launch", "--kind", "qemu", "--machine",
	    "lm3s6965evb", "--semihosting", "--wait", "--", fw));
	cr_assert_eq(r.code, 3, "launch --wait: expected exit 3, got %d: %s%s",
	    r.code, r.out, r.err);
	h_run_free(&r);
}
