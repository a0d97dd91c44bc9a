/*
 * gdb/MI c-strings, both ways: a c-string read from a line with its
 * escapes undone (\n \t \r \a \b \f \v \e \\ \" \' and octal \N to \NNN),
 * made a JSON string with each byte outside valid UTF-8 replaced by
 * U+FFFD, and a string quoted as a c-string for a command gdb reads.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "mi-parse.h"
#include "scan.h"

/* Undo the escape whose backslash is at the current position, into *out. */
int
mi_cstring_escape(struct mi_parse_in *in, char *out)
{
	static const char	 from[] = "ntrabfve\\\"'";
	static const char	 to[] = "\n\t\r\a\b\f\v\033\\\"'";
	size_t			 start = in->pos++;
	const char		*p;
	int			 c = mi_parse_peek(in), v = 0, i;

	if (c >= '0' && c <= '7') {
		for (i = 0; i < 3 && (c = mi_parse_peek(in)) >= '0' &&
		    c <= '7'; i++, in->pos++)
			v = v * 8 + (c - '0');
		if (v > 0377)
			return mi_parse_error(in, start,
			    "octal escape \\%.3s is beyond \\377",
			    in->s + start + 1);
		*out = (char)v;
		return 0;
	}
	if (c <= 0 || (p = strchr(from, c)) == NULL)
		return mi_parse_expected(in,
		    "one of n t r a b f v e \\ \" ' or an octal digit after '\\'");
	*out = to[p - from];
	in->pos++;
	return 0;
}

/*
 * Read the c-string at the current position into a new NUL-terminated
 * buffer, escapes undone; *lenp is its length, which may count NUL bytes.
 */
char *
mi_cstring_read(struct mi_parse_in *in, size_t *lenp)
{
	size_t		 start = in->pos, end, n = 0, run;
	const char	*q, *b;
	char		*buf;

	if (mi_parse_peek(in) != '"') {
		mi_parse_expected(in, "'\"'");
		return NULL;
	}
	/*
	 * Find the closing quote first (the text is shorter than the span):
	 * the first quote after an even run of backslashes. A memory read's
	 * 8 KB of hex is one plain run, looked through by memchr.
	 */
	for (q = in->s + start + 1;; q++) {
		if ((q = memchr(q, '"', in->len - (size_t)(q - in->s))) ==
		    NULL) {
			mi_parse_error(in, start, "string not closed: "
			    "expected '\"' before end of line");
			return NULL;
		}
		for (b = q; b[-1] == '\\'; b--)
			continue;
		if ((q - b) % 2 == 0)
			break;
	}
	end = (size_t)(q - in->s);
	buf = xmalloc(end - start);
	for (in->pos = start + 1; in->pos < end; n++) {
		b = memchr(in->s + in->pos, '\\', end - in->pos);
		run = (b != NULL ? (size_t)(b - in->s) : end) - in->pos;
		memcpy(buf + n, in->s + in->pos, run);
		n += run;
		if ((in->pos += run) == end)
			break;
		if (mi_cstring_escape(in, &buf[n]) != 0) {
			free(buf);
			return NULL;
		}
	}
	in->pos = end + 1;
	buf[n] = '\0';
	*lenp = n;
	return buf;
}

/* Whether n bytes are all ASCII, looked at a word at a time. */
static bool
mi_cstring_ascii(const char *s, size_t n)
{
	uint64_t	w, any = 0;
	size_t		i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		any |= w;
	}
	for (; i < n; i++)
		any |= (unsigned char)s[i];
	return (any & 0x8080808080808080ULL) == 0;
}

/* A JSON string of n bytes, each byte outside valid UTF-8 replaced by U+FFFD. */
json_t *
mi_cstring_json(const char *s, size_t n)
{
	json_t	*j;
	char	*buf;
	size_t	 i, k, out = 0;

	/*
	 * Most of gdb's strings are ASCII, which needs no check of jansson's
	 * (a memory read's 8 KB of hex); jansson refuses invalid UTF-8 (and
	 * accepts NUL bytes).
	 */
	if (mi_cstring_ascii(s, n))
		return json_stringn_nocheck(s, n);
	if ((j = json_stringn(s, n)) != NULL)
		return j;
	buf = xreallocarray(NULL, n + 1, 3);
	for (i = 0; i < n; i += k) {
		k = (unsigned char)s[i] < 0x80 ? 1 : scan_utf8_len(s + i, s + n);
		if (k == 0) {
			memcpy(buf + out, "\xef\xbf\xbd", 3);
			out += 3;
			k = 1;
			continue;
		}
		memcpy(buf + out, s + i, k);
		out += k;
	}
	if ((j = json_stringn(buf, out)) == NULL)
		log_fatal("out of memory for a JSON string of %zu bytes", out);
	free(buf);
	return j;
}

/* s as an MI c-string, quotes included, for -interpreter-exec console "...". Caller frees. */
char *
mi_cstring_quote(const char *s)
{
	char		*out, *p;
	unsigned char	 c;

	/* Each byte takes four at most (\NNN), plus the quotes and a NUL. */
	p = out = xreallocarray(NULL, strlen(s) + 1, 4);
	*p++ = '"';
	for (; (c = (unsigned char)*s) != '\0'; s++) {
		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			*p++ = '\\';
			*p++ = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else if (c < 0x20 || c == 0x7f)
			p += sprintf(p, "\\%03o", c);
		else
			*p++ = (char)c;
	}
	*p++ = '"';
	*p = '\0';
	return out;
}
