/* A launch request's params, checked once and kept as a C struct. */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* Whether a name is one users may give (and not mistaken for an id). */
static bool
launch_name_ok(const char *name)
{
	const char	*p;
	bool		 digits = true;

	if (*name == '\0' || strlen(name) > 64)
		return false;
	for (p = name; *p != '\0'; p++) {
		if (!isalnum((unsigned char)*p) && strchr("._-", *p) == NULL)
			return false;
		if (!isdigit((unsigned char)*p))
			digits = false;
	}
	return !digits;
}

/* A copy of a string param, or dflt (copied too), or NULL. */
static char *
launch_str(json_t *params, const char *key, const char *dflt)
{
	const char *v = json_string_value(json_object_get(params, key));

	if (v == NULL)
		v = dflt;
	return v != NULL ? xstrdup(v) : NULL;
}

/* An integer param, or dflt. */
static long
launch_int(json_t *params, const char *key, long dflt)
{
	json_t *v = json_object_get(params, key);

	return json_is_integer(v) ? (long)json_integer_value(v) : dflt;
}

/* The kind named, with the list of kinds if there is no such kind. */
static const struct backend *
launch_backend(json_t *params, struct rpc_error *err)
{
	const char		*kind;
	const struct backend	*be;
	char			*kinds;

	kind = json_string_value(json_object_get(params, "kind"));
	if ((be = backend_find(kind != NULL ? kind : "gdb")) != NULL)
		return be;
	kinds = backend_kinds();
	rpc_error_set(err, RPC_INVALID_PARAMS, "unknown kind \"%s\" (kinds: "
	    "%s)", kind, kinds);
	free(kinds);
	return NULL;
}

/* What the quit does to the target: the param, or the kind's default. */
static int
launch_stop_target(struct launch *l, json_t *params, struct rpc_error *err)
{
	const char *v = json_string_value(json_object_get(params,
	    "stop_target"));

	static const char *const hows[] = { "auto", "detach", "kill" };
	size_t i;

	l->stop_target = l->backend->stop_target;
	if (v == NULL)
		return 0;
	for (i = 0; i < sizeof hows / sizeof hows[0]; i++) {
		if (strcmp(v, hows[i]) == 0) {
			l->stop_target = hows[i];
			return 0;
		}
	}
	rpc_error_set(err, RPC_INVALID_PARAMS, "\"stop_target\" must be "
	    "\"auto\", \"detach\" or \"kill\", not \"%s\"", v);
	return -1;
}

/* Check what belongs to which kind; the types are checked already. */
static int
launch_check_kind(const struct launch *l, json_t *params,
    struct rpc_error *err)
{
	int flags = l->backend->flags;

	if ((flags & BACKEND_PROGRAM) && json_array_size(l->argv) == 0 &&
	    l->pid == 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"argv\" is required");
		return -1;
	}
	if ((flags & BACKEND_REMOTE) && l->remote == NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"remote\" is "
		    "required");
		return -1;
	}
	if (!(flags & BACKEND_REMOTE) && l->remote != NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"remote\" belongs "
		    "to remote sessions (kind \"remote\")");
		return -1;
	}
	if (!(flags & BACKEND_SERVER) && (l->server != NULL ||
	    json_object_get(params, "port") != NULL)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"server\" and "
		    "\"port\" belong to gdbserver sessions");
		return -1;
	}
	if (json_object_get(params, "stop_target") != NULL &&
	    l->backend->stop_target == NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"stop_target\" "
		    "belongs to the gdb, remote and gdbserver kinds");
		return -1;
	}
	/* "auto" tells a started target by its place in the session's tree. */
	if (l->stop_target != NULL && strcmp(l->stop_target, "auto") == 0 &&
	    !(flags & BACKEND_ATTACH)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"stop_target\" "
		    "\"auto\" needs a target on this host (the gdb and "
		    "gdbserver kinds)");
		return -1;
	}
	if (l->remote != NULL && strlen(l->remote) > 255) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"remote\" is longer "
		    "than 255 bytes");
		return -1;
	}
	if (l->backend->check != NULL)
		return l->backend->check(l, err);
	return 0;
}

/*
 * Each fault break is one location, typed after "break " on gdb's command
 * line: a line break or another control byte would make a bogus breakpoint
 * and a command of its own.
 */
