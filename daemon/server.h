/* A managed server, seen in /proc to listen before a debugger connects. */
#ifndef DBGCTL_SERVER_H
#define DBGCTL_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct session;
struct session_proc;
struct timer;

/* server.c: a managed server, seen in /proc to listen before gdb connects. */
/* The readiness hook: the server listens on host:port. */
typedef void (*server_ready_cb)(struct session *, const char *host, int port);

/* Embedded in its kind's state, so declared here; its fields are server.c's. */
struct server {
	struct session		*s;
	struct session_proc	*proc;		/* NULL: no server */
	int			 port;		/* the one wanted, 0: any */
	char			 argv[1024];	/* the server's, for status */
	struct timer		*look;
	uint64_t		 deadline;
	unsigned		 pause;		/* ms before the next look */
	bool			 bound;		/* fd listens */
	int			 fd;
	int			 extra_fds[PROC_EXTRA_FDS]; /* given at spawn, or -1 */
	bool			 listening;
	server_ready_cb		 ready;
};

int	 server_free_port(char *err, size_t errlen);
int	 server_bind(struct server *, int port, char *err, size_t errlen);
int	 server_start(struct server *, struct session *, char **argv, int port,
	    server_ready_cb, char *err, size_t errlen);
bool	 server_started(struct server *, struct session_proc *);
bool	 server_adopted(struct server *, struct session_proc *);
void	 server_status(const struct server *, json_t *);
void	 server_close(struct server *);
void	 server_init(struct server *);
bool	 server_managed(const struct server *);
bool	 server_bound(const struct server *);
bool	 server_up(const struct server *);
bool	 server_exited(const struct server *);
int	 server_port(const struct server *);

#endif
