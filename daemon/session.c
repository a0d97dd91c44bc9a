/* The session table and its state machine, decided in one place. */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "signame.h"

static const char *session_state_names[] = {
	[S_STARTING] = "starting",
	[S_RUNNING] = "running",
	[S_STOPPING] = "stopping",
	[S_EXITED] = "exited",
	[S_FAILED] = "failed",
};

/* Which transitions exist: session_transitions[from][to]. */
static const bool session_transitions[5][5] = {
	[S_STARTING] = { [S_RUNNING] = true, [S_STOPPING] = true,
	    [S_FAILED] = true },
	[S_RUNNING] = { [S_STOPPING] = true },
	[S_STOPPING] = { [S_EXITED] = true, [S_FAILED] = true },
};

/* The name of a state as the protocol spells it. */
const char *
session_state_name(enum sstate st)
{
	return session_state_names[st];
}

/* Whether the session has reached a final state. */
bool
session_ended(const struct session *s)
{
	return s->state == S_EXITED || s->state == S_FAILED;
}

/* Move to a new state, or abort if the table does not allow it. */
void
session_set_state(struct session *s, enum sstate to)
{
	if (!session_transitions[s->state][to])
		log_fatal("session %lu: no transition %s -> %s", s->id,
		    session_state_name(s->state), session_state_name(to));
	log_info("session %lu: %s -> %s", s->id, session_state_name(s->state),
	    session_state_name(to));
	s->state = to;
	if (to == S_RUNNING)
		s->ran = true;
	notify_state(s);
	pending_poke();
}

/* Record why the session failed; the first cause is kept. */
void
session_fail(struct session *s, int err, const char *fmt, ...)
{
	va_list ap;

	if (s->error != NULL)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s->error, fmt, ap) < 0)
		log_fatal("out of memory");
	va_end(ap);
	s->error_errno = err;
	log_info("session %lu: %s", s->id, s->error);
}

/* End the session once its keeper is gone and its output is all logged. */
void
session_check_done(struct session *s)
{
	if (session_ended(s) || !proc_done(&s->main) || !proc_done(&s->server) ||
	    s->probing)
		return;
	/* Reports are all read now: an exit nobody reported is a fault. */
	if (s->main.used && !s->main.have_exit && s->error == NULL &&
	    s->ran)
		session_fail(s, 0, "the %s's keeper ended unexpectedly",
		    s->main.role);
	s->ended_at = daemon_now();
	attach_end(s);
	console_close(&s->console);
	console_close(&s->server_console);
	transport_finish(&s->transport);
	remote_close(s);
	gdbserver_close(s);
	s->ended_gen = dmn.gen;
	dmn.nended++;
	/* A session that never ran has failed, whatever ended it. */
	if (!s->ran) {
		if (s->error == NULL)
			session_fail(s, 0, "the program ended before it ran");
		session_set_state(s, S_FAILED);
	} else {
		if (s->state == S_RUNNING)
			session_set_state(s, S_STOPPING);
		session_set_state(s, S_EXITED);
	}
	daemon_check_shutdown();
}

/*
 * End everything: the debugger first (TERM now, KILL after timeout_ms), then
 * the server once the debugger's keeper is gone.
 */
void
session_stop(struct session *s, long timeout_ms)
{
	if (session_ended(s))
		return;
	if (timeout_ms < 0)
		timeout_ms = s->stop_timeout;
	s->stop_ms = timeout_ms;
	if (s->state == S_STARTING) {
		if (s->error == NULL)
			s->fail_code = RPC_NOT_RUNNING;
		session_fail(s, 0, "session %lu was stopped while starting",
		    s->id);
		session_set_state(s, S_STOPPING);
	} else if (s->state == S_RUNNING)
		session_set_state(s, S_STOPPING);
	if (s->main.keeper_live)
		proc_stop(&s->main, timeout_ms);
	else if (s->server.keeper_live)
		proc_stop(&s->server, timeout_ms);
	gdbserver_close(s);
}

