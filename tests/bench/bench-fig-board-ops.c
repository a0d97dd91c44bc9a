/*
 * A rig's other everyday operations on the QEMU board, each beside the
 * same sequence done by hand over gdb-multiarch's MI on pipes of ours
 * (bench-mi.c), the two boards and their batches as bench-board.c keeps
 * them: `load` of the firmware to its banner beside the daemon's recipe
 * typed by hand (load, monitor system_reset, flushregs, -exec-continue,
 * UART0 read until the banner), and beside the same by hand with what a
 * session's gdb keeps on a board (osabi none, breakpoints kept in, the
 * four fault breaks, which gdb sets again after a load: a memory read a
 * break), with its MI on pipes and in the daemon's layout, the floors; a
 * breakpoint set on the running board, a
 * byte written for it, its stop, its delete and the resume, beside
 * -exec-interrupt, -break-insert, -exec-continue, the byte, *stopped,
 * -break-delete and -exec-continue (gdb takes no -break-insert while the
 * target runs); and `eval` and `exec -data-evaluate-expression` on the
 * halted board beside -data-evaluate-expression.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Loads of a sample. */
#define FIG_BOARD_OPS_LOADS 10
/* Breakpoint sequences of a sample, and of the warm-up. */
#define FIG_BOARD_OPS_SETS 20
#define FIG_BOARD_OPS_SETS_WARM 2
/* Where the firmware echoes a byte: the breakpoint of the sequence. */
#define FIG_BOARD_OPS_BREAK "uart_putc"
/* Evaluations of a sample, and of the warm-up. */
#define FIG_BOARD_OPS_EVALS 200
#define FIG_BOARD_OPS_EVALS_WARM 10
/* What is evaluated: the firmware's loop counter. */
#define FIG_BOARD_OPS_EXPR "counter"

/* A load of the halted board through the daemon, to its banner. */
static double
fig_board_ops_load_daemon(struct board *f)
{
	return board_daemon_recipe(f, "load");
}

/* The daemon's load recipe typed by hand on the halted baseline board. */
static double
fig_board_ops_load_direct(struct board *f)
{
	static const char *const cmds[] = { "-interpreter-exec console load",
	    NULL };

	return board_direct_recipe(f, cmds);
}

/*
 * The load figure's boards: the two, and two floors by hand with what a
 * session's gdb has on a board, MI on pipes and in the daemon's layout.
 */
struct fig_board_ops_load {
	struct board	 f;	/* first: a round is given &f */
	struct mi	 floor[2];
};

/* The daemon's load recipe by hand on the halted board of floor i. */
static double
fig_board_ops_load_floor(struct board *f, int i)
{
	static const char *const cmds[] = { "-interpreter-exec console load",
	    NULL };
	struct fig_board_ops_load *lf = (struct fig_board_ops_load *)f;

	return board_mi_recipe(f, &lf->floor[i], cmds);
}

/* The recipe on the floor with its MI on pipes. */
static double
fig_board_ops_load_pipes(struct board *f)
{
	return fig_board_ops_load_floor(f, 0);
}

/* The recipe on the floor in the daemon's layout (ptys, new-ui). */
static double
fig_board_ops_load_ptys(struct board *f)
{
	return fig_board_ops_load_floor(f, 1);
}

/*
 * Start the floors: QEMU and gdb by hand, gdb told the firmware names no
 * OS, breakpoints kept in and the four fault breaks set, which gdb sets
 * again after every load; its MI on pipes, and in the daemon's layout
 * (console on a pty, MI on a new-ui pty); each continued to its banner
 * and halted.
 */
static int
fig_board_ops_load_floors(struct board *f, struct mi *m)
{
	int i;

	if (mi_start(&m[0], f->b->board) == -1)
		return bench_fail(f->b, "%s", m[0].err);
	if (mi_command(&m[0], "-gdb-set osabi none", NULL) == -1 ||
	    mi_fault_breaks(&m[0], 1) == -1)
		return bench_fail(f->b, "%s", m[0].err);
	if (mi_start_board_pty(&m[1], f->b->board) == -1)
		return bench_fail(f->b, "%s", m[1].err);
	for (i = 0; i < 2; i++)
		if (mi_command(&m[i], "-exec-continue", NULL) == -1 ||
		    mi_uart_until(&m[i], BOARD_BANNER) == -1 ||
		    mi_command(&m[i], "-exec-interrupt", NULL) == -1 ||
		    mi_wait(&m[i], "*stopped", NULL) == -1)
			return bench_fail(f->b, "%s", m[i].err);
	return 0;
}

