/* A session stream's output: the recent part in memory, all of it in a log. */
#include <sys/sendfile.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "output.h"
#include "ring.h"

/* A range of the output the log file does not hold: [off, end). */
struct output_gap {
	uint64_t	 off;
	uint64_t	 end;
};

/* The most gaps kept apart; past it the last one grows to cover the new. */
#define OUTPUT_GAPS_MAX 1024

/* A piece this big that the log took is not copied into the ring too. */
#define OUTPUT_RING_BULK (64 * 1024)
/* What one read of an adopted session's log takes to index it again. */
#define OUTPUT_REINDEX_CHUNK (256 * 1024)


/* An output with nothing open, so closing and freeing it are no-ops. */
void
output_init(struct output *o)
{
	memset(o, 0, sizeof *o);
	o->log_fd = -1;
	o->times_fd = -1;
}

/* Create the log file (with its times file beside it) and a ring of ring bytes. */
int
output_open(struct output *o, const char *path, size_t ring, char *err,
    size_t errlen)
{
	o->log_path = xstrdup(path);
	ring_init(&o->ring, ring);
	output_cache_open(o);
	/*
	 * A new session's log is new: anything already there was planted.
	 * Not O_APPEND: bytes go at their stream offset, so a failed write
	 * leaves a hole rather than moving every later byte.
	 */
	o->log_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600);
	if (o->log_fd == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	output_times_open(o);
	return 0;
}



/*
 * Open the log of an adopted session's stream, which goes on at its end:
 * no offset is reused, and the line index is read again from the file. A
 * log that was never made is made now.
 */
int
output_reopen(struct output *o, const char *path, size_t ring, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		*buf;
	uint64_t	 at;
	ssize_t		 n;

	o->log_fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (o->log_fd == -1 && errno == ENOENT)
		return output_open(o, path, ring, err, errlen);
	if (o->log_fd == -1 || fstat(o->log_fd, &st) != 0 ||
	    !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", path, o->log_fd == -1 ||
		    S_ISREG(st.st_mode) ? strerror(errno) : "not a file");
		if (o->log_fd != -1)
			close(o->log_fd);
		o->log_fd = -1;
		return -1;
	}
	o->log_path = xstrdup(path);
	ring_init(&o->ring, ring);
	output_cache_open(o);
	buf = xmalloc(OUTPUT_REINDEX_CHUNK);
	at = output_lines_base(o, (uint64_t)st.st_size);
	while (at < (uint64_t)st.st_size && (n = pread(o->log_fd, buf,
	    OUTPUT_REINDEX_CHUNK, (off_t)at)) > 0) {
		output_lines_add(o, at, buf, (size_t)n);
		at += (uint64_t)n;
	}
	free(buf);
	/* What the file holds is read from it; the ring holds what comes. */
	ring_skip(&o->ring, (size_t)st.st_size);
	output_times_reopen(o);
	return 0;
}

/* Record that the log file lacks [off, end). */
static void
output_gap_add(struct output *o, uint64_t off, uint64_t end)
{
	struct output_gap *last = o->ngaps > 0 ? &o->gaps[o->ngaps - 1] : NULL;

	o->missing += end - off;
	if (last != NULL && (last->end >= off || o->ngaps == OUTPUT_GAPS_MAX)) {
		/* Past the cap, what lies between is counted missing too. */
		o->missing += off - last->end;
		last->end = end;
		return;
	}
	if (o->ngaps % 16 == 0)
		o->gaps = xreallocarray(o->gaps, o->ngaps + 16, sizeof *o->gaps);
	o->gaps[o->ngaps++] = (struct output_gap){ off, end };
}

/* A log write failed at off: say so once, and remember what is missing. */
static void
output_write_failed(struct output *o, uint64_t off, uint64_t end, int error)
{
	if (o->log_error == NULL)
		o->log_error = xstrdup(strerror(error));
	if (!o->failing)
		log_warn("%s: cannot write at offset %llu: %s; the output is "
		    "kept in memory only until the log can be written",
		    o->log_path, (unsigned long long)off, strerror(error));
	o->failing = true;
	output_gap_add(o, off, end);
}

/*
 * How many of len bytes at offset at the log may take under its cap; the
 * rest is a gap, and the first time the daemon log says so.
 */
static size_t
output_cap(struct output *o, uint64_t at, size_t len)
{
	if (o->max == 0 || at + len <= o->max || o->log_fd == -1)
		return len;
	if (o->log_error == NULL) {
		log_warn("%s: the log reached its %llu bytes "
		    "(DBGCTLD_TRANSCRIPT_MAX); later output is kept in memory "
		    "only", o->log_path, (unsigned long long)o->max);
		o->log_error = xstrdup("the log reached its size limit");
	}
	o->failing = true;
	output_gap_add(o, at > o->max ? at : o->max, at + len);
	return at >= o->max ? 0 : (size_t)(o->max - at);
}

/*
 * Write len bytes at offset at to the log; how many it took. A regular
 * file write does not wait on a peer, so it is done in the loop; losing
 * console output would be worse than a slow disk.
 */
