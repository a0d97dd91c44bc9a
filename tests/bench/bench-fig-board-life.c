/*
 * The board's fault and its launch, each beside the same by hand over
 * gdb-multiarch's MI on pipes of ours (bench-mi.c): the fault byte ('!',
 * on which the firmware executes an undefined instruction) written to the
 * running board, timed to the fault record a subscriber of the session
 * gets, beside the byte written to QEMU's pipes and *stopped at a
 * breakpoint on HardFault_Handler, the daemon's own fault break, and
 * beside the record's commands typed by hand after it, on pipes and in
 * the daemon's layout (console and MI on ptys: bench-mi-pty.c); and a
 * whole launch to the banner on UART0, as the gdbserver kind with QEMU
 * for its server and as the qemu kind, beside QEMU and gdb started by
 * hand, connected, continued and UART0 read until the banner, and by
 * hand with the fault breaks a session sets.
 */
#include "bench.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Faults of a sample. */
#define FIG_BOARD_LIFE_FAULTS 10
/* Where the firmware goes on a fault, as the daemon's fault break says. */
#define FIG_BOARD_LIFE_HANDLER "*HardFault_Handler"
/* Launches of a sample: they take a third of a second each. */
#define FIG_BOARD_LIFE_LAUNCHES 5

/* The fault figure's boards, the session's subscriber, the ptys' floor. */
struct fig_board_life_fault {
	struct board	 f;	/* first: a round is given &f */
	struct rpc	 sub;
	struct mi	 floor;
};

/*
 * A fault through the daemon: the board reset and run to its banner (not
 * timed), then "!" written, timed to the session.fault its subscriber
 * gets, in ms; the board stays stopped at the fault.
 */
static double
fig_board_life_fault_daemon(struct board *f)
{
	struct fig_board_life_fault	*lf = (struct fig_board_life_fault *)f;
	json_t			*res, *note;
	double			 t0, ms;

	res = board_call(f, "reset", json_pack("{s:I, s:b, s:i}", "session",
	    f->session, "halt", 0, "timeout", BOARD_TIMEOUT_MS));
	json_decref(res);
	if (res == NULL || board_banner(f) == -1)
		return NA;
	t0 = stat_now_ms();
	if (rpc_send(&f->r, "write", json_pack("{s:I, s:s}", "session",
	    f->session, "data", "IQ==")) == -1)
		return bench_fail(f->b, "write: %s", f->r.err);
	if ((note = board_notice(f, &lf->sub, "session.fault")) == NULL)
		return NA;
	ms = stat_now_ms() - t0;
	json_decref(note);
	/* The write's answer, not timed: it came before the fault's. */
	res = rpc_call(&f->r, "ping", NULL);
	json_decref(res);
	if (res == NULL)
		return bench_fail(f->b, "ping: %s", f->r.err);
	return ms;
}

/*
 * The record's commands as the daemon sends them at an M-profile
 * handler's break (fault.c), in one write; 0 once the last is answered,
 * -1 with m->err.
 */
static int
fig_board_life_record(struct mi *m)
{
	static const char *const cmds[] = { "-stack-list-frames 0 63",
	    "-data-list-register-names", "-data-list-register-values x",
	    "-data-read-memory-bytes 0xE000ED28 20",
	    "-data-read-memory-bytes \"($lr & 4) ? $psp : $sp\" 32" };
	char	 buf[512], tok[24], *line;
	size_t	 i, len = 0, tlen;

	for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%ld%s\n",
		    ++m->token, cmds[i]);
	tlen = (size_t)snprintf(tok, sizeof tok, "%ld^", m->token);
	if (proc_write_all(m->to_gdb, buf, len) == -1)
		return mi_fail(m, "gdb-multiarch ended");
	if (mi_wait(m, tok, &line) == -1)
		return -1;
	if (strncmp(line + tlen, "done", 4) != 0) {
		snprintf(m->err, sizeof m->err, "the record by hand: %.160s",
		    line);
		return -1;
	}
	return 0;
}

/*
 * The halted board of m reset and continued to its banner (not timed),
 * with gdb's OS ABI as osabi says (not timed), then "!" written to
 * QEMU's pipe, timed to *stopped at the HardFault_Handler breakpoint
 * and, with record, to the last answer of the record's commands, in ms;
 * it stays stopped there.
 */
