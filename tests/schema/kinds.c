/*
 * The schema's lists of kinds against the kind table: each list in
 * proto/schema.json says which it is ("x-kinds") and must be the table's,
 * in its order, so a new kind is refused at build time until the schema
 * names it, and the schema stays a valid one a user can read. Writes the
 * checked schema for the tests: schema-kinds SOURCE OUTPUT. The lists:
 *
 *	all		every kind, in the table's order
 *	gdb		the gdb family
 *	gdb-connects	the gdb family but gdb: gdb connects to a target
 *	server		the kinds that run a managed server
 *	param:NAME	the kinds whose params table declares NAME
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* The gdb family but gdb itself: gdb connects to a target it did not start. */
static bool
schema_kinds_connects(const struct backend *be, const void *arg)
{
	return gdb_family_kind(be, arg) && strcmp(be->name, "gdb") != 0;
}

/* The kinds pick chooses from the table, as a JSON array of their names. */
static json_t *
schema_kinds_pick(backend_pick pick, const void *arg)
{
	const struct backend	*be;
	json_t			*a = json_array();
	size_t			 i;

	for (i = 0; (be = backend_at(i)) != NULL; i++)
		if (pick == NULL || pick(be, arg))
			json_array_append_new(a, json_string(be->name));
	return a;
}

/* The list an "x-kinds" names; NULL for one it does not know. */
static json_t *
schema_kinds_list(const char *sel)
{
	static const int server = BACKEND_SERVER;

	if (strcmp(sel, "all") == 0)
		return schema_kinds_pick(NULL, NULL);
	if (strcmp(sel, "gdb") == 0)
		return schema_kinds_pick(gdb_family_kind, NULL);
	if (strcmp(sel, "gdb-connects") == 0)
		return schema_kinds_pick(schema_kinds_connects, NULL);
	if (strcmp(sel, "server") == 0)
		return schema_kinds_pick(backend_has, &server);
	if (strncmp(sel, "param:", 6) == 0)
		return schema_kinds_pick(backend_takes, sel + 6);
	return NULL;
}

/* Whether the list of kinds in v, which says it is sel's, is the table's. */
static bool
schema_kinds_same(json_t *v, const char *sel)
{
	json_t	*list = schema_kinds_list(sel);
	bool	 same;
	char	*want;

	if (list == NULL) {
		fprintf(stderr, "schema-kinds: no list of kinds is \"%s\"\n",
		    sel);
		return false;
	}
	same = json_equal(list, json_object_get(v, "enum"));
	if (!same && (want = json_dumps(list, JSON_COMPACT)) != NULL) {
		fprintf(stderr, "schema-kinds: the \"%s\" kinds' \"enum\" "
		    "must be the kind table's: %s\n", sel, want);
		free(want);
	}
	json_decref(list);
	return same;
}

/* Check every list of kinds below v; the number that differ from the table. */
static int
schema_kinds_check(json_t *v)
{
	const char	*key, *sel;
	json_t		*e;
	size_t		 i;
	int		 bad = 0;

	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			bad += schema_kinds_check(e);
		return bad;
	}
	if (!json_is_object(v))
		return 0;
	sel = json_string_value(json_object_get(v, "x-kinds"));
	if (sel != NULL && !schema_kinds_same(v, sel))
		bad++;
	json_object_foreach(v, key, e)
		bad += schema_kinds_check(e);
	return bad;
}

/* Read the schema, check its lists of kinds, write it for the tests. */
int
main(int argc, char **argv)
{
	json_error_t	 e;
	json_t		*schema;

	if (argc != 3) {
		fprintf(stderr, "usage: schema-kinds SOURCE OUTPUT\n");
		return 2;
	}
	if ((schema = json_load_file(argv[1], JSON_DECODE_ANY, &e)) == NULL) {
		fprintf(stderr, "schema-kinds: %s:%d: %s\n", argv[1], e.line,
		    e.text);
		return 1;
	}
	if (schema_kinds_check(schema) != 0) {
		fprintf(stderr, "schema-kinds: %s: write the lists above there\n",
		    argv[1]);
		return 1;
	}
	if (json_dump_file(schema, argv[2], JSON_INDENT(2) |
	    JSON_PRESERVE_ORDER) != 0) {
		fprintf(stderr, "schema-kinds: cannot write %s\n", argv[2]);
		return 1;
	}
	json_decref(schema);
	return 0;
}
