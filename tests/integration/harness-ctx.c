/*
 * The running test's private world: a temp dir, socket, state dir and
 * marker of its own; the environment every child gets, which carries the
 * marker so that whatever the test starts can be found and killed
 * afterwards; and a guardian process that cleans up if the worker dies.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

struct h_ctx *H;

/* True if an environment entry's name is one the harness sets itself. */
static bool
h_ctx_env_overridden(const char *e)
{
	static const char *names[] = { "DBGCTL_SOCKET=", "DBGCTL_DAEMON=",
	    "XDG_STATE_HOME=", "XDG_RUNTIME_DIR=", "HOME=",
	    "DBGCTL_TEST_MARKER=", NULL };
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strncmp(e, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

/*
 * The state directory of the test's daemon, as dbgctld(8) says: the socket
 * is not the default one ($XDG_RUNTIME_DIR/dbgctl/sock), so it is
 * $XDG_STATE_HOME/dbgctl/daemons/ and the FNV-1a hash of the socket path.
 */
static void
h_ctx_state_dir(void)
{
	unsigned long long	 h = 0xcbf29ce484222325ULL;
	const char		*p;

	for (p = H->sock; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	snprintf(H->state, sizeof(H->state), "%s/state/dbgctl/daemons/%016llx",
	    H->dir, h);
}

/* Build the environment every child of this test gets. */
static void
h_ctx_env_build(void)
{
	size_t n = 0, i = 0;
	char buf[PATH_MAX + 64];

	while (environ[n] != NULL)
		n++;
	H->envp = calloc(n + 8, sizeof(char *));
	for (n = 0; environ[n] != NULL; n++)
		if (!h_ctx_env_overridden(environ[n]))
			H->envp[i++] = strdup(environ[n]);
	H->envp[i++] = strdup(H->marker);
	snprintf(buf, sizeof(buf), "XDG_RUNTIME_DIR=%s", H->dir);
	H->envp[i++] = strdup(buf);
	snprintf(buf, sizeof(buf), "XDG_STATE_HOME=%s/state", H->dir);
	H->envp[i++] = strdup(buf);
	snprintf(buf, sizeof(buf), "HOME=%s", H->dir);
	H->envp[i++] = strdup(buf);
	snprintf(buf, sizeof(buf), "DBGCTL_DAEMON=%s", H->dbgctld);
	H->envp[i++] = strdup(buf);
	H->envp[i] = NULL;
}

/*
 * Add NAME=VALUE to the environment of the children started after this,
 * in place of an entry of that name (the first would win in getenv).
 */
void
h_ctx_env_add(const char *kv)
{
	size_t n, name = strcspn(kv, "=") + 1;

	for (n = 0; H->envp[n] != NULL; n++)
		if (strncmp(H->envp[n], kv, name) == 0) {
			free(H->envp[n]);
			H->envp[n] = strdup(kv);
			return;
		}
	H->envp = realloc(H->envp, (n + 2) * sizeof(char *));
	H->envp[n] = strdup(kv);
	H->envp[n + 1] = NULL;
}

/* Take NAME out of the environment of the children started after this. */
void
h_ctx_env_del(const char *name)
{
	size_t n, k, len = strlen(name);

	for (n = 0; H->envp[n] != NULL;) {
		if (strncmp(H->envp[n], name, len) != 0 ||
		    H->envp[n][len] != '=') {
			n++;
			continue;
		}
		free(H->envp[n]);
		for (k = n; H->envp[k] != NULL; k++)
			H->envp[k] = H->envp[k + 1];
	}
}

/* Join a path under the test dir into buf. */
void
h_ctx_path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", H->dir, rel);
}

/* The path of a test fixture from the environment meson sets (asserted). */
const char *
h_ctx_fixture(const char *var)
{
	const char *p = getenv(var);

	cr_assert_not_null(p, "%s is not set (meson sets it)", var);
	cr_assert_eq(access(p, X_OK), 0, "fixture %s=%s: %s", var, p,
	    strerror(errno));
	return p;
}

/* nftw callback removing one entry, for rm -rf. */
static int
h_ctx_rm_entry(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* rm -rf the test dir unless DBGCTL_TEST_KEEP asks to keep it. */
static void
h_ctx_remove_dir(void)
{
	if (getenv("DBGCTL_TEST_KEEP") != NULL || H->dir[0] == '\0')
		return;
	nftw(H->dir, h_ctx_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * The guardian: a process outside the test that waits for EOF on its pipe
 * (the worker ended, even by a Criterion timeout's SIGKILL) and then kills
 * everything carrying the marker and removes the dir.
 */
static void
h_ctx_guardian_start(void)
{
	int p[2];
	pid_t pid;
	char c;

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setsid();
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		dup2(p[0], 3);
		closefrom(4);
		while (read(3, &c, 1) == -1 && errno == EINTR)
			;
		h_marker_kill(H->marker, 20000);
		h_ctx_remove_dir();
		_exit(0);
	}
	close(p[0]);
	H->guardian = pid;
	H->guardian_fd = p[1];
}

/* Criterion .init: temp dir, socket path, marker, environment, guardian. */
void
h_ctx_setup(void)
{
	H = calloc(1, sizeof(*H));
	H->dbgctl = getenv("DBGCTL_BIN");
	H->dbgctld = getenv("DBGCTLD_BIN");
	cr_assert_not_null(H->dbgctl, "DBGCTL_BIN is not set (meson sets it)");
	cr_assert_not_null(H->dbgctld, "DBGCTLD_BIN is not set (meson sets "
	    "it)");
	cr_assert_eq(access(H->dbgctl, X_OK), 0, "client %s: %s", H->dbgctl,
	    strerror(errno));
	cr_assert_eq(access(H->dbgctld, X_OK), 0, "daemon %s: %s", H->dbgctld,
	    strerror(errno));
	signal(SIGPIPE, SIG_IGN);

	strcpy(H->dir, "/tmp/dbgi-XXXXXX");
	cr_assert_not_null(mkdtemp(H->dir), "mkdtemp: %s", strerror(errno));
	snprintf(H->sock, sizeof(H->sock), "%s/sock", H->dir);
	h_ctx_state_dir();
	h_marker_new("DBGCTL_TEST_MARKER", H->marker, sizeof(H->marker));
	H->guardian_fd = -1;
	h_ctx_env_build();
	h_daemon_wrap();
	h_ctx_guardian_start();
}

/* Criterion .fini: stop the daemon, kill marker processes, remove the dir. */
void
h_ctx_teardown(void)
{
	double end;
	int st;

	if (H == NULL)
		return;
	h_daemon_stop();
	h_daemon_memcheck();
	h_marker_kill(H->marker, 10000);
	h_contain_sweep(H->dir, 0);
	h_ctx_remove_dir();
	if (H->guardian > 0) {
		close(H->guardian_fd);
		end = h_now() + 10;
		while (waitpid(H->guardian, &st, WNOHANG) == 0 && h_now() < end)
			h_nap(10);
	}
	/* Reap whatever else of ours is left (orphans re-parented to us). */
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
	/* Last, with all cleaned up: a failed assertion leaves the fini. */
	if (H->memcheck.len > 0)
		fprintf(stderr, "%s", H->memcheck.p);
	cr_assert(H->memcheck.len == 0, "memcheck found errors in the "
	    "daemon (all its reports are on stderr): %.6000s",
	    H->memcheck.len > 0 ? H->memcheck.p : "");
}

/*
 * Criterion decides pass or fail when the test body ends and only warns
 * of what goes wrong in .fini: an assertion that fails in the teardown
 * fails the test here, in the runner, before the TAP report is written.
 */
ReportHook(POST_FINI)(struct criterion_test_stats *stats)
{
	if (stats->failed_asserts > 0 && stats->test_status == CR_STATUS_PASSED)
		stats->test_status = CR_STATUS_FAILED;
}
