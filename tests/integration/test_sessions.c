/*
 * Sessions through the client: launch, list, status, stop, exit records,
 * process trees that escape, stop timeouts, fds, console logs, gdb.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(sessions, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* A shell that ignores SIGTERM, and so do the sleeps it starts. */
#define IGNORES_TERM \
	"trap '' TERM; while :; do sleep 0.1; done"

/* True if a snapshot member named comm leads a session of its own. */
static bool
has_own_session(const struct h_snap *s, const char *comm)
{
	char c[64];
	int i;

	for (i = 0; i < s->n; i++) {
		h_pid_comm(s->pid[i], c, sizeof(c));
		if (strcmp(c, comm) == 0 && h_pid_sid(s->pid[i]) == s->pid[i])
			return true;
	}
	return false;
}

/* The pid of a session's program, once it ignores SIGTERM (asserted). */
static pid_t
pid_ignoring_term(long id)
{
	pid_t pid = h_cli_status_pid(id, "pid");

	cr_assert_gt(pid, 0, "status: expected a pid");
	cr_assert(h_pid_wait_sigmask(pid, "SigIgn", SIGTERM, H_WAIT_BOUND),
	    "pid %d never ignored SIGTERM", pid);
	return pid;
}

/* Launch sh -c script and wait for its session to end; its status. */
static json_t *
run_to_end(const char *script)
{
	long id = h_cli_launch_sh(NULL, script);
	json_t *st = h_cli_wait_ended(id, H_WAIT_BOUND);

	cr_assert_not_null(st, "session %ld (sh -c '%s') did not end within "
	    "%d ms", id, script, H_WAIT_BOUND);
	return st;
}

/* Split console output into lines, dropping the pty's \r; returns count. */
static int
split_lines(char *buf, char **lines, int max)
{
	int n = 0;
	char *p = buf, *nl;

	while (*p != '\0' && n < max) {
		nl = strchr(p, '\n');
		if (nl != NULL)
			*nl = '\0';
		if (nl != p && nl != NULL && nl[-1] == '\r')
			nl[-1] = '\0';
		lines[n++] = p;
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	return n;
}

/* Assert that text holds exactly the lines "1".."count", in order. */
static void
assert_counted_lines(char *text, int count, const char *what)
{
	char **lines = calloc((size_t)count + 16, sizeof(char *));
	char want[16];
	int i, n;

	n = split_lines(text, lines, count + 16);
	cr_assert_eq(n, count, "%s: expected %d lines, got %d (last: \"%s\")",
	    what, count, n, n > 0 ? lines[n - 1] : "");
	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "%d", i + 1);
		cr_assert_str_eq(lines[i], want, "%s: line %d: expected \"%s\", "
		    "got \"%s\"", what, i + 1, want, lines[i]);
	}
	free(lines);
}

