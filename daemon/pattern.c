/*
 * Compiled patterns, shared and bounded. An expect's patterns are
 * compiled once for the daemon: identical ones (the same bytes and
 * options) share a compilation, counted by reference, and a few unused
 * ones stay for the next expect that asks. The memory of all of them is
 * capped, and a small pattern is JIT-compiled as it is compiled (~50 us
 * and a few KiB), while the JIT's memory is within its own cap; a big one
 * (whose JIT compilation would take milliseconds) is interpreted. A short
 * literal (`exact`, not caseless) is not compiled at all: it is looked
 * for with memmem, giving PCRE2's answers (a line echoed back and
 * expected once paid tens of microseconds of compilation before).
 *
 * Matching goes through pattern_match with a matcher, one a thread, which
 * bounds every call: at most so many backtracking steps from one start
 * (PCRE2's match limit, which it counts afresh at each start), a bounded
 * depth, heap and JIT stack, and at most so many starts (the offset
 * limit). The caller strings calls together. Compilations are made and
 * freed on the loop's thread only; any thread may match with one.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "pattern.h"

/* Compiled patterns may take this much of the daemon's memory, JIT included. */
#define PATTERN_MEM_MAX (64 * 1024 * 1024)
/* JIT-compiled code may take this much of it; past it patterns are interpreted. */
#define PATTERN_JIT_MAX (16 * 1024 * 1024)
/* Patterns compiled to at most this many bytes are JIT-compiled too. */
#define PATTERN_JIT_SMALL 4096
/* What the JIT makes of a pattern, at most, for each byte of its compilation. */
#define PATTERN_JIT_RATIO 32
/* JIT compilation a loop iteration may do (ns); past it, patterns are interpreted. */
#define PATTERN_JIT_TURN_NS (10 * 1000 * 1000)
/* Unused compilations kept for the next expect: how many, how much. */
#define PATTERN_IDLE_MAX 64
#define PATTERN_IDLE_BYTES (1024 * 1024)
/* Freed memory given back to the system once this much has gone. */
#define PATTERN_TRIM_BYTES (1024 * 1024)
/*
 * Literals up to this long are looked for without PCRE2: a call's search
 * for a part of one that ends the subject is then at most this squared.
 */
#define PATTERN_LITERAL_MAX 256
/* Buckets of the table of compilations. */
#define PATTERN_BUCKETS 256
/* The heap and depth a match may use, and its JIT stack (bytes). */
#define PATTERN_HEAP_KIB 2048
#define PATTERN_DEPTH_MAX 10000
#define PATTERN_JIT_STACK (1024 * 1024)

/* One compilation, shared by every expect that asked for the same pattern. */
struct pattern {
	LIST_ENTRY(pattern)	 chain;		/* in its bucket */
	TAILQ_ENTRY(pattern)	 idle;		/* while no expect holds it */
	uint32_t		 hash;
	uint32_t		 options;
	char			*text;
	size_t			 len;
	pcre2_code		*code;		/* NULL: a literal */
	uint32_t		 groups;
	uint32_t		 lookbehind;
	size_t			 size;		/* its memory, JIT aside */
	size_t			 jit_size;
	bool			 jit_refused;	/* by PCRE2: not tried again */
	unsigned		 refs;
};

/* What one thread matches with: its match context, JIT stack and match data. */
struct pattern_matcher {
	pcre2_match_context	*mctx;
	pcre2_jit_stack		*jstack;
	pcre2_match_data	*md;
	uint32_t		 pairs;
	size_t			 lov[2];	/* a literal's answer */
	bool			 literal;	/* the last call was a literal's */
};

static LIST_HEAD(, pattern)	 pattern_table[PATTERN_BUCKETS];
static TAILQ_HEAD(, pattern)	 pattern_idle =
				    TAILQ_HEAD_INITIALIZER(pattern_idle);
static size_t			 pattern_nidle, pattern_idle_bytes;
static size_t			 pattern_total;		/* all, JIT included */
static size_t			 pattern_jit_total;
static size_t			 pattern_freed;		/* since the last trim */

static void	pattern_jit(struct pattern *);

/* FNV-1a over the options and the pattern's bytes. */
static uint32_t
pattern_hash(const char *text, size_t len, uint32_t options)
{
	uint32_t	h = 2166136261u ^ options;
	size_t		i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)text[i];
		h *= 16777619u;
	}
	return h;
}

