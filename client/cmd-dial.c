/*
 * dial-stdio: this process's stdin and stdout handed to the daemon on this
 * host, which then reads and writes them itself (or, with a daemon that
 * cannot, bridged byte for byte to its socket); what ssh runs for a client
 * of ssh://HOST, as `docker system dial-stdio` is for DOCKER_HOST=ssh://.
 */
#include <sys/socket.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "dbgctl.h"
#include "fdpass.h"

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

/* Send the dial request with stdin and stdout beside it (SCM_RIGHTS); -1 if not sent. */
static int
cmd_dial_send(int sock)
{
	static const char	line[] = "{\"jsonrpc\":\"2.0\",\"id\":"
	    "\"dial-stdio\",\"method\":\"dial\"}\n";
	static const int	fds[2] = { STDIN_FILENO, STDOUT_FILENO };

	return fdpass_send(sock, line, sizeof line - 1, fds, 2) ==
	    (ssize_t)(sizeof line - 1) ? 0 : -1;
}

/*
 * Read the dial reply a byte at a time, so that nothing after it is taken
 * from a daemon that refused; whether it took stdin and stdout.
 */
static bool
cmd_dial_reply(struct client *c)
{
	char	 line[4096];
	size_t	 len = 0;
	ssize_t	 n;
	json_t	*reply;
	bool	 dialed;

	while (len < sizeof line - 1) {
		n = read(c->fd, line + len, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			client_fatal("lost connection to the daemon%s%s",
			    n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
		if (line[len++] == '\n')
			break;
	}
	line[len] = '\0';
	if ((reply = json_loads(line, 0, NULL)) == NULL)
		client_fatal("reply from the daemon not understood");
	dialed = json_is_true(json_object_get(json_object_get(reply,
	    "result"), "dialed"));
	json_decref(reply);
	return dialed;
}

/*
 * The daemon serves stdin and stdout now: let go of them, so that ssh's
 * pipes end when the daemon closes its copies, and wait for the daemon to
 * close the socket, which ends the connection.
 */
static int
cmd_dial_wait(int sock)
{
	char	buf[256];
	ssize_t	n;

	handover_release();
	while ((n = read(sock, buf, sizeof buf)) != 0)
		if (n < 0 && errno != EINTR)
			break;
	return EXIT_OK;
}

/*
 * Hand stdin and stdout to the daemon, which then reads and writes them
 * itself: no copy through this process. 0 once it took them; -1 from a
 * daemon without dial, for the caller to copy as before.
 */
static int
cmd_dial_pass(struct client *c)
{
	if (!handover_possible(c))
		return -1;
	if (cmd_dial_send(c->fd) != 0)
		client_fatal("lost connection to the daemon: %s",
		    strerror(errno));
	return cmd_dial_reply(c) ? 0 : -1;
}

/*
 * dial-stdio: connect to the local daemon and hand it stdin and stdout;
 * with a daemon that cannot take them, copy both ways until either ends.
 */
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
	if (cmd_dial_pass(c) == 0)
		return cmd_dial_wait(c->fd);
	return pump_run(c->fd, 1, NULL);
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
