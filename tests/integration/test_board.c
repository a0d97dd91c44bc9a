/*
 * The board stand-in (examples/board) under QEMU's lm3s6965evb, launched as
 * a gdbserver session whose server is QEMU and whose debugger is
 * gdb-multiarch: the banner and the echo through the board's UART0 (QEMU's
 * stdio, so the session's transport), the fault byte, and that stop leaves
 * nothing of the session alive.
 *
 * FIX_BOARD (set by meson when clang and ld.lld built it) is the firmware:
 * it prints BANNER, echoes every byte but '!', and at '!' executes an
 * undefined instruction; its HardFault_Handler prints FAULT_TEXT and spins.
 * Without FIX_BOARD, qemu-system-arm or gdb-multiarch the tests are skipped.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(board, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* What the firmware prints at reset, and when it faults. */
#define BANNER		"dbgctl board ready\r\n"
#define FAULT_TEXT	"HardFault\r\n"

/* One board session: its id and the processes that must go with it. */
struct board {
	long		 id;
	char		 ids[32];
	char		 marker[96];
	struct h_tracked t[6];		/* gdb, keepers, server, QEMU, end */
	struct h_snap	 snap;
};

/* The one live process carrying the marker whose comm is name. */
static pid_t
board_marked(const char *marker, const char *name)
{
	pid_t pids[H_MAXPIDS], found = -1;
	char comm[64];
	int i, n;

	h_marker_wait(marker, name, 1);
	n = h_marker_pids(marker, pids, H_MAXPIDS);
	for (i = 0; i < n; i++) {
		h_pid_comm(pids[i], comm, sizeof(comm));
		if (strcmp(comm, name) == 0)
			found = pids[i];
	}
	return found;
}

/* Assert that exactly want comes back through the session's transport. */
static void
board_expect(struct board *b, const char *want, size_t len)
{
	struct h_bytes got = { calloc(1, 1), 0 };
	char *log;
	int code;

	code = h_cli_recv_until(b->ids, want, &got, H_WAIT_BOUND);
	if (code != 0) {
		log = h_cli_logs(b->ids);
		cr_assert_fail("board session %s: expected \"%s\" from UART0 "
		    "within %d ms, got %s after %zu bytes: \"%s\"; console log "
		    "ends with:\n%s", b->ids, h_shown(want, len, 600),
		    H_WAIT_BOUND, code == 5 ? "end of stream" : "nothing more",
		    got.len, h_shown(got.p, got.len, 600),
		    h_shown(log, strlen(log), 1500));
	}
	cr_assert(got.len == len && memcmp(got.p, want, len) == 0, "board "
	    "session %s: expected exactly \"%s\" from UART0, got \"%s\"",
	    b->ids, h_shown(want, len, 600), h_shown(got.p, got.len, 600));
	free(got.p);
}

/*
 * Launch firmware fw under QEMU (halted, -S) with gdb-multiarch connected,
 * the -x command x (if any) typed first, and continuing it; check and track
 * its processes; read the banner.
 */
