/* The session object of the protocol: what status, list and stop report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "attach.h"
#include "status-page.h"

/* A row's argv holds at most this many bytes. */
#define STATUS_ROW_ARGV 4096

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

/* The name of pid as /proc/PID/comm has it, into comm; "" if it is gone. */
void
status_comm(pid_t pid, char *comm, size_t len)
{
	char	path[64];
	FILE	*f;

	comm[0] = '\0';
	snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fgets(comm, (int)len, f) == NULL)
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
}

/* Whether pid runs a debugger's helper (lldb-server) rather than the target. */
static bool
status_is_helper(pid_t pid)
{
	char comm[32];

	status_comm(pid, comm, sizeof comm);
	return strncmp(comm, "lldb-server", 11) == 0;
}

/* The debugged program's pid: parent's child, past an lldb-server. */
static pid_t
status_inferior(pid_t parent)
{
	pid_t pid;

	if (parent == 0)
		return 0;
	pid = status_first_child(parent);
	if (pid != 0 && status_is_helper(pid))
		pid = status_first_child(pid);
	return pid;
}

/* Add inferior_pid: the debugged program, the child of parent, while it runs. */
void
status_add_inferior(const struct session *s, json_t *o, pid_t parent)
{
	pid_t pid;

	if (session_ended(s) || (pid = status_inferior(parent)) == 0)
		return;
	json_object_set_new(o, "inferior_pid", json_integer(pid));
}

/* A debugger's status hook: the program it debugs is its main process's child. */
void
status_main_inferior(const struct session *s, json_t *o)
{
	if (s->procs[0].proc != NULL)
		status_add_inferior(s, o, proc_pid(s->procs[0].proc));
}

/* The member "id". */
static json_t *
status_id(const struct session *s)
{
	return json_integer((json_int_t)s->id);
}

/* The member "kind". */
static json_t *
status_kind(const struct session *s)
{
	return json_string(s->backend->name);
}

/* The member "state". */
static json_t *
status_state(const struct session *s)
{
	return json_string(session_state_name(s->state));
}

/* The member "state" as row text. */
static void
status_state_text(const struct session *s, struct jtext *t)
{
	const char *name = session_state_name(s->state);

	jtext_bytes(t, name, strlen(name));
}

/* The member "argv", whole (a row cuts it: status_row_argv). */
static json_t *
status_argv(const struct session *s)
{
	return json_incref(s->l.argv);
}

/* The member "pid_argv": the command line of the process "pid" names. */
static json_t *
status_pid_argv(const struct session *s)
{
	return s->l.pid_argv != NULL ? json_incref(s->l.pid_argv) : NULL;
}

/* The member "cwd". */
static json_t *
status_cwd(const struct session *s)
{
	return json_string(s->l.cwd);
}

/* The member "stop_timeout". */
static json_t *
status_stop_timeout(const struct session *s)
{
	return json_integer((json_int_t)s->l.stop_timeout);
}

/* The member "log": the log's path, "" where there is none. */
static json_t *
status_log(const struct session *s)
{
	const char *path = output_path(&s->output);

	return json_string(path != NULL ? path : "");
}

/* The member "name", null for none. */
static json_t *
status_name(const struct session *s)
{
	return s->l.name ? json_string(s->l.name) : json_null();
}

/* The main process's pid, 0 before it has one. */
pid_t
status_main_pid(const struct session *s)
{
	struct proc *main = s->procs[0].proc;

	return main != NULL ? proc_pid(main) : 0;
}

/* The member "pid": the main process's, null before it has one. */
static json_t *
status_pid(const struct session *s)
{
	pid_t pid = status_main_pid(s);

	return pid != 0 ? json_integer(pid) : json_null();
}

/* The member "pid" as row text. */
static void
status_pid_text(const struct session *s, struct jtext *t)
{
	pid_t pid = status_main_pid(s);

	if (pid != 0)
		jtext_int(t, pid);
	else
		jtext_raw(t, "null", 4);
}

