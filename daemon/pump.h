/*
 * pump.c: the daemon's end of a keeper's pump, a pipe spliced into a log;
 * what console.c and semihost.c read a keeper's copy of their source from.
 */
#ifndef DBGCTL_PUMP_H
#define DBGCTL_PUMP_H

#include "daemon.h"

/* Bytes one read of a pump's pipe takes while draining. */
#define PUMP_CHUNK	65536

/* Bytes of the pipe, now in the log at offset at; len 0: its end. */
typedef void (*pump_cb)(void *arg, const char *data, size_t len,
    uint64_t at);

struct pump;

struct pump	*pump_open(int fd, struct output *, pump_cb, void *arg);
ssize_t		 pump_read(struct pump *, char *, size_t);
void		 pump_drain(struct pump *, size_t *total, size_t max);
bool		 pump_ended(const struct pump *);
void		 pump_close(struct pump *);

#endif
