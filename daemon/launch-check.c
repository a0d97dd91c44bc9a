/*
 * A launch's params checked for what their types alone do not say: which
 * kind each belongs to and which it requires, a name free and well formed,
 * one-line fault breaks and commands, env and term_env entries, and a
 * process to attach to that can be attached to. The program is looked for
 * in launch-program.c.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "launch.h"
#include "method.h"
#include "request.h"

/* Whether a name is one users may give (and not mistaken for an id). */
static bool
launch_check_name_ok(const char *name)
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

/* Whether a kind has a default for stop_target (the gdb family does). */
static bool
launch_check_stops_target(const struct backend *be, const void *arg)
{
	(void)arg;
	return be->stop_target != NULL;
}

/* Refuse what other kinds take: "X belongs to the Y kind". */
static int
launch_check_belongs(const char *what, backend_pick pick, const void *arg,
    struct rpc_error *err)
{
	char *kinds = backend_kinds_that(pick, arg);

	rpc_error_set(err, RPC_INVALID_PARAMS, "%s belongs to %s", what, kinds);
	free(kinds);
	return -1;
}

/*
 * A launch's kind params (the method's check hook): each kind declares
 * its own, typed as a method's; one the launch's kind does not declare is
 * refused with the kinds that do, one it requires is required.
 */
int
launch_check_params(json_t *params, json_t *out, struct rpc_error *err)
{
	const struct backend		*be, *kind;
	const struct method_param	*p;
	const char			*name;
	json_t				*v;
	char				 what[80];
	size_t				 i;

	name = json_string_value(json_object_get(params, "kind"));
	/* An unknown kind is launch_parse's to refuse, with the list. */
	if ((kind = backend_find(name != NULL ? name : "gdb")) == NULL)
		return 0;
	for (i = 0; (be = backend_at(i)) != NULL; i++) {
		for (p = be->params; p != NULL && p->name != NULL; p++) {
			v = json_object_get(params, p->name);
			if (v == NULL || json_is_null(v) ||
			    json_object_get(out, p->name) != NULL)
				continue;
			if (request_check_param(p, params, out, err) != 0)
				return -1;
			if (backend_takes(kind, p->name))
				continue;
			snprintf(what, sizeof what, "\"%s\"", p->name);
			return launch_check_belongs(what, backend_takes, p->name,
			    err);
		}
	}
	for (p = kind->params; p != NULL && p->name != NULL; p++) {
		if (!p->required || json_object_get(out, p->name) != NULL)
			continue;
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"%s\" is required by "
		    "kind %s", p->name, kind->name);
		return -1;
	}
	return 0;
}

/* Check what belongs to which kind; the types are checked already. */
static int
launch_check_kind(const struct launch *l, json_t *params,
    struct rpc_error *err)
{
	int	 flags = l->backend->flags, attach = BACKEND_ATTACH;
	char	*kinds;

	if ((flags & BACKEND_PROGRAM) && json_array_size(l->argv) == 0 &&
	    l->pid == 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"argv\" is required");
		return -1;
	}
	if (json_object_get(params, "stop_target") != NULL &&
	    l->backend->stop_target == NULL)
		return launch_check_belongs("\"stop_target\"", launch_check_stops_target,
		    NULL, err);
	/* "auto" tells a started target by its place in the session's tree. */
	if (l->stop_target != NULL && strcmp(l->stop_target, "auto") == 0 &&
	    !(flags & BACKEND_ATTACH)) {
		kinds = backend_kinds_that(backend_has, &attach);
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"stop_target\" "
		    "\"auto\" needs a target on this host (%s)", kinds);
		free(kinds);
		return -1;
	}
	if (l->backend->check != NULL)
		return l->backend->check(l, err);
	return 0;
}

/*
 * Each fault break is one location, typed after "break " on gdb's command
 * line, and each reset or load command one console line: a line break or
 * another control byte would make a bogus breakpoint and a command of its
 * own.
 */
static int
launch_check_lines(json_t *lines, const char *what, struct rpc_error *err)
{
	const char	*p;
	json_t		*v;
	size_t		 i, k, n;

	json_array_foreach(lines, i, v) {
		p = json_string_value(v);
		n = json_string_length(v);
		for (k = 0; k < n && (unsigned char)p[k] >= 0x20 &&
		    p[k] != 0x7f; k++)
			;
		if (n > 0 && k == n)
			continue;
		if (n == 0)
			rpc_error_set(err, RPC_INVALID_PARAMS, "%s %zu is "
			    "empty", what, i + 1);
		else
			rpc_error_set(err, RPC_INVALID_PARAMS, "%s %zu holds "
			    "a line break or another control character: %s is "
			    "one line", what, i + 1, strcmp(what, "fault break")
			    == 0 ? "a location" : "a command");
		return -1;
	}
	return 0;
}

/*
 * The number after "key:" in /proc/PID/status, or -1; state gets the
 * letter of its State line.
 */
static long
launch_check_proc_status(long pid, const char *key, char *state)
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
	int		 attach = BACKEND_ATTACH;

	if (l->pid == 0)
		return 0;
	if (!(l->backend->flags & BACKEND_ATTACH))
		return launch_check_belongs("\"pid\"", backend_has, &attach, err);
	if (json_array_size(l->argv) > 1)
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
	tracer = launch_check_proc_status(l->pid, "TracerPid", &state);
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

/* term_env names the client's TERM and COLORTERM, nothing else; 0 if so. */
static int
launch_check_term_env(const struct launch *l, struct rpc_error *err)
{
	const char	*key;
	json_t		*val;

	json_object_foreach(l->term_env, key, val) {
		if (strcmp(key, "TERM") == 0 || strcmp(key, "COLORTERM") == 0)
			continue;
		rpc_error_set(err, RPC_INVALID_PARAMS, "bad term_env entry "
		    "\"%s\": it holds TERM and COLORTERM only (use env)", key);
		return -1;
	}
	return 0;
}

/* Check what the types alone do not say. */
int
launch_check(const struct launch *l, json_t *params, struct rpc_error *err)
{
	const char	*key;
	json_t		*val;

	if (launch_check_kind(l, params, err) != 0 ||
	    launch_check_lines(l->fault_breaks, "fault break", err) != 0 ||
	    launch_check_lines(l->reset_commands, "reset command", err) != 0 ||
	    launch_check_lines(l->load_commands, "load command", err) != 0)
		return -1;
	if (json_array_size(l->argv) > 0 &&
	    *json_string_value(json_array_get(l->argv, 0)) == '\0') {
		rpc_error_set(err, RPC_INVALID_PARAMS, "the program is empty");
		return -1;
	}
	if (l->name != NULL && !launch_check_name_ok(l->name)) {
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
	if (launch_check_term_env(l, err) != 0 ||
	    launch_check_pid(l, err) != 0)
		return -1;
	return launch_program_check(l, err);
}
