/* Run control: halt, resume, reset, load and wait-stop, each answered with the target record it left. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/*
 * The --timeout of a command that has one, checked: a count the daemon
 * takes (0..2^31 ms). Returns 0, or the usage status after saying why.
 */
int
cmd_control_check(struct cmd *self)
{
	const struct args	*a = &self->args;

	if (args_known(a, "timeout") == -1 || args_known(a, "timeout") >=
	    a->nown)
		return 0;
	if (args_number(a, "timeout", 0) > INT32_MAX)
		return cmd_usage(self, "bad --timeout: %s (at most %d ms)",
		    args_get(a, "timeout"), INT32_MAX);
	return 0;
}

/* The params every verb starts from: the session and the command's --timeout. */
json_t *
cmd_control_params(const struct cmd *self)
{
	const struct args	*a = &self->args;
	json_t			*params;

	params = json_pack("{s:O}", "session", self->session);
	if (args_known(a, "timeout") != -1 && args_known(a, "timeout") <
	    a->nown && args_has(a, "timeout"))
		json_object_set_new(params, "timeout",
		    json_integer(args_number(a, "timeout", 0)));
	return params;
}

/*
 * Print a target record as one line to fp: "session 4: stopped
 * (breakpoint-hit, breakpoint 2) at uart_putc (board.c:41), seq 7", then
 * tail (NULL: nothing).
 */
void
cmd_control_print_target(const struct cmd *self, FILE *fp, json_t *target,
    const char *tail)
{
	char	buf[1024];

	fmt_stop(target, buf, sizeof buf);
	fprintf(fp, "%ssession %s: %s%s\n", fp == stderr ? "dbgctl: " : "",
	    args_operand(&self->args, 0), buf, tail != NULL ? tail : "");
}

/*
 * Say why a verb failed, the daemon's words first, then, after a timeout
 * or an end, where the target was then (the error's data.target): what a
 * script needs to know next. The status the error's kind maps to.
 */
int
cmd_control_failed(const struct cmd *self, struct client *c)
{
	json_t	*target = json_object_get(c->error.data, "target");
	int	 rv;

	rv = client_error(c);
	if (json_is_object(target) && (strcmp(c->error.kind, "timeout") == 0 ||
	    strcmp(c->error.kind, "not_running") == 0))
		cmd_control_print_target(self, stderr, target, NULL);
	return rv;
}

/*
 * Call method with params (stolen) and print its result: with --json as
 * it came, else through print. The exit status.
 */
int
cmd_control_run(struct cmd *self, struct client *c, const char *method,
    json_t *params, void (*print)(struct cmd *, json_t *))
{
	json_t	*result;

	if ((result = client_call(c, method, params)) == NULL)
		return cmd_control_failed(self, c);
	if (c->json)
		cmd_print_json(result);
	else
		print(self, result);
	json_decref(result);
	return EXIT_OK;
}

/* Print the target record of a verb's answer, with "(already)" if nothing changed. */
static void
cmd_control_print_answer(struct cmd *self, json_t *result)
{
	cmd_control_print_target(self, stdout, json_object_get(result,
	    "target"), json_is_true(json_object_get(result, "already")) ?
	    " (already)" : NULL);
}

/* Print the answer of a reset or a load: the target, what was loaded, the fault cleared. */
static void
cmd_control_print_reset(struct cmd *self, json_t *result)
{
	const char	*file = json_string_value(json_object_get(result,
			    "file"));
	char		 tail[PATH_MAX + 64] = "";

	if (file != NULL)
		snprintf(tail, sizeof tail, "; loaded %s", file);
	if (json_is_true(json_object_get(result, "fault_cleared")))
		strlcat(tail, "; fault cleared", sizeof tail);
	cmd_control_print_target(self, stdout, json_object_get(result,
	    "target"), tail);
}

/* Print a bare target record (wait_target's result). */
static void
cmd_control_print_record(struct cmd *self, json_t *result)
{
	cmd_control_print_target(self, stdout, result, NULL);
}

/* halt [--timeout MS] SESSION: interrupt the target, print the stop. */
static int
cmd_control_halt(struct cmd *self, struct client *c)
{
	int	rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	return cmd_control_run(self, c, "halt", cmd_control_params(self),
	    cmd_control_print_answer);
}

