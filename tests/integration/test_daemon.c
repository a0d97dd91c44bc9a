/*
 * The daemon as a whole: auto-start (detached, one winner of a race), its
 * death by SIGKILL or SIGTERM, many concurrent clients, peer uid checks.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(daemon, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 150);

/*
 * A fresh marker NAME=... into m, two escaping trees carrying it with all
 * their sleeps running, and a snapshot of their processes.
 */
static void
launch_two_trees(const char *name, char *m, size_t len, struct h_snap *snap)
{
	h_marker_new(name, m, len);
	h_cli_launch_sh(m, H_ESCAPING_TREE);
	h_cli_launch_sh(m, H_ESCAPING_TREE);
	h_marker_wait(m, "sleep", 8);
	h_snap_take(snap, m);
}

/* An auto-started daemon must not hold the client's stdout: EOF at exit. */
Test(daemon, autostart_releases_client_pipe)
{
	struct h_res r;
	pid_t d;

	cr_assert(!h_daemon_ping(), "a daemon already answers on %s", H->sock);
	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--", "sleep", "100"));
	cr_assert(!r.timed_out, "dbgctl launch (auto-starting the daemon) "
	    "did not exit within %d ms", H_RUN_BOUND);
	cr_assert_eq(r.code, 0, "dbgctl launch: expected exit 0, got %d "
	    "(stderr: %s)", r.code, r.err);
	cr_assert_lt(r.elapsed, 10.0, "dbgctl launch with auto-start: "
	    "expected exit within 10 s, took %.2f s", r.elapsed);
	cr_assert(r.eof, "dbgctl launch exited after %.2f s but its "
	    "stdout/stderr pipes were still open 3 s later: the auto-started "
	    "daemon holds them", r.elapsed);
	cr_assert_lt(r.eof_elapsed, r.elapsed + 1.0, "pipes reached EOF %.2f s "
	    "after the client exited (at %.2f s)", r.eof_elapsed - r.elapsed,
	    r.elapsed);
	h_run_free(&r);
	d = h_daemon_pid();
	cr_assert_gt(d, 0, "no daemon answers hello after auto-start");
	cr_assert_neq(h_pid_sid(d), h_pid_sid(getpid()), "auto-started daemon "
	    "%d is still in the test's session %d", d, h_pid_sid(getpid()));
}

/* Six clients racing to auto-start produce one daemon serving all six. */
Test(daemon, autostart_race_one_daemon)
{
	struct h_proc p[6];
	pid_t d[16], hp;
	int i, n;
	double end;

	cr_assert(!h_daemon_ping(), "a daemon already answers on %s", H->sock);
	for (i = 0; i < 6; i++)
		cr_assert_eq(h_cli_start(&p[i], H_ARGS("launch", "--kind",
		    "exec", "--", "sleep", "100")), 0, "cannot start client %d",
		    i);
	for (i = 0; i < 6; i++) {
		h_run_wait(&p[i], H_RUN_BOUND);
		cr_assert_eq(p[i].res.code, 0, "racing client %d: expected exit "
		    "0, got %d (stderr: %s)", i, p[i].res.code, p[i].res.err);
		cr_assert_gt(strtol(p[i].res.out, NULL, 10), 0, "racing client "
		    "%d: expected an id, got \"%s\"", i, p[i].res.out);
	}
	/* Losers of the race may take a moment to exit; the winner stays. */
	end = h_now() + 10;
	while ((n = h_daemon_list(d, 16)) > 1 && h_now() < end)
		h_nap(20);
	cr_assert_eq(n, 1, "expected exactly one dbgctld for %s, got %d", H->sock,
	    n);
	hp = h_daemon_pid();
	cr_assert_eq(hp, d[0], "hello pid %d is not the one dbgctld %d", hp,
	    d[0]);
	h_cli_expect_list(6, NULL, "after the race");
	for (i = 0; i < 6; i++)
		h_run_free(&p[i].res);
}

