/*
 * The bundle suites' checks (test_bundle*.c): a bundle asserted whole
 * against its manifest, what the manifest names or says is missing, the
 * manifest's command run on its core, and a session's automatic bundle.
 */
#include "bundle-check.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* path under the test dir. */
const char *
bd_path(char *buf, size_t len, const char *rel)
{
	h_ctx_path(buf, len, rel);
	return buf;
}

/* The file name in the bundle dir, and its mode and size, asserted to be there. */
void
bd_stat(const char *dir, const char *name, struct stat *st)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	cr_assert_eq(lstat(path, st), 0, "%s: %s", path, strerror(errno));
}

/*
 * The bundle at dir: 0700, every file its manifest names there, 0600 and
 * of the size it says, and nothing else but the manifest; the manifest.
 */
json_t *
bd_check(const char *dir)
{
	char		 path[PATH_MAX];
	struct stat	 st;
	json_t		*m, *f;
	json_error_t	 err;
	size_t		 i, named = 0;
	struct dirent	*e;
	DIR		*d;

	cr_assert_eq(lstat(dir, &st), 0, "no bundle at %s", dir);
	cr_assert(S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
	    "%s: mode %o, not a 0700 directory", dir, st.st_mode);
	snprintf(path, sizeof path, "%s/manifest.json", dir);
	m = json_load_file(path, 0, &err);
	cr_assert_not_null(m, "%s: %s", path, err.text);
	json_array_foreach(json_object_get(m, "files"), i, f) {
		bd_stat(dir, h_jstr(f, "name"), &st);
		cr_assert(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600,
		    "%s: mode %o, not a 0600 file", h_jstr(f, "name"),
		    st.st_mode);
		cr_assert_eq((long long)st.st_size, h_jint(f, "bytes", -1),
		    "%s: %lld bytes, the manifest says %lld", h_jstr(f, "name"),
		    (long long)st.st_size, h_jint(f, "bytes", -1));
		named++;
	}
	cr_assert_not_null(d = opendir(dir));
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && strcmp(e->d_name, "manifest.json") !=
		    0)
			named--;
	closedir(d);
	cr_assert_eq(named, 0, "the bundle %s holds files its manifest does "
	    "not name, or lacks some: %s", dir, json_dumps(json_object_get(m,
	    "files"), JSON_COMPACT));
	return m;
}

/* Whether an entry of the manifest's list has key equal to value. */
bool
bd_lists(json_t *m, const char *list, const char *key, const char *value)
{
	json_t	*f;
	size_t	 i;

	json_array_foreach(json_object_get(m, list), i, f)
		if (strcmp(h_jstr(f, key), value) == 0)
			return true;
	return false;
}

/* Whether the manifest names the file. */
bool
bd_names(json_t *m, const char *name)
{
	return bd_lists(m, "files", "name", name);
}

/* Whether something the manifest says is missing is what. */
bool
bd_missing(json_t *m, const char *what)
{
	return bd_lists(m, "missing", "what", what);
}

/*
 * Run the manifest's core_command (a shell command) with gdb's batch
 * options after it, each -ex in exs: its output and exit in r.
 */
void
bd_core_open(struct h_res *r, json_t *m, const char *const exs[])
{
	char	cmd[8192];
	size_t	n, i;

	cr_assert_not_null(h_jstr(m, "core_command"), "the manifest names no "
	    "command to open its core: %s", json_dumps(m, JSON_COMPACT));
	n = (size_t)snprintf(cmd, sizeof cmd, "%s -nx -batch",
	    h_jstr(m, "core_command"));
	for (i = 0; exs[i] != NULL && n < sizeof cmd; i++)
		n += (size_t)snprintf(cmd + n, sizeof cmd - n, " -ex '%s'",
		    exs[i]);
	cr_assert_lt(n, sizeof cmd);
	h_run(r, BD_BOUND, H_ARGS("/bin/sh", "-c", cmd));
}

/* Wait for the session's automatic bundle; its status member. */
json_t *
bd_wait_auto(long id)
{
	json_t *st, *b;

	cr_assert(h_cli_wait_status(id, "bundle", NULL, BD_BOUND), "session "
	    "%ld: no automatic bundle within %d ms", id, BD_BOUND);
	st = h_cli_status(id);
	b = json_incref(h_jpath(st, "bundle"));
	json_decref(st);
	cr_assert_null(h_jpath(b, "error"), "%s", json_dumps(b, JSON_COMPACT));
	return b;
}
