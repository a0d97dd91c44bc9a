/*
 * Unit tests of the expect engine: a stream in a temporary log, bytes
 * added in pieces split at every point, and the loop turned by hand.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "daemon.h"
#include "expect.h"
#include "pattern.h"
#include "session.h"

/*
 * The longest a loop turn may take in these tests (ms): the loop's own
 * work is a few ms, a loaded machine stretches it, and what is caught
 * is the seconds a pattern held it before.
 */
#define TURN_BOUND	500

static struct session	sess;
static char		dir[] = "/tmp/dbgctl-expect-XXXXXX";
static int		outcomes;
static enum expect_result last;

/* A live session with an open console stream, in an empty daemon. */
static void
setup(void)
{
	char err[256];

	memset(&sess, 0, sizeof sess);
	memset(&dmn, 0, sizeof dmn);
	dmn.loop = uv_default_loop();
	TAILQ_INIT(&dmn.sessions);
	TAILQ_INIT(&dmn.sinks);
	TAILQ_INIT(&sess.sinks);
	sess.id = 1;
	sess.refs = 1;
	sess.state = S_RUNNING;
	sess.backend = backend_find("exec");
	session_stream_init(&sess);
	strcpy(dir, "/tmp/dbgctl-expect-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(dmn.state_dir, sizeof dmn.state_dir, "%s", dir);
	cr_assert_eq(mkdir(strcat(strcpy(err, dir), "/sessions"), 0700), 0);
	cr_assert_eq(session_stream_open(&sess, "console", err, sizeof err), 0,
	    "%s", err);
	outcomes = 0;
}

/* Remove the stream's files and the directory. */
static void
teardown(void)
{
	char cmd[256];

	session_stream_remove(&sess);
	session_stream_free(&sess);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(expect, .init = setup, .fini = teardown);

/* Count an outcome the loop delivered. */
static void
on_done(void *arg, struct expect *e, enum expect_result r)
{
	(void)arg;
	(void)e;
	outcomes++;
	last = r;
}

/* Add bytes to the stream and let a waiting expect look at them. */
static void
feed(struct expect *e, const char *data, size_t len)
{
	output_add(&sess.output, data, len);
	expect_wake(e);
	while (uv_run(dmn.loop, UV_RUN_NOWAIT) != 0)
		;
}

/*
 * expect_start, and where a loaded machine had spent the turn's inline
 * budget first (EXPECT_BUSY: matching goes on next turn), the loop turned
 * until that is done: the outcome it delivered, or EXPECT_MORE if the
 * expect waits for bytes. What matches does not hang on the machine's load.
 */
static enum expect_result
start_settled(struct expect *e)
{
	enum expect_result	r;
	int			before = outcomes;

	if ((r = expect_start(e, on_done, NULL)) != EXPECT_BUSY)
		return r;
	while (outcomes == before && uv_run(dmn.loop, UV_RUN_NOWAIT) != 0)
		;
	return outcomes > before ? last : EXPECT_MORE;
}

/* An expect for one pattern from offset 0. */
static struct expect *
pattern(const char *re)
{
	struct expect		*e;
	struct rpc_error	 err;

	e = expect_new(&sess, "console", &sess.output, 0);
	cr_assert_eq(expect_add(e, re, strlen(re), false, 0, &err), 0, "%s",
	    err.message);
	return e;
}

/* The answer to e's match, read back from the JSON text the daemon sends. */
static json_t *
answer(struct expect *e)
{
	json_error_t	 jerr;
	json_t		*a;
	size_t		 len;
	char		*text = expect_answer(e, &len);

	cr_assert_eq(strlen(text), len, "the answer's length");
	a = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	cr_assert_not_null(a, "not JSON (%s): %s", jerr.text, text);
	free(text);
	return a;
}

/* The string value of member key of the answer. */
static const char *
member(json_t *a, const char *key)
{
	return json_string_value(json_object_get(a, key));
}

/*
 * Split at every point, the number is never taken cut short: the
 * terminated pattern and the open-ended one both wait for the digit after.
 */
Test(expect, a_number_split_anywhere_is_never_cut_short)
{
	static const char	*res[] = { "counter=(\\d+)\\r\\n",
				    "counter=(\\d+)" };
	const char		*text = "xx counter=14390\r\nyy";
	size_t			 k, i, len = strlen(text);
	struct expect		*e;
	enum expect_result	 r;
	json_t			*a;

	for (i = 0; i < 2; i++)
		for (k = 0; k <= len; k++) {
			teardown();
			setup();
			e = pattern(res[i]);
			output_add(&sess.output, text, k);
			r = expect_start(e, on_done, NULL);
			if (r != EXPECT_MATCH) {
				/* Busy: this iteration's matching is used up. */
				cr_assert(r == EXPECT_MORE || r == EXPECT_BUSY,
				    "split %zu: %d", k, r);
				feed(e, text + k, len - k);
				cr_assert_eq(outcomes, 1, "split %zu: %d "
				    "outcomes", k, outcomes);
				cr_assert_eq(last, EXPECT_MATCH);
			}
			a = answer(e);
			cr_assert_str_eq(json_string_value(json_array_get(
			    json_object_get(a, "groups"), 0)), "14390",
			    "pattern %s split at %zu", res[i], k);
			cr_assert_eq(json_integer_value(json_object_get(a,
			    "offset")), 3);
			cr_assert_eq(json_integer_value(json_object_get(a,
			    "next")), i == 0 ? 18 : 16);
			cr_assert_str_eq(member(a, "before"), "xx ");
			json_decref(a);
			expect_free(e);
		}
}

/* Bytes one at a time: one match, found once, at the right place. */
Test(expect, a_pattern_written_a_byte_at_a_time_matches_once)
{
	const char	*text = "noise READY-42\n more";
	struct expect	*e = pattern("READY-(\\d+)\\n");
	size_t		 i;
	json_t		*a;

	cr_assert_eq(start_settled(e), EXPECT_MORE);
	for (i = 0; text[i] != '\0' && outcomes == 0; i++)
		feed(e, text + i, 1);
	cr_assert_eq(outcomes, 1);
	cr_assert_eq(i, 15, "matched after byte %zu", i);
	a = answer(e);
	cr_assert_str_eq(member(a, "text"), "READY-42\n");
	cr_assert_eq(json_integer_value(json_object_get(a, "offset")), 6);
	json_decref(a);
	expect_free(e);
}

/* Several patterns: the earliest start wins, and a tie goes to the first. */
Test(expect, the_earliest_match_wins_and_ties_go_to_the_first)
{
	struct expect		*e;
	struct rpc_error	 err;
	json_t			*a;

	output_add(&sess.output, "abc def ghi", 11);
	e = expect_new(&sess, "console", &sess.output, 0);
	cr_assert_eq(expect_add(e, "ghi", 3, false, 0, &err), 0);
	cr_assert_eq(expect_add(e, "d.f", 3, false, 0, &err), 0);
	cr_assert_eq(expect_add(e, "de", 2, true, 0, &err), 0);
	cr_assert_eq(start_settled(e), EXPECT_MATCH);
	a = answer(e);
	cr_assert_eq(json_integer_value(json_object_get(a, "index")), 1);
	cr_assert_str_eq(member(a, "text"), "def");
	json_decref(a);
	expect_free(e);
}

/* A literal is literal, and bytes that are not UTF-8 come back as base64. */
Test(expect, literals_and_bytes_that_are_not_text)
{
	struct expect		*e;
	struct rpc_error	 err;
	json_t			*a;

	output_add(&sess.output, "a.b* \xff\xfe!", 8);
	e = expect_new(&sess, "console", &sess.output, 0);
	cr_assert_eq(expect_add(e, ".b*", 3, true, 0, &err), 0);
	cr_assert_eq(start_settled(e), EXPECT_MATCH);
	a = answer(e);
	cr_assert_str_eq(member(a, "text"), ".b*");
	json_decref(a);
	expect_free(e);
	e = pattern("\\xff(.)");
	cr_assert_eq(start_settled(e), EXPECT_MATCH);
	a = answer(e);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(a,
	    "text"), "base64")), "//4=");
	json_decref(a);
	expect_free(e);
}

