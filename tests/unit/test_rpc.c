/* Unit tests of JSON-RPC parsing, validation and building (proto/rpc.c). */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "rpc.h"

/* Parse a C string as a request line. */
static int
rpc_test_parse(const char *s, struct rpc_request *req, struct rpc_error *err)
{
	return rpc_parse(s, strlen(s), req, err);
}

/* Assert s is refused with code; return the error (caller decrefs id). */
static void
rpc_test_refused(const char *s, int code, struct rpc_error *err)
{
	struct rpc_request	req;

	memset(err, 0xa5, sizeof *err);
	cr_assert_eq(rpc_test_parse(s, &req, err), -1, "accepted: %s", s);
	cr_assert_eq(err->code, code, "%s: code %d, want %d (%s)", s,
	    err->code, code, err->message);
	cr_assert_null(req.root, "%s: root left set", s);
	rpc_parse_free(&req);
}

/* Assert s is refused with code and no echoed id. */
static void
rpc_test_refused_noid(const char *s, int code)
{
	struct rpc_error err;

	rpc_test_refused(s, code, &err);
	cr_assert_null(err.id, "%s: id echoed", s);
}

/* Dump msg, compare with want (which lacks the LF), and free msg. */
static void
rpc_test_dump_is(json_t *msg, const char *want)
{
	char	*s;
	size_t	 len;

	cr_assert_not_null(msg);
	s = rpc_dump(msg, &len);
	cr_assert_not_null(s);
	cr_assert_eq(len, strlen(want) + 1, "len %zu for %s", len, s);
	cr_assert_eq(s[len - 1], '\n');
	cr_assert_eq(s[len], '\0');
	s[len - 1] = '\0';
	cr_assert_str_eq(s, want);
	free(s);
	json_decref(msg);
}

Test(rpc, parse_full_request)
{
	struct rpc_request	req;
	struct rpc_error	err;

	cr_assert_eq(rpc_test_parse("{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"launch\",\"params\":{\"argv\":[\"a\"]}}", &req, &err),
	    0);
	cr_assert_null(err.id);
	cr_assert_not_null(req.root);
	cr_assert(json_is_integer(req.id));
	cr_assert_eq(json_integer_value(req.id), 7);
	cr_assert_str_eq(req.method, "launch");
	cr_assert(json_is_object(req.params));
	cr_assert_eq(json_object_size(req.params), 1);
	cr_assert(json_is_array(json_object_get(req.params, "argv")));
	rpc_parse_free(&req);
	cr_assert_null(req.root);
	rpc_parse_free(&req);		/* twice is harmless */
}

Test(rpc, parse_params_absent_is_empty_object)
{
	struct rpc_request	req;
	struct rpc_error	err;

	cr_assert_eq(rpc_test_parse(
	    "{\"method\":\"ping\",\"jsonrpc\":\"2.0\",\"id\":\"x\"}", &req,
	    &err), 0);
	cr_assert(json_is_object(req.params));
	cr_assert_eq(json_object_size(req.params), 0);
	cr_assert_str_eq(json_string_value(req.id), "x");
	rpc_parse_free(&req);
}

Test(rpc, parse_notification)
{
	struct rpc_request	req;
	struct rpc_error	err;

	cr_assert_eq(rpc_test_parse("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}",
	    &req, &err), 0);
	cr_assert_null(req.id, "a missing id is a notification");
	cr_assert_str_eq(req.method, "ping");
	rpc_parse_free(&req);
}

Test(rpc, parse_whitespace_around)
{
	struct rpc_request	req;
	struct rpc_error	err;

	cr_assert_eq(rpc_test_parse(" \t{ \"jsonrpc\" : \"2.0\" , \"id\" : 1 ,"
	    " \"method\" : \"ping\" }  ", &req, &err), 0);
	rpc_parse_free(&req);
}

