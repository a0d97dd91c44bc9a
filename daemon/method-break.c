/*
 * The break verb: insert, list or delete a gdb-family target's breakpoints
 * and watchpoints (the session's fault breaks shown as internal and kept).
 * A delete of several lists first, so that a number gdb does not know, or
 * one of the session's own, is refused before anything goes; a delete of
 * one is its -break-delete alone, which deletes it or nothing.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "method-inspect.h"
#include "method.h"
#include "mi.h"
#include "request.h"

/* A breakpoint as the protocol shows it: MI's record, and whether it is ours. */
static json_t *
method_break_bkpt(struct gdb_data *g, json_t *b)
{
	json_t *out = json_deep_copy(b);

	json_object_set_new(out, "internal", json_boolean(gdb_breaks_internal(g,
	    json_string_value(json_object_get(b, "number")))));
	return out;
}

/* break insert's answer: the new breakpoint. */
static json_t *
method_break_inserted(struct gdb_job *j)
{
	json_t *last = method_inspect_last(j), *b = json_object_get(last, "bkpt");
	json_t *out;

	if (json_is_array(b))
		b = json_array_get(b, 0);
	/* A watchpoint's answer is wpt (hw-rwpt, hw-awpt): {number, exp}. */
	if (b == NULL && (b = json_object_get(last, "wpt")) == NULL &&
	    (b = json_object_get(last, "hw-rwpt")) == NULL)
		b = json_object_get(last, "hw-awpt");
	out = method_break_bkpt(j->g, b);
	if (json_object_get(out, "exp") != NULL &&
	    json_object_get(out, "type") == NULL)
		json_object_set_new(out, "type", json_string("watchpoint"));
	return json_pack("{s:o}", "breakpoint", out);
}

/* break list's answer: every breakpoint. */
static json_t *
method_break_listed(struct gdb_job *j)
{
	json_t	*all = gdb_breaks_listed(method_inspect_last(j));
	json_t	*out = json_array(), *b;
	size_t	 i;

	json_array_foreach(all, i, b)
		json_array_append_new(out, method_break_bkpt(j->g, b));
	json_decref(all);
	return json_pack("{s:o}", "breakpoints", out);
}

/* Whether number is in the list of breakpoints. */
static bool
method_break_has(json_t *listed, const char *number)
{
	json_t	*b;
	size_t	 i;

	json_array_foreach(listed, i, b)
		if (strcmp(json_string_value(json_object_get(b, "number")),
		    number) == 0)
			return true;
	return false;
}

/*
 * The breakpoints listed so far, once every listing is in: one of each
 * number asked about (-break-info), or of all (-break-list); else NULL.
 */
static json_t *
method_break_listing(struct gdb_job *j, json_t *reply)
{
	json_t	*listed = json_object_get(j->ctx, "listed");
	json_t	*got = gdb_breaks_listed(reply);
	size_t	 want = (size_t)json_integer_value(json_object_get(j->ctx,
		    "listings"));

	if (listed == NULL) {
		listed = json_array();
		json_object_set_new(j->ctx, "listed", listed);
	}
	json_array_extend(listed, got);
	json_decref(got);
	if (json_array_size(j->replies) < want)
		return NULL;
	return json_incref(listed);
}

/* After the listing, a delete: the numbers asked for, or every user one. */
static void
method_break_delete_step(struct gdb_job *j, json_t *reply)
{
	json_t		*listed, *want, *del, *b, *v;
	const char	*num;
	char		*line, *next;
	size_t		 i;

	if (json_object_get(reply, "BreakpointTable") == NULL ||
	    (listed = method_break_listing(j, reply)) == NULL)
		return;
	want = json_object_get(j->ctx, "numbers");
	del = json_array();
	if (want == NULL) {
		json_array_foreach(listed, i, b) {
			num = json_string_value(json_object_get(b, "number"));
			if (!gdb_breaks_internal(j->g, num))
				json_array_append_new(del, json_string(num));
		}
	}
	json_array_foreach(want, i, v) {
		num = json_string_value(v);
		if (gdb_breaks_internal(j->g, num)) {
			gdb_job_fail(j, RPC_INVALID_PARAMS, "breakpoint %s is "
			    "the session's fault breakpoint (%s); it is not "
			    "deleted", num, gdb_breaks_location(j->g, num));
			break;
		}
		if (!method_break_has(listed, num)) {
			gdb_job_fail(j, RPC_INVALID_PARAMS, "no breakpoint %s",
			    num);
			break;
		}
		json_array_append(del, v);
	}
	json_decref(listed);
	json_object_set_new(j->ctx, "deleted", del);
	if (j->error != NULL || json_array_size(del) == 0)
		return;
	line = xstrdup("-break-delete");
	json_array_foreach(del, i, v) {
		xasprintf(&next, "%s %s", line, json_string_value(v));
		free(line);
		line = next;
	}
	gdb_job_add(j, "%s", line);
	free(line);
}

