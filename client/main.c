/* dbgctl: the command-line client of dbgctld; global options and commands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "dbgctl.h"
#include "cmds.h"
#include "kinds.h"

static int	main_help(struct cmd *, struct client *);

/* Long-only global options. */
enum {
	OPT_JSON = 256,
	OPT_CONNECT,
	OPT_TOKEN_FILE,
};

/* What help says of its option. */
static const struct cmd_option main_help_options[] = {
	{ "completion", NULL, "print each command's options and operands, "
	    "and the kinds, as the bash completion reads them" },
	{ NULL, NULL, NULL }
};

/* help: here, since it prints the table below. */
static const struct cmd_entry main_help_entry = {
	.name = "help",
	.usage = "[--completion] [COMMAND]",
	.args = { "completion", 0, 1 },
	.flags = 0,
	.exec = main_help,
	.summary = "print the commands, or a command's options",
	.options = main_help_options,
};

/* The commands: each file's, as client/cmds.py lists them (cmds.h). */
static const struct cmd_entry *const main_commands[] = {
	CMDS_TABLE
	&main_help_entry,
};

#define MAIN_NCOMMANDS	(sizeof main_commands / sizeof main_commands[0])

/* The width of the command names in help's list. */
#define MAIN_NAME_WIDTH	12

/* Print the global usage line, every command with its line, the global options. */
static void
main_usage(FILE *fp)
{
	const struct cmd_option	*o;
	size_t			 i;

	fprintf(fp, "usage: dbgctl [GLOBAL OPTIONS] COMMAND [OPTIONS] "
	    "[ARG...]\ncommands:\n");
	for (i = 0; i < MAIN_NCOMMANDS; i++) {
		fprintf(fp, "  %-*s%s\n", MAIN_NAME_WIDTH, main_commands[i]->name,
		    main_commands[i]->summary != NULL ?
		    main_commands[i]->summary : "");
	}
	fprintf(fp, "global options, before the command or among its "
	    "options (before its first\noperand):\n");
	for (o = cmd_global_options; o->name != NULL; o++)
		cmd_print_option(fp, o->name, o->value, o->text);
	cmd_print_option(fp, "help", NULL, "print this help, also -h");
	cmd_print_option(fp, "version", NULL, "print the client's version, "
	    "also -V");
	fprintf(fp, "Run 'dbgctl help COMMAND' for a command's options; "
	    "see dbgctl(1).\n");
}