Test(rpc, id_types_accepted)
{
	struct rpc_request	req;
	struct rpc_error	err;

	cr_assert_eq(rpc_test_parse("{\"jsonrpc\":\"2.0\",\"id\":\"abc\","
	    "\"method\":\"m\"}", &req, &err), 0);
	cr_assert_str_eq(json_string_value(req.id), "abc");
	rpc_parse_free(&req);

	cr_assert_eq(rpc_test_parse("{\"jsonrpc\":\"2.0\",\"id\":-42,"
	    "\"method\":\"m\"}", &req, &err), 0);
	cr_assert_eq(json_integer_value(req.id), -42);
	rpc_parse_free(&req);

	cr_assert_eq(rpc_test_parse("{\"jsonrpc\":\"2.0\",\"id\":1.5,"
	    "\"method\":\"m\"}", &req, &err), 0);
	cr_assert(json_is_real(req.id));
	cr_assert_float_eq(json_real_value(req.id), 1.5, 1e-12);
	rpc_parse_free(&req);

	cr_assert_eq(rpc_test_parse("{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"method\":\"m\"}", &req, &err), 0);
	cr_assert_not_null(req.id, "null id is not a notification");
	cr_assert(json_is_null(req.id));
	rpc_parse_free(&req);
}

Test(rpc, id_types_refused)
{
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"id\":true,"
	    "\"method\":\"m\"}", RPC_INVALID_REQUEST);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"id\":false,"
	    "\"method\":\"m\"}", RPC_INVALID_REQUEST);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},"
	    "\"method\":\"m\"}", RPC_INVALID_REQUEST);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"id\":[1],"
	    "\"method\":\"m\"}", RPC_INVALID_REQUEST);
	/* A bad id wins over other faults: still no id to echo. */
	rpc_test_refused_noid("{\"jsonrpc\":\"1.0\",\"id\":[1]}",
	    RPC_INVALID_REQUEST);
}

Test(rpc, not_json)
{
	struct rpc_error err;

	rpc_test_refused("{", RPC_PARSE_ERROR, &err);
	cr_assert_null(err.id);
	cr_assert_eq(strncmp(err.message, "parse error: ", 13), 0, "%s",
	    err.message);
	cr_assert_not_null(strstr(err.message, " at position "), "%s",
	    err.message);
	rpc_test_refused_noid("hello", RPC_PARSE_ERROR);
	rpc_test_refused_noid("", RPC_PARSE_ERROR);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":\"m\"} x",
	    RPC_PARSE_ERROR);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}{}",
	    RPC_PARSE_ERROR);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",}",
	    RPC_PARSE_ERROR);
}

Test(rpc, parse_error_position)
{
	struct rpc_error err;

	/* jansson counts the bytes read, up to the end of the bad token. */
	rpc_test_refused("{\"a\":1,,}", RPC_PARSE_ERROR, &err);
	cr_assert_str_eq(err.message, "parse error: string or '}' expected "
	    "near ',' at position 8");
}

Test(rpc, invalid_utf8)
{
	struct rpc_error err;

	rpc_test_refused("{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
	    RPC_PARSE_ERROR, &err);
	cr_assert_null(err.id);
	/* An overlong encoding of '/' and a lone surrogate. */
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":\"\xc0\xaf\"}",
	    RPC_PARSE_ERROR);
	rpc_test_refused_noid(
	    "{\"jsonrpc\":\"2.0\",\"method\":\"\xed\xa0\x80\"}",
	    RPC_PARSE_ERROR);
	/* A truncated sequence in a key. */
	rpc_test_refused_noid("{\"\xe2\x82\":1}", RPC_PARSE_ERROR);
}

