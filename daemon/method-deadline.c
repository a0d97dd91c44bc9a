/*
 * The deadline method: set a running session's deadline to ms from now,
 * move it, or clear it (ms 0), as a rig does per test.
 */
#include <limits.h>

#include "daemon.h"
#include "method.h"
#include "request.h"

/* deadline: set, move or clear the session's deadline. */
static enum method_return
method_deadline_exec(struct request *req)
{
	struct session	*s = req->session;
	long		 ms = (long)request_int(req, "ms", 0);
	json_t		*d;

	if (verdict_deadline_set(s, ms) != 0)
		return request_error(req, RPC_NOT_RUNNING, s->state ==
		    S_RUNNING ? "session %lu has a verdict already" :
		    "session %lu is not running", s->id);
	d = verdict_deadline_json(s);
	return request_done(req, json_pack("{s:o}", "deadline", d != NULL ? d :
	    json_null()));
}

static const struct method_param method_deadline_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "ms", PT_INT, true, 0, INT_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_deadline = {
	.name = "deadline",
	.params = method_deadline_params,
	.exec = method_deadline_exec,
};

const struct method *const method_deadlines[] = {
	&method_deadline,
	NULL
};
