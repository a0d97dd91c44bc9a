/*
 * The daemon as child subreaper: a process whose keeper died (killed by
 * its own target, or from outside) is re-parented here rather than to
 * init, and is killed with its descendants and reaped by pid. Only pids
 * that are not keepers are waited for, so libuv's statuses are never
 * stolen (no waitpid(-1)).
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "children.h"
#include "daemon.h"
#include "replace.h"

/* Orphans are reaped at SIGCHLD. */
static uv_signal_t	 orphan_sigchld;

/*
 * SIGKILL pid and everything below it; false if pid may not be signalled
 * (a process of another user, say), which nothing here can end.
 */
static bool
orphan_kill_tree(pid_t pid)
{
	pid_t	*kids;
	size_t	 i, n;

	/* Stop it before listing its children, so none is born unseen. */
	if (kill(pid, SIGSTOP) != 0 && errno == EPERM)
		return false;
	kids = children_of(pid, &n);
	for (i = 0; i < n; i++)
		(void)orphan_kill_tree(kids[i]);
	free(kids);
	(void)kill(pid, SIGKILL);
	return true;
}

/*
 * Reap the daemon's children that are not keepers, killing those still
 * alive; when none is left, the processes that waited for that go on.
 */
static void
orphan_scan(void)
{
	pid_t	*kids;
	size_t	 i, n;
	unsigned left = 0;
	int	 status;

	kids = children_of(getpid(), &n);
	for (i = 0; i < n; i++) {
		/* A daemon this one is being replaced by is no orphan. */
		if (proc_keepers_has(kids[i]) || replace_child(kids[i]))
			continue;
		if (waitpid(kids[i], &status, WNOHANG) == kids[i]) {
			log_info("reaped pid %ld, left by a keeper that died",
			    (long)kids[i]);
			continue;
		}
		if (!orphan_kill_tree(kids[i])) {
			/* Waiting for it would hold every session for ever. */
			log_warn("pid %ld outlived its keeper and may not be "
			    "killed: left to run", (long)kids[i]);
			continue;
		}
		log_warn("pid %ld outlived its keeper: killing it",
		    (long)kids[i]);
		left++;
	}
	free(kids);
	dmn.orphans = left;
	if (left == 0)
		proc_orphans_gone();
}

/*
 * A child changed state: while orphans are being killed, one may have
 * died, or brought its own children here in dying. Otherwise every child
 * is a keeper, which libuv reaps: no scan, whatever their number.
 */
static void
orphan_sigchld_cb(uv_signal_t *h, int sig)
{
	(void)h;
	(void)sig;
	if (dmn.unwatched > 0)
		proc_reap_unwatched();
	if (dmn.orphans > 0)
		orphan_scan();
}

/* Become a subreaper and watch for the orphans that makes ours. */
void
orphan_init(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		log_warn("cannot become a child subreaper: %s",
		    strerror(errno));
	uv_signal_init(dmn.loop, &orphan_sigchld);
	uv_signal_start(&orphan_sigchld, orphan_sigchld_cb, SIGCHLD);
	/* It alone must not keep the daemon from exiting. */
	uv_unref((uv_handle_t *)&orphan_sigchld);
}

/* Look for orphans now: a keeper has just been seen to exit. */
void
orphan_check(void)
{
	orphan_scan();
}
