/*
 * libFuzzer target: the gdb/MI record parser (daemon/mi-parse.c) and
 * mi_quote, on a byte stream cut into lines by the framer as mi.c does.
 *
 * Every line either fails with a cause, leaving the record empty, or parses
 * into a record of a consistent shape; written back as MI (each object a
 * tuple, each array a list, each string quoted) it parses to the same record
 * again. mi_quote of the line's text, as a console stream, parses back to
 * that text. With DBGCTL_FUZZ_SEEDS set (run-fuzz does so for the checked-in
 * seeds, which are gdb's own output) every line must parse.
 */
#include <stdarg.h>
#include <string.h>

#include "daemon.h"
#include "fuzz.h"

/* Every line is gdb's own output: a malformed one is a parser bug. */
static bool	mi_fuzz_seeds;

/* A growing buffer the record is written back into. */
struct mi_fuzz_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/* Append n bytes to b. */
static void
mi_fuzz_put(struct mi_fuzz_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		while (b->len + n + 1 > b->cap)
			b->cap = b->cap != 0 ? b->cap * 2 : 256;
		b->p = xreallocarray(b->p, b->cap, 1);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Append the printf-formatted text to b. */
static void __attribute__((format(printf, 2, 3)))
mi_fuzz_putf(struct mi_fuzz_buf *b, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;
	int	 n;

	va_start(ap, fmt);
	n = xvasprintf(&s, fmt, ap);
	va_end(ap);
	mi_fuzz_put(b, s, (size_t)n);
	free(s);
}

/* Append n bytes as an MI c-string: quotes, \" \\ and \NNN for controls. */
static void
mi_fuzz_cstring(struct mi_fuzz_buf *b, const char *s, size_t n)
{
	unsigned char	c;
	size_t		i;

	mi_fuzz_put(b, "\"", 1);
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			mi_fuzz_put(b, "\\", 1);
			mi_fuzz_put(b, s + i, 1);
		} else if (c < 0x20 || c == 0x7f)
			mi_fuzz_putf(b, "\\%03o", c);
		else
			mi_fuzz_put(b, s + i, 1);
	}
	mi_fuzz_put(b, "\"", 1);
}

/* Append a parsed value as MI: an object as a tuple, an array as a list. */
static void
mi_fuzz_value(struct mi_fuzz_buf *b, json_t *v)
{
	const char	*key;
	json_t		*e;
	size_t		 i;

	if (json_is_string(v)) {
		mi_fuzz_cstring(b, json_string_value(v), json_string_length(v));
		return;
	}
	if (json_is_array(v)) {
		mi_fuzz_put(b, "[", 1);
		json_array_foreach(v, i, e) {
			if (i > 0)
				mi_fuzz_put(b, ",", 1);
			mi_fuzz_value(b, e);
		}
		mi_fuzz_put(b, "]", 1);
		return;
	}
	fuzz_check(json_is_object(v), "a value of JSON type %d",
	    json_typeof(v));
	mi_fuzz_put(b, "{", 1);
	i = 0;
	json_object_foreach(v, key, e) {
		if (i++ > 0)
			mi_fuzz_put(b, ",", 1);
		mi_fuzz_putf(b, "%s=", key);
		mi_fuzz_value(b, e);
	}
	mi_fuzz_put(b, "}", 1);
}

/* How deep v nests tuples and lists, as the parser counts them. */
static int
mi_fuzz_depth(json_t *v)
{
	const char	*key;
	json_t		*e;
	size_t		 i;
	int		 d = 0, k;

	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			if ((k = mi_fuzz_depth(e)) > d)
				d = k;
		return d + 1;
	}
	if (json_is_object(v)) {
		json_object_foreach(v, key, e)
			if ((k = mi_fuzz_depth(e)) > d)
				d = k;
		return d + 1;
	}
	return 0;
}

/* Whether a name is one the parser reads: 1 to 63 of [A-Za-z0-9_-]. */
static bool
mi_fuzz_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

/* A parsed record's shape: what its kind promises. */
static void
mi_fuzz_shape(const struct mi_record *r)
{
	const char	*key;
	json_t		*v;

	fuzz_check(json_is_object(r->results), "results not an object");
	json_object_foreach(r->results, key, v)
		fuzz_check(mi_fuzz_name_ok(key), "a result named \"%s\"", key);
	switch (r->kind) {
	case MI_CONSOLE:
	case MI_TARGET:
	case MI_LOG:
		fuzz_check(r->text != NULL && r->text[r->textlen] == '\0',
		    "a stream's text");
		fuzz_check(!r->has_token && r->cls[0] == '\0' &&
		    json_object_size(r->results) == 0, "a stream's extras");
		break;
	case MI_PROMPT:
		fuzz_check(r->text == NULL && !r->has_token &&
		    r->cls[0] == '\0' && json_object_size(r->results) == 0,
		    "a prompt's extras");
		break;
	case MI_RESULT:
	case MI_EXEC:
	case MI_STATUS:
	case MI_NOTIFY:
		fuzz_check(r->text == NULL && mi_fuzz_name_ok(r->cls),
		    "class \"%s\"", r->cls);
		break;
	default:
		fuzz_check(0, "kind %d", (int)r->kind);
	}
}

