/*
 * The floors of launch and stop --all, measured rather than argued: the
 * work a session's start and end cannot do without, done by hand with
 * the project's own keeper and no daemon or client. A keeper here gets
 * what the daemon gives it (a pty for 0-2, a socket on 3, a cgroup of its
 * own made beside the bench's, which it is born in where clone3 can do
 * that, as the daemon's keepers are) and is read until it ends; its
 * cgroup is then removed. The daemon's side (its socket, logs, table,
 * replies) and the client's process are what a row's dbgctl figure has
 * beyond this.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/sched.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

/* The directory under which the keepers' cgroups are made ("" if none). */
static char	keeper_cg_parent[PATH_MAX];

/* The cgroup2 mount point from mountinfo into out; -1 if there is none. */
static int
keeper_cg_mount(char *out, size_t len)
{
	char	 line[1024], *p, *mnt, *dash;
	FILE	*f = fopen("/proc/self/mountinfo", "re");
	int	 rv = -1;

	if (f == NULL)
		return -1;
	while (rv == -1 && fgets(line, sizeof line, f) != NULL) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE ... */
		if ((dash = strstr(line, " - cgroup2 ")) == NULL)
			continue;
		*dash = '\0';
		p = line;
		for (int i = 0; i < 4 && p != NULL; i++)
			p = strchr(p + 1, ' ');
		if (p == NULL)
			continue;
		mnt = p + 1;
		if ((p = strchr(mnt, ' ')) != NULL)
			*p = '\0';
		rv = snprintf(out, len, "%s", mnt) < (int)len ? 0 : -1;
	}
	fclose(f);
	return rv;
}

/*
 * Make a cgroup of the bench's own, beside the one it runs in, for the
 * keepers' cgroups; 0, or -1 where cgroup2 is not there to write.
 */
static int
keeper_cg_init(void)
{
	char	 mnt[PATH_MAX], line[PATH_MAX], *self = NULL;
	FILE	*f;

	if (keeper_cg_parent[0] != '\0')
		return 0;
	if (keeper_cg_mount(mnt, sizeof mnt) == -1 ||
	    (f = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			self = line + 3;
			break;
		}
	fclose(f);
	if (self == NULL)
		return -1;
	/* The bench's own cgroup may hold processes: its parent's child. */
	snprintf(keeper_cg_parent, sizeof keeper_cg_parent, "%s%s",
	    mnt, strcmp(self, "/") == 0 ? "" : dirname(self));
	if (strlen(keeper_cg_parent) + 32 >= sizeof keeper_cg_parent)
		return keeper_cg_parent[0] = '\0', -1;
	snprintf(keeper_cg_parent + strlen(keeper_cg_parent), 32,
	    "/dbgctl-bench-%d", (int)getpid());
	if (mkdir(keeper_cg_parent, 0755) == -1 && errno != EEXIST) {
		keeper_cg_parent[0] = '\0';
		return -1;
	}
	return 0;
}

/* Remove the bench's cgroup, made by keeper_cg_init, if it was. */
void
keeper_cg_done(void)
{
	if (keeper_cg_parent[0] != '\0')
		(void)rmdir(keeper_cg_parent);
	keeper_cg_parent[0] = '\0';
}

/* Make cgroup n of the bench's own, its path at out; -1 if it cannot be. */
int
keeper_cg_new(int n, char *out, size_t len)
{
	if (keeper_cg_init() == -1)
		return -1;
	if ((size_t)snprintf(out, len, "%s/%d", keeper_cg_parent, n) >= len)
		return -1;
	return mkdir(out, 0755);
}

/* The keeper beside the daemon: dirname(dbgctld)/dbgctl-keeper. */
static void
keeper_path(const struct bench *b, char *out, size_t len)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof dir, "%s", b->dbgctld);
	snprintf(out, len, "%s/dbgctl-keeper", dirname(dir));
}

/*
 * Start the keeper born in cgroup dir, its pty's slave on 0-2 and sock on
 * 3, by clone3 as a fork the bench waits for until exec: its pid, or -1
 * where clone3 cannot do that (the keeper is then told to join it).
 */
