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
 * QEMU's own pipes and read back. Two boards run, the daemon's and the
 * baseline's; the one not timed is halted, so that neither QEMU's busy
 * loop takes a CPU from the other.
 */
#include "bench.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The end of the banner the firmware prints at reset. */
#define FIG_BOARD_BANNER "board ready\r\n"
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
/* A bound no answer of these figures should come near, in ms. */
#define FIG_BOARD_TIMEOUT_MS 30000

/* One figure's two boards: the daemon's session and the direct one. */
struct fig_board {
	struct bench	*b;
	struct rpc	 r;
	json_int_t	 session;
	json_int_t	 from;	/* the transport's offset after the banner */
	struct mi	 m;
	bool		 direct;	/* the baseline was started */
	int		 running;	/* the UART figure's running side, or -1 */
};

/* A round of one side: its time in the figure's unit, or NA with b->why. */
typedef double (*fig_board_round)(struct fig_board *);

/* Why the board cannot run here, or NULL if it can. */
static const char *
fig_board_missing(const struct bench *b)
{
	if (b->board == NULL || *b->board == '\0')
		return "BENCH_BOARD is not set (no board.elf: clang or "
		    "ld.lld missing)";
	if (strchr(b->board, '\'') != NULL)
		return "a quote in BENCH_BOARD cannot go into the server "
		    "command";
	if (!proc_exists("qemu-system-arm"))
		return "qemu-system-arm is not installed";
	if (!proc_exists("gdb-multiarch"))
		return "gdb-multiarch is not installed";
	return NULL;
}

/* Call method on f's connection: its result, or NULL with b->why. */
static json_t *
fig_board_call(struct fig_board *f, const char *method, json_t *params)
{
	json_t *res;

	if ((res = rpc_call(&f->r, method, params)) == NULL)
		bench_fail(f->b, "%s: %s", method, f->r.err);
	return res;
}

/* Expect the banner on the session's UART0 from f->from, then past it. */
static int
fig_board_banner(struct fig_board *f)
{
	json_t *res;

	res = fig_board_call(f, "expect", json_pack("{s:I, s:s, s:I, s:i}",
	    "session", f->session, "exact", FIG_BOARD_BANNER, "from",
	    f->from, "timeout", FIG_BOARD_TIMEOUT_MS));
	if (res == NULL)
		return -1;
	f->from = json_integer_value(json_object_get(res, "next"));
	json_decref(res);
	return 0;
}

/*
 * The daemon's board, the one place that says how it is launched: QEMU
 * as the gdbserver kind's managed server, gdb-multiarch connected, UART0
 * on the transport, continued to its banner; QEMU's reset recipe given,
 * as the gdbserver kind's own (`monitor reset halt`) is not QEMU's.
 */
static int
fig_board_launch(struct fig_board *f)
{
	char	 server[4096];
	json_t	*res;

	snprintf(server, sizeof server, "qemu-system-arm -M lm3s6965evb "
	    "-nographic -kernel '%s' -serial stdio -monitor none "
	    "-gdb tcp:127.0.0.1:{port} -S", f->b->board);
	res = fig_board_call(f, "launch", json_pack("{s:s, s:[s], s:s, s:s, "
	    "s:b, s:[s], s:[s, s], s:s}", "kind", "gdbserver", "argv",
	    f->b->board, "server", server, "debugger", "gdb-multiarch",
	    "transport", 1, "commands", "continue", "reset_commands",
	    "monitor system_reset", "flushregs", "cwd", "/"));
	if (res == NULL)
		return -1;
	f->session = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	return fig_board_banner(f);
}

