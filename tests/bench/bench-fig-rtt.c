/*
 * RTT (issue 36): the board firmware's RTT up-channel (board-an385.elf,
 * examples/board/board-rtt.c) read by the daemon over the shared RAM of
 * mps2-an385, against the firmware's own write rate. The firmware writes
 * a line every pass of its loop ("f") and counts the lines it tried in
 * board_rtt_lines, read live (no halt) at each end of a window: in drop
 * mode ("d") what the stream got beside what the firmware wrote, at the
 * default poll rate and at the maximum; in block mode ("b") the core
 * waits for the host, so the stream's rate is the most RTT moves, beside
 * the bound of a 1 KiB buffer emptied at each poll.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Milliseconds a window lasts, and of the warm-up after a change. */
#define FIG_RTT_WINDOW	500
#define FIG_RTT_WARM	100
/* The firmware's up-buffer: its bytes, of which one stays empty. */
#define FIG_RTT_BUFFER	1024

/* The figure's session and where its counts stood. */
struct fig_rtt {
	struct board	 f;
	json_int_t	 id;
};

/* Call method on the session with params (taken); its result or NULL. */
static json_t *
fig_rtt_call(struct fig_rtt *r, const char *method, json_t *params)
{
	json_object_set_new(params, "session", json_integer(r->id));
	return board_call(&r->f, method, params);
}

/* The lines the firmware tried so far (board_rtt_lines), read live. */
static double
fig_rtt_lines(struct fig_rtt *r)
{
	const char	*hex;
	unsigned	 b, v = 0;
	json_t		*res;
	int		 i;

	res = fig_rtt_call(r, "memory", json_pack("{s:s, s:i, s:b}", "address",
	    "&board_rtt_lines", "length", 4, "live", 1));
	if (res == NULL)
		return NA;
	hex = json_string_value(json_object_get(res, "hex"));
	for (i = 3; hex != NULL && strlen(hex) == 8 && i >= 0; i--)
		if (sscanf(hex + 2 * i, "%2x", &b) == 1)
			v = v << 8 | b;
	json_decref(res);
	return v;
}

/* The polls the daemon made so far (status's rtt.polls). */
static double
fig_rtt_polls(struct fig_rtt *r)
{
	json_t	*res;
	double	 v;

	res = fig_rtt_call(r, "status", json_object());
	if (res == NULL)
		return NA;
	v = (double)json_integer_value(json_object_get(json_object_get(res,
	    "rtt"), "polls"));
	json_decref(res);
	return v;
}

/* The rtt0 stream's size so far. */
static double
fig_rtt_size(struct fig_rtt *r)
{
	json_t	*res;
	double	 v;

	res = fig_rtt_call(r, "logs", json_pack("{s:s, s:i, s:i}", "stream",
	    "rtt0", "max", 1, "lines", 0));
	if (res == NULL)
		return NA;
	v = (double)json_integer_value(json_object_get(res, "size"));
	json_decref(res);
	return v;
}

/* Line feeds in rtt0 between from and to. */
static double
fig_rtt_count(struct fig_rtt *r, double from, double to)
{
	unsigned char	*buf;
	const char	*b64;
	double		 n = 0, off = from;
	size_t		 len, i;
	json_t		*res;

	while (off < to) {
		res = fig_rtt_call(r, "logs", json_pack("{s:s, s:I, s:I}",
		    "stream", "rtt0", "offset", (json_int_t)off, "max",
		    (json_int_t)(to - off)));
		if (res == NULL)
			return NA;
		b64 = json_string_value(json_object_get(res, "data"));
		buf = malloc(b64_size(b64, strlen(b64)) + 1);
		len = b64_decode(b64, buf);
		for (i = 0; i < len; i++)
			n += buf[i] == '\n';
		off = (double)json_integer_value(json_object_get(res,
		    "next_offset"));
		free(buf);
		json_decref(res);
		if (len == 0)
			break;
	}
	return n;
}

/* Send the firmware command bytes cmd on down-channel 0, and settle. */
static int
fig_rtt_mode(struct fig_rtt *r, const char *cmd, int hz)
{
	json_t	*res;
	char	*b64 = b64_encode(cmd, strlen(cmd));

	res = fig_rtt_call(r, "write", json_pack("{s:s, s:s}", "stream",
	    "rtt0", "data", b64));
	free(b64);
	json_decref(res);
	if (res == NULL)
		return -1;
	res = fig_rtt_call(r, "rtt", json_pack("{s:i}", "poll_hz", hz));
	json_decref(res);
	if (res == NULL)
		return -1;
	stat_sleep_ms(FIG_RTT_WARM);
	return 0;
}

/*
 * One window in mode cmd at hz: lines a second the stream got, and the
 * firmware tried (*tried), bytes a second the stream got (*bytes), and
 * polls a second the daemon made (*polls).
 */
static double
fig_rtt_window(struct fig_rtt *r, const char *cmd, int hz, double *tried,
    double *bytes, double *polls)
{
	double	 t0, t1, l0, l1, s0, s1, p0, p1, got;

	if (fig_rtt_mode(r, cmd, hz) == -1)
		return NA;
	p0 = fig_rtt_polls(r);
	s0 = fig_rtt_size(r);
	l0 = fig_rtt_lines(r);
	t0 = stat_now_ms();
	stat_sleep_ms(FIG_RTT_WINDOW);
	p1 = fig_rtt_polls(r);
	s1 = fig_rtt_size(r);
	l1 = fig_rtt_lines(r);
	t1 = stat_now_ms();
	got = fig_rtt_count(r, s0, s1);
	if (s0 == NA || s1 == NA || l0 == NA || l1 == NA || p0 == NA ||
	    p1 == NA || got == NA)
		return NA;
	*tried = (l1 - l0) * 1000 / (t1 - t0);
	*bytes = (s1 - s0) * 1000 / (t1 - t0);
	*polls = (p1 - p0) * 1000 / (t1 - t0);
	return got * 1000 / (t1 - t0);
}

