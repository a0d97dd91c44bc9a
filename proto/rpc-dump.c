/*
 * JSON-RPC 2.0 messages written as lines: one compact line each, at most
 * FRAME_MAX bytes, a result reply dumped straight into its line, and an
 * id written back as the request spelled it.
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fmt.h"
#include "jdump.h"
#include "rpc.h"

/* A growing output buffer for rpc_dump, capped at FRAME_MAX content bytes. */
struct rpc_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/* Append size bytes of output to the rpc_dump buffer; -1 past FRAME_MAX. */
static int
rpc_dump_cb(const char *buf, size_t size, void *data)
{
	struct rpc_buf	*b = data;
	size_t		 cap;
	char		*p;

	if (size > FRAME_MAX - b->len)
		return -1;
	if (b->len + size + 2 > b->cap) {
		cap = b->cap != 0 ? b->cap : 256;
		while (cap < b->len + size + 2)
			cap *= 2;
		if ((p = realloc(b->p, cap)) == NULL)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, buf, size);
	b->len += size;
	return 0;
}

/*
 * Serialize msg as one compact UTF-8 line ending in LF (also NUL-terminated);
 * NULL if it fails or its content would exceed FRAME_MAX bytes.
 */
char *
rpc_dump(const json_t *msg, size_t *len)
{
	struct rpc_buf	b = { NULL, 0, 0 };

	if ((!json_is_object(msg) && !json_is_array(msg)) ||
	    jdump(msg, rpc_dump_cb, &b) != 0 ||
	    b.p == NULL) {
		free(b.p);
		return NULL;
	}
	b.p[b.len++] = '\n';
	b.p[b.len] = '\0';
	*len = b.len;
	return b.p;
}

/*
 * Start a result reply line in b: the envelope, then the id as id_text
 * spells it or as id dumps; -1 if it fails.
 */
static int
rpc_dump_head(struct rpc_buf *b, const json_t *id, const char *id_text)
{
	static const char	head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char	mid[] = ",\"result\":";
	char			num[24];

	if (rpc_dump_cb(head, sizeof head - 1, b) != 0)
		return -1;
	if (id_text == NULL && json_is_integer(id))
		id_text = fmt_int(json_integer_value(id), num);
	if (id_text != NULL ? rpc_dump_cb(id_text, strlen(id_text), b) :
	    jdump(id != NULL ? id : json_null(), rpc_dump_cb, b))
		return -1;
	return rpc_dump_cb(mid, sizeof mid - 1, b);
}

/* End a reply line in b: the brace, LF and NUL; the line, or NULL. */
static char *
rpc_dump_tail(struct rpc_buf *b, size_t *len)
{
	if (rpc_dump_cb("}", 1, b) != 0) {
		free(b->p);
		return NULL;
	}
	b->p[b->len++] = '\n';
	b->p[b->len] = '\0';
	*len = b->len;
	return b->p;
}

/*
 * A result reply as one line, the result dumped straight into it (no
 * envelope object is built); NULL past FRAME_MAX or on failure.
 */
char *
rpc_dump_result(const json_t *id, const char *id_text, const json_t *result,
    size_t *len)
{
	struct rpc_buf	b = { NULL, 0, 0 };

	if (rpc_dump_head(&b, id, id_text) != 0 ||
	    jdump(result, rpc_dump_cb, &b) != 0) {
		free(b.p);
		return NULL;
	}
	return rpc_dump_tail(&b, len);
}

/* A result reply as one line around a result already written as JSON text. */
char *
rpc_dump_result_text(const json_t *id, const char *id_text, const char *result,
    size_t rlen, size_t *len)
{
	struct rpc_buf	b = { NULL, 0, 0 };

	if (rpc_dump_head(&b, id, id_text) != 0 ||
	    rpc_dump_cb(result, rlen, &b) != 0) {
		free(b.p);
		return NULL;
	}
	return rpc_dump_tail(&b, len);
}

/*
 * Serialise msg as rpc_dump does, with its "id" written as id_text (the
 * request's own spelling of a number) when that is given.
 */
char *
rpc_dump_id(const json_t *msg, const char *id_text, size_t *len)
{
	static const char	 head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	char			*line, *out, *rest;
	size_t			 n, h = sizeof head - 1;

	if ((line = rpc_dump(msg, len)) == NULL || id_text == NULL ||
	    strncmp(line, head, h) != 0)
		return line;
	rest = line + h + strcspn(line + h, ",}");
	n = h + strlen(id_text) + strlen(rest);
	if (n > FRAME_MAX + 1 || (out = malloc(n + 1)) == NULL)
		return line;
	memcpy(out, line, h);
	strcpy(out + h, id_text);
	strcat(out, rest);
	free(line);
	*len = strlen(out);
	return out;
}
