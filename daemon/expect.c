/*
 * Waiting for patterns on a session's stream. An expect keeps a window of
 * the stream's bytes from where a match could still begin, feeds it from
 * the stream's output (ring or log) as it grows, and tries its patterns
 * with PCRE2's hard partial matching: a match that more bytes could still
 * change is not taken until they come, and every byte is looked at once
 * per pattern, however it was split. Work is done on loop turns with a
 * budget of bytes and time shared round robin, in calls each bounded
 * (expect-match.c), so neither many waiters on a busy stream nor a
 * pattern that backtracks holds up the loop; the owner is called back
 * with the outcome.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "expect-state.h"

/* Bytes taken in at a time, and matched by all expects in one loop turn. */
#define EXPECT_CHUNK (256 * 1024)
/* New output matched at once, in the event that brought it. */
#define EXPECT_INLINE (64 * 1024)
#define EXPECT_TURN_BYTES (2 * 1024 * 1024)
/* Bytes taken in at a time at the least, however many patterns share them. */
#define EXPECT_CHUNK_MIN 4096

/* Matching in one loop turn, and in the event that brought new output (ns). */
#define EXPECT_TURN_NS		(5 * 1000 * 1000)
#define EXPECT_INLINE_NS	(1000 * 1000)

static TAILQ_HEAD(, expect) expect_busy = TAILQ_HEAD_INITIALIZER(expect_busy);
static uv_idle_t *expect_idle;
/* When the matching of this turn (or event) must stop (uv_hrtime). */
static uint64_t expect_turn_end;
/* Set before each loop iteration's events: their matching bound starts anew. */
static uv_prepare_t *expect_prepare;
static bool expect_fresh = true;

/* The loop thread's matcher (the matcher's thread has its own). */
static struct pattern_matcher *expect_matcher;

static void	expect_idle_cb(uv_idle_t *);
static void	expect_rest(struct expect *);

/* A new expect on stream o of s (called name) from offset from. */
struct expect *
expect_new(struct session *s, const char *name, struct output *o,
    uint64_t from)
{
	struct expect *e = xcalloc(1, sizeof *e);

	e->s = s;
	e->o = o;
	e->stream = xstrdup(name);
	e->from = e->base = e->fed = e->scan = from;
	e->stalled = UINT64_MAX;
	e->reach = EXPECT_REACH;
	e->lookbehind = 1;
	session_ref(s);
	return e;
}

/*
 * Add pattern number npats (a literal if exact) with options, shared with
 * other expects' identical ones; -1 with the error set, naming the
 * pattern and PCRE2's reason or the cap.
 */
int
expect_add(struct expect *e, const char *pat, size_t len, bool exact,
    uint32_t options, struct rpc_error *err)
{
	struct pattern	*p;
	struct rpc_error why;

	if (e->npats == EXPECT_PATTERNS_MAX)
		log_fatal("more than %d patterns", EXPECT_PATTERNS_MAX);
	/* Lines, dots and spaces mean nothing to a literal; PCRE2 refuses. */
	if (exact)
		options = (options & PCRE2_CASELESS) | PCRE2_LITERAL;
	if ((p = pattern_get(pat, len, options, &why)) == NULL) {
		rpc_error_set(err, why.code, "pattern %zu: %s", e->npats,
		    why.message);
		return -1;
	}
	e->pats[e->npats++] = p;
	if (pattern_lookbehind(p) > e->lookbehind)
		e->lookbehind = pattern_lookbehind(p);
	return 0;
}

/* The memory one connection is charged for e's patterns. */
size_t
expect_cost(const struct expect *e)
{
	size_t	n = 0, i;

	for (i = 0; i < e->npats; i++)
		n += pattern_cost(e->pats[i]);
	return n;
}

/* Take the stream's bytes [fed, fed+n) into the window; false at a hole. */
static bool
expect_feed(struct expect *e, size_t n)
{
	size_t got;

	if (e->len + n > e->cap) {
		e->cap = e->len + n;
		e->buf = xreallocarray(e->buf, e->cap, 1);
	}
	got = output_read(e->o, e->fed, e->buf + e->len, n);
	e->len += got;
	e->fed += got;
	e->taken += got;
	return got > 0;
}

/*
 * The stream cannot give the bytes at fed (its log lost them): no match
 * spans a hole, so the window starts again after it.
 */
static void
expect_skip(struct expect *e)
{
	uint64_t next = output_missing(e->o, e->fed);

	if (next <= e->fed)
		next = output_size(e->o);
	e->len = 0;
	e->base = e->fed = e->scan = next;
	e->stalled = UINT64_MAX;
}

