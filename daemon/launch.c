/*
 * A launch request's params, read once into a C struct, checked
 * (launch-check.c) and kept for the session's life.
 */

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "launch.h"
#include "method.h"

/* Default bound on a remote connection. */
#define CONNECT_TIMEOUT_DEFAULT 10000
/* Default graceful-stop window. */
#define STOP_TIMEOUT_DEFAULT 5000

/* The most of a --pid process's command line kept for list's COMMAND. */
#define LAUNCH_CMDLINE_MAX	4096

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

/* A string param of the launch's kind, or NULL. */
const char *
launch_get_str(const struct launch *l, const char *name)
{
	return json_string_value(json_object_get(l->kind_params, name));
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

/* The params the kind declares, copied out of a launch's. */
static json_t *
launch_kind_params(const struct backend *be, json_t *params)
{
	const struct method_param	*p;
	json_t				*out = NULL, *v;

	for (p = be->params; p != NULL && p->name != NULL; p++) {
		if ((v = json_object_get(params, p->name)) == NULL)
			continue;
		if (out == NULL)
			out = json_object();
		json_object_set_new(out, p->name, json_deep_copy(v));
	}
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
	l->env = v != NULL ? json_deep_copy(v) : NULL;
	v = json_object_get(params, "term_env");
	l->term_env = json_is_object(v) ? json_deep_copy(v) : NULL;
	v = json_object_get(params, "commands");
	l->commands = v != NULL ? json_deep_copy(v) : NULL;
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
	l->fault_breaks = v != NULL ? json_deep_copy(v) : NULL;
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
