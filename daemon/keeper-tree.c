/* The keeper's descendants: found through /proc/PID/task/TID/children, signalled through pidfds. */
#include <sys/pidfd.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "children.h"
#include "keeper.h"

/*
 * Parse one decimal number of at most max at p, before end; return the first
 * byte after it, or NULL if there is no digit or the number exceeds max.
 */
static const char *
keeper_tree_parse_number(const char *p, const char *end,
    unsigned long long max, unsigned long long *v)
{
	const char		*first = p;
	unsigned long long	 n = 0;
	unsigned int		 d;

	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		d = *p - '0';
		if (n > (max - d) / 10)
			return NULL;
		n = n * 10 + d;
	}
	if (p == first)
		return NULL;
	*v = n;
	return p;
}

/*
 * Parse the pid, state, parent pid and start time out of the len bytes of a
 * /proc/PID/stat line.  The command name between the parentheses may hold
 * spaces, parentheses and even newlines, but no field after it holds a ')':
 * so the fields start after the last ')' of the line.
 */
int
keeper_tree_parse_stat(const char *buf, size_t len,
    struct keeper_tree_stat *st)
{
	const char		*p, *end = buf + len;
	unsigned long long	 v;
	int			 field;

	if ((p = keeper_tree_parse_number(buf, end, INT_MAX, &v)) == NULL ||
	    v == 0 || end - p < 2 || p[0] != ' ' || p[1] != '(')
		return -1;
	st->pid = (pid_t)v;
	if ((p = memrchr(p + 2, ')', end - (p + 2))) == NULL ||
	    end - p < 4 || p[1] != ' ' || p[2] == ' ' || p[2] == '\n' ||
	    p[3] != ' ')
		return -1;
	st->state = p[2];
	p += 4;
	/*
	 * Fields 5 to 21 are skipped but may be negative (tpgid is -1 without
	 * a terminal, priority and nice of some processes are below 0).  A
	 * separator must follow every field, so that a line cut short inside
	 * the start time is not read as a smaller start time.
	 */
	for (field = 4; field <= 22; field++) {
		if (field != 4 && field != 22 && p < end && *p == '-')
			p++;
		p = keeper_tree_parse_number(p, end,
		    field == 4 ? INT_MAX : ULLONG_MAX, &v);
		if (p == NULL || p == end ||
		    (*p != ' ' && (field != 22 || *p != '\n')))
			return -1;
		p++;
		if (field == 4)
			st->ppid = (pid_t)v;
	}
	st->start = v;
	return 0;
}

/*
 * Read /proc/PID/stat whole and parse it; a pid that has gone fails here
 * (ENOENT at open, ESRCH at read), as does an unreadable or odd line.
 */
static int
keeper_tree_read_stat(pid_t pid, struct keeper_tree_stat *st)
{
	char	path[64], buf[1024];
	size_t	len = 0;
	ssize_t	n = 0;
	int	fd;

	if (children_proc_path(path, sizeof path, pid, "/stat") == NULL ||
	    (fd = open(path, O_RDONLY|O_CLOEXEC)) == -1)
		return -1;
	while (len < sizeof buf) {
		n = read(fd, buf + len, sizeof buf - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (n == -1)
		return -1;
	return keeper_tree_parse_stat(buf, len, st);
}

/* A free entry at the end of the table; NULL if it is full and cannot grow. */
static struct keeper_tree_proc *
keeper_tree_slot(struct keeper_tree *t)
{
	struct keeper_tree_proc	*p;
	size_t			 cap;

	if (t->n == t->cap) {
		cap = t->cap == 0 ? 64 : t->cap * 2;
		p = reallocarray(t->procs, cap, sizeof *p);
		if (p == NULL)
			return NULL;
		t->procs = p;
		t->cap = cap;
	}
	return &t->procs[t->n++];
}

/*
 * Append one child of parent to the table, read after it was listed: if
 * its parent is another by then, the pid was reused (or it moved, and the
 * next walk finds it), and it is left out. A full table just drops it.
 */
static void
keeper_tree_add(struct keeper_tree *t, pid_t pid, pid_t parent)
{
	struct keeper_tree_stat	 st;
	struct keeper_tree_proc	*p;

	if (keeper_tree_read_stat(pid, &st) != 0 || st.ppid != parent ||
	    (p = keeper_tree_slot(t)) == NULL)
		return;
	p->pid = pid;
	p->ppid = st.ppid;
	p->start = st.start;
}

/*
 * Append the keeper's own children. Only the keeper reaps them, and it
 * does not while it signals: each pid stays theirs until then, so neither
 * their stat nor, later, a check that the pid is still the one listed is
 * read (start 0 says so). The keeper runs one thread: one list to read.
 */
static void
keeper_tree_add_own(struct keeper_tree *t)
{
	struct keeper_tree_proc	*p;
	pid_t			*kids;
	size_t			 i, n;

	kids = children_of_single(t->self, &n);
	for (i = 0; i < n && (p = keeper_tree_slot(t)) != NULL; i++) {
		p->pid = kids[i];
		p->ppid = t->self;
		p->start = 0;
	}
	free(kids);
}

/* Append to the table the children of every thread of pid. */
static void
keeper_tree_add_children(struct keeper_tree *t, pid_t pid)
{
	pid_t	*kids;
	size_t	 i, n;

	kids = children_of(pid, &n);
	for (i = 0; i < n; i++)
		keeper_tree_add(t, kids[i], pid);
	free(kids);
}

/*
 * Load the keeper's descendants into the table, parents before children:
 * the keeper is a subreaper, so every one of them is below it, and only
 * they are read, whatever else runs on the machine.
 */
static void
keeper_tree_scan(struct keeper_tree *t)
{
	size_t i;

	t->n = 0;
	keeper_tree_add_own(t);
	for (i = 0; i < t->n; i++)
		keeper_tree_add_children(t, t->procs[i].pid);
}

/*
 * Signal one process through a pidfd, sure it is the one that was scanned
 * (the keeper's own children are, until it reaps them); SIGTERM is
 * followed by SIGCONT so that a stopped process can act on it.
 */
static void
keeper_tree_signal_one(struct keeper_tree_proc *p, pid_t self, int sig)
{
	struct keeper_tree_stat	st;
	int			fd;

	if ((fd = pidfd_open(p->pid, 0)) == -1) {
		if (errno != ENOSYS)
			return;
		(void)kill(p->pid, sig);
		if (sig == SIGTERM)
			(void)kill(p->pid, SIGCONT);
		return;
	}
	if (p->ppid == self || (keeper_tree_read_stat(p->pid, &st) == 0 &&
	    st.start == p->start)) {
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
	n = t->n;
	for (i = 0; i < n; i++)
		keeper_tree_signal_one(&t->procs[i], self, sig);
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
