/*
 * Run control for the gdb family: a verb is a job of MI commands, run one
 * job at a time per session. A job that needs the target stopped while it
 * runs halts it first (a transient stop, which waiters skip), and resumes
 * it after, so a verb leaves the target as it found it. A job outlives a
 * request that timed out or whose client left, so that what it halted is
 * always resumed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "method.h"
#include "mi.h"
#include "request.h"

static void	gdb_job_request_gone(struct request *);

/* How gdb refuses a command that needs the target stopped, while it runs. */
#define GDB_RUNNING_REFUSAL \
	"Cannot execute this command while the target is running"

/* How long a job waits for the stop it interrupted for, or the run after. */
#define GDB_JOB_STUCK_MS 10000

static void	gdb_job_next(struct gdb_job *);
static void	gdb_job_resumed(void *, const struct mi_record *, const char *,
		    size_t);

/* Whether gdb refused a command as the target runs (all-stop, remote). */
bool
gdb_refused_running(const struct mi_record *rec)
{
	const char *msg;

	if (strcmp(rec->cls, "error") != 0)
		return false;
	msg = json_string_value(json_object_get(rec->results, "msg"));
	return msg != NULL && strncmp(msg, GDB_RUNNING_REFUSAL,
	    strlen(GDB_RUNNING_REFUSAL)) == 0;
}

/* The state member of the session's target record ("unknown" if none). */
const char *
gdb_control_state(const struct session *s)
{
	const char *st;

	st = json_string_value(json_object_get(s->target, "state"));
	return st != NULL ? st : "unknown";
}

/* A new job for req, run once gdb_job_run queues it. */
struct gdb_job *
gdb_job_new(struct request *req, struct gdb_data *g, int flags,
    gdb_job_done done)
{
	struct gdb_job *j = xcalloc(1, sizeof *j);

	j->req = req;
	j->g = g;
	j->flags = flags;
	j->done = done;
	j->cmds = json_array();
	j->replies = json_array();
	j->ctx = json_object();
	return j;
}

/* Add an MI command line to the job's list. */
void
gdb_job_add(struct gdb_job *j, const char *fmt, ...)
{
	va_list	 ap;
	char	*line;

	va_start(ap, fmt);
	xvasprintf(&line, fmt, ap);
	va_end(ap);
	json_array_append_new(j->cmds, json_string(line));
	free(line);
}

/* Add a console command, run through MI so its output comes back to us. */
void
gdb_job_add_console(struct gdb_job *j, const char *cmd)
{
	char *q = mi_cstring_quote(cmd);

	gdb_job_add(j, "-interpreter-exec console %s", q);
	free(q);
}

/* Free a job that is done with: no MI command of its is waited for. */
static void
gdb_job_free(struct gdb_job *j)
{
	if (j->token != 0 && j->g->mi != NULL)
		mi_cancel(j->g->mi, j->token);
	json_decref(j->cmds);
	json_decref(j->replies);
	json_decref(j->ctx);
	json_decref(j->result);
	free(j->error);
	free(j);
}

/*
 * The job leaves the queue and the next one starts; a request that still
 * waits (for a stop, say) keeps it as its state until it is finished.
 */
static void
gdb_job_end(struct gdb_job *j)
{
	struct gdb_data	*g = j->g;
	struct gdb_job	*next;

	TAILQ_REMOVE(&g->jobs, j, entry);
	j->queued = false;
	timer_stop(g->job_timer);
	if (j->waiter != NULL && j->unlink != NULL)
		j->unlink(j);
	if (j->req == NULL)
		gdb_job_free(j);
	if ((next = TAILQ_FIRST(&g->jobs)) != NULL && next->phase ==
	    GDB_JOB_QUEUED)
		gdb_job_next(next);
}

