/* Daemon commands: ping, shutdown, version, daemon (and its --replace). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "dbgctl.h"

/* How long shutdown waits for the daemon's process to go after it replied. */
#define CMD_SHUTDOWN_EXIT_MS	10000

/* Pause between checks that the daemon's process has gone. */
#define CMD_SHUTDOWN_POLL_MS	10

/* ping: check that a daemon answers; never starts one. */
static int
cmd_ping_exec(struct cmd *self, struct client *c)
{
	json_t	*result;

	(void)self;
	if ((result = client_call(c, "ping", json_object())) == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	else
		puts("pong");
	json_decref(result);
	return EXIT_OK;
}

const struct cmd_entry cmd_ping_entry = {
	.name = "ping",
	.usage = "",
	.args = { "", 0, 0 },
	.flags = 0,
	.exec = cmd_ping_exec,
	.summary = "print pong if a daemon answers; never starts one",
};

/* Ask the daemon its pid with hello; -1 if it would not say. */
static pid_t
cmd_daemon_pid(struct client *c)
{
	json_t	*result, *pid;
	pid_t	 rv = -1;

	if ((result = client_call(c, "hello", json_object())) == NULL)
		return -1;
	pid = json_object_get(result, "pid");
	if (json_is_integer(pid))
		rv = (pid_t)json_integer_value(pid);
	json_decref(result);
	return rv;
}

/* Wait (bounded) until the process pid has exited. */
static void
cmd_shutdown_wait(pid_t pid)
{
	struct timespec	ts = { 0, CMD_SHUTDOWN_POLL_MS * 1000000L };
	int		i;

	for (i = 0; i < CMD_SHUTDOWN_EXIT_MS / CMD_SHUTDOWN_POLL_MS; i++) {
		if (!autostart_pid_alive(pid))
			return;
		nanosleep(&ts, NULL);
	}
}

/*
 * shutdown: stop every session, then the daemon; returns once the daemon's
 * process has exited, so a next command can start a new one at once.
 */
static int
cmd_shutdown_exec(struct cmd *self, struct client *c)
{
	json_t	*params, *result;
	pid_t	 pid;

	pid = cmd_daemon_pid(c);
	params = json_object();
	if (args_has(&self->args, "timeout"))
		json_object_set_new(params, "timeout",
		    json_integer(args_number(&self->args, "timeout", 0)));
	if ((result = client_call(c, "shutdown", params)) == NULL)
		return client_error(c);
	client_close(c);
	if (pid > 0)
		cmd_shutdown_wait(pid);
	if (c->json)
		cmd_print_json(result);
	json_decref(result);
	return EXIT_OK;
}

/* What help says of each option of shutdown. */
static const struct cmd_option cmd_shutdown_options_help[] = {
	{ "timeout", "MS",
	    "each session's stop timeout (default: its own)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_shutdown_entry = {
	.name = "shutdown",
	.usage = "[--timeout MS]",
	.args = { "timeout#", 0, 0 },
	.flags = 0,
	.exec = cmd_shutdown_exec,
	.summary = "stop every session and the daemon",
	.options = cmd_shutdown_options_help,
};

/* version: print the client's version and the daemon's. */
static int
cmd_version_exec(struct cmd *self, struct client *c)
{
	json_t	*hello, *both;

	(void)self;
	if (!c->json) {
		printf("dbgctl %s\n", DBGCTL_VERSION);
		fflush(stdout);
	}
	if ((hello = client_call(c, "hello", json_object())) == NULL)
		return client_error(c);
	if (c->json) {
		both = json_pack("{s:s,s:o}", "client", DBGCTL_VERSION,
		    "daemon", hello);
		cmd_print_json(both);
		json_decref(both);
		return EXIT_OK;
	}
	printf("dbgctld %s (pid %lld, protocol %lld%s)\n",
	    json_string_value(json_object_get(hello, "version")) != NULL ?
	    json_string_value(json_object_get(hello, "version")) : "?",
	    (long long)json_integer_value(json_object_get(hello, "pid")),
	    (long long)json_integer_value(json_object_get(hello, "protocol")),
	    json_is_true(json_object_get(hello, "activated")) ?
	    ", socket-activated" : "");
	json_decref(hello);
	return EXIT_OK;
}

const struct cmd_entry cmd_version_entry = {
	.name = "version",
	.usage = "",
	.args = { "", 0, 0 },
	.flags = CMD_AUTOSTART,
	.exec = cmd_version_exec,
	.summary = "print the client's and the daemon's versions",
};

/*
 * daemon --replace: the running daemon starts a new one on its sockets and
 * exits; returns once the old process has gone and the new one answers.
 */
static int
cmd_daemon_replace(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params = json_object(), *result;
	pid_t			 old, new, now;

	if (args_has(a, "foreground") || args_has(a, "listen") ||
	    args_has(a, "token-file"))
		return cmd_usage(self, "--replace starts the new daemon "
		    "with the running one's options and sockets: give none");
	if (args_has(a, "binary"))
		json_object_set_new(params, "binary",
		    json_string(args_get(a, "binary")));
	if ((result = client_call(c, "replace", params)) == NULL)
		return client_error(c);
	old = (pid_t)json_integer_value(json_object_get(result, "old_pid"));
	new = (pid_t)json_integer_value(json_object_get(result, "new_pid"));
	client_close(c);
	cmd_shutdown_wait(old);
	/* Queued in the backlog until the new daemon serves. */
	if ((now = cmd_daemon_pid(c)) != new)
		client_warn("the daemon now answering is pid %ld, not the new "
		    "pid %ld", (long)now, (long)new);
	if (c->json)
		cmd_print_json(result);
	else
		printf("dbgctld pid %ld replaced by pid %ld\n", (long)old,
		    (long)new);
	json_decref(result);
	return now == new ? EXIT_OK : EXIT_FAILED;
}

/* daemon: run dbgctld in place of this process, with the given options. */
static int
cmd_daemon_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	char			 path[PATH_MAX], *listen = NULL;
	const char		*v;
	char			**args;
	int			 n = 1, pos, unix_given = 0;

	if (args_has(a, "replace"))
		return cmd_daemon_replace(self, c);
	if (args_has(a, "binary"))
		return cmd_usage(self, "--binary names the new daemon of "
		    "--replace");

	/* Program, --foreground, the --listens, one more, the token file. */
	args = calloc(2 * args_has(a, "listen") + 7, sizeof *args);
	if (args == NULL)
		client_fatal("out of memory");
	if (args_has(a, "foreground"))
		args[n++] = (char *)"--foreground";
	for (pos = 0; (v = args_next(a, "listen", &pos)) != NULL;) {
		args[n++] = (char *)"--listen";
		args[n++] = (char *)v;
		unix_given |= strncmp(v, "unix:", 5) == 0;
	}
	if (args_has(a, "token-file")) {
		args[n++] = (char *)"--token-file";
		args[n++] = (char *)args_get(a, "token-file");
	}
	/* -s names the Unix socket, beside any TCP listener. */
	if (!unix_given && c->socket_arg != NULL) {
		if (asprintf(&listen, "unix:%s", c->socket_arg) == -1)
			client_fatal("out of memory");
		args[n++] = (char *)"--listen";
		args[n++] = listen;
	}
	if (client_daemon_path(path, sizeof path) != 0)
		client_fatal("cannot find dbgctld: %s", strerror(errno));
	args[0] = path;
	fflush(NULL);
	execv(path, args);
	client_fatal("exec %s: %s", path, strerror(errno));
}

/* What help says of each option of daemon. */
static const struct cmd_option cmd_daemon_options_help[] = {
	{ "foreground", NULL,
	    "stay in the foreground (default: return once it listens)" },
	{ "listen", "unix:PATH|tcp:HOST:PORT",
	    "listen there, repeatable (default: the socket)" },
	{ "token-file", "FILE",
	    "the token TCP clients must present" },
	{ "replace", NULL,
	    "have the running daemon start a new one on its sockets, and "
	    "exit" },
	{ "binary", "PATH",
	    "with --replace, the new daemon (default: the running one's)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_daemon_entry = {
	.name = "daemon",
	.usage = "[--foreground] [--listen unix:PATH | tcp:HOST:PORT]...\n"
	    "\t[--token-file F] | --replace [--binary PATH]",
	.args = { "foreground listen: token-file: replace binary:", 0, 0 },
	.flags = 0,
	.exec = cmd_daemon_exec,
	.summary = "run dbgctld in place of this command, or --replace the "
	    "running one",
	.options = cmd_daemon_options_help,
};