/* A partial match longer than the window is given up, and matching goes on. */
Test(expect, a_match_may_not_reach_back_past_the_window)
{
	struct expect	*e = pattern("BEGIN[^!]*END|tail");
	char		*fill = malloc(EXPECT_WINDOW);
	json_t		*a;

	memset(fill, 'x', EXPECT_WINDOW);
	output_add(&sess.output, "BEGIN", 5);
	cr_assert_eq(start_settled(e), EXPECT_MORE);
	feed(e, fill, EXPECT_WINDOW);
	feed(e, fill, 100);
	feed(e, "END tail", 8);
	cr_assert_eq(outcomes, 1);
	a = answer(e);
	cr_assert_str_eq(member(a, "text"), "tail");
	json_decref(a);
	expect_free(e);
	free(fill);
}

/* The stream's end: a match that could have grown is taken; else the end. */
Test(expect, at_the_end_a_match_is_taken_as_it_stands)
{
	struct expect	*e = pattern("n=(\\d+)");
	json_t		*a;

	output_add(&sess.output, "n=12", 4);
	cr_assert_eq(start_settled(e), EXPECT_MORE);
	output_end(&sess.output);
	feed(e, "", 0);
	cr_assert_eq(last, EXPECT_MATCH);
	a = answer(e);
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(a,
	    "groups"), 0)), "12");
	json_decref(a);
	expect_free(e);
	e = pattern("never");
	cr_assert_eq(start_settled(e), EXPECT_END);
	a = expect_answer_got(e);
	cr_assert_str_eq(member(a, "got"), "n=12");
	json_decref(a);
	expect_free(e);
}

