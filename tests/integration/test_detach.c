/*
 * A stop respects what gdb did: what the session started is killed, a
 * process gdb only attached to (by -x "attach PID", by launch --pid, or
 * through gdbserver --attach) is detached from and lives on, untraced
 * and not stopped; --stop-target kill still kills it; the exit record
 * says by detach. A daemon SIGKILLed leaves such a process running too,
 * and a launch --pid answers with the target stopped, ready to resume.
 * And a gdb or lldb launch of a program that is not there fails at once,
 * leaving no session. The foreign process is a sleep (or fix-beat) the
 * test starts itself, outside every session's tree.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(detach, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/*
 * Skip, saying why, where the kernel would not let gdb attach to a
 * process of ours: Yama's ptrace_scope 3 always, 1 or 2 without root.
 */
static void
foreign_need_ptrace(void)
{
	char *scope = h_read_file("/proc/sys/kernel/yama/ptrace_scope", NULL);
	int level = scope != NULL ? atoi(scope) : 0;

	free(scope);
	if (level >= 3)
		cr_skip_test("kernel.yama.ptrace_scope is 3: no process may "
		    "attach to another, so gdb cannot attach here");
	if (level >= 1 && geteuid() != 0)
		cr_skip_test("kernel.yama.ptrace_scope is %d and this test "
		    "does not run as root: gdb may not attach to the test's "
		    "own sleep", level);
}

/*
 * Start prog (with arg, may be NULL) as a foreign process: the test's own
 * child in a process group of its own, dying with the test's worker
 * whatever happens, its output in the file at out (NULL: the test's).
 */
