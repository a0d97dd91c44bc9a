/*
 * hold: keep a running session, its target halted, past its lease for a
 * time to live, or release it; and how status and list show a hold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"

/* Print who holds: "pid 123 (pytest), uid 0: note", or "its verdict". */
static void
cmd_hold_by(json_t *by)
{
	const char *note = json_string_value(json_object_get(by, "note"));

	if (json_object_get(by, "verdict") != NULL)
		printf("its %s verdict", json_string_value(json_object_get(by,
		    "verdict")));
	else if (json_object_get(by, "pid") != NULL)
		printf("pid %lld (%s), uid %lld", json_integer_value(
		    json_object_get(by, "pid")), json_string_value(
		    json_object_get(by, "name")), json_integer_value(
		    json_object_get(by, "uid")));
	else
		printf("a TCP client");
	if (note != NULL)
		printf(": %s", note);
}

/* status's line of a hold: "held, 9m left, by pid 123 (pytest), uid 0". */
void
cmd_hold_status(json_t *s)
{
	json_t	*h = json_object_get(s, "hold");
	char	 left[32];

	if (h == NULL)
		return;
	fmt_hold_left(json_integer_value(json_object_get(h, "left_ms")), left,
	    sizeof left);
	printf("hold: held, %s, by ", left);
	cmd_hold_by(json_object_get(h, "by"));
	if (json_is_true(json_object_get(h, "lease_ended")))
		printf("; its lease has ended");
	printf("\n");
}

/* hold [--ttl SECONDS] [--no-halt] [--note TEXT] SESSION. */
static int
cmd_hold_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params, *result;

	params = json_pack("{s:O}", "session", self->session);
	if (args_has(a, "ttl"))
		json_object_set_new(params, "ttl", json_integer(args_number(a,
		    "ttl", 0)));
	if (args_has(a, "no-halt"))
		json_object_set_new(params, "halt", json_false());
	if (args_has(a, "note"))
		json_object_set_new(params, "note", json_string(args_get(a,
		    "note")));
	result = client_call(c, "hold", params);
	if (result == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	else if (json_is_null(json_object_get(result, "hold")))
		printf("released\n");
	else
		cmd_hold_status(result);
	json_decref(result);
	return EXIT_OK;
}

/* What help says of each option of hold. */
static const struct cmd_option cmd_hold_options_help[] = {
	{ "ttl", "SECONDS",
	    "how long to hold it (default: the daemon's, 600); 0 releases it" },
	{ "no-halt", NULL,
	    "leave the target running (a gdb-family target is halted)" },
	{ "note", "TEXT",
	    "who holds it and why, shown by status and list --json" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_hold_entry = {
	.name = "hold",
	.usage = "[--ttl SECONDS] [--no-halt] [--note TEXT] SESSION",
	.args = { "ttl# no-halt note:", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_hold_exec,
	.summary = "keep a session, its target halted, past its lease for a time",
	.options = cmd_hold_options_help,
};
