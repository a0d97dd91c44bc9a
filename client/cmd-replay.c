/*
 * replay BUNDLE: a qemu session that replays the recording a bundle
 * directory holds (a session launched with --record wrote it), launched
 * as the recorded board was (its machine and CPU, from replay.json) with
 * the bundle's firmware; the daemon checks the recording itself. A
 * bundle may come from anyone: QEMU arguments it names are refused, not
 * passed, since they can open files or load code as the user.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"
#include "replay-files.h"

/* The characters of a CPU name replay.json may give: a plain name, never options. */
#define CMD_REPLAY_CPU_CHARS \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-"

/* Print word as one shell word: as is when plain, else single-quoted. */
static void
cmd_replay_word(FILE *f, const char *word)
{
	if (*word != '\0' && word[strspn(word, CMD_REPLAY_CPU_CHARS
	    "/:=,@%")] == '\0') {
		fputs(word, f);
		return;
	}
	fputc('\'', f);
	for (; *word != '\0'; word++)
		if (*word == '\'')
			fputs("'\\''", f);
		else
			fputc(*word, f);
	fputc('\'', f);
}

/*
 * Refuse replay.json's qemu_args: a bundle is untrusted, and QEMU options
 * open files (-chardev file,path=...) or load code (-plugin). Say which,
 * and the launch that passes them for a user who trusts them.
 */
static void
cmd_replay_refuse_args(const char *dir, json_t *meta, json_t *qargs)
{
	json_t	*v;
	size_t	 i;

	fprintf(stderr, "dbgctl: %s/%s names QEMU arguments (", dir,
	    REPLAY_META);
	json_array_foreach(qargs, i, v) {
		if (i > 0)
			fputc(' ', stderr);
		cmd_replay_word(stderr, json_is_string(v) ? json_string_value(
		    v) : "?");
	}
	fprintf(stderr, "); a bundle's QEMU arguments are not passed, since "
	    "they can open files or load code as you. If you trust them, "
	    "pass them yourself:\n  dbgctl launch --kind qemu --replay ");
	cmd_replay_word(stderr, dir);
	fputs(" --machine ", stderr);
	cmd_replay_word(stderr, json_string_value(json_object_get(meta,
	    "machine")));
	if (json_is_string(json_object_get(meta, "cpu"))) {
		fputs(" --cpu ", stderr);
		cmd_replay_word(stderr, json_string_value(json_object_get(meta,
		    "cpu")));
	}
	json_array_foreach(qargs, i, v) {
		fputs(" --qemu-arg=", stderr);
		cmd_replay_word(stderr, json_is_string(v) ? json_string_value(
		    v) : "?");
	}
	fputs(" --transport -- ", stderr);
	cmd_replay_word(stderr, dir);
	fprintf(stderr, "/%s\n", REPLAY_FIRMWARE);
}

/* Whether replay.json's machine and cpu are plain names and it names no QEMU arguments; else say why. */
static bool
cmd_replay_meta_ok(const char *dir, json_t *meta)
{
	json_t		*machine = json_object_get(meta, "machine");
	json_t		*cpu = json_object_get(meta, "cpu");
	json_t		*qargs = json_object_get(meta, "qemu_args");
	const char	*v;

	if (!json_is_string(machine) || *(v = json_string_value(machine)) ==
	    '\0' || v[strspn(v, CMD_REPLAY_CPU_CHARS)] != '\0') {
		fprintf(stderr, "dbgctl: %s/%s names no machine (a plain name "
		    "of letters, digits and ._+-)\n", dir, REPLAY_META);
		return false;
	}
	if (cpu != NULL && !json_is_null(cpu) && (!json_is_string(cpu) ||
	    *(v = json_string_value(cpu)) == '\0' ||
	    v[strspn(v, CMD_REPLAY_CPU_CHARS)] != '\0')) {
		fprintf(stderr, "dbgctl: %s/%s: its cpu is not a plain name "
		    "(letters, digits and ._+-)\n", dir, REPLAY_META);
		return false;
	}
	if (json_is_array(qargs) && json_array_size(qargs) > 0) {
		cmd_replay_refuse_args(dir, meta, qargs);
		return false;
	}
	if (qargs != NULL && !json_is_null(qargs) && !json_is_array(qargs)) {
		fprintf(stderr, "dbgctl: %s/%s: its qemu_args is not a list\n",
		    dir, REPLAY_META);
		return false;
	}
	return true;
}

/* The launch params of a replay of the bundle at dir (absolute); NULL after saying why. */
static json_t *
cmd_replay_params(const char *dir)
{
	json_t		*meta, *params, *cpu;
	json_error_t	 jerr;
	char		 path[PATH_MAX + 32];

	snprintf(path, sizeof path, "%s/%s", dir, REPLAY_META);
	if ((meta = json_load_file(path, 0, &jerr)) == NULL) {
		fprintf(stderr, "dbgctl: %s holds no recording (%s: %s); "
		    "bundles of sessions launched with --record have one\n",
		    dir, path, jerr.text);
		return NULL;
	}
	if (!cmd_replay_meta_ok(dir, meta)) {
		json_decref(meta);
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s", dir, REPLAY_FIRMWARE);
	params = json_pack("{s:s, s:O, s:s, s:[s], s:b}", "kind", "qemu",
	    "machine", json_object_get(meta, "machine"), "replay", dir, "argv",
	    path, "transport", 1);
	if (json_is_string(cpu = json_object_get(meta, "cpu")))
		json_object_set(params, "cpu", cpu);
	json_decref(meta);
	return params;
}

/* The absolute path of the bundle directory operand into dir; -1 after saying why. */
static int
cmd_replay_dir(const char *operand, char *dir)
{
	struct stat	st;

	if (realpath(operand, dir) == NULL) {
		fprintf(stderr, "dbgctl: %s: %s\n", operand, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dbgctl: %s is not a directory: BUNDLE must be "
		    "a bundle directory (unpack a .tar.gz bundle first)\n",
		    operand);
		return -1;
	}
	return 0;
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

	if (cmd_replay_dir(args_operand(a, 0), dir) != 0)
		return EXIT_FAILED;
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