/* The member "keeper_pid". */
static json_t *
status_keeper_pid(const struct session *s)
{
	struct proc *main = s->procs[0].proc;

	return main != NULL && proc_keeper_pid(main) ?
	    json_integer(proc_keeper_pid(main)) : json_null();
}

/* The member "stop_target", where one was asked for. */
static json_t *
status_stop_target(const struct session *s)
{
	return s->l.stop_target ? json_string(s->l.stop_target) : NULL;
}

/* The member "started_at". */
static json_t *
status_started_at(const struct session *s)
{
	return status_time(s->started_at);
}

/* The member "debugger": the one given, else the kind's own. */
static json_t *
status_debugger(const struct session *s)
{
	const char *dbg = s->l.debugger ? s->l.debugger : s->backend->debugger;

	return dbg != NULL ? json_string(dbg) : NULL;
}

/* The member "ended_at", once ended. */
static json_t *
status_ended_at(const struct session *s)
{
	return session_ended(s) ? status_time(s->ended_at) : NULL;
}

/* The member "transport". */
static json_t *
status_transport(const struct session *s)
{
	return json_boolean(s->transport != NULL);
}

/* The member "log_error", after a write to the log failed. */
static json_t *
status_log_error(const struct session *s)
{
	uint64_t	 missing;
	const char	*why = output_error(&s->output, &missing);

	return why != NULL ? json_string(why) : NULL;
}

/* The member "log_missing": the bytes the log lacks, after a failure. */
static json_t *
status_log_missing(const struct session *s)
{
	uint64_t missing;

	return output_error(&s->output, &missing) != NULL ?
	    json_integer((json_int_t)missing) : NULL;
}

/* The member "containment": the session's own, as its cgroup may have been refused. */
static json_t *
status_containment(const struct session *s)
{
	struct proc *main = s->procs[0].proc;

	return json_string((main == NULL ? dmn.cgroup_root != NULL :
	    s->in_cgroup) ? "cgroup" : "subreaper");
}

/*
 * The session's exit record, once its main process has exited, naming
 * the verdict it had: status's member and session.state's alike.
 */
json_t *
status_exit(const struct session *s)
{
	struct proc	*main = s->procs[0].proc;
	json_t		*e;

	if (main == NULL || !proc_exit(main, NULL, NULL))
		return NULL;
	e = proc_exit_json(main);
	if (s->verdict != NULL)
		json_object_set(e, "verdict", json_object_get(s->verdict,
		    "kind"));
	return e;
}

/* The member "error": why the session failed. */
static json_t *
status_error(const struct session *s)
{
	return s->why.msg ? json_string(s->why.msg) : NULL;
}

/* The member "suspended": the stop signal of a stopped main process. */
static json_t *
status_suspended(const struct session *s)
{
	return attach_suspended_json(s);
}

/* The member "target": the debugged target's run state. */
static json_t *
status_target(const struct session *s)
{
	return s->target ? json_incref(s->target) : NULL;
}

/* The member "fault": the fault record. */
static json_t *
status_fault(const struct session *s)
{
	return s->fault ? json_incref(s->fault) : NULL;
}

/* The member "verdict": why the session is ending, once it has one. */
static json_t *
status_verdict(const struct session *s)
{
	return s->verdict ? json_incref(s->verdict) : NULL;
}

/* The member "verdicts": the last verdicts, the current one (if any) last. */
static json_t *
status_verdicts(const struct session *s)
{
	return s->verdicts ? json_incref(s->verdicts) : NULL;
}

/* The member "deadline", while one is set. */
static json_t *
status_deadline(const struct session *s)
{
	return verdict_deadline_json(s);
}

/* The member "fault_breaks": the gdb family's own fault breakpoints. */
static json_t *
status_fault_breaks(const struct session *s)
{
	return gdb_breaks_status(s);
}

/* The member "faults": the last fault records, the current one last. */
static json_t *
status_faults(const struct session *s)
{
	return s->faults ? json_incref(s->faults) : NULL;
}

/*
 * What the target is stopped at while it is stopped at its fault (the
 * record's signal or fault break), for list's TARGET; NULL otherwise.
 */