static double
fig_board_life_fault_by_hand(struct board *f, struct mi *m,
    const char *osabi, bool record)
{
	char	*line, cmd[64];
	double	 t0, ms;

	mi_uart_drain(m);
	snprintf(cmd, sizeof cmd, "-interpreter-exec console \"set osabi "
	    "%s\"", osabi);
	if (mi_command(m, cmd, NULL) == -1 ||
	    mi_command(m, "-interpreter-exec console \"monitor "
	    "system_reset\"", NULL) == -1 ||
	    mi_command(m, "-interpreter-exec console flushregs",
	    NULL) == -1 ||
	    mi_command(m, "-exec-continue", NULL) == -1 ||
	    mi_uart_until(m, BOARD_BANNER) == -1)
		return bench_fail(f->b, "%s", m->err);
	t0 = stat_now_ms();
	if (mi_uart_write(m, "!", 1) == -1 ||
	    mi_wait(m, "*stopped", &line) == -1)
		return bench_fail(f->b, "%s", m->err);
	if (strstr(line, "reason=\"breakpoint-hit\"") == NULL ||
	    strstr(line, "HardFault_Handler") == NULL)
		return bench_fail(f->b, "the direct MI stopped other than at "
		    "HardFault_Handler: %.120s", line);
	if (record && fig_board_life_record(m) == -1)
		return bench_fail(f->b, "%s", m->err);
	ms = stat_now_ms() - t0;
	return ms;
}

/* The wrapper's own: "!" to *stopped at the handler, gdb as it comes. */
static double
fig_board_life_fault_direct(struct board *f)
{
	return fig_board_life_fault_by_hand(f, &f->m, "auto", false);
}

/*
 * The record's floor: the same commands as the daemon's, by hand on
 * pipes, after *stopped, gdb told the firmware has no OS as the daemon
 * tells it (gdb-osabi.c).
 */
static double
fig_board_life_fault_floor(struct board *f)
{
	return fig_board_life_fault_by_hand(f, &f->m, "none", true);
}

/*
 * The same in the daemon's layout: console and MI on ptys, breakpoints
 * kept in and the four fault breaks, as a session's gdb has them.
 */
static double
fig_board_life_fault_ptys(struct board *f)
{
	struct fig_board_life_fault *lf = (struct fig_board_life_fault *)f;

	return fig_board_life_fault_by_hand(f, &lf->floor, "none", true);
}

/*
 * Both boards halted, the baseline's with a breakpoint on the fault
 * handler, and the session's subscriber connected; -1 with b->why.
 */
