/* A daemon on TCP (--connect tcp:HOST:PORT): connect, then present the token. */
#include <sys/socket.h>

#include <netdb.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* The first line of the token file the TCP daemon wants (freed by the caller). */
static char *
tcp_token(void)
{
	const char	*path = getenv("DBGCTL_TOKEN_FILE");
	char		 buf[4096];
	char		*token;
	ssize_t		 n;
	int		 fd;

	if (path == NULL || *path == '\0')
		client_fatal("--connect needs --token-file (or "
		    "DBGCTL_TOKEN_FILE)");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		client_fatal("token file %s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if ((token = strdup(buf)) == NULL)
		client_fatal("out of memory");
	return token;
}

/* Connect to tcp:HOST:PORT and present the token; -1 with errno set. */
int
tcp_open(struct client *c, const char *addr)
{
	struct addrinfo	 hints, *res, *ai;
	const char	*colon = strrchr(addr, ':');
	char		 host[256], *token;
	json_t		*r;
	int		 fd = -1, e;

	if (strncmp(addr, "tcp:", 4) != 0 || colon == NULL || colon < addr + 4 ||
	    (size_t)(colon - addr - 4) >= sizeof host)
		client_fatal("--connect %s: want tcp:HOST:PORT", addr);
	snprintf(host, sizeof host, "%.*s", (int)(colon - addr - 4), addr + 4);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(*host != '\0' ? host : "127.0.0.1", colon + 1,
	    &hints, &res)) != 0)
		client_fatal("--connect %s: %s", addr, gai_strerror(e));
	for (ai = res; ai != NULL && fd == -1; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd != -1 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			e = errno;
			close(fd);
			fd = -1;
			errno = e;
		}
	}
	freeaddrinfo(res);
	if (fd == -1)
		return -1;
	c->fd = fd;
	token = tcp_token();
	r = client_call(c, "hello", json_pack("{s:s}", "token", token));
	free(token);
	if (r == NULL)
		exit(client_error(c));
	json_decref(r);
	return 0;
}
