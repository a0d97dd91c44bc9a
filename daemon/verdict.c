/*
 * Verdicts: why a session is being ended, recorded by the daemon itself
 * whether or not a client is connected. A deadline that runs out, or a
 * silence (no byte on any stream for a while), has the verdict gathered
 * (verdict-gather.c); once it is whole it is the session's, told, and the
 * session is stopped, or held: kept running with its target halted.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "adopt.h"
#include "request.h"
#include "verdict.h"

/* Verdicts a session keeps in its history (status "verdicts"). */
#define VERDICTS_KEPT		8

/* The verdict is out and the session is not held: it is stopped. */
static void
verdict_end_cb(void *arg)
{
	struct verdict_watch *w = arg;

	if (w->s->state != S_RUNNING)
		return;
	if (!hold_active(w->s)) {
		session_stop(w->s, -1);
		return;
	}
	/* Held by a client since: kept, its verdict ends as a held one's. */
	w->stopping = false;
}

/*
 * Hold s for the daemon's default time, as its on_deadline asks; false
 * when the holds' limits refuse it, and the session is stopped instead.
 */
static bool
verdict_hold(struct session *s)
{
	struct rpc_error err;

	if (hold_set(s, hold_default_ttl() * 1000, json_pack("{s:s}", "verdict",
	    json_string_value(json_object_get(s->verdict, "kind"))), &err) ==
	    0)
		return true;
	log_warn("session %lu: not held: %s", s->id, err.message);
	session_note(s, err.message);
	return false;
}

/* v (taken) is the session's verdict now, and the last of its history. */
static void
verdict_set(struct session *s, json_t *v)
{
	json_decref(s->verdict);
	s->verdict = v;
	if (s->verdicts == NULL)
		s->verdicts = json_array();
	if (json_array_size(s->verdicts) == VERDICTS_KEPT)
		json_array_remove(s->verdicts, 0);
	json_array_append(s->verdicts, v);
}

/*
 * The automatic bundle of a held session's verdict is written (or none
 * is): what waited for the session ends now, its evidence on disk before
 * anyone can act on the verdict (a reset would change what it shows).
 */
static void
verdict_held_bundled(struct session *s, void *arg)
{
	(void)arg;
	if (s->vw != NULL)
		s->vw->bundled = true;
	if (s->verdict != NULL)
		pending_verdict(s, true);
}

/*
 * The automatic bundle is written (or none is): what waited for the
 * session ends, and the session is stopped next turn.
 */
static void
verdict_bundled(struct session *s, void *arg)
{
	struct verdict_watch *w = s->vw;

	(void)arg;
	if (w != NULL)
		w->bundled = true;
	if (s->verdict != NULL)
		pending_verdict(s, false);
	if (w == NULL)
		return;
	if (w->end == NULL)
		w->end = timer_new(verdict_end_cb, w);
	timer_start(w->end, 0);
}

/*
 * The verdict is whole: the session's, told, its automatic bundle
 * written, then the session goes or is held.
 */
void
verdict_publish(struct verdict_watch *w)
{
	struct session		*s = w->s;
	struct session_event	 ev = { .kind = SE_VERDICT };
	json_t			*v = w->pending;
	char			*text;
	bool			 held;

	w->pending = NULL;
	w->bundled = false;
	timer_stop(w->gather);
	verdict_set(s, v);
	ev.json = v;
	held = strcmp(s->l.on_deadline, "hold") == 0 && verdict_hold(s);
	w->stopping = !held;
	xasprintf(&text, "%s: the session %s", json_string_value(
	    json_object_get(v, "kind")), held ? "is held, its target halted" :
	    "is stopped");
	session_note(s, text);
	free(text);
	session_fire(s, &ev);
	/*
	 * What waits for the session to act would wait in vain: it ends once
	 * the bundle is written. Not inside the gathering's answer: the stop
	 * runs on its own turn.
	 */
	bundle_auto(s, json_string_value(json_object_get(v, "kind")),
	    held ? verdict_held_bundled : verdict_bundled, NULL);
}

/* A deadline or silence ran out: gather the verdict of kind. */
static void
verdict_fire(struct verdict_watch *w, const char *kind)
{
	struct session	*s = w->s;

	if (s->state != S_RUNNING || w->pending != NULL || w->given)
		return;
	w->given = true;
	timer_stop(w->deadline);
	timer_stop(w->silence);
	w->deadline_at = 0;
	log_info("session %lu: %s: gathering the verdict", s->id, kind);
	verdict_gather(w, kind);
}

/* The deadline ran out. */
static void
verdict_deadline_cb(void *arg)
{
	verdict_fire(arg, "deadline");
}

