/*
 * Checking a request before its method runs: the method found by name,
 * every declared param of the right type and within its bounds, and the
 * session it names resolved.
 */
#include <string.h>

#include "daemon.h"
#include "method.h"
#include "request.h"

/*
 * The most sessions one array param may name: each is looked up, and one
 * request must not hold the loop for long.
 */
#define REQUEST_CHECK_SESSIONS	1024

/* Every method, by group; each group is declared where its methods live. */
static const struct method *const *const request_check_groups[] = {
	method_session,
	method_stream,
	method_expects,
	method_targets,
	method_inspects,
	method_resets,
	method_joins,
	method_deadlines,
	method_holds,
	method_leases,
	method_bundles,
	method_daemon,
	method_ended,
	method_watches,
	method_rtts,
};

/* The method of a name, or NULL. */
const struct method *
request_check_method(const char *name)
{
	const struct method *const	*m;
	size_t				 i;

	for (i = 0; i < sizeof request_check_groups / sizeof *request_check_groups; i++)
		for (m = request_check_groups[i]; *m != NULL; m++)
			if (strcmp((*m)->name, name) == 0)
				return *m;
	return NULL;
}

/* The i-th method of every group, in the groups' order; NULL past the last. */
const struct method *
request_check_at(size_t i)
{
	const struct method *const	*m;
	size_t				 g;

	for (g = 0; g < sizeof request_check_groups / sizeof *request_check_groups; g++)
		for (m = request_check_groups[g]; *m != NULL; m++)
			if (i-- == 0)
				return *m;
	return NULL;
}

/* How the protocol names a set of JSON types, for messages. */
static void
request_check_names(int types, char *buf, size_t len)
{
	static const struct {
		int		 type;
		const char	*name;
	} names[] = {
		{ PT_STRING, "a string" },
		{ PT_INT, "an integer" },
		{ PT_BOOL, "a boolean" },
		{ PT_STRINGS, "an array of strings" },
		{ PT_OBJECT, "an object of strings" },
		{ PT_SESSION, "an id or a name" },
		{ PT_SESSIONS, "an array of ids or names" },
	};
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < sizeof names / sizeof *names; i++) {
		if (!(types & names[i].type))
			continue;
		if (buf[0] != '\0')
			strlcat(buf, " or ", len);
		strlcat(buf, names[i].name, len);
	}
}

/* Whether every member of an array (or value of an object) is of a kind. */
static bool
request_check_all(json_t *v, bool (*ok)(const json_t *))
{
	const char	*key;
	json_t		*e;
	size_t		 i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			if (!ok(e))
				return false;
		return true;
	}
	json_object_foreach(v, key, e)
		if (!ok(e))
			return false;
	return true;
}

/* Whether v is a string. */
static bool
request_check_string(const json_t *v)
{
	return json_is_string(v);
}

/* Whether v can name a session: an integer or a string. */
static bool
request_check_ref(const json_t *v)
{
	return json_is_integer(v) || json_is_string(v);
}

/* Whether v has one of the types. */
static bool
request_check_type(json_t *v, int types)
{
	if ((types & PT_STRING) && json_is_string(v))
		return true;
	if ((types & PT_INT) && json_is_integer(v))
		return true;
	if ((types & PT_BOOL) && json_is_boolean(v))
		return true;
	if ((types & PT_STRINGS) && json_is_array(v) &&
	    request_check_all(v, request_check_string))
		return true;
	if ((types & PT_OBJECT) && json_is_object(v) &&
	    request_check_all(v, request_check_string))
		return true;
	if ((types & PT_SESSION) && request_check_ref(v))
		return true;
	return (types & PT_SESSIONS) && json_is_array(v) &&
	    request_check_all(v, request_check_ref);
}

/* Check one declared param of params; a valid one is copied to out. */
int
request_check_param(const struct method_param *p, json_t *params,
    json_t *out, struct rpc_error *err)
{
	json_t		*v = json_object_get(params, p->name);
	long long	 n;
	char		 types[160];

	if (v == NULL || json_is_null(v)) {
		if (!p->required)
			return 0;
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"%s\" is required",
		    p->name);
		return -1;
	}
	if (!request_check_type(v, p->types)) {
		request_check_names(p->types, types, sizeof types);
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"%s\" must be %s",
		    p->name, types);
		return -1;
	}
	if ((p->types & PT_SESSIONS) && json_is_array(v) &&
	    json_array_size(v) > REQUEST_CHECK_SESSIONS) {
		rpc_error_set(err, RPC_LIMIT, "\"%s\" names %zu sessions; at "
		    "most %d a request", p->name, json_array_size(v),
		    REQUEST_CHECK_SESSIONS);
		return -1;
	}
	if (json_is_integer(v) && p->min < p->max &&
	    ((n = json_integer_value(v)) < p->min || n > p->max)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"%s\" must be an "
		    "integer from %lld to %lld", p->name, p->min, p->max);
		return -1;
	}
	json_object_set(out, p->name, v);
	return 0;
}

/* Check a request's params against its method; resolve "session". */
int
request_check(struct request *req, json_t *params, struct rpc_error *err)
{
	const struct method_param	*p;
	json_t				*ref;

	req->params = json_object();
	for (p = req->method->params; p != NULL && p->name != NULL; p++)
		if (request_check_param(p, params, req->params, err) != 0)
			return -1;
	if (req->method->check != NULL &&
	    req->method->check(params, req->params, err) != 0)
		return -1;
	if ((ref = json_object_get(req->params, "session")) == NULL)
		return 0;
	if ((req->session = session_find(ref, err)) == NULL)
		return -1;
	session_ref(req->session);
	return 0;
}

/*
 * Parse and check one request line as request_dispatch does before it runs
 * the method, with no connection, no daemon state beyond the session table,
 * and nothing run: the entry of tests/fuzz. Returns the method and its
 * checked params (the caller's reference), or NULL with err; err->id is as
 * rpc_parse leaves it on failure, and NULL after a check of the params.
 */
const struct method *
request_check_line(const char *line, size_t len, json_t **params,
    struct rpc_error *err)
{
	struct request		 req = { 0 };
	struct rpc_request	 rr;

	*params = NULL;
	if (rpc_parse(line, len, &rr, err) != 0)
		return NULL;
	if ((req.method = request_check_method(rr.method)) == NULL)
		rpc_error_set(err, RPC_METHOD_NOT_FOUND, "no method \"%.64s\"",
		    rr.method);
	else if (request_check(&req, rr.params, err) != 0)
		req.method = NULL;
	else
		*params = json_incref(req.params);
	if (req.session != NULL)
		session_unref(req.session);
	json_decref(req.params);
	rpc_parse_free(&rr);
	return req.method;
}
