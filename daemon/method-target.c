/*
 * Run control over RPC for the gdb family: waits for a target record after
 * a seq (so no waiter takes a stale stop), halt, resume (until the next
 * stop, race-free), reset and load by the kind's recipe.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "method.h"
#include "mi.h"
#include "request.h"

/* A verb's bound on its whole work, unless "timeout" says. */
#define METHOD_TARGET_TIMEOUT	10000
/* How long a halt after a timed-out resume may take before it is answered anyway. */
#define METHOD_TARGET_HALT_GRACE 5000

/* What a wait for a target record (or a fault) is after. */
struct method_target_wait {
	struct gdb_job	*job;		/* the verb's job, or NULL */
	const char	*state;		/* "stopped", "running", "exited", "any" */
	long long	 after;		/* the seq it must be past */
	bool		 fault;		/* a fault record, not a target record */
	bool		 halt_on_timeout;
	bool		 strict;	/* an exit does not do for a stop */
	json_t		*extra;		/* members the answer adds, or NULL */
	bool		 timed_out;	/* halting after its timeout */
};

/*
 * The session's gdb, for a verb: NULL, with the request answered, for a
 * session outside the gdb family or one that has ended.
 */
struct gdb_data *
method_target_gdb(struct request *req, const char *verb)
{
	struct session	*s = req->session;
	char		*family;

	if (!gdb_family(s)) {
		family = backend_kinds(gdb_family_kind, NULL);
		if (strcmp(s->backend->name, "exec") == 0)
			request_error(req, RPC_NOT_SUPPORTED, "session %lu is an "
			    "exec session: %s needs a debugger", s->id, verb);
		else
			request_error(req, RPC_NOT_SUPPORTED, "session %lu is an "
			    "%s session: %s needs the gdb family (%s)", s->id,
			    s->backend->name, verb, family);
		free(family);
		return NULL;
	}
	if (session_ended(s) || gdb_live(s) == NULL) {
		request_error(req, RPC_NOT_RUNNING, "session %lu has exited",
		    s->id);
		return NULL;
	}
	/* Its quit drives gdb now; a verb would fight it. */
	if (s->state != S_RUNNING) {
		request_error(req, RPC_NOT_RUNNING, "session %lu is %s",
		    s->id, session_state_name(s->state));
		return NULL;
	}
	return gdb_live(s);
}

/* Whether a target record is one the wait is for. */
static bool
method_target_matches(const struct method_target_wait *w, json_t *rec)
{
	const char *st = json_string_value(json_object_get(rec, "state"));

	if (st == NULL || json_is_true(json_object_get(rec, "transient")))
		return false;
	if (json_integer_value(json_object_get(rec, "seq")) <= w->after)
		return false;
	if (strcmp(w->state, "any") == 0 || strcmp(w->state, st) == 0)
		return true;
	/* A target that exited will never stop. */
	return !w->strict && strcmp(w->state, "stopped") == 0 &&
	    strcmp(st, "exited") == 0;
}

/* The answer to a wait: the record, as itself or under "target". */
static void
method_target_answer(struct request *req, json_t *rec)
{
	struct method_target_wait *w = req->data;

	if (w->timed_out) {
		request_error_data(req, RPC_TIMEOUT, json_pack("{s:O}",
		    "target", rec), "the target of session %lu did not stop "
		    "within %lld ms; halted", req->session->id,
		    request_int(req, "timeout", METHOD_TARGET_TIMEOUT));
		return;
	}
	json_t *out;

	if (strcmp(req->method->name, "wait_target") == 0 ||
	    strcmp(req->method->name, "wait_fault") == 0) {
		request_done(req, json_incref(rec));
		return;
	}
	out = json_pack("{s:O}", "target", rec);
	if (w->extra != NULL)
		json_object_update(out, w->extra);
	request_done(req, out);
}

/* A target record, a fault, or the session's end, for a waiting request. */
static void
method_target_event(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request			*req = k->arg;
	struct method_target_wait	*w = req->data;

	if (ev->kind == SE_STATE && session_ended(s)) {
		request_error_data(req, RPC_NOT_RUNNING, json_pack("{s:O*}",
		    "target", s->target), "session %lu has exited", s->id);
		return;
	}
	if (w->fault && ev->kind == SE_FAULT &&
	    json_integer_value(json_object_get(ev->json, "seq")) > w->after) {
		request_done(req, json_incref(ev->json));
		return;
	}
	if (w->timed_out && ev->kind == SE_RUNSTATE && json_is_true(
	    json_object_get(ev->json, "transient")))
		return;
	if (!w->fault && ev->kind == SE_RUNSTATE &&
	    (method_target_matches(w, ev->json) || (w->timed_out &&
	    strcmp(json_string_value(json_object_get(ev->json, "state")),
	    "running") != 0)))
		method_target_answer(req, ev->json);
}

