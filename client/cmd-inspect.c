/*
 * Looking into a stopped target, or one halted for the while: break, eval
 * and regs (its frames: cmd-frames.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"

/* The operands from i on joined with single spaces (freed by the caller); NULL if none. */
char *
cmd_inspect_join(const struct args *a, int i)
{
	char	*out = NULL, *next;

	/* Options stop at SESSION, so a "--" after it is an operand. */
	if (args_count(a) > i && strcmp(args_operand(a, i), "--") == 0)
		i++;
	for (; i < args_count(a); i++) {
		if (asprintf(&next, "%s%s%s", out != NULL ? out : "",
		    out != NULL ? " " : "", args_operand(a, i)) < 0)
			client_fatal("out of memory");
		free(out);
		out = next;
	}
	return out;
}

/* A string member of a breakpoint record, or dflt. */
static const char *
cmd_inspect_bkpt_str(json_t *bkpt, const char *key, const char *dflt)
{
	const char	*s = json_string_value(json_object_get(bkpt, key));

	return s != NULL ? s : dflt;
}

/* Whether a record's type is a watchpoint's: gdb lists "hw watchpoint", "read watchpoint", "acc watchpoint". */
static bool
cmd_inspect_is_watchpoint(const char *type)
{
	size_t	len = strlen(type);

	return len >= 10 && strcmp(type + len - 10, "watchpoint") == 0;
}

/*
 * Print a watchpoint record in one line, as break --watch and --list
 * both say it: "watchpoint 5 on board_hook", then its condition and
 * hits. gdb's list names the expression "what", its insert "exp".
 */
static void
cmd_inspect_print_wpt(json_t *wpt)
{
	const char	*exp, *cond, *times;

	exp = cmd_inspect_bkpt_str(wpt, "exp", cmd_inspect_bkpt_str(wpt,
	    "what", cmd_inspect_bkpt_str(wpt, "original-location", "?")));
	cond = cmd_inspect_bkpt_str(wpt, "cond", NULL);
	times = cmd_inspect_bkpt_str(wpt, "times", NULL);
	printf("watchpoint %s on %s", cmd_inspect_bkpt_str(wpt, "number",
	    "?"), exp);
	if (cond != NULL)
		printf(", if %s", cond);
	if (strcmp(cmd_inspect_bkpt_str(wpt, "enabled", "y"), "n") == 0)
		printf(", disabled");
	if (times != NULL)
		printf(", hits %s", times);
	printf("\n");
}

/*
 * Print a breakpoint record in one line: "breakpoint 2 at tally_write
 * (tally.c:17), 0x401196, hits 0", with its condition and "internal".
 */
static void
cmd_inspect_print_bkpt(json_t *bkpt)
{
	const char	*func, *file, *line, *addr, *cond, *times, *type;

	type = cmd_inspect_bkpt_str(bkpt, "type", "breakpoint");
	if (cmd_inspect_is_watchpoint(type)) {
		cmd_inspect_print_wpt(bkpt);
		return;
	}
	func = cmd_inspect_bkpt_str(bkpt, "func", NULL);
	file = cmd_inspect_bkpt_str(bkpt, "file", NULL);
	line = cmd_inspect_bkpt_str(bkpt, "line", "?");
	addr = cmd_inspect_bkpt_str(bkpt, "addr", NULL);
	cond = cmd_inspect_bkpt_str(bkpt, "cond", NULL);
	times = cmd_inspect_bkpt_str(bkpt, "times", NULL);
	printf("%s %s", type, cmd_inspect_bkpt_str(bkpt, "number", "?"));
	if (func != NULL)
		printf(" at %s", func);
	else if (cmd_inspect_bkpt_str(bkpt, "exp", NULL) != NULL)
		printf(" on %s", cmd_inspect_bkpt_str(bkpt, "exp", NULL));
	else if (cmd_inspect_bkpt_str(bkpt, "original-location", NULL) != NULL)
		printf(" at %s", cmd_inspect_bkpt_str(bkpt,
		    "original-location", NULL));
	if (file != NULL)
		printf(" (%s:%s)", fmt_basename(file), line);
	if (addr != NULL)
		printf(", %s", addr);
	if (cond != NULL)
		printf(", if %s", cond);
	if (strcmp(cmd_inspect_bkpt_str(bkpt, "disp", "keep"), "del") == 0)
		printf(", temporary");
	if (strcmp(cmd_inspect_bkpt_str(bkpt, "enabled", "y"), "n") == 0)
		printf(", disabled");
	if (times != NULL)
		printf(", hits %s", times);
	if (json_is_true(json_object_get(bkpt, "internal")))
		printf(", internal");
	printf("\n");
}

