/*
 * One process seen through /proc/PID: its stat fields (one parser), name,
 * executable, status fields (signal masks, resident memory) and open fds;
 * the scan of /proc that the zombie, marker and snapshot checks filter; and
 * processes tracked by pid and start time, to check afterwards that they
 * are gone.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parse /proc/PID/stat into st. False if the pid is gone. */
bool
h_pid_stat(pid_t pid, struct h_pid_stat *st)
{
	char path[64], buf[2048], *p;
	unsigned long long v;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* The comm in parentheses may hold anything: the last ')' ends it. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] == '\0')
		return false;
	p += 2;
	st->state = *p;
	p += 2;
	st->ppid = (pid_t)strtol(p, &p, 10);
	/* Fields 5..22 come next: 6 is the session, 22 the start time. */
	for (i = 5; i <= 22; i++) {
		v = strtoull(p, &p, 10);
		if (i == 6)
			st->sid = (pid_t)v;
		if (i == 22)
			st->start = v;
	}
	return true;
}

/* Session id from /proc/PID/stat, -1 if gone. */
pid_t
h_pid_sid(pid_t pid)
{
	struct h_pid_stat st;

	return h_pid_stat(pid, &st) ? st.sid : -1;
}

/* State letter from /proc/PID/stat ('R','S','Z',...), 0 if the pid is gone. */
char
h_pid_state(pid_t pid)
{
	struct h_pid_stat st;

	return h_pid_stat(pid, &st) ? st.state : 0;
}

/* Parent pid from /proc/PID/stat, -1 if gone. */
pid_t
h_pid_ppid(pid_t pid)
{
	struct h_pid_stat st;

	return h_pid_stat(pid, &st) ? st.ppid : -1;
}

/* Start time (clock ticks since boot) from /proc/PID/stat, 0 if gone. */
unsigned long long
h_pid_start(pid_t pid)
{
	struct h_pid_stat st;

	return h_pid_stat(pid, &st) ? st.start : 0;
}

/* comm of a pid into buf ("?" if gone). */
void
h_pid_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* Assert that the comm of pid is name; what names the pid in messages. */
void
h_pid_expect_comm(pid_t pid, const char *what, const char *name)
{
	char comm[64];

	h_pid_comm(pid, comm, sizeof(comm));
	cr_assert_str_eq(comm, name, "%s pid %d: expected %s, got %s", what,
	    pid, name, comm);
}

/* The exe link of a pid into buf ("" if gone); returns its last component. */
const char *
h_pid_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
	base = strrchr(buf, '/');
	return base != NULL ? base + 1 : buf;
}

/* True if kill(pid, 0) fails with ESRCH. */
bool
h_pid_gone(pid_t pid)
{
	return kill(pid, 0) == -1 && errno == ESRCH;
}

/*
 * The value of a field of /proc/PID/status ("VmRSS", "SigIgn") into buf,
 * without the blanks before it; false if the pid is gone or has no such
 * field.
 */
bool
h_pid_status(pid_t pid, const char *field, char *buf, size_t len)
{
	char path[64], key[32], *s, *l;
	bool found;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	snprintf(key, sizeof(key), "\n%s:", field);
	s = h_read_file(path, NULL);
	if (s == NULL)
		return false;
	l = strstr(s, key);
	found = l != NULL;
	if (found) {
		l += strlen(key);
		l += strspn(l, " \t");
		snprintf(buf, len, "%.*s", (int)strcspn(l, "\n"), l);
	}
	free(s);
	return found;
}

/* Resident memory of a pid in KiB (VmRSS of /proc/PID/status), -1 if gone. */
long
h_pid_rss_kib(pid_t pid)
{
	char v[64];

	return h_pid_status(pid, "VmRSS", v, sizeof(v)) ?
	    strtol(v, NULL, 10) : -1;
}