/* The request's answer: the result, or the first failure, with the target. */
static void
gdb_job_answer(struct gdb_job *j)
{
	struct request	*req = j->req;
	json_t		*data;

	if (j->error != NULL && req == NULL)
		req = j->waiter;
	if (req == NULL)
		return;
	if (j->error != NULL) {
		data = json_pack("{s:O*}", "target", j->g->s->target);
		request_error_data(req, j->code, data, "%s", j->error);
		return;
	}
	if (j->result == NULL)
		return;
	if (j->flags & GDB_JOB_BARE) {
		request_done(req, j->result);
		j->result = NULL;
		return;
	}
	json_object_set(j->result, "target", j->g->s->target);
	if (j->halted_for)
		json_object_set_new(j->result, "halted_for", json_true());
	request_done(req, j->result);
	j->result = NULL;
}

/*
 * The target never stopped for the job's interrupt (or never ran again):
 * the job fails rather than hold every later verb of the session.
 */
static void
gdb_job_stuck(void *arg)
{
	struct gdb_data	*g = arg;
	struct gdb_job	*j = TAILQ_FIRST(&g->jobs);

	if (j == NULL)
		return;
	gdb_job_fail(j, RPC_TIMEOUT, "the target of session %lu did not %s "
	    "within %d ms", g->s->id, j->phase == GDB_JOB_HALTING ? "stop "
	    "for the interrupt" : "run again", GDB_JOB_STUCK_MS);
	j->halted_for = false;
	g->resuming = false;
	gdb_job_answer(j);
	gdb_job_end(j);
}

/* Bound the wait for a record the job cannot go on without. */
static void
gdb_job_await(struct gdb_job *j, enum gdb_job_phase phase)
{
	struct gdb_data *g = j->g;

	j->phase = phase;
	if (g->job_timer == NULL)
		g->job_timer = timer_new(gdb_job_stuck, g);
	timer_start(g->job_timer, GDB_JOB_STUCK_MS);
}

/* Halt the target for the job, which goes on at the stop. */
static void
gdb_job_halt(struct gdb_job *j)
{
	struct gdb_data *g = j->g;

	gdb_job_await(j, GDB_JOB_HALTING);
	j->halted = true;
	j->halted_for = !(j->flags & GDB_JOB_KEEP_HALTED);
	g->halting = j->halt_as != GDB_HALT_NONE ? j->halt_as :
	    GDB_HALT_TRANSIENT;
	j->token = mi_command(g->mi, NULL, NULL, "-exec-interrupt");
	j->token = 0;
}

/* Record the job's first failure; what is left of its commands is skipped. */
void
gdb_job_fail(struct gdb_job *j, int code, const char *fmt, ...)
{
	va_list ap;

	if (j->error != NULL)
		return;
	j->code = code;
	va_start(ap, fmt);
	xvasprintf(&j->error, fmt, ap);
	va_end(ap);
	j->next = json_array_size(j->cmds);
}

/* The commands are done: build the answer, then put the target back. */
static void
gdb_job_finish(struct gdb_job *j)
{
	struct gdb_data *g = j->g;

	if (j->error == NULL && j->done != NULL)
		j->result = j->done(j);
	/* A verb that failed leaves the target as it found it. */
	if (j->error != NULL && j->halted && g->mi != NULL &&
	    json_is_true(json_object_get(g->s->target, "transient")))
		j->halted_for = true;
	if (j->halted_for) {
		gdb_job_await(j, GDB_JOB_RESUMING);
		g->resuming = true;
		j->token = mi_command(g->mi, gdb_job_resumed, j,
		    "-exec-continue");
		if (j->token != 0)
			return;
		g->resuming = false;
	}
	if (j->error == NULL && (j->flags & GDB_JOB_AWAIT_RUNNING)) {
		gdb_job_await(j, GDB_JOB_RESUMING);
		return;
	}
	gdb_job_answer(j);
	gdb_job_end(j);
}

/* gdb answered the resume after a halt: its running record ends the job. */
static void
gdb_job_resumed(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct gdb_job *j = arg;

	(void)out;
	(void)len;
	j->token = 0;
	if (rec != NULL && strcmp(rec->cls, "error") != 0)
		return;
	j->g->resuming = false;
	gdb_job_answer(j);
	gdb_job_end(j);
}

