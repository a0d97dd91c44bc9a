/* Samples of one figure and their medians and percentiles; the clock. */
#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

/* Milliseconds on the monotonic clock, for intervals only. */
double
stat_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Append one sample; a benchmark that cannot allocate has nothing to say. */
void
stat_add(struct samples *s, double v)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		if ((s->v = realloc(s->v, s->cap * sizeof *s->v)) == NULL)
			abort();
	}
	s->v[s->n++] = v;
}

/* Order two samples, for qsort. */
static int
stat_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The p-th percentile (0..100), nearest rank; NA without samples. */
double
stat_pct(struct samples *s, double p)
{
	size_t i;

	if (s->n == 0)
		return NA;
	qsort(s->v, s->n, sizeof *s->v, stat_cmp);
	i = (size_t)(p / 100.0 * s->n + 0.999999);
	if (i > 0)
		i--;
	return s->v[i < s->n ? i : s->n - 1];
}

/* The median: of an even count, the mean of the two middle samples. */
double
stat_median(struct samples *s)
{
	if (s->n == 0)
		return NA;
	qsort(s->v, s->n, sizeof *s->v, stat_cmp);
	if (s->n % 2 == 1)
		return s->v[s->n / 2];
	return (s->v[s->n / 2 - 1] + s->v[s->n / 2]) / 2;
}

/* Free the samples. */
void
stat_free(struct samples *s)
{
	free(s->v);
	*s = (struct samples){ 0 };
}

/* Sleep ms milliseconds, whatever signals come. */
void
stat_sleep_ms(double ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - ts.tv_sec * 1000.0) * 1e6);
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/*
 * Interleaved batches: runs times, each of nside sides in turn, the first
 * side rotating, n rounds of round(arg, side) a batch, whose p50 and p99
 * go to s[side][0] and s[side][1]; a warm-up of warm rounds a side first,
 * not counted. -1 as soon as a round gives no figure (NA).
 */
int
stat_batches(int runs, int nside, int n, int warm,
    double (*round)(void *, int), void *arg, struct samples (*s)[2])
{
	struct samples	one = { 0 };
	double		v;
	int		run, k, i, side;

	for (i = 0; i < warm * nside; i++)
		if (!(round(arg, i % nside) >= 0))
			return -1;
	for (run = 0; run < runs; run++)
		for (k = 0; k < nside; k++) {
			side = (run + k) % nside;
			for (i = 0; i < n; i++) {
				if (!((v = round(arg, side)) >= 0)) {
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
