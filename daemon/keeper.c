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
 * on 3, SIGTERM from PDEATHSIG, SIGHUP from the pty) it SIGKILLs everything
 * at once; or with --hangup MS it first passes the hangup on to the
 * program, as a shell does to its jobs when its terminal goes, and kills
 * what is left once the program has ended or MS have passed.  The keeper
 * exits only once nothing it started is alive.
 */
#include <sys/types.h>
#include <sys/signalfd.h>
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

static const char *keeper_stages[] = { "setup", "chdir", "exec" };

/* What the keeper had done when the main program ended, as reported. */
static const char *keeper_phases[] = {
	[KEEPER_RUN] = "run",
	[KEEPER_HANGUP] = "term",	/* ended as the keeper was going: by term */
	[KEEPER_TERM] = "term",
	[KEEPER_KILL] = "kill",
};

/* Return the monotonic clock in nanoseconds. */
static int64_t
keeper_now_ns(void)
{
	struct timespec	ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		abort();
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Write a whole buffer to the control socket; a vanished daemon is ignored. */
static void
keeper_write_ctl(struct keeper *k, const char *buf, size_t len)
{
	ssize_t	n;

	while (k->ctl != -1 && len > 0) {
		n = write(k->ctl, buf, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

/*
 * Send the daemon a line "WORD [WHAT ]N[ HOW]", written without printf,
 * whose deep frames would dirty stack pages the keeper keeps all its life.
 */
static void
keeper_send(struct keeper *k, const char *word, const char *what, long n,
    const char *how)
{
	char	 buf[128], num[24], *p = children_decimal(n, num);
	size_t	 len;

	len = strlen(word) + strlen(p) + 3 + (what ? strlen(what) + 1 : 0) +
	    (how ? strlen(how) + 1 : 0);
	if (len > sizeof buf)
		abort();
	strcpy(buf, word);
	if (what != NULL) {
		strcat(buf, " ");
		strcat(buf, what);
	}
	strcat(buf, " ");
	strcat(buf, p);
	if (how != NULL) {
		strcat(buf, " ");
		strcat(buf, how);
	}
	strcat(buf, "\n");
	keeper_write_ctl(k, buf, strlen(buf));
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
	keeper_send(k, "failed", stage, error, NULL);
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
static void
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
static void
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
static void
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

/* Return the poll timeout in ms until the next deadline, rounded up. */
static int
keeper_poll_timeout(struct keeper *k)
{
	int64_t	ns;

	if (k->phase == KEEPER_RUN)
		return -1;
	ns = k->deadline - keeper_now_ns();
	if (ns <= 0)
		return 0;
	if (ns / KEEPER_MS_NS >= INT_MAX)
		return INT_MAX;
	return (int)((ns + KEEPER_MS_NS - 1) / KEEPER_MS_NS);
}

/*
 * Learn from the error pipe whether the program exec'd, and say so: the pipe
 * is close-on-exec, so EOF without a message means the exec succeeded.
 */
static void
keeper_report_exec(struct keeper *k)
{
	struct keeper_child_err	e;
	ssize_t			n;

	do
		n = read(k->errfd, &e, sizeof e);
	while (n == -1 && errno == EINTR);
	close(k->errfd);
	k->errfd = -1;
	if (n == 0) {
		keeper_send(k, "started", NULL, (long)k->main_pid, NULL);
		return;
	}
	if (n == -1) {
		e.stage = KEEPER_CHILD_SETUP;
		e.error = errno;
	} else if (n != sizeof e || e.stage < 0 || e.stage > KEEPER_CHILD_EXEC)
		abort();
	keeper_send(k, "failed", keeper_stages[e.stage], e.error, NULL);
	k->quiet = 1;
	keeper_kill_now(k);
}

/* Report how the main program ended and stop whatever it left behind. */
static void
keeper_report_exit(struct keeper *k, int status)
{
	if (k->main_reaped)
		abort();
	if (k->errfd != -1)
		keeper_report_exec(k);	/* the child is gone: cannot block */
	k->main_reaped = 1;
	if (!k->quiet && WIFEXITED(status))
		keeper_send(k, "exit", "code", WEXITSTATUS(status),
		    keeper_phases[k->phase]);
	else if (!k->quiet && WIFSIGNALED(status))
		keeper_send(k, "exit", "signal", WTERMSIG(status),
		    keeper_phases[k->phase]);
	keeper_stop(k, k->stop_ms);
}

/*
 * The main program was stopped (^Z at its terminal, SIGSTOP) or continued:
 * say so, since nothing else in its session will resume it.
 */
static void
keeper_report_stop(struct keeper *k, int status)
{
	struct pollfd	pfd = { .fd = k->errfd, .events = POLLIN };

	/*
	 * The start is said first. A child stopped before its exec is not
	 * the program yet (the pipe is still open): nothing to say then.
	 */
	if (k->errfd != -1 && poll(&pfd, 1, 0) == 1)
		keeper_report_exec(k);
	if (k->errfd != -1)
		return;
	if (WIFSTOPPED(status))
		keeper_send(k, "stopped", "signal", WSTOPSIG(status), NULL);
	else
		keeper_write_ctl(k, "continued\n", 10);
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
			keeper_daemon_gone(k);
	}
}

/*
 * Execute one command line from the daemon; a "stop" whose timeout does not
 * parse still stops, with the default timeout, since stopping is what the
 * daemon asked for.  Other lines are ignored.
 */
static void
keeper_run_command(struct keeper *k, const char *line)
{
	const char	*errstr;
	long long	 ms;

	if (strcmp(line, "stop") == 0) {
		keeper_stop(k, k->stop_ms);
		return;
	}
	if (strncmp(line, "stop ", 5) != 0)
		return;
	ms = keeper_number(line + 5, 0, KEEPER_MAX_MS, &errstr);
	keeper_stop(k, errstr == NULL ? ms : k->stop_ms);
}

/* Add one byte of control input to the line, running complete lines. */
static void
keeper_input_byte(struct keeper *k, char c)
{
	if (c == '\n') {
		if (!k->discard) {
			if (k->linelen > 0 && k->line[k->linelen - 1] == '\r')
				k->linelen--;
			k->line[k->linelen] = '\0';
			keeper_run_command(k, k->line);
		}
		k->linelen = 0;
		k->discard = 0;
		return;
	}
	if (k->linelen + 1 < sizeof k->line)
		k->line[k->linelen++] = c;
	else
		k->discard = 1;
}

/* Read commands from the daemon; EOF or an error means it died. */
static void
keeper_read_control(struct keeper *k)
{
	char	buf[512];
	ssize_t	n, i;

	n = read(k->ctl, buf, sizeof buf);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(k->ctl);
		k->ctl = -1;
		keeper_daemon_gone(k);
		return;
	}
	for (i = 0; i < n; i++)
		keeper_input_byte(k, buf[i]);
}

/* Supervise until no child is left. */
static void
keeper_loop(struct keeper *k)
{
	struct pollfd	pfd[3];

	for (;;) {
		keeper_kill_at_deadline(k);
		if (!keeper_reap(k))
			return;
		pfd[0].fd = k->sfd;
		pfd[1].fd = k->ctl;
		pfd[2].fd = k->errfd;
		pfd[0].events = pfd[1].events = pfd[2].events = POLLIN;
		if (poll(pfd, 3, keeper_poll_timeout(k)) == -1) {
			if (errno == EINTR)
				continue;
			abort();
		}
		if (pfd[0].revents != 0)
			keeper_read_signals(k);
		if (pfd[2].revents != 0 && k->errfd != -1)
			keeper_report_exec(k);
		if (pfd[1].revents != 0 && k->ctl != -1)
			keeper_read_control(k);
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
	k.stop_ms = KEEPER_DEFAULT_MS;
	k.phase = KEEPER_RUN;

	if (fcntl(k.ctl, F_GETFD) == -1) {
		dprintf(STDERR_FILENO, "dbgctl-keeper: no control fd 3\n");
		return 2;
	}
	keeper_setup(&k, argc, argv);
	keeper_spawn(&k);
	keeper_loop(&k);
	keeper_tree_free(&k.tree);
	/*
	 * Nothing is left to flush (every report went by write(2)): _exit
	 * spares a thousand keepers ending at once libc's exit handlers.
	 */
	_exit(0);
}
