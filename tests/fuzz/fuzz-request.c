/*
 * libFuzzer target: how a line becomes a request (proto/rpc.c's rpc_parse)
 * and how its params are checked against its method's declaration
 * (daemon/request.c, through request_check_line), then a launch's params
 * (daemon/launch.c's launch_parse), on a byte stream cut into lines by the
 * framer as the rpc mode does, a batch split into its members as
 * request_batch does.
 *
 * A refused line has a cause of a known code and an error reply that is one
 * line of JSON, within the limit, echoing the id as sent; the params of a
 * checked request are exactly the declared ones that were given, each of a
 * declared type and in range; a launch's params that pass are a launch that
 * names a kind and an absolute cwd. A session table of four fakes (ids 1, 2,
 * 3 and 10: echo, fw, demo ended, sh) lets "session" resolve.
 */
#include <string.h>

#include "daemon.h"
#include "fuzz.h"
#include "method.h"
#include "request.h"

/* Add a fake session to the table; never freed, it stays referenced. */
static void
request_fuzz_session(unsigned long id, const char *name,
    enum session_state state)
{
	struct session *s = xcalloc(1, sizeof *s);

	s->id = id;
	s->l.name = xstrdup(name);
	s->state = state;
	s->refs = 1;
	TAILQ_INSERT_TAIL(&dmn.sessions, s, entry);
}

/* Whether code is one a refusal of this kind may carry. */
static bool
request_fuzz_code_ok(int code, const int *codes)
{
	for (; *codes != 0; codes++)
		if (*codes == code)
			return true;
	return false;
}

/*
 * The reply msg (taken) as conn_send_id writes it: one line within the
 * limit, or NULL and conn_send_id's own error instead; parsed back, its id is
 * want (NULL: null), as sent when id_text is, and an error carries code.
 */
static void
request_fuzz_reply(json_t *msg, json_t *want, const char *id_text, int code)
{
	json_t		*back, *id, *e, *v;
	const char	*kind;
	char		*line;
	size_t		 len = 0;

	fuzz_check(msg != NULL, "no reply built for code %d", code);
	line = rpc_dump_id(msg, id_text, &len);
	json_decref(msg);
	if (line == NULL)
		return;		/* over 1 MiB: conn_send_id says so instead */
	fuzz_check(len > 0 && len <= FRAME_MAX + 1 && line[len - 1] == '\n' &&
	    strlen(line) == len && memchr(line, '\n', len - 1) == NULL,
	    "a reply of %zu bytes is not one line", len);
	back = json_loadb(line, len - 1, JSON_REJECT_DUPLICATES, NULL);
	fuzz_check(json_is_object(back), "the reply is no JSON object: %.300s",
	    line);
	v = json_object_get(back, "jsonrpc");
	fuzz_check(json_is_string(v) &&
	    strcmp(json_string_value(v), "2.0") == 0,
	    "no \"jsonrpc\":\"2.0\" in %.300s", line);
	id = json_object_get(back, "id");
	if (id_text != NULL)
		fuzz_check(json_is_number(id) && json_number_value(id) ==
		    json_number_value(want) && strstr(line, id_text) != NULL,
		    "the id %s is not echoed as sent: %.300s", id_text, line);
	else
		fuzz_check(json_equal(id, want != NULL ? want : json_null()),
		    "the id is not echoed: %.300s", line);
	if (code != 0) {
		e = json_object_get(back, "error");
		kind = json_string_value(json_object_get(json_object_get(e,
		    "data"), "kind"));
		fuzz_check(json_integer_value(json_object_get(e, "code")) ==
		    code && json_is_string(json_object_get(e, "message")) &&
		    kind != NULL && strcmp(kind, rpc_kind(code)) == 0,
		    "the error reply is not of code %d: %.300s", code, line);
	}
	json_decref(back);
	free(line);
}