const char *
status_faulted_what(const struct session *s)
{
	const char *what;

	if (!s->faulted || s->fault == NULL)
		return NULL;
	what = json_string_value(json_object_get(s->fault, "signal"));
	if (what == NULL)
		what = json_string_value(json_object_get(s->fault, "location"));
	return what != NULL ? what : "?";
}

/* The member "faulted": status_faulted_what's answer. */
static json_t *
status_faulted(const struct session *s)
{
	const char *what = status_faulted_what(s);

	return what != NULL ? json_string(what) : NULL;
}

/*
 * The members of the session object in the order it is written; the entry
 * without a name stands for the kind's own members (its status hook).
 */
const struct status_field status_fields[] = {
	{ "id", status_id, true, NULL },
	{ "kind", status_kind, true, NULL },
	{ "state", status_state, false, status_state_text },
	{ "argv", status_argv, true, NULL },
	{ "pid_argv", status_pid_argv, true, NULL },
	{ "cwd", status_cwd, true, NULL },
	{ "stop_timeout", status_stop_timeout, true, NULL },
	{ "log", status_log, false, NULL },
	{ "name", status_name, true, NULL },
	{ "pid", status_pid, false, status_pid_text },
	{ "keeper_pid", status_keeper_pid, false, NULL },
	{ "stop_target", status_stop_target, true, NULL },
	{ NULL, NULL, false, NULL },
	{ "started_at", status_started_at, true, NULL },
	{ "debugger", status_debugger, true, NULL },
	{ "ended_at", status_ended_at, false, NULL },
	{ "transport", status_transport, false, NULL },
	{ "log_error", status_log_error, false, NULL },
	{ "log_missing", status_log_missing, false, NULL },
	{ "containment", status_containment, false, NULL },
	{ "exit", status_exit, false, NULL },
	{ "error", status_error, false, NULL },
	{ "suspended", status_suspended, false, NULL },
	{ "target", status_target, false, NULL },
	{ "fault", status_fault, false, NULL },
	{ "faults", status_faults, false, NULL },
	{ "fault_breaks", status_fault_breaks, false, NULL },
	{ "faulted", status_faulted, false, NULL },
	{ "deadline", status_deadline, false, NULL },
	{ "verdict", status_verdict, false, NULL },
	{ "verdicts", status_verdicts, false, NULL },
	{ "hold", hold_json, false, NULL },
	{ "bundle", bundle_status, false, NULL },
	{ "rtt", rtt_status, false, NULL },
};
const size_t status_nfields = sizeof status_fields / sizeof status_fields[0];

/* The session object of the protocol. */
json_t *
status_json(const struct session *s)
{
	json_t	*o = json_object(), *v;
	size_t	 i;

	for (i = 0; i < status_nfields; i++) {
		if (status_fields[i].name == NULL) {
			if (s->backend->status != NULL)
				s->backend->status(s, o);
			continue;
		}
		if ((v = status_fields[i].value(s)) != NULL)
			json_object_set_new(o, status_fields[i].name, v);
	}
	return o;
}

/* The bytes str takes in a JSON array: quotes, a comma, and its escapes. */
static size_t
status_json_len(const char *str)
{
	size_t		 n = 3;
	const char	*p;

	for (p = str; *p != '\0'; p++)
		n += (unsigned char)*p < 0x20 ? 6 : (*p == '"' || *p == '\\') ?
		    2 : 1;
	return n;
}

/*
 * argv for a row: the arguments that fit in STATUS_ROW_ARGV bytes as
 * JSON, the one that does not cut short (never in a character's middle).
 */