/* Drop what no match can reach back to any more, and what is past the window. */
static void
expect_trim(struct expect *e)
{
	uint64_t keep = e->scan > e->base + e->lookbehind ?
	    e->scan - e->lookbehind : e->base;

	if (e->fed - keep > EXPECT_WINDOW) {
		keep = e->fed - EXPECT_WINDOW;
		if (e->scan < keep + e->lookbehind) {
			e->scan = keep + e->lookbehind < e->fed ?
			    keep + e->lookbehind : e->fed;
			e->stalled = UINT64_MAX;
		}
	}
	if (keep == e->base)
		return;
	memmove(e->buf, e->buf + (keep - e->base), e->fed - keep);
	e->len = e->fed - keep;
	e->base = keep;
}

/*
 * All that came is matched and more must come: a waiter that keeps little
 * holds little meanwhile. (Not between pieces: that was an allocation of
 * a piece's size, and its page faults, for every piece.)
 */
static enum expect_result
expect_settle(struct expect *e)
{
	if (e->cap > 65536 && e->len < e->cap / 4) {
		e->cap = e->len > 4096 ? e->len : 4096;
		e->buf = xreallocarray(e->buf, e->cap, 1);
	}
	return EXPECT_MORE;
}

/*
 * Whether n bytes not yet looked at are little enough work to match on
 * the loop: a byte counts once for each pattern tried on it, as the
 * loop's calls share their starts between the patterns.
 */
static bool
expect_light(const struct expect *e, uint64_t n)
{
	return !e->heavy && n * (e->npats > 0 ? e->npats : 1) <=
	    EXPECT_INLINE_SPAN;
}

/*
 * Match what the window holds past scan: here, in small calls, while e
 * is light and what is new is little, within the turn's time; else on
 * the matcher's thread (EXPECT_AWAY: the outcome comes back later).
 */
static enum expect_result
expect_look(struct expect *e)
{
	enum expect_result r;

	if (e->scan >= e->base + e->len || e->stalled == e->fed)
		return EXPECT_MORE;
	if (expect_light(e, e->base + e->len - e->scan)) {
		if (expect_matcher == NULL)
			expect_matcher = pattern_matcher_new();
		r = expect_match_scan(e, expect_matcher, true, expect_turn_end);
		if (r != EXPECT_BUSY || !e->heavy)
			return r;
	}
	expect_worker_give(e);
	return EXPECT_AWAY;
}

/*
 * No more bytes will be looked at (time ran out, or the stream ended):
 * what is left of the window is tried without partial matching, so a
 * match that could have grown is taken as it stands.
 */
static enum expect_result
expect_last(struct expect *e, enum expect_result none)
{
	enum expect_result r;

	if (!e->final) {
		e->final = true;
		e->stalled = UINT64_MAX;
		memset(e->until, 0, sizeof e->until);
	}
	r = expect_look(e);
	return r == EXPECT_MORE ? none : r;
}

/*
 * Whether to match what the window holds now, rather than take in more
 * first: what is new is little and matched here at once (a line, say,
 * answered in its own event), or all there is (up to size) is in, or the
 * turn's budget is spent; else the matcher's thread gets a batch, not a
 * piece, a round trip to it for every EXPECT_BATCH bytes.
 */
static bool
expect_due(struct expect *e, uint64_t size, bool spent)
{
	uint64_t unscanned = e->base + e->len - e->scan;

	return e->fed >= size || spent || unscanned >= EXPECT_BATCH ||
	    expect_light(e, unscanned);
}

/*
 * Match what has come, at most budget bytes of it taken in, a byte
 * counted once per pattern, within the turn's time: EXPECT_MATCH,
 * EXPECT_FAILED, EXPECT_END (the stream ended without a match),
 * EXPECT_TIMEOUT, EXPECT_MORE (waiting for bytes) or EXPECT_BUSY (the
 * budget or the turn ran out first). *used is what it took.
 */
static enum expect_result
expect_run(struct expect *e, size_t budget, size_t *used)
{
	uint64_t		size = output_size(e->o);
	size_t			n, w = e->npats > 0 ? e->npats : 1;
	size_t			chunk = budget / w;
	enum expect_result	r;

	*used = 0;
	if (chunk > EXPECT_CHUNK)
		chunk = EXPECT_CHUNK;
	if (chunk < EXPECT_CHUNK_MIN)
		chunk = EXPECT_CHUNK_MIN;
	/* Past a deadline, only what had come by then is looked at. */
	if (e->timed_out && size > e->deadline)
		size = e->deadline;
	while (!e->final) {
		if (expect_due(e, size, *used >= budget)) {
			if ((r = expect_look(e)) != EXPECT_MORE)
				return r;
			expect_trim(e);
		}
		if (e->fed >= size)
			break;
		if (*used >= budget)
			return EXPECT_BUSY;
		n = size - e->fed < chunk ? size - e->fed : chunk;
		if (!expect_feed(e, n)) {
			expect_skip(e);
			continue;
		}
		/* Sixty-four patterns do sixty-four times the work. */
		*used += n * w;
	}
	if (e->timed_out)
		return expect_last(e, EXPECT_TIMEOUT);
	if (!e->final && !session_stream_ended(e->s, e->stream, false))
		return expect_settle(e);
	return expect_last(e, EXPECT_END);
}

