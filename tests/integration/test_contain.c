/*
 * Containment: nothing of a session outlives it, whatever its processes do
 * to their keeper (kill it, stop it, have it killed from outside) or
 * whoever holds its pty, in both modes: a cgroup per keeper where the
 * daemon can make one, the daemon as subreaper where it cannot (forced by
 * DBGCTLD_NO_CGROUP). A daemon that starts kills what a SIGKILLed one
 * left in its cgroups; hello and status say which mode is in use, and a
 * daemon that shuts down leaves no cgroup behind.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(contain, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 150 * H_SLOW);

/* The magic of a cgroup v2 file system, as statfs reports it. */
#define CGROUP2_MAGIC		0x63677270
/* How long a client may take to exit once its answer is in (ms). */
#define LAUNCH_GRACE		10000

/* A target that SIGKILLs its keeper, then goes on holding the pty. */
#define KILLS_ITS_KEEPER \
	"trap '' HUP; kill -9 $PPID; exec sleep 301"
/* The same, with its stdio moved off the pty first: the pty ends at once. */
#define KILLS_ITS_KEEPER_OFF_PTY \
	"trap '' HUP; exec </dev/null >/dev/null 2>&1; kill -9 $PPID; " \
	"exec sleep 302"
/* A target that SIGSTOPs its keeper, so that it cannot end anything. */
#define STOPS_ITS_KEEPER \
	"kill -STOP $PPID; exec sleep 303"
/*
 * The same once its keeper has said it started (which the keeper does as
 * the target execs): a keeper stopped sooner the daemon continues.
 */
#define STOPS_ITS_KEEPER_LATER \
	"sleep 0.5; kill -STOP $PPID; exec sleep 303"
/* A target that ignores the SIGHUP of its keeper's death. */
#define IGNORES_HUP \
	"trap '' HUP; exec sleep 304"
/* A target that leaves a sleep in a session of its own, deaf to SIGHUP. */
#define LEAVES_A_SLEEP \
	"trap '' HUP; (setsid sleep 305 &); exec sleep 300"
/*
 * A target that makes two levels of cgroups below its own (found from
 * /proc/self/cgroup and the cgroup2 mount) and moves a child, a sleep deaf
 * to SIGHUP, into the deepest.
 */
#define NESTS_CGROUPS \
	"trap '' HUP; m=$(awk '/ - cgroup2 / {print $5; exit}' " \
	"/proc/self/mountinfo); d=$m$(sed -n 's/^0:://p' /proc/self/cgroup); " \
	"mkdir -p \"$d/nest/deeper\" && sh -c 'echo $$ >\"$1/cgroup.procs\" " \
	"&& exec sleep 309' sh \"$d/nest/deeper\" & exec sleep 310"
/* How many such sessions a SIGKILLed daemon leaves to the next. */
#define LEFT_SESSIONS		6

/* A fresh marker into m and a session of sh -c script carrying it. */
static long
launch(char *m, size_t len, const char *script)
{
	h_marker_new("DBGI_CONTAIN", m, len);
	return h_cli_launch_sh(m, script);
}

/*
 * A session of a plain sleep carrying a fresh marker (into m), its id into
 * *id; its status, asserted to say the containment mode.
 */
static json_t *
launch_sleep(char *m, size_t len, const char *mode, long *id)
{
	json_t *st;

	h_marker_new("DBGI_CONTAIN", m, len);
	*id = h_cli_launch_exec(m, H_ARGS("sleep", "306"));
	st = h_cli_status(*id);
	cr_assert_str_eq(h_jstr(st, "containment"), mode, "status %ld: "
	    "containment", *id);
	return st;
}

/* The one session of the daemon, once `list` shows it: its id, asserted. */
static long
the_session(void)
{
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	json_t *l;
	long id;

	for (;;) {
		l = h_cli_json(H_ARGS("list"));
		id = (long)h_jint(json_array_get(json_object_get(l, "sessions"),
		    0), "id", -1);
		json_decref(l);
		if (id > 0)
			return id;
		cr_assert(h_now() < end, "list: no session within %d ms",
		    H_WAIT_BOUND);
		h_nap(20);
	}
}

/*
 * launch() for a target that may kill its keeper before the keeper has
 * said it started: the launch then fails, and the session is there, failed.
 */
