/* Running a command: its line parsed before it runs, usage errors, output. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* What cmd_parse returns when the command may run. */
#define CMD_PARSED	(-1)

/* Print the usage of a command to fp, after prefix ("usage: " or indent). */
void
cmd_print_usage(const struct cmd_entry *entry, FILE *fp, const char *prefix)
{
	fprintf(fp, "%sdbgctl %s%s%s\n", prefix, entry->name,
	    *entry->usage != '\0' ? " " : "", entry->usage);
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
	switch (args_parse(&self->args, &entry->args, argc, argv, cause,
	    sizeof cause)) {
	case ARGS_OK:
		break;
	case ARGS_HELP:
		cmd_print_usage(entry, stdout, "usage: ");
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
	int		rv;

	if ((rv = cmd_parse(&self, entry, argc, argv)) != CMD_PARSED) {
		args_free(&self.args);
		return rv;
	}
	client_init(&c, socket_arg, json);
	c.autostart = (entry->flags & CMD_AUTOSTART) != 0;
	c.exits = entry->exits;
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
		if (n == -1)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}
