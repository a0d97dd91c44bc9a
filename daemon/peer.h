/* TCP peers before the token: for the listener, the rpc mode and hello. */
#ifndef DBGCTL_PEER_H
#define DBGCTL_PEER_H

#include "daemon.h"

/* peer.c: TCP peers that have not presented the token yet. */
/* Its time to present the token unless DBGCTLD_AUTH_TIMEOUT. */
#define PEER_TIMEOUT_DEFAULT 10000

void			 peer_init(long long timeout_ms);
int			 peer_token_load(const char *path, char *err,
			    size_t errlen);
int			 peer_admit(struct conn *, struct rpc_error *);
int			 peer_line(struct conn *, const char *, struct rpc_error *);
bool			 peer_token(struct conn *, const char *);
enum method_return	 peer_refuse(struct request *);

#endif