/*
 * A later pattern's match is not taken while an earlier pattern could
 * still match before it (or at the same start): the answer is the one the
 * whole text gives, however it was split.
 */
Test(expect, an_earlier_pattern_that_may_still_match_is_waited_for)
{
	static const char	*pats[][2] = { { "abc", "ab" },
				    { "A[^Z]*Z", "B" } };
	static const char	*texts[] = { "abc", "xA BZ" };
	static const char	*wants[] = { "abc", "A BZ" };
	struct expect		*e;
	struct rpc_error	 err;
	size_t			 i, j, k, len;
	enum expect_result	 r;
	json_t			*a;

	for (i = 0; i < 2; i++) {
		len = strlen(texts[i]);
		for (k = 0; k < len; k++) {
			teardown();
			setup();
			e = expect_new(&sess, "console", &sess.output, 0);
			for (j = 0; j < 2; j++)
				cr_assert_eq(expect_add(e, pats[i][j],
				    strlen(pats[i][j]), false, 0, &err), 0);
			output_add(&sess.output, texts[i], k);
			r = expect_start(e, on_done, NULL);
			if (r != EXPECT_MATCH) {
				feed(e, texts[i] + k, len - k);
				cr_assert_eq(outcomes, 1, "%s split at %zu",
				    texts[i], k);
			}
			a = answer(e);
			cr_assert_str_eq(member(a, "text"), wants[i],
			    "%s split at %zu", texts[i], k);
			cr_assert_eq(json_integer_value(json_object_get(a,
			    "index")), 0);
			json_decref(a);
			expect_free(e);
		}
	}
}

