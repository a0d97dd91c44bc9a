/*
 * The schema's lists of kinds, from the kind table: proto/schema.json says
 * "enum": "@kinds..." where a list of kinds belongs, and this writes the
 * schema the tests read with each one the table's, so that a new kind
 * touches no schema. schema-kinds SOURCE OUTPUT. The lists:
 *
 *	@kinds			every kind, in the table's order
 *	@kinds:gdb		the gdb family
 *	@kinds:gdb-connects	the gdb family but gdb: gdb connects to a target
 *	@kinds:server		the kinds that run a managed server
 *	@kinds:param:NAME	the kinds whose params table declares NAME
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

/* The list a "@kinds..." selector names; NULL for one it does not know. */
static json_t *
schema_kinds_list(const char *sel)
{
	static const int server = BACKEND_SERVER;

	if (strcmp(sel, "@kinds") == 0)
		return schema_kinds_pick(NULL, NULL);
	if (strcmp(sel, "@kinds:gdb") == 0)
		return schema_kinds_pick(gdb_family_kind, NULL);
	if (strcmp(sel, "@kinds:gdb-connects") == 0)
		return schema_kinds_pick(schema_kinds_connects, NULL);
	if (strcmp(sel, "@kinds:server") == 0)
		return schema_kinds_pick(backend_has, &server);
	if (strncmp(sel, "@kinds:param:", 13) == 0)
		return schema_kinds_pick(backend_takes, sel + 13);
	return NULL;
}

/* Replace every "enum": "@kinds..." below v; -1 at a selector not known. */
static int
schema_kinds_fill(json_t *v)
{
	const char	*key, *sel;
	json_t		*e, *list;
	size_t		 i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			if (schema_kinds_fill(e) != 0)
				return -1;
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	sel = json_string_value(json_object_get(v, "enum"));
	if (sel != NULL) {
		if ((list = schema_kinds_list(sel)) == NULL) {
			fprintf(stderr, "schema-kinds: unknown list %s\n", sel);
			return -1;
		}
		json_object_set_new(v, "enum", list);
	}
	json_object_foreach(v, key, e)
		if (schema_kinds_fill(e) != 0)
			return -1;
	return 0;
}

/* Read the schema, fill its lists of kinds, write it. */
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
	if (schema_kinds_fill(schema) != 0 || json_dump_file(schema, argv[2],
	    JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
		fprintf(stderr, "schema-kinds: cannot write %s\n", argv[2]);
		return 1;
	}
	json_decref(schema);
	return 0;
}