Test(rpc, parse_error_reply_is_valid_utf8)
{
	struct rpc_error	 err;
	json_t			*msg;
	char			*s;
	size_t			 len;

	/* The reply to a line of bad bytes is itself clean UTF-8. */
	rpc_test_refused("{\"a\":\xff\xfe}", RPC_PARSE_ERROR, &err);
	msg = rpc_error_new(err.id, err.code, err.message, NULL);
	cr_assert_not_null(msg, "message: %s", err.message);
	s = rpc_dump(msg, &len);
	cr_assert_not_null(s);
	cr_assert_null(strchr(s, '\xff'));
	cr_assert_not_null(strstr(s, "\"kind\":\"parse_error\""));
	free(s);
	json_decref(msg);
}

Test(rpc, valid_utf8_accepted)
{
	struct rpc_request	req;
	struct rpc_error	err;

	cr_assert_eq(rpc_test_parse("{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\xa9\","
	    "\"method\":\"m\xe2\x82\xac\"}", &req, &err), 0);
	cr_assert_str_eq(req.method, "m\xe2\x82\xac");
	rpc_parse_free(&req);
}

Test(rpc, embedded_nul_refused)
{
	struct rpc_request	req;
	struct rpc_error	err;
	static const char	line[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"a\0b\"}";

	cr_assert_eq(rpc_parse(line, sizeof line - 1, &req, &err), -1);
	cr_assert_eq(err.code, RPC_PARSE_ERROR);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":\"a\\u0000b\"}",
	    RPC_PARSE_ERROR);
}

Test(rpc, duplicate_keys)
{
	struct rpc_error err;

	rpc_test_refused(
	    "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"method\":\"b\"}",
	    RPC_PARSE_ERROR, &err);
	cr_assert_null(err.id);
	cr_assert_not_null(strstr(err.message, "duplicate"), "%s",
	    err.message);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,"
	    "\"method\":\"a\"}", RPC_PARSE_ERROR);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":\"a\","
	    "\"params\":{\"x\":1,\"x\":1}}", RPC_PARSE_ERROR);
}

Test(rpc, not_an_object)
{
	rpc_test_refused_noid("[]", RPC_INVALID_REQUEST);
	rpc_test_refused_noid("[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]",
	    RPC_INVALID_REQUEST);
	rpc_test_refused_noid("1", RPC_INVALID_REQUEST);
	rpc_test_refused_noid("\"x\"", RPC_INVALID_REQUEST);
	rpc_test_refused_noid("null", RPC_INVALID_REQUEST);
	rpc_test_refused_noid("true", RPC_INVALID_REQUEST);
}

Test(rpc, jsonrpc_version)
{
	struct rpc_error err;

	rpc_test_refused("{\"id\":3,\"method\":\"m\"}", RPC_INVALID_REQUEST,
	    &err);
	cr_assert_eq(json_integer_value(err.id), 3, "id echoed");
	cr_assert_str_eq(err.message, "\"jsonrpc\" must be \"2.0\"");
	json_decref(err.id);

	rpc_test_refused("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"m\"}",
	    RPC_INVALID_REQUEST, &err);
	cr_assert_eq(json_integer_value(err.id), 3);
	json_decref(err.id);

	rpc_test_refused("{\"jsonrpc\":2.0,\"id\":3,\"method\":\"m\"}",
	    RPC_INVALID_REQUEST, &err);
	cr_assert_eq(json_integer_value(err.id), 3);
	json_decref(err.id);

	rpc_test_refused("{\"jsonrpc\":\"2.00\",\"id\":3,\"method\":\"m\"}",
	    RPC_INVALID_REQUEST, &err);
	json_decref(err.id);

	rpc_test_refused_noid("{\"jsonrpc\":null,\"method\":\"m\"}",
	    RPC_INVALID_REQUEST);
}

Test(rpc, method_types)
{
	struct rpc_error err;

	rpc_test_refused("{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":5}",
	    RPC_INVALID_REQUEST, &err);
	cr_assert_str_eq(json_string_value(err.id), "q");
	cr_assert_str_eq(err.message, "\"method\" must be a string");
	json_decref(err.id);

	rpc_test_refused("{\"jsonrpc\":\"2.0\",\"id\":\"q\"}",
	    RPC_INVALID_REQUEST, &err);
	cr_assert_str_eq(json_string_value(err.id), "q");
	json_decref(err.id);

	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":null}",
	    RPC_INVALID_REQUEST);
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":[\"m\"]}",
	    RPC_INVALID_REQUEST);
}

