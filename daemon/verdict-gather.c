/*
 * What a verdict records, gathered when a deadline or silence runs out:
 * the streams' offsets and how long each has been quiet, the session's
 * processes, the console's last lines and, from a gdb-family target halted
 * for it, where every thread is and its registers. The gathering is
 * bounded in time: what gdb has not answered by then is marked incomplete.
 */
#include <stdlib.h>
#include <string.h>

#include "children.h"
#include "daemon.h"
#include "gdb.h"
#include "verdict.h"

/* How long a gathering may take before the verdict goes out as it is. */
#define VERDICT_GATHER_MS	15000
/* Most processes a verdict lists, and lines of the console it keeps. */
#define VERDICT_PROCS_MAX	64
#define VERDICT_TAIL_LINES	20
#define VERDICT_TAIL_BYTES	4096

/* The session's process and every process below it, as pid and name. */
static void
verdict_gather_procs(pid_t pid, json_t *list)
{
	char	 comm[64];
	pid_t	*kids;
	size_t	 i, n;

	if (json_array_size(list) >= VERDICT_PROCS_MAX)
		return;
	status_comm(pid, comm, sizeof comm);
	json_array_append_new(list, json_pack("{s:i, s:s}", "pid", (int)pid,
	    "name", comm));
	kids = children_of(pid, &n);
	for (i = 0; i < n; i++)
		verdict_gather_procs(kids[i], list);
	free(kids);
}

/* How long ago at was, in ms; since the session ran if nothing came. */
static json_int_t
verdict_gather_idle(const struct verdict_watch *w, uint64_t at)
{
	return (json_int_t)(uv_now(dmn.loop) - (at != 0 ? at : w->armed_at));
}

/* Each stream's offset and how long it has been quiet. */
static json_t *
verdict_gather_streams(const struct verdict_watch *w)
{
	struct session	*s = w->s;
	json_t		*o = json_object();

	json_object_set_new(o, "console", json_pack("{s:I, s:I}", "offset",
	    (json_int_t)output_size(&s->output), "idle_ms",
	    verdict_gather_idle(w, w->last_console)));
	if (s->l.transport && s->target_out != NULL)
		json_object_set_new(o, "target", json_pack("{s:I, s:I}",
		    "offset", (json_int_t)output_size(s->target_out),
		    "idle_ms", verdict_gather_idle(w, w->last_target)));
	if (session_stream(s, "semihost") != NULL)
		json_object_set_new(o, "semihost", json_pack("{s:I, s:I}",
		    "offset", (json_int_t)output_size(s->semihost_out),
		    "idle_ms", verdict_gather_idle(w, w->last_semihost)));
	return o;
}

/* The console's last lines, as text. */
static json_t *
verdict_gather_tail(struct session *s)
{
	uint64_t	 off = output_lines_tail(&s->output, VERDICT_TAIL_LINES,
			    VERDICT_TAIL_BYTES);
	char		 buf[VERDICT_TAIL_BYTES];
	size_t		 n;

	n = output_read(&s->output, off, buf, sizeof buf);
	return gdb_text(buf, n);
}

/* Say in the verdict that a command of its gathering failed, and why. */
static void
verdict_gather_incomplete(json_t *v, const char *cmd, const char *why)
{
	json_t *list = json_object_get(v, "incomplete");

	if (list == NULL) {
		list = json_array();
		json_object_set_new(v, "incomplete", list);
	}
	json_array_append_new(list, json_pack("{s:s?, s:s}", "command", cmd,
	    "error", why != NULL ? why : "?"));
}

/* The frames of one thread from its -stack-list-frames answer. */
static json_t *
verdict_gather_thread(json_t *info, json_t *stack)
{
	json_t *t = json_object();

	gdb_copy(t, "id", info, "id");
	gdb_copy(t, "target_id", info, "target-id");
	gdb_copy(t, "name", info, "name");
	json_object_set_new(t, "frames", gdb_frames(json_object_get(stack,
	    "stack")));
	return t;
}

