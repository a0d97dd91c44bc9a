/* JSON-RPC 2.0 envelopes: parse and validate requests, build replies. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "rpc.h"
#include "scan.h"

/* What a bare request (flat params or none) held, pointing into its line. */
struct rpc_bare {
	int		 seen;		/* jsonrpc 1, method 2, id 4, params 8 */
	const char	*method;
	size_t		 mlen;
	int		 id_is_string;
	const char	*id_str;
	size_t		 id_len;
	long long	 id_int;
	json_t		*params;	/* flat, or NULL when absent */
};

/* A growing output buffer for rpc_dump, capped at FRAME_MAX content bytes. */
struct rpc_buf {
	char	*p;
	size_t	 len;
	size_t	 cap;
};

/* Return the stable data.kind string of an error code. */
const char *
rpc_kind(int code)
{
	switch (code) {
	case RPC_PARSE_ERROR:
		return "parse_error";
	case RPC_INVALID_REQUEST:
		return "invalid_request";
	case RPC_METHOD_NOT_FOUND:
		return "method_not_found";
	case RPC_INVALID_PARAMS:
		return "invalid_params";
	case RPC_INTERNAL_ERROR:
		return "internal_error";
	case RPC_NO_SUCH_SESSION:
		return "no_such_session";
	case RPC_NOT_RUNNING:
		return "not_running";
	case RPC_SPAWN_FAILED:
		return "spawn_failed";
	case RPC_NOT_READY:
		return "not_ready";
	case RPC_TIMEOUT:
		return "timeout";
	case RPC_UNAUTHORIZED:
		return "unauthorized";
	case RPC_LIMIT:
		return "limit";
	case RPC_NAME_IN_USE:
		return "name_in_use";
	case RPC_NOT_SUPPORTED:
		return "not_supported";
	case RPC_SHUTTING_DOWN:
		return "shutting_down";
	case RPC_DEBUGGER_ERROR:
		return "debugger_error";
	case RPC_BUSY:
		return "busy";
	case RPC_EOF:
		return "eof";
	case RPC_EXISTS:
		return "exists";
	case RPC_IO_ERROR:
		return "io_error";
	case RPC_VERDICT:
		return "verdict";
	}
	return "error";
}

/* Set the code and the printf-formatted message of err; err->id is kept. */
void
rpc_error_set(struct rpc_error *err, int code, const char *fmt, ...)
{
	va_list	ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
}

/* Tell whether v may be a request id: string, number or null. */
static int
rpc_valid_id(const json_t *v)
{
	return json_is_string(v) || json_is_integer(v) || json_is_real(v) ||
	    json_is_null(v);
}

/* A flat value (string, integer, true, false, null) as a tree, or NULL. */
static json_t *
rpc_bare_scalar(struct scan *sc)
{
	const char	*s;
	char		*text;
	size_t		 n;
	long long	 i;
	json_t		*v;

	if (scan_plain(sc, &s, &n))
		return json_stringn_nocheck(s, n);
	/*
	 * Escapes and UTF-8 (an expect's "exact":"ok\n"), undone and checked
	 * as jansson does: \u0000 and bad UTF-8 are refused, and the general
	 * parser then gives its own reason.
	 */
	if (scan_peek(sc) == '"') {
		if ((text = scan_string(sc)) == NULL)
			return NULL;
		v = json_stringn_nocheck(text, strlen(text));
		free(text);
		return v;
	}
	if (scan_int(sc, &i))
		return json_integer(i);
	if (scan_word(sc, "true"))
		return json_true();
	if (scan_word(sc, "false"))
		return json_false();
	if (scan_word(sc, "null"))
		return json_null();
	return NULL;
}

/*
 * Flat params: an object of strings, integers, booleans and nulls (a
 * write's base64, an expect's literal) into *out, built without the
 * general parser; false for anything else, *out then the caller's to free.
 */
