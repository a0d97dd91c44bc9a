/*
 * What the debugger kinds (the gdb family's files, backend-lldb.c) and
 * method-reset.c tell session-target.c of a session's target: its state,
 * its breakpoints, its program's runs and its faults; no other file calls it.
 */
#ifndef DBGCTL_SESSION_TARGET_H
#define DBGCTL_SESSION_TARGET_H

#include "daemon.h"

/* session-target.c */
void			 session_target(struct session *, json_t *);
void			 session_breakpoint(struct session *, json_t *);
void			 session_target_run(struct session *, bool);
void			 session_fault(struct session *, json_t *);
void			 session_fault_clear(struct session *, const char *by);

#endif
