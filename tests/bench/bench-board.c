/*
 * What the board figures share: two boards running the firmware of
 * examples/board (BENCH_BOARD), the daemon's session and the baseline's
 * QEMU and gdb-multiarch on MI pipes of ours (bench-mi.c), with the one
 * not timed halted so that neither QEMU's busy loop takes a CPU from the
 * other; rounds of each side interleaved in batches; and the rows, p50
 * and p99, marked against the goal of issue 33: p50 within 1.2x the
 * baseline plus a margin, p99 within 2x the baseline's p99.
 */
#include "bench.h"

#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why the board cannot run here, or NULL if it can. */
const char *
board_missing(const struct bench *b)
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
json_t *
board_call(struct board *f, const char *method, json_t *params)
{
	json_t *res;

	if ((res = rpc_call(&f->r, method, params)) == NULL)
		bench_fail(f->b, "%s: %s", method, f->r.err);
	return res;
}

/* Expect the banner on the session's UART0 from f->from, then past it. */
int
board_banner(struct board *f)
{
	json_t *res;

	res = board_call(f, "expect", json_pack("{s:I, s:s, s:I, s:i}",
	    "session", f->session, "exact", BOARD_BANNER, "from", f->from,
	    "timeout", BOARD_TIMEOUT_MS));
	if (res == NULL)
		return -1;
	f->from = json_integer_value(json_object_get(res, "next"));
	json_decref(res);
	return 0;
}

/* Launch a session with params, its UART0 read from the start to its banner. */
static int
board_launch_with(struct board *f, json_t *params)
{
	json_t *res;

	f->from = 0;
	if ((res = board_call(f, "launch", params)) == NULL)
		return -1;
	f->session = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	return board_banner(f);
}

/*
 * The daemon's board, the one place that says how it is launched: QEMU
 * as the gdbserver kind's managed server, gdb-multiarch connected, UART0
 * on the transport, continued to its banner; QEMU's reset recipe given,
 * as the gdbserver kind's own (`monitor reset halt`) is not QEMU's.
 */
int
board_launch(struct board *f)
{
	char server[4096];

	snprintf(server, sizeof server, "qemu-system-arm -M lm3s6965evb "
	    "-nographic -kernel '%s' -serial stdio -monitor none "
	    "-gdb tcp:127.0.0.1:{port} -S", f->b->board);
	return board_launch_with(f, json_pack("{s:s, s:[s], s:s, s:s, s:b, "
	    "s:[s], s:[s, s], s:s}", "kind", "gdbserver", "argv", f->b->board,
	    "server", server, "debugger", "gdb-multiarch", "transport", 1,
	    "commands", "continue", "reset_commands", "monitor system_reset",
	    "flushregs", "cwd", "/"));
}

/* The same board as the qemu kind launches it, to its banner. */
int
board_launch_qemu(struct board *f)
{
	return board_launch_with(f, json_pack("{s:s, s:s, s:[s], s:s}",
	    "kind", "qemu", "machine", "lm3s6965evb", "argv", f->b->board,
	    "cwd", "/"));
}

/* Stop and remove the daemon's session, if there is one. */
void
board_end(struct board *f)
{
	if (f->session <= 0)
		return;
	json_decref(rpc_call(&f->r, "stop", json_pack("{s:I}", "session",
	    f->session)));
	json_decref(rpc_call(&f->r, "remove", json_pack("{s:I}", "session",
	    f->session)));
	f->session = 0;
}

