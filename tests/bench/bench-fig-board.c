/*
 * Run control on the QEMU board (examples/board, BENCH_BOARD), each beside
 * the same done over gdb-multiarch's MI on pipes of ours (bench-mi.c):
 * the breakpoint round trip, `resume` until_stop to a breakpoint the
 * firmware hits once for each byte it echoes, one byte written a round,
 * beside -exec-continue and its *stopped; a 4 KiB `memory` read of RAM
 * beside -data-read-memory-bytes; and `reset` to the banner on UART0
 * beside `monitor system_reset`, flushregs and -exec-continue and UART0
 * read until the banner; and the UART round trip, a byte written and its
 * echo expected (the two requests pipelined) beside the byte written to
 * QEMU's own pipes and read back, and beside the same requests to the
 * hand relay (bench-relay.c) on a third QEMU's pipes, the floor. Two boards run, the daemon's and the
 * baseline's; the one not timed is halted, so that neither QEMU's busy
 * loop takes a CPU from the other (bench-board.c).
 */
#include "bench.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the firmware echoes a byte: the breakpoint of the round trip. */
#define FIG_BOARD_BREAK "uart_putc"
/* Round trips of a sample, and of the warm-up. */
#define FIG_BOARD_ROUNDS 200
#define FIG_BOARD_WARM 10
/* The read: the start of the board's RAM, 4 KiB; reads of a sample. */
#define FIG_BOARD_ADDR "0x20000000"
#define FIG_BOARD_LEN 4096
#define FIG_BOARD_READS 200
/* Resets of a sample. */
#define FIG_BOARD_RESETS 10
/* UART round trips of a sample. */
#define FIG_BOARD_ECHOES 200
/*
 * A round trip through the daemon: a byte written to UART0 (not timed),
 * then resume until_stop, timed to its answer, which must be the stop at
 * the breakpoint where the firmware echoes it.
 */
static double
fig_board_break_daemon(struct board *f)
{
	json_t	*res;
	double	 t0, us;

	res = board_call(f, "write", json_pack("{s:I, s:s}", "session",
	    f->session, "data", "eA=="));
	json_decref(res);
	if (res == NULL)
		return NA;
	t0 = stat_now_ms();
	res = board_call(f, "resume", json_pack("{s:I, s:b, s:i}",
	    "session", f->session, "until_stop", 1, "timeout",
	    BOARD_TIMEOUT_MS));
	us = (stat_now_ms() - t0) * 1000;
	if (res == NULL)
		return NA;
	if (strcmp(board_reason(res), "breakpoint-hit") != 0)
		us = bench_fail(f->b, "resume until_stop answered a stop by "
		    "\"%s\", not the breakpoint", board_reason(res));
	json_decref(res);
	return us;
}

/* The same round trip over the direct MI: -exec-continue to *stopped. */
static double
fig_board_break_direct(struct board *f)
{
	double us;

	mi_uart_drain(&f->m);
	if (mi_uart_write(&f->m, "x", 1) == -1 ||
	    !((us = mi_break_round(&f->m)) >= 0))
		return bench_fail(f->b, "%s", f->m.err);
	return us;
}