static bool
rpc_bare_params(struct scan *sc, json_t **out)
{
	const char	*key;
	size_t		 klen;
	char		 name[64];
	json_t		*v;

	*out = json_object();
	if (!scan_take(sc, '{'))
		return false;
	if (scan_take(sc, '}'))
		return true;
	do {
		if (!scan_plain(sc, &key, &klen) || klen >= sizeof name ||
		    !scan_take(sc, ':'))
			return false;
		memcpy(name, key, klen);
		name[klen] = '\0';
		/* A key given twice is the general parser's to refuse. */
		if ((v = rpc_bare_scalar(sc)) == NULL ||
		    json_object_get(*out, name) != NULL) {
			json_decref(v);
			return false;
		}
		json_object_set_new_nocheck(*out, name, v);
	} while (scan_take(sc, ','));
	return scan_take(sc, '}');
}

/* One member's value of a bare request into b; false if it is not one. */
static bool
rpc_bare_value(struct scan *sc, const char *key, size_t klen,
    struct rpc_bare *b)
{
	const char	*s;
	size_t		 n;

#define RPC_KEY(k) (klen == sizeof k - 1 && memcmp(key, k, klen) == 0)
	if (RPC_KEY("jsonrpc") && !(b->seen & 1)) {
		b->seen |= 1;
		return scan_plain(sc, &s, &n) && n == 3 &&
		    memcmp(s, "2.0", 3) == 0;
	}
	if (RPC_KEY("method") && !(b->seen & 2)) {
		b->seen |= 2;
		return scan_plain(sc, &b->method, &b->mlen);
	}
	if (RPC_KEY("id") && !(b->seen & 4)) {
		b->seen |= 4;
		b->id_is_string = scan_peek(sc) == '"';
		return b->id_is_string ? scan_plain(sc, &b->id_str,
		    &b->id_len) : scan_int(sc, &b->id_int);
	}
	if (RPC_KEY("params") && !(b->seen & 8)) {
		b->seen |= 8;
		return rpc_bare_params(sc, &b->params);
	}
#undef RPC_KEY
	return false;
}

/*
 * The common request with flat params or none, {"jsonrpc":"2.0","id":N,
 * "method":"M","params":{...}}, read with the pull reader instead of the
 * general parser, which costs several times as much a byte: 0 if line is
 * one, -1 for anything else (which the general parser then reads, and
 * refuses where it must).
 */
static int
rpc_parse_bare(const char *line, size_t len, struct rpc_request *req)
{
	struct scan	 sc;
	struct rpc_bare	 b;
	const char	*key;
	size_t		 klen;
	json_t		*root;

	memset(&b, 0, sizeof b);
	scan_init(&sc, line, len);
	if (!scan_take(&sc, '{'))
		return -1;
	do {
		if (!scan_plain(&sc, &key, &klen) || !scan_take(&sc, ':') ||
		    !rpc_bare_value(&sc, key, klen, &b))
			goto fail;
	} while (scan_take(&sc, ','));
	if (!scan_take(&sc, '}') || !scan_done(&sc) || (b.seen & 3) != 3)
		goto fail;
	root = json_object();
	json_object_set_new_nocheck(root, "method", json_stringn(b.method,
	    b.mlen));
	json_object_set_new_nocheck(root, "params", b.params != NULL ?
	    b.params : json_object());
	if (b.seen & 4)
		json_object_set_new_nocheck(root, "id", b.id_is_string ?
		    json_stringn(b.id_str, b.id_len) : json_integer(b.id_int));
	req->root = root;
	req->id = json_object_get(root, "id");
	req->method = json_string_value(json_object_get(root, "method"));
	req->params = json_object_get(root, "params");
	if (req->method == NULL || req->params == NULL ||
	    ((b.seen & 4) && req->id == NULL))
		return json_decref(root), memset(req, 0, sizeof *req), -1;
	return 0;

fail:
	/* Whatever params it built so far are its own until root takes them. */
	json_decref(b.params);
	return -1;
}

