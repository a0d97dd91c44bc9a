/* dial-stdio's connection, for conn.c and the method that takes it. */
#ifndef DBGCTL_DIAL_H
#define DBGCTL_DIAL_H

#include "daemon.h"

/* dial.c: a connection served from the stdin and stdout dial-stdio passed. */
int	 dial_take(struct conn *);
bool	 dial_untaken(struct conn *);
void	 dial_settle(struct conn *, uv_stream_t *, ssize_t,
	    const uv_buf_t *);
int	 dial_check(struct conn *, struct rpc_error *);
void	 dial_start(struct conn *);
bool	 dial_out_gone(struct conn *);
void	 dial_close(struct conn *);

#endif
