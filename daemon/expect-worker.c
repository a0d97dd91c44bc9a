/*
 * The matcher's thread: heavy expects (one whose pattern hit a limit or
 * took long on the loop's thread) are matched here, a slice each in turn,
 * so that no call into PCRE2, however long, holds up the loop. The loop
 * gives an expect (whose window it then leaves alone) and hears back
 * through an async handle; the thread touches nothing but the expects it
 * is given, their patterns' compiled code, and its own matcher. It is
 * made on first use and never joined: at exit it may be inside a call.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "expect-state.h"

TAILQ_HEAD(expect_worker_queue, expect);

static uv_thread_t			 expect_worker_thread;
static uv_mutex_t			 expect_worker_lock;
static uv_cond_t			 expect_worker_cond;
static uv_async_t			*expect_worker_async;
static struct expect_worker_queue	 expect_worker_todo =
    TAILQ_HEAD_INITIALIZER(expect_worker_todo);
static struct expect_worker_queue	 expect_worker_done =
    TAILQ_HEAD_INITIALIZER(expect_worker_done);
/* Expects given and not yet back (the loop's count). */
static unsigned				 expect_worker_out;
/* The daemon is exiting: the thread, perhaps inside a call, holds up nothing. */
static bool				 expect_worker_stopped;

/* The thread: take an expect, match a slice of it, give it back. */
static void
expect_worker_main(void *arg)
{
	struct pattern_matcher	*m = pattern_matcher_new();
	struct expect		*e;

	(void)arg;
	for (;;) {
		uv_mutex_lock(&expect_worker_lock);
		while ((e = TAILQ_FIRST(&expect_worker_todo)) == NULL)
			uv_cond_wait(&expect_worker_cond, &expect_worker_lock);
		TAILQ_REMOVE(&expect_worker_todo, e, wentry);
		e->queued = false;
		uv_mutex_unlock(&expect_worker_lock);
		e->wresult = expect_match_scan(e, m, false, uv_hrtime() +
		    EXPECT_SLICE_NS);
		uv_mutex_lock(&expect_worker_lock);
		TAILQ_INSERT_TAIL(&expect_worker_done, e, wentry);
		uv_mutex_unlock(&expect_worker_lock);
		uv_async_send(expect_worker_async);
	}
}

/* e is the loop's again; while any is out, the loop waits for it. */
static void
expect_worker_returned(struct expect *e)
{
	e->away = false;
	if (--expect_worker_out == 0 && !expect_worker_stopped)
		uv_unref((uv_handle_t *)expect_worker_async);
}

/* Expects came back: each goes on on the loop, or is freed if it died away. */
static void
expect_worker_back(uv_async_t *h)
{
	struct expect_worker_queue	 back = TAILQ_HEAD_INITIALIZER(back);
	struct expect			*e;

	(void)h;
	uv_mutex_lock(&expect_worker_lock);
	TAILQ_CONCAT(&back, &expect_worker_done, wentry);
	uv_mutex_unlock(&expect_worker_lock);
	while ((e = TAILQ_FIRST(&back)) != NULL) {
		TAILQ_REMOVE(&back, e, wentry);
		expect_worker_returned(e);
		if (e->dead)
			expect_destroy(e);
		else
			expect_back(e);
	}
}

/* Make the thread, its queues' lock and the loop's async handle. */
static void
expect_worker_start(void)
{
	expect_worker_async = xcalloc(1, sizeof *expect_worker_async);
	if (uv_async_init(dmn.loop, expect_worker_async,
	    expect_worker_back) != 0 || uv_mutex_init(&expect_worker_lock) != 0 ||
	    uv_cond_init(&expect_worker_cond) != 0 ||
	    uv_thread_create(&expect_worker_thread, expect_worker_main,
	    NULL) != 0)
		log_fatal("cannot start the matcher's thread");
	uv_unref((uv_handle_t *)expect_worker_async);
}

/* Give e to the matcher's thread for a slice; it comes back by expect_back. */
void
expect_worker_give(struct expect *e)
{
	if (e->away)
		log_fatal("an expect given to the matcher twice");
	if (expect_worker_async == NULL)
		expect_worker_start();
	e->away = true;
	if (expect_worker_out++ == 0 && !expect_worker_stopped)
		uv_ref((uv_handle_t *)expect_worker_async);
	uv_mutex_lock(&expect_worker_lock);
	e->queued = true;
	TAILQ_INSERT_TAIL(&expect_worker_todo, e, wentry);
	uv_cond_signal(&expect_worker_cond);
	uv_mutex_unlock(&expect_worker_lock);
}

/*
 * Take e back if the thread has not begun on it (its owner let go of it):
 * true if it is the loop's again, false if it is being matched or is on
 * its way back.
 */
bool
expect_worker_take(struct expect *e)
{
	bool taken;

	uv_mutex_lock(&expect_worker_lock);
	if ((taken = e->queued)) {
		TAILQ_REMOVE(&expect_worker_todo, e, wentry);
		e->queued = false;
	}
	uv_mutex_unlock(&expect_worker_lock);
	if (taken)
		expect_worker_returned(e);
	return taken;
}

/* The daemon is exiting: it need not wait for the thread's last call. */
void
expect_worker_stop(void)
{
	expect_worker_stopped = true;
	if (expect_worker_async != NULL)
		uv_unref((uv_handle_t *)expect_worker_async);
}
