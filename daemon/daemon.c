/* The daemon context and its orderly exit, a sink on every session's end. */
#include <signal.h>

#include "daemon.h"

/* The signals that stop it, and the two steps of its exit. */
static uv_signal_t	 daemon_sigterm;
static uv_signal_t	 daemon_sigint;
/* Closes everything at exit, then closes who will not flush. */
static struct timer	*daemon_finish_timer;
static struct timer	*daemon_last_call_timer;

/* How long connections may flush their last replies at exit. */
#define DAEMON_FLUSH_MS 1000

/* Close the connections still flushing at exit: their clients read nothing. */
static void
daemon_last_call(void *arg)
{
	struct conn *c, *next;

	(void)arg;
	TAILQ_FOREACH_SAFE(c, &dmn.conns, entry, next) {
		log_warn("closing a client that did not read its last replies");
		conn_close(c);
	}
	timer_free(daemon_last_call_timer);
	daemon_last_call_timer = NULL;
}

/*
 * Nothing is left running: close the listeners and, after their queued
 * replies, the connections. It runs on a later loop turn, so every reply
 * made while the last session ended is queued before.
 */
static void
daemon_finish(void *arg)
{
	(void)arg;
	log_info("all sessions ended; exiting");
	expect_worker_stop();
	listener_close_all();
	conn_close_all();
	/* A client that reads nothing would hold the exit: give it a second. */
	daemon_last_call_timer = timer_new(daemon_last_call, NULL);
	/* Only a connection still open keeps the daemon waiting for it. */
	timer_weak(daemon_last_call_timer);
	timer_start(daemon_last_call_timer, DAEMON_FLUSH_MS);
	uv_close((uv_handle_t *)&daemon_sigterm, NULL);
	uv_close((uv_handle_t *)&daemon_sigint, NULL);
	timer_free(daemon_finish_timer);
	daemon_finish_timer = NULL;
}

/* A session changed state: when shutting down and none is left, finish. */
static void
daemon_session_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)s;
	(void)ev;
	if (daemon_finish_timer != NULL && session_live_count() == 0)
		timer_start(daemon_finish_timer, 0);
}

/* From now on the daemon is shutting down: it exits once no session is left. */
static void
daemon_shutdown_begin(void)
{
	if (dmn.shutting_down)
		return;
	log_info("shutting down: stopping %lu sessions", session_live_count());
	dmn.shutting_down = true;
	sdnotify_stopping();
	daemon_finish_timer = timer_new(daemon_finish, NULL);
	session_sink_add(NULL, SE_STATE, daemon_session_state, NULL);
}

/* Exit now if no session is left. */
static void
daemon_shutdown_check(void)
{
	if (daemon_finish_timer != NULL && session_live_count() == 0)
		timer_start(daemon_finish_timer, 0);
}

/* Stop every session; the daemon exits once all have ended. */
void
daemon_shutdown(long long timeout_ms)
{
	struct session *s, *next;

	daemon_shutdown_begin();
	TAILQ_FOREACH_SAFE(s, &dmn.sessions, entry, next)
		session_stop(s, timeout_ms);
	daemon_shutdown_check();
}

/* A terminated daemon's session has its automatic bundle (or none): stop it. */
static void
daemon_bundled(struct session *s, void *arg)
{
	(void)arg;
	session_stop(s, -1);
}

/*
 * SIGTERM or SIGINT: shut down as the shutdown method would, but first
 * write the automatic bundle of each running session launched with
 * artifacts, since a CI job cancelled so takes its runner's evidence.
 */
static void
daemon_signal_cb(uv_signal_t *h, int sig)
{
	struct session *s, *next;

	(void)h;
	log_info("signal %d", sig);
	daemon_shutdown_begin();
	TAILQ_FOREACH_SAFE(s, &dmn.sessions, entry, next) {
		if (s->state == S_RUNNING)
			bundle_auto(s, "signal", daemon_bundled, NULL);
		else
			session_stop(s, -1);
	}
	daemon_shutdown_check();
}

/* Turn SIGTERM and SIGINT into an orderly shutdown. */
void
daemon_watch_signals(void)
{
	uv_signal_init(dmn.loop, &daemon_sigterm);
	uv_signal_start(&daemon_sigterm, daemon_signal_cb, SIGTERM);
	uv_signal_init(dmn.loop, &daemon_sigint);
	uv_signal_start(&daemon_sigint, daemon_signal_cb, SIGINT);
}
