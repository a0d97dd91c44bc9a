/* A session's console output: the recent part in memory, all of it in a log. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* Create the log file and the ring. */
int
output_open(struct output *o, const char *path, char *err, size_t errlen)
{
	o->log_path = xstrdup(path);
	ring_init(&o->ring, OUTPUT_RING_SIZE);
	/* A new session's log is new: anything already there was planted. */
	o->log_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
	    O_CLOEXEC | O_NOFOLLOW, 0600);
	if (o->log_fd == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Keep freshly printed bytes in the ring and the log file. */
void
output_add(struct output *o, const char *data, size_t len)
{
	size_t	done = 0;
	ssize_t	n;

	if (o->ring.buf != NULL)
		ring_write(&o->ring, data, len);
	/*
	 * A regular file write does not wait on a peer, so it is done in the
	 * loop; losing console output would be worse than a slow disk.
	 */
	while (o->log_fd != -1 && done < len) {
		n = write(o->log_fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_warn("%s: %s", o->log_path, strerror(errno));
			break;
		}
		done += n;
	}
}

/* Bytes of console output so far. */
uint64_t
output_size(const struct output *o)
{
	return o->ring.end;
}

/*
 * Copy output from offset off, from memory if held, else from the log
 * through *fd, which is opened on first need and left for the caller.
 */
static size_t
output_fetch(struct output *o, int *fd, uint64_t off, char *dst, size_t max)
{
	size_t	n = 0;
	ssize_t	r;

	if (off >= o->ring.end)
		return 0;
	if (max > o->ring.end - off)
		max = o->ring.end - off;
	if (o->ring.buf != NULL && off >= ring_start(&o->ring))
		return ring_read(&o->ring, off, dst, max);
	if (*fd == -1 && (*fd = open(o->log_path, O_RDONLY | O_CLOEXEC |
	    O_NOFOLLOW)) == -1)
		return 0;
	while (n < max) {
		r = pread(*fd, dst + n, max - n, off + n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	return n;
}

/* Copy output from offset off, from memory if held, else from the log. */
size_t
output_read(struct output *o, uint64_t off, char *dst, size_t max)
{
	size_t	n;
	int	fd = -1;

	n = output_fetch(o, &fd, off, dst, max);
	if (fd != -1)
		close(fd);
	return n;
}

/* The offset where the last `lines` lines begin, looking back at most `max`. */
uint64_t
output_tail_offset(struct output *o, unsigned long lines, uint64_t max)
{
	char		*buf;
	uint64_t	 pos = o->ring.end, start, found = 0;
	uint64_t	 floor = o->ring.end > max ? o->ring.end - max : 0;
	size_t		 n, i, chunk = 65536;
	int		 fd = -1;
	bool		 done = false;

	if (lines == 0)
		return o->ring.end;
	buf = xmalloc(chunk);
	/* The scan reads in the loop: it never goes below the floor. */
	while (!done && pos > floor) {
		start = pos - floor > chunk ? pos - chunk : floor;
		n = output_fetch(o, &fd, start, buf, pos - start);
		if (n != pos - start)
			break;
		for (i = n; i > 0 && !done; i--) {
			/* A final newline ends the last line, it does not start one. */
			if (buf[i - 1] != '\n' || start + i == o->ring.end)
				continue;
			if (--lines == 0) {
				found = start + i;
				done = true;
			}
		}
		pos = start;
	}
	if (fd != -1)
		close(fd);
	free(buf);
	return done ? found : pos;
}

/* The output is complete: close the log and free the ring; size and path stay. */
void
output_close(struct output *o)
{
	if (o->log_fd != -1)
		close(o->log_fd);
	o->log_fd = -1;
	ring_free(&o->ring);
}

/* Free what the output holds. */
void
output_free(struct output *o)
{
	output_close(o);
	free(o->log_path);
	o->log_path = NULL;
}