/* A process exec'd: the main one makes the session ready, the server is probed. */
void
session_proc_started(struct proc *pr)
{
	struct session *s = pr->s;

	if (s->state != S_STARTING)
		return;
	if (pr == &s->server) {
		gdbserver_started(s);
		return;
	}
	if (s->backend->start != NULL)
		s->backend->start(s);
	else
		session_set_state(s, S_RUNNING);
}

/* A process ended: the session ends with it. */
void
session_proc_exited(struct proc *pr)
{
	struct session *s = pr->s;

	/* A server ending while the session runs is the session's end. */
	if (pr == &s->server &&
	    (s->state == S_STARTING || s->state == S_RUNNING)) {
		if (pr->exit_signal != 0)
			session_fail(s, 0, "the server %s was killed by signal "
			    "%d", pr->exec_name, pr->exit_signal);
		else
			session_fail(s, 0, "the server %s exited with code %d",
			    pr->exec_name, pr->exit_code);
		if (s->state == S_STARTING)
			s->fail_code = RPC_NOT_READY;
		session_stop(s, -1);
		return;
	}
	if (s->state == S_RUNNING)
		session_set_state(s, S_STOPPING);
}

/* A keeper is gone: after the debugger, the server's turn to stop. */
void
session_proc_gone(struct proc *pr)
{
	struct session *s = pr->s;

	if (pr == &s->main && s->server.keeper_live)
		proc_stop(&s->server, s->stop_ms >= 0 ? s->stop_ms :
		    s->stop_timeout);
	if (pr == &s->server)
		gdbserver_close(s);
}

/* Build the main process's argv and start it under its keeper. */
int
session_spawn_main(struct session *s, char *err, size_t errlen)
{
	char	**av;
	int	  rc;

	if ((av = s->backend->argv(s, err, errlen)) == NULL)
		return -1;
	rc = proc_spawn(&s->main, av, err, errlen);
	backend_argv_free(av);
	return rc;
}

/* Whether a name is one users may give (and not mistaken for an id). */
static bool
session_name_ok(const char *name)
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

/* The live session holding a name, if any. */
static struct session *
session_by_name(const char *name, bool live_only)
{
	struct session *s, *found = NULL;

	TAILQ_FOREACH(s, &dmn.sessions, entry) {
		if (s->name == NULL || strcmp(s->name, name) != 0)
			continue;
		if (!session_ended(s))
			return s;
		if (!live_only)
			found = s;
	}
	return found;
}

/* Resolve a session reference: an id, a numeric string, or a name. */
struct session *
session_find(json_t *ref, struct rpc_error *err)
{
	struct session	*s;
	unsigned long	 id = 0;
	const char	*str;
	char		*end;

	if (ref == NULL || json_is_null(ref)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"session\" is required");
		return NULL;
	}
	if (json_is_integer(ref) && json_integer_value(ref) > 0)
		id = (unsigned long)json_integer_value(ref);
	else if (json_is_string(ref)) {
		str = json_string_value(ref);
		errno = 0;
		id = strtoul(str, &end, 10);
		if (*str == '\0' || *end != '\0' || errno != 0 ||
		    !isdigit((unsigned char)*str)) {
			if ((s = session_by_name(str, false)) != NULL)
				return s;
			rpc_error_set(err, RPC_NO_SUCH_SESSION,
			    "no session named \"%s\"", str);
			return NULL;
		}
	} else {
		rpc_error_set(err, RPC_INVALID_PARAMS,
		    "\"session\" must be an id or a name");
		return NULL;
	}
	TAILQ_FOREACH(s, &dmn.sessions, entry)
		if (s->id == id)
			return s;
	rpc_error_set(err, RPC_NO_SUCH_SESSION, "no session %lu", id);
	return NULL;
}

