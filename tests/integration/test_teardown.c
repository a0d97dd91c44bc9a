/*
 * A session's stop as an ordered teardown against one deadline: the gdb
 * family quits over MI (interrupt the target, kill or detach it, then
 * -gdb-exit), a gdbserver follows its gdb, and SIGTERM and SIGKILL come
 * only for what is left. Every exit record says how it came: by exit
 * (by itself), quit, term or kill. Real gdb and gdbserver; the targets of
 * tests/fixtures (FIX_SPINNER prints "spinning" and loops forever).
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(teardown, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* A shell that ignores SIGTERM, and so do the sleeps it starts. */
#define IGNORES_TERM \
	"trap '' TERM; while :; do sleep 0.05; done"

/* "shell sleep 100\n" in base64: at gdb's console it keeps gdb, MI too, busy. */
#define BUSY_LINE_B64	"c2hlbGwgc2xlZXAgMTAwCg=="

/*
 * Assert that the exit record at path ("exit", "server_exit") of a session
 * object says it ended by want, or by also (NULL: want only).
 */
static void
expect_by(json_t *s, const char *path, const char *want, const char *also,
    const char *when)
{
	json_t *rec = h_jpath(s, path);
	const char *by = h_jstr(rec, "by");

	cr_assert(by != NULL && (strcmp(by, want) == 0 || (also != NULL &&
	    strcmp(by, also) == 0)), "session %lld %s: expected %s.by \"%s\"%s"
	    "%s, got %s", h_jint(s, "id", -1), when, path, want, also ?
	    " or " : "", also ? also : "", rec ? json_dumps(rec, JSON_COMPACT) :
	    "no record");
}

/*
 * Assert that the daemon's log has "session ID: first", and after it
 * "session ID: then" (NULL: first only).
 */
static void
expect_log(long id, const char *first, const char *then)
{
	char *log = h_daemon_log(), want[256], *at;

	snprintf(want, sizeof(want), "session %ld: %s", id, first);
	at = strstr(log, want);
	cr_assert_not_null(at, "the daemon's log has no \"%s\"; it ends "
	    "with:\n%s", want, h_shown(log, strlen(log), 2000));
	if (then != NULL) {
		snprintf(want, sizeof(want), "session %ld: %s", id, then);
		cr_assert_not_null(strstr(at, want), "the daemon's log has no "
		    "\"%s\" after \"session %ld: %s\"; it ends with:\n%s", want,
		    id, first, h_shown(log, strlen(log), 2000));
	}
	free(log);
}

/* Assert that `dbgctl status ID` prints text. */
static void
expect_status_text(const char *ids, const char *text)
{
	struct h_res r;

	cr_assert_eq(h_cli(&r, H_ARGS("status", ids)), 0, "dbgctl status %s: "
	    "exit %d (stderr: %s)", ids, r.code, r.err);
	cr_assert_not_null(strstr(r.out, text), "dbgctl status %s: expected "
	    "\"%s\" in:\n%s", ids, text, r.out);
	h_run_free(&r);
}

/* Assert that status says the session's stop_target is want. */
static void
expect_stop_target(long id, const char *want)
{
	json_t *st = h_cli_status(id);

	cr_assert_str_eq(h_jstr(st, "stop_target") ? h_jstr(st,
	    "stop_target") : "(none)", want, "status %ld (kind %s): "
	    "stop_target", id, h_jstr(st, "kind"));
	json_decref(st);
}

/*
 * A session watched through its stop: the marker in its environment, its
 * id, the processes tracked by pid and a snapshot of all that carries the
 * marker.
 */
struct watch {
	char		 m[96];
	char		 ids[32];
	long		 id;
	int		 n;
	struct h_tracked t[6];
	struct h_snap	 snap;
};

/* Start a watch: a fresh marker named name for the session to launch. */
static void
watch_marker(struct watch *w, const char *name)
{
	memset(w, 0, sizeof(*w));
	h_marker_new(name, w->m, sizeof(w->m));
}

/* The session is launched: its id, also as a string. */
static void
watch_id(struct watch *w, long id)
{
	w->id = id;
	h_idstr(id, w->ids, sizeof(w->ids));
}

