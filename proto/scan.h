/* scan.c: a pull reader of JSON text that builds no tree (client and daemon). */
#ifndef SCAN_H
#define SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct scan {
	const char	*p;
	const char	*end;
	bool		 bad;	/* the text is not JSON as expected */
};

void	 scan_init(struct scan *, const char *, size_t);
bool	 scan_take(struct scan *, char);
char	 scan_peek(struct scan *);
char	*scan_string(struct scan *);
bool	 scan_int(struct scan *, long long *);
bool	 scan_plain(struct scan *, const char **, size_t *);
bool	 scan_done(struct scan *);
bool	 scan_word(struct scan *, const char *);
size_t	 scan_utf8_len(const char *, const char *);
bool	 scan_skip(struct scan *);
char	*scan_member(struct scan *, bool *first);
bool	 scan_element(struct scan *, bool *first);

/*
 * Whether any of the eight bytes in w may end a plain run of a JSON
 * string: one with its high bit, below 0x20, '"' or '\\' (the
 * has-less-than and has-zero word tricks, which never miss one). Inline:
 * the reader and the writer skip a string's plain runs a word at a time.
 */
static inline bool
scan_word_stops(uint64_t w)
{
	const uint64_t	ones = 0x0101010101010101ULL, high = ones << 7;
	const uint64_t	q = w ^ (ones * '"'), b = w ^ (ones * '\\');

	return ((w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
	    ((b - ones) & ~b)) & high) != 0;
}

#endif
