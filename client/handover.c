/*
 * Handing this process's stdin and stdout to the daemon, which then reads
 * and writes them itself (dial-stdio's dial, mi's stdio): whether they can
 * be handed, and letting go of them once they are, so that whoever reads
 * the other end sees it end when the daemon closes its copies.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* Whether fd is a pipe or a socket, which the daemon can serve itself. */
static bool
handover_kind(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) ||
	    S_ISSOCK(st.st_mode));
}

/*
 * Whether stdin and stdout can go to the daemon over c's connection: a
 * Unix socket of this host (not ssh's, not TCP), and each a pipe or a
 * socket (a terminal stays this process's).
 */
bool
handover_possible(struct client *c)
{
	struct sockaddr_storage	 sa;
	socklen_t		 len = sizeof sa;

	if (c->fd == -1 || c->ssh_pid > 0)
		return false;
	memset(&sa, 0, sizeof sa);
	if (getsockname(c->fd, (struct sockaddr *)&sa, &len) != 0 ||
	    sa.ss_family != AF_UNIX)
		return false;
	return handover_kind(STDIN_FILENO) && handover_kind(STDOUT_FILENO);
}

/* The daemon holds stdin and stdout now: this process lets go of them. */
void
handover_release(void)
{
	int null;

	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		client_fatal("/dev/null: %s", strerror(errno));
	if (dup2(null, STDIN_FILENO) == -1 || dup2(null, STDOUT_FILENO) == -1)
		client_fatal("dup2: %s", strerror(errno));
	close(null);
}
