/*
 * Waiting for patterns on a session's stream. An expect keeps a window of
 * the stream's bytes from where a match could still begin, feeds it from
 * the stream's output (ring or log) as it grows, and tries its patterns
 * with PCRE2's hard partial matching: a match that more bytes could still
 * change is not taken until they come, and every byte is looked at once
 * per pattern, however it was split. Work is done on loop turns with a
 * byte budget shared round robin, so many waiters on a busy stream never
 * hold up the loop; the owner is called back with the outcome.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"

/* One compiled pattern, with its match data. */
struct expect_pat {
	pcre2_code		*code;
	pcre2_match_data	*md;
	uint32_t		 groups;	/* capturing groups */
};

/*
 * One waiter: its stream, its patterns, the window of the stream it may
 * still match in, and whom to tell of the outcome.
 */
struct expect {
	TAILQ_ENTRY(expect)	 entry;		/* on expect_busy while it has work */
	bool			 busy;
	struct session		*s;
	struct output		*o;
	char			*stream;
	uint64_t		 from;
	struct expect_pat	 pats[EXPECT_PATTERNS_MAX];
	size_t			 npats;
	uint32_t		 lookbehind;	/* bytes kept before scan */
	char			*buf;		/* the stream's bytes [base, fed) */
	size_t			 len, cap;
	uint64_t		 base;
	uint64_t		 fed;		/* the next byte to take in */
	uint64_t		 scan;		/* where the next try starts */
	size_t			 index;		/* the pattern that matched */
	bool			 matched;
	int			 failed;	/* PCRE2's error, or 0 */
	uint64_t		 deadline;	/* time ran out with this much in */
	bool			 timed_out;
	expect_cb		 cb;
	void			*arg;
};

static TAILQ_HEAD(, expect) expect_busy = TAILQ_HEAD_INITIALIZER(expect_busy);
static uv_idle_t *expect_idle;

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
	e->lookbehind = 1;
	session_ref(s);
	return e;
}

/* PCRE2's words for error code rc. */
static void
expect_pcre_error(int rc, char *buf, size_t size)
{
	if (pcre2_get_error_message(rc, (PCRE2_UCHAR *)buf, size) < 0)
		snprintf(buf, size, "PCRE2 error %d", rc);
}

/*
 * Compile pattern number npats (a literal if exact) with options; -1 with
 * the error set, naming the pattern and PCRE2's reason.
 */
int
expect_add(struct expect *e, const char *pat, size_t len, bool exact,
    uint32_t options, struct rpc_error *err)
{
	struct expect_pat	*p = &e->pats[e->npats];
	PCRE2_SIZE		 at;
	uint32_t		 lb = 0;
	char			 why[256];
	int			 rc;

	if (e->npats == EXPECT_PATTERNS_MAX)
		log_fatal("more than %d patterns", EXPECT_PATTERNS_MAX);
	/* Lines, dots and spaces mean nothing to a literal; PCRE2 refuses. */
	if (exact)
		options = (options & PCRE2_CASELESS) | PCRE2_LITERAL;
	p->code = pcre2_compile((PCRE2_SPTR)pat, len, options, &rc, &at, NULL);
	if (p->code == NULL) {
		expect_pcre_error(rc, why, sizeof why);
		rpc_error_set(err, RPC_INVALID_PARAMS, "pattern %zu: %s at "
		    "offset %zu", e->npats, why, (size_t)at);
		return -1;
	}
	/* The JIT is a speed-up: where it is refused, the interpreter matches. */
	(void)pcre2_jit_compile(p->code, PCRE2_JIT_COMPLETE |
	    PCRE2_JIT_PARTIAL_HARD);
	p->md = pcre2_match_data_create_from_pattern(p->code, NULL);
	(void)pcre2_pattern_info(p->code, PCRE2_INFO_CAPTURECOUNT, &p->groups);
	(void)pcre2_pattern_info(p->code, PCRE2_INFO_MAXLOOKBEHIND, &lb);
	if (lb > e->lookbehind)
		e->lookbehind = lb;
	e->npats++;
	return 0;
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
}

/*
 * Try every pattern from scan; true if one matched (the earliest start,
 * ties to the first pattern) and no partial match of another could still
 * come before it. Otherwise scan moves to where a match could still
 * begin: the earliest partial match, else the end.
 */
