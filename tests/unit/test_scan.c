/*
 * Unit tests of the pull JSON reader (proto/scan.c) of the client and of
 * the daemon's request parser, with jansson as the oracle: what it
 * writes, the reader must read back.
 */
#include <criterion/criterion.h>

#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <jansson.h>

#include "scan.h"

/* Start sc on a C string of text. */
static void
scan_test_init(struct scan *sc, const char *text)
{
	scan_init(sc, text, strlen(text));
}

/* Read text as one string value; assert it reads as want, the text spent. */
static void
scan_test_string_is(const char *text, const char *want)
{
	struct scan	 sc;
	char		*got;

	scan_test_init(&sc, text);
	got = scan_string(&sc);
	cr_assert_not_null(got, "%s: refused", text);
	cr_assert_not(sc.bad, "%s: marked bad", text);
	cr_assert_str_eq(got, want, "%s: read as \"%s\"", text, got);
	cr_assert_eq(scan_peek(&sc), 0, "%s: text left after the string",
	    text);
	free(got);
}

/* Assert text is refused as a string: NULL, and the reader marked bad. */
static void
scan_test_string_refused(const char *text)
{
	struct scan	 sc;
	char		*got;

	scan_test_init(&sc, text);
	got = scan_string(&sc);
	cr_assert_null(got, "%s: accepted as \"%s\"", text, got);
	cr_assert(sc.bad, "%s: refused but not marked bad", text);
}

/* jansson's reading of text as one value's string, malloc'd, or NULL. */
static char *
scan_test_jansson_string(const char *text)
{
	json_t	*v = json_loads(text, JSON_DECODE_ANY, NULL);
	char	*s = json_is_string(v) ? strdup(json_string_value(v)) : NULL;

	json_decref(v);
	return s;
}

Test(scan, strings_with_every_escape)
{
	static const char text[] = "\"q\\\"b\\\\s\\/b\\bf\\fn\\nr\\rt\\t.\"";
	char *oracle = scan_test_jansson_string(text);

	scan_test_string_is(text, "q\"b\\s/b\bf\fn\nr\rt\t.");
	cr_assert_str_eq(oracle, "q\"b\\s/b\bf\fn\nr\rt\t.", "jansson");
	free(oracle);
	scan_test_string_is("\"\"", "");
	scan_test_string_is("  \"plain\"  ", "plain");
	/* A raw DEL and raw UTF-8 are not control bytes to JSON. */
	scan_test_string_is("\"\x7f caf\xc3\xa9\"", "\x7f caf\xc3\xa9");
}

Test(scan, unicode_escapes_become_utf8)
{
	scan_test_string_is("\"\\u0041\"", "A");
	scan_test_string_is("\"caf\\u00e9\"", "caf\xc3\xa9");
	scan_test_string_is("\"\\u00C9\"", "\xc3\x89");
	scan_test_string_is("\"\\u20ac\"", "\xe2\x82\xac");
	scan_test_string_is("\"\\uffff\"", "\xef\xbf\xbf");
	/* U+1F600 as its UTF-16 surrogate pair. */
	scan_test_string_is("\"<\\ud83d\\ude00>\"", "<\xf0\x9f\x98\x80>");
	scan_test_string_is("\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf");
}

Test(scan, bad_strings_are_refused)
{
	static const char *bad[] = {
		"\"a\\u0000b\"",		/* NUL: the daemon refuses it too */
		"\"\\ud800\"",			/* a lone high surrogate */
		"\"\\ud800x\"",
		"\"\\ud800\\u0041\"",		/* high, then no low half */
		"\"\\udc00\"",			/* a lone low surrogate */
		"\"a\nb\"",			/* raw control bytes */
		"\"a\tb\"",
		"\"\x1f\"",
		"\"\xc0\xaf\"",			/* not UTF-8: overlong */
		"\"\xed\xa0\x80\"",		/* an encoded surrogate */
		"\"\xf4\x90\x80\x80\"",		/* past U+10FFFF */
		"\"\xc3\"",			/* cut short */
		"\"\xff\"",
		"\"\\x41\"",			/* escapes JSON has not */
		"\"\\a\"",
		"\"\\u12\"",			/* too few hex digits */
		"\"\\u12g4\"",
		"\"unterminated",
		"\"ends in a backslash\\",
		"\"ends in an escaped quote\\\"",
		"\"",
	};
	size_t	i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		scan_test_string_refused(bad[i]);
}

