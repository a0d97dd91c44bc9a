/*
 * What gdb says over MI, for every gdb-family session: the target's
 * run/stop state from async records, and exec, a command run for a
 * request with its result as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "mi.h"
#include "request.h"
#include "semihost.h"
#include "session-target.h"

/* How long a process's exit waits for the *stopped that says how. */
#define GDB_EXIT_HOLD_MS 20

/* How long an exec waits for gdb by default. */
#define GDB_EXEC_TIMEOUT 10000

/* What a waiting exec needs to be answered or given up. */
struct gdb_exec {
	struct gdb_data	*g;
	unsigned long	 token;		/* 0 once answered */
};

/* Copy member from of src into dst as key, if present. */
void
gdb_copy(json_t *dst, const char *key, json_t *src, const char *from)
{
	json_t *v = json_object_get(src, from);

	if (v != NULL)
		json_object_set(dst, key, v);
}

/* Copy member from of src into dst as key, as the integer MI spells. */
static void
gdb_copy_int(json_t *dst, const char *key, json_t *src, const char *from)
{
	json_t *v = json_object_get(src, from);

	if (json_is_string(v))
		json_object_set_new(dst, key,
		    json_integer(strtol(json_string_value(v), NULL, 10)));
}

/* The frames of a -stack-list-frames answer: level, func, file, line, addr. */
json_t *
gdb_frames(json_t *stack)
{
	json_t	*frames = json_array(), *e, *f, *o;
	size_t	 i;

	json_array_foreach(stack, i, e) {
		f = json_object_get(e, "frame");
		o = json_pack("{s:i}", "level", 0);
		gdb_copy_int(o, "level", f, "level");
		gdb_copy(o, "func", f, "func");
		gdb_copy(o, "file", f, "file");
		gdb_copy_int(o, "line", f, "line");
		gdb_copy(o, "addr", f, "addr");
		json_array_append_new(frames, o);
	}
	return frames;
}

/*
 * The registers of a -data-list-register-values answer as an object of
 * name to value, named by a -data-list-register-names answer's list.
 */
json_t *
gdb_registers(json_t *names, json_t *values)
{
	json_t		*regs = json_object(), *e;
	const char	*name, *num;
	size_t		 i;

	json_array_foreach(values, i, e) {
		num = json_string_value(json_object_get(e, "number"));
		name = num != NULL ? json_string_value(json_array_get(names,
		    strtol(num, NULL, 10))) : NULL;
		if (name == NULL || *name == '\0')
			continue;
		json_object_set(regs, name, json_object_get(e, "value"));
	}
	return regs;
}

/* The stop record of a *stopped: why, where, and on which thread. */
json_t *
gdb_stop_json(const struct mi_record *rec)
{
	json_t		*stop = json_object(), *frame;
	const char	*file;

	gdb_copy(stop, "reason", rec->results, "reason");
	gdb_copy(stop, "signal", rec->results, "signal-name");
	gdb_copy(stop, "thread", rec->results, "thread-id");
	frame = json_object_get(rec->results, "frame");
	gdb_copy(stop, "func", frame, "func");
	file = json_string_value(json_object_get(frame, "fullname"));
	if (file == NULL)
		file = json_string_value(json_object_get(frame, "file"));
	if (file != NULL)
		json_object_set_new(stop, "file", json_string(file));
	gdb_copy_int(stop, "line", frame, "line");
	gdb_copy(stop, "addr", frame, "addr");
	gdb_copy_int(stop, "bkptno", rec->results, "bkptno");
	if (json_is_object(frame))
		json_object_set_new(stop, "frame", json_pack("{s:O?, s:O?, "
		    "s:O?, s:O?}", "func", json_object_get(frame, "func"),
		    "file", json_object_get(stop, "file"), "line",
		    json_object_get(stop, "line"), "addr",
		    json_object_get(frame, "addr")));
	return stop;
}

