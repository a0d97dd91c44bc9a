/*
 * dbgctl-keeper: owns the process tree of one session on behalf of dbgctld.
 *
 * The daemon spawns the keeper with the session's pty slave on 0, 1 and 2
 * and a control socket on 3.  The keeper becomes a child subreaper and the
 * session leader of the pty, forks PROGRAM into the pty's foreground process
 * group, reports "started PID" or "failed STAGE ERRNO", then reaps and
 * reports "exit code N HOW" or "exit signal N HOW", HOW saying what the keeper
 * had done by then ("run": nothing, "term", "kill"), and "stopped signal N"
 * and "continued" as the program is stopped and continued in between.  On
 * "stop MS" it sends SIGTERM to every descendant and SIGKILL at the
 * deadline, repeated until no child is left; when the daemon goes away (EOF
 * on the control socket, SIGTERM from PDEATHSIG, SIGHUP from the pty) it
 * SIGKILLs everything at once; or with --hangup MS it first passes the
 * hangup on to the program, as a shell does to its jobs when its terminal
 * goes, and kills what is left once the program has ended or MS have
 * passed.  The keeper exits only once nothing it started is alive.
 *
 * The daemon may give the keeper fds to hold: "hold NAME" comes in the same
 * sendmsg as one fd (SCM_RIGHTS); the keeper keeps it open, never touching
 * it, so that the pty or pipe and the bytes in it outlive the daemon, and
 * closes it on "release NAME".  With --adopt PATH the keeper listens on a
 * socket at PATH, answering "busy" while a daemon holds it; with --grace MS
 * as well, a daemon gone leaves the keeper adrift instead: its tree runs on,
 * reaped, what it reports is kept, and for MS a daemon of the keeper's uid
 * may connect to PATH and say "adopt".  It gets back one message with every
 * held fd attached: "keeper PID", a "hold NAME" line per fd, the program's
 * state as the lines above would have said it, and "adopted"; from then on
 * that connection is the control socket, and its EOF sets the keeper adrift
 * again.  Nobody adopting in time is a daemon gone, as above.
 */
#include <sys/types.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "children.h"
#include "keeper.h"

#define KEEPER_DEFAULT_MS	5000
#define KEEPER_TICK_NS		(50 * 1000000LL) /* SIGKILL again this often */
#define KEEPER_MS_NS		1000000LL

/* Return the monotonic clock in nanoseconds. */
int64_t
keeper_now_ns(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		abort();
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * A decimal number from min to max, as strtonum(3) reads it (the keeper
 * links libc alone); errstr is NULL, or says why s is not one.
 */
long long
keeper_number(const char *s, long long min, long long max, const char **errstr)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0')
		*errstr = "invalid";
	else if ((errno == ERANGE && v == LLONG_MIN) || v < min)
		*errstr = "too small";
	else if ((errno == ERANGE && v == LLONG_MAX) || v > max)
		*errstr = "too large";
	else {
		*errstr = NULL;
		return v;
	}
	return 0;
}

/* Report a failure to start the program that left no child behind and exit. */
__dead void
keeper_fail(struct keeper *k, const char *stage, int error, int status)
{
	keeper_report_send(k, "failed", stage, error, NULL);
	keeper_adopt_close(k);
	_exit(status);
}

/*
 * Put the child in its own foreground group unless it has moved on.  The
 * child does the same: whichever of the two runs first after fork, the
 * group exists before the keeper waits and before the program execs.
 */
static void
keeper_set_foreground(pid_t pid)
{
	(void)setpgid(pid, pid);
	if (tcgetpgrp(STDIN_FILENO) == getpgrp())
		(void)tcsetpgrp(STDIN_FILENO, pid);
}

/* Fork the program; the error pipe tells later whether it exec'd. */
static void
keeper_spawn(struct keeper *k)
{
	size_t	i;
	pid_t	pid;
	int	fds[2];

	if (pipe2(fds, O_CLOEXEC) != 0)
		keeper_fail(k, "setup", errno, 0);
	if ((pid = fork()) == -1)
		keeper_fail(k, "fork", errno, 0);
	if (pid == 0) {
		close(fds[0]);
		keeper_child_exec(k, fds[1]);
	}
	close(fds[1]);
	for (i = 0; i < k->nkeep; i++)
		close(k->keep[i]);
	k->nkeep = 0;
	k->main_pid = pid;
	k->errfd = fds[0];
	keeper_set_foreground(pid);
}

