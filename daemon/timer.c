/* One-shot timers on the loop that free themselves once closed. */
#include <stdlib.h>

#include "daemon.h"

struct timer {
	uv_timer_t	 h;
	timer_cb	 cb;
	void		*arg;
};

/* The timer ran out. */
static void
timer_fired(uv_timer_t *h)
{
	struct timer *t = h->data;

	t->cb(t->arg);
}

/* Make a stopped timer that calls cb(arg) when it runs out. */
struct timer *
timer_new(timer_cb cb, void *arg)
{
	struct timer *t = xcalloc(1, sizeof *t);

	uv_timer_init(dmn.loop, &t->h);
	t->h.data = t;
	t->cb = cb;
	t->arg = arg;
	return t;
}

/* Run out after ms milliseconds (again, if it was running). */
void
timer_start(struct timer *t, uint64_t ms)
{
	uv_timer_start(&t->h, timer_fired, ms, 0);
}

/* The timer alone does not keep the loop running (as at exit). */
void
timer_weak(struct timer *t)
{
	uv_unref((uv_handle_t *)&t->h);
}

/* Do not run out (a timer not made yet never would). */
void
timer_stop(struct timer *t)
{
	if (t == NULL)
		return;
	uv_timer_stop(&t->h);
}

/* Free a closed timer's memory. */
static void
timer_closed(uv_handle_t *h)
{
	free(h->data);
}

/* Stop and free the timer; it never calls back after this. */
void
timer_free(struct timer *t)
{
	if (t == NULL)
		return;
	uv_close((uv_handle_t *)&t->h, timer_closed);
}
