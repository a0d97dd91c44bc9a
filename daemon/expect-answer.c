/*
 * What an expect answers: its match, written as JSON text straight (the
 * answer of every round trip of a rig's expect; a tree and its dump cost
 * as much as the rest of the request), with trees only for capture
 * groups; and, at a timeout or the stream's end, every byte that came.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "jtext.h"
#include "expect-state.h"

/* Most bytes of `before` and of a timeout's `got` an answer carries. */
#define EXPECT_BEFORE_MAX (256 * 1024)
#define EXPECT_GOT_MAX (512 * 1024)

/* The bytes' JSON: a string if they are UTF-8, else {"base64": ...}. */
static json_t *
expect_answer_tree(const char *data, size_t len)
{
	json_t	*v = json_stringn(data, len);
	char	*b;

	if (v != NULL)
		return v;
	b = xb64_encode(data, len);
	v = json_pack("{s:s}", "base64", b);
	free(b);
	return v;
}

/*
 * Up to max bytes of the stream before offset end, from start at the
 * earliest, into a buffer to free (*n bytes), from *at.
 */
static char *
expect_answer_span(struct output *o, uint64_t start, uint64_t end,
    size_t max, uint64_t *at, size_t *n)
{
	char		*buf;
	size_t		 got;
	uint64_t	 off;

	/* From past the end (a `from` ahead of the stream): nothing came. */
	if (start > end)
		end = start;
	if (end - start > max)
		start = end - max;
	*at = start;
	*n = 0;
	buf = xmalloc(end - start + 1);
	for (off = start; off < end; off += got) {
		got = output_read(o, off, buf + *n, end - off);
		/* A hole in the log: what follows it is still given. */
		if (got == 0) {
			got = output_missing(o, off) - off;
			if (got == 0)
				break;
			continue;
		}
		*n += got;
	}
	return buf;
}

/* Group g of the match as JSON (null when it took no part), its span too. */
static void
expect_answer_group(struct expect *e, size_t *ov, uint32_t g, json_t **text,
    json_t **span)
{
	if (ov[2 * g] == PCRE2_UNSET) {
		*text = json_null();
		*span = json_null();
		return;
	}
	*text = expect_answer_tree(e->buf + ov[2 * g], ov[2 * g + 1] -
	    ov[2 * g]);
	*span = json_pack("[I, I]", (json_int_t)(e->base + ov[2 * g]),
	    (json_int_t)(e->base + ov[2 * g + 1]));
}

/* The named groups of pattern p: {"name": text or null}. */
static json_t *
expect_answer_named(struct expect *e, struct pattern *p, size_t *ov)
{
	const unsigned char	*table;
	uint32_t		 count, size, i, g;
	json_t			*o = json_object(), *text, *span;

	pattern_names(p, &count, &size, &table);
	for (i = 0; i < count; i++, table += size) {
		g = ((uint32_t)table[0] << 8) | table[1];
		expect_answer_group(e, ov, g, &text, &span);
		json_decref(span);
		/* Duplicate names (?J) keep the first that took part. */
		if (json_is_null(text) && json_object_get(o,
		    (const char *)table + 2) != NULL) {
			json_decref(text);
			continue;
		}
		json_object_set_new(o, (const char *)table + 2, text);
	}
	return o;
}

/* The groups, their spans and the named ones; a literal's are empty. */
static void
expect_answer_groups(struct jtext *t, struct expect *e, struct pattern *p)
{
	json_t		*groups, *spans, *text, *span;
	uint32_t	 g, count, size;
	const unsigned char *table;

	pattern_names(p, &count, &size, &table);
	if (pattern_groups(p) == 0 && count == 0) {
		jtext_raw(t, ",\"groups\":[],\"spans\":[],\"named\":{}", 34);
		return;
	}
	groups = json_array();
	spans = json_array();
	for (g = 1; g <= pattern_groups(p); g++) {
		expect_answer_group(e, e->ov, g, &text, &span);
		json_array_append_new(groups, text);
		json_array_append_new(spans, span);
	}
	jtext_key(t, "groups");
	jtext_json(t, groups);
	jtext_key(t, "spans");
	jtext_json(t, spans);
	jtext_key(t, "named");
	jtext_json(t, expect_answer_named(e, p, e->ov));
}

/* The answer to a match, as JSON text (*len bytes): see dbgctl-protocol(7). */
char *
expect_answer(struct expect *e, size_t *len)
{
	struct jtext	 t = { 0 };
	size_t		*ov = e->ov, n;
	uint64_t	 start = e->base + ov[0], end = e->base + ov[1], at;
	char		*before;

	if (!e->matched)
		log_fatal("an expect answered without a match");
	jtext_open(&t);
	jtext_key(&t, "stream");
	jtext_bytes(&t, e->stream, strlen(e->stream));
	jtext_key(&t, "index");
	jtext_int(&t, (long long)e->index);
	jtext_key(&t, "from");
	jtext_int(&t, (long long)e->from);
	jtext_key(&t, "offset");
	jtext_int(&t, (long long)start);
	jtext_key(&t, "end");
	jtext_int(&t, (long long)end);
	jtext_key(&t, "text");
	jtext_bytes(&t, e->buf + ov[0], ov[1] - ov[0]);
	expect_answer_groups(&t, e, e->pats[e->index]);
	jtext_key(&t, "next");
	jtext_int(&t, (long long)end);
	before = expect_answer_span(e->o, e->from, start, EXPECT_BEFORE_MAX, &at,
	    &n);
	jtext_key(&t, "before");
	jtext_bytes(&t, before, n);
	free(before);
	jtext_key(&t, "before_offset");
	jtext_int(&t, (long long)at);
	return jtext_close(&t, len);
}

/* The data of a timeout or eof: what came from `from` to now (the last of it). */
json_t *
expect_answer_got(struct expect *e)
{
	uint64_t	 size = output_size(e->o), at;
	size_t		 n;
	char		*buf;
	json_t		*got;

	buf = expect_answer_span(e->o, e->from, size, EXPECT_GOT_MAX, &at, &n);
	got = expect_answer_tree(buf, n);
	free(buf);
	return json_pack("{s:s, s:I, s:o, s:I, s:I}", "stream", e->stream,
	    "from", (json_int_t)e->from, "got", got, "got_offset",
	    (json_int_t)at, "next", (json_int_t)size);
}