/* gdb answered one of the job's commands. */
static void
gdb_job_reply(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct gdb_job	*j = arg;
	const char	*msg;
	json_t		*r;

	j->token = 0;
	gdb_exit_flush(j->g);
	if (rec == NULL) {
		gdb_job_fail(j, RPC_NOT_RUNNING, "gdb ended before it answered");
		j->halted_for = false;
		j->flags &= ~GDB_JOB_AWAIT_RUNNING;
		gdb_job_finish(j);
		return;
	}
	msg = json_string_value(json_object_get(rec->results, "msg"));
	/*
	 * gdb ran the target before its *running reached the daemon (a
	 * continue typed on the console, say; a launch answers only after
	 * its own): halt now and send that command again (those before
	 * it, such as load's -file-exec-and-symbols, needed no halt and
	 * are done).
	 */
	if ((j->flags & GDB_JOB_STOPPED) && !j->halted && j->next >= 1 &&
	    gdb_refused_running(rec)) {
		j->next--;
		gdb_job_halt(j);
		return;
	}
	if (strcmp(rec->cls, "error") == 0 && !(j->flags & GDB_JOB_ERRORS_OK)) {
		gdb_job_fail(j, RPC_DEBUGGER_ERROR, "%s", msg != NULL ? msg :
		    "gdb refused the command");
	} else {
		r = json_deep_copy(rec->results);
		json_object_set_new(r, "class", json_string(rec->cls));
		if (len > 0)
			json_object_set_new(r, "output", gdb_text(out, len));
		json_array_append_new(j->replies, r);
		if (j->step != NULL)
			j->step(j, r);
	}
	gdb_job_next(j);
}

/* Send the job's next command, or finish it. */
static void
gdb_job_send(struct gdb_job *j)
{
	struct gdb_data	*g = j->g;
	const char	*line;

	if (j->next >= json_array_size(j->cmds)) {
		gdb_job_finish(j);
		return;
	}
	line = json_string_value(json_array_get(j->cmds, j->next++));
	if (j->halting != GDB_HALT_NONE && j->next == 1)
		g->halting = j->halting;
	if (j->flags & GDB_JOB_OUTPUT)
		j->token = mi_command_output(g->mi, gdb_job_reply, j, "%s",
		    line);
	else
		j->token = mi_command(g->mi, gdb_job_reply, j, "%s", line);
	if (j->token == 0) {
		gdb_job_fail(j, RPC_NOT_RUNNING, "gdb's MI of session %lu is "
		    "closed", g->s->id);
		j->halted_for = false;
		j->flags &= ~GDB_JOB_AWAIT_RUNNING;
		gdb_job_finish(j);
	}
}

/* Start (or go on with) the job at the head of the queue. */
static void
gdb_job_next(struct gdb_job *j)
{
	struct gdb_data *g = j->g;

	if (j->phase == GDB_JOB_QUEUED) {
		/* A request gone before its turn has nothing to undo. */
		if (j->req == NULL && !(j->flags & GDB_JOB_ORPHAN_OK)) {
			gdb_job_end(j);
			return;
		}
		j->phase = GDB_JOB_COMMANDS;
		if (j->start != NULL && j->start(j) != 0) {
			gdb_job_answer(j);
			gdb_job_end(j);
			return;
		}
		if ((j->flags & GDB_JOB_STOPPED) &&
		    strcmp(gdb_control_state(g->s), "running") == 0) {
			gdb_job_halt(j);
			return;
		}
	}
	if (j->phase == GDB_JOB_COMMANDS)
		gdb_job_send(j);
}

/* Queue the job; the request waits for it (its timeout is the verb's). */
enum method_return
gdb_job_run(struct gdb_job *j, void (*timeout)(struct request *),
    long long ms)
{
	struct gdb_data	*g = j->g;
	bool		 first = TAILQ_EMPTY(&g->jobs);

	TAILQ_INSERT_TAIL(&g->jobs, j, entry);
	j->queued = true;
	if (j->req != NULL) {
		pending_wait(j->req, j, gdb_job_request_gone);
		if (timeout != NULL)
			pending_timeout(j->req, ms, timeout);
	}
	if (first)
		gdb_job_next(j);
	return METHOD_WAIT;
}

