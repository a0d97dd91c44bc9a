/*
 * An expect's calls into PCRE2, each bounded: a run of starts from where
 * the last call left off, a few backtracking steps from each (more, for
 * fewer starts at a time, where a start needs them), and a subject cut
 * short past them where hard partial matching makes that safe. The
 * calls go on until a pattern matches or fails, more bytes are needed,
 * or the caller's time is up; an expect whose matching has cost more
 * than its budget fails.
 *
 * On the loop's thread (inline) the calls are smaller still, and the
 * first that hits a limit or takes long marks the expect heavy: its
 * matching goes on on the matcher's thread (expect-worker.c), where no
 * call, however long, holds up the loop.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "expect-state.h"

/* One call's reach: what it may look at, and the starts it may try. */
struct expect_match_call {
	size_t	 start;		/* in the window */
	size_t	 last;		/* the last start tried */
	size_t	 end;		/* the subject's end */
	uint32_t steps;
	uint32_t opts;
	int	 level;		/* -1: inline */
};

/* The outcome of one call across the patterns. */
enum expect_match_outcome {
	EXPECT_TRY_MATCH,	/* a pattern matched */
	EXPECT_TRY_FAILED,	/* a pattern failed (see e->failed) */
	EXPECT_TRY_ON,		/* nothing decided: scan moved, try again */
	EXPECT_TRY_WAIT,	/* a partial match at scan waits for bytes */
	EXPECT_TRY_HEAVY,	/* inline, a limit was hit: the matcher's now */
};

/* Each level's starts a call and steps from each (see EXPECT_LEVELS). */
static const struct {
	size_t		starts;
	uint32_t	steps;
} expect_match_levels[EXPECT_LEVELS] = {
	{ 4096, 250 },
	{ 256, 4000 },
	{ 16, 64000 },
	{ 1, EXPECT_SLOW_STEPS },
};

/* Keep the winner's offsets: m's next call overwrites PCRE2's. */
static void
expect_match_keep(struct expect *e, const struct pattern_matcher *m,
    size_t i)
{
	size_t n = 2 * (pattern_groups(e->pats[i]) + 1);

	e->index = i;
	e->ov = xreallocarray(e->ov, n, sizeof *e->ov);
	memcpy(e->ov, pattern_ovector(m), n * sizeof *e->ov);
}

/* The starts and steps of a call at level (-1: inline, few of each). */
static void
expect_match_level(struct expect *e, int level, size_t *starts,
    uint32_t *steps)
{
	if (level < 0) {
		*starts = EXPECT_INLINE_STARTS / e->npats;
		*steps = EXPECT_INLINE_STEPS;
	} else {
		*starts = expect_match_levels[level].starts;
		*steps = expect_match_levels[level].steps;
	}
	if (*starts == 0)
		*starts = 1;
}

/*
 * What the next call tries: a bounded run of starts from scan, at the
 * level a limit hit earlier left it, over a subject cut short past them
 * where a partial match makes that safe. The starts times the bytes a
 * call may look at stay within EXPECT_CALL_SCAN, so a pattern that scans
 * far from each start scans no more than that in one call.
 */
static void
expect_match_init(struct expect *e, struct expect_match_call *c,
    bool inline_)
{
	size_t starts, span;

	c->start = e->scan - e->base;
	c->level = -1;
	if (!inline_)
		for (c->level = EXPECT_LEVELS - 1; c->level > 0; c->level--)
			if (e->scan < e->until[c->level])
				break;
	expect_match_level(e, c->level, &starts, &c->steps);
	c->opts = 0;
	/* `^` (without multiline) means the start of what was asked about. */
	if (e->base > e->from)
		c->opts |= PCRE2_NOTBOL;
	/*
	 * With hard partial matching, whatever depends on bytes past the
	 * end is a partial match, so a shorter subject changes no answer;
	 * without it (the last try) the subject must be whole.
	 */
	if (!e->final)
		c->opts |= PCRE2_PARTIAL_HARD;
	span = e->final ? e->len - c->start : e->reach;
	while (starts > 1 && starts * (starts + span) > EXPECT_CALL_SCAN)
		starts /= 2;
	c->last = c->start + starts < e->len ? c->start + starts : e->len;
	c->end = e->final || c->last + e->reach >= e->len ? e->len :
	    c->last + e->reach;
}

/* Whether PCRE2's rc is one of its limits (steps, depth, heap, JIT stack). */
bool
expect_match_limit(int rc)
{
	return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT;
}

/*
 * The clock an expect's matching is charged by (ns): on the loop, the
 * wall's, which also tells a slow call; on the matcher's thread, the
 * thread's own CPU time, so a thread the machine's load keeps waiting is
 * not charged for the wait (a read costs a microsecond there, beside
 * calls of thousands of starts).
 */
