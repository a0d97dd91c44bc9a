/*
 * Leases: sessions that live as long as the connection that launched
 * them, or their client's claim, for launch, adoption and holds.
 */
#ifndef DBGCTL_LEASE_H
#define DBGCTL_LEASE_H

#include "daemon.h"

/* lease.c: sessions that live as long as the connection that launched them. */
void	 lease_add(struct session *, struct conn *, long grace_ms);
void	 lease_token_new(struct launch *);
void	 lease_token_load(struct launch *, const char *);
int	 lease_claim(struct session *, struct conn *, const char *token,
	    struct rpc_error *);
bool	 lease_held_by(const struct session *, const struct conn *);

#endif