/* A verb's job ran out of time: the answer says where the target is. */
void
gdb_job_timeout(struct request *req)
{
	struct session *s = req->session;

	request_error_data(req, RPC_TIMEOUT, json_pack("{s:O*}", "target",
	    s->target), "session %lu: %s did not finish in time (the target "
	    "is %s)", s->id, req->method->name, gdb_control_state(s));
}

/* The job's request is finished (answered, timed out, client gone). */
static void
gdb_job_request_gone(struct request *req)
{
	struct gdb_job *j = req->data;

	j->req = NULL;
	req->data = NULL;
	if (!j->queued)
		gdb_job_free(j);
}

/*
 * A target record was published: a job halting the target goes on at
 * the stop, one putting it back ends at its running.
 */
void
gdb_control_target(struct gdb_data *g, const json_t *rec)
{
	struct gdb_job	*j = TAILQ_FIRST(&g->jobs);
	const char	*st = json_string_value(json_object_get(rec, "state"));

	if (j == NULL || st == NULL)
		return;
	if (j->phase == GDB_JOB_HALTING && strcmp(st, "running") != 0) {
		/* Stopped on its own first: it stays stopped, as it chose. */
		if (!json_is_true(json_object_get(rec, "transient"))) {
			j->halted_for = false;
			j->halted = false;
		}
		if (strcmp(st, "stopped") != 0) {
			gdb_job_fail(j, RPC_NOT_RUNNING, "the target of session "
			    "%lu is %s", g->s->id, st);
			j->halted_for = false;
		}
		j->phase = GDB_JOB_COMMANDS;
		timer_stop(g->job_timer);
		gdb_job_send(j);
		return;
	}
	if (j->phase == GDB_JOB_RESUMING) {
		gdb_job_answer(j);
		gdb_job_end(j);
	}
}

/* Who the next stop is by, as the stop record says it, and forget it. */
const char *
gdb_control_stop_by(struct gdb_data *g, const char *reason, const char *sig,
    bool *transient)
{
	int	 h = g->halting;
	bool	 interrupt;

	g->halting = GDB_HALT_NONE;
	*transient = false;
	/* An interrupt stops with SIGINT (or SIGTRAP, some stubs), or no reason. */
	interrupt = reason == NULL || (strcmp(reason, "signal-received") == 0 &&
	    sig != NULL && (strcmp(sig, "SIGINT") == 0 ||
	    strcmp(sig, "SIGTRAP") == 0 || strcmp(sig, "0") == 0));
	if (h == GDB_HALT_RESET)
		return "reset";
	if (h == GDB_HALT_VERDICT && interrupt)
		return "verdict";
	if (h == GDB_HALT_NONE || !interrupt)
		return "target";
	if (h == GDB_HALT_TRANSIENT) {
		*transient = true;
		return "dbgctl";
	}
	return "halt";
}

/* Whether the next running record is the daemon's own undoing of a halt. */
bool
gdb_control_running_transient(struct gdb_data *g)
{
	bool t = g->resuming;

	g->resuming = false;
	return t;
}

/* The session ended: every job is answered (gdb is gone) and freed. */
void
gdb_control_close(struct gdb_data *g)
{
	struct gdb_job *j;

	gdb_exit_flush(g);
	timer_free(g->exit_timer);
	g->exit_timer = NULL;
	while ((j = TAILQ_FIRST(&g->jobs)) != NULL) {
		gdb_job_fail(j, RPC_NOT_RUNNING, "session %lu has exited",
		    g->s->id);
		gdb_job_answer(j);
		TAILQ_REMOVE(&g->jobs, j, entry);
		j->queued = false;
		j->token = 0;
		if (j->waiter != NULL && j->unlink != NULL)
			j->unlink(j);
		if (j->req == NULL)
			gdb_job_free(j);
	}
	json_decref(g->fault_bkpts);
	g->fault_bkpts = NULL;
	timer_free(g->job_timer);
	g->job_timer = NULL;
}