/* Track one more process of the session (asserted alive now). */
static void
watch_pid(struct watch *w, const char *what, pid_t pid)
{
	cr_assert_lt(w->n, 5, "too many processes to watch");
	h_pid_track(&w->t[w->n++], what, pid);
}

/*
 * Track the processes status names in pairs of what and field ("gdb",
 * "pid", ...), then take the snapshot of what carries the marker.
 */
static void
watch_procs(struct watch *w, const char *const pairs[])
{
	int i;

	for (i = 0; pairs[i] != NULL && pairs[i + 1] != NULL; i += 2)
		watch_pid(w, pairs[i], h_cli_status_pid(w->id, pairs[i + 1]));
	h_snap_take(&w->snap, w->m);
}

/*
 * Assert at once (a stop answers when everything is gone) that nothing of
 * the session is left: no tracked process, nothing carrying its marker.
 */
static void
watch_expect_gone(struct watch *w, const char *when)
{
	char report[4096];
	int left;

	cr_assert(h_pid_tracked_gone(w->t), "%s: processes of session %s "
	    "exist: %s", when, w->ids, h_pid_tracked_left(w->t, report,
	    sizeof(report)));
	left = h_snap_leftovers(&w->snap, w->m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "%s: expected no process of session %s, got "
	    "%d: %s", when, w->ids, left, report);
}

/* Assert that status says the target runs, within the wait bound. */
static void
expect_target_running(long id)
{
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "status %ld: target.state never \"running\"", id);
}

/* gdb on /bin/sleep 100 (the watch's marker), run by -exec-run: it runs. */
static void
launch_gdb_running(struct watch *w)
{
	struct h_res r;

	watch_id(w, h_cli_launch(H_ARGS("--env", w->m, "--", "/bin/sleep",
	    "100")));
	cr_assert_eq(h_cli(&r, H_ARGS("exec", w->ids, "--", "-exec-run")), 0,
	    "dbgctl exec %s -- -exec-run: exit %d (stderr: %s)", w->ids,
	    r.code, r.err);
	h_run_free(&r);
	expect_target_running(w->id);
}

/*
 * FIX_SPINNER under the gdbserver kind's own server (the watch's marker,
 * and --stop-target how unless NULL), run on by -x continue until it
 * spins; gdb, the server and the spinner watched.
 */
static void
launch_served(struct watch *w, const char *how)
{
	const char *spinner = h_ctx_fixture("FIX_SPINNER");

	if (how != NULL)
		watch_id(w, h_cli_launch(H_ARGS("--kind", "gdbserver", "--env",
		    w->m, "--stop-target", how, "-x", "continue", "--",
		    spinner)));
	else
		watch_id(w, h_cli_launch(H_ARGS("--kind", "gdbserver", "--env",
		    w->m, "-x", "continue", "--", spinner)));
	h_cli_wait_log(w->ids, "spinning", H_WAIT_BOUND);
	expect_target_running(w->id);
	expect_stop_target(w->id, how != NULL ? how : "auto");
	watch_procs(w, H_ARGS("gdb", "pid", "server", "server_pid",
	    "inferior", "inferior_pid"));
}

/*
 * gdb on /bin/sleep 100 (the watch's marker), made busy: "shell sleep 100"
 * typed at its console, so that gdb waits for the sleep and answers
 * nothing on MI; gdb, its keeper and the sleep watched.
 */
static void
launch_busy_gdb(struct watch *w)
{
	struct h_conn c;
	char params[128];
	json_t *r;

	watch_id(w, h_cli_launch(H_ARGS("--env", w->m, "--", "/bin/sleep",
	    "100")));
	snprintf(params, sizeof(params), "{\"session\":%ld,\"stream\":"
	    "\"console\",\"data\":\"%s\"}", w->id, BUSY_LINE_B64);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect to %s", H->sock);
	r = h_conn_call(&c, "write", params, H_WAIT_BOUND);
	cr_assert_not_null(h_jpath(r, "result"), "write to the console of "
	    "%s: %s", w->ids, r ? json_dumps(r, JSON_COMPACT) : "no reply");
	json_decref(r);
	h_conn_close(&c);
	/* gdb's file is not run: the one sleep with the marker is the shell's. */
	h_marker_wait(w->m, "sleep", 1);
	watch_pid(w, "gdb's shell sleep", h_marker_pid(w->m, "sleep"));
	watch_procs(w, H_ARGS("gdb", "pid", "keeper", "keeper_pid"));
}

