/* The keeper's descendants: found through /proc, signalled through pidfds. */
#include <sys/pidfd.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"

/* Read the parent pid and the start time of pid from /proc/PID/stat. */
int
keeper_tree_read_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char			 path[64], buf[1024], *p, *end;
	unsigned long long	 v = 0;
	ssize_t			 n;
	int			 fd, field;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == '\0')
		return -1;
	p += 3;				/* past ") " and the state */
	for (field = 4; field <= 22; field++) {
		v = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		if (field == 4)
			*ppid = (pid_t)v;
		p = end;
	}
	*start = v;
	return 0;
}

/* Append one process to the table; a full table just drops it. */
static void
keeper_tree_add(struct keeper_tree *t, pid_t pid)
{
	struct keeper_tree_proc	*p;
	size_t			 cap;

	if (t->n == t->cap) {
		cap = t->cap == 0 ? 256 : t->cap * 2;
		p = reallocarray(t->procs, cap, sizeof *p);
		if (p == NULL)
			return;
		t->procs = p;
		t->cap = cap;
	}
	p = &t->procs[t->n];
	p->pid = pid;
	p->desc = 0;
	if (keeper_tree_read_stat(pid, &p->ppid, &p->start) == 0)
		t->n++;
}

/* Compare two process entries by pid, for qsort and bsearch. */
static int
keeper_tree_cmp_pid(const void *a, const void *b)
{
	const struct keeper_tree_proc	*pa = a, *pb = b;

	return (pa->pid > pb->pid) - (pa->pid < pb->pid);
}

/* Load every process of the system into the table, sorted by pid. */
static void
keeper_tree_scan(struct keeper_tree *t)
{
	struct dirent	*de;
	const char	*errstr;
	DIR		*d;
	pid_t		 pid;

	t->n = 0;
	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		pid = (pid_t)strtonum(de->d_name, 1, INT_MAX, &errstr);
		if (errstr == NULL && pid != t->self)
			keeper_tree_add(t, pid);
	}
	closedir(d);
	qsort(t->procs, t->n, sizeof *t->procs, keeper_tree_cmp_pid);
}

/* Return the table entry of pid, or NULL. */
static struct keeper_tree_proc *
keeper_tree_find(struct keeper_tree *t, pid_t pid)
{
	struct keeper_tree_proc	key;

	memset(&key, 0, sizeof key);
	key.pid = pid;
	return bsearch(&key, t->procs, t->n, sizeof *t->procs,
	    keeper_tree_cmp_pid);
}

/* Mark every entry whose ancestry leads to the keeper; return how many. */
static size_t
keeper_tree_mark_descendants(struct keeper_tree *t)
{
	struct keeper_tree_proc	*p, *parent;
	size_t			 i, n = 0;
	int			 changed;

	do {
		changed = 0;
		for (i = 0; i < t->n; i++) {
			p = &t->procs[i];
			if (p->desc)
				continue;
			parent = keeper_tree_find(t, p->ppid);
			if (p->ppid != t->self && (parent == NULL ||
			    !parent->desc))
				continue;
			p->desc = 1;
			changed = 1;
			n++;
		}
	} while (changed);
	return n;
}

/*
 * Signal one process through a pidfd, sure it is the one that was scanned;
 * SIGTERM is followed by SIGCONT so that a stopped process can act on it.
 */
static void
keeper_tree_signal_one(struct keeper_tree_proc *p, int sig)
{
	unsigned long long	start;
	pid_t			ppid;
	int			fd;

	if ((fd = pidfd_open(p->pid, 0)) == -1) {
		if (errno != ENOSYS)
			return;
		(void)kill(p->pid, sig);
		if (sig == SIGTERM)
			(void)kill(p->pid, SIGCONT);
		return;
	}
	if (keeper_tree_read_stat(p->pid, &ppid, &start) == 0 &&
	    start == p->start) {
		(void)pidfd_send_signal(fd, sig, NULL, 0);
		if (sig == SIGTERM)
			(void)pidfd_send_signal(fd, SIGCONT, NULL, 0);
	}
	close(fd);
}

/* Send sig to every live descendant of self; return how many there were. */
size_t
keeper_tree_signal(struct keeper_tree *t, pid_t self, int sig)
{
	size_t	i, n;

	t->self = self;
	keeper_tree_scan(t);
	n = keeper_tree_mark_descendants(t);
	for (i = 0; i < t->n; i++) {
		if (t->procs[i].desc)
			keeper_tree_signal_one(&t->procs[i], sig);
	}
	return n;
}

/* Release the table. */
void
keeper_tree_free(struct keeper_tree *t)
{
	free(t->procs);
	t->procs = NULL;
	t->n = t->cap = 0;
}