/* A wait's time is up: say what the target is, or halt it first. */
static void
method_target_timeout(struct request *req)
{
	struct method_target_wait	*w = req->data;
	struct session			*s = req->session;
	struct gdb_job			*j;

	if (w->halt_on_timeout && !w->timed_out && gdb_of(s) != NULL &&
	    strcmp(gdb_control_state(s), "running") == 0) {
		w->timed_out = true;
		j = gdb_job_new(NULL, gdb_of(s), GDB_JOB_ORPHAN_OK, NULL);
		j->halting = GDB_HALT_USER;
		gdb_job_add(j, "-exec-interrupt");
		gdb_job_run(j, NULL, 0);
		timer_start(req->timer, METHOD_TARGET_HALT_GRACE);
		return;
	}
	request_error_data(req, RPC_TIMEOUT, json_pack("{s:O*}", "target",
	    s->target), "the target of session %lu is %s after %lld ms",
	    s->id, gdb_control_state(s), request_int(req, "timeout",
	    METHOD_TARGET_TIMEOUT));
}

/* Free a wait's state; its job, if still queued, no longer tells it. */
static void
method_target_wait_free(struct request *req)
{
	struct method_target_wait *w = req->data;

	if (w->job != NULL)
		w->job->waiter = NULL;
	json_decref(w->extra);
	free(w);
}

/* The job is done: the wait no longer points at it. */
static void
method_target_unlink(struct gdb_job *j)
{
	struct method_target_wait *w = j->waiter->data;

	w->job = NULL;
	j->waiter = NULL;
}

/* Wait on s for what w says, answering now if it is there already. */
static enum method_return
method_target_wait(struct request *req, struct method_target_wait *w)
{
	struct session	*s = req->session;
	json_t		*now = w->fault ? s->fault : s->target;

	if (now != NULL && (w->fault ? json_integer_value(json_object_get(now,
	    "seq")) > w->after : method_target_matches(w, now))) {
		req->data = w;
		method_target_answer(req, now);
		free(w);
		return METHOD_DONE;
	}
	/* A session its verdict holds gives no new record: not waited on. */
	if (pending_held(req)) {
		free(w);
		return pending_verdict_end(req, NULL);
	}
	pending_wait(req, w, method_target_wait_free);
	pending_sink(req, s, SE_STATE | SE_RUNSTATE | SE_FAULT,
	    method_target_event);
	pending_timeout(req, request_int(req, "timeout", METHOD_TARGET_TIMEOUT),
	    method_target_timeout);
	return METHOD_WAIT;
}

/* A new wait's state: after the seq asked for, or (none) any record. */
static struct method_target_wait *
method_target_wait_new(struct request *req, const char *state)
{
	struct method_target_wait *w = xcalloc(1, sizeof *w);

	w->state = state;
	w->after = request_int(req, "after", -1);
	return w;
}

/* wait_target: the first record in a state after a seq. */
static enum method_return
method_target_wait_target_exec(struct request *req)
{
	static const char *const states[] = { "stopped", "running", "exited",
	    "any", NULL };
	const char	*state = request_str(req, "state", "stopped");
	size_t		 i;

	if (method_target_gdb(req, "wait_target") == NULL)
		return METHOD_DONE;
	for (i = 0; states[i] != NULL; i++)
		if (strcmp(states[i], state) == 0)
			return method_target_wait(req,
			    method_target_wait_new(req, states[i]));
	return request_error(req, RPC_INVALID_PARAMS, "\"state\" must be "
	    "stopped, running, exited or any, not \"%s\"", state);
}

/* wait_fault: the first fault record after a seq. */
static enum method_return
method_target_wait_fault_exec(struct request *req)
{
	struct method_target_wait *w;

	if (method_target_gdb(req, "wait_fault") == NULL)
		return METHOD_DONE;
	w = method_target_wait_new(req, "stopped");
	w->fault = true;
	return method_target_wait(req, w);
}

