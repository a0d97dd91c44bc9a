/*
 * A bundle's path, hostile or raced (issue 23): a parent another user
 * owns or may write is refused and steers nothing; a temporary directory
 * swapped for a link gets nothing written through it; of two bundles to
 * one path one lands and the other gets exists; a stop right after a
 * bundle leaves only what its manifest names; a full disk fails the
 * bundle as an io_error with its errno.
 */
#include "harness.h"
#include "bundle-check.h"

#include <criterion/criterion.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(bundle_paths, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* The replies to requests 1..n on c, by id, whatever their order; asserted. */
static void
bd_replies(struct h_conn *c, json_t **out, int n)
{
	double	 end = h_now() + BD_BOUND / 1000.0;
	json_t	*j;
	long	 id;
	int	 got = 0;

	memset(out, 0, sizeof *out * (size_t)n);
	while (got < n && h_now() < end && (j = h_conn_recv(c, (int)((end -
	    h_now()) * 1000) + 1)) != NULL) {
		id = (long)h_jint(j, "id", 0);
		if (id < 1 || id > n || out[id - 1] != NULL) {
			json_decref(j);
			continue;
		}
		out[id - 1] = j;
		got++;
	}
	cr_assert_eq(got, n, "%d of %d replies within %d ms", got, n,
	    BD_BOUND);
}

/* A reply's error kind, or "written". */
static const char *
bd_kind(json_t *reply)
{
	return h_jkind(reply)[0] != '\0' ? h_jkind(reply) : "written";
}

/* Send one line holding the requests of reqs (each a whole JSON-RPC line). */
static void
bd_send(struct h_conn *c, const char *lines)
{
	cr_assert_eq(h_conn_send(c, lines, strlen(lines), BD_BOUND), 0);
}

/* The names in dir, but . and .., joined with spaces into buf; how many. */
static int
bd_ls(const char *dir, char *buf, size_t len)
{
	struct dirent	*e;
	DIR		*d;
	size_t		 used;
	int		 n = 0;

	buf[0] = '\0';
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s ", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * An attacker in a child: as uid (or root, uid 0), it watches dir for
 * the daemon's temporary bundle directory and, at once, renames it to
 * "moved" and puts there a link to victim. It exits 0 once it did, 1 if
 * it never could within the bound.
 */
static pid_t
bd_attacker(const char *dir, uid_t uid, const char *victim)
{
	struct dirent	*e;
	DIR		*d;
	double		 end = h_now() + BD_BOUND / 1000.0;
	pid_t		 pid;
	int		 dfd, fd;

	cr_assert_neq(dfd = open(dir, O_RDONLY | O_DIRECTORY), -1);
	cr_assert_neq(pid = fork(), -1);
	if (pid > 0) {
		close(dfd);
		return pid;
	}
	if (uid != 0 && (setgid(uid) != 0 || setuid(uid) != 0))
		_exit(2);
	while (h_now() < end) {
		if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY)) == -1 ||
		    (d = fdopendir(fd)) == NULL)
			_exit(2);
		while ((e = readdir(d)) != NULL)
			if (strstr(e->d_name, ".partial-") != NULL &&
			    renameat(dfd, e->d_name, dfd, "moved") == 0 &&
			    symlinkat(victim, dfd, e->d_name) == 0)
				_exit(0);
		closedir(d);
		usleep(200);
	}
	_exit(1);
}

