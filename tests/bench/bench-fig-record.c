/*
 * Record and replay (issue 37): what recording costs the firmware's own
 * loop. Two qemu sessions of board-an385.elf (beside BENCH_BOARD) on
 * mps2-an385, one launched with record (QEMU's record/replay, icount),
 * one without; in turn, one resumed for a window while the other stays
 * halted, its counter read before and after by eval: loop passes per ms
 * of the wall clock, recorded beside unrecorded. Also the recording's
 * growth, in bytes per second the board ran, from its file in the state
 * dir.
 */
#include "bench.h"

#include <sys/stat.h>

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The window a side runs for, in ms: long beside a halt's and a resume's. */
#define FIG_RECORD_WINDOW_MS 400
/* Windows of a sample, and of the warm-up. */
#define FIG_RECORD_WINDOWS 3
#define FIG_RECORD_WARM 1

/* The figure's two sessions (0 unrecorded, 1 recorded) on one connection. */
struct fig_record {
	struct board	 f;		/* its rpc, its bench */
	json_int_t	 id[2];
	double		 ran_ms;	/* the recorded one's windows, summed */
};

/* The an385 firmware beside BENCH_BOARD into buf; NULL if not built. */
static const char *
fig_record_an385(const struct bench *b, char *buf, size_t len)
{
	const char *slash = strrchr(b->board, '/');

	snprintf(buf, len, "%.*sboard-an385.elf", slash != NULL ? (int)(slash -
	    b->board + 1) : 0, b->board);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

/* Call method on side's session with params (taken); its result or NULL. */
static json_t *
fig_record_call(struct fig_record *r, int side, const char *method,
    json_t *params)
{
	json_object_set_new(params, "session", json_integer(r->id[side]));
	return board_call(&r->f, method, params);
}

/* The counter of side's halted board, or -1. */
static double
fig_record_counter(struct fig_record *r, int side)
{
	json_t	*res;
	double	 v;

	/* The global: board_rtt_step has a parameter of the same name. */
	res = fig_record_call(r, side, "eval", json_pack("{s:s}",
	    "expression", "::counter"));
	if (res == NULL)
		return -1;
	v = strtod(json_string_value(json_object_get(res, "value")) ?
	    json_string_value(json_object_get(res, "value")) : "-1", NULL);
	json_decref(res);
	if (v < 0)
		return bench_fail(r->f.b, "eval counter: no value");
	return v;
}

/*
 * One window of side: its counter, resumed, FIG_RECORD_WINDOW_MS, halted,
 * its counter again: loop passes per ms between the resume's answer and
 * the halt's.
 */
static double
fig_record_round(void *arg, int side)
{
	struct fig_record	*r = arg;
	double			 c0, c1, t0, t1;
	json_t			*res;

	if ((c0 = fig_record_counter(r, side)) < 0)
		return NA;
	res = fig_record_call(r, side, "resume", json_object());
	json_decref(res);
	if (res == NULL)
		return NA;
	t0 = stat_now_ms();
	stat_sleep_ms(FIG_RECORD_WINDOW_MS);
	res = fig_record_call(r, side, "halt", json_pack("{s:i}", "timeout",
	    BOARD_TIMEOUT_MS));
	t1 = stat_now_ms();
	json_decref(res);
	if (res == NULL || (c1 = fig_record_counter(r, side)) < 0)
		return NA;
	if (side == 1)
		r->ran_ms += t1 - t0;
	if (!(c1 >= c0 && t1 > t0))
		return bench_fail(r->f.b, "side %d: counter %g to %g in %g ms",
		    side, c0, c1, t1 - t0);
	return (c1 - c0) / (t1 - t0);
}

/* Launch side's session, past its banner, halted; -1 with why. */
static int
fig_record_launch(struct fig_record *r, int side, const char *fw)
{
	json_t *res;

	res = board_call(&r->f, "launch", json_pack("{s:s, s:s, s:[s], s:b, "
	    "s:b}", "kind", "qemu", "machine", "mps2-an385", "argv", fw,
	    "transport", 1, "record", side == 1));
	if (res == NULL)
		return -1;
	r->id[side] = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	/* board-an385.elf's banner is "dbgctl board an385 ready". */
	res = fig_record_call(r, side, "expect", json_pack("{s:s, s:i}",
	    "exact", "ready\r\n", "timeout", BOARD_TIMEOUT_MS));
	json_decref(res);
	if (res == NULL)
		return -1;
	res = fig_record_call(r, side, "halt", json_pack("{s:i}", "timeout",
	    BOARD_TIMEOUT_MS));
	json_decref(res);
	return res != NULL ? 0 : -1;
}

/*
 * The recording's bytes per second its board ran (its windows; halted,
 * it records nothing), from what QEMU has written so far, or NA.
 */
static double
fig_record_growth(struct fig_record *r)
{
	char		 path[PATH_MAX];
	struct stat	 st;
	glob_t		 g;
	int		 found;

	/* The daemon's state directory is named by a hash of its socket. */
	snprintf(path, sizeof path, "%s/state/dbgctl/daemons/*/sessions/"
	    "%lld.rr.bin", r->f.b->dir, (long long)r->id[1]);
	if (glob(path, 0, NULL, &g) != 0)
		return NA;
	found = g.gl_pathc == 1 && stat(g.gl_pathv[0], &st) == 0;
	globfree(&g);
	if (!found)
		return NA;
	return (double)st.st_size / (r->ran_ms / 1000.0);
}

/* Stop both sessions and close. */
static void
fig_record_close(struct fig_record *r)
{
	int i;

	for (i = 0; i < 2; i++) {
		r->f.session = r->id[i];
		board_end(&r->f);
	}
	rpc_close(&r->f.r);
}

/*
 * The firmware's loop, recorded beside unrecorded (passes per ms, p50
 * and p99 of the windows), and the recording's growth (bytes per second
 * the board ran: its inputs and timer events, not its instructions, fill
 * it).
 */
int
fig_record(struct bench *b)
{
	struct samples		 s[2][2] = { { { 0 } } };
	struct fig_record	 r;
	char			 fw[PATH_MAX];
	double			 growth = NA;
	int			 rv;

	memset(&r, 0, sizeof r);
	if (board_connect(&r.f, b) == -1)
		return -1;
	if (fig_record_an385(b, fw, sizeof fw) == NULL) {
		rpc_close(&r.f.r);
		table_na(NO_TARGET, "no board-an385.elf", "board loop, recorded");
		return 0;
	}
	rv = fig_record_launch(&r, 0, fw) == -1 ||
	    fig_record_launch(&r, 1, fw) == -1 ? -1 : 0;
	if (rv == 0)
		rv = stat_batches(b->runs, 2, FIG_RECORD_WINDOWS,
		    FIG_RECORD_WARM, fig_record_round, &r, s);
	if (rv == 0)
		growth = fig_record_growth(&r);
	fig_record_close(&r);
	if (rv == 0) {
		table_row("loop/ms", stat_median(&s[1][0]),
		    stat_median(&s[0][0]), TARGET(RATIO_MIN, 0.5), "the "
		    "firmware's own loop, windows of 400 ms; goal: recording "
		    "keeps half the speed or more", "board loop recorded p50 "
		    "[vs unrecorded]");
		table_row("B/s", growth, NA, NO_TARGET, "the recording's log "
		    "a second the board runs: its inputs and timer events, "
		    "not its instructions (flushed by 4 KiB)",
		    "board recording growth");
	}
	board_free(s, 2);
	return rv;
}
