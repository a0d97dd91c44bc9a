/* Child processes, spawned and timed whole, and what /proc says of one. */
#include "bench.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/*
 * posix_spawnp argv with stdin from in_fd and stdout and stderr to
 * out_fd and err_fd (-1: /dev/null): glibc's clone(CLONE_VFORK)+exec, the
 * cheapest fork+exec, used alike for dbgctl and for every baseline.
 */
pid_t
proc_spawn(const char *const argv[], char *const envp[], int in_fd,
    int out_fd, int err_fd)
{
	posix_spawn_file_actions_t	fa;
	pid_t				pid;
	int				rv;

	posix_spawn_file_actions_init(&fa);
	if (in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, in_fd, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
		    O_RDONLY, 0);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
		    O_WRONLY, 0);
	if (err_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
		    O_WRONLY, 0);
	rv = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv,
	    envp != NULL ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	return rv == 0 ? pid : -1;
}

/*
 * Start argv with its stdin and stdout on pipes of ours, *to and *from
 * (close-on-exec here); its pid, or -1.
 */
pid_t
proc_spawn_piped(const char *const argv[], int *to, int *from)
{
	int	in[2], out[2];
	pid_t	pid;

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		abort();
	pid = proc_spawn(argv, NULL, in[0], out[1], -1);
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;
}

/*
 * Reap pid within ms milliseconds (ms < 0: however long); returns its exit
 * code, 128+signal, or -1 if it is still running.
 */
int
proc_wait(pid_t pid, double ms)
{
	double	end = stat_now_ms() + ms;
	int	st;
	pid_t	r;

	for (;;) {
		r = waitpid(pid, &st, ms < 0 ? 0 : WNOHANG);
		if (r == -1 && errno == EINTR)
			continue;
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) :
			    128 + WTERMSIG(st);
		if (r == -1 || stat_now_ms() > end)
			return -1;
		stat_sleep_ms(1);
	}
}

/* Run argv to its end, output to /dev/null; its time, or NA if it failed. */
double
proc_time_ms(const char *const argv[], char *const envp[])
{
	double	t0 = stat_now_ms(), t;
	pid_t	pid;

	if ((pid = proc_spawn(argv, envp, -1, -1, -1)) == -1)
		return NA;
	if (proc_wait(pid, -1) != 0)
		return NA;
	t = stat_now_ms() - t0;
	return t;
}

/* The value of a "Name:  N kB" line of a /proc file, or -1. */
static long
proc_file_kib(const char *path, const char *name)
{
	char	 line[256];
	size_t	 len = strlen(name);
	long	 v = -1;
	FILE	*f;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, name, len) == 0 && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* A field of /proc/PID/status in KiB, such as VmRSS; -1 if unknown. */
long
proc_status_kib(pid_t pid, const char *name)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/status", pid);
	return proc_file_kib(path, name);
}

/* A field of /proc/PID/smaps_rollup in KiB, such as Private_Dirty. */
long
proc_rollup_kib(pid_t pid, const char *name)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid);
	return proc_file_kib(path, name);
}

/*
 * Context switches, voluntary and not, of every thread of pid: each one is
 * a wake-up, whichever thread of libuv's pool it was.
 */
long
proc_ctxsw(pid_t pid)
{
	char		 path[64], sub[384];
	struct dirent	*de;
	long		 sum = 0, v;
	DIR		*d;

	snprintf(path, sizeof path, "/proc/%d/task", pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s/status", path, de->d_name);
		if ((v = proc_file_kib(sub, "voluntary_ctxt_switches")) > 0)
			sum += v;
		if ((v = proc_file_kib(sub, "nonvoluntary_ctxt_switches")) > 0)
			sum += v;
	}
	closedir(d);
	return sum;
}

/* Whether an executable of this name is on PATH (or is this path). */
int
proc_exists(const char *name)
{
	char		 path[PATH_MAX];
	const char	*p, *e;

	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0;
	for (p = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin"; *p;
	    p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		snprintf(path, sizeof path, "%.*s/%s", (int)(e - p), p, name);
		if (access(path, X_OK) == 0)
			return 1;
	}
	return 0;
}

/*
 * Write all of len bytes to fd, a child's pipe or socket, which may be
 * nonblocking; -1 if its reader is gone.
 */
int
proc_write_all(int fd, const void *data, size_t len)
{
	struct pollfd	 pfd = { .fd = fd, .events = POLLOUT };
	const char	*p = data;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1 && errno == EAGAIN) {
			(void)poll(&pfd, 1, -1);
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Wait for fd, a child's pipe, to have bytes and append what one read
 * gives to buf (*len of cap used); -1 if the child went away or buf is full.
 */
int
proc_read_more(int fd, char *buf, size_t *len, size_t cap)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLIN };
	ssize_t		n;

	for (;;) {
		if (poll(&pfd, 1, -1) == -1 && errno == EINTR)
			continue;
		n = read(fd, buf + *len, cap - *len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		*len += (size_t)n;
		return 0;
	}
}
