/*
 * Forgetting ended sessions: the oldest past the count or the time kept
 * goes once nothing but the table holds it and its output is read, and
 * remove takes one (with its files) when asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "session.h"

/*
 * Whether only the table holds s, and no target output that waits to be
 * read is in memory only: unread output in the transcript's file stays
 * there (sessions/ID.target.log), so it keeps no session in the table,
 * where a rig that only expects would otherwise keep every one.
 */
static bool
session_prune_able(const struct session *s)
{
	if (!session_ended(s) || s->refs > 1)
		return false;
	return s->transport == NULL || transport_drained(s->transport) ||
	    output_unkept(s->target_out, transport_offset(s->transport)) ==
	    output_size(s->target_out);
}

/* Order ended sessions by id, as the table has them. */
static int
session_prune_cmp(const struct session *a, const struct session *b)
{
	return a->id < b->id ? -1 : a->id > b->id;
}

/* libbsd's tree.h marks static functions with BSD's __unused, glibc's not. */
#ifndef __unused
#define __unused __attribute__((unused))
#endif
RB_HEAD(session_ended, session);
RB_PROTOTYPE_STATIC(session_ended, session, ended_entry, session_prune_cmp)
RB_GENERATE_STATIC(session_ended, session, ended_entry, session_prune_cmp)

/* The ended sessions, by id, and how many. */
static struct session_ended	 session_prune_tree =
    RB_INITIALIZER(&session_prune_tree);
static unsigned long		 session_prune_count;
/* Forgets ended sessions. */
static struct timer		*session_prune_timer;

/*
 * s has ended: count it and index it among the ended, so that a prune
 * walks those alone, not every live session of the table at every end.
 */
void
session_prune_ended(struct session *s)
{
	session_prune_count++;
	RB_INSERT(session_ended, &session_prune_tree, s);
}

/* Whether the prune timer runs: for the next session to expire, or at once. */
static bool session_prune_waits;

/* Seconds until ended s has been kept as long as it may be (<= 0: now). */
double
session_prune_left(const struct session *s)
{
	return s->ended_at + (double)dmn.keep_ended_s - loop_now();
}

/* Take s out of the table; what else holds it keeps it until let go. */
static void
session_prune_forget(struct session *s)
{
	TAILQ_REMOVE(&dmn.sessions, s, entry);
	RB_REMOVE(session_ids, &dmn.session_ids, s);
	RB_REMOVE(session_ended, &session_prune_tree, s);
	s->listed = false;
	session_prune_count--;
	session_unref(s);
}

/*
 * Forget the oldest ended sessions beyond the number kept, and those
 * ended longer ago than the time kept; then wait for the next to expire.
 */
static void
session_prune_cb(void *arg)
{
	struct session	*s, *next;
	double		 left, soonest = -1;

	(void)arg;
	RB_FOREACH_SAFE(s, session_ended, &session_prune_tree, next) {
		left = session_prune_left(s);
		if (session_prune_able(s) &&
		    (session_prune_count > dmn.keep_ended || left <= 0)) {
			session_prune_forget(s);
			continue;
		}
		/* One held past its time goes when let go (session_unref). */
		if (left > 0 && (soonest < 0 || left < soonest))
			soonest = left;
	}
	session_prune_waits = soonest >= 0;
	if (session_prune_waits)
		timer_start(session_prune_timer,
		    (uint64_t)(soonest * 1000) + 1);
}

/* Prune on the next loop turn. */
void
session_prune_soon(void)
{
	if (session_prune_timer == NULL) {
		session_prune_timer = timer_new(session_prune_cb, NULL);
		timer_weak(session_prune_timer);
	}
	session_prune_waits = true;
	timer_start(session_prune_timer, 0);
}

/*
 * Forget ended sessions past the number or the time kept, so a daemon
 * that lives long does not grow; their logs stay on disk. It happens on
 * a later loop turn, never under a caller that walks the table or holds
 * a session. The timer is weak: it never holds the daemon's exit.
 */
void
session_prune(void)
{
	/* A waiting timer is due no later than a session that ends now. */
	if (session_prune_count > dmn.keep_ended || !session_prune_waits)
		session_prune_soon();
}

/* Unlink a file the session made; one already gone is fine. */
void
session_prune_unlink(struct session *s, const char *path)
{
	if (unlink(path) != 0 && errno != ENOENT)
		log_warn("session %lu: cannot remove %s: %s", s->id, path,
		    strerror(errno));
}

/* Unlink a recording's files (replay.c's), which its freeing would also remove. */
static void
session_prune_unlink_rr(struct session *s)
{
	static const char *const ext[] = { "bin", "qcow2", "elf" };
	char	 path[PATH_MAX + 64];
	size_t	 i;

	for (i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		snprintf(path, sizeof path, "%s/sessions/%lu.rr.%s",
		    dmn.state_dir, s->id, ext[i]);
		session_prune_unlink(s, path);
	}
}

/*
 * Remove ended s from the table at once, whatever else holds it, and
 * unless keep_files its log and core file; its id is never used again.
 */
void
session_prune_remove(struct session *s, bool keep_files)
{
	char path[PATH_MAX + 64];

	if (!session_ended(s) || !s->listed)
		log_fatal("session %lu: removed while %s", s->id,
		    session_state_name(s->state));
	log_info("session %lu: removed%s", s->id, keep_files ? "" :
	    " with its files");
	if (!keep_files) {
		session_stream_remove(s);
		snprintf(path, sizeof path, "%s/sessions/%lu.core",
		    dmn.state_dir, s->id);
		session_prune_unlink(s, path);
		snprintf(path, sizeof path, "%s/sessions/%lu.mi.log",
		    dmn.state_dir, s->id);
		session_prune_unlink(s, path);
		session_prune_unlink_rr(s);
	}
	session_prune_forget(s);
}