/* Put e on the list of expects with work to do, and make sure a turn comes. */
void
expect_wake(struct expect *e)
{
	if (e->busy || e->cb == NULL)
		return;
	e->busy = true;
	TAILQ_INSERT_TAIL(&expect_busy, e, entry);
	if (expect_idle == NULL) {
		expect_idle = xcalloc(1, sizeof *expect_idle);
		uv_idle_init(dmn.loop, expect_idle);
	}
	uv_idle_start(expect_idle, expect_idle_cb);
}

/*
 * Match up to budget bytes' work; more to do waits for a turn, an outcome
 * goes to the owner (which may free e). What it took of the budget.
 */
static size_t
expect_step(struct expect *e, size_t budget)
{
	enum expect_result	r;
	size_t			used;

	if (e->away)
		return 0;
	r = expect_run(e, budget, &used);
	if (r == EXPECT_BUSY)
		expect_wake(e);
	else if (r != EXPECT_MORE && r != EXPECT_AWAY)
		e->cb(e->arg, e, r);
	return used;
}

/* A loop iteration begins: its events may match for a while again. */
static void
expect_prepare_cb(uv_prepare_t *h)
{
	(void)h;
	expect_fresh = true;
}

/*
 * Whether matching may be done now, in an event: the events of one loop
 * iteration (a read of many requests, say) share one bound between them,
 * and past it their matching waits for the turns.
 */
static bool
expect_inline(void)
{
	if (expect_prepare == NULL) {
		expect_prepare = xcalloc(1, sizeof *expect_prepare);
		uv_prepare_init(dmn.loop, expect_prepare);
		uv_prepare_start(expect_prepare, expect_prepare_cb);
		/* It never keeps the loop alive, nor wakes it. */
		uv_unref((uv_handle_t *)expect_prepare);
	}
	if (expect_fresh) {
		expect_fresh = false;
		expect_turn_end = uv_hrtime() + EXPECT_INLINE_NS;
	}
	return uv_hrtime() < expect_turn_end;
}

/*
 * The stream grew or ended: a little new output is matched now, in the
 * event, which spares the answer a turn of the loop; more waits for the
 * turn's budget.
 */
void
expect_poke(struct expect *e)
{
	if (e->busy || e->cb == NULL || e->away)
		return;
	if (output_size(e->o) - e->fed > EXPECT_INLINE || !expect_inline()) {
		expect_wake(e);
		return;
	}
	expect_step(e, EXPECT_INLINE);
}

/* Take e off the busy list. */
static void
expect_rest(struct expect *e)
{
	if (!e->busy)
		return;
	e->busy = false;
	TAILQ_REMOVE(&expect_busy, e, entry);
}

/*
 * One turn's matching: each busy expect in turn gets a share of the
 * budget, bytes and time; one that ends is told (and may be freed by its
 * owner then). The turn ends when either runs out, after one step at
 * the least, so every other event waits for one turn's time at most.
 */
static void
expect_idle_cb(uv_idle_t *h)
{
	struct expect	*e;
	size_t		 budget = EXPECT_TURN_BYTES, used;
	unsigned	 rounds = 0;

	expect_turn_end = uv_hrtime() + EXPECT_TURN_NS;
	expect_fresh = false;
	while ((e = TAILQ_FIRST(&expect_busy)) != NULL && budget > 0 &&
	    rounds++ < 4096 && (rounds == 1 ||
	    uv_hrtime() < expect_turn_end)) {
		expect_rest(e);
		used = expect_step(e, budget < EXPECT_CHUNK ? budget :
		    EXPECT_CHUNK);
		budget -= used < budget ? used : budget;
	}
	if (TAILQ_EMPTY(&expect_busy))
		uv_idle_stop(h);
}

/*
 * Start matching: what has come is tried now, within one turn's budget;
 * the outcome, if it is not known at once, goes to cb(arg) later.
 */