/* break delete's answer: what went. */
static json_t *
method_break_deleted(struct gdb_job *j)
{
	return json_pack("{s:O}", "deleted", json_object_get(j->ctx,
	    "deleted"));
}

/*
 * After the -break-delete of one number: gdb answers ^done whether or not
 * it had that breakpoint, and says which it had not on its console
 * stream (breakpoint.c's "No breakpoint number %d.", which no catalog of
 * gdb's translates), so that text is the refusal.
 */
static void
method_break_delete_one_step(struct gdb_job *j, json_t *reply)
{
	const char	*num = json_string_value(json_array_get(json_object_get(
			    j->ctx, "numbers"), 0));
	const char	*out = json_string_value(json_object_get(reply,
			    "output"));
	char		 said[64];

	snprintf(said, sizeof said, "No breakpoint number %s.", num);
	if (out != NULL && strstr(out, said) != NULL)
		gdb_job_fail(j, RPC_INVALID_PARAMS, "no breakpoint %s", num);
}

/*
 * Delete the one whole number nums names, not a fault break, with
 * -break-delete alone: one MI round trip where a listing first took two.
 */
static enum method_return
method_break_delete_one(struct request *req, struct gdb_data *g,
    json_t *nums)
{
	struct gdb_job *j;

	j = gdb_job_new(req, g, GDB_JOB_STOPPED | GDB_JOB_OUTPUT,
	    method_break_deleted);
	json_object_set(j->ctx, "numbers", nums);
	json_object_set(j->ctx, "deleted", nums);
	gdb_job_add(j, "-break-delete %s", json_string_value(json_array_get(
	    nums, 0)));
	j->step = method_break_delete_one_step;
	return method_inspect_run(req, j);
}

/* Whether s is a breakpoint number gdb would take: digits, maybe dotted. */
static bool
method_break_number(const char *s)
{
	if (!isdigit((unsigned char)*s))
		return false;
	for (; *s != '\0'; s++)
		if (!isdigit((unsigned char)*s) && *s != '.')
			return false;
	return true;
}

/*
 * The -break-watch line of a watch: LOCATION is the expression watched
 * for writes (read or access); a replay runs back to its last change.
 */
static void
method_break_watch(struct request *req, struct gdb_job *j,
    const char *watch)
{
	char *loc = mi_cstring_quote(request_str(req, "location", ""));

	gdb_job_add(j, "-break-watch%s %s", strcmp(watch, "read") == 0 ?
	    " -r" : strcmp(watch, "access") == 0 ? " -a" : "", loc);
	free(loc);
}

/* The -break-insert (or -break-watch) line of a break insert's params. */
static void
method_break_insert(struct request *req, struct gdb_job *j)
{
	const char	*cond = request_str(req, "condition", NULL);
	const char	*watch = request_str(req, "watch", NULL);
	char		*loc, *c = NULL;

	if (watch != NULL) {
		method_break_watch(req, j, watch);
		return;
	}
	loc = mi_cstring_quote(request_str(req, "location", ""));
	if (cond != NULL)
		c = mi_cstring_quote(cond);
	gdb_job_add(j, "-break-insert%s%s%s%s %s", request_bool(req,
	    "temporary") ? " -t" : "", request_bool(req, "hardware") ? " -h" :
	    "", c != NULL ? " -c " : "", c != NULL ? c : "", loc);
	free(loc);
	free(c);
}

/* Whether every number of nums is whole: -break-info takes no "2.1". */
static bool
method_break_whole(json_t *nums)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(nums, i, v)
		if (strspn(json_string_value(v), "0123456789") !=
		    strlen(json_string_value(v)))
			return false;
	return true;
}

/*
 * Ask about the breakpoints a delete names, each alone, where all are
 * whole numbers: the whole list, every fault break with its locations,
 * is bytes gdb writes one at a time to its terminal; else list them all.
 */
