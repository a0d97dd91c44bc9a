/*
 * gdbserver: start the server and gdb beside it; once server.c sees in
 * /proc that one of the server's processes listens, gdb connects: the
 * server's one connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "argv.h"
#include "server.h"
#include "gdb.h"
#include "method.h"

/* Replace every {port} in the server command. */
static char *
backend_gdbserver_expand(const char *cmd, int port)
{
	char		*out, num[16], *o;
	size_t		 n = 0;
	const char	*p;

	snprintf(num, sizeof num, "%d", port);
	for (p = cmd; (p = strstr(p, "{port}")) != NULL; p += 6)
		n++;
	out = xmalloc(strlen(cmd) + n * strlen(num) + 1);
	for (o = out, p = cmd; *p != '\0';) {
		if (strncmp(p, "{port}", 6) == 0) {
			o = stpcpy(o, num);
			p += 6;
		} else
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

/*
 * The server's argv: gdbserver itself (port 0: it picks), or --server as
 * words, or through sh with exec in front when it needs a shell, so the
 * pid is the server's either way.
 */
static char **
backend_gdbserver_argv(struct session *s, int port)
{
	struct argv	 av = { 0 };
	char		*cmd;

	if (s->l.server == NULL && s->l.pid != 0) {
		argv_push(&av, "gdbserver");
		argv_push(&av, "--attach");
		argv_pushf(&av, "127.0.0.1:%d", port);
		argv_pushf(&av, "%ld", s->l.pid);
		return av.v;
	}
	if (s->l.server == NULL) {
		argv_push(&av, "gdbserver");
		argv_pushf(&av, "127.0.0.1:%d", port);
		argv_push_json(&av, s->l.argv, 0);
		return av.v;
	}
	cmd = backend_gdbserver_expand(s->l.server, port);
	if (argv_split(&av, cmd) != 0) {
		argv_push(&av, "/bin/sh");
		argv_push(&av, "-c");
		/* exec only where the shell would run one command. */
		if (strpbrk(cmd, ";&|()\n") != NULL || argv_assigns(cmd))
			argv_push(&av, cmd);
		else
			argv_pushf(&av, "exec %s", cmd);
	}
	free(cmd);
	return av.v;
}

/* A gdbserver session needs something to serve, and one thing only. */
static int
backend_gdbserver_check(const struct launch *l, struct rpc_error *err)
{
	if (l->server != NULL && l->pid != 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"pid\" and \"server\" "
		    "exclude each other: give the server its pid in its "
		    "command");
		return -1;
	}
	if (l->server != NULL || json_array_size(l->argv) > 0 || l->pid != 0)
		return 0;
	rpc_error_set(err, RPC_INVALID_PARAMS, "a gdbserver session needs a "
	    "PROGRAM, a \"pid\" or a \"server\" command");
	return -1;
}

/* What a gdbserver launch takes beside the family's params. */
static const struct method_param backend_gdbserver_params[] = {
	{ "server", PT_STRING, false, 0, 0 },
	{ "port", PT_INT, false, 1, 65535 },
	{ NULL, 0, false, 0, 0 }
};

/* A probe's server (OpenOCD, pyOCD) resets and flashes through monitor. */
static const char *const backend_gdbserver_reset[] = {
	"monitor reset halt", NULL
};
static const char *const backend_gdbserver_load[] = { "load", NULL };

/*
 * The reset and load recipes of a --server session: a probe's, unless the
 * launch gave its own. gdbserver's own has none: gdb's "target remote"
 * cannot run the program again.
 */
static void
backend_gdbserver_recipes(struct launch *l)
{
	const char *const *c;

	if (l->server == NULL)
		return;
	if (l->reset_commands == NULL) {
		l->reset_commands = json_array();
		for (c = backend_gdbserver_reset; *c != NULL; c++)
			json_array_append_new(l->reset_commands, json_string(*c));
	}
	if (l->load_commands == NULL) {
		l->load_commands = json_array();
		for (c = backend_gdbserver_load; *c != NULL; c++)
			json_array_append_new(l->load_commands, json_string(*c));
	}
}

/* Pick the port (or let the server pick) and start it under its keeper. */
static int
backend_gdbserver_start(struct session *s, char *err, size_t errlen)
{
	char	**av, addr[64];
	int	  rc, port = s->l.port;

	backend_gdbserver_recipes(&s->l);

	/* {port} wants a number now; anything else can pick and be seen. */
	if (port == 0 && s->l.server != NULL &&
	    strstr(s->l.server, "{port}") != NULL &&
	    (port = server_free_port(err, errlen)) < 0)
		return -1;
	snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
	if (backend_gdb_open(s, addr, err, errlen) != 0)
		return -1;
	av = backend_gdbserver_argv(s, port);
	rc = backend_gdb_server_start(s, av, port, err, errlen);
	argv_free(av);
	return rc;
}

const struct backend backend_gdbserver = {
	.name = "gdbserver",
	.debugger = "gdb",
	.stop_target = "auto",
	.flags = BACKEND_SERVER | BACKEND_ATTACH | BACKEND_ADOPT,
	.fault_defaults = fault_cortex_m,
	.params = backend_gdbserver_params,
	.check = backend_gdbserver_check,
	.start = backend_gdbserver_start,
	BACKEND_GDB_FAMILY
};
