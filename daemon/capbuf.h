/* A debugger command's output, capped for its reply. */
#ifndef DBGCTL_CAPBUF_H
#define DBGCTL_CAPBUF_H

#include <stdbool.h>
#include <stddef.h>

/* capbuf.c: a debugger command's output, capped for its reply. */
#define EXEC_OUTPUT_MAX (512 * 1024)
/* What a reply's text ends with when its output was cut (not counted). */
#define CAPBUF_CUT_MARK "\n[output cut]\n"

struct capbuf {
	char	*p;		/* NUL-terminated, or NULL */
	size_t	 len;
	bool	 cut;		/* more came than EXEC_OUTPUT_MAX */
};

void	 capbuf_add(struct capbuf *, const char *, size_t);
void	 capbuf_lost(struct capbuf *);
void	 capbuf_mark(struct capbuf *);
void	 capbuf_free(struct capbuf *);

#endif