static void
launch_racing_id(char *m, size_t len, const char *script)
{
	struct h_res r;

	h_marker_new("DBGI_CONTAIN", m, len);
	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--env", m, "--", "sh",
	    "-c", script));
	cr_assert(r.code == 0 || (r.code == 1 && strstr(r.err, "before it "
	    "ran") != NULL), "dbgctl launch -- sh -c \"%s\": expected exit 0, "
	    "or 1 as the keeper died before it said the program started, got "
	    "%d (stderr: %s)", script, r.code, r.err);
	h_run_free(&r);
}

/* The same, on a daemon with no other session: the id, found by list. */
static long
launch_racing(char *m, size_t len, const char *script)
{
	launch_racing_id(m, len, script);
	return the_session();
}

/* stop returns 0 within the client's bound, and nothing of the session lives. */
static void
stop_leaves_nothing(long id, const char *m, const char *when)
{
	char ids[32], report[4096];
	struct h_res r;
	int left;

	h_idstr(id, ids, sizeof(ids));
	h_cli(&r, H_ARGS("stop", ids));
	cr_assert(!r.timed_out, "dbgctl stop %s %s: no return within %d ms",
	    ids, when, H_RUN_BOUND);
	cr_assert_eq(r.code, 0, "dbgctl stop %s %s: expected exit 0, got %d "
	    "(stderr: %s)", ids, when, r.code, r.err);
	h_run_free(&r);
	left = h_marker_describe(m, report, sizeof(report));
	cr_assert_eq(left, 0, "dbgctl stop %s %s returned, but processes of "
	    "the session are alive: %s", ids, when, report);
}

/*
 * The session ends by itself within the bound, with nothing of it alive
 * when status first says so; then stop returns and leaves nothing.
 */
static void
ends_leaving_nothing(long id, const char *m, const char *when)
{
	char report[4096];
	json_t *st;
	int left;

	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	left = h_marker_describe(m, report, sizeof(report));
	cr_assert_not_null(st, "session %ld did not end within %d ms %s; "
	    "alive: %s", id, H_WAIT_BOUND, when, left ? report : "nothing");
	cr_assert_eq(left, 0, "session %ld said %s %s, while processes of it "
	    "were alive: %s", id, h_jstr(st, "state"), when, report);
	cr_assert_str_eq(h_jstr(st, "containment"), H->cgroup[0] ? "cgroup" :
	    "subreaper", "session %ld: status containment", id);
	json_decref(st);
	stop_leaves_nothing(id, m, when);
}

/*
 * A target that SIGKILLs its keeper (and ignores the SIGHUP of that):
 * the daemon kills what outlived the keeper, the session ends by itself
 * and leaves nothing.
 */
static void
target_kills_its_keeper(const char *mode, const char *script)
{
	char m[96];
	long id;

	h_contain_daemon(mode);
	id = launch_racing(m, sizeof(m), script);
	ends_leaving_nothing(id, m, "after its target SIGKILLed its keeper");
	/* Whichever path came first: the cgroup's or the subreaper's. */
	h_daemon_wait_log("outlived", H_WAIT_BOUND);
	h_contain_shutdown("after a target killed its keeper");
}

Test(contain, a_target_that_kills_its_keeper_leaves_nothing_cgroup)
{
	target_kills_its_keeper("cgroup", KILLS_ITS_KEEPER);
}

Test(contain, a_target_that_kills_its_keeper_leaves_nothing_subreaper)
{
	target_kills_its_keeper("subreaper", KILLS_ITS_KEEPER);
}

/* Off the pty the console ends at once: the session must still wait. */
Test(contain, a_target_off_the_pty_that_kills_its_keeper_cgroup)
{
	target_kills_its_keeper("cgroup", KILLS_ITS_KEEPER_OFF_PTY);
}

Test(contain, a_target_off_the_pty_that_kills_its_keeper_subreaper)
{
	target_kills_its_keeper("subreaper", KILLS_ITS_KEEPER_OFF_PTY);
}

/* Predicate: the process *(pid_t *)arg is stopped. */
static bool
stopped(void *arg)
{
	return h_pid_state(*(pid_t *)arg) == 'T';
}

/*
 * Launch, in the background, a session (stop timeout 300 ms) whose target
 * SIGSTOPs its keeper and becomes a sleep; return its id once the keeper
 * is stopped. The keeper may be stopped before it said the program
 * started, and the launch then waits: it is the caller's to collect.
 */