/* Check the launch parameters that are not plain types. */
static int
session_check_params(json_t *params, const char **kind, json_t **argv,
    struct rpc_error *err)
{
	const char	*key, *name = NULL, *cwd = NULL, *dbg = NULL;
	const char	*remote = NULL, *server = NULL;
	const struct backend *be;
	long long	 port;
	json_t		*val, *env = json_object_get(params, "env");
	json_t		*cmds = NULL;
	long long	 t;
	bool		 transport;

	*kind = "gdb";
	*argv = NULL;
	if (rpc_param_string(params, "kind", false, kind, err) != 0)
		return -1;
	if ((be = backend_find(*kind)) == NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "unknown kind \"%s\" "
		    "(kinds: gdb, lldb, remote, gdbserver, exec)",
		    *kind);
		return -1;
	}
	if (rpc_param_strings(params, "argv", be->needs_program, argv,
	    err) != 0 ||
	    rpc_param_string(params, "remote", !strcmp(*kind, "remote"),
	    &remote, err) != 0 ||
	    rpc_param_int(params, "connect_timeout", false, 1,
	    STOP_TIMEOUT_MAX, &t, err) != 0 ||
	    rpc_param_string(params, "server", false, &server, err) != 0 ||
	    rpc_param_int(params, "port", false, 1, 65535, &port, err) != 0 ||
	    rpc_param_string(params, "name", false, &name, err) != 0 ||
	    rpc_param_string(params, "cwd", false, &cwd, err) != 0 ||
	    rpc_param_string(params, "debugger", false, &dbg, err) != 0 ||
	    rpc_param_strings(params, "commands", false, &cmds, err) != 0 ||
	    rpc_param_int(params, "stop_timeout", false, 0, STOP_TIMEOUT_MAX,
	    &t, err) != 0 ||
	    rpc_param_bool(params, "transport", &transport, err) != 0)
		return -1;
	if (*argv != NULL && json_array_size(*argv) == 0)
		*argv = NULL;
	if (be->server && server == NULL && *argv == NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "a gdbserver session "
		    "needs a PROGRAM or a \"server\" command");
		return -1;
	}
	if (remote != NULL && strcmp(*kind, "remote") != 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"remote\" belongs "
		    "to remote sessions (kind \"remote\")");
		return -1;
	}
	if (!be->server && (server != NULL ||
	    json_object_get(params, "port") != NULL)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"server\" and "
		    "\"port\" belong to gdbserver sessions");
		return -1;
	}
	if (remote != NULL && !strcmp(*kind, "remote") &&
	    (strchr(remote, ':') == NULL ||
	    *remote == ':' || remote[strlen(remote) - 1] == ':')) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"remote\" must be "
		    "HOST:PORT, not \"%s\"", remote);
		return -1;
	}
	if (*argv != NULL &&
	    *json_string_value(json_array_get(*argv, 0)) == '\0') {
		rpc_error_set(err, RPC_INVALID_PARAMS, "the program is empty");
		return -1;
	}
	if (name != NULL && !session_name_ok(name)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "bad name \"%s\": use 1 "
		    "to 64 of A-Z a-z 0-9 . _ - and not only digits", name);
		return -1;
	}
	if (name != NULL && session_by_name(name, true) != NULL) {
		rpc_error_set(err, RPC_NAME_IN_USE, "the name \"%s\" is in use "
		    "by session %lu", name, session_by_name(name, true)->id);
		return -1;
	}
	if (cwd != NULL && *cwd != '/') {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"cwd\" must be an "
		    "absolute path");
		return -1;
	}
	if (env != NULL && !json_is_null(env) && !json_is_object(env)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"env\" must be an "
		    "object of strings");
		return -1;
	}
	json_object_foreach(env, key, val) {
		if (!json_is_string(val) || *key == '\0' ||
		    strchr(key, '=') != NULL) {
			rpc_error_set(err, RPC_INVALID_PARAMS, "bad env entry "
			    "\"%s\": names are non-empty without '=', values "
			    "strings", key);
			return -1;
		}
	}
	return 0;
}

