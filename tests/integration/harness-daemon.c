/*
 * The daemon under test: one started in the foreground as the test's own
 * child, and the daemons that answer on the test's socket or carry its
 * marker, however they were started; with DBGCTLD_WRAPPER, each under a
 * wrapper such as valgrind, whose findings fail the test.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Our daemon pid exited with code: memcheck's 99 is a finding. */
static void
h_daemon_reaped(pid_t pid, int code)
{
	char line[128];

	if (H->wrapper[0] == '\0' || code != 99)
		return;
	snprintf(line, sizeof(line), "dbgctld pid %d exited 99 (memcheck "
	    "found errors)\n", pid);
	h_bytes_add(&H->memcheck, line, strlen(line));
}

/* Predicate: the daemon answers ping. */
static bool
h_daemon_pings(void *arg)
{
	(void)arg;
	return h_daemon_ping();
}

/* Start dbgctld --foreground --listen unix:SOCK as our child; wait for ping. */
pid_t
h_daemon_fg_args(const char *const extra[])
{
	char listen[PATH_MAX + 8], out[PATH_MAX], *log;
	const char *argv[32];
	int fd, st, n = 0, i;
	pid_t pid;
	double end;

	snprintf(listen, sizeof(listen), "unix:%s", H->sock);
	argv[n++] = H->wrapper[0] != '\0' ? H->wrapper : H->dbgctld;
	argv[n++] = "--foreground";
	argv[n++] = "--listen";
	argv[n++] = listen;
	for (i = 0; extra != NULL && extra[i] != NULL && n < 31; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	h_ctx_path(out, sizeof(out), "daemon.out");
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(open("/dev/null", O_RDONLY), 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execve(argv[0], (char *const *)argv, H->envp);
		_exit(127);
	}
	H->fg_daemon = pid;
	end = h_now() + H_WAIT_BOUND / 1000.0;
	while (!h_daemon_pings(NULL)) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			H->fg_daemon = 0;
			h_daemon_reaped(pid, h_run_code(st));
			log = h_read_file(out, NULL);
			cr_assert_fail("dbgctld --foreground --listen %s "
			    "exited (status %d) before answering ping; "
			    "output: %s", listen, h_run_code(st),
			    log ? log : "");
		}
		cr_assert(h_now() < end, "dbgctld --foreground --listen %s: "
		    "no ping answer within %d ms", listen, H_WAIT_BOUND);
		h_nap(10);
	}
	return pid;
}

/* Start dbgctld --foreground --listen unix:SOCK as our child; wait for ping. */
pid_t
h_daemon_fg(void)
{
	return h_daemon_fg_args(NULL);
}

/*
 * Lower this process's fd limits to soft and hard, for the daemon started
 * next to inherit; skips the test if the hard limit is below hard.
 */
void
h_daemon_nofile(rlim_t soft, rlim_t hard)
{
	struct rlimit mine, lowered = { soft, hard };

	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &mine), 0, "getrlimit");
	if (mine.rlim_max < hard)
		cr_skip_test("the hard fd limit %lu is below %lu",
		    (unsigned long)mine.rlim_max, (unsigned long)hard);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &lowered), 0, "setrlimit");
}

/* Raise this process's soft fd limit to its hard one again. */
void
h_daemon_nofile_back(void)
{
	struct rlimit rl;

	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0, "getrlimit");
	rl.rlim_cur = rl.rlim_max;
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0, "setrlimit");
}

/* Write token as the first line of DIR/token, of mode mode; its path into path. */
void
h_daemon_token(char *path, size_t len, const char *token, mode_t mode)
{
	FILE *f;

	h_ctx_path(path, len, "token");
	cr_assert_not_null(f = fopen(path, "w"), "token file %s", path);
	fprintf(f, "%s\n", token);
	cr_assert_eq(fclose(f), 0, "token file %s", path);
	cr_assert_eq(chmod(path, mode), 0, "chmod %s", path);
}

/*
 * Start our foreground daemon with a TCP listener at spec (HOST:PORT) too
 * and the token file at token; the port it says it listens on (asserted).
 */
int
h_daemon_fg_tcp(const char *spec, const char *token)
{
	char out[PATH_MAX], listen[128], *text, *p;
	double end;
	int port = -1;

	snprintf(listen, sizeof(listen), "tcp:%s", spec);
	h_daemon_fg_args(H_ARGS("--listen", listen, "--token-file", token));
	h_ctx_path(out, sizeof(out), "daemon.out");
	end = h_now() + H_WAIT_BOUND / 1000.0;
	while (port < 0 && h_now() < end) {
		text = h_read_file(out, NULL);
		if (text != NULL && (p = strstr(text, "listening on tcp:")) != NULL &&
		    (p = strchr(p + 17, ':')) != NULL)
			port = atoi(p + 1);
		free(text);
		if (port < 0)
			h_nap(10);
	}
	cr_assert_gt(port, 0, "the daemon never said its TCP port");
	return port;
}