/* A verb's job that leaves its request waiting for the next stop. */
static json_t *
method_target_then_wait(struct gdb_job *j)
{
	(void)j;
	return NULL;
}

/*
 * Run a job for a request that then waits for a record past the seq of
 * now: the job is the waiting state's, and goes once both are done.
 */
static enum method_return
method_target_job_wait(struct request *req, struct gdb_job *j,
    struct method_target_wait *w)
{
	w->job = j;
	j->req = NULL;
	j->waiter = req;
	j->unlink = method_target_unlink;
	j->flags |= GDB_JOB_ORPHAN_OK;
	pending_wait(req, w, method_target_wait_free);
	pending_sink(req, req->session, SE_STATE | SE_RUNSTATE,
	    method_target_event);
	pending_timeout(req, request_int(req, "timeout", METHOD_TARGET_TIMEOUT),
	    method_target_timeout);
	gdb_job_run(j, NULL, 0);
	return METHOD_WAIT;
}

/*
 * Run a job whose request then waits for the first stop after now (an
 * exit does not do when strict): reset's new run, say.
 */
enum method_return
method_target_job_stop(struct request *req, struct gdb_job *j, bool strict,
    json_t *extra)
{
	struct method_target_wait *w = method_target_wait_new(req, "stopped");

	w->after = (long long)req->session->target_seq;
	w->strict = strict;
	w->extra = extra;
	j->done = method_target_then_wait;
	return method_target_job_wait(req, j, w);
}

/* At a halt's turn: a target that stopped meanwhile needs no interrupt. */
static int
method_target_halt_start(struct gdb_job *j)
{
	return strcmp(gdb_control_state(j->g->s), "running") != 0;
}

/*
 * Interrupt the running target of req's session, whose gdb is live, and
 * answer req with its stop, and with extra's members (taken; NULL: none)
 * beside "target".
 */
enum method_return
method_target_halt_for(struct request *req, json_t *extra)
{
	struct session			*s = req->session;
	struct method_target_wait	*w;
	struct gdb_job			*j;
	const char			*st = gdb_control_state(s);
	json_t				*out;

	/* A verb's own stop is undone soon: the halt queues behind it. */
	if (strcmp(st, "stopped") == 0 && !json_is_true(json_object_get(
	    s->target, "transient"))) {
		out = json_pack("{s:O, s:b}", "target", s->target, "already",
		    1);
		if (extra != NULL)
			json_object_update(out, extra);
		json_decref(extra);
		return request_done(req, out);
	}
	if (strcmp(st, "running") != 0 && strcmp(st, "stopped") != 0) {
		json_decref(extra);
		return request_error_data(req, RPC_NOT_RUNNING, json_pack(
		    "{s:O*}", "target", s->target), "the target of session %lu "
		    "is not running (%s)", s->id, st);
	}
	j = gdb_job_new(NULL, gdb_live(s), GDB_JOB_ORPHAN_OK,
	    method_target_then_wait);
	j->start = method_target_halt_start;
	j->halting = GDB_HALT_USER;
	gdb_job_add(j, "-exec-interrupt");
	w = method_target_wait_new(req, "stopped");
	w->extra = extra;
	return method_target_job_wait(req, j, w);
}

/* halt: interrupt a running target and answer its stop. */
static enum method_return
method_target_halt_exec(struct request *req)
{
	if (method_target_gdb(req, "halt") == NULL)
		return METHOD_DONE;
	return method_target_halt_for(req, NULL);
}

/* The MI command of a resume's "how", or NULL. */
static const char *
method_target_how(const char *how)
{
	static const char *const hows[][2] = {
		{ "continue", "-exec-continue" }, { "step", "-exec-step" },
		{ "next", "-exec-next" }, { "finish", "-exec-finish" },
		{ "until", "-exec-until" }, { "stepi", "-exec-step-instruction" },
		{ "nexti", "-exec-next-instruction" },
	};
	size_t i;

	for (i = 0; i < sizeof hows / sizeof hows[0]; i++)
		if (strcmp(hows[i][0], how) == 0)
			return hows[i][1];
	return NULL;
}

/* A resume that is not waited for: answered once the target runs. */
static json_t *
method_target_resumed(struct gdb_job *j)
{
	(void)j;
	return json_object();
}

