/*
 * The session's own fault breakpoints: which gdb numbers they have, so that
 * a listing shows them as internal, a user's delete of every breakpoint
 * leaves them, and a raw command that deleted them has them put back.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "mi.h"
#include "request.h"

/* The bkpt object of an MI answer (the first of several locations). */
json_t *
gdb_breaks_bkpt(json_t *results)
{
	json_t *b = json_object_get(results, "bkpt");

	return json_is_array(b) ? json_array_get(b, 0) : b;
}

/* A fault break went in: keep its number and where it is. */
void
gdb_breaks_inserted(struct gdb_data *g, const struct mi_record *rec)
{
	gdb_breaks_inserted_bkpt(g, gdb_breaks_bkpt(rec->results));
}

/* A fault break is breakpoint b (gdb's record of it): keep it so. */
void
gdb_breaks_inserted_bkpt(struct gdb_data *g, json_t *b)
{
	const char	*num, *loc;

	num = json_string_value(json_object_get(b, "number"));
	loc = json_string_value(json_object_get(b, "original-location"));
	if (num == NULL)
		return;
	if (g->fault_bkpts == NULL)
		g->fault_bkpts = json_object();
	json_object_set_new(g->fault_bkpts, num, json_string(loc != NULL ?
	    loc : "?"));
}

/* Whether a breakpoint number is one of the session's fault breaks. */
bool
gdb_breaks_internal(const struct gdb_data *g, const char *number)
{
	return number != NULL && json_object_get(g->fault_bkpts, number) !=
	    NULL;
}

/* Whether a fault break at loc is known already. */
bool
gdb_breaks_placed(const struct gdb_data *g, const char *loc)
{
	const char	*key;
	json_t		*v;

	json_object_foreach(g->fault_bkpts, key, v)
		if (strcmp(json_string_value(v), loc) == 0)
			return true;
	return false;
}

/* Where a fault break is, by its number, or NULL. */
const char *
gdb_breaks_location(const struct gdb_data *g, const char *number)
{
	return json_string_value(json_object_get(g->fault_bkpts, number));
}

/* Whether a console or MI command may delete breakpoints. */
bool
gdb_breaks_deletes(const char *cmd)
{
	static const char *const verbs[] = { "-break-delete", "delete", "d",
	    "del", "clear", NULL };
	size_t i, n = strcspn(cmd, " \t");

	for (i = 0; verbs[i] != NULL; i++)
		if (strlen(verbs[i]) == n && strncmp(cmd, verbs[i], n) == 0)
			return true;
	return false;
}

/* The numbers of the breakpoints in a -break-list answer. */
json_t *
gdb_breaks_listed(json_t *reply)
{
	json_t	*body, *row, *b, *out = json_array();
	size_t	 i;

	body = json_object_get(json_object_get(reply, "BreakpointTable"),
	    "body");
	json_array_foreach(body, i, row) {
		b = gdb_breaks_bkpt(row);
		if (json_object_get(b, "number") != NULL)
			json_array_append(out, b);
	}
	return out;
}

/* After the listing: every fault break missing from it goes in again. */
static void
gdb_breaks_rearm_step(struct gdb_job *j, json_t *reply)
{
	struct gdb_data	*g = j->g;
	json_t		*listed, *b, *missing, *v;
	const char	*num, *key;
	size_t		 i;
	void		*tmp;

	/* The user's own command (an exec): answered as it was. */
	if (json_is_true(json_object_get(j->ctx, "exec")) &&
	    json_array_size(j->replies) == 1)
		return;
	if (json_object_get(reply, "BreakpointTable") == NULL) {
		/* The answer to a re-insert. */
		if (strcmp(json_string_value(json_object_get(reply, "class")),
		    "error") == 0) {
			g->disarmed = true;
			log_warn("session %lu: a fault break could not be put "
			    "back", g->s->id);
			return;
		}
		b = gdb_breaks_bkpt(reply);
		num = json_string_value(json_object_get(b, "number"));
		v = json_object_get(b, "original-location");
		if (num != NULL && v != NULL)
			json_object_set(g->fault_bkpts, num, v);
		return;
	}
	listed = gdb_breaks_listed(reply);
	missing = json_array();
	json_object_foreach_safe(g->fault_bkpts, tmp, key, v) {
		bool found = false;

		json_array_foreach(listed, i, b)
			if (strcmp(json_string_value(json_object_get(b,
			    "number")), key) == 0)
				found = true;
		if (found)
			continue;
		json_array_append(missing, v);
		json_object_del(g->fault_bkpts, key);
	}
	json_array_foreach(missing, i, v) {
		char *q = mi_cstring_quote(json_string_value(v));

		gdb_job_add(j, "-break-insert %s", q);
		free(q);
	}
	if (json_array_size(missing) > 0) {
		g->rearmed++;
		log_info("session %lu: %zu fault breaks were deleted: putting "
		    "them back", g->s->id, json_array_size(missing));
	}
	json_decref(missing);
	json_decref(listed);
}

/* An exec that may delete breakpoints: its answer as exec gives one. */
static json_t *
gdb_breaks_exec_done(struct gdb_job *j)
{
	json_t		*r = json_deep_copy(json_array_get(j->replies, 0));
	const char	*cls = json_string_value(json_object_get(r, "class"));
	json_t		*out;

	if (strcmp(cls, "error") == 0) {
		gdb_job_fail(j, RPC_DEBUGGER_ERROR, "%s", json_string_value(
		    json_object_get(r, "msg")) != NULL ? json_string_value(
		    json_object_get(r, "msg")) : "gdb refused the command");
		json_decref(r);
		return NULL;
	}
	out = json_pack("{s:s, s:O*}", "class", cls, "output",
	    json_object_get(r, "output"));
	if (json_object_get(out, "output") == NULL)
		json_object_set_new(out, "output", json_string(""));
	json_object_del(r, "class");
	json_object_del(r, "output");
	json_object_set_new(out, "results", r);
	return out;
}

/*
 * exec of a command that may delete breakpoints: it runs, then what it
 * took of the fault breaks goes back in, and only then is it answered,
 * so a status after the answer finds them armed.
 */
enum method_return
gdb_breaks_exec(struct request *req, struct gdb_data *g, const char *cmd)
{
	struct gdb_job *j;

	j = gdb_job_new(req, g, GDB_JOB_STOPPED | GDB_JOB_ERRORS_OK |
	    GDB_JOB_BARE, gdb_breaks_exec_done);
	json_object_set_new(j->ctx, "exec", json_true());
	if (*cmd == '-')
		gdb_job_add(j, "%s", cmd);
	else
		gdb_job_add_console(j, cmd);
	gdb_job_add(j, "-break-list");
	j->step = gdb_breaks_rearm_step;
	return gdb_job_run(j, gdb_job_timeout, request_int(req, "timeout",
	    10000));
}

/* The member "fault_breaks" of a gdb-family session, or NULL. */
json_t *
gdb_breaks_status(const struct session *s)
{
	const struct gdb_data	*g = gdb_of(s);
	json_t			*nums;
	const char		*key;
	json_t			*v;

	if (g == NULL)
		return NULL;
	nums = json_array();
	json_object_foreach(g->fault_bkpts, key, v)
		json_array_append_new(nums, json_string(key));
	return json_pack("{s:b, s:o, s:I}", "armed", !g->disarmed,
	    "numbers", nums, "rearmed",
	    (json_int_t)g->rearmed);
}
