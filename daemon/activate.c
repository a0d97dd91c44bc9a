/*
 * Socket activation: the listening sockets a service manager (systemd, or
 * systemd-socket-activate) passed as fds 3.., told of by LISTEN_PID,
 * LISTEN_FDS and LISTEN_FDNAMES, taken without libsystemd.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "activate.h"
#include "listener.h"

/* The first fd a service manager passes (SD_LISTEN_FDS_START). */
#define ACTIVATE_FIRST_FD 3

/* What is said of fd i in messages: its number and, if given, its name. */
static void
activate_what(const struct activate *a, size_t i, char *buf, size_t len)
{
	if (a->fds[i].name[0] != '\0')
		snprintf(buf, len, "fd %d (\"%s\")", a->fds[i].fd,
		    a->fds[i].name);
	else
		snprintf(buf, len, "fd %d", a->fds[i].fd);
}

/* Give each fd its name from LISTEN_FDNAMES (colon-separated), if any. */
static void
activate_names(struct activate *a, const char *names)
{
	size_t	i, n;

	for (i = 0; names != NULL && i < a->n; i++) {
		n = strcspn(names, ":");
		snprintf(a->fds[i].name, sizeof a->fds[i].name, "%.*s",
		    (int)n, names);
		a->fds[i].own = strcmp(a->fds[i].name, ACTIVATE_OWN) == 0;
		if (names[n] == '\0')
			break;
		names += n + 1;
	}
}

/* HOST:PORT of an IPv4 or IPv6 socket address into buf; -1 if neither. */
static int
activate_inet(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const struct sockaddr_in	*in = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6	*in6 = (const struct sockaddr_in6 *)ss;
	char				 host[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		snprintf(buf, len, "%s:%u", host, (unsigned)ntohs(in->sin_port));
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		snprintf(buf, len, "[%s]:%u", host,
		    (unsigned)ntohs(in6->sin6_port));
		return 0;
	}
	return -1;
}

/*
 * Tell where fd i listens: a Unix socket's path, or TCP's HOST:PORT; -1
 * with err for any other address, an abstract or unnamed Unix socket
 * included, which no client could be told of as a path.
 */
static int
activate_address(struct activate *a, size_t i, char *err, size_t errlen)
{
	struct activate_fd	*f = &a->fds[i];
	struct sockaddr_storage	 ss;
	struct sockaddr_un	*un = (struct sockaddr_un *)&ss;
	socklen_t		 len = sizeof ss;
	char			 what[128];

	activate_what(a, i, what, sizeof what);
	memset(&ss, 0, sizeof ss);
	if (getsockname(f->fd, (struct sockaddr *)&ss, &len) != 0) {
		snprintf(err, errlen, "socket activation: %s: getsockname: %s",
		    what, strerror(errno));
		return -1;
	}
	if (activate_inet(&ss, f->addr, sizeof f->addr) == 0) {
		f->tcp = true;
		return 0;
	}
	if (ss.ss_family != AF_UNIX) {
		snprintf(err, errlen, "socket activation: %s: address family "
		    "%d is neither Unix nor TCP", what, (int)ss.ss_family);
		return -1;
	}
	if (len <= offsetof(struct sockaddr_un, sun_path) ||
	    un->sun_path[0] != '/') {
		snprintf(err, errlen, "socket activation: %s: a Unix socket "
		    "without a path (abstract or unnamed): clients need one",
		    what);
		return -1;
	}
	/* sun_path need not end in NUL when it fills the structure. */
	snprintf(f->addr, sizeof f->addr, "%.*s",
	    (int)(len - offsetof(struct sockaddr_un, sun_path)), un->sun_path);
	return 0;
}

/*
 * Check that fd i is a listening stream socket and make it the daemon's
 * own kind of fd (close-on-exec, non-blocking); -1 with err otherwise.
 */
