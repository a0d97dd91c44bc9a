/* The sockets a service manager passed, for main.c and their fuzz test. */
#ifndef DBGCTL_ACTIVATE_H
#define DBGCTL_ACTIVATE_H

#include "daemon.h"

struct conn_mode;

/* activate.c: the listening sockets a service manager passed (LISTEN_FDS). */
/* The most sockets taken from a service manager. */
#define ACTIVATE_MAX 16
/* The name (LISTEN_FDNAMES) of a socket a replaced daemon made itself. */
#define ACTIVATE_OWN "dbgctld-own"

struct activate_fd {
	int	 fd;
	bool	 tcp;
	bool	 own;		/* a daemon's, handed over */
	char	 name[64];	/* from LISTEN_FDNAMES, for messages, or "" */
	char	 addr[128];	/* a Unix socket's path, or TCP's HOST:PORT */
};

struct activate {
	size_t			 n;
	struct activate_fd	 fds[ACTIVATE_MAX];
};

int		 activate_parse(struct activate *, const char *pid,
		    const char *fds, const char *names, pid_t self, char *err,
		    size_t errlen);
int		 activate_take(struct activate *, char *err, size_t errlen);
bool		 activate_managed(const struct activate *);
const char	*activate_unix(const struct activate *);
bool		 activate_tcp(const struct activate *, char *buf, size_t len);
int		 activate_listen(const struct activate *,
		    const struct conn_mode *, char *err, size_t errlen);

#endif