/* The an385 firmware beside BENCH_BOARD into buf; NULL if not built. */
static const char *
fig_rtt_firmware(const struct bench *b, char *buf, size_t len)
{
	const char *slash = strrchr(b->board, '/');

	snprintf(buf, len, "%.*sboard-an385.elf", slash != NULL ? (int)(slash -
	    b->board + 1) : 0, b->board);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

/* The session, past its banner, with RTT on; -1 with why. */
static int
fig_rtt_open(struct fig_rtt *r, struct bench *b)
{
	char	 fw[PATH_MAX];
	json_t	*res;

	if (board_connect(&r->f, b) == -1)
		return -1;
	if (fig_rtt_firmware(b, fw, sizeof fw) == NULL)
		return bench_fail(b, "no board-an385.elf beside BENCH_BOARD");
	res = board_call(&r->f, "launch", json_pack("{s:s, s:s, s:[s], s:s}",
	    "kind", "qemu", "machine", "mps2-an385", "argv", fw, "cwd", "/"));
	if (res == NULL)
		return -1;
	r->id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	res = fig_rtt_call(r, "expect", json_pack("{s:s, s:i}", "patterns",
	    "an385 ready", "timeout", BOARD_TIMEOUT_MS));
	json_decref(res);
	if (res == NULL)
		return -1;
	res = fig_rtt_call(r, "rtt", json_object());
	json_decref(res);
	return res != NULL ? 0 : -1;
}

/* The sides: drop and block, each at 100 and at 1000 Hz. */
static const struct {
	const char	*cmd;
	int		 hz;
} fig_rtt_sides[] = {
	{ "fd", 100 },
	{ "fd", 1000 },
	{ "fb", 100 },
	{ "fb", 1000 },
};
#define FIG_RTT_SIDES	(sizeof fig_rtt_sides / sizeof fig_rtt_sides[0])

/*
 * Figure: RTT lines a second the stream got against those the firmware
 * wrote (drop mode, 100 and 1000 Hz), block mode's bytes a second
 * against a full buffer at every poll (100 and 1000 Hz), and the polls
 * the daemon made against the rate asked; medians of BENCH_RUNS windows,
 * the sides interleaved.
 */
int
fig_rtt_throughput(struct bench *b)
{
	struct samples	 got[FIG_RTT_SIDES] = { { 0 } },
			 tried[FIG_RTT_SIDES] = { { 0 } },
			 bytes[FIG_RTT_SIDES] = { { 0 } },
			 polls[FIG_RTT_SIDES] = { { 0 } };
	struct fig_rtt	 r;
	double		 g, t = 0, n = 0, p = 0;
	int		 run, rv;
	size_t		 i;

	memset(&r, 0, sizeof r);
	rv = fig_rtt_open(&r, b);
	for (run = 0; rv == 0 && run < b->runs; run++)
		for (i = 0; rv == 0 && i < FIG_RTT_SIDES; i++) {
			if ((g = fig_rtt_window(&r, fig_rtt_sides[i].cmd,
			    fig_rtt_sides[i].hz, &t, &n, &p)) == NA) {
				rv = -1;
				break;
			}
			stat_add(&got[i], g);
			stat_add(&tried[i], t);
			stat_add(&bytes[i], n);
			stat_add(&polls[i], p);
		}
	if (r.id != 0)
		json_decref(rpc_call(&r.f.r, "stop", json_pack("{s:I}",
		    "session", r.id)));
	rpc_close(&r.f.r);
	if (rv == 0) {
		table_row("lines/s", stat_median(&got[0]), stat_median(
		    &tried[0]), NO_TARGET, "drop mode, a line a pass; the "
		    "rest dropped by the firmware", "RTT lines got, poll 100 Hz "
		    "[vs lines the firmware wrote]");
		table_row("lines/s", stat_median(&got[1]), stat_median(
		    &tried[1]), NO_TARGET, "drop mode, the maximum poll rate",
		    "RTT lines got, poll 1000 Hz [vs lines the firmware "
		    "wrote]");
		for (i = 2; i < FIG_RTT_SIDES; i++)
			table_row("KiB/s", stat_median(&bytes[i]) / 1024,
			    (FIG_RTT_BUFFER - 1) * fig_rtt_sides[i].hz / 1024.0,
			    NO_TARGET, "block mode: the core waits for the host",
			    "RTT throughput, block, %d Hz [vs a full buffer a "
			    "poll]", fig_rtt_sides[i].hz);
		for (i = 0; i < FIG_RTT_SIDES; i++)
			table_row("Hz", stat_median(&polls[i]),
			    fig_rtt_sides[i].hz, NO_TARGET, "the rate the "
			    "daemon's loop kept", "RTT polls, %s, %d Hz [vs the "
			    "rate asked]", fig_rtt_sides[i].cmd[1] == 'd' ?
			    "drop" : "block", fig_rtt_sides[i].hz);
	}
	for (i = 0; i < FIG_RTT_SIDES; i++) {
		stat_free(&got[i]);
		stat_free(&tried[i]);
		stat_free(&bytes[i]);
		stat_free(&polls[i]);
	}
	return rv;
}
