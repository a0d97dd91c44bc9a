/*
 * The registers verb: the values of a gdb-family target's registers by
 * gdb's names, or its general registers as "info registers" shows them.
 * gdb numbers registers; the names are asked first, then the values by
 * number, and the standard names ($pc, $sp, $fp, $ps) as expressions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "method-inspect.h"
#include "method.h"
#include "request.h"

/* The most bytes of register names an unknown name's refusal lists. */
#define METHOD_INSPECT_REGS_LIST	320
/* The longest unknown name the refusal quotes (the list fits beside it). */
#define METHOD_INSPECT_REGS_NAME	96

/*
 * Whether name is one of gdb's standard register names ($pc, $sp, $fp,
 * $ps), which every architecture has whether or not a register is called
 * that (x86-64's are rip, rsp, rbp and eflags).
 */
static bool
method_inspect_regs_standard(const char *name)
{
	return strcmp(name, "pc") == 0 || strcmp(name, "sp") == 0 ||
	    strcmp(name, "fp") == 0 || strcmp(name, "ps") == 0;
}

/* The index of name among gdb's register names, or -1. */
static ssize_t
method_inspect_regs_number(json_t *names, const char *name)
{
	json_t	*n;
	size_t	 k;

	json_array_foreach(names, k, n)
		if (*name != '\0' && strcmp(json_string_value(n), name) == 0)
			return (ssize_t)k;
	return -1;
}

/*
 * Refuse name, with the target's names as far as they fit in a message
 * and how many more there are: never a name cut in its middle.
 */
static void
method_inspect_regs_unknown(struct gdb_job *j, json_t *names,
    const char *name)
{
	char	 known[METHOD_INSPECT_REGS_LIST + 32];
	size_t	 k, used = 0, shown = 0, all = 0, len;
	json_t	*n;

	known[0] = '\0';
	json_array_foreach(names, k, n) {
		if (*json_string_value(n) == '\0')
			continue;
		all++;
		len = strlen(json_string_value(n));
		if (shown < all - 1 || used + len + 2 > METHOD_INSPECT_REGS_LIST)
			continue;
		used += snprintf(known + used, sizeof known - used, "%s%s",
		    used > 0 ? ", " : "", json_string_value(n));
		shown++;
	}
	if (shown < all)
		snprintf(known + used, sizeof known - used, " and %zu more",
		    all - shown);
	/* A long name would push the list past the message's end. */
	if (strlen(name) > METHOD_INSPECT_REGS_NAME)
		gdb_job_fail(j, RPC_INVALID_PARAMS, "no register of the %zu-byte "
		    "name given (this target has: %s)", strlen(name), known);
	else
		gdb_job_fail(j, RPC_INVALID_PARAMS, "no register \"%s\" (this "
		    "target has: %s)", name, known);
}

/*
 * The values of those asked for: gdb's register numbers, then the
 * standard names as expressions; with none asked for, the general
 * registers (those "info registers" shows) or, for the group "all", all.
 */
static void
method_inspect_regs_names(struct gdb_job *j, json_t *names)
{
	json_t		*want = json_object_get(j->ctx, "names"), *v;
	json_t		*standard = json_array();
	char		*line, *next;
	ssize_t		 k;
	size_t		 i, n = 0;

	json_object_set(j->ctx, "all", names);
	if (want == NULL && !json_is_true(json_object_get(j->ctx, "every"))) {
		json_decref(standard);
		gdb_job_add_console(j, "info registers");
		return;
	}
	line = xstrdup("-data-list-register-values --skip-unavailable x");
	json_array_foreach(want, i, v) {
		if ((k = method_inspect_regs_number(names,
		    json_string_value(v))) != -1) {
			xasprintf(&next, "%s %zd", line, k);
			free(line);
			line = next;
			n++;
		} else if (method_inspect_regs_standard(json_string_value(v)))
			json_array_append(standard, v);
		else {
			method_inspect_regs_unknown(j, names,
			    json_string_value(v));
			break;
		}
	}
	if (j->error == NULL && (want == NULL || n > 0))
		gdb_job_add(j, "%s", line);
	/* gdb's own words: $ps is a flags type that no cast makes a number. */
	json_array_foreach(standard, i, v) {
		if (j->error != NULL)
			break;
		xasprintf(&next, "info registers %s", json_string_value(v));
		gdb_job_add_console(j, next);
		free(next);
	}
	json_object_set_new(j->ctx, "standard", json_object());
	json_decref(standard);
	free(line);
}

/*
 * After "info registers pc" (or sp, fp, ps): "pc  0x401136  0x401136
 * <main+4>", its first word the name and its second the value.
 */