static bool
expect_try(struct expect *e, bool partial)
{
	PCRE2_SIZE	*ov, best = PCRE2_UNSET, part = PCRE2_UNSET;
	uint32_t	 opts = partial ? PCRE2_PARTIAL_HARD : 0;
	size_t		 i, pidx = 0;
	int		 rc;

	/* `^` (without multiline) means the start of what was asked about. */
	if (e->base > e->from)
		opts |= PCRE2_NOTBOL;
	for (i = 0; i < e->npats; i++) {
		rc = pcre2_match(e->pats[i].code, (PCRE2_SPTR)e->buf, e->len,
		    e->scan - e->base, opts, e->pats[i].md, NULL);
		ov = pcre2_get_ovector_pointer(e->pats[i].md);
		/* A limit hit (the JIT's stack, say) is not a "no". */
		if (rc < 0 && rc != PCRE2_ERROR_NOMATCH &&
		    rc != PCRE2_ERROR_PARTIAL) {
			e->failed = rc;
			e->index = i;
			return false;
		}
		if (rc == PCRE2_ERROR_PARTIAL && (part == PCRE2_UNSET ||
		    ov[0] < part)) {
			part = ov[0];
			pidx = i;
		}
		if (rc < 0 || (best != PCRE2_UNSET && ov[0] >= best))
			continue;
		best = ov[0];
		e->index = i;
	}
	/* A pattern that may still match earlier (or first at a tie) waits. */
	if (best != PCRE2_UNSET && (part == PCRE2_UNSET || part > best ||
	    (part == best && pidx > e->index))) {
		e->matched = true;
		return true;
	}
	e->scan = e->base + (part != PCRE2_UNSET ? part : e->len);
	return false;
}

