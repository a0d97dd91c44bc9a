/*
 * RTT (Real-Time Transfer) channels as streams (rtt.c): a target's control
 * block, found in its shared RAM, polled over live memory (live.h) at a
 * rate the client sets; each up-channel a stream rtt0..rtt3, each
 * down-channel written by write on the stream of the same number.
 */
#ifndef DBGCTL_RTT_H
#define DBGCTL_RTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon.h"

/* The poll rate when none is asked, and the most one may ask (Hz). */
#define RTT_HZ_DEFAULT	100
#define RTT_HZ_MAX	1000
/* The most bytes one poll takes from one up-channel. */
#define RTT_TAKE_MAX	(64 * 1024)
/* The most bytes waiting for room in a down-channel. */
#define RTT_DOWN_QUEUE	(64 * 1024)

int		 rtt_start(struct session *, bool has_addr, uint64_t addr,
		    unsigned hz, struct rpc_error *);
int		 rtt_write(struct session *, unsigned channel, const char *,
		    size_t, struct rpc_error *);
bool		 rtt_stream(const char *name, unsigned *channel);
void		 rtt_record(struct sink *, struct session *,
		    const struct session_event *);

#endif