static int
activate_check(struct activate *a, size_t i, char *err, size_t errlen)
{
	int		 fd = a->fds[i].fd, type, listening, flags;
	socklen_t	 len = sizeof type;
	char		 what[128];

	activate_what(a, i, what, sizeof what);
	if (fcntl(fd, F_GETFD) == -1) {
		snprintf(err, errlen, "socket activation: %s: not open: %s",
		    what, strerror(errno));
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
		snprintf(err, errlen, "socket activation: %s: %s", what,
		    errno == ENOTSOCK ? "not a socket" : strerror(errno));
		return -1;
	}
	if (type != SOCK_STREAM) {
		snprintf(err, errlen, "socket activation: %s: not a stream "
		    "socket (type %d); dbgctld serves only ListenStream=",
		    what, type);
		return -1;
	}
	len = sizeof listening;
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 ||
	    !listening) {
		snprintf(err, errlen, "socket activation: %s: a socket that "
		    "does not listen (was it passed with Accept=yes?)", what);
		return -1;
	}
	if (activate_address(a, i, err, errlen) != 0)
		return -1;
	/* The manager may pass them inheritable and blocking. */
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1 ||
	    (flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1) {
		snprintf(err, errlen, "socket activation: %s: fcntl: %s", what,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/* Remove the activation variables, so that no session program sees them. */
static void
activate_unsetenv(void)
{
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
}

/*
 * Read the activation variables (NULL where unset) as meant for the
 * process self: how many sockets they pass, numbered from 3 and named, 0
 * if they are not meant for self (the variables may be a parent's), or -1
 * with err. Looks at no descriptor and no environment.
 */
int
activate_parse(struct activate *a, const char *pid, const char *fds,
    const char *names, pid_t self, char *err, size_t errlen)
{
	const char	*errstr;
	long long	 n;
	size_t		 i;

	memset(a, 0, sizeof *a);
	if (pid == NULL || fds == NULL ||
	    strtonum(pid, 1, INT32_MAX, &errstr) != self)
		return 0;
	n = strtonum(fds, 0, ACTIVATE_MAX, &errstr);
	if (errstr != NULL) {
		snprintf(err, errlen, "socket activation: LISTEN_FDS=%s is %s "
		    "(dbgctld takes 0 to %d sockets)", fds, errstr,
		    ACTIVATE_MAX);
		return -1;
	}
	a->n = (size_t)n;
	for (i = 0; i < a->n; i++)
		a->fds[i].fd = ACTIVATE_FIRST_FD + (int)i;
	activate_names(a, names != NULL && names[0] != '\0' ? names : NULL);
	return (int)a->n;
}

/*
 * Take the sockets passed to this process: none unless LISTEN_PID is our
 * pid. Returns how many, or -1 with err when the variables or an fd are
 * not what they claim. The variables are removed from the environment in
 * every case.
 */
int
activate_take(struct activate *a, char *err, size_t errlen)
{
	size_t	i;
	int	n;

	n = activate_parse(a, getenv("LISTEN_PID"), getenv("LISTEN_FDS"),
	    getenv("LISTEN_FDNAMES"), getpid(), err, errlen);
	activate_unsetenv();
	for (i = 0; n > 0 && i < a->n; i++)
		if (activate_check(a, i, err, errlen) != 0)
			return -1;
	return n;
}

/* Whether a service manager passed any of the sockets (not a daemon). */
bool
activate_managed(const struct activate *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (!a->fds[i].own)
			return true;
	return false;
}

/* The path of the first Unix socket passed, or NULL if none was. */
const char *
activate_unix(const struct activate *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (!a->fds[i].tcp)
			return a->fds[i].addr;
	return NULL;
}

/* Describe the first TCP socket passed into buf; false if none was. */
bool
activate_tcp(const struct activate *a, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (!a->fds[i].tcp)
			continue;
		activate_what(a, i, buf, len);
		return true;
	}
	return false;
}

/* Serve every socket passed, as the listeners --listen makes; -1 with err. */
int
activate_listen(const struct activate *a, const struct conn_mode *mode,
    char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (listener_fd(a->fds[i].fd, a->fds[i].tcp, a->fds[i].own,
		    a->fds[i].addr,
		    mode, err, errlen) != 0)
			return -1;
	return 0;
}
