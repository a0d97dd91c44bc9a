/*
 * reset and load over RPC for the gdb family, each by its recipe: the
 * kind's console commands (or the launch's), or a new run of a host
 * program; both leave the fault record in the history.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "method.h"
#include "mi.h"
#include "request.h"
#include "session-target.h"

/* A reset's bound, unless "timeout" says. */
#define METHOD_RESET_TIMEOUT	10000
/* A load's, which writes flash. */
#define METHOD_RESET_LOAD_TIMEOUT 60000

/* Whether the launch or the kind has a recipe. */
static bool
method_reset_has(json_t *launch, const char *const *kind)
{
	return launch != NULL || kind != NULL;
}

/* Add a recipe's console commands to the job: the launch's, else the kind's. */
static void
method_reset_add(struct gdb_job *j, json_t *launch, const char *const *kind)
{
	json_t	*v;
	size_t	 i;

	if (launch != NULL) {
		json_array_foreach(launch, i, v)
			gdb_job_add_console(j, json_string_value(v));
		return;
	}
	for (i = 0; kind != NULL && kind[i] != NULL; i++)
		gdb_job_add_console(j, kind[i]);
}

/*
 * After a reset's last command: the target is at its reset, halted; the
 * fault and the verdict are history, and a hold the verdict made lets go
 * when the lease's client reset it; the target runs again unless the
 * reset was to halt.
 */
static void
method_reset_step(struct gdb_job *j, json_t *reply)
{
	struct session	*s = j->g->s;
	json_t		*rec;

	(void)reply;
	if (json_array_size(j->replies) != (size_t)json_integer_value(
	    json_object_get(j->ctx, "commands")))
		return;
	json_object_set_new(j->ctx, "fault_cleared", json_boolean(s->fault !=
	    NULL));
	hold_reset(s, j->req != NULL ? j->req->conn : NULL);
	session_fault_clear(s, json_string_value(json_object_get(j->ctx,
	    "by")));
	rec = json_pack("{s:s, s:{s:s, s:s}}", "state", "stopped", "stop",
	    "reason", "reset", "by", "reset");
	gdb_target(j->g, rec);
	if (json_is_true(json_object_get(j->ctx, "halt")))
		return;
	j->flags |= GDB_JOB_AWAIT_RUNNING;
	gdb_job_add(j, "-exec-continue");
}

/* A reset's (or a load's) answer. */
static json_t *
method_reset_done(struct gdb_job *j)
{
	json_t *out = json_pack("{s:b}", "fault_cleared", json_is_true(
	    json_object_get(j->ctx, "fault_cleared")));

	if (json_object_get(j->ctx, "file") != NULL)
		json_object_set(out, "file", json_object_get(j->ctx, "file"));
	return out;
}

/* A new run's answer, once it runs. */
static json_t *
method_reset_ran(struct gdb_job *j)
{
	return json_pack("{s:O}", "fault_cleared", json_object_get(j->ctx,
	    "fault_cleared"));
}

/*
 * gdb ran the program again, as a native reset asked: only now are the
 * fault and the verdict history, and a hold the verdict made lets go when
 * the lease's client reset it (a run gdb refused leaves them all).
 */
static void
method_reset_rerun_step(struct gdb_job *j, json_t *reply)
{
	struct session *s = j->g->s;

	(void)reply;
	hold_reset(s, j->req != NULL ? j->req->conn : NULL);
	session_fault_clear(s, "reset");
}

/*
 * A native reset: the program runs again from its start (to main, and
 * stopped there, when halted); gdb kills the old run.
 */
static enum method_return
method_reset_rerun(struct request *req, struct gdb_data *g)
{
	struct gdb_job	*j;
	bool		 halt = request_bool(req, "halt");
	bool		 had = req->session->fault != NULL;

	j = gdb_job_new(req, g, GDB_JOB_STOPPED | GDB_JOB_KEEP_HALTED |
	    GDB_JOB_RERUN, method_reset_ran);
	j->step = method_reset_rerun_step;
	json_object_set_new(j->ctx, "fault_cleared", json_boolean(had));
	gdb_job_add(j, "-exec-run%s", halt ? " --start" : "");
	if (!halt) {
		j->flags |= GDB_JOB_AWAIT_RUNNING;
		return gdb_job_run(j, gdb_job_timeout, request_int(req,
		    "timeout", METHOD_RESET_TIMEOUT));
	}
	j->halting = GDB_HALT_RESET;
	/* The old run's end comes first. */
	return method_target_job_stop(req, j, true, json_pack("{s:b}",
	    "fault_cleared", had));
}

