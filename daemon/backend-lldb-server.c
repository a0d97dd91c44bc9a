/*
 * lldb-server: the lldb family's gdbserver. "lldb-server gdbserver" runs
 * the program under its keeper; once server.c sees in /proc that it
 * listens, lldb starts with "gdb-remote" to it, the server's one
 * connection, and is then driven as an lldb session is (backend-lldb.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "argv.h"
#include "server.h"
#include "lldb.h"
#include "method.h"

/*
 * lldb: the program's file for its symbols, the connection to the server
 * (which runs the program and has its arguments), then the -o commands.
 * lldb's own -o's run in order before its first prompt.
 */
static char **
backend_lldb_server_argv(struct session *s, char *err, size_t errlen)
{
	struct server	*srv = backend_lldb_managed(s);
	struct argv	 av = { 0 };

	(void)err;
	(void)errlen;
	argv_push(&av, s->l.debugger != NULL ? s->l.debugger : "lldb");
	argv_push(&av, "-o");
	argv_pushf(&av, "gdb-remote 127.0.0.1:%d", server_port(srv));
	backend_lldb_argv_end(s, &av);
	return av.v;
}

/*
 * The server listens: only now does lldb start, as its gdb-remote does
 * not wait for a server that is not there yet. A session stopped before
 * then starts no lldb, and its stop is not a failure.
 */
static void
backend_lldb_server_served(struct session *s, const char *host, int port)
{
	char err[256];

	(void)host;
	(void)port;
	if (s->state != S_STARTING)
		return;
	if (session_proc_spawn_main(s, err, sizeof err) != 0)
		session_fail(s, RPC_SPAWN_FAILED, "%s", err);
}

/*
 * lldb-server gives its program a terminal of its own and sends what the
 * program prints to lldb, which prints it on its console: a transport
 * would carry nothing of the program's.
 */
static int
backend_lldb_server_check(const struct launch *l, struct rpc_error *err)
{
	if (!l->transport)
		return 0;
	rpc_error_set(err, RPC_INVALID_PARAMS, "an lldb-server session has "
	    "no transport: the program's output comes on lldb's console");
	return -1;
}

/* Whether name is an executable file, or one in a directory of path. */
static bool
backend_lldb_server_found(const char *name, const char *path)
{
	char		 file[PATH_MAX];
	const char	*p, *end;

	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0;
	for (p = path; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		if (snprintf(file, sizeof file, "%.*s/%s", (int)(end - p), p,
		    name) < (int)sizeof file && access(file, X_OK) == 0)
			return true;
	}
	return false;
}

/*
 * The server that goes with the lldb the launch names: --debugger
 * /usr/bin/lldb-14 gives /usr/bin/lldb-server-14, lldb-14 gives
 * lldb-server-14 from the kind's PATH, if that exists; else lldb-server.
 */
static void
backend_lldb_server_binary(const struct session *s, char *buf, size_t len)
{
	const char	*dbg = s->l.debugger, *base;

	strlcpy(buf, "lldb-server", len);
	if (dbg == NULL)
		return;
	base = (base = strrchr(dbg, '/')) != NULL ? base + 1 : dbg;
	if (strncmp(base, "lldb", 4) != 0)
		return;
	if (snprintf(buf, len, "%.*slldb-server%s", (int)(base - dbg), dbg,
	    base + 4) >= (int)len ||
	    !backend_lldb_server_found(buf, s->backend->path))
		strlcpy(buf, "lldb-server", len);
}

/* Start lldb-server on the launch's port, or one it picks, under its keeper. */
static int
backend_lldb_server_start(struct session *s, char *err, size_t errlen)
{
	struct argv	 av = { 0 };
	char		 server[PATH_MAX];
	int		 rc;

	backend_lldb_server_binary(s, server, sizeof server);
	argv_push(&av, server);
	argv_push(&av, "gdbserver");
	argv_pushf(&av, "127.0.0.1:%d", s->l.port);
	argv_push(&av, "--");
	argv_push_json(&av, s->l.argv, 0);
	rc = server_start(backend_lldb_managed(s), s, av.v, s->l.port,
	    backend_lldb_server_served, err, errlen);
	argv_free(av.v);
	/* Adopted, lldb runs already, connected: it is taken over too. */
	if (rc == 0 && dmn.adopting != NULL) {
		backend_lldb_adopted(s);
		rc = session_proc_spawn_main(s, err, errlen);
	}
	return rc;
}

/* The server exec'd: watch it until it listens; lldb exec'd: ready. */
static void
backend_lldb_server_ready(struct session *s, struct session_proc *sp)
{
	struct server *srv = backend_lldb_managed(s);

	/* Adopted, the server listens and lldb is connected to it. */
	if (proc_adopted(sp->proc) && server_adopted(srv, sp))
		return;
	if (server_started(srv, sp))
		return;
	if (sp == &s->procs[0])
		(void)session_ready(s);
}

/* exec types on lldb's console, as for an lldb session. */
static int
backend_lldb_server_command(struct session *s, struct request *req)
{
	return backend_lldb.command(s, req);
}

/* Status: the server, its pid, port and argv, and the program in it. */
static void
backend_lldb_server_status(const struct session *s, json_t *o)
{
	const struct server *srv = backend_lldb_peek_managed(s);

	if (srv != NULL)
		server_status(srv, o);
}

/* The session ended: lldb's watches go, and the server's. */
static void
backend_lldb_server_close(struct session *s)
{
	if (s->bdata == NULL)
		return;
	backend_lldb.close(s);
	server_close(backend_lldb_managed(s));
}

/* What an lldb-server launch takes beside the common params. */
static const struct method_param backend_lldb_server_params[] = {
	{ "port", PT_INT, false, 1, 65535 },
	{ NULL, 0, false, 0, 0 }
};

const struct backend backend_lldb_server = {
	.name = "lldb-server",
	.debugger = "lldb",
	/* lldb's embedded Python breaks when another python3 leads PATH. */
	.path = "/usr/local/bin:/usr/bin:/bin",
	.flags = BACKEND_PROGRAM | BACKEND_SERVER | BACKEND_ADOPT,
	.params = backend_lldb_server_params,
	.check = backend_lldb_server_check,
	.argv = backend_lldb_server_argv,
	.start = backend_lldb_server_start,
	.ready = backend_lldb_server_ready,
	.command = backend_lldb_server_command,
	.status = backend_lldb_server_status,
	.close = backend_lldb_server_close,
};