json_t *
status_row_argv(json_t *argv, bool *cut)
{
	json_t		*out, *v;
	const char	*str;
	size_t		 i, used = 0, len, keep;

	*cut = false;
	/* Most fit whole: then the row shares the launch's array. */
	json_array_foreach(argv, i, v)
		if ((used += status_json_len(json_string_value(v))) >
		    STATUS_ROW_ARGV)
			break;
	if (used <= STATUS_ROW_ARGV)
		return json_incref(argv);
	out = json_array();
	used = 0;
	json_array_foreach(argv, i, v) {
		str = json_string_value(v);
		/* As JSON: its quotes and comma, and what an escape adds. */
		len = status_json_len(str);
		if (used + len <= STATUS_ROW_ARGV) {
			json_array_append(out, v);
			used += len;
			continue;
		}
		keep = used + 3 < STATUS_ROW_ARGV ? STATUS_ROW_ARGV - used - 3 : 0;
		/* Escapes may make it longer again; a sixth is always short enough. */
		if (status_json_len(str) > strlen(str) + 3)
			keep /= 6;
		if (keep > strlen(str))
			keep = strlen(str);
		while (keep > 0 && ((unsigned char)str[keep] & 0xc0) == 0x80)
			keep--;
		json_array_append_new(out, json_stringn(str, keep));
		*cut = true;
		break;
	}
	return out;
}

/* Append a formatted piece to a growing string. */
static void
status_cat(char **buf, const char *fmt, ...)
{
	va_list	 ap;
	char	*piece, *both;

	va_start(ap, fmt);
	xvasprintf(&piece, fmt, ap);
	va_end(ap);
	xasprintf(&both, "%s%s", *buf, piece);
	free(piece);
	free(*buf);
	*buf = both;
}

/*
 * A fault record as lines a person reads: what, where, the frames, and on
 * Cortex-M the fault names and the faulting function.
 */
static char *
status_fault_text(json_t *f)
{
	json_t		*cm = json_object_get(f, "cortex_m"), *e, *d;
	const char	*what = json_string_value(json_object_get(f, "signal"));
	char		*buf = xstrdup("");
	size_t		 i;

	if (what == NULL)
		what = json_string_value(json_object_get(f, "location"));
	status_cat(&buf, "fault: %s (%s)", what != NULL ? what : "?",
	    json_string_value(json_object_get(f, "reason")) ?: "?");
	json_array_foreach(json_object_get(cm, "decoded"), i, d)
		status_cat(&buf, "%s%s", i == 0 ? ": " : " ",
		    json_string_value(d));
	if (cm != NULL)
		status_cat(&buf, "\n  CFSR %s HFSR %s MMFAR %s BFAR %s",
		    json_string_value(json_object_get(cm, "cfsr")),
		    json_string_value(json_object_get(cm, "hfsr")),
		    json_string_value(json_object_get(cm, "mmfar")),
		    json_string_value(json_object_get(cm, "bfar")));
	e = json_object_get(cm, "faulting");
	if (e != NULL)
		status_cat(&buf, "\n  faulting: %s at %s",
		    json_string_value(json_object_get(e, "func")) ?: "?",
		    json_string_value(json_object_get(e, "addr")) ?: "?");
	json_array_foreach(json_object_get(f, "frames"), i, e) {
		if (i == 8)
			break;
		status_cat(&buf, "\n  #%lld %s", (long long)json_integer_value(
		    json_object_get(e, "level")), json_string_value(
		    json_object_get(e, "func")) ?: "??");
		if (json_object_get(e, "file") != NULL)
			status_cat(&buf, " at %s:%lld", json_string_value(
			    json_object_get(e, "file")), (long long)
			    json_integer_value(json_object_get(e, "line")));
		if (json_object_get(e, "addr") != NULL)
			status_cat(&buf, " (%s)", json_string_value(
			    json_object_get(e, "addr")));
	}
	if (json_object_get(f, "core") != NULL)
		status_cat(&buf, "\n  core: %s", json_string_value(
		    json_object_get(f, "core")));
	json_array_foreach(json_object_get(f, "incomplete"), i, e)
		status_cat(&buf, "\n  not gathered: %s (%s)", json_string_value(
		    json_object_get(e, "step")), json_string_value(
		    json_object_get(e, "error")));
	return buf;
}

/*
 * A fault record was kept (SE_FAULT_KEPT): say it in the console, after
 * the verdict it makes and before anyone hears of it (SE_FAULT).
 */
void
status_fault_note(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	char *text = status_fault_text(ev->json);

	(void)k;
	session_note(s, text);
	free(text);
}