Test(rpc, params_types)
{
	static const char *bad[] = { "[]", "[1,2]", "\"s\"", "3", "null",
	    "true" };
	char			line[256];
	struct rpc_error	err;
	size_t			i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":9,"
		    "\"method\":\"m\",\"params\":%s}", bad[i]);
		rpc_test_refused(line, RPC_INVALID_PARAMS, &err);
		cr_assert_str_eq(err.message, "params must be an object");
		cr_assert_eq(json_integer_value(err.id), 9, "%s", line);
		json_decref(err.id);
	}
}

Test(rpc, error_id_echo_types)
{
	struct rpc_error	 err;
	json_t			*msg;

	rpc_test_refused("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":1}",
	    RPC_INVALID_REQUEST, &err);
	cr_assert_not_null(err.id);
	cr_assert(json_is_null(err.id));
	json_decref(err.id);

	rpc_test_refused("{\"jsonrpc\":\"2.0\",\"id\":2.25,\"method\":1}",
	    RPC_INVALID_REQUEST, &err);
	msg = rpc_error_new(err.id, err.code, err.message, NULL);
	json_decref(err.id);
	rpc_test_dump_is(msg, "{\"jsonrpc\":\"2.0\",\"id\":2.25,\"error\":"
	    "{\"code\":-32600,\"message\":\"\\\"method\\\" must be a string\","
	    "\"data\":{\"kind\":\"invalid_request\"}}}");

	/* A notification's error has no id to echo. */
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"method\":\"m\","
	    "\"params\":[]}", RPC_INVALID_PARAMS);
}

Test(rpc, reply_echoes_request_id)
{
	static const char *ids[] = { "1", "-5", "\"s\"", "null", "1.5",
	    "9223372036854775807", "\"\\u00e9\"" };
	static const char *out[] = { "1", "-5", "\"s\"", "null", "1.5",
	    "9223372036854775807", "\"\xc3\xa9\"" };
	struct rpc_request	 req;
	struct rpc_error	 err;
	char			 line[256], want[256];
	size_t			 i;

	for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		snprintf(line, sizeof line,
		    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}",
		    ids[i]);
		cr_assert_eq(rpc_test_parse(line, &req, &err), 0, "%s", line);
		snprintf(want, sizeof want,
		    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", out[i]);
		rpc_test_dump_is(rpc_result_new(req.id, NULL), want);
		rpc_parse_free(&req);
	}
}

Test(rpc, integer_id_too_big)
{
	rpc_test_refused_noid("{\"jsonrpc\":\"2.0\",\"id\":9223372036854775808,"
	    "\"method\":\"m\"}", RPC_PARSE_ERROR);
}

Test(rpc, kinds)
{
	static const struct {
		int		 code;
		const char	*kind;
	} k[] = {
		{ -32700, "parse_error" },
		{ -32600, "invalid_request" },
		{ -32601, "method_not_found" },
		{ -32602, "invalid_params" },
		{ -32603, "internal_error" },
		{ 1, "no_such_session" },
		{ 2, "not_running" },
		{ 3, "spawn_failed" },
		{ 4, "not_ready" },
		{ 5, "timeout" },
		{ 6, "unauthorized" },
		{ 7, "limit" },
		{ 8, "name_in_use" },
		{ 9, "not_supported" },
		{ 10, "shutting_down" },
		{ 11, "debugger_error" },
		{ 12, "busy" },
		{ 13, "eof" },
		{ 14, "exists" },
		{ 15, "io_error" },
		{ 16, "verdict" },
		{ 0, "error" },
		{ 17, "error" },
		{ -32000, "error" },
	};
	size_t i;

	for (i = 0; i < sizeof k / sizeof k[0]; i++)
		cr_assert_str_eq(rpc_kind(k[i].code), k[i].kind, "code %d",
		    k[i].code);
}