/* The baseline's board, continued to its banner. */
static int
fig_board_direct(struct fig_board *f)
{
	f->direct = true;
	if (mi_start(&f->m, f->b->board) == -1 ||
	    mi_command(&f->m, "-exec-continue", NULL) == -1 ||
	    mi_uart_until(&f->m, FIG_BOARD_BANNER) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return 0;
}

/* Both boards up, running past their banners; -1 with b->why. */
static int
fig_board_open(struct fig_board *f, struct bench *b)
{
	const char *why;

	memset(f, 0, sizeof *f);
	f->b = b;
	/* Closed whatever happens: not stdin's fd 0 if never opened. */
	f->r.fd = -1;
	if ((why = fig_board_missing(b)) != NULL)
		return bench_fail(b, "%s", why);
	if (rpc_open(&f->r, b->sock) == -1)
		return bench_fail(b, "%s", f->r.err);
	if (fig_board_launch(f) == -1)
		return -1;
	return fig_board_direct(f);
}

/* Stop and remove the session, end the baseline's board, close. */
static void
fig_board_close(struct fig_board *f)
{
	if (f->session > 0) {
		json_decref(rpc_call(&f->r, "stop", json_pack("{s:I}",
		    "session", f->session)));
		json_decref(rpc_call(&f->r, "remove", json_pack("{s:I}",
		    "session", f->session)));
	}
	if (f->direct)
		mi_stop(&f->m);
	rpc_close(&f->r);
}

/* Halt the daemon's board (a stopped one stays as it is). */
static int
fig_board_halt(struct fig_board *f)
{
	json_t *res;

	res = fig_board_call(f, "halt", json_pack("{s:I, s:i}", "session",
	    f->session, "timeout", FIG_BOARD_TIMEOUT_MS));
	json_decref(res);
	return res != NULL ? 0 : -1;
}

/* Halt the baseline's running board and read its stop. */
static int
fig_board_direct_halt(struct fig_board *f)
{
	if (mi_command(&f->m, "-exec-interrupt", NULL) == -1 ||
	    mi_wait(&f->m, "*stopped", NULL) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return 0;
}

/* Halt both boards; -1 with b->why. */
static int
fig_board_halt_both(struct fig_board *f)
{
	if (fig_board_halt(f) == -1)
		return -1;
	return fig_board_direct_halt(f);
}

/* The stop reason of a verb's target record, or "" if none. */
static const char *
fig_board_reason(json_t *res)
{
	const char *reason;

	reason = json_string_value(json_object_get(json_object_get(
	    json_object_get(res, "target"), "stop"), "reason"));
	return reason != NULL ? reason : "";
}

/*
 * A round trip through the daemon: a byte written to UART0 (not timed),
 * then resume until_stop, timed to its answer, which must be the stop at
 * the breakpoint where the firmware echoes it.
 */
static double
fig_board_break_daemon(struct fig_board *f)
{
	json_t	*res;
	double	 t0, us;

	res = fig_board_call(f, "write", json_pack("{s:I, s:s}", "session",
	    f->session, "data", "eA=="));
	json_decref(res);
	if (res == NULL)
		return NA;
	t0 = stat_now_ms();
	res = fig_board_call(f, "resume", json_pack("{s:I, s:b, s:i}",
	    "session", f->session, "until_stop", 1, "timeout",
	    FIG_BOARD_TIMEOUT_MS));
	us = (stat_now_ms() - t0) * 1000;
	if (res == NULL)
		return NA;
	if (strcmp(fig_board_reason(res), "breakpoint-hit") != 0)
		us = bench_fail(f->b, "resume until_stop answered a stop by "
		    "\"%s\", not the breakpoint", fig_board_reason(res));
	json_decref(res);
	return us;
}

/* The same round trip over the direct MI: -exec-continue to *stopped. */
static double
fig_board_break_direct(struct fig_board *f)
{
	char	*line;
	double	 t0, us;

	mi_uart_drain(&f->m);
	if (mi_uart_write(&f->m, "x", 1) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	t0 = stat_now_ms();
	if (mi_command(&f->m, "-exec-continue", NULL) == -1 ||
	    mi_wait(&f->m, "*stopped", &line) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	us = (stat_now_ms() - t0) * 1000;
	if (strstr(line, "reason=\"breakpoint-hit\"") == NULL)
		return bench_fail(f->b, "the direct MI stopped other than at "
		    "the breakpoint: %.120s", line);
	return us;
}

/*
 * Batches of rounds, each side in turn and the first side alternating:
 * each batch's p50 and p99 added to s[side][0] and s[side][1].
 */
static int
fig_board_batches(struct fig_board *f, fig_board_round round[2], int n,
    int warm, struct samples s[2][2])
{
	struct samples	one = { 0 };
	double		v;
	int		run, k, i, side;

	for (i = 0; i < warm * 2; i++)
		if (!(round[i % 2](f) >= 0))
			return -1;
	for (run = 0; run < f->b->runs; run++)
		for (k = 0; k < 2; k++) {
			side = (run + k) % 2;
			for (i = 0; i < n; i++) {
				if (!((v = round[side](f)) >= 0)) {
					stat_free(&one);
					return -1;
				}
				stat_add(&one, v);
			}
			stat_add(&s[side][0], stat_pct(&one, 50));
			stat_add(&s[side][1], stat_pct(&one, 99));
			stat_free(&one);
		}
	return 0;
}

/*
 * Rows of p50 and p99 in unit (us or ms) beside the baseline's, with the
 * goal of at most ratio times the baseline plus over (in the unit).
 */
static void
fig_board_rows(struct samples s[2][2], const char *unit, double ratio,
    double over, const char *goal, const char *what)
{
	double	base, v;
	int	q;

	for (q = 0; q < 2; q++) {
		base = stat_median(&s[1][q]);
		/* The margin over the baseline, to a tenth of a ms. */
		v = (ratio - 1) * base + over;
		v = strcmp(unit, "ms") == 0 ? round(v * 10) / 10 : round(v);
		table_row(unit, stat_median(&s[0][q]), base,
		    TARGET(OVER_MAX, v), goal, "board %s p%d", what,
		    q == 0 ? 50 : 99);
	}
}

/* Free the four sample sets of a figure. */
static void
fig_board_free(struct samples s[2][2])
{
	int i;

	for (i = 0; i < 4; i++)
		stat_free(&s[i / 2][i % 2]);
}

/* Halt both boards and put the breakpoint of the round trip on each. */
static int
fig_board_break_setup(struct fig_board *f)
{
	json_t *res;

	if (fig_board_halt_both(f) == -1)
		return -1;
	res = fig_board_call(f, "break", json_pack("{s:I, s:s, s:s}",
	    "session", f->session, "action", "insert", "location",
	    FIG_BOARD_BREAK));
	json_decref(res);
	if (res == NULL)
		return -1;
	if (mi_command(&f->m, "-break-insert " FIG_BOARD_BREAK, NULL) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return 0;
}

/*
 * Figure: the breakpoint round trip, resume until_stop to the breakpoint
 * the firmware hits for the byte written before it, p50 and p99 beside
 * -exec-continue to *stopped over the direct MI.
 */
int
fig_board_break(struct bench *b)
{
	fig_board_round		 round[2] = { fig_board_break_daemon,
				    fig_board_break_direct };
	struct samples		 s[2][2] = { { { 0 } } };
	struct fig_board	 f;
	int			 rv;

	if ((rv = fig_board_open(&f, b)) == 0 &&
	    (rv = fig_board_break_setup(&f)) == 0)
		rv = fig_board_batches(&f, round, FIG_BOARD_ROUNDS,
		    FIG_BOARD_WARM, s);
	fig_board_close(&f);
	if (rv == 0)
		fig_board_rows(s, "us", 1.2, 1000, "goal <= 1.2x base + 1 ms; "
		    "a byte written a round", "breakpoint round trip, resume "
		    "until_stop [vs MI]");
	fig_board_free(s);
	return rv;
}

/* A 4 KiB read through the daemon, timed; its bytes must all be there. */
static double
fig_board_memory_daemon(struct fig_board *f)
{
	const char	*b64;
	unsigned char	*bytes;
	json_t		*res;
	double		 t0, us;
	size_t		 n = 0;

	t0 = stat_now_ms();
	res = fig_board_call(f, "memory", json_pack("{s:I, s:s, s:s, s:i}",
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
fig_board_memory_direct(struct fig_board *f)
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
	fig_board_round		 round[2] = { fig_board_memory_daemon,
				    fig_board_memory_direct };
	struct samples		 s[2][2] = { { { 0 } } };
	struct fig_board	 f;
	int			 rv;

	if ((rv = fig_board_open(&f, b)) == 0 &&
	    (rv = fig_board_halt_both(&f)) == 0)
		rv = fig_board_batches(&f, round, FIG_BOARD_READS,
		    FIG_BOARD_WARM, s);
	fig_board_close(&f);
	if (rv == 0)
		fig_board_rows(s, "us", 1.2, 500, "goal <= 1.2x base + 0.5 ms; "
		    "RAM at " FIG_BOARD_ADDR ", halted", "memory read 4 KiB "
		    "[vs MI -data-read-memory-bytes]");
	fig_board_free(s);
	return rv;
}

/*
 * A reset of the halted board through the daemon, timed to the banner's
 * match on its transport, in ms; halted again after, not timed.
 */
static double
fig_board_reset_daemon(struct fig_board *f)
{
	const char	*state;
	json_t		*res;
	double		 t0, ms;
	bool		 running;

	t0 = stat_now_ms();
	res = fig_board_call(f, "reset", json_pack("{s:I, s:b, s:i}",
	    "session", f->session, "halt", 0, "timeout",
	    FIG_BOARD_TIMEOUT_MS));
	if (res == NULL)
		return NA;
	state = json_string_value(json_object_get(json_object_get(res,
	    "target"), "state"));
	running = state != NULL && strcmp(state, "running") == 0;
	json_decref(res);
	if (!running)
		return bench_fail(f->b, "reset without halt left the board "
		    "other than running");
	if (fig_board_banner(f) == -1)
		return NA;
	ms = stat_now_ms() - t0;
	if (fig_board_halt(f) == -1)
		return NA;
	return ms;
}

/*
 * The direct recipe on the halted baseline board: monitor system_reset,
 * flushregs, -exec-continue, UART0 read until the banner, in ms; then
 * halted.
 */
static double
fig_board_reset_direct(struct fig_board *f)
{
	double	t0, ms;

	mi_uart_drain(&f->m);
	t0 = stat_now_ms();
	if (mi_command(&f->m, "-interpreter-exec console \"monitor "
	    "system_reset\"", NULL) == -1 ||
	    mi_command(&f->m, "-interpreter-exec console flushregs",
	    NULL) == -1 ||
	    mi_command(&f->m, "-exec-continue", NULL) == -1 ||
	    mi_uart_until(&f->m, FIG_BOARD_BANNER) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	ms = stat_now_ms() - t0;
	if (fig_board_direct_halt(f) == -1)
		return NA;
	return ms;
}

/*
 * Figure: reset of the halted board to its banner on UART0, beside the
 * direct recipe over MI and QEMU's stdio; in ms.
 */
int
fig_board_reset(struct bench *b)
{
	fig_board_round		 round[2] = { fig_board_reset_daemon,
				    fig_board_reset_direct };
	struct samples		 s[2][2] = { { { 0 } } };
	struct fig_board	 f;
	int			 rv;

	if ((rv = fig_board_open(&f, b)) == 0 &&
	    (rv = fig_board_halt_both(&f)) == 0)
		rv = fig_board_batches(&f, round, FIG_BOARD_RESETS, 1, s);
	fig_board_close(&f);
	if (rv == 0)
		fig_board_rows(s, "ms", 1.2, 1, "no goal in issue 21; the "
		    "round trip's, 1.2x base + 1 ms", "reset to banner "
		    "[vs monitor system_reset+continue]");
	fig_board_free(s);
	return rv;
}

/*
 * Run only side's board (0 the daemon's, 1 the baseline's) for the UART
 * figure, halting the other: not timed, once each time the side changes.
 */
static int
fig_board_uart_side(struct fig_board *f, int side)
{
	json_t	*res;

	if (f->running == side)
		return 0;
	if (side == 0) {
		if (f->running == 1 && fig_board_direct_halt(f) == -1)
			return -1;
		res = fig_board_call(f, "resume", json_pack("{s:I, s:i}",
		    "session", f->session, "timeout", FIG_BOARD_TIMEOUT_MS));
		json_decref(res);
		if (res == NULL)
			return -1;
	} else {
		if (f->running == 0 && fig_board_halt(f) == -1)
			return -1;
		mi_uart_drain(&f->m);
		if (mi_command(&f->m, "-exec-continue", NULL) == -1)
			return bench_fail(f->b, "%s", f->m.err);
	}
	f->running = side;
	return 0;
}

/*
 * A byte written to the daemon's board and its echo expected from the
 * transport, both requests sent at once, as a rig pipelines them; timed
 * to the expect's answer.
 */
static double
fig_board_uart_daemon(struct fig_board *f)
{
	json_t	*wrote, *msg, *res = NULL;
	double	 t0, us;
	long	 id;
	bool	 ok;

	if (fig_board_uart_side(f, 0) == -1)
		return NA;
	t0 = stat_now_ms();
	if (rpc_send(&f->r, "write", json_pack("{s:I, s:s}", "session",
	    f->session, "data", "eA==")) == -1 || rpc_send(&f->r, "expect",
	    json_pack("{s:I, s:s, s:I, s:i}", "session", f->session, "exact",
	    "x", "from", f->from, "timeout", FIG_BOARD_TIMEOUT_MS)) == -1)
		return bench_fail(f->b, "write and expect: %s", f->r.err);
	wrote = rpc_reply(&f->r, &id);
	msg = rpc_reply(&f->r, &id);
	us = (stat_now_ms() - t0) * 1000;
	ok = wrote != NULL && json_object_get(wrote, "result") != NULL &&
	    msg != NULL && (res = json_object_get(msg, "result")) != NULL;
	if (ok)
		f->from = json_integer_value(json_object_get(res, "next"));
	json_decref(wrote);
	json_decref(msg);
	return ok ? us : bench_fail(f->b, "write and expect of the echo "
	    "were not both answered with a result");
}

/* The same round trip on the baseline board's own pipes. */
static double
fig_board_uart_direct(struct fig_board *f)
{
	double	t0;

	if (fig_board_uart_side(f, 1) == -1)
		return NA;
	t0 = stat_now_ms();
	if (mi_uart_write(&f->m, "x", 1) == -1 ||
	    mi_uart_until(&f->m, "x") == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return (stat_now_ms() - t0) * 1000;
}

/*
 * Figure: the UART round trip of the running board, p50 and p99, beside
 * the byte written to QEMU's own pipes and read back.
 */
int
fig_board_uart(struct bench *b)
{
	fig_board_round		 round[2] = { fig_board_uart_daemon,
				    fig_board_uart_direct };
	struct samples		 s[2][2] = { { { 0 } } };
	struct fig_board	 f;
	int			 rv;

	if ((rv = fig_board_open(&f, b)) == 0) {
		/* Both boards run past their banners: the baseline's halted. */
		f.running = 0;
		rv = fig_board_direct_halt(&f);
	}
	if (rv == 0)
		rv = fig_board_batches(&f, round, FIG_BOARD_ECHOES,
		    FIG_BOARD_WARM, s);
	fig_board_close(&f);
	if (rv == 0)
		fig_board_rows(s, "us", 1.2, 50, "goal <= 1.2x base + 50 us; "
		    "write and expect pipelined", "UART round trip [vs QEMU's "
		    "own pipes]");
	fig_board_free(s);
	return rv;
}
