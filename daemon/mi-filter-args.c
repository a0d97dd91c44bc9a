/*
 * A joined client's command split into words exactly as gdb 13 splits it:
 * an MI operation's arguments by mi_parse_argv's rules (a quoted word is
 * an MI c-string, its escapes undone), a CLI command's by libiberty's
 * buildargv (interpreter-exec's). The filter must read what gdb will run,
 * so where gdb would refuse to parse, so do we.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "mi-filter.h"

/* Room for one more word; the bytes are the caller's, in w->buf. */
void
mi_filter_args_push(struct mi_filter_words *w, char *word)
{
	if ((size_t)w->n == w->cap) {
		w->cap = w->cap != 0 ? w->cap * 2 : 8;
		w->v = xreallocarray(w->v, w->cap, sizeof *w->v);
	}
	w->v[w->n++] = word;
}

/* Put the command's name first, as the table's deciders expect. */
void
mi_filter_args_name(struct mi_filter_words *w, char *name)
{
	mi_filter_args_push(w, name);
	memmove(w->v + 1, w->v, (w->n - 1) * sizeof *w->v);
	w->v[0] = name;
}

/* Forget a command's words. */
void
mi_filter_args_free(struct mi_filter_words *w)
{
	free(w->v);
	free(w->buf);
	memset(w, 0, sizeof *w);
}

/* Start w on s: a buffer as long as s, no word yet. */
static char *
mi_filter_args_start(const char *s, struct mi_filter_words *w)
{
	memset(w, 0, sizeof *w);
	w->buf = xmalloc(strlen(s) + 1);
	return w->buf;
}

/*
 * One escape of an MI c-string after its backslash (gdb's
 * mi_parse_escape): the byte it stands for, or -1 where gdb refuses
 * (a backslash at the end, a line break, a NUL).
 */
static int
mi_filter_args_escape(const char **sp)
{
	const char	*s = *sp;
	int		 c = (unsigned char)*s++, i, k;

	if (c == '\0' || c == '\n')
		return -1;
	if (c >= '0' && c <= '7') {
		i = c - '0';
		for (k = 1; k < 3 && *s >= '0' && *s <= '7'; k++)
			i = i * 8 + (*s++ - '0');
		*sp = s;
		/* gdb keeps the low byte: \400 is a NUL that ends the word. */
		return i == 0 ? -1 : i & 0xff;
	}
	*sp = s;
	switch (c) {
	case 'a': return '\a';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'n': return '\n';
	case 'r': return '\r';
	case 't': return '\t';
	case 'v': return '\v';
	default: return c;
	}
}

/* One quoted MI word from s (after its quote) into o; NULL if gdb refuses. */
static const char *
mi_filter_args_cstring(const char *s, char **o)
{
	int c;

	while (*s != '\0' && *s != '"') {
		if (*s != '\\') {
			*(*o)++ = *s++;
			continue;
		}
		s++;
		if ((c = mi_filter_args_escape(&s)) < 0)
			return NULL;
		*(*o)++ = (char)c;
	}
	if (*s != '"')
		return NULL;
	s++;
	/* gdb insists on a space or the end after the closing quote. */
	if (*s != '\0' && !isspace((unsigned char)*s))
		return NULL;
	return s;
}

/*
 * Split an MI operation's arguments as gdb's mi_parse_argv does: a word
 * that starts with a quote is a c-string, any other runs to a space (a
 * quote inside it is a quote). -1 where gdb would refuse them.
 */
int
mi_filter_args_mi(const char *s, struct mi_filter_words *w)
{
	char *o = mi_filter_args_start(s, w);

	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			return 0;
		mi_filter_args_push(w, o);
		if (*s == '"') {
			if ((s = mi_filter_args_cstring(s + 1, &o)) == NULL)
				return -1;
		} else
			while (*s != '\0' && !isspace((unsigned char)*s))
				*o++ = *s++;
		*o++ = '\0';
	}
}

/*
 * Split a CLI command's arguments as libiberty's buildargv does (quotes
 * of either kind anywhere in a word, a backslash takes the next byte).
 * -1 for a backslash inside single quotes: buildargv's versions differ on
 * it, and the filter must not read a word gdb reads otherwise.
 */
int
mi_filter_args_cli(const char *s, struct mi_filter_words *w)
{
	char	*o = mi_filter_args_start(s, w);
	char	 quote;

	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			return 0;
		mi_filter_args_push(w, o);
		for (quote = 0; *s != '\0'; s++) {
			if (quote == 0 && isspace((unsigned char)*s))
				break;
			if (*s == '\\' && quote == '\'')
				return -1;
			if (*s == '\\' && s[1] != '\0')
				*o++ = *++s;
			else if (quote != 0 && *s == quote)
				quote = 0;
			else if (quote == 0 && (*s == '\'' || *s == '"'))
				quote = *s;
			else
				*o++ = *s;
		}
		*o++ = '\0';
	}
}
