/*
 * The args files' own: what args-suggest.c and args-param.c ask of
 * args.c, which no other file calls.
 */
#ifndef DBGCTL_ARGS_H
#define DBGCTL_ARGS_H

#include "dbgctl.h"

/* args.c */
void	*args_array(size_t n, size_t size);
int	 args_short(const struct args *, int i);

#endif
