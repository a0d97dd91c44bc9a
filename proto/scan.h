/* scan.c: a pull reader of JSON text that builds no tree (client and daemon). */
#ifndef SCAN_H
#define SCAN_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