static void
board_launch_fw(struct board *b, const char *fw, bool no_fault_break,
    const char *x)
{
	const char *args[32];
	char server[4096];
	json_t *st;
	pid_t gdb, srv;
	int n = 0;

	cr_assert(strchr(fw, '\'') == NULL, "firmware %s: a quote in the "
	    "path cannot go into the server command", fw);
	h_marker_new("DBGI_BOARD", b->marker, sizeof(b->marker));
	snprintf(server, sizeof(server), "qemu-system-arm -M lm3s6965evb "
	    "-nographic -kernel '%s' -serial stdio -monitor none "
	    "-gdb tcp:127.0.0.1:{port} -S", fw);
	args[n++] = "--kind";
	args[n++] = "gdbserver";
	args[n++] = "--env";
	args[n++] = b->marker;
	args[n++] = "--server";
	args[n++] = server;
	args[n++] = "--debugger";
	args[n++] = "gdb-multiarch";
	args[n++] = "--transport";
	if (no_fault_break)
		args[n++] = "--no-fault-break";
	if (x != NULL) {
		args[n++] = "-x";
		args[n++] = x;
	}
	args[n++] = "-x";
	args[n++] = "continue";
	args[n++] = "--";
	args[n++] = fw;
	args[n] = NULL;
	b->id = h_cli_launch(args);
	h_idstr(b->id, b->ids, sizeof(b->ids));
	st = h_cli_status(b->id);
	cr_assert_str_eq(h_jstr(st, "state") ? h_jstr(st, "state") : "",
	    "running", "status %s after launch: state", b->ids);
	gdb = (pid_t)h_jint(st, "pid", -1);
	srv = (pid_t)h_jint(st, "server_pid", -1);
	h_pid_track(&b->t[0], "gdb-multiarch", gdb);
	h_pid_expect_comm(gdb, "pid", "gdb-multiarch");
	h_pid_track(&b->t[1], "gdb's keeper",
	    (pid_t)h_jint(st, "keeper_pid", -1));
	h_pid_expect_comm(b->t[1].pid, "keeper_pid", "dbgctl-keeper");
	h_pid_track(&b->t[2], "server", srv);
	h_pid_track(&b->t[3], "server's keeper", h_pid_ppid(srv));
	h_pid_expect_comm(b->t[3].pid, "server_pid's parent", "dbgctl-keeper");
	json_decref(st);
	/* The server is /bin/sh -c COMMAND: QEMU is it, or its child. */
	h_pid_track(&b->t[4], "qemu-system-arm", board_marked(b->marker,
	    "qemu-system-arm"));
	board_expect(b, BANNER, strlen(BANNER));
	h_snap_take(&b->snap, b->marker);
}

/* Launch the board's firmware, with its fault breaks or without. */
static void
board_launch(struct board *b, bool no_fault_break)
{
	board_launch_fw(b, h_board_firmware("FIX_BOARD"), no_fault_break,
	    NULL);
}

/* Send bytes to UART0 through the session's transport (send's stdin). */
static void
board_send(struct board *b, const char *data)
{
	struct h_res r;

	cr_assert_eq(h_cli_input(&r, data, H_ARGS("send", b->ids)), 0,
	    "dbgctl send %s < %zu bytes: expected exit 0, got %d (stderr: %s)",
	    b->ids, strlen(data), r.code, r.err);
	h_run_free(&r);
}

/* Stop the session; assert at once that nothing of it is left. */
static void
board_stop(struct board *b)
{
	char report[4096];
	struct h_res r;
	json_t *st;
	int left;

	cr_assert_eq(h_cli(&r, H_ARGS("stop", b->ids)), 0, "dbgctl stop %s: "
	    "expected exit 0, got %d (stderr: %s)", b->ids, r.code, r.err);
	h_run_free(&r);
	/* stop returns when everything is gone: no waiting here. */
	cr_assert(h_pid_tracked_gone(b->t), "right after stop %s: processes "
	    "of the session exist: %s", b->ids, h_pid_tracked_left(b->t,
	    report, sizeof(report)));
	left = h_snap_leftovers(&b->snap, b->marker, false, report,
	    sizeof(report));
	cr_assert_eq(left, 0, "right after stop %s: expected no process of "
	    "the session, got %d: %s", b->ids, left, report);
	st = h_cli_status(b->id);
	cr_assert_str_eq(h_jstr(st, "state") ? h_jstr(st, "state") : "",
	    "exited", "status %s after stop: state", b->ids);
	cr_assert_null(h_jstr(st, "error"), "status %s after a requested "
	    "stop: expected no \"error\", got \"%s\"", b->ids,
	    h_jstr(st, "error"));
	json_decref(st);
}

/* The banner, then a line echoed through UART0; stop leaves nothing. */
Test(board, banner_echo_and_stop)
{
	struct board b = { 0 };

	board_launch(&b, false);
	board_send(&b, "hello board\r\n");
	board_expect(&b, "hello board\r\n", strlen("hello board\r\n"));
	board_stop(&b);
}

