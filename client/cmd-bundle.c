/*
 * bundle [--tar] [--no-core] SESSION PATH: have the daemon write the
 * session's bundle (its record, logs, transcripts, backtraces, registers,
 * a core where cheap) at PATH, a new directory or with --tar a .tar.gz;
 * print its path. A relative PATH is taken from here: the daemon wants
 * it absolute.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* PATH made absolute from the working directory; NULL, said, if it cannot be. */
char *
cmd_bundle_path(const char *path)
{
	char	here[PATH_MAX], *abs;

	if (*path == '/') {
		if ((abs = strdup(path)) == NULL)
			client_fatal("out of memory");
		return abs;
	}
	if (getcwd(here, sizeof here) == NULL) {
		client_warn("getcwd: %s", strerror(errno));
		return NULL;
	}
	if (asprintf(&abs, "%s%s%s", here, strcmp(here, "/") == 0 ? "" : "/",
	    path) == -1)
		client_fatal("out of memory");
	return abs;
}

/* Print what the bundle left out: files cut by the bound, things not gathered. */
static void
cmd_bundle_print(json_t *result)
{
	json_t	*e;
	size_t	 i;

	printf("%s\n", json_string_value(json_object_get(result, "path")));
	json_array_foreach(json_object_get(result, "cut"), i, e)
		fprintf(stderr, "dbgctl: bundle: %s cut to its last %lld of "
		    "%lld bytes\n", json_string_value(json_object_get(e, "name")),
		    (long long)json_integer_value(json_object_get(e, "kept")),
		    (long long)json_integer_value(json_object_get(e, "size")));
}

/* status's line of the session's automatic bundle: "bundle: PATH (reason)". */
void
cmd_bundle_status(json_t *s)
{
	json_t		*b = json_object_get(s, "bundle");
	const char	*error;

	if (b == NULL)
		return;
	error = json_string_value(json_object_get(b, "error"));
	printf("bundle: %s (%s)%s%s\n", json_string_value(json_object_get(b,
	    "path")), json_string_value(json_object_get(b, "reason")),
	    error != NULL ? ", not written: " : "", error != NULL ? error : "");
}

/* bundle [--tar] [--no-core] SESSION PATH */
static int
cmd_bundle_exec(struct cmd *self, struct client *c)
{
	char	*path;
	json_t	*params, *result;

	if ((path = cmd_bundle_path(args_operand(&self->args, 1))) == NULL)
		return EXIT_FAILED;
	params = json_pack("{s:O, s:s, s:b, s:b}", "session", self->session,
	    "path", path, "tar", args_has(&self->args, "tar"), "core",
	    !args_has(&self->args, "no-core"));
	free(path);
	if ((result = client_call(c, "bundle", params)) == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	else
		cmd_bundle_print(result);
	json_decref(result);
	return EXIT_OK;
}

static const struct cmd_option cmd_bundle_options[] = {
	{ "tar", NULL, "write PATH as one .tar.gz file, not a directory" },
	{ "no-core", NULL, "no core file, even of a native target" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_bundle_entry = {
	.name = "bundle",
	.usage = "[--tar] [--no-core] SESSION PATH",
	.args = { "tar no-core", 2, 2 },
	.flags = CMD_SESSION,
	.exec = cmd_bundle_exec,
	.summary = "write the session's bundle (logs, transcripts, backtraces, "
	    "registers, core) at a new PATH",
	.options = cmd_bundle_options,
};