/* Write a record back as one MI line. */
static void
mi_fuzz_write(struct mi_fuzz_buf *b, const struct mi_record *r)
{
	static const char	marks[] = "^*+=~@&";
	const char		*key;
	json_t			*v;

	if (r->kind == MI_PROMPT) {
		mi_fuzz_put(b, "(gdb)", 5);
		return;
	}
	if (r->has_token)
		mi_fuzz_putf(b, "%lu", r->token);
	mi_fuzz_put(b, &marks[r->kind], 1);
	if (r->text != NULL) {
		mi_fuzz_cstring(b, r->text, r->textlen);
		return;
	}
	mi_fuzz_put(b, r->cls, strlen(r->cls));
	json_object_foreach(r->results, key, v) {
		mi_fuzz_putf(b, ",%s=", key);
		mi_fuzz_value(b, v);
	}
}

/* Parse the record written back; it must be the same record. */
static void
mi_fuzz_again(const struct mi_record *r, const char *line)
{
	struct mi_fuzz_buf	 b = { 0 };
	struct mi_record	 r2;
	char			 err[256];
	const char		*key;
	json_t			*v;

	json_object_foreach(r->results, key, v)
		if (mi_fuzz_depth(v) > MI_PARSE_DEPTH)
			return;		/* repeats nest it deeper than it was */
	mi_fuzz_write(&b, r);
	fuzz_check(mi_parse(b.p, b.len, &r2, err, sizeof err) == 0,
	    "\"%.200s\" written back as \"%.200s\" fails: %s", line, b.p, err);
	fuzz_check(r2.kind == r->kind && r2.has_token == r->has_token &&
	    r2.token == r->token && strcmp(r2.cls, r->cls) == 0,
	    "\"%.200s\" written back as \"%.200s\" changes kind, token or "
	    "class", line, b.p);
	fuzz_check(json_equal(r2.results, r->results),
	    "\"%.200s\" written back as \"%.200s\" changes the results", line,
	    b.p);
	fuzz_check((r->text == NULL) == (r2.text == NULL) &&
	    r2.textlen == r->textlen && (r->text == NULL ||
	    memcmp(r->text, r2.text, r->textlen) == 0),
	    "\"%.200s\" written back changes the text", line);
	mi_record_free(&r2);
	free(b.p);
}

/* mi_quote of the line's text must come back as a console stream's text. */
static void
mi_fuzz_quote(const char *line)
{
	struct mi_record	 r;
	char			*q, *rec, err[256];
	int			 n;

	q = mi_quote(line);
	n = xasprintf(&rec, "~%s", q);
	fuzz_check(mi_parse(rec, (size_t)n, &r, err, sizeof err) == 0,
	    "mi_quote(\"%.100s\") = %.200s fails: %s", line, q, err);
	fuzz_check(r.kind == MI_CONSOLE && r.textlen == strlen(line) &&
	    memcmp(r.text, line, r.textlen) == 0,
	    "mi_quote(\"%.100s\") = %.200s parses to other text", line, q);
	mi_record_free(&r);
	free(rec);
	free(q);
}

/* One line from the framer. */
static int
mi_fuzz_line(void *arg, char *line, size_t len)
{
	struct mi_record	r;
	char			err[256], small[8];
	size_t			errlen;

	(void)arg;
	if (mi_parse(line, len, &r, err, sizeof err) != 0) {
		fuzz_check(!mi_fuzz_seeds, "gdb's line \"%.300s\" fails: %s",
		    line, err);
		fuzz_check(err[0] != '\0', "no cause for \"%.200s\"", line);
		fuzz_check(r.results == NULL && r.text == NULL,
		    "a failed parse leaves a record");
		/* A short buffer, or none, changes nothing but the message. */
		errlen = 1 + len % sizeof small;
		fuzz_check(mi_parse(line, len, &r, small, errlen) != 0 &&
		    strlen(small) < errlen, "with %zu bytes for the cause",
		    errlen);
		fuzz_check(mi_parse(line, len, &r, NULL, 0) != 0,
		    "with no cause buffer");
	} else {
		mi_fuzz_shape(&r);
		mi_fuzz_again(&r, line);
		mi_record_free(&r);
	}
	mi_fuzz_quote(line);
	return 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mi_fuzz_seeds = getenv("DBGCTL_FUZZ_SEEDS") != NULL;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_lines(data, size, mi_fuzz_line);
	return 0;
}
