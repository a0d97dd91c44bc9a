/*
 * The daemon's method table against what documents it: every method has
 * its entry under METHODS in dbgctl-protocol(7) and its params, result and
 * response in proto/schema.json, and neither names a method the daemon
 * does not have. DBGCTL_PROTOCOL_MAN and DBGCTL_SCHEMA are their paths.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* A whole file, NUL-terminated; the test fails if it cannot be read. */
static char *
methods_read(const char *path)
{
	char	*text = NULL;
	size_t	 len = 0;
	FILE	*f = fopen(path, "r");

	cr_assert_not_null(f, "cannot open %s", path);
	cr_assert_neq(getdelim(&text, &len, '\0', f), -1, "cannot read %s",
	    path);
	fclose(f);
	return text;
}

/* The names of the .Ss headings in the page's METHODS section, as JSON. */
static json_t *
methods_man(void)
{
	char	*text = methods_read(DBGCTL_PROTOCOL_MAN), *line, *save;
	json_t	*names = json_array();
	int	 in = 0;

	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, ".Sh ", 4) == 0)
			in = strcmp(line, ".Sh METHODS") == 0;
		else if (in && strncmp(line, ".Ss ", 4) == 0)
			json_array_append_new(names, json_string(line + 4));
	}
	free(text);
	return names;
}

/* The schema, parsed. */
static json_t *
methods_schema(void)
{
	json_error_t	 e;
	json_t		*schema = json_load_file(DBGCTL_SCHEMA, 0, &e);

	cr_assert_not_null(schema, "%s: %s", DBGCTL_SCHEMA, e.text);
	return schema;
}

/* Whether the names of a JSON array of strings include name. */
static bool
methods_has(json_t *names, const char *name)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(names, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return true;
	return false;
}

/* Whether the schema's request checks a request to name by its params. */
static bool
methods_requested(json_t *schema, const char *name)
{
	json_t	*v, *all = json_object_get(json_object_get(json_object_get(
	    schema, "$defs"), "request"), "allOf");
	size_t	 i;

	json_array_foreach(all, i, v) {
		const char *c = json_string_value(json_object_get(
		    json_object_get(json_object_get(json_object_get(v, "if"),
		    "properties"), "method"), "const"));

		if (c != NULL && strcmp(c, name) == 0)
			return true;
	}
	return false;
}

Test(methods, each_has_its_dbgctl_protocol_entry)
{
	json_t			*man = methods_man();
	const struct method	*m;
	size_t			 i;

	cr_assert_gt(json_array_size(man), 0, "%s: no .Ss under METHODS",
	    DBGCTL_PROTOCOL_MAN);
	for (i = 0; (m = request_check_at(i)) != NULL; i++)
		cr_expect(methods_has(man, m->name), "method %s has no .Ss %s "
		    "under METHODS in %s", m->name, m->name,
		    DBGCTL_PROTOCOL_MAN);
	json_decref(man);
}

Test(methods, dbgctl_protocol_names_no_other)
{
	json_t	*man = methods_man(), *v;
	size_t	 i;

	json_array_foreach(man, i, v)
		cr_expect_not_null(request_check_method(json_string_value(v)),
		    "%s documents a method %s the daemon does not have",
		    DBGCTL_PROTOCOL_MAN, json_string_value(v));
	json_decref(man);
}

Test(methods, each_has_its_schema)
{
	static const char *const	 parts[] = { "params", "results",
					    "responses" };
	json_t				*schema = methods_schema(), *defs;
	const struct method		*m;
	size_t				 i, k;

	defs = json_object_get(schema, "$defs");
	for (i = 0; (m = request_check_at(i)) != NULL; i++) {
		for (k = 0; k < sizeof parts / sizeof *parts; k++)
			cr_expect_not_null(json_object_get(json_object_get(defs,
			    parts[k]), m->name), "method %s has no "
			    "$defs/%s/%s in %s", m->name, parts[k], m->name,
			    DBGCTL_SCHEMA);
		cr_expect(methods_requested(schema, m->name), "method %s: "
		    "$defs/request in %s does not check its params", m->name,
		    DBGCTL_SCHEMA);
	}
	json_decref(schema);
}

Test(methods, the_schema_names_no_other)
{
	json_t		*schema = methods_schema(), *params;
	const char	*name;
	json_t		*v;

	params = json_object_get(json_object_get(schema, "$defs"), "params");
	cr_assert_gt(json_object_size(params), 0);
	json_object_foreach(params, name, v)
		cr_expect_not_null(request_check_method(name), "%s has "
		    "$defs/params/%s, a method the daemon does not have",
		    DBGCTL_SCHEMA, name);
	json_decref(schema);
}
