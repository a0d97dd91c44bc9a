/*
 * The checks the bundle suites share (bundle-check.c): test_bundle.c,
 * test_bundle_core.c and test_bundle_paths.c.
 */
#ifndef DBGCTL_TEST_BUNDLE_CHECK_H
#define DBGCTL_TEST_BUNDLE_CHECK_H

#include "harness.h"

#include <sys/stat.h>

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Bound for one reply (ms). */
#define BD_BOUND	(30000 * H_SLOW)

/* path under the test dir. */
const char	*bd_path(char *buf, size_t len, const char *rel);
/* The file name in the bundle dir, and its mode and size, asserted to be there. */
void		 bd_stat(const char *dir, const char *name, struct stat *st);
/* The bundle at dir asserted whole against its manifest; the manifest. */
json_t		*bd_check(const char *dir);
/* Whether an entry of the manifest's list has key equal to value. */
bool		 bd_lists(json_t *m, const char *list, const char *key,
		    const char *value);
/* Whether the manifest names the file. */
bool		 bd_names(json_t *m, const char *name);
/* Whether something the manifest says is missing is what. */
bool		 bd_missing(json_t *m, const char *what);
/* Run the manifest's core_command with gdb's batch options and exs. */
void		 bd_core_open(struct h_res *r, json_t *m,
		    const char *const exs[]);
/* Wait for the session's automatic bundle; its status member. */
json_t		*bd_wait_auto(long id);

#endif
