/*
 * What one debugger command printed, for its exec reply: kept up to
 * EXEC_OUTPUT_MAX bytes, the rest cut, and the reply says so.
 */
#include <string.h>

#include "daemon.h"
#include "capbuf.h"

/* Add text, as far as the cap allows; NUL-terminated after. */
void
capbuf_add(struct capbuf *b, const char *text, size_t len)
{
	if (b->cut)
		return;
	if (b->len + len > EXEC_OUTPUT_MAX) {
		b->cut = true;
		len = EXEC_OUTPUT_MAX - b->len;
	}
	b->p = xreallocarray(b->p, b->len + len + 1, 1);
	memcpy(b->p + b->len, text, len);
	b->len += len;
	b->p[b->len] = '\0';
}

/* Text meant for the buffer was lost: it ends here, and says it was cut. */
void
capbuf_lost(struct capbuf *b)
{
	b->cut = true;
}

/* If it was cut, end the text with CAPBUF_CUT_MARK, past the cap. */
void
capbuf_mark(struct capbuf *b)
{
	size_t n = strlen(CAPBUF_CUT_MARK);

	if (!b->cut)
		return;
	b->p = xreallocarray(b->p, b->len + n + 1, 1);
	memcpy(b->p + b->len, CAPBUF_CUT_MARK, n + 1);
	b->len += n;
	b->cut = false;		/* said once */
}

/* Free what the buffer holds. */
void
capbuf_free(struct capbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}
