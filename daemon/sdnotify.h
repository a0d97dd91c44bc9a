/*
 * Telling a service manager (NOTIFY_SOCKET) how the daemon is, for its
 * start, its stop and a replace.
 */
#ifndef DBGCTL_SDNOTIFY_H
#define DBGCTL_SDNOTIFY_H

#include "daemon.h"

/* sdnotify.c: telling a service manager (NOTIFY_SOCKET) how the daemon is. */
struct sdnotify;

void	 sdnotify_init(void);
void	 sdnotify_ready(void);
void	 sdnotify_stopping(void);
const char *sdnotify_socket(void);
void	 sdnotify_mainpid(pid_t);

#endif
