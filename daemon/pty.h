/* A pseudo-terminal pair, every descriptor close-on-exec. */
#ifndef DBGCTL_PTY_H
#define DBGCTL_PTY_H

#include <stdbool.h>
#include <stddef.h>

/* pty.c: a pseudo-terminal pair, every fd close-on-exec. */
int	 pty_open(int *master, int *slave, char *pts, size_t ptslen, bool raw,
	    char *err, size_t errlen);

#endif
