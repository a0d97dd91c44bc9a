/*
 * Unit tests of the compact JSON writer (proto/jdump.c): every reply and
 * notification is its text, which must be jansson's JSON_COMPACT text
 * byte for byte, fail where jansson fails, and never loop.
 */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jdump.h"

/* A growing buffer for jdump's callback. */
struct jd_buf {
	char	*p;
	size_t	 len;
};

/* Append n bytes to the test's buffer. */
static int
jd_append(const char *s, size_t n, void *data)
{
	struct jd_buf *b = data;

	b->p = realloc(b->p, b->len + n + 1);
	cr_assert_not_null(b->p);
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* Assert jdump writes v exactly as jansson does, or fails where it fails. */
static void
jd_same(const json_t *v, const char *what)
{
	struct jd_buf	 b = { NULL, 0 };
	char		*want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	int		 rc = jdump(v, jd_append, &b);

	if (want == NULL)
		cr_assert_eq(rc, -1, "%s: jansson fails, jdump wrote %s", what,
		    b.p != NULL ? b.p : "(nothing)");
	else {
		cr_assert_eq(rc, 0, "%s: jdump failed where jansson wrote %s",
		    what, want);
		cr_assert_eq(b.len, strlen(want), "%s: jdump wrote %zu bytes, "
		    "jansson %zu:\n%s\n%s", what, b.len, strlen(want), b.p,
		    want);
		cr_assert(memcmp(b.p, want, b.len) == 0, "%s:\njdump   %s\n"
		    "jansson %s", what, b.p, want);
	}
	free(want);
	free(b.p);
}

/* A callback that fails after some bytes. */
static int
jd_fail_after(const char *s, size_t n, void *data)
{
	size_t *left = data;

	(void)s;
	if (n > *left)
		return -1;
	*left -= n;
	return 0;
}

/* A deterministic generator, so a failure names the seed it came from. */
static uint32_t
jd_rand(uint32_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/* A random string: plain runs, every escape, multibyte characters, NULs. */
static json_t *
jd_rand_string(uint32_t *st)
{
	static const char *const pieces[] = {
		"plain", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x01",
		"\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"\xef\xbf\xbf", "\xed\x9f\xbf", "\xc2\x80", " ", "0123456789",
		"\xe2\x80\xa8",
	};
	char	buf[256];
	size_t	len = 0, n = jd_rand(st) % 12, i;

	for (i = 0; i < n; i++) {
		const char *p = pieces[jd_rand(st) % (sizeof pieces /
		    sizeof pieces[0])];

		if (jd_rand(st) % 16 == 0 && len < sizeof buf - 1) {
			buf[len++] = '\0';
			continue;
		}
		if (len + strlen(p) >= sizeof buf)
			break;
		memcpy(buf + len, p, strlen(p));
		len += strlen(p);
	}
	return json_stringn(buf, len);
}

/* A random tree of depth at most depth. */
static json_t *
jd_rand_tree(uint32_t *st, int depth)
{
	json_t	*v, *key;
	size_t	 n, i;

	switch (jd_rand(st) % (depth > 0 ? 9 : 7)) {
	case 0: return json_null();
	case 1: return json_boolean(jd_rand(st) & 1);
	case 2: return json_integer((json_int_t)jd_rand(st) << 20 ^
		    (json_int_t)jd_rand(st) * (jd_rand(st) & 1 ? -1 : 1));
	case 3: return json_real((double)jd_rand(st) / ((jd_rand(st) % 1000) +
		    1) * (jd_rand(st) & 1 ? -1e-7 : 1e9));
	case 4: case 5: case 6: return jd_rand_string(st);
	case 7:
		v = json_array();
		n = jd_rand(st) % 5;
		for (i = 0; i < n; i++)
			json_array_append_new(v, jd_rand_tree(st, depth - 1));
		return v;
	default:
		v = json_object();
		n = jd_rand(st) % 5;
		for (i = 0; i < n; i++) {
			key = jd_rand_string(st);
			json_object_setn_new(v, json_string_value(key),
			    json_string_length(key), jd_rand_tree(st,
			    depth - 1));
			json_decref(key);
		}
		return v;
	}
}

/* Every ASCII byte, and a two-byte character, at every place of a run. */
Test(jdump, every_ascii_byte_at_every_place_in_a_run)
{
	char	s[24], what[48];
	json_t	*v;
	size_t	at;
	int	c;

	for (c = 0; c <= 0x80; c++)
		for (at = 0; at < sizeof s - 1; at++) {
			memset(s, 'x', sizeof s);
			if (c == 0x80)
				memcpy(s + at, "\xc3\xa9", 2);
			else
				s[at] = (char)c;
			v = json_stringn(s, sizeof s);
			snprintf(what, sizeof what, "byte 0x%02x at %zu", c, at);
			jd_same(v, what);
			json_decref(v);
		}
}

Test(jdump, utf8_at_its_edges_passes_and_broken_utf8_fails_as_in_jansson)
{
	static const char *const bad[] = {
		"\xc0\x80", "\xc1\xbf", "\x80", "\xe0\x80\x80", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xe2\x82", "a\xff",
		"\xf0\x9f\x98",
	};
	static const char *const good[] = {
		"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf",
		"\xee\x80\x80", "\xef\xbf\xbf", "\xf0\x90\x80\x80",
		"\xf4\x8f\xbf\xbf", "x\xc3\xa9\"y",
	};
	json_t	*v;
	size_t	 i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		v = json_string(good[i]);
		cr_assert_not_null(v, "good[%zu] is UTF-8", i);
		jd_same(v, good[i]);
		json_decref(v);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		v = json_string_nocheck(bad[i]);
		jd_same(v, "a string that is not UTF-8");
		json_decref(v);
		/* Deep in a tree, too. */
		v = json_pack("{s:[{s:i}]}", "k", "", 1);
		json_object_set_new(json_array_get(json_object_get(v, "k"), 0),
		    "s", json_string_nocheck(bad[i]));
		jd_same(v, "a value deep in a tree that is not UTF-8");
		/*
		 * A key: jansson writes a broken line (it drops the key's
		 * failure), where jdump fails as for a value.
		 */
		json_object_set_new_nocheck(json_array_get(json_object_get(v,
		    "k"), 0), bad[i], json_true());
		cr_assert_eq(jdump(v, jd_fail_after, &(size_t){ 1 << 20 }), -1,
		    "a key that is not UTF-8 was written");
		json_decref(v);
	}
}

Test(jdump, numbers_and_literals_as_jansson_spells_them)
{
	const double	reals[] = { 0.0, -0.0, 1.0, 0.1, 1e300, -2.5e-300,
			    123456789.125, 1.0 / 3.0 };
	const long long	ints[] = { 0, 1, -1, 9, 10, LLONG_MAX, LLONG_MIN,
			    -1000000000000LL };
	json_t		*v;
	size_t		 i;

	for (i = 0; i < sizeof reals / sizeof reals[0]; i++) {
		v = json_real(reals[i]);
		jd_same(v, "a real");
		json_decref(v);
	}
	for (i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		v = json_integer(ints[i]);
		jd_same(v, "an integer");
		json_decref(v);
	}
	jd_same(json_true(), "true");
	jd_same(json_false(), "false");
	jd_same(json_null(), "null");
	v = json_pack("{s:[], s:{}, s:[[]], s:{s:{}}}", "a", "b", "c", "d",
	    "e");
	jd_same(v, "empty containers");
	json_decref(v);
}

Test(jdump, random_trees_match_jansson_byte_for_byte)
{
	char		what[64];
	uint32_t	seed, st;
	json_t		*v;

	for (seed = 1; seed <= 3000; seed++) {
		st = seed * 2654435761u;
		v = jd_rand_tree(&st, 5);
		snprintf(what, sizeof what, "tree of seed %u", seed);
		jd_same(v, what);
		json_decref(v);
	}
}

Test(jdump, a_tree_as_deep_as_a_request_may_be_is_written)
{
	json_t	*root = json_array(), *v = root, *in;
	int	 i;

	for (i = 0; i < 2000; i++) {
		in = i % 2 ? json_array() : json_object();
		if (json_is_array(v))
			json_array_append_new(v, in);
		else
			json_object_set_new(v, "k", in);
		v = in;
	}
	jd_same(root, "2000 deep");
	json_decref(root);
}

Test(jdump, a_cycle_fails_and_does_not_run_away)
{
	json_t		*a = json_array(), *b = json_array();
	struct jd_buf	 buf = { NULL, 0 };

	json_array_append(a, b);
	json_array_append(b, a);
	cr_assert_eq(jdump(a, jd_append, &buf), -1, "a cycle was written");
	free(buf.p);
	json_array_clear(b);
	json_decref(b);
	json_decref(a);
}

Test(jdump, a_callbacks_failure_is_the_dumps)
{
	json_t	*v = json_pack("{s:s, s:[i, s]}", "a", "x\ny", "b", 7, "zz");
	size_t	 left, i;

	for (i = 0; i < 20; i++) {
		left = i;
		cr_assert_eq(jdump(v, jd_fail_after, &left), -1, "a callback "
		    "failing after %zu bytes was not heard", i);
	}
	left = 1000;
	cr_assert_eq(jdump(v, jd_fail_after, &left), 0);
	json_decref(v);
}