static pid_t
foreign_fork(const char *prog, const char *arg, const char *out)
{
	pid_t pid;
	int fd;

	foreign_need_ptrace();
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (out != NULL && ((fd = open(out, O_WRONLY | O_CREAT |
		    O_TRUNC, 0600)) == -1 || dup2(fd, STDOUT_FILENO) == -1))
			_exit(126);
		execl(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Start the foreign process "sleep 1000". */
static pid_t
foreign_start(void)
{
	return foreign_fork("/bin/sleep", "1000", NULL);
}

/*
 * Start a foreign fix-beat (beat_count called every 50 ms, each printing a
 * line) with its output in the file at path.
 */
static pid_t
foreign_start_beat(const char *path)
{
	return foreign_fork(h_ctx_fixture("FIX_BEAT"), NULL, path);
}

/* The size of the file at path, or -1. */
static long long
foreign_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* What foreign_grew waits on: a file and the size it must pass. */
struct foreign_out {
	const char	*path;
	long long	 size;
};

/* Predicate for h_wait_for: the file has grown past the size. */
static bool
foreign_grew(void *arg)
{
	struct foreign_out *o = arg;

	return foreign_size(o->path) > o->size + 64;
}

/* The tracer of pid from /proc/PID/status, -1 if it is gone. */
static long
foreign_tracer(pid_t pid)
{
	char buf[64];

	if (!h_pid_status(pid, "TracerPid", buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* Predicate for h_wait_for: the pid (a pid_t *) is traced. */
static bool
foreign_is_traced(void *arg)
{
	return foreign_tracer(*(pid_t *)arg) > 0;
}

/* Assert that gdb has attached to pid within the bound; who: messages. */
static void
foreign_expect_traced(pid_t pid, const char *who)
{
	cr_assert(h_wait_for(foreign_is_traced, &pid, H_WAIT_BOUND),
	    "%s: the foreign sleep %d was never traced (TracerPid %ld)", who,
	    pid, foreign_tracer(pid));
}

/* Predicate for h_wait_for: the pid is untraced and not stopped. */
static bool
foreign_is_free(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	char state = h_pid_state(pid);

	return foreign_tracer(pid) == 0 && state != 'T' && state != 't';
}

/*
 * Assert that the foreign sleep lives on after a stop: not gone, not a
 * zombie, no tracer, not stopped (a detached process may take a moment
 * to be let go); when: messages.
 */
static void
foreign_expect_alive(pid_t pid, const char *when)
{
	char state;
	int st = 0;

	cr_assert(!h_run_waitpid(pid, 0, &st), "%s: the foreign process %d, "
	    "which gdb only attached to, ended: %s", when, pid,
	    h_run_wstatus(st, (char[64]){ 0 }, 64));
	cr_assert(h_wait_for(foreign_is_free, &pid, H_WAIT_BOUND), "%s: the "
	    "foreign process %d: expected it untraced and running, got "
	    "TracerPid %ld, state %c", when, pid, foreign_tracer(pid),
	    (state = h_pid_state(pid)) != 0 ? state : '-');
}

/*
 * Assert that gdb has attached to pid and is done with it, the target
 * shown stopped, within the bound; who: messages.
 */
static void
foreign_expect_attached(long id, pid_t pid, const char *who)
{
	foreign_expect_traced(pid, who);
	cr_assert(h_cli_wait_status(id, "target.state", "stopped",
	    H_WAIT_BOUND), "%s: the target never showed stopped", who);
}

/* Kill and reap the foreign sleep at the end of a test. */
static void
foreign_end(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	h_run_waitpid(pid, H_WAIT_BOUND, &st);
}

/*
 * dbgctl --json stop NAME, asserted; the session the reply holds. The
 * timeout is generous so that gdb's quit, half of it, is not cut short by
 * SIGTERM on a loaded machine (gdb's own SIGTERM handling detaches too,
 * but its exit record then says by term).
 */
static json_t *
detach_stop(const char *name)
{
	char timeout[32];
	json_t *r, *s;

	snprintf(timeout, sizeof(timeout), "%d", 2 * H_WAIT_BOUND);
	r = h_cli_json(H_ARGS("stop", "--timeout", timeout, name));
	s = json_incref(json_array_get(h_jpath(r, "sessions"), 0));
	cr_assert_not_null(s, "stop %s: no session in %s", name,
	    json_dumps(r, JSON_COMPACT));
	json_decref(r);
	return s;
}

/*
 * Assert that gdb, once free to answer (done attaching), lists pid among
 * its inferiors.
 */
static void
detach_expect_inferior(const char *name, pid_t pid)
{
	char want[64], timeout[32];
	struct h_res r;

	snprintf(want, sizeof(want), "process %d", pid);
	snprintf(timeout, sizeof(timeout), "%d", H_WAIT_BOUND);
	cr_assert_eq(h_cli(&r, H_ARGS("exec", "--timeout", timeout, name, "--",
	    "info", "inferiors")), 0, "exec %s -- info inferiors: exit %d "
	    "(stderr: %s)", name, r.code, r.err);
	cr_assert_not_null(strstr(r.out, want), "exec %s -- info inferiors: "
	    "expected \"%s\", got:\n%s", name, want, r.out);
	h_run_free(&r);
}

/* Assert a stopped session's exit record says by want. */
static void
detach_expect_by(json_t *s, const char *want, const char *when)
{
	const char *by = h_jstr(s, "exit.by");

	cr_assert(by != NULL && strcmp(by, want) == 0, "%s: expected exit.by "
	    "\"%s\", got %s", when, want, json_dumps(h_jpath(s, "exit"),
	    JSON_COMPACT));
}

/* Assert that `dbgctl status NAME` prints text. */
static void
detach_expect_status_text(const char *name, const char *text)
{
	struct h_res r;

	cr_assert_eq(h_cli(&r, H_ARGS("status", name)), 0, "status %s: exit "
	    "%d (stderr: %s)", name, r.code, r.err);
	cr_assert_not_null(strstr(r.out, text), "status %s: expected \"%s\", "
	    "got:\n%s", name, text, r.out);
	h_run_free(&r);
}

/* Assert that a launch fails with exit 1 and stderr "dbgctl: MSG\n". */
static void
detach_expect_refused(const char *const args[], const char *msg)
{
	char line[256], shown[512];
	struct h_res r;

	snprintf(line, sizeof(line), "dbgctl: %s\n", msg);
	h_cli(&r, args);
	h_join_args(args, shown, sizeof(shown));
	cr_assert_eq(r.code, 1, "dbgctl %s: expected exit 1, got %d (stdout: "
	    "%s, stderr: %s)", shown, r.code, r.out, r.err);
	cr_assert_str_eq(r.err, line, "dbgctl %s: stderr", shown);
	cr_assert_str_eq(r.out, "", "dbgctl %s: stdout", shown);
	h_run_free(&r);
}

/*
 * The recipe, -x "attach PID": the stop detaches, so the foreign
 * sleep lives on, untraced and running; gdb ended by detach, status says
 * so, and the target is shown detached.
 */
Test(detach, stop_detaches_from_a_process_gdb_attached_to)
{
	char attach[64];
	pid_t pid = foreign_start();
	json_t *s;

	snprintf(attach, sizeof(attach), "attach %d", pid);
	foreign_expect_attached(h_cli_launch(H_ARGS("--name", "att", "-x",
	    attach, "--", "/bin/sleep")), pid, "after -x attach");
	s = detach_stop("att");
	foreign_expect_alive(pid, "after stop att");
	detach_expect_by(s, "detach", "stop att");
	cr_assert_str_eq(h_jstr(s, "target.state") ? h_jstr(s,
	    "target.state") : "(none)", "detached", "stop att: the target");
	cr_assert_eq(h_jint(s, "target.pid", -1), pid, "stop att: the "
	    "detached target's pid");
	json_decref(s);
	detach_expect_status_text("att", "\nexit: code 0, by detach\n");
	detach_expect_status_text("att", "\ntarget: detached\n");
	detach_expect_status_text("att", "\nstop_target: auto\n");
	foreign_end(pid);
}

/*
 * Per inferior: gdb starts its program (inferior 1) and attaches to the
 * foreign sleep (inferior 2, the current one); the stop kills the
 * first and detaches from the second.
 */
Test(detach, stop_kills_what_gdb_started_and_detaches_what_it_attached)
{
	char marker[128], attach[64];
	pid_t pid = foreign_start(), own;
	json_t *s;

	h_marker_new("DBGI_DETACH_MIXED", marker, sizeof(marker));
	snprintf(attach, sizeof(attach), "attach %d", pid);
	h_cli_launch(H_ARGS("--name", "mixed", "--env", marker, "-x",
	    "starti", "-x", "add-inferior", "-x", "inferior 2", "-x", attach,
	    "--", "/bin/sleep", "1000"));
	h_marker_wait(marker, "sleep", 1);
	own = h_marker_pid(marker, "sleep");
	foreign_expect_traced(pid, "after the attach of inferior 2");
	detach_expect_inferior("mixed", pid);
	s = detach_stop("mixed");
	foreign_expect_alive(pid, "after stop mixed");
	cr_assert(h_pid_gone(own), "after stop mixed: the sleep gdb started "
	    "(pid %d) is still there, state %c", own, h_pid_state(own));
	detach_expect_by(s, "detach", "stop mixed");
	json_decref(s);
	foreign_end(pid);
}

/*
 * launch --pid: gdb attaches before the session runs, status shows the
 * attach, and a stop detaches; --stop-target kill kills on request.
 */
Test(detach, launch_pid_attaches_and_stop_detaches_or_kills_on_request)
{
	char pids[32];
	pid_t pid = foreign_start();
	long id;
	json_t *s;
	int st = 0;

	snprintf(pids, sizeof(pids), "%d", pid);
	id = h_cli_launch(H_ARGS("--name", "bypid", "--pid", pids));
	cr_assert_eq(foreign_tracer(pid), h_cli_status_pid(id, "pid"),
	    "launch --pid %s answered: expected gdb (pid %d) to trace it "
	    "already, TracerPid is %ld", pids, h_cli_status_pid(id, "pid"),
	    foreign_tracer(pid));
	foreign_expect_attached(id, pid, "launch --pid");
	s = detach_stop("bypid");
	foreign_expect_alive(pid, "after stop of launch --pid");
	detach_expect_by(s, "detach", "stop of launch --pid");
	json_decref(s);

	foreign_expect_attached(h_cli_launch(H_ARGS("--name", "killer",
	    "--stop-target", "kill", "--pid", pids)), pid, "launch --pid "
	    "--stop-target kill");
	s = detach_stop("killer");
	detach_expect_by(s, "quit", "stop of launch --pid --stop-target kill");
	json_decref(s);
	cr_assert(h_run_waitpid(pid, H_WAIT_BOUND, &st) && WIFSIGNALED(st) &&
	    WTERMSIG(st) == SIGKILL, "--stop-target kill: expected the "
	    "foreign sleep %d killed, got %s", pid, h_run_wstatus(st,
	    (char[64]){ 0 }, 64));
}

/*
 * launch --pid answers once gdb has said where the target is: the answer
 * shows it stopped (never unknown), a resume right after it succeeds and
 * status then shows it running, five times over.
 */
Test(detach, launch_pid_answers_with_the_target_known_so_resume_works_at_once)
{
	char pids[32], ids[32];
	pid_t pid = foreign_start();
	struct h_res r;
	json_t *l, *st;
	int i;

	snprintf(pids, sizeof(pids), "%d", pid);
	for (i = 0; i < 5; i++) {
		l = h_cli_json(H_ARGS("launch", "--pid", pids));
		h_idstr(h_jint(l, "id", -1), ids, sizeof(ids));
		cr_assert_str_eq(h_jstr(l, "target.state") ? h_jstr(l,
		    "target.state") : "(none)", "stopped", "launch --pid %s, "
		    "round %d: the answer's target (session %s)", pids, i + 1,
		    ids);
		json_decref(l);
		cr_assert_eq(h_cli(&r, H_ARGS("resume", ids)), 0, "round %d: "
		    "dbgctl resume %s right after launch --pid: exit %d "
		    "(stderr: %s)", i + 1, ids, r.code, r.err);
		h_run_free(&r);
		st = h_cli_status(strtol(ids, NULL, 10));
		cr_assert_str_eq(h_jstr(st, "target.state") ? h_jstr(st,
		    "target.state") : "(none)", "running", "round %d: status "
		    "%s after the resume", i + 1, ids);
		json_decref(st);
		json_decref(detach_stop(ids));
		foreign_expect_alive(pid, "after a stop of launch --pid");
	}
	foreign_end(pid);
}

/* Predicate for h_wait_for: the pid (a pid_t *) is gone. */
static bool
foreign_pid_gone(void *arg)
{
	return h_pid_gone(*(pid_t *)arg);
}

/*
 * The recipe: the daemon SIGKILLed while gdb, attached by launch
 * --pid, has a breakpoint in memory in a function the process calls in a
 * loop, and the process runs on through it (its condition is never met,
 * so gdb takes each hit and resumes). gdb is hung up, as at a terminal's
 * end, and detaches, taking its breakpoint out; the process lives on,
 * untraced, and prints on, and gdb is gone. Killed with its breakpoint
 * left in, it died of SIGTRAP at the next call. The session waits for a
 * new daemon for its grace period first, here a second, that none comes.
 */
Test(detach, a_daemon_killed_detaches_from_a_process_running_with_a_break)
{
	char out[PATH_MAX], pids[32], ids[32];
	struct foreign_out o;
	struct h_res r;
	pid_t pid, gdb;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=1");
	h_ctx_path(out, sizeof(out), "beat.out");
	pid = foreign_start_beat(out);
	o.path = out;
	o.size = 0;
	cr_assert(h_wait_for(foreign_grew, &o, H_WAIT_BOUND), "fix-beat %d "
	    "printed nothing", pid);
	h_daemon_fg();
	snprintf(pids, sizeof(pids), "%d", pid);
	id = h_cli_launch(H_ARGS("--pid", pids));
	h_idstr(id, ids, sizeof(ids));
	gdb = h_cli_status_pid(id, "pid");
	cr_assert_eq(h_cli(&r, H_ARGS("exec", ids, "--", "break", "beat_count",
	    "if", "n", "==", "0")), 0, "exec %s -- break beat_count if n == 0: "
	    "exit %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	cr_assert_eq(h_cli(&r, H_ARGS("resume", ids)), 0, "resume %s: exit %d "
	    "(stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	o.size = foreign_size(out);
	cr_assert(h_wait_for(foreign_grew, &o, H_WAIT_BOUND), "fix-beat %d does "
	    "not run on through the conditional breakpoint", pid);
	h_daemon_fg_kill();
	cr_assert(h_wait_for(foreign_pid_gone, &gdb, H_WAIT_BOUND), "gdb (pid "
	    "%d) is still there after the daemon was killed, state %c", gdb,
	    h_pid_state(gdb));
	foreign_expect_alive(pid, "after the daemon was SIGKILLed");
	o.size = foreign_size(out);
	cr_assert(h_wait_for(foreign_grew, &o, H_WAIT_BOUND), "fix-beat %d "
	    "printed nothing more after gdb left (state %c)", pid,
	    h_pid_state(pid));
	foreign_expect_alive(pid, "after it printed on");
	foreign_end(pid);
}

/* The gdbserver kind with --pid: gdbserver --attach; the stop detaches. */
Test(detach, gdbserver_launch_pid_attaches_and_stop_detaches)
{
	char pids[32];
	pid_t pid = foreign_start();
	json_t *s;

	snprintf(pids, sizeof(pids), "%d", pid);
	foreign_expect_attached(h_cli_launch(H_ARGS("--name", "served",
	    "--kind", "gdbserver", "--pid", pids)), pid, "gdbserver --pid");
	s = detach_stop("served");
	foreign_expect_alive(pid, "after stop of gdbserver --pid");
	detach_expect_by(s, "detach", "stop of gdbserver --pid");
	json_decref(s);
	foreign_end(pid);
}

/*
 * A pid that is not there, or one traced already, is refused with the
 * cause, and no session is left for it.
 */
Test(detach, launch_pid_refuses_what_cannot_be_attached)
{
	char pids[32], msg[128];
	pid_t gone, pid;
	int st;

	foreign_need_ptrace();
	if ((gone = fork()) == 0)
		_exit(0);
	cr_assert(gone > 0 && h_run_waitpid(gone, H_WAIT_BOUND, &st),
	    "fork and reap a child whose pid is then free");
	snprintf(pids, sizeof(pids), "%d", gone);
	snprintf(msg, sizeof(msg), "no process %d", gone);
	detach_expect_refused(H_ARGS("launch", "--pid", pids), msg);
	h_cli_expect_list(0, NULL, "after launch --pid of a pid not there");

	pid = foreign_start();
	snprintf(pids, sizeof(pids), "%d", pid);
	h_cli_launch(H_ARGS("--name", "first", "--pid", pids));
	snprintf(msg, sizeof(msg), "cannot attach to process %d: process %ld "
	    "traces it already", pid, foreign_tracer(pid));
	detach_expect_refused(H_ARGS("launch", "--pid", pids), msg);
	h_cli_expect_list(1, "running", "after a second launch --pid of one "
	    "pid");
	json_decref(detach_stop("first"));
	foreign_end(pid);
}

/*
 * gdb and lldb launches of a program that is not there fail at once as
 * the exec kind's do, with the cause and no session; a relative PROGRAM
 * is found from --cwd, a bare name also on PATH.
 */
Test(detach, a_debugger_launch_of_a_missing_program_fails_at_once)
{
	char dir[PATH_MAX];

	detach_expect_refused(H_ARGS("launch", "--", "./nosuchprog"),
	    "./nosuchprog: No such file or directory");
	detach_expect_refused(H_ARGS("launch", "--kind", "lldb", "--",
	    "./nosuchprog"), "./nosuchprog: No such file or directory");
	detach_expect_refused(H_ARGS("launch", "--kind", "gdbserver", "--",
	    "nosuchprog-dbgi"), "nosuchprog-dbgi: No such file or directory");
	h_cli_expect_list(0, NULL, "after launches of ./nosuchprog");

	h_ctx_path(dir, sizeof(dir), "");
	h_cli_launch(H_ARGS("--cwd", "/bin", "--", "./sleep"));
	h_cli_launch(H_ARGS("--cwd", dir, "--", "sleep"));
	h_cli_expect_list(2, "running", "after launches of ./sleep from /bin "
	    "and of sleep from PATH");
}