/* The rows of side (a floor) beside the daemon's, unmarked. */
static void
fig_board_ops_load_rows(struct samples (*s)[2], int side, const char *note,
    const char *what)
{
	table_row("ms", stat_median(&s[0][0]), stat_median(&s[side][0]),
	    NO_TARGET, note, "board load to banner [vs %s] p50", what);
	table_row("ms", stat_median(&s[0][1]), stat_median(&s[side][1]),
	    NO_TARGET, note, "board load to banner [vs %s] p99", what);
}

/*
 * Figure: load of the halted board to its banner on UART0, beside the
 * same recipe by hand over MI and QEMU's stdio, and (unmarked, the
 * floors) by hand with what a session's gdb has on a board; in ms.
 */
int
fig_board_ops_load(struct bench *b)
{
	board_round			 round[4] = { fig_board_ops_load_daemon,
					    fig_board_ops_load_direct,
					    fig_board_ops_load_pipes,
					    fig_board_ops_load_ptys };
	struct fig_board_ops_load	 lf;
	struct samples			 s[4][2] = { { { 0 } } };
	int				 rv;

	mi_init(&lf.floor[0]);
	mi_init(&lf.floor[1]);
	if ((rv = board_open(&lf.f, b)) == 0 &&
	    (rv = board_halt_both(&lf.f)) == 0 &&
	    (rv = fig_board_ops_load_floors(&lf.f, lf.floor)) == 0)
		rv = board_batches(&lf.f, round, 4, FIG_BOARD_OPS_LOADS, 1, s);
	board_close(&lf.f);
	mi_stop(&lf.floor[0]);
	mi_stop(&lf.floor[1]);
	if (rv == 0) {
		board_rows(s, 0, 1, "ms", 0.5, "goal p50 <= 1.2x base + 0.5 ms, "
		    "p99 <= 2x", "load to banner [vs load+system_reset+"
		    "continue]");
		fig_board_ops_load_rows(s, 2, "floor: osabi none, "
		    "always-inserted, the four fault breaks", "by hand with "
		    "fault breaks");
		fig_board_ops_load_rows(s, 3, "floor: the same, console and MI "
		    "on ptys", "the same in the daemon's layout");
	}
	board_free(s, 4);
	return rv;
}

/* The "number" of a break insert's answer, or NULL with b->why. */
static const char *
fig_board_ops_number(struct board *f, json_t *res)
{
	const char *num;

	num = json_string_value(json_object_get(json_object_get(res,
	    "breakpoint"), "number"));
	if (num == NULL)
		bench_fail(f->b, "break insert answered no breakpoint number");
	return num;
}

/* The seq of a verb's target record, or -1 if it has none. */
static json_int_t
fig_board_ops_seq(json_t *res)
{
	json_t *seq = json_object_get(json_object_get(res, "target"), "seq");

	return json_is_integer(seq) ? json_integer_value(seq) : -1;
}

/* Write "x" to the session's UART0; -1 with b->why. */
static int
fig_board_ops_write(struct board *f)
{
	json_t *res;

	res = board_call(f, "write", json_pack("{s:I, s:s}", "session",
	    f->session, "data", "eA=="));
	json_decref(res);
	return res != NULL ? 0 : -1;
}

/*
 * Wait for the stop at the breakpoint number after seq, delete it and
 * resume; -1 with b->why.
 */
static int
fig_board_ops_stop_delete(struct board *f, json_int_t seq, const char *num)
{
	const char	*reason;
	json_t		*res;
	int		 ok;

	res = board_call(f, "wait_target", json_pack("{s:I, s:s, s:I, s:i}",
	    "session", f->session, "state", "stopped", "after", seq,
	    "timeout", BOARD_TIMEOUT_MS));
	if (res == NULL)
		return -1;
	/* wait_target answers with the record itself. */
	reason = json_string_value(json_object_get(json_object_get(res,
	    "stop"), "reason"));
	ok = reason != NULL && strcmp(reason, "breakpoint-hit") == 0;
	json_decref(res);
	if (!ok)
		return bench_fail(f->b, "wait_target answered a stop other "
		    "than at the breakpoint");
	res = board_call(f, "break", json_pack("{s:I, s:s, s:[s], s:i}",
	    "session", f->session, "action", "delete", "numbers", num,
	    "timeout", BOARD_TIMEOUT_MS));
	json_decref(res);
	if (res == NULL)
		return -1;
	res = board_call(f, "resume", json_pack("{s:I, s:i}", "session",
	    f->session, "timeout", BOARD_TIMEOUT_MS));
	json_decref(res);
	return res != NULL ? 0 : -1;
}

/*
 * The sequence through the daemon on its running board: break insert
 * (which halts and continues it), the byte, wait_target for the stop at
 * it, break delete, resume; timed whole, in ms.
 */