/* Every byte value but NUL and the fault byte comes back unchanged. */
Test(board, echo_every_byte)
{
	struct board b = { 0 };
	char bytes[256];
	size_t n = 0;
	int c;

	board_launch(&b, false);
	for (c = 1; c < 256; c++)
		if (c != '!')
			bytes[n++] = (char)c;
	bytes[n] = '\0';
	board_send(&b, bytes);
	board_expect(&b, bytes, n);
	board_stop(&b);
}

/*
 * With --no-fault-break, '!' is a HardFault the firmware handles: the bytes
 * before it are echoed, the handler says so, the board echoes nothing
 * after it, and QEMU and gdb go on running.
 */
Test(board, fault_byte_hardfault_unwatched)
{
	struct board b = { 0 };
	struct h_res r;

	board_launch(&b, true);
	board_send(&b, "ab!");
	board_expect(&b, "ab" FAULT_TEXT, strlen("ab" FAULT_TEXT));
	board_send(&b, "x");
	/* The handler spins: nothing comes back, and recv says so with 4. */
	cr_assert_eq(h_cli(&r, H_ARGS("recv", "--timeout", "300", b.ids)), 4,
	    "dbgctl recv --timeout 300 %s after the fault: expected exit 4 "
	    "(nothing), got %d (stdout: \"%s\")", b.ids, r.code,
	    h_shown(r.out, r.out_len, 200));
	h_run_free(&r);
	h_cli_expect_state(b.id, "running", "after the HardFault");
	cr_assert(h_pid_tracked_gone(&b.t[4]) == false, "QEMU %d ended at the "
	    "HardFault", b.t[4].pid);
	board_stop(&b);
}


/*
 * '!' is a HardFault, and HardFault_Handler a fault break by default: the
 * target stops at the handler, the record decodes CFSR and HFSR
 * (UNDEFINSTR, FORCED) and names the faulting function from the stacked
 * frame, a subscriber hears session.fault, status and the log say so,
 * where names the handler and the stacked pc's function, an exec still
 * reads the board's counter, and stop leaves nothing.
 */