/*
 * Every ASCII byte, raw and escaped, and a two-byte character, at every
 * place of a 24-byte run, where the reader decides a word at a time: a
 * control byte is refused, anything else read as it is.
 */
Test(scan, every_byte_at_every_place_in_a_run)
{
	char	text[64], want[32];
	size_t	at;
	int	c;

	for (c = 1; c <= 0x80; c++)
		/* The two-byte character fits whole: its last place is 22. */
		for (at = 0; at + (c == 0x80) < 24; at++) {
			memset(want, 'x', 24);
			want[24] = '\0';
			if (c == 0x80)
				memcpy(want + at, "\xc3\xa9", 2);
			else
				want[at] = (char)c;
			if (c < 0x20) {
				snprintf(text, sizeof text, "\"%s\"", want);
				scan_test_string_refused(text);
				continue;
			}
			if (c == '"' || c == '\\')
				snprintf(text, sizeof text, "\"%.*s\\%s\"",
				    (int)at, want, want + at);
			else
				snprintf(text, sizeof text, "\"%s\"", want);
			scan_test_string_is(text, want);
		}
}

Test(scan, a_value_that_is_no_string_is_left_for_another_reader)
{
	struct scan	sc;
	long long	n = 0;

	scan_test_init(&sc, " 42");
	cr_assert_null(scan_string(&sc));
	cr_assert_not(sc.bad, "a number is no bad text");
	cr_assert(scan_int(&sc, &n) && n == 42, "the number is still there");
	scan_test_init(&sc, "null");
	cr_assert_null(scan_string(&sc));
	cr_assert(scan_word(&sc, "null") && !sc.bad, "null is still there");
}

/* Read text as an integer: whether it was one, *v, and whether it was bad. */
static bool
scan_test_int(const char *text, long long *v, bool *bad)
{
	struct scan	sc;
	bool		ok;

	scan_test_init(&sc, text);
	ok = scan_int(&sc, v);
	*bad = sc.bad;
	return ok;
}

Test(scan, integers_and_what_is_none)
{
	long long	v;
	bool		bad;

	cr_assert(scan_test_int("0", &v, &bad) && v == 0 && !bad);
	cr_assert(scan_test_int("-5", &v, &bad) && v == -5 && !bad);
	cr_assert(scan_test_int(" 1000,", &v, &bad) && v == 1000 && !bad);
	cr_assert(scan_test_int("9223372036854775807", &v, &bad) &&
	    v == INT64_MAX && !bad, "INT64_MAX");
	cr_assert(scan_test_int("-9223372036854775808", &v, &bad) &&
	    v == INT64_MIN && !bad, "INT64_MIN");
	cr_assert_not(scan_test_int("-9223372036854775809", &v, &bad),
	    "INT64_MIN - 1 read as %lld", v);
	cr_assert(bad, "an overflow is bad text");
	cr_assert_not(scan_test_int("9223372036854775808", &v, &bad),
	    "INT64_MAX + 1 read as %lld", v);
	cr_assert(bad, "an overflow is bad text");
	cr_assert_not(scan_test_int("99999999999999999999999", &v, &bad));
	cr_assert(bad, "an overflow is bad text");
	/* Reals and others are no integers, but not bad text either. */
	cr_assert_not(scan_test_int("1.5", &v, &bad), "1.5 read as %lld", v);
	cr_assert_not(bad, "1.5");
	cr_assert_not(scan_test_int("1e3", &v, &bad), "1e3 read as %lld", v);
	cr_assert_not(bad, "1e3");
	cr_assert_not(scan_test_int("2E1", &v, &bad), "2E1 read as %lld", v);
	cr_assert_not(scan_test_int("\"1\"", &v, &bad), "a string");
	cr_assert_not(scan_test_int("-", &v, &bad), "a lone minus");
	cr_assert_not(scan_test_int("", &v, &bad), "nothing");
}

