/*
 * Where a keeper begins: born in its session's cgroup, started by clone3
 * with CLONE_INTO_CGROUP, so that no launch waits for the kernel to move
 * it there (a move waits for an RCU grace period: 19 ms on an idle
 * machine); and, where clone3 is refused, as in a container whose seccomp
 * filter answers ENOSYS, told to join it itself, once the daemon has said
 * so in its log. Either way the keeper and its program are in the cgroup
 * before the program runs, and a stop leaves nothing.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(contain_born, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120 * H_SLOW);

/* What the daemon logs once when clone3 is refused it, before the cause. */
#define REFUSED_LOG	"clone3 into a cgroup: "

/* Whether the keeper pid's argv holds the word --cgroup. */
static bool
told_to_join(pid_t pid)
{
	char path[64], *argv, *p;
	size_t len;
	bool yes = false;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	argv = h_read_file(path, &len);
	cr_assert_not_null(argv, "%s: %s", path, strerror(errno));
	for (p = argv; p < argv + len; p += strlen(p) + 1)
		if (strcmp(p, "--cgroup") == 0)
			yes = true;
	free(argv);
	return yes;
}

/*
 * Launch a sleep carrying a fresh marker (into m): its keeper and the
 * sleep are both in the session's cgroup; whether the keeper was told to
 * join it, asserted to be joined's value. Returns the session's id.
 */
static long
launch_contained(char *m, size_t len, bool joined)
{
	char dir[PATH_MAX];
	pid_t keeper, sleeper;
	long id;

	h_marker_new("DBGI_BORN", m, len);
	id = h_cli_launch_exec(m, H_ARGS("sleep", "307"));
	h_marker_wait(m, "sleep", 1);
	keeper = h_marker_pid(m, "dbgctl-keeper");
	sleeper = h_marker_pid(m, "sleep");
	cr_assert(keeper > 0 && sleeper > 0, "session %ld: expected its "
	    "keeper and its sleep alive, got %d and %d", id, (int)keeper,
	    (int)sleeper);
	h_contain_dir(dir, sizeof(dir), H->fg_daemon, id, 0);
	cr_assert(h_contain_holds(dir, keeper), "session %ld: its keeper %d "
	    "is not in its cgroup %s", id, (int)keeper, dir);
	cr_assert(h_contain_holds(dir, sleeper), "session %ld: its sleep %d "
	    "is not in its cgroup %s", id, (int)sleeper, dir);
	cr_assert_eq(told_to_join(keeper), joined, "session %ld: keeper %d "
	    "%s told to join its cgroup (--cgroup), expected it %s", id,
	    (int)keeper, joined ? "was not" : "was", joined ? "to be, clone3 "
	    "being refused" : "born there by clone3");
	return id;
}

/* stop returns 0, and nothing carrying the session's marker m lives. */
static void
stop_leaves_nothing(long id, const char *m)
{
	char ids[32], report[4096];
	struct h_res r;
	int left;

	h_idstr(id, ids, sizeof(ids));
	h_cli(&r, H_ARGS("stop", ids));
	cr_assert_eq(r.code, 0, "dbgctl stop %s: expected exit 0, got %d "
	    "(stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	left = h_marker_describe(m, report, sizeof(report));
	cr_assert_eq(left, 0, "dbgctl stop %s returned, but processes of "
	    "the session are alive: %s", ids, report);
}

/*
 * Skip under valgrind, which refuses the daemon's vfork-like clones: its
 * keepers start by posix_spawn and join their cgroups themselves.
 */
static void
skip_under_valgrind(void)
{
	const char *w = getenv("DBGCTLD_WRAPPER");

	if (w != NULL && strstr(w, "valgrind") != NULL)
		cr_skip_test("valgrind refuses the clone that starts a keeper "
		    "in its cgroup");
}

/* How many times text is in the daemon's log. */
static int
log_count(const char *text)
{
	char *log = h_daemon_log(), *p;
	int n = 0;

	for (p = log; (p = strstr(p, text)) != NULL; p += strlen(text))
		n++;
	free(log);
	return n;
}

/*
 * Run every daemon of this test under the noclone3 fixture (and under
 * DBGCTLD_WRAPPER's wrapper too, if there is one).
 */
static void
refuse_clone3(void)
{
	char script[PATH_MAX], inner[sizeof(H->wrapper)];
	FILE *f;

	snprintf(inner, sizeof(inner), "%s", H->wrapper[0] != '\0' ?
	    H->wrapper : H->dbgctld);
	h_ctx_path(script, sizeof(script), "dbgctld-noclone3");
	f = fopen(script, "w");
	cr_assert_not_null(f, "%s: %s", script, strerror(errno));
	fprintf(f, "#!/bin/sh\nexec %s %s \"$@\"\n",
	    h_ctx_fixture("FIX_NOCLONE3"), inner);
	cr_assert_eq(fclose(f), 0, "%s: %s", script, strerror(errno));
	cr_assert_eq(chmod(script, 0700), 0, "chmod %s: %s", script,
	    strerror(errno));
	cr_assert_lt(strlen(script), sizeof(H->wrapper), "path too long");
	strcpy(H->wrapper, script);
}

/*
 * Keepers born in their cgroups: two sessions, each keeper in its own
 * cgroup without being told to join it, nothing logged of clone3, and
 * each stop leaves nothing.
 */
Test(contain_born, keepers_are_born_in_their_cgroups)
{
	char m1[96], m2[96];
	long id1, id2;

	skip_under_valgrind();
	h_contain_daemon("cgroup");
	id1 = launch_contained(m1, sizeof(m1), false);
	id2 = launch_contained(m2, sizeof(m2), false);
	cr_assert_eq(log_count("clone3"), 0, "the daemon's log speaks of "
	    "clone3 where it works:\n%s", h_daemon_log());
	stop_leaves_nothing(id1, m1);
	stop_leaves_nothing(id2, m2);
	h_contain_shutdown("after two sessions born in their cgroups");
}

/*
 * clone3 refused (ENOSYS, as in a container): the daemon says so once,
 * and its keepers, told to join their cgroups, are there with their
 * programs; each stop leaves nothing.
 */
Test(contain_born, a_daemon_refused_clone3_has_keepers_join_their_cgroups)
{
	char m1[96], m2[96], refused[128];
	long id1, id2;

	skip_under_valgrind();
	/* The cause is ENOSYS, the errno the fixture's filter answers with. */
	snprintf(refused, sizeof(refused), "%s%s", REFUSED_LOG,
	    strerror(ENOSYS));
	refuse_clone3();
	h_contain_daemon("cgroup");
	id1 = launch_contained(m1, sizeof(m1), true);
	id2 = launch_contained(m2, sizeof(m2), true);
	cr_assert_eq(log_count(refused), 1, "expected the daemon to log "
	    "\"%s\" once, for two launches; its log:\n%s", refused,
	    h_daemon_log());
	stop_leaves_nothing(id1, m1);
	stop_leaves_nothing(id2, m2);
	h_contain_shutdown("after two sessions whose keepers joined");
}