/* Halt both boards and put the breakpoint of the round trip on each. */
static int
fig_board_break_setup(struct board *f)
{
	json_t *res;

	if (board_halt_both(f) == -1)
		return -1;
	res = board_call(f, "break", json_pack("{s:I, s:s, s:s}",
	    "session", f->session, "action", "insert", "location",
	    FIG_BOARD_BREAK));
	json_decref(res);
	if (res == NULL)
		return -1;
	if (mi_command(&f->m, "-break-insert " FIG_BOARD_BREAK, NULL) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return 0;
}

/* The same round trip on the floor's gdb: console and MI on ptys. */
static double
fig_board_break_floor(struct board *f)
{
	double us;

	mi_uart_drain(&f->floor);
	if (mi_uart_write(&f->floor, "x", 1) == -1 ||
	    !((us = mi_break_round(&f->floor)) >= 0))
		return bench_fail(f->b, "%s", f->floor.err);
	return us;
}

/* Start the floor's board, halted past its banner, the breakpoint in. */
static int
fig_board_break_floor_start(struct board *f)
{
	if (board_floor_start(f) == -1)
		return -1;
	if (mi_command(&f->floor, "-break-insert " FIG_BOARD_BREAK, NULL) ==
	    -1)
		return bench_fail(f->b, "%s", f->floor.err);
	return 0;
}

/*
 * Figure: the breakpoint round trip, resume until_stop to the breakpoint
 * the firmware hits for the byte written before it, p50 and p99 beside
 * -exec-continue to *stopped over the direct MI, and (unmarked, the
 * floor) beside the same by hand in the daemon's layout. Every side
 * leaves its board halted at the breakpoint, so none takes a CPU.
 */
int
fig_board_break(struct bench *b)
{
	board_round	 round[3] = { fig_board_break_daemon,
			    fig_board_break_direct, fig_board_break_floor };
	struct samples	 s[3][2] = { { { 0 } } };
	struct board	 f;
	int		 rv;

	if ((rv = board_open(&f, b)) == 0 &&
	    (rv = fig_board_break_setup(&f)) == 0 &&
	    (rv = fig_board_break_floor_start(&f)) == 0)
		rv = board_batches(&f, round, 3, FIG_BOARD_ROUNDS,
		    FIG_BOARD_WARM, s);
	board_close(&f);
	if (rv == 0) {
		board_rows(s, 0, 1, "us", 500, "goal p50 <= 1.2x base + 0.5 "
		    "ms, p99 <= 2x; a byte written a round", "breakpoint round "
		    "trip, resume until_stop [vs MI]");
		board_rows_floor(s, "us", "breakpoint round trip [vs the same "
		    "in the daemon's layout]");
	}
	board_free(s, 3);
	return rv;
}

/* A 4 KiB read through the daemon, timed; its bytes must all be there. */
static double
fig_board_memory_daemon(struct board *f)
{
	const char	*b64;
	unsigned char	*bytes;
	json_t		*res;
	double		 t0, us;
	size_t		 n = 0;

	t0 = stat_now_ms();
	res = board_call(f, "memory", json_pack("{s:I, s:s, s:s, s:i}",
	    "session", f->session, "action", "read", "address",
	    FIG_BOARD_ADDR, "length", FIG_BOARD_LEN));
	us = (stat_now_ms() - t0) * 1000;
	if (res == NULL)
		return NA;
	/* The board is halted: a read that had to halt it is another figure. */
	if (json_is_true(json_object_get(res, "halted_for"))) {
		json_decref(res);
		return bench_fail(f->b, "memory read halted the board, which "
		    "was to be halted already");
	}
	b64 = json_string_value(json_object_get(res, "base64"));
	if (b64 != NULL && (bytes = malloc(strlen(b64) + 1)) != NULL) {
		n = b64_decode(b64, bytes);
		free(bytes);
	}
	json_decref(res);
	if (n != FIG_BOARD_LEN)
		return bench_fail(f->b, "memory read answered %zu bytes, not "
		    "%d", n, FIG_BOARD_LEN);
	return us;
}

/* The same read over the direct MI: -data-read-memory-bytes, timed. */
static double
fig_board_memory_direct(struct board *f)
{
	char	*line, *hex;
	double	 t0, us;
	size_t	 n;

	t0 = stat_now_ms();
	if (mi_command(&f->m, "-data-read-memory-bytes " FIG_BOARD_ADDR " "
	    "4096", &line) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	us = (stat_now_ms() - t0) * 1000;
	n = (hex = strstr(line, "contents=\"")) != NULL ?
	    strcspn(hex + 10, "\"") / 2 : 0;
	if (n != FIG_BOARD_LEN)
		return bench_fail(f->b, "-data-read-memory-bytes answered %zu "
		    "bytes, not %d", n, FIG_BOARD_LEN);
	return us;
}

/*
 * Figure: a 4 KiB memory read of the halted board's RAM, p50 and p99
 * beside -data-read-memory-bytes over the direct MI.
 */
int
fig_board_memory(struct bench *b)
{
	static const struct board_marks	 m = { FIG_BOARD_READS,
					    FIG_BOARD_WARM, "us", 500,
					    "goal p50 <= 1.2x base + 0.5 ms, "
					    "p99 <= 2x; RAM at " FIG_BOARD_ADDR
					    ", halted", "memory read 4 KiB [vs "
					    "MI -data-read-memory-bytes]" };
	board_round			 round[2] = { fig_board_memory_daemon,
					    fig_board_memory_direct };
	struct board			 f;

	return board_figure(b, &f, round, board_halt_both, &m);
}

/* A reset of the halted board through the daemon, to its banner. */
static double
fig_board_reset_daemon(struct board *f)
{
	return board_daemon_recipe(f, "reset");
}

/* The reset recipe by hand on the halted baseline board. */
static double
fig_board_reset_direct(struct board *f)
{
	static const char *const cmds[] = { NULL };

	return board_direct_recipe(f, cmds);
}

/*
 * Figure: reset of the halted board to its banner on UART0, beside the
 * direct recipe over MI and QEMU's stdio; in ms.
 */
int
fig_board_reset(struct bench *b)
{
	static const struct board_marks	 m = { FIG_BOARD_RESETS, 1, "ms",
					    0.5, "goal p50 <= 1.2x base + 0.5 "
					    "ms, p99 <= 2x", "reset to banner "
					    "[vs monitor system_reset+"
					    "continue]" };
	board_round			 round[2] = { fig_board_reset_daemon,
					    fig_board_reset_direct };
	struct board			 f;

	return board_figure(b, &f, round, board_halt_both, &m);
}

/* The UART figure's boards and the hand relay's, with its QEMU. */
struct fig_board_uart {
	struct board	 f;	/* first: a round is given &f */
	struct rpc	 relay;
	json_int_t	 rfrom;	/* the relay's offset after the last echo */
	pid_t		 rpid, qemu;
	bool		 rstopped;	/* the relay's QEMU is stopped */
};

/*
 * A byte written and its echo expected on r, both requests sent at once,
 * as a rig pipelines them; timed to the expect's answer, *from moved past
 * the echo.
 */
static double
fig_board_uart_rpc(struct board *f, struct rpc *r, json_int_t session,
    json_int_t *from)
{
	json_t	*wrote, *msg, *res = NULL;
	double	 t0, us;
	long	 id;
	bool	 ok;

	t0 = stat_now_ms();
	if (rpc_send(r, "write", json_pack("{s:I, s:s}", "session", session,
	    "data", "eA==")) == -1 || rpc_send(r, "expect", json_pack("{s:I, "
	    "s:s, s:I, s:i}", "session", session, "exact", "x", "from", *from,
	    "timeout", BOARD_TIMEOUT_MS)) == -1)
		return bench_fail(f->b, "write and expect: %s", r->err);
	wrote = rpc_reply(r, &id);
	msg = rpc_reply(r, &id);
	us = (stat_now_ms() - t0) * 1000;
	ok = wrote != NULL && json_object_get(wrote, "result") != NULL &&
	    msg != NULL && (res = json_object_get(msg, "result")) != NULL;
	if (ok)
		*from = json_integer_value(json_object_get(res, "next"));
	json_decref(wrote);
	json_decref(msg);
	return ok ? us : bench_fail(f->b, "write and expect of the echo "
	    "were not both answered with a result");
}

/* Stop or continue the relay's QEMU, which has no gdb to halt it. */
static void
fig_board_uart_relay_run(struct fig_board_uart *u, bool run)
{
	if (u->qemu <= 0 || u->rstopped == !run)
		return;
	kill(u->qemu, run ? SIGCONT : SIGSTOP);
	u->rstopped = !run;
}

/* A round trip through the daemon, the other boards halted or stopped. */
static double
fig_board_uart_daemon(struct board *f)
{
	fig_board_uart_relay_run((struct fig_board_uart *)f, false);
	if (board_side(f, 0) == -1)
		return NA;
	return fig_board_uart_rpc(f, &f->r, f->session, &f->from);
}

/* The same round trip on the baseline board's own pipes. */
static double
fig_board_uart_direct(struct board *f)
{
	double	t0;

	fig_board_uart_relay_run((struct fig_board_uart *)f, false);
	if (board_side(f, 1) == -1)
		return NA;
	t0 = stat_now_ms();
	if (mi_uart_write(&f->m, "x", 1) == -1 ||
	    mi_uart_until(&f->m, "x") == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return (stat_now_ms() - t0) * 1000;
}

/* The same round trip through the hand relay, the two boards halted. */
static double
fig_board_uart_relay(struct board *f)
{
	struct fig_board_uart *u = (struct fig_board_uart *)f;

	if (f->running == 0 && board_halt(f) == -1)
		return NA;
	if (f->running == 1 && board_direct_halt(f) == -1)
		return NA;
	f->running = -1;
	fig_board_uart_relay_run(u, true);
	return fig_board_uart_rpc(f, &u->relay, 1, &u->rfrom);
}

/* The hand relay with a QEMU of its own on the board, stopped. */
static int
fig_board_uart_relay_start(struct fig_board_uart *u)
{
	const char *argv[] = { "qemu-system-arm", "-M", "lm3s6965evb",
	    "-nographic", "-kernel", u->f.b->board, "-serial", "stdio",
	    "-monitor", "none", NULL };
	int sock;

	if ((u->rpid = relay_start_target(u->f.b->dir, argv, &sock,
	    &u->qemu)) <= 0)
		return bench_fail(u->f.b, "the hand relay did not start");
	rpc_adopt(&u->relay, sock);
	fig_board_uart_relay_run(u, false);
	return 0;
}

/* End the hand relay and its QEMU. */
static void
fig_board_uart_relay_end(struct fig_board_uart *u)
{
	if (u->rpid > 0)
		relay_stop(u->rpid, u->relay.fd);
	if (u->qemu > 0) {
		kill(u->qemu, SIGCONT);
		kill(u->qemu, SIGTERM);
		if (proc_wait(u->qemu, 10000) == -1) {
			kill(u->qemu, SIGKILL);
			proc_wait(u->qemu, -1);
		}
	}
	u->rpid = u->qemu = 0;
}

/*
 * Figure: the UART round trip of the running board, p50 and p99, beside
 * the byte written to QEMU's own pipes and read back, and (unmarked, the
 * floor) beside the same requests to the hand relay on QEMU's pipes.
 */
int
fig_board_uart(struct bench *b)
{
	board_round		 round[3] = { fig_board_uart_daemon,
				    fig_board_uart_direct, fig_board_uart_relay };
	struct fig_board_uart	 u = { .relay.fd = -1 };
	struct samples		 s[3][2] = { { { 0 } } };
	int			 rv;

	if ((rv = board_open(&u.f, b)) == 0 &&
	    (rv = board_daemon_runs(&u.f)) == 0 &&
	    (rv = fig_board_uart_relay_start(&u)) == 0)
		rv = board_batches(&u.f, round, 3, FIG_BOARD_ECHOES,
		    FIG_BOARD_WARM, s);
	board_close(&u.f);
	fig_board_uart_relay_end(&u);
	if (rv == 0) {
		board_rows(s, 0, 1, "us", 50, "goal p50 <= 1.2x base + 50 us, "
		    "p99 <= 2x; write and expect pipelined", "UART round trip "
		    "[vs QEMU's own pipes]");
		table_row("us", stat_median(&s[0][0]), stat_median(&s[2][0]),
		    NO_TARGET, "floor: transcripts, JSON, a socket", "board "
		    "UART round trip [vs a hand relay] p50");
		table_row("us", stat_median(&s[0][1]), stat_median(&s[2][1]),
		    NO_TARGET, "floor: transcripts, JSON, a socket", "board "
		    "UART round trip [vs a hand relay] p99");
	}
	board_free(s, 3);
	return rv;
}
