/*
 * Which TCP ports a process tree listens on, seen from /proc: the socket
 * inodes of its processes' fds against the LISTEN sockets the kernel's
 * socket diagnostics list (else /proc/net/tcp and tcp6). Nothing
 * connects, so a server that serves one connection keeps it for gdb.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "sock.h"

/* Processes and sockets looked at, at most: a server's tree is small. */
#define SOCK_MAXPIDS	256
#define SOCK_MAXINODES	1024

/* A TCP socket's state as the kernel numbers it: listening. */
#define SOCK_LISTEN	10


/* What a scan collects. */
struct sock_scan {
	pid_t		 pids[SOCK_MAXPIDS];
	size_t		 npids;
	unsigned long	 inodes[SOCK_MAXINODES];
	size_t		 ninodes;
};

/* Add pid and, breadth first, its descendants (through every thread). */
static void
sock_tree(struct sock_scan *sc, pid_t root)
{
	char		 path[320];
	struct dirent	*de;
	DIR		*d;
	FILE		*f;
	size_t		 at;
	long		 child;

	sc->pids[sc->npids++] = root;
	for (at = 0; at < sc->npids; at++) {
		snprintf(path, sizeof path, "/proc/%ld/task",
		    (long)sc->pids[at]);
		if ((d = opendir(path)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "/proc/%ld/task/%s/children",
			    (long)sc->pids[at], de->d_name);
			if ((f = fopen(path, "re")) == NULL)
				continue;
			while (fscanf(f, "%ld", &child) == 1 &&
			    sc->npids < SOCK_MAXPIDS)
				sc->pids[sc->npids++] = (pid_t)child;
			fclose(f);
		}
		closedir(d);
	}
}

/* Collect the socket inodes the tree's processes hold. */
static void
sock_inodes(struct sock_scan *sc)
{
	char		 path[320], link[64];
	struct dirent	*de;
	unsigned long	 ino;
	ssize_t		 n;
	size_t		 i;
	DIR		*d;

	for (i = 0; i < sc->npids; i++) {
		snprintf(path, sizeof path, "/proc/%ld/fd", (long)sc->pids[i]);
		if ((d = opendir(path)) == NULL)
			continue;
		while ((de = readdir(d)) != NULL &&
		    sc->ninodes < SOCK_MAXINODES) {
			snprintf(path, sizeof path, "/proc/%ld/fd/%s",
			    (long)sc->pids[i], de->d_name);
			if ((n = readlink(path, link, sizeof link - 1)) <= 0)
				continue;
			link[n] = '\0';
			if (sscanf(link, "socket:[%lu]", &ino) == 1)
				sc->inodes[sc->ninodes++] = ino;
		}
		closedir(d);
	}
}

/* Whether the tree holds a socket of this inode. */
static bool
sock_held(const struct sock_scan *sc, unsigned long ino)
{
	size_t i;

	for (i = 0; i < sc->ninodes; i++)
		if (sc->inodes[i] == ino)
			return true;
	return false;
}

/* The address gdb should connect to, from a /proc/net address in hex. */
static void
sock_host(const char *addr, char *host, size_t hostlen)
{
	unsigned a, w[4];

	if (strlen(addr) == 8 && sscanf(addr, "%x", &a) == 1 && a != 0) {
		snprintf(host, hostlen, "%u.%u.%u.%u", a & 0xff,
		    (a >> 8) & 0xff, (a >> 16) & 0xff, a >> 24);
		return;
	}
	/* IPv6: ::1 is loopback; a v4-mapped address is that IPv4 one. */
	if (strlen(addr) == 32 && sscanf(addr, "%8x%8x%8x%8x", &w[0], &w[1],
	    &w[2], &w[3]) == 4) {
		if (w[0] == 0 && w[1] == 0 && w[2] == 0xffff0000) {
			snprintf(host, hostlen, "%u.%u.%u.%u", w[3] & 0xff,
			    (w[3] >> 8) & 0xff, (w[3] >> 16) & 0xff, w[3] >> 24);
			return;
		}
		if (w[0] == 0 && w[1] == 0 && w[2] == 0 && w[3] == 0x01000000) {
			snprintf(host, hostlen, "[::1]");
			return;
		}
	}
	/* A wildcard (0.0.0.0 or ::): loopback reaches it. */
	snprintf(host, hostlen, "127.0.0.1");
}