static long
launch_stopping_keeper(struct h_proc *lp, char *m, size_t len)
{
	pid_t keeper;
	long id;

	h_marker_new("DBGI_CONTAIN", m, len);
	cr_assert_eq(h_cli_start(lp, H_ARGS("launch", "--kind", "exec",
	    "--stop-timeout", "300", "--env", m, "--", "sh", "-c",
	    STOPS_ITS_KEEPER_LATER)), 0, "cannot start dbgctl launch");
	h_marker_wait(m, "sleep", 1);
	id = the_session();
	keeper = h_cli_status_pid(id, "keeper_pid");
	cr_assert(h_wait_for(stopped, &keeper, H_WAIT_BOUND), "keeper %d of "
	    "session %ld never stopped (state %c)", keeper, id,
	    h_pid_state(keeper));
	return id;
}

/*
 * The background launch has returned by now (a grace for the client to
 * exit): 0, or 1 as it was stopped while starting (any code if !ended).
 */
static void
launch_returned(struct h_proc *lp, bool ended, const char *when)
{
	/* h_run_wait's bound runs from the launch's start. */
	h_run_wait(lp, (int)((h_now() - lp->t0) * 1000) + LAUNCH_GRACE);
	cr_assert(!lp->res.timed_out, "dbgctl launch had not returned %s",
	    when);
	cr_assert(!ended || lp->res.code == 0 || lp->res.code == 1, "dbgctl "
	    "launch %s: expected exit 0, or 1 as it was stopped while "
	    "starting, got %d (stderr: %s)", when, lp->res.code, lp->res.err);
	h_run_free(&lp->res);
}

/*
 * Predicate: the daemon's log says how it dealt with a stopped keeper:
 * killed at its stop deadline, or, stopped before it could say its
 * program started, continued so that the launch could answer.
 */
static bool
keeper_dealt_with(void *arg)
{
	char	*log = h_daemon_log();
	bool	 yes = strstr(log, "missed its stop deadline: killing it") !=
		    NULL || strstr(log, "stopped before its program started: "
		    "continuing it") != NULL;

	(void)arg;
	free(log);
	return yes;
}

/*
 * A target that SIGSTOPs its keeper: stop returns all the same (the
 * keeper is killed at its deadline and its tree with it), leaving nothing.
 */
static void
target_stops_its_keeper(const char *mode)
{
	struct h_proc lp;
	char m[96];
	json_t *st;
	long id;

	h_contain_daemon(mode);
	id = launch_stopping_keeper(&lp, m, sizeof(m));
	stop_leaves_nothing(id, m, "of a session whose target stopped its "
	    "keeper");
	launch_returned(&lp, true, "when stop returned");
	st = h_cli_wait_ended(id, 0);
	cr_assert_not_null(st, "session %ld: stop returned, but status does "
	    "not say it ended", id);
	json_decref(st);
	cr_assert(h_wait_for(keeper_dealt_with, NULL, H_WAIT_BOUND), "the "
	    "daemon's log says neither that the stopped keeper missed its "
	    "deadline nor that it was continued before its program started");
	h_contain_shutdown("after a target stopped its keeper");
}

Test(contain, stop_returns_when_a_target_stopped_its_keeper_cgroup)
{
	target_stops_its_keeper("cgroup");
}

Test(contain, stop_returns_when_a_target_stopped_its_keeper_subreaper)
{
	target_stops_its_keeper("subreaper");
}

/* shutdown of a daemon with such a session returns, and leaves nothing. */
static void
shutdown_with_a_stopped_keeper(const char *mode)
{
	char m[96], report[4096];
	struct h_proc lp;
	int left;

	h_contain_daemon(mode);
	launch_stopping_keeper(&lp, m, sizeof(m));
	h_contain_shutdown("with a session whose target stopped its keeper");
	launch_returned(&lp, false, "when its daemon shut down");
	left = h_marker_describe(m, report, sizeof(report));
	cr_assert_eq(left, 0, "the daemon shut down, but processes of its "
	    "session are alive: %s", report);
}

Test(contain, shutdown_returns_when_a_target_stopped_its_keeper_cgroup)
{
	shutdown_with_a_stopped_keeper("cgroup");
}

Test(contain, shutdown_returns_when_a_target_stopped_its_keeper_subreaper)
{
	shutdown_with_a_stopped_keeper("subreaper");
}

/*
 * A target deaf to SIGHUP whose keeper is SIGKILLed from outside: the
 * target does not survive it, and the session ends by itself.
 */
