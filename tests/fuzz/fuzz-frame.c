/*
 * libFuzzer target: the NDJSON framer (proto/frame.c).
 *
 * The input is a header and a byte stream. The header picks the line limit,
 * how the stream is cut into feeds, which lines the callback stops at (as
 * request.c does when a request switches the connection's mode) and how often
 * the stream repeats (so lines can pass 64 KiB and 1 MiB). However it is cut,
 * the framer must give the lines a one-pass reading of the whole stream gives,
 * each within the limit and NUL-terminated, and overflow exactly where that
 * reading does; a stop consumes through its line's LF, and a dead framer
 * refuses every later feed.
 */
#include <stdbool.h>
#include <string.h>

#include "daemon.h"
#include "fuzz.h"

/* Bytes of header before the stream. */
#define FRAME_FUZZ_HEAD	5

/* Most bytes a repeated stream may grow to. */
#define FRAME_FUZZ_MAX	(2 * FRAME_MAX)

/* A line the one-pass reading found: its offset in the stream, its length. */
struct frame_fuzz_line {
	size_t	off;
	size_t	len;
};

/* The one-pass reading of a stream, and where the framer is in it. */
struct frame_fuzz {
	const char		*stream;
	size_t			 size;
	size_t			 max;
	struct frame_fuzz_line	*lines;
	size_t			 nlines;
	size_t			 cap;
	bool			 overflow;	/* a line is too long */
	size_t			 partial;	/* bytes after the last LF */
	size_t			 seen;		/* lines the framer gave */
	size_t			 every;		/* stop each Nth line (0: no) */
	size_t			 last_end;	/* past the last line's LF */
};

/* Read the stream in one pass, the way the framer's contract says. */
static void
frame_fuzz_oracle(struct frame_fuzz *z)
{
	size_t	 i = 0, n;
	char	*nl;

	while (i < z->size) {
		nl = memchr(z->stream + i, '\n', z->size - i);
		n = (nl != NULL ? (size_t)(nl - z->stream) : z->size) - i;
		/* Content, and a CR that may be stripped, fit in max + 1. */
		if (n > z->max + 1) {
			z->overflow = true;
			return;
		}
		if (nl == NULL) {
			z->partial = n;
			return;
		}
		if (n > 0 && z->stream[i + n - 1] == '\r')
			n--;
		if (n > z->max) {
			z->overflow = true;
			return;
		}
		if (n > 0) {
			if (z->nlines == z->cap) {
				z->cap = z->cap != 0 ? z->cap * 2 : 64;
				z->lines = xreallocarray(z->lines, z->cap,
				    sizeof *z->lines);
			}
			z->lines[z->nlines].off = i;
			z->lines[z->nlines++].len = n;
		}
		i += (size_t)(nl - (z->stream + i)) + 1;
	}
}

/* The framer's callback: each line must be the next the oracle found. */
static int
frame_fuzz_line(void *arg, char *line, size_t len)
{
	struct frame_fuzz		*z = arg;
	const struct frame_fuzz_line	*want;

	fuzz_check(z->seen < z->nlines, "line %zu of %zu", z->seen, z->nlines);
	want = &z->lines[z->seen++];
	fuzz_check(len == want->len, "line %zu: %zu bytes, not %zu", z->seen,
	    len, want->len);
	fuzz_check(len > 0 && len <= z->max, "a line of %zu bytes, max %zu",
	    len, z->max);
	fuzz_check(line[len] == '\0', "line %zu not NUL-terminated", z->seen);
	fuzz_check(memcmp(line, z->stream + want->off, len) == 0,
	    "line %zu differs", z->seen);
	z->last_end = want->off + len;
	if (z->last_end < z->size && z->stream[z->last_end] == '\r')
		z->last_end++;
	z->last_end++;		/* the LF */
	return z->every != 0 && z->seen % z->every == 0 ? 7 : 0;
}

