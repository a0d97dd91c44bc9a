/* exec: a debugger command run in a session, its result printed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* The words after SESSION, joined with single spaces (freed by the caller). */
static char *
cmd_exec_join(const struct args *a)
{
	char	*cmd = NULL, *next;
	int	 i = 1;

	/* Options stop at SESSION, so the "--" after it is an operand. */
	if (args_count(a) > 1 && strcmp(args_operand(a, 1), "--") == 0)
		i++;
	for (; i < args_count(a); i++) {
		if (asprintf(&next, "%s%s%s", cmd != NULL ? cmd : "",
		    cmd != NULL ? " " : "", args_operand(a, i)) < 0)
			client_fatal("out of memory");
		free(cmd);
		cmd = next;
	}
	return cmd;
}

/* Print what a command gave: its text, or an MI command's result as JSON. */
void
cmd_exec_print(const char *cmd, json_t *result)
{
	const char	*out = json_string_value(json_object_get(result,
			    "output"));
	size_t		 len = out != NULL ? strlen(out) : 0;

	if (*cmd != '-') {
		if (cmd_write_all(STDOUT_FILENO, out, len) != 0)
			cmd_stdout_failed();
		return;
	}
	if (cmd_print_json(result) != 0)
		cmd_stdout_failed();
}

/* exec [--timeout MS] SESSION -- WORD...: run a debugger command. */
static int
cmd_exec_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params, *result;
	char			*cmd;

	if ((cmd = cmd_exec_join(a)) == NULL)
		return cmd_usage(self, "no command after the session");
	params = json_pack("{s:O, s:s}", "session", self->session, "command",
	    cmd);
	if (args_has(a, "timeout"))
		json_object_set_new(params, "timeout",
		    json_integer(args_number(a, "timeout", 0)));
	if ((result = client_call(c, "exec", params)) == NULL) {
		free(cmd);
		return client_error(c);
	}
	if (c->json)
		cmd_print_json(result);
	else
		cmd_exec_print(cmd, result);
	json_decref(result);
	free(cmd);
	return EXIT_OK;
}

/* What help says of each option of exec. */
static const struct cmd_option cmd_exec_options_help[] = {
	{ "timeout", "MS",
	    "how long the debugger has to answer (default: 10000)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_exec_entry = {
	.name = "exec",
	.usage = "[--timeout MS] SESSION -- COMMAND...",
	.args = { "timeout#", 2, -1 },
	.flags = CMD_AUTOSTART | CMD_SESSION,
	.exec = cmd_exec_exec,
	.summary = "run a debugger command in a session and print its result",
	.options = cmd_exec_options_help,
};