/* Copy a string parameter, or NULL. */
static char *
session_strparam(json_t *params, const char *key, const char *dflt)
{
	const char	*v = json_string_value(json_object_get(params, key));
	char		*copy;

	if (v == NULL)
		v = dflt;
	if (v == NULL)
		return NULL;
	if ((copy = strdup(v)) == NULL)
		log_fatal("out of memory");
	return copy;
}

/* Give the session up as failed before its keeper ever ran. */
static void
session_abort(struct session *s, int err, const char *why)
{
	session_fail(s, err, "%s", why);
	console_close(&s->console);
	transport_finish(&s->transport);
	remote_close(s);
	s->console.drained = true;
	s->ended_at = daemon_now();
	session_set_state(s, S_FAILED);
}

/* Validate a launch, enter the session in the table and spawn its keeper. */
struct session *
session_create(json_t *params, struct rpc_error *err)
{
	struct session	*s;
	const char	*kind;
	json_t		*argv, *v;
	char		 path[PATH_MAX + 64], why[512];
	int		 rc;

	if (dmn.shutting_down) {
		rpc_error_set(err, RPC_SHUTTING_DOWN, "the daemon is shutting "
		    "down");
		return NULL;
	}
	if (session_check_params(params, &kind, &argv, err) != 0)
		return NULL;
	if ((s = calloc(1, sizeof *s)) == NULL)
		log_fatal("out of memory");
	s->id = dmn.next_id++;
	/* No fd is 0 here: a zeroed one would close the daemon's stdin. */
	s->mi.master = s->mi.slave = -1;
	s->transport.child_in = s->transport.child_out = -1;
	s->server_console.master = s->server_console.slave = -1;
	s->server_console.log_fd = -1;
	s->server_console.drained = true;	/* until a server has one */
	s->backend = backend_find(kind);
	s->state = S_STARTING;
	s->argv = argv != NULL ? json_deep_copy(argv) : json_array();
	v = json_object_get(params, "env");
	s->env = json_is_object(v) ? json_deep_copy(v) : json_object();
	v = json_object_get(params, "commands");
	s->commands = json_is_array(v) ? json_deep_copy(v) : json_array();
	s->name = session_strparam(params, "name", NULL);
	s->cwd = session_strparam(params, "cwd", "/");
	s->debugger = session_strparam(params, "debugger", NULL);
	if (s->backend->server) {
		s->server_cmd = session_strparam(params, "server", NULL);
		v = json_object_get(params, "port");
		s->port = json_is_integer(v) ? json_integer_value(v) : 0;
	} else
		s->remote = session_strparam(params, "remote", NULL);
	v = json_object_get(params, "connect_timeout");
	s->connect_timeout = json_is_integer(v) ? json_integer_value(v) :
	    CONNECT_TIMEOUT_DEFAULT;
	v = json_object_get(params, "stop_timeout");
	s->stop_timeout = json_is_integer(v) ? json_integer_value(v) :
	    STOP_TIMEOUT_DEFAULT;
	s->started_at = daemon_now();
	s->stop_ms = -1;
	TAILQ_INSERT_TAIL(&dmn.sessions, s, entry);
	notify_state(s);
	log_info("session %lu: launching %s %s", s->id, kind,
	    s->remote != NULL ? s->remote :
	    json_string_value(json_array_get(s->argv, 0)));

	snprintf(path, sizeof path, "%s/sessions/%lu.log", dmn.state_dir,
	    s->id);
	proc_init(&s->main, s, s->backend->debugger ? "debugger" : "program",
	    &s->console);
	proc_init(&s->server, s, "server", &s->server_console);
	if (console_open(&s->console, s, path, NULL, why, sizeof why) != 0) {
		session_abort(s, errno, why);
		return s;
	}
	if (s->backend->mi && mi_open(&s->mi, s, why, sizeof why) != 0) {
		session_abort(s, errno, why);
		return s;
	}
	if (json_is_true(json_object_get(params, "transport")) &&
	    transport_open(&s->transport, s, why, sizeof why) != 0) {
		session_abort(s, errno, why);
		return s;
	}
	s->main.transport = s->transport.enabled && !s->backend->server;
	s->main.stdio_transport = s->backend->stdio_transport;
	if (s->backend->server)
		rc = gdbserver_start(s, why, sizeof why);
	else
		rc = session_spawn_main(s, why, sizeof why);
	if (rc != 0)
		session_abort(s, rc, why);
	return s;
}

