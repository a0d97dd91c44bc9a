/*
 * An output's line index: its line feeds counted as bytes come, with a
 * mark every OUTPUT_MARK_BYTES, so that finding where the last lines of a
 * log begin reads one stretch of it, however long the log is.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "output.h"

/* A point of the output: how many line feeds come before offset off. */
struct output_mark {
	uint64_t	 off;
	uint64_t	 nl;
};

/* One mark each this many bytes, so a tail lookup scans no more. */
#define OUTPUT_MARK_BYTES 65536

/* The sum of the eight bytes of x, each at most 255. */
static uint64_t
output_lines_sum(uint64_t x)
{
	const uint64_t	lo8 = 0x00ff00ff00ff00ffULL;

	x = (x & lo8) + ((x >> 8) & lo8);
	return (x * 0x0001000100010001ULL) >> 48;
}

/*
 * The line feeds in len bytes, eight at a time: a memchr a line feed cost
 * most of the daemon's time on output like yes(1)'s, one every two bytes.
 * A byte of x is zero exactly where its bit 7 ends up set (before the
 * shift), so each word adds one to each byte of acc that was a line feed;
 * the bytes of acc are summed once every 255 words, before one can carry.
 * No popcount, which is a library call without -mpopcnt.
 */
static uint64_t
output_lines_count(const char *p, size_t len)
{
	const uint64_t	lo7 = 0x7f7f7f7f7f7f7f7fULL;
	const uint64_t	lf = 0x0a0a0a0a0a0a0a0aULL;
	uint64_t	n = 0, acc, w, x;
	size_t		i = 0, k, words;

	while (len - i >= 8) {
		/* A count of words known before the loop: it vectorises. */
		words = (len - i) / 8 < 255 ? (len - i) / 8 : 255;
		acc = 0;
		for (k = 0; k < words; k++) {
			memcpy(&w, p + i + k * 8, 8);
			x = w ^ lf;
			acc += ~(((x & lo7) + lo7) | x | lo7) >> 7;
		}
		i += words * 8;
		n += output_lines_sum(acc);
	}
	for (; i < len; i++)
		n += p[i] == '\n';
	return n;
}

/* Append the mark at offset at, nl line feeds before it. */
static void
output_lines_mark(struct output *o, uint64_t at, uint64_t nl)
{
	if (o->nmarks % 64 == 0)
		o->marks = xreallocarray(o->marks, o->nmarks + 64,
		    sizeof *o->marks);
	o->marks[o->nmarks++] = (struct output_mark){ at, nl };
}

/*
 * Where indexing an adopted session's log of size bytes begins: no tail
 * lookup looks back further than OUTPUT_TAIL_SCAN_MAX, so only that much
 * of a long log is read again (at a mark's boundary, counted from there),
 * and an adoption's cost does not grow with the log.
 */
uint64_t
output_lines_base(struct output *o, uint64_t size)
{
	uint64_t base;

	if (size <= OUTPUT_TAIL_SCAN_MAX)
		return 0;
	base = (size - OUTPUT_TAIL_SCAN_MAX) / OUTPUT_MARK_BYTES *
	    OUTPUT_MARK_BYTES;
	output_lines_mark(o, base, 0);
	return base;
}

/* Count the line feeds of data into the index, marking each boundary it crosses. */
void
output_lines_add(struct output *o, uint64_t at, const char *data, size_t len)
{
	const char	*p = data, *end = data + len;
	uint64_t	 next;
	size_t		 part;

	while (p < end) {
		next = (at / OUTPUT_MARK_BYTES + 1) * OUTPUT_MARK_BYTES;
		part = (size_t)(next - at) < (size_t)(end - p) ?
		    (size_t)(next - at) : (size_t)(end - p);
		o->nl += output_lines_count(p, part);
		p += part;
		at += part;
		if (at == next)
			output_lines_mark(o, at, o->nl);
	}
	if (len > 0)
		o->last = data[len - 1];
}

/*
 * Where line feed number k (from 1) of the output is, found from the index
 * with one read of at most OUTPUT_MARK_BYTES: the last mark before it, and
 * a scan from there. UINT64_MAX if the bytes cannot be read.
 */
static uint64_t
output_lines_find(struct output *o, uint64_t k)
{
	struct output_mark	 from = { 0, 0 };
	size_t			 lo = 0, hi = o->nmarks, mid, n, i;
	char			*buf;
	uint64_t		 to, found = UINT64_MAX;
	int			 fd = -1;

	/* The last mark with fewer than k line feeds before it. */
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (o->marks[mid].nl < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0)
		from = o->marks[lo - 1];
	to = lo < o->nmarks ? o->marks[lo].off : o->ring.end;
	buf = xmalloc(to - from.off);
	n = output_fetch(o, &fd, from.off, buf, to - from.off);
	for (i = 0; i < n; i++)
		if (buf[i] == '\n' && ++from.nl == k) {
			found = from.off + i;
			break;
		}
	if (fd != -1)
		close(fd);
	free(buf);
	return found;
}

/*
 * The offset where the last `lines` lines begin, looking back at most
 * `max`: from the line feed index, so its cost does not grow with the log.
 */
uint64_t
output_lines_tail(struct output *o, unsigned long lines, uint64_t max)
{
	uint64_t	floor = o->ring.end > max ? o->ring.end - max : 0;
	uint64_t	nl = o->nl, at;

	if (lines == 0)
		return o->ring.end;
	/* A final line feed ends the last line, it does not start one. */
	if (o->last == '\n')
		nl--;
	if (nl < lines)
		return floor;
	at = output_lines_find(o, nl - lines + 1);
	if (at == UINT64_MAX || at + 1 < floor)
		return floor;
	return at + 1;
}
