/*
 * Leased sessions: a session launched with "lease" lives as long as the
 * connection that launched it; when that closes (after lease_grace ms),
 * the session is stopped, tree and all, so a rig that dies leaves nothing.
 */
#include <stdlib.h>

#include "daemon.h"
#include "conn.h"

static void	lease_conn_closed(struct conn *, void *);

/* One session held by one connection. */
struct lease {
	struct session	*s;
	struct conn	*c;		/* NULL once it closed */
	struct sink	*sink;		/* the session's end */
	struct timer	*grace;
	long		 grace_ms;
};

/* Let go of the lease: the session ended, or was stopped for it. */
static void
lease_free(struct lease *l)
{
	if (l->c != NULL)
		conn_hook_remove(l->c, lease_conn_closed, l);
	session_sink_remove(l->sink);
	timer_free(l->grace);
	free(l);
}

/*
 * The lease's automatic bundle is written (or none is): stop the
 * session, unless a hold keeps it (and ends it when it runs out).
 */
static void
lease_stop(struct session *s, void *arg)
{
	(void)arg;
	/* One already stopping keeps the deadline it was given. */
	if ((s->state == S_STARTING || s->state == S_RUNNING) &&
	    !hold_keeps(s))
		session_stop(s, -1);
}

/* The grace is over: the session's bundle, then its stop. */
static void
lease_expired(void *arg)
{
	struct lease	*l = arg;
	struct session	*s = l->s;

	log_info("session %lu: its lease ended with its connection", s->id);
	session_ref(s);
	lease_free(l);
	if (s->state == S_STARTING || s->state == S_RUNNING)
		bundle_auto(s, "lease", lease_stop, NULL);
	session_unref(s);
}

/* The launching connection closed: stop the session, after the grace. */
static void
lease_conn_closed(struct conn *c, void *arg)
{
	struct lease *l = arg;

	(void)c;
	l->c = NULL;
	/* Never from under the connection's close: a grace of 0 is next turn. */
	l->grace = timer_new(lease_expired, l);
	timer_start(l->grace, l->grace_ms);
}

/* The session ended on its own: the lease has nothing left to hold. */
static void
lease_session_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)ev;
	if (session_ended(s))
		lease_free(k->arg);
}

/*
 * Tie session s to connection c for as long as c lives (plus grace_ms);
 * with c NULL, to a connection already gone: an adopted session's, whose
 * connection went with the daemon that died, ends after the grace.
 */
void
lease_add(struct session *s, struct conn *c, long grace_ms)
{
	struct lease *l = xcalloc(1, sizeof *l);

	l->s = s;
	l->c = c;
	l->grace_ms = grace_ms;
	l->sink = session_sink_add(s, SE_STATE, lease_session_state, l);
	if (c == NULL) {
		log_info("session %lu: its lease's connection went with the "
		    "daemon that died", s->id);
		lease_conn_closed(NULL, l);
		return;
	}
	conn_hook_add(c, lease_conn_closed, l);
	log_info("session %lu: leased to its launching connection", s->id);
}
