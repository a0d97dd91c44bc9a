/*
 * dbgctl replay's own checks of a bundle, made before any daemon is
 * asked, and how break prints a watchpoint.
 *
 * What a user checks: a bundle is untrusted, so a replay.json that names
 * QEMU arguments is refused, the error naming them and the launch that
 * passes them for one who trusts them, and a CPU that is not a plain name
 * is refused; a BUNDLE that is a file (a --tar bundle) is refused as not
 * a bundle directory; launch --replay resolves its bundle before asking
 * the daemon, refusing a missing one; none of these starts a daemon.
 * break --list prints a watchpoint as break --watch does ("watchpoint N
 * on EXPR"), here on a native gdb session, which is cheaper than a board.
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

/* How long a halt may take, in ms, as text for --timeout. */
#define RC_BOUND "20000"

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

/* launch --replay resolves its bundle here (realpath): a missing one is refused, named, before any daemon. */
Test(replay_cli, launch_replay_of_a_missing_bundle_is_refused_here)
{
	struct h_res	r;

	cr_assert_eq(h_cli(&r, H_ARGS("launch", "--kind", "qemu", "--machine",
	    "mps2-an385", "--replay", "no-such-bundle", "fw.elf")), 1,
	    "exit %d, stderr \"%s\"", r.code, r.err);
	cr_assert(strstr(r.err, "--replay no-such-bundle: No such file") !=
	    NULL, "stderr \"%s\"", r.err);
	h_run_free(&r);
	h_cli_expect_no_daemon("launch --replay");
}

/* The one line dbgctl ARGS... printed, asserted to exit 0; malloc'd. */
static char *
rc_line(const char *const args[])
{
	struct h_res	 r;
	char		*line;

	h_cli_exit(&r, 0, args);
	cr_assert(r.out_len > 0 && r.out[r.out_len - 1] == '\n',
	    "dbgctl %s: \"%s\"", args[0], h_shown(r.out, r.out_len, 600));
	r.out[r.out_len - 1] = '\0';
	line = strdup(r.out);
	h_run_free(&r);
	return line;
}

/* Whether a line of text begins with start. */
static bool
rc_has_line(const char *text, const char *start)
{
	const char	*p;

	for (p = text; p != NULL; p = strchr(p, '\n'))
		if (strncmp(*p == '\n' ? ++p : p, start, strlen(start)) == 0)
			return true;
	return false;
}

/* break --watch prints "watchpoint N on ticks", and break --list the same. */
Test(replay_cli, break_list_prints_a_watchpoint_as_break_watch_does)
{
	char	 ids[32], want[64], *made, *list;
	long	 id;

	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "gdb", "-x", "run", "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "session %s: its target never ran", ids);
	free(rc_line(H_ARGS("halt", "--timeout", RC_BOUND, ids)));
	made = rc_line(H_ARGS("break", "--watch", ids, "ticks"));
	cr_assert(strncmp(made, "watchpoint ", 11) == 0 && strstr(made,
	    " on ticks") != NULL, "break --watch: \"%s\"", made);
	snprintf(want, sizeof want, "%.*s", (int)(strstr(made, " on ticks") -
	    made) + 9, made);
	list = rc_line(H_ARGS("break", "--list", ids));
	cr_assert(rc_has_line(list, want), "break --list: \"%s\", expected "
	    "a line beginning \"%s\" as break --watch said", list, want);
	free(made);
	free(list);
	json_decref(h_cli_stop(id, NULL, NULL));
}