/* Add the LISTEN sockets of one /proc/net table that the tree holds. */
static void
sock_table(const struct sock_scan *sc, const char *table, int want,
    struct sock_port *ports, size_t *n, size_t max)
{
	char		 line[512], addr[64];
	unsigned long	 ino;
	unsigned	 port, st;
	FILE		*f;

	if ((f = fopen(table, "re")) == NULL)
		return;
	while (*n < max && fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, " %*d: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x "
		    "%*x:%*x %*x:%*x %*x %*u %*u %lu", addr, &port, &st,
		    &ino) != 4 || st != 0x0A || !sock_held(sc, ino) ||
		    (want != 0 && (int)port != want))
			continue;
		ports[*n].port = (int)port;
		sock_host(addr, ports[*n].host, sizeof ports[*n].host);
		(*n)++;
	}
	fclose(f);
}

/* Add one listening socket the diagnostics listed, if the tree holds it. */
static void
sock_diag_add(const struct sock_scan *sc, const struct inet_diag_msg *m,
    int want, struct sock_port *ports, size_t *n, size_t max)
{
	const uint32_t	*a = m->id.idiag_src;
	char		 addr[40];
	int		 port = ntohs(m->id.idiag_sport);

	if (*n >= max || m->idiag_state != SOCK_LISTEN ||
	    !sock_held(sc, m->idiag_inode) || (want != 0 && port != want))
		return;
	/* As /proc/net prints it, each 32-bit word in the host's order. */
	if (m->idiag_family == AF_INET)
		snprintf(addr, sizeof addr, "%08X", a[0]);
	else
		snprintf(addr, sizeof addr, "%08X%08X%08X%08X", a[0], a[1],
		    a[2], a[3]);
	ports[*n].port = port;
	sock_host(addr, ports[*n].host, sizeof ports[*n].host);
	(*n)++;
}

/* Ask the kernel for its listening TCP sockets of family on fd. */
static int
sock_diag_ask(int fd, int family)
{
	struct {
		struct nlmsghdr		nlh;
		struct inet_diag_req_v2	r;
	} req;

	memset(&req, 0, sizeof req);
	req.nlh.nlmsg_len = sizeof req;
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.r.sdiag_family = (uint8_t)family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = 1U << SOCK_LISTEN;
	return send(fd, &req, sizeof req, 0) == (ssize_t)sizeof req ? 0 : -1;
}

/*
 * Add the tree's listening sockets of one family as the kernel's socket
 * diagnostics list them: only its table of listening sockets is walked,
 * where reading /proc/net/tcp walks every connection the host has (3 to
 * 7 ms a file on a host with many). The kernel answers within the send
 * and the reads, so none waits: nothing there is refusal, and /proc is
 * read then. -1 if the kernel would not say.
 */
static int
sock_diag(const struct sock_scan *sc, int family, int want,
    struct sock_port *ports, size_t *n, size_t max)
{
	struct nlmsghdr	*h;
	long		 buf[2048];
	ssize_t		 len;
	int		 fd, rc = -1;

	if ((fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	    NETLINK_SOCK_DIAG)) == -1)
		return -1;
	if (sock_diag_ask(fd, family) != 0)
		goto out;
	while ((len = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len);
		    h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				rc = 0;
				goto out;
			}
			if (h->nlmsg_type == NLMSG_ERROR)
				goto out;
			sock_diag_add(sc, NLMSG_DATA(h), want, ports, n, max);
		}
	}
out:
	close(fd);
	return rc;
}

/* Add the tree's listening sockets of one family: diagnostics, else /proc. */
static void
sock_family(const struct sock_scan *sc, int family, int want,
    struct sock_port *ports, size_t *n, size_t max)
{
	size_t	before = *n;

	if (sock_diag(sc, family, want, ports, n, max) == 0)
		return;
	*n = before;
	sock_table(sc, family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6",
	    want, ports, n, max);
}

/*
 * The TCP ports that the processes below root listen on (want, or any when
 * 0), and where to reach each; how many (0 while none does). The tables are
 * read only once the tree holds a socket.
 */
size_t
sock_listening(pid_t root, int want, struct sock_port *ports, size_t max)
{
	struct sock_scan	*sc;
	size_t			 n = 0;

	if (root <= 0)
		return 0;
	sc = xcalloc(1, sizeof *sc);
	sock_tree(sc, root);
	sock_inodes(sc);
	if (sc->ninodes > 0)
		sock_family(sc, AF_INET, want, ports, &n, max);
	if (sc->ninodes > 0)
		sock_family(sc, AF_INET6, want, ports, &n, max);
	free(sc);
	return n;
}
