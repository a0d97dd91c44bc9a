/*
 * Finding the daemon: the address -H or the environment names, the Unix
 * socket tried (and one bound but not yet listening waited for), a
 * daemon that is absent told from one that refuses, and one started when
 * the command allows.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"
#include "paths.h"

/* How long a socket another process has bound is given to listen. */
#define CLIENT_LISTEN_WAIT_MS	5000

/*
 * The address -H (--host, --connect) gave, else $DBGCTL_HOST, else
 * $DBGCTL_CONNECT; NULL when none is set.
 */
const char *
client_connect_address(void)
{
	const char	*addr = getenv("DBGCTL_HOST");

	if (addr == NULL || *addr == '\0')
		addr = getenv("DBGCTL_CONNECT");
	return addr != NULL && *addr != '\0' ? addr : NULL;
}

/* The address of a daemon on another host (ssh://, tcp:), or NULL. */
const char *
client_connect_remote(void)
{
	const char	*addr = client_connect_address();

	if (addr == NULL || strncmp(addr, "unix:", 5) == 0)
		return NULL;
	return addr;
}

/* Check the address, if one is set: 0, or -1 with the cause in cause. */
int
client_connect_check(char *cause, size_t len)
{
	const char	*addr = client_connect_address();
	char		 why[256];

	if (addr == NULL || strncmp(addr, "tcp:", 4) == 0 ||
	    (strncmp(addr, "unix:", 5) == 0 && addr[5] != '\0'))
		return 0;
	if (!ssh_is_url(addr)) {
		snprintf(cause, len, "bad address %s: want ssh://[USER@]HOST"
		    "[:PORT][/SOCKET], tcp:HOST:PORT or unix:PATH", addr);
		return -1;
	}
	if (ssh_check(addr, why, sizeof why) == 0)
		return 0;
	snprintf(cause, len, "bad address %s: %s", addr, why);
	return -1;
}

/* Try once to connect to the socket; -1 with errno set if that fails. */
int
client_connect_open(struct client *c)
{
	struct sockaddr_un	 sa;
	const char		*remote = client_connect_remote();
	int			 fd, saved;

	if (ssh_is_url(remote)) {
		ssh_open(c, remote);
		return 0;
	}
	if (remote != NULL)
		return tcp_open(c, remote);
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlcpy(sa.sun_path, c->socket, sizeof sa.sun_path) >=
	    sizeof sa.sun_path)
		client_fatal("socket path too long: %s", c->socket);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		client_fatal("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	c->fd = fd;
	return 0;
}

/*
 * Whether a failed connect (its errno) means that no daemon answers (yet):
 * no socket file, or a socket file nobody listens on. A socket that
 * listens, a service manager's too, accepts or queues the connect, so it
 * never gets here, and one bound but not yet listening is waited for
 * first (client_connect_bound); a file in the way that is no socket is
 * refused too (ECONNREFUSED), but is not a daemon's to replace. errno is
 * kept.
 */
int
client_connect_absent(struct client *c)
{
	struct stat	st;
	int		saved = errno;

	if (saved == ECONNREFUSED && lstat(c->socket, &st) == 0 &&
	    !S_ISSOCK(st.st_mode)) {
		errno = saved;
		return 0;
	}
	errno = saved;
	return saved == ENOENT || saved == ECONNREFUSED;
}

/* Exit with why connecting to the socket failed, when it is not "absent". */
void
client_connect_fatal(struct client *c)
{
	struct stat st;

	if (errno == ECONNREFUSED && lstat(c->socket, &st) == 0 &&
	    !S_ISSOCK(st.st_mode))
		client_fatal("connect %s: not a socket, and not removed: "
		    "remove it or choose another socket (-s)", c->socket);
	if (errno == ECONNREFUSED && paths_socket_bound(c->socket) == 1)
		client_fatal("connect %s: another process has a socket bound "
		    "there that does not listen: no daemon is started beside "
		    "it", c->socket);
	client_fatal("connect %s: %s", c->socket, strerror(errno));
}

/*
 * A socket that refuses while a process has it bound is not a dead
 * daemon's: it is between bind and listen, as a service manager's may be
 * when the client comes first. Give it CLIENT_LISTEN_WAIT_MS to listen
 * rather than start a daemon that would replace it. 0 once connected; 1
 * (errno ECONNREFUSED) when nothing is bound there, so a dead daemon left
 * it; -1 with errno if it never came to listen.
 */
static int
client_connect_bound(struct client *c)
{
	int waited;

	for (waited = 0; waited < CLIENT_LISTEN_WAIT_MS; waited += 10) {
		if (paths_socket_bound(c->socket) != 1) {
			errno = ECONNREFUSED;
			return 1;
		}
		poll(NULL, 0, 10);
		if (client_connect_open(c) == 0)
			return 0;
		if (errno != ECONNREFUSED)
			return -1;
	}
	errno = ECONNREFUSED;
	return -1;
}

/* Connect to the daemon, starting it if the command allows; exit if none. */
void
client_connect(struct client *c)
{
	int	absent, rc;

	if (client_connect_open(c) == 0)
		return;
	/* A daemon on another host is never started from here. */
	if (client_connect_remote() != NULL)
		client_fatal("connect %s: %s", client_connect_remote(),
		    strerror(errno));
	if (errno == ECONNREFUSED && (rc = client_connect_bound(c)) != 1) {
		if (rc == 0)
			return;
		client_connect_fatal(c);
	}
	absent = client_connect_absent(c);
	if (absent && (c->autostart || reconnect_sessions_wait(c))) {
		if (autostart_connect(c) != 0)
			exit(EXIT_NODAEMON);
		return;
	}
	if (absent)
		client_fatal("no daemon is running at %s", c->socket);
	client_connect_fatal(c);
}
