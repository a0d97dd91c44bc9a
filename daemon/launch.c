/* A launch request's params, checked once and kept as a C struct. */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "method.h"
#include "request.h"

/* Default bound on a remote connection. */
#define CONNECT_TIMEOUT_DEFAULT 10000
/* Default graceful-stop window. */
#define STOP_TIMEOUT_DEFAULT 5000

/* The most of a --pid process's command line kept for list's COMMAND. */
#define LAUNCH_CMDLINE_MAX	4096

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
	kinds = backend_kinds(NULL, NULL);
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

/* Whether a kind has a default for stop_target (the gdb family does). */
static bool
launch_stops_target(const struct backend *be, const void *arg)
{
	(void)arg;
	return be->stop_target != NULL;
}

/* Refuse what other kinds take: "X belongs to the Y kind". */
static int
launch_belongs(const char *what, backend_pick pick, const void *arg,
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
			return launch_belongs(what, backend_takes, p->name,
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

/* A string param of the launch's kind, or NULL. */
const char *
launch_get_str(const struct launch *l, const char *name)
{
	return json_string_value(json_object_get(l->kind_params, name));
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
		return launch_belongs("\"stop_target\"", launch_stops_target,
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
 * The command line of process pid from /proc, for list's COMMAND of a
 * session that attaches to it: its words, a byte that is not UTF-8 as
 * '?'; an empty array when it has none (a kernel thread) or is gone.
 */
static json_t *
launch_cmdline(long pid)
{
	char	 path[64], buf[LAUNCH_CMDLINE_MAX], *p;
	json_t	*argv = json_array(), *word;
	ssize_t	 n;
	size_t	 i;
	int	 fd;

	snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return argv;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return argv;
	buf[n] = '\0';
	for (p = buf; p < buf + n; p += strlen(p) + 1) {
		if ((word = json_string(p)) == NULL) {
			for (i = 0; p[i] != '\0'; i++)
				if ((unsigned char)p[i] >= 0x80)
					p[i] = '?';
			word = json_string(p);
		}
		json_array_append_new(argv, word);
	}
	return argv;
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
		return launch_belongs("\"pid\"", backend_has, &attach, err);
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

/* Whether dir/name is there (dir relative to cwd), its path then in *found; errno says why not. */
static bool
launch_file_at(const char *cwd, const char *dir, const char *name,
    char **found)
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
	if (rc == 0 && S_ISDIR(sb.st_mode))
		errno = EISDIR;
	if (rc == 0 && !S_ISDIR(sb.st_mode)) {
		*found = path;
		return true;
	}
	free(path);
	return false;
}

/*
 * The debugger's PROGRAM as gdb finds it: relative to the launch's cwd,
 * and a bare name also on PATH; NULL, errno saying why, if it is not.
 */
char *
launch_program_path(const struct launch *l)
{
	const char	*prog, *p, *end;
	char		 dir[PATH_MAX], *found;
	int		 first;

	prog = json_string_value(json_array_get(l->argv, 0));
	if (prog == NULL) {
		errno = ENOENT;
		return NULL;
	}
	if (launch_file_at(l->cwd, NULL, prog, &found))
		return found;
	first = errno;
	if (strchr(prog, '/') == NULL) {
		for (p = launch_path(l); ; p = end + 1) {
			end = strchrnul(p, ':');
			snprintf(dir, sizeof dir, "%.*s", (int)(end - p), p);
			if (launch_file_at(l->cwd, dir, prog, &found))
				return found;
			if (*end == '\0')
				break;
		}
	}
	errno = first;
	return NULL;
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
	char *found;

	if (l->backend->debugger == NULL || json_array_size(l->argv) == 0)
		return 0;
	if ((found = launch_program_path(l)) == NULL) {
		rpc_error_set(err, RPC_SPAWN_FAILED, "%s: %s",
		    json_string_value(json_array_get(l->argv, 0)),
		    strerror(errno));
		return -1;
	}
	free(found);
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
static int
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
	if (launch_check_term_env(l, err) != 0 ||
	    launch_check_pid(l, err) != 0)
		return -1;
	return launch_check_program(l, err);
}

/* The params the kind declares, copied out of a launch's. */
static json_t *
launch_kind_params(const struct backend *be, json_t *params)
{
	const struct method_param	*p;
	json_t				*out = json_object(), *v;

	for (p = be->params; p != NULL && p->name != NULL; p++)
		if ((v = json_object_get(params, p->name)) != NULL)
			json_object_set_new(out, p->name, json_deep_copy(v));
	return out;
}

/* What a deadline or silence does after its verdict: "stop" (the default) or "hold". */
static int
launch_on_deadline(struct launch *l, json_t *params, struct rpc_error *err)
{
	const char *v = json_string_value(json_object_get(params,
	    "on_deadline"));

	l->on_deadline = "stop";
	if (v == NULL || strcmp(v, "stop") == 0)
		return 0;
	if (strcmp(v, "hold") == 0) {
		l->on_deadline = "hold";
		return 0;
	}
	rpc_error_set(err, RPC_INVALID_PARAMS, "\"on_deadline\" is \"stop\" "
	    "or \"hold\", not \"%s\"", v);
	return -1;
}

/* The automatic bundles' directory: absolute, made 0700 if missing. */
static int
launch_artifacts(struct launch *l, struct rpc_error *err)
{
	char why[PATH_MAX + 128];

	if (l->artifacts == NULL || bundle_artifacts(l->artifacts, why,
	    sizeof why) == 0)
		return 0;
	rpc_error_set(err, RPC_INVALID_PARAMS, "%s", why);
	return -1;
}

/* Read a launch's params (their types already checked) into l. */
int
launch_parse(struct launch *l, json_t *params, struct rpc_error *err)
{
	json_t *v;

	memset(l, 0, sizeof *l);
	if ((l->backend = launch_backend(params, err)) == NULL)
		return -1;
	if (l->backend->flags & BACKEND_ADOPT)
		l->params = json_incref(params);
	v = json_object_get(params, "argv");
	l->argv = v != NULL ? json_deep_copy(v) : json_array();
	v = json_object_get(params, "env");
	l->env = v != NULL ? json_deep_copy(v) : json_object();
	v = json_object_get(params, "term_env");
	l->term_env = json_is_object(v) ? json_deep_copy(v) : NULL;
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
	v = json_object_get(params, "transport");
	l->transport = json_is_true(v) || (v == NULL &&
	    (l->backend->flags & BACKEND_TRANSPORT));
	v = json_object_get(params, "fault_breaks");
	l->fault_breaks = v != NULL ? json_deep_copy(v) : json_array();
	v = json_object_get(params, "reset_commands");
	l->reset_commands = v != NULL ? json_deep_copy(v) : NULL;
	v = json_object_get(params, "load_commands");
	l->load_commands = v != NULL ? json_deep_copy(v) : NULL;
	l->kind_params = launch_kind_params(l->backend, params);
	l->no_fault_defaults = json_is_false(json_object_get(params,
	    "fault_break_defaults"));
	l->core = json_is_true(json_object_get(params, "core"));
	l->lease = json_is_true(json_object_get(params, "lease"));
	l->lease_grace = launch_int(params, "lease_grace", 0);
	l->deadline = launch_int(params, "deadline", 0);
	l->silence_timeout = launch_int(params, "silence_timeout", 0);
	l->artifacts = launch_str(params, "artifacts", NULL);
	if (launch_on_deadline(l, params, err) != 0 ||
	    launch_artifacts(l, err) != 0 ||
	    launch_stop_target(l, params, err) != 0 ||
	    launch_check(l, params, err) != 0) {
		launch_free(l);
		return -1;
	}
	if (l->pid != 0)
		l->pid_argv = launch_cmdline(l->pid);
	return 0;
}

/* The session is freed (SE_FREED): so is the launch it was made of. */
void
launch_freed(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	launch_free(&s->l);
}

/* Free what a launch holds. */
void
launch_free(struct launch *l)
{
	json_decref(l->params);
	json_decref(l->argv);
	json_decref(l->pid_argv);
	json_decref(l->env);
	json_decref(l->term_env);
	json_decref(l->commands);
	json_decref(l->fault_breaks);
	json_decref(l->reset_commands);
	json_decref(l->load_commands);
	json_decref(l->kind_params);
	free(l->name);
	free(l->cwd);
	free(l->debugger);
	free(l->remote);
	free(l->server);
	free(l->artifacts);
	memset(l, 0, sizeof *l);
}