static void
method_inspect_regs_standard_value(struct gdb_job *j, const char *text)
{
	char	name[8], value[64];

	if (text == NULL || sscanf(text, "%7s %63s", name, value) != 2 ||
	    !method_inspect_regs_standard(name))
		return;
	json_object_set_new(json_object_get(j->ctx, "standard"), name,
	    json_string(value));
}

/*
 * After "info registers": the values of the registers it named, the first
 * word of each of its lines; every register where it named none known
 * (gdb's command with no numbers), rather than an empty answer.
 */
static void
method_inspect_regs_general(struct gdb_job *j, const char *text)
{
	json_t		*names = json_object_get(j->ctx, "all");
	char		*line, *next, word[64];
	const char	*p;
	ssize_t		 k;
	size_t		 len, found = 0;

	line = xstrdup("-data-list-register-values --skip-unavailable x");
	for (p = text; *p != '\0'; p += strcspn(p, "\n"), p += *p == '\n') {
		len = strcspn(p, " \t\n");
		if (len == 0 || len >= sizeof word)
			continue;
		memcpy(word, p, len);
		word[len] = '\0';
		if ((k = method_inspect_regs_number(names, word)) == -1)
			continue;
		xasprintf(&next, "%s %zd", line, k);
		free(line);
		line = next;
		found++;
	}
	if (found == 0)
		log_warn("registers: gdb's \"info registers\" named no register "
		    "it lists: all of them are given");
	gdb_job_add(j, "%s", line);
	free(line);
}

/* After each answer: what to ask next, by what the answer was. */
static void
method_inspect_regs_step(struct gdb_job *j, json_t *reply)
{
	json_t	*names = json_object_get(reply, "register-names");

	if (names != NULL)
		method_inspect_regs_names(j, names);
	else if (json_object_get(j->ctx, "names") != NULL)
		method_inspect_regs_standard_value(j, json_string_value(
		    json_object_get(reply, "output")));
	else if (!json_is_true(json_object_get(j->ctx, "every")) &&
	    json_object_get(j->ctx, "general_done") == NULL &&
	    json_object_get(j->ctx, "names") == NULL &&
	    json_object_get(reply, "register-values") == NULL) {
		json_object_set_new(j->ctx, "general_done", json_true());
		method_inspect_regs_general(j, json_string_value(
		    json_object_get(reply, "output")) != NULL ?
		    json_string_value(json_object_get(reply, "output")) : "");
	}
}

/* registers' answer: name to value, the standard names' among them. */
static json_t *
method_inspect_regs_answer(struct gdb_job *j)
{
	json_t		*names = json_object_get(j->ctx, "all"), *v, *r, *out;
	const char	*num, *name;
	size_t		 i, k;

	out = json_object();
	json_array_foreach(j->replies, k, r) {
		json_array_foreach(json_object_get(r, "register-values"), i, v) {
			num = json_string_value(json_object_get(v, "number"));
			if (num == NULL)
				continue;
			name = json_string_value(json_array_get(names,
			    strtoul(num, NULL, 10)));
			if (name != NULL && *name != '\0')
				json_object_set(out, name, json_object_get(v,
				    "value"));
		}
	}
	json_object_update(out, json_object_get(j->ctx, "standard"));
	return json_pack("{s:o}", "registers", out);
}

/* registers: the values of the target's registers by gdb's names. */
static enum method_return
method_inspect_regs_exec(struct request *req)
{
	struct gdb_data	*g;
	struct gdb_job	*j;
	const char	*group = request_str(req, "group", "all");

	if (strcmp(group, "all") != 0 && strcmp(group, "general") != 0)
		return request_error(req, RPC_INVALID_PARAMS, "\"group\" must "
		    "be all or general, not \"%s\"", group);
	if ((g = method_target_gdb(req, "registers")) == NULL)
		return METHOD_DONE;
	j = gdb_job_new(req, g, GDB_JOB_STOPPED | GDB_JOB_OUTPUT,
	    method_inspect_regs_answer);
	if (request_get(req, "names") != NULL)
		json_object_set(j->ctx, "names", request_get(req, "names"));
	json_object_set_new(j->ctx, "every", json_boolean(strcmp(group,
	    "all") == 0));
	j->step = method_inspect_regs_step;
	gdb_job_add(j, "-data-list-register-names");
	return method_inspect_run(req, j);
}

static const struct method_param method_inspect_regs_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "names", PT_STRINGS, false, 0, 0 },
	{ "group", PT_STRING, false, 0, 0 },
	{ "timeout", PT_INT, false, 0, INT32_MAX },
	{ NULL, 0, false, 0, 0 }
};

/* The registers verb, in method-inspect.c's table. */
const struct method method_inspect_regs = {
	.name = "registers",
	.params = method_inspect_regs_params,
	.exec = method_inspect_regs_exec,
};