/* launch, list, status and stop of a plain exec session. */
Test(sessions, launch_list_status_stop)
{
	struct h_res r;
	char ids[32], line[256], *p;
	const char *state;
	json_t *st;
	long id;
	pid_t pid;
	bool found = false;

	id = h_cli_launch_exec(NULL, H_ARGS("sleep", "100"));
	h_idstr(id, ids, sizeof(ids));

	/* list: a row for this id, running, running sleep. */
	cr_assert_eq(h_cli(&r, H_ARGS("list")), 0, "dbgctl list: expected "
	    "exit 0, got %d (stderr: %s)", r.code, r.err);
	for (p = r.out; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p ? p + 1 : NULL) {
		size_t n = strcspn(p, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		if (strtol(line, NULL, 10) == id && strstr(line, "running") &&
		    strstr(line, "sleep"))
			found = true;
	}
	cr_assert(found, "dbgctl list: expected a row \"%ld ... running ... "
	    "sleep\", got:\n%s", id, r.out);
	h_run_free(&r);

	/* status --json: running, with the program's pid. */
	st = h_cli_status(id);
	state = h_jstr(st, "state");
	pid = (pid_t)h_jint(st, "pid", -1);
	cr_assert(state && strcmp(state, "running") == 0, "status %ld: "
	    "expected state running, got %s", id, state ? state : "(none)");
	cr_assert_eq(h_jint(st, "id", -1), id, "status: expected id %ld, got "
	    "%lld", id, h_jint(st, "id", -1));
	cr_assert_str_eq(h_jstr(st, "kind") ? h_jstr(st, "kind") : "", "exec",
	    "status: expected kind exec");
	cr_assert_gt(pid, 0, "status %ld: expected a pid, got %d", id, pid);
	cr_assert(!h_pid_gone(pid), "status pid %d is not alive", pid);
	h_pid_expect_comm(pid, "status", "sleep");
	json_decref(st);

	/* human status mentions running */
	cr_assert_eq(h_cli(&r, H_ARGS("status", ids)), 0, "dbgctl status %s: "
	    "exit %d (stderr: %s)", ids, r.code, r.err);
	cr_assert(strstr(r.out, "running") != NULL, "dbgctl status %s: "
	    "expected 'running' in:\n%s", ids, r.out);
	h_run_free(&r);

	/* stop: returns 0, the process is gone at once, exit.signal 15. */
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: "
	    "expected exit 0, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	errno = 0;
	cr_assert(h_pid_gone(pid), "after stop: kill(%d, 0) expected ESRCH, "
	    "got %s (state %c)", pid, errno ? strerror(errno) : "success",
	    h_pid_state(pid));
	st = h_cli_status(id);
	state = h_jstr(st, "state");
	cr_assert(state && strcmp(state, "exited") == 0, "status after stop: "
	    "expected state exited, got %s", state ? state : "(none)");
	cr_assert_eq(h_jint(st, "exit.signal", -1), SIGTERM, "status after "
	    "stop: expected exit.signal 15, got %lld (exit.code %lld)",
	    h_jint(st, "exit.signal", -1), h_jint(st, "exit.code", -1));
	json_decref(st);
}

/* A program that exits on its own with a code: status shows exit.code. */
Test(sessions, exit_code_recorded)
{
	json_t *st = run_to_end("exit 7");

	cr_assert_str_eq(h_jstr(st, "state"), "exited", "expected state exited");
	cr_assert_eq(h_jint(st, "exit.code", -1), 7, "expected exit.code 7, "
	    "got %lld (exit.signal %lld)", h_jint(st, "exit.code", -1),
	    h_jint(st, "exit.signal", -1));
	cr_assert_eq(h_jint(st, "exit.signal", -1), -1, "expected no "
	    "exit.signal, got %lld", h_jint(st, "exit.signal", -1));
	json_decref(st);
}

/* A program killed by a signal: status shows exit.signal. */
Test(sessions, exit_signal_recorded)
{
	json_t *st = run_to_end("kill -KILL $$");

	cr_assert_str_eq(h_jstr(st, "state"), "exited", "expected state exited");
	cr_assert_eq(h_jint(st, "exit.signal", -1), SIGKILL, "expected "
	    "exit.signal 9, got %lld (exit.code %lld)",
	    h_jint(st, "exit.signal", -1), h_jint(st, "exit.code", -1));
	json_decref(st);
}

/* launch --wait exits with the session's status (code, or 128+signal). */
Test(sessions, launch_wait_status)
{
	struct h_res r;

	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--wait", "--", "sh",
	    "-c", "exit 7"));
	cr_assert_eq(r.code, 7, "dbgctl launch --wait -- sh -c 'exit 7': "
	    "expected exit 7, got %d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--wait", "--", "sh",
	    "-c", "kill -KILL $$"));
	cr_assert_eq(r.code, 128 + SIGKILL, "dbgctl launch --wait -- sh -c "
	    "'kill -KILL $$': expected exit 137, got %d (stderr: %s)", r.code,
	    r.err);
	h_run_free(&r);
}

/* stop ends a tree that double-forks and setsids: nothing left, no zombie. */
Test(sessions, stop_kills_escaped_tree)
{
	char m[96], ids[32], report[4096];
	struct h_snap snap;
	struct h_res r;
	long id;
	int left;

	h_marker_new("DBGI_TREE", m, sizeof(m));
	id = h_cli_launch_sh(m, H_ESCAPING_TREE);
	h_marker_wait(m, "sleep", 4);
	h_snap_take(&snap, m);
	cr_assert_geq(snap.n, 5, "expected the keeper and 4 sleeps (at least 5 "
	    "processes) carrying %s, got %d", m, snap.n);
	cr_assert(has_own_session(&snap, "sleep"), "test setup: no sleep of "
	    "the tree runs in a session of its own (setsid)");
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0,
	    "dbgctl stop %s: expected exit 0, got %d (stderr: %s)", ids,
	    r.code, r.err);
	h_run_free(&r);
	/* Checked at once: stop returns only when everything is gone. */
	left = h_snap_leftovers(&snap, m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "right after stop returned, expected no process "
	    "of the session, got %d: %s", left, report);
}