/* Free a compilation no expect holds, and give memory back when much went. */
static void
pattern_destroy(struct pattern *p)
{
	LIST_REMOVE(p, chain);
	pattern_total -= p->size + p->jit_size;
	pattern_jit_total -= p->jit_size;
	pattern_freed += p->size + p->jit_size;
	pcre2_code_free(p->code);
	free(p->text);
	free(p);
}

/* Give freed memory back: JIT code lives in chunks, the rest in malloc's arenas. */
static void
pattern_trim_cb(uv_timer_t *t)
{
	(void)t;
	pcre2_jit_free_unused_memory(NULL);
	malloc_trim(0);
	pattern_freed = 0;
}

/*
 * Once much has been freed, give it back to the system on the next turn:
 * once for all that a closed connection's expects let go of, not once a
 * MiB of it.
 */
static void
pattern_trim(void)
{
	static uv_timer_t	*t;

	if (pattern_freed < PATTERN_TRIM_BYTES)
		return;
	if (t == NULL) {
		t = xcalloc(1, sizeof *t);
		uv_timer_init(dmn.loop, t);
		uv_unref((uv_handle_t *)t);
	}
	if (!uv_is_active((uv_handle_t *)t))
		uv_timer_start(t, pattern_trim_cb, 0, 0);
}

/* Drop the oldest unused compilations until the idle list is within its bounds. */
static void
pattern_evict(size_t nmax, size_t bytes)
{
	struct pattern *p;

	while ((pattern_nidle > nmax || pattern_idle_bytes > bytes) &&
	    (p = TAILQ_FIRST(&pattern_idle)) != NULL) {
		TAILQ_REMOVE(&pattern_idle, p, idle);
		pattern_nidle--;
		pattern_idle_bytes -= p->size + p->jit_size;
		pattern_destroy(p);
	}
}

/* The compilation of these bytes with these options, if there is one. */
static struct pattern *
pattern_find(const char *text, size_t len, uint32_t options, uint32_t hash)
{
	struct pattern *p;

	LIST_FOREACH(p, &pattern_table[hash % PATTERN_BUCKETS], chain)
		if (p->hash == hash && p->options == options &&
		    p->len == len && memcmp(p->text, text, len) == 0)
			return p;
	return NULL;
}

/* Take a reference on p, off the idle list if it was there. */
static struct pattern *
pattern_hold(struct pattern *p)
{
	if (p->refs++ == 0) {
		TAILQ_REMOVE(&pattern_idle, p, idle);
		pattern_nidle--;
		pattern_idle_bytes -= p->size + p->jit_size;
		/* No expect holds it, so no thread matches with it: JIT now. */
		pattern_jit(p);
	}
	return p;
}

/* PCRE2's words for error code rc. */
void
pattern_error(int rc, char *buf, size_t size)
{
	if (pcre2_get_error_message(rc, (PCRE2_UCHAR *)buf, size) < 0)
		snprintf(buf, size, "PCRE2 error %d", rc);
}

/*
 * JIT-compile p if it is small, and what the JIT could make of it fits
 * within the JIT's cap, and the turn's JIT compilation is within its
 * bound (else it is tried again when the next expect takes it from the
 * unused ones): a speed-up, so where it is refused or does not pay, the
 * interpreter matches.
 */
static void
pattern_jit(struct pattern *p)
{
	static uint64_t	 tick = UINT64_MAX, spent;
	size_t		 code = p->size - sizeof *p - p->len, jit = 0;
	uint64_t	 t0;
	int		 rc;

	/* A read of many requests of new patterns shares one bound of it. */
	if (uv_now(dmn.loop) != tick) {
		tick = uv_now(dmn.loop);
		spent = 0;
	}
	if (p->code == NULL || p->jit_size > 0 || p->jit_refused ||
	    code > PATTERN_JIT_SMALL ||
	    pattern_jit_total + code * PATTERN_JIT_RATIO > PATTERN_JIT_MAX ||
	    spent >= PATTERN_JIT_TURN_NS)
		return;
	t0 = uv_hrtime();
	rc = pcre2_jit_compile(p->code, PCRE2_JIT_COMPLETE |
	    PCRE2_JIT_PARTIAL_HARD);
	spent += uv_hrtime() - t0;
	if (rc != 0) {
		p->jit_refused = true;
		return;
	}
	(void)pcre2_pattern_info(p->code, PCRE2_INFO_JITSIZE, &jit);
	p->jit_size = jit;
	pattern_total += jit;
	pattern_jit_total += jit;
}