static size_t
output_put(struct output *o, uint64_t at, const char *data, size_t len,
    size_t keep)
{
	size_t	done = 0;
	ssize_t	n;

	while (o->log_fd != -1 && done < keep) {
		n = pwrite(o->log_fd, data + done, keep - done, at + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			output_write_failed(o, at + done, at + len,
			    n < 0 ? errno : ENOSPC);
			return done;
		}
		done += n;
	}
	return done;
}

/*
 * Keep bytes in memory too, unless the log took a bulk of them whole and
 * has never missed any: the ring then lets go of what it held, readers
 * read the log instead, and a fast target's every byte is not copied
 * once more. Bytes the log lacks are always kept, while the ring can.
 */
static void
output_ring(struct output *o, const char *data, size_t len, bool logged)
{
	if (logged && len >= OUTPUT_RING_BULK && o->ngaps == 0 &&
	    !o->failing) {
		ring_skip(&o->ring, len);
		return;
	}
	ring_write(&o->ring, data, len);
}

/*
 * What follows bytes at offset at, done of which the log took: the ring
 * keeps them, and a log that took them all is whole again.
 */
static void
output_added(struct output *o, uint64_t at, const char *data, size_t len,
    size_t done)
{
	output_ring(o, data, len, done == len);
	if (done != len)
		return;
	output_cache_trim(o, at + len);
	if (o->failing) {
		o->failing = false;
		log_info("%s: written again from offset %llu; %llu bytes before "
		    "are missing from it", o->log_path,
		    (unsigned long long)at, (unsigned long long)o->missing);
	}
}

/* Keep freshly printed bytes in the ring and the log file, at their offset. */
void
output_add(struct output *o, const char *data, size_t len)
{
	uint64_t	at = o->ring.end;
	size_t		done;

	if (len == 0)
		return;
	/* Written first: what a daemon killed after its read() lost is less. */
	done = output_put(o, at, data, len, output_cap(o, at, len));
	output_lines_add(o, at, data, len);
	output_times_add(o, at);
	output_added(o, at, data, len, done);
}

/* Read up to len bytes of the pipe fd into buf and add them, as before splice. */
static ssize_t
output_splice_read(struct output *o, int fd, char *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		output_add(o, buf, (size_t)n);
	return n;
}

/*
 * Read back into buf the n bytes just spliced at offset at; how many could
 * be. Those that cannot (an I/O error of the log's file system, a log cut
 * short under the daemon) are a gap: readers skip them, said once, and
 * the log is written by read and write from then on.
 */