/* A *stopped that is no exit: the stop record, who it is by, then triage. */
static void
gdb_stopped(struct gdb_data *g, const struct mi_record *rec)
{
	json_t		*stop = gdb_stop_json(rec), *target;
	const char	*by;
	bool		 transient;

	by = gdb_control_stop_by(g, json_string_value(json_object_get(stop,
	    "reason")), json_string_value(json_object_get(stop, "signal")),
	    &transient);
	json_object_set_new(stop, "by", json_string(by));
	target = json_pack("{s:s, s:o}", "state", "stopped", "stop", stop);
	if (transient)
		json_object_set_new(target, "transient", json_true());
	gdb_target(g, target);
	fault_stopped(g, rec);
	gdb_quit_stopped(g);
}

/*
 * A thread group (a process of the program) started or exited: the
 * program's run begins with the first and ends with the last, when none
 * of its processes can write to the target stream any more.
 */
static void
gdb_run_event(struct gdb_data *g, const struct mi_record *rec)
{
	struct gdb_job *j;

	if (rec->kind != MI_NOTIFY)
		return;
	if (strcmp(rec->cls, "thread-group-started") == 0) {
		/*
		 * A new run: the last one's fault is history (a reset's run
		 * clears it itself once gdb says the run began).
		 */
		j = TAILQ_FIRST(&g->jobs);
		if (g->groups++ == 0) {
			if (j == NULL || !(j->flags & GDB_JOB_RERUN))
				session_fault_clear(g->s, "run");
			session_target_run(g->s, true);
		}
		return;
	}
	if (strcmp(rec->cls, "thread-group-exited") == 0 && g->groups > 0 &&
	    --g->groups == 0)
		session_target_run(g->s, false);
}

/*
 * gdb made a breakpoint: one of the command line's fault breaks (a native
 * session's go in with -ex) is known by its number from now on.
 */
static void
gdb_break_event(struct gdb_data *g, const struct mi_record *rec)
{
	json_t		*b = json_object_get(rec->results, "bkpt"), *all, *v;
	const char	*loc;
	size_t		 i;

	if (json_is_array(b))
		b = json_array_get(b, 0);
	loc = json_string_value(json_object_get(b, "original-location"));
	if (loc == NULL || g->s->l.pid != 0)
		return;
	all = g->s->l.fault_breaks;
	json_array_foreach(all, i, v)
		if (strcmp(json_string_value(v), loc) == 0 &&
		    !gdb_breaks_placed(g, loc))
			gdb_breaks_inserted(g, rec);
}

/* Publish an exit record held back for the *stopped that may complete it. */
void
gdb_exit_flush(struct gdb_data *g)
{
	json_t *exit = g->exit_held;

	if (exit == NULL)
		return;
	g->exit_held = NULL;
	timer_stop(g->exit_timer);
	session_target(g->s, exit);
	gdb_control_target(g, exit);
	backend_gdb_settle(g);
}

/*
 * Publish a target record of the gdb family (taken): an exit held back
 * goes first, so records keep gdb's order; the running job hears of it.
 */
void
gdb_target(struct gdb_data *g, json_t *target)
{
	gdb_exit_flush(g);
	join_news_target_by(g, target);
	session_target(g->s, target);
	gdb_control_target(g, target);
	backend_gdb_settle(g);
}

/* No *stopped came after the group's exit (a kill): it is the record. */
static void
gdb_exit_timer_cb(void *arg)
{
	gdb_exit_flush(arg);
}

/*
 * The program's process exited: hold its record for a moment, since gdb
 * says how (a code, a signal) in the *stopped that follows in the same
 * breath, so that one exit makes one record, whole.
 */
static void
gdb_exit_hold(struct gdb_data *g, const struct mi_record *rec)
{
	gdb_exit_flush(g);
	g->exit_held = json_pack("{s:s}", "state", "exited");
	gdb_copy(g->exit_held, "exit_code", rec->results, "exit-code");
	if (g->exit_timer == NULL)
		g->exit_timer = timer_new(gdb_exit_timer_cb, g);
	timer_start(g->exit_timer, GDB_EXIT_HOLD_MS);
}