/* Print break's answer: the breakpoint made, every one listed, or those deleted. */
static void
cmd_inspect_print_break(struct cmd *self, json_t *result)
{
	json_t	*list, *v;
	size_t	 i;

	(void)self;
	if ((v = json_object_get(result, "breakpoint")) != NULL) {
		cmd_inspect_print_bkpt(v);
		return;
	}
	if ((list = json_object_get(result, "breakpoints")) != NULL) {
		/* As gdb's info breakpoints: an empty list is said, not blank. */
		if (json_array_size(list) == 0)
			printf("no breakpoints\n");
		json_array_foreach(list, i, v)
			cmd_inspect_print_bkpt(v);
		return;
	}
	list = json_object_get(result, "deleted");
	printf("deleted %zu breakpoint%s", json_array_size(list),
	    json_array_size(list) == 1 ? "" : "s");
	json_array_foreach(list, i, v) {
		if (json_is_string(v))
			printf("%s%s", i == 0 ? ": " : " ", json_string_value(v));
		else
			printf("%s%lld", i == 0 ? ": " : " ",
			    (long long)json_integer_value(v));
	}
	printf("\n");
}

/* Whether s is a breakpoint number: digits, no sign. */
static int
cmd_inspect_is_number(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if (!isdigit((unsigned char)*s))
			return 0;
	}
	return 1;
}

/*
 * The options of break given after its LOCATION, as gdb's own break
 * takes them ("break 4 main --temporary"), added to params. Returns 0,
 * or the usage status after saying why.
 */
static int
cmd_inspect_break_tail(struct cmd *self, json_t *params)
{
	static const struct args_template tail = { "condition: temporary "
	    "hardware", 0, 0 };
	struct args	 t;
	char		 cause[256], **argv;
	int		 argc = args_count(&self->args) - 1, i, rv = 0;

	if (argc <= 1)
		return 0;
	/* argv[0] stands for the command's name, as getopt wants it. */
	if ((argv = calloc(argc + 1, sizeof *argv)) == NULL)
		client_fatal("out of memory");
	argv[0] = (char *)"break";
	for (i = 1; i < argc; i++)
		argv[i] = (char *)args_operand(&self->args, i + 1);
	if (args_parse(&t, &tail, NULL, argc, argv, cause, sizeof cause) !=
	    ARGS_OK)
		rv = cmd_usage(self, "%s", strncmp(cause, "too many", 8) == 0 ?
		    "one LOCATION, then only --condition, --temporary, "
		    "--hardware" : cause);
	if (rv == 0 && args_has(&t, "condition"))
		json_object_set_new(params, "condition",
		    json_string(args_get(&t, "condition")));
	if (rv == 0 && args_has(&t, "temporary"))
		json_object_set_new(params, "temporary", json_true());
	if (rv == 0 && args_has(&t, "hardware"))
		json_object_set_new(params, "hardware", json_true());
	args_free(&t);
	free(argv);
	return rv;
}