enum expect_result
expect_start(struct expect *e, expect_cb cb, void *arg)
{
	enum expect_result	r;
	size_t			used;

	if (e->away) {
		e->cb = cb;
		e->arg = arg;
		return EXPECT_BUSY;
	}
	r = expect_inline() ? expect_run(e, EXPECT_TURN_BYTES, &used) :
	    EXPECT_BUSY;
	if (r != EXPECT_MORE && r != EXPECT_BUSY && r != EXPECT_AWAY)
		return r;
	e->cb = cb;
	e->arg = arg;
	if (r == EXPECT_BUSY)
		expect_wake(e);
	/* Away: the matcher's answer goes on with it (expect_back). */
	return r == EXPECT_AWAY ? EXPECT_BUSY : r;
}

/*
 * Time is up: what came before now is still matched (at once if it has
 * all been looked at, later if matching was behind), with a last try
 * without partial matching, so a match that could have grown is taken as
 * it stands. EXPECT_MATCH, EXPECT_TIMEOUT, or EXPECT_BUSY: the outcome
 * goes to the callback.
 */
enum expect_result
expect_time_up(struct expect *e)
{
	e->timed_out = true;
	e->deadline = output_size(e->o);
	expect_rest(e);
	return expect_start(e, e->cb, e->arg);
}

/* Pattern i as a message quotes it: printable, and cut short when long. */
static void
expect_quote(struct expect *e, size_t i, char *buf, size_t size)
{
	const char	*t = pattern_text(e->pats[i]);
	size_t		 n, k;

	for (n = 0; t[n] != '\0' && n < 60 && n + 4 < size; n++)
		buf[n] = t[n] >= 0x20 && t[n] < 0x7f ? t[n] : '?';
	k = n;
	if (t[n] != '\0' && k + 4 < size)
		k += strlcpy(buf + k, "...", size - k);
	buf[k] = '\0';
}

/* Why matching failed: the pattern, and the limit it hit or PCRE2's words. */
void
expect_failure(struct expect *e, char *buf, size_t size)
{
	char	pat[80], why[256];
	size_t	i;

	if (e->failed == EXPECT_OVER_BUDGET) {
		/* The pattern that took the most is the one to blame. */
		for (i = e->index = 0; i < e->npats; i++)
			if (e->spent_by[i] > e->spent_by[e->index])
				e->index = i;
		expect_quote(e, e->index, pat, sizeof pat);
		snprintf(buf, size, "pattern %zu (%s): matching took %llu ms "
		    "over %llu KiB of the stream, past an expect's budget "
		    "(%llu ms, and %llu ms more a 4 KiB): it backtracks too "
		    "much; atomic groups or possessive quantifiers bound it",
		    e->index, pat, (unsigned long long)(e->spent / 1000000),
		    (unsigned long long)(e->taken / 1024),
		    EXPECT_BUDGET_NS / 1000000, EXPECT_BUDGET_PER_4K / 1000000);
		return;
	}
	expect_quote(e, e->index, pat, sizeof pat);
	pattern_error(e->failed, why, sizeof why);
	if (expect_match_limit(e->failed))
		snprintf(buf, size, "pattern %zu (%s): more than %d backtracking "
		    "steps, or too deep, from one place in the stream (%s)",
		    e->index, pat, EXPECT_SLOW_STEPS, why);
	else
		snprintf(buf, size, "pattern %zu (%s): matching failed: %s",
		    e->index, pat, why);
}

/* The offset just past the match. */
uint64_t
expect_next(struct expect *e)
{
	return e->base + e->ov[1];
}

/*
 * The matcher's thread gave e back: its match or failure goes to the
 * owner; a slice that ran out goes round again; once all it had was
 * looked at, the loop takes in more, or decides the end, as ever.
 */
void
expect_back(struct expect *e)
{
	enum expect_result r = e->wresult;

	if (r == EXPECT_BUSY) {
		expect_worker_give(e);
		return;
	}
	if (r == EXPECT_MATCH || r == EXPECT_FAILED) {
		e->cb(e->arg, e, r);
		return;
	}
	/* Taking in more is the turns' work, within their budget. */
	expect_wake(e);
}

/* Free an expect: it is never called back after (if away, once it is back). */
void
expect_free(struct expect *e)
{
	if (e == NULL)
		return;
	expect_rest(e);
	e->cb = NULL;
	if (e->away && !expect_worker_take(e)) {
		e->dead = true;
		return;
	}
	expect_destroy(e);
}

/* Free an expect the matcher's thread has not got. */
void
expect_destroy(struct expect *e)
{
	size_t i;

	for (i = 0; i < e->npats; i++)
		pattern_put(e->pats[i]);
	free(e->ov);
	free(e->buf);
	free(e->stream);
	session_unref(e->s);
	free(e);
}