/*
 * Compile text (len bytes) with options into a new entry; NULL with why
 * in err: PCRE2's reason and where, or the daemon's cap.
 */
static struct pattern *
pattern_compile(const char *text, size_t len, uint32_t options,
    uint32_t hash, struct rpc_error *err)
{
	struct pattern	*p;
	pcre2_code	*code;
	PCRE2_SIZE	 at;
	size_t		 size = 0, over;
	char		 why[256];
	int		 rc;
	bool		 literal = options == PCRE2_LITERAL &&
			    len <= PATTERN_LITERAL_MAX;

	code = literal ? NULL : pcre2_compile((PCRE2_SPTR)text, len, options |
	    PCRE2_USE_OFFSET_LIMIT, &rc, &at, NULL);
	if (code == NULL && !literal) {
		pattern_error(rc, why, sizeof why);
		rpc_error_set(err, RPC_INVALID_PARAMS, "%s at offset %zu", why,
		    (size_t)at);
		return NULL;
	}
	if (code != NULL)
		(void)pcre2_pattern_info(code, PCRE2_INFO_SIZE, &size);
	size += sizeof *p + len;
	/* Only as many unused ones go as make room. */
	over = pattern_total + size > PATTERN_MEM_MAX ? pattern_total + size -
	    PATTERN_MEM_MAX : 0;
	if (over > 0) {
		pattern_evict(pattern_nidle, over < pattern_idle_bytes ?
		    pattern_idle_bytes - over : 0);
		pattern_trim();
	}
	if (pattern_total + size > PATTERN_MEM_MAX) {
		pcre2_code_free(code);
		rpc_error_set(err, RPC_LIMIT, "the daemon's compiled patterns "
		    "would take more than %d MiB", PATTERN_MEM_MAX >> 20);
		return NULL;
	}
	p = xcalloc(1, sizeof *p);
	p->hash = hash;
	p->options = options;
	p->text = xmalloc(len + 1);
	memcpy(p->text, text, len);
	p->text[len] = '\0';
	p->len = len;
	p->code = code;
	p->size = size;
	if (code != NULL) {
		(void)pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT,
		    &p->groups);
		(void)pcre2_pattern_info(code, PCRE2_INFO_MAXLOOKBEHIND,
		    &p->lookbehind);
	}
	pattern_total += size;
	pattern_jit(p);
	LIST_INSERT_HEAD(&pattern_table[hash % PATTERN_BUCKETS], p, chain);
	return p;
}

/*
 * The compilation of pattern text (len bytes) with PCRE2 options, shared
 * with any expect that asked for the same; NULL with why in err.
 */
struct pattern *
pattern_get(const char *text, size_t len, uint32_t options,
    struct rpc_error *err)
{
	uint32_t	 hash = pattern_hash(text, len, options);
	struct pattern	*p = pattern_find(text, len, options, hash);

	if (p != NULL)
		return pattern_hold(p);
	if ((p = pattern_compile(text, len, options, hash, err)) == NULL)
		return NULL;
	p->refs = 1;
	return p;
}

/* Let go of a reference; the last keeps the compilation a while for reuse. */
void
pattern_put(struct pattern *p)
{
	if (p == NULL)
		return;
	if (p->refs == 0)
		log_fatal("a pattern let go more often than held");
	if (--p->refs > 0)
		return;
	TAILQ_INSERT_TAIL(&pattern_idle, p, idle);
	pattern_nidle++;
	pattern_idle_bytes += p->size + p->jit_size;
	pattern_evict(PATTERN_IDLE_MAX, PATTERN_IDLE_BYTES);
	pattern_trim();
}

/* What one reference to p is charged against a connection's cap. */
size_t
pattern_cost(const struct pattern *p)
{
	return p->size;
}

/* The number of capturing groups of p. */
uint32_t
pattern_groups(const struct pattern *p)
{
	return p->groups;
}

/* How far back of a match's start p may look. */
uint32_t
pattern_lookbehind(const struct pattern *p)
{
	return p->lookbehind;
}

/* The pattern as it was given. */
const char *
pattern_text(const struct pattern *p)
{
	return p->text;
}

/* PCRE2's table of p's named groups: count, entry size, table. */
void
pattern_names(const struct pattern *p, uint32_t *count, uint32_t *size,
    const unsigned char **table)
{
	PCRE2_SPTR t = NULL;

	*count = *size = 0;
	*table = NULL;
	if (p->code == NULL)
		return;
	(void)pcre2_pattern_info(p->code, PCRE2_INFO_NAMECOUNT, count);
	(void)pcre2_pattern_info(p->code, PCRE2_INFO_NAMEENTRYSIZE, size);
	(void)pcre2_pattern_info(p->code, PCRE2_INFO_NAMETABLE, &t);
	*table = t;
}

