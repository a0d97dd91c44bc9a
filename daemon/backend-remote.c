/* remote: gdb connected through MI to a server that runs elsewhere. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "method.h"

/*
 * Whether host is a name, an IPv4 address or a bracketed IPv6 one: it is
 * written into an MI command, so nothing else may pass.
 */
static bool
backend_remote_host_ok(const char *host, size_t len)
{
	size_t i;

	if (len == 0 || len > 253)
		return false;
	if (host[0] == '[')
		return len > 2 && host[len - 1] == ']' &&
		    strspn(host + 1, "0123456789abcdefABCDEF:.") == len - 2;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)host[i]) && host[i] != '.' &&
		    host[i] != '-' && host[i] != '_')
			return false;
	return true;
}

/* remote: "remote" must be HOST:PORT, the port 1 to 65535. */
static int
backend_remote_check(const struct launch *l, struct rpc_error *err)
{
	const char	*r = l->remote, *colon = strrchr(r, ':');
	const char	*errstr = NULL;

	if (strlen(r) > 255) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"remote\" is longer "
		    "than 255 bytes");
		return -1;
	}
	if (colon != NULL)
		(void)strtonum(colon + 1, 1, 65535, &errstr);
	if (colon == NULL || errstr != NULL ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    !backend_remote_host_ok(r, colon - r)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"remote\" must be "
		    "HOST:PORT (a host name, an IPv4 address or an [IPv6] "
		    "one, and a port 1 to 65535)");
		return -1;
	}
	return 0;
}

/* What a remote launch takes: where its server listens. */
static const struct method_param backend_remote_params[] = {
	{ "remote", PT_STRING, true, 0, 0 },
	{ "semihosting", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

/* A probe's server (OpenOCD, pyOCD) resets and flashes through monitor. */
static const char *const backend_remote_reset[] = { "monitor reset halt", NULL };
static const char *const backend_remote_load[] = { "load", NULL };
/*
 * OpenOCD's documented switch; the console and the exit stay the
 * server's (its log), as the daemon has no channel to them.
 */
static const char *const backend_remote_semihost[] = {
	"monitor arm semihosting enable", NULL
};

const struct backend backend_remote = {
	.name = "remote",
	.debugger = "gdb",
	.stop_target = "detach",
	.flags = BACKEND_ADOPT,
	.params = backend_remote_params,
	.reset_commands = backend_remote_reset,
	.fault_defaults = fault_cortex_m,
	.load_commands = backend_remote_load,
	.semihost_commands = backend_remote_semihost,
	.check = backend_remote_check,
	.start = backend_gdb_start,
	BACKEND_GDB_FAMILY
};
