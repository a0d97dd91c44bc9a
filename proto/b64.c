/* Base64 (RFC 4648, with padding) for binary data inside JSON strings. */
#include <stdint.h>
#include <stdlib.h>

#include "b64.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Encode len bytes; a malloc'd NUL-terminated string, NULL if out of memory. */
char *
b64_encode(const unsigned char *in, size_t len)
{
	char		*out, *o;
	uint32_t	 v;
	size_t		 i;

	if ((out = malloc((len + 2) / 3 * 4 + 1)) == NULL)
		return NULL;
	o = out;
	for (i = 0; i + 2 < len; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*o++ = b64_alphabet[v >> 18 & 63];
		*o++ = b64_alphabet[v >> 12 & 63];
		*o++ = b64_alphabet[v >> 6 & 63];
		*o++ = b64_alphabet[v & 63];
	}
	if (i < len) {
		v = (uint32_t)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		*o++ = b64_alphabet[v >> 18 & 63];
		*o++ = b64_alphabet[v >> 12 & 63];
		*o++ = i + 1 < len ? b64_alphabet[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* The value of one base64 digit, or -1. */
static int
b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Decode; a malloc'd buffer and its length, NULL if the text is not base64. */
unsigned char *
b64_decode(const char *in, size_t len, size_t *outlen)
{
	unsigned char	*out;
	uint32_t	 v;
	size_t		 i, n = 0, pad = 0;
	int		 d, k;

	if (len % 4 != 0)
		return NULL;
	if (len > 0 && in[len - 1] == '=')
		pad++;
	if (len > 1 && in[len - 2] == '=')
		pad++;
	if ((out = malloc(len / 4 * 3 + 1)) == NULL)
		return NULL;
	for (i = 0; i < len; i += 4) {
		v = 0;
		for (k = 0; k < 4; k++) {
			d = b64_value(in[i + k]);
			if (d < 0 && !(in[i + k] == '=' && i + 4 == len &&
			    k >= 4 - (int)pad)) {
				free(out);
				return NULL;
			}
			v = v << 6 | (d < 0 ? 0 : (uint32_t)d);
		}
		out[n++] = v >> 16;
		out[n++] = v >> 8 & 255;
		out[n++] = v & 255;
	}
	*outlen = n - pad;
	return out;
}
