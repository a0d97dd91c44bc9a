/*
 * What the keeper tells its daemon of the program, one line each: its
 * start or the stage it failed at, its stops, and how it ended; and the
 * same as a snapshot for a daemon that adopts the keeper later.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "children.h"
#include "keeper.h"

/* The stages a start can fail at, as reported. */
static const char *keeper_stages[] = { "setup", "chdir", "exec" };

/* What the keeper had done when the main program ended, as reported. */
static const char *keeper_phases[] = {
	[KEEPER_RUN] = "run",
	[KEEPER_HANGUP] = "term",	/* ended as the keeper was going: by term */
	[KEEPER_TERM] = "term",
	[KEEPER_KILL] = "kill",
};

/* Write a whole buffer to the control socket; a vanished daemon is ignored. */
void
keeper_report_write(struct keeper *k, const char *buf, size_t len)
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
 * Write the line "WORD [WHAT ]N[ HOW]\n" at buf and return its length,
 * without printf, whose deep frames would dirty stack pages the keeper
 * keeps all its life.
 */
size_t
keeper_report_line(char *buf, size_t size, const char *word, const char *what,
    long n, const char *how)
{
	char	 num[24], *p = children_decimal(n, num);
	size_t	 len;

	len = strlen(word) + strlen(p) + 3 + (what ? strlen(what) + 1 : 0) +
	    (how ? strlen(how) + 1 : 0);
	if (len > size)
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
	return strlen(buf);
}

/* Send the daemon a line "WORD [WHAT ]N[ HOW]". */
void
keeper_report_send(struct keeper *k, const char *word, const char *what, long n,
    const char *how)
{
	char	buf[128];

	keeper_report_write(k, buf, keeper_report_line(buf, sizeof buf, word, what, n,
	    how));
}

/*
 * Learn from the error pipe whether the program exec'd, and say so: the pipe
 * is close-on-exec, so EOF without a message means the exec succeeded.
 */
void
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
		k->started = 1;
		keeper_report_send(k, "started", NULL, (long)k->main_pid, NULL);
		return;
	}
	if (n == -1) {
		e.stage = KEEPER_CHILD_SETUP;
		e.error = errno;
	} else if (n != sizeof e || e.stage < 0 || e.stage > KEEPER_CHILD_EXEC)
		abort();
	k->fail_stage = e.stage;
	k->fail_error = e.error;
	keeper_report_send(k, "failed", keeper_stages[e.stage], e.error, NULL);
	k->quiet = 1;
	keeper_kill_now(k);
}

/* Report how the main program ended and stop whatever it left behind. */
void
keeper_report_exit(struct keeper *k, int status)
{
	if (k->main_reaped)
		abort();
	if (k->errfd != -1)
		keeper_report_exec(k);	/* the child is gone: cannot block */
	k->main_reaped = 1;
	/* What it printed last goes before the news of its end. */
	keeper_pump_drain(k, true);
	k->stopsig = 0;
	k->exit_status = status;
	k->exit_phase = k->phase;
	if (!k->quiet && WIFEXITED(status))
		keeper_report_send(k, "exit", "code", WEXITSTATUS(status),
		    keeper_phases[k->phase]);
	else if (!k->quiet && WIFSIGNALED(status))
		keeper_report_send(k, "exit", "signal", WTERMSIG(status),
		    keeper_phases[k->phase]);
	keeper_stop(k, k->stop_ms);
}

/*
 * The main program was stopped (^Z at its terminal, SIGSTOP) or continued:
 * say so, since nothing else in its session will resume it.
 */
void
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
	k->stopsig = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
	if (WIFSTOPPED(status))
		keeper_report_send(k, "stopped", "signal", WSTOPSIG(status), NULL);
	else
		keeper_report_write(k, "continued\n", 10);
}

/*
 * Write at buf what the daemon has been told of the program, or would have
 * been while none listened: its start or failure, a stop it is in, and how
 * it ended; return the length.
 */
size_t
keeper_report_state(struct keeper *k, char *buf, size_t size)
{
	size_t	len = 0;
	int	st = k->exit_status;

	if (k->started)
		len += keeper_report_line(buf, size, "started", NULL,
		    (long)k->main_pid, NULL);
	else if (k->fail_stage != -1)
		len += keeper_report_line(buf, size, "failed",
		    keeper_stages[k->fail_stage], k->fail_error, NULL);
	if (k->stopsig != 0)
		len += keeper_report_line(buf + len, size - len, "stopped", "signal",
		    k->stopsig, NULL);
	if (!k->main_reaped || k->quiet)
		return len;
	if (WIFEXITED(st))
		len += keeper_report_line(buf + len, size - len, "exit", "code",
		    WEXITSTATUS(st), keeper_phases[k->exit_phase]);
	else if (WIFSIGNALED(st))
		len += keeper_report_line(buf + len, size - len, "exit", "signal",
		    WTERMSIG(st), keeper_phases[k->exit_phase]);
	return len;
}
