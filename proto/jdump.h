/* jdump.c: compact JSON written as jansson writes it, a run of plain bytes at a time. */
#ifndef DBGCTL_JDUMP_H
#define DBGCTL_JDUMP_H

#include <stddef.h>

#include <jansson.h>

int	 jdump(const json_t *, json_dump_callback_t, void *);
int	 jdump_string(const char *, size_t, json_dump_callback_t, void *);

#endif