/* The silence's time is up, unless a byte came meanwhile: look again then. */
static void
verdict_silence_cb(void *arg)
{
	struct verdict_watch	*w = arg;
	uint64_t		 last = w->last_console > w->last_target ?
				    w->last_console : w->last_target;
	uint64_t		 now = uv_now(dmn.loop);

	if (w->last_semihost > last)
		last = w->last_semihost;
	if (last == 0)
		last = w->armed_at;
	if (now - last < (uint64_t)w->s->l.silence_timeout) {
		timer_start(w->silence, last + w->s->l.silence_timeout - now);
		return;
	}
	verdict_fire(w, "silent");
}

/* A stream's bytes came: it is not quiet. */
static void
verdict_sink_cb(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct verdict_watch *w = k->arg;

	(void)s;
	if (ev->kind == SE_OUTPUT)
		w->last_console = uv_now(dmn.loop);
	else if (ev->kind == SE_STREAM && strcmp(ev->stream, "semihost") == 0)
		w->last_semihost = uv_now(dmn.loop);
	else if (ev->kind == SE_STREAM)
		return;
	else
		w->last_target = uv_now(dmn.loop);
}

/* The session's watch, made the first time it is wanted. */
static struct verdict_watch *
verdict_watch(struct session *s)
{
	struct verdict_watch *w = s->vw;

	if (w != NULL)
		return w;
	w = s->vw = xcalloc(1, sizeof *w);
	w->s = s;
	w->armed_at = uv_now(dmn.loop);
	w->sink = session_sink_add(s, SE_OUTPUT | SE_TARGET | SE_STREAM,
	    verdict_sink_cb, w);
	w->deadline = timer_new(verdict_deadline_cb, w);
	return w;
}

/* Run the deadline out ms from now, or not at all (0). */
static void
verdict_deadline_start(struct verdict_watch *w, long ms)
{
	if (ms == 0) {
		timer_stop(w->deadline);
		w->deadline_at = 0;
	} else {
		loop_refresh();
		w->deadline_at = uv_hrtime() + (uint64_t)ms * 1000000;
		timer_start(w->deadline, (uint64_t)ms);
	}
	session_record_note(w->s);
}

/*
 * The uv_now() of unix time at, as far back as the monotonic clock goes;
 * now for a time to come.
 */
static uint64_t
verdict_uv_at(double at)
{
	uint64_t	now = uv_now(dmn.loop);
	double		ago = (loop_now() - at) * 1000;

	if (ago <= 0)
		return now;
	return ago < (double)now ? now - (uint64_t)ago : 1;
}

/*
 * The uv_now() of o's last byte, as its log's modification time tells
 * (each piece is written to the log as it is read, so the time is the
 * last piece's), or 0 without a log, or one never written to.
 */
static uint64_t
verdict_last_logged(const struct output *o)
{
	struct stat st;

	if (output_path(o) == NULL || stat(output_path(o), &st) != 0 ||
	    st.st_size == 0)
		return 0;
	return verdict_uv_at((double)st.st_mtim.tv_sec +
	    st.st_mtim.tv_nsec / 1e9);
}

/*
 * An adopted session's silence goes on from its streams' last bytes (the
 * console's, the target's, the semihosting console's), as the old daemon
 * logged them, and from the session's start if it never printed: a
 * restart of the daemon does not make a silent session younger. What
 * came while no daemon read is read at the adoption, and counts from
 * then. How long the silence has left, in ms.
 */
static uint64_t
verdict_silence_left(struct verdict_watch *w)
{
	struct session	*s = w->s;
	uint64_t	 now = uv_now(dmn.loop), last;

	if (s->procs[0].proc == NULL || !proc_adopted(s->procs[0].proc))
		return (uint64_t)s->l.silence_timeout;
	w->armed_at = verdict_uv_at(s->started_at);
	if (w->last_console == 0)
		w->last_console = verdict_last_logged(&s->output);
	if (w->last_target == 0 && s->target_out != NULL)
		w->last_target = verdict_last_logged(s->target_out);
	if (w->last_semihost == 0 && session_stream(s, "semihost") != NULL)
		w->last_semihost = verdict_last_logged(s->semihost_out);
	last = w->last_console > w->last_target ? w->last_console :
	    w->last_target;
	if (w->last_semihost > last)
		last = w->last_semihost;
	if (last == 0)
		last = w->armed_at;
	if (now - last >= (uint64_t)s->l.silence_timeout)
		return 1;
	return last + (uint64_t)s->l.silence_timeout - now;
}

