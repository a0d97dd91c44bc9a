/* Running a command: its line parsed before it runs, usage errors, output. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* What cmd_parse returns when the command may run. */
#define CMD_PARSED	(-1)

/* The global options, in a template's words, taken among a command's too. */
#define CMD_GLOBALS	"s: socket: H: host: connect: token-file: json"

/* The global options as help describes them (main.c takes them first). */
const struct cmd_option cmd_global_options[] = {
	{ "socket", "SOCKET", "the daemon's socket, also -s SOCKET (default: "
	    "$DBGCTL_SOCKET, else $XDG_RUNTIME_DIR/dbgctl/sock, else "
	    "/tmp/dbgctl-UID/sock)" },
	{ "host", "ADDRESS", "a daemon on another host, also -H ADDRESS: "
	    "ssh://[USER@]HOST[:PORT][/SOCKET] through ssh, or tcp:HOST:PORT "
	    "with a token; never started from here, and -s is not used "
	    "(default: $DBGCTL_HOST)" },
	{ "connect", "ADDRESS", "the same as --host (default: "
	    "$DBGCTL_CONNECT)" },
	{ "token-file", "FILE", "the file whose first line is the token "
	    "--connect presents (default: $DBGCTL_TOKEN_FILE)" },
	{ "json", NULL, "print the result as JSON" },
	{ NULL, NULL, NULL }
};

/* The width of help's first column, where the descriptions start. */
#define CMD_HELP_COLUMN	26

/* The width help's lines are folded to. */
#define CMD_HELP_WIDTH	79

/* Print the usage of a command to fp, after prefix ("usage: " or indent). */
void
cmd_print_usage(const struct cmd_entry *entry, FILE *fp, const char *prefix)
{
	fprintf(fp, "%sdbgctl %s%s%s\n", prefix, entry->name,
	    *entry->usage != '\0' ? " " : "", entry->usage);
}

