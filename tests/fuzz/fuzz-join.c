/*
 * libFuzzer target: the joined MI client's filter (daemon/mi-filter*.c),
 * on a byte stream cut into lines by the framer as method-join.c does.
 *
 * Each line is decided for a controller, an observer and a client with
 * full control, in a native session with a fault break: a refusal always
 * names why, and only a command that passes carries flags. Then every
 * line not passed as it is (refused, or answered by the daemon) is nested
 * in interpreter-exec, 1 to MI_FILTER_DEPTH levels deep, in forms its
 * last bytes pick (the MI operation or the console's command, the mi or
 * console interpreter, with, thread apply, frame apply), and the nested
 * line must not pass either: nesting lets nothing through.
 */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "daemon.h"
#include "mi.h"
#include "fuzz.h"
#include "mi-filter.h"

/* The input's last bytes, which pick the nesting forms. */
static uint32_t	join_fuzz_pick;

/* The three kinds of joined client, in a native session. */
static struct mi_filter_ctx	join_fuzz_ctx[3];

/* Set up the contexts once: a pid, a program, a fault break numbered 3. */
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	json_t	*internal = json_pack("{s:s}", "3", "HardFault_Handler");
	int	 k;

	(void)argc;
	(void)argv;
	for (k = 0; k < 3; k++) {
		join_fuzz_ctx[k].program = "/bin/true";
		join_fuzz_ctx[k].pid = 4242;
		join_fuzz_ctx[k].internal = internal;
	}
	join_fuzz_ctx[1].observe = true;
	join_fuzz_ctx[2].full = true;
	return 0;
}

/* cmd as one double-quoted argument, \ and " escaped (malloc'd). */
static char *
join_fuzz_quote(const char *cmd)
{
	char *q = xmalloc(2 * strlen(cmd) + 3), *o = q;

	*o++ = '"';
	for (; *cmd != '\0'; cmd++) {
		if (*cmd == '"' || *cmd == '\\')
			*o++ = '\\';
		*o++ = *cmd;
	}
	*o++ = '"';
	*o = '\0';
	return q;
}

/*
 * cmd one level deeper, in form (0..6), as gdb would run it again: an MI
 * operation only by the mi interpreter, a console command by either, or
 * by a command that runs commands. *cli says whether the result is a
 * console command. malloc'd.
 */
static char *
join_fuzz_wrap(const char *cmd, unsigned form, bool *cli)
{
	char	*q = join_fuzz_quote(cmd), *line;
	bool	 inner_cli = *cli;

	/*
	 * The mi interpreter skips spaces and reads an operation after them,
	 * where the line as the client's (after our token) is a console
	 * command: such a one goes to the console interpreter.
	 */
	if (!inner_cli)
		form &= 1;
	else if (form < 2 && isspace((unsigned char)cmd[0]))
		form |= 2;
	switch (form) {
	case 0: case 1:
		xasprintf(&line, "%sinterpreter-exec mi %s", form ? "" : "-", q);
		break;
	case 2: case 3:
		xasprintf(&line, "%sinterpreter-exec console %s", (form & 1) ?
		    "" : "-", q);
		break;
	case 4:
		xasprintf(&line, "with confirm off -- %s", cmd);
		break;
	case 5:
		xasprintf(&line, "thread apply all %s", cmd);
		break;
	default:
		xasprintf(&line, "frame apply all -q %s", cmd);
		break;
	}
	*cli = form != 0 && form != 2;
	free(q);
	return line;
}

/* Decide on a line; the invariants every verdict keeps. */
static struct mi_filter
join_fuzz_decide(const struct mi_filter_ctx *ctx, const char *line)
{
	struct mi_filter f;

	mi_filter_decide(ctx, line, &f);
	fuzz_check(f.verdict == MIF_PASS || f.flags == 0, "flags %#x on a "
	    "verdict %d: %s", f.flags, f.verdict, line);
	fuzz_check(f.verdict != MIF_ERROR || f.why[0] != '\0', "refused "
	    "without a reason: %s", line);
	return f;
}

/* A line not passed, nested deeper and deeper: it is never passed. */
static void
join_fuzz_nest(const struct mi_filter_ctx *ctx, const char *line)
{
	struct mi_filter	 f;
	char			*cur = xstrdup(line), *next;
	bool			 cli = line[0] != '-';
	uint32_t		 pick = join_fuzz_pick;
	int			 depth;

	for (depth = 1; depth <= MI_FILTER_DEPTH; depth++, pick /= 7) {
		next = join_fuzz_wrap(cur, pick % 7, &cli);
		free(cur);
		cur = next;
		f = join_fuzz_decide(ctx, cur);
		fuzz_check(f.verdict != MIF_PASS, "refused alone but passed "
		    "at depth %d: %s", depth, cur);
	}
	free(cur);
}

/* One line of the input, as a client's command (a NUL ends it, as there). */
static int
join_fuzz_line(void *arg, char *line, size_t len)
{
	struct mi_filter	 f;
	size_t			 digits = strspn(line, "0123456789");
	char			*cmd;
	int			 k;

	(void)arg;
	/* Its token is the client's, taken off as method-join.c does. */
	if ((cmd = strndup(line + digits, len - digits)) == NULL)
		abort();
	for (k = 0; k < 3; k++) {
		f = join_fuzz_decide(&join_fuzz_ctx[k], cmd);
		if (f.verdict != MIF_PASS && cmd[0] != '\0')
			join_fuzz_nest(&join_fuzz_ctx[k], cmd);
	}
	free(cmd);
	return 0;
}

/* One input: its lines, each decided alone and nested. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	join_fuzz_pick = 0;
	if (size >= 4)
		memcpy(&join_fuzz_pick, data + size - 4, 4);
	fuzz_lines(data, size, join_fuzz_line);
	return 0;
}