Test(scan, skip_steps_over_any_value)
{
	static const char text[] = "{\"a\":[1,{\"b\":\"x\\\"]}\"},[],{}],"
	    "\"c\\\"{\":\"\\\\\",\"d\":[true,false,null,-1.5e+3,\"]\"]}"
	    " , 42";
	struct scan	sc;
	long long	n = 0;
	json_t		*oracle;

	oracle = json_loadb(text, strchr(text, ' ') - text, 0, NULL);
	cr_assert_not_null(oracle, "jansson: the value is JSON");
	json_decref(oracle);
	scan_test_init(&sc, text);
	cr_assert(scan_skip(&sc), "skip");
	cr_assert_not(sc.bad);
	cr_assert(scan_take(&sc, ','), "the comma after the value is next");
	cr_assert(scan_int(&sc, &n) && n == 42, "then 42");
	scan_test_init(&sc, "\"a \\\\\" 7");
	cr_assert(scan_skip(&sc) && scan_int(&sc, &n) && n == 7,
	    "a string ending in an escaped backslash");
	scan_test_init(&sc, "[1,2");
	cr_assert_not(scan_skip(&sc), "an unclosed array");
	cr_assert(sc.bad);
	scan_test_init(&sc, "{\"a\":}");
	cr_assert_not(scan_skip(&sc), "a member without a value");
	cr_assert(sc.bad);
	scan_test_init(&sc, "\"open");
	cr_assert_not(scan_skip(&sc), "an unterminated string");
	cr_assert(sc.bad);
}

/* n arrays (or objects) nested, inner (or nothing) innermost; malloc'd. */
static char *
scan_test_nested(int n, bool objects, const char *inner)
{
	const char	*open = objects ? "{\"k\":" : "[";
	size_t		 len = (size_t)n * (strlen(open) + 1) + strlen(inner) + 1;
	char		*s = malloc(len), *p = s;
	int		 i;

	for (i = 0; i < n; i++)
		p = stpcpy(p, open);
	p = stpcpy(p, inner);
	for (i = 0; i < n; i++)
		*p++ = objects ? '}' : ']';
	*p = '\0';
	return s;
}

/* Whether scan_skip accepts text, all of it. */
static bool
scan_test_skips(const char *text)
{
	struct scan sc;

	scan_test_init(&sc, text);
	return scan_skip(&sc) && !sc.bad && scan_peek(&sc) == 0;
}

Test(scan, skip_refuses_nesting_past_64)
{
	static const struct {
		bool		 objects;
		const char	*inner;
	} kinds[] = { { false, "" }, { false, "1" }, { true, "1" },
	    { false, "\"[\"" } };
	char	*deep;
	size_t	 i;

	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		deep = scan_test_nested(64, kinds[i].objects, kinds[i].inner);
		cr_assert(scan_test_skips(deep), "64 deep refused: %s", deep);
		free(deep);
		deep = scan_test_nested(65, kinds[i].objects, kinds[i].inner);
		cr_assert_not(scan_test_skips(deep), "65 deep accepted: %s",
		    deep);
		free(deep);
	}
	/* Far deeper than the stack should ever be asked to go. */
	deep = scan_test_nested(100000, false, "");
	cr_assert_not(scan_test_skips(deep), "100000 deep accepted");
	free(deep);
}