Test(board, hardfault_record)
{
	struct board b = { 0 };
	struct h_conn c;
	struct h_res r;
	json_t *st, *f, *cm;
	char *log;

	board_launch(&b, false);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	json_decref(h_conn_call(&c, "subscribe", "{\"output\":false}", 10000));
	board_send(&b, "ab!");
	board_expect(&b, "ab", 2);
	cr_assert(h_cli_wait_status(b.id, "fault", NULL, H_WAIT_BOUND), "no fault "
	    "record in status %s after the HardFault", b.ids);
	st = h_cli_status(b.id);
	f = json_object_get(st, "fault");
	cm = json_object_get(f, "cortex_m");
	cr_assert_str_eq(h_jstr(f, "location") ? h_jstr(f, "location") : "",
	    "*HardFault_Handler", "fault %s", json_dumps(f, JSON_COMPACT));
	cr_assert(h_jhas(json_object_get(cm, "decoded"), "UNDEFINSTR") &&
	    h_jhas(json_object_get(cm, "decoded"), "FORCED"),
	    "decoded: %s", json_dumps(cm, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(cm, "cfsr"), "0x00010000");
	cr_assert_str_eq(h_jstr(cm, "hfsr"), "0x40000000");
	cr_assert_str_eq(h_jstr(cm, "faulting.func") ? h_jstr(cm,
	    "faulting.func") : "", "fault_undefined_instruction",
	    "faulting frame: %s", json_dumps(cm, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "target.state"), "stopped",
	    "the target is left stopped at the fault");
	json_decref(st);
	/* where: the handler, and the pc the exception stacked. */
	h_cli(&r, H_ARGS("where", b.ids));
	cr_assert(r.code == 0 && strncmp(r.out, "HardFault_Handler", 17) == 0 &&
	    strstr(r.out, "\nstacked pc 0x") != NULL && strstr(r.out,
	    " in fault_undefined_instruction at ") != NULL, "where at the "
	    "HardFault: exit %d: %s%s", r.code, r.out, r.err);
	h_run_free(&r);
	cr_assert(h_conn_wait_note(&c, "session.fault", "params.fault", NULL,
	    H_WAIT_BOUND), "no session.fault notification");
	h_conn_close(&c);
	h_cli(&r, H_ARGS("status", b.ids));
	cr_assert(strstr(r.out, "UNDEFINSTR") != NULL && strstr(r.out,
	    "fault_undefined_instruction") != NULL, "status text: %s", r.out);
	h_run_free(&r);
	log = h_cli_logs(b.ids);
	cr_assert_not_null(strstr(log, "[dbgctl] fault: *HardFault_Handler"),
	    "the log has no fault block:\n%s", h_shown(log, strlen(log), 800));
	free(log);
	h_cli(&r, H_ARGS("exec", b.ids, "--", "-data-evaluate-expression",
	    "counter"));
	cr_assert_eq(r.code, 0, "exec reads counter: exit %d (%s)", r.code,
	    r.err);
	cr_assert_not_null(strstr(r.out, "\"value\""), "exec: %s", r.out);
	h_run_free(&r);
	board_stop(&b);
}

/* Whether the MI transcript at path says the target ran. */
static bool
board_transcript_ran(void *path)
{
	char *log = h_read_file(path, NULL);
	bool  ran = log != NULL && (strstr(log, "\n< ^running\n") != NULL ||
	    strstr(log, "\n< *running") != NULL);

	free(log);
	return ran;
}

/*
 * Assert from session id's MI transcript that every fault break the
 * daemon gave gdb was answered as a breakpoint before the target first
 * ran, and that there were at least min of them: the board stays halted
 * until its fault breaks are in. Whether a launch answers before or
 * after the first run depends on its kind and its -x commands: wait for
 * the run to be in the transcript.
 */
static void
board_breaks_before_run(long id, int min)
{
	char	 path[PATH_MAX], sent[64][32];
	char	*log, *line, *save;
	int	 nsent = 0, nanswered = 0, i;
	bool	 ran = false;

	snprintf(path, sizeof(path), "%s/sessions/%ld.mi.log", H->state, id);
	cr_assert(h_wait_for(board_transcript_ran, path, H_WAIT_BOUND),
	    "session %ld: the transcript never says the target ran", id);
	log = h_read_file(path, NULL);
	cr_assert_not_null(log, "no MI transcript %s", path);
	for (line = strtok_r(log, "\n", &save); line != NULL && !ran;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "> ", 2) == 0 && strstr(line,
		    "-break-insert") != NULL && nsent < 64) {
			snprintf(sent[nsent++], sizeof(sent[0]), "< %.*s^done,bkpt=",
			    (int)strspn(line + 2, "0123456789"), line + 2);
			continue;
		}
		for (i = 0; i < nsent; i++)
			if (strncmp(line, sent[i], strlen(sent[i])) == 0)
				nanswered++;
		ran = strcmp(line, "< ^running") == 0 || strncmp(line,
		    "< *running", 10) == 0;
	}
	free(log);
	cr_assert(ran, "session %ld: the transcript never says the target "
	    "ran", id);
	cr_assert_geq(nsent, min, "session %ld: fault breaks sent before the "
	    "target ran: %d", id, nsent);
	cr_assert_eq(nanswered, nsent, "session %ld: of %d fault breaks sent "
	    "before the target ran, %d were in when it ran", id, nsent,
	    nanswered);
}

/* The launched board's fault breaks were in before it ran, and catch '!'. */
static void
board_fault_caught(long id, const char *ids)
{
	struct h_res r;
	json_t *st;

	board_breaks_before_run(id, 4);
	cr_assert_eq(h_cli_input(&r, "!", H_ARGS("send", ids)), 0, "send !: "
	    "exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	cr_assert(h_cli_wait_status(id, "fault", NULL, H_WAIT_BOUND), "no "
	    "fault record in status %s after the HardFault", ids);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "fault.location") ? h_jstr(st,
	    "fault.location") : "", "*HardFault_Handler", "fault of %s", ids);
	json_decref(st);
}

/*
 * The fault breaks go in before the board first runs, whether gdb
 * connects to a server it is given (gdbserver kind) or to QEMU's stub on
 * the daemon's socket (qemu kind): the transcript has every one answered
 * before the first run, and a fault right after the launch stops at the
 * handler with its record.
 */
