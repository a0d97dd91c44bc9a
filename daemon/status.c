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
		status_add_inferior(s, o, s->procs[0].proc->pid);
}

/* The session object of the protocol. */
json_t *
status_json(const struct session *s)
{
	struct proc	*main = s->procs[0].proc;
	const char	*dbg = s->l.debugger ? s->l.debugger : s->backend->debugger;
	json_t		*o;

	o = json_pack("{s:I, s:s, s:s, s:O, s:s, s:I, s:s}",
	    "id", (json_int_t)s->id,
	    "kind", s->backend->name,
	    "state", session_state_name(s->state),
	    "argv", s->l.argv,
	    "cwd", s->l.cwd,
	    "stop_timeout", (json_int_t)s->l.stop_timeout,
	    "log", s->output.log_path ? s->output.log_path : "");
	json_object_set_new(o, "name", s->l.name ? json_string(s->l.name) :
	    json_null());
	json_object_set_new(o, "pid", main != NULL && main->pid ?
	    json_integer(main->pid) : json_null());
	json_object_set_new(o, "keeper_pid", main != NULL && main->keeper_pid ?
	    json_integer(main->keeper_pid) : json_null());
	if (s->l.stop_target != NULL)
		json_object_set_new(o, "stop_target",
		    json_string(s->l.stop_target));
	if (s->backend->status != NULL)
		s->backend->status(s, o);
	json_object_set_new(o, "started_at", status_time(s->started_at));
	if (dbg != NULL)
		json_object_set_new(o, "debugger", json_string(dbg));
	if (session_ended(s))
		json_object_set_new(o, "ended_at", status_time(s->ended_at));
	json_object_set_new(o, "transport", json_boolean(s->transport != NULL));
	if (s->output.log_error != NULL) {
		json_object_set_new(o, "log_error",
		    json_string(s->output.log_error));
		json_object_set_new(o, "log_missing",
		    json_integer((json_int_t)s->output.missing));
	}
	/* The session's own: its cgroup may have been refused where others were made. */
	json_object_set_new(o, "containment", json_string((main == NULL ?
	    dmn.cgroup_root != NULL : s->in_cgroup) ? "cgroup" : "subreaper"));
	if (main != NULL && main->have_exit)
		json_object_set_new(o, "exit", proc_exit_json(main));
	if (s->why.msg != NULL)
		json_object_set_new(o, "error", json_string(s->why.msg));
	if (s->target != NULL)
		json_object_set(o, "target", s->target);
	if (s->fault != NULL)
		json_object_set(o, "fault", s->fault);
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
 * An upper bound of the bytes v takes as compact JSON, found without
 * writing it (which the reply does once, later): for paging by size.
 */
static size_t
status_json_size(json_t *v)
{
	const char	*key;
	json_t		*m;
	size_t		 i, n;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		n = 2;
		json_object_foreach(v, key, m)
			n += status_json_len(key) + 1 + status_json_size(m);
		return n;
	case JSON_ARRAY:
		n = 2;
		json_array_foreach(v, i, m)
			n += 1 + status_json_size(m);
		return n;
	case JSON_STRING:
		return status_json_len(json_string_value(v)) - 1;
	case JSON_INTEGER:
		return 20;
	case JSON_REAL:
		return 32;
	default:
		return 5;	/* true, false, null */
	}
}

/*
 * argv for a row: the arguments that fit in STATUS_ROW_ARGV bytes as
 * JSON, the one that does not cut short (never in a character's middle).
 */
static json_t *
status_row_argv(json_t *argv, bool *cut)
{
	json_t		*out = json_array(), *v;
	const char	*str;
	size_t		 i, used = 0, len, keep;

	*cut = false;
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

/* A session as a row of a listing: its object, with a long argv cut. */
json_t *
status_row(const struct session *s)
{
	json_t	*o = status_json(s), *argv;
	bool	 cut;

	argv = status_row_argv(s->l.argv, &cut);
	if (!cut) {
		json_decref(argv);
		return o;
	}
	json_object_set_new(o, "argv", argv);
	json_object_set_new(o, "argv_cut", json_true());
	return o;
}

/* Start an empty page of rows. */
void
status_page_init(struct status_page *p, size_t max_rows)
{
	p->rows = json_array();
	p->bytes = 0;
	p->max_rows = max_rows;
	p->full = false;
}

/*
 * Add s's row unless the page is full (by rows, or by bytes: a reply must
 * stay well inside the line limit); the first row always goes in.
 */
bool
status_page_add(struct status_page *p, const struct session *s)
{
	json_t	*row;
	size_t	 len;

	if (p->full || json_array_size(p->rows) >= p->max_rows) {
		p->full = true;
		return false;
	}
	row = status_row(s);
	len = status_json_size(row) + 1;
	if (json_array_size(p->rows) > 0 && p->bytes + len > STATUS_PAGE_BYTES) {
		json_decref(row);
		p->full = true;
		return false;
	}
	p->bytes += len;
	json_array_append_new(p->rows, row);
	return true;
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
char *
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
