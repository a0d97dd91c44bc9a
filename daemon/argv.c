/* Growable NULL-terminated string vectors: argvs and environments. */
#include <stdlib.h>

#include "daemon.h"

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