/* Shared body: a session ignoring SIGTERM is SIGKILLed at the stop timeout. */
static void
escalation(bool per_launch)
{
	char m[96], ids[32], report[4096];
	struct h_snap snap;
	struct h_res r;
	json_t *st;
	double t0, dt;
	long id;
	int left;

	h_marker_new("DBGI_TERM", m, sizeof(m));
	if (per_launch) {
		char *end;

		h_cli(&r, H_ARGS("launch", "--kind", "exec", "--stop-timeout",
		    "1500", "--env", m, "--", "sh", "-c", IGNORES_TERM));
		cr_assert_eq(r.code, 0, "dbgctl launch --stop-timeout 1500: "
		    "expected exit 0, got %d (stderr: %s)", r.code, r.err);
		id = strtol(r.out, &end, 10);
		cr_assert_gt(id, 0, "launch: expected an id, got \"%s\"", r.out);
		h_run_free(&r);
	} else {
		id = h_cli_launch_sh(m, IGNORES_TERM);
	}
	pid_ignoring_term(id);
	h_snap_take(&snap, m);
	h_idstr(id, ids, sizeof(ids));
	t0 = h_now();
	if (per_launch)
		h_cli(&r, H_ARGS("stop", ids));
	else
		h_cli(&r, H_ARGS("stop", "--timeout", "1500", ids));
	dt = h_now() - t0;
	cr_assert_eq(r.code, 0, "dbgctl stop %s: expected exit 0, got %d "
	    "(stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	cr_assert(dt >= 1.4 && dt <= 4.0, "stop of a session ignoring SIGTERM "
	    "with a 1500 ms timeout: expected 1.4 s <= elapsed <= 4 s, got "
	    "%.3f s", dt);
	left = h_snap_leftovers(&snap, m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "after stop: expected no process of the session, "
	    "got %d: %s", left, report);
	st = h_cli_status(id);
	cr_assert_eq(h_jint(st, "exit.signal", -1), SIGKILL, "expected "
	    "exit.signal 9 after the timeout, got %lld (exit.code %lld)",
	    h_jint(st, "exit.signal", -1), h_jint(st, "exit.code", -1));
	json_decref(st);
}

/* launch --stop-timeout 1500: stop escalates to SIGKILL after 1.5 s. */
Test(sessions, stop_timeout_from_launch)
{
	escalation(true);
}

/* stop --timeout 1500 overrides the session's 5 s default. */
Test(sessions, stop_timeout_from_stop)
{
	escalation(false);
}

/* A launched program holds exactly fds 0, 1, 2, all on one pty slave. */
Test(sessions, program_fds_are_012_on_pty)
{
	char (*t)[PATH_MAX] = calloc(64, PATH_MAX);
	char list[2048] = "";
	int fds[64], n, i;
	size_t o = 0;
	double end;
	pid_t pid;
	long id;

	id = h_cli_launch_exec(NULL, H_ARGS("sleep", "100"));
	pid = h_cli_status_pid(id, "pid");
	cr_assert_gt(pid, 0, "status: expected a pid");
	/*
	 * sleep holds its locale file briefly while it starts: wait (bounded)
	 * for that to pass; an fd that leaked stays and fails below.
	 */
	end = h_now() + H_WAIT_BOUND / 1000.0;
	while ((n = h_pid_fds(pid, fds, t, 64)) != 3 && h_now() < end)
		h_nap(10);
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%d->%s ",
		    fds[i], t[i]);
	cr_assert_eq(n, 3, "/proc/%d/fd: expected exactly 0 1 2, got %d fds: %s",
	    pid, n, list);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(fds[i], i, "/proc/%d/fd: expected 0 1 2, got %s",
		    pid, list);
		cr_assert(strncmp(t[i], "/dev/pts/", 9) == 0, "/proc/%d/fd/%d: "
		    "expected a /dev/pts/N, got %s", pid, i, t[i]);
		cr_assert_str_eq(t[i], t[0], "fds 0 1 2 expected on one pty: %s",
		    list);
	}
	free(t);
}

