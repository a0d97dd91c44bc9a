/*
 * When each piece of a stream arrived: a file of fixed records beside the
 * stream's log (ID.log beside ID.times, ID.target.log beside
 * ID.target.times), each the offset of a piece's first byte and the unix
 * time it was read. Records are batched in memory and written together,
 * so timing every piece costs one write per OUTPUT_TIMES_BUF of them.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "output.h"

/* When a piece of output arrived: its first byte's offset, unix seconds. */
struct output_time {
	uint64_t	 off;
	double		 at;
};

/* Arrival records kept in memory before they are written out. */
#define OUTPUT_TIMES_BUF 256
/* Most arrival records one logs reply carries. */
#define OUTPUT_TIMES_MAX 4096

/* The times file's path beside the log's, in path; false if there is none. */
bool
output_times_path(const struct output *o, char *path, size_t size)
{
	size_t n = o->log_path != NULL ? strlen(o->log_path) : 0;

	if (n < 4 || strcmp(o->log_path + n - 4, ".log") != 0 ||
	    n - 4 + sizeof ".times" > size)
		return false;
	memcpy(path, o->log_path, n - 4);
	strlcpy(path + n - 4, ".times", size - (n - 4));
	return true;
}

/* Open the times file that goes with the stream's log; without it, no times. */
void
output_times_open(struct output *o)
{
	char path[PATH_MAX + 64];

	o->times_fd = -1;
	if (!output_times_path(o, path, sizeof path))
		return;
	o->times_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600);
	if (o->times_fd == -1)
		log_warn("%s: %s; the stream's arrival times are not kept",
		    path, strerror(errno));
}

/*
 * Open the times file of an adopted session's stream, to go on after the
 * records it has (those a dead daemon had not yet written are lost, and
 * the bytes they timed have none).
 */
void
output_times_reopen(struct output *o)
{
	char		path[PATH_MAX + 64];
	struct stat	st;

	o->times_fd = -1;
	if (!output_times_path(o, path, sizeof path))
		return;
	o->times_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (o->times_fd == -1 || fstat(o->times_fd, &st) != 0) {
		log_warn("%s: %s; the stream's arrival times are not kept",
		    path, strerror(errno));
		if (o->times_fd != -1)
			close(o->times_fd);
		o->times_fd = -1;
		return;
	}
	o->ntimes = (uint64_t)st.st_size / sizeof *o->tbuf;
}

/* Write the batched records at their place; a failed write drops them. */
static void
output_times_flush(struct output *o)
{
	size_t	len = o->ntbuf * sizeof *o->tbuf, done = 0;
	off_t	at = (off_t)(o->ntimes * sizeof *o->tbuf);
	ssize_t	n;

	if (o->times_fd == -1 || o->ntbuf == 0)
		return;
	while (done < len) {
		n = pwrite(o->times_fd, (char *)o->tbuf + done, len - done,
		    at + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_warn("%s: times: %s; no more are kept", o->log_path,
			    n < 0 ? strerror(errno) : "short write");
			close(o->times_fd);
			o->times_fd = -1;
			o->ntbuf = 0;
			return;
		}
		done += n;
	}
	o->ntimes += o->ntbuf;
	o->ntbuf = 0;
}

/* A piece of output starting at off arrived now. */
void
output_times_add(struct output *o, uint64_t off)
{
	/* Past its log's limit, no more is kept of the stream on disk. */
	if (o->times_fd == -1 || (o->max > 0 && off >= o->max))
		return;
	/* Sessions that never print cost no buffer. */
	if (o->tbuf == NULL)
		o->tbuf = xreallocarray(NULL, OUTPUT_TIMES_BUF,
		    sizeof *o->tbuf);
	o->tbuf[o->ntbuf++] = (struct output_time){ off, loop_now() };
	if (o->ntbuf == OUTPUT_TIMES_BUF)
		output_times_flush(o);
}

/* Record number i from the file fd, or false. */
static bool
output_times_record(int fd, uint64_t i, struct output_time *t)
{
	ssize_t n;

	do
		n = pread(fd, t, sizeof *t, (off_t)(i * sizeof *t));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof *t;
}

/* The index of the last record whose piece starts at or before off. */
static uint64_t
output_times_find(const struct output *o, int fd, uint64_t off)
{
	struct output_time	t;
	uint64_t		lo = 0, hi = o->ntimes, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (!output_times_record(fd, mid, &t))
			return lo;
		if (t.off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * [[offset, time], ...] for the piece holding off and every piece that
 * starts before end, at most OUTPUT_TIMES_MAX of them; empty without times.
 */
json_t *
output_times_get(struct output *o, uint64_t off, uint64_t end)
{
	json_t			*a = json_array();
	struct output_time	 t;
	char			 path[PATH_MAX + 64];
	uint64_t		 i;
	int			 fd;

	output_times_flush(o);
	/* A live stream's records are read through its writer's descriptor. */
	if (o->ntimes == 0)
		return a;
	if ((fd = o->times_fd) == -1 && (!output_times_path(o, path,
	    sizeof path) || (fd = open(path, O_RDONLY | O_CLOEXEC |
	    O_NOFOLLOW)) == -1))
		return a;
	for (i = output_times_find(o, fd, off); i < o->ntimes &&
	    json_array_size(a) < OUTPUT_TIMES_MAX; i++) {
		if (!output_times_record(fd, i, &t) || (t.off >= end &&
		    json_array_size(a) > 0))
			break;
		json_array_append_new(a, json_pack("[I, f]", (json_int_t)t.off,
		    t.at));
	}
	if (fd != o->times_fd)
		close(fd);
	return a;
}

/* Write what is batched and close the file; the records stay readable. */
void
output_times_close(struct output *o)
{
	output_times_flush(o);
	if (o->times_fd != -1)
		close(o->times_fd);
	o->times_fd = -1;
	free(o->tbuf);
	o->tbuf = NULL;
}
