/* A fixed-size window onto the most recent bytes of a console. */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "ring.h"

/*
 * Make an empty ring of cap bytes; its memory comes with the first byte,
 * so a session that never prints costs none.
 */
void
ring_init(struct ring *r, size_t cap)
{
	r->buf = NULL;
	r->cap = cap;
	r->end = 0;
	r->from = 0;
}

/* Release the ring's memory; the count of bytes written stays. */
void
ring_free(struct ring *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = 0;
}

/* Append bytes, overwriting the oldest when full. */
void
ring_write(struct ring *r, const char *data, size_t len)
{
	size_t at, n;

	if (r->cap == 0 || len == 0)
		return;		/* freed: the count alone is kept */
	if (r->buf == NULL)
		r->buf = xmalloc(r->cap);
	if (len > r->cap) {
		r->end += len - r->cap;
		data += len - r->cap;
		len = r->cap;
	}
	while (len > 0) {
		at = r->end % r->cap;
		n = r->cap - at;
		if (n > len)
			n = len;
		memcpy(r->buf + at, data, n);
		r->end += n;
		data += n;
		len -= n;
	}
}

/* Count bytes written without keeping them: what was held goes too. */
void
ring_skip(struct ring *r, size_t len)
{
	if (r->cap == 0)
		return;		/* freed: as ring_write */
	r->end += len;
	r->from = r->end;
}

/* The stream offset of the oldest byte still held. */
uint64_t
ring_start(const struct ring *r)
{
	uint64_t start = r->end > r->cap ? r->end - r->cap : 0;

	return start > r->from ? start : r->from;
}

/* Copy bytes from stream offset off; 0 if off is not held (or at the end). */
size_t
ring_read(const struct ring *r, uint64_t off, char *dst, size_t max)
{
	size_t	at, n, done = 0;

	if (off < ring_start(r) || off >= r->end)
		return 0;
	if (max > r->end - off)
		max = r->end - off;
	while (done < max) {
		at = (off + done) % r->cap;
		n = r->cap - at;
		if (n > max - done)
			n = max - done;
		memcpy(dst + done, r->buf + at, n);
		done += n;
	}
	return done;
}