/* Stop the attacker if it still watches; its exit status. */
static int
bd_attacker_end(pid_t pid)
{
	int st = 0;

	(void)kill(pid, SIGKILL);
	cr_assert(h_run_waitpid(pid, BD_BOUND, &st), "the attacker %d did not "
	    "end", (int)pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A bundle request for session id at path, as a line with id n. */
static void
bd_req(char *buf, size_t len, int n, long id, const char *path, bool tar)
{
	snprintf(buf, len, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"bundle\",\"params\":{\"session\":%ld,\"path\":\"%s\"%s}}\n", n,
	    id, path, tar ? ",\"tar\":true" : "");
}

/* A gdb session whose program runs: a bundle of it halts it and runs gcore. */
static long
bd_gdb_loop(void)
{
	long sid = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_LOOP")));

	cr_assert(h_cli_wait_status(sid, "target.state", "running",
	    H_WAIT_BOUND), "the loop never ran");
	return sid;
}

/*
 * Bundle session sid at dir/b while an attacker as uid swaps the
 * temporary directory for a link to a victim directory; asserted: nothing
 * is written through the link. The reply; *swapped: whether it swapped.
 */
static json_t *
bd_attacked(long sid, const char *dir, uid_t uid, bool *swapped)
{
	char		 victim[PATH_MAX], out[PATH_MAX + 8];
	char		 req[PATH_MAX * 2], left[1024], moved[PATH_MAX + 8];
	struct h_conn	 c;
	struct stat	 st;
	json_t		*r;
	pid_t		 attacker;

	bd_path(victim, sizeof victim, "victim");
	cr_assert_eq(mkdir(victim, 0700), 0);
	snprintf(out, sizeof out, "%s/b", dir);
	attacker = bd_attacker(dir, uid, victim);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	bd_req(req, sizeof req, 1, sid, out, false);
	bd_send(&c, req);
	bd_replies(&c, &r, 1);
	h_conn_close(&c);
	/*
	 * Renamed is swapped: the daemon may refuse on seeing the rename, and
	 * the attacker be stopped, before its link is made or it exits.
	 */
	snprintf(moved, sizeof moved, "%s/moved", dir);
	*swapped = bd_attacker_end(attacker) == 0 || lstat(moved, &st) == 0;
	cr_assert_eq(bd_ls(victim, left, sizeof left), 0, "the bundle was "
	    "written through the link into %s: %s", victim, left);
	return r;
}

/*
 * A parent another user owns, with that user swapping in it, or one its
 * group may write without the sticky bit, is refused with why and gets
 * nothing written through a link; a sticky world-writable one is used.
 */
Test(bundle_paths, a_parent_another_user_owns_or_may_write_is_refused_and_steers_nothing)
{
	char		 evil[PATH_MAX], out[PATH_MAX + 8], req[PATH_MAX * 2];
	struct h_conn	 c;
	json_t		*r;
	long		 sid;
	bool		 swapped;

	h_daemon_fg();
	sid = bd_gdb_loop();
	/* nobody owns the parent, and does what its owner may. */
	bd_path(evil, sizeof evil, "evil");
	cr_assert_eq(mkdir(evil, 0755), 0);
	cr_assert_eq(chown(evil, 65534, 65534), 0, "%s", strerror(errno));
	r = bd_attacked(sid, evil, 65534, &swapped);
	cr_assert_str_eq(bd_kind(r), "invalid_params",
	    "%s", json_dumps(r, JSON_COMPACT));
	cr_assert(strstr(h_jstr(r, "error.message"), "owned by uid 65534"),
	    "the refusal does not say why: %s", h_jstr(r, "error.message"));
	json_decref(r);
	snprintf(out, sizeof out, "%s/b", evil);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	/* Writable by its group, not sticky: refused; sticky and world-writable: used. */
	cr_assert_eq(chown(evil, 0, 0), 0);
	cr_assert_eq(chmod(evil, 0775), 0);
	snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s\"}", sid,
	    out);
	r = h_conn_call(&c, "bundle", req, BD_BOUND);
	cr_assert_str_eq(bd_kind(r), "invalid_params",
	    "%s", json_dumps(r, JSON_COMPACT));
	cr_assert(strstr(h_jstr(r, "error.message"), "not sticky"), "%s",
	    h_jstr(r, "error.message"));
	json_decref(r);
	cr_assert_eq(chmod(evil, 01777), 0);
	r = h_conn_call(&c, "bundle", req, BD_BOUND);
	cr_assert_str_eq(bd_kind(r), "written", "%s", json_dumps(r,
	    JSON_COMPACT));
	json_decref(r);
	json_decref(bd_check(out));
	h_conn_close(&c);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

/*
 * In a sticky world-writable parent, a temporary bundle directory swapped
 * for a link fails the bundle as an io_error with nothing written through
 * the link or left in the moved directory, or, swapped too late, the bundle
 * is whole.
 */
Test(bundle_paths, a_temporary_directory_swapped_for_a_link_gets_nothing_written_through_it)
{
	char		 dir[PATH_MAX], out[PATH_MAX + 8], moved[PATH_MAX + 8];
	char		 left[1024];
	struct stat	 st;
	json_t		*r;
	long		 sid;
	bool		 swapped;

	h_daemon_fg();
	sid = bd_gdb_loop();
	/* A /tmp-like parent, and one who may rename in it all the same. */
	bd_path(dir, sizeof dir, "shared");
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(chmod(dir, 01777), 0);
	snprintf(out, sizeof out, "%s/b", dir);
	snprintf(moved, sizeof moved, "%s/moved", dir);
	r = bd_attacked(sid, dir, 0, &swapped);
	if (!swapped) {
		/* Too late to swap: the bundle is there, whole. */
		cr_assert_str_eq(bd_kind(r), "written", "%s", json_dumps(r,
		    JSON_COMPACT));
		json_decref(bd_check(out));
	} else {
		cr_assert_str_eq(bd_kind(r), "io_error", "%s", json_dumps(r,
		    JSON_COMPACT));
		cr_assert(strstr(h_jstr(r, "error.message"), "moved or "
		    "replaced"), "%s", h_jstr(r, "error.message"));
		cr_assert_neq(lstat(out, &st), 0, "%s is there", out);
		cr_assert_eq(bd_ls(moved, left, sizeof left), 0, "the failed "
		    "bundle left files in the directory moved away: %s", left);
	}
	json_decref(r);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

/*
 * Two bundles asked at once to one path, as archives and then as
 * directories: one lands whole, the other is refused as exists (code 14).
 */
Test(bundle_paths, of_two_bundles_to_one_path_one_lands_and_the_other_gets_exists)
{
	char		 out[PATH_MAX], reqs[PATH_MAX * 4], *p, tar[PATH_MAX];
	json_t		*r[2];
	struct h_conn	 c;
	struct h_res	 res;
	long		 a, b;
	int		 round, won;

	h_daemon_fg();
	a = h_cli_launch_sh(NULL, "echo first; exec sleep 1000");
	b = h_cli_launch_sh(NULL, "echo second; exec sleep 1000");
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	/* Both asked at once: both find the path free, only one may take it. */
	for (round = 0; round < 2; round++) {
		bd_path(out, sizeof out, round == 0 ? "one.tar.gz" : "one");
		bd_req(reqs, sizeof reqs, 1, a, out, round == 0);
		p = reqs + strlen(reqs);
		bd_req(p, sizeof reqs - (size_t)(p - reqs), 2, b, out,
		    round == 0);
		bd_send(&c, reqs);
		bd_replies(&c, r, 2);
		won = strcmp(bd_kind(r[0]), "written") == 0 ? 0 : 1;
		cr_assert_str_eq(bd_kind(r[won]), "written", "neither landed: "
		    "%s %s", json_dumps(r[0], JSON_COMPACT), json_dumps(r[1],
		    JSON_COMPACT));
		cr_assert_str_eq(bd_kind(r[1 - won]), "exists", "both were "
		    "answered: %s", json_dumps(r[1 - won], JSON_COMPACT));
		cr_assert_eq(h_jint(r[1 - won], "error.code", 0), 14);
		json_decref(r[0]);
		json_decref(r[1]);
		/* Renamed over nothing: the winner's is there. */
		if (round == 0) {
			cr_assert_not_null(h_which("tar", tar, sizeof tar));
			h_run(&res, BD_BOUND, H_ARGS("/bin/sh", "-c", "\"$0\" "
			    "-xzOf \"$1\" one/manifest.json", tar, out));
			cr_assert(strstr(res.out, won == 0 ? "first" :
			    "second") != NULL, "the archive is not the "
			    "winner's: %s %s", res.out, res.err);
			h_run_free(&res);
		} else
			json_decref(bd_check(out));
	}
	h_conn_close(&c);
	json_decref(h_cli_stop(a, NULL, NULL));
	json_decref(h_cli_stop(b, NULL, NULL));
}

/*
 * A stop sent in the same line as a bundle, four times over: the bundle is
 * written and holds only what its manifest names, a core only where it is
 * named.
 */
Test(bundle_paths, a_stop_right_after_a_bundle_leaves_only_what_its_manifest_names)
{
	char		 out[PATH_MAX], reqs[PATH_MAX * 2], name[32], *p;
	json_t		*r[2], *m;
	struct h_conn	 c;
	long		 sid;
	int		 round;

	h_daemon_fg();
	for (round = 0; round < 4; round++) {
		sid = bd_gdb_loop();
		snprintf(name, sizeof name, "stopped-%d", round);
		bd_path(out, sizeof out, name);
		cr_assert_eq(h_conn_open(&c, H->sock), 0);
		bd_req(reqs, sizeof reqs, 1, sid, out, false);
		p = reqs + strlen(reqs);
		snprintf(p, sizeof reqs - (size_t)(p - reqs), "{\"jsonrpc\":"
		    "\"2.0\",\"id\":2,\"method\":\"stop\",\"params\":"
		    "{\"session\":%ld}}\n", sid);
		bd_send(&c, reqs);
		bd_replies(&c, r, 2);
		h_conn_close(&c);
		cr_assert_str_eq(bd_kind(r[0]), "written", "%s",
		    json_dumps(r[0], JSON_COMPACT));
		/* Every file named, nothing else: no core the manifest lacks. */
		m = bd_check(out);
		if (json_is_null(json_object_get(m, "core")))
			cr_assert(bd_missing(m, "core"), "no core and no why: "
			    "%s", json_dumps(json_object_get(m, "missing"),
			    JSON_COMPACT));
		json_decref(m);
		json_decref(r[0]);
		json_decref(r[1]);
	}
}

/* Fill the filesystem at dir: a file written until no byte fits, then files until no inode is left. */
static void
bd_fill(const char *dir)
{
	char	 path[PATH_MAX + 16], buf[4096];
	int	 fd, i;

	snprintf(path, sizeof path, "%s/filler", dir);
	cr_assert_neq(fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600), -1);
	memset(buf, 'f', sizeof buf);
	while (write(fd, buf, sizeof buf) > 0)
		;
	close(fd);
	for (i = 0; i < 1000; i++) {
		snprintf(path, sizeof path, "%s/inode-%d", dir, i);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) == -1)
			break;
		close(fd);
	}
}