Test(board, gdbserver_fault_breaks_in_before_the_first_run)
{
	struct board b = { 0 };

	board_launch(&b, false);
	board_fault_caught(b.id, b.ids);
	board_stop(&b);
}

/* The same for the qemu kind. */
Test(board, qemu_fault_breaks_in_before_the_first_run)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	char ids[32];
	long id;

	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--", fw));
	h_idstr(id, ids, sizeof(ids));
	board_fault_caught(id, ids);
	json_decref(h_cli_stop(id, NULL, NULL));
}


/* What gdb says of its OS ABI in session ids. */
static char *
board_osabi(const char *ids)
{
	struct h_res r;
	char *out;

	cr_assert_eq(h_cli(&r, H_ARGS("exec", ids, "show", "osabi")), 0,
	    "exec %s show osabi: exit %d (%s)", ids, r.code, r.err);
	out = strdup(r.out);
	h_run_free(&r);
	return out;
}

/*
 * The firmware is an M-profile ELF that names no OS: its gdb is told so
 * (gdb-multiarch would take it for a GNU/Linux program and try every frame
 * as a Linux signal trampoline), and the fault record still lists every
 * frame, through the exception frame, to main, the stacked PC the
 * faulting function's.
 */
Test(board, firmware_gdb_has_no_os_and_the_record_lists_every_frame)
{
	static const char *const funcs[] = { "HardFault_Handler",
	    "<signal handler called>", "fault_undefined_instruction", "main" };
	struct board b = { 0 };
	json_t *st, *frames, *cm;
	char *osabi;
	size_t i;

	board_launch(&b, false);
	osabi = board_osabi(b.ids);
	cr_assert_not_null(strstr(osabi, "OS ABI is \"none\""), "show osabi "
	    "on the board: %s", osabi);
	free(osabi);
	board_send(&b, "!");
	cr_assert(h_cli_wait_status(b.id, "fault", NULL, H_WAIT_BOUND), "no fault "
	    "record in status %s after the HardFault", b.ids);
	st = h_cli_status(b.id);
	frames = json_object_get(json_object_get(st, "fault"), "frames");
	cm = json_object_get(json_object_get(st, "fault"), "cortex_m");
	cr_assert_eq(json_array_size(frames), 4, "frames: %s",
	    json_dumps(frames, JSON_COMPACT));
	for (i = 0; i < 4; i++)
		cr_assert_str_eq(h_jstr(json_array_get(frames, i), "func") ?
		    h_jstr(json_array_get(frames, i), "func") : "", funcs[i],
		    "frame %zu: %s", i, json_dumps(frames, JSON_COMPACT));
	cr_assert_eq(strtoul(h_jstr(cm, "stacked.pc") ? h_jstr(cm,
	    "stacked.pc") : "0", NULL, 0), strtoul(h_jstr(json_array_get(
	    frames, 2), "addr"), NULL, 0), "stacked pc against frame 2: %s",
	    json_dumps(cm, JSON_COMPACT));
	json_decref(st);
	board_stop(&b);
}

/*
 * The stacked frame is read with the record's first commands, before the
 * registers say where it is: at HardFault_Handler called by gdb, not by
 * an exception, lr holds no EXC_RETURN, and the record says there is no
 * stacked frame rather than keep what the early read found on the stack.
 */
