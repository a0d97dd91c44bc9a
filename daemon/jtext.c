/*
 * JSON text written straight into a buffer, for the replies of hot paths
 * (an expect's match): members, integers and strings escaped as jansson's
 * compact dump escapes them, with no tree built and no printf. Where a
 * reply's part is rare and intricate, a tree is dumped into it.
 */
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"
#include "fmt.h"
#include "jdump.h"
#include "jtext.h"

/* Make room for n more bytes and the NUL. */
void
jtext_room(struct jtext *t, size_t n)
{
	if (t->len + n + 1 <= t->cap)
		return;
	while (t->len + n + 1 > t->cap)
		t->cap = t->cap != 0 ? t->cap * 2 : 512;
	t->p = xreallocarray(t->p, t->cap, 1);
}

/* Append len bytes: jdump's callback, never failing. */
int
jtext_put(const char *s, size_t len, void *arg)
{
	jtext_raw(arg, s, len);
	return 0;
}

/* Open an object: its members follow. */
void
jtext_open(struct jtext *t)
{
	jtext_raw(t, "{", 1);
	t->first = true;
}

/* The name of the next member, after a comma unless it is the first. */
void
jtext_key(struct jtext *t, const char *key)
{
	size_t n = strlen(key);

	jtext_room(t, n + 4);
	if (!t->first)
		t->p[t->len++] = ',';
	t->first = false;
	t->p[t->len++] = '"';
	memcpy(t->p + t->len, key, n);
	t->len += n;
	t->p[t->len++] = '"';
	t->p[t->len++] = ':';
	t->p[t->len] = '\0';
}

/* An integer, in decimal. */
void
jtext_int(struct jtext *t, long long v)
{
	char		 buf[24];
	const char	*p = fmt_int(v, buf);

	jtext_raw(t, p, (size_t)(buf + 23 - p));
}

/* Bytes as a string if they are UTF-8, else as {"base64": ...}. */
void
jtext_bytes(struct jtext *t, const char *s, size_t len)
{
	size_t	 at = t->len;
	char	*b;

	/* jtext_put never fails: jdump_string fails only on text not UTF-8. */
	jtext_room(t, len + 2);
	if (jdump_string(s, len, jtext_put, t) == 0)
		return;
	t->len = at;
	t->p[at] = '\0';
	b = xb64_encode(s, len);
	jtext_raw(t, "{\"base64\":\"", 11);
	jtext_raw(t, b, strlen(b));
	jtext_raw(t, "\"}", 2);
	free(b);
}

/* A tree (taken), dumped compact. */
void
jtext_json(struct jtext *t, json_t *v)
{
	if (jdump(v, jtext_put, t) != 0)
		log_fatal("cannot write a reply's part");
	json_decref(v);
}

/* Close the object; the text (to free) and its length. */
char *
jtext_close(struct jtext *t, size_t *len)
{
	jtext_raw(t, "}", 1);
	*len = t->len;
	return t->p;
}