/* Arguments of a wait on a signal mask in /proc/PID/status. */
struct h_pid_sigmask_arg {
	pid_t		 pid;
	const char	*field;
	int		 sig;
};

/* Predicate: the mask line "FIELD:" of /proc/PID/status holds sig. */
static bool
h_pid_sigmask_has(void *arg)
{
	struct h_pid_sigmask_arg *a = arg;
	unsigned long long mask;
	char v[64];

	if (!h_pid_status(a->pid, a->field, v, sizeof(v)))
		return false;
	mask = strtoull(v, NULL, 16);
	return (mask & (1ULL << (a->sig - 1))) != 0;
}

/* Wait until /proc/PID/status's field ("SigIgn", "SigCgt") holds sig. */
bool
h_pid_wait_sigmask(pid_t pid, const char *field, int sig, int bound_ms)
{
	struct h_pid_sigmask_arg a = { pid, field, sig };

	return h_wait_for(h_pid_sigmask_has, &a, bound_ms);
}

/* The pids in /proc but ours that keep(pid, arg) accepts, at most max. */
int
h_pid_scan(bool (*keep)(pid_t, void *), void *arg, pid_t *out, int max)
{
	struct dirent *de;
	pid_t pid, self = getpid();
	char *end;
	DIR *d;
	int n = 0;

	d = opendir("/proc");
	if (d == NULL)
		return 0;
	while (n < max && (de = readdir(d)) != NULL) {
		pid = (pid_t)strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == self)
			continue;
		if (keep(pid, arg))
			out[n++] = pid;
	}
	closedir(d);
	return n;
}

/* Append "why pid N (comm) state S ppid P" to report, "; "-separated. */
void
h_pid_describe(char *report, size_t len, const char *why, pid_t pid)
{
	struct h_pid_stat st = { 0 };
	char comm[64];
	size_t o = strlen(report);

	h_pid_comm(pid, comm, sizeof(comm));
	if (!h_pid_stat(pid, &st))
		st.ppid = -1;
	if (o < len)
		snprintf(report + o, len - o, "%s%s pid %d (%s) state %c "
		    "ppid %d", o ? "; " : "", why, pid, comm,
		    st.state ? st.state : '-', st.ppid);
}

/* A zombie scan's filter of (pid, ppid), with its argument. */
struct h_pid_zombie_filter {
	bool	(*of)(pid_t, pid_t, void *);
	void	*arg;
};

/* Scan filter: pid is a zombie that the filter's of() accepts. */
static bool
h_pid_zombie_keep(pid_t pid, void *arg)
{
	struct h_pid_zombie_filter *z = arg;
	struct h_pid_stat st;

	return h_pid_stat(pid, &st) && st.state == 'Z' &&
	    z->of(pid, st.ppid, z->arg);
}

/*
 * Zombies for which of(pid, ppid, arg) is true, appended to report after
 * why; returns how many.
 */
int
h_pid_zombies_if(bool (*of)(pid_t, pid_t, void *), void *arg,
    const char *why, char *report, size_t len)
{
	struct h_pid_zombie_filter z = { of, arg };
	pid_t p[H_MAXPIDS];
	int i, n;

	n = h_pid_scan(h_pid_zombie_keep, &z, p, H_MAXPIDS);
	for (i = 0; i < n; i++)
		h_pid_describe(report, len, why, p[i]);
	return n;
}

/* Zombie filter: the parent is *(pid_t *)arg. */
static bool
h_pid_child_of(pid_t pid, pid_t ppid, void *arg)
{
	(void)pid;
	return ppid == *(pid_t *)arg;
}

/* Zombies whose parent is ppid, described in report; returns how many. */
int
h_pid_zombies(pid_t ppid, char *report, size_t len)
{
	report[0] = '\0';
	return h_pid_zombies_if(h_pid_child_of, &ppid, "zombie", report, len);
}

