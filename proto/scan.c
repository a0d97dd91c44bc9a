/*
 * A pull reader of JSON text, for text too big or too common to build as
 * trees (a list of thousands of sessions, every request line): it walks
 * the text once, hands over the strings and numbers asked for, and skips
 * the rest without allocating.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

/* Nesting past which a skipped value is refused rather than walked. */
#define SCAN_DEPTH 64

/* Start reading len bytes of text. */
void
scan_init(struct scan *sc, const char *text, size_t len)
{
	sc->p = text;
	sc->end = text + len;
	sc->bad = false;
}

/* Step over white space. */
static void
scan_space(struct scan *sc)
{
	while (sc->p < sc->end && (*sc->p == ' ' || *sc->p == '\t' ||
	    *sc->p == '\n' || *sc->p == '\r'))
		sc->p++;
}

/* Mark the text unreadable; false, for the caller to return. */
static bool
scan_fail(struct scan *sc)
{
	sc->bad = true;
	return false;
}

/* Whether the next token is c; if so, step over it. */
bool
scan_take(struct scan *sc, char c)
{
	scan_space(sc);
	if (sc->bad || sc->p >= sc->end || *sc->p != c)
		return false;
	sc->p++;
	return true;
}

/* The next token's first byte, or 0 at the end. */
char
scan_peek(struct scan *sc)
{
	scan_space(sc);
	return sc->bad || sc->p >= sc->end ? 0 : *sc->p;
}

/* Four hex digits at p as a number; -1 if they are not. */
static long
scan_hex4(const char *p, const char *end)
{
	long	v = 0;
	int	i;

	if (end - p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		v <<= 4;
		if (p[i] >= '0' && p[i] <= '9')
			v |= p[i] - '0';
		else if ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')
			v |= (p[i] | 0x20) - 'a' + 10;
		else
			return -1;
	}
	return v;
}

