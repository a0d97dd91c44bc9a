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
 * The loop's time (uv_now) brought up to now: libuv keeps the time the
 * turn began, and a turn on a loaded machine can last many ms, so a
 * deadline or a hold set from it late in a turn ran out that much early,
 * and one shown said it had that much more left. Timers started after
 * this in the same turn count from now too, as they should.
 */
uint64_t
loop_ms(void)
{
	uv_update_time(dmn.loop);
	return uv_now(dmn.loop);
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
