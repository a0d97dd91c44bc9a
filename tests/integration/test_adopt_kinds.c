/*
 * Each debugger kind outlives a SIGKILL of its daemon: gdb, remote,
 * gdbserver and qemu as gdb left them (breakpoints, fault breaks, where
 * the target stopped, the managed server and its port, the board's live
 * memory), lldb and lldb-server at their prompts.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(adopt_kinds, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 150);

/*
 * A gdb session stopped at a breakpoint when its daemon is killed is
 * adopted as gdb left it: stopped there, the breakpoint listed, its seq
 * past every one before; it resumes to the next hit, evaluates, and a
 * stop ends it whole.
 */
Test(adopt_kinds, a_gdb_session_outlives_a_sigkill_of_its_daemon)
{
	char m[96], ids[32];
	json_t *st, *list;
	struct h_res r;
	long id, seq, seq2;
	pid_t gdb;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_GDB", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "gdb", "--env", m, "-x", "run",
	    "--", h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "session %ld never ran its program", id);
	json_decref(h_cli_json(H_ARGS("break", ids, "loop_tick")));
	cr_assert(h_cli_wait_status(id, "target.state", "stopped",
	    H_WAIT_BOUND), "the breakpoint was never hit");
	st = h_cli_status(id);
	seq = (long)h_jint(st, "target.seq", -1);
	gdb = (pid_t)h_jint(st, "pid", -1);
	json_decref(st);
	h_daemon_fg_kill();
	cr_assert(!h_pid_gone(gdb), "gdb died with its daemon");
	h_daemon_fg();
	/* It runs once gdb has said again what it knows. */
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted session never ran again");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "target.state"), "stopped", "the adopted "
	    "session's target");
	cr_assert_str_eq(h_jstr(st, "target.stop.frame.func"), "loop_tick",
	    "where the adopted target is stopped");
	cr_assert_gt(h_jint(st, "target.seq", -1), seq, "the seq after the "
	    "adoption is not past the one before");
	cr_assert_eq((pid_t)h_jint(st, "pid", -1), gdb, "another gdb");
	json_decref(st);
	list = h_cli_json(H_ARGS("break", "--list", ids));
	cr_assert_not_null(strstr(json_dumps(list, 0), "loop_tick"),
	    "the breakpoint is not listed after the adoption");
	json_decref(list);
	seq2 = h_adopt_resume_hits(ids, "the adoption");
	st = h_cli_status(id);
	cr_assert_eq(h_jint(st, "target.seq", -1), seq2);
	json_decref(st);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted gdb session "
	    "live after its stop");
}

/*
 * A request waits for the adoption, which is over only once each adopted
 * gdb has said again what it knows: with gdb busy in a shell command when
 * its daemon was killed, a status sent at once is answered only after
 * gdb has answered, and finds the session running, not starting.
 */
Test(adopt_kinds, a_request_after_an_adoption_waits_for_gdb_to_answer)
{
	char m[96], ids[32], req[160];
	struct h_conn c, busy;
	json_t *st;
	struct h_res r;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_BUSY", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "gdb", "--env", m, "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND));
	cr_assert_eq(h_conn_open(&busy, H->sock), 0);
	snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"exec\",\"params\":{\"session\":%ld,\"command\":\"shell "
	    "sleep 3\"}}\n", id);
	cr_assert_eq(h_conn_send(&busy, req, strlen(req), H_WAIT_BOUND), 0);
	h_marker_wait(m, "sleep", 1);
	h_daemon_fg_kill();
	h_conn_close(&busy);
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(req, sizeof req, "{\"session\":%ld}", id);
	st = h_conn_call(&c, "status", req, H_WAIT_BOUND);
	h_conn_close(&c);
	cr_assert(h_marker_pid(m, "sleep") == -1, "the status was answered "
	    "while gdb was still busy");
	cr_assert_str_eq(h_jstr(st, "result.state") ? h_jstr(st,
	    "result.state") : "(none)", "running", "the first status after "
	    "the adoption");
	json_decref(st);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
}

/*
 * A remote session (gdb connected to a server the test runs) is adopted
 * with gdb still connected: the server's program is where it was, and a
 * breakpoint set before the SIGKILL is hit after the adoption.
 */
Test(adopt_kinds, a_remote_session_stays_connected_across_its_adoption)
{
	const char *loop = h_ctx_fixture("FIX_LOOP");
	struct h_bytes b = { calloc(1, 1), 0 };
	char ids[32], remote[64];
	struct h_proc srv;
	struct h_res r;
	json_t *st;
	pid_t gdb;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	snprintf(remote, sizeof(remote), "127.0.0.1:%d",
	    h_run_gdbserver(&srv, &b, loop));
	id = h_cli_launch(H_ARGS("--remote", remote, "--", loop));
	h_idstr(id, ids, sizeof(ids));
	json_decref(h_cli_json(H_ARGS("break", ids, "loop_tick")));
	gdb = h_cli_status_pid(id, "pid");
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted remote session never ran again");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "kind"), "remote");
	cr_assert_eq((pid_t)h_jint(st, "pid", -1), gdb, "another gdb");
	json_decref(st);
	h_adopt_resume_hits(ids, "the adoption");
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_pid_gone(gdb), "gdb lives after its session's stop");
	kill(srv.pid, SIGKILL);
	h_run_wait(&srv, 60000);
	free(b.p);
}

/*
 * A board under the qemu kind is adopted with QEMU and gdb-multiarch as
 * they were: the same server at the same port, its UART going on, its
 * target known to run, and its fault breaks known again, so a HardFault
 * after the adoption is a fault record at the handler.
 */
