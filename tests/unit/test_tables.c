/*
 * The daemon's tables against what documents them. Methods: every method
 * has its entry under METHODS in dbgctl-protocol(7) and its params, result
 * and response in proto/schema.json, and neither names a method the
 * daemon does not have. Kinds: every list of kinds the manual pages, the
 * README, the Python package, the C sources (their messages and help) and
 * the schema's enums write is one the kind table makes (the whole table,
 * the gdb family, the family beside gdb), in the table's order.
 * DBGCTL_SOURCE_ROOT is the source tree.
 */
#include <criterion/criterion.h>

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "method.h"
#include "request.h"

#define DBGCTL_PROTOCOL_MAN	DBGCTL_SOURCE_ROOT "/man/dbgctl-protocol.7"
/* The schema with its lists of kinds written (tests/schema/kinds.c). */
#ifndef DBGCTL_SCHEMA
#define DBGCTL_SCHEMA		DBGCTL_SOURCE_ROOT "/proto/schema.json"
#endif

/* A whole file, NUL-terminated; the test fails if it cannot be read. */
static char *
tables_read(const char *path)
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
tables_man(void)
{
	char	*text = tables_read(DBGCTL_PROTOCOL_MAN), *line, *save;
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
tables_schema(void)
{
	json_error_t	 e;
	json_t		*schema = json_load_file(DBGCTL_SCHEMA, 0, &e);

	cr_assert_not_null(schema, "%s: %s", DBGCTL_SCHEMA, e.text);
	return schema;
}

/* Whether the names of a JSON array of strings include name. */
static bool
tables_has(json_t *names, const char *name)
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
tables_requested(json_t *schema, const char *name)
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

/* Each method of the table has its .Ss under METHODS. */
Test(methods, each_has_its_dbgctl_protocol_entry)
{
	json_t			*man = tables_man();
	const struct method	*m;
	size_t			 i;

	cr_assert_gt(json_array_size(man), 0, "%s: no .Ss under METHODS",
	    DBGCTL_PROTOCOL_MAN);
	for (i = 0; (m = request_check_at(i)) != NULL; i++)
		cr_expect(tables_has(man, m->name), "method %s has no .Ss %s "
		    "under METHODS in %s", m->name, m->name,
		    DBGCTL_PROTOCOL_MAN);
	json_decref(man);
}

/* Each .Ss under METHODS is a method of the table. */
Test(methods, dbgctl_protocol_names_no_other)
{
	json_t	*man = tables_man(), *v;
	size_t	 i;

	json_array_foreach(man, i, v)
		cr_expect_not_null(request_check_method(json_string_value(v)),
		    "%s documents a method %s the daemon does not have",
		    DBGCTL_PROTOCOL_MAN, json_string_value(v));
	json_decref(man);
}

/* Each method has its params, result, response and request check. */
Test(methods, each_has_its_schema)
{
	static const char *const	 parts[] = { "params", "results",
					    "responses" };
	json_t				*schema = tables_schema(), *defs;
	const struct method		*m;
	size_t				 i, k;

	defs = json_object_get(schema, "$defs");
	for (i = 0; (m = request_check_at(i)) != NULL; i++) {
		for (k = 0; k < sizeof parts / sizeof *parts; k++)
			cr_expect_not_null(json_object_get(json_object_get(defs,
			    parts[k]), m->name), "method %s has no "
			    "$defs/%s/%s in %s", m->name, parts[k], m->name,
			    DBGCTL_SCHEMA);
		cr_expect(tables_requested(schema, m->name), "method %s: "
		    "$defs/request in %s does not check its params", m->name,
		    DBGCTL_SCHEMA);
	}
	json_decref(schema);
}

/* Each method the schema has params for is one of the table. */
Test(methods, the_schema_names_no_other)
{
	json_t		*schema = tables_schema(), *params;
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

/* A list of kinds being read: the names so far and how it may end. */
struct tables_run {
	const char	*names[32];
	size_t		 n;
	bool		 joined;	/* an "and" or "or" since the last name */
	bool		 broke;		/* a line ended since the last name */
	int		 line;		/* where its first name is */
};

/* Whether the table's kinds that pick chooses (NULL: all) are run's names. */
static bool
tables_is(const struct tables_run *run, backend_pick pick)
{
	const struct backend	*be;
	size_t			 i, k = 0;

	for (i = 0; (be = backend_at(i)) != NULL; i++) {
		if (pick != NULL && !pick(be, NULL))
			continue;
		if (k == run->n || strcmp(run->names[k++], be->name) != 0)
			return false;
	}
	return k == run->n;
}

/* The family beside gdb: kinds whose gdb joins a target it did not start. */
static bool
tables_connects(const struct backend *be, const void *arg)
{
	return gdb_family_kind(be, arg) && strcmp(be->name, "gdb") != 0;
}

/*
 * Whether run's names are a list the table makes: a list of the gdb
 * family's kinds is the family, or the family beside gdb; a list of four
 * kinds or more is the whole table. Three kinds that are not all of the
 * family are a subset by a property the table does not name.
 */
static bool
tables_listed(const struct tables_run *run)
{
	size_t	i;

	for (i = 0; i < run->n; i++)
		if (!gdb_family_kind(backend_find(run->names[i]), NULL))
			return run->n < 4 || tables_is(run, NULL);
	return tables_is(run, gdb_family_kind) || tables_is(run, tables_connects);
}

/*
 * A list ends at word (NULL: at punctuation). Three names or more are a
 * list of kinds unless the list goes on past them ("gdb, lldb and QEMU
 * sessions") or the last one qualifies the word ("gdb connected to").
 */
static void
tables_end(struct tables_run *run, const char *word, const char *path)
{
	static const char *const ends[] = { "kind", "kinds", "session",
	    "sessions", NULL };
	const char *const	*e;
	char			 list[512] = "";
	size_t			 i;
	bool			 check = word == NULL || run->broke;

	for (e = ends; word != NULL && !run->joined && *e != NULL; e++)
		check = check || strcmp(word, *e) == 0;
	if (run->n >= 3 && check && !run->joined && !tables_listed(run)) {
		for (i = 0; i < run->n; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list),
			    "%s%s", i == 0 ? "" : ", ", run->names[i]);
		cr_expect_fail("%s:%d: the kinds (%s) are not the kind table's, "
		    "its gdb family or the family beside gdb, in the table's "
		    "order", path, run->line, list);
	}
	memset(run, 0, sizeof *run);
}

/* Check every list of kinds in the file at rel (from the source root). */
static void
tables_check_file(const char *rel)
{
	static const char *const joins[] = { "and", "or", "Cm", "Pq", "Li",
	    "Ql", NULL };
	const char *const	*j;
	const struct backend	*be;
	struct tables_run	 run = { .n = 0 };
	char			 path[PATH_MAX], word[64], *text, *p;
	size_t			 len;
	int			 line = 1;

	snprintf(path, sizeof path, "%s/%s", DBGCTL_SOURCE_ROOT, rel);
	text = tables_read(path);
	for (p = text; *p != '\0'; ) {
		if (*p == '\n') {
			line++;
			run.broke = true;
		}
		if (isspace((unsigned char)*p) || *p == ',' || *p == '"' ||
		    *p == '`' ||
		    (*p == '.' && (p == text || p[-1] == '\n'))) {
			p++;
			continue;
		}
		len = strspn(p, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
		if (len == 0) {
			tables_end(&run, NULL, rel);
			p++;
			continue;
		}
		snprintf(word, sizeof word, "%.*s", (int)len, p);
		p += len;
		if ((be = backend_find(word)) != NULL &&
		    run.n < sizeof run.names / sizeof *run.names) {
			if (run.n == 0)
				run.line = line;
			run.names[run.n++] = be->name;
			run.joined = run.broke = false;
			continue;
		}
		for (j = joins; *j != NULL && strcmp(*j, word) != 0; j++)
			;
		if (*j == NULL)
			tables_end(&run, word, rel);
		else if (run.n > 0 && (strcmp(word, "and") == 0 ||
		    strcmp(word, "or") == 0))
			run.joined = true;
	}
	tables_end(&run, NULL, rel);
	free(text);
}

/* The lists of kinds in the pages, README, Python and C sources. */
Test(kinds, the_lists_of_kinds_are_the_tables)
{
	static const char *const files[] = { "README.md", "man/dbgctl.1",
	    "man/dbgctl-protocol.7", "man/dbgctld.8", NULL };
	/* Directories and the ending of the files in them to read. */
	static const char *const dirs[] = { "python/dbgctl", ".py", "client",
	    ".c", "daemon", ".c", "daemon", ".h", NULL };
	const char *const	*f;
	struct dirent		*d;
	size_t			 len;
	char			 dir[PATH_MAX], rel[PATH_MAX];
	DIR			*dp;

	for (f = files; *f != NULL; f++)
		tables_check_file(*f);
	for (f = dirs; *f != NULL; f += 2) {
		snprintf(dir, sizeof dir, "%s/%s", DBGCTL_SOURCE_ROOT, f[0]);
		cr_assert_not_null(dp = opendir(dir), "%s", dir);
		while ((d = readdir(dp)) != NULL) {
			len = strlen(d->d_name);
			if (len <= strlen(f[1]) || strcmp(d->d_name + len -
			    strlen(f[1]), f[1]) != 0)
				continue;
			snprintf(rel, sizeof rel, "%s/%s", f[0], d->d_name);
			tables_check_file(rel);
		}
		closedir(dp);
	}
}

/* Check every "enum" of kind names in the schema below v, as a list. */
static void
tables_check_schema(json_t *v, const char *where)
{
	struct tables_run	 run = { .n = 0 };
	const char		*key;
	json_t			*e, *enumv;
	size_t			 i;
	bool			 other = false;

	/* An enum of kinds, and null at most: a list the table makes. */
	enumv = json_object_get(v, "enum");
	json_array_foreach(enumv, i, e) {
		if (json_is_string(e) && backend_find(json_string_value(e)) !=
		    NULL && run.n < sizeof run.names / sizeof *run.names)
			run.names[run.n++] = json_string_value(e);
		else if (!json_is_null(e))
			other = true;
	}
	if (!other)
		tables_end(&run, NULL, where);
	memset(&run, 0, sizeof run);
	if (json_is_object(v))
		json_object_foreach(v, key, e)
			tables_check_schema(e, where);
	if (json_is_array(v))
		json_array_foreach(v, i, e)
			tables_check_schema(e, where);
}

/* The schema's enums of kinds. */
Test(kinds, the_schemas_kinds_are_the_tables)
{
	json_t	*schema = tables_schema();

	tables_check_schema(schema, "proto/schema.json");
	json_decref(schema);
}
