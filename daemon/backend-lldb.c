/* lldb: the program as lldb's target, arguments and transport set by us. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/*
 * Append str in lldb double quotes: lldb's interpreter substitutes `...`
 * even inside quotes, so backticks are escaped along with \ and ".
 */
static void
backend_lldb_quote(char **buf, size_t *len, const char *str)
{
	size_t		 at = *len;
	const char	*p;

	*buf = xreallocarray(*buf, *len + strlen(str) * 2 + 4, 1);
	(*buf)[at++] = ' ';
	(*buf)[at++] = '"';
	for (p = str; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"' || *p == '`')
			(*buf)[at++] = '\\';
		(*buf)[at++] = *p;
	}
	(*buf)[at++] = '"';
	(*buf)[at] = '\0';
	*len = at;
}

/*
 * Whether lldb's "settings set target.run-args" keeps arg as it is: it
 * drops empty values, trims blanks at both ends, reads each -o as one line,
 * and calls a value of nothing but quotes mismatched.
 */
static bool
backend_lldb_passable(const char *arg)
{
	size_t n = strlen(arg);

	if (n == 0 || isspace((unsigned char)arg[0]) ||
	    isspace((unsigned char)arg[n - 1]) || strpbrk(arg, "\n\r") != NULL)
		return false;
	return strspn(arg, "'\"") != n;
}

/* Refuse the arguments lldb's settings cannot carry as they are. */
static int
backend_lldb_check(const struct launch *l, struct rpc_error *err)
{
	size_t i;

	for (i = 1; i < json_array_size(l->argv); i++) {
		if (backend_lldb_passable(
		    json_string_value(json_array_get(l->argv, i))))
			continue;
		rpc_error_set(err, RPC_SPAWN_FAILED, "lldb cannot pass "
		    "argument %zu as it is (empty, blanks at an end, a line "
		    "break, or only quotes); gdb can", i);
		return -1;
	}
	return 0;
}

/*
 * lldb: -O settings before the file is loaded (the transport), the
 * arguments set by us (lldb's own "--" handling leaves backticks live),
 * then the -o commands; lldb launches the target without a shell.
 */
static char **
backend_lldb_argv(struct session *s, char *err, size_t errlen)
{
	struct argv	 av = { 0 };
	char		*args;
	size_t		 i, len;

	(void)err;
	(void)errlen;
	argv_push(&av, s->l.debugger != NULL ? s->l.debugger : "lldb");
	if (s->transport != NULL) {
		argv_push(&av, "-O");
		argv_pushf(&av, "settings set target.input-path /dev/fd/%d",
		    PROC_FD_IN);
		argv_push(&av, "-O");
		argv_pushf(&av, "settings set target.output-path /dev/fd/%d",
		    PROC_FD_OUT);
	}
	if (json_array_size(s->l.argv) > 1) {
		args = xstrdup("settings set -- target.run-args");
		len = strlen(args);
		for (i = 1; i < json_array_size(s->l.argv); i++)
			backend_lldb_quote(&args, &len,
			    json_string_value(json_array_get(s->l.argv, i)));
		argv_push(&av, "-o");
		argv_push(&av, args);
		free(args);
	}
	for (i = 0; i < json_array_size(s->l.commands); i++) {
		argv_push(&av, "-o");
		argv_push(&av,
		    json_string_value(json_array_get(s->l.commands, i)));
	}
	argv_push(&av, "--");
	argv_push(&av, json_string_value(json_array_get(s->l.argv, 0)));
	return av.v;
}

const struct backend backend_lldb = {
	.name = "lldb",
	.debugger = "lldb",
	/* lldb's embedded Python breaks when another python3 leads PATH. */
	.path = "/usr/local/bin:/usr/bin:/bin",
	.flags = BACKEND_PROGRAM,
	.check = backend_lldb_check,
	.argv = backend_lldb_argv,
	.status = status_main_inferior,
};