/*
 * With DBGCTLD_ADOPT_GRACE=0, SIGKILL of the daemon takes every session
 * process with it at once, as it did before sessions could be adopted.
 */
Test(daemon, sigkill_daemon_kills_sessions)
{
	char m[96], report[4096];
	struct h_snap snap;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=0");
	h_daemon_fg();
	launch_two_trees("DBGI_KILL", m, sizeof(m), &snap);
	h_daemon_fg_kill();
	if (!h_snap_wait_gone(&snap, m, 3000, report, sizeof(report)))
		cr_assert_fail("3 s after SIGKILL of the daemon, session "
		    "processes are left: %s", report);
	cr_assert(h_marker_gone(m), "processes carrying %s are alive", m);
}

/* SIGTERM stops every session, removes the socket and exits 0. */
Test(daemon, sigterm_daemon_stops_sessions)
{
	char m[96], report[4096];
	struct h_snap snap;
	pid_t d;
	int st, left;

	d = h_daemon_fg();
	launch_two_trees("DBGI_TERM", m, sizeof(m), &snap);
	cr_assert_eq(kill(d, SIGTERM), 0, "kill(%d, SIGTERM): %s", d,
	    strerror(errno));
	st = h_daemon_fg_wait(30000);
	cr_assert_neq(st, -1, "dbgctld %d did not exit within 30 s of SIGTERM",
	    d);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "dbgctld on SIGTERM: "
	    "expected exit 0, got %s %d", WIFEXITED(st) ? "exit" : "signal",
	    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	errno = 0;
	cr_assert(access(H->sock, F_OK) == -1 && errno == ENOENT, "socket %s "
	    "still exists after the daemon exited", H->sock);
	left = h_snap_leftovers(&snap, m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "after the daemon exited on SIGTERM, expected no "
	    "session process, got %d: %s", left, report);
}

/* The file in which racing child i reports what went wrong. */
static void
child_report_path(char *path, size_t len, int i)
{
	char rel[32];

	snprintf(rel, sizeof(rel), "child-%d.txt", i);
	h_ctx_path(path, len, rel);
}

/* Body of one racing child: launch then stop its own session. */
static int
launch_then_stop(const char *kv, int i)
{
	char ids[32], path[PATH_MAX];
	struct h_res r;
	long id;
	FILE *f;

	child_report_path(path, sizeof(path), i);
	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--env", kv, "--",
	    "sleep", "100"));
	id = strtol(r.out, NULL, 10);
	if (r.code != 0 || id <= 0) {
		if ((f = fopen(path, "w")) != NULL) {
			fprintf(f, "launch: exit %d, stdout \"%s\", stderr \"%s\"",
			    r.code, r.out, r.err);
			fclose(f);
		}
		return 1;
	}
	h_run_free(&r);
	h_cli(&r, H_ARGS("stop", h_idstr(id, ids, sizeof(ids))));
	if (r.code != 0) {
		if ((f = fopen(path, "w")) != NULL) {
			fprintf(f, "stop %s: exit %d, stderr \"%s\"", ids, r.code,
			    r.err);
			fclose(f);
		}
		return 2;
	}
	return 0;
}

