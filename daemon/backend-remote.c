/* remote: gdb connected through MI to a server that runs elsewhere. */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* remote: "remote" must be HOST:PORT. */
static int
backend_remote_check(const struct launch *l, struct rpc_error *err)
{
	const char *r = l->remote;

	if (strchr(r, ':') == NULL || *r == ':' || r[strlen(r) - 1] == ':') {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"remote\" must be "
		    "HOST:PORT, not \"%s\"", r);
		return -1;
	}
	return 0;
}

/* gdb exec'd: connect it. */
static void
backend_remote_ready(struct session *s, struct session_proc *sp)
{
	(void)sp;
	backend_gdb_connect(s);
}

const struct backend backend_remote = {
	.name = "remote",
	.debugger = "gdb",
	.stop_target = "detach",
	.flags = BACKEND_REMOTE,
	.check = backend_remote_check,
	.argv = backend_gdb_argv,
	.start = backend_gdb_start,
	.ready = backend_remote_ready,
	.quit = gdb_quit,
	.command = gdb_command,
	.status = backend_gdb_status,
	.close = backend_gdb_close,
};