static int
fig_board_life_fault_setup(struct board *f)
{
	struct fig_board_life_fault	*lf = (struct fig_board_life_fault *)f;
	json_t				*res;

	if (board_halt_both(f) == -1)
		return -1;
	if (mi_command(&f->m, "-break-insert " FIG_BOARD_LIFE_HANDLER,
	    NULL) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	if (mi_start_board_pty(&lf->floor, f->b->board) == -1)
		return bench_fail(f->b, "%s", lf->floor.err);
	if (mi_command(&lf->floor, "-exec-continue", NULL) == -1 ||
	    mi_uart_until(&lf->floor, BOARD_BANNER) == -1 ||
	    mi_command(&lf->floor, "-exec-interrupt", NULL) == -1 ||
	    mi_wait(&lf->floor, "*stopped", NULL) == -1)
		return bench_fail(f->b, "%s", lf->floor.err);
	if (rpc_open(&lf->sub, f->b->sock) == -1)
		return bench_fail(f->b, "%s", lf->sub.err);
	res = rpc_call(&lf->sub, "subscribe", json_pack("{s:I, s:b}",
	    "session", f->session, "output", 0));
	json_decref(res);
	if (res == NULL)
		return bench_fail(f->b, "subscribe: %s", lf->sub.err);
	return 0;
}

/*
 * Figure: the fault byte to the fault record a subscriber gets, beside
 * the byte to *stopped at the fault handler's breakpoint; in ms.
 */
int
fig_board_life_fault(struct bench *b)
{
	static const struct board_marks	 m = { FIG_BOARD_LIFE_FAULTS, 1,
					    "ms", 0.5, "goal p50 <= 1.2x base + "
					    "0.5 ms, p99 <= 2x; the record has "
					    "frames, registers, SCB", "fault "
					    "byte to record [vs MI *stopped at "
					    "handler]" };
	board_round			 round[4] = {
					    fig_board_life_fault_daemon,
					    fig_board_life_fault_direct,
					    fig_board_life_fault_floor,
					    fig_board_life_fault_ptys };
	struct fig_board_life_fault	 lf = { .sub.fd = -1 };
	struct samples			 s[4][2] = { { { 0 } } };
	int				 rv;

	mi_init(&lf.floor);
	if ((rv = board_open(&lf.f, b)) == 0 &&
	    (rv = fig_board_life_fault_setup(&lf.f)) == 0)
		rv = board_batches(&lf.f, round, 4, m.n, m.warm, s);
	board_close(&lf.f);
	mi_stop(&lf.floor);
	rpc_close(&lf.sub);
	if (rv == 0) {
		board_rows(s, 0, 1, m.unit, m.over, m.note, m.what);
		table_row("ms", stat_median(&s[0][0]), stat_median(&s[2][0]),
		    NO_TARGET, "the same commands by hand on pipes, osabi "
		    "none", "board fault byte to record [vs record by hand] "
		    "p50");
		table_row("ms", stat_median(&s[0][1]), stat_median(&s[2][1]),
		    NO_TARGET, "the same commands by hand on pipes, osabi "
		    "none", "board fault byte to record [vs record by hand] "
		    "p99");
		table_row("ms", stat_median(&s[0][0]), stat_median(&s[3][0]),
		    NO_TARGET, "floor: the same, console and MI on ptys",
		    "board fault byte to record [vs the same in the daemon's "
		    "layout] p50");
		table_row("ms", stat_median(&s[0][1]), stat_median(&s[3][1]),
		    NO_TARGET, "floor: the same, console and MI on ptys",
		    "board fault byte to record [vs the same in the daemon's "
		    "layout] p99");
	}
	board_free(s, 4);
	return rv;
}

/* start(f) timed, then end(f): a launch to the banner, or NA. */
static double
fig_board_life_timed(struct board *f, int (*start)(struct board *),
    void (*end)(struct board *))
{
	double	t0, ms;
	int	rv;

	t0 = stat_now_ms();
	rv = start(f);
	ms = stat_now_ms() - t0;
	end(f);
	return rv == 0 ? ms : NA;
}

/* A launch as the gdbserver kind to its banner, timed; then stopped. */
static double
fig_board_life_launch_gdbserver(struct board *f)
{
	return fig_board_life_timed(f, board_launch, board_end);
}

/* A launch as the qemu kind to its banner, timed; then stopped. */
static double
fig_board_life_launch_qemu(struct board *f)
{
	return fig_board_life_timed(f, board_launch_qemu, board_end);
}

/* QEMU and gdb by hand to the banner, timed; then ended. */
static double
fig_board_life_launch_direct(struct board *f)
{
	return fig_board_life_timed(f, board_direct, board_direct_end);
}

/*
 * The same by hand with the work a session's guarantees add: the qemu
 * kind's four fault breaks set (sent with the connect, answered before
 * the continue) and breakpoints kept in, as the daemon's gdb does.
 */
static int
fig_board_life_direct_faults(struct board *f)
{
	f->direct = 1;
	if (mi_start(&f->m, f->b->board) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	if (mi_fault_breaks(&f->m, 1) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	if (mi_command(&f->m, "-exec-continue", NULL) == -1 ||
	    mi_uart_until(&f->m, BOARD_BANNER) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return 0;
}

/* QEMU and gdb by hand, with the fault breaks, to the banner; timed. */
static double
fig_board_life_launch_direct_faults(struct board *f)
{
	return fig_board_life_timed(f, fig_board_life_direct_faults,
	    board_direct_end);
}

/*
 * Figure: a whole launch to the banner, as the gdbserver kind and as the
 * qemu kind, beside QEMU and gdb-multiarch started by hand; in ms.
 */
int
fig_board_life_launch(struct bench *b)
{
	board_round		 round[4] = { fig_board_life_launch_gdbserver,
				    fig_board_life_launch_qemu,
				    fig_board_life_launch_direct,
				    fig_board_life_launch_direct_faults };
	struct samples		 s[4][2] = { { { 0 } } };
	struct board		 f;
	int			 rv;

	if ((rv = board_connect(&f, b)) == 0)
		rv = board_batches(&f, round, 4, FIG_BOARD_LIFE_LAUNCHES, 1, s);
	board_close(&f);
	if (rv == 0) {
		board_rows(s, 0, 2, "ms", 0, "goal p50 <= 1.2x base, p99 <= 2x; "
		    "QEMU as the server", "launch to banner, gdbserver kind "
		    "[vs by hand]");
		board_rows(s, 1, 2, "ms", 0, "goal p50 <= 1.2x base, p99 <= 2x",
		    "launch to banner, qemu kind [vs by hand]");
		table_row("ms", stat_median(&s[1][0]), stat_median(&s[3][0]),
		    NO_TARGET, "the baseline sets the four fault breaks too",
		    "board launch to banner, qemu kind [vs by hand with fault "
		    "breaks] p50");
	}
	board_free(s, 4);
	return rv;
}
