/*
 * Files and input that cannot be turned against the owner: a state
 * directory others could write or own is refused, a log planted as a
 * symbolic link is never written through, a state path that is not UTF-8
 * is refused at start, and a remote address can carry nothing but
 * HOST:PORT into gdb's MI.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/mount.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(files, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 60);

/* Run the daemon in the foreground on the test's socket; its result. */
static void
run_daemon(struct h_res *r)
{
	char listen[PATH_MAX + 8];

	snprintf(listen, sizeof listen, "unix:%s", H->sock);
	h_run(r, H_RUN_BOUND, H_ARGS(H->dbgctld, "--foreground", "--listen",
	    listen));
}

/* Make the state directory (H->state) with mode, its parent too. */
static void
make_state_dir(mode_t mode)
{
	char	path[PATH_MAX], *p;

	snprintf(path, sizeof path, "%s", H->state);
	for (p = path + strlen(H->dir) + 1; (p = strchr(p, '/')) != NULL;
	    p++) {
		*p = '\0';
		cr_assert(mkdir(path, 0700) == 0 || errno == EEXIST,
		    "mkdir %s", path);
		*p = '/';
	}
	cr_assert(mkdir(H->state, 0700) == 0 || errno == EEXIST, "mkdir %s",
	    H->state);
	cr_assert_eq(chmod(H->state, mode), 0, "chmod %s", H->state);
}

/* A state directory others may write is refused, and nothing listens. */
Test(files, a_loose_state_dir_is_refused)
{
	struct h_res r;

	make_state_dir(0777);
	run_daemon(&r);
	cr_assert_eq(r.code, 1, "exit %d (%s)", r.code, r.err);
	cr_assert_not_null(strstr(r.err, "group or world writable"),
	    "stderr: %s", r.err);
	cr_assert_not_null(strstr(r.err, H->state), "stderr: %s", r.err);
	cr_assert_neq(access(H->sock, F_OK), 0, "a socket was made");
	h_run_free(&r);
}

/* A state directory of another user is refused. */
Test(files, a_foreign_state_dir_is_refused)
{
	struct h_res r;

	if (geteuid() != 0)
		cr_skip_test("only root can give a directory to another user");
	make_state_dir(0700);
	cr_assert_eq(chown(H->state, 65534, 65534), 0, "chown");
	run_daemon(&r);
	cr_assert_eq(r.code, 1, "exit %d (%s)", r.code, r.err);
	cr_assert_not_null(strstr(r.err, "owned by uid 65534"), "stderr: %s",
	    r.err);
	h_run_free(&r);
}

/* A state path that is not UTF-8 is refused with words that say so. */
Test(files, a_state_home_not_utf8_is_refused)
{
	char		kv[PATH_MAX + 32];
	struct h_res	r;

	snprintf(kv, sizeof kv, "XDG_STATE_HOME=%s/st\xff\xfe", H->dir);
	h_ctx_env_add(kv);
	run_daemon(&r);
	cr_assert_eq(r.code, 1, "exit %d (%s)", r.code, r.err);
	cr_assert_not_null(strstr(r.err, "not valid UTF-8"), "stderr: %s",
	    r.err);
	h_run_free(&r);
}

/*
 * A symbolic link planted where the next session's log goes is not
 * written through: that launch fails saying why, the link's target stays
 * empty, and the daemon goes on launching.
 */
Test(files, a_planted_log_link_is_not_followed)
{
	char		 victim[PATH_MAX], link[PATH_MAX + 32], ids[32];
	struct h_res	 r;
	struct stat	 st;
	long		 first, next;
	FILE		*f;

	first = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	h_cli_expect_exit(first, 0, 10000, "the first session");
	h_ctx_path(victim, sizeof victim, "victim");
	cr_assert_not_null(f = fopen(victim, "w"), "victim");
	fclose(f);
	snprintf(link, sizeof link, "%s/sessions/%ld.log", H->state,
	    first + 1);
	cr_assert_eq(symlink(victim, link), 0, "symlink %s", link);
	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--", "echo", "secret"));
	cr_assert_neq(r.code, 0, "a launch through a planted log succeeded");
	cr_assert_not_null(strstr(r.err, "File exists"), "stderr: %s", r.err);
	h_run_free(&r);
	cr_assert_eq(stat(victim, &st), 0, "stat victim");
	cr_assert_eq(st.st_size, 0, "%lld bytes written through the link",
	    (long long)st.st_size);
	next = h_cli_launch(H_ARGS("--kind", "exec", "--", "true"));
	h_cli_expect_exit(next, 0, 10000, "a launch after the refused one");
	cr_assert_gt(next, first + 1, "session %s reused an id",
	    h_idstr(next, ids, sizeof ids));
}

/* Launch a remote session at addr; the result, for its error words. */
static void
launch_remote(struct h_res *r, const char *addr)
{
	h_cli(r, H_ARGS("launch", "--kind", "remote", "--remote", addr,
	    "--connect-timeout", "1000"));
}

/*
 * A remote address with a line break (which gdb's MI would read as a
 * second command), a quote, or a bad port is refused before gdb starts;
 * names, IPv4 and bracketed IPv6 addresses pass the check.
 */