/* Assert a session of `seq 1 2000` ended and its log file holds every line. */
static void
assert_seq_log(long id)
{
	char path[PATH_MAX], *log;
	json_t *st;
	size_t len;

	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %ld (seq 1 2000) did not end within "
	    "%d ms", id, H_WAIT_BOUND);
	cr_assert_eq(h_jint(st, "exit.code", -1), 0, "seq: expected exit.code "
	    "0, got %lld", h_jint(st, "exit.code", -1));
	snprintf(path, sizeof(path), "%s/sessions/%ld.log", H->state, id);
	if (h_jstr(st, "log") != NULL)
		cr_assert_str_eq(h_jstr(st, "log"), path, "status log: expected "
		    "%s, got %s", path, h_jstr(st, "log"));
	json_decref(st);
	log = h_read_file(path, &len);
	cr_assert_not_null(log, "%s: cannot read", path);
	assert_counted_lines(log, 2000, path);
	free(log);
}

/*
 * 2000 lines printed at once all reach the log file and `dbgctl logs` by
 * the time status says exited (several sessions, as losing the tail is a race).
 */
Test(sessions, output_2000_lines_in_log)
{
	struct h_res r;
	char ids[32];
	long id[8];
	int i;

	for (i = 0; i < 8; i++)
		id[i] = h_cli_launch_exec(NULL, H_ARGS("seq", "1", "2000"));
	for (i = 0; i < 8; i++)
		assert_seq_log(id[i]);
	h_idstr(id[0], ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("logs", ids)), 0, "dbgctl logs %s: "
	    "expected exit 0, got %d (stderr: %s)", ids, r.code, r.err);
	assert_counted_lines(r.out, 2000, "dbgctl logs");
	h_run_free(&r);

	cr_assert_eq(h_cli(&r, H_ARGS("logs", "-n", "3", ids)), 0, "dbgctl "
	    "logs -n 3 %s: exit %d (stderr: %s)", ids, r.code, r.err);
	{
		char *lines[8];
		int n = split_lines(r.out, lines, 8);

		cr_assert_eq(n, 3, "dbgctl logs -n 3: expected 3 lines, got %d",
		    n);
		cr_assert_str_eq(lines[0], "1998", "logs -n 3: first line");
		cr_assert_str_eq(lines[2], "2000", "logs -n 3: last line");
	}
	h_run_free(&r);
}

/* A second stop returns 0 and the same exit record. */
Test(sessions, stop_is_idempotent)
{
	json_t *a, *b, *sa, *sb;
	char ids[32], *da, *db;
	long id;

	id = h_cli_launch_exec(NULL, H_ARGS("sleep", "100"));
	h_idstr(id, ids, sizeof(ids));
	a = h_cli_json(H_ARGS("stop", ids));
	b = h_cli_json(H_ARGS("stop", ids));
	sa = json_array_get(json_object_get(a, "sessions"), 0);
	sb = json_array_get(json_object_get(b, "sessions"), 0);
	cr_assert_not_null(sa, "first stop: expected {\"sessions\":[...]}");
	cr_assert_not_null(sb, "second stop: expected {\"sessions\":[...]}");
	cr_assert_eq(h_jint(sa, "exit.signal", -1), SIGTERM, "first stop: "
	    "expected exit.signal 15, got %lld", h_jint(sa, "exit.signal", -1));
	da = json_dumps(json_object_get(sa, "exit"), JSON_SORT_KEYS);
	db = json_dumps(json_object_get(sb, "exit"), JSON_SORT_KEYS);
	cr_assert(da && db && strcmp(da, db) == 0, "second stop: expected the "
	    "same exit record %s, got %s", da ? da : "null", db ? db : "null");
	cr_assert(h_jstr(sa, "ended_at") && h_jstr(sb, "ended_at") &&
	    strcmp(h_jstr(sa, "ended_at"), h_jstr(sb, "ended_at")) == 0,
	    "second stop: expected the same ended_at, got %s vs %s",
	    h_jstr(sa, "ended_at") ? h_jstr(sa, "ended_at") : "null",
	    h_jstr(sb, "ended_at") ? h_jstr(sb, "ended_at") : "null");
	free(da);
	free(db);
	json_decref(a);
	json_decref(b);
}

/* stop --all returns only once every process of every session is gone. */
Test(sessions, stop_all_waits_for_everything)
{
	char m[96], report[4096];
	struct h_snap snap;
	struct h_res r;
	size_t i;
	long id;
	int left;

	h_marker_new("DBGI_ALL", m, sizeof(m));
	for (i = 0; i < 3; i++)
		h_cli_launch_sh(m, H_ESCAPING_TREE);
	id = h_cli_launch_sh(m, IGNORES_TERM);
	h_marker_wait(m, "sleep", 12);
	pid_ignoring_term(id);
	h_snap_take(&snap, m);
	cr_assert_eq(h_cli(&r, H_ARGS("stop", "--timeout", "1000", "--all")), 0,
	    "dbgctl stop --all: expected exit 0, got %d (stderr: %s)", r.code,
	    r.err);
	h_run_free(&r);
	left = h_snap_leftovers(&snap, m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "right after stop --all returned, expected no "
	    "process of any session, got %d: %s", left, report);
	h_cli_expect_list(4, "exited", "after stop --all");
}

