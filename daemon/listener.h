/* The daemon's listening sockets, for conn.c's accept and whoever opens them. */
#ifndef DBGCTL_LISTENER_H
#define DBGCTL_LISTENER_H

#include "daemon.h"

#include "conn.h"

/* listener.c: listening sockets, each with its way of admitting peers. */
struct listener {
	TAILQ_ENTRY(listener)	 entry;
	union listener_handle	 h;
	bool			 tcp;
	bool			 activated;	/* a service manager's: kept */
	char			*path;		/* Unix: removed at exit */
	const struct conn_mode	*mode;		/* its connections' first */
	/* Whether the peer may use the daemon; err says why not. */
	int			(*auth)(struct listener *, struct conn *,
				    struct rpc_error *);
	uint64_t		 turn;		/* uv_now() of its last accept */
	unsigned		 accepts;	/* made at that time */
	struct timer		*again;		/* takes the client held back */
};

int	 listener_unix(const char *path, const struct conn_mode *, char *err,
	    size_t errlen);
int	 listener_tcp(const char *hostport, const struct conn_mode *,
	    char *err, size_t errlen);
int	 listener_fd(int fd, bool tcp, bool own, const char *addr,
	    const struct conn_mode *, char *err, size_t errlen);
size_t	 listener_fds(int *fds, bool *own, size_t max);
void	 listener_hand_over(void);
void	 listener_close_all(void);
bool	 listener_serves(const struct sockaddr_storage *, socklen_t);

#endif