/* The session is about to run (SE_READY): its deadline and silence start. */
void
verdict_arm(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct verdict_watch *w;

	(void)k;
	(void)ev;
	if (s->l.deadline == 0 && s->l.silence_timeout == 0)
		return;
	w = verdict_watch(s);
	verdict_deadline_start(w, s->l.deadline);
	if (s->l.silence_timeout > 0) {
		w->silence = timer_new(verdict_silence_cb, w);
		timer_start(w->silence, verdict_silence_left(w));
	}
}

/*
 * Set the deadline ms from now, or clear it (0); -1 once the session has
 * a verdict of its own or is no longer running.
 */
int
verdict_deadline_set(struct session *s, long ms)
{
	if (s->state != S_RUNNING || (s->vw != NULL && s->vw->given))
		return -1;
	verdict_deadline_start(verdict_watch(s), ms);
	return 0;
}

/* The member "deadline": when it runs out and in how long, while it is set. */
json_t *
verdict_deadline_json(const struct session *s)
{
	const struct verdict_watch	*w = s->vw;
	json_int_t			 left;

	if (w == NULL || w->deadline_at == 0)
		return NULL;
	left = (json_int_t)loop_left_ms(w->deadline_at);
	return json_pack("{s:o, s:I}", "at", json_real(loop_now() +
	    left / 1000.0), "in_ms", left);
}

/*
 * What the session's record keeps of its deadline (SE_RECORD): a deadline
 * set and cleared since is null, so that none comes back.
 */
void
verdict_record(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	json_t *d;

	(void)k;
	if ((d = verdict_deadline_json(s)) != NULL || s->vw != NULL)
		json_object_set_new(ev->json, "deadline", d != NULL ? d :
		    json_null());
}

/* A fault record (SE_FAULT_KEPT) is the verdict too, unless one is given. */
void
verdict_fault(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	json_t *fault = ev->json;

	(void)k;
	if (s->verdict != NULL && strcmp(json_string_value(json_object_get(
	    s->verdict, "kind")), "fault") != 0)
		return;
	verdict_set(s, json_pack("{s:s, s:O, s:O}", "kind", "fault", "time",
	    json_object_get(fault, "time"), "fault", fault));
}

/*
 * A reset, a load or a new run (SE_FAULT_CLEARED, by in data) ends the
 * verdict, as it ends the fault: "verdicts" keeps it, marked ended; a
 * deadline may be set again, and a silence is watched again unless a
 * hold keeps the session.
 */
void
verdict_end(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct verdict_watch	*w = s->vw;
	const char		*by = ev->data;
	char			*text;

	(void)k;
	if (s->verdict == NULL)
		return;
	/*
	 * A verdict that stops its session stays until it is stopped: its
	 * exit record names it, and what waits ends with it.
	 */
	if (w != NULL && w->stopping) {
		log_info("session %lu: the verdict stays: the session is being "
		    "stopped", s->id);
		return;
	}
	json_object_set_new(s->verdict, "ended", json_pack("{s:o, s:s}",
	    "time", json_real(loop_now()), "by", by));
	xasprintf(&text, "verdict: the %s verdict ended with a %s",
	    json_string_value(json_object_get(s->verdict, "kind")), by);
	log_info("session %lu: %s", s->id, text);
	session_note(s, text);
	free(text);
	json_decref(s->verdict);
	s->verdict = NULL;
	if (w == NULL || w->pending != NULL)
		return;
	w->given = false;
	if (hold_active(s) || w->silence == NULL || s->l.silence_timeout == 0)
		return;
	w->armed_at = uv_now(dmn.loop);
	w->last_console = w->last_target = w->last_semihost = 0;
	timer_start(w->silence, s->l.silence_timeout);
}

/*
 * Whether s's deadline or silence verdict has its automatic bundle written
 * (or found none is to be): only then may a call end at once on it.
 */
bool
verdict_bundled_yet(const struct session *s)
{
	return s->vw != NULL && s->vw->bundled;
}

/* A hold keeps the session as it is: its deadline and silence no longer run. */
void
verdict_disarm(struct session *s)
{
	struct verdict_watch *w = s->vw;

	if (w == NULL)
		return;
	timer_stop(w->deadline);
	timer_stop(w->silence);
	w->deadline_at = 0;
}

/* The session ended (SE_ENDED): no deadline or silence is waited for. */
void
verdict_ended(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct verdict_watch *w = s->vw;

	(void)k;
	(void)ev;
	if (w == NULL)
		return;
	s->vw = NULL;
	session_sink_remove(w->sink);
	timer_free(w->deadline);
	timer_free(w->silence);
	timer_free(w->gather);
	timer_free(w->end);
	json_decref(w->pending);
	free(w);
}