static void
keeper_killed_from_outside(const char *mode)
{
	char m[96];
	pid_t keeper, pid;
	long id;

	h_contain_daemon(mode);
	id = launch(m, sizeof(m), IGNORES_HUP);
	h_marker_wait(m, "sleep", 1);
	pid = h_cli_status_pid(id, "pid");
	keeper = h_cli_status_pid(id, "keeper_pid");
	cr_assert(h_pid_wait_sigmask(pid, "SigIgn", SIGHUP, H_WAIT_BOUND),
	    "test setup: the target %d does not ignore SIGHUP", pid);
	cr_assert_eq(kill(keeper, SIGKILL), 0, "kill(%d, SIGKILL): %s", keeper,
	    strerror(errno));
	ends_leaving_nothing(id, m, "after its keeper was SIGKILLed");
	h_contain_shutdown("after a keeper was killed from outside");
}

Test(contain, a_keeper_killed_from_outside_takes_its_target_cgroup)
{
	keeper_killed_from_outside("cgroup");
}

Test(contain, a_keeper_killed_from_outside_takes_its_target_subreaper)
{
	keeper_killed_from_outside("subreaper");
}

/*
 * Something outside the session (the test) holds the pty open: stop
 * returns all the same, the session ends, and the daemon says why.
 */
static void
pty_held_from_outside(const char *mode)
{
	char m[96], path[64];
	json_t *st;
	pid_t pid;
	long id;
	int fd;

	h_contain_daemon(mode);
	st = launch_sleep(m, sizeof(m), mode, &id);
	pid = (pid_t)h_jint(st, "pid", -1);
	json_decref(st);
	snprintf(path, sizeof(path), "/proc/%d/fd/0", pid);
	fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	stop_leaves_nothing(id, m, "while the test holds its pty");
	h_cli_expect_state(id, "exited", "after stop, the pty held");
	h_daemon_wait_log("held open after its processes ended: closed",
	    H_WAIT_BOUND);
	close(fd);
	h_contain_shutdown("after a pty held from outside");
}

Test(contain, stop_returns_while_the_pty_is_held_from_outside_cgroup)
{
	pty_held_from_outside("cgroup");
}

Test(contain, stop_returns_while_the_pty_is_held_from_outside_subreaper)
{
	pty_held_from_outside("subreaper");
}

/* Predicate: pid is a zombie or gone, its exit done. */
static bool
exited(void *arg)
{
	char s = h_pid_state(*(pid_t *)arg);

	return s == 0 || s == 'Z';
}

/* Predicate: no live process carries the marker arg. */
static bool
marker_gone(void *arg)
{
	return h_marker_gone(arg);
}

/*
 * Sessions whose processes outlived their keepers, each in its cgroup,
 * left by a daemon SIGKILLed while stopped (so that it could not end
 * them): their keepers' pids into keepers, their cgroups into dirs.
 */
static void
leave_sessions(const char *m, pid_t *keepers, char (*dirs)[PATH_MAX * 2])
{
	char report[4096];
	pid_t d = H->fg_daemon;
	long id;
	int i;

	for (i = 0; i < LEFT_SESSIONS; i++) {
		id = h_cli_launch_sh(m, LEAVES_A_SLEEP);
		keepers[i] = h_cli_status_pid(id, "keeper_pid");
		h_contain_dir(dirs[i], sizeof(dirs[i]), d, id, 0);
		cr_assert(h_contain_holds(dirs[i], keepers[i]), "keeper %d is "
		    "not in its cgroup %s", keepers[i], dirs[i]);
	}
	h_marker_wait(m, "sleep", 2 * LEFT_SESSIONS);
	cr_assert_eq(kill(d, SIGSTOP), 0, "kill(%d, SIGSTOP)", d);
	cr_assert(h_wait_for(stopped, &d, H_WAIT_BOUND), "daemon %d did not "
	    "stop", d);
	for (i = 0; i < LEFT_SESSIONS; i++) {
		cr_assert_eq(kill(keepers[i], SIGKILL), 0, "kill(%d, SIGKILL)",
		    keepers[i]);
		cr_assert(h_wait_for(exited, &keepers[i], H_WAIT_BOUND),
		    "keeper %d did not die of SIGKILL", keepers[i]);
	}
	h_daemon_fg_kill();
	h_marker_describe(m, report, sizeof(report));
	for (i = 0; i < LEFT_SESSIONS; i++)
		cr_assert(h_contain_populated(dirs[i]), "test setup: nothing "
		    "outlived keeper %d and its daemon in %s (alive: %s)",
		    keepers[i], dirs[i], report);
}