static double
fig_board_ops_set_daemon(struct board *f)
{
	json_t		*res;
	char		 num[32];
	json_int_t	 seq;
	double		 t0;

	if (board_side(f, 0) == -1)
		return NA;
	t0 = stat_now_ms();
	res = board_call(f, "break", json_pack("{s:I, s:s, s:s, s:i}",
	    "session", f->session, "action", "insert", "location",
	    FIG_BOARD_OPS_BREAK, "timeout", BOARD_TIMEOUT_MS));
	if (res == NULL)
		return NA;
	if (fig_board_ops_number(f, res) == NULL ||
	    (seq = fig_board_ops_seq(res)) < 0) {
		json_decref(res);
		return bench_fail(f->b, "break insert answered no breakpoint "
		    "or no target record");
	}
	snprintf(num, sizeof num, "%s", fig_board_ops_number(f, res));
	json_decref(res);
	if (fig_board_ops_write(f) == -1 ||
	    fig_board_ops_stop_delete(f, seq, num) == -1)
		return NA;
	return stat_now_ms() - t0;
}

/* The breakpoint number of a -break-insert's result line, or NULL. */
static const char *
fig_board_ops_mi_number(const char *line, char *num, size_t len)
{
	const char *p;

	if ((p = strstr(line, "number=\"")) == NULL)
		return NULL;
	p += 8;
	snprintf(num, len, "%.*s", (int)strcspn(p, "\""), p);
	return num;
}

/*
 * The sequence by hand over m on its running board: -exec-interrupt and
 * its *stopped, -break-insert, -exec-continue, the byte, *stopped at the
 * breakpoint, -break-delete, -exec-continue; in ms.
 */
static double
fig_board_ops_set_mi(struct board *f, struct mi *m)
{
	char	*line, num[32], cmd[64];
	double	 t0;

	mi_uart_drain(m);
	t0 = stat_now_ms();
	if (mi_command(m, "-exec-interrupt", NULL) == -1 ||
	    mi_wait(m, "*stopped", NULL) == -1 ||
	    mi_command(m, "-break-insert " FIG_BOARD_OPS_BREAK, &line) == -1)
		return bench_fail(f->b, "%s", m->err);
	if (fig_board_ops_mi_number(line, num, sizeof num) == NULL)
		return bench_fail(f->b, "-break-insert answered no number");
	if (mi_command(m, "-exec-continue", NULL) == -1 ||
	    mi_uart_write(m, "x", 1) == -1 ||
	    mi_wait(m, "*stopped", &line) == -1)
		return bench_fail(f->b, "%s", m->err);
	if (strstr(line, "reason=\"breakpoint-hit\"") == NULL)
		return bench_fail(f->b, "the direct MI stopped other than at "
		    "the breakpoint: %.120s", line);
	snprintf(cmd, sizeof cmd, "-break-delete %s", num);
	if (mi_command(m, cmd, NULL) == -1 ||
	    mi_command(m, "-exec-continue", NULL) == -1)
		return bench_fail(f->b, "%s", m->err);
	return stat_now_ms() - t0;
}

/*
 * The figure's third side: a floor by hand in the daemon's layout on the
 * board's floor (board_floor_start); FLOOR_SIDE in f.running while the
 * floor's board runs.
 */
#define FLOOR_SIDE 2

/* Halt the floor's board if it runs, so that a side of f's can run. */
static int
fig_board_ops_set_leave_floor(struct board *f)
{
	if (f->running != FLOOR_SIDE)
		return 0;
	if (mi_command(&f->floor, "-exec-interrupt", NULL) == -1 ||
	    mi_wait(&f->floor, "*stopped", NULL) == -1)
		return bench_fail(f->b, "%s", f->floor.err);
	f->running = -1;
	return 0;
}

/* The daemon's side, once the floor's board is halted. */
static double
fig_board_ops_set_daemon_side(struct board *f)
{
	if (fig_board_ops_set_leave_floor(f) == -1)
		return NA;
	return fig_board_ops_set_daemon(f);
}

/* The baseline's side, by hand on its own board, the floor's halted. */
static double
fig_board_ops_set_direct(struct board *f)
{
	if (fig_board_ops_set_leave_floor(f) == -1 || board_side(f, 1) == -1)
		return NA;
	return fig_board_ops_set_mi(f, &f->m);
}

/* The floor's side: its board alone running (not timed), then the same. */
static double
fig_board_ops_set_floor(struct board *f)
{
	if (f->running != FLOOR_SIDE) {
		if ((f->running == 0 && board_halt(f) == -1) ||
		    (f->running == 1 && board_direct_halt(f) == -1))
			return NA;
		mi_uart_drain(&f->floor);
		if (mi_command(&f->floor, "-exec-continue", NULL) == -1)
			return bench_fail(f->b, "%s", f->floor.err);
		f->running = FLOOR_SIDE;
	}
	return fig_board_ops_set_mi(f, &f->floor);
}