Test(board, a_handler_gdb_calls_has_no_stacked_frame)
{
	struct board b = { 0 };
	struct h_res r;
	json_t *st, *cm;

	board_launch(&b, false);
	h_cli(&r, H_ARGS("halt", b.ids));
	cr_assert_eq(r.code, 0, "halt: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	/* gdb's call stops at the fault break: exec fails, gdb says why. */
	h_cli(&r, H_ARGS("exec", b.ids, "--", "-data-evaluate-expression",
	    "HardFault_Handler()"));
	h_run_free(&r);
	cr_assert(h_cli_wait_status(b.id, "fault", NULL, H_WAIT_BOUND), "no fault "
	    "record in status %s after the call", b.ids);
	st = h_cli_status(b.id);
	cm = json_object_get(json_object_get(st, "fault"), "cortex_m");
	cr_assert_null(json_object_get(cm, "stacked"), "a stacked frame at a "
	    "call: %s", json_dumps(cm, JSON_COMPACT));
	cr_assert_not_null(strstr(h_jstr(cm, "stacked_unavailable") ?
	    h_jstr(cm, "stacked_unavailable") : "", "EXC_RETURN"), "why: %s",
	    json_dumps(cm, JSON_COMPACT));
	json_decref(st);
	board_stop(&b);
}

/*
 * gdb keeps its own OS ABI where the ELF names an OS (the firmware with
 * EI_OSABI patched to Linux's), and a -x command given at launch has the
 * last word on the firmware.
 */
Test(board, gdb_keeps_the_os_the_elf_or_the_user_names)
{
	struct board b = { 0 }, u = { 0 };
	char path[512], *osabi, *elf;
	size_t len;
	FILE *f;

	elf = h_read_file(h_board_firmware("FIX_BOARD"), &len);
	cr_assert(elf != NULL && len > 16, "read the firmware");
	elf[7] = 3;	/* EI_OSABI: ELFOSABI_LINUX */
	snprintf(path, sizeof(path), "%s/linux.elf", H->dir);
	cr_assert_not_null(f = fopen(path, "w"), "%s", path);
	cr_assert_eq(fwrite(elf, 1, len, f), len, "write %s", path);
	fclose(f);
	free(elf);
	board_launch_fw(&b, path, false, NULL);
	osabi = board_osabi(b.ids);
	cr_assert(strstr(osabi, "GNU/Linux") != NULL && strstr(osabi,
	    "\"none\"") == NULL, "show osabi on an ELF naming Linux: %s",
	    osabi);
	free(osabi);
	board_stop(&b);
	board_launch_fw(&u, h_board_firmware("FIX_BOARD"), false,
	    "set osabi GNU/Linux");
	osabi = board_osabi(u.ids);
	cr_assert_not_null(strstr(osabi, "OS ABI is \"GNU/Linux\""), "show "
	    "osabi after -x 'set osabi GNU/Linux': %s", osabi);
	free(osabi);
	board_stop(&u);
}

/*
 * -exec-interrupt stops the running firmware (target.state stopped, by
 * SIGINT), counter reads over exec as a number that has grown, and
 * -exec-continue runs it on: the UART echoes again.
 */
Test(board, interrupt_read_counter_continue)
{
	struct board b = { 0 };
	struct h_res r;
	json_t *j;
	long long n1, n2;

	board_launch(&b, false);
	h_cli(&r, H_ARGS("exec", b.ids, "--", "-exec-interrupt"));
	cr_assert_eq(r.code, 0, "-exec-interrupt: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	cr_assert(h_cli_wait_status(b.id, "target.state", "stopped", H_WAIT_BOUND), "status %s "
	    "never said the target stopped", b.ids);
	j = h_cli_json(H_ARGS("exec", b.ids, "--",
	    "-data-evaluate-expression", "counter"));
	n1 = strtoll(h_jstr(j, "results.value") ? h_jstr(j, "results.value") :
	    "-1", NULL, 10);
	json_decref(j);
	cr_assert_gt(n1, 0, "counter after running a while: %lld", n1);
	h_cli(&r, H_ARGS("exec", b.ids, "--", "-exec-continue"));
	cr_assert_eq(r.code, 0, "-exec-continue: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	board_send(&b, "again\r\n");
	board_expect(&b, "again\r\n", strlen("again\r\n"));
	h_cli(&r, H_ARGS("exec", b.ids, "--", "-exec-interrupt"));
	h_run_free(&r);
	cr_assert(h_cli_wait_status(b.id, "target.state", "stopped", H_WAIT_BOUND), "second "
	    "interrupt");
	j = h_cli_json(H_ARGS("exec", b.ids, "--",
	    "-data-evaluate-expression", "counter"));
	n2 = strtoll(h_jstr(j, "results.value") ? h_jstr(j, "results.value") :
	    "-1", NULL, 10);
	json_decref(j);
	cr_assert_gt(n2, n1, "counter did not grow while running: %lld then "
	    "%lld", n1, n2);
	board_stop(&b);
}
