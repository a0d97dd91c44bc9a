/*
 * One line of gdb/MI output parsed into a struct mi_record: no I/O, no loop.
 *
 * How MI maps onto JSON:
 * - A record's results and every tuple {a="1",b={...}} become an object.
 * - A list of values ["1","2"] or [{...},{...}] becomes an array of them.
 * - A list of results [frame={...},frame={...}] becomes an array of one-key
 *   objects [{"frame":{...}},{"frame":{...}}]: order and repeats are kept.
 * - Every const (c-string) becomes a JSON string, never a number, with its
 *   escapes undone: \n \t \r \a \b \f \v \e \\ \" \' and octal \N to \NNN
 *   (at most \377), which may give any byte, NUL too (json_string_length
 *   then counts past it). Any other escape is an error.
 * - A key repeated in one object makes its value an array of all its values
 *   in order: thread-ids={thread-id="1",thread-id="2"} gives
 *   {"thread-id":["1","2"]}. A key seen once keeps its plain value (one
 *   thread gives {"thread-id":"1"}), so a reader of a key that may repeat
 *   takes both shapes.
 * - A bare tuple where a result belongs (gdb writes them) takes the name of
 *   the result before it: MI2's multi-location bkpt={...},{...},{...} gives
 *   "bkpt":[{...},{...},{...}], and in a list of results one more
 *   {"bkpt":{...}}. With no result before it, as in +download,{section=...},
 *   its members join the enclosing object. A bare string or list is an error.
 * - A result string not valid UTF-8 once unescaped (gdb passes file names
 *   through) has each byte outside a valid sequence replaced by U+FFFD:
 *   file="f\377o.c" gives "f\uFFFDo.c". Stream text keeps the raw bytes.
 * - Streams and the prompt ("(gdb)", blanks after it or not) have an empty
 *   results object and cls ""; text is NULL but for streams.
 * - A class or a variable is 1 to 63 of [A-Za-z0-9_-]; any class is taken
 *   for any kind. A token (decimal, at most ULONG_MAX) may precede a result
 *   or async record only.
 *
 * The c-strings are read, and made JSON strings, in mi-cstring.c.
 *
 * A malformed line gives "offset N: expected X, found Y", or another cause,
 * at byte offset N (from 0). Tuples and lists nest MI_PARSE_DEPTH deep at
 * most, so hostile input cannot exhaust the stack; no byte past len is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "mi.h"
#include "mi-parse.h"

/* Bytes of a class or variable name, with its NUL. */
#define MI_PARSE_NAME 64

/* An object being filled from results. */
struct mi_parse_obj {
	json_t		*obj;
	json_t		*reps;			/* keys made arrays by repeats */
	char		 prev[MI_PARSE_NAME];	/* the last result's name */
};

static json_t	*mi_parse_value(struct mi_parse_in *);
static json_t	*mi_parse_tuple(struct mi_parse_in *);

/* The byte at the current position, or -1 at the end of the line. */
int
mi_parse_peek(const struct mi_parse_in *in)
{
	if (in->pos >= in->len)
		return -1;
	return (unsigned char)in->s[in->pos];
}

