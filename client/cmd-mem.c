/* Reading and writing a target's memory, halted or live: mem. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "b64.h"
#include "dbgctl.h"
#include "hex.h"

/* Most bytes one mem reads (the daemon's bound). */
#define CMD_MEM_MAX	1048576

/* Bytes a line of mem's dump shows, as xxd does. */
#define CMD_MEM_DUMP_WIDTH	16

/*
 * Bytes from hex text (malloc'd, their count in *len); NULL if it is not
 * whole bytes of hex digits, spaces between bytes allowed.
 */
static unsigned char *
cmd_mem_unhex(const char *s, size_t *len)
{
	unsigned char	*p;
	int		 hi, lo;

	if ((p = malloc(strlen(s) / 2 + 1)) == NULL)
		client_fatal("out of memory");
	*len = 0;
	for (; *s != '\0'; s += 2) {
		s += strspn(s, " ");
		if (*s == '\0')
			break;
		if ((hi = hex_digit(s[0])) == -1 ||
		    (lo = hex_digit(s[1])) == -1) {
			free(p);
			return NULL;
		}
		p[(*len)++] = (unsigned char)(hi << 4 | lo);
	}
	return p;
}

/* The bytes of a memory read's answer (malloc'd, their count in *len); NULL if none. */
static unsigned char *
cmd_mem_bytes(json_t *result, size_t *len)
{
	const char	*text;

	if ((text = json_string_value(json_object_get(result, "hex"))) !=
	    NULL)
		return cmd_mem_unhex(text, len);
	if ((text = json_string_value(json_object_get(result, "base64"))) !=
	    NULL)
		return b64_decode(text, strlen(text), len);
	return NULL;
}

/*
 * Print bytes read at address as xxd does: the address, sixteen bytes in
 * groups of two, the bytes as text ('.' for those not printable).
 */
static void
cmd_mem_dump(unsigned long long address, const unsigned char *p,
    size_t len)
{
	size_t	i, j;

	for (i = 0; i < len; i += CMD_MEM_DUMP_WIDTH) {
		printf("%08llx:", address + i);
		for (j = 0; j < CMD_MEM_DUMP_WIDTH; j++) {
			if (j % 2 == 0)
				putchar(' ');
			if (i + j < len)
				printf("%02x", p[i + j]);
			else
				printf("  ");
		}
		printf("  ");
		for (j = 0; j < CMD_MEM_DUMP_WIDTH && i + j < len; j++)
			putchar(p[i + j] >= 0x20 && p[i + j] < 0x7f ?
			    p[i + j] : '.');
		putchar('\n');
	}
}

/* Print a memory read's bytes: a dump, or with --raw the bytes themselves. */
static void
cmd_mem_print(struct cmd *self, json_t *result)
{
	const char	*addr = json_string_value(json_object_get(result,
			    "address"));
	unsigned char	*p;
	size_t		 len;

	if ((p = cmd_mem_bytes(result, &len)) == NULL)
		client_fatal("reply from the daemon not understood");
	if (args_has(&self->args, "raw")) {
		if (cmd_write_all(STDOUT_FILENO, p, len) != 0)
			cmd_stdout_failed();
	} else
		cmd_mem_dump(addr != NULL ? strtoull(addr, NULL, 0) : 0, p,
		    len);
	free(p);
}

/* Print a memory write's answer: how many bytes went where. */
static void
cmd_mem_print_written(struct cmd *self, json_t *result)
{
	const char	*addr = json_string_value(json_object_get(result,
			    "address"));

	(void)self;
	printf("wrote %lld byte%s at %s\n", (long long)json_integer_value(
	    json_object_get(result, "length")), json_integer_value(
	    json_object_get(result, "length")) == 1 ? "" : "s",
	    addr != NULL ? addr : "?");
}

/* With --live, the access is asked not to halt the target. */
static void
cmd_mem_live(struct cmd *self, json_t *params)
{
	if (args_has(&self->args, "live"))
		json_object_set_new(params, "live", json_true());
}