/* Wait for our foreground daemon to exit within bound_ms; its status or -1. */
int
h_daemon_fg_wait(int bound_ms)
{
	int st;

	if (H->fg_daemon <= 0 || !h_run_waitpid(H->fg_daemon, bound_ms, &st))
		return -1;
	h_daemon_reaped(H->fg_daemon, h_run_code(st));
	H->fg_daemon = 0;
	return st;
}

/* SIGKILL our foreground daemon; assert it dies of it within 10 s. */
void
h_daemon_fg_kill(void)
{
	pid_t d = H->fg_daemon;
	int st;

	cr_assert_gt(d, 0, "no foreground daemon to kill (h_daemon_fg first)");
	cr_assert_eq(kill(d, SIGKILL), 0, "kill(%d, SIGKILL): %s", d,
	    strerror(errno));
	st = h_daemon_fg_wait(10000);
	cr_assert(st != -1 && WIFSIGNALED(st), "dbgctld %d: expected death by "
	    "SIGKILL", d);
}

/* hello's result on a connection of its own, or NULL if no daemon answers. */
json_t *
h_daemon_hello(void)
{
	struct h_conn c;
	json_t *r, *res;

	if (h_conn_open(&c, H->sock) != 0)
		return NULL;
	r = h_conn_call(&c, "hello", "{}", 10000);
	h_conn_close(&c);
	res = json_incref(json_object_get(r, "result"));
	json_decref(r);
	return res;
}

/* The pid that hello reports, or -1 if no daemon answers. */
pid_t
h_daemon_pid(void)
{
	json_t *r = h_daemon_hello();
	pid_t pid = (pid_t)h_jint(r, "pid", -1);

	json_decref(r);
	return pid;
}

/*
 * The daemon's cgroup subtree, the parent of its keepers' cgroups, as hello
 * reports it into buf; false if no daemon answers or it contains sessions
 * as a subreaper only.
 */
bool
h_daemon_cgroup(char *buf, size_t len)
{
	json_t *r = h_daemon_hello();
	const char *dir = h_jstr(r, "containment.cgroup");

	snprintf(buf, len, "%s", dir != NULL ? dir : "");
	json_decref(r);
	return buf[0] != '\0';
}

/* Whether pid runs the daemon, itself or under the wrapper (its argument). */
static bool
h_daemon_is(pid_t pid)
{
	char exe[PATH_MAX], path[64], *cmd, *arg;
	const char *base = h_pid_exe(pid, exe, sizeof(exe));
	size_t len;
	bool is = false;

	if (strcmp(base, "dbgctld") == 0 ||
	    strcmp(base, "dbgctld (deleted)") == 0)
		return true;
	if (H->wrapper[0] == '\0')
		return false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((cmd = h_read_file(path, &len)) == NULL)
		return false;
	for (arg = cmd; arg < cmd + len && !is; arg += strlen(arg) + 1)
		is = strcmp(arg, H->dbgctld) == 0;
	free(cmd);
	return is;
}

/* Every live dbgctld process that carries this test's marker. */
int
h_daemon_list(pid_t *out, int max)
{
	pid_t p[H_MAXPIDS];
	int i, n, k = 0;

	n = h_marker_pids(H->marker, p, H_MAXPIDS);
	for (i = 0; i < n && k < max; i++)
		if (h_daemon_is(p[i]))
			out[k++] = p[i];
	return k;
}

/* One-shot: connect, send ping, true if {"pong":true} comes back. */
bool
h_daemon_ping(void)
{
	struct h_conn c;
	json_t *r;
	bool ok;

	if (h_conn_open(&c, H->sock) != 0)
		return false;
	r = h_conn_call(&c, "ping", "{}", 5000);
	ok = json_is_true(json_object_get(json_object_get(r, "result"),
	    "pong"));
	json_decref(r);
	h_conn_close(&c);
	return ok;
}

/* True once pid is gone or a zombie (its exit is done). */
static bool
h_daemon_ended(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	char s = h_pid_state(pid);

	return s == 0 || s == 'Z';
}

/*
 * Stop every daemon of this test: shutdown for the one that answers, then
 * SIGKILL for any left carrying the marker; reap our foreground one.
 */
void
h_daemon_stop(void)
{
	struct h_conn c;
	pid_t pid, d[16];
	json_t *r;
	int i, n;

	pid = h_daemon_pid();
	if (pid > 0 && h_conn_open(&c, H->sock) == 0) {
		r = h_conn_call(&c, "shutdown", "{\"timeout\":2000}", 20000);
		json_decref(r);
		h_conn_close(&c);
		if (!h_wait_for(h_daemon_ended, &pid, 10000))
			kill(pid, SIGKILL);
	}
	n = h_daemon_list(d, 16);
	for (i = 0; i < n; i++)
		kill(d[i], SIGKILL);
	if (H->fg_daemon > 0) {
		h_daemon_reaped(H->fg_daemon, h_run_reap(H->fg_daemon, 10000));
		H->fg_daemon = 0;
	}
}

