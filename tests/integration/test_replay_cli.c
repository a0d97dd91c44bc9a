/*
 * dbgctl replay's own checks of a bundle, made before any daemon is
 * asked.
 *
 * What a user checks: a bundle is untrusted, so a replay.json that names
 * QEMU arguments is refused, the error naming them and the launch that
 * passes them for one who trusts them, and a CPU that is not a plain name
 * is refused; a BUNDLE that is a file (a --tar bundle) is refused as not
 * a bundle directory; none of these starts a daemon.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(replay_cli, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* A bundle directory whose replay.json is meta, with a firmware file; its path in dir. */
static void
rc_bundle(const char *meta, char *dir, size_t len)
{
	char	 path[PATH_MAX + 32];
	FILE	*f;

	h_ctx_path(dir, len, "bundle");
	cr_assert_eq(mkdir(dir, 0700), 0, "mkdir %s", dir);
	snprintf(path, sizeof path, "%s/replay.json", dir);
	cr_assert_not_null(f = fopen(path, "w"), "%s", path);
	fprintf(f, "%s\n", meta);
	fclose(f);
	snprintf(path, sizeof path, "%s/firmware.elf", dir);
	cr_assert_not_null(f = fopen(path, "w"), "%s", path);
	fclose(f);
}

/* Run dbgctl replay dir, assert it exits 1 with text on stderr and starts no daemon. */
static void
rc_refused(const char *dir, const char *text)
{
	struct h_res	r;

	cr_assert_eq(h_cli(&r, H_ARGS("replay", dir)), 1, "dbgctl replay "
	    "%s: exit %d, stderr \"%s\"", dir, r.code, r.err);
	cr_assert(strstr(r.err, text) != NULL, "dbgctl replay %s: no \"%s\" "
	    "in \"%s\"", dir, text, r.err);
	h_run_free(&r);
	h_cli_expect_no_daemon("replay");
}

/*
 * A replay.json naming QEMU arguments (-plugin loads code) is refused: the
 * error names them and the launch with --qemu-arg that passes them.
 */
Test(replay_cli, a_bundle_naming_qemu_args_is_refused_saying_how_to_pass_them)
{
	char	dir[PATH_MAX], want[3 * PATH_MAX];

	rc_bundle("{\"machine\": \"mps2-an385\", \"qemu_args\": [\"-plugin\", "
	    "\"/tmp/evil.so\"]}", dir, sizeof dir);
	rc_refused(dir, "names QEMU arguments (-plugin /tmp/evil.so)");
	snprintf(want, sizeof want, "dbgctl launch --kind qemu --replay %s "
	    "--machine mps2-an385 --qemu-arg=-plugin --qemu-arg=/tmp/evil.so "
	    "--transport -- %s/firmware.elf", dir, dir);
	rc_refused(dir, want);
}

/* A CPU in replay.json that is more than a plain name (QEMU options after a comma) is refused. */
Test(replay_cli, a_cpu_that_is_not_a_plain_name_is_refused)
{
	char	dir[PATH_MAX];

	rc_bundle("{\"machine\": \"mps2-an385\", \"cpu\": "
	    "\"cortex-m3,x=y\"}", dir, sizeof dir);
	rc_refused(dir, "its cpu is not a plain name");
}

/* A BUNDLE that is a file, as a --tar bundle is, is refused as not a bundle directory. */
Test(replay_cli, a_bundle_that_is_a_file_is_refused_as_not_a_directory)
{
	char	 path[PATH_MAX];
	FILE	*f;

	h_ctx_path(path, sizeof path, "bundle.tar.gz");
	cr_assert_not_null(f = fopen(path, "w"), "%s", path);
	fclose(f);
	rc_refused(path, "BUNDLE must be a bundle directory");
}
