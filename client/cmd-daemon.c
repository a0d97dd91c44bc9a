/* Daemon commands: ping, shutdown, version, daemon. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "dbgctl.h"

/* Long-only options; their values stay above any short option's. */
enum {
	OPT_TIMEOUT = 256,
	OPT_FOREGROUND,
	OPT_LISTEN,
};

/* How long shutdown waits for the daemon's process to go after it replied. */
#define CMD_SHUTDOWN_EXIT_MS	10000

/* Pause between checks that the daemon's process has gone. */
#define CMD_SHUTDOWN_POLL_MS	10

/* Give up on a command that takes no arguments but got some. */
static int
cmd_no_arguments(const struct cmd_entry *self, int argc, char **argv)
{
	if (cmd_getopt_none(self, argc, argv) != 0)
		return EXIT_USAGE;
	if (optind != argc)
		return cmd_usage(self, "too many arguments");
	return 0;
}

/* ping: check that a daemon answers; never starts one. */
int
cmd_ping(const struct cmd_entry *self, struct client *c, int argc,
    char **argv)
{
	json_t	*result;

	if (cmd_no_arguments(self, argc, argv) != 0)
		return EXIT_USAGE;
	if ((result = client_call(c, "ping", json_object())) == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	else
		puts("pong");
	json_decref(result);
	return EXIT_OK;
}

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
int
cmd_shutdown(const struct cmd_entry *self, struct client *c, int argc,
    char **argv)
{
	static const struct option	 options[] = {
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		CMD_HELP_OPTION,
		{ NULL, 0, NULL, 0 }
	};
	json_t				*params, *result;
	long long			 ms = -1;
	pid_t				 pid;
	int				 ch;

	while ((ch = cmd_getopt(self, argc, argv, "", options)) != -1) {
		if (ch != OPT_TIMEOUT)
			return EXIT_USAGE;
		if (cmd_parse_count(optarg, &ms) != 0)
			return cmd_usage(self, "bad --timeout: %s", optarg);
	}
	if (optind != argc)
		return cmd_usage(self, "too many arguments");

	pid = cmd_daemon_pid(c);
	params = json_object();
	if (ms != -1)
		json_object_set_new(params, "timeout", json_integer(ms));
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

/* version: print the client's version and the daemon's. */
int
cmd_version(const struct cmd_entry *self, struct client *c, int argc,
    char **argv)
{
	json_t	*hello, *both;

	if (cmd_no_arguments(self, argc, argv) != 0)
		return EXIT_USAGE;
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
	printf("dbgctld %s (pid %lld, protocol %lld)\n",
	    json_string_value(json_object_get(hello, "version")) != NULL ?
	    json_string_value(json_object_get(hello, "version")) : "?",
	    (long long)json_integer_value(json_object_get(hello, "pid")),
	    (long long)json_integer_value(json_object_get(hello, "protocol")));
	json_decref(hello);
	return EXIT_OK;
}

/* daemon: run dbgctld in place of this process, with the given options. */
int
cmd_daemon(const struct cmd_entry *self, struct client *c, int argc,
    char **argv)
{
	static const struct option	 options[] = {
		{ "foreground", no_argument, NULL, OPT_FOREGROUND },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		CMD_HELP_OPTION,
		{ NULL, 0, NULL, 0 }
	};
	char				 path[PATH_MAX], *listen = NULL;
	char				**args;
	int				 ch, n = 1, listens = 0;

	/* At most program, --foreground, the --listens and one more. */
	if ((args = calloc(argc * 2 + 4, sizeof *args)) == NULL)
		client_fatal("out of memory");
	while ((ch = cmd_getopt(self, argc, argv, "", options)) != -1) {
		if (ch == OPT_FOREGROUND)
			args[n++] = (char *)"--foreground";
		else if (ch == OPT_LISTEN) {
			args[n++] = (char *)"--listen";
			args[n++] = optarg;
			listens++;
		} else {
			free(args);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		free(args);
		return cmd_usage(self, "too many arguments");
	}
	if (listens == 0 && c->socket_arg != NULL) {
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