/* Drop what no match can reach back to any more, and what is past the window. */
static void
expect_trim(struct expect *e)
{
	uint64_t keep = e->scan > e->base + e->lookbehind ?
	    e->scan - e->lookbehind : e->base;

	if (e->fed - keep > EXPECT_WINDOW) {
		keep = e->fed - EXPECT_WINDOW;
		if (e->scan < keep + e->lookbehind)
			e->scan = keep + e->lookbehind < e->fed ?
			    keep + e->lookbehind : e->fed;
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
 * Match what has come, at most budget bytes of it, a byte counted once
 * per pattern tried on it: EXPECT_MATCH, EXPECT_END (the stream ended
 * without one), EXPECT_MORE (waiting for bytes) or EXPECT_BUSY (the
 * budget ran out first). *used is what it took.
 */
static enum expect_result
expect_run(struct expect *e, size_t budget, size_t *used)
{
	uint64_t	size = output_size(e->o);
	size_t		n, w = e->npats > 0 ? e->npats : 1, chunk = budget / w;

	*used = 0;
	if (chunk > EXPECT_CHUNK)
		chunk = EXPECT_CHUNK;
	if (chunk < EXPECT_CHUNK_MIN)
		chunk = EXPECT_CHUNK_MIN;
	/* Past a deadline, only what had come by then is looked at. */
	if (e->timed_out && size > e->deadline)
		size = e->deadline;
	while (e->fed < size && *used < budget) {
		n = size - e->fed < chunk ? size - e->fed : chunk;
		if (!expect_feed(e, n)) {
			expect_skip(e);
			continue;
		}
		/* Sixty-four patterns do sixty-four times the work. */
		*used += n * w;
		if (expect_try(e, true))
			return EXPECT_MATCH;
		if (e->failed != 0)
			return EXPECT_FAILED;
		expect_trim(e);
	}
	if (e->fed < size)
		return EXPECT_BUSY;
	if (e->timed_out)
		return expect_try(e, false) ? EXPECT_MATCH : EXPECT_TIMEOUT;
	if (!session_stream_ended(e->s, e->stream, false))
		return expect_settle(e);
	if (expect_try(e, false))
		return EXPECT_MATCH;
	return e->failed != 0 ? EXPECT_FAILED : EXPECT_END;
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

	r = expect_run(e, budget, &used);
	if (r == EXPECT_BUSY)
		expect_wake(e);
	else if (r != EXPECT_MORE)
		e->cb(e->arg, e, r);
	return used;
}

/*
 * The stream grew or ended: a little new output is matched now, in the
 * event, which spares the answer a turn of the loop; more waits for the
 * turn's budget.
 */
void
expect_poke(struct expect *e)
{
	if (e->busy || e->cb == NULL)
		return;
	if (output_size(e->o) - e->fed > EXPECT_INLINE) {
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
 * budget; one that ends is told (and may be freed by its owner then).
 */
static void
expect_idle_cb(uv_idle_t *h)
{
	struct expect	*e;
	size_t		 budget = EXPECT_TURN_BYTES, used;
	unsigned	 rounds = 0;

	while ((e = TAILQ_FIRST(&expect_busy)) != NULL && budget > 0 &&
	    rounds++ < 4096) {
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

	r = expect_run(e, EXPECT_TURN_BYTES, &used);
	if (r != EXPECT_MORE && r != EXPECT_BUSY)
		return r;
	e->cb = cb;
	e->arg = arg;
	if (r == EXPECT_BUSY)
		expect_wake(e);
	return r;
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

/* The bytes' JSON: a string if they are UTF-8, else {"base64": ...}. */
static json_t *
expect_text(const char *data, size_t len)
{
	json_t	*v = json_stringn(data, len);
	char	*b;

	if (v != NULL)
		return v;
	b = xb64_encode(data, len);
	v = json_pack("{s:s}", "base64", b);
	free(b);
	return v;
}

/* Up to max bytes of the stream before offset end, from start at the earliest. */
static json_t *
expect_stream_text(struct output *o, uint64_t start, uint64_t end,
    size_t max, uint64_t *at)
{
	char		*buf;
	size_t		 n = 0, got;
	uint64_t	 off;
	json_t		*v;

	/* From past the end (a `from` ahead of the stream): nothing came. */
	if (start > end)
		end = start;
	if (end - start > max)
		start = end - max;
	*at = start;
	buf = xmalloc(end - start + 1);
	for (off = start; off < end; off += got) {
		got = output_read(o, off, buf + n, end - off);
		/* A hole in the log: what follows it is still given. */
		if (got == 0) {
			got = output_missing(o, off) - off;
			if (got == 0)
				break;
			continue;
		}
		n += got;
	}
	v = expect_text(buf, n);
	free(buf);
	return v;
}

/* Group g of the match as JSON (null when it took no part), its span too. */
static void
expect_group(struct expect *e, PCRE2_SIZE *ov, uint32_t g, json_t **text,
    json_t **span)
{
	if (ov[2 * g] == PCRE2_UNSET) {
		*text = json_null();
		*span = json_null();
		return;
	}
	*text = expect_text(e->buf + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
	*span = json_pack("[I, I]", (json_int_t)(e->base + ov[2 * g]),
	    (json_int_t)(e->base + ov[2 * g + 1]));
}

/* The named groups of pattern p: {"name": text or null}. */
static json_t *
expect_named(struct expect *e, struct expect_pat *p, PCRE2_SIZE *ov)
{
	PCRE2_SPTR	 table;
	uint32_t	 count = 0, size = 0, i, g;
	json_t		*o = json_object(), *text, *span;

	(void)pcre2_pattern_info(p->code, PCRE2_INFO_NAMECOUNT, &count);
	(void)pcre2_pattern_info(p->code, PCRE2_INFO_NAMEENTRYSIZE, &size);
	(void)pcre2_pattern_info(p->code, PCRE2_INFO_NAMETABLE, &table);
	for (i = 0; i < count; i++, table += size) {
		g = ((uint32_t)table[0] << 8) | table[1];
		expect_group(e, ov, g, &text, &span);
		json_decref(span);
		/* Duplicate names (?J) keep the first that took part. */
		if (json_is_null(text) && json_object_get(o,
		    (const char *)table + 2) != NULL) {
			json_decref(text);
			continue;
		}
		json_object_set_new(o, (const char *)table + 2, text);
	}
	return o;
}

/* The answer to a match: see expect in dbgctl-protocol(7). */
json_t *
expect_answer(struct expect *e)
{
	struct expect_pat	*p = &e->pats[e->index];
	PCRE2_SIZE		*ov = pcre2_get_ovector_pointer(p->md);
	uint64_t		 start = e->base + ov[0], end = e->base + ov[1];
	uint64_t		 before_at;
	json_t			*groups = json_array(), *spans = json_array();
	json_t			*text, *span, *v;
	uint32_t		 g;

	if (!e->matched)
		log_fatal("an expect answered without a match");
	for (g = 1; g <= p->groups; g++) {
		expect_group(e, ov, g, &text, &span);
		json_array_append_new(groups, text);
		json_array_append_new(spans, span);
	}
	v = json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:I}",
	    "stream", e->stream, "index", (json_int_t)e->index, "from",
	    (json_int_t)e->from, "offset", (json_int_t)start, "end",
	    (json_int_t)end, "text", expect_text(e->buf + ov[0], ov[1] - ov[0]),
	    "groups", groups, "spans", spans, "named", expect_named(e, p, ov),
	    "next", (json_int_t)end);
	json_object_set_new(v, "before", expect_stream_text(e->o, e->from,
	    start, EXPECT_BEFORE_MAX, &before_at));
	json_object_set_new(v, "before_offset", json_integer((json_int_t)
	    before_at));
	return v;
}

/* The data of a timeout or eof: what came from `from` to now (the last of it). */
json_t *
expect_got(struct expect *e)
{
	uint64_t	size = output_size(e->o), at;
	json_t		*got = expect_stream_text(e->o, e->from, size,
			    EXPECT_GOT_MAX, &at);

	return json_pack("{s:s, s:I, s:o, s:I, s:I}", "stream", e->stream,
	    "from", (json_int_t)e->from, "got", got, "got_offset",
	    (json_int_t)at, "next", (json_int_t)size);
}

/* Why matching failed: pattern N and PCRE2's words. */
void
expect_failure(struct expect *e, char *buf, size_t size)
{
	char why[256];

	expect_pcre_error(e->failed, why, sizeof why);
	snprintf(buf, size, "pattern %zu: matching failed: %s", e->index, why);
}

/* The offset just past the match. */
uint64_t
expect_next(struct expect *e)
{
	return e->base + pcre2_get_ovector_pointer(e->pats[e->index].md)[1];
}

/* Free an expect: it is never called back after. */
void
expect_free(struct expect *e)
{
	size_t i;

	if (e == NULL)
		return;
	expect_rest(e);
	for (i = 0; i < e->npats; i++) {
		pcre2_match_data_free(e->pats[i].md);
		pcre2_code_free(e->pats[i].code);
	}
	free(e->buf);
	free(e->stream);
	session_unref(e->s);
	free(e);
}
