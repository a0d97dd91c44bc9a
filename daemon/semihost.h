/*
 * Semihosting (semihost.c): a qemu session's firmware console as the
 * stream semihost, and its SYS_EXIT as the target's exit record.
 */
#ifndef DBGCTL_SEMIHOST_H
#define DBGCTL_SEMIHOST_H

#include "daemon.h"

/* semihost.c: the firmware's semihosting console and exit (qemu). */
bool		 semihost_wanted(const struct session *);
int		 semihost_open(struct session *, char *err, size_t errlen);
void		 semihost_child_fds(const struct session *, int *in, int *out);
char		*semihost_uart_chardev(const struct session *);
int		 semihost_daemon_fd(const struct session *);
void		 semihost_pump(struct session *, int);
void		 semihost_spawned(struct session *);
void		 semihost_target(struct session *, json_t *exit);
bool		 semihost_server_exited(struct session *, int code);
void		 semihost_ready(struct sink *, struct session *,
		    const struct session_event *);
void		 semihost_ended(struct sink *, struct session *,
		    const struct session_event *);

#endif