/*
 * A busy gdb (launch_busy_gdb, marker name) with a first stop on its way:
 * dbgctl --json stop --timeout timeout_ms started in first, and the
 * session seen stopping.
 */
static void
launch_busy_gdb_stopping(struct watch *w, const char *name,
    struct h_proc *first, const char *timeout_ms)
{
	watch_marker(w, name);
	launch_busy_gdb(w);
	cr_assert_eq(h_cli_start(first, H_ARGS("--json", "stop", "--timeout",
	    timeout_ms, w->ids)), 0, "start dbgctl stop --timeout %s %s",
	    timeout_ms, w->ids);
	cr_assert(h_cli_wait_status(w->id, "state", "stopping", H_WAIT_BOUND),
	    "session %s never went stopping after the first stop", w->ids);
}

/*
 * gdb with its target running: stop quits over MI, interrupting the target
 * before killing it; gdb exits 0 by quit and nothing of it is left.
 */
Test(teardown, gdb_quits_a_running_target_in_order)
{
	struct watch w;
	json_t *s;

	watch_marker(&w, "DBGI_QUIT");
	launch_gdb_running(&w);
	expect_stop_target(w.id, "auto");
	watch_procs(&w, H_ARGS("gdb", "pid", "inferior", "inferior_pid"));
	h_pid_expect_comm(w.t[1].pid, "inferior_pid", "sleep");

	s = h_cli_stop(w.id, NULL, NULL);
	expect_by(s, "exit", "quit", NULL, "after a stop of a running target");
	cr_assert_eq(h_jint(s, "exit.code", -1), 0, "stop %s: expected gdb's "
	    "exit.code 0, got %s", w.ids, json_dumps(h_jpath(s, "exit"),
	    JSON_COMPACT));
	json_decref(s);
	watch_expect_gone(&w, "right after the stop");
	expect_log(w.id, "quit: interrupt the target", "quit: kill the target");
	expect_status_text(w.ids, "exit: code 0, by quit");
}

/*
 * gdbserver with its target running: gdb quits (the kill ends the server's
 * target, and the server with it), so both records say by quit.
 */
Test(teardown, a_gdbserver_session_quits_and_its_server_follows)
{
	struct watch w;
	json_t *s;

	watch_marker(&w, "DBGI_SERVED");
	launch_served(&w, NULL);
	s = h_cli_stop(w.id, NULL, NULL);
	expect_by(s, "exit", "quit", NULL, "gdb, after a stop");
	expect_by(s, "server_exit", "quit", NULL, "the server, after a stop");
	json_decref(s);
	watch_expect_gone(&w, "right after the stop");
	expect_log(w.id, "quit: interrupt the target", "quit: kill the target");
}

/*
 * gdbserver with stop_target detach: gdb leaves the target running, so the
 * server (waiting for its child) does not end by itself: SIGTERM ends it
 * and the detached target.
 */
Test(teardown, a_detaching_gdbserver_session_ends_its_server_by_term)
{
	struct watch w;
	json_t *s;

	watch_marker(&w, "DBGI_DETACH");
	launch_served(&w, "detach");
	s = h_cli_stop(w.id, NULL, NULL);
	expect_by(s, "exit", "detach", NULL, "gdb, after a detaching stop");
	expect_by(s, "server_exit", "term", NULL, "the server, after gdb "
	    "detached");
	json_decref(s);
	watch_expect_gone(&w, "right after the stop (the detached target too)");
	expect_log(w.id, "quit: interrupt the target",
	    "quit: detach the target");
	expect_status_text(w.ids, "server exit: signal 15 (TERM), by term");
}

/*
 * remote detaches by default: status says so, the stop quits, and the
 * user's own gdbserver and the program it serves run on afterwards.
 */