/*
 * What outlived its keeper and then its daemon (SIGKILLed) lives on in
 * the dead daemon's cgroups; a new daemon on the same socket kills it as
 * it starts, saying so, and leaves no cgroup when it shuts down.
 */
Test(contain, a_new_daemon_kills_what_a_killed_one_left_cgroup)
{
	char m[96], dirs[LEFT_SESSIONS][PATH_MAX * 2], report[4096];
	pid_t keepers[LEFT_SESSIONS];

	h_contain_daemon("cgroup");
	h_marker_new("DBGI_CONTAIN", m, sizeof(m));
	leave_sessions(m, keepers, dirs);
	h_daemon_fg();
	if (!h_wait_for(marker_gone, m, H_WAIT_BOUND)) {
		h_marker_describe(m, report, sizeof(report));
		cr_assert_fail("a new daemon answers ping, but what the killed "
		    "one left lives on: %s", report);
	}
	h_daemon_wait_log("a previous daemon left processes there: killing "
	    "them", H_WAIT_BOUND);
	h_contain_shutdown("after sweeping a killed daemon's leftovers");
}

/*
 * hello says cgroup, with the daemon's subtree, a directory of a cgroup
 * v2 file system; a session says cgroup, and its keeper and program are
 * in the cgroup made for them there.
 */
Test(contain, hello_and_status_say_cgroup)
{
	char m[96], dir[PATH_MAX * 2], base[64];
	struct statfs fs;
	struct stat sb;
	pid_t keeper, pid;
	json_t *st;
	long id;

	h_contain_daemon("cgroup");
	cr_assert(stat(H->cgroup, &sb) == 0 && S_ISDIR(sb.st_mode), "hello's "
	    "cgroup %s is not a directory", H->cgroup);
	cr_assert(statfs(H->cgroup, &fs) == 0 && fs.f_type == CGROUP2_MAGIC,
	    "hello's cgroup %s is not on a cgroup v2 file system", H->cgroup);
	snprintf(base, sizeof(base), "/dbgctld-%u-", (unsigned)getuid());
	cr_assert_not_null(strstr(H->cgroup, base), "hello's cgroup %s: "
	    "expected a dir named dbgctld-UID-HASH", H->cgroup);

	st = launch_sleep(m, sizeof(m), "cgroup", &id);
	keeper = (pid_t)h_jint(st, "keeper_pid", -1);
	pid = (pid_t)h_jint(st, "pid", -1);
	json_decref(st);
	h_contain_dir(dir, sizeof(dir), H->fg_daemon, id, 0);
	cr_assert(h_contain_holds(dir, keeper) && h_contain_holds(dir, pid),
	    "%s: expected the keeper %d and the program %d in its "
	    "cgroup.procs", dir, keeper, pid);
	stop_leaves_nothing(id, m, "of a plain session");
	h_contain_shutdown("after a plain session");
}

/* Without a cgroup, hello says subreaper and why; a session says so. */
Test(contain, hello_and_status_say_subreaper_without_cgroup)
{
	char m[96], path[64], *cg;
	json_t *st;
	pid_t pid;
	long id;

	h_contain_daemon("subreaper");
	st = launch_sleep(m, sizeof(m), "subreaper", &id);
	pid = (pid_t)h_jint(st, "pid", -1);
	json_decref(st);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	cg = h_read_file(path, NULL);
	cr_assert_not_null(cg, "%s: cannot read", path);
	cr_assert_null(strstr(cg, "/dbgctld-"), "subreaper mode, yet the "
	    "program is in a daemon's cgroup: %s", cg);
	free(cg);
	stop_leaves_nothing(id, m, "of a plain session");
	h_contain_shutdown("after a plain session");
}

/*
 * A session whose cgroup cannot be made (the subtree allows no more
 * cgroups: cgroup.max.descendants 0) is contained by the subreaper alone:
 * its status says so, not the daemon's mode; and stop leaves nothing.
 */