static pid_t
keeper_clone_into(const char *path, const char *const av[], const char *dir,
    int pts, int sock)
{
	struct clone_args	ca;
	long			pid;
	int			cgfd;

	if ((cgfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_VFORK | CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (unsigned)cgfd;
	pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0) {
		if (dup2(pts, 0) == -1 || dup2(pts, 1) == -1 ||
		    dup2(pts, 2) == -1 || dup2(sock, 3) == -1)
			_exit(127);
		execve(path, (char *const *)av, environ);
		_exit(127);
	}
	close(cgfd);
	return pid > 0 ? (pid_t)pid : -1;
}

/*
 * Start the keeper on argv in a new cgroup n, as the daemon does (its
 * pty's slave on 0-2, a socket on 3); 0, or -1 with everything undone.
 */
int
keeper_start(const struct bench *b, struct keeper_run *k, int n,
    const char *const argv[])
{
	posix_spawn_file_actions_t	 fa;
	const char			*av[16];
	char				 path[PATH_MAX];
	int				 sv[2], pts, i = 0, rv;

	k->pid = 0;
	if (keeper_cg_new(n, k->cg, sizeof k->cg) == -1)
		return -1;
	keeper_path(b, path, sizeof path);
	if (openpty(&k->ptm, &pts, NULL, NULL, NULL) == -1) {
		rmdir(k->cg);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1) {
		close(k->ptm);
		close(pts);
		rmdir(k->cg);
		return -1;
	}
	fcntl(k->ptm, F_SETFD, FD_CLOEXEC);
	av[i++] = path;
	av[i++] = "--";
	while (*argv != NULL && i < 13)
		av[i++] = *argv++;
	av[i] = NULL;
	if ((k->pid = keeper_clone_into(path, av, k->cg, pts, sv[1])) > 0) {
		close(pts);
		close(sv[1]);
		k->sock = sv[0];
		return 0;
	}
	k->pid = 0;
	/* Where clone3 cannot, the keeper joins its cgroup itself. */
	memmove(av + 3, av + 1, (size_t)i * sizeof *av);
	av[1] = "--cgroup";
	av[2] = k->cg;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pts, 0);
	posix_spawn_file_actions_adddup2(&fa, pts, 1);
	posix_spawn_file_actions_adddup2(&fa, pts, 2);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
	rv = posix_spawn(&k->pid, path, &fa, NULL, (char *const *)av,
	    environ);
	if (rv != 0)
		k->pid = 0;
	posix_spawn_file_actions_destroy(&fa);
	close(pts);
	close(sv[1]);
	k->sock = sv[0];
	if (rv != 0) {
		keeper_finish(k);
		return -1;
	}
	return 0;
}

/* Wait for the keeper's first report ("started PID"); -1 if it failed. */
int
keeper_started(struct keeper_run *k)
{
	char	buf[64];
	ssize_t	n;

	do
		n = read(k->sock, buf, sizeof buf - 1);
	while (n == -1 && errno == EINTR);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strncmp(buf, "started ", 8) == 0 ? 0 : -1;
}

/* Tell the keeper to stop its program (SIGTERM, SIGKILL after 5 s). */
int
keeper_stop(struct keeper_run *k)
{
	return proc_write_all(k->sock, "stop 5000\n", 10);
}

/*
 * Read the keeper's reports until it ends, reap it, close its pty and
 * socket and remove its cgroup, as the daemon does at a session's end.
 */
int
keeper_finish(struct keeper_run *k)
{
	char	buf[512];
	ssize_t	n;
	int	rv = 0;

	while ((n = read(k->sock, buf, sizeof buf)) > 0 ||
	    (n == -1 && errno == EINTR))
		continue;
	if (k->pid > 0 && proc_wait(k->pid, -1) == -1)
		rv = -1;
	k->pid = 0;
	close(k->sock);
	close(k->ptm);
	if (rmdir(k->cg) == -1)
		rv = -1;
	return rv;
}
