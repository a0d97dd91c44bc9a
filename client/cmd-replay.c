/*
 * replay BUNDLE: a qemu session that replays the recording a bundle holds
 * (a session launched with --record wrote it), launched as the recorded
 * board was (its machine, CPU and QEMU arguments, from replay.json) with
 * the bundle's firmware; the daemon checks the recording itself.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"

/* The launch params of a replay of the bundle at dir (absolute); NULL after saying why. */
static json_t *
cmd_replay_params(const char *dir)
{
	json_t		*meta, *params, *v;
	json_error_t	 jerr;
	char		 path[PATH_MAX + 32];

	snprintf(path, sizeof path, "%s/replay.json", dir);
	if ((meta = json_load_file(path, 0, &jerr)) == NULL) {
		fprintf(stderr, "dbgctl: %s holds no recording (%s: %s); "
		    "bundles of sessions launched with --record have one\n",
		    dir, path, jerr.text);
		return NULL;
	}
	if (!json_is_string(json_object_get(meta, "machine"))) {
		fprintf(stderr, "dbgctl: %s names no machine\n", path);
		json_decref(meta);
		return NULL;
	}
	snprintf(path, sizeof path, "%s/firmware.elf", dir);
	params = json_pack("{s:s, s:O, s:s, s:[s], s:b}", "kind", "qemu",
	    "machine", json_object_get(meta, "machine"), "replay", dir, "argv",
	    path, "transport", 1);
	if ((v = json_object_get(meta, "cpu")) != NULL && json_is_string(v))
		json_object_set(params, "cpu", v);
	if ((v = json_object_get(meta, "qemu_args")) != NULL && json_is_array(v))
		json_object_set(params, "qemu_args", v);
	json_decref(meta);
	return params;
}

/* replay [--name NAME] [-x CMD]... BUNDLE: replay its recording; print the session's id. */
static int
cmd_replay_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	char			 dir[PATH_MAX];
	json_t			*params, *x, *session;
	const char		*v;
	int			 pos;

	if (realpath(args_operand(a, 0), dir) == NULL) {
		fprintf(stderr, "dbgctl: %s: %s\n", args_operand(a, 0),
		    strerror(errno));
		return EXIT_FAILED;
	}
	if ((params = cmd_replay_params(dir)) == NULL)
		return EXIT_FAILED;
	if (args_has(a, "name"))
		json_object_set_new(params, "name", json_string(args_get(a,
		    "name")));
	if (args_has(a, "x")) {
		x = json_array();
		for (pos = 0; (v = args_next(a, "x", &pos)) != NULL;)
			json_array_append_new(x, json_string(v));
		json_object_set_new(params, "commands", x);
	}
	if ((session = client_call(c, "launch", params)) == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(session);
	else
		printf("%lld\n", (long long)json_integer_value(json_object_get(
		    session, "id")));
	json_decref(session);
	return EXIT_OK;
}

/* What help says of each option of replay. */
static const struct cmd_option cmd_replay_options_help[] = {
	{ "name", "NAME", "a name for the session, usable as SESSION" },
	{ "x", "CMD", "a debugger command to run before the replay runs "
	    "(a breakpoint, say), repeatable, in order" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_replay_entry = {
	.name = "replay",
	.usage = "[--name NAME] [-x CMD]... BUNDLE",
	.args = { "name: x:", 1, 1 },
	.flags = CMD_AUTOSTART,
	.exec = cmd_replay_exec,
	.summary = "replay a bundle's recording under gdb, where resume runs backwards too; print the session's id",
	.options = cmd_replay_options_help,
};
