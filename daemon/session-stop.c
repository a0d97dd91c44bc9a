/*
 * A session's ordered teardown, against one deadline: the debugger first
 * (its backend's quit, given half the time, then SIGTERM), then the
 * processes after it (a short wait for them to follow the quit, then
 * SIGTERM), and SIGKILL from the keepers at the deadline for whatever is
 * left. The state table decides when; this file knows how, and tells the
 * stop's clients when it escalates (SE_STOPPING).
 */
#include "daemon.h"
#include "session.h"

/* The longest a helper gets to follow the debugger's quit before SIGTERM. */
#define SESSION_STOP_HELPER_GRACE 500

/* Milliseconds left before the deadline; the stop's whole timeout before one is set. */
static long
session_stop_left(const struct session *s)
{
	uint64_t now = uv_now(dmn.loop);

	if (!s->stop_begun)
		return s->stop_ms >= 0 ? s->stop_ms : s->l.stop_timeout;
	return s->stop_deadline > now ? (long)(s->stop_deadline - now) : 0;
}

/* SIGTERM to the processes after the main one, SIGKILL at the deadline. */
static void
session_stop_helpers_now(struct session *s)
{
	long		 ms = session_stop_left(s);
	struct proc	*pr;
	size_t		 i;

	for (i = 1; i < s->nprocs; i++) {
		pr = s->procs[i].proc;
		if (pr != NULL && proc_alive(pr))
			proc_stop(pr, ms);
	}
}

/* SIGTERM to the main process now, SIGKILL at the deadline. */
static void
session_stop_main_now(struct session *s)
{
	struct proc *main = s->procs[0].proc;

	s->quitting = false;
	if (main != NULL && proc_alive(main)) {
		proc_stop(main, session_stop_left(s));
		return;
	}
	session_stop_helpers_now(s);
}

/*
 * Tell the stop's waiting clients that it escalates to step ("term" after
 * a quit that took too long, "kill" at the deadline), due at uv_now() at:
 * how long after the stop began, as planned (the timer may run late).
 */
static void
session_stop_notice(struct session *s, const char *step, uint64_t at)
{
	struct session_event	ev = { .kind = SE_STOPPING };

	ev.json = json_pack("{s:s, s:I}", "step", step, "after_ms",
	    (json_int_t)(at - s->stop_started));
	session_fire(s, &ev);
	json_decref(ev.json);
}

/* Whether a process of the session is still there for its keeper to kill. */
static bool
session_stop_live(const struct session *s)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].proc != NULL && proc_alive(s->procs[i].proc))
			return true;
	return false;
}

/* The deadline: the keepers send SIGKILL now; say so if one has a process left. */
static void
session_stop_kill_cb(void *arg)
{
	struct session *s = arg;

	if (session_ended(s) || !session_stop_live(s))
		return;
	log_info("session %lu: the stop's deadline: SIGKILL", s->id);
	s->stop_kill_told = true;
	session_stop_notice(s, "kill", s->stop_deadline);
}

/*
 * A keeper's SIGKILL at the deadline ended a process of s before the
 * daemon's own timer for that deadline ran (both run out at once): the
 * stop's clients hear of the escalation all the same, and before its end.
 */
void
session_stop_killed(struct session *s)
{
	if (!s->stop_begun || s->stop_kill_told)
		return;
	timer_stop(s->stop_kill_timer);
	log_info("session %lu: the stop's deadline: SIGKILL", s->id);
	s->stop_kill_told = true;
	session_stop_notice(s, "kill", s->stop_deadline);
}

/* The quit's time, or the helpers' grace, is up: go on to SIGTERM. */
static void
session_stop_timer_cb(void *arg)
{
	struct session	*s = arg;
	struct proc	*main = s->procs[0].proc;
	uint64_t	 at = s->stop_timer_at;

	s->stop_timer_at = 0;
	if (main != NULL && proc_alive(main)) {
		log_info("session %lu: the quit took too long: SIGTERM", s->id);
		session_stop_notice(s, "term", at);
		session_stop_main_now(s);
		return;
	}
	session_stop_helpers_now(s);
}

/* Arm the stop's timer to run out after ms, unless it already runs out sooner. */
static void
session_stop_after(struct session *s, long ms)
{
	uint64_t at = uv_now(dmn.loop) + (uint64_t)ms;

	if (s->stop_timer == NULL)
		s->stop_timer = timer_new(session_stop_timer_cb, s);
	else if (s->stop_timer_at != 0 && s->stop_timer_at <= at)
		return;
	s->stop_timer_at = at;
	timer_start(s->stop_timer, (uint64_t)ms);
}

/* Fix the deadline from this stop's timeout; a later stop may only bring it nearer. */
static void
session_stop_deadline(struct session *s)
{
	long		ms = s->stop_ms >= 0 ? s->stop_ms : s->l.stop_timeout;
	uint64_t	at = uv_now(dmn.loop) + (uint64_t)ms;

	if (!s->stop_begun)
		s->stop_started = uv_now(dmn.loop);
	if (!s->stop_begun || at < s->stop_deadline) {
		s->stop_deadline = at;
		if (s->stop_kill_timer == NULL)
			s->stop_kill_timer = timer_new(session_stop_kill_cb, s);
		timer_start(s->stop_kill_timer, (uint64_t)ms);
	}
	s->stop_begun = true;
}

/* Mark every process of the session as asked to quit, for how it ended. */
static void
session_stop_mark_quit(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].proc != NULL)
			proc_mark_quit(s->procs[i].proc);
}

/*
 * Stop the session: gracefully (the backend's quit first) if asked and
 * the backend can, else SIGTERM now; a second stop brings the deadline
 * nearer and the SIGTERM with it.
 */
void
session_stop_begin(struct session *s, bool graceful)
{
	bool	first = !s->stop_begun;
	long	left;

	session_stop_deadline(s);
	left = session_stop_left(s);
	if (s->quitting) {
		if (left == 0)
			session_stop_main_now(s);
		else
			session_stop_after(s, left / 2);
		return;
	}
	if (first && graceful && left > 0 && s->backend->quit != NULL &&
	    s->backend->quit(s) == 0) {
		s->quitting = true;
		session_stop_mark_quit(s);
		session_stop_after(s, left / 2);
		return;
	}
	session_stop_main_now(s);
}

/*
 * The main process is gone: stop the rest. After a quit they get a short
 * wait first, since a server usually ends once its debugger kills or
 * leaves the target.
 */
void
session_stop_helpers(struct session *s)
{
	long	left = session_stop_left(s);
	long	grace = left / 2 < SESSION_STOP_HELPER_GRACE ? left / 2 :
		    SESSION_STOP_HELPER_GRACE;

	/* Its console's end may have ended the session already. */
	if (session_ended(s))
		return;
	if (s->stop_timer != NULL)
		timer_stop(s->stop_timer);
	s->stop_timer_at = 0;
	if (s->quitting && grace > 0) {
		session_stop_after(s, grace);
		return;
	}
	session_stop_helpers_now(s);
}

/* The session has ended: the stop's timer goes. */
void
session_stop_end(struct session *s)
{
	timer_free(s->stop_timer);
	s->stop_timer = NULL;
	timer_free(s->stop_kill_timer);
	s->stop_kill_timer = NULL;
}