/* Report a usage error in the global options; returns the usage status. */
static int
main_usage_error(const char *what, const char *arg)
{
	client_warn("%s: %s", what, arg);
	fprintf(stderr, "usage: dbgctl [GLOBAL OPTIONS] COMMAND [OPTIONS] "
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

/* Say that name is no command, with the nearest ones as git does. */
static void
main_unknown(const char *name)
{
	const char	*names[MAIN_NCOMMANDS];
	char		 near[256];
	size_t		 i;

	for (i = 0; i < MAIN_NCOMMANDS; i++)
		names[i] = main_commands[i]->name;
	args_suggest_nearest(name, names, MAIN_NCOMMANDS, "", near,
	    sizeof near);
	if (*near == '\0')
		client_warn("unknown command: %s", name);
	else
		client_warn("unknown command: %s; did you mean %s?", name, near);
}

/*
 * The classes of e's operands as the completion names them: a SESSION
 * first is a live session, any other operand is none, and "..." repeats
 * the last. The completion knows better for a few (a program, a signal).
 */
static void
main_operands(const struct cmd_entry *e, FILE *fp)
{
	int	n, i;

	n = e->args.upper;
	fputs(e->flags & CMD_SESSION ? "live" : "none", fp);
	for (i = 1; i < n; i++)
		fputs(" none", fp);
	if (n == -1)
		fputs(e->flags & CMD_SESSION ? " none..." : "...", fp);
}

/*
 * help --completion: a line a command, "NAME|OPTIONS|OPERANDS", its
 * options as its template has them ("name:" takes a value), then
 * "kinds K...": what completion/dbgctl.bash offers, from these tables.
 */
static void
main_completion(FILE *fp)
{
	const char	*p;
	size_t		 i;

	for (i = 0; i < MAIN_NCOMMANDS; i++) {
		fprintf(fp, "%s|", main_commands[i]->name);
		for (p = main_commands[i]->args.options; *p != '\0'; p++)
			fputc(*p == '#' ? ':' : *p, fp);
		fputc('|', fp);
		main_operands(main_commands[i], fp);
		fputc('\n', fp);
	}
	fprintf(fp, "kinds %s\n", CMD_KINDS_WORDS);
}

/* help: print every command with its line, or one command's help. */
static int
main_help(struct cmd *self, struct client *c)
{
	const struct cmd_entry	*entry;
	const char		*name;

	(void)c;
	if (args_has(&self->args, "completion")) {
		main_completion(stdout);
		return EXIT_OK;
	}
	if ((name = args_operand(&self->args, 0)) == NULL) {
		main_usage(stdout);
		return EXIT_OK;
	}
	if ((entry = main_find(name)) == NULL) {
		main_unknown(name);
		cmd_print_usage(self->entry, stderr, "usage: ");
		return EXIT_USAGE;
	}
	cmd_print_help(entry, stdout);
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

/*
 * Whether getopt_long took the long option o from the word the user wrote
 * out whole: it takes a prefix ("--js" for --json), which is refused.
 */
static int
main_whole(const struct option *o, char **argv)
{
	const char	*word = argv[optind - 1];
	size_t		 len = strlen(o->name);

	if (o->has_arg != no_argument && optarg == word && optind >= 2)
		word = argv[optind - 2];
	return strncmp(word, "--", 2) == 0 && strncmp(word + 2, o->name,
	    len) == 0 && (word[2 + len] == '\0' || word[2 + len] == '=');
}

/* A global option word that is none, with those it may have meant. */
static int
main_unknown_option(const struct option *options, const char *word)
{
	const char	*names[16];
	char		 near[256], name[ARGS_WORD_MAX + 1];
	size_t		 n = 0;

	if (strncmp(word, "--", 2) != 0)
		return main_usage_error("unknown option", word);
	snprintf(name, sizeof name, "%.*s", (int)strcspn(word + 2, "="),
	    word + 2);
	for (; options->name != NULL && n < 16; options++)
		names[n++] = options->name;
	args_suggest_long(name, names, n, near, sizeof near);
	client_warn("unknown option: --%s%s%s%s", name, *near != '\0' ?
	    "; did you mean " : "", near, *near != '\0' ? "?" : "");
	fprintf(stderr, "usage: dbgctl [GLOBAL OPTIONS] COMMAND [OPTIONS] "
	    "[ARG...]\n");
	return EXIT_USAGE;
}

/* Parse the global options and run the command. */
int
main(int argc, char **argv)
{
	static const struct option	 options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "host", required_argument, NULL, 'H' },
		{ "connect", required_argument, NULL, OPT_CONNECT },
		{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd_entry		*entry;
	const char			*socket_arg = NULL;
	int				 ch, json = 0, rv, li;

	main_open_stdio();
	/* Run as a front end's gdb, the command line is gdb's. */
	if (argc > 0 && strcmp(fmt_basename(argv[0]), "dbgctl-gdb") == 0)
		return cmd_mi_gdb_main(argc, argv);
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:s:H:hV", options,
	    (li = -1, &li))) != -1) {
		if (li != -1 && !main_whole(&options[li], argv))
			return main_unknown_option(options, argv[optind -
			    1 - (options[li].has_arg != no_argument &&
			    optarg == argv[optind - 1])]);
		switch (ch) {
		case 's':
			socket_arg = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case 'H':
		case OPT_CONNECT:
			/* The environment carries it to every connection made. */
			setenv("DBGCTL_HOST", optarg, 1);
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
			if (optopt == 0)
				return main_unknown_option(options,
				    argv[optind - 1]);
			return main_usage_error("unknown option",
			    (char[]){ '-', optopt, '\0' });
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0) {
		main_usage(stderr);
		return EXIT_USAGE;
	}
	if ((entry = main_find(argv[0])) == NULL) {
		main_unknown(argv[0]);
		fprintf(stderr, "usage: dbgctl [GLOBAL OPTIONS] COMMAND "
		    "[OPTIONS] [ARG...]\n");
		return EXIT_USAGE;
	}
	if (main_check_utf8(argc, argv) != 0)
		return EXIT_USAGE;

	rv = cmd_run(entry, argc, argv, socket_arg, json);
	if (fflush(stdout) != 0 && rv == EXIT_OK) {
		if (errno == EPIPE)
			cmd_stdout_gone();
		client_warn("stdout: %s", strerror(errno));
		rv = EXIT_FAILED;
	}
	return rv;
}