/* A gdb console session: gdb runs, prompts, and stop ends it. */
Test(sessions, gdb_console)
{
	char ids[32], exe[PATH_MAX], m[96], report[4096];
	struct h_snap snap;
	struct h_res r;
	const char *state;
	int left;
	json_t *st;
	pid_t pid;
	long id;

	h_marker_new("DBGI_GDB", m, sizeof(m));
	h_cli(&r, H_ARGS("launch", "--kind", "gdb", "--env", m, "--",
	    "/bin/true"));
	cr_assert_eq(r.code, 0, "dbgctl launch --kind gdb -- /bin/true: "
	    "expected exit 0, got %d (stderr: %s)", r.code, r.err);
	id = strtol(r.out, NULL, 10);
	cr_assert_gt(id, 0, "launch: expected an id, got \"%s\"", r.out);
	h_run_free(&r);
	h_idstr(id, ids, sizeof(ids));

	st = h_cli_status(id);
	state = h_jstr(st, "state");
	cr_assert(state && strcmp(state, "running") == 0, "status: expected "
	    "running, got %s", state ? state : "(none)");
	pid = (pid_t)h_jint(st, "pid", -1);
	json_decref(st);
	cr_assert_gt(pid, 0, "status: expected a pid");
	cr_assert(strcmp(h_pid_exe(pid, exe, sizeof(exe)), "gdb") == 0,
	    "status pid %d: expected gdb, got exe %s", pid, exe);

	h_cli_wait_log(ids, "(gdb)", H_WAIT_BOUND);
	h_snap_take(&snap, m);

	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: "
	    "expected exit 0, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	errno = 0;
	cr_assert(h_pid_gone(pid), "after stop: kill(%d, 0) expected ESRCH, "
	    "got %s", pid, errno ? strerror(errno) : "success");
	left = h_snap_leftovers(&snap, m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "after stop of the gdb session, expected no "
	    "process of it, got %d: %s", left, report);
}

/* The fds of pid into fds and t, and as text into list; how many. */
static int
fds_of(pid_t pid, int *fds, char (*t)[PATH_MAX], char *list, size_t len)
{
	h_pid_fds_text(pid, list, len);
	return h_pid_fds(pid, fds, t, 64);
}

/* The pty index a /dev/ptmx descriptor of pid's is the master of, or -1. */
static int
ptmx_index(pid_t pid, int fd)
{
	char path[64], *info, *at;
	int idx = -1;

	snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)pid, fd);
	info = h_read_file(path, NULL);
	if (info != NULL && (at = strstr(info, "tty-index:")) != NULL)
		idx = atoi(at + 10);
	free(info);
	return idx;
}

/*
 * Beside 150 live sessions (the daemon holding some 600 descriptors), a
 * new session's keeper holds exactly its pty on 0 1 2, its socket on 3,
 * its signalfd, and for a new daemon to adopt the session its listening
 * socket and the session's own pty master and transport ends, and both
 * ends of the pipe it pumps the pty's output into, whose read end the
 * daemon has too; its program
 * the transport's pipes on 0 and 1 and the pty on 2: none of the daemon's
 * other descriptors reaches either, and none of the daemon's spare slots
 * holds the session's pty afterwards.
 */
