/*
 * The adoption soak's holds and deadlines: a deadline session launched
 * each round, whose verdict (held or stopped) comes after the kill; the
 * sessions earlier verdicts held, still held; and a board held for an
 * hour and a gdb session with an hour's deadline, which come back each
 * time with what they had left: never more than before, never more than
 * the hour less the time since they were set.
 */
#include "harness.h"
#include "adopt-soak.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slack (ms) for a daemon that keeps the time left in whole seconds. */
#define SA_HOLD_SLACK	1000

/* Whether the killed daemons logged text. */
static bool
sa_hold_logged(struct sa *s, const char *text)
{
	return s->logs.p != NULL && strstr(s->logs.p, text) != NULL;
}

/* The board held for SA_LONG_S s, the gdb session due in SA_LONG_S s. */
void
sa_hold_start(struct sa *s)
{
	char ids[32], ttl[32], ms[32];
	struct h_res r;

	s->held_id = s->dbg[SA_DBGS - 1].id;
	s->due_id = s->dbg[0].id;
	snprintf(ttl, sizeof ttl, "%d", SA_LONG_S);
	snprintf(ms, sizeof ms, "%d", SA_LONG_S * 1000);
	s->long_t_set = h_now();
	h_cli_exit(&r, 0, H_ARGS("hold", "--ttl", ttl, "--note", "the soak's "
	    "board", h_idstr(s->held_id, ids, sizeof ids)));
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("deadline", h_idstr(s->due_id, ids,
	    sizeof ids), ms));
	h_run_free(&r);
	s->long_t0 = h_now();
	s->held_left = s->due_left = SA_LONG_S * 1000L;
}

/* A deadline session for this round: held by its verdict on odd rounds. */
void
sa_hold_round(struct sa *s)
{
	char ms[32], name[32];

	snprintf(ms, sizeof ms, "%d", SA_DEADLINE_MS);
	snprintf(name, sizeof name, "deadline%d", s->round);
	s->deadline[s->round] = sa_launch(H_ARGS("--kind", "exec", "--name",
	    name, "--deadline", ms, "--on-deadline", s->round % 2 ? "hold" :
	    "stop", "--", "sleep", "1000"));
}

/*
 * The round's deadline session gets its verdict: wait exits 6, at its
 * end, or at once if the verdict holds it. Unless its deadline fired
 * before the kill, as the killed daemon's log says: then it ended, or
 * its verdict went with that daemon.
 */
static void
sa_hold_verdict(struct sa *s, long id)
{
	char ids[32], fired[64];
	struct h_res r;

	h_cli(&r, H_ARGS("wait", "--timeout", "30000", h_idstr(id, ids,
	    sizeof ids)));
	snprintf(fired, sizeof fired, "session %ld: deadline", id);
	if (r.code != 6 && sa_hold_logged(s, fired)) {
		s->early++;
		h_run_free(&r);
		return;
	}
	cr_assert_eq(r.code, 6, "%s: wait for deadline session %ld: exit %d, "
	    "not its verdict's 6: %s; the daemons' logs: %s", s->where, id,
	    r.code, r.err, sa_logs(s));
	h_run_free(&r);
}

/*
 * A time left (left_ms or in_ms at path of id's status) after the
 * adoption: no more than before, and the hour less the time since it was
 * set, no more and no less (with the time the set and the status took
 * on either side); *last gets it.
 */
static void
sa_hold_left(struct sa *s, long id, const char *path, long *last)
{
	double	since = h_now() - s->long_t0;
	json_t	*st = h_cli_status(id);
	double	upto = h_now() - s->long_t_set;
	long	left = (long)h_jint(st, path, -1);
	long	most = SA_LONG_S * 1000L - (long)(since * 1000) + SA_HOLD_SLACK;
	long	least = SA_LONG_S * 1000L - (long)(upto * 1000) - SA_HOLD_SLACK;

	json_decref(st);
	cr_assert(left >= least && left <= *last && left <= most, "%s: "
	    "session %ld's %s after the adoption is %ld ms: it was %ld, and "
	    "%.3f to %.3f s of its %d s have gone; the daemons' logs: %s",
	    s->where, id, path, left, *last, since, upto, SA_LONG_S,
	    sa_logs(s));
	*last = left;
}

/*
 * After an adoption: the sessions earlier verdicts held are listed and
 * held; the long hold and deadline go on with what they had left; the
 * round's deadline session gets its verdict.
 */
void
sa_hold_check(struct sa *s)
{
	bool held;
	int i;

	for (i = 1; i < s->round; i += 2) {
		cr_assert(sa_end_listed(s->deadline[i], &held), "%s: held "
		    "session %ld is not listed after the adoption; the daemons' "
		    "logs: %s", s->where, s->deadline[i], sa_logs(s));
		cr_assert(held, "%s: session %ld, held by its deadline's "
		    "verdict, is not held after the adoption; the daemons' "
		    "logs: %s", s->where, s->deadline[i], sa_logs(s));
		s->held++;
	}
	cr_assert(sa_end_listed(s->held_id, &held) && held, "%s: the board "
	    "(%ld) is not held after the adoption; the daemons' logs: %s",
	    s->where, s->held_id, sa_logs(s));
	sa_hold_left(s, s->held_id, "hold.left_ms", &s->held_left);
	sa_hold_left(s, s->due_id, "deadline.in_ms", &s->due_left);
	sa_hold_verdict(s, s->deadline[s->round]);
}
