/*
 * What a keeper is handed to hold across the daemon's death, and to pump
 * (keeper-hold.c, keeper-pump.c): lines on its control socket with the
 * fds they are about, in one message each.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "fdpass.h"
#include "proc.h"

/* The most fds one line to a keeper carries: a pump's pipes. */
#define PROC_HOLD_FDS	2

/*
 * Send the keeper the line "VERB NAME" with copies of the n fds in one
 * message; whether it took it whole.
 */
static bool
proc_hold_send(struct proc *pr, const char *verb, const char *name,
    const int *fds, size_t n)
{
	char		 line[64];
	int		 len;
	ssize_t		 sent;
	uv_os_fd_t	 ctl;

	if (n > PROC_HOLD_FDS)
		log_fatal("keeper %ld: %zu fds in one line", (long)pr->keeper_pid,
		    n);
	if (!pr->ctl_open || n == 0 || fds[0] == -1 ||
	    uv_fileno((uv_handle_t *)&pr->ctl, &ctl) != 0)
		return false;
	len = snprintf(line, sizeof line, "%s %s\n", verb, name);
	if ((sent = fdpass_send(ctl, line, (size_t)len, fds, n)) == len)
		return true;
	/* A keeper whose program ended at once may be gone: its exit says so. */
	if (sent == -1 && (errno == EPIPE || errno == ECONNRESET))
		return false;
	log_warn("keeper %ld did not take its %s to %s: %s",
	    (long)pr->keeper_pid, name, verb, sent == -1 ? strerror(errno) :
	    "cut short");
	return false;
}

/*
 * Give the keeper a copy of fd to hold under name, so that the pty or pipe
 * (and the bytes in it) outlives the daemon until a new one adopts the
 * session. A keeper that cannot take it only makes the session one that
 * dies with the daemon, as it always did: said in the log, nothing more.
 */
bool
proc_hold(struct proc *pr, const char *name, int fd)
{
	return proc_hold_send(pr, "hold", name, &fd, 1);
}

/*
 * Have the keeper copy what the pty (or socket) it holds as name gives
 * into the n pipes' write ends fds (keeper-pump.c), all from its first
 * chunk on; whether it took them.
 */
bool
proc_hold_pump(struct proc *pr, const char *name, const int *fds, size_t n)
{
	char what[48];

	snprintf(what, sizeof what, "%s %zu", name, n);
	return proc_hold_send(pr, "pump", what, fds, n);
}
