/* A connection served from its client's stdin and stdout (dial, mi). */
#ifndef DBGCTL_DIAL_H
#define DBGCTL_DIAL_H

#include "daemon.h"

/* dial.c: a connection served from the stdin and stdout its client passed. */
int	 dial_take(struct conn *);
bool	 dial_untaken(struct conn *);
void	 dial_settle(struct conn *, uv_stream_t *, ssize_t,
	    const uv_buf_t *);
int	 dial_check(struct conn *, const char *who, struct rpc_error *);
void	 dial_start(struct conn *, uv_read_cb on_sock);
void	 dial_sock_end_cb(uv_stream_t *, ssize_t, const uv_buf_t *);
bool	 dial_out_gone(struct conn *);
void	 dial_close(struct conn *);

#endif
