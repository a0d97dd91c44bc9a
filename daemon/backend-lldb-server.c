/*
 * lldb-server: the lldb family's gdbserver. "lldb-server gdbserver" runs
 * the program under its keeper; once server.c sees in /proc that it
 * listens, lldb starts with "gdb-remote" to it, the server's one
 * connection, and is then driven as an lldb session is (backend-lldb.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * not wait for a server that is not there yet.
 */
static void
backend_lldb_server_served(struct session *s, const char *host, int port)
{
	char err[256];

	(void)host;
	(void)port;
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

/* Start lldb-server on the launch's port, or one it picks, under its keeper. */
static int
backend_lldb_server_start(struct session *s, char *err, size_t errlen)
{
	struct argv	 av = { 0 };
	int		 rc;

	argv_push(&av, "lldb-server");
	argv_push(&av, "gdbserver");
	argv_pushf(&av, "127.0.0.1:%d", s->l.port);
	argv_push(&av, "--");
	argv_push_json(&av, s->l.argv, 0);
	rc = server_start(backend_lldb_managed(s), s, av.v, s->l.port,
	    backend_lldb_server_served, err, errlen);
	argv_free(av.v);
	return rc;
}

/* The server exec'd: watch it until it listens; lldb exec'd: ready. */
static void
backend_lldb_server_ready(struct session *s, struct session_proc *sp)
{
	if (server_started(backend_lldb_managed(s), sp))
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
	if (s->bdata != NULL)
		server_status(backend_lldb_managed((struct session *)s), o);
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
	.flags = BACKEND_PROGRAM | BACKEND_SERVER,
	.params = backend_lldb_server_params,
	.check = backend_lldb_server_check,
	.argv = backend_lldb_server_argv,
	.start = backend_lldb_server_start,
	.ready = backend_lldb_server_ready,
	.command = backend_lldb_server_command,
	.status = backend_lldb_server_status,
	.close = backend_lldb_server_close,
};
