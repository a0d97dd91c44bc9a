/* The TCP ports a process tree listens on, read from /proc. */
#ifndef DBGCTL_SOCK_H
#define DBGCTL_SOCK_H

#include <sys/types.h>

#include <stddef.h>

/* sock.c: the TCP ports a process tree listens on, from /proc. */
struct sock_port {
	int	 port;
	char	 host[64];	/* where gdb reaches it */
};

size_t	 sock_listening(pid_t root, int port, struct sock_port *, size_t);

#endif
