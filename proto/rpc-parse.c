/*
 * JSON-RPC 2.0 requests parsed and validated: the common request with
 * flat params read by the pull reader, any other by jansson, and a
 * number id kept as the request spelled it.
 */
#include <stdlib.h>
#include <string.h>

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

/* Tell whether v may be a request id: string, number or null. */
static int
rpc_parse_valid_id(const json_t *v)
{
	return json_is_string(v) || json_is_integer(v) || json_is_real(v) ||
	    json_is_null(v);
}

/* A flat value (string, integer, true, false, null) as a tree, or NULL. */
static json_t *
rpc_parse_bare_scalar(struct scan *sc)
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
rpc_parse_bare_params(struct scan *sc, json_t **out)
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
		if ((v = rpc_parse_bare_scalar(sc)) == NULL ||
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
rpc_parse_bare_value(struct scan *sc, const char *key, size_t klen,
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
		return rpc_parse_bare_params(sc, &b->params);
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
		    !rpc_parse_bare_value(&sc, key, klen, &b))
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
rpc_parse_is_batch(const char *line)
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
	if (id != NULL && !rpc_parse_valid_id(id)) {
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
		req->id_text = rpc_parse_id_text(line, len);
	json_decref(err->id);
	err->id = NULL;
	return 0;

fail:
	json_decref(root);
	return -1;
}

/* Release what rpc_parse gave req; safe on a zeroed or failed request. */
void
rpc_parse_free(struct rpc_request *req)
{
	json_decref(req->root);
	free(req->id_text);
	memset(req, 0, sizeof *req);
}

/*
 * The text of the top-level "id" of a request line when it is a number
 * jansson would not write back as sent (1e3, 1.50); NULL otherwise.
 */
char *
rpc_parse_id_text(const char *line, size_t len)
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