/* The params of a break insert; NULL after a usage error, its status in *rv. */
static json_t *
cmd_inspect_break_insert(struct cmd *self, int *rv)
{
	const struct args	*a = &self->args;
	json_t			*params;

	if (args_count(a) < 2) {
		*rv = cmd_usage(self, "missing LOCATION");
		return NULL;
	}
	params = cmd_control_params(self);
	json_object_set_new(params, "location",
	    json_string(args_operand(a, 1)));
	if (args_has(a, "condition"))
		json_object_set_new(params, "condition",
		    json_string(args_get(a, "condition")));
	if (args_has(a, "temporary"))
		json_object_set_new(params, "temporary", json_true());
	if (args_has(a, "hardware"))
		json_object_set_new(params, "hardware", json_true());
	if (args_has(a, "watch"))
		json_object_set_new(params, "watch", json_string("write"));
	if ((*rv = cmd_inspect_break_tail(self, params)) != 0) {
		json_decref(params);
		return NULL;
	}
	return params;
}

/* The params of a break --delete; NULL after a usage error, its status in *rv. */
static json_t *
cmd_inspect_break_delete(struct cmd *self, int *rv)
{
	const struct args	*a = &self->args;
	json_t			*params, *numbers;
	int			 i;

	for (i = 1; i < args_count(a); i++) {
		if (!cmd_inspect_is_number(args_operand(a, i))) {
			*rv = cmd_usage(self, "bad breakpoint number: %s",
			    args_operand(a, i));
			return NULL;
		}
	}
	params = cmd_control_params(self);
	json_object_set_new(params, "action", json_string("delete"));
	if (args_count(a) == 1)
		return params;
	numbers = json_array();
	for (i = 1; i < args_count(a); i++)
		json_array_append_new(numbers, json_string(args_operand(a, i)));
	json_object_set_new(params, "numbers", numbers);
	return params;
}

/*
 * break [--condition C] [--temporary] [--hardware] SESSION LOCATION;
 * break --list SESSION; break --delete SESSION [N...]: insert, list or
 * delete breakpoints; a delete without N deletes every user one.
 */
static int
cmd_inspect_break(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params;
	int			 rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	if (args_has(a, "list") && args_has(a, "delete"))
		return cmd_usage(self, "--list and --delete are exclusive");
	if ((args_has(a, "list") || args_has(a, "delete")) &&
	    (args_has(a, "condition") || args_has(a, "temporary") ||
	    args_has(a, "hardware") || args_has(a, "watch")))
		return cmd_usage(self, "--condition, --temporary, --hardware "
		    "and --watch go with a LOCATION, not --%s",
		    args_has(a, "list") ? "list" : "delete");
	if (args_has(a, "list") && args_count(a) > 1)
		return cmd_usage(self, "too many arguments: --list takes "
		    "SESSION only");
	if (args_has(a, "list")) {
		params = cmd_control_params(self);
		json_object_set_new(params, "action", json_string("list"));
	} else if (args_has(a, "delete"))
		params = cmd_inspect_break_delete(self, &rv);
	else
		params = cmd_inspect_break_insert(self, &rv);
	if (params == NULL)
		return rv;
	return cmd_control_run(self, c, "break", params,
	    cmd_inspect_print_break);
}

/* Print eval's value and a newline. */
static void
cmd_inspect_print_value(struct cmd *self, json_t *result)
{
	const char	*value = json_string_value(json_object_get(result,
			    "value"));

	(void)self;
	if (value == NULL)
		client_fatal("reply from the daemon not understood");
	printf("%s\n", value);
}

/* eval SESSION EXPR...: evaluate an expression in the target, print its value. */
static int
cmd_inspect_eval(struct cmd *self, struct client *c)
{
	json_t	*params;
	char	*expr;
	int	 rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	if ((expr = cmd_inspect_join(&self->args, 1)) == NULL)
		return cmd_usage(self, "missing EXPR");
	params = cmd_control_params(self);
	json_object_set_new(params, "expression", json_string(expr));
	free(expr);
	return cmd_control_run(self, c, "eval", params,
	    cmd_inspect_print_value);
}

