/* NDJSON framing: split a byte stream into lines of at most FRAME_MAX bytes. */
#ifndef DBGCTL_FRAME_H
#define DBGCTL_FRAME_H

#include <stddef.h>

/* Content bytes a line may hold, not counting its LF or a CR before it. */
#define FRAME_MAX (1024 * 1024)

struct frame {
	char	*buf;		/* bytes of the unfinished line */
	size_t	 len;
	size_t	 cap;
	size_t	 max;		/* content limit, FRAME_MAX unless testing */
	int	 dead;		/* a line overflowed; every later feed fails */
	int	 cuts;		/* a line past max is cut, not fatal (frame_cut) */
	int	 cut;		/* the line handed over now is a cut one */
	int	 skipping;	/* dropping the rest of a cut line, up to its LF */
	size_t	 used;		/* bytes the last feed consumed (a stop leaves the rest) */
};

/*
 * Called once per complete, non-blank line; line is NUL-terminated at len,
 * with the LF and one trailing CR removed. A non-zero return stops the feed
 * and is returned by frame_feed (the rest of the data stays unconsumed).
 */
typedef int (*frame_line_cb)(void *arg, char *line, size_t len);

void	frame_init(struct frame *, size_t max);
void	frame_free(struct frame *);
void	frame_trim(struct frame *);
/* Inside a callback only: its line's buffer, now the caller's to free. */
char	*frame_take(struct frame *);
/*
 * From now on a line longer than max is handed over cut to its first max
 * bytes, with f->cut set during the call, and the rest of it is dropped up
 * to its LF: one overlong line costs one call, and the stream goes on.
 */
void	frame_cut(struct frame *);
/* Returns 0, FRAME_OVERFLOW when a line exceeds max (never after frame_cut), or the callback's value. */
int	frame_feed(struct frame *, const char *data, size_t len,
	    frame_line_cb cb, void *arg);
#define FRAME_OVERFLOW (-1000)

#endif