static void
method_break_list_some(struct gdb_job *j, json_t *nums)
{
	json_t	*v;
	size_t	 i;

	if (json_array_size(nums) == 0 || !method_break_whole(nums)) {
		json_object_set_new(j->ctx, "listings", json_integer(1));
		gdb_job_add(j, "-break-list");
		return;
	}
	json_object_set_new(j->ctx, "listings", json_integer((json_int_t)
	    json_array_size(nums)));
	json_array_foreach(nums, i, v)
		gdb_job_add(j, "-break-info %s", json_string_value(v));
}

/*
 * Whether nums is one number gdb names as written, not a fault break:
 * gdb reads "007" as 7 and wraps what an int cannot hold, so that the
 * number in its refusal would not be the one asked about.
 */
static bool
method_break_one(struct gdb_data *g, json_t *nums)
{
	const char *num = json_string_value(json_array_get(nums, 0));

	return json_array_size(nums) == 1 && method_break_whole(nums) &&
	    num[0] != '0' && strlen(num) <= 9 && !gdb_breaks_internal(g, num);
}

/* Whether a watch's params are wrong: answered with an error then. */
static bool
method_break_watch_bad(struct request *req)
{
	const char *watch = request_str(req, "watch", NULL);

	if (watch == NULL)
		return false;
	if (strcmp(watch, "write") != 0 && strcmp(watch, "read") != 0 &&
	    strcmp(watch, "access") != 0) {
		request_error(req, RPC_INVALID_PARAMS, "\"watch\" must be "
		    "write, read or access, not \"%s\"", watch);
		return true;
	}
	if (request_str(req, "condition", NULL) != NULL ||
	    request_bool(req, "temporary") || request_bool(req, "hardware")) {
		request_error(req, RPC_INVALID_PARAMS, "a watch takes no "
		    "\"condition\", \"temporary\" or \"hardware\"");
		return true;
	}
	return false;
}

/* break: insert, list or delete breakpoints. */
static enum method_return
method_break_exec(struct request *req)
{
	const char	*action = request_str(req, "action", "insert");
	json_t		*nums = request_get(req, "numbers"), *v;
	struct gdb_data	*g;
	struct gdb_job	*j;
	size_t		 i;

	if ((g = method_target_gdb(req, "break")) == NULL)
		return METHOD_DONE;
	if (strcmp(action, "insert") == 0) {
		if (request_str(req, "location", NULL) == NULL)
			return request_error(req, RPC_INVALID_PARAMS, "break "
			    "insert needs \"location\"");
		if (method_break_watch_bad(req))
			return METHOD_DONE;
		j = gdb_job_new(req, g, GDB_JOB_STOPPED, method_break_inserted);
		method_break_insert(req, j);
		return method_inspect_run(req, j);
	}
	if (strcmp(action, "list") == 0) {
		j = gdb_job_new(req, g, 0, method_break_listed);
		gdb_job_add(j, "-break-list");
		return method_inspect_run(req, j);
	}
	if (strcmp(action, "delete") != 0)
		return request_error(req, RPC_INVALID_PARAMS, "\"action\" must "
		    "be insert, list or delete, not \"%s\"", action);
	json_array_foreach(nums, i, v)
		if (!method_break_number(json_string_value(v)))
			return request_error(req, RPC_INVALID_PARAMS, "\"%s\" is "
			    "not a breakpoint number", json_string_value(v));
	if (method_break_one(g, nums))
		return method_break_delete_one(req, g, nums);
	j = gdb_job_new(req, g, GDB_JOB_STOPPED, method_break_deleted);
	if (nums != NULL)
		json_object_set(j->ctx, "numbers", nums);
	j->step = method_break_delete_step;
	method_break_list_some(j, nums);
	return method_inspect_run(req, j);
}

static const struct method_param method_break_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "action", PT_STRING, false, 0, 0 },
	{ "location", PT_STRING, false, 0, 0 },
	{ "condition", PT_STRING, false, 0, 0 },
	{ "temporary", PT_BOOL, false, 0, 0 },
	{ "hardware", PT_BOOL, false, 0, 0 },
	{ "watch", PT_STRING, false, 0, 0 },
	{ "numbers", PT_STRINGS, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

const struct method method_break = {
	.name = "break",
	.params = method_break_params,
	.exec = method_break_exec,
};
