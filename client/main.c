/* dbgctl: the command-line client of dbgctld; global options and commands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "dbgctl.h"

static int	main_help(struct cmd *, struct client *);

/* Long-only global options. */
enum {
	OPT_JSON = 256,
	OPT_CONNECT,
	OPT_TOKEN_FILE,
};

/* help: here, since it prints the table below. */
static const struct cmd_entry main_help_entry = {
	.name = "help",
	.usage = "[COMMAND]",
	.args = { "", 0, 1 },
	.flags = 0,
	.exec = main_help,
};

/* The commands; each declares itself in its own file. */
static const struct cmd_entry *const main_commands[] = {
	&cmd_launch_entry,
	&cmd_list_entry,
	&cmd_status_entry,
	&cmd_stop_entry,
	&cmd_signal_entry,
	&cmd_logs_entry,
	&cmd_send_entry,
	&cmd_recv_entry,
	&cmd_pipe_entry,
	&cmd_attach_entry,
	&cmd_exec_entry,
	&cmd_ping_entry,
	&cmd_shutdown_entry,
	&cmd_version_entry,
	&cmd_daemon_entry,
	&main_help_entry,
};

#define MAIN_NCOMMANDS	(sizeof main_commands / sizeof main_commands[0])

/* Print the global usage line and every command's usage to fp. */
static void
main_usage(FILE *fp)
{
	size_t	i;

	fprintf(fp, "usage: dbgctl [-s SOCKET | --connect tcp:HOST:PORT "
	    "--token-file F]\n\t[--json] COMMAND [ARG...]\n"
	    "commands:\n");
	for (i = 0; i < MAIN_NCOMMANDS; i++) {
		cmd_print_usage(main_commands[i], fp, "  ");
	}
}

/* Report a usage error in the global options; returns the usage status. */
static int
main_usage_error(const char *what, const char *arg)
{
	client_warn("%s: %s", what, arg);
	fprintf(stderr, "usage: dbgctl [-s SOCKET] [--json] COMMAND "
	    "[ARG...]\n");
	return EXIT_USAGE;
}

/* Find a command by its name; NULL if there is none. */
static const struct cmd_entry *
main_find(const char *name)
{
	size_t	i;

	for (i = 0; i < MAIN_NCOMMANDS; i++) {
		if (strcmp(main_commands[i]->name, name) == 0)
			return main_commands[i];
	}
	return NULL;
}

/* help: print every command's usage, or one command's. */
static int
main_help(struct cmd *self, struct client *c)
{
	const struct cmd_entry	*entry;
	const char		*name;

	(void)c;
	if ((name = args_operand(&self->args, 0)) == NULL) {
		main_usage(stdout);
		return EXIT_OK;
	}
	if ((entry = main_find(name)) == NULL)
		return cmd_usage(self, "unknown command: %s", name);
	cmd_print_usage(entry, stdout, "usage: ");
	return EXIT_OK;
}

/* Refuse arguments that are not UTF-8: they cannot travel in JSON. */
static int
main_check_utf8(int argc, char **argv)
{
	json_t	*s;
	int	 i;

	for (i = 0; i < argc; i++) {
		if ((s = json_string(argv[i])) == NULL)
			return main_usage_error("argument is not valid UTF-8",
			    argv[i]);
		json_decref(s);
	}
	return 0;
}

/* Make sure fds 0, 1 and 2 are open, so no socket or pipe lands there. */
static void
main_open_stdio(void)
{
	int	fd;

	while ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) != -1) {
		if (fd > STDERR_FILENO) {
			close(fd);
			return;
		}
		if (fcntl(fd, F_SETFD, 0) == -1)
			return;
	}
}

/* Parse the global options and run the command. */
int
main(int argc, char **argv)
{
	static const struct option	 options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "connect", required_argument, NULL, OPT_CONNECT },
		{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd_entry		*entry;
	const char			*socket_arg = NULL;
	int				 ch, json = 0, rv;

	main_open_stdio();
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:s:hV", options, NULL)) != -1) {
		switch (ch) {
		case 's':
			socket_arg = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_CONNECT:
			/* The environment carries it to every connection made. */
			setenv("DBGCTL_CONNECT", optarg, 1);
			break;
		case OPT_TOKEN_FILE:
			setenv("DBGCTL_TOKEN_FILE", optarg, 1);
			break;
		case 'h':
			main_usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("dbgctl %s\n", DBGCTL_VERSION);
			return EXIT_OK;
		case ':':
			return main_usage_error("option requires an argument",
			    argv[optind - 1]);
		default:
			return main_usage_error("unknown option",
			    optopt != 0 ? (char[]){ '-', optopt, '\0' } :
			    argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		main_usage(stderr);
		return EXIT_USAGE;
	}
	if ((entry = main_find(argv[0])) == NULL)
		return main_usage_error("unknown command", argv[0]);
	if (main_check_utf8(argc, argv) != 0)
		return EXIT_USAGE;

	rv = cmd_run(entry, argc, argv, socket_arg, json);
	if (fflush(stdout) != 0 && rv == EXIT_OK) {
		client_warn("stdout: %s", strerror(errno));
		rv = EXIT_FAILED;
	}
	return rv;
}