/* The baseline's board started by hand, continued to its banner. */
int
board_direct(struct board *f)
{
	f->direct = 1;
	if (mi_start(&f->m, f->b->board) == -1 ||
	    mi_command(&f->m, "-exec-continue", NULL) == -1 ||
	    mi_uart_until(&f->m, BOARD_BANNER) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return 0;
}

/* End the baseline's board, if it was started. */
void
board_direct_end(struct board *f)
{
	if (f->direct)
		mi_stop(&f->m);
	f->direct = 0;
}

/* The connection alone, no board yet; -1 with b->why. */
int
board_connect(struct board *f, struct bench *b)
{
	const char *why;

	memset(f, 0, sizeof *f);
	f->b = b;
	/* Closed whatever happens: not stdin's fd 0 if never opened. */
	f->r.fd = -1;
	f->running = -1;
	mi_init(&f->floor);
	if ((why = board_missing(b)) != NULL)
		return bench_fail(b, "%s", why);
	if (rpc_open(&f->r, b->sock) == -1)
		return bench_fail(b, "%s", f->r.err);
	return 0;
}

/* Both boards up, running past their banners; -1 with b->why. */
int
board_open(struct board *f, struct bench *b)
{
	if (board_connect(f, b) == -1 || board_launch(f) == -1)
		return -1;
	return board_direct(f);
}

/* Stop and remove the session, end the baseline's and floor's boards, close. */
void
board_close(struct board *f)
{
	board_end(f);
	board_direct_end(f);
	if (f->floored)
		mi_stop(&f->floor);
	f->floored = 0;
	rpc_close(&f->r);
}

/* Halt the daemon's board (a stopped one stays as it is). */
int
board_halt(struct board *f)
{
	json_t *res;

	res = board_call(f, "halt", json_pack("{s:I, s:i}", "session",
	    f->session, "timeout", BOARD_TIMEOUT_MS));
	json_decref(res);
	return res != NULL ? 0 : -1;
}

/* Halt the baseline's running board and read its stop. */
int
board_direct_halt(struct board *f)
{
	if (mi_command(&f->m, "-exec-interrupt", NULL) == -1 ||
	    mi_wait(&f->m, "*stopped", NULL) == -1)
		return bench_fail(f->b, "%s", f->m.err);
	return 0;
}

/* Halt both boards; -1 with b->why. */
int
board_halt_both(struct board *f)
{
	if (board_halt(f) == -1)
		return -1;
	return board_direct_halt(f);
}

/*
 * Run only side's board (0 the daemon's, 1 the baseline's), halting the
 * other: not timed, once each time the side changes. f->running says
 * which runs now (-1: neither).
 */
int
board_side(struct board *f, int side)
{
	json_t *res;

	if (f->running == side)
		return 0;
	if (side == 0) {
		if (f->running == 1 && board_direct_halt(f) == -1)
			return -1;
		res = board_call(f, "resume", json_pack("{s:I, s:i}",
		    "session", f->session, "timeout", BOARD_TIMEOUT_MS));
		json_decref(res);
		if (res == NULL)
			return -1;
	} else {
		if (f->running == 0 && board_halt(f) == -1)
			return -1;
		mi_uart_drain(&f->m);
		if (mi_command(&f->m, "-exec-continue", NULL) == -1)
			return bench_fail(f->b, "%s", f->m.err);
	}
	f->running = side;
	return 0;
}

/* The stop reason of a verb's target record, or "" if none. */
const char *
board_reason(json_t *res)
{
	const char *reason;

	reason = json_string_value(json_object_get(json_object_get(
	    json_object_get(res, "target"), "stop"), "reason"));
	return reason != NULL ? reason : "";
}

/*
 * The next notification of method on r within BOARD_TIMEOUT_MS, others
 * skipped; NULL with b->why if none came. rpc_line blocks: poll first
 * while no whole line is buffered.
 */
json_t *
board_notice(struct board *f, struct rpc *r, const char *method)
{
	struct pollfd	 pfd = { .fd = r->fd, .events = POLLIN };
	const char	*m;
	json_t		*msg;
	char		*line;

	for (;;) {
		if (memchr(r->buf + r->off, '\n', r->len - r->off) == NULL &&
		    poll(&pfd, 1, BOARD_TIMEOUT_MS) != 1) {
			bench_fail(f->b, "no %s within %d ms", method,
			    BOARD_TIMEOUT_MS);
			return NULL;
		}
		if ((line = rpc_line(r)) == NULL) {
			bench_fail(f->b, "waiting for %s: %s", method, r->err);
			return NULL;
		}
		if ((msg = json_loads(line, 0, NULL)) == NULL)
			continue;
		m = json_string_value(json_object_get(msg, "method"));
		if (m != NULL && strcmp(m, method) == 0)
			return msg;
		json_decref(msg);
	}
}

/* What board_batches' rounds need: the board, and each side's round. */
struct board_sides {
	struct board	*f;
	board_round	*round;
};

/* One round of a side of a board figure. */
static double
board_side_round(void *arg, int side)
{
	struct board_sides *bs = arg;

	return bs->round[side](bs->f);
}

/* Interleaved batches of a board figure's nside sides (stat_batches). */
int
board_batches(struct board *f, board_round round[], int nside, int n,
    int warm, struct samples (*s)[2])
{
	struct board_sides bs = { f, round };

	return stat_batches(f->b->runs, nside, n, warm, board_side_round, &bs,
	    s);
}

/*
 * The rows of side's p50 and p99 in unit (us or ms) beside the baseline
 * side's, marked against issue 33's goal: p50 at most 1.2x the baseline
 * plus over (in the unit, none if 0), p99 at most 2x the baseline's.
 */
void
board_rows(struct samples (*s)[2], int side, int base, const char *unit,
    double over, const char *note, const char *what)
{
	table_row(unit, stat_median(&s[side][0]), stat_median(&s[base][0]),
	    over > 0 ? TARGET2(RATIO_PLUS_MAX, 1.2, over) :
	    TARGET(RATIO_MAX, 1.2), note, "board %s p50", what);
	table_row(unit, stat_median(&s[side][1]), stat_median(&s[base][1]),
	    TARGET(RATIO_MAX, 2), note, "board %s p99", what);
}

/*
 * Start the floor's board (f->floor): QEMU and gdb-multiarch in the
 * daemon's layout with what a session's gdb has on a board
 * (bench-mi-pty.c), run to its banner and halted; -1 with why.
 */
int
board_floor_start(struct board *f)
{
	struct mi *m = &f->floor;

	f->floored = 1;
	if (mi_start_board_pty(m, f->b->board) == -1 ||
	    mi_command(m, "-exec-continue", NULL) == -1 ||
	    mi_uart_until(m, BOARD_BANNER) == -1 ||
	    mi_command(m, "-exec-interrupt", NULL) == -1 ||
	    mi_wait(m, "*stopped", NULL) == -1)
		return bench_fail(f->b, "%s", m->err);
	return 0;
}

/*
 * The unmarked rows of the daemon's side beside a floor's (side 2): the
 * same work by hand in the daemon's layout, console and MI on ptys.
 */
void
board_rows_floor(struct samples (*s)[2], const char *unit, const char *what)
{
	table_row(unit, stat_median(&s[0][0]), stat_median(&s[2][0]),
	    NO_TARGET, "floor: the same, console and MI on ptys", "board %s "
	    "p50", what);
	table_row(unit, stat_median(&s[0][1]), stat_median(&s[2][1]),
	    NO_TARGET, "floor: the same, console and MI on ptys", "board %s "
	    "p99", what);
}

/* Free the sample sets of a figure's nside sides. */
void
board_free(struct samples (*s)[2], int nside)
{
	int i;

	for (i = 0; i < nside * 2; i++)
		stat_free(&s[i / 2][i % 2]);
}

/* Both boards run past their banners: the baseline's is halted, not timed. */
int
board_daemon_runs(struct board *f)
{
	f->running = 0;
	return board_direct_halt(f);
}

/*
 * A figure of two sides on f's two boards, opened here and set up by
 * setup: n rounds a batch after warm, the daemon's side beside the
 * baseline's; its p50 and p99 rows, marked 1.2x base + over, and 2x.
 */
int
board_figure(struct bench *b, struct board *f, board_round round[2],
    int (*setup)(struct board *), const struct board_marks *m)
{
	struct samples	s[2][2] = { { { 0 } } };
	int		rv;

	if ((rv = board_open(f, b)) == 0 && (rv = setup(f)) == 0)
		rv = board_batches(f, round, 2, m->n, m->warm, s);
	board_close(f);
	if (rv == 0)
		board_rows(s, 0, 1, m->unit, m->over, m->note, m->what);
	board_free(s, 2);
	return rv;
}

/*
 * method (reset or load) of the halted daemon's board, which it leaves
 * running, timed to the banner's match on its transport, in ms; halted
 * again after, not timed.
 */
double
board_daemon_recipe(struct board *f, const char *method)
{
	const char	*state;
	json_t		*res;
	double		 t0, ms;
	bool		 running;

	t0 = stat_now_ms();
	res = board_call(f, method, json_pack("{s:I, s:b, s:i}", "session",
	    f->session, "halt", 0, "timeout", BOARD_TIMEOUT_MS));
	if (res == NULL)
		return NA;
	state = json_string_value(json_object_get(json_object_get(res,
	    "target"), "state"));
	running = state == NULL || strcmp(state, "running") == 0;
	json_decref(res);
	if (!running)
		return bench_fail(f->b, "%s without halt left the board other "
		    "than running", method);
	if (board_banner(f) == -1)
		return NA;
	ms = stat_now_ms() - t0;
	if (board_halt(f) == -1)
		return NA;
	return ms;
}

/*
 * The same by hand on a halted board of ours, m: the MI commands of cmds,
 * then the reset recipe (monitor system_reset, flushregs), -exec-continue
 * and UART0 read until the banner, in ms; then halted.
 */
double
board_mi_recipe(struct board *f, struct mi *m, const char *const *cmds)
{
	double	t0, ms;
	int	rc = 0;

	mi_uart_drain(m);
	t0 = stat_now_ms();
	for (; *cmds != NULL && rc == 0; cmds++)
		rc = mi_command(m, *cmds, NULL);
	if (rc == -1 || mi_command(m, "-interpreter-exec console "
	    "\"monitor system_reset\"", NULL) == -1 ||
	    mi_command(m, "-interpreter-exec console flushregs",
	    NULL) == -1 ||
	    mi_command(m, "-exec-continue", NULL) == -1 ||
	    mi_uart_until(m, BOARD_BANNER) == -1)
		return bench_fail(f->b, "%s", m->err);
	ms = stat_now_ms() - t0;
	if (mi_command(m, "-exec-interrupt", NULL) == -1 ||
	    mi_wait(m, "*stopped", NULL) == -1)
		return bench_fail(f->b, "%s", m->err);
	return ms;
}

/* The same on the baseline's board (board_mi_recipe). */
double
board_direct_recipe(struct board *f, const char *const *cmds)
{
	return board_mi_recipe(f, &f->m, cmds);
}
