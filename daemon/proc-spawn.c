/*
 * Starting a keeper process: its argv around the program's, its
 * descriptors at their numbers, and the spawn itself, which copies neither
 * the daemon nor any descriptor it should not.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon.h"
#include "argv.h"
#include "cgroup.h"
#include "proc.h"

/* Build the keeper's own argv around the process's. */
static char **
proc_spawn_argv(const struct proc_spec *sp, const char *keeper,
    const struct cgroup *cg)
{
	struct argv	 av = { 0 };
	char	       **p;
	int		 i;

	argv_push(&av, keeper);
	argv_push(&av, "--cwd");
	argv_push(&av, sp->cwd);
	argv_push(&av, "--stop-timeout");
	argv_pushf(&av, "%ld", sp->stop_timeout);
	/* Then the window a graceful stop has to end. */
	if (sp->hangup) {
		argv_push(&av, "--hangup");
		argv_pushf(&av, "%ld", sp->stop_timeout > 0 ?
		    sp->stop_timeout : 1);
	}
	if (cg != NULL) {
		argv_push(&av, "--cgroup");
		argv_push(&av, cgroup_path(cg));
	}
	if (dmn.nofile_orig != 0 && dmn.nofile_orig < dmn.nofile) {
		argv_push(&av, "--nofile");
		argv_pushf(&av, "%lu", dmn.nofile_orig);
	}
	/* A keeper adoptable by the next daemon waits for it this long. */
	if (sp->adopt != NULL && dmn.adopt_grace_ms > 0) {
		argv_push(&av, "--adopt");
		argv_push(&av, sp->adopt);
		argv_push(&av, "--grace");
		argv_pushf(&av, "%lld", dmn.adopt_grace_ms);
	}
	if (sp->fd_in != -1) {
		argv_push(&av, sp->stdio ? "--stdin-fd" : "--keep-fd");
		argv_pushf(&av, "%d", PROC_FD_IN);
		argv_push(&av, sp->stdio ? "--stdout-fd" : "--keep-fd");
		argv_pushf(&av, "%d", PROC_FD_OUT);
	}
	if (sp->fd_listen != -1) {
		argv_push(&av, "--keep-fd");
		argv_pushf(&av, "%d", PROC_FD_LISTEN);
	}
	if (sp->fd_semihost != -1) {
		argv_push(&av, "--stdin-fd");
		argv_pushf(&av, "%d", PROC_FD_SEMIHOST);
		argv_push(&av, "--stdout-fd");
		argv_pushf(&av, "%d", PROC_FD_SEMIHOST_OUT);
	}
	for (i = 0; sp->fd_extra != NULL && i < PROC_EXTRA_FDS; i++) {
		if (sp->fd_extra[i] == -1)
			continue;
		argv_push(&av, "--keep-fd");
		argv_pushf(&av, "%d", PROC_FD_EXTRA + i);
	}
	argv_push(&av, "--");
	for (p = sp->argv; *p != NULL; p++)
		argv_push(&av, *p);
	return av.v;
}

/*
 * A copy of fd at SPAWN_FD_MIN or above, so that no dup2 of the spawn's
 * file actions lands on a descriptor another one still reads from; -1
 * with errno.
 */
static int
proc_spawn_high_fd(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, SPAWN_FD_MIN);
}

/*
 * The keeper's descriptors, each at its number: the pty's slave on 0, 1
 * and 2, its control socket on 3, the transport on 4 and 5, a server's
 * listening socket on 6, QEMU's standard input and output to be (with
 * semihosting) on 7 and 8, its kind's own from 9; how many.
 */