Test(contain, a_session_without_a_cgroup_of_its_own_says_subreaper_cgroup)
{
	char m[96], dir[PATH_MAX * 2];
	const char *got;
	json_t *st;
	long id;

	h_contain_daemon("cgroup");
	cr_assert_eq(h_contain_write(H->cgroup, "cgroup.max.descendants", "0"),
	    0, "%s/cgroup.max.descendants: %s", H->cgroup, strerror(errno));
	h_marker_new("DBGI_CONTAIN", m, sizeof(m));
	id = h_cli_launch_exec(m, H_ARGS("sleep", "306"));
	h_contain_dir(dir, sizeof(dir), H->fg_daemon, id, 0);
	cr_assert(access(dir, F_OK) == -1, "test setup: the session's cgroup "
	    "%s was made despite cgroup.max.descendants 0", dir);
	st = h_cli_status(id);
	got = h_jstr(st, "containment");
	cr_assert(got != NULL && strcmp(got, "subreaper") == 0, "session %ld "
	    "has no cgroup of its own (%s could not be made), yet its status "
	    "says containment %s", id, dir, got ? got : "(none)");
	json_decref(st);
	stop_leaves_nothing(id, m, "of a session without a cgroup");
	cr_assert_eq(h_contain_write(H->cgroup, "cgroup.max.descendants",
	    "max"), 0, "%s/cgroup.max.descendants: %s", H->cgroup,
	    strerror(errno));
	h_contain_shutdown("after a session without a cgroup");
}

/*
 * Targets that SIGSTOP their keeper at once, before it can say that they
 * started: every launch still answers (the daemon continues a keeper
 * stopped before its program started), and stop leaves nothing.
 */
Test(contain, launches_answer_when_targets_stop_their_keepers_at_once)
{
	enum { N = 12 };
	struct h_proc	lp[N];
	struct h_res	res;
	char		m[96], report[4096];
	int		i, left;

	h_contain_daemon("cgroup");
	h_marker_new("DBGI_CONTAIN", m, sizeof m);
	for (i = 0; i < N; i++)
		cr_assert_eq(h_cli_start(&lp[i], H_ARGS("launch", "--kind",
		    "exec", "--stop-timeout", "300", "--env", m, "--", "sh",
		    "-c", STOPS_ITS_KEEPER)), 0, "cannot start dbgctl launch");
	for (i = 0; i < N; i++) {
		h_run_wait(&lp[i], H_WAIT_BOUND);
		cr_assert(!lp[i].res.timed_out, "launch %d never answered", i);
		cr_assert_eq(lp[i].res.code, 0, "launch %d: exit %d (%s)", i,
		    lp[i].res.code, lp[i].res.err);
		h_run_free(&lp[i].res);
	}
	h_cli_expect_list(N, "running", "after the launches");
	cr_assert_eq(h_cli(&res, H_ARGS("stop", "--all")), 0, "stop --all: %s",
	    res.err);
	h_run_free(&res);
	left = h_marker_describe(m, report, sizeof report);
	cr_assert_eq(left, 0, "stop --all left %d processes: %s", left,
	    report);
	h_contain_shutdown("after targets stopped their keepers at once");
}

/*
 * With 1000 live sessions the daemon's list of children passes a page of
 * /proc: an orphan listed after all their keepers is still found, killed
 * and reaped, and the session of the keeper its target killed ends.
 */
Test(contain, an_orphan_is_found_behind_hundreds_of_keepers_subreaper)
{
	enum { LIVE = 1000 };
	struct h_conn	 c;
	char		 m[96];
	json_t		*r;
	long		 id;
	int		 i;

	h_contain_daemon("subreaper");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	for (i = 0; i < LIVE; i++) {
		r = h_conn_call(&c, "launch", "{\"kind\":\"exec\",\"argv\":"
		    "[\"sleep\",\"1000\"],\"cwd\":\"/\"}", 20000);
		cr_assert_not_null(h_jpath(r, "result.id"), "launch %d", i);
		json_decref(r);
	}
	h_conn_close(&c);
	/* launch_racing finds "the" session by list; this one is the next id. */
	launch_racing_id(m, sizeof(m), KILLS_ITS_KEEPER);
	id = LIVE + 1;
	ends_leaving_nothing(id, m, "after its target SIGKILLed its keeper, "
	    "behind 1000 live sessions");
	h_contain_shutdown("with 1000 sessions and an orphan");
}

/*
 * A session of NESTS_CGROUPS, once its child is in the deepest cgroup:
 * its id, its cgroup into dir and the deepest one into deep.
 */
static long
launch_nesting(char *m, size_t len, char *dir, char *deep, size_t dlen)
{
	long id;

	id = launch(m, len, NESTS_CGROUPS);
	h_marker_wait(m, "sleep", 2);
	h_contain_dir(dir, dlen, H->fg_daemon, id, 0);
	snprintf(deep, dlen, "%s/nest/deeper", dir);
	cr_assert(h_contain_populated(deep), "test setup: the target's child "
	    "is not in the cgroup %s it made", deep);
	return id;
}