/* 20 concurrent launch+stop pairs all succeed and leave nothing behind. */
Test(daemon, twenty_concurrent_launch_stop)
{
	pid_t kids[20], w, d;
	char m[96], path[PATH_MAX], report[4096], *msg;
	int i, st, done = 0, codes[20];
	double end;

	d = h_daemon_fg();
	h_marker_new("DBGI_PAIR", m, sizeof(m));
	for (i = 0; i < 20; i++) {
		kids[i] = fork();
		cr_assert_neq(kids[i], -1, "fork: %s", strerror(errno));
		if (kids[i] == 0)
			_exit(launch_then_stop(m, i));
		codes[i] = -1;
	}
	end = h_now() + 120;
	while (done < 20 && h_now() < end) {
		for (i = 0; i < 20; i++) {
			if (codes[i] != -1)
				continue;
			w = waitpid(kids[i], &st, WNOHANG);
			if (w == kids[i]) {
				codes[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 100;
				done++;
			}
		}
		h_nap(10);
	}
	for (i = 0; i < 20; i++) {
		if (codes[i] == -1)
			kill(kids[i], SIGKILL);
		child_report_path(path, sizeof(path), i);
		msg = h_read_file(path, NULL);
		cr_assert_eq(codes[i], 0, "pair %d: expected success, got %d: %s",
		    i, codes[i], msg ? msg : "(timed out?)");
		free(msg);
	}
	cr_assert(h_marker_gone(m), "processes carrying %s are alive after 20 "
	    "stops", m);
	cr_assert_eq(h_pid_zombies(d, report, sizeof(report)), 0,
	    "zombies of the daemon: %s", report);
	h_cli_expect_list(20, "exited", "after the 20 stops");
}

/* Outcome of a foreign-uid connection attempt, as the child reports it. */
enum foreign {
	F_UNAUTHORIZED = 0,	/* error reply with kind unauthorized */
	F_CLOSED = 1,		/* closed without any reply */
	F_RESULT = 2,		/* got a result: the check failed */
	F_OTHER_ERROR = 3,	/* an error of another kind */
	F_NO_CONNECT = 4,	/* connect failed */
	F_SILENT = 5,		/* neither reply nor close within the bound */
	F_SETUP = 6,		/* could not drop privileges */
};

/* In a forked child: become uid/gid 65534, connect, ping, classify. */
static int
foreign_ping(int report_fd)
{
	static const char ping[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
	struct h_conn c;
	const char *kind;
	char *line;
	json_t *j;
	int e;

	if (setgroups(0, NULL) == -1 || setgid(65534) == -1 ||
	    setuid(65534) == -1)
		return F_SETUP;
	e = h_conn_open(&c, H->sock);
	if (e != 0) {
		dprintf(report_fd, "connect: %s", strerror(-e));
		return F_NO_CONNECT;
	}
	h_conn_send(&c, ping, strlen(ping), 5000);
	line = h_conn_line(&c, 10000);
	if (line == NULL)
		return c.eof ? F_CLOSED : F_SILENT;
	dprintf(report_fd, "%s", line);
	j = json_loads(line, 0, NULL);
	if (json_object_get(j, "result") != NULL)
		return F_RESULT;
	kind = h_jstr(j, "error.data.kind");
	if (kind != NULL && strcmp(kind, "unauthorized") == 0)
		return F_UNAUTHORIZED;
	return F_OTHER_ERROR;
}

/* Another uid is refused even with every file mode on the path loosened. */
Test(daemon, other_uid_refused)
{
	char buf[4096] = "";
	int p[2], code;
	ssize_t n;
	pid_t kid;

	if (geteuid() != 0)
		cr_skip_test("needs root to switch to uid 65534");
	h_daemon_fg();
	cr_assert_eq(chmod(H->dir, 0777), 0, "chmod %s: %s", H->dir,
	    strerror(errno));
	cr_assert_eq(chmod(H->sock, 0777), 0, "chmod %s: %s", H->sock,
	    strerror(errno));
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0, "pipe2");
	kid = fork();
	cr_assert_neq(kid, -1, "fork: %s", strerror(errno));
	if (kid == 0) {
		close(p[0]);
		_exit(foreign_ping(p[1]));
	}
	close(p[1]);
	code = h_run_reap(kid, 30000);
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(p[0]);
	cr_assert(code == F_UNAUTHORIZED || code == F_CLOSED, "uid 65534 "
	    "pinging %s (mode 0777): expected an unauthorized error or a "
	    "closed connection, got outcome %d (%s): %s", H->sock, code,
	    code == F_RESULT ? "a result" : code == F_OTHER_ERROR ?
	    "another error" : code == F_NO_CONNECT ? "connect failed" :
	    code == F_SILENT ? "no reply and no close" : "setup/timeout", buf);
	cr_assert(h_daemon_ping(), "the daemon no longer answers its owner");
}

/*
 * Ended sessions beyond DBGCTLD_KEEP_ENDED are forgotten, oldest first:
 * list shows the newest, status of a forgotten one fails, its log stays.
 */
Test(daemon, ended_sessions_pruned)
{
	struct h_res	 r;
	json_t		*l, *s;
	char		 path[PATH_MAX + 64];
	size_t		 i;
	int		 k;

	h_ctx_env_add("DBGCTLD_KEEP_ENDED=3");
	h_daemon_fg();
	for (k = 0; k < 6; k++) {
		cr_assert_eq(h_cli(&r, H_ARGS("launch", "--kind", "exec",
		    "--wait", "--", "true")), 0, "launch --wait #%d: exit %d "
		    "(stderr: %s)", k + 1, r.code, r.err);
		h_run_free(&r);
	}
	l = h_cli_json(H_ARGS("list"));
	cr_assert_eq(json_array_size(json_object_get(l, "sessions")), 3,
	    "list after 6 ended sessions, keeping 3: %zu sessions",
	    json_array_size(json_object_get(l, "sessions")));
	json_array_foreach(json_object_get(l, "sessions"), i, s)
		cr_assert_eq(h_jint(s, "id", -1), (long long)i + 4, "list: "
		    "expected session %zu, got %lld", i + 4, h_jint(s, "id", -1));
	json_decref(l);
	cr_assert_eq(h_cli(&r, H_ARGS("status", "1")), 1, "status of a "
	    "forgotten session: expected exit 1, got %d", r.code);
	h_run_free(&r);
	snprintf(path, sizeof(path), "%s/sessions/1.log", H->state);
	cr_assert_eq(access(path, F_OK), 0, "the forgotten session's log %s "
	    "is gone", path);
}

/* The ids list shows, in order, into ids (at most n); how many. */
static size_t
daemon_list_ids(long *ids, size_t n)
{
	json_t	*l, *s;
	size_t	 i, k = 0;

	l = h_cli_json(H_ARGS("list"));
	json_array_foreach(json_object_get(l, "sessions"), i, s)
		if (k < n)
			ids[k++] = (long)h_jint(s, "id", -1);
	json_decref(l);
	return k;
}

/* Predicate: list shows sessions 3, 5 and 6 alone. */
static bool
daemon_list_is_3_5_6(void *arg)
{
	long	ids[8];

	(void)arg;
	return daemon_list_ids(ids, 8) == 3 && ids[0] == 3 && ids[1] == 5 &&
	    ids[2] == 6;
}

/*
 * Among live sessions, the ended beyond DBGCTLD_KEEP_ENDED are forgotten
 * lowest id first and the live never are; one that ends later, with a
 * lower id than those kept, is the next to go.
 */
Test(daemon, ended_sessions_pruned_among_live_ones)
{
	const char	*const sleep[] = { "launch", "--kind", "exec", "--",
			    "sleep", "100", NULL };
	const char	*const done[] = { "launch", "--kind", "exec", "--wait",
			    "--", "true", NULL };
	struct h_res	 r;
	long		 ids[8];
	size_t		 n;
	int		 k;

	h_ctx_env_add("DBGCTLD_KEEP_ENDED=2");
	h_daemon_fg();
	for (k = 1; k <= 6; k++) {
		cr_assert_eq(h_cli(&r, k == 1 || k == 3 ? sleep : done), 0,
		    "launch #%d: exit %d (stderr: %s)", k, r.code, r.err);
		h_run_free(&r);
	}
	n = daemon_list_ids(ids, 8);
	cr_assert(n == 4 && ids[0] == 1 && ids[1] == 3 && ids[2] == 5 &&
	    ids[3] == 6, "list after sessions 1 and 3 live and 2, 4, 5, 6 "
	    "ended, keeping 2: expected 1 3 5 6, got %zu sessions, first %ld",
	    n, n > 0 ? ids[0] : -1);
	cr_assert_eq(h_cli(&r, H_ARGS("stop", "1")), 0, "stop 1: exit %d "
	    "(stderr: %s)", r.code, r.err);
	h_run_free(&r);
	cr_assert(h_wait_for(daemon_list_is_3_5_6, NULL, H_WAIT_BOUND), "once "
	    "session 1 ended, expected list to show 3 5 6 alone");
}

/* Run dbgctl -s sock ARGS... (a daemon other than the test's); the code. */
static int
daemon_cli_on(struct h_res *r, const char *sock, const char *const args[])
{
	const char	*argv[32];
	int		 n = 0;

	argv[n++] = H->dbgctl;
	argv[n++] = "-s";
	argv[n++] = sock;
	while (*args != NULL && n < 31)
		argv[n++] = *args++;
	argv[n] = NULL;
	return h_run(r, H_RUN_BOUND, argv);
}

/*
 * Two daemons on two sockets keep their own state: each numbers its
 * sessions from 1, and removing the second's session 1 leaves the
 * first's log as it was.
 */
Test(daemon, daemons_side_by_side_keep_their_own_state)
{
	char		 sock2[PATH_MAX];
	struct h_res	 r;
	long		 id;
	char		*log;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sh", "-c",
	    "echo first-daemon; exec sleep 600"));
	h_cli_wait_log("1", "first-daemon", 10000);
	cr_assert_eq(id, 1, "the first daemon's first session is %ld", id);
	h_ctx_path(sock2, sizeof sock2, "sock2");
	cr_assert_eq(daemon_cli_on(&r, sock2, H_ARGS("launch", "--kind",
	    "exec", "--wait", "--", "echo", "second-daemon")), 0, "a launch "
	    "on a second daemon: exit %d (stderr: %s)", r.code, r.err);
	cr_assert_eq(atol(r.out), 1, "the second daemon's first launch: %s",
	    r.out);
	h_run_free(&r);
	cr_assert_eq(daemon_cli_on(&r, sock2, H_ARGS("logs", "1")), 0,
	    "logs 1 on the second daemon: exit %d (%s)", r.code, r.err);
	cr_assert_not_null(strstr(r.out, "second-daemon"), "logs 1 on the "
	    "second daemon: %s", r.out);
	h_run_free(&r);
	cr_assert_eq(daemon_cli_on(&r, sock2, H_ARGS("rm", "1")), 0, "rm 1 on "
	    "the second daemon: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	log = h_cli_logs("1");
	cr_assert_not_null(strstr(log, "first-daemon"), "the first daemon's "
	    "session 1 after the second's rm 1: %s", log);
	cr_assert_null(strstr(log, "second-daemon"), "the first daemon's "
	    "session 1 shows the second's output: %s", log);
	free(log);
	h_cli_expect_state(1, "running", "after the second daemon's rm 1");
	daemon_cli_on(&r, sock2, H_ARGS("shutdown"));
	h_run_free(&r);
}

