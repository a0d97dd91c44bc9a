/*
 * rtt [--hz N] [--address ADDR] SESSION: start reading the target's RTT
 * channels (or change the poll rate), and print them: each up-channel
 * is a stream rttN for logs and expect, each down-channel takes
 * send --stream rttN.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dbgctl.h"

/* One line a channel: its stream, up or down, its name and size. */
static void
cmd_rtt_print_list(json_t *list, const char *way)
{
	const char	*name;
	json_t		*e;
	size_t		 i;

	json_array_foreach(list, i, e) {
		name = json_string_value(json_object_get(e, "name"));
		printf("%s %s %s (%lld bytes)\n", json_string_value(
		    json_object_get(e, "stream")), way, name != NULL ? name :
		    "-", (long long)json_integer_value(json_object_get(e,
		    "size")));
	}
}

/* The control block, the rate, then the channels. */
static void
cmd_rtt_print(json_t *r)
{
	printf("control block at %s (%s), polled %lld times a second\n",
	    json_string_value(json_object_get(r, "address")),
	    json_string_value(json_object_get(r, "found_by")),
	    (long long)json_integer_value(json_object_get(r, "poll_hz")));
	cmd_rtt_print_list(json_object_get(r, "up"), "up");
	cmd_rtt_print_list(json_object_get(r, "down"), "down");
}

/* rtt [--hz N] [--address ADDR] SESSION */
static int
cmd_rtt_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params, *result;

	params = json_pack("{s:O}", "session", self->session);
	if (args_has(a, "hz"))
		json_object_set_new(params, "poll_hz", json_integer(
		    args_number(a, "hz", 0)));
	if (args_get(a, "address") != NULL)
		json_object_set_new(params, "address", json_string(args_get(a,
		    "address")));
	if ((result = client_call(c, "rtt", params)) == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	else
		cmd_rtt_print(result);
	json_decref(result);
	return EXIT_OK;
}

static const struct cmd_option cmd_rtt_options[] = {
	{ "hz", "N", "poll the channels N times a second (default 100, at "
	    "most 1000)" },
	{ "address", "ADDR", "the control block's address or an expression "
	    "(default: the symbol _SEGGER_RTT, else a scan of RAM)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_rtt_entry = {
	.name = "rtt",
	.usage = "[--hz N] [--address ADDR] SESSION",
	.args = { "hz# address:", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_rtt_exec,
	.summary = "read the target's RTT channels as streams rtt0.., while it "
	    "runs",
	.options = cmd_rtt_options,
};