/* resume's ways to go on, as options, in the order help lists them. */
static const char *const cmd_control_hows[] = {
	"step", "next", "finish", "stepi", "nexti", "until", NULL
};

/*
 * The way resume goes on from its options (NULL: continue); -1 in *bad
 * after a usage error, two of them given.
 */
static const char *
cmd_control_how(struct cmd *self, int *bad)
{
	const char	*how = NULL;
	size_t		 i;

	*bad = 0;
	for (i = 0; cmd_control_hows[i] != NULL; i++) {
		if (!args_has(&self->args, cmd_control_hows[i]))
			continue;
		if (how != NULL) {
			*bad = cmd_usage(self, "--%s and --%s are exclusive",
			    how, cmd_control_hows[i]);
			return NULL;
		}
		how = cmd_control_hows[i];
	}
	return how;
}

/*
 * resume [--step|--next|--finish|--stepi|--nexti|--until LOC] [--reverse]
 * [--wait] [--timeout MS] [--halt-on-timeout] SESSION: let the target go
 * on (backwards, in a replay); with --wait, answer its next stop, never
 * one from before.
 */
static int
cmd_control_resume(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	const char		*how;
	json_t			*params;
	int			 rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	if ((how = cmd_control_how(self, &rv)) == NULL && rv != 0)
		return rv;
	if (args_has(a, "halt-on-timeout") && !args_has(a, "wait"))
		return cmd_usage(self, "--halt-on-timeout needs --wait");
	if (how != NULL && strcmp(how, "until") == 0 &&
	    *args_get(a, "until") == '\0')
		return cmd_usage(self, "--until needs a location");
	params = cmd_control_params(self);
	if (how != NULL)
		json_object_set_new(params, "how", json_string(how));
	if (args_has(a, "until"))
		json_object_set_new(params, "location",
		    json_string(args_get(a, "until")));
	if (args_has(a, "wait"))
		json_object_set_new(params, "until_stop", json_true());
	if (args_has(a, "halt-on-timeout"))
		json_object_set_new(params, "halt_on_timeout", json_true());
	if (args_has(a, "reverse"))
		json_object_set_new(params, "reverse", json_true());
	return cmd_control_run(self, c, "resume", params,
	    cmd_control_print_answer);
}

/* reset [--halt] [--timeout MS] SESSION: the kind's reset recipe. */
static int
cmd_control_reset(struct cmd *self, struct client *c)
{
	json_t	*params;
	int	 rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	params = cmd_control_params(self);
	if (args_has(&self->args, "halt"))
		json_object_set_new(params, "halt", json_true());
	return cmd_control_run(self, c, "reset", params,
	    cmd_control_print_reset);
}

/*
 * Set "file" to path made absolute from our directory: the daemon, and
 * the debugger it runs, have their own. -1 on error, said.
 */
static int
cmd_control_file(json_t *params, const char *path)
{
	char	here[PATH_MAX], *abs;
	int	rv;

	if (*path == '/')
		return json_object_set_new(params, "file", json_string(path));
	if (getcwd(here, sizeof here) == NULL) {
		client_warn("getcwd: %s", strerror(errno));
		return -1;
	}
	if (asprintf(&abs, "%s%s%s", here, strcmp(here, "/") == 0 ? "" : "/",
	    path) == -1)
		client_fatal("out of memory");
	rv = json_object_set_new(params, "file", json_string(abs));
	free(abs);
	return rv;
}

/* load [--file PATH] [--halt] [--timeout MS] SESSION: write the program to the target, reset it. */
static int
cmd_control_load(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params;
	int			 rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	if (args_has(a, "file") && *args_get(a, "file") == '\0')
		return cmd_usage(self, "--file needs a path");
	params = cmd_control_params(self);
	if (args_has(a, "file") && cmd_control_file(params,
	    args_get(a, "file")) != 0) {
		json_decref(params);
		return EXIT_FAILED;
	}
	if (args_has(a, "halt"))
		json_object_set_new(params, "halt", json_true());
	return cmd_control_run(self, c, "load", params,
	    cmd_control_print_reset);
}