Test(teardown, a_remote_session_detaches_and_leaves_the_server_running)
{
	const char *spinner = h_ctx_fixture("FIX_SPINNER");
	struct h_bytes b = { calloc(1, 1), 0 };
	char remote[64];
	struct h_proc srv;
	pid_t inf;
	json_t *s;
	long id;

	snprintf(remote, sizeof(remote), "127.0.0.1:%d",
	    h_run_gdbserver(&srv, &b, spinner));
	id = h_cli_launch(H_ARGS("--remote", remote, "-x", "continue", "--",
	    spinner));
	expect_target_running(id);
	expect_stop_target(id, "detach");
	inf = h_marker_pid(H->marker, "fix-spinner");
	cr_assert(inf > 0 && h_pid_ppid(inf) == srv.pid, "the served program: "
	    "expected a fix-spinner child of gdbserver %d, got pid %d",
	    srv.pid, inf);

	s = h_cli_stop(id, NULL, NULL);
	expect_by(s, "exit", "detach", NULL, "after a stop of a remote "
	    "session");
	json_decref(s);
	expect_log(id, "quit: interrupt the target", "quit: detach the target");
	cr_assert(!h_pid_gone(srv.pid) && h_pid_state(srv.pid) != 'Z' &&
	    !h_pid_gone(inf) && h_pid_state(inf) != 'Z', "after the stop of "
	    "the remote session: expected gdbserver %d and its program %d to "
	    "run on, got states %c and %c", srv.pid, inf,
	    h_pid_state(srv.pid) ? h_pid_state(srv.pid) : '-',
	    h_pid_state(inf) ? h_pid_state(inf) : '-');
	kill(inf, SIGKILL);
	kill(srv.pid, SIGKILL);
	h_run_wait(&srv, H_RUN_BOUND);
	h_run_free(&srv.res);
	free(b.p);
}

/* exec: a stop's SIGTERM ends sleep; its record says signal 15, by term. */
Test(teardown, exec_stopped_ends_by_term)
{
	struct watch w;
	json_t *s;

	watch_marker(&w, "DBGI_SLEEP");
	watch_id(&w, h_cli_launch_exec(w.m, H_ARGS("sleep", "100")));
	watch_procs(&w, H_ARGS("sleep", "pid"));
	s = h_cli_stop(w.id, NULL, NULL);
	expect_by(s, "exit", "term", NULL, "sleep 100 after a stop");
	cr_assert_eq(h_jint(s, "exit.signal", -1), SIGTERM, "stop of sleep: "
	    "expected exit.signal 15, got %s", json_dumps(h_jpath(s, "exit"),
	    JSON_COMPACT));
	json_decref(s);
	watch_expect_gone(&w, "right after the stop");
}

/*
 * exec ignoring SIGTERM, stopped with timeout 300: SIGKILL at the deadline,
 * signal 9 by kill, and the stop answers no sooner than that.
 */
Test(teardown, exec_ignoring_term_ends_by_kill_at_the_deadline)
{
	struct watch w;
	double dt;
	json_t *s;

	watch_marker(&w, "DBGI_IGNTERM");
	watch_id(&w, h_cli_launch_sh(w.m, IGNORES_TERM));
	watch_procs(&w, H_ARGS("sh", "pid"));
	cr_assert(h_pid_wait_sigmask(w.t[0].pid, "SigIgn", SIGTERM,
	    H_WAIT_BOUND), "sh %d never ignored SIGTERM", w.t[0].pid);

	s = h_cli_stop(w.id, "300", &dt);
	expect_by(s, "exit", "kill", NULL, "a program ignoring SIGTERM");
	cr_assert_eq(h_jint(s, "exit.signal", -1), SIGKILL, "expected "
	    "exit.signal 9, got %s", json_dumps(h_jpath(s, "exit"),
	    JSON_COMPACT));
	cr_assert(dt >= 0.28, "stop --timeout 300 of a program ignoring "
	    "SIGTERM answered after %.3f s, before its deadline", dt);
	json_decref(s);
	watch_expect_gone(&w, "right after the stop");
}

