/* Hex text for binary data: gdb's MI, QEMU's monitor, the protocol's "hex". */
#include <stdlib.h>

#include "hex.h"

/* The value of one hex digit (either case), or -1. */
int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode len characters of hex, two a byte; a malloc'd buffer and its
 * length, NULL if the text is not whole bytes of hex or out of memory.
 * A digit at a time: a board core's MiB of it is decoded on the loop.
 */
unsigned char *
hex_decode(const char *hex, size_t len, size_t *outlen)
{
	unsigned char	*out;
	size_t		 i;
	int		 hi, lo;

	if (len % 2 != 0 || (out = malloc(len / 2 + 1)) == NULL)
		return NULL;
	for (i = 0; i < len / 2; i++) {
		hi = hex_digit((unsigned char)hex[2 * i]);
		lo = hex_digit((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			free(out);
			return NULL;
		}
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	*outlen = len / 2;
	return out;
}