/* wait-stop [--after SEQ] [--timeout MS] SESSION: the first stop (after SEQ), printed. */
static int
cmd_control_wait_stop(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params;
	int			 rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	params = cmd_control_params(self);
	json_object_set_new(params, "state", json_string("stopped"));
	if (args_has(a, "after"))
		json_object_set_new(params, "after",
		    json_integer(args_number(a, "after", 0)));
	return cmd_control_run(self, c, "wait_target", params,
	    cmd_control_print_record);
}

/* What help says of --timeout for the verbs. */
#define CMD_CONTROL_TIMEOUT_HELP \
	{ "timeout", "MS", "exit 4 if the debugger has not done it by then " \
	    "(default: 10000)" }

/* What help says of each option of halt. */
static const struct cmd_option cmd_halt_options_help[] = {
	CMD_CONTROL_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_halt_entry = {
	.name = "halt",
	.usage = "[--timeout MS] SESSION",
	.args = { "timeout#", 1, 1 },
	.flags = CMD_SESSION,	/* never starts a daemon */
	.exec = cmd_control_halt,
	.summary = "interrupt a session's target and print where it stopped",
	.options = cmd_halt_options_help,
};

/* What help says of each option of resume. */
static const struct cmd_option cmd_resume_options_help[] = {
	{ "step", NULL, "step one source line, into calls" },
	{ "next", NULL, "step one source line, over calls" },
	{ "finish", NULL, "run until the current function returns" },
	{ "stepi", NULL, "step one instruction, into calls" },
	{ "nexti", NULL, "step one instruction, over calls" },
	{ "until", "LOC", "run until LOC, or the current frame returns" },
	{ "wait", NULL, "wait for the next stop, not one from before, and "
	    "print it (default: print the running target)" },
	{ "timeout", "MS", "exit 4 if --wait saw no stop by then, the "
	    "target left running (default: 10000)" },
	{ "halt-on-timeout", NULL, "with --wait, halt the target at the "
	    "timeout" },
	{ "reverse", NULL, "run backwards (a replay's target: dbgctl "
	    "replay), to the previous breakpoint or watchpoint hit" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_resume_entry = {
	.name = "resume",
	.usage = "[--step|--next|--finish|--stepi|--nexti|--until LOC] "
	    "[--reverse] [--wait] [--timeout MS] [--halt-on-timeout] SESSION",
	.args = { "step next finish stepi nexti until: wait timeout# "
	    "halt-on-timeout reverse", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_control_resume,
	.summary = "let a session's target run on (continue, step, ...)",
	.options = cmd_resume_options_help,
};

/* What help says of each option of reset. */
static const struct cmd_option cmd_reset_options_help[] = {
	{ "halt", NULL, "leave the target halted after the reset (default: "
	    "running)" },
	CMD_CONTROL_TIMEOUT_HELP,
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_reset_entry = {
	.name = "reset",
	.usage = "[--halt] [--timeout MS] SESSION",
	.args = { "halt timeout#", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_control_reset,
	.summary = "reset a session's target by its kind's recipe; clears "
	    "the fault",
	.options = cmd_reset_options_help,
};

/* What help says of each option of load. */
static const struct cmd_option cmd_load_options_help[] = {
	{ "file", "PATH", "the program to write (default: the session's)" },
	{ "halt", NULL, "leave the target halted after the reset that "
	    "follows (default: running)" },
	{ "timeout", "MS", "exit 4 if the load and reset are not done by "
	    "then (default: 60000)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_load_entry = {
	.name = "load",
	.usage = "[--file PATH] [--halt] [--timeout MS] SESSION",
	.args = { "file: halt timeout#", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_control_load,
	.summary = "write a program to a session's target, then reset it",
	.options = cmd_load_options_help,
};

/* What help says of each option of wait-stop. */
static const struct cmd_option cmd_wait_stop_options_help[] = {
	{ "after", "SEQ", "the first stop whose seq is greater (default: "
	    "the current stop, else the next one)" },
	{ "timeout", "MS", "exit 4 if none came by then (default: 10000)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_wait_stop_entry = {
	.name = "wait-stop",
	.usage = "[--after SEQ] [--timeout MS] SESSION",
	.args = { "after# timeout#", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_control_wait_stop,
	.summary = "wait until a session's target stops, print the stop",
	.options = cmd_wait_stop_options_help,
};
