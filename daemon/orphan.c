/*
 * The daemon as child subreaper: a process whose keeper died (killed by
 * its own target, or from outside) is re-parented here rather than to
 * init, and is killed with its descendants and reaped by pid. Only pids
 * that are not keepers are waited for, so libuv's statuses are never
 * stolen (no waitpid(-1)).
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* The most pids one children listing is read for. */
#define ORPHAN_MAX 4096

/* Append the children of pid's threads to pids; return the new count. */
static size_t
orphan_children(pid_t pid, pid_t *pids, size_t n, size_t max)
{
	char		 path[320], buf[8192], *p, *end;
	struct dirent	*e;
	DIR		*d;
	ssize_t		 len;
	long		 c;
	int		 fd;

	snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
	if ((d = opendir(path)) == NULL)
		return n;
	while ((e = readdir(d)) != NULL && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%ld/task/%s/children",
		    (long)pid, e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (p = buf; n < max && (c = strtol(p, &end, 10)) > 0; p = end)
			pids[n++] = (pid_t)c;
	}
	closedir(d);
	return n;
}

/* SIGKILL pid and everything below it, the deepest first known last. */
static void
orphan_kill_tree(pid_t pid)
{
	pid_t	*tree = xreallocarray(NULL, ORPHAN_MAX, sizeof *tree);
	size_t	 i, n = 1;

	tree[0] = pid;
	/* Stop each before listing its children, so none is born unseen. */
	for (i = 0; i < n; i++) {
		(void)kill(tree[i], SIGSTOP);
		n = orphan_children(tree[i], tree, n, ORPHAN_MAX);
	}
	for (i = 0; i < n; i++)
		(void)kill(tree[i], SIGKILL);
	free(tree);
}

/*
 * Reap the daemon's children that are not keepers, killing those still
 * alive; when none is left, the processes that waited for that go on.
 */
static void
orphan_scan(void)
{
	pid_t	*kids = xreallocarray(NULL, ORPHAN_MAX, sizeof *kids);
	size_t	 i, n;
	unsigned left = 0;
	int	 status;

	n = orphan_children(getpid(), kids, 0, ORPHAN_MAX);
	for (i = 0; i < n; i++) {
		if (proc_is_keeper(kids[i]))
			continue;
		if (waitpid(kids[i], &status, WNOHANG) == kids[i]) {
			log_info("reaped pid %ld, left by a keeper that died",
			    (long)kids[i]);
			continue;
		}
		log_warn("pid %ld outlived its keeper: killing it",
		    (long)kids[i]);
		orphan_kill_tree(kids[i]);
		left++;
	}
	free(kids);
	dmn.orphans = left;
	if (left == 0)
		proc_orphans_gone();
}

/* A child changed state: an orphan may have come, or died. */
static void
orphan_sigchld_cb(uv_signal_t *h, int sig)
{
	(void)h;
	(void)sig;
	orphan_scan();
}

/* Become a subreaper and watch for the orphans that makes ours. */
void
orphan_init(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		log_warn("cannot become a child subreaper: %s",
		    strerror(errno));
	uv_signal_init(dmn.loop, &dmn.sigchld);
	uv_signal_start(&dmn.sigchld, orphan_sigchld_cb, SIGCHLD);
	/* It alone must not keep the daemon from exiting. */
	uv_unref((uv_handle_t *)&dmn.sigchld);
}

/* Look for orphans now: a keeper has just been seen to exit. */
void
orphan_check(void)
{
	orphan_scan();
}