/* exec that exits by itself: status and a later stop both say by exit. */
Test(teardown, exec_ending_by_itself_ends_by_exit)
{
	char ids[32];
	json_t *st;
	long id;

	id = h_cli_launch_sh(NULL, "exit 3");
	h_idstr(id, ids, sizeof(ids));
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %s (exit 3) did not end", ids);
	cr_assert_eq(h_jint(st, "exit.code", -1), 3, "exit 3: %s",
	    json_dumps(h_jpath(st, "exit"), JSON_COMPACT));
	expect_by(st, "exit", "exit", NULL, "that ended by itself");
	json_decref(st);
	st = h_cli_stop(id, NULL, NULL);
	expect_by(st, "exit", "exit", NULL, "in the reply of a later stop");
	json_decref(st);
	expect_status_text(ids, "exit: code 3, by exit");
}

/* stop --timeout 0 does not ask gdb to quit: gdb ends by term or kill. */
Test(teardown, a_stop_with_timeout_0_skips_the_quit)
{
	char *log, quit[64];
	struct watch w;
	json_t *s;

	watch_marker(&w, "DBGI_NOQUIT");
	launch_gdb_running(&w);
	watch_procs(&w, H_ARGS("gdb", "pid", "inferior", "inferior_pid"));
	s = h_cli_stop(w.id, "0", NULL);
	expect_by(s, "exit", "term", "kill", "after stop --timeout 0");
	json_decref(s);
	watch_expect_gone(&w, "right after the stop");
	log = h_daemon_log();
	snprintf(quit, sizeof(quit), "session %ld: quit:", w.id);
	cr_assert_null(strstr(log, quit), "stop --timeout 0 asked gdb to quit: "
	    "%s", h_shown(log, strlen(log), 2000));
	free(log);
}

/*
 * A gdb too busy to answer MI (in "shell sleep 100"), stopped with timeout
 * 2000: the quit has half of it, then SIGTERM; the stop answers, saying
 * by term (or kill), and nothing is left, the sleep included.
 */
Test(teardown, a_busy_gdb_is_ended_within_the_stop_timeout)
{
	struct watch w;
	double dt;
	json_t *s;

	watch_marker(&w, "DBGI_BUSY");
	launch_busy_gdb(&w);
	s = h_cli_stop(w.id, "2000", &dt);
	expect_by(s, "exit", "term", "kill", "a busy gdb after stop --timeout "
	    "2000");
	json_decref(s);
	cr_assert(dt >= 0.9, "stop --timeout 2000 of a busy gdb answered after "
	    "%.3f s: the quit did not have half of the timeout", dt);
	watch_expect_gone(&w, "right after the stop");
	expect_log(w.id, "quit: end the targets", "the quit took too long");
}

/*
 * A second stop with timeout 0 during a slow quit (the first's timeout is
 * 60000) ends everything at once: it answers promptly, gdb ended by term or
 * kill, and the first stop answers with the same record.
 */
Test(teardown, a_second_stop_with_timeout_0_cuts_a_slow_quit_short)
{
	struct h_proc first;
	struct watch w;
	double dt;
	json_t *s, *r1;

	launch_busy_gdb_stopping(&w, "DBGI_AGAIN", &first, "60000");
	s = h_cli_stop(w.id, "0", &dt);
	/* Alone, the first stop would wait 30 s before any SIGTERM. */
	cr_assert(dt < 10.0, "the second stop (timeout 0) answered after "
	    "%.3f s", dt);
	expect_by(s, "exit", "term", "kill", "after a second stop with "
	    "timeout 0");
	watch_expect_gone(&w, "right after the second stop");

	h_run_wait(&first, H_RUN_BOUND);
	cr_assert_eq(first.res.code, 0, "the first stop: exit %d (stderr: %s)",
	    first.res.code, first.res.err);
	r1 = json_loads(first.res.out, 0, NULL);
	cr_assert(json_equal(h_jpath(json_array_get(h_jpath(r1, "sessions"),
	    0), "exit"), h_jpath(s, "exit")), "the first stop's reply %s, "
	    "the second's exit %s", first.res.out, json_dumps(h_jpath(s,
	    "exit"), JSON_COMPACT));
	json_decref(r1);
	json_decref(s);
	h_run_free(&first.res);
}