/*
 * Figure: set a breakpoint on the running board, a byte, its stop,
 * delete, resume, beside the same by hand over MI, and (unmarked, the
 * floor) by hand in the daemon's layout; in ms.
 */
int
fig_board_ops_breakset(struct bench *b)
{
	board_round	 round[3] = { fig_board_ops_set_daemon_side,
			    fig_board_ops_set_direct, fig_board_ops_set_floor };
	struct samples	 s[3][2] = { { { 0 } } };
	struct board	 f;
	int		 rv;

	if ((rv = board_open(&f, b)) == 0 &&
	    (rv = board_daemon_runs(&f)) == 0 &&
	    (rv = board_halt(&f)) == 0 &&
	    (rv = board_floor_start(&f)) == 0) {
		f.running = -1;
		rv = board_batches(&f, round, 3, FIG_BOARD_OPS_SETS,
		    FIG_BOARD_OPS_SETS_WARM, s);
	}
	board_close(&f);
	if (rv == 0) {
		board_rows(s, 0, 1, "ms", 0.5, "goal p50 <= 1.2x base + 0.5 ms, "
		    "p99 <= 2x; the board running", "break set, byte, stop, "
		    "delete, resume [vs MI]");
		board_rows_floor(s, "ms", "break set, byte, stop, delete, "
		    "resume [vs the same in the daemon's layout]");
	}
	board_free(s, 3);
	return rv;
}

/*
 * A call of method with params on the halted board, timed; its answer
 * must hold a string "value" (in its member in, if in is not NULL).
 */
static double
fig_board_ops_value(struct board *f, const char *method, json_t *params,
    const char *in)
{
	json_t	*res, *v;
	double	 t0, us;
	int	 ok;

	t0 = stat_now_ms();
	res = board_call(f, method, params);
	us = (stat_now_ms() - t0) * 1000;
	if (res == NULL)
		return NA;
	v = in != NULL ? json_object_get(res, in) : res;
	ok = json_is_string(json_object_get(v, "value"));
	json_decref(res);
	return ok ? us : bench_fail(f->b, "%s answered no value", method);
}

/* eval of the expression on the halted board, timed. */
static double
fig_board_ops_eval_daemon(struct board *f)
{
	return fig_board_ops_value(f, "eval", json_pack("{s:I, s:s}",
	    "session", f->session, "expression", FIG_BOARD_OPS_EXPR), NULL);
}

/* The same as exec of the MI command, timed. */
static double
fig_board_ops_exec_daemon(struct board *f)
{
	return fig_board_ops_value(f, "exec", json_pack("{s:I, s:s}",
	    "session", f->session, "command", "-data-evaluate-expression "
	    FIG_BOARD_OPS_EXPR), "results");
}

/* -data-evaluate-expression over the direct MI, timed. */
static double
fig_board_ops_eval_direct(struct board *f)
{
	char	*line;
	double	 t0, us;

	t0 = stat_now_ms();
	if (mi_command(&f->m, "-data-evaluate-expression " FIG_BOARD_OPS_EXPR,
	    &line) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	us = (stat_now_ms() - t0) * 1000;
	if (strstr(line, "value=\"") == NULL)
		return bench_fail(f->b, "-data-evaluate-expression answered "
		    "no value: %.120s", line);
	return us;
}

/*
 * Figure: eval and exec -data-evaluate-expression on the halted board,
 * each beside -data-evaluate-expression over the direct MI, the three
 * interleaved.
 */
int
fig_board_ops_eval(struct bench *b)
{
	board_round		 round[3] = { fig_board_ops_eval_daemon,
				    fig_board_ops_exec_daemon, fig_board_ops_eval_direct };
	struct samples		 s[3][2] = { { { 0 } } };
	struct board		 f;
	int			 rv;

	if ((rv = board_open(&f, b)) == 0 &&
	    (rv = board_halt_both(&f)) == 0)
		rv = board_batches(&f, round, 3, FIG_BOARD_OPS_EVALS,
		    FIG_BOARD_OPS_EVALS_WARM, s);
	board_close(&f);
	if (rv == 0) {
		board_rows(s, 0, 2, "us", 500, "goal p50 <= 1.2x base + 0.5 ms, "
		    "p99 <= 2x; halted", "eval " FIG_BOARD_OPS_EXPR " [vs MI "
		    "-data-evaluate-expression]");
		board_rows(s, 1, 2, "us", 500, "goal p50 <= 1.2x base + 0.5 ms, "
		    "p99 <= 2x; halted", "exec -data-evaluate-expression [vs "
		    "MI]");
	}
	board_free(s, 3);
	return rv;
}