/* The session's cgroup dir is gone, with the cgroups its target made. */
static void
nested_cgroups_gone(const char *dir, const char *deep, const char *when)
{
	errno = 0;
	cr_assert(access(deep, F_OK) == -1 && errno == ENOENT, "%s, the "
	    "cgroup %s that the target made is left", when, deep);
	errno = 0;
	cr_assert(access(dir, F_OK) == -1 && errno == ENOENT, "%s, the "
	    "session's cgroup %s is left", when, dir);
}

/*
 * A target that makes cgroups of its own below its session's and moves a
 * child into the deepest: stop kills that child and removes the session's
 * cgroup with every cgroup below it; the daemon's subtree goes at shutdown.
 */
Test(contain, stop_removes_the_cgroups_a_target_made_cgroup)
{
	char m[96], dir[PATH_MAX * 2], deep[PATH_MAX * 2];
	long id;

	h_contain_daemon("cgroup");
	id = launch_nesting(m, sizeof(m), dir, deep, sizeof(dir));
	stop_leaves_nothing(id, m, "of a target that made cgroups");
	nested_cgroups_gone(dir, deep, "after stop");
	h_contain_shutdown("after a target made cgroups");
}

/*
 * The same session left by a daemon SIGKILLed while stopped, its keeper
 * killed so that the child in the deepest cgroup lives on: the next daemon
 * kills it as it starts and removes the whole tree of cgroups.
 */
Test(contain, a_new_daemon_removes_the_cgroups_a_target_made_cgroup)
{
	char m[96], dir[PATH_MAX * 2], deep[PATH_MAX * 2], report[4096];
	pid_t d, keeper;
	long id;

	h_contain_daemon("cgroup");
	id = launch_nesting(m, sizeof(m), dir, deep, sizeof(dir));
	keeper = h_cli_status_pid(id, "keeper_pid");
	d = H->fg_daemon;
	cr_assert_eq(kill(d, SIGSTOP), 0, "kill(%d, SIGSTOP)", d);
	cr_assert(h_wait_for(stopped, &d, H_WAIT_BOUND), "daemon %d did not "
	    "stop", d);
	cr_assert_eq(kill(keeper, SIGKILL), 0, "kill(%d, SIGKILL)", keeper);
	cr_assert(h_wait_for(exited, &keeper, H_WAIT_BOUND), "keeper %d did "
	    "not die of SIGKILL", keeper);
	h_daemon_fg_kill();
	cr_assert(h_contain_populated(deep), "test setup: nothing outlived "
	    "the keeper and its daemon in %s", deep);
	h_daemon_fg();
	if (!h_wait_for(marker_gone, m, H_WAIT_BOUND)) {
		h_marker_describe(m, report, sizeof(report));
		cr_assert_fail("a new daemon answers ping, but what the killed "
		    "one left in the cgroups its target made lives on: %s",
		    report);
	}
	nested_cgroups_gone(dir, deep, "once a new daemon answers ping");
	h_contain_shutdown("after sweeping a target's own cgroups");
}

/* Predicate: the daemon's log says it read a line of keeper *(pid_t *)arg's. */
static bool
keeper_line_logged(void *arg)
{
	char	*log = h_daemon_log(), ignored[64], said[64];
	bool	 yes;

	snprintf(ignored, sizeof(ignored), "keeper %d: ignored", *(pid_t *)arg);
	snprintf(said, sizeof(said), "keeper %d said", *(pid_t *)arg);
	yes = log != NULL && (strstr(log, ignored) != NULL ||
	    strstr(log, said) != NULL);
	free(log);
	return yes;
}

/* Create the empty file path. */
static void
touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	cr_assert_geq(fd, 0, "create %s: %s", path, strerror(errno));
	close(fd);
}

/*
 * A target that steals its keeper's control socket (pidfd_getfd) and
 * writes there a negative pid, a second start, exits while it runs and a
 * line of no kind: the daemon ignores them all, saying so once in its log;
 * status shows the target's own pid, running, and once it exits, its one
 * exit, with the code it exited with.
 */