Test(sessions, a_keeper_beside_many_sessions_holds_only_its_own_fds)
{
	char	(*t)[PATH_MAX] = calloc(64, PATH_MAX), list[4096];
	char	(*pt)[PATH_MAX] = calloc(64, PATH_MAX), plist[4096];
	char	(*dt)[PATH_MAX] = calloc(2048, PATH_MAX), pty[PATH_MAX];
	int	fds[64], pfds[64], *dfds = calloc(2048, sizeof *dfds), n, pn;
	int	i, held = 0, sockets = 0, sigfds = 0, ptmx = 0, pipes = 0;
	int	pumps = 0;
	char	pump[PATH_MAX] = "";
	pid_t	keeper, prog, daemon;
	double	end;
	long	id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=30");
	h_daemon_fg();
	for (i = 0; i < 150; i++)
		(void)h_cli_launch_exec(NULL, H_ARGS("sleep", "100"));
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "sleep", "100"));
	keeper = h_cli_status_pid(id, "keeper_pid");
	prog = h_cli_status_pid(id, "pid");
	daemon = h_daemon_pid();
	cr_assert_gt(daemon, 0, "the daemon's pid");
	/* sleep holds its locale file briefly while it starts. */
	end = h_now() + H_WAIT_BOUND / 1000.0;
	while ((pn = fds_of(prog, pfds, pt, plist, sizeof plist)) != 3 &&
	    h_now() < end)
		h_nap(10);
	cr_assert_eq(pn, 3, "program %d: expected 0 1 2, got %d: %s", prog,
	    pn, plist);
	n = fds_of(keeper, fds, t, list, sizeof list);
	cr_assert_eq(n, 11, "keeper %d: expected 0-3, a signalfd, its "
	    "adoption socket, the pty's master, the transport's two ends and "
	    "its pump's two, got %d: %s", keeper, n, list);
	for (i = 0; i < 4; i++)
		cr_assert_eq(fds[i], i, "keeper %d: expected 0-3, got %s",
		    keeper, list);
	cr_assert(strncmp(t[0], "/dev/pts/", 9) == 0 && strcmp(t[1], t[0]) ==
	    0 && strcmp(t[2], t[0]) == 0, "keeper %d: 0 1 2 on one pty: %s",
	    keeper, list);
	snprintf(pty, sizeof pty, "%s", t[0]);
	for (i = 3; i < n; i++) {
		if (strncmp(t[i], "socket:", 7) == 0)
			sockets++;
		else if (strstr(t[i], "signalfd") != NULL)
			sigfds++;
		else if (strcmp(t[i], "/dev/ptmx") == 0) {
			ptmx++;
			cr_assert_eq(ptmx_index(keeper, fds[i]), atoi(pty + 9),
			    "keeper %d: its fd %d is the master of another "
			    "pty than its own %s", keeper, fds[i], pty);
		} else if (strcmp(t[i], pt[0]) == 0 || strcmp(t[i],
		    pt[1]) == 0)
			pipes++;
		else if (strncmp(t[i], "pipe:", 5) == 0 && pumps++ == 0)
			snprintf(pump, sizeof pump, "%s", t[i]);
		else if (strncmp(t[i], "pipe:", 5) == 0 && strcmp(t[i],
		    pump) != 0)
			*pump = '\0';	/* two pipes: not one pump's ends */
	}
	cr_assert(pumps == 2 && *pump != '\0', "keeper %d: expected both ends "
	    "of one pipe it pumps the pty into, got %s", keeper, list);
	cr_assert(sockets == 2 && sigfds == 1 && ptmx == 1 && pipes == 2,
	    "keeper %d: expected its control and adoption sockets, a "
	    "signalfd, its pty's master and its program's two pipes, got %s "
	    "(its program's: %s)", keeper, list, plist);
	cr_assert(fds[0] == 0 && strncmp(t[0], "/dev/pts", 8) == 0 &&
	    pfds[0] == 0 && strncmp(pt[0], "pipe:", 5) == 0 &&
	    pfds[1] == 1 && strncmp(pt[1], "pipe:", 5) == 0 && pfds[2] == 2 &&
	    strcmp(pt[2], pty) == 0, "program %d: expected the transport on 0 "
	    "and 1 and %s on 2, got %s", prog, pty, plist);
	/* The daemon keeps the master only: a slave it held would hide EOF. */
	n = h_pid_fds(daemon, dfds, dt, 2048);
	/* pty, socket and (but under valgrind) a pidfd a session. */
	cr_assert_gt(n, 450, "the daemon holds %d fds, expected over 450", n);
	for (i = 0; i < n; i++)
		if (strcmp(dt[i], pty) == 0)
			held++;
	cr_assert_eq(held, 0, "the daemon holds %s (%d times) after the "
	    "spawn", pty, held);
	for (i = held = 0; i < n; i++)
		if (strcmp(dt[i], pump) == 0)
			held++;
	cr_assert_eq(held, 1, "the daemon holds the pump's %s %d times, "
	    "expected once (its read end)", pump, held);
	free(dt);
	free(dfds);
	free(pt);
	free(t);
}

/*
 * launch --wait is one request: its id is printed as soon as the session
 * runs, while it still runs, and the session's end is the answer; on the
 * wire, a session.launched notification (the running session) comes
 * before the answer (the ended one).
 */
