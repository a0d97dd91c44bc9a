/*
 * What the keeper does once, before it forks anything: read its command
 * line, keep only the descriptors it was promised, join its cgroup, give
 * back the file limit, take its signals through a signalfd, become the
 * pty's session leader and a subreaper, and listen for a daemon to adopt
 * it. Any failure is reported as "failed setup ERRNO" and ends the keeper.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"

/* Complain about the command line and exit. */
static __dead void
keeper_setup_usage(struct keeper *k, const char *why)
{
	static const char	usage[] = "usage: dbgctl-keeper [--cwd DIR] "
	    "[--cgroup DIR] [--nofile N] [--stop-timeout MS] "
	    "[--hangup MS]\n"
	    "    [--adopt PATH] [--grace MS] [--keep-fd N]... [--stdin-fd N] "
	    "[--stdout-fd N]\n"
	    "    -- PROGRAM [ARG...]\n";

	dprintf(STDERR_FILENO, "dbgctl-keeper: %s\n%s", why, usage);
	keeper_fail(k, "setup", EINVAL, 2);
}

/* Parse the value of --keep-fd and remember it. */
static void
keeper_setup_keep_fd(struct keeper *k, const char *s)
{
	const char	*errstr;
	long long	 fd;

	fd = keeper_number(s, KEEPER_CTL_FD + 1, INT_MAX, &errstr);
	if (errstr != NULL)
		keeper_setup_usage(k, "bad --keep-fd");
	if (k->nkeep == KEEPER_MAX_KEEP)
		keeper_setup_usage(k, "too many --keep-fd");
	k->keep[k->nkeep++] = (int)fd;
}

/* Parse the command line into k; PROGRAM starts after "--". */
static void
keeper_setup_args(struct keeper *k, int argc, char **argv)
{
	const char	*errstr;
	int		 i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strncmp(argv[i], "--", 2) != 0)
			break;
		if (i + 1 == argc)
			keeper_setup_usage(k, "option needs a value");
		if (strcmp(argv[i], "--cwd") == 0)
			k->cwd = argv[++i];
		else if (strcmp(argv[i], "--cgroup") == 0)
			k->cgroup = argv[++i];
		else if (strcmp(argv[i], "--nofile") == 0) {
			k->nofile = keeper_number(argv[++i], 1, INT_MAX, &errstr);
			if (errstr != NULL)
				keeper_setup_usage(k, "bad --nofile");
		}
		else if (strcmp(argv[i], "--keep-fd") == 0)
			keeper_setup_keep_fd(k, argv[++i]);
		else if (strcmp(argv[i], "--stdin-fd") == 0) {
			keeper_setup_keep_fd(k, argv[++i]);
			k->stdio[0] = k->keep[k->nkeep - 1];
		} else if (strcmp(argv[i], "--stdout-fd") == 0) {
			keeper_setup_keep_fd(k, argv[++i]);
			k->stdio[1] = k->keep[k->nkeep - 1];
		}
		else if (strcmp(argv[i], "--stop-timeout") == 0) {
			k->stop_ms = keeper_number(argv[++i], 0, KEEPER_MAX_MS,
			    &errstr);
			if (errstr != NULL)
				keeper_setup_usage(k, "bad --stop-timeout");
		} else if (strcmp(argv[i], "--hangup") == 0) {
			k->hangup_ms = keeper_number(argv[++i], 0, KEEPER_MAX_MS,
			    &errstr);
			if (errstr != NULL)
				keeper_setup_usage(k, "bad --hangup");
		} else if (strcmp(argv[i], "--adopt") == 0) {
			k->adopt.path = argv[++i];
			if (*k->adopt.path != '/')
				keeper_setup_usage(k, "bad --adopt");
		} else if (strcmp(argv[i], "--grace") == 0) {
			k->adopt.grace_ms = keeper_number(argv[++i], 0,
			    KEEPER_MAX_MS, &errstr);
			if (errstr != NULL)
				keeper_setup_usage(k, "bad --grace");
		} else
			keeper_setup_usage(k, "unknown option");
	}
	if (i >= argc || *argv[i] == '\0')
		keeper_setup_usage(k, "no program");
	k->argv = argv + i;
}

/*
 * Check the inherited fds and drop everything the keeper was not promised.
 * Whatever flags the control socket comes with, it is made blocking, so that
 * a report is written whole rather than dropped at EAGAIN, and close-on-exec,
 * so that the program never holds it.
 */