static int
launch_check_breaks(const struct launch *l, struct rpc_error *err)
{
	const char	*p;
	json_t		*v;
	size_t		 i, k, n;

	json_array_foreach(l->fault_breaks, i, v) {
		p = json_string_value(v);
		n = json_string_length(v);
		for (k = 0; k < n && (unsigned char)p[k] >= 0x20 &&
		    p[k] != 0x7f; k++)
			;
		if (n > 0 && k == n)
			continue;
		rpc_error_set(err, RPC_INVALID_PARAMS, n == 0 ? "fault break "
		    "%zu is empty" : "fault break %zu holds a line break or "
		    "another control character: a location is one line",
		    i + 1);
		return -1;
	}
	return 0;
}

/*
 * The number after "key:" in /proc/PID/status, or -1; state gets the
 * letter of its State line.
 */
static long
launch_proc_status(long pid, const char *key, char *state)
{
	char	 path[64], line[256];
	size_t	 n = strlen(key);
	long	 v = -1;
	FILE	*f;

	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	*state = '?';
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "State:", 6) == 0)
			*state = line[6 + strspn(line + 6, " \t")];
		else if (strncmp(line, key, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	}
	fclose(f);
	return v;
}

/*
 * A process to attach to: there, not the daemon, not a zombie, and not
 * traced already (ptrace would refuse with EPERM). What the kernel's
 * ptrace rules refuse besides is gdb's to say when it attaches.
 */
static int
launch_check_pid(const struct launch *l, struct rpc_error *err)
{
	const char	*why = NULL;
	long		 tracer;
	char		 state;

	if (l->pid == 0)
		return 0;
	if (!(l->backend->flags & BACKEND_ATTACH))
		why = "\"pid\" belongs to the gdb and gdbserver kinds";
	else if (l->server != NULL)
		why = "\"pid\" and \"server\" exclude each other: give the "
		    "server its pid in its command";
	else if (json_array_size(l->argv) > 1)
		why = "a process attached to by \"pid\" has its arguments: "
		    "PROGRAM alone may name its file";
	else if (l->transport)
		why = "the transport cannot reach a process attached to by "
		    "\"pid\": its stdin and stdout are its own";
	if (why != NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "%s", why);
		return -1;
	}
	if (l->pid == (long)getpid()) {
		rpc_error_set(err, RPC_SPAWN_FAILED, "cannot attach to process "
		    "%ld: it is the daemon itself", l->pid);
		return -1;
	}
	if (kill((pid_t)l->pid, 0) != 0) {
		rpc_error_set(err, RPC_SPAWN_FAILED, errno == ESRCH ? "no "
		    "process %ld" : "cannot attach to process %ld: %s", l->pid,
		    strerror(errno));
		return -1;
	}
	tracer = launch_proc_status(l->pid, "TracerPid", &state);
	if (state == 'Z' || state == 'X') {
		rpc_error_set(err, RPC_SPAWN_FAILED, "cannot attach to process "
		    "%ld: it has exited", l->pid);
		return -1;
	}
	if (tracer > 0) {
		rpc_error_set(err, RPC_SPAWN_FAILED, "cannot attach to process "
		    "%ld: process %ld traces it already", l->pid, tracer);
		return -1;
	}
	return 0;
}

/* The PATH the debugger will search: the launch's, the kind's, the daemon's. */
static const char *
launch_path(const struct launch *l)
{
	const char *path;

	path = json_string_value(json_object_get(l->env, "PATH"));
	if (path == NULL)
		path = l->backend->path;
	if (path == NULL)
		path = getenv("PATH");
	return path != NULL ? path : "/usr/bin:/bin";
}

/* Whether dir/name is there (dir relative to cwd); errno says why not. */
static bool
launch_file_at(const char *cwd, const char *dir, const char *name)
{
	struct stat	 sb;
	char		*path;
	int		 rc;

	if (*name == '/')
		xasprintf(&path, "%s", name);
	else if (dir == NULL || *dir == '\0')
		xasprintf(&path, "%s/%s", cwd, name);
	else if (*dir == '/')
		xasprintf(&path, "%s/%s", dir, name);
	else
		xasprintf(&path, "%s/%s/%s", cwd, dir, name);
	rc = stat(path, &sb);
	free(path);
	if (rc == 0 && S_ISDIR(sb.st_mode))
		errno = EISDIR;
	return rc == 0 && !S_ISDIR(sb.st_mode);
}

/*
 * The debugger's PROGRAM is a file it reads, found as gdb finds it:
 * relative to the launch's cwd, and a bare name also on PATH. A missing
 * one fails the launch now, as an exec kind's program fails to exec,
 * rather than leave a debugger running with nothing to debug.
 */
