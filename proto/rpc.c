/*
 * JSON-RPC 2.0 messages: the errors' stable kinds, and requests, replies
 * and notifications built. Requests are parsed in rpc-parse.c, messages
 * written as lines in rpc-dump.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc.h"

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
