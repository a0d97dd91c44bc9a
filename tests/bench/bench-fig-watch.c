/*
 * Live watch (issue 36): `watch counter` of the running board through
 * the daemon at 100 Hz and 1000 Hz by shared RAM (mps2-an385) and at
 * 100 Hz by QMP (lm3s6965evb), the samples read from the watch stream as
 * a client follows it (logs with wait). Reported from the samples' own
 * timestamps (the daemon's clock at each tick's reads): the rate achieved
 * against the rate asked, the jitter of the spacing (|dt - 1/hz|, p50 and
 * p99), and the ticks skipped. One board runs at a time.
 */
#include "bench.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Seconds of samples a run takes, and of the warm-up before. */
#define FIG_WATCH_SECONDS	2
#define FIG_WATCH_WARM		0.5

/* One case of the figure: the machine, its firmware, the rate. */
struct fig_watch_case {
	const char	*machine;
	int		 an385;		/* board-an385.elf, else BENCH_BOARD */
	int		 hz;
	const char	*via;
};

/* What the runs of a case gave: rates, spacing errors, skips. */
struct fig_watch_got {
	struct samples	 rate;		/* samples a second, a run each */
	struct samples	 jitter;	/* |dt - 1/hz| in us, every interval */
	long long	 skipped;
};

/* The an385 firmware beside BENCH_BOARD into buf; NULL if not built. */
static const char *
fig_watch_an385(const struct bench *b, char *buf, size_t len)
{
	const char *slash = strrchr(b->board, '/');

	snprintf(buf, len, "%.*sboard-an385.elf", slash != NULL ? (int)(slash -
	    b->board + 1) : 0, b->board);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

/* Read watch id's samples for secs from *off: their times into t. */
static int
fig_watch_read(struct board *f, json_int_t id, json_int_t *off, double secs,
    double **t, size_t *n, long long *skipped)
{
	const char	*data, *p, *nl;
	unsigned char	*bytes;
	json_t		*res, *line;
	double		 first = -1, at;
	size_t		 len, cap = 0;

	*n = 0;
	for (;;) {
		res = board_call(f, "logs", json_pack("{s:I, s:s, s:I, s:b}",
		    "session", f->session, "stream", "watch", "offset", *off,
		    "wait", 1));
		if (res == NULL)
			return -1;
		data = json_string_value(json_object_get(res, "data"));
		bytes = malloc(b64_size(data, strlen(data)) + 1);
		len = b64_decode(data, bytes);
		bytes[len] = '\0';
		/* Whole lines only: the next read starts after the last. */
		for (p = (char *)bytes; (nl = strchr(p, '\n')) != NULL;
		    p = nl + 1) {
			*off += nl - p + 1;
			line = json_loadb(p, (size_t)(nl - p), 0, NULL);
			if (json_integer_value(json_object_get(line, "watch")) !=
			    id || (at = json_real_value(json_object_get(line,
			    "t"))) == 0) {
				json_decref(line);
				continue;
			}
			*skipped += json_integer_value(json_object_get(line,
			    "skipped"));
			json_decref(line);
			if (first < 0)
				first = at;
			if (*n == cap) {
				cap = cap ? cap * 2 : 1024;
				*t = realloc(*t, cap * sizeof **t);
			}
			(*t)[(*n)++] = at;
		}
		free(bytes);
		json_decref(res);
		if (first >= 0 && *n > 1 && (*t)[*n - 1] - first >= secs)
			return 0;
	}
}

/* One run of a case: rate and spacing errors of secs of samples. */
static int
fig_watch_run(struct board *f, const struct fig_watch_case *c,
    struct fig_watch_got *g)
{
	json_t		*res;
	json_int_t	 id, off;
	double		*t = NULL, period = 1.0 / c->hz;
	size_t		 n, i;
	long long	 warm_skips = 0;
	int		 rv;

	res = board_call(f, "watch", json_pack("{s:I, s:[s], s:i}", "session",
	    f->session, "expressions", "counter", "hz", c->hz));
	if (res == NULL)
		return -1;
	id = json_integer_value(json_object_get(res, "watch"));
	off = json_integer_value(json_object_get(res, "offset"));
	json_decref(res);
	rv = fig_watch_read(f, id, &off, FIG_WATCH_WARM, &t, &n, &warm_skips);
	if (rv == 0)
		rv = fig_watch_read(f, id, &off, FIG_WATCH_SECONDS, &t, &n,
		    &g->skipped);
	if (rv == 0) {
		stat_add(&g->rate, (double)(n - 1) / (t[n - 1] - t[0]));
		for (i = 1; i < n; i++)
			stat_add(&g->jitter, fabs(t[i] - t[i - 1] - period) *
			    1e6);
	}
	free(t);
	json_decref(board_call(f, "watch", json_pack("{s:I, s:s, s:I}",
	    "session", f->session, "action", "stop", "watch", id)));
	return rv;
}

/* The runs of a case on a board launched for it; its rows. */
static int
fig_watch_case(struct bench *b, const struct fig_watch_case *c)
{
	struct fig_watch_got	 g = { { 0 }, { 0 }, 0 };
	struct board		 f;
	char			 fw[PATH_MAX], note[64];
	json_t			*res;
	int			 i, rv = 0;

	memset(&f, 0, sizeof f);
	if (c->an385 && fig_watch_an385(b, fw, sizeof fw) == NULL) {
		table_na(NO_TARGET, "no board-an385.elf", "watch %d Hz by %s",
		    c->hz, c->via);
		return 0;
	}
	if (board_connect(&f, b) == -1)
		return -1;
	res = board_call(&f, "launch", json_pack("{s:s, s:s, s:[s], s:s}",
	    "kind", "qemu", "machine", c->machine, "argv", c->an385 ? fw :
	    b->board, "cwd", "/"));
	if (res == NULL) {
		board_close(&f);
		return -1;
	}
	f.session = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	for (i = 0; i < b->runs && rv == 0; i++)
		rv = fig_watch_run(&f, c, &g);
	board_close(&f);
	if (rv == 0) {
		table_row("Hz", stat_median(&g.rate), c->hz, TARGET(RATIO_MIN,
		    0.9), "median of runs of 2 s; by the samples' own times",
		    "watch counter %d Hz by %s: rate [vs asked]", c->hz,
		    c->via);
		table_row("us", stat_median(&g.jitter), NA, NO_TARGET, "|dt - "
		    "1/hz|", "watch counter %d Hz by %s: jitter p50", c->hz,
		    c->via);
		snprintf(note, sizeof note, "%lld ticks skipped in all runs",
		    g.skipped);
		table_row("us", stat_pct(&g.jitter, 99), NA, NO_TARGET, note,
		    "watch counter %d Hz by %s: jitter p99", c->hz, c->via);
	}
	stat_free(&g.rate);
	stat_free(&g.jitter);
	return rv;
}

/*
 * Figure: live watch of the running board's counter, by shared RAM at
 * 100 and 1000 Hz and by QMP at 100 Hz: rate achieved and jitter.
 */
int
fig_watch(struct bench *b)
{
	static const struct fig_watch_case cases[] = {
		{ "mps2-an385", 1, 100, "shared RAM" },
		{ "mps2-an385", 1, 1000, "shared RAM" },
		{ "lm3s6965evb", 0, 100, "QMP" },
	};
	size_t	i;
	int	rv = 0;

	for (i = 0; i < sizeof cases / sizeof cases[0] && rv == 0; i++)
		rv = fig_watch_case(b, &cases[i]);
	return rv;
}