/* Write code point cp as UTF-8 at out; the bytes written. */
static size_t
scan_utf8(char *out, unsigned long cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * The length of the UTF-8 character at p (a byte of 0x80 or above) before
 * end, or 0 if it is none: overlong forms, surrogates and code points past
 * U+10FFFF are refused, as jansson refuses them.
 */
size_t
scan_utf8_len(const char *s, const char *end)
{
	const unsigned char	*p = (const unsigned char *)s;
	unsigned long		 cp;
	size_t			 n, i;

	if (*p >= 0xc2 && *p <= 0xdf) {
		n = 2;
		cp = *p & 0x1f;
	} else if ((*p & 0xf0) == 0xe0) {
		n = 3;
		cp = *p & 0x0f;
	} else if (*p >= 0xf0 && *p <= 0xf4) {
		n = 4;
		cp = *p & 0x07;
	} else
		return 0;
	if (end - s < (ptrdiff_t)n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A \u escape at *pp (past the u) into out; the bytes written, 0 if bad. */
static size_t
scan_unicode(const char **pp, const char *end, char *out)
{
	long	hi, lo;

	if ((hi = scan_hex4(*pp, end)) < 0)
		return 0;
	*pp += 4;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return 0;
	if (hi < 0xd800 || hi > 0xdbff)
		return hi == 0 ? 0 : scan_utf8(out, (unsigned long)hi);
	/* A high surrogate: its low half must follow. */
	if (end - *pp < 6 || (*pp)[0] != '\\' || (*pp)[1] != 'u' ||
	    (lo = scan_hex4(*pp + 2, end)) < 0xdc00 || lo > 0xdfff)
		return 0;
	*pp += 6;
	return scan_utf8(out, 0x10000 + (((unsigned long)hi - 0xd800) << 10) +
	    ((unsigned long)lo - 0xdc00));
}

/*
 * Read a string: malloc'd, unescaped and NUL-terminated, or NULL if the
 * next value is no string. \u0000 is refused, as the daemon's reader
 * refuses it, and so is text that is not UTF-8, as jansson refuses it.
 */
char *
scan_string(struct scan *sc)
{
	const char	*p, *start, *close;
	char		*out, *o, c;
	uint64_t	 w;
	size_t		 n;

	if (!scan_take(sc, '"'))
		return NULL;
	start = sc->p;
	for (p = start; p < sc->end && *p != '"'; p++) {
		if (sc->end - p > 8 && (memcpy(&w, p, 8), !scan_word_stops(w))) {
			p += 7;
			continue;
		}
		if (*p == '\\' && ++p >= sc->end)
			break;
	}
	if (p >= sc->end)
		return scan_fail(sc), NULL;
	close = p;
	/* Unescaped text is never longer than its escaped form. */
	o = out = malloc(p - start + 1);
	if (out == NULL)
		return scan_fail(sc), NULL;
	for (p = start; *p != '"'; ) {
		if (close - p >= 8 && (memcpy(&w, p, 8), !scan_word_stops(w))) {
			memcpy(o, p, 8);
			o += 8;
			p += 8;
			continue;
		}
		if ((unsigned char)*p < 0x20)
			goto bad;
		if ((unsigned char)*p >= 0x80) {
			if ((n = scan_utf8_len(p, close)) == 0)
				goto bad;
			memcpy(o, p, n);
			o += n;
			p += n;
			continue;
		}
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		p++;
		switch ((c = *p++)) {
		case '"': case '\\': case '/':
			*o++ = c;
			break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if ((n = scan_unicode(&p, sc->end, o)) == 0)
				goto bad;
			o += n;
			break;
		default:
			goto bad;
		}
	}
	*o = '\0';
	sc->p = p + 1;
	return out;
bad:
	free(out);
	return scan_fail(sc), NULL;
}

/* Read an integer into *v; false if the next value is no integer. */
bool
scan_int(struct scan *sc, long long *v)
{
	const char		*p;
	unsigned long long	 n = 0, max = INT64_MAX;
	bool			 neg = false;

	scan_space(sc);
	p = sc->p;
	if (p < sc->end && *p == '-') {
		neg = true;
		max = (unsigned long long)INT64_MAX + 1;	/* INT64_MIN */
		p++;
	}
	if (p >= sc->end || *p < '0' || *p > '9')
		return false;
	/* JSON has no leading zeros: "01" is no number. */
	if (*p == '0' && p + 1 < sc->end && p[1] >= '0' && p[1] <= '9')
		return false;
	for (; p < sc->end && *p >= '0' && *p <= '9'; p++) {
		if (n > (max - (unsigned long long)(*p - '0')) / 10)
			return scan_fail(sc);
		n = n * 10 + (unsigned long long)(*p - '0');
	}
	if (p < sc->end && (*p == '.' || *p == 'e' || *p == 'E'))
		return false;
	sc->p = p;
	*v = neg ? (long long)(0 - n) : (long long)n;
	return true;
}

/*
 * A string of printable ASCII without escapes, as keys and most values
 * are: its text in place (not NUL-terminated) in *s and *n; false, with
 * nothing taken, if the next value is not one.
 */
bool
scan_plain(struct scan *sc, const char **s, size_t *n)
{
	const char *p;

	if (scan_peek(sc) != '"')
		return false;
	for (p = sc->p + 1; p < sc->end && *p != '"'; p++)
		if (*p == '\\' || *p < 0x20 || *p > 0x7e)
			return false;
	if (p >= sc->end)
		return false;
	*s = sc->p + 1;
	*n = (size_t)(p - sc->p - 1);
	sc->p = p + 1;
	return true;
}

/* Whether nothing but white space is left, and the text read well. */
bool
scan_done(struct scan *sc)
{
	scan_space(sc);
	return !sc->bad && sc->p == sc->end;
}

/* Step over the literal word (true, false, null); false if it is not next. */
bool
scan_word(struct scan *sc, const char *word)
{
	size_t	n = strlen(word);

	scan_space(sc);
	if ((size_t)(sc->end - sc->p) < n || memcmp(sc->p, word, n) != 0)
		return false;
	sc->p += n;
	return true;
}

/* Step over a number, whatever its form. */
static bool
scan_number(struct scan *sc)
{
	const char *p = sc->p;

	while (p < sc->end && strchr("+-.0123456789eE", *p) != NULL && *p)
		p++;
	if (p == sc->p)
		return scan_fail(sc);
	sc->p = p;
	return true;
}

/* Step over a string without keeping it. */
static bool
scan_skip_string(struct scan *sc)
{
	const char *p;

	for (p = sc->p + 1; p < sc->end && *p != '"'; p++)
		if (*p == '\\')
			p++;
	if (p >= sc->end)
		return scan_fail(sc);
	sc->p = p + 1;
	return true;
}

/* Step over one value of any kind, nested at most depth deep. */
static bool
scan_skip_depth(struct scan *sc, int depth)
{
	char	open = scan_peek(sc), close;
	char	*key;

	if ((open == '{' || open == '[') && depth >= SCAN_DEPTH)
		return scan_fail(sc);
	if (open == '"')
		return scan_skip_string(sc);
	if (open != '{' && open != '[')
		return scan_word(sc, "true") || scan_word(sc, "false") ||
		    scan_word(sc, "null") || scan_number(sc);
	close = open == '{' ? '}' : ']';
	sc->p++;
	if (scan_take(sc, close))
		return true;
	do {
		if (open == '{') {
			if ((key = scan_string(sc)) == NULL || !scan_take(sc, ':'))
				return free(key), scan_fail(sc);
			free(key);
		}
		if (!scan_skip_depth(sc, depth + 1))
			return scan_fail(sc);
	} while (scan_take(sc, ','));
	return scan_take(sc, close) || scan_fail(sc);
}

/* Step over one value of any kind. */
bool
scan_skip(struct scan *sc)
{
	return scan_skip_depth(sc, 0);
}

/*
 * Step into the next member of an object whose '{' was taken: its key,
 * malloc'd, with the ':' taken; NULL at the '}' (taken) or on bad text.
 */
char *
scan_member(struct scan *sc, bool *first)
{
	char	*key;

	if (scan_take(sc, '}'))
		return NULL;
	if (!*first && !scan_take(sc, ','))
		return scan_fail(sc), NULL;
	*first = false;
	if ((key = scan_string(sc)) == NULL || !scan_take(sc, ':')) {
		free(key);
		return scan_fail(sc), NULL;
	}
	return key;
}

/* Whether another element of an array whose '[' was taken follows. */
bool
scan_element(struct scan *sc, bool *first)
{
	if (scan_take(sc, ']'))
		return false;
	if (!*first && !scan_take(sc, ','))
		return scan_fail(sc);
	*first = false;
	return !sc->bad;
}
