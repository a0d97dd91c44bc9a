/*
 * libFuzzer target: the gdb/MI record parser (daemon/mi-parse.c) and
 * mi_cstring_quote (daemon/mi-cstring.c), on a byte stream cut into lines
 * by the framer as mi.c does.
 *
 * Every line either fails with a cause, leaving the record empty, or parses
 * into a record of a consistent shape; written back as MI (each object a
 * tuple, each array a list, each string quoted) it parses to the same record
 * again. mi_cstring_quote of the line's text, as a console stream, parses
 * back to that text. With DBGCTL_FUZZ_SEEDS set (run-fuzz does so for the
 * checked-in seeds, which are gdb's own output) every line must parse.
 *
 * Then the input goes again through a framer that cuts long lines, as mi.c's
 * does, with a limit of 1 to 1021 bytes its last byte picks, so that short
 * inputs reach the path of records longer than FRAME_MAX: it hands over the
 * same lines, each a prefix of the first pass's, the cut ones exactly the
 * limit long; mi_parse_cut of a line mi_parse reads agrees with it on kind,
 * token and class, its text a prefix of the whole text; of any cut line it
 * fails with a cause or gives a record of a consistent shape.
 */
#include <stdarg.h>
#include <string.h>

#include "daemon.h"
#include "mi.h"
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

/* mi_cstring_quote of the line's text must come back as a console stream's. */
static void
mi_fuzz_quote(const char *line)
{
	struct mi_record	 r;
	char			*q, *rec, err[256];
	int			 n;

	q = mi_cstring_quote(line);
	n = xasprintf(&rec, "~%s", q);
	fuzz_check(mi_parse(rec, (size_t)n, &r, err, sizeof err) == 0,
	    "mi_cstring_quote(\"%.100s\") = %.200s fails: %s", line, q, err);
	fuzz_check(r.kind == MI_CONSOLE && r.textlen == strlen(line) &&
	    memcmp(r.text, line, r.textlen) == 0,
	    "mi_cstring_quote(\"%.100s\") = %.200s parses to other text", line,
	    q);
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

/* The lines of the first pass, for the second to be held against. */
struct mi_fuzz_lines {
	char	**v;
	size_t	 *lens;
	size_t	  n;		/* lines, and an unended one after them */
	bool	  unended;	/* v[n] is the input's unended last line */
	size_t	  next;		/* the second pass's next line */
	struct frame *cutter;	/* the second pass's framer */
};

/* Keep a copy of a line's text. */
static void
mi_fuzz_keep_text(struct mi_fuzz_lines *l, const char *line, size_t len)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof *l->v);
	l->lens = xreallocarray(l->lens, l->n + 1, sizeof *l->lens);
	l->v[l->n] = xmalloc(len + 1);
	memcpy(l->v[l->n], line, len);
	l->v[l->n][len] = '\0';
	l->lens[l->n++] = len;
}

/* One line of the first pass: checked, and kept. */
static int
mi_fuzz_keep(void *arg, char *line, size_t len)
{
	mi_fuzz_line(NULL, line, len);
	mi_fuzz_keep_text(arg, line, len);
	return 0;
}

/*
 * A record mi_parse_cut gave: what a whole one of its kind promises, with
 * no results, no prompt, and a stream's text shorter than the cut line.
 */
static void
mi_fuzz_cut_shape(const struct mi_record *r, size_t len)
{
	fuzz_check(json_is_object(r->results) &&
	    json_object_size(r->results) == 0, "a cut record's results");
	fuzz_check(r->kind != MI_PROMPT, "a cut prompt");
	fuzz_check(r->text == NULL || r->textlen < len, "a cut stream's text "
	    "of %zu bytes from %zu", r->textlen, len);
	mi_fuzz_shape(r);
}

/* mi_parse_cut of a whole line mi_parse reads agrees with mi_parse. */
static void
mi_fuzz_cut_agrees(const char *line, size_t len, const struct mi_record *c)
{
	struct mi_record r;

	if (mi_parse(line, len, &r, NULL, 0) != 0)
		return;
	if (r.kind != MI_PROMPT)
		fuzz_check(r.kind == c->kind && r.has_token == c->has_token &&
		    r.token == c->token && strcmp(r.cls, c->cls) == 0 &&
		    (r.text == NULL) == (c->text == NULL) && c->textlen <=
		    r.textlen && (c->text == NULL || memcmp(c->text, r.text,
		    c->textlen) == 0), "mi_parse_cut of \"%.200s\" disagrees",
		    line);
	mi_record_free(&r);
}

/* One line of the cutting pass, held against the first pass's. */
static int
mi_fuzz_cut_line(void *arg, char *line, size_t len)
{
	struct mi_fuzz_lines	*l = arg;
	struct mi_record	 r;
	char			 err[256];
	size_t			 i = l->next++;

	/* A line is cut as soon as it is too long, ended or not. */
	fuzz_check(i < l->n || (i == l->n && l->unended && l->cutter->cut),
	    "the cutting framer hands over more lines");
	fuzz_check(line[len] == '\0' && len <= l->lens[i] &&
	    memcmp(line, l->v[i], len) == 0, "line %zu is no prefix of the "
	    "first pass's", i);
	fuzz_check(l->cutter->cut ? len == l->cutter->max && len < l->lens[i] :
	    len == l->lens[i], "line %zu: %zu bytes of %zu, limit %zu, cut %d",
	    i, len, l->lens[i], l->cutter->max, l->cutter->cut);
	if (mi_parse_cut(line, len, &r, err, sizeof err) != 0) {
		fuzz_check(err[0] != '\0' && r.results == NULL &&
		    r.text == NULL, "a failed cut parse of \"%.200s\"", line);
		fuzz_check(l->cutter->cut || mi_parse(line, len, &r, NULL, 0)
		    != 0 || r.kind == MI_PROMPT, "mi_parse_cut fails on "
		    "\"%.200s\", which mi_parse reads", line);
		mi_record_free(&r);
		return 0;
	}
	mi_fuzz_cut_shape(&r, len);
	if (!l->cutter->cut)
		mi_fuzz_cut_agrees(line, len, &r);
	mi_record_free(&r);
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
	struct mi_fuzz_lines	l = { 0 };
	struct frame		f, cutter;
	size_t			i;

	frame_init(&f, FRAME_MAX);
	frame_feed(&f, (const char *)data, size, mi_fuzz_keep, &l);
	if (f.len > 0) {
		mi_fuzz_keep_text(&l, f.buf, f.len);
		l.unended = true;
		l.n--;
	}
	frame_free(&f);
	frame_init(&cutter, 1 + (size > 0 ? data[size - 1] : 0) * 4);
	frame_cut(&cutter);
	l.cutter = &cutter;
	fuzz_check(frame_feed(&cutter, (const char *)data, size,
	    mi_fuzz_cut_line, &l) == 0, "the cutting framer failed");
	fuzz_check(l.next == l.n || (l.unended && l.next == l.n + 1),
	    "the cutting framer handed over %zu lines of %zu", l.next, l.n);
	frame_free(&cutter);
	for (i = 0; i < l.n + l.unended; i++)
		free(l.v[i]);
	free(l.v);
	free(l.lens);
	return 0;
}