/* Print registers as "NAME VALUE" lines, the values in one column; those asked for in their order. */
static void
cmd_inspect_print_regs(struct cmd *self, json_t *result)
{
	json_t		*regs = json_object_get(result, "registers"), *v;
	const char	*name;
	size_t		 width = 0;
	int		 i;

	json_object_foreach(regs, name, v) {
		if (strlen(name) > width)
			width = strlen(name);
	}
	if (args_count(&self->args) == 1) {
		json_object_foreach(regs, name, v)
			printf("%-*s %s\n", (int)width, name, json_is_string(v) ?
			    json_string_value(v) : "?");
		return;
	}
	for (i = 1; i < args_count(&self->args); i++) {
		name = args_operand(&self->args, i);
		v = json_object_get(regs, name);
		printf("%-*s %s\n", (int)width, name, json_is_string(v) ?
		    json_string_value(v) : "?");
	}
}

/* regs [--all] SESSION [NAME...]: the general registers, all, or those named. */
static int
cmd_inspect_regs(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params, *names;
	int			 i, rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	for (i = 1; i < args_count(a); i++) {
		if (*args_operand(a, i) == '\0')
			return cmd_usage(self, "an empty register NAME");
	}
	if (args_has(a, "all") && args_count(a) > 1)
		return cmd_usage(self, "--all and NAME are exclusive");
	params = cmd_control_params(self);
	/* As gdb's info registers: the general ones unless --all. */
	if (args_count(a) == 1)
		json_object_set_new(params, "group", json_string(
		    args_has(a, "all") ? "all" : "general"));
	if (args_count(a) > 1) {
		names = json_array();
		for (i = 1; i < args_count(a); i++)
			json_array_append_new(names,
			    json_string(args_operand(a, i)));
		json_object_set_new(params, "names", names);
	}
	return cmd_control_run(self, c, "registers", params,
	    cmd_inspect_print_regs);
}

/* What help says of each option of break. */
static const struct cmd_option cmd_break_options_help[] = {
	{ "condition", "C", "stop only where C holds (also after LOCATION)" },
	{ "temporary", NULL, "delete it at its first hit (also after "
	    "LOCATION)" },
	{ "hardware", NULL, "a hardware breakpoint (also after LOCATION)" },
	{ "watch", NULL, "LOCATION is an expression: stop where it changes "
	    "(a watchpoint; in a replay, resume --reverse runs back to its "
	    "last change)" },
	{ "list", NULL, "list every breakpoint, the session's own fault "
	    "breakpoints as internal" },
	{ "delete", NULL, "delete breakpoints N..., or with no N every "
	    "user breakpoint (never the internal ones)" },
	CMD_INSPECT_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_break_entry = {
	.name = "break",
	.usage = "[--condition C] [--temporary] [--hardware] [--timeout MS] "
	    "SESSION LOCATION | --watch SESSION EXPR | --list SESSION | "
	    "--delete SESSION [N...]",
	.args = { "condition: temporary hardware watch list delete timeout#", 1,
	    -1 },
	.flags = CMD_SESSION,	/* never starts a daemon */
	.exec = cmd_inspect_break,
	.summary = "insert, list or delete a session's breakpoints",
	.options = cmd_break_options_help,
};

/* What help says of each option of eval. */
static const struct cmd_option cmd_eval_options_help[] = {
	CMD_INSPECT_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_eval_entry = {
	.name = "eval",
	.usage = "[--timeout MS] SESSION EXPR...",
	.args = { "timeout#", 1, -1 },
	.flags = CMD_SESSION,
	.exec = cmd_inspect_eval,
	.summary = "evaluate an expression in a session's target, print its "
	    "value",
	.options = cmd_eval_options_help,
};

/* What help says of each option of regs. */
static const struct cmd_option cmd_regs_options_help[] = {
	{ "all", NULL, "every register, vector and system ones too (default: "
	    "the general ones, as gdb's info registers)" },
	CMD_INSPECT_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_regs_entry = {
	.name = "regs",
	.usage = "[--all] [--timeout MS] SESSION [NAME...]",
	.args = { "all timeout#", 1, -1 },
	.flags = CMD_SESSION,
	.exec = cmd_inspect_regs,
	.summary = "print a session's target general registers, all, or those named",
	.options = cmd_regs_options_help,
};