Test(scan, members_and_elements_walk_an_object)
{
	static const char text[] = " { \"a\" : 1 , \"b\":[1, 2],\"c\":{}} ";
	struct scan	 sc;
	bool		 first = true, efirst = true;
	long long	 n, sum = 0;
	char		*key;

	scan_test_init(&sc, text);
	cr_assert(scan_take(&sc, '{'));
	key = scan_member(&sc, &first);
	cr_assert_str_eq(key, "a");
	free(key);
	cr_assert(scan_int(&sc, &n) && n == 1);
	key = scan_member(&sc, &first);
	cr_assert_str_eq(key, "b");
	free(key);
	cr_assert(scan_take(&sc, '['));
	while (scan_element(&sc, &efirst)) {
		cr_assert(scan_int(&sc, &n), "an element of b");
		sum += n;
	}
	cr_assert_eq(sum, 3, "b's elements");
	key = scan_member(&sc, &first);
	cr_assert_str_eq(key, "c");
	free(key);
	cr_assert(scan_skip(&sc), "c's value");
	cr_assert_null(scan_member(&sc, &first), "the end of the object");
	cr_assert_not(sc.bad, "a good object marked bad");
	cr_assert_eq(scan_peek(&sc), 0, "text left after the object");
	scan_test_init(&sc, "[]");
	efirst = true;
	cr_assert(scan_take(&sc, '[') && !scan_element(&sc, &efirst) &&
	    !sc.bad, "an empty array");
}

/* Walk an object's members, skipping values; whether it ended well. */
static bool
scan_test_walk(const char *text)
{
	struct scan	 sc;
	bool		 first = true;
	char		*key;

	scan_test_init(&sc, text);
	if (!scan_take(&sc, '{'))
		return false;
	while ((key = scan_member(&sc, &first)) != NULL) {
		free(key);
		if (!scan_skip(&sc))
			return false;
	}
	return !sc.bad;
}

Test(scan, malformed_objects_are_bad)
{
	static const char *bad[] = { "{\"a\" 1}", "{\"a\":1 \"b\":2}",
	    "{\"a\":1,}", "{,\"a\":1}", "{a:1}", "{\"a\":1", "{\"a\":}",
	    "{\"a\":[1 2]}" };
	size_t	i;

	cr_assert(scan_test_walk("{\"a\":1,\"b\":[1,2],\"c\":{}}"));
	cr_assert(scan_test_walk("{}"));
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_not(scan_test_walk(bad[i]), "accepted: %s", bad[i]);
}

/*
 * Append code point cp to out as UTF-8, written by glibc's converter (an
 * oracle of its own, not the reader's encoder again); the bytes written.
 */
static size_t
scan_test_utf8(char *out, unsigned long cp)
{
	mbstate_t	st;
	size_t		n;

	memset(&st, 0, sizeof st);
	n = wcrtomb(out, (wchar_t)cp, &st);
	cr_assert_neq(n, (size_t)-1, "wcrtomb U+%lX (is C.UTF-8 there?)", cp);
	return n;
}

/* A random code point of n UTF-8 bytes (2 to 4), never a surrogate. */
static unsigned long
scan_test_code_point(int n)
{
	unsigned long	cp;

	if (n == 2)
		return 0x80 + (unsigned long)random() % (0x800 - 0x80);
	if (n == 3) {
		do
			cp = 0x800 + (unsigned long)random() % (0x10000 - 0x800);
		while (cp >= 0xd800 && cp <= 0xdfff);
		return cp;
	}
	return 0x10000 + (unsigned long)random() % (0x110000 - 0x10000);
}

/* A random string of bytes 0x01-0x7f and some UTF-8 characters, in buf. */
static void
scan_test_random(char *buf, size_t max)
{
	size_t	len = (size_t)random() % (max / 8), o = 0;

	while (o < len) {
		if (random() % 5 == 0)
			o += scan_test_utf8(buf + o,
			    scan_test_code_point(2 + (int)(random() % 3)));
		else
			buf[o++] = (char)(1 + random() % 0x7f);
	}
	buf[o] = '\0';
}

