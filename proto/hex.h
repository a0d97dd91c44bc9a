/* Hex text for binary data: gdb's MI, QEMU's monitor, the protocol's "hex". */
#ifndef DBGCTL_HEX_H
#define DBGCTL_HEX_H

#include <stddef.h>

/* The value of one hex digit (either case), or -1. */
int		 hex_digit(int);
/*
 * Decode len characters of hex, two a byte; a malloc'd buffer and its
 * length, NULL if the text is not whole bytes of hex or out of memory.
 */
unsigned char	*hex_decode(const char *, size_t len, size_t *outlen);

#endif