Test(rpc, error_new_adds_kind)
{
	json_t	*id, *msg, *data;

	id = json_integer(4);
	msg = rpc_error_new(id, RPC_NO_SUCH_SESSION, "no session \"fw\"",
	    NULL);
	cr_assert_eq(id->refcount, 2, "id is referenced, not stolen");
	rpc_test_dump_is(msg, "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":"
	    "{\"code\":1,\"message\":\"no session \\\"fw\\\"\","
	    "\"data\":{\"kind\":\"no_such_session\"}}}");
	cr_assert_eq(id->refcount, 1);
	json_decref(id);

	/* Extra data kept, kind added after it. */
	data = json_pack("{s:i,s:s}", "errno", 2, "stage", "exec");
	msg = rpc_error_new(NULL, RPC_SPAWN_FAILED,
	    "exec ./nope: No such file or directory", data);
	rpc_test_dump_is(msg, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":3,\"message\":"
	    "\"exec ./nope: No such file or directory\",\"data\":"
	    "{\"errno\":2,\"stage\":\"exec\",\"kind\":\"spawn_failed\"}}}");

	/* A kind already in data wins. */
	data = json_pack("{s:s}", "kind", "custom");
	msg = rpc_error_new(NULL, RPC_LIMIT, "too long", data);
	rpc_test_dump_is(msg, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":7,\"message\":\"too long\",\"data\":{\"kind\":"
	    "\"custom\"}}}");
}

Test(rpc, error_new_every_code)
{
	static const int codes[] = { -32700, -32600, -32601, -32602, -32603,
	    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 42 };
	json_t	*msg, *err;
	size_t	 i;

	for (i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		msg = rpc_error_new(NULL, codes[i], "m", NULL);
		cr_assert_not_null(msg);
		err = json_object_get(msg, "error");
		cr_assert_eq(json_integer_value(json_object_get(err, "code")),
		    codes[i]);
		cr_assert_str_eq(json_string_value(json_object_get(
		    json_object_get(err, "data"), "kind")), rpc_kind(codes[i]));
		cr_assert(json_is_null(json_object_get(msg, "id")));
		json_decref(msg);
	}
}

Test(rpc, error_new_bad_utf8_message)
{
	json_t	*msg;

	msg = rpc_error_new(NULL, RPC_SPAWN_FAILED, "exec \xff\xfe: no", NULL);
	rpc_test_dump_is(msg, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
	    "{\"code\":3,\"message\":\"exec \xef\xbf\xbd\xef\xbf\xbd: no\","
	    "\"data\":{\"kind\":\"spawn_failed\"}}}");
}

Test(rpc, result_new)
{
	json_t	*id, *msg;

	rpc_test_dump_is(rpc_result_new(NULL, NULL),
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{}}");
	id = json_string("abc");
	msg = rpc_result_new(id, json_pack("{s:b}", "pong", 1));
	cr_assert_eq(id->refcount, 2);
	rpc_test_dump_is(msg,
	    "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{\"pong\":true}}");
	json_decref(id);
}