Test(sessions, launch_wait_prints_the_id_while_it_runs)
{
	static const char launch[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"exec\",\"cwd\":\"/\",\"argv\":"
	    "[\"sh\",\"-c\",\"exit 3\"],\"wait\":true}}\n";
	struct h_proc	 p;
	struct h_conn	 c;
	struct h_bytes	 out = { 0 };
	char		 buf[256], *nl;
	json_t		*note, *reply;
	double		 end;
	ssize_t		 n;
	long		 id;
	int		 st;

	cr_assert_eq(h_cli_start(&p, H_ARGS("launch", "--kind", "exec",
	    "--wait", "--", "sleep", "60")), 0, "start dbgctl launch --wait");
	end = h_now() + H_WAIT_BOUND / 1000.0;
	while ((nl = out.p != NULL ? strchr(out.p, '\n') : NULL) == NULL &&
	    h_now() < end) {
		if ((n = read(p.outfd, buf, sizeof buf)) > 0)
			h_bytes_add(&out, buf, (size_t)n);
		else
			h_nap(10);
	}
	cr_assert_not_null(nl, "launch --wait printed no id within the bound "
	    "(stdout: %s)", out.p != NULL ? out.p : "");
	id = strtol(out.p, NULL, 10);
	cr_assert_gt(id, 0, "launch --wait printed \"%s\", not an id", out.p);
	cr_assert_eq(waitpid(p.pid, &st, WNOHANG), 0, "launch --wait ended "
	    "with its session still running");
	h_cli_expect_state(id, "running", "while launch --wait waits");
	h_cli_stop(id, "5000", NULL);
	cr_assert(h_run_waitpid(p.pid, H_WAIT_BOUND, &st), "launch --wait did "
	    "not end with its session");
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM, "launch "
	    "--wait of a stopped sleep: %s, expected exit 143",
	    h_run_wstatus(st, buf, sizeof buf));
	close(p.outfd);
	close(p.errfd);
	free(out.p);
	/* On the wire: the notification, then the answer. */
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_send(&c, launch, strlen(launch), 5000), 0, "send");
	note = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert_str_eq(json_string_value(json_object_get(note, "method")) ?:
	    "", "session.launched", "the first line is no session.launched");
	cr_assert_null(json_object_get(note, "id"), "a notification has no id");
	cr_assert_str_eq(json_string_value(h_jpath(note,
	    "params.session.state")) ?: "", "running", "session.launched: the "
	    "session runs");
	cr_assert_eq(h_jint(note, "params.request", -1), 1, "session.launched "
	    "names the launch's request");
	id = h_jint(note, "params.session.id", -1);
	reply = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert_eq(h_jint(reply, "id", -1), 1, "the answer's id");
	cr_assert_eq(h_jint(reply, "result.id", -1), id, "the same session");
	cr_assert_str_eq(json_string_value(h_jpath(reply, "result.state")) ?:
	    "", "exited", "the answer is the ended session");
	cr_assert_eq(h_jint(reply, "result.exit.code", -1), 3, "its exit "
	    "code");
	json_decref(note);
	json_decref(reply);
	h_conn_close(&c);
}

/*
 * An exec session that prints its TERM and COLORTERM as "TERM=[...]
 * COLORTERM=[...]" (unset: "-"); asserts the line is want.
 */
static void
expect_term_line(const char *extra, const char *want)
{
	static const char script[] = "echo \"TERM=[${TERM--}] "
	    "COLORTERM=[${COLORTERM--}]\"; exec sleep 300";
	char ids[32], *log;
	long id;

	if (extra != NULL)
		id = h_cli_launch(H_ARGS("--kind", "exec", "--env", extra, "--",
		    "sh", "-c", script));
	else
		id = h_cli_launch_sh(NULL, script);
	h_idstr(id, ids, sizeof(ids));
	h_cli_wait_log(ids, "COLORTERM=[", H_WAIT_BOUND);
	log = h_cli_logs(ids);
	cr_assert(strstr(log, want) != NULL, "session %s: expected \"%s\" in "
	    "its environment, it printed: %s", ids, want, log);
	free(log);
}

/*
 * A session's TERM and COLORTERM are those of the client that launched
 * it, not those of the daemon (auto-started by a client with others);
 * --env still sets either; a client without them gives TERM=dumb and no
 * COLORTERM, whatever the daemon has.
 */
