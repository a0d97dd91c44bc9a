/* Debugger kinds as data plus hooks: how each builds the argv its keeper runs. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* Append a copy of str. */
void
backend_push(struct backend_av *av, const char *str)
{
	if (av->n + 2 > av->cap) {
		av->cap = av->cap ? av->cap * 2 : 16;
		av->v = reallocarray(av->v, av->cap, sizeof *av->v);
		if (av->v == NULL)
			log_fatal("out of memory");
	}
	if ((av->v[av->n++] = strdup(str)) == NULL)
		log_fatal("out of memory");
	av->v[av->n] = NULL;
}

/* Append copies of the strings of array, from index from on. */
void
backend_push_all(struct backend_av *av, json_t *array, size_t from)
{
	size_t i;

	for (i = from; i < json_array_size(array); i++)
		backend_push(av, json_string_value(json_array_get(array, i)));
}

/* Free an argv built with backend_push, or proc.c's environment. */
void
backend_argv_free(char **av)
{
	size_t i;

	if (av == NULL)
		return;
	for (i = 0; av[i] != NULL; i++)
		free(av[i]);
	free(av);
}

/* Append a space and str in POSIX sh single quotes, so a shell passes it literally. */
static void
backend_quote(char **buf, size_t *len, const char *str)
{
	size_t	need = strlen(str) * 4 + 4, at = *len;
	const char *p;

	if ((*buf = realloc(*buf, *len + need + 1)) == NULL)
		log_fatal("out of memory");
	(*buf)[at++] = ' ';
	(*buf)[at++] = '\'';
	for (p = str; *p != '\0'; p++) {
		if (*p == '\'') {
			memcpy(*buf + at, "'\\''", 4);
			at += 4;
		} else
			(*buf)[at++] = *p;
	}
	(*buf)[at++] = '\'';
	(*buf)[at] = '\0';
	*len = at;
}

/* Append the shell redirections that put the transport on the target's 0 and 1. */
static void
backend_redirect(char **buf, size_t *len)
{
	char	redir[64];
	int	n;

	n = snprintf(redir, sizeof redir, " </dev/fd/%d >/dev/fd/%d",
	    PROC_FD_IN, PROC_FD_OUT);
	if ((*buf = realloc(*buf, *len + n + 1)) == NULL)
		log_fatal("out of memory");
	memcpy(*buf + *len, redir, n + 1);
	*len += n;
}

/* exec: the program itself. */
static char **
backend_exec_argv(struct session *s, char *err, size_t errlen)
{
	struct backend_av	av = { 0 };

	(void)err;
	(void)errlen;
	backend_push_all(&av, s->argv, 0);
	return av.v;
}

/* Give gdb its MI channel and, for a remote, a bounded, retry-free connect. */
static void
backend_gdb_mi(struct backend_av *av, struct session *s)
{
	char	cmd[128];

	snprintf(cmd, sizeof cmd, "new-ui mi3 %s", s->mi.pts);
	backend_push(av, "-ex");
	backend_push(av, cmd);
	if (s->remote == NULL)
		return;
	/* gdb's own 15 s of retries would hide a refused port. */
	backend_push(av, "-ex");
	backend_push(av, "set tcp auto-retry off");
	snprintf(cmd, sizeof cmd, "set tcp connect-timeout %ld",
	    (s->connect_timeout + 999) / 1000);
	backend_push(av, "-ex");
	backend_push(av, cmd);
}

/*
 * gdb: the program as gdb's file, its arguments quoted for the shell gdb
 * starts the inferior with, then the -x commands in order.
 */
static char **
backend_gdb_argv(struct session *s, char *err, size_t errlen)
{
	struct backend_av	 av = { 0 };
	char			*args = NULL;
	size_t			 i, len;

	(void)err;
	(void)errlen;
	backend_push(&av, s->debugger != NULL ? s->debugger :
	    s->backend->debugger);
	backend_push(&av, "-q");
	if (s->mi.open)
		backend_gdb_mi(&av, s);
	/* A remote target was started elsewhere, with its own arguments. */
	if (s->remote == NULL &&
	    (json_array_size(s->argv) > 1 || s->transport.enabled)) {
		args = strdup("set args");
		if (args == NULL)
			log_fatal("out of memory");
		len = strlen(args);
		for (i = 1; i < json_array_size(s->argv); i++)
			backend_quote(&args, &len,
			    json_string_value(json_array_get(s->argv, i)));
		if (s->transport.enabled)
			backend_redirect(&args, &len);
		backend_push(&av, "-ex");
		backend_push(&av, args);
		free(args);
	}
	/* A remote session types its commands once connected. */
	for (i = 0; s->remote == NULL && i < json_array_size(s->commands); i++) {
		backend_push(&av, "-ex");
		backend_push(&av,
		    json_string_value(json_array_get(s->commands, i)));
	}
	if (json_array_size(s->argv) > 0) {
		backend_push(&av, "--");
		backend_push(&av,
		    json_string_value(json_array_get(s->argv, 0)));
	}
	return av.v;
}

