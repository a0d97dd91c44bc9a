/* The daemon context and its orderly exit. */
#include <signal.h>
#include <time.h>

#include "daemon.h"

struct daemon dmn;

/* The wall clock, in seconds since the epoch. */
double
daemon_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Stop every session; the daemon exits once all have ended. */
void
daemon_shutdown(long long timeout_ms)
{
	struct session *s;

	if (!dmn.shutting_down)
		log_info("shutting down: stopping %lu sessions",
		    session_live_count());
	dmn.shutting_down = true;
	TAILQ_FOREACH(s, &dmn.sessions, entry)
		session_stop(s, timeout_ms);
	daemon_check_shutdown();
}

/* When shutting down and nothing is left running, close everything. */
void
daemon_check_shutdown(void)
{
	if (!dmn.shutting_down || dmn.finished || session_live_count() > 0)
		return;
	dmn.finished = true;
	pending_poke();
	server_close();
	conn_close_all();
	uv_close((uv_handle_t *)&dmn.sigterm, NULL);
	uv_close((uv_handle_t *)&dmn.sigint, NULL);
	log_info("all sessions ended; exiting");
}

/* SIGTERM or SIGINT: shut down as the shutdown method would. */
static void
daemon_signal_cb(uv_signal_t *h, int sig)
{
	(void)h;
	log_info("signal %d", sig);
	daemon_shutdown(-1);
}

/* Turn SIGTERM and SIGINT into an orderly shutdown. */
void
daemon_watch_signals(void)
{
	uv_signal_init(dmn.loop, &dmn.sigterm);
	uv_signal_start(&dmn.sigterm, daemon_signal_cb, SIGTERM);
	uv_signal_init(dmn.loop, &dmn.sigint);
	uv_signal_start(&dmn.sigint, daemon_signal_cb, SIGINT);
}

/*
 * Give libuv the loop's one read buffer: every read callback consumes (or
 * copies) what it got before returning, so one buffer serves them all.
 */
void
daemon_alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	(void)h;
	(void)hint;
	buf->base = dmn.readbuf;
	buf->len = sizeof dmn.readbuf;
}

/* A loop turn begins: count it, and forget ended sessions past the limit. */
static void
daemon_turn_cb(uv_prepare_t *h)
{
	(void)h;
	dmn.gen++;
	if (dmn.nended > dmn.keep_ended)
		session_prune();
}

/* Count loop turns, so ended sessions are freed only once their handles are. */
void
daemon_watch_turns(void)
{
	uv_prepare_init(dmn.loop, &dmn.turn);
	uv_prepare_start(&dmn.turn, daemon_turn_cb);
	/* Counting turns must not keep the loop alive at exit. */
	uv_unref((uv_handle_t *)&dmn.turn);
}

