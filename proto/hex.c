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

/* Each byte's value as a hex digit plus one, 0 for none: a lookup a digit. */
static const unsigned char hex_value[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
	['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * Decode len characters of hex, two a byte; a malloc'd buffer and its
 * length, NULL if the text is not whole bytes of hex or out of memory.
 * A digit at a time: a board core's MiB of it is decoded on the loop.
 */
unsigned char *
hex_decode(const char *hex, size_t len, size_t *outlen)
{
	const unsigned char	*in = (const unsigned char *)hex;
	unsigned char		*out;
	size_t			 i;
	int			 hi, lo;

	if (len % 2 != 0 || (out = malloc(len / 2 + 1)) == NULL)
		return NULL;
	for (i = 0; i < len / 2; i++) {
		hi = hex_value[in[2 * i]] - 1;
		lo = hex_value[in[2 * i + 1]] - 1;
		if ((hi | lo) < 0) {
			free(out);
			return NULL;
		}
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	*outlen = len / 2;
	return out;
}