/*
 * Append str in lldb double quotes: lldb's interpreter substitutes `...`
 * even inside quotes, so backticks are escaped along with \ and ".
 */
static void
backend_lldb_quote(char **buf, size_t *len, const char *str)
{
	size_t		 at = *len;
	const char	*p;

	if ((*buf = realloc(*buf, *len + strlen(str) * 2 + 4)) == NULL)
		log_fatal("out of memory");
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

/*
 * lldb: -O settings before the file is loaded (the transport), the
 * arguments set by us (lldb's own "--" handling leaves backticks live),
 * then the -o commands; lldb launches the target without a shell.
 */
static char **
backend_lldb_argv(struct session *s, char *err, size_t errlen)
{
	struct backend_av	 av = { 0 };
	char			 set[96], *args;
	size_t			 i, len;

	for (i = 1; i < json_array_size(s->argv); i++) {
		if (!backend_lldb_passable(
		    json_string_value(json_array_get(s->argv, i)))) {
			snprintf(err, errlen, "lldb cannot pass argument %zu "
			    "as it is (empty, blanks at an end, a line break, "
			    "or only quotes); gdb can", i);
			return NULL;
		}
	}
	backend_push(&av, s->debugger != NULL ? s->debugger :
	    s->backend->debugger);
	if (s->transport.enabled) {
		snprintf(set, sizeof set, "settings set target.input-path "
		    "/dev/fd/%d", PROC_FD_IN);
		backend_push(&av, "-O");
		backend_push(&av, set);
		snprintf(set, sizeof set, "settings set target.output-path "
		    "/dev/fd/%d", PROC_FD_OUT);
		backend_push(&av, "-O");
		backend_push(&av, set);
	}
	if (json_array_size(s->argv) > 1) {
		if ((args = strdup("settings set -- target.run-args")) == NULL)
			log_fatal("out of memory");
		len = strlen(args);
		for (i = 1; i < json_array_size(s->argv); i++)
			backend_lldb_quote(&args, &len,
			    json_string_value(json_array_get(s->argv, i)));
		backend_push(&av, "-o");
		backend_push(&av, args);
		free(args);
	}
	for (i = 0; i < json_array_size(s->commands); i++) {
		backend_push(&av, "-o");
		backend_push(&av,
		    json_string_value(json_array_get(s->commands, i)));
	}
	backend_push(&av, "--");
	backend_push(&av, json_string_value(json_array_get(s->argv, 0)));
	return av.v;
}

static const struct backend backend_table[] = {
	/* name, debugger, stdio_transport, path, mi, server, needs_program */
	{ "gdb", "gdb", false, NULL, false, false, true, backend_gdb_argv,
	    NULL },
	/* lldb's embedded Python breaks when another python3 leads PATH. */
	{ "lldb", "lldb", false, "/usr/local/bin:/usr/bin:/bin", false, false,
	    true, backend_lldb_argv, NULL },
	{ "remote", "gdb", false, NULL, true, false, false, backend_gdb_argv,
	    remote_start },
	{ "gdbserver", "gdb", false, NULL, true, true, false, backend_gdb_argv,
	    remote_start },
	{ "exec", NULL, true, NULL, false, false, true, backend_exec_argv,
	    NULL },
};

/* Look a kind up by name. */
const struct backend *
backend_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof backend_table / sizeof *backend_table; i++)
		if (strcmp(backend_table[i].name, name) == 0)
			return &backend_table[i];
	return NULL;
}

/* The kinds this daemon supports, for hello's capabilities. */
json_t *
backend_names(void)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < sizeof backend_table / sizeof *backend_table; i++)
		json_array_append_new(a, json_string(backend_table[i].name));
	return a;
}
