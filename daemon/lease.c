/*
 * Leased sessions: a session launched with "lease" lives as long as the
 * connection that launched it; when that closes (after lease_grace ms),
 * the session is stopped, tree and all, so a rig that dies leaves nothing.
 * Within the grace, a connection that presents the lease's token (given
 * at the launch, kept in the session's record) claims the lease: a client
 * that lost its connection, or its daemon, carries on with its sessions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "lease.h"
#include "conn.h"

static void	lease_conn_closed(struct conn *, void *);

/* One session held by one connection. */
struct lease {
	TAILQ_ENTRY(lease) entry;
	struct session	*s;
	struct conn	*c;		/* NULL once it closed */
	struct sink	*sink;		/* the session's end */
	struct timer	*grace;
	long		 grace_ms;
};

/* The leases of the daemon, for a claim to find its session's. */
static TAILQ_HEAD(, lease) lease_all = TAILQ_HEAD_INITIALIZER(lease_all);

/* Let go of the lease: the session ended, or was stopped for it. */
static void
lease_free(struct lease *l)
{
	if (l->c != NULL)
		conn_hook_remove(l->c, lease_conn_closed, l);
	session_sink_remove(l->sink);
	timer_free(l->grace);
	TAILQ_REMOVE(&lease_all, l, entry);
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

/* The lease has no connection: stop the session, after the grace. */
static void
lease_grace_start(struct lease *l)
{
	/* Never from under the connection's close: a grace of 0 is next turn. */
	l->grace = timer_new(lease_expired, l);
	timer_start(l->grace, l->grace_ms);
}

/* The launching connection closed: stop the session, after the grace. */
static void
lease_conn_closed(struct conn *c, void *arg)
{
	struct lease *l = arg;

	(void)c;
	l->c = NULL;
	log_info("session %lu: its lease's connection closed; a claim may "
	    "take it for %ld ms", l->s->id, l->grace_ms);
	lease_grace_start(l);
}

/*
 * The session ended on its own: the lease has nothing left to hold; or
 * an adopted one whose lease no one claimed yet runs: its grace starts.
 */
static void
lease_session_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct lease *l = k->arg;

	(void)ev;
	if (session_ended(s))
		lease_free(l);
	else if (s->state == S_RUNNING && l->c == NULL && l->grace == NULL)
		lease_grace_start(l);
}

/*
 * Tie session s to connection c for as long as c lives (plus grace_ms);
 * with c NULL, to a connection already gone: an adopted session's, whose
 * connection went with the daemon that died, ends after the grace, which
 * starts once it runs (a hold its record kept is back by then), unless a
 * claim comes first.
 */
void
lease_add(struct session *s, struct conn *c, long grace_ms)
{
	struct lease *l = xcalloc(1, sizeof *l);

	l->s = s;
	l->c = c;
	l->grace_ms = grace_ms;
	l->sink = session_sink_add(s, SE_STATE, lease_session_state, l);
	TAILQ_INSERT_TAIL(&lease_all, l, entry);
	if (c == NULL) {
		log_info("session %lu: its lease's connection went with the "
		    "daemon that died", s->id);
		if (s->state != S_STARTING)
			lease_grace_start(l);
		return;
	}
	conn_hook_add(c, lease_conn_closed, l);
	log_info("session %lu: leased to its launching connection", s->id);
}

/*
 * Give the launch l a new lease token: 128 bits no one can guess, the
 * only proof a claim has that it comes from the lease's client.
 */
void
lease_token_new(struct launch *l)
{
	unsigned char	raw[LEASE_TOKEN_LEN / 2];
	size_t		i;

	arc4random_buf(raw, sizeof raw);
	for (i = 0; i < sizeof raw; i++)
		snprintf(l->lease_token + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof raw);
}

/*
 * Give the adopted launch l the token its record kept, if it is one (a
 * record without one, or with anything else, leaves a lease no one can
 * claim).
 */
void
lease_token_load(struct launch *l, const char *token)
{
	if (token == NULL || strlen(token) != LEASE_TOKEN_LEN ||
	    strspn(token, "0123456789abcdef") != LEASE_TOKEN_LEN)
		return;
	memcpy(l->lease_token, token, LEASE_TOKEN_LEN + 1);
}

/* The lease of s, or NULL once it has ended (or s has none). */
static struct lease *
lease_find(const struct session *s)
{
	struct lease *l;

	TAILQ_FOREACH(l, &lease_all, entry)
		if (l->s == s)
			return l;
	return NULL;
}

/* Whether connection c holds s's lease: launched it, or claimed it since. */
bool
lease_held_by(const struct session *s, const struct conn *c)
{
	const struct lease *l;

	if (c == NULL || !s->l.lease)
		return false;
	return (l = lease_find(s)) != NULL && l->c == c;
}

/*
 * Whether token is s's, compared in constant time (every byte, no early
 * return): how long a wrong one takes says nothing of the right one.
 * libbsd 0.11, Debian 12's, has no timingsafe_bcmp.
 */
static bool
lease_token_matches(const struct session *s, const char *token)
{
	volatile unsigned char	diff = 0;
	size_t			i;

	if (s->l.lease_token[0] == '\0' || strlen(token) != LEASE_TOKEN_LEN)
		return false;
	for (i = 0; i < LEASE_TOKEN_LEN; i++)
		diff |= (unsigned char)s->l.lease_token[i] ^
		    (unsigned char)token[i];
	return diff == 0;
}

/*
 * Connection c claims s's lease with token: once the connection that held
 * it has gone (closed, or gone with a daemon that died) and before its
 * grace runs out, the lease is c's, as if c had launched s. The token is
 * checked before anything a client could not see in list is told.
 */
int
lease_claim(struct session *s, struct conn *c, const char *token,
    struct rpc_error *err)
{
	struct lease *l;

	if (!s->l.lease) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "session %lu is not "
		    "leased: there is no lease to claim", s->id);
		return -1;
	}
	if (!lease_token_matches(s, token)) {
		rpc_error_set(err, RPC_UNAUTHORIZED, "wrong lease token for "
		    "session %lu", s->id);
		return -1;
	}
	if ((l = lease_find(s)) == NULL || (s->state != S_STARTING &&
	    s->state != S_RUNNING)) {
		rpc_error_set(err, RPC_NOT_RUNNING, "session %lu's lease has "
		    "ended: its grace ran out, or the session is ending", s->id);
		return -1;
	}
	if (l->c == c)
		return 0;
	if (l->c != NULL) {
		rpc_error_set(err, RPC_BUSY, "session %lu's lease is held by a "
		    "live connection", s->id);
		return -1;
	}
	timer_free(l->grace);
	l->grace = NULL;
	l->c = c;
	conn_hook_add(c, lease_conn_closed, l);
	log_info("session %lu: its lease is claimed by a new connection",
	    s->id);
	return 0;
}
