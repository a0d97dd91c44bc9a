/*
 * rm and prune: ended sessions out of the daemon's table, with their log
 * and core files unless --keep-files. Neither starts a daemon: without
 * one there is nothing to remove.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dbgctl.h"

/* Ask for method with params (keep_files added if asked); the result. */
static int
cmd_rm_call(struct cmd *self, struct client *c, const char *method,
    json_t *params, int say)
{
	json_t	*result;
	size_t	 n;

	if (args_has(&self->args, "keep-files"))
		json_object_set_new(params, "keep_files", json_true());
	if ((result = client_call(c, method, params)) == NULL)
		return client_error(c);
	n = json_array_size(json_object_get(result, "removed"));
	if (c->json)
		cmd_print_json(result);
	else if (say)
		printf("removed %zu session%s\n", n, n == 1 ? "" : "s");
	json_decref(result);
	return EXIT_OK;
}

/* rm [--keep-files] SESSION...: remove ended sessions, all or none. */
static int
cmd_rm_exec(struct cmd *self, struct client *c)
{
	json_t	*list = json_array();
	int	 i;

	for (i = 0; i < args_count(&self->args); i++)
		json_array_append_new(list,
		    cmd_session_ref(args_operand(&self->args, i)));
	return cmd_rm_call(self, c, "remove", json_pack("{s:o}", "sessions",
	    list), 0);
}

/* The one option of rm and prune, for help. */
static const struct cmd_option cmd_rm_options_help[] = {
	{ "keep-files", NULL,
	    "keep the sessions' logs and core files on disk (default: removed)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_rm_entry = {
	.name = "rm",
	.usage = "[--keep-files] SESSION...",
	.args = { "keep-files", 1, -1 },
	.flags = 0,
	.exec = cmd_rm_exec,
	.summary = "remove ended sessions, with their logs and cores; never a live one",
	.options = cmd_rm_options_help,
};

/* prune [--keep-files]: remove every ended session, and say how many. */
static int
cmd_prune_exec(struct cmd *self, struct client *c)
{
	return cmd_rm_call(self, c, "prune", json_object(), 1);
}

const struct cmd_entry cmd_prune_entry = {
	.name = "prune",
	.usage = "[--keep-files]",
	.args = { "keep-files", 0, 0 },
	.flags = 0,
	.exec = cmd_prune_exec,
	.summary = "remove every ended session, as rm does; say how many",
	.options = cmd_rm_options_help,
};