Test(rpc, request_new)
{
	json_t	*id;

	id = json_integer(1);
	rpc_test_dump_is(rpc_request_new(id, "ping", NULL),
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	rpc_test_dump_is(rpc_request_new(id, "status",
	    json_pack("{s:i}", "session", 3)),
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\","
	    "\"params\":{\"session\":3}}");
	cr_assert_eq(id->refcount, 1);
	json_decref(id);
}

Test(rpc, notification_new)
{
	rpc_test_dump_is(rpc_notification_new("session.state",
	    json_pack("{s:i,s:s}", "session", 2, "state", "exited")),
	    "{\"jsonrpc\":\"2.0\",\"method\":\"session.state\","
	    "\"params\":{\"session\":2,\"state\":\"exited\"}}");
	rpc_test_dump_is(rpc_notification_new("x", NULL),
	    "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}");
}

Test(rpc, dump_real_utf8_and_escapes)
{
	rpc_test_dump_is(
	    json_pack("{s:s}", "s", "caf\xc3\xa9 \xf0\x9f\x90\x9b"),
	    "{\"s\":\"caf\xc3\xa9 \xf0\x9f\x90\x9b\"}");
	rpc_test_dump_is(json_pack("{s:s}", "s", "a\nb\r\"\\\x01"),
	    "{\"s\":\"a\\nb\\r\\\"\\\\\\u0001\"}");
}

Test(rpc, dump_round_trip)
{
	struct rpc_request	 req;
	struct rpc_error	 err;
	json_t			*msg;
	char			*s;
	size_t			 len;

	msg = rpc_request_new(NULL, "launch", json_pack("{s:[s,s],s:i}",
	    "argv", "prog", "a b", "stop_timeout", 100));
	s = rpc_dump(msg, &len);
	cr_assert_not_null(s);
	/* The parser is given the line without its LF, as the framer does. */
	cr_assert_eq(rpc_parse(s, len - 1, &req, &err), 0, "%s", err.message);
	cr_assert_str_eq(req.method, "launch");
	cr_assert(json_is_null(req.id));
	cr_assert(json_equal(req.params, json_object_get(msg, "params")));
	rpc_parse_free(&req);
	free(s);
	json_decref(msg);
}

/* Build {"s":"xxx..."} whose compact form is exactly n bytes long. */
static json_t *
rpc_test_sized(size_t n)
{
	json_t	*msg;
	char	*s;

	s = malloc(n - 8 + 1);
	cr_assert_not_null(s);
	memset(s, 'x', n - 8);
	s[n - 8] = '\0';
	msg = json_pack("{s:s}", "s", s);
	free(s);
	cr_assert_not_null(msg);
	return msg;
}

Test(rpc, dump_limit)
{
	json_t	*msg;
	char	*s;
	size_t	 len = 0;

	msg = rpc_test_sized(FRAME_MAX);
	s = rpc_dump(msg, &len);
	cr_assert_not_null(s, "exactly FRAME_MAX bytes fit");
	cr_assert_eq(len, FRAME_MAX + 1);
	cr_assert_eq(s[FRAME_MAX], '\n');
	cr_assert_eq(s[FRAME_MAX - 1], '}');
	free(s);
	json_decref(msg);

	msg = rpc_test_sized(FRAME_MAX + 1);
	len = 77;
	cr_assert_null(rpc_dump(msg, &len), "FRAME_MAX + 1 bytes do not");
	cr_assert_eq(len, 77, "len untouched on failure");
	json_decref(msg);

	msg = rpc_test_sized(3 * FRAME_MAX);
	cr_assert_null(rpc_dump(msg, &len));
	json_decref(msg);
}

Test(rpc, error_set)
{
	struct rpc_error	err;
	char			big[1000];

	err.id = NULL;
	rpc_error_set(&err, RPC_NOT_RUNNING, "session %d is %s", 3, "exited");
	cr_assert_eq(err.code, RPC_NOT_RUNNING);
	cr_assert_str_eq(err.message, "session 3 is exited");
	cr_assert_null(err.id);

	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	rpc_error_set(&err, 1, "%s", big);
	cr_assert_eq(strlen(err.message), sizeof err.message - 1,
	    "truncated, still terminated");
}

Test(rpc, a_non_integer_id_comes_back_as_it_was_sent)
{
	struct rpc_request	 req;
	struct rpc_error	 err;
	const char		*line = "{\"method\":\"ping\",\"params\":{\"id\":"
				    "[1,{\"id\":2}]},\"jsonrpc\":\"2.0\","
				    "\"id\":1e3}";
	json_t			*msg;
	char			*out;
	size_t			 len;

	cr_assert_eq(rpc_parse(line, strlen(line), &req, &err), 0,
	    "%s", err.message);
	cr_assert_str_eq(req.id_text, "1e3", "the id's own text, not a "
	    "nested \"id\"");
	msg = rpc_result_new(req.id, json_pack("{s:b}", "pong", 1));
	out = rpc_dump_id(msg, req.id_text, &len);
	cr_assert_not_null(strstr(out, "\"id\":1e3,"), "reply: %s", out);
	cr_assert_eq(len, strlen(out));
	free(out);
	json_decref(msg);
	rpc_parse_free(&req);
	line = "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\"}";
	cr_assert_eq(rpc_parse(line, strlen(line), &req, &err), 0);
	cr_assert_null(req.id_text, "an integer id is written back as it is");
	rpc_parse_free(&req);
}

/*
 * A request without params, which a shortcut reads without the general
 * parser, comes out as the general parser would make it: the same id,
 * method and empty params for the shapes the shortcut takes, and the same
 * refusals for those it leaves to the parser.
 */
Test(rpc, bare_requests_read_as_the_parser_reads_them)
{
	static const struct {
		const char	*line;
		const char	*id;	/* the id as JSON; NULL: none */
		const char	*method;
	} ok[] = {
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", "1",
		    "ping" },
		{ " { \"method\" : \"list\" , \"jsonrpc\" : \"2.0\" , \"id\" "
		    ": -42 , \"params\" : { } } ", "-42", "list" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"a b\",\"method\":\"hello\"}",
		    "\"a b\"", "hello" },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}", NULL, "ping" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}", "0",
		    "ping" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":999999999999999999,\"method\":"
		    "\"ping\"}", "999999999999999999", "ping" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", "1.5",
		    "ping" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"\\u00e9\",\"method\":\"ping\"}",
		    "\"\\u00e9\"", "ping" },
	};
	static const struct {
		const char	*line;
		int		 code;
	} bad[] = {
		{ "{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"ping\"}",
		    RPC_PARSE_ERROR },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}",
		    RPC_PARSE_ERROR },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x",
		    RPC_PARSE_ERROR },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
		    RPC_PARSE_ERROR },
		{ "{\"jsonrpc\":\"2.00\",\"id\":1,\"method\":\"ping\"}",
		    RPC_INVALID_REQUEST },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1}", RPC_INVALID_REQUEST },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\","
		    "\"params\":[]}", RPC_INVALID_PARAMS },
		{ "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,"
		    "\"method\":\"ping\"}", RPC_PARSE_ERROR },
	};
	struct rpc_request	 req;
	struct rpc_error	 err;
	json_t			*want;
	size_t			 i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		cr_assert_eq(rpc_test_parse(ok[i].line, &req, &err), 0,
		    "refused: %s (%s)", ok[i].line, err.message);
		cr_assert_str_eq(req.method, ok[i].method, "%s", ok[i].line);
		cr_assert(json_is_object(req.params) &&
		    json_object_size(req.params) == 0, "%s: params",
		    ok[i].line);
		if (ok[i].id == NULL)
			cr_assert_null(req.id, "%s: an id", ok[i].line);
		else {
			want = json_loads(ok[i].id, JSON_DECODE_ANY, NULL);
			cr_assert(json_equal(req.id, want), "%s: id",
			    ok[i].line);
			json_decref(want);
		}
		rpc_parse_free(&req);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		rpc_test_refused(bad[i].line, bad[i].code, &err);
		json_decref(err.id);
	}
}

