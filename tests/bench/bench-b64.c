/* Base64 (RFC 4648, padded), for the data of write, read and logs. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

static const char b64_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Encode len bytes; a NUL-terminated string to free. */
char *
b64_encode(const void *data, size_t len)
{
	const unsigned char	*p = data;
	char			*out, *o;
	unsigned long		 v;
	size_t			 i;

	if ((out = o = malloc((len + 2) / 3 * 4 + 1)) == NULL)
		abort();
	for (i = 0; i + 2 < len; i += 3) {
		v = (unsigned long)p[i] << 16 | p[i + 1] << 8 | p[i + 2];
		*o++ = b64_chars[v >> 18 & 63];
		*o++ = b64_chars[v >> 12 & 63];
		*o++ = b64_chars[v >> 6 & 63];
		*o++ = b64_chars[v & 63];
	}
	if (i < len) {
		v = (unsigned long)p[i] << 16 |
		    (i + 1 < len ? p[i + 1] << 8 : 0);
		*o++ = b64_chars[v >> 18 & 63];
		*o++ = b64_chars[v >> 12 & 63];
		*o++ = i + 1 < len ? b64_chars[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* How many bytes a padded base64 text of this length holds. */
size_t
b64_size(const char *text, size_t len)
{
	size_t n = len / 4 * 3;

	if (len >= 1 && text[len - 1] == '=')
		n--;
	if (len >= 2 && text[len - 2] == '=')
		n--;
	return n;
}

/* Decode text into out (room for b64_size bytes); the bytes written. */
size_t
b64_decode(const char *text, unsigned char *out)
{
	unsigned long	 v = 0;
	size_t		 n = 0;
	const char	*c;
	int		 bits = 0;

	for (; *text != '\0' && *text != '='; text++) {
		if ((c = strchr(b64_chars, *text)) == NULL)
			continue;
		v = v << 6 | (unsigned long)(c - b64_chars);
		if ((bits += 6) >= 8) {
			bits -= 8;
			out[n++] = (unsigned char)(v >> bits);
		}
	}
	return n;
}
