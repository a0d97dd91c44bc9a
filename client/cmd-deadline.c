/*
 * deadline: set, move or clear a running session's deadline; and how
 * status shows a deadline and a verdict.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"

/* Print "deadline: in 12.5 s" while the session has one. */
static void
cmd_deadline_print(json_t *d)
{
	if (d == NULL || json_is_null(d))
		return;
	printf("deadline: in %.1f s\n", (double)json_integer_value(
	    json_object_get(d, "in_ms")) / 1000);
}

/* Print up to max frames, indented, as "#0 func at file:line". */
void
cmd_deadline_frames(json_t *frames, size_t max, const char *indent)
{
	const char	*func, *file;
	json_t		*e;
	size_t		 i;

	json_array_foreach(frames, i, e) {
		if (i == max)
			break;
		func = json_string_value(json_object_get(e, "func"));
		file = json_string_value(json_object_get(e, "file"));
		printf("%s#%lld %s", indent, (long long)json_integer_value(
		    json_object_get(e, "level")), func != NULL ? func : "??");
		if (file != NULL)
			printf(" at %s:%lld", file, (long long)
			    json_integer_value(json_object_get(e, "line")));
		printf("\n");
	}
}

/*
 * Print a deadline's or a silence's verdict: its kind, what the target
 * was, how long each stream had been quiet, then each thread's top frames.
 */
static void
cmd_deadline_verdict(json_t *v)
{
	const char	*kind = json_string_value(json_object_get(v, "kind"));
	const char	*key, *name;
	json_t		*st, *t;
	size_t		 i;
	char		 buf[256];

	if (kind == NULL || strcmp(kind, "fault") == 0)
		return;
	printf("verdict: %s", kind);
	if ((t = json_object_get(v, "target_before")) != NULL) {
		fmt_target(t, buf, sizeof buf);
		printf(", the target %s", buf);
	}
	json_object_foreach(json_object_get(v, "streams"), key, st)
		printf(", %s quiet %.1f s", key, (double)json_integer_value(
		    json_object_get(st, "idle_ms")) / 1000);
	if (json_object_get(v, "incomplete") != NULL)
		printf(" (incomplete: see status --json)");
	printf("\n");
	json_array_foreach(json_object_get(v, "threads"), i, t) {
		name = json_string_value(json_object_get(t, "name"));
		printf("  thread %s%s%s%s\n", json_string_value(json_object_get(
		    t, "id")), name != NULL ? " (" : "", name != NULL ? name :
		    "", name != NULL ? ")" : "");
		cmd_deadline_frames(json_object_get(t, "frames"), 5, "    ");
	}
}

/* status's lines of a session's deadline and verdict. */
void
cmd_deadline_status(json_t *s)
{
	cmd_deadline_print(json_object_get(s, "deadline"));
	if (json_object_get(s, "verdict") != NULL)
		cmd_deadline_verdict(json_object_get(s, "verdict"));
}

/* deadline SESSION MS|off: the session's deadline, MS from now, or none. */
static int
cmd_deadline_exec(struct cmd *self, struct client *c)
{
	const char	*when = args_operand(&self->args, 1);
	long long	 ms = 0;
	json_t		*result;

	if (strcmp(when, "off") != 0 && (args_strtonum(when, &ms) != 0 ||
	    ms < 1 || ms > 2147483647))
		return cmd_usage(self, "bad deadline %s: want milliseconds, 1 "
		    "to 2147483647, or off", when);
	result = client_call(c, "deadline", json_pack("{s:O, s:I}", "session",
	    self->session, "ms", (json_int_t)ms));
	if (result == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	else if (json_is_null(json_object_get(result, "deadline")))
		printf("no deadline\n");
	else
		cmd_deadline_print(json_object_get(result, "deadline"));
	json_decref(result);
	return EXIT_OK;
}

const struct cmd_entry cmd_deadline_entry = {
	.name = "deadline",
	.usage = "SESSION MS|off",
	.args = { "", 2, 2 },
	.flags = CMD_SESSION,
	.exec = cmd_deadline_exec,
	.summary = "set a running session's deadline MS from now, or clear it",
};
