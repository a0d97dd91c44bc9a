/* Helpers every command uses: options, usage errors, arguments, output. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* Print the usage of a command to fp, after prefix ("usage: " or indent). */
void
cmd_print_usage(const struct cmd_entry *entry, FILE *fp, const char *prefix)
{
	fprintf(fp, "%sdbgctl %s%s%s\n", prefix, entry->name,
	    *entry->usage != '\0' ? " " : "", entry->usage);
}

/* Report a usage error in a command; returns the usage exit status. */
int
cmd_usage(const struct cmd_entry *entry, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	client_vwarn(fmt, ap);
	va_end(ap);
	cmd_print_usage(entry, stderr, "usage: ");
	return EXIT_USAGE;
}

/* Name the option getopt just refused, as the user wrote it, into buf. */
static void
cmd_getopt_name(char **argv, char *buf, size_t len)
{
	const char	*arg;

	arg = optind > 0 ? argv[optind - 1] : NULL;
	if (optopt > 0 && optopt < 256) {
		snprintf(buf, len, "-%c", optopt);
		return;
	}
	if (arg == NULL || strncmp(arg, "--", 2) != 0) {
		strlcpy(buf, "?", len);
		return;
	}
	snprintf(buf, len, "%.*s", (int)strcspn(arg, "="), arg);
}

/*
 * Parse the next option of a command (options stop at the first operand).
 * -h and --help print the usage and exit; a bad option is reported and '?'
 * returned. The caller resets optind before the first call.
 */
int
cmd_getopt(const struct cmd_entry *entry, int argc, char **argv,
    const char *shortopts, const struct option *longopts)
{
	char	opts[64], name[128];
	int	ch;

	snprintf(opts, sizeof opts, "+:h%s", shortopts);
	opterr = 0;
	ch = getopt_long(argc, argv, opts, longopts, NULL);
	switch (ch) {
	case 'h':
		cmd_print_usage(entry, stdout, "usage: ");
		exit(EXIT_OK);
	case ':':
		cmd_getopt_name(argv, name, sizeof name);
		cmd_usage(entry, "option requires an argument: %s", name);
		return '?';
	case '?':
		cmd_getopt_name(argv, name, sizeof name);
		if (optopt >= 256)
			cmd_usage(entry, "option takes no argument: %s", name);
		else
			cmd_usage(entry, "unknown option: %s", name);
		return '?';
	}
	return ch;
}

/* Parse the options of a command that has none but -h and --help. */
int
cmd_getopt_none(const struct cmd_entry *entry, int argc, char **argv)
{
	static const struct option	options[] = {
		CMD_HELP_OPTION,
		{ NULL, 0, NULL, 0 }
	};

	if (cmd_getopt(entry, argc, argv, "", options) != -1)
		return EXIT_USAGE;
	return 0;
}

/* Parse a decimal count or milliseconds value: digits only, no sign. */
int
cmd_parse_count(const char *s, long long *out)
{
	char		*end;
	long long	 n;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	n = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = n;
	return 0;
}

/* A SESSION argument as JSON: an integer if all digits, else a string. */
json_t *
cmd_session_ref(const char *s)
{
	long long	n;

	if (cmd_parse_count(s, &n) == 0)
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
