/* fdpass.c: bytes and descriptors in one message (daemon, keeper, client). */
#ifndef DBGCTL_FDPASS_H
#define DBGCTL_FDPASS_H

#include <sys/types.h>

#include <stddef.h>

/* The most descriptors one message carries: a keeper's held ones. */
#define FDPASS_MAX	16

ssize_t	 fdpass_send(int sock, const void *buf, size_t len, const int *fds,
	    size_t nfd);

#endif
