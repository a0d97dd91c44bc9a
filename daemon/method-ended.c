/*
 * The methods on ended sessions: remove takes the named ones out of the
 * table, prune every one; with their log and core files unless asked to
 * keep them. A session that has not ended is never removed: stop it.
 */
#include <stdlib.h>

#include "daemon.h"
#include "method.h"
#include "request.h"

/* The sessions one remove or prune takes, each referenced while it runs. */
struct method_ended_list {
	struct session	**s;
	size_t		  n;
};

/* Add s (referenced) to the list; with once, unless it is there. */
static void
method_ended_push(struct method_ended_list *l, struct session *s, bool once)
{
	size_t i;

	for (i = 0; once && i < l->n; i++)
		if (l->s[i] == s)
			return;
	l->s = xreallocarray(l->s, l->n + 1, sizeof *l->s);
	l->s[l->n++] = s;
	session_ref(s);
}

/* Remove the list's sessions, answer with their ids, and let them go. */
static enum method_return
method_ended_done(struct request *req, struct method_ended_list *l)
{
	json_t	*ids = json_array();
	bool	 keep = request_bool(req, "keep_files");
	size_t	 i;

	for (i = 0; i < l->n; i++) {
		json_array_append_new(ids, json_integer((json_int_t)
		    l->s[i]->id));
		if (l->s[i]->listed)
			session_prune_remove(l->s[i], keep);
	}
	for (i = 0; i < l->n; i++)
		session_unref(l->s[i]);
	free(l->s);
	return request_done(req, json_pack("{s:o}", "removed", ids));
}

/* Let go of a list that is not removed. */
static void
method_ended_free(struct method_ended_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		session_unref(l->s[i]);
	free(l->s);
}

/*
 * Whether s may be removed; if not, the error names the stop it needs
 * first (a stopping session is on its way, and says so).
 */
static bool
method_ended_check(struct session *s, struct rpc_error *err)
{
	if (session_ended(s))
		return true;
	rpc_error_set(err, RPC_BUSY, "session %lu %s; stop it first (dbgctl "
	    "stop %lu), then remove it", s->id, session_is(s), s->id);
	return false;
}

/* remove: the named ended sessions out of the table, all or none. */
static enum method_return
method_remove_exec(struct request *req)
{
	struct method_ended_list	 l = { NULL, 0 };
	struct rpc_error		 err;
	struct session			*s;
	json_t				*many = request_get(req, "sessions");
	json_t				*ref;
	size_t				 i;

	if (many == NULL && req->session == NULL)
		return request_error(req, RPC_INVALID_PARAMS, "name a "
		    "\"session\" or \"sessions\" (an array)");
	if (req->session != NULL)
		method_ended_push(&l, req->session, true);
	json_array_foreach(many, i, ref) {
		if ((s = session_find(ref, &err)) == NULL) {
			method_ended_free(&l);
			return request_fail(req, &err);
		}
		method_ended_push(&l, s, true);
	}
	for (i = 0; i < l.n; i++) {
		if (!method_ended_check(l.s[i], &err)) {
			method_ended_free(&l);
			return request_fail(req, &err);
		}
	}
	return method_ended_done(req, &l);
}

static const struct method_param method_remove_params[] = {
	{ "session", PT_SESSION, false, 0, 0 },
	{ "sessions", PT_SESSIONS, false, 0, 0 },
	{ "keep_files", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_remove = {
	.name = "remove",
	.params = method_remove_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_remove_exec,
};

/* prune: every ended session out of the table. */
static enum method_return
method_prune_exec(struct request *req)
{
	struct method_ended_list	 l = { NULL, 0 };
	struct session			*s;

	TAILQ_FOREACH(s, &dmn.sessions, entry)
		if (session_ended(s))
			method_ended_push(&l, s, false);
	return method_ended_done(req, &l);
}

static const struct method_param method_prune_params[] = {
	{ "keep_files", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_prune = {
	.name = "prune",
	.params = method_prune_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_prune_exec,
};

const struct method *const method_ended[] = {
	&method_remove,
	&method_prune,
	NULL
};