Test(contain, lines_forged_on_a_stolen_keeper_socket_are_ignored)
{
	const char *forge = h_ctx_fixture("FIX_FORGE");
	char m[96], go[512], goexit[600], needle[64], *log;
	pid_t pid, keeper;
	json_t *st;
	long id;
	int n;

	h_contain_daemon("subreaper");
	h_ctx_path(go, sizeof(go), "go");
	snprintf(goexit, sizeof(goexit), "%s.exit", go);
	h_marker_new("DBGI_CONTAIN", m, sizeof(m));
	id = h_cli_launch_exec(m, H_ARGS(forge, go));
	pid = h_cli_status_pid(id, "pid");
	keeper = h_cli_status_pid(id, "keeper_pid");
	cr_assert_eq(h_marker_pid(m, "fix-forge"), pid, "status pid %d is not "
	    "the target's", pid);
	touch(go);
	cr_assert(h_wait_for(keeper_line_logged, &keeper, H_WAIT_BOUND), "the "
	    "target wrote forged lines on its keeper's socket, but the daemon's "
	    "log says nothing of keeper %d", keeper);
	st = h_cli_status(id);
	cr_assert_eq(h_jint(st, "pid", -1), pid, "after forged lines, status "
	    "pid %lld, not the target's %d", h_jint(st, "pid", -1), pid);
	cr_assert_str_eq(h_jstr(st, "state"), "running", "after forged lines "
	    "(an exit among them), status state");
	cr_assert_null(json_object_get(st, "exit"), "after forged lines, "
	    "status shows an exit while the target runs");
	json_decref(st);
	touch(goexit);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %ld did not end once told to", id);
	cr_assert_eq(h_jint(st, "pid", -1), pid, "ended: status pid");
	cr_assert_eq(h_jint(st, "exit.code", -1), 3, "ended: expected the "
	    "target's own exit code 3, got %lld", h_jint(st, "exit.code", -1));
	cr_assert_str_eq(h_jstr(st, "exit.by"), "exit", "ended: exit.by");
	json_decref(st);
	log = h_daemon_log();
	snprintf(needle, sizeof(needle), "session %ld: program ended", id);
	n = h_count(log, strlen(log), needle);
	cr_assert_eq(n, 1, "the daemon's log says \"%s\" %d times, expected "
	    "once", needle, n);
	snprintf(needle, sizeof(needle), "keeper %d: ignored", keeper);
	n = h_count(log, strlen(log), needle);
	free(log);
	cr_assert_eq(n, 1, "the daemon's log says \"%s\" %d times, expected "
	    "once", needle, n);
	stop_leaves_nothing(id, m, "of a target that forged its keeper's lines");
	h_contain_shutdown("after a target forged its keeper's lines");
}

/* How many cgroups the daemon's subtree holds (0 outside cgroup mode). */
static int
cgroups_left(void)
{
	struct dirent	*e;
	DIR		*d;
	int		 n = 0;

	if (H->cgroup[0] == '\0' || (d = opendir(H->cgroup)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (e->d_type == DT_DIR && e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * stop --all of many sessions, each a program beside an orphan its keeper
 * reaps: when it returns, no process of any session is alive, and in
 * cgroup mode no session's cgroup is left.
 */
static void
stop_all_of_many(const char *mode)
{
	enum { N = 100 };
	char		m[96], report[4096];
	struct h_res	r;
	int		i, left;

	h_contain_daemon(mode);
	h_marker_new("DBGI_ALL", m, sizeof(m));
	for (i = 0; i < N; i++)
		h_cli_launch_sh(m, LEAVES_A_SLEEP);
	h_marker_wait(m, "sleep", 2 * N);
	cr_assert_eq(cgroups_left(), H->cgroup[0] != '\0' ? N : 0, "test "
	    "setup: a cgroup a session");
	h_cli(&r, H_ARGS("stop", "--all"));
	cr_assert(!r.timed_out, "dbgctl stop --all: no return within %d ms",
	    H_RUN_BOUND);
	cr_assert_eq(r.code, 0, "dbgctl stop --all: expected exit 0, got %d "
	    "(stderr: %s)", r.code, r.err);
	h_run_free(&r);
	left = h_marker_describe(m, report, sizeof(report));
	cr_assert_eq(left, 0, "stop --all of %d sessions returned, but "
	    "processes of them are alive: %s", N, report);
	cr_assert_eq(cgroups_left(), 0, "stop --all of %d sessions returned, "
	    "but %d cgroups of them are left in %s", N, cgroups_left(),
	    H->cgroup);
	h_contain_shutdown("after stop --all");
}

Test(contain, stop_all_of_many_sessions_leaves_nothing_cgroup)
{
	stop_all_of_many("cgroup");
}

Test(contain, stop_all_of_many_sessions_leaves_nothing_subreaper)
{
	stop_all_of_many("subreaper");
}