/* A small PRNG for the cuts, seeded from the header. */
static uint32_t
frame_fuzz_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Feed the stream in cuts; returns the last feed's value (0 or overflow). */
static int
frame_fuzz_feed(struct frame_fuzz *z, struct frame *f, uint32_t seed)
{
	static const size_t	 scales[] = { 4, 64, 4096, FRAME_FUZZ_MAX };
	size_t			 scale = scales[seed & 3], off = 0, n;
	uint32_t		 s = seed * 2654435761u | 1;
	int			 rv;

	/* A long stream in fewer, longer cuts: a few thousand feeds at most. */
	if (scale < z->size / 4096)
		scale = z->size / 4096;
	while (off < z->size) {
		n = 1 + frame_fuzz_rand(&s) % scale;
		if (n > z->size - off)
			n = z->size - off;
		rv = frame_feed(f, z->stream + off, n, frame_fuzz_line, z);
		if (rv == FRAME_OVERFLOW)
			return rv;
		fuzz_check(rv == 0 || rv == 7, "frame_feed returned %d", rv);
		if (rv == 7) {
			/* Stopped after a line: the rest is fed again. */
			fuzz_check(f->used > 0 && f->used <= n,
			    "used %zu of %zu", f->used, n);
			fuzz_check(off + f->used == z->last_end,
			    "stopped at %zu, the line ends at %zu",
			    off + f->used, z->last_end);
			off += f->used;
			continue;
		}
		fuzz_check(f->used == n, "used %zu of %zu", f->used, n);
		off += n;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_fuzz	 z = { 0 };
	struct frame		 f;
	const uint8_t		*body = data;
	size_t			 len = size, reps = 1, i, want_max;
	uint32_t		 seed = 0;
	unsigned		 m = 0xffff;
	char			*stream;
	int			 rv;

	if (size >= FRAME_FUZZ_HEAD) {
		m = data[0] | data[1] << 8;
		seed = data[2];
		z.every = data[3] % 8;
		if (data[4] >= 0xf0)
			reps = 1 + (size_t)(data[4] - 0xef) * 64;
		body += FRAME_FUZZ_HEAD;
		len -= FRAME_FUZZ_HEAD;
	}
	if (len == 0)
		reps = 1;
	else if (reps > FRAME_FUZZ_MAX / len)
		reps = FRAME_FUZZ_MAX / len;
	if ((stream = malloc(len * reps + 1)) == NULL)
		return 0;
	for (i = 0; i < reps; i++)
		memcpy(stream + i * len, body, len);
	z.stream = stream;
	z.size = len * reps;
	/* 0xffff: the default (0, FRAME_MAX); else a limit of 1 to 65535. */
	want_max = m == 0xffff ? FRAME_MAX : m + 1;
	z.max = want_max;
	frame_init(&f, m == 0xffff ? 0 : want_max);
	fuzz_check(f.max == want_max, "max %zu, not %zu", f.max, want_max);
	frame_fuzz_oracle(&z);

	rv = frame_fuzz_feed(&z, &f, seed);
	fuzz_check((rv == FRAME_OVERFLOW) == z.overflow,
	    "feed returned %d, the oracle %s", rv,
	    z.overflow ? "overflows" : "does not");
	fuzz_check(z.seen == z.nlines, "%zu lines given, %zu found", z.seen,
	    z.nlines);
	if (z.overflow) {
		fuzz_check(f.dead && f.buf == NULL,
		    "an overflowed framer lives");
		fuzz_check(frame_feed(&f, "x\n", 2, frame_fuzz_line, &z) ==
		    FRAME_OVERFLOW, "a dead framer took more");
	} else {
		fuzz_check(f.len == z.partial, "%zu bytes pending, not %zu",
		    f.len, z.partial);
		fuzz_check(f.len <= f.max + 1, "%zu bytes pending, max %zu",
		    f.len, f.max);
		fuzz_check(f.len == 0 || memcmp(f.buf, stream + z.size - f.len,
		    f.len) == 0, "the pending bytes differ");
	}
	frame_free(&f);
	free(z.lines);
	free(stream);
	return 0;
}
