/* Base64 (RFC 4648, with padding) for binary data inside JSON strings. */
#ifndef DBGCTL_B64_H
#define DBGCTL_B64_H

#include <stddef.h>

/* Encode len bytes; a malloc'd NUL-terminated string, NULL if out of memory. */
char		*b64_encode(const unsigned char *, size_t len);
/* Decode; a malloc'd buffer and its length, NULL if the text is not base64. */
unsigned char	*b64_decode(const char *, size_t len, size_t *outlen);

#endif