/* An expect from past the stream's end got nothing, not the bytes before. */
Test(expect, from_past_the_end_got_is_empty_at_from)
{
	struct expect	*e;
	json_t		*a;

	output_add(&sess.output, "n=12", 4);
	output_end(&sess.output);
	e = expect_new(&sess, "console", &sess.output, 100);
	cr_assert_eq(expect_add(e, "never", 5, false, 0, &(struct rpc_error){
	    0 }), 0);
	cr_assert_eq(start_settled(e), EXPECT_END);
	a = expect_answer_got(e);
	cr_assert_str_eq(member(a, "got"), "");
	cr_assert_eq(json_integer_value(json_object_get(a, "got_offset")), 100);
	cr_assert_eq(json_integer_value(json_object_get(a, "from")), 100);
	json_decref(a);
	expect_free(e);
}

/*
 * A byte tried against 64 patterns is 64 bytes of a turn's budget: an
 * expect with many patterns on a backlog goes on over several turns
 * rather than holding the loop for all of them at once.
 */
Test(expect, many_patterns_share_a_turn_s_budget)
{
	struct expect		*e;
	struct rpc_error	 err;
	char			*fill = malloc(EXPECT_WINDOW), pat[32];
	char			 why[512] = "";
	size_t			 i;
	json_t			*a;

	memset(fill, 'x', EXPECT_WINDOW);
	output_add(&sess.output, fill, EXPECT_WINDOW);
	output_add(&sess.output, "END", 3);
	e = expect_new(&sess, "console", &sess.output, 0);
	for (i = 0; i < EXPECT_PATTERNS_MAX - 1; i++) {
		snprintf(pat, sizeof pat, "never%zu", i);
		cr_assert_eq(expect_add(e, pat, strlen(pat), false, 0, &err),
		    0);
	}
	cr_assert_eq(expect_add(e, "END", 3, false, 0, &err), 0);
	cr_assert_eq(expect_start(e, on_done, NULL), EXPECT_BUSY, "1 MiB "
	    "matched against 64 patterns in one call");
	while (outcomes == 0 && uv_run(dmn.loop, UV_RUN_NOWAIT) != 0)
		;
	cr_assert_eq(outcomes, 1);
	if (last == EXPECT_FAILED)
		expect_failure(e, why, sizeof why);
	cr_assert_eq(last, EXPECT_MATCH, "outcome %d: %s", last,
	    last == EXPECT_FAILED ? why : "");
	a = answer(e);
	cr_assert_str_eq(member(a, "text"), "END");
	cr_assert_eq(json_integer_value(json_object_get(a, "index")), 63);
	json_decref(a);
	expect_free(e);
	free(fill);
}

/* Flags that mean nothing to a literal are no error; caseless applies. */
Test(expect, a_literal_takes_every_flag)
{
	struct expect		*e;
	struct rpc_error	 err = { 0 };
	json_t			*a;

	output_add(&sess.output, "x A.B y", 7);
	e = expect_new(&sess, "console", &sess.output, 0);
	cr_assert_eq(expect_add(e, "a.b", 3, true, PCRE2_CASELESS |
	    PCRE2_MULTILINE | PCRE2_DOTALL | PCRE2_EXTENDED, &err), 0, "%s",
	    err.message);
	cr_assert_eq(start_settled(e), EXPECT_MATCH);
	a = answer(e);
	cr_assert_str_eq(member(a, "text"), "A.B");
	json_decref(a);
	expect_free(e);
}

/* Run the loop until the expect is answered; the longest turn it took (ms). */
static double
run_timed(void)
{
	double	longest = 0, ms;
	uint64_t t;

	while (outcomes == 0) {
		t = uv_hrtime();
		if (uv_run(dmn.loop, UV_RUN_NOWAIT) == 0 && outcomes == 0)
			cr_assert_fail("the loop ran dry with no outcome");
		ms = (uv_hrtime() - t) / 1e6;
		if (ms > longest)
			longest = ms;
	}
	return longest;
}