/* Say why the line is malformed, at byte offset pos; returns -1. */
int
mi_parse_error(struct mi_parse_in *in, size_t pos, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (in->err == NULL || in->errlen == 0)
		return -1;
	n = snprintf(in->err, in->errlen, "offset %zu: ", pos);
	if (n >= 0 && (size_t)n < in->errlen) {
		va_start(ap, fmt);
		vsnprintf(in->err + n, in->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Say that what stands at the current position is not what was expected. */
int
mi_parse_expected(struct mi_parse_in *in, const char *what)
{
	char	found[32];
	int	c = mi_parse_peek(in);

	if (c == -1)
		snprintf(found, sizeof found, "end of line");
	else if (c >= 0x20 && c < 0x7f)
		snprintf(found, sizeof found, "'%c'", c);
	else
		snprintf(found, sizeof found, "byte 0x%02x", c);
	return mi_parse_error(in, in->pos, "expected %s, found %s", what,
	    found);
}

/* Whether c may stand in a class or variable name. */
static bool
mi_parse_namechar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Read a class or variable name into buf; -1 if there is none or it is too long. */
static int
mi_parse_name(struct mi_parse_in *in, char *buf, size_t size,
    const char *what)
{
	size_t	start = in->pos, n;

	while (in->pos < in->len && mi_parse_namechar(mi_parse_peek(in)))
		in->pos++;
	if ((n = in->pos - start) == 0)
		return mi_parse_expected(in, what);
	if (n >= size)
		return mi_parse_error(in, start, "%s longer than %zu bytes",
		    what, size - 1);
	memcpy(buf, in->s + start, n);
	buf[n] = '\0';
	return 0;
}

/*
 * Put val under key in o; a repeated key's values are gathered in an
 * array. Keys are names (mi_parse_namechar), ASCII: jansson need not check.
 */
static void
mi_parse_set(struct mi_parse_obj *o, const char *key, json_t *val)
{
	json_t	*old, *arr;

	if ((old = json_object_get(o->obj, key)) == NULL) {
		json_object_set_new_nocheck(o->obj, key, val);
		return;
	}
	if (o->reps != NULL && json_object_get(o->reps, key) != NULL) {
		json_array_append_new(old, val);
		return;
	}
	if (o->reps == NULL)
		o->reps = json_object();
	json_object_set_new_nocheck(o->reps, key, json_true());
	arr = json_array();
	json_array_append(arr, old);
	json_array_append_new(arr, val);
	json_object_set_new_nocheck(o->obj, key, arr);
}

/* Move the members of a bare tuple that no result precedes into o. */
static void
mi_parse_merge(struct mi_parse_obj *o, json_t *tuple)
{
	const char	*key;
	json_t		*val;

	json_object_foreach(tuple, key, val)
		mi_parse_set(o, key, json_incref(val));
	json_decref(tuple);
}

/* Read NAME=VALUE at the current position; the name goes to name. */
static json_t *
mi_parse_result(struct mi_parse_in *in, char *name)
{
	char	what[MI_PARSE_NAME + 16];

	if (mi_parse_name(in, name, MI_PARSE_NAME, "a variable name") != 0)
		return NULL;
	if (mi_parse_peek(in) != '=') {
		snprintf(what, sizeof what, "'=' after \"%s\"", name);
		mi_parse_expected(in, what);
		return NULL;
	}
	in->pos++;
	return mi_parse_value(in);
}

/* Count one level of nesting in; -1 beyond MI_PARSE_DEPTH. */
static int
mi_parse_enter(struct mi_parse_in *in)
{
	if (++in->depth > MI_PARSE_DEPTH)
		return mi_parse_error(in, in->pos,
		    "tuples and lists nested deeper than %d", MI_PARSE_DEPTH);
	in->pos++;
	return 0;
}

/* One member of a tuple or of a record's results: a result or a bare tuple. */
static int
mi_parse_member(struct mi_parse_in *in, struct mi_parse_obj *o)
{
	json_t	*val;

	if (mi_parse_peek(in) == '{') {
		if ((val = mi_parse_tuple(in)) == NULL)
			return -1;
		if (o->prev[0] == '\0')
			mi_parse_merge(o, val);
		else
			mi_parse_set(o, o->prev, val);
		return 0;
	}
	if ((val = mi_parse_result(in, o->prev)) == NULL)
		return -1;
	mi_parse_set(o, o->prev, val);
	return 0;
}

/* After an element of a tuple or list: 1 at close, 0 after a comma, -1 otherwise. */
static int
mi_parse_next(struct mi_parse_in *in, int close)
{
	char	what[32];
	int	c = mi_parse_peek(in);

	if (c == ',' || c == close) {
		in->pos++;
		return c == close;
	}
	snprintf(what, sizeof what, "',' or '%c'", close);
	return mi_parse_expected(in, what);
}

/* Read the tuple {...} at the current position into an object. */
static json_t *
mi_parse_tuple(struct mi_parse_in *in)
{
	struct mi_parse_obj	o = { .prev = "" };
	int			rc;

	if (mi_parse_enter(in) != 0)
		return NULL;
	o.obj = json_object();
	if ((rc = mi_parse_peek(in) == '}'))
		in->pos++;	/* empty */
	while (rc == 0) {
		if ((rc = mi_parse_member(in, &o)) == 0)
			rc = mi_parse_next(in, '}');
	}
	json_decref(o.reps);
	if (rc < 0) {
		json_decref(o.obj);
		return NULL;
	}
	in->depth--;
	return o.obj;
}

/* One element of a list of results: a one-key object (see the header). */
static json_t *
mi_parse_item(struct mi_parse_in *in, char *prev)
{
	json_t	*val, *obj;

	if (mi_parse_peek(in) == '{' && prev[0] != '\0')
		val = mi_parse_tuple(in);
	else
		val = mi_parse_result(in, prev);
	if (val == NULL)
		return NULL;
	obj = json_object();
	json_object_set_new_nocheck(obj, prev, val);
	return obj;
}

/* Read the list [...] at the current position into an array. */
static json_t *
mi_parse_list(struct mi_parse_in *in)
{
	char	 prev[MI_PARSE_NAME] = "";
	json_t	*arr, *elem;
	bool	 results;
	int	 rc;

	if (mi_parse_enter(in) != 0)
		return NULL;
	arr = json_array();
	results = mi_parse_namechar(mi_parse_peek(in));
	if ((rc = mi_parse_peek(in) == ']'))
		in->pos++;	/* empty */
	while (rc == 0) {
		elem = results ? mi_parse_item(in, prev) : mi_parse_value(in);
		if (elem == NULL)
			break;
		json_array_append_new(arr, elem);
		rc = mi_parse_next(in, ']');
	}
	if (rc != 1) {
		json_decref(arr);
		return NULL;
	}
	in->depth--;
	return arr;
}

/* Read a value at the current position: a c-string, a tuple or a list. */
static json_t *
mi_parse_value(struct mi_parse_in *in)
{
	json_t	*j;
	char	*buf;
	size_t	 n;

	switch (mi_parse_peek(in)) {
	case '"':
		if ((buf = mi_cstring_read(in, &n)) == NULL)
			return NULL;
		j = mi_cstring_json(buf, n);
		free(buf);
		return j;
	case '{':
		return mi_parse_tuple(in);
	case '[':
		return mi_parse_list(in);
	}
	mi_parse_expected(in, "a value ('\"', '{' or '[')");
	return NULL;
}

/* Read the token, if digits start the line. */
static int
mi_parse_token(struct mi_parse_in *in, struct mi_record *r)
{
	unsigned long	d;
	int		c;

	while ((c = mi_parse_peek(in)) >= '0' && c <= '9') {
		d = (unsigned long)(c - '0');
		if (r->token > (ULONG_MAX - d) / 10)
			return mi_parse_error(in, 0, "token beyond %lu",
			    ULONG_MAX);
		r->token = r->token * 10 + d;
		r->has_token = true;
		in->pos++;
	}
	return 0;
}

/* 1 if the line is the prompt, "(gdb)" and blanks; -1 if more follows "(gdb)". */
static int
mi_parse_prompt(struct mi_parse_in *in)
{
	if (in->len < 5 || memcmp(in->s, "(gdb)", 5) != 0)
		return 0;
	for (in->pos = 5; in->pos < in->len; in->pos++)
		if (in->s[in->pos] != ' ' && in->s[in->pos] != '\t')
			return mi_parse_expected(in,
			    "end of line after \"(gdb)\"");
	return 1;
}

/* Read a result or async record's class and results. */
static int
mi_parse_async(struct mi_parse_in *in, struct mi_record *r)
{
	struct mi_parse_obj	o = { .obj = r->results, .prev = "" };
	int			rc = 0;

	if (mi_parse_name(in, r->cls, sizeof r->cls, "a class") != 0)
		return -1;
	while (rc == 0 && mi_parse_peek(in) != -1) {
		if (mi_parse_peek(in) != ',')
			rc = mi_parse_expected(in, "',' or end of line");
		else {
			in->pos++;
			rc = mi_parse_member(in, &o);
		}
	}
	json_decref(o.reps);
	return rc;
}

/* Read a stream record's string, which must end the line. */
static int
mi_parse_stream(struct mi_parse_in *in, struct mi_record *r)
{
	if (r->has_token)
		return mi_parse_error(in, 0, "a stream record takes no token");
	if ((r->text = mi_cstring_read(in, &r->textlen)) == NULL)
		return -1;
	if (mi_parse_peek(in) != -1)
		return mi_parse_expected(in, "end of line after the string");
	return 0;
}

/* Read one record of any kind. */
static int
mi_parse_line(struct mi_parse_in *in, struct mi_record *r)
{
	static const char		marks[] = "^*+=~@&";
	static const enum mi_kind	kinds[] = { MI_RESULT, MI_EXEC,
	    MI_STATUS, MI_NOTIFY, MI_CONSOLE, MI_TARGET, MI_LOG };
	const char			*p;
	int				 c, rc;

	if ((rc = mi_parse_prompt(in)) != 0) {
		r->kind = MI_PROMPT;
		return rc < 0 ? -1 : 0;
	}
	if (mi_parse_token(in, r) != 0)
		return -1;
	if ((c = mi_parse_peek(in)) <= 0 || (p = strchr(marks, c)) == NULL)
		return mi_parse_expected(in, r->has_token ?
		    "'^', '*', '+' or '=' after a token" :
		    "a record: '^', '*', '+', '=', '~', '@', '&' or \"(gdb)\"");
	r->kind = kinds[p - marks];
	in->pos++;
	if (r->kind == MI_CONSOLE || r->kind == MI_TARGET || r->kind == MI_LOG)
		return mi_parse_stream(in, r);
	return mi_parse_async(in, r);
}

/* Parse one line (no newline; a trailing \r is ignored); -1 with err on a malformed line. */
int
mi_parse(const char *line, size_t len, struct mi_record *r, char *err,
    size_t errlen)
{
	struct mi_parse_in in = { .s = line, .len = len, .err = err,
	    .errlen = errlen };

	memset(r, 0, sizeof *r);
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (len > 0 && line[len - 1] == '\r')
		in.len--;
	r->results = json_object();
	if (mi_parse_line(&in, r) != 0) {
		mi_record_free(r);
		return -1;
	}
	return 0;
}

/*
 * The text of a stream record's c-string cut before its end: as much of it
 * as the line holds, an escape or the quote cut short dropped.
 */
static int
mi_parse_cut_text(struct mi_parse_in *in, struct mi_record *r)
{
	char	*err = in->err, c = 0;
	size_t	 n = 0;

	if (mi_parse_peek(in) != '"')
		return mi_parse_expected(in, "'\"'");
	r->text = xmalloc(in->len - in->pos);
	in->err = NULL;		/* an escape cut short is no error */
	for (in->pos++; in->pos < in->len && in->s[in->pos] != '"'; n++) {
		if (in->s[in->pos] != '\\') {
			r->text[n] = in->s[in->pos++];
			continue;
		}
		/* An escape the cut ends early is not a byte of the text. */
		if (mi_cstring_escape(in, &c) != 0 || in->pos >= in->len)
			break;
		r->text[n] = c;
	}
	in->err = err;
	r->text[n] = '\0';
	r->textlen = n;
	return 0;
}

/*
 * What a line cut before its end says: its token, kind and class, and for a
 * stream, as much of its text as the line holds; results stay empty.
 * -1 with err if not even that can be read.
 */
int
mi_parse_cut(const char *line, size_t len, struct mi_record *r, char *err,
    size_t errlen)
{
	static const char		marks[] = "^*+=~@&";
	static const enum mi_kind	kinds[] = { MI_RESULT, MI_EXEC,
	    MI_STATUS, MI_NOTIFY, MI_CONSOLE, MI_TARGET, MI_LOG };
	struct mi_parse_in		in = { .s = line, .len = len,
	    .err = err, .errlen = errlen };
	const char			*p;
	int				 c, rc;

	memset(r, 0, sizeof *r);
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	r->results = json_object();
	if (mi_parse_token(&in, r) != 0 || (c = mi_parse_peek(&in)) <= 0 ||
	    (p = strchr(marks, c)) == NULL) {
		if (err != NULL && errlen > 0 && err[0] == '\0')
			mi_parse_expected(&in, "a record's mark");
		mi_record_free(r);
		return -1;
	}
	r->kind = kinds[p - marks];
	in.pos++;
	if (r->kind == MI_CONSOLE || r->kind == MI_TARGET || r->kind == MI_LOG)
		rc = r->has_token ? mi_parse_error(&in, 0, "a stream record "
		    "takes no token") : mi_parse_cut_text(&in, r);
	else
		rc = mi_parse_name(&in, r->cls, sizeof r->cls, "a class");
	if (rc != 0) {
		mi_record_free(r);
		return -1;
	}
	return 0;
}

/* Release what a parsed record holds; the record may be freed again. */
void
mi_record_free(struct mi_record *r)
{
	json_decref(r->results);
	free(r->text);
	memset(r, 0, sizeof *r);
}