/*
 * Whether the keeper has a child left, ended or not. Without one it has
 * no descendant either: an orphan is the keeper's child once its parent
 * has ended, and that parent stays its unreaped child until then.
 */
static bool
keeper_has_child(void)
{
	siginfo_t	si;
	int		r;

	do
		r = waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WCONTINUED |
		    WNOHANG | WNOWAIT | __WALL);
	while (r == -1 && errno == EINTR);
	return r == 0 || errno != ECHILD;
}

/*
 * Send sig to every live descendant of the keeper. With no child left
 * (a program that ended alone), /proc is not walked for nothing.
 */
static void
keeper_signal_all(struct keeper *k, int sig)
{
	if (!keeper_has_child())
		return;
	if (keeper_tree_signal(&k->tree, k->self, sig) == 0 &&
	    !k->main_reaped)
		(void)kill(k->main_pid, sig);	/* no /proc: at least main */
}

/* Start killing everything now: SIGKILL at once and at every tick. */
void
keeper_kill_now(struct keeper *k)
{
	k->phase = KEEPER_KILL;
	k->deadline = keeper_now_ns();
}

/*
 * The daemon is gone: kill everything now; or, with --hangup, first hang
 * the program up, as its terminal's end would through a shell (gdb then
 * detaches from what it attached to and kills what it started), and kill
 * what is left when it has ended or at the deadline.
 */
void
keeper_daemon_gone(struct keeper *k)
{
	if (k->phase == KEEPER_HANGUP)
		return;
	if (k->phase != KEEPER_RUN || k->hangup_ms == 0 || k->main_reaped) {
		keeper_kill_now(k);
		return;
	}
	k->phase = KEEPER_HANGUP;
	k->deadline = keeper_now_ns() + k->hangup_ms * KEEPER_MS_NS;
	(void)kill(k->main_pid, SIGHUP);
	(void)kill(k->main_pid, SIGCONT);
}

/* Handle "stop MS": SIGTERM now, SIGKILL at the (possibly earlier) deadline. */
void
keeper_stop(struct keeper *k, long long ms)
{
	int64_t	deadline;

	deadline = keeper_now_ns() + ms * KEEPER_MS_NS;
	switch (k->phase) {
	case KEEPER_RUN:
		k->phase = KEEPER_TERM;
		k->deadline = deadline;
		keeper_signal_all(k, SIGTERM);
		break;
	case KEEPER_TERM:
		if (deadline < k->deadline)
			k->deadline = deadline;
		break;
	case KEEPER_HANGUP:	/* the program has ended: nobody waits for the rest */
		keeper_kill_now(k);
		break;
	case KEEPER_KILL:
		break;
	default:
		abort();
	}
}

/* Send SIGKILL to every descendant once the deadline has passed. */
static void
keeper_kill_at_deadline(struct keeper *k)
{
	int64_t	now;

	if (k->phase == KEEPER_RUN)
		return;
	now = keeper_now_ns();
	if (now < k->deadline)
		return;
	k->phase = KEEPER_KILL;
	keeper_signal_all(k, SIGKILL);
	k->deadline = now + KEEPER_TICK_NS;
}

/* Return the ms from now to the monotonic time t, rounded up, for poll. */
int
keeper_ms_until(int64_t t)
{
	int64_t	ns = t - keeper_now_ns();

	if (ns <= 0)
		return 0;
	if (ns / KEEPER_MS_NS >= INT_MAX)
		return INT_MAX;
	return (int)((ns + KEEPER_MS_NS - 1) / KEEPER_MS_NS);
}

/* Return the poll timeout in ms until the next deadline, rounded up. */
static int
keeper_poll_timeout(struct keeper *k)
{
	if (k->phase == KEEPER_RUN)
		return -1;
	return keeper_ms_until(k->deadline);
}

/*
 * Reap every ended child; return 0 once the keeper has no child left.  As a
 * subreaper it inherits orphans of any kind: __WALL reaps clone children that
 * do not signal SIGCHLD too, so none of them is left a zombie.
 */
static int
keeper_reap(struct keeper *k)
{
	pid_t	pid;
	int	status;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG|__WALL|WUNTRACED|WCONTINUED);
		if (pid > 0) {
			if (pid != k->main_pid)
				continue;
			if (WIFSTOPPED(status) || WIFCONTINUED(status))
				keeper_report_stop(k, status);
			else
				keeper_report_exit(k, status);
			continue;
		}
		if (pid == 0)
			return 1;
		if (errno == EINTR)
			continue;
		if (errno != ECHILD || !k->main_reaped)
			abort();
		return 0;
	}
}

