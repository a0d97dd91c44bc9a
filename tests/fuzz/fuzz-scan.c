/*
 * libFuzzer target: the pull JSON reader (proto/scan.c), jansson the oracle.
 *
 * The input is one JSON text. Read as one string, one integer and one plain
 * string, whatever the reader accepts jansson must read, from the same
 * bytes, as the same value; read as a whole value (scan_member,
 * scan_element, scan_string, scan_int, scan_word, as the client's readers
 * walk), the tree built must be jansson's. The other way: a text jansson
 * reads as one value without reals, duplicate keys or a NUL byte (where
 * jansson stops), no deeper than the reader's 64, the reader must read
 * whole, to the same tree, and scan_skip must step over it all.
 */
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "scan.h"

/* How deep the reader's walk goes (scan.c's SCAN_DEPTH). */
#define SCAN_FUZZ_DEPTH 64

/* jansson's reading of len bytes of text as one value, or NULL. */
static json_t *
scan_fuzz_jansson(const char *text, size_t len)
{
	return json_loadb(text, len, JSON_DECODE_ANY, NULL);
}

/* Whether v holds a real, or nests deeper than depth. */
static bool
scan_fuzz_beyond(json_t *v, int depth)
{
	const char	*k;
	json_t		*e;
	size_t		 i;

	if (json_is_real(v))
		return true;
	if (!json_is_object(v) && !json_is_array(v))
		return false;
	if (depth >= SCAN_FUZZ_DEPTH)
		return true;
	json_object_foreach(v, k, e)
		if (scan_fuzz_beyond(e, depth + 1))
			return true;
	json_array_foreach(v, i, e)
		if (scan_fuzz_beyond(e, depth + 1))
			return true;
	return false;
}

/* Build the next value as the reader reads it; NULL if it does not. */
static json_t *
scan_fuzz_build(struct scan *sc, int depth)
{
	json_t		*v, *e;
	char		*s, c = scan_peek(sc);
	long long	 n;
	bool		 first = true;

	if ((c == '{' || c == '[') && depth >= SCAN_FUZZ_DEPTH)
		return NULL;
	if (c == '"') {
		if ((s = scan_string(sc)) == NULL)
			return NULL;
		v = json_string(s);
		fuzz_check(v != NULL, "scan_string gave text jansson takes "
		    "for no UTF-8: \"%.40s\"", s);
		free(s);
		return v;
	}
	if (c == '{') {
		(void)scan_take(sc, '{');
		v = json_object();
		while ((s = scan_member(sc, &first)) != NULL) {
			if ((e = scan_fuzz_build(sc, depth + 1)) == NULL) {
				free(s);
				json_decref(v);
				return NULL;
			}
			json_object_set_new(v, s, e);
			free(s);
		}
		return sc->bad ? (json_decref(v), NULL) : v;
	}
	if (c == '[') {
		(void)scan_take(sc, '[');
		v = json_array();
		while (scan_element(sc, &first)) {
			if ((e = scan_fuzz_build(sc, depth + 1)) == NULL) {
				json_decref(v);
				return NULL;
			}
			json_array_append_new(v, e);
		}
		return sc->bad ? (json_decref(v), NULL) : v;
	}
	if (scan_word(sc, "true"))
		return json_true();
	if (scan_word(sc, "false"))
		return json_false();
	if (scan_word(sc, "null"))
		return json_null();
	return scan_int(sc, &n) ? json_integer(n) : NULL;
}

/* What scan_string, scan_int and scan_plain accept, jansson reads the same. */
static void
scan_fuzz_one(const char *text, size_t size)
{
	struct scan	 sc;
	json_t		*o;
	const char	*s;
	char		*got;
	long long	 v;
	size_t		 n, used;

	scan_init(&sc, text, size);
	if ((got = scan_string(&sc)) != NULL) {
		used = (size_t)(sc.p - text);
		o = scan_fuzz_jansson(text, used);
		fuzz_check(json_is_string(o) && json_string_length(o) ==
		    strlen(got) && memcmp(json_string_value(o), got,
		    strlen(got)) == 0, "scan_string read %zu bytes as \"%.40s\","
		    " jansson as %s", used, got, o == NULL ? "no JSON" :
		    json_is_string(o) ? json_string_value(o) : "no string");
		json_decref(o);
		free(got);
	}
	scan_init(&sc, text, size);
	if (scan_int(&sc, &v)) {
		used = (size_t)(sc.p - text);
		o = scan_fuzz_jansson(text, used);
		fuzz_check(json_is_integer(o) && json_integer_value(o) == v,
		    "scan_int read %zu bytes as %lld, jansson otherwise", used,
		    v);
		json_decref(o);
	}
	scan_init(&sc, text, size);
	if (scan_plain(&sc, &s, &n)) {
		used = (size_t)(sc.p - text);
		o = scan_fuzz_jansson(text, used);
		fuzz_check(json_is_string(o) && json_string_length(o) == n &&
		    memcmp(json_string_value(o), s, n) == 0, "scan_plain read "
		    "%zu bytes as \"%.*s\", jansson otherwise", used, (int)n, s);
		json_decref(o);
	}
}

/* The whole text: the reader's tree is jansson's, and jansson's the reader's. */
static void
scan_fuzz_whole(const char *text, size_t size)
{
	struct scan	 sc;
	json_t		*got, *o = scan_fuzz_jansson(text, size);
	bool		 whole;
	char		*shown;

	scan_init(&sc, text, size);
	got = scan_fuzz_build(&sc, 0);
	whole = got != NULL && scan_done(&sc);
	if (whole) {
		shown = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
		fuzz_check(o != NULL && json_equal(got, o), "the reader read "
		    "%zu bytes whole as %.200s, jansson %s", size, shown,
		    o == NULL ? "refuses them" : "otherwise");
		free(shown);
	}
	/*
	 * jansson takes a NUL byte for the end of the text: no oracle there;
	 * nor where a duplicate key hid a value of the text from the tree.
	 */
	json_decref(o);
	o = json_loadb(text, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
	    NULL);
	if (o != NULL && !scan_fuzz_beyond(o, 0) && memchr(text, '\0', size) ==
	    NULL) {
		fuzz_check(whole, "jansson reads %zu bytes as one value, the "
		    "reader does not", size);
		scan_init(&sc, text, size);
		fuzz_check(scan_skip(&sc) && scan_done(&sc), "scan_skip does "
		    "not step over a value jansson reads");
	}
	json_decref(got);
	json_decref(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	scan_fuzz_one((const char *)data, size);
	scan_fuzz_whole((const char *)data, size);
	return 0;
}