static void
keeper_setup_fds(struct keeper *k)
{
	size_t	i;
	int	fd, fl;

	if ((fl = fcntl(k->ctl, F_GETFL)) == -1 ||
	    fcntl(k->ctl, F_SETFL, fl & ~O_NONBLOCK) == -1 ||
	    fcntl(k->ctl, F_SETFD, FD_CLOEXEC) == -1)
		keeper_fail(k, "setup", errno, 1);
	for (fd = 0; fd < KEEPER_CTL_FD; fd++) {
		if (fcntl(fd, F_GETFD) == -1)
			keeper_fail(k, "setup", errno, 1);
	}
	for (i = 0; i < k->nkeep; i++) {
		if (fcntl(k->keep[i], F_GETFD) == -1)
			keeper_fail(k, "setup", errno, 1);
	}
	keeper_child_sort_fds(k->keep, k->nkeep);
	keeper_child_close_except(k->keep, k->nkeep, KEEPER_CTL_FD + 1);
}

/* Fill set with the signals the keeper takes through its signalfd. */
static void
keeper_setup_sigset(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* Block the signals the keeper handles or must not feel, open the signalfd. */
static void
keeper_setup_signals(struct keeper *k)
{
	struct sigaction	sa;
	sigset_t		set;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPIPE, &sa, NULL) != 0)
		keeper_fail(k, "setup", errno, 1);
	/*
	 * INT and QUIT reach the keeper only from its terminal, while it is
	 * briefly in the foreground: a Ctrl-C then must not end the session.
	 */
	if (sigaction(SIGINT, &sa, NULL) != 0 ||
	    sigaction(SIGQUIT, &sa, NULL) != 0)
		keeper_fail(k, "setup", errno, 1);

	keeper_setup_sigset(&set);
	if ((k->sfd = signalfd(-1, &set, SFD_CLOEXEC|SFD_NONBLOCK)) == -1)
		keeper_fail(k, "setup", errno, 1);
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGTTOU);
	sigaddset(&set, SIGTTIN);
	sigaddset(&set, SIGTSTP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		keeper_fail(k, "setup", errno, 1);
}

/* Become subreaper and session leader with the pty as controlling tty. */
static void
keeper_setup_session(struct keeper *k)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		keeper_fail(k, "setup", errno, 1);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0)
		keeper_fail(k, "setup", errno, 1);
	if (getppid() != k->ppid)
		_exit(1);	/* the daemon died before we had a child */
	if (setsid() == -1 && getsid(0) != k->self)
		keeper_fail(k, "setup", errno, 1);
	if (ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0)
		keeper_fail(k, "setup", errno, 1);
}

/*
 * Move the keeper into its cgroup before it forks anything, so that every
 * process below it is born there and none can leave it by losing its
 * parent: the daemon proves the tree gone by the cgroup being empty.
 */
static void
keeper_setup_cgroup(struct keeper *k)
{
	int	dir, fd, n;

	if (k->cgroup == NULL)
		return;
	/* Through the directory: no path buffer on a stack that stays dirty. */
	if ((dir = open(k->cgroup, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		keeper_fail(k, "setup", errno, 2);
	fd = openat(dir, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	close(dir);
	if (fd == -1)
		keeper_fail(k, "setup", errno, 2);
	n = write(fd, "0", 1);
	if (n != 1)
		keeper_fail(k, "setup", n == -1 ? errno : EIO, 2);
	close(fd);
}

/*
 * Give the program the soft file limit the daemon was started with: the
 * daemon raised its own to serve many clients, and a program that walks
 * every possible descriptor, or uses select(2), should not pay for that.
 */
static void
keeper_setup_nofile(struct keeper *k)
{
	struct rlimit rl;

	if (k->nofile == 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    (rlim_t)k->nofile >= rl.rlim_cur)
		return;
	rl.rlim_cur = (rlim_t)k->nofile;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * Make the keeper what the daemon asked for, in this order: the cgroup is
 * joined before any child is born, and the signals are taken before the
 * pty becomes its terminal, whose hangup is then read, never felt.  The
 * adoption socket comes last, once no early exit can leave its path behind.
 */
void
keeper_setup(struct keeper *k, int argc, char **argv)
{
	keeper_setup_args(k, argc, argv);
	keeper_setup_fds(k);
	keeper_setup_cgroup(k);
	keeper_setup_nofile(k);
	keeper_setup_signals(k);
	keeper_setup_session(k);
	keeper_adopt_listen(k);
}
