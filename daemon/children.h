/* children.c: a process's children, as /proc lists them. */
#ifndef DBGCTL_CHILDREN_H
#define DBGCTL_CHILDREN_H

#include <sys/types.h>

#include <stddef.h>

pid_t	*children_of(pid_t, size_t *n);
pid_t	*children_of_single(pid_t, size_t *n);
char	*children_decimal(long, char *);
char	*children_proc_path(char *, size_t, pid_t, const char *);

#endif
