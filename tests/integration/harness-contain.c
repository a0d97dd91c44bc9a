/*
 * Containment as a test sees it: the mode hello reports (a cgroup subtree,
 * or the daemon as subreaper and why), a daemon started in the mode a test
 * asks for, the cgroups of that subtree and who is in them, that the
 * subtree is gone once the daemon has shut down, and the removal of every
 * subtree a test's daemons left (each test's teardown).
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the daemon's environment says to force the subreaper mode. */
#define H_CONTAIN_NO_CGROUP	"DBGCTLD_NO_CGROUP=1"

/* hello's containment on an authenticated (unix) connection; asserted. */
json_t *
h_contain_hello(void)
{
	json_t *r = h_daemon_hello(), *cont;
	char *shown;

	cont = json_object_get(r, "containment");
	shown = r != NULL ? json_dumps(r, JSON_COMPACT) : NULL;
	cr_assert(json_is_object(cont) && h_jstr(cont, "mode") != NULL,
	    "hello: expected containment {mode, ...} in its result, got %s",
	    shown ? shown : "no answer");
	free(shown);
	json_incref(cont);
	json_decref(r);
	return cont;
}

/*
 * Start the test's daemon in mode ("cgroup", or "subreaper" forced by
 * DBGCTLD_NO_CGROUP) and check hello says so; where a cgroup is asked for
 * and the machine cannot give one, say so and skip the test.
 */
void
h_contain_daemon(const char *mode)
{
	const char *got, *why, *dir;
	json_t *cont;

	if (strcmp(mode, "subreaper") == 0)
		h_ctx_env_add(H_CONTAIN_NO_CGROUP);
	h_daemon_fg();
	cont = h_contain_hello();
	got = h_jstr(cont, "mode");
	why = h_jstr(cont, "reason") ? h_jstr(cont, "reason") : "(none)";
	if (strcmp(mode, "cgroup") == 0 && strcmp(got, "subreaper") == 0) {
		fprintf(stderr, "cgroup containment is not available on this "
		    "machine (hello: subreaper, %s): the cgroup test is "
		    "skipped\n", why);
		cr_skip_test("cgroup containment is not available on this "
		    "machine: hello says subreaper (%s)", why);
	}
	cr_assert_str_eq(got, mode, "hello: expected containment.mode %s, got "
	    "%s (reason: %s)", mode, got, why);
	if (strcmp(mode, "subreaper") == 0) {
		cr_assert(strstr(why, "DBGCTLD_NO_CGROUP") != NULL, "hello in "
		    "subreaper mode by %s: expected a reason naming it, got "
		    "%s", H_CONTAIN_NO_CGROUP, why);
		json_decref(cont);
		return;
	}
	dir = h_jstr(cont, "cgroup");
	cr_assert(dir != NULL && dir[0] == '/', "hello in cgroup mode: "
	    "expected containment.cgroup, a path, got %s", dir ? dir : "none");
	cr_assert_lt(strlen(dir), sizeof(H->cgroup), "cgroup path too long");
	strcpy(H->cgroup, dir);
	json_decref(cont);
}

/* The cgroup of daemon's session id's process index: ROOT/DAEMON-ID-INDEX. */
void
h_contain_dir(char *buf, size_t len, pid_t daemon, long id, int index)
{
	snprintf(buf, len, "%s/%d-%ld-%d", H->cgroup, daemon, id, index);
}

/* Whether the cgroup at dir holds a live process (cgroup.events). */
bool
h_contain_populated(const char *dir)
{
	char path[PATH_MAX + 16], *ev, *p;
	bool yes;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	if ((ev = h_read_file(path, NULL)) == NULL)
		return false;
	p = strstr(ev, "populated ");
	yes = p != NULL && p[10] == '1';
	free(ev);
	return yes;
}

/* Whether the cgroup at dir lists pid in its cgroup.procs. */
bool
h_contain_holds(const char *dir, pid_t pid)
{
	char path[PATH_MAX + 16], *procs, *p, *end;
	bool yes = false;
	long v;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((procs = h_read_file(path, NULL)) == NULL)
		return false;
	for (p = procs; !yes && (v = strtol(p, &end, 10)) > 0; p = end)
		yes = v == pid;
	free(procs);
	return yes;
}

/* Write value to the file of the cgroup at dir: 0, or -1 with errno. */
int
h_contain_write(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX + 64];
	int fd, e;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, value, strlen(value));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* The cgroups below dir, by name, into buf ("" if none); returns buf. */