/* *stopped with an exited reason: the held record, completed, or a new one. */
static void
gdb_exited(struct gdb_data *g, const struct mi_record *rec, const char *reason)
{
	json_t *exit = g->exit_held;

	g->exit_held = NULL;
	timer_stop(g->exit_timer);
	if (exit == NULL)
		exit = json_pack("{s:s}", "state", "exited");
	json_object_set_new(exit, "reason", json_string(reason));
	if (json_object_get(exit, "exit_code") == NULL)
		gdb_copy(exit, "exit_code", rec->results, "exit-code");
	gdb_copy(exit, "signal", rec->results, "signal-name");
	semihost_target(g->s, exit);
	session_target(g->s, exit);
	gdb_quit_stopped(g);
	gdb_control_target(g, exit);
	backend_gdb_settle(g);
}

/* gdb said something on its own: the target started, stopped or exited. */
void
gdb_event(void *arg, const struct mi_record *rec)
{
	struct gdb_data	*g = arg;
	const char	*reason;
	json_t		*target;

	reason = json_string_value(json_object_get(rec->results, "reason"));
	if (rec->kind == MI_EXEC && strcmp(rec->cls, "stopped") == 0 &&
	    reason != NULL && strncmp(reason, "exited", 6) == 0) {
		gdb_run_event(g, rec);
		gdb_exited(g, rec, reason);
		return;
	}
	/* Another run or state first: the held exit is all there will be. */
	if (rec->kind == MI_EXEC || (rec->kind == MI_NOTIFY &&
	    strcmp(rec->cls, "thread-group-started") == 0))
		gdb_exit_flush(g);
	gdb_run_event(g, rec);
	if (rec->kind == MI_NOTIFY && strcmp(rec->cls, "breakpoint-created") == 0)
		gdb_break_event(g, rec);
	join_news_event(g, rec);
	if (rec->kind == MI_EXEC && strcmp(rec->cls, "running") == 0) {
		target = json_pack("{s:s}", "state", "running");
		if (gdb_control_running_transient(g))
			json_object_set_new(target, "transient", json_true());
		gdb_target(g, target);
		return;
	}
	if (rec->kind == MI_EXEC && strcmp(rec->cls, "stopped") == 0) {
		gdb_stopped(g, rec);
		return;
	}
	if (rec->kind == MI_NOTIFY &&
	    strcmp(rec->cls, "thread-group-exited") == 0)
		gdb_exit_hold(g, rec);
}

/* Console text as a JSON string; bytes that are not UTF-8 become '?'. */
json_t *
gdb_text(const char *out, size_t len)
{
	json_t	*v;
	char	*copy;
	size_t	 i;

	if ((v = json_stringn(out, len)) != NULL)
		return v;
	copy = xmalloc(len + 1);
	for (i = 0; i < len; i++)
		copy[i] = (unsigned char)out[i] < 0x80 && out[i] != '\0' ?
		    out[i] : '?';
	v = json_stringn(copy, len);
	free(copy);
	return v;
}

/* gdb answered an exec: the result, or gdb's error, or that gdb is gone. */
static void
gdb_exec_reply(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct request	*req = arg;
	struct gdb_exec	*e = req->data;
	const char	*msg;

	e->token = 0;
	/* A kill's exit comes with no *stopped: it is whole by its answer. */
	gdb_exit_flush(e->g);
	if (rec == NULL) {
		request_error(req, RPC_NOT_RUNNING, "gdb ended before it "
		    "answered");
		return;
	}
	if (strcmp(rec->cls, "error") == 0) {
		msg = json_string_value(json_object_get(rec->results, "msg"));
		request_error(req, RPC_DEBUGGER_ERROR, "%s", msg != NULL ? msg :
		    "gdb refused the command");
		return;
	}
	request_done(req, json_pack("{s:s, s:O, s:o}", "class", rec->cls,
	    "results", rec->results, "output", gdb_text(out, len)));
}

/* gdb did not answer in time; its late answer is recognised and dropped. */
static void
gdb_exec_timeout(struct request *req)
{
	request_error(req, RPC_TIMEOUT, "gdb did not answer within %lld ms",
	    request_int(req, "timeout", GDB_EXEC_TIMEOUT));
}