/* Drain the signalfd; anything but SIGCHLD means the daemon is gone. */
static void
keeper_read_signals(struct keeper *k)
{
	struct signalfd_siginfo	si;

	while (read(k->sfd, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo != SIGCHLD)
			keeper_adopt_lost(k);
	}
}

/* Return the sooner of two poll timeouts, -1 being none. */
static int
keeper_sooner(int a, int b)
{
	if (a == -1)
		return b;
	if (b == -1)
		return a;
	return a < b ? a : b;
}

/*
 * Nothing is left to supervise: before the keeper exits, a daemon that
 * died meanwhile (its EOF or its signal already here) sets it adrift, so
 * that the program's exit is told to the next daemon, not lost with it.
 */
static void
keeper_last_look(struct keeper *k)
{
	struct pollfd	pfd[2] = { { .fd = k->sfd, .events = POLLIN },
			    { .fd = k->ctl, .events = POLLIN } };

	if (poll(pfd, 2, 0) <= 0)
		return;
	if (pfd[0].revents != 0)
		keeper_read_signals(k);
	if (pfd[1].revents != 0 && k->ctl != -1)
		keeper_control_read(k);
}

/*
 * Supervise until no child is left, nor, adrift, a report to hand a next
 * daemon.  With no child, the stop's deadlines have nothing left to wake for.
 */
static void
keeper_loop(struct keeper *k)
{
	struct pollfd	pfd[5 + KEEPER_PUMP_MAX * KEEPER_PUMP_DESTS];
	size_t		npfd, i;
	int		alive, timeout;

	for (;;) {
		keeper_kill_at_deadline(k);
		keeper_adopt_tick(k);
		alive = keeper_reap(k);
		if (!alive && !k->adopt.adrift)
			keeper_last_look(k);
		if (!alive && !k->adopt.adrift)
			return;
		pfd[0].fd = k->sfd;
		pfd[1].fd = k->ctl;
		pfd[2].fd = k->errfd;
		pfd[3].fd = k->adopt.lfd;
		pfd[4].fd = k->adopt.afd;
		for (i = 0; i < 5; i++)
			pfd[i].events = POLLIN;
		npfd = 5 + keeper_pump_poll(k, pfd + 5);
		timeout = keeper_sooner(alive ? keeper_poll_timeout(k) : -1,
		    keeper_adopt_timeout(k));
		if (poll(pfd, npfd, timeout) == -1) {
			if (errno == EINTR)
				continue;
			abort();
		}
		for (i = 5; i < npfd && pfd[i].revents == 0; i++)
			continue;
		if (i < npfd)
			keeper_pump_drain(k, false);
		if (pfd[0].revents != 0)
			keeper_read_signals(k);
		if (pfd[2].revents != 0 && k->errfd != -1)
			keeper_report_exec(k);
		if (pfd[1].revents != 0 && k->ctl != -1)
			keeper_control_read(k);
		if (pfd[3].revents != 0 && k->adopt.lfd != -1)
			keeper_adopt_accept(k);
		/* An adopter's snapshot holds every change reapable by now. */
		if (pfd[4].revents != 0 && k->adopt.afd != -1) {
			(void)keeper_reap(k);
			keeper_adopt_read(k);
		}
	}
}

/* Start the program under the keeper and supervise it to the end. */
int
main(int argc, char **argv)
{
	struct keeper	k;

	memset(&k, 0, sizeof k);
	k.ppid = getppid();
	k.self = getpid();
	k.ctl = KEEPER_CTL_FD;
	k.sfd = k.errfd = -1;
	k.stdio[0] = k.stdio[1] = -1;
	k.fail_stage = -1;
	k.adopt.lfd = k.adopt.afd = -1;
	k.stop_ms = KEEPER_DEFAULT_MS;
	k.phase = KEEPER_RUN;

	if (fcntl(k.ctl, F_GETFD) == -1) {
		dprintf(STDERR_FILENO, "dbgctl-keeper: no control fd 3\n");
		return 2;
	}
	keeper_setup(&k, argc, argv);
	keeper_spawn(&k);
	keeper_loop(&k);
	/* Without the keeper's copies, a pipe nobody reads will not wait. */
	keeper_adopt_close(&k);
	keeper_pump_close(&k);
	keeper_tree_free(&k.tree);
	/*
	 * Nothing is left to flush (every report went by write(2)): _exit
	 * spares a thousand keepers ending at once libc's exit handlers.
	 */
	_exit(0);
}
