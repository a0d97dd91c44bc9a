/* The session object of the protocol: what status, list and stop report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"

/* A wall-clock time as an RFC 3339 UTC string. */
static json_t *
status_time(double t)
{
	struct tm	tm;
	time_t		sec = (time_t)t;
	char		buf[64], out[80];

	gmtime_r(&sec, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, sizeof out, "%s.%03dZ", buf,
	    (int)((t - (double)sec) * 1000.0));
	return json_string(out);
}

/* The first child of pid, or 0: read from /proc (a few bytes, no waiting). */
static pid_t
status_first_child(pid_t pid)
{
	char	path[64], buf[64];
	FILE	*f;
	long	child = 0;

	snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)pid,
	    (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fgets(buf, sizeof buf, f) != NULL)
		child = strtol(buf, NULL, 10);
	fclose(f);
	return (pid_t)child;
}

/* Whether pid runs a debugger's helper (lldb-server) rather than the target. */
static bool
status_is_helper(pid_t pid)
{
	char	path[64], comm[32] = "";
	FILE	*f;

	snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	if (fgets(comm, sizeof comm, f) == NULL)
		comm[0] = '\0';
	fclose(f);
	return strncmp(comm, "lldb-server", 11) == 0;
}

/* The debugged program's pid, when it runs here and now. */
static pid_t
status_inferior(const struct session *s)
{
	pid_t pid;

	if (session_ended(s) || s->backend->debugger == NULL)
		return 0;
	pid = s->server.used ? s->server.pid : s->main.pid;
	if (pid == 0 || (s->remote != NULL && !s->server.used))
		return 0;
	pid = status_first_child(pid);
	if (pid != 0 && status_is_helper(pid))
		pid = status_first_child(pid);
	return pid;
}

/* A process's exit record: {"code":N} or {"signal":N}. */
static json_t *
status_exit(const struct proc *pr)
{
	if (pr->exit_signal != 0)
		return json_pack("{s:i}", "signal", pr->exit_signal);
	return json_pack("{s:i}", "code", pr->exit_code);
}

/* The session object of the protocol. */
json_t *
status_json(const struct session *s)
{
	json_t	*o;
	pid_t	 pid;

	o = json_pack("{s:I, s:s, s:s, s:O, s:s, s:I, s:s}",
	    "id", (json_int_t)s->id,
	    "kind", s->backend->name,
	    "state", session_state_name(s->state),
	    "argv", s->argv,
	    "cwd", s->cwd,
	    "stop_timeout", (json_int_t)s->stop_timeout,
	    "log", s->console.log_path ? s->console.log_path : "");
	json_object_set_new(o, "name", s->name ? json_string(s->name) :
	    json_null());
	json_object_set_new(o, "pid", s->main.pid ? json_integer(s->main.pid) :
	    json_null());
	json_object_set_new(o, "keeper_pid", s->main.keeper_pid ?
	    json_integer(s->main.keeper_pid) : json_null());
	if ((pid = status_inferior(s)) != 0)
		json_object_set_new(o, "inferior_pid", json_integer(pid));
	if (s->server.used) {
		json_object_set_new(o, "server_pid", s->server.pid ?
		    json_integer(s->server.pid) : json_null());
		json_object_set_new(o, "port", json_integer(s->port));
		if (s->server.have_exit)
			json_object_set_new(o, "server_exit",
			    status_exit(&s->server));
	}
	json_object_set_new(o, "started_at", status_time(s->started_at));
	if (s->remote != NULL)
		json_object_set_new(o, "remote", json_string(s->remote));
	if (s->debugger != NULL || s->backend->debugger != NULL)
		json_object_set_new(o, "debugger", json_string(s->debugger ?
		    s->debugger : s->backend->debugger));
	if (session_ended(s))
		json_object_set_new(o, "ended_at", status_time(s->ended_at));
	json_object_set_new(o, "transport", json_boolean(s->transport.enabled));
	if (s->main.have_exit)
		json_object_set_new(o, "exit", status_exit(&s->main));
	if (s->error != NULL)
		json_object_set_new(o, "error", json_string(s->error));
	return o;
}
