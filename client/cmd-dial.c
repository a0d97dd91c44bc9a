/*
 * dial-stdio: this process's stdin and stdout bridged, byte for byte, to
 * the daemon's socket on this host; what ssh runs for a client of
 * ssh://HOST, as `docker system dial-stdio` is for DOCKER_HOST=ssh://.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/*
 * Refuse a daemon of another user: the daemon checks its peer's uid, and
 * this checks the daemon's, so that the socket -s names on a shared host
 * reaches only the invoking user's own daemon.
 */
static void
cmd_dial_check_peer(struct client *c)
{
	struct ucred	cred;
	socklen_t	len = sizeof cred;

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		client_fatal("%s: SO_PEERCRED: %s", c->socket, strerror(errno));
	if (cred.uid != getuid())
		client_fatal("%s: the daemon there runs as uid %ld, not as "
		    "this user (uid %ld)", c->socket, (long)cred.uid,
		    (long)getuid());
}

/* dial-stdio: connect to the local daemon, then copy both ways until either ends. */
static int
cmd_dial_stdio_exec(struct cmd *self, struct client *c)
{
	/* This end is the host's: an address meant for the client is not. */
	unsetenv("DBGCTL_HOST");
	unsetenv("DBGCTL_CONNECT");
	if (args_has(&self->args, "no-start"))
		c->autostart = 0;
	client_connect(c);
	cmd_dial_check_peer(c);
	return pump_run(c->fd, 1);
}

/* What help says of each option of dial-stdio. */
static const struct cmd_option cmd_dial_stdio_options_help[] = {
	{ "no-start", NULL,
	    "fail if no daemon answers (default: start one, as other "
	    "commands do)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_dial_stdio_entry = {
	.name = "dial-stdio",
	.usage = "[--no-start]",
	.args = { "no-start", 0, 0 },
	.flags = CMD_AUTOSTART,
	.exec = cmd_dial_stdio_exec,
	.summary = "bridge stdin and stdout to the local daemon (what "
	    "ssh:// runs)",
	.options = cmd_dial_stdio_options_help,
};
