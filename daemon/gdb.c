/*
 * What gdb says over MI, for every gdb-family session: the target's
 * run/stop state from async records, and exec, a command run for a
 * request with its result as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

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
void
gdb_copy_int(json_t *dst, const char *key, json_t *src, const char *from)
{
	json_t *v = json_object_get(src, from);

	if (json_is_string(v))
		json_object_set_new(dst, key,
		    json_integer(strtol(json_string_value(v), NULL, 10)));
}

/* The stop record of a *stopped: why, where, and on which thread. */
static json_t *
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
	return stop;
}

/*
 * A thread group (a process of the program) started or exited: the
 * program's run begins with the first and ends with the last, when none
 * of its processes can write to the target stream any more.
 */
static void
gdb_run_event(struct gdb_data *g, const struct mi_record *rec)
{
	if (rec->kind != MI_NOTIFY)
		return;
	if (strcmp(rec->cls, "thread-group-started") == 0) {
		if (g->groups++ == 0)
			session_target_run(g->s, true);
		return;
	}
	if (strcmp(rec->cls, "thread-group-exited") == 0 && g->groups > 0 &&
	    --g->groups == 0)
		session_target_run(g->s, false);
}

/* gdb said something on its own: the target started, stopped or exited. */
void
gdb_event(void *arg, const struct mi_record *rec)
{
	struct gdb_data	*g = arg;
	const char	*reason;
	json_t		*exit;

	gdb_run_event(g, rec);
	if (rec->kind == MI_EXEC && strcmp(rec->cls, "running") == 0) {
		session_target(g->s, json_pack("{s:s}", "state", "running"));
		return;
	}
	reason = json_string_value(json_object_get(rec->results, "reason"));
	/* *stopped,reason="exited-normally" follows =thread-group-exited. */
	if (rec->kind == MI_EXEC && strcmp(rec->cls, "stopped") == 0 &&
	    reason != NULL && strncmp(reason, "exited", 6) == 0) {
		exit = json_pack("{s:s, s:s}", "state", "exited", "reason",
		    reason);
		gdb_copy(exit, "exit_code", rec->results, "exit-code");
		session_target(g->s, exit);
		gdb_quit_stopped(g);
		return;
	}
	if (rec->kind == MI_EXEC && strcmp(rec->cls, "stopped") == 0) {
		session_target(g->s, json_pack("{s:s, s:o}", "state",
		    "stopped", "stop", gdb_stop_json(rec)));
		fault_stopped(g->s, g->mi, rec);
		gdb_quit_stopped(g);
		return;
	}
	if (rec->kind == MI_NOTIFY &&
	    strcmp(rec->cls, "thread-group-exited") == 0) {
		exit = json_pack("{s:s}", "state", "exited");
		gdb_copy(exit, "exit_code", rec->results, "exit-code");
		session_target(g->s, exit);
	}
}

/* Console text as a JSON string; bytes that are not UTF-8 become '?'. */
static json_t *
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
	e = xcalloc(1, sizeof *e);
	e->g = g;
	pending_wait(req, e, gdb_exec_free);
	if (*cmd == '-')
		e->token = mi_command(g->mi, gdb_exec_reply, req, "%s", cmd);
	else {
		/* In the background, so MI (and -exec-interrupt) is still read. */
		xasprintf(&bg, "%s%s", cmd, gdb_runs(cmd) ? " &" : "");
		quoted = mi_quote(bg);
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