/* Run the loop until it has nothing left to do; the longest turn (ms). */
static double
run_dry(void)
{
	double	longest = 0, ms;
	uint64_t t;
	int	 alive = 1;

	while (alive != 0 && outcomes == 0) {
		t = uv_hrtime();
		alive = uv_run(dmn.loop, UV_RUN_NOWAIT);
		ms = (uv_hrtime() - t) / 1e6;
		if (ms > longest)
			longest = ms;
	}
	return longest;
}

/* Blocks of n a's and a b, len bytes in all: what a backtracking pattern chokes on. */
static char *
a_blocks(size_t n, size_t len)
{
	char	*s = malloc(len);
	size_t	 i;

	for (i = 0; i < len; i++)
		s[i] = (i + 1) % (n + 1) == 0 ? 'b' : 'a';
	return s;
}

/*
 * A pattern that backtracks exponentially fails with `limit`, naming
 * itself, however its steps are spread: too many from one start (29 a's
 * in a row), or tens of thousands from each of many starts (22 a's) that
 * add up past the expect's budget. No turn of the loop holds it long.
 */
Test(expect, a_backtracking_pattern_fails_and_never_holds_the_loop,
    .timeout = 60)
{
	static const size_t	 runs[] = { 29, 22 };
	static const char	*whys[] = { "backtracking steps", "budget" };
	struct expect		*e;
	char			*s, why[512];
	size_t			 i;
	double			 longest;

	for (i = 0; i < 2; i++) {
		teardown();
		setup();
		s = a_blocks(runs[i], 30000);
		e = pattern("(a|aa)+c");
		cr_assert_eq(start_settled(e), EXPECT_MORE);
		output_add(&sess.output, s, 30000);
		expect_wake(e);
		longest = run_timed();
		cr_assert_eq(last, EXPECT_FAILED, "%zu a's: outcome %d",
		    runs[i], last);
		expect_failure(e, why, sizeof why);
		cr_assert(strstr(why, "pattern 0 ((a|aa)+c)") != NULL, "%s", why);
		cr_assert(strstr(why, whys[i]) != NULL, "%s", why);
		/* A turn is 5 ms of matching; a loaded machine may stretch it. */
		cr_assert_lt(longest, TURN_BOUND, "%zu a's: a turn took %.1f ms",
		    runs[i], longest);
		expect_free(e);
		free(s);
	}
}

/*
 * A match whose start is far behind its end (more than a call looks
 * ahead at first) is still found, split anywhere, and so is one that only
 * the last try, without partial matching, can take.
 */
Test(expect, a_long_match_is_found_past_a_call_s_reach)
{
	static const char	*pats[] = { "(?s)BEGIN.*?END", "a\\d{50000}z" };
	char			*text = malloc(100010);
	size_t			 i, k, len;
	struct expect		*e;
	json_t			*a;

	memcpy(text, "BEGIN", 5);
	memset(text + 5, '7', 100000);
	memcpy(text + 100005, "END", 3);
	len = 100008;
	for (i = 0; i < 2; i++)
		for (k = 1; k < len; k += len / 7) {
			teardown();
			setup();
			if (i == 1) {
				text[5 + 49999] = 'a';
				text[5 + 49999 + 50001] = 'z';
			}
			e = pattern(pats[i]);
			output_add(&sess.output, text, k);
			cr_assert_neq(expect_start(e, on_done, NULL),
			    EXPECT_MATCH);
			output_add(&sess.output, text + k, len - k);
			expect_wake(e);
			run_timed();
			cr_assert_eq(last, EXPECT_MATCH, "%s split at %zu",
			    pats[i], k);
			a = answer(e);
			cr_assert_eq(json_integer_value(json_object_get(a,
			    "offset")), i == 0 ? 0 : 5 + 49999);
			json_decref(a);
			expect_free(e);
		}
	free(text);
}

