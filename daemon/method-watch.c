/*
 * watch: start, stop and list a session's watches (watch.h), and wait
 * for a condition on a watch's samples ("counter > 100"). A watch starts
 * once gdb has resolved its expressions; its samples go to the session's
 * "watch" stream, which logs, expect and bundles read as any other.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "live.h"
#include "method.h"
#include "request.h"
#include "watch.h"

/* The operators a condition may compare with, longest first. */
static const char *const method_watch_ops[] = {
	">=", "<=", "==", "!=", ">", "<", NULL
};

/* A start while gdb resolves, or a wait for a condition. */
struct method_watch {
	struct request	*req;
	struct watch	*w;		/* a start's, while it resolves */
	unsigned long	 id;		/* a wait's watch */
	char		*name;		/* a wait's expression */
	const char	*op;
	double		 value;
	json_t		*condition;
};

/* The request is finished or gone: a watch still resolving is let go. */
static void
method_watch_gone(struct request *req)
{
	struct method_watch *mw = req->data;

	if (mw->w != NULL) {
		mw->w->started = NULL;
		watch_stop(mw->w, "its starter went away");
	}
	free(mw->name);
	json_decref(mw->condition);
	free(mw);
	req->data = NULL;
}

/* gdb resolved the watch, or it was refused: the start is answered. */
static void
method_watch_started(void *arg, struct watch *w, const struct rpc_error *err)
{
	struct method_watch	*mw = arg;
	struct output		*o;
	json_t			*out;

	mw->w = NULL;
	if (w == NULL) {
		request_fail(mw->req, err);
		return;
	}
	o = session_stream(w->s, "watch");
	out = watch_json(w);
	json_object_set_new(out, "stream", json_string("watch"));
	json_object_set_new(out, "offset", json_integer((json_int_t)
	    (o != NULL ? output_size(o) : 0)));
	request_done(mw->req, out);
}

/* A start or wait ran out of time. */
static void
method_watch_timeout(struct request *req)
{
	request_error(req, RPC_TIMEOUT, "session %lu: the watch did not %s "
	    "in time", req->session->id, request_str(req, "action", "start")[0]
	    == 'w' ? "meet its condition" : "resolve");
}

/* Whether the rate asked is within the documented bound: else answered. */
static bool
method_watch_hz_ok(struct request *req, long long hz)
{
	if (hz >= 1 && hz <= WATCH_HZ_MAX_SHM)
		return true;
	request_error(req, RPC_INVALID_PARAMS, "\"hz\" must be 1 to %d "
	    "(samples a second through shared RAM; %d through QEMU's "
	    "monitor), not %lld", WATCH_HZ_MAX_SHM, WATCH_HZ_MAX_QMP, hz);
	return false;
}

/* watch start: resolve the expressions, then sample them. */
static enum method_return
method_watch_start(struct request *req)
{
	struct session		*s = req->session;
	struct method_watch	*mw;
	struct gdb_data		*g;
	struct rpc_error	 err = { 0 };
	long long		 hz = request_int(req, "hz", WATCH_HZ_DEFAULT);
	json_t			*exprs = request_get(req, "expressions");
	char			 why[256];

	if (exprs == NULL)
		return request_error(req, RPC_INVALID_PARAMS, "watch start "
		    "needs \"expressions\"");
	if (!method_watch_hz_ok(req, hz))
		return METHOD_DONE;
	if ((g = method_target_gdb(req, "watch")) == NULL)
		return METHOD_DONE;
	if (!live_has(s))
		return request_error(req, RPC_NOT_SUPPORTED, "session %lu "
		    "(kind %s) has no live memory: watch samples a running "
		    "target only where memory reads need no halt (qemu)",
		    s->id, s->backend->name);
	if (session_stream(s, "watch") == NULL && session_stream_open(s,
	    "watch", why, sizeof why) != 0)
		return request_error(req, RPC_IO_ERROR, "the watch stream: %s",
		    why);
	mw = xcalloc(1, sizeof *mw);
	mw->req = req;
	pending_wait(req, mw, method_watch_gone);
	pending_timeout(req, (uint64_t)request_int(req, "timeout", 10000),
	    method_watch_timeout);
	mw->w = watch_start(s, g->mi, exprs, (unsigned)hz,
	    method_watch_started, mw, &err);
	if (mw->w == NULL)
		return request_fail(req, &err);
	mw->w->owner = req->conn;
	return METHOD_WAIT;
}

/* The watch a request names by "watch", or NULL with the error answered. */
static struct watch *
method_watch_named(struct request *req)
{
	long long	 id = request_int(req, "watch", 0);
	struct watch	*w;

	if (id == 0) {
		request_error(req, RPC_INVALID_PARAMS, "watch %s needs "
		    "\"watch\", a watch's id", request_str(req, "action", ""));
		return NULL;
	}
	if ((w = watch_find(req->session, (unsigned long)id)) == NULL ||
	    !w->running)
		request_error(req, RPC_INVALID_PARAMS, "session %lu has no watch "
		    "%lld", req->session->id, id);
	return w != NULL && w->running ? w : NULL;
}

/* watch stop: the watch ends, its stream's last line of it says so. */
static enum method_return
method_watch_stop(struct request *req)
{
	struct watch	*w;
	json_t		*out;

	if ((w = method_watch_named(req)) == NULL)
		return METHOD_DONE;
	out = watch_json(w);
	json_object_set_new(out, "stopped", json_true());
	watch_stop(w, "stopped by a client");
	return request_done(req, out);
}

/*
 * Parse a condition "EXPR OP NUMBER" into mw, EXPR one of w's expressions.
 * The operator is the last one with a number after it, so EXPR may hold
 * operators of its own (p->n > 3). -1 with the error answered.
 */