static uint64_t
expect_match_clock(bool inline_)
{
	struct timespec ts;

	if (inline_ || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return uv_hrtime();
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Charge pattern i with the time since *now, which becomes the time now;
 * with one pattern only, the clock is read once a call, after it.
 */
static void
expect_match_charge(struct expect *e, size_t i, bool inline_, uint64_t *now)
{
	uint64_t t;

	if (e->npats > 1 || i == e->npats - 1) {
		t = expect_match_clock(inline_);
		e->spent_by[i] += t - *now;
		e->spent += t - *now;
		*now = t;
	}
}

/*
 * A call hit a limit: tried again a level down (or, inline, on the
 * matcher's thread); at the last level it fails the expect with PCRE2's
 * rc, pattern i to blame.
 */
static enum expect_match_outcome
expect_match_escalate(struct expect *e, const struct expect_match_call *c,
    size_t i, int rc)
{
	if (c->level < 0) {
		e->heavy = true;
		return EXPECT_TRY_HEAVY;
	}
	if (c->level < EXPECT_LEVELS - 1) {
		e->until[c->level + 1] = e->base + c->last + 1;
		return EXPECT_TRY_ON;
	}
	e->failed = rc;
	e->index = i;
	return EXPECT_TRY_FAILED;
}

/* Decide a call from its earliest match (best, pattern e->index) and partial. */
static enum expect_match_outcome
expect_match_decide(struct expect *e, const struct expect_match_call *c,
    size_t best, size_t part, size_t pidx)
{
	/* A pattern that may still match earlier (or first at a tie) waits. */
	if (best != SIZE_MAX && (part == SIZE_MAX || part > best ||
	    (part == best && pidx > e->index))) {
		e->matched = true;
		return EXPECT_TRY_MATCH;
	}
	if (part != SIZE_MAX) {
		if (e->base + part > e->scan)
			e->reach = EXPECT_REACH;
		e->scan = e->base + part;
		/* Cut short: the partial match needs the bytes already here. */
		if (c->end < e->len) {
			if (e->reach < SIZE_MAX / 2)
				e->reach *= 2;
			return EXPECT_TRY_ON;
		}
		e->stalled = e->fed;
		return EXPECT_TRY_WAIT;
	}
	e->reach = EXPECT_REACH;
	e->scan = e->base + c->last + (c->last < e->len ? 1 : 0);
	return EXPECT_TRY_ON;
}

/*
 * Try every pattern over one call's starts with matcher m; the earliest
 * match wins (ties to the first pattern) unless a partial match of
 * another could still come before it. *now is the charging clock's
 * time, read as the call ends.
 */
static enum expect_match_outcome
expect_match_try(struct expect *e, struct pattern_matcher *m, bool inline_,
    uint64_t *now)
{
	struct expect_match_call	 c;
	size_t				 i, pidx = 0, best = SIZE_MAX;
	size_t				 part = SIZE_MAX;
	const size_t			*ov;
	int				 rc;

	expect_match_init(e, &c, inline_);
	for (i = 0; i < e->npats; i++) {
		rc = pattern_match(m, e->pats[i], e->buf, c.end, c.start,
		    c.last, c.steps, c.opts);
		expect_match_charge(e, i, inline_, now);
		if (expect_match_limit(rc))
			return expect_match_escalate(e, &c, i, rc);
		if (rc < 0 && rc != PCRE2_ERROR_NOMATCH &&
		    rc != PCRE2_ERROR_PARTIAL) {
			e->failed = rc;
			e->index = i;
			return EXPECT_TRY_FAILED;
		}
		ov = pattern_ovector(m);
		if (rc == PCRE2_ERROR_PARTIAL && ov[0] < part) {
			part = ov[0];
			pidx = i;
		}
		if (rc < 0 || ov[0] >= best)
			continue;
		best = ov[0];
		expect_match_keep(e, m, i);
	}
	return expect_match_decide(e, &c, best, part, pidx);
}

/* Whether e has matched for longer than the bytes it took in allow. */
static bool
expect_match_over(struct expect *e)
{
	return e->spent > EXPECT_BUDGET_NS + e->taken / 4096 *
	    EXPECT_BUDGET_PER_4K;
}

/*
 * Try the window from scan on with matcher m until a pattern matches or
 * fails, more bytes are needed, or the time until is up (EXPECT_BUSY):
 * at least one call, however late it is. EXPECT_MORE when all there is
 * was tried. Inline, a call that hits a limit or takes long marks the
 * expect heavy and ends the scan (EXPECT_BUSY).
 */
enum expect_result
expect_match_scan(struct expect *e, struct pattern_matcher *m, bool inline_,
    uint64_t until)
{
	uint64_t	now = expect_match_clock(inline_), then;
	bool		first = true;

	while (e->scan < e->base + e->len && e->stalled != e->fed) {
		if (!first && (inline_ ? now : uv_hrtime()) >= until)
			return EXPECT_BUSY;
		first = false;
		then = now;
		switch (expect_match_try(e, m, inline_, &now)) {
		case EXPECT_TRY_MATCH:
			return EXPECT_MATCH;
		case EXPECT_TRY_FAILED:
			return EXPECT_FAILED;
		case EXPECT_TRY_WAIT:
			return EXPECT_MORE;
		case EXPECT_TRY_HEAVY:
			return EXPECT_BUSY;
		case EXPECT_TRY_ON:
			break;
		}
		if (expect_match_over(e)) {
			e->failed = EXPECT_OVER_BUDGET;
			return EXPECT_FAILED;
		}
		if (inline_ && now - then > EXPECT_INLINE_CALL_NS) {
			e->heavy = true;
			return EXPECT_BUSY;
		}
	}
	return EXPECT_MORE;
}
