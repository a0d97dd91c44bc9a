/* The keeper's child between fork and exec, and the fd helpers it shares. */
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"

/* Sort a short array of fds in place. */
void
keeper_child_sort_fds(int *v, size_t n)
{
	size_t	i, j;
	int	fd;

	for (i = 1; i < n; i++) {
		fd = v[i];
		for (j = i; j > 0 && v[j - 1] > fd; j--)
			v[j] = v[j - 1];
		v[j] = fd;
	}
}

/* Close every fd from lo to hi inclusive. */
static void
keeper_child_close_range(int lo, int hi)
{
	int	fd;

	if (close_range(lo, hi, 0) == 0)
		return;
	for (fd = lo; fd <= hi; fd++)
		close(fd);
}

/* Close every fd from "from" up except the sorted fds in keep. */
void
keeper_child_close_except(const int *keep, size_t n, int from)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (keep[i] > from)
			keeper_child_close_range(from, keep[i] - 1);
		if (keep[i] >= from)
			from = keep[i] + 1;
	}
	closefrom(from);
}

/* In the child: report why it could not exec and exit. */
static __dead void
keeper_child_fail(int errfd, enum keeper_child_stage stage)
{
	struct keeper_child_err	e;

	e.stage = stage;
	e.error = errno;
	(void)!write(errfd, &e, sizeof e);
	_exit(127);
}

/*
 * In the child: restore default dispositions and an empty signal mask.  glibc
 * refuses to touch its own real-time signals (32, 33), which may have been
 * inherited ignored, so those go straight to the kernel: an all-zero kernel
 * sigaction is SIG_DFL with no flags and an empty mask on every arch.
 */
static void
keeper_child_reset_signals(void)
{
	struct sigaction	sa;
	unsigned long		ksa[8];
	sigset_t		set;
	int			sig;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	memset(ksa, 0, sizeof ksa);
	for (sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, &sa, NULL) == 0 || errno != EINVAL)
			continue;
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)syscall(SYS_rt_sigaction, sig, ksa, NULL,
			    (NSIG - 1) / 8);
	}
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
}

/*
 * In the child: close every fd but 0-2, the kept ones and the error pipe.
 * The kept fds lose close-on-exec to reach the program; the error pipe keeps
 * it, so that the exec itself tells the keeper it succeeded.
 */
static int
keeper_child_limit_fds(struct keeper *k, int errfd)
{
	int	keep[KEEPER_MAX_KEEP + 1];
	size_t	i;

	for (i = 0; i < k->nkeep; i++) {
		if (fcntl(k->keep[i], F_SETFD, 0) == -1)
			return -1;
		keep[i] = k->keep[i];
	}
	keep[i++] = errfd;
	keeper_child_sort_fds(keep, i);
	keeper_child_close_except(keep, i, KEEPER_CTL_FD);
	return 0;
}

/* In the child: put the transport pipes on stdin and stdout if asked to. */
static int
keeper_child_dup_stdio(struct keeper *k)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (k->stdio[i] == -1)
			continue;
		if (dup2(k->stdio[i], i) == -1 || close(k->stdio[i]) == -1)
			return -1;
	}
	return 0;
}

/*
 * In the child: join a new foreground process group and exec the program.
 * SIGTTOU is still blocked (the keeper's mask), so tcsetpgrp succeeds from
 * the background; the mask is emptied only just before exec.
 */
__dead void
keeper_child_exec(struct keeper *k, int errfd)
{
	if (setpgid(0, 0) != 0)
		keeper_child_fail(errfd, KEEPER_CHILD_SETUP);
	if (tcsetpgrp(STDIN_FILENO, getpid()) != 0)
		keeper_child_fail(errfd, KEEPER_CHILD_SETUP);
	if (k->cwd != NULL && chdir(k->cwd) != 0)
		keeper_child_fail(errfd, KEEPER_CHILD_CHDIR);
	if (keeper_child_limit_fds(k, errfd) != 0 ||
	    keeper_child_dup_stdio(k) != 0)
		keeper_child_fail(errfd, KEEPER_CHILD_SETUP);
	keeper_child_reset_signals();
	execvp(k->argv[0], k->argv);
	keeper_child_fail(errfd, KEEPER_CHILD_EXEC);
}