/* Whether v is of one of the declared types (request.c's rule, restated). */
static bool
request_fuzz_type_ok(json_t *v, int types)
{
	const char	*key;
	json_t		*e;
	size_t		 i;
	bool		 strs = true, refs = true;

	if (json_is_array(v))
		json_array_foreach(v, i, e) {
			strs = strs && json_is_string(e);
			refs = refs && (json_is_string(e) ||
			    json_is_integer(e));
		}
	if (json_is_object(v))
		json_object_foreach(v, key, e)
			strs = strs && json_is_string(e);
	return ((types & PT_STRING) && json_is_string(v)) ||
	    ((types & PT_INT) && json_is_integer(v)) ||
	    ((types & PT_BOOL) && json_is_boolean(v)) ||
	    ((types & PT_STRINGS) && json_is_array(v) && strs) ||
	    ((types & PT_OBJECT) && json_is_object(v) && strs) ||
	    ((types & PT_SESSION) && (json_is_string(v) ||
	    json_is_integer(v))) ||
	    ((types & PT_SESSIONS) && json_is_array(v) && refs);
}

/* How many of list were given, each passed on as given, typed, in range. */
static size_t
request_fuzz_declared(const char *method, const struct method_param *list,
    json_t *given, json_t *checked)
{
	const struct method_param	*p;
	json_t				*v, *g;
	long long			 n;
	size_t				 declared = 0;

	for (p = list; p != NULL && p->name != NULL; p++) {
		g = json_object_get(given, p->name);
		v = json_object_get(checked, p->name);
		if (g == NULL || json_is_null(g)) {
			fuzz_check(v == NULL && !p->required,
			    "%s: \"%s\" absent but checked", method, p->name);
			continue;
		}
		declared++;
		fuzz_check(json_equal(v, g), "%s: \"%s\" given but not "
		    "passed on", method, p->name);
		fuzz_check(request_fuzz_type_ok(v, p->types),
		    "%s: \"%s\" of a type not declared", method, p->name);
		n = json_integer_value(v);
		fuzz_check(!json_is_integer(v) || p->min >= p->max ||
		    (n >= p->min && n <= p->max), "%s: \"%s\" %lld out of "
		    "range", method, p->name, n);
	}
	return declared;
}

/*
 * The checked params: the declared ones given, and for a launch those its
 * kind declares (launch_check_params refuses another kind's), nothing else.
 */
static void
request_fuzz_checked(const struct method *m, json_t *given, json_t *checked)
{
	const struct backend	*kind = NULL;
	const char		*name;
	size_t			 declared;

	declared = request_fuzz_declared(m->name, m->params, given, checked);
	if (strcmp(m->name, "launch") == 0) {
		name = json_string_value(json_object_get(given, "kind"));
		kind = backend_find(name != NULL ? name : "gdb");
	}
	if (kind != NULL)
		declared += request_fuzz_declared(m->name, kind->params, given,
		    checked);
	fuzz_check(json_object_size(checked) == declared,
	    "%s: %zu params passed on, %zu declared and given", m->name,
	    json_object_size(checked), declared);
}

/* A launch's checked params into a launch, as method-session.c does. */
static void
request_fuzz_launch(json_t *params)
{
	static const int	 codes[] = { RPC_INVALID_PARAMS,
	    RPC_NAME_IN_USE, RPC_SPAWN_FAILED, 0 };
	struct rpc_error	 err = { 0 };
	struct launch		 l;

	if (launch_parse(&l, params, &err) != 0) {
		fuzz_check(request_fuzz_code_ok(err.code, codes) &&
		    err.message[0] != '\0', "launch refused with %d \"%s\"",
		    err.code, err.message);
		fuzz_check(l.argv == NULL && l.name == NULL,
		    "a refused launch keeps its params");
		return;
	}
	/* env and commands are NULL where the launch gave none. */
	fuzz_check(l.backend != NULL && l.cwd != NULL && l.cwd[0] == '/' &&
	    json_is_array(l.argv) && (l.env == NULL || json_is_object(l.env)) &&
	    (l.commands == NULL || json_is_array(l.commands)) &&
	    (l.fault_breaks == NULL || json_is_array(l.fault_breaks)) &&
	    (l.kind_params == NULL || json_is_object(l.kind_params)),
	    "a launch accepted half-made");
	fuzz_check(l.name == NULL || session_by_name(l.name, true) == NULL,
	    "a launch takes the name \"%s\" of a live session", l.name);
	launch_free(&l);
}