/* Whether a request line is a batch: a JSON array, by its first byte. */
bool
rpc_is_batch(const char *line)
{
	return line[strspn(line, " \t")] == '[';
}

/* Parse and validate one request line into req; -1 and err on failure. */
int
rpc_parse(const char *line, size_t len, struct rpc_request *req,
    struct rpc_error *err)
{
	json_error_t	 jerr;
	json_t		*root, *id, *v, *params;

	memset(req, 0, sizeof *req);
	err->id = NULL;
	if (rpc_parse_bare(line, len, req) == 0)
		return 0;

	/* JSON_DECODE_ANY: a scalar is an invalid request, not unparsable. */
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
	    &jerr);
	if (root == NULL) {
		rpc_error_set(err, RPC_PARSE_ERROR,
		    "parse error: %s at position %d", jerr.text, jerr.position);
		return -1;
	}
	if (!json_is_object(root)) {
		rpc_error_set(err, RPC_INVALID_REQUEST,
		    "request must be a JSON object");
		goto fail;
	}

	id = json_object_get(root, "id");
	if (id != NULL && !rpc_valid_id(id)) {
		rpc_error_set(err, RPC_INVALID_REQUEST,
		    "\"id\" must be a string, a number or null");
		goto fail;
	}
	/* From here on an error reply can echo the id. */
	err->id = json_incref(id);

	v = json_object_get(root, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0 ||
	    json_string_length(v) != 3) {
		rpc_error_set(err, RPC_INVALID_REQUEST,
		    "\"jsonrpc\" must be \"2.0\"");
		goto fail;
	}
	v = json_object_get(root, "method");
	if (v == NULL && (json_object_get(root, "result") != NULL ||
	    json_object_get(root, "error") != NULL)) {
		rpc_error_set(err, RPC_NO_REPLY, "a response, not a request");
		goto fail;
	}
	if (v == NULL) {
		rpc_error_set(err, RPC_INVALID_REQUEST,
		    "\"method\" is required");
		goto fail;
	}
	if (!json_is_string(v)) {
		rpc_error_set(err, RPC_INVALID_REQUEST,
		    "\"method\" must be a string");
		goto fail;
	}
	params = json_object_get(root, "params");
	if (params == NULL) {
		/* Keep params inside root so freeing root frees it too. */
		if (json_object_set_new(root, "params", json_object()) != 0) {
			rpc_error_set(err, RPC_INTERNAL_ERROR,
			    "out of memory");
			goto fail;
		}
		params = json_object_get(root, "params");
	} else if (!json_is_object(params)) {
		rpc_error_set(err, RPC_INVALID_PARAMS,
		    "params must be an object");
		goto fail;
	}

	req->root = root;
	req->id = id;
	req->method = json_string_value(v);
	req->params = params;
	if (json_is_real(req->id))
		req->id_text = rpc_id_text(line, len);
	json_decref(err->id);
	err->id = NULL;
	return 0;

fail:
	json_decref(root);
	return -1;
}