static int
launch_check_program(const struct launch *l, struct rpc_error *err)
{
	const char	*prog, *p, *end;
	char		 dir[PATH_MAX];
	int		 first;

	if (l->backend->debugger == NULL || json_array_size(l->argv) == 0)
		return 0;
	prog = json_string_value(json_array_get(l->argv, 0));
	if (launch_file_at(l->cwd, NULL, prog))
		return 0;
	first = errno;
	if (strchr(prog, '/') == NULL) {
		for (p = launch_path(l); ; p = end + 1) {
			end = strchrnul(p, ':');
			snprintf(dir, sizeof dir, "%.*s", (int)(end - p), p);
			if (launch_file_at(l->cwd, dir, prog))
				return 0;
			if (*end == '\0')
				break;
		}
	}
	rpc_error_set(err, RPC_SPAWN_FAILED, "%s: %s", prog, strerror(first));
	return -1;
}

/* Check what the types alone do not say. */
static int
launch_check(const struct launch *l, json_t *params, struct rpc_error *err)
{
	const char	*key;
	json_t		*val;

	if (launch_check_kind(l, params, err) != 0 ||
	    launch_check_breaks(l, err) != 0)
		return -1;
	if (json_array_size(l->argv) > 0 &&
	    *json_string_value(json_array_get(l->argv, 0)) == '\0') {
		rpc_error_set(err, RPC_INVALID_PARAMS, "the program is empty");
		return -1;
	}
	if (l->name != NULL && !launch_name_ok(l->name)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "bad name \"%s\": use 1 "
		    "to 64 of A-Z a-z 0-9 . _ - and not only digits", l->name);
		return -1;
	}
	if (l->name != NULL && session_by_name(l->name, true) != NULL) {
		rpc_error_set(err, RPC_NAME_IN_USE, "the name \"%s\" is in use "
		    "by session %lu", l->name,
		    session_by_name(l->name, true)->id);
		return -1;
	}
	if (*l->cwd != '/') {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"cwd\" must be an "
		    "absolute path");
		return -1;
	}
	json_object_foreach(l->env, key, val) {
		if (*key != '\0' && strchr(key, '=') == NULL)
			continue;
		rpc_error_set(err, RPC_INVALID_PARAMS, "bad env entry \"%s\": "
		    "names are non-empty without '='", key);
		return -1;
	}
	if (launch_check_pid(l, err) != 0)
		return -1;
	return launch_check_program(l, err);
}

/* Read a launch's params (their types already checked) into l. */
int
launch_parse(struct launch *l, json_t *params, struct rpc_error *err)
{
	json_t *v;

	memset(l, 0, sizeof *l);
	if ((l->backend = launch_backend(params, err)) == NULL)
		return -1;
	v = json_object_get(params, "argv");
	l->argv = v != NULL ? json_deep_copy(v) : json_array();
	v = json_object_get(params, "env");
	l->env = v != NULL ? json_deep_copy(v) : json_object();
	v = json_object_get(params, "commands");
	l->commands = v != NULL ? json_deep_copy(v) : json_array();
	l->name = launch_str(params, "name", NULL);
	l->cwd = launch_str(params, "cwd", "/");
	l->debugger = launch_str(params, "debugger", NULL);
	l->remote = launch_str(params, "remote", NULL);
	l->server = launch_str(params, "server", NULL);
	l->port = launch_int(params, "port", 0);
	l->pid = launch_int(params, "pid", 0);
	l->connect_timeout = launch_int(params, "connect_timeout",
	    CONNECT_TIMEOUT_DEFAULT);
	l->stop_timeout = launch_int(params, "stop_timeout",
	    STOP_TIMEOUT_DEFAULT);
	l->transport = json_is_true(json_object_get(params, "transport"));
	v = json_object_get(params, "fault_breaks");
	l->fault_breaks = v != NULL ? json_deep_copy(v) : json_array();
	l->no_fault_defaults = json_is_false(json_object_get(params,
	    "fault_break_defaults"));
	l->core = json_is_true(json_object_get(params, "core"));
	l->lease = json_is_true(json_object_get(params, "lease"));
	l->lease_grace = launch_int(params, "lease_grace", 0);
	if (launch_stop_target(l, params, err) != 0 ||
	    launch_check(l, params, err) != 0) {
		launch_free(l);
		return -1;
	}
	return 0;
}

/* Free what a launch holds. */
void
launch_free(struct launch *l)
{
	json_decref(l->argv);
	json_decref(l->env);
	json_decref(l->commands);
	json_decref(l->fault_breaks);
	free(l->name);
	free(l->cwd);
	free(l->debugger);
	free(l->remote);
	free(l->server);
	memset(l, 0, sizeof *l);
}