/*
 * Daemons whose environments give them one state directory (the same
 * XDG_STATE_HOME, each on the default socket of its own runtime
 * directory) do not share it: the second refuses to start, naming the
 * first's socket, and the first goes on serving.
 */
Test(daemon, a_state_directory_in_use_is_refused)
{
	char		 rt[PATH_MAX], kv[PATH_MAX + 32], first[PATH_MAX + 16];
	struct h_res	 r;

	h_ctx_env_add("DBGCTL_SOCKET=");
	h_ctx_path(rt, sizeof rt, "rt1");
	cr_assert_eq(mkdir(rt, 0700), 0, "mkdir %s", rt);
	snprintf(kv, sizeof kv, "XDG_RUNTIME_DIR=%s", rt);
	h_ctx_env_add(kv);
	snprintf(first, sizeof first, "%s/dbgctl/sock", rt);
	cr_assert_eq(daemon_cli_on(&r, first, H_ARGS("launch", "--kind",
	    "exec", "--", "sleep", "600")), 0, "a launch auto-starting the "
	    "first daemon: exit %d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
	h_ctx_path(rt, sizeof rt, "rt2");
	cr_assert_eq(mkdir(rt, 0700), 0, "mkdir %s", rt);
	snprintf(kv, sizeof kv, "XDG_RUNTIME_DIR=%s", rt);
	h_ctx_env_add(kv);
	h_run(&r, H_RUN_BOUND, H_ARGS(H->dbgctld, "--foreground"));
	cr_assert_eq(r.code, 1, "a second daemon on one state directory: "
	    "exit %d (stderr: %s)", r.code, r.err);
	cr_assert_not_null(strstr(r.err, "in use by the daemon on"), "stderr: "
	    "%s", r.err);
	cr_assert_not_null(strstr(r.err, first), "stderr names not %s: %s",
	    first, r.err);
	h_run_free(&r);
	cr_assert_eq(daemon_cli_on(&r, first, H_ARGS("status", "1")), 0,
	    "the first daemon after the second was refused: exit %d (%s)",
	    r.code, r.err);
	h_run_free(&r);
	daemon_cli_on(&r, first, H_ARGS("shutdown"));
	h_run_free(&r);
}

/* Shut the daemon on sock down and wait until its process is gone. */
static void
daemon_shutdown_on(const char *sock)
{
	struct h_res	 r;
	json_t		*v;
	pid_t		 pid;
	double		 end = h_now() + H_WAIT_BOUND / 1000.0;

	cr_assert_eq(daemon_cli_on(&r, sock, H_ARGS("--json", "version")), 0,
	    "version on %s: %s", sock, r.err);
	v = json_loads(r.out, 0, NULL);
	pid = (pid_t)h_jint(v, "daemon.pid", -1);
	json_decref(v);
	h_run_free(&r);
	cr_assert_gt(pid, 0, "no daemon pid on %s", sock);
	daemon_cli_on(&r, sock, H_ARGS("shutdown"));
	h_run_free(&r);
	while (!h_pid_gone(pid) && h_now() < end)
		h_nap(10);
	cr_assert(h_pid_gone(pid), "the daemon %d on %s outlived its "
	    "shutdown", (int)pid, sock);
}

/*
 * One socket named two ways ("DIR/sock2", "DIR/./sock2") is one daemon's:
 * the second daemon on it finds the first's state and numbers on from it.
 */
Test(daemon, a_socket_named_another_way_keeps_its_state)
{
	char		 sock2[PATH_MAX], other[PATH_MAX + 8];
	struct h_res	 r;

	h_ctx_path(sock2, sizeof sock2, "sock2");
	snprintf(other, sizeof other, "%s/./sock2", H->dir);
	cr_assert_eq(daemon_cli_on(&r, sock2, H_ARGS("launch", "--kind",
	    "exec", "--wait", "--", "true")), 0, "a launch on %s: exit %d "
	    "(stderr: %s)", sock2, r.code, r.err);
	cr_assert_eq(atol(r.out), 1, "the first launch on %s: %s", sock2,
	    r.out);
	h_run_free(&r);
	daemon_shutdown_on(sock2);
	cr_assert_eq(daemon_cli_on(&r, other, H_ARGS("launch", "--kind",
	    "exec", "--wait", "--", "true")), 0, "a launch on %s: exit %d "
	    "(stderr: %s)", other, r.code, r.err);
	cr_assert_eq(atol(r.out), 2, "the launch on %s after one on %s: %s",
	    other, sock2, r.out);
	h_run_free(&r);
	daemon_cli_on(&r, other, H_ARGS("shutdown"));
	h_run_free(&r);
}
