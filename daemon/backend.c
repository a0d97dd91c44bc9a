/* The debugger kinds: looked up by name, listed for hello. */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

static const struct backend *const backend_table[] = {
	&backend_gdb,
	&backend_lldb,
	&backend_remote,
	&backend_gdbserver,
	&backend_exec,
};

#define BACKEND_N (sizeof backend_table / sizeof backend_table[0])

/* Look a kind up by name. */
const struct backend *
backend_find(const char *name)
{
	size_t i;

	for (i = 0; i < BACKEND_N; i++)
		if (strcmp(backend_table[i]->name, name) == 0)
			return backend_table[i];
	return NULL;
}

/* The kinds this daemon supports, for hello's capabilities. */
json_t *
backend_names(void)
{
	json_t	*a = json_array();
	size_t	 i;

	for (i = 0; i < BACKEND_N; i++)
		json_array_append_new(a, json_string(backend_table[i]->name));
	return a;
}

/* The kinds as a list for messages: "gdb, lldb, ...". */
char *
backend_kinds(void)
{
	char	*list = xstrdup(""), *next;
	size_t	 i;

	for (i = 0; i < BACKEND_N; i++) {
		xasprintf(&next, "%s%s%s", list, i > 0 ? ", " : "",
		    backend_table[i]->name);
		free(list);
		list = next;
	}
	return list;
}
