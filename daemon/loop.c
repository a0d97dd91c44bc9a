/* The one daemon context, and what every part of the loop shares. */
#include <time.h>

#include "daemon.h"

/* Every libuv read lands here: a pipe's size. */
static char	 loop_readbuf[1048576];

struct daemon dmn;

/* The wall clock, in seconds since the epoch. */
double
loop_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Bring the loop's time (uv_now) up to now, for a timer started next: libuv
 * keeps the time the turn began, and a turn on a loaded machine can last
 * many ms, by which a deadline or a hold would run out early.
 */
void
loop_refresh(void)
{
	uv_update_time(dmn.loop);
}

/*
 * Milliseconds from now to at (a uv_hrtime() time), rounded up, 0 once it
 * is past: what a deadline or a hold has left, to the ns and not to the
 * turn's start, so that one set 30000 says 30000 and one shown late in a
 * long turn does not say it has the turn more.
 */
uint64_t
loop_left_ms(uint64_t at)
{
	uint64_t now = uv_hrtime();

	return at > now ? (at - now + 999999) / 1000000 : 0;
}

/*
 * Give libuv the loop's one read buffer: every read callback consumes (or
 * copies) what it got before returning, so one buffer serves them all.
 */
void
loop_alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	(void)h;
	(void)hint;
	buf->base = loop_readbuf;
	buf->len = sizeof loop_readbuf;
}

/*
 * Milliseconds on the monotonic clock, for what waits, bounded, before the
 * loop runs (a takeover, an adoption), where uv_now() does not move.
 */
long long
loop_mono_ms(void)
{
	return (long long)(uv_hrtime() / 1000000);
}