static size_t
output_splice_back(struct output *o, uint64_t at, char *buf, size_t n)
{
	size_t	got = 0;
	ssize_t	r;

	while (got < n) {
		r = pread(o->log_fd, buf + got, n - got, (off_t)(at + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			log_warn("%s: %zu bytes spliced at %llu cannot be read "
			    "back: %s; they are missing", o->log_path, n - got,
			    (unsigned long long)(at + got), r < 0 ?
			    strerror(errno) : "the file is shorter");
			o->nosplice = true;
			break;
		}
		got += (size_t)r;
	}
	return got;
}

/*
 * Move up to len bytes of the pipe fd into the log at the stream's end,
 * then read them back into buf: the pipe gives up no byte before the log
 * has it, so a daemon killed in between loses none; the next one finds
 * each byte in the log or still in the pipe. A log that cannot take them
 * so (none, failing, at its cap, or no splice on its file system) gets
 * them by read and write. Bytes, 0 at EOF, or -1 with errno (EAGAIN:
 * nothing now).
 */
ssize_t
output_splice(struct output *o, int fd, char *buf, size_t len)
{
	uint64_t	at = o->ring.end;
	loff_t		off = (loff_t)at;
	ssize_t		n;
	size_t		got;

	/* Up to its cap, a capped log takes what it may by splice too. */
	if (o->max != 0 && at < o->max && at + len > o->max)
		len = (size_t)(o->max - at);
	if (len == 0 || o->log_fd == -1 || o->failing || o->nosplice ||
	    (o->max != 0 && at >= o->max))
		return output_splice_read(o, fd, buf, len);
	do
		n = splice(fd, NULL, o->log_fd, &off, len, SPLICE_F_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EINVAL)
		o->nosplice = true;
	/* A log that refuses the bytes: the write path says so and keeps them. */
	if (n < 0 && errno != EAGAIN)
		return output_splice_read(o, fd, buf, len);
	if (n <= 0)
		return n;
	got = output_splice_back(o, at, buf, (size_t)n);
	output_lines_add(o, at, buf, got);
	output_times_add(o, at);
	output_added(o, at, buf, got, got);
	if (got == (size_t)n)
		return n;
	output_gap_add(o, at + got, at + (size_t)n);
	ring_skip(&o->ring, (size_t)n - got);
	if (got > 0)
		return (ssize_t)got;
	errno = EAGAIN;
	return -1;
}

/* The first gap that ends after off, or NULL. */
static const struct output_gap *
output_gap_after(const struct output *o, uint64_t off)
{
	size_t lo = 0, hi = o->ngaps, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (o->gaps[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->ngaps ? &o->gaps[lo] : NULL;
}

/*
 * The first offset from off that the log lacks, so that only the ring may
 * still hold it (a write that failed, the size limit), or the end: what
 * lies before it can be read back. Gaps the log has recovered from count
 * too, for what of them is still unread.
 */
uint64_t
output_unkept(const struct output *o, uint64_t off)
{
	const struct output_gap *g = output_gap_after(o, off);

	if (g == NULL)
		return o->ring.end;
	return g->off > off ? g->off : off;
}

/*
 * Where output that cannot be read from off ends: the end of its gap (or
 * of what memory does not hold), or, if nothing is known to be missing
 * there but the log still gave nothing, the next byte that can be had:
 * a reader skips there and is told, and always moves on.
 */
uint64_t
output_missing(const struct output *o, uint64_t off)
{
	const struct output_gap	*g = output_gap_after(o, off);
	uint64_t		 end = o->ring.end;

	if (o->ring.buf != NULL && ring_start(&o->ring) > off)
		end = ring_start(&o->ring);
	if (g != NULL && g->off <= off && g->end < end)
		end = g->end;
	return end > off ? end : off;
}

/* Where the output's log is, or NULL where it has none. */
const char *
output_path(const struct output *o)
{
	return o->log_path;
}

/* Why its log first failed, or NULL; *missing: the bytes the log lacks. */
const char *
output_error(const struct output *o, uint64_t *missing)
{
	*missing = o->missing;
	return o->log_error;
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
size_t
output_fetch(struct output *o, int *fd, uint64_t off, char *dst, size_t max)
{
	const struct output_gap	*g;
	size_t			 n = 0;
	ssize_t			 r;
	int			 rfd;

	output_cache_read(o, off);
	if (off >= o->ring.end)
		return 0;
	if (max > o->ring.end - off)
		max = o->ring.end - off;
	if (o->ring.buf != NULL && off >= ring_start(&o->ring))
		return ring_read(&o->ring, off, dst, max);
	/* The file has a hole where a write failed: stop before it. */
	if ((g = output_gap_after(o, off)) != NULL) {
		if (g->off <= off)
			return 0;
		if (max > g->off - off)
			max = g->off - off;
	}
	/*
	 * A live stream is read through its writer's descriptor: no open a
	 * read, and none to fail when descriptors run short.
	 */
	rfd = o->log_fd != -1 ? o->log_fd : *fd;
	if (rfd == -1 && (rfd = *fd = open(o->log_path, O_RDONLY | O_CLOEXEC |
	    O_NOFOLLOW)) == -1)
		return 0;
	while (n < max) {
		r = pread(rfd, dst + n, max - n, off + n);
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

/* Whether the log file holds every byte of [off, off + len). */
bool
output_logged(const struct output *o, uint64_t off, size_t len)
{
	return o->log_fd != -1 && off + len <= o->ring.end &&
	    output_unkept(o, off) >= off + len;
}

/*
 * Send [off, off + len) to fd from the log's pages, which the kernel hands
 * on by reference: the bytes are not copied through the daemon again, and
 * go out only once they are in the transcript. How many went (fd, non
 * blocking, may take fewer), or -1 with errno if none did: EINVAL if the
 * log lacks any of them, EIO if its file ends before them; the caller
 * sends the rest itself.
 */
ssize_t
output_send(struct output *o, int fd, uint64_t off, size_t len)
{
	size_t	done = 0;
	off_t	pos = (off_t)off;
	ssize_t	n;

	if (!output_logged(o, off, len)) {
		errno = EINVAL;
		return -1;
	}
	while (done < len) {
		n = sendfile(fd, o->log_fd, &pos, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && done == 0)
			return -1;
		/* A log cut short behind our back: never a spin on nothing. */
		if (n == 0 && done == 0) {
			errno = EIO;
			return -1;
		}
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * The output is complete: close the log and free the ring; size and path
 * stay. A log that lacks the last bytes keeps the ring that has them.
 */
void
output_close(struct output *o)
{
	output_end(o);
	if (o->log_fd != -1)
		close(o->log_fd);
	o->log_fd = -1;
	output_times_close(o);
	if (!o->failing)
		ring_free(&o->ring);
}

/*
 * Its writer is done: no byte follows, which a reader waiting for more
 * or a matcher waiting to settle learns from the stream itself.
 */
void
output_end(struct output *o)
{
	o->ended = true;
}

/* Whether no byte follows what the output has. */
bool
output_ended(const struct output *o)
{
	return o->ended;
}

/* Free what the output holds. */
void
output_free(struct output *o)
{
	output_close(o);
	ring_free(&o->ring);
	free(o->log_path);
	o->log_path = NULL;
	free(o->marks);
	o->marks = NULL;
	o->nmarks = 0;
	free(o->gaps);
	o->gaps = NULL;
	output_cache_free(o);
	o->ngaps = 0;
	free(o->log_error);
	o->log_error = NULL;
}