/* The last try at the stream's end goes over a long window in turns, too. */
Test(expect, the_last_try_over_a_long_window_is_bounded)
{
	struct expect	*e = pattern("x[^!]*y|x[^!]*q");
	char		*s = malloc(EXPECT_WINDOW / 2);
	double		 longest;

	/* Every x starts a partial match that reaches the end: each try scans it. */
	memset(s, 'x', EXPECT_WINDOW / 2);
	output_add(&sess.output, s, EXPECT_WINDOW / 2);
	cr_assert_neq(expect_start(e, on_done, NULL), EXPECT_MATCH);
	output_end(&sess.output);
	expect_wake(e);
	output_add(&sess.output, "", 0);
	longest = run_timed();
	cr_assert(last == EXPECT_END || last == EXPECT_FAILED, "outcome %d",
	    last);
	cr_assert_lt(longest, TURN_BOUND, "a turn took %.1f ms", longest);
	expect_free(e);
	free(s);
}

/*
 * Expects asking for the same pattern share one compilation, which
 * stays a while for the next; different ones each cost their own.
 */
Test(expect, identical_patterns_share_one_compilation)
{
	struct expect	*e[8];
	size_t		 before, one, after, jit, i;
	char		 pat[64];

	snprintf(pat, sizeof pat, "shared-%d-(\\d+)", getpid());
	pattern_usage(&before, &jit);
	e[0] = pattern(pat);
	pattern_usage(&one, &jit);
	cr_assert_geq(one - before, expect_cost(e[0]));
	for (i = 1; i < 8; i++)
		e[i] = pattern(pat);
	pattern_usage(&after, &jit);
	cr_assert_eq(after, one, "8 expects of one pattern: %zu bytes, one "
	    "%zu", after - before, one - before);
	for (i = 0; i < 8; i++)
		expect_free(e[i]);
	e[0] = pattern(pat);
	pattern_usage(&after, &jit);
	cr_assert_eq(after, one, "the compilation kept for the next");
	expect_free(e[0]);
	snprintf(pat, sizeof pat, "other-%d-(\\d+)", getpid());
	e[0] = pattern(pat);
	pattern_usage(&after, &jit);
	cr_assert_gt(after, one, "another pattern costs its own");
	expect_free(e[0]);
}

/*
 * A pattern whose every start scans far before it fails (a run of a's
 * 100 KB long, and a pattern that needs a q before the next b): calls
 * that reach far try few starts, on the matcher's thread, so no turn
 * holds the loop; the quadratic whole ends on its budget, or, on a fast
 * machine, just within it, with every byte looked at and no match.
 */
Test(expect, a_pattern_that_scans_far_from_every_start_never_holds_the_loop,
    .timeout = 60)
{
	struct expect	*e = pattern("a[^b]*q");
	char		*s = a_blocks(100000, 500005), why[512];
	double		 longest;

	cr_assert_eq(start_settled(e), EXPECT_MORE);
	output_add(&sess.output, s, 500005);
	expect_wake(e);
	longest = run_dry();
	cr_assert(outcomes == 0 || last == EXPECT_FAILED, "outcome %d", last);
	if (outcomes == 1) {
		expect_failure(e, why, sizeof why);
		cr_assert(strstr(why, "budget") != NULL, "%s", why);
	}
	cr_assert_lt(longest, TURN_BOUND, "a turn took %.1f ms", longest);
	expect_free(e);
	free(s);
}

/*
 * Patterns whose every step may scan far (a possessive run, an atomic
 * group inside a lazy one), and many patterns at once: matched on the
 * matcher's thread, so no turn of the loop waits for them; the first,
 * quadratic at the stream's end (where the last try goes without partial
 * matching), fails with `limit` on its budget.
 */
