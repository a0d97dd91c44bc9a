/*
 * What a local `dbgctl pipe` keeps to ride out a restart of the daemon:
 * the offset of the next target byte it needs, and the last bytes it read
 * from stdin for the target, until the daemon surely has them. The
 * daemon has a byte once it is in the target's input log (target-in); a
 * byte the socket took is there unless it still waits in the socket,
 * which holds at most its send buffer (the kernel counts each byte with
 * its overhead against it, so the data is less, and a last piece may go
 * over it by at most half). So the last PUMP_KEEP_SLACK plus twice the
 * send buffer's bytes are kept: any older byte is in the log, and the
 * next daemon, which says where the log ends, is sent those after it.
 * Should the log end further back (cut short by its size limit) the
 * input cannot go on whole, and the pipe says so and ends (exit 1).
 */
#include <sys/socket.h>

#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"

/* Kept beyond twice the send buffer: what one read of stdin brings. */
#define PUMP_KEEP_SLACK (256 * 1024)

/* Size the ring for sock's send buffer. */
void
pump_keep_init(struct pump_resume *r, int sock)
{
	int		size = 0;
	socklen_t	len = sizeof size;

	if (getsockopt(sock, SOL_SOCKET, SO_SNDBUF, &size, &len) != 0 ||
	    size <= 0)
		size = 4 * 1024 * 1024;
	r->size = 2 * (size_t)size + PUMP_KEEP_SLACK;
	if ((r->keep = malloc(r->size)) == NULL)
		client_fatal("out of memory");
	r->len = r->head = 0;
}

/*
 * Where the next read of stdin goes, at most max bytes of it in *len: the
 * ring's room after its newest byte, so that what is read is kept as it
 * is read, with no copy; it is sent from there before the next read.
 */
char *
pump_keep_room(struct pump_resume *r, size_t max, size_t *len)
{
	*len = r->size - r->head < max ? r->size - r->head : max;
	return r->keep + r->head;
}

/* len bytes were read into the room: kept, and counted. */
void
pump_keep_add(struct pump_resume *r, size_t len)
{
	r->in += len;
	r->head = (r->head + len) % r->size;
	r->len = r->len + len > r->size ? r->size : r->len + len;
}

/*
 * The next daemon's input log ends at in: what was read after it is to be
 * sent again, first (r->again). -1 if it ends before what is kept.
 */
int
pump_keep_again(struct pump_resume *r, uint64_t in)
{
	size_t	want, start, n;

	free(r->again);
	r->again = NULL;
	r->again_len = 0;
	/* Bytes others wrote meanwhile: the input log is past this pipe's. */
	if (in >= r->in) {
		r->in = in;
		return 0;
	}
	if (r->in - in > r->len)
		return -1;
	want = (size_t)(r->in - in);
	if ((r->again = malloc(want)) == NULL)
		client_fatal("out of memory");
	start = (r->head + r->size - want) % r->size;
	n = r->size - start < want ? r->size - start : want;
	memcpy(r->again, r->keep + start, n);
	memcpy(r->again + n, r->keep, want - n);
	r->again_len = want;
	return 0;
}

/* Let go of what was kept. */
void
pump_keep_free(struct pump_resume *r)
{
	free(r->keep);
	free(r->again);
	r->keep = r->again = NULL;
}
