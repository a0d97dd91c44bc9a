/* Writing to libuv streams: what the peer takes at once, a copy of the rest. */
#include <string.h>

#include "daemon.h"

/* One queued write and whom to tell when it is done. */
struct stream_write {
	uv_write_t	 req;
	stream_done_cb	 done;
	void		*arg;
	char		 data[];
};

/* A queued write finished (or was cancelled): free it and tell its writer. */
static void
stream_write_cb(uv_write_t *req, int status)
{
	struct stream_write *w = (struct stream_write *)req;

	if (w->done != NULL)
		w->done(w->arg, status);
	free(w);
}

/*
 * Write len bytes: what the stream takes at once is not copied; the rest is
 * copied and queued, and done(arg, status) is called once it is written.
 * Returns 0, 1 if everything went out at once (done is not called), or a
 * negative libuv error.
 */
int
stream_write(uv_stream_t *st, const char *data, size_t len,
    stream_done_cb done, void *arg)
{
	struct stream_write	*w;
	uv_buf_t		 buf;
	int			 n, rc;

	buf = uv_buf_init((char *)data, len);
	n = len > 0 && stream_queued(st) == 0 ? uv_try_write(st, &buf, 1) : 0;
	if (n == UV_EPIPE || n == UV_EBADF || n == UV_ENOTCONN)
		return n;
	if (n > 0) {
		data += n;
		len -= n;
		if (len == 0)
			return 1;
	}
	w = xmalloc(sizeof *w + len);
	memcpy(w->data, data, len);
	w->done = done;
	w->arg = arg;
	buf = uv_buf_init(w->data, len);
	if ((rc = uv_write(&w->req, st, &buf, 1, stream_write_cb)) != 0) {
		free(w);
		return rc;
	}
	return 0;
}

/* Bytes queued on a stream but not yet written. */
size_t
stream_queued(uv_stream_t *st)
{
	return uv_stream_get_write_queue_size(st);
}
