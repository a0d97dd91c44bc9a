/*
 * The launch files' own: what launch.c (the params read into a struct
 * launch) asks of launch-check.c (what the types alone do not say), and
 * launch-check.c of launch-program.c (the program found as gdb finds it).
 */
#ifndef DBGCTL_LAUNCH_H
#define DBGCTL_LAUNCH_H

#include "daemon.h"

/* launch-check.c */
int	 launch_check(const struct launch *, json_t *params,
	    struct rpc_error *);

/* launch-program.c */
int	 launch_program_check(const struct launch *, struct rpc_error *);

#endif
