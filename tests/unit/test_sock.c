/*
 * Unit tests of sock.c: which TCP ports a process tree listens on, and
 * where gdb reaches each, from real sockets of a child of the test's.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "sock.h"

/* A TCP socket bound to addr (IPv4 or IPv6 text), listening or not. */
static int
sock_test_bound(const char *addr, bool listening, int *port)
{
	struct sockaddr_storage	ss;
	struct sockaddr_in	*in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*in6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len = sizeof ss;
	int			 fd;

	memset(&ss, 0, sizeof ss);
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1)
		in->sin_family = AF_INET;
	else {
		cr_assert_eq(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1,
		    "%s", addr);
		in6->sin6_family = AF_INET6;
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	cr_assert_geq(fd, 0, "socket for %s", addr);
	cr_assert_eq(bind(fd, (struct sockaddr *)&ss, ss.ss_family ==
	    AF_INET ? sizeof *in : sizeof *in6), 0, "bind %s", addr);
	if (listening)
		cr_assert_eq(listen(fd, 1), 0, "listen %s", addr);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	*port = ntohs(ss.ss_family == AF_INET ? in->sin_port :
	    in6->sin6_port);
	return fd;
}

/* A child that holds the fds until killed; its pid. */
static pid_t
sock_test_holder(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0, "fork");
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* Kill and reap the holder. */
static void
sock_test_end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The index in ports of port, or -1. */
static int
sock_test_find(const struct sock_port *ports, size_t n, int port)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ports[i].port == port)
			return (int)i;
	return -1;
}

/*
 * The tree's listening sockets, each with where gdb reaches it: loopback
 * as it is, IPv6 loopback bracketed, a wildcard through loopback; a
 * bound socket that does not listen is not one, nor a listening socket
 * only the test holds.
 */
Test(sock, a_trees_listening_ports_and_their_hosts)
{
	struct sock_port	ports[16];
	int			p4, p6, pany, pbound, pmine, fds[4], mine, i;
	size_t			n;
	pid_t			pid;
	int			at;

	fds[0] = sock_test_bound("127.0.0.1", true, &p4);
	fds[1] = sock_test_bound("::1", true, &p6);
	fds[2] = sock_test_bound("0.0.0.0", true, &pany);
	fds[3] = sock_test_bound("127.0.0.1", false, &pbound);
	pid = sock_test_holder();
	for (i = 0; i < 4; i++)
		close(fds[i]);
	mine = sock_test_bound("127.0.0.1", true, &pmine);
	n = sock_listening(pid, 0, ports, 16);
	sock_test_end(pid);
	close(mine);
	cr_assert_eq(n, 3, "expected the 3 listening sockets, got %zu", n);
	cr_assert_geq(at = sock_test_find(ports, n, p4), 0, "127.0.0.1:%d",
	    p4);
	cr_assert_str_eq(ports[at].host, "127.0.0.1");
	cr_assert_geq(at = sock_test_find(ports, n, p6), 0, "[::1]:%d", p6);
	cr_assert_str_eq(ports[at].host, "[::1]");
	cr_assert_geq(at = sock_test_find(ports, n, pany), 0, "0.0.0.0:%d",
	    pany);
	cr_assert_str_eq(ports[at].host, "127.0.0.1");
	cr_assert_lt(sock_test_find(ports, n, pbound), 0, "a socket that "
	    "does not listen");
	cr_assert_lt(sock_test_find(ports, n, pmine), 0, "a socket of "
	    "another process");
}

/* With a port wanted, only that port; a tree with no socket, none. */
Test(sock, a_wanted_port_alone_and_a_tree_without_sockets)
{
	struct sock_port	ports[16];
	int			pa, pb, fa, fb;
	size_t			n;
	pid_t			pid;

	fa = sock_test_bound("127.0.0.1", true, &pa);
	fb = sock_test_bound("127.0.0.1", true, &pb);
	pid = sock_test_holder();
	close(fa);
	close(fb);
	n = sock_listening(pid, pb, ports, 16);
	sock_test_end(pid);
	cr_assert_eq(n, 1, "expected only port %d, got %zu", pb, n);
	cr_assert_eq(ports[0].port, pb);
	pid = sock_test_holder();
	n = sock_listening(pid, 0, ports, 16);
	sock_test_end(pid);
	cr_assert_eq(n, 0, "a tree without sockets: %zu ports", n);
}