static int
method_watch_condition(struct request *req, struct watch *w,
    struct method_watch *mw, const char *cond)
{
	const char	*p, *const *op;
	char		*end, *name;
	size_t		 i, n;

	for (p = cond + strlen(cond); p > cond; p--)
		for (op = method_watch_ops; *op != NULL; op++) {
			if (strncmp(p - 1, *op, strlen(*op)) != 0)
				continue;
			errno = 0;
			mw->value = strtod(p - 1 + strlen(*op), &end);
			while (isspace((unsigned char)*end))
				end++;
			if (errno != 0 || end == p - 1 + strlen(*op) ||
			    *end != '\0')
				continue;
			n = (size_t)(p - 1 - cond);
			while (n > 0 && isspace((unsigned char)cond[n - 1]))
				n--;
			i = strspn(cond, " \t");
			xasprintf(&name, "%.*s", (int)(n > i ? n - i : 0),
			    cond + i);
			for (i = 0; i < w->nexprs; i++)
				if (strcmp(w->exprs[i].text, name) == 0) {
					mw->name = name;
					mw->op = *op;
					return 0;
				}
			request_error(req, RPC_INVALID_PARAMS, "condition "
			    "\"%s\": \"%s\" is not an expression of watch %lu",
			    cond, name, w->id);
			free(name);
			return -1;
		}
	request_error(req, RPC_INVALID_PARAMS, "condition \"%s\" must be "
	    "EXPRESSION OP NUMBER, OP one of < <= > >= == !=", cond);
	return -1;
}

/* Whether a sample's value of mw's expression meets its condition. */
static bool
method_watch_holds(const struct method_watch *mw, json_t *sample)
{
	json_t	*v = json_object_get(json_object_get(sample, "values"),
		    mw->name);
	double	 d;

	if (json_is_number(v))
		d = json_number_value(v);
	else if (json_is_string(v))
		d = (double)strtoull(json_string_value(v), NULL, 0);
	else
		return false;
	switch (mw->op[0]) {
	case '>':
		return mw->op[1] == '=' ? d >= mw->value : d > mw->value;
	case '<':
		return mw->op[1] == '=' ? d <= mw->value : d < mw->value;
	case '=':
		return d == mw->value;
	}
	return d != mw->value;
}

/* The wait's answer: the sample that met the condition. */
static enum method_return
method_watch_met(struct request *req, json_t *sample)
{
	struct method_watch *mw = req->data;

	return request_done(req, json_pack("{s:I, s:O, s:O}", "watch",
	    (json_int_t)mw->id, "condition", mw->condition, "sample", sample));
}

/* A line on the watch stream: a sample of the watch, or its end. */
static void
method_watch_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request		*req = k->arg;
	struct method_watch	*mw = req->data;
	json_t			*line = ev->json;

	(void)s;
	if (line == NULL || (unsigned long)json_integer_value(
	    json_object_get(line, "watch")) != mw->id)
		return;
	if (json_is_true(json_object_get(line, "stopped"))) {
		request_error(req, RPC_NOT_RUNNING, "watch %lu stopped (%s) "
		    "before %s held", mw->id, json_string_value(
		    json_object_get(line, "why")), json_string_value(
		    mw->condition));
		return;
	}
	if (method_watch_holds(mw, line))
		method_watch_met(req, line);
}

/* watch wait: the first sample, the last one taken or one to come, that meets "condition". */
static enum method_return
method_watch_wait(struct request *req)
{
	const char		*cond = request_str(req, "condition", NULL);
	struct method_watch	*mw;
	struct watch		*w;

	if (cond == NULL)
		return request_error(req, RPC_INVALID_PARAMS, "watch wait "
		    "needs \"condition\", such as \"counter > 100\"");
	if ((w = method_watch_named(req)) == NULL)
		return METHOD_DONE;
	mw = xcalloc(1, sizeof *mw);
	mw->req = req;
	mw->id = w->id;
	mw->condition = json_string(cond);
	pending_wait(req, mw, method_watch_gone);
	if (method_watch_condition(req, w, mw, cond) != 0)
		return METHOD_DONE;
	if (w->last != NULL && method_watch_holds(mw, w->last))
		return method_watch_met(req, w->last);
	pending_sink(req, req->session, SE_STREAM, method_watch_event);
	if (request_get(req, "timeout") != NULL)
		pending_timeout(req, (uint64_t)request_int(req, "timeout", 0),
		    method_watch_timeout);
	return METHOD_WAIT;
}

/* watch: start (the default), stop, list or wait. */
static enum method_return
method_watch_exec(struct request *req)
{
	const char *action = request_str(req, "action", "start");

	if (strcmp(action, "start") == 0)
		return method_watch_start(req);
	if (strcmp(action, "stop") == 0)
		return method_watch_stop(req);
	if (strcmp(action, "wait") == 0)
		return method_watch_wait(req);
	if (strcmp(action, "list") == 0)
		return request_done(req, json_pack("{s:o}", "watches",
		    watch_list(req->session)));
	return request_error(req, RPC_INVALID_PARAMS, "\"action\" must be "
	    "start, stop, list or wait, not \"%s\"", action);
}

static const struct method_param method_watch_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "action", PT_STRING, false, 0, 0 },
	{ "expressions", PT_STRINGS, false, 0, 0 },
	{ "hz", PT_INT, false, 0, 0 },
	{ "watch", PT_INT, false, 1, INT32_MAX },
	{ "condition", PT_STRING, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_watch = {
	.name = "watch",
	.params = method_watch_params,
	.exec = method_watch_exec,
};

const struct method *const method_watches[] = {
	&method_watch,
	NULL
};