/* Launch over the raw protocol; assert invalid_params naming each of words. */
static void
expect_refused(struct h_conn *c, const char *params, const char *const words[])
{
	const char *msg;
	json_t *r;
	int i;

	r = h_conn_call(c, "launch", params, H_WAIT_BOUND);
	msg = h_jstr(r, "error.message");
	cr_assert(strcmp(h_jkind(r), "invalid_params") == 0, "launch %s: "
	    "expected invalid_params, got %s", params, r ? json_dumps(r, JSON_COMPACT) :
	    "no reply");
	for (i = 0; words[i] != NULL; i++)
		cr_assert(msg != NULL && strstr(msg, words[i]) != NULL, "launch "
		    "%s: expected a message naming \"%s\", got \"%s\"", params,
		    words[i], msg ? msg : "(none)");
	json_decref(r);
}

/*
 * stop_target on a kind that does not quit is refused naming the gdb
 * kinds, a value but detach and kill is refused; the client's
 * --stop-target detach works and status prints it.
 */
Test(teardown, stop_target_params)
{
	struct h_conn c;
	char ids[32];
	long id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect to %s", H->sock);
	expect_refused(&c, "{\"kind\":\"exec\",\"argv\":[\"true\"],"
	    "\"stop_target\":\"kill\"}", H_ARGS("stop_target", "gdb",
	    "remote", "gdbserver"));
	expect_refused(&c, "{\"kind\":\"lldb\",\"argv\":[\"/bin/true\"],"
	    "\"stop_target\":\"detach\"}", H_ARGS("stop_target", "gdb",
	    "remote", "gdbserver"));
	expect_refused(&c, "{\"kind\":\"gdb\",\"argv\":[\"/bin/true\"],"
	    "\"stop_target\":\"nuke\"}", H_ARGS("stop_target", "nuke"));
	h_conn_close(&c);
	h_cli_expect_list(0, NULL, "after three refused launches");

	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--stop-target",
	    "detach", "--", "/bin/sleep", "100"));
	h_idstr(id, ids, sizeof(ids));
	expect_stop_target(id, "detach");
	expect_status_text(ids, "\nstop_target: detach\n");
}

/*
 * A later stop with a longer timeout leaves the quit its half of the first
 * stop's timeout, and no more: the first (timeout 12000) is followed at
 * 4.5 s by a second (timeout 60000), and gdb still gets its SIGTERM at
 * 6 s, not at 8.25 s (half of what was left at the second stop), so the
 * first stop answers before 7.1 s.
 */
Test(teardown, a_later_longer_stop_does_not_put_off_the_sigterm)
{
	struct h_proc first, second;
	struct watch w;
	json_t *r1;

	launch_busy_gdb_stopping(&w, "DBGI_LATER", &first, "12000");
	/* Not a wait for an event: the second stop comes at this point in time. */
	while (h_now() < first.t0 + 4.5)
		h_nap(10);
	cr_assert_eq(h_cli_start(&second, H_ARGS("stop", "--timeout", "60000",
	    w.ids)), 0, "start dbgctl stop --timeout 60000 %s", w.ids);
	h_run_wait(&first, H_RUN_BOUND);
	h_run_wait(&second, H_RUN_BOUND);
	cr_assert_eq(first.res.code, 0, "the first stop: exit %d (stderr: %s)",
	    first.res.code, first.res.err);
	cr_assert_eq(second.res.code, 0, "the second stop: exit %d (stderr: "
	    "%s)", second.res.code, second.res.err);
	r1 = json_loads(first.res.out, 0, NULL);
	expect_by(json_array_get(h_jpath(r1, "sessions"), 0), "exit", "term",
	    "kill", "a busy gdb after two stops");
	json_decref(r1);
	cr_assert(first.res.elapsed < 7.1, "stop --timeout 12000 of a busy gdb, "
	    "then stop --timeout 60000 at 4.5 s: the first answered after "
	    "%.3f s; the SIGTERM due at 6 s was put off", first.res.elapsed);
	watch_expect_gone(&w, "right after the stops");
	h_run_free(&first.res);
	h_run_free(&second.res);
}