Test(files, a_remote_address_is_host_and_port_only)
{
	static const char *bad[] = {
		"127.0.0.1:1\n-interpreter-exec console \"shell touch x\"",
		"127.0.0.1:1 extra", "host\":1", "127.0.0.1:0",
		"127.0.0.1:65536", "127.0.0.1:", ":1234", "127.0.0.1:12a",
		"[::1:1234",
	};
	static const char *good[] = { "127.0.0.1:1", "localhost:1",
	    "[::1]:1" };
	struct h_res	r;
	size_t		i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		launch_remote(&r, bad[i]);
		cr_assert_neq(r.code, 0, "\"%s\" was accepted", bad[i]);
		cr_assert_not_null(strstr(r.err, "must be HOST:PORT"),
		    "\"%s\": stderr: %s", bad[i], r.err);
		h_run_free(&r);
	}
	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		launch_remote(&r, good[i]);
		cr_assert_null(strstr(r.err, "must be HOST:PORT"),
		    "\"%s\" was refused: %s", good[i], r.err);
		h_run_free(&r);
	}
}

/* Where the test mounts a small filesystem for the session logs. */
static char logs_mount[PATH_MAX];

/* Unmount the logs filesystem, then the usual teardown. */
static void
logs_fini(void)
{
	if (logs_mount[0] != '\0')
		(void)umount2(logs_mount, MNT_DETACH);
	h_ctx_teardown();
}

/*
 * Put the sessions directory on a tmpfs of size bytes, with a filler file
 * of filler bytes; false if this machine lets no test mount one.
 */
static bool
logs_on_small_fs(size_t size, size_t filler)
{
	char	opts[64], path[PATH_MAX + 16], *fill;
	FILE	*f;

	snprintf(logs_mount, sizeof logs_mount, "%s/sessions", H->state);
	make_state_dir(0700);
	cr_assert(mkdir(logs_mount, 0700) == 0, "mkdir %s", logs_mount);
	snprintf(opts, sizeof opts, "size=%zu,mode=0700", size);
	if (mount("tmpfs", logs_mount, "tmpfs", 0, opts) != 0) {
		logs_mount[0] = '\0';
		return false;
	}
	snprintf(path, sizeof path, "%s/filler", logs_mount);
	cr_assert_not_null(f = fopen(path, "w"), "filler");
	fill = calloc(1, filler);
	fwrite(fill, 1, filler, f);
	free(fill);
	fclose(f);
	return true;
}

/* Whether a session's status says its log failed. */
static bool
log_failed(void *arg)
{
	json_t	*st = h_cli_status(*(long *)arg);
	bool	 yes = h_jstr(st, "log_error") != NULL;

	json_decref(st);
	return yes;
}

/*
 * A log on a full filesystem: status says so (log_error, log_missing),
 * the daemon log too; once space returns the log goes on at the stream's
 * own offsets (the file's size is the stream's, its last bytes the last
 * printed); logs readers are told which range is missing and move past
 * it; dbgctl logs prints what there is, a notice, and exits 1.
 */
Test(files, a_log_that_cannot_be_written_says_so, .fini = logs_fini)
{
	char		 filler[PATH_MAX + 16], logpath[PATH_MAX + 64];
	char		 script[PATH_MAX + 256], ids[32], dpath[PATH_MAX + 16];
	char		*text, *dlog;
	struct h_res	 r;
	struct stat	 st;
	json_t		*j;
	long		 id, size, missing;
	size_t		 len, i;

	if (geteuid() != 0 || !logs_on_small_fs(1024 * 1024, 700 * 1024))
		cr_skip_test("no tmpfs can be mounted here");
	snprintf(filler, sizeof filler, "%s/filler", logs_mount);
	/* 600 KB that cannot all fit, a wait for space, then 300 KB of y. */
	snprintf(script, sizeof script, "head -c 600000 /dev/zero | tr '\\0' x; "
	    "while [ -e '%s' ]; do sleep 0.01; done; "
	    "head -c 300000 /dev/zero | tr '\\0' y", filler);
	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sh", "-c", script));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_wait_for(log_failed, &id, 20000), "status never said the "
	    "log failed");
	cr_assert_eq(unlink(filler), 0, "unlink filler");
	j = h_cli_wait_ended(id, 30000);
	size = (long)h_jint(j, "exit.code", -1);
	cr_assert_eq(size, 0, "the program's exit");
	cr_assert_str_eq(h_jstr(j, "log_error"), "No space left on device");
	missing = (long)h_jint(j, "log_missing", -1);
	cr_assert_gt(missing, 0, "log_missing");
	json_decref(j);
	snprintf(dpath, sizeof dpath, "%s/dbgctld.log", H->state);
	dlog = h_read_file(dpath, NULL);
	cr_assert(dlog != NULL && strstr(dlog, "cannot write at offset") !=
	    NULL && strstr(dlog, "written again from offset") != NULL,
	    "daemon log: %s", dlog);
	free(dlog);
	/* The file keeps stream offsets: its size and its tail are the stream's. */
	snprintf(logpath, sizeof logpath, "%s/%s.log", logs_mount, ids);
	cr_assert_eq(stat(logpath, &st), 0, "stat %s", logpath);
	cr_assert_eq(st.st_size, 900000, "log file size %lld",
	    (long long)st.st_size);
	text = h_read_file(logpath, &len);
	for (i = len - 300000; i < len; i++)
		cr_assert_eq(text[i], 'y', "byte %zu of the file is not the "
		    "stream's", i);
	free(text);
	h_cli(&r, H_ARGS("logs", ids));
	cr_assert_eq(r.code, 1, "dbgctl logs: exit %d", r.code);
	cr_assert_not_null(strstr(r.err, "missing from the log"), "stderr: %s",
	    r.err);
	cr_assert_eq((long)r.out_len, 900000 - missing, "dbgctl logs printed "
	    "%zu bytes, %ld missing", r.out_len, missing);
	h_run_free(&r);
}
