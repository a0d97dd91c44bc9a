/*
 * Taking over from the daemon this one replaces, the new daemon's side:
 * it was started by the old one with its listening sockets and a channel.
 * Once its own checks have passed, it says so on the channel; the old one
 * then answers its client, stops accepting and lets go of its locks and
 * the channel, whose end lets this one lock and serve; it adopts each
 * session once the old one, exiting, has let go of its keeper.
 */
#include <sys/pidfd.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "replace.h"

/* How long the old daemon, killed after REPLACE_GONE_MS, may take to die. */
#define TAKEOVER_KILLED_MS 5000

/* The daemon replaced: its pid, a pidfd to kill it by (or -1), the channel. */
static struct {
	pid_t	 old;
	int	 pidfd;
	int	 fd;
} takeover = { 0, -1, -1 };

/*
 * Take the channel from the daemon this one replaces, if it started this
 * one: REPLACE_ENV names our parent, and the channel is the fd after the
 * n listeners. 1 if so (the channel is kept), 0 if not; the variable is
 * removed either way, so that no session program sees it.
 */
int
takeover_take(size_t n)
{
	const char	*v = getenv(REPLACE_ENV), *errstr;
	long long	 pid;
	int		 fd = 3 + (int)n;

	if (v == NULL)
		return 0;
	pid = strtonum(v, 1, INT32_MAX, &errstr);
	unsetenv(REPLACE_ENV);
	/* A leftover in an environment handed down: not ours. */
	if (errstr != NULL || pid != getppid() ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
		return 0;
	takeover.old = (pid_t)pid;
	takeover.fd = fd;
	return 1;
}

/*
 * Wait up to ms for the end of the channel; true once it came. The old
 * daemon closes it once it has closed its locks, before it lets go of
 * its keepers and exits; a daemon that dies closes it too.
 */
static bool
takeover_gone(long long ms)
{
	struct pollfd	pfd = { .fd = takeover.fd, .events = POLLIN };
	long long	end = loop_mono_ms() + ms;
	ssize_t		n;
	char		c;

	while (loop_mono_ms() < end) {
		if (poll(&pfd, 1, (int)(end - loop_mono_ms())) <= 0)
			continue;
		n = read(takeover.fd, &c, 1);
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			return true;
	}
	return false;
}

/*
 * Tell the old daemon this one may take over, and wait for it to go:
 * until then it may still answer its clients, and it holds the locks. One
 * that does not go within REPLACE_GONE_MS is killed, as a crash would end
 * it, and this one serves. A no-op unless takeover_take took a channel.
 */
void
takeover_wait(void)
{
	char ready = REPLACE_READY;

	if (takeover.fd == -1)
		return;
	/* Before it is told: until then it waits, and its pid is its own. */
	takeover.pidfd = pidfd_open(takeover.old, 0);
	/* Said now, the first log line's set-up is not in the hand-over. */
	log_info("ready to take over from pid %ld", (long)takeover.old);
	if (write(takeover.fd, &ready, 1) != 1) {
		fprintf(stderr, "dbgctld: the daemon this one replaces (pid "
		    "%ld) is gone before the hand-over: %s\n",
		    (long)takeover.old, strerror(errno));
		exit(1);
	}
	if (!takeover_gone(REPLACE_GONE_MS)) {
		log_warn("the daemon this one replaces (pid %ld) has not "
		    "exited within %d s: killing it", (long)takeover.old,
		    REPLACE_GONE_MS / 1000);
		if (takeover.pidfd == -1 ||
		    pidfd_send_signal(takeover.pidfd, SIGKILL, NULL, 0) != 0)
			(void)kill(takeover.old, SIGKILL);
		if (!takeover_gone(TAKEOVER_KILLED_MS))
			log_warn("pid %ld has not died either",
			    (long)takeover.old);
	}
	log_info("took over from pid %ld", (long)takeover.old);
	close(takeover.fd);
	if (takeover.pidfd != -1)
		close(takeover.pidfd);
	takeover.fd = takeover.pidfd = -1;
}
