/*
 * The frames of a halted target: where it is (where), the stack that led
 * there (bt), and where each of its threads is (threads).
 */
#include <stdio.h>

#include "dbgctl.h"

/* The most frames bt asks for, the daemon's bound. */
#define CMD_FRAMES_MAX	4096

/* Print " at FILE:LINE" of a frame that names its file. */
static void
cmd_frames_print_file(json_t *f)
{
	const char *file = json_string_value(json_object_get(f, "file"));

	if (file != NULL)
		printf(" at %s:%lld", file, (long long)json_integer_value(
		    json_object_get(f, "line")));
}

/* Print a frame as one line, "main at /src/echo.c:12, 0x401136". */
static void
cmd_frames_print_line(json_t *f)
{
	const char	*func = json_string_value(json_object_get(f, "func"));
	const char	*addr = json_string_value(json_object_get(f, "addr"));

	printf("%s", func != NULL ? func : "??");
	cmd_frames_print_file(f);
	printf("%s%s\n", addr != NULL ? ", " : "", addr != NULL ? addr : "");
}

/*
 * Print where's frame as one line, "main at /src/echo.c:12, 0x401136" (a
 * frame without debug information has its function or its address only),
 * and at a board's fault a second, "stacked pc 0x... in FUNC at FILE:LINE".
 */
static void
cmd_frames_print_frame(struct cmd *self, json_t *result)
{
	json_t		*f = json_object_get(result, "frame");
	json_t		*st = json_object_get(result, "stacked");
	const char	*func;

	(void)self;
	if (!json_is_object(f))
		client_fatal("reply from the daemon not understood");
	cmd_frames_print_line(f);
	if (!json_is_object(st))
		return;
	func = json_string_value(json_object_get(st, "func"));
	printf("stacked pc %s", json_string_value(json_object_get(st, "pc")) ?:
	    "?");
	if (func != NULL)
		printf(" in %s", func);
	cmd_frames_print_file(st);
	printf("\n");
}

/* where SESSION: print the current frame of a halted target. */
static int
cmd_frames_where(struct cmd *self, struct client *c)
{
	int rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	return cmd_control_run(self, c, "where", cmd_control_params(self),
	    cmd_frames_print_frame);
}

/*
 * Print backtrace's frames a line each, "#1  main at /src/echo.c:12,
 * 0x401136", and a last line when the stack goes on past them.
 */
static void
cmd_frames_print_frames(struct cmd *self, json_t *result)
{
	json_t	*frames = json_object_get(result, "frames"), *f;
	size_t	 i;

	(void)self;
	if (!json_is_array(frames))
		client_fatal("reply from the daemon not understood");
	json_array_foreach(frames, i, f) {
		printf("#%-2lld ", (long long)json_integer_value(
		    json_object_get(f, "level")));
		cmd_frames_print_line(f);
	}
	if (json_is_true(json_object_get(result, "more")))
		printf("(the stack goes on: --limit more than %zu lists more)\n",
		    i);
}

/* bt SESSION: print the frames of a halted target, innermost first. */
static int
cmd_frames_backtrace(struct cmd *self, struct client *c)
{
	json_t	*params;
	int	 rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	if (args_has(&self->args, "limit") && (args_number(&self->args,
	    "limit", 0) < 1 || args_number(&self->args, "limit", 0) >
	    CMD_FRAMES_MAX))
		return cmd_usage(self, "bad --limit: %s (1 to %d frames)",
		    args_get(&self->args, "limit"), CMD_FRAMES_MAX);
	params = cmd_control_params(self);
	if (args_has(&self->args, "limit"))
		json_object_set_new(params, "limit", json_integer(
		    args_number(&self->args, "limit", 0)));
	return cmd_control_run(self, c, "backtrace", params,
	    cmd_frames_print_frames);
}

/*
 * Print threads' threads a line each, gdb's info threads: "* 1  Thread
 * 0x7f... (LWP 42) "echo"  main at /src/echo.c:12, 0x401136", a star at
 * the current one.
 */
static void
cmd_frames_print_threads(struct cmd *self, json_t *result)
{
	json_t		*threads = json_object_get(result, "threads"), *t, *f;
	const char	*name;
	size_t		 i;

	(void)self;
	if (!json_is_array(threads))
		client_fatal("reply from the daemon not understood");
	json_array_foreach(threads, i, t) {
		name = json_string_value(json_object_get(t, "name"));
		printf("%c %-2s %s", json_is_true(json_object_get(t,
		    "current")) ? '*' : ' ', json_string_value(
		    json_object_get(t, "id")) ?: "?", json_string_value(
		    json_object_get(t, "target_id")) ?: "");
		if (name != NULL)
			printf(" \"%s\"", name);
		if (json_is_object(f = json_object_get(t, "frame"))) {
			printf("  ");
			cmd_frames_print_line(f);
		} else
			printf("  (%s)\n", json_string_value(json_object_get(t,
			    "state")) ?: "no frame");
	}
}

/* threads SESSION: print the threads of a halted target, each where it is. */
static int
cmd_frames_threads(struct cmd *self, struct client *c)
{
	int rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	return cmd_control_run(self, c, "threads", cmd_control_params(self),
	    cmd_frames_print_threads);
}

/* What help says of each option of where. */
static const struct cmd_option cmd_where_options_help[] = {
	CMD_INSPECT_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_where_entry = {
	.name = "where",
	.usage = "[--timeout MS] SESSION",
	.args = { "timeout#", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_frames_where,
	.summary = "print the current frame of a session's halted target",
	.options = cmd_where_options_help,
};

/* What help says of each option of bt. */
static const struct cmd_option cmd_bt_options_help[] = {
	{ "limit", "N", "list at most N frames, innermost first (default: "
	    "64, at most 4096)" },
	CMD_INSPECT_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_bt_entry = {
	.name = "bt",
	.usage = "[--limit N] [--timeout MS] SESSION",
	.args = { "limit# timeout#", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_frames_backtrace,
	.summary = "print the frames of a session's halted target, innermost "
	    "first",
	.options = cmd_bt_options_help,
};

/* What help says of each option of threads. */
static const struct cmd_option cmd_threads_options_help[] = {
	CMD_INSPECT_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_threads_entry = {
	.name = "threads",
	.usage = "[--timeout MS] SESSION",
	.args = { "timeout#", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_frames_threads,
	.summary = "print the threads of a session's halted target, each "
	    "where it is",
	.options = cmd_threads_options_help,
};