Test(adopt_kinds, a_qemu_board_keeps_its_fault_breaks_across_its_adoption)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	struct h_bytes got = { calloc(1, 1), 0 };
	char ids[32], m[96];
	struct h_res r;
	json_t *st;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_QEMU", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--env", m, "--", fw));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_cli_recv_until(ids, "dbgctl board ready", &got,
	    H_WAIT_BOUND), 0, "no banner from the board");
	h_adopt_keeps_server(id, "board");
	/* gdb refuses every question while a remote target runs: it runs. */
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "target.state") ? h_jstr(st,
	    "target.state") : "(none)", "running", "the adopted board's "
	    "target, which runs");
	json_decref(st);
	h_cli_exit(&r, 0, H_ARGS("send", ids, "!"));
	h_run_free(&r);
	cr_assert(h_cli_wait_status(id, "fault", NULL, H_WAIT_BOUND), "no "
	    "fault record after a HardFault on the adopted board");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "fault.location") ? h_jstr(st,
	    "fault.location") : "", "*HardFault_Handler", "the fault of the "
	    "adopted board");
	json_decref(st);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted board live "
	    "after its stop");
	free(got.p);
}

/* A live read of the board's counter (mem --live --json): via, value. */
static unsigned long
adopt_live_counter(const char *ids, const char *addr, const char *via)
{
	json_t		*res = h_cli_json(H_ARGS("mem", "--live", ids, addr,
			    "4"));
	const char	*hex = h_jstr(res, "hex");
	unsigned	 b[4];

	cr_assert_str_eq(h_jstr(res, "via") ? h_jstr(res, "via") : "", via,
	    "a live read at %s of the adopted board: expected via %s", addr,
	    via);
	cr_assert(hex != NULL && sscanf(hex, "%2x%2x%2x%2x", &b[0], &b[1],
	    &b[2], &b[3]) == 4, "a live read of 4 bytes");
	json_decref(res);
	return (unsigned long)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
}

/*
 * A board on mps2-an385 keeps its live memory across its adoption: QEMU's
 * keeper held the daemon's end of QMP and the shared RAM, so the next
 * daemon reads the running counter through both, and writes it.
 */
Test(adopt_kinds, a_qemu_board_keeps_its_live_memory_across_its_adoption)
{
	const char	*fw = h_board_firmware("FIX_BOARD_AN385");
	struct h_bytes	 got = { calloc(1, 1), 0 };
	char		 ids[32];
	struct h_res	 r;
	unsigned long	 v;
	long		 id;
	int		 i;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "mps2-an385",
	    "--", fw));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_cli_recv_until(ids, "ready", &got, H_WAIT_BOUND), 0,
	    "no banner from the board");
	(void)adopt_live_counter(ids, "&counter", "shm");
	h_adopt_keeps_server(id, "an385 board");
	cr_assert_eq(adopt_live_counter(ids, "0", "qmp"), 0x21010000ul,
	    "the adopted board's initial SP, read through QMP");
	/* The firmware's counter++ may store over a write: write again. */
	for (i = 0, v = 0; i < 20 && v < 0x70000000ul; i++) {
		h_cli_exit(&r, 0, H_ARGS("mem", "--write", "--live", ids,
		    "&counter", "00000070"));
		h_run_free(&r);
		v = adopt_live_counter(ids, "&counter", "shm");
	}
	cr_assert(v >= 0x70000000ul && v < 0x7f000000ul, "the adopted board's "
	    "counter after a live write of 0x70000000: 0x%lx", v);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	free(got.p);
}

/*
 * A gdbserver session, whose server picked its own port, is adopted with
 * the port its record kept once it was seen, and its breakpoint works.
 */
Test(adopt_kinds, a_gdbserver_session_keeps_its_server_and_port)
{
	char ids[32], m[96];
	struct h_res r;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_GDBSRV", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--env", m, "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	json_decref(h_cli_json(H_ARGS("break", ids, "loop_tick")));
	h_adopt_keeps_server(id, "gdbserver");
	h_adopt_resume_hits(ids, "the adoption");
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted gdbserver "
	    "session live after its stop");
}

/*
 * An lldb session, at its prompt when its daemon is killed, is adopted at
 * its prompt (its console log's last bytes draw it): exec types there and
 * is answered at once.
 */
Test(adopt_kinds, an_lldb_session_is_adopted_at_its_prompt)
{
	const char *loop = h_ctx_fixture("FIX_LOOP");
	char ids[32], m[96];
	struct h_res r;
	pid_t lldb;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_LLDB", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "lldb", "--env", m, "--", loop));
	h_idstr(id, ids, sizeof ids);
	/* An exec answered says lldb sat at its prompt before the kill. */
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "lldb "
	    "of session %s never answered", ids);
	lldb = h_cli_status_pid(id, "pid");
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted lldb session never ran again");
	cr_assert_eq(h_cli_status_pid(id, "pid"), lldb, "another lldb");
	h_cli_exit(&r, 0, H_ARGS("exec", ids, "--", "target", "list"));
	cr_assert_not_null(strstr(r.out, "fix-loop"), "lldb's answer after "
	    "the adoption: %s", r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted lldb session "
	    "live after its stop");
}

/*
 * An lldb-server session is adopted with its server and lldb as they were:
 * the same server at the same port, lldb at its prompt and answering.
 */
Test(adopt_kinds, an_lldb_server_session_keeps_its_server_and_prompt)
{
	char ids[32], m[96];
	struct h_res r;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_LLDBSRV", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "lldb-server", "--env", m, "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "lldb "
	    "of session %s never answered", ids);
	h_adopt_keeps_server(id, "lldb-server");
	h_cli_exit(&r, 0, H_ARGS("exec", ids, "--", "target", "list"));
	cr_assert_not_null(strstr(r.out, "fix-loop"), "lldb's answer after "
	    "the adoption: %s", r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted lldb-server "
	    "session live after its stop");
}

