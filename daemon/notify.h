/*
 * Subscriptions: notify.c's session.* notifications and tap.c's reader of a
 * session's target output, for the methods and requests that start and
 * end them.
 */
#ifndef DBGCTL_NOTIFY_H
#define DBGCTL_NOTIFY_H

#include "daemon.h"

/* notify.c: subscriptions, as sinks on every session. */
void	 notify_subscribe(struct conn *, unsigned long id, unsigned streams);
int	 notify_unsubscribe(struct conn *, unsigned long id);
void	 notify_forget(struct conn *);
void	 notify_drained(struct conn *);

/* tap.c: a subscriber that reads a session's target output. */
int	 tap_start(struct conn *, struct session *, struct rpc_error *);
void	 tap_stop(struct conn *, struct session *);
void	 tap_drained(struct conn *);

#endif
