/* Growable NULL-terminated string vectors: argvs and environments. */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "argv.h"

/* Append a copy of str. */
void
argv_push(struct argv *av, const char *str)
{
	if (av->n + 2 > av->cap) {
		av->cap = av->cap ? av->cap * 2 : 16;
		av->v = xreallocarray(av->v, av->cap, sizeof *av->v);
	}
	av->v[av->n++] = xstrdup(str);
	av->v[av->n] = NULL;
}

/* Append a formatted string. */
void
argv_pushf(struct argv *av, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	xvasprintf(&s, fmt, ap);
	va_end(ap);
	argv_push(av, s);
	free(s);
}

/* Append copies of the strings of a JSON array, from index from on. */
void
argv_push_json(struct argv *av, json_t *array, size_t from)
{
	size_t i;

	for (i = from; i < json_array_size(array); i++)
		argv_push(av, json_string_value(json_array_get(array, i)));
}

/* Free a vector built with argv_push. */
void
argv_free(char **v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * Split a command line into words as sh would, quotes and backslashes
 * undone, when it needs nothing else of a shell; -1 (av untouched) when it
 * has expansions, redirections, pipes or other shell syntax.
 */
int
argv_split(struct argv *av, const char *cmd)
{
	struct argv	 words = { 0 };
	char		*w = xmalloc(strlen(cmd) + 1);
	const char	*p;
	size_t		 n = 0;
	bool		 in = false, sq = false, dq = false;

	for (p = cmd; *p != '\0'; p++) {
		if (sq) {
			if (*p == '\'')
				sq = false;
			else
				w[n++] = *p;
			continue;
		}
		if (*p == '\\' && p[1] != '\0' && (!dq ||
		    strchr("\"\\$`", p[1]) != NULL)) {
			w[n++] = *++p;
			in = true;
			continue;
		}
		if (dq) {
			if (*p == '"')
				dq = false;
			else if (strchr("$`", *p) != NULL)
				goto shell;
			else
				w[n++] = *p;
			continue;
		}
		if (*p == '\'' || *p == '"') {
			sq = *p == '\'';
			dq = *p == '"';
			in = true;
			continue;
		}
		if (strchr(" \t", *p) != NULL) {
			if (in) {
				w[n] = '\0';
				argv_push(&words, w);
			}
			in = false;
			n = 0;
			continue;
		}
		if (strchr("|&;<>()$`*?[]#~{}\n", *p) != NULL)
			goto shell;
		w[n++] = *p;
		in = true;
	}
	if (sq || dq)
		goto shell;
	if (in) {
		w[n] = '\0';
		argv_push(&words, w);
	}
	free(w);
	/* NAME=value before the command is the shell's to set. */
	if (words.n == 0 || argv_assigns(cmd)) {
		argv_free(words.v);
		return -1;
	}
	for (n = 0; n < words.n; n++)
		argv_push(av, words.v[n]);
	argv_free(words.v);
	return 0;
shell:
	free(w);
	argv_free(words.v);
	return -1;
}

/* Whether a command line starts with a NAME=value assignment. */
bool
argv_assigns(const char *cmd)
{
	size_t n;

	cmd += strspn(cmd, " \t");
	n = strspn(cmd, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_");
	return n > 0 && cmd[n] == '=' && !(*cmd >= '0' && *cmd <= '9');
}
