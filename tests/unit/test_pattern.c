/*
 * Unit tests of the compiled patterns: a literal, which is looked for
 * without PCRE2, answers every call as PCRE2 answers the same literal
 * compiled (PCRE2 the oracle), over random subjects, starts, offset
 * limits and partial matching.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "daemon.h"
#include "pattern.h"

/* Random cases tried, and the longest subject. */
#define CASES		200000
#define SUBJECT_MAX	24

/* An empty daemon: the patterns' table needs its loop. */
static void
setup(void)
{
	memset(&dmn, 0, sizeof dmn);
	dmn.loop = uv_default_loop();
	srandom(33);
}

TestSuite(pattern, .init = setup);

/* n random bytes of a small alphabet, so that parts and wholes are common. */
static void
fill(char *buf, size_t n)
{
	static const char alphabet[] = "ab\n";
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = alphabet[random() % 3];
}

/* PCRE2's own answer for literal lit, and its offsets in ov. */
static int
oracle(const char *lit, size_t n, const char *subject, size_t len,
    size_t start, size_t last, uint32_t opts, size_t ov[2])
{
	pcre2_match_context	*mc = pcre2_match_context_create(NULL);
	pcre2_match_data	*md = pcre2_match_data_create(4, NULL);
	pcre2_code		*code;
	PCRE2_SIZE		 at;
	int			 err, rc;

	code = pcre2_compile((PCRE2_SPTR)lit, n, PCRE2_LITERAL |
	    PCRE2_USE_OFFSET_LIMIT, &err, &at, NULL);
	cr_assert_not_null(code);
	pcre2_set_offset_limit(mc, last);
	rc = pcre2_match(code, (PCRE2_SPTR)subject, len, start, opts, md, mc);
	ov[0] = pcre2_get_ovector_pointer(md)[0];
	ov[1] = pcre2_get_ovector_pointer(md)[1];
	pcre2_match_data_free(md);
	pcre2_match_context_free(mc);
	pcre2_code_free(code);
	return rc;
}

/*
 * An exact pattern's answers are PCRE2's: the same result, and where it
 * matched or a part of it ends the subject, the same offsets.
 */
Test(pattern, a_literal_answers_as_pcre2_does)
{
	struct pattern_matcher	*m = pattern_matcher_new();
	struct rpc_error	 err;
	struct pattern		*p;
	char			 lit[8], subject[SUBJECT_MAX];
	size_t			 n, len, start, last, ov[2];
	uint32_t		 opts;
	int			 i, want, got;

	for (i = 0; i < CASES; i++) {
		n = (size_t)random() % 5;
		len = (size_t)random() % SUBJECT_MAX;
		fill(lit, n);
		fill(subject, len);
		start = (size_t)random() % (len + 1);
		last = (size_t)random() % (len + 2);
		opts = random() % 2 ? PCRE2_PARTIAL_HARD : 0;
		want = oracle(lit, n, subject, len, start, last, opts, ov);
		cr_assert_not_null(p = pattern_get(lit, n, PCRE2_LITERAL,
		    &err), "%s", err.message);
		got = pattern_match(m, p, subject, len, start, last, 100,
		    opts);
		cr_assert_eq(got, want, "\"%.*s\" in \"%.*s\" from %zu, "
		    "starts to %zu, %s: %d, PCRE2 %d", (int)n, lit, (int)len,
		    subject, start, last, opts ? "partial" : "whole", got,
		    want);
		if (want >= 0 || want == PCRE2_ERROR_PARTIAL)
			cr_assert(pattern_ovector(m)[0] == ov[0] &&
			    pattern_ovector(m)[1] == ov[1], "\"%.*s\" in "
			    "\"%.*s\" from %zu: at %zu-%zu, PCRE2 %zu-%zu",
			    (int)n, lit, (int)len, subject, start,
			    pattern_ovector(m)[0], pattern_ovector(m)[1],
			    ov[0], ov[1]);
		pattern_put(p);
	}
	pattern_matcher_free(m);
}