/* Print text from column on, its words folded before CMD_HELP_WIDTH. */
static void
cmd_print_wrapped(FILE *fp, const char *text, size_t column)
{
	size_t	at = column, len;

	while (*text != '\0') {
		len = strcspn(text, " ");
		/* "(default: 5000)" stays on one line. */
		if (len >= 8 && strncmp(text + len - 8, "default:", 8) == 0 &&
		    text[len] == ' ')
			len += 1 + strcspn(text + len + 1, " ");
		if (at > column && at + 1 + len > CMD_HELP_WIDTH) {
			fprintf(fp, "\n%*s", (int)column, "");
			at = column;
		} else if (at > column) {
			fputc(' ', fp);
			at++;
		}
		fprintf(fp, "%.*s", (int)len, text);
		at += len;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', fp);
}

/* Print one help line: "  --name VALUE", then text from the column on. */
void
cmd_print_option(FILE *fp, const char *name, const char *value,
    const char *text)
{
	int	n;

	n = fprintf(fp, "  %s%s%s%s", name[1] == '\0' ? "-" : "--", name,
	    value != NULL ? " " : "", value != NULL ? value : "");
	if (text == NULL || *text == '\0') {
		fputc('\n', fp);
		return;
	}
	if (n >= CMD_HELP_COLUMN)
		fprintf(fp, "\n%*s", CMD_HELP_COLUMN, "");
	else
		fprintf(fp, "%*s", CMD_HELP_COLUMN - n, "");
	cmd_print_wrapped(fp, text, CMD_HELP_COLUMN);
}

/* The help of option name in entry's list, or NULL if it has none. */
static const struct cmd_option *
cmd_option_help(const struct cmd_entry *entry, const char *name)
{
	const struct cmd_option	*o;

	for (o = entry->options; o != NULL && o->name != NULL; o++) {
		if (strcmp(o->name, name) == 0)
			return o;
	}
	return NULL;
}

/*
 * Print the global options a command takes among its own, a being its
 * template's: all but those it has an option of the same name for.
 */
static void
cmd_print_globals(const struct args *a, FILE *fp)
{
	const struct cmd_option	*o;
	char			 line[512] = "";

	if (args_known(a, "s") == -1)
		strlcat(line, "-s SOCKET, ", sizeof line);
	if (args_known(a, "H") == -1)
		strlcat(line, "-H ADDRESS, ", sizeof line);
	for (o = cmd_global_options; o->name != NULL; o++) {
		if (args_known(a, o->name) != -1)
			continue;
		strlcat(line, "--", sizeof line);
		strlcat(line, o->name, sizeof line);
		if (o->value != NULL) {
			strlcat(line, " ", sizeof line);
			strlcat(line, o->value, sizeof line);
		}
		strlcat(line, ", ", sizeof line);
	}
	if (*line == '\0')
		return;
	line[strlen(line) - 2] = '\0';
	fprintf(fp, "global options, here too (see dbgctl help):\n  ");
	cmd_print_wrapped(fp, line, 2);
}

/*
 * Print a command's help to fp: its usage, what it does, each option of
 * its template with what it does and its default, and the global options.
 */
void
cmd_print_help(const struct cmd_entry *entry, FILE *fp)
{
	const struct cmd_option	*o;
	struct args		 a;
	const char		*value;
	int			 i;

	cmd_print_usage(entry, fp, "usage: ");
	if (entry->summary != NULL)
		fprintf(fp, "%s\n", entry->summary);
	fprintf(fp, "options:\n");
	args_split(&a, &entry->args);
	for (i = 0; i < a.nown; i++) {
		o = cmd_option_help(entry, a.options[i].name);
		value = o != NULL && o->value != NULL ? o->value :
		    a.options[i].value == '#' ? "N" :
		    a.options[i].value == ':' ? "VALUE" : NULL;
		cmd_print_option(fp, a.options[i].name, value,
		    o != NULL ? o->text : NULL);
	}
	cmd_print_option(fp, "help", NULL, "print this help, also -h");
	cmd_print_globals(&a, fp);
	args_free(&a);
}

/* Report a usage error in a command: the message, then its usage line. */
int
cmd_usage(const struct cmd *self, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	client_vwarn(fmt, ap);
	va_end(ap);
	cmd_print_usage(self->entry, stderr, "usage: ");
	return EXIT_USAGE;
}

/* -H, --host or --connect given among a command's options: the address. */
static void
cmd_global_host(const struct args *a, const char *name)
{
	if (args_known(a, name) >= a->nown && args_has(a, name))
		setenv("DBGCTL_HOST", args_get(a, name), 1);
}

/*
 * The global options given among the command's: each overrides what came
 * before the command, as a later option does. The command's own option of
 * the same name (daemon --token-file) is not one of them.
 */
static void
cmd_globals(const struct cmd *self, const char **socket_arg, int *json)
{
	const struct args	*a = &self->args;
	int			 s, socket;

	s = args_known(a, "s") >= a->nown ? args_last(a, "s") : -1;
	socket = args_known(a, "socket") >= a->nown ?
	    args_last(a, "socket") : -1;
	if (s != -1 || socket != -1)
		*socket_arg = a->given[s > socket ? s : socket].value;
	if (args_known(a, "json") >= a->nown && args_has(a, "json"))
		*json = 1;
	cmd_global_host(a, "H");
	cmd_global_host(a, "host");
	cmd_global_host(a, "connect");
	if (args_known(a, "token-file") >= a->nown &&
	    args_has(a, "token-file"))
		setenv("DBGCTL_TOKEN_FILE", args_get(a, "token-file"), 1);
}

/*
 * Parse argv against entry into self. Returns CMD_PARSED when exec may run,
 * else the status to exit with: 0 after -h, the usage status after an error.
 */
static int
cmd_parse(struct cmd *self, const struct cmd_entry *entry, int argc,
    char **argv)
{
	char	cause[256];

	memset(self, 0, sizeof *self);
	self->entry = entry;
	switch (args_parse(&self->args, &entry->args, CMD_GLOBALS, argc, argv,
	    cause, sizeof cause)) {
	case ARGS_OK:
		break;
	case ARGS_HELP:
		cmd_print_help(entry, stdout);
		return EXIT_OK;
	case ARGS_FEW:
		return cmd_usage(self, "%s", (entry->flags & CMD_SESSION) &&
		    args_count(&self->args) == 0 ? "missing SESSION" :
		    "missing arguments");
	case ARGS_BAD:
		return cmd_usage(self, "%s", cause);
	}
	if (entry->flags & CMD_SESSION)
		self->session = cmd_session_ref(args_operand(&self->args, 0));
	return CMD_PARSED;
}

/*
 * Run the command entry with argv (argv[0] its name): parse it, and only if
 * that succeeds talk to the daemon at socket_arg. Returns the exit status.
 */
int
cmd_run(const struct cmd_entry *entry, int argc, char **argv,
    const char *socket_arg, int json)
{
	struct cmd	self;
	struct client	c;
	char		cause[PATH_MAX + 512];
	int		rv;

	if ((rv = cmd_parse(&self, entry, argc, argv)) != CMD_PARSED) {
		args_free(&self.args);
		return rv;
	}
	cmd_globals(&self, &socket_arg, &json);
	if (client_connect_check(cause, sizeof cause) != 0) {
		rv = cmd_usage(&self, "%s", cause);
		json_decref(self.session);
		args_free(&self.args);
		return rv;
	}
	client_init(&c, socket_arg, json);
	c.autostart = (entry->flags & CMD_AUTOSTART) != 0;
	c.exits = entry->exits;
	/* The daemon's refusals name params; a person typed options. */
	c.args = &self.args;
	rv = entry->exec(&self, &c);
	client_close(&c);
	json_decref(self.session);
	args_free(&self.args);
	return rv;
}

/* A SESSION argument as JSON: an integer if all digits, else a string. */
json_t *
cmd_session_ref(const char *s)
{
	long long	n;

	if (args_strtonum(s, &n) == 0)
		return json_integer(n);
	return json_string(s);
}

/* Print v as the one JSON document of this command. */
int
cmd_print_json(json_t *v)
{
	if (json_dumpf(v, stdout, JSON_COMPACT | JSON_ENCODE_ANY) != 0)
		return -1;
	fputc('\n', stdout);
	return 0;
}

/* Write all of buf to fd, whatever write(2) accepts at a time. */
int
cmd_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		/* An fd someone made non-blocking: wait for room. */
		if (n == -1 && errno == EAGAIN) {
			(void)poll(&(struct pollfd){ fd, POLLOUT, 0 }, 1, -1);
			continue;
		}
		if (n == -1)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Our stdout's reader has gone (a pipe to head that has its lines): end as
 * cat does, quietly, by SIGPIPE, which the shell shows as 141; the session
 * goes on. The terminal is left as it was found before this is called.
 */
void
cmd_stdout_gone(void)
{
	sigset_t	set;

	fflush(stderr);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGPIPE);
	_exit(128 + SIGPIPE);
}

/*
 * Writing to stdout failed (errno says why): a reader that left ends us
 * as it ends cat, by SIGPIPE; any other error is ours, status 1, never
 * the daemon's status 3.
 */
void
cmd_stdout_failed(void)
{
	if (errno == EPIPE)
		cmd_stdout_gone();
	client_warn("write: stdout: %s", strerror(errno));
	exit(EXIT_FAILED);
}