/*
 * The gathering's answers, in the order of its commands: the threads,
 * the register names and values, then one stack a thread.
 */
static json_t *
verdict_gather_gdb_done(struct gdb_job *j)
{
	struct verdict_watch	*w = j->g->s->vw;
	json_t			*v, *threads, *names = NULL, *r, *list;
	size_t			 i, t = 0;
	const char		*cmd;

	if (w == NULL || (v = w->pending) == NULL)
		return NULL;
	threads = json_object_get(json_array_get(j->replies, 0), "threads");
	list = json_array();
	json_array_foreach(j->replies, i, r) {
		cmd = json_string_value(json_array_get(j->cmds, i));
		if (strcmp(json_string_value(json_object_get(r, "class")),
		    "error") == 0) {
			verdict_gather_incomplete(v, cmd, json_string_value(
			    json_object_get(r, "msg")));
			continue;
		}
		if (strcmp(cmd, "-data-list-register-names") == 0)
			names = json_object_get(r, "register-names");
		else if (strcmp(cmd, "-data-list-register-values x") == 0)
			json_object_set_new(v, "registers", gdb_registers(names,
			    json_object_get(r, "register-values")));
		else if (strncmp(cmd, "-stack-list-frames", 18) == 0)
			json_array_append_new(list, verdict_gather_thread(
			    json_array_get(threads, t++), r));
	}
	json_object_set_new(v, "threads", list);
	verdict_publish(w);
	return NULL;
}

/* After -thread-info: a stack for each thread, the first one's first. */
static void
verdict_gather_gdb_step(struct gdb_job *j, json_t *reply)
{
	json_t	*t;
	size_t	 i;

	if (j->next != 1)
		return;
	json_array_foreach(json_object_get(reply, "threads"), i, t)
		gdb_job_add(j, "-stack-list-frames --thread %s 0 63",
		    json_string_value(json_object_get(t, "id")));
}

/* Halt a gdb-family target and ask where it is, as a run-control job. */
static void
verdict_gather_gdb(struct verdict_watch *w)
{
	struct gdb_job *j;

	j = gdb_job_new(NULL, gdb_of(w->s), GDB_JOB_ORPHAN_OK |
	    GDB_JOB_STOPPED | GDB_JOB_KEEP_HALTED | GDB_JOB_ERRORS_OK,
	    verdict_gather_gdb_done);
	j->halt_as = GDB_HALT_VERDICT;
	j->step = verdict_gather_gdb_step;
	gdb_job_add(j, "-thread-info");
	gdb_job_add(j, "-data-list-register-names");
	gdb_job_add(j, "-data-list-register-values x");
	gdb_job_run(j, NULL, 0);
}

/* The gathering took too long: the verdict goes out with what it has. */
static void
verdict_gather_cb(void *arg)
{
	struct verdict_watch *w = arg;

	if (w->pending == NULL)
		return;
	verdict_gather_incomplete(w->pending, NULL, "gdb did not answer in time");
	verdict_publish(w);
}

/* Gather the verdict of kind, from gdb too where the target has one. */
void
verdict_gather(struct verdict_watch *w, const char *kind)
{
	struct session	*s = w->s;
	json_t		*v, *procs = json_array();

	v = json_pack("{s:s, s:o, s:o}", "kind", kind, "time",
	    json_real(loop_now()), "streams", verdict_gather_streams(w));
	if (s->target != NULL)
		json_object_set(v, "target_before", s->target);
	if (s->procs[0].proc != NULL)
		verdict_gather_procs(proc_pid(s->procs[0].proc), procs);
	json_object_set_new(v, "processes", procs);
	json_object_set_new(v, "console_tail", verdict_gather_tail(s));
	w->pending = v;
	if (gdb_live(s) != NULL) {
		if (w->gather == NULL)
			w->gather = timer_new(verdict_gather_cb, w);
		timer_start(w->gather, VERDICT_GATHER_MS);
		verdict_gather_gdb(w);
		return;
	}
	verdict_publish(w);
}