/*
 * Whatever string jansson writes, as UTF-8 or all in \u escapes (pairs for
 * characters past U+FFFF), reads back as the original and as jansson
 * reads it.
 */
Test(scan, jansson_strings_round_trip)
{
	static const size_t	flags[] = { JSON_ENCODE_ANY,
	    JSON_ENCODE_ANY | JSON_ENSURE_ASCII,
	    JSON_ENCODE_ANY | JSON_ESCAPE_SLASH };
	struct scan	 sc;
	char		 orig[2048], *text, *got, *oracle;
	json_t		*v;
	int		 i;
	size_t		 f;

	cr_assert_not_null(setlocale(LC_CTYPE, "C.UTF-8"), "no C.UTF-8 locale");
	srandom(20261201);
	for (i = 0; i < 400; i++) {
		scan_test_random(orig, sizeof orig);
		v = json_string(orig);
		cr_assert_not_null(v, "string %d is not UTF-8", i);
		for (f = 0; f < sizeof flags / sizeof flags[0]; f++) {
			text = json_dumps(v, flags[f]);
			scan_test_init(&sc, text);
			got = scan_string(&sc);
			cr_assert_not_null(got, "string %d refused: %s", i,
			    text);
			cr_assert_str_eq(got, orig, "string %d read from %s", i,
			    text);
			cr_assert(!sc.bad && scan_peek(&sc) == 0, "string %d: "
			    "the text not spent", i);
			oracle = scan_test_jansson_string(text);
			cr_assert_str_eq(got, oracle, "string %d: jansson", i);
			free(oracle);
			free(got);
			free(text);
		}
		json_decref(v);
	}
}

/*
 * scan_plain hands over a string of printable ASCII without escapes in
 * place, and leaves anything else (an escape, a control or non-ASCII
 * byte, a number) untaken for another reader; scan_done says whether only
 * white space is left; a leading zero is no integer.
 */
Test(scan, plain_strings_the_end_and_leading_zeros)
{
	struct scan	 sc;
	const char	*s;
	size_t		 n;
	long long	 v;

	scan_test_init(&sc, " \"a b/c\" ");
	cr_assert(scan_plain(&sc, &s, &n) && n == 5 && memcmp(s, "a b/c", 5) ==
	    0, "a plain string");
	cr_assert(scan_done(&sc), "only white space is left");
	scan_test_init(&sc, "\"a\\nb\"");
	cr_assert(!scan_plain(&sc, &s, &n) && !sc.bad && *sc.p == '"',
	    "an escape is not plain, and nothing was taken");
	scan_test_init(&sc, "\"caf\xc3\xa9\"");
	cr_assert(!scan_plain(&sc, &s, &n), "non-ASCII is not plain");
	scan_test_init(&sc, "\"tab\there\"");
	cr_assert(!scan_plain(&sc, &s, &n), "a control byte is not plain");
	scan_test_init(&sc, "12");
	cr_assert(!scan_plain(&sc, &s, &n) && scan_int(&sc, &v) && v == 12,
	    "a number is left for scan_int");
	cr_assert(scan_done(&sc), "the number was all");
	scan_test_init(&sc, "\"open");
	cr_assert(!scan_plain(&sc, &s, &n), "an unterminated string");
	scan_test_init(&sc, "1 x");
	cr_assert(scan_int(&sc, &v) && !scan_done(&sc), "something is left");
	scan_test_init(&sc, "01");
	cr_assert(!scan_int(&sc, &v), "01 is no JSON number");
	scan_test_init(&sc, "0");
	cr_assert(scan_int(&sc, &v) && v == 0 && scan_done(&sc), "0 is one");
	scan_test_init(&sc, "-0");
	cr_assert(scan_int(&sc, &v) && v == 0, "-0 is one");
}