/* One request: parse it, check it, and compare what either refuses. */
static void
request_fuzz_one(const char *text, size_t len)
{
	static const int	 parse_codes[] = { RPC_PARSE_ERROR,
	    RPC_INVALID_REQUEST, RPC_INVALID_PARAMS, RPC_INTERNAL_ERROR, 0 };
	static const int	 check_codes[] = { RPC_METHOD_NOT_FOUND,
	    RPC_INVALID_PARAMS, RPC_NO_SUCH_SESSION, 0 };
	struct rpc_request	 rr;
	struct rpc_error	 err = { 0 }, err2 = { 0 };
	const struct method	*m;
	json_t			*params;
	int			 parsed;

	parsed = rpc_parse(text, len, &rr, &err) == 0;
	m = request_check_line(text, len, &params, &err2);
	if (!parsed) {
		fuzz_check(request_fuzz_code_ok(err.code, parse_codes) &&
		    err.message[0] != '\0', "refused with %d \"%s\"", err.code,
		    err.message);
		fuzz_check(m == NULL && err2.code == err.code &&
		    strcmp(err2.message, err.message) == 0 &&
		    (err.id == NULL ? err2.id == NULL :
		    json_equal(err2.id, err.id)),
		    "the check refuses otherwise than the parse");
		/* request_refuse's reply. */
		request_fuzz_reply(rpc_error_new(err.id, err.code, err.message,
		    NULL), err.id, NULL, err.code);
		json_decref(err.id);
		json_decref(err2.id);
		return;
	}
	fuzz_check(err.id == NULL && rr.method != NULL &&
	    json_is_object(rr.params) && (rr.id_text == NULL ||
	    json_is_real(rr.id)), "a parsed request half-made");
	if (m == NULL) {
		fuzz_check(request_fuzz_code_ok(err2.code, check_codes) &&
		    err2.message[0] != '\0' && err2.id == NULL,
		    "a check refused with %d \"%s\"", err2.code, err2.message);
		/* request_error's reply, when there is an id to answer. */
		if (rr.id != NULL)
			request_fuzz_reply(rpc_error_new(rr.id, err2.code,
			    err2.message, NULL), rr.id, rr.id_text, err2.code);
	} else {
		fuzz_check(strcmp(m->name, rr.method) == 0, "method %s for %s",
		    m->name, rr.method);
		request_fuzz_checked(m, rr.params, params);
		if (strcmp(m->name, "launch") == 0)
			request_fuzz_launch(params);
		if (rr.id != NULL)
			request_fuzz_reply(rpc_result_new(rr.id, NULL), rr.id,
			    rr.id_text, 0);
		json_decref(params);
	}
	rpc_parse_free(&rr);
}

/* One line from the framer: a batch's members one by one, or one request. */
static int
request_fuzz_line(void *arg, char *line, size_t len)
{
	json_t	*root, *v;
	char	*text;
	size_t	 i;

	(void)arg;
	if (line[strspn(line, " \t")] == '[' && (root = json_loadb(line, len,
	    JSON_REJECT_DUPLICATES, NULL)) != NULL) {
		if (json_is_array(root)) {
			json_array_foreach(root, i, v) {
				text = json_dumps(v, JSON_COMPACT |
				    JSON_ENCODE_ANY);
				request_fuzz_one(text, strlen(text));
				free(text);
			}
			json_decref(root);
			return 0;
		}
		json_decref(root);
	}
	request_fuzz_one(line, len);
	return 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	TAILQ_INIT(&dmn.sessions);
	request_fuzz_session(1, "echo", S_RUNNING);
	request_fuzz_session(2, "fw", S_STOPPING);
	request_fuzz_session(3, "demo", S_EXITED);
	request_fuzz_session(10, "sh", S_RUNNING);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_lines(data, size, request_fuzz_line);
	return 0;
}