Test(sessions, term_comes_from_the_launching_client)
{
	h_ctx_env_add("TERM=vt100");
	h_ctx_env_add("COLORTERM=truecolor");
	expect_term_line(NULL, "TERM=[vt100] COLORTERM=[truecolor]");
	cr_assert_gt(h_daemon_pid(), 0, "no daemon was auto-started");

	h_ctx_env_add("TERM=xterm-kitty");
	h_ctx_env_del("COLORTERM");
	expect_term_line(NULL, "TERM=[xterm-kitty] COLORTERM=[-]");
	expect_term_line("TERM=screen", "TERM=[screen] COLORTERM=[-]");

	h_ctx_env_del("TERM");
	h_ctx_env_add("COLORTERM=24bit");
	expect_term_line(NULL, "TERM=[dumb] COLORTERM=[24bit]");
}

/* Whether the three shells of the session below have set their traps. */
static bool
term_traps_set(void *arg)
{
	const char	*const names[] = { "main", "orphan", "child" };
	char		 path[512];
	int		 i;

	(void)arg;
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s.up", H->dir, names[i]);
		if (access(path, F_OK) != 0)
			return false;
	}
	return true;
}

/*
 * A program that ends by itself leaves a background shell behind: its
 * keeper, which has nothing more to walk only once no child is left,
 * still finds it (now its own child) and ends it by SIGTERM, not by the
 * deadline's SIGKILL; the session ends once it has.
 */
Test(sessions, a_program_that_ends_alone_has_what_it_left_termed)
{
	char		 m[96], script[2048], path[512], d[300];
	json_t		*st;
	long		 id;

	snprintf(d, sizeof d, "%s", H->dir);
	snprintf(script, sizeof script, "sh -c \"trap 'echo >%s/left.term; "
	    "exit 0' TERM; echo >%s/left.up; while :; do sleep 0.1; done\" & "
	    "while [ ! -e %s/left.up ]; do sleep 0.05; done; exit 0", d, d, d);
	h_marker_new("DBGI_LEFT", m, sizeof(m));
	id = h_cli_launch_sh(m, script);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %ld did not end", id);
	cr_assert_eq(h_jint(st, "exit.code", -1), 0, "the program's own exit "
	    "code is the session's: %lld", h_jint(st, "exit.code", -1));
	json_decref(st);
	snprintf(path, sizeof path, "%s/left.term", d);
	cr_assert_eq(access(path, F_OK), 0, "what the program left behind "
	    "did not end by its keeper's SIGTERM");
}

/*
 * Every process of a stopped session hears the stop's SIGTERM from its
 * keeper, not the deadline's SIGKILL: the main program, an orphan of it
 * that its keeper reaps (a child of the keeper's own, listed without a
 * check of its pid) and a child of the program (checked by its start
 * time); each writes a file as it ends by TERM. The deadline is far off,
 * so a process the keeper missed would hold the stop past the client's
 * bound.
 */
Test(sessions, stop_terms_the_program_its_orphans_and_its_children)
{
	const char	*const names[] = { "main", "orphan", "child" };
	char		 m[96], ids[32], script[4096], path[512], d[300];
	char		 loop[3][1024];
	struct h_res	 r;
	long		 id;
	int		 i;

	snprintf(d, sizeof d, "%s", H->dir);
	for (i = 0; i < 3; i++)
		snprintf(loop[i], sizeof loop[i], "trap 'echo >%s/%s.term; "
		    "exit 0' TERM; echo >%s/%s.up; while :; do sleep 0.1; done",
		    d, names[i], d, names[i]);
	snprintf(script, sizeof script, "(setsid sh -c \"%s\" &); "
	    "sh -c \"%s\" & %s", loop[1], loop[2], loop[0]);
	h_marker_new("DBGI_TERMS", m, sizeof(m));
	id = h_cli_launch_sh(m, script);
	cr_assert(h_wait_for(term_traps_set, NULL, H_WAIT_BOUND), "the "
	    "session's shells did not start: %s", script);
	h_idstr(id, ids, sizeof(ids));
	h_cli(&r, H_ARGS("stop", "--timeout", "3600000", ids));
	cr_assert(!r.timed_out, "dbgctl stop %s: no return within %d ms",
	    ids, H_RUN_BOUND);
	cr_assert_eq(r.code, 0, "dbgctl stop %s: expected exit 0, got %d "
	    "(stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s.term", d, names[i]);
		cr_assert_eq(access(path, F_OK), 0, "the %s of the session did "
		    "not end by the stop's SIGTERM", names[i]);
	}
}
