/*
 * Holds: a session kept alive, its target halted, past the end of the
 * connection that leased it, for at most a time to live, so that a person
 * can look at a failed test's target after the test's process has gone.
 * When the time runs out the session goes through its ordered teardown.
 * Holds are few and bounded in their total time, so that a broken CI
 * cannot pin a rig host for ever.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "lease.h"
#include "adopt.h"
#include "conn.h"

/* One session's hold. */
struct hold {
	TAILQ_ENTRY(hold)	 entry;
	struct session		*s;
	struct timer		*ttl;
	uint64_t		 until;		/* uv_hrtime() it runs out */
	double			 since;		/* unix time it was made */
	json_t			*by;		/* who holds it */
	bool			 orphaned;	/* its lease's connection is gone */
};

/* The holds of the daemon, and its limits on them (hold_init). */
static TAILQ_HEAD(, hold) hold_all = TAILQ_HEAD_INITIALIZER(hold_all);
static unsigned	hold_count;
static long	hold_default_s = HOLD_TTL_DEFAULT;
static long	hold_max = HOLDS_MAX_DEFAULT;
static long	hold_total_s = HOLD_TOTAL_DEFAULT;

/* Set the default time to live, the most holds and their most total time. */
void
hold_init(long ttl_s, long max, long total_s)
{
	hold_default_s = ttl_s;
	hold_max = max;
	hold_total_s = total_s;
}

/* The default time to live of a hold, in seconds. */
long
hold_default_ttl(void)
{
	return hold_default_s;
}

/* Milliseconds left of h. */
static uint64_t
hold_left(const struct hold *h)
{
	return loop_left_ms(h->until);
}

/* Let go of s's hold, if any, without touching the session. */
static void
hold_free(struct session *s)
{
	struct hold *h = s->hold;

	if (h == NULL)
		return;
	s->hold = NULL;
	TAILQ_REMOVE(&hold_all, h, entry);
	hold_count--;
	timer_free(h->ttl);
	json_decref(h->by);
	free(h);
	session_record_note(s);
}

/* The hold ran out: the session goes through its ordered teardown. */
static void
hold_expired(void *arg)
{
	struct session	*s = arg;

	log_info("session %lu: its hold ran out; stopping it", s->id);
	session_note(s, "hold: its time ran out; stopping the session");
	hold_free(s);
	if (s->state == S_STARTING || s->state == S_RUNNING)
		session_stop(s, -1);
}

/*
 * Whether a hold of ttl_ms on s fits the limits: one more hold, and the
 * time all holds have left, s's own aside, within the total.
 */
static int
hold_fits(const struct session *s, long ttl_ms, struct rpc_error *err)
{
	const struct hold	*h;
	uint64_t		 total = (uint64_t)ttl_ms;

	if (s->hold == NULL && hold_count >= (unsigned long)hold_max) {
		rpc_error_set(err, RPC_LIMIT, "the daemon holds %u sessions "
		    "already, its most (DBGCTLD_HOLDS_MAX); release one with "
		    "a ttl of 0", hold_count);
		return -1;
	}
	TAILQ_FOREACH(h, &hold_all, entry)
		if (h->s != s)
			total += hold_left(h);
	if (total > (uint64_t)hold_total_s * 1000) {
		rpc_error_set(err, RPC_LIMIT, "holding session %lu for %ld s "
		    "would take the holds' time left to %llu s, over the "
		    "daemon's %ld s (DBGCTLD_HOLD_TOTAL)", s->id, ttl_ms / 1000,
		    (unsigned long long)(total / 1000), hold_total_s);
		return -1;
	}
	return 0;
}

/*
 * Hold s for ttl_ms (replacing its hold's time and holder), by the holder
 * described in by (taken); -1 with err when it cannot be. In ms, not the
 * s a client asks for, so that an adopted hold goes on with what it had
 * left to the ms.
 */