/* Run a reset or a load: after its commands, the reset's record, then the run. */
static enum method_return
method_reset_run(struct request *req, struct gdb_job *j, long long timeout)
{
	json_object_set_new(j->ctx, "by", json_string(req->method->name));
	json_object_set_new(j->ctx, "commands", json_integer((json_int_t)
	    json_array_size(j->cmds)));
	json_object_set_new(j->ctx, "halt", json_boolean(request_bool(req,
	    "halt")));
	j->step = method_reset_step;
	return gdb_job_run(j, gdb_job_timeout, request_int(req, "timeout",
	    timeout));
}

/* reset: the kind's (or the launch's) recipe, or a new run for a host program. */
static enum method_return
method_reset_reset_exec(struct request *req)
{
	struct session	*s = req->session;
	struct gdb_data	*g;
	struct gdb_job	*j;

	if ((g = method_target_gdb(req, "reset")) == NULL)
		return METHOD_DONE;
	if (!method_reset_has(s->l.reset_commands, s->backend->reset_commands)) {
		if (s->backend->reset_rerun && s->l.pid == 0)
			return method_reset_rerun(req, g);
		return request_error(req, RPC_NOT_SUPPORTED, "session %lu (kind "
		    "%s) has no reset recipe: launch it with reset_commands",
		    s->id, s->backend->name);
	}
	j = gdb_job_new(req, g, GDB_JOB_STOPPED | GDB_JOB_KEEP_HALTED,
	    method_reset_done);
	method_reset_add(j, s->l.reset_commands, s->backend->reset_commands);
	return method_reset_run(req, j, METHOD_RESET_TIMEOUT);
}

/* load: write the program (or another build) to the target, then reset it. */
static enum method_return
method_reset_load_exec(struct request *req)
{
	struct session	*s = req->session;
	const char	*file = request_str(req, "file", NULL);
	struct gdb_data	*g;
	struct gdb_job	*j;
	char		*q;

	if ((g = method_target_gdb(req, "load")) == NULL)
		return METHOD_DONE;
	if (!method_reset_has(s->l.load_commands, s->backend->load_commands))
		return request_error(req, RPC_NOT_SUPPORTED, "session %lu (kind "
		    "%s) cannot load: %s", s->id, s->backend->name,
		    s->backend->reset_rerun ? "it runs a host program" : "it has "
		    "no load recipe; launch it with load_commands");
	j = gdb_job_new(req, g, GDB_JOB_STOPPED | GDB_JOB_KEEP_HALTED,
	    method_reset_done);
	if (file != NULL) {
		q = mi_cstring_quote(file);
		gdb_job_add(j, "-file-exec-and-symbols %s", q);
		free(q);
		json_object_set_new(j->ctx, "file", json_string(file));
	} else if (json_array_size(s->l.argv) > 0)
		json_object_set(j->ctx, "file", json_array_get(s->l.argv, 0));
	method_reset_add(j, s->l.load_commands, s->backend->load_commands);
	method_reset_add(j, s->l.reset_commands, s->backend->reset_commands);
	return method_reset_run(req, j, METHOD_RESET_LOAD_TIMEOUT);
}

static const struct method_param method_reset_reset_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "halt", PT_BOOL, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method_param method_reset_load_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "halt", PT_BOOL, false, 0, 0 },
	{ "file", PT_STRING, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};


static const struct method method_reset_reset = {
	.name = "reset",
	.params = method_reset_reset_params,
	.exec = method_reset_reset_exec,
};

static const struct method method_reset_load = {
	.name = "load",
	.params = method_reset_load_params,
	.exec = method_reset_load_exec,
};

const struct method *const method_resets[] = {
	&method_reset_reset,
	&method_reset_load,
	NULL
};
