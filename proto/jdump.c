/*
 * Compact JSON written as jansson's JSON_COMPACT writes it, byte for
 * byte, but a run of plain bytes at a time: jansson decodes every
 * character of a string to see whether it needs an escape, and keeps a
 * table of the containers it is inside, which made a 4 KiB memory read's
 * reply (14 KB of base64 and hex) cost 170 us to write.
 */
#include <stdint.h>
#include <string.h>

#include "fmt.h"
#include "jdump.h"
#include "scan.h"

/* Deeper than any tree parsed (jansson's 2048) and built on it: a cycle. */
#define JDUMP_DEPTH_MAX 4096

/* Which bytes end a plain run: controls, '"', '\\' and non-ASCII. */
static const uint8_t jdump_stop[256] = {
	[0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 1,
};

/* One byte below 0x20, '"' or '\\' escaped as jansson writes it. */
static int
jdump_escape(unsigned char c, json_dump_callback_t cb, void *data)
{
	static const char	hex[] = "0123456789ABCDEF";
	char			e[6] = { '\\', 'u', '0', '0', 0, 0 };

	switch (c) {
	case '"': case '\\': e[1] = (char)c; break;
	case '\b': e[1] = 'b'; break;
	case '\f': e[1] = 'f'; break;
	case '\n': e[1] = 'n'; break;
	case '\r': e[1] = 'r'; break;
	case '\t': e[1] = 't'; break;
	default:
		e[4] = hex[c >> 4];
		e[5] = hex[c & 15];
		return cb(e, 6, data);
	}
	return cb(e, 2, data);
}

/* A string of len bytes, quoted and escaped; -1 if it is not UTF-8. */
int
jdump_string(const char *s, size_t len, json_dump_callback_t cb, void *data)
{
	const char	*run = s, *end = s + len;
	uint64_t	 w;
	size_t		 n;

	if (cb("\"", 1, data) != 0)
		return -1;
	while (s < end) {
		if (end - s >= 8) {
			memcpy(&w, s, 8);
			if (!scan_word_stops(w)) {
				s += 8;
				continue;
			}
		}
		if (!jdump_stop[(unsigned char)*s]) {
			s++;
			continue;
		}
		if ((unsigned char)*s >= 0x80) {
			if ((n = scan_utf8_len(s, end)) == 0)
				return -1;
			s += n;
			continue;
		}
		if ((s > run && cb(run, (size_t)(s - run), data) != 0) ||
		    jdump_escape((unsigned char)*s, cb, data) != 0)
			return -1;
		run = ++s;
	}
	if (s > run && cb(run, (size_t)(s - run), data) != 0)
		return -1;
	return cb("\"", 1, data);
}

static int jdump_value(const json_t *, json_dump_callback_t, void *, int);

/* An object's members in jansson's order, which is the order they were set. */
static int
jdump_object(const json_t *v, json_dump_callback_t cb, void *data, int depth)
{
	const char	*key;
	json_t		*m;
	void		*iter;
	bool		 first = true;

	if (cb("{", 1, data) != 0)
		return -1;
	for (iter = json_object_iter((json_t *)v); iter != NULL;
	    iter = json_object_iter_next((json_t *)v, iter)) {
		key = json_object_iter_key(iter);
		m = json_object_iter_value(iter);
		if ((!first && cb(",", 1, data) != 0) || jdump_string(key,
		    json_object_iter_key_len(iter), cb, data) != 0 ||
		    cb(":", 1, data) != 0 || jdump_value(m, cb, data, depth) != 0)
			return -1;
		first = false;
	}
	return cb("}", 1, data);
}

/* An array's elements. */
static int
jdump_array(const json_t *v, json_dump_callback_t cb, void *data, int depth)
{
	size_t i;

	if (cb("[", 1, data) != 0)
		return -1;
	for (i = 0; i < json_array_size(v); i++)
		if ((i > 0 && cb(",", 1, data) != 0) ||
		    jdump_value(json_array_get(v, i), cb, data, depth) != 0)
			return -1;
	return cb("]", 1, data);
}

/* Any value; a real as jansson spells it, which it is left to. */
static int
jdump_value(const json_t *v, json_dump_callback_t cb, void *data, int depth)
{
	char		 num[24];
	const char	*p;

	if (v == NULL || depth > JDUMP_DEPTH_MAX)
		return -1;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return jdump_object(v, cb, data, depth + 1);
	case JSON_ARRAY:
		return jdump_array(v, cb, data, depth + 1);
	case JSON_STRING:
		return jdump_string(json_string_value(v), json_string_length(v),
		    cb, data);
	case JSON_INTEGER:
		p = fmt_int(json_integer_value(v), num);
		return cb(p, (size_t)(num + 23 - p), data);
	case JSON_TRUE:
		return cb("true", 4, data);
	case JSON_FALSE:
		return cb("false", 5, data);
	case JSON_NULL:
		return cb("null", 4, data);
	case JSON_REAL:
		return json_dump_callback(v, cb, data, JSON_COMPACT |
		    JSON_ENCODE_ANY);
	}
	return -1;
}

/*
 * v as json_dump_callback(v, cb, data, JSON_COMPACT | JSON_ENCODE_ANY)
 * writes it; -1 where that fails (a string not UTF-8, cb's failure), or
 * deeper than any tree the daemon or client makes.
 */
int
jdump(const json_t *v, json_dump_callback_t cb, void *data)
{
	return jdump_value(v, cb, data, 0);
}