/* Signal the foreground process group of the session's pty. */
int
session_signal(struct session *s, int sig, pid_t *pgrp, struct rpc_error *err)
{
	if (s->state != S_RUNNING && s->state != S_STOPPING) {
		rpc_error_set(err, RPC_NOT_RUNNING, "session %lu is %s", s->id,
		    session_state_name(s->state));
		return -1;
	}
	*pgrp = tcgetpgrp(s->console.master);
	/* The keeper's own group in front means the program is gone. */
	if (*pgrp <= 0 || *pgrp == s->main.keeper_pid) {
		rpc_error_set(err, RPC_NOT_RUNNING, "session %lu has no "
		    "foreground process", s->id);
		return -1;
	}
	if (kill(-*pgrp, sig) != 0) {
		rpc_error_set(err, RPC_NOT_RUNNING, "kill -%s %ld: %s",
		    signame_name(sig) ? signame_name(sig) : "?", (long)*pgrp,
		    strerror(errno));
		return -1;
	}
	log_info("session %lu: signal %d to group %ld", s->id, sig,
	    (long)*pgrp);
	return 0;
}

/* Sessions that have not ended yet. */
unsigned long
session_live_count(void)
{
	struct session	*s;
	unsigned long	 n = 0;

	TAILQ_FOREACH(s, &dmn.sessions, entry)
		if (!session_ended(s))
			n++;
	return n;
}

/* Whether nothing refers to ended session s any more, so it may be freed. */
static bool
session_prunable(struct session *s)
{
	struct pending	*p;
	size_t		 i;

	/* Handles closed as it ended finish closing at the end of that turn. */
	if (!session_ended(s) || s->ended_gen >= dmn.gen || s->nviewers > 0)
		return false;
	if (s->transport.out_open || s->transport.len > 0 ||
	    s->transport.raw != NULL)
		return false;	/* target output nobody has read */
	TAILQ_FOREACH(p, &dmn.pendings, entry)
		for (i = 0; i < p->nsessions; i++)
			if (p->sessions[i] == s)
				return false;
	return true;
}

/* Free an ended session and everything it holds. */
static void
session_free(struct session *s)
{
	TAILQ_REMOVE(&dmn.sessions, s, entry);
	dmn.nended--;
	log_info("session %lu: forgotten (its log stays)", s->id);
	json_decref(s->argv);
	json_decref(s->env);
	json_decref(s->commands);
	free(s->name);
	free(s->cwd);
	free(s->debugger);
	free(s->remote);
	free(s->server_cmd);
	free(s->error);
	free(s->main.exec_name);
	free(s->server.exec_name);
	free(s->console.log_path);
	free(s->transport.buf);
	free(s->viewers);
	free(s);
}

/*
 * Forget the oldest ended sessions beyond the number kept, so a daemon that
 * lives long does not grow; their logs stay on disk.
 */
void
session_prune(void)
{
	struct session *s, *next;

	TAILQ_FOREACH_SAFE(s, &dmn.sessions, entry, next) {
		if (dmn.nended <= dmn.keep_ended)
			return;
		if (session_prunable(s))
			session_free(s);
	}
}