int
hold_set(struct session *s, long ttl_ms, json_t *by, struct rpc_error *err)
{
	struct hold	*h;
	char		*text;

	if (s->state != S_RUNNING) {
		json_decref(by);
		rpc_error_set(err, RPC_NOT_RUNNING, "session %lu %s: only a "
		    "running session is held", s->id, session_is(s));
		return -1;
	}
	if (hold_fits(s, ttl_ms, err) != 0) {
		json_decref(by);
		return -1;
	}
	if ((h = s->hold) == NULL) {
		h = s->hold = xcalloc(1, sizeof *h);
		h->s = s;
		h->ttl = timer_new(hold_expired, s);
		TAILQ_INSERT_TAIL(&hold_all, h, entry);
		hold_count++;
	}
	json_decref(h->by);
	h->by = by;
	h->since = loop_now();
	loop_refresh();
	h->until = uv_hrtime() + (uint64_t)ttl_ms * 1000000;
	timer_start(h->ttl, (uint64_t)ttl_ms);
	/* What the hold keeps is the target as it is: no verdict ends it now. */
	verdict_disarm(s);
	xasprintf(&text, "hold: the session is held for %ld s", ttl_ms / 1000);
	log_info("session %lu: %s", s->id, text);
	session_note(s, text);
	free(text);
	session_record_note(s);
	return 0;
}

/*
 * Release s's hold (a ttl of 0): the session goes on as it was, unless
 * the lease it outlived has ended, or its deadline's or silence's verdict
 * wanted it held only and no lease keeps it: then it is stopped now, as
 * it would have been without the hold.
 */
void
hold_release(struct session *s)
{
	struct hold	*h = s->hold;
	bool		 end;

	if (h == NULL)
		return;
	end = h->orphaned || (!s->l.lease && s->verdict != NULL &&
	    strcmp(json_string_value(json_object_get(s->verdict, "kind")),
	    "fault") != 0);
	session_note(s, end ? "hold: released; stopping the session" :
	    "hold: released");
	log_info("session %lu: its hold is released%s", s->id, end ?
	    "; stopping it" : "");
	hold_free(s);
	if (end && s->state == S_RUNNING)
		session_stop(s, -1);
}

/*
 * The client c reset s: if c holds s's lease, a hold that s's verdict
 * made lets go, and the session is back in that client's service.
 */
void
hold_reset(struct session *s, const struct conn *c)
{
	struct hold *h = s->hold;

	if (h == NULL || h->orphaned || !lease_held_by(s, c) ||
	    !hold_by_verdict(s))
		return;
	session_note(s, "hold: released by a reset from its lease's client");
	log_info("session %lu: its verdict's hold is released by a reset "
	    "from its lease's client", s->id);
	hold_free(s);
}

/* The lease of s ended: true if a hold keeps s, which then ends with it. */
bool
hold_keeps(struct session *s)
{
	if (s->hold == NULL)
		return false;
	s->hold->orphaned = true;
	session_record_note(s);
	log_info("session %lu: its lease ended; its hold keeps it for %llu s",
	    s->id, (unsigned long long)(hold_left(s->hold) / 1000));
	return true;
}

/* Whether s is held by the hold its verdict made (not one a client set since). */
bool
hold_by_verdict(const struct session *s)
{
	return s->hold != NULL && json_object_get(s->hold->by, "verdict") !=
	    NULL;
}

/* Whether s is held. */
bool
hold_active(const struct session *s)
{
	return s->hold != NULL;
}

/* Milliseconds s's hold has left, as list's table shows; -1 unheld. */
long long
hold_left_ms(const struct session *s)
{
	return s->hold != NULL ? (long long)hold_left(s->hold) : -1;
}

/* The member "hold": how long it has left, until when, and who holds it. */
json_t *
hold_json(const struct session *s)
{
	const struct hold	*h = s->hold;
	uint64_t		 left;

	if (h == NULL)
		return NULL;
	left = hold_left(h);
	return json_pack("{s:I, s:o, s:o, s:O, s:b}", "left_ms",
	    (json_int_t)left, "until", json_real(loop_now() + left / 1000.0),
	    "since", json_real(h->since), "by", h->by, "lease_ended",
	    h->orphaned);
}

/* What the session's record keeps of its hold (SE_RECORD), while held. */
void
hold_record(struct sink *k, struct session *s, const struct session_event *ev)
{
	json_t *h;

	(void)k;
	if ((h = hold_json(s)) != NULL)
		json_object_set_new(ev->json, "hold", h);
}

/* The session ended (SE_ENDED): its hold has nothing left to keep. */
void
hold_ended(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	hold_free(s);
}
