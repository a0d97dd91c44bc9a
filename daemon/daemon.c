/*
 * The daemon's life: the sinks by which features hear of every session
 * (its teardown among them), and its orderly exit, a sink on its end.
 */
#include <signal.h>

#include "daemon.h"
#include "cursor-file.h"
#include "attach.h"
#include "sdnotify.h"
#include "adopt.h"
#include "cgroup.h"
#include "conn.h"
#include "expect.h"
#include "listener.h"
#include "replay.h"
#include "rtt.h"
#include "request.h"
#include "semihost.h"

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
	(void)arg;
	conn_abandon_all();
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

/*
 * Exit now if no session is left, nor a keeper that may yet hand one over
 * (the adoption stops what it takes while shutting down).
 */
static void
daemon_shutdown_check(void)
{
	if (daemon_finish_timer != NULL && session_live_count() == 0 &&
	    dmn.adoption == NULL)
		timer_start(daemon_finish_timer, 0);
}

/* A session changed state: when shutting down and none is left, finish. */
static void
daemon_session_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)s;
	(void)ev;
	daemon_shutdown_check();
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

/*
 * The sessions a dead daemon left are in (adopt.c): sweep the cgroups no
 * session owns, finish the bundles it left half written, run the requests
 * that waited, and exit if a shutdown came meanwhile.
 */
void
daemon_ready(void)
{
	cgroup_sweep_left();
	bundle_recover();
	request_unpark_all();
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

/*
 * The features built on the session hear of it through these sinks, so
 * session.c names none of them. They fire in this order, before any
 * subscriber's, since they are registered at start. The teardown:
 * - SE_STOP: a suspended session is continued, or its debugger could not
 *   quit when the stop's first step asks it to.
 * - SE_ENDING: the program's own terminal is drained while the log is
 *   still open, so its last words reach the transcript.
 * - SE_ENDED: the verdict's watch, whose timers ask whether a hold keeps
 *   the session, goes before the hold, so none sees a hold half gone.
 * - SE_FREED: the launch, the status row and the bundles' records are
 *   plain memory; their order is the one session_free had. A
 *   recording's files go last, with its timers.
 * SE_FAULT_KEPT comes before the fault is told (SE_FAULT): the verdict
 * it makes is given first, then it is noted in the console, so that
 * whoever the note or the news wakes finds the verdict already given.
 * SE_RECORD: the hold, RTT and the deadline each add what a new daemon
 * needs of them to the session's record, which session-record.c writes.
 */
static const struct {
	unsigned	 kind;
	sink_cb		 cb;
} daemon_sinks_table[] = {
	{ SE_STOP, attach_stop },
	{ SE_ENDING, gdb_tty_ended },
	{ SE_ENDING, semihost_ended },
	{ SE_ENDED, verdict_ended },
	{ SE_ENDED, hold_ended },
	{ SE_ENDED, session_record_ended },
	{ SE_ENDED, cursor_file_ended },
	{ SE_FREED, launch_freed },
	{ SE_FREED, status_page_freed },
	{ SE_FREED, status_table_freed },
	{ SE_FREED, bundle_freed },
	{ SE_FREED, cursor_file_freed },
	{ SE_FREED, replay_freed },
	/* Beyond the teardown; SE_FAULT_KEPT's two in the order above. */
	{ SE_READY, verdict_arm },
	{ SE_READY, semihost_ready },
	{ SE_FAULT_KEPT, verdict_fault },
	{ SE_FAULT_KEPT, status_fault_note },
	{ SE_FAULT_CLEARED, verdict_end },
	{ SE_SUSPENDED, attach_stopped },
	{ SE_RECORD, hold_record },
	{ SE_RECORD, rtt_record },
	{ SE_RECORD, verdict_record },
};

#define DAEMON_SINKS \
	(sizeof daemon_sinks_table / sizeof daemon_sinks_table[0])

/* Register the features' sinks, once, before any session or subscriber. */
void
daemon_sinks(void)
{
	size_t i;

	for (i = 0; i < DAEMON_SINKS; i++)
		session_sink_add(NULL, daemon_sinks_table[i].kind,
		    daemon_sinks_table[i].cb, NULL);
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
