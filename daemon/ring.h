/* A ring's functions (struct ring is daemon.h's, as struct output holds one). */
#ifndef DBGCTL_RING_H
#define DBGCTL_RING_H

#include <stddef.h>
#include <stdint.h>

struct ring;

void	 ring_init(struct ring *, size_t cap);
void	 ring_free(struct ring *);
void	 ring_write(struct ring *, const char *, size_t);
void	 ring_skip(struct ring *, size_t);
uint64_t ring_start(const struct ring *);
size_t	 ring_read(const struct ring *, uint64_t off, char *, size_t);

#endif