/* The daemon's memory in compiled patterns, JIT included, and in the JIT alone. */
void
pattern_usage(size_t *total, size_t *jit)
{
	*total = pattern_total;
	*jit = pattern_jit_total;
}

/* A matcher for one thread's calls: its context, JIT stack and match data. */
struct pattern_matcher *
pattern_matcher_new(void)
{
	struct pattern_matcher *m = xcalloc(1, sizeof *m);

	m->mctx = pcre2_match_context_create(NULL);
	m->jstack = pcre2_jit_stack_create(32 * 1024, PATTERN_JIT_STACK, NULL);
	if (m->mctx == NULL || m->jstack == NULL)
		log_fatal("out of memory for PCRE2's match context");
	pcre2_jit_stack_assign(m->mctx, NULL, m->jstack);
	pcre2_set_heap_limit(m->mctx, PATTERN_HEAP_KIB);
	pcre2_set_depth_limit(m->mctx, PATTERN_DEPTH_MAX);
	return m;
}

/* Free a matcher. */
void
pattern_matcher_free(struct pattern_matcher *m)
{
	if (m == NULL)
		return;
	pcre2_match_data_free(m->md);
	pcre2_jit_stack_free(m->jstack);
	pcre2_match_context_free(m->mctx);
	free(m);
}

/*
 * A literal's answer as PCRE2's would be over subject[0, len) from start,
 * starts up to last: the earliest start where the whole literal is, or
 * (with hard partial matching) where a part of at least one byte of it
 * ends the subject; its offsets in ov.
 */
static int
pattern_literal(const struct pattern *p, const char *subject, size_t len,
    size_t start, size_t last, bool partial, size_t ov[2])
{
	const char	*at;
	size_t		 n = p->len, i, end;

	if (start > last || start > len)
		return PCRE2_ERROR_NOMATCH;
	/* A whole one starts at len - n at the latest. */
	if (len >= n && start <= len - n) {
		end = (last < len - n ? last : len - n) + n;
		at = n == 0 ? subject + start : memmem(subject + start,
		    end - start, p->text, n);
		if (at != NULL) {
			ov[0] = at - subject;
			ov[1] = ov[0] + n;
			return 1;
		}
	}
	if (!partial)
		return PCRE2_ERROR_NOMATCH;
	/* A part ends the subject: it starts past len - n. */
	i = len >= n ? len - n + 1 : 0;
	for (i = i > start ? i : start; i < len && i <= last; i++)
		if (memcmp(subject + i, p->text, len - i) == 0) {
			ov[0] = i;
			ov[1] = len;
			return PCRE2_ERROR_PARTIAL;
		}
	return PCRE2_ERROR_NOMATCH;
}

/*
 * Run p over subject[0, len) from start with matcher m, trying starts up
 * to last (the offset limit) with at most steps backtracking steps from
 * each, with PCRE2 options opts: PCRE2's result. The match's offsets are
 * pattern_ovector's until m's next call.
 */
int
pattern_match(struct pattern_matcher *m, struct pattern *p,
    const char *subject, size_t len, size_t start, size_t last,
    uint32_t steps, uint32_t opts)
{
	m->literal = p->code == NULL;
	if (m->literal)
		return pattern_literal(p, subject, len, start, last,
		    (opts & PCRE2_PARTIAL_HARD) != 0, m->lov);
	if (m->md == NULL || p->groups >= m->pairs) {
		pcre2_match_data_free(m->md);
		m->pairs = p->groups + 1 > 16 ? p->groups + 1 : 16;
		if ((m->md = pcre2_match_data_create(m->pairs, NULL)) == NULL)
			log_fatal("out of memory for PCRE2's match data");
	}
	pcre2_set_match_limit(m->mctx, steps);
	pcre2_set_offset_limit(m->mctx, last);
	return pcre2_match(p->code, (PCRE2_SPTR)subject, len, start, opts,
	    m->md, m->mctx);
}

/* The offsets of m's last match (pairs: the match, then each group). */
const size_t *
pattern_ovector(const struct pattern_matcher *m)
{
	if (m->literal)
		return m->lov;
	return pcre2_get_ovector_pointer(m->md);
}