Test(expect, patterns_whose_steps_scan_far_never_hold_the_loop,
    .timeout = 120)
{
	static const char	*res[] = { "a*+(?:b|c)", "a*?(?>a*+)c" };
	static const size_t	 runs[] = { 1000000, 3000 };
	struct expect		*e;
	struct rpc_error	 err;
	char			*s, pat[32];
	double			 longest;
	size_t			 i;

	for (i = 0; i < 3; i++) {
		teardown();
		setup();
		if (i < 2)
			e = pattern(res[i]);
		else {
			e = expect_new(&sess, "console", &sess.output, 0);
			for (size_t j = 0; j < EXPECT_PATTERNS_MAX; j++) {
				snprintf(pat, sizeof pat, "a[^b]*q%02zu", j);
				cr_assert_eq(expect_add(e, pat, strlen(pat),
				    false, 0, &err), 0);
			}
		}
		s = a_blocks(i == 0 ? runs[0] : runs[1], 1000000);
		cr_assert_neq(expect_start(e, on_done, NULL), EXPECT_MATCH);
		output_add(&sess.output, s, 1000000);
		if (i == 0)
			output_end(&sess.output);
		expect_wake(e);
		longest = run_dry();
		/* At the end it must fail; before, it may still wait, costly. */
		cr_assert(last == EXPECT_FAILED || (i > 0 && outcomes == 0),
		    "pattern set %zu: outcome %d", i, last);
		cr_assert_lt(longest, TURN_BOUND, "pattern set %zu: a turn took %.1f "
		    "ms", i, longest);
		expect_free(e);
		free(s);
	}
}

/*
 * The answer's text is written without a tree: its strings come back as
 * they were, quotes, backslashes and control bytes escaped; bytes that are
 * not UTF-8 come as {"base64": ...}, as a tree's dump gave them.
 */
Test(expect, an_answer_keeps_every_byte_of_its_text_and_before)
{
	static const char	 lead[] = "\xff\xfe \"q\" \\ \x01\x7f\t\r\b\f";
	static const char	 lit[] = "caf\xc3\xa9 \"ok\"\n";
	struct expect		*e;
	struct rpc_error	 err;
	json_t			*a, *before;
	const char		*b64;

	output_add(&sess.output, lead, sizeof lead - 1);
	output_add(&sess.output, lit, sizeof lit - 1);
	e = expect_new(&sess, "console", &sess.output, 0);
	cr_assert_eq(expect_add(e, lit, sizeof lit - 1, true, 0, &err), 0);
	cr_assert_eq(start_settled(e), EXPECT_MATCH);
	a = answer(e);
	cr_assert_str_eq(member(a, "text"), lit);
	cr_assert_str_eq(member(a, "stream"), "console");
	cr_assert_eq(json_integer_value(json_object_get(a, "offset")),
	    (json_int_t)(sizeof lead - 1));
	cr_assert_eq(json_integer_value(json_object_get(a, "next")),
	    (json_int_t)(sizeof lead + sizeof lit - 2));
	cr_assert_eq(json_array_size(json_object_get(a, "groups")), 0);
	cr_assert_eq(json_object_size(json_object_get(a, "named")), 0);
	before = json_object_get(a, "before");
	b64 = json_string_value(json_object_get(before, "base64"));
	cr_assert_not_null(b64, "bytes that are not UTF-8 come as base64");
	cr_assert_str_eq(b64, "//4gInEiIFwgAX8JDQgM");
	json_decref(a);
	expect_free(e);
	/* The same bytes without the two bad ones: a string, escaped. */
	e = expect_new(&sess, "console", &sess.output, 2);
	cr_assert_eq(expect_add(e, lit, sizeof lit - 1, true, 0, &err), 0);
	cr_assert_eq(start_settled(e), EXPECT_MATCH);
	a = answer(e);
	cr_assert_str_eq(member(a, "before"), lead + 2);
	cr_assert_eq(json_integer_value(json_object_get(a, "before_offset")),
	    2);
	json_decref(a);
	expect_free(e);
}