/* Open fds of a pid, sorted: numbers into fds, link targets (or NULL). */
int
h_pid_fds(pid_t pid, int *fds, char (*targets)[PATH_MAX], int max)
{
	struct dirent *de;
	char path[64], link[PATH_MAX + 64], *end;
	ssize_t l;
	DIR *d;
	int n = 0, fd, i, j, t;
	char tt[PATH_MAX];

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && n < max) {
		fd = (int)strtol(de->d_name, &end, 10);
		if (*end != '\0' || de->d_name[0] == '\0' ||
		    de->d_name[0] == '.')
			continue;
		fds[n] = fd;
		if (targets != NULL) {
			snprintf(link, sizeof(link), "%s/%d", path, fd);
			l = readlink(link, targets[n], PATH_MAX - 1);
			targets[n][l > 0 ? l : 0] = '\0';
		}
		n++;
	}
	closedir(d);
	/* Sort by fd number so callers can compare lists. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
			if (targets != NULL) {
				memcpy(tt, targets[j], PATH_MAX);
				memcpy(targets[j], targets[j - 1], PATH_MAX);
				memcpy(targets[j - 1], tt, PATH_MAX);
			}
		}
	return n;
}

/*
 * The open fds of a pid as "N target" entries, "; "-separated, into buf,
 * for messages; returns how many there are, -1 if the pid is gone.
 */
int
h_pid_fds_text(pid_t pid, char *buf, size_t len)
{
	char (*target)[PATH_MAX] = calloc(H_MAXFDS, PATH_MAX);
	int fds[H_MAXFDS], n, i;
	size_t o = 0;

	buf[0] = '\0';
	n = h_pid_fds(pid, fds, target, H_MAXFDS);
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d %s", i ? "; " : "",
		    fds[i], target[i]);
	free(target);
	return n;
}

/* Record a process to check afterwards; asserts it is alive now. */
void
h_pid_track(struct h_tracked *t, const char *what, pid_t pid)
{
	cr_assert_gt(pid, 0, "status: expected a %s pid, got %d", what, pid);
	t->what = what;
	t->pid = pid;
	t->start = h_pid_start(pid);
	cr_assert(t->start != 0 && !h_pid_gone(pid), "%s pid %d is not alive",
	    what, pid);
}

/* Whether a tracked process still exists (alive or an unreaped zombie). */
static bool
h_pid_still_there(const struct h_tracked *t)
{
	return !h_pid_gone(t->pid) && h_pid_start(t->pid) == t->start;
}

/* Predicate: none of a NULL-what-terminated list of processes exists. */
bool
h_pid_tracked_gone(void *arg)
{
	const struct h_tracked *t = arg;

	for (; t->what != NULL; t++)
		if (h_pid_still_there(t))
			return false;
	return true;
}

/* Describe the tracked processes that still exist into buf. */
const char *
h_pid_tracked_left(const struct h_tracked *t, char *buf, size_t len)
{
	char comm[64];
	size_t o = 0;

	buf[0] = '\0';
	for (; t->what != NULL && o < len; t++) {
		if (!h_pid_still_there(t))
			continue;
		h_pid_comm(t->pid, comm, sizeof(comm));
		o += (size_t)snprintf(buf + o, len - o, "%s%s pid %d (%s, "
		    "state %c)", o ? "; " : "", t->what, t->pid, comm,
		    h_pid_state(t->pid) ? h_pid_state(t->pid) : '-');
	}
	return buf;
}

/*
 * Predicate for h_wait_for: the environment of the process at arg (a
 * pid_t *) is readable and names DBGCTL_SESSION, so it has exec'd.
 */
bool
h_pid_environ_read(void *arg)
{
	char path[64], *env;
	size_t len;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/environ", *(pid_t *)arg);
	if ((env = h_read_file(path, &len)) == NULL)
		return false;
	ok = h_count(env, len, "DBGCTL_SESSION=") > 0;
	free(env);
	return ok;
}
