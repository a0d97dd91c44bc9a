/* NDJSON framing: split a byte stream into lines of at most f->max bytes. */
#include <stdlib.h>
#include <string.h>

#include "frame.h"

/* Smallest buffer allocated for a partial line. */
#define FRAME_MIN_CAP	4096

/* Above this size an idle buffer is released rather than kept around. */
#define FRAME_KEEP_CAP	(64 * 1024)

/* Prepare f for a stream whose lines hold at most max bytes (0: FRAME_MAX). */
void
frame_init(struct frame *f, size_t max)
{
	memset(f, 0, sizeof *f);
	f->max = max != 0 ? max : FRAME_MAX;
}

/* Release the buffer of f; it must be initialized again before reuse. */
void
frame_free(struct frame *f)
{
	free(f->buf);
	f->buf = NULL;
	f->len = 0;
	f->cap = 0;
}

/* Release the buffer of f while it holds no partial line; f stays usable. */
void
frame_trim(struct frame *f)
{
	if (f->len != 0)
		return;
	free(f->buf);
	f->buf = NULL;
	f->cap = 0;
}

/*
 * Hand over the buffer holding the line a callback is given, to be freed
 * by the taker: a large reply is kept without a copy; f starts a new one.
 */
char *
frame_take(struct frame *f)
{
	char *line = f->buf;

	f->buf = NULL;
	f->cap = 0;
	return line;
}

/* Make room for need bytes in the buffer of f; -1 if memory ran out. */
static int
frame_reserve(struct frame *f, size_t need)
{
	size_t	 cap;
	char	*p;

	if (need <= f->cap)
		return 0;
	cap = f->cap != 0 ? f->cap : FRAME_MIN_CAP;
	while (cap < need)
		cap *= 2;
	/* A line never needs more than max content, a CR and a NUL. */
	if (cap > f->max + 2 && need <= f->max + 2)
		cap = f->max + 2;
	if ((p = realloc(f->buf, cap)) == NULL)
		return -1;
	f->buf = p;
	f->cap = cap;
	return 0;
}

/* Append n bytes to the partial line of f; -1 if memory ran out. */
static int
frame_append(struct frame *f, const char *p, size_t n)
{
	if (n == 0)
		return 0;
	if (frame_reserve(f, f->len + n + 1) != 0)
		return -1;
	memcpy(f->buf + f->len, p, n);
	f->len += n;
	return 0;
}

/* Mark f dead after an overflow (or ENOMEM) and drop what it buffered. */
static int
frame_overflow(struct frame *f)
{
	f->dead = 1;
	frame_free(f);
	return FRAME_OVERFLOW;
}

/* Cut lines past max rather than fail the stream (see frame.h). */
void
frame_cut(struct frame *f)
{
	f->cuts = 1;
}

/*
 * Hand over the first max bytes of an overlong line, n more of which are at
 * p, as a cut line; the callback's value.
 */
static int
frame_cut_line(struct frame *f, const char *p, size_t n, frame_line_cb cb,
    void *arg)
{
	int rv;

	if (f->len > f->max)
		f->len = f->max;
	if (frame_append(f, p, f->max - f->len < n ? f->max - f->len : n) != 0)
		return frame_overflow(f);	/* out of memory */
	f->buf[f->max] = '\0';
	f->len = 0;
	f->cut = 1;
	rv = cb(arg, f->buf, f->max);
	f->cut = 0;
	return rv;
}

/* Split data into lines, calling cb for every complete non-blank line. */
int
frame_feed(struct frame *f, const char *data, size_t len, frame_line_cb cb,
    void *arg)
{
	const char	*p = data, *end = data + len, *nl;
	size_t		 n, total;
	int		 rv;

	if (f->dead)
		return FRAME_OVERFLOW;
	while (p < end) {
		nl = memchr(p, '\n', end - p);
		n = (nl != NULL ? nl : end) - p;
		if (f->skipping) {
			/* The rest of a cut line: gone up to its LF. */
			f->skipping = nl == NULL;
			p = nl != NULL ? nl + 1 : end;
			continue;
		}
		/*
		 * The buffered part never holds an LF, so only the new bytes
		 * are scanned: every byte is looked at once. More than
		 * max + 1 bytes (content and a CR) can never make a line.
		 */
		total = f->len + n;
		if (total > f->max + 1 && !f->cuts)
			return frame_overflow(f);
		if (total > f->max + 1) {
			rv = frame_cut_line(f, p, n, cb, arg);
			f->skipping = nl == NULL;
			p = nl != NULL ? nl + 1 : end;
			if (rv != 0) {
				f->used = p - data;
				return rv;
			}
			continue;
		}
		if (frame_append(f, p, n) != 0)
			return frame_overflow(f);	/* out of memory */
		if (nl == NULL)
			break;
		p = nl + 1;

		if (f->len > 0 && f->buf[f->len - 1] == '\r')
			f->len--;
		if (f->len > f->max && f->cuts) {
			if ((rv = frame_cut_line(f, p, 0, cb, arg)) != 0) {
				f->used = p - data;
				return rv;
			}
			continue;
		}
		if (f->len > f->max)
			return frame_overflow(f);
		if (f->len == 0)
			continue;
		n = f->len;
		f->buf[n] = '\0';
		f->len = 0;
		if ((rv = cb(arg, f->buf, n)) != 0) {
			f->used = p - data;
			return rv;
		}
	}
	f->used = len;
	if (f->len == 0 && f->cap > FRAME_KEEP_CAP) {
		free(f->buf);
		f->buf = NULL;
		f->cap = 0;
	}
	return 0;
}