/* Release what rpc_parse gave req; safe on a zeroed or failed request. */
void
rpc_request_free(struct rpc_request *req)
{
	json_decref(req->root);
	free(req->id_text);
	memset(req, 0, sizeof *req);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t
rpc_utf8_len(const unsigned char *s, size_t n)
{
	size_t		need, i;
	unsigned int	c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		need = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		need = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		need = 4;
		c = s[0] & 0x07;
	} else
		return 0;
	if (n < need)
		return 0;
	for (i = 1; i < need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((need == 3 && c < 0x800) || (need == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return need;
}

/*
 * Make a JSON string of s, replacing bytes that are not valid UTF-8 (a file
 * name in a message, say) with U+FFFD so the reply can still be sent.
 */
static json_t *
rpc_string(const char *s)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n, i, k, o = 0;
	char			*copy;
	json_t			*v;

	if ((v = json_string(s)) != NULL)
		return v;
	n = strlen(s);
	if ((copy = malloc(n * 3 + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i += k) {
		if ((k = rpc_utf8_len(p + i, n - i)) == 0) {
			memcpy(copy + o, "\xef\xbf\xbd", 3);
			o += 3;
			k = 1;
		} else {
			memcpy(copy + o, p + i, k);
			o += k;
		}
	}
	copy[o] = '\0';
	v = json_string(copy);
	free(copy);
	return v;
}

/* Start a message: {"jsonrpc":"2.0"} and, if with_id, the id (NULL: null). */
static json_t *
rpc_envelope(json_t *id, int with_id)
{
	json_t	*msg;

	if ((msg = json_object()) == NULL)
		return NULL;
	if (json_object_set_new(msg, "jsonrpc", json_string("2.0")) != 0)
		goto fail;
	if (with_id && json_object_set(msg, "id",
	    id != NULL ? id : json_null()) != 0)
		goto fail;
	return msg;

fail:
	json_decref(msg);
	return NULL;
}

/* Build a request; steals params (NULL: omitted), not id (NULL: null). */
json_t *
rpc_request_new(json_t *id, const char *method, json_t *params)
{
	json_t	*msg;

	if ((msg = rpc_envelope(id, 1)) == NULL)
		goto fail;
	if (json_object_set_new(msg, "method", json_string(method)) != 0)
		goto fail;
	if (params != NULL) {
		if (json_object_set_new(msg, "params", params) != 0) {
			json_decref(msg);
			return NULL;
		}
	}
	return msg;

fail:
	json_decref(msg);
	json_decref(params);
	return NULL;
}

/* Build a result reply; steals result (NULL: {}), not id (NULL: null). */
json_t *
rpc_result_new(json_t *id, json_t *result)
{
	json_t	*msg;

	if (result == NULL && (result = json_object()) == NULL)
		return NULL;
	if ((msg = rpc_envelope(id, 1)) == NULL) {
		json_decref(result);
		return NULL;
	}
	if (json_object_set_new(msg, "result", result) != 0) {
		json_decref(msg);
		return NULL;
	}
	return msg;
}

/*
 * Build an error reply; steals data (NULL: {}), not id (NULL: null), and
 * adds data.kind from the code unless data already has a "kind".
 */
json_t *
rpc_error_new(json_t *id, int code, const char *message, json_t *data)
{
	json_t	*msg, *error;

	if (data == NULL && (data = json_object()) == NULL)
		return NULL;
	if (json_is_object(data) && json_object_get(data, "kind") == NULL &&
	    json_object_set_new(data, "kind", json_string(rpc_kind(code))) != 0)
		goto fail;
	if (message == NULL)
		message = rpc_kind(code);

	if ((error = json_object()) == NULL)
		goto fail;
	if (json_object_set_new(error, "code", json_integer(code)) != 0 ||
	    json_object_set_new(error, "message", rpc_string(message)) != 0) {
		json_decref(error);
		goto fail;
	}
	if (json_object_set_new(error, "data", data) != 0) {
		json_decref(error);
		return NULL;
	}
	if ((msg = rpc_envelope(id, 1)) == NULL) {
		json_decref(error);
		return NULL;
	}
	if (json_object_set_new(msg, "error", error) != 0) {
		json_decref(msg);
		return NULL;
	}
	return msg;

fail:
	json_decref(data);
	return NULL;
}

/* Build a notification (no id); steals params (NULL: omitted). */
json_t *
rpc_notification_new(const char *method, json_t *params)
{
	json_t	*msg;

	if ((msg = rpc_envelope(NULL, 0)) == NULL ||
	    json_object_set_new(msg, "method", json_string(method)) != 0) {
		json_decref(msg);
		json_decref(params);
		return NULL;
	}
	if (params != NULL && json_object_set_new(msg, "params", params) != 0) {
		json_decref(msg);
		return NULL;
	}
	return msg;
}

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

	if (json_dump_callback(msg, rpc_dump_cb, &b, JSON_COMPACT) != 0 ||
	    b.p == NULL) {
		free(b.p);
		return NULL;
	}
	b.p[b.len++] = '\n';
	b.p[b.len] = '\0';
	*len = b.len;
	return b.p;
}

/* n in decimal, written into buf (24 bytes) without printf's machinery. */
static const char *
rpc_int_text(json_int_t n, char *buf)
{
	unsigned long long	u = n < 0 ? 0ULL - (unsigned long long)n :
				    (unsigned long long)n;
	char			*p = buf + 23;

	*p = '\0';
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (n < 0)
		*--p = '-';
	return p;
}

/*
 * Start a result reply line in b: the envelope, then the id as id_text
 * spells it or as id dumps; -1 if it fails.
 */
static int
rpc_result_head(struct rpc_buf *b, const json_t *id, const char *id_text)
{
	static const char	head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char	mid[] = ",\"result\":";
	char			num[24];

	if (rpc_dump_cb(head, sizeof head - 1, b) != 0)
		return -1;
	if (id_text == NULL && json_is_integer(id))
		id_text = rpc_int_text(json_integer_value(id), num);
	if (id_text != NULL ? rpc_dump_cb(id_text, strlen(id_text), b) :
	    json_dump_callback(id != NULL ? id : json_null(), rpc_dump_cb, b,
	    JSON_COMPACT | JSON_ENCODE_ANY))
		return -1;
	return rpc_dump_cb(mid, sizeof mid - 1, b);
}

/* End a reply line in b: the brace, LF and NUL; the line, or NULL. */
static char *
rpc_result_tail(struct rpc_buf *b, size_t *len)
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
rpc_result_dump(const json_t *id, const char *id_text, const json_t *result,
    size_t *len)
{
	struct rpc_buf	b = { NULL, 0, 0 };

	if (rpc_result_head(&b, id, id_text) != 0 ||
	    json_dump_callback(result, rpc_dump_cb, &b, JSON_COMPACT) != 0) {
		free(b.p);
		return NULL;
	}
	return rpc_result_tail(&b, len);
}

/* A result reply as one line around a result already written as JSON text. */
char *
rpc_result_text(const json_t *id, const char *id_text, const char *result,
    size_t rlen, size_t *len)
{
	struct rpc_buf	b = { NULL, 0, 0 };

	if (rpc_result_head(&b, id, id_text) != 0 ||
	    rpc_dump_cb(result, rlen, &b) != 0) {
		free(b.p);
		return NULL;
	}
	return rpc_result_tail(&b, len);
}

/*
 * The text of the top-level "id" of a request line when it is a number
 * jansson would not write back as sent (1e3, 1.50); NULL otherwise.
 */
char *
rpc_id_text(const char *line, size_t len)
{
	struct scan	 sc;
	const char	*v;
	char		*key, *text = NULL;
	size_t		 n;
	bool		 first = true, id;

	scan_init(&sc, line, len);
	if (!scan_take(&sc, '{'))
		return NULL;
	while ((key = scan_member(&sc, &first)) != NULL) {
		id = strcmp(key, "id") == 0;
		free(key);
		/* Past white space, v is where the value starts. */
		if (id && scan_peek(&sc) == '"')
			return NULL;
		v = sc.p;
		if (!scan_skip(&sc))
			return NULL;
		n = (size_t)(sc.p - v);
		if (!id)
			continue;
		if (memchr(v, '.', n) == NULL && memchr(v, 'e', n) == NULL &&
		    memchr(v, 'E', n) == NULL)
			return NULL;
		if ((text = malloc(n + 1)) != NULL) {
			memcpy(text, v, n);
			text[n] = '\0';
		}
		return text;
	}
	return NULL;
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
