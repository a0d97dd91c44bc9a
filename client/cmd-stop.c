/* stop: end sessions, and say what became of each. */
#include <stdio.h>
#include <string.h>

#include "dbgctl.h"

/*
 * A stop of ours escalates: say so on stderr as it happens, unless -q
 * (note_arg points at the quiet flag).
 */
static void
cmd_stop_noted(struct client *c, json_t *msg)
{
	json_t		*params = json_object_get(msg, "params");
	const char	*method = json_string_value(json_object_get(msg,
			    "method"));
	const char	*step = json_string_value(json_object_get(params,
			    "step"));

	if (method == NULL || strcmp(method, "session.stopping") != 0 ||
	    json_integer_value(json_object_get(params, "request")) !=
	    c->want_id || step == NULL || *(int *)c->note_arg)
		return;
	client_warn("sending SIG%s to session %lld after %lld ms",
	    strcmp(step, "kill") == 0 ? "KILL" : strcmp(step, "term") == 0 ?
	    "TERM" : step, (long long)json_integer_value(json_object_get(
	    params, "session")), (long long)json_integer_value(
	    json_object_get(params, "after_ms")));
}

/* Print "session 4 (web): exit code 0, by quit" for a stopped session. */
void
cmd_stop_print_session(json_t *s)
{
	const char	*name = json_string_value(json_object_get(s, "name"));
	const char	*by, *error;
	json_t		*rec;
	char		 buf[64];

	printf("session %lld", (long long)json_integer_value(
	    json_object_get(s, "id")));
	if (name != NULL)
		printf(" (%s)", name);
	if ((rec = json_object_get(s, "exit")) != NULL) {
		fmt_exit(rec, buf, sizeof buf);
		by = json_string_value(json_object_get(rec, "by"));
		printf(": exit %s%s%s", buf, by != NULL ? ", by " : "",
		    by != NULL ? by : "");
	} else if ((error = json_string_value(json_object_get(s, "error")))
	    != NULL)
		printf(": %s: %s", json_string_value(json_object_get(s,
		    "state")), error);
	else
		printf(": %s", json_string_value(json_object_get(s, "state")));
	if ((rec = json_object_get(s, "server_exit")) != NULL) {
		fmt_exit(rec, buf, sizeof buf);
		by = json_string_value(json_object_get(rec, "by"));
		printf("; server exit %s%s%s", buf, by != NULL ? ", by " : "",
		    by != NULL ? by : "");
	}
	/* The firmware's own exit, where it said it by semihosting. */
	rec = json_object_get(s, "target");
	by = json_string_value(json_object_get(rec, "by"));
	if (by != NULL && strcmp(by, "semihosting") == 0) {
		fmt_exit(rec, buf, sizeof buf);
		printf("; firmware exit %s, by semihosting", buf);
	}
	printf("\n");
}

/*
 * What a stop did, on stdout: a line for each session with how it ended,
 * then, for --all or several, "stopped N sessions".
 */
static void
cmd_stop_print(json_t *result, int all)
{
	json_t		*s;
	json_int_t	 n = json_integer_value(json_object_get(result,
			    "stopped"));
	size_t		 i;

	json_array_foreach(json_object_get(result, "sessions"), i, s)
		cmd_stop_print_session(s);
	if (json_is_true(json_object_get(result, "truncated")))
		printf("(and more: see list)\n");
	if (all || n != 1)
		printf("stopped %lld session%s\n", (long long)n, n == 1 ? "" :
		    "s");
}

/* stop: end sessions, returning once every process of them is gone. */
static int
cmd_stop_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params, *list, *result;
	int			 i, quiet = args_has(a, "q");

	if (args_has(a, "all") && args_count(a) > 0)
		return cmd_usage(self, "--all and SESSION are exclusive");
	if (!args_has(a, "all") && args_count(a) == 0)
		return cmd_usage(self, "missing SESSION or --all");

	params = json_object();
	if (args_has(a, "all"))
		json_object_set_new(params, "all", json_true());
	else {
		list = json_array();
		for (i = 0; i < args_count(a); i++)
			json_array_append_new(list,
			    cmd_session_ref(args_operand(a, i)));
		json_object_set_new(params, "sessions", list);
	}
	if (args_has(a, "timeout"))
		json_object_set_new(params, "timeout",
		    json_integer(args_number(a, "timeout", 0)));
	c->note = cmd_stop_noted;
	c->note_arg = &quiet;
	result = client_call(c, "stop", params);
	c->note = NULL;
	if (result == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	else if (!quiet)
		cmd_stop_print(result, args_has(a, "all"));
	json_decref(result);
	return EXIT_OK;
}

/* What help says of each option of stop. */
static const struct cmd_option cmd_stop_options_help[] = {
	{ "timeout", "MS",
	    "the stop timeout, before SIGKILL (default: each session's "
	    "--stop-timeout, 5000)" },
	{ "all", NULL,
	    "every session that has not ended" },
	{ "q", NULL,
	    "print nothing: neither how each ended nor the escalations" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_stop_entry = {
	.name = "stop",
	.usage = "[-q] [--timeout MS] (SESSION... | --all)",
	.args = { "timeout# all q", 0, -1 },
	.flags = CMD_AUTOSTART,
	.exec = cmd_stop_exec,
	.summary = "stop sessions: quit, SIGTERM, SIGKILL at the timeout; say how each ended",
	.options = cmd_stop_options_help,
};
