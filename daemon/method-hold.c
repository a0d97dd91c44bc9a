/*
 * The hold method: keep a running session, its target halted, for a time
 * to live that outlasts its lease's connection; a ttl of 0 releases it.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "conn.h"
#include "gdb.h"
#include "method.h"
#include "request.h"

/* The most bytes of a holder's note that are kept. */
#define METHOD_HOLD_NOTE_MAX	256

/* Who asks: the client's process and uid (for a Unix socket), and its note. */
static json_t *
method_hold_by(struct request *req)
{
	json_t		*by = json_object();
	const char	*note;
	char		 comm[64];
	size_t		 n;

	if (req->conn != NULL && req->conn->pid > 0) {
		status_comm(req->conn->pid, comm, sizeof comm);
		json_object_set_new(by, "pid", json_integer(req->conn->pid));
		json_object_set_new(by, "name", json_string(comm));
		json_object_set_new(by, "uid", json_integer(req->conn->uid));
	}
	if ((note = request_str(req, "note", NULL)) != NULL) {
		n = strnlen(note, METHOD_HOLD_NOTE_MAX);
		/* Never cut a character in two: back off its continuation bytes. */
		while (n > 0 && n < strlen(note) && ((unsigned char)note[n] &
		    0xc0) == 0x80)
			n--;
		json_object_set_new(by, "note", json_stringn(note, n));
	}
	return by;
}

/* hold: hold the session for ttl seconds (default: the daemon's), or release it. */
static enum method_return
method_hold_exec(struct request *req)
{
	struct session	*s = req->session;
	long		 ttl = (long)request_int(req, "ttl", hold_default_ttl());
	struct rpc_error err;

	if (ttl == 0) {
		hold_release(s);
		return request_done(req, json_pack("{s:n}", "hold"));
	}
	if (hold_set(s, ttl * 1000, method_hold_by(req), &err) != 0)
		return request_error(req, err.code, "%s", err.message);
	/* A kind without a debugger, or a target that ended, is held as it is. */
	if (gdb_live(s) == NULL ||
	    json_is_false(json_object_get(req->params, "halt")) ||
	    (strcmp(gdb_control_state(s), "running") != 0 &&
	    strcmp(gdb_control_state(s), "stopped") != 0))
		return request_done(req, json_pack("{s:o, s:O*}", "hold",
		    hold_json(s), "target", s->target));
	return method_target_halt_for(req, json_pack("{s:o}", "hold",
	    hold_json(s)));
}

static const struct method_param method_hold_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "ttl", PT_INT, false, 0, HOLD_TTL_MAX },
	{ "halt", PT_BOOL, false, 0, 0 },
	{ "note", PT_STRING, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_hold = {
	.name = "hold",
	.params = method_hold_params,
	.exec = method_hold_exec,
};

const struct method *const method_holds[] = {
	&method_hold,
	NULL
};