static const char *
h_contain_children(const char *dir, char *buf, size_t len)
{
	struct dirent *e;
	size_t o = 0;
	DIR *d;

	buf[0] = '\0';
	if ((d = opendir(dir)) == NULL)
		return buf;
	while ((e = readdir(d)) != NULL && o < len)
		if (e->d_type == DT_DIR && e->d_name[0] != '.')
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
			    o ? " " : "", e->d_name);
	closedir(d);
	return buf;
}

/*
 * Shut the daemon down: it answers within the bound and exits 0; in
 * cgroup mode its subtree is gone then, with every cgroup in it.
 */
void
h_contain_shutdown(const char *when)
{
	char kids[1024], *shown;
	struct h_conn c;
	json_t *r;
	int st;

	cr_assert_gt(H->fg_daemon, 0, "%s: no daemon to shut down", when);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "%s: connect %s", when,
	    H->sock);
	r = h_conn_call(&c, "shutdown", "{}", H_RUN_BOUND);
	h_conn_close(&c);
	shown = r != NULL ? json_dumps(r, JSON_COMPACT) : NULL;
	cr_assert_not_null(h_jpath(r, "result"), "%s: shutdown: expected an "
	    "answer within %d ms, got %s", when, H_RUN_BOUND,
	    shown ? shown : "none");
	free(shown);
	json_decref(r);
	st = h_daemon_fg_wait(H_WAIT_BOUND);
	cr_assert(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the "
	    "daemon did not exit 0 within %d ms of its shutdown answer", when,
	    H_WAIT_BOUND);
	if (H->cgroup[0] == '\0')
		return;
	errno = 0;
	cr_assert(access(H->cgroup, F_OK) == -1 && errno == ENOENT, "%s: the "
	    "daemon has shut down, but its cgroup subtree %s is left, with "
	    "[%s] in it", when, H->cgroup, h_contain_children(H->cgroup, kids,
	    sizeof(kids)));
}

/* Predicate: the cgroup at *(const char **)arg is empty. */
static bool
h_contain_empty(void *arg)
{
	return !h_contain_populated(*(const char **)arg);
}

/* Remove the cgroup at dir and, first, every cgroup below it. */
static void
h_contain_rmtree(const char *dir, int depth)
{
	char path[PATH_MAX * 2];
	struct dirent *e;
	DIR *d;

	if (depth > 32 || (d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		/* A path too long to name is not one of ours. */
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >=
		    (int)sizeof(path))
			continue;
		h_contain_rmtree(path, depth + 1);
	}
	closedir(d);
	rmdir(dir);
}

/* Kill what is left in the cgroup subtree at root and remove it, depth first. */
static void
h_contain_remove(const char *root)
{
	if (access(root, F_OK) != 0)
		return;
	h_contain_write(root, "cgroup.kill", "1");
	h_wait_for(h_contain_empty, &root, 10000);
	h_contain_rmtree(root, 0);
}

/* What a daemon's log says of its subtree, before the path. */
#define H_CONTAIN_LOGGED	"containment: cgroup, in "

/* Remove every subtree the daemon log at path names. */
static void
h_contain_sweep_log(const char *path)
{
	char	*log = h_read_file(path, NULL), *p, *end;

	for (p = log; p != NULL && (p = strstr(p, H_CONTAIN_LOGGED)) != NULL;
	    p = end) {
		p += strlen(H_CONTAIN_LOGGED);
		if ((end = strchr(p, '\n')) == NULL)
			end = p + strlen(p);
		/* Only a subtree named for a daemon, never its parent. */
		if (*end == '\n')
			*end++ = '\0';
		if (strstr(p, "/dbgctld-") != NULL)
			h_contain_remove(p);
	}
	free(log);
}

/*
 * Remove the cgroup subtrees of every daemon the test ran, as their logs
 * under dir name them: one killed with SIGKILL leaves its subtree (the
 * next daemon on its socket sweeps it, but a test's socket has none), and
 * a test machine would gather them run after run.
 */
void
h_contain_sweep(const char *dir, int depth)
{
	char		 path[PATH_MAX * 2];
	struct dirent	*e;
	DIR		*d;

	if (depth > 8 || (d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || snprintf(path, sizeof(path),
		    "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (e->d_type == DT_DIR)
			h_contain_sweep(path, depth + 1);
		else if (e->d_type == DT_REG && (strcmp(e->d_name,
		    "daemon.out") == 0 || strcmp(e->d_name, "dbgctld.log") == 0))
			h_contain_sweep_log(path);
	}
	closedir(d);
}