/* resume: continue or step, answering at the running or at the next stop. */
static enum method_return
method_target_resume_exec(struct request *req)
{
	struct session	*s = req->session;
	const char	*how = request_str(req, "how", "continue"), *mi, *st;
	const char	*loc = request_str(req, "location", NULL);
	bool		 reverse = request_bool(req, "reverse");
	struct method_target_wait *w;
	struct gdb_data	*g;
	struct gdb_job	*j;
	char		*q;

	if ((g = method_target_gdb(req, "resume")) == NULL)
		return METHOD_DONE;
	if ((mi = method_target_how(how)) == NULL)
		return request_error(req, RPC_INVALID_PARAMS, "\"how\" must be "
		    "continue, step, next, finish, until, stepi or nexti, not "
		    "\"%s\"", how);
	if (strcmp(how, "until") == 0 && loc == NULL)
		return request_error(req, RPC_INVALID_PARAMS, "resume until "
		    "needs \"location\"");
	if (reverse && strcmp(how, "until") == 0)
		return request_error(req, RPC_INVALID_PARAMS, "resume until "
		    "does not run in reverse");
	st = gdb_control_state(s);
	if (strcmp(st, "running") != 0 && strcmp(st, "stopped") != 0)
		return request_error_data(req, RPC_NOT_RUNNING, json_pack(
		    "{s:O*}", "target", s->target), "the target of session %lu "
		    "is not running (%s); reset or launch it again", s->id, st);
	if (strcmp(st, "running") == 0 && strcmp(how, "continue") == 0 &&
	    !reverse) {
		if (!request_bool(req, "until_stop"))
			return request_done(req, json_pack("{s:O, s:b}",
			    "target", s->target, "already", 1));
		w = method_target_wait_new(req, "stopped");
		w->after = (long long)s->target_seq;
		w->halt_on_timeout = request_bool(req, "halt_on_timeout");
		pending_wait(req, w, method_target_wait_free);
		pending_sink(req, s, SE_STATE | SE_RUNSTATE,
		    method_target_event);
		pending_timeout(req, request_int(req, "timeout",
		    METHOD_TARGET_TIMEOUT), method_target_timeout);
		return METHOD_WAIT;
	}
	j = gdb_job_new(req, g, GDB_JOB_STOPPED | GDB_JOB_KEEP_HALTED,
	    method_target_resumed);
	if (loc != NULL && strcmp(how, "until") == 0) {
		q = mi_cstring_quote(loc);
		gdb_job_add(j, "%s %s", mi, q);
		free(q);
	} else
		/* gdb runs it backwards where its target can (a replay). */
		gdb_job_add(j, "%s%s", mi, reverse ? " --reverse" : "");
	if (!request_bool(req, "until_stop")) {
		j->flags |= GDB_JOB_AWAIT_RUNNING;
		return gdb_job_run(j, gdb_job_timeout,
		    request_int(req, "timeout", METHOD_TARGET_TIMEOUT));
	}
	j->done = method_target_then_wait;
	w = method_target_wait_new(req, "stopped");
	w->after = (long long)s->target_seq;
	w->halt_on_timeout = request_bool(req, "halt_on_timeout");
	return method_target_job_wait(req, j, w);
}

static const struct method_param method_target_wait_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "state", PT_STRING, false, 0, 0 },
	{ "after", PT_INT, false, 0, 1LL << 53 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method_param method_target_halt_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method_param method_target_resume_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "how", PT_STRING, false, 0, 0 },
	{ "location", PT_STRING, false, 0, 0 },
	{ "until_stop", PT_BOOL, false, 0, 0 },
	{ "halt_on_timeout", PT_BOOL, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ "reverse", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_target_wait_target = {
	.name = "wait_target",
	.params = method_target_wait_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_VERDICT_ENDS,
	.exec = method_target_wait_target_exec,
};

static const struct method method_target_wait_fault = {
	.name = "wait_fault",
	.params = method_target_wait_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_VERDICT_ENDS,
	.exec = method_target_wait_fault_exec,
};

static const struct method method_target_halt = {
	.name = "halt",
	.params = method_target_halt_params,
	.exec = method_target_halt_exec,
};

static const struct method method_target_resume = {
	.name = "resume",
	.params = method_target_resume_params,
	.exec = method_target_resume_exec,
};

const struct method *const method_targets[] = {
	&method_target_wait_target,
	&method_target_wait_fault,
	&method_target_halt,
	&method_target_resume,
	NULL
};
