/* children.c: a process's children, as /proc lists them. */
#ifndef DBGCTL_CHILDREN_H
#define DBGCTL_CHILDREN_H

#include <sys/types.h>

#include <stddef.h>

size_t	children_of(pid_t, pid_t *pids, size_t n, size_t max);

#endif