static int
proc_spawn_fds(const struct proc_spec *sp, int ctl, int src[SPAWN_SLOTS],
    int target[SPAWN_SLOTS])
{
	int	n = 0, i;

	for (i = 0; i < 3; i++) {
		src[n] = sp->tty;
		target[n++] = i;
	}
	src[n] = ctl;
	target[n++] = 3;
	if (sp->fd_in != -1) {
		src[n] = sp->fd_in;
		target[n++] = PROC_FD_IN;
		src[n] = sp->fd_out;
		target[n++] = PROC_FD_OUT;
	}
	if (sp->fd_listen != -1) {
		src[n] = sp->fd_listen;
		target[n++] = PROC_FD_LISTEN;
	}
	if (sp->fd_semihost != -1) {
		src[n] = sp->fd_semihost;
		target[n++] = PROC_FD_SEMIHOST;
		src[n] = sp->fd_semihost_out;
		target[n++] = PROC_FD_SEMIHOST_OUT;
	}
	for (i = 0; sp->fd_extra != NULL && i < PROC_EXTRA_FDS; i++) {
		if (sp->fd_extra[i] == -1)
			continue;
		src[n] = sp->fd_extra[i];
		target[n++] = PROC_FD_EXTRA + i;
	}
	return n;
}

/*
 * Start the keeper with proc_spawn_fds' descriptors, signals back to
 * their defaults and none blocked: by spawn_keeper, which copies neither
 * the daemon nor its descriptors, else by posix_spawn, which copies the
 * descriptors only (glibc uses a vfork-like clone); its pid, or -1 with
 * errno. With cgfd other than -1, only by spawn_keeper, in that cgroup:
 * 0 if it cannot be.
 */
static pid_t
proc_spawn_exec(const struct proc_spec *sp, char **kav, int ctl, int cgfd)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	sigset_t			 all, none;
	int				 src[SPAWN_SLOTS], target[SPAWN_SLOTS];
	int				 high[SPAWN_SLOTS];
	int				 i, n, rc = 0;
	pid_t				 pid = -1;

	n = proc_spawn_fds(sp, ctl, src, target);
	/* The way that copies no descriptor table, where the kernel has it. */
	if ((pid = spawn_keeper(kav[0], kav, sp->env, src, target, n,
	    cgfd)) != 0 || cgfd != -1)
		return pid;
	pid = -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	for (i = 0; i < n; i++)
		if ((high[i] = proc_spawn_high_fd(src[i])) == -1)
			rc = errno;
	if (rc == 0) {
		for (i = 0; i < n; i++)
			posix_spawn_file_actions_adddup2(&fa, high[i],
			    target[i]);
		/* The daemon ignores SIGPIPE and SIGHUP; the keeper must not. */
		sigfillset(&all);
		sigemptyset(&none);
		posix_spawnattr_setsigdefault(&attr, &all);
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF |
		    POSIX_SPAWN_SETSIGMASK);
		rc = posix_spawn(&pid, kav[0], &fa, &attr, kav, sp->env);
	}
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	for (i = 0; i < n; i++)
		if (high[i] != -1)
			close(high[i]);
	errno = rc;
	return rc == 0 ? pid : -1;
}

/*
 * Start the keeper, its tree in cg unless that is NULL, to run sp->argv;
 * its pid, or -1 with errno. It is born in cg where the kernel can do
 * that; elsewhere it is told to join cg before it forks.
 */
pid_t
proc_spawn_keeper(const struct proc_spec *sp, const char *keeper,
    const struct cgroup *cg, int ctl)
{
	char	**kav;
	pid_t	  pid = 0;
	int	  saved, cgfd;

	if (cg != NULL && (cgfd = cgroup_fd(cg)) != -1) {
		kav = proc_spawn_argv(sp, keeper, NULL);
		pid = proc_spawn_exec(sp, kav, ctl, cgfd);
		saved = errno;
		argv_free(kav);
		close(cgfd);
		errno = saved;
	}
	if (pid != 0)
		return pid;
	kav = proc_spawn_argv(sp, keeper, cg);
	pid = proc_spawn_exec(sp, kav, ctl, -1);
	saved = errno;
	argv_free(kav);
	errno = saved;
	return pid;
}