/* Mount a small tmpfs at dir, or skip (fail under DBGCTL_CI=1). */
static void
bd_tmpfs(const char *dir, const char *opts)
{
	const char *ci = getenv("DBGCTL_CI");

	cr_assert_eq(mkdir(dir, 0700), 0);
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) == 0)
		return;
	if (ci != NULL && strcmp(ci, "1") == 0)
		cr_assert_fail("DBGCTL_CI=1: cannot mount a tmpfs at %s: %s",
		    dir, strerror(errno));
	cr_skip_test("cannot mount a tmpfs (a full disk is made so): %s",
	    strerror(errno));
}

/*
 * A bundle to a tmpfs out of bytes, then one out of inodes, fails as an
 * io_error with ENOSPC, leaves no partial directory, and the daemon serves
 * on.
 */
Test(bundle_paths, a_full_disk_fails_the_bundle_as_an_io_error_with_its_errno)
{
	/* Out of bytes (a directory fits, files do not), then out of inodes. */
	static const char *const opts[] = { "size=64k,mode=0700",
	    "size=4m,nr_inodes=8,mode=0700" };
	char		 full[PATH_MAX], out[PATH_MAX + 8], req[PATH_MAX * 2];
	char		 left[4096], name[16];
	struct h_conn	 c;
	json_t		*r;
	long		 sid;
	size_t		 i;

	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "echo some-output; exec sleep 1000");
	h_cli_wait_log(h_idstr(sid, name, sizeof name), "some-output",
	    H_WAIT_BOUND);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	for (i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		snprintf(name, sizeof name, "full%zu", i);
		bd_path(full, sizeof full, name);
		bd_tmpfs(full, opts[i]);
		bd_fill(full);
		snprintf(out, sizeof out, "%s/b", full);
		snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s\"}",
		    sid, out);
		r = h_conn_call(&c, "bundle", req, BD_BOUND);
		bd_ls(full, left, sizeof left);
		/* Unmounted before any assertion can end the test. */
		(void)umount2(full, MNT_DETACH);
		cr_assert_str_eq(bd_kind(r),
		    "io_error", "%s: %s", opts[i], json_dumps(r,
		    JSON_COMPACT));
		cr_assert_eq(h_jint(r, "error.data.errno", -1), ENOSPC, "%s",
		    json_dumps(r, JSON_COMPACT));
		cr_assert(strstr(left, "partial") == NULL, "the failed bundle "
		    "left %s", left);
		json_decref(r);
	}
	h_conn_close(&c);
	cr_assert(h_daemon_ping(), "the daemon stopped serving");
	json_decref(h_cli_stop(sid, NULL, NULL));
}
