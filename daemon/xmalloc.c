/* Allocation that cannot fail: out of memory is an impossible state here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"
#include "daemon.h"

/* Allocate n bytes, or abort. */
void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		log_fatal("out of memory for %zu bytes", n);
	return p;
}

/* Allocate n zeroed members of size bytes, or abort. */
void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if ((p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		log_fatal("out of memory for %zu x %zu bytes", n, size);
	return p;
}

/* Resize p to n members of size bytes, or abort. */
void *
xreallocarray(void *p, size_t n, size_t size)
{
	void *q;

	if ((q = reallocarray(p, n == 0 ? 1 : n, size == 0 ? 1 : size)) == NULL)
		log_fatal("out of memory for %zu x %zu bytes", n, size);
	return q;
}

/* Copy a string, or abort. */
char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		log_fatal("out of memory for a string");
	return p;
}

/* Bytes as base64 text (freed by the caller), or abort. */
char *
xb64_encode(const char *data, size_t len)
{
	char *text;

	if ((text = b64_encode((const unsigned char *)data, len)) == NULL)
		log_fatal("out of memory for base64");
	return text;
}

/* Format into a new string, or abort; returns its length. */
int
xvasprintf(char **out, const char *fmt, va_list ap)
{
	int n;

	if ((n = vasprintf(out, fmt, ap)) < 0)
		log_fatal("out of memory formatting \"%s\"", fmt);
	return n;
}

/* Format into a new string, or abort; returns its length. */
int
xasprintf(char **out, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = xvasprintf(out, fmt, ap);
	va_end(ap);
	return n;
}