/*
 * Flat params (plain strings, integers, booleans, null), which the
 * shortcut builds itself, come out equal to what the general parser
 * builds; nested or escaped ones, which it leaves to the parser, too; a
 * key given twice is refused either way.
 */
Test(rpc, flat_params_read_as_the_parser_reads_them)
{
	static const char *const params[] = {
		"{\"session\":7,\"data\":\"aGVsbG8=\",\"eof\":true}",
		"{ \"a\" : -3 , \"b\" : false , \"c\" : null , \"d\" : \"\" }",
		"{\"s\":\"x y/z+=\",\"n\":0}",
		"{\"argv\":[\"a\",\"b\"],\"env\":{\"K\":\"V\"}}",
		"{\"s\":\"tab\\there\",\"u\":\"\\u00e9t\\u00e9\"}",
		"{\"s\":\"caf\xc3\xa9\"}",
		"{\"big\":123456789012345678,\"bigger\":1234567890123456789}",
		"{\"real\":1.5,\"exp\":1e3}",
		"{\"exact\":\"echo 00000001\\n\",\"session\":1}",
		"{\"q\":\"say \\\"hi\\\" \\\\ \\/ \\b\\f\\r\"}",
		"{\"pair\":\"\\ud83d\\ude00\",\"raw\":\"\xf0\x9f\x98\x80\"}",
	};
	/*
	 * Strings the shortcut undoes refused as the parser refuses them (a
	 * NUL, a lone surrogate, bad UTF-8, a control byte, a bad escape);
	 * the last two: params built, then a bad key; nothing may leak.
	 */
	static const char *const bad[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"write\","
		    "\"params\":{\"a\":\"nul \\u0000\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"write\","
		    "\"params\":{\"a\":\"lone \\udc00\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"write\","
		    "\"params\":{\"a\":\"bad \xc3\x28\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"write\","
		    "\"params\":{\"a\":\"ctl \x01\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"write\","
		    "\"params\":{\"a\":\"esc \\x\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"write\","
		    "\"params\":{\"a\":1,\"a\":2}}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"write\","
		    "\"params\":{\"a\":1,}}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"write\","
		    "\"params\":{\"a\":12345678901234567890}}",
		"{\"jsonrpc\":\"2.0\",\"params\":{\"a\":\"x\"},\"id\" x}",
		"{\"jsonrpc\":\"2.0\",\"params\":{\"a\":\"x\"},"
		    "\"method\":\"ping\",\"id\":1",
	};
	char			 line[512];
	struct rpc_request	 req;
	struct rpc_error	 err;
	json_t			*want;
	size_t			 i;

	for (i = 0; i < sizeof params / sizeof params[0]; i++) {
		snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":3,"
		    "\"method\":\"write\",\"params\":%s}", params[i]);
		want = json_loads(params[i], 0, NULL);
		cr_assert_not_null(want, "the test's own params: %s",
		    params[i]);
		cr_assert_eq(rpc_test_parse(line, &req, &err), 0,
		    "refused: %s (%s)", line, err.message);
		cr_assert(json_equal(req.params, want), "%s: params differ",
		    params[i]);
		cr_assert_str_eq(req.method, "write", "%s", params[i]);
		json_decref(want);
		rpc_parse_free(&req);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		rpc_test_refused(bad[i], RPC_PARSE_ERROR, &err);
		json_decref(err.id);
	}
}

/* A response is no request: it is refused with RPC_NO_REPLY, never answered. */
Test(rpc, a_response_is_refused_without_a_reply)
{
	static const char *lines[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"pong\":true}}",
		"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
		    "\"message\":\"x\"}}",
	};
	struct rpc_request	req;
	struct rpc_error	err;
	size_t			i;

	for (i = 0; i < 2; i++) {
		cr_assert_eq(rpc_parse(lines[i], strlen(lines[i]), &req, &err),
		    -1, "%s", lines[i]);
		cr_assert_eq(err.code, RPC_NO_REPLY, "%s: code %d", lines[i],
		    err.code);
		json_decref(err.id);
	}
	cr_assert_eq(rpc_test_parse("{\"jsonrpc\":\"2.0\",\"id\":1}", &req, &err), -1);
	cr_assert_eq(err.code, RPC_INVALID_REQUEST);
	json_decref(err.id);
}
