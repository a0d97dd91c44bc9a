/* The debugger kinds: looked up by name, listed for hello and messages. */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "method.h"

/* Each kind's file defines its entry; the table is their only index, as tmux's cmd.c is. */
extern const struct backend backend_exec;
extern const struct backend backend_gdb;
extern const struct backend backend_lldb;
extern const struct backend backend_remote;
extern const struct backend backend_gdbserver;
extern const struct backend backend_qemu;
extern const struct backend backend_lldb_server;

/*
 * The kinds, in the order everything lists them; a kind named with a "-"
 * is spelt with "_" here (client/kinds.py writes it back).
 */
static const struct backend *const backend_table[] = {
	&backend_gdb,
	&backend_lldb,
	&backend_remote,
	&backend_gdbserver,
	&backend_qemu,
	&backend_lldb_server,
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

/* The kinds pick chooses (NULL: all) as a list for messages: "gdb, lldb, ...". */
char *
backend_kinds(backend_pick pick, const void *arg)
{
	char	*list = xstrdup(""), *next;
	size_t	 i;

	for (i = 0; i < BACKEND_N; i++) {
		if (pick != NULL && !pick(backend_table[i], arg))
			continue;
		xasprintf(&next, "%s%s%s", list, *list != '\0' ? ", " : "",
		    backend_table[i]->name);
		free(list);
		list = next;
	}
	return list;
}

/* The i-th kind, in the table's order; NULL past the last. */
const struct backend *
backend_at(size_t i)
{
	return i < BACKEND_N ? backend_table[i] : NULL;
}

/*
 * The kinds pick chooses as a message says them: "the qemu kind", "the
 * gdb and gdbserver kinds", "the gdb, remote, gdbserver and qemu kinds".
 */
char *
backend_kinds_that(backend_pick pick, const void *arg)
{
	const struct backend	*chosen[BACKEND_N];
	char			*list = xstrdup("the"), *next;
	size_t			 i, n = 0;

	for (i = 0; i < BACKEND_N; i++)
		if (pick(backend_table[i], arg))
			chosen[n++] = backend_table[i];
	for (i = 0; i < n; i++) {
		xasprintf(&next, "%s%s %s", list, i == 0 ? "" : i + 1 == n ?
		    " and" : ",", chosen[i]->name);
		free(list);
		list = next;
	}
	xasprintf(&next, "%s kind%s", list, n == 1 ? "" : "s");
	free(list);
	return next;
}

/* Whether a kind declares the launch param named arg. */
bool
backend_takes(const struct backend *be, const void *arg)
{
	const struct method_param *p;

	for (p = be->params; p != NULL && p->name != NULL; p++)
		if (strcmp(p->name, arg) == 0)
			return true;
	return false;
}

/* Whether a kind has every flag of *arg. */
bool
backend_has(const struct backend *be, const void *arg)
{
	const int *flags = arg;

	return (be->flags & *flags) == *flags;
}