/* An exec is over: a command still out is no longer waited for. */
static void
gdb_exec_free(struct request *req)
{
	struct gdb_exec *e = req->data;

	if (e->token != 0 && e->g->mi != NULL)
		mi_cancel(e->g->mi, e->token);
	free(e);
}

/*
 * Whether a console command starts the target in the foreground, which
 * would leave gdb's MI unread until the target stops.
 */
static bool
gdb_runs(const char *cmd)
{
	static const char *const verbs[] = { "run", "r", "start", "starti",
	    "continue", "c", "fg", "next", "n", "step", "s", "nexti", "ni",
	    "stepi", "si", "finish", "fin", "until", "u", "advance", "jump",
	    "j", "signal", "reverse-continue", "rc", NULL };
	size_t	i, n = strcspn(cmd, " \t");

	if (cmd[strlen(cmd) - 1] == '&')
		return false;
	for (i = 0; verbs[i] != NULL; i++)
		if (strlen(verbs[i]) == n && strncmp(cmd, verbs[i], n) == 0)
			return true;
	return false;
}

/* Whether a kind is of the gdb family: its commands go to gdb over MI. */
bool
gdb_family_kind(const struct backend *be, const void *arg)
{
	(void)arg;
	return be->command == gdb_command;
}

/* Whether s is of the gdb family. */
bool
gdb_family(const struct session *s)
{
	return gdb_family_kind(s->backend, NULL);
}

/* s's gdb-family state; NULL for another kind, or before its start. */
struct gdb_data *
gdb_of(const struct session *s)
{
	return gdb_family(s) ? s->bdata : NULL;
}

/* s's gdb while its MI channel is open; NULL for another kind, or gdb gone. */
struct gdb_data *
gdb_live(const struct session *s)
{
	struct gdb_data *g = gdb_of(s);

	return g != NULL && g->mi != NULL ? g : NULL;
}

/*
 * exec for the gdb family: a command starting with '-' is MI; any other is
 * run by -interpreter-exec console, so its output comes back here and never
 * reaches the human console or the session log.
 */
int
gdb_command(struct session *s, struct request *req)
{
	struct gdb_data	*g = s->bdata;
	struct gdb_exec	*e;
	const char	*cmd = request_str(req, "command", "");
	char		*quoted, *bg;

	if (g == NULL || g->mi == NULL || session_ended(s))
		return request_error(req, RPC_NOT_RUNNING, "session %lu has "
		    "no debugger to run commands", s->id);
	if (strpbrk(cmd, "\r\n") != NULL || *cmd == '\0')
		return request_error(req, RPC_INVALID_PARAMS, "\"command\" "
		    "must be one non-empty line");
	/* One that may delete the fault breaks is answered once they are back. */
	if (gdb_breaks_deletes(cmd) && json_object_size(g->fault_bkpts) > 0)
		return gdb_breaks_exec(req, g, cmd);
	e = xcalloc(1, sizeof *e);
	e->g = g;
	/* The stop it makes is by "halt", as the verb's is. */
	if (strcmp(cmd, "-exec-interrupt") == 0 || strcmp(cmd, "interrupt") == 0)
		g->halting = GDB_HALT_USER;
	pending_wait(req, e, gdb_exec_free);
	if (*cmd == '-')
		e->token = mi_command(g->mi, gdb_exec_reply, req, "%s", cmd);
	else {
		/* In the background, so MI (and -exec-interrupt) is still read. */
		xasprintf(&bg, "%s%s", cmd, gdb_runs(cmd) ? " &" : "");
		quoted = mi_cstring_quote(bg);
		free(bg);
		e->token = mi_command_output(g->mi, gdb_exec_reply, req,
		    "-interpreter-exec console %s", quoted);
		free(quoted);
	}
	if (e->token == 0)
		return request_error(req, RPC_NOT_RUNNING, "gdb's MI of "
		    "session %lu is closed", s->id);
	pending_timeout(req, request_int(req, "timeout", GDB_EXEC_TIMEOUT),
	    gdb_exec_timeout);
	return METHOD_WAIT;
}