/* mem --write SESSION ADDR HEXBYTES...: write bytes given in hex. */
static int
cmd_mem_write(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params;
	unsigned char		*bytes;
	char			*hex, *p;
	size_t			 len;

	if (args_has(a, "raw"))
		return cmd_usage(self, "--raw and --write are exclusive");
	if ((hex = cmd_inspect_join(a, 2)) == NULL)
		return cmd_usage(self, "missing HEXBYTES");
	if ((bytes = cmd_mem_unhex(hex, &len)) == NULL || len == 0) {
		free(bytes);
		cmd_usage(self, "bad HEXBYTES: %s (hex digits, two a byte)",
		    hex);
		free(hex);
		return EXIT_USAGE;
	}
	free(bytes);
	params = cmd_control_params(self);
	json_object_set_new(params, "action", json_string("write"));
	json_object_set_new(params, "address",
	    json_string(args_operand(a, 1)));
	/* The daemon takes hex as it is; spaces between bytes are ours. */
	for (len = 0, p = hex; *p != '\0'; p++) {
		if (*p != ' ')
			hex[len++] = *p;
	}
	hex[len] = '\0';
	json_object_set_new(params, "data", json_pack("{s:s}", "hex", hex));
	free(hex);
	cmd_mem_live(self, params);
	return cmd_control_run(self, c, "memory", params,
	    cmd_mem_print_written);
}

/*
 * mem [--raw] SESSION ADDR LEN: read LEN bytes at ADDR (an address or an
 * expression: 0x20000000, &counter), dumped as xxd does; mem --write
 * SESSION ADDR HEXBYTES: write them.
 */
static int
cmd_mem(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	const char		*lenarg;
	json_t			*params;
	long long		 n;
	char			*end;
	int			 rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	if (args_count(a) < 3)
		return cmd_usage(self, "missing %s", args_count(a) < 2 ?
		    "ADDR" : args_has(a, "write") ? "HEXBYTES" : "LEN");
	if (args_has(a, "write"))
		return cmd_mem_write(self, c);
	if (args_count(a) > 3)
		return cmd_usage(self, "too many arguments");
	lenarg = args_operand(a, 2);
	errno = 0;
	/* Decimal, or hex after 0x; never octal after a 0. */
	n = isdigit((unsigned char)*lenarg) ? strtoll(lenarg, &end,
	    strncasecmp(lenarg, "0x", 2) == 0 ? 16 : 10) : -1;
	if (n < 1 || n > CMD_MEM_MAX || errno != 0 || *end != '\0')
		return cmd_usage(self, "bad LEN: %s (1 to %d bytes)", lenarg,
		    CMD_MEM_MAX);
	params = cmd_control_params(self);
	json_object_set_new(params, "action", json_string("read"));
	json_object_set_new(params, "address",
	    json_string(args_operand(a, 1)));
	json_object_set_new(params, "length", json_integer(n));
	cmd_mem_live(self, params);
	return cmd_control_run(self, c, "memory", params,
	    cmd_mem_print);
}

/* What help says of each option of mem. */
static const struct cmd_option cmd_mem_options_help[] = {
	{ "raw", NULL, "write the bytes read to standard output as they are "
	    "(default: a dump as xxd's)" },
	{ "write", NULL, "write HEXBYTES at ADDR instead of reading" },
	{ "live", NULL, "while the target runs, without halting it (qemu: "
	    "shared RAM or QMP); other kinds halt, access and resume, and "
	    "say intrusive" },
	CMD_INSPECT_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_mem_entry = {
	.name = "mem",
	.usage = "[--raw] [--live] [--timeout MS] SESSION ADDR LEN | --write "
	    "[--live] SESSION ADDR HEXBYTES",
	.args = { "raw write live timeout#", 1, -1 },
	.flags = CMD_SESSION,
	.exec = cmd_mem,
	.summary = "read or write a session's target memory",
	.options = cmd_mem_options_help,
};
