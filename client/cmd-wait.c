/*
 * wait: until a session has ended, then exit with why: its program's
 * status, or the verdict that ended it (a deadline or a silence, a fault).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"

/* A wait sent again after a restart has what is left of its --timeout. */
static void
cmd_wait_again(struct client *c, json_t *params)
{
	long long	*deadline = c->again_arg, left;

	if (json_object_get(params, "timeout") == NULL)
		return;
	left = *deadline - reconnect_now();
	json_object_set_new(params, "timeout", json_integer(left > 0 ? left :
	    0));
}

/* The exit status of an ended session: its verdict's, else its program's. */
static int
cmd_wait_status(json_t *session)
{
	const char *kind = json_string_value(json_object_get(json_object_get(
	    session, "verdict"), "kind"));

	if (kind == NULL)
		return cmd_session_status(session);
	if (strcmp(kind, "fault") == 0)
		return EXIT_FAULT;
	return EXIT_VERDICT;
}

/*
 * Print how the session ended, as stop does, the fault its target met as
 * status shows it, and the verdict's lines.
 */
static void
cmd_wait_print(json_t *session)
{
	cmd_stop_print_session(session);
	if (json_object_get(session, "fault") != NULL)
		cmd_status_fault(json_object_get(session, "fault"));
	cmd_deadline_status(session);
}

/* wait [--timeout MS] SESSION: until it has ended. */
static int
cmd_wait_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params, *session;
	long long		 deadline;
	int			 rv;

	params = json_pack("{s:O}", "session", self->session);
	if (args_has(a, "timeout"))
		json_object_set_new(params, "timeout", json_integer(args_number(a,
		    "timeout", 0)));
	/* Sent again to the daemon that adopts the session, if this one dies. */
	deadline = reconnect_now() + args_number(a, "timeout", 0);
	c->resume = 1;
	c->again = cmd_wait_again;
	c->again_arg = &deadline;
	session = client_call(c, "wait", params);
	/* A verdict that holds the session ends the wait: say which. */
	if (session == NULL) {
		rv = client_error(c);
		if (strcmp(c->error.kind, "verdict") == 0 && !c->json)
			cmd_deadline_status(c->error.data);
		return rv;
	}
	if (c->json)
		cmd_print_json(session);
	else
		cmd_wait_print(session);
	rv = cmd_wait_status(session);
	json_decref(session);
	return rv;
}

/* What help says of each option of wait. */
static const struct cmd_option cmd_wait_options_help[] = {
	{ "timeout", "MS",
	    "give up after MS milliseconds, with status 4 (default: wait as "
	    "long as it takes)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_wait_entry = {
	.name = "wait",
	.usage = "[--timeout MS] SESSION",
	.args = { "timeout#", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_wait_exec,
	.summary = "wait until a session has ended; exit with its status or verdict",
	.options = cmd_wait_options_help,
};