/*
 * The daemon's own log: the output of our foreground daemon if the test
 * started one, else the dbgctld.log of a daemon the client started
 * (malloc'd; "" if there is none yet).
 */
char *
h_daemon_log(void)
{
	char path[PATH_MAX], *log;

	if (H->fg_daemon > 0)
		h_ctx_path(path, sizeof(path), "daemon.out");
	else
		snprintf(path, sizeof(path), "%s/dbgctld.log", H->state);
	log = h_read_file(path, NULL);
	return log != NULL ? log : strdup("");
}

/*
 * With DBGCTLD_WRAPPER (words, e.g. "valgrind --tool=memcheck ..."), run
 * every daemon of the test under it: a script in the test dir that the
 * foreground start and the client's auto-start (DBGCTL_DAEMON) exec.
 * valgrind writes each process's report to DIR/memcheck.PID.log.
 */
void
h_daemon_wrap(void)
{
	const char *words = getenv("DBGCTLD_WRAPPER");
	char log[PATH_MAX + 32] = "", kv[sizeof(H->wrapper) + 16], *first;
	size_t n;
	FILE *f;

	if (words == NULL || words[strspn(words, " \t")] == '\0')
		return;
	words += strspn(words, " \t");
	n = strcspn(words, " \t");
	first = strndup(words, n);
	if (strcmp(strrchr(first, '/') ? strrchr(first, '/') + 1 : first,
	    "valgrind") == 0)
		snprintf(log, sizeof(log), " --log-file=%s/memcheck.%%p.log",
		    H->dir);
	free(first);
	h_ctx_path(H->wrapper, sizeof(H->wrapper), "dbgctld-wrapped");
	f = fopen(H->wrapper, "w");
	cr_assert_not_null(f, "%s: %s", H->wrapper, strerror(errno));
	fprintf(f, "#!/bin/sh\nexec %s%s %s \"$@\"\n", words, log,
	    H->dbgctld);
	cr_assert_eq(fclose(f), 0, "%s: %s", H->wrapper, strerror(errno));
	cr_assert_eq(chmod(H->wrapper, 0700), 0, "chmod %s: %s", H->wrapper,
	    strerror(errno));
	snprintf(kv, sizeof(kv), "DBGCTL_DAEMON=%s", H->wrapper);
	h_ctx_env_add(kv);
}

/* An error memcheck reports as it happens (a killed process has no summary). */
static bool
h_daemon_memcheck_error(const char *log)
{
	static const char *const kinds[] = { "== Invalid ", "== Conditional ",
	    "== Use of uninitialised", "== Syscall param", "== Mismatched ",
	    "== Source and destination overlap", "== Argument '", NULL };
	int i;

	for (i = 0; kinds[i] != NULL; i++)
		if (strstr(log, kinds[i]) != NULL)
			return true;
	return false;
}

/* Add one report to H->memcheck if it tells of errors or definite leaks. */
static void
h_daemon_memcheck_log(const char *path)
{
	char head[PATH_MAX + 64], *log, *sum;
	size_t len;

	if ((log = h_read_file(path, &len)) == NULL)
		return;
	sum = strstr(log, "ERROR SUMMARY: ");
	if (sum != NULL ? strtol(sum + 15, NULL, 10) > 0 :
	    h_daemon_memcheck_error(log)) {
		snprintf(head, sizeof(head), "%s:\n", path);
		h_bytes_add(&H->memcheck, head, strlen(head));
		h_bytes_add(&H->memcheck, log, len);
	}
	free(log);
}

/* Add what memcheck reported of the test's daemons to H->memcheck. */
void
h_daemon_memcheck(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (H->wrapper[0] == '\0' || (d = opendir(H->dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "memcheck.", 9) != 0)
			continue;
		h_ctx_path(path, sizeof(path), de->d_name);
		h_daemon_memcheck_log(path);
	}
	closedir(d);
}

/* Predicate: the daemon's log holds the text arg. */
static bool
h_daemon_log_has(void *arg)
{
	char *log = h_daemon_log();
	bool ok = strstr(log, arg) != NULL;

	free(log);
	return ok;
}

/* Wait until the daemon's log holds text; asserted within bound_ms. */
void
h_daemon_wait_log(const char *text, int bound_ms)
{
	char *log;

	if (h_wait_for(h_daemon_log_has, (void *)text, bound_ms))
		return;
	log = h_daemon_log();
	cr_assert_fail("the daemon's log: no \"%s\" within %d ms; it ends "
	    "with:\n%s", text, bound_ms, h_shown(log, strlen(log), 1500));
}
