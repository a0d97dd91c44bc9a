/*
 * What of a log the page cache keeps: the last few megabytes behind its
 * end and its reader. Older pages are handed to writeback a step at a
 * time and then dropped, so that a transcript of gigabytes recycles a few
 * megabytes of cache instead of growing it by as much: every new page
 * cache page costs an allocation (on a virtual machine, often the host's
 * first touch of it), which made writing the transcript most of a fast
 * target's cost. The calls run on libuv's thread pool, off the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon.h"
#include "output.h"

/* Bytes of a log kept in the page cache behind its end and its reader. */
#define OUTPUT_CACHE_KEEP (16 * 1024 * 1024)
/* The bytes handed to writeback, and dropped, at once. */
#define OUTPUT_CACHE_STEP (2 * 1024 * 1024)
/*
 * Jobs of all logs on the pool at once, at most: a step not handed over
 * goes with the next (the calls are advice), and a disk that writes
 * slowly holds neither the pool's threads nor descriptors without bound.
 */
#define OUTPUT_CACHE_JOBS 4

/* Where a log's window is: what went to writeback, left the cache, is read. */
struct output_cache {
	uint64_t	flushed;	/* handed to writeback below */
	uint64_t	uncached;	/* out of the page cache below */
	uint64_t	wanted;		/* the transport's reader's next byte */
	uint64_t	read_low;	/* the lowest read at in this step */
	uint64_t	read_low_was;	/* and in the step before */
};

/* One step's calls, on a descriptor of its own: the log may close meanwhile. */
struct output_cache_job {
	uv_work_t	work;
	int		fd;
	uint64_t	sync_off;
	uint64_t	sync_len;
	uint64_t	drop_off;
	uint64_t	drop_len;
};

/*
 * Start writeback of one range and drop another from the cache (thread
 * pool). Neither waits for the disk, and neither can lose a byte: the
 * kernel drops only clean pages.
 */
static void
output_cache_work(uv_work_t *w)
{
	struct output_cache_job *j = w->data;

	if (j->sync_len > 0)
		(void)sync_file_range(j->fd, (off_t)j->sync_off,
		    (off_t)j->sync_len, SYNC_FILE_RANGE_WRITE);
	if (j->drop_len > 0)
		(void)posix_fadvise(j->fd, (off_t)j->drop_off,
		    (off_t)j->drop_len, POSIX_FADV_DONTNEED);
	close(j->fd);
}

/* A job has run (or was cancelled at exit): free it. */
static void
output_cache_done(uv_work_t *w, int status)
{
	struct output_cache_job *j = w->data;

	/* A job cancelled at exit never ran, nor closed its descriptor. */
	if (status == UV_ECANCELED)
		close(j->fd);
	dmn.cache_jobs--;
	free(j);
}

/* Give an opened log its window: nothing read, nothing dropped yet. */
void
output_cache_open(struct output *o)
{
	o->cache = xcalloc(1, sizeof *o->cache);
	o->cache->wanted = UINT64_MAX;
	o->cache->read_low = o->cache->read_low_was = UINT64_MAX;
}

/* The transport's reader takes from off next: keep it cached, stalled or not. */
void
output_cache_want(struct output *o, uint64_t off)
{
	if (o->cache != NULL)
		o->cache->wanted = off;
}

/* A reader read at off: what it reads next stays cached while it reads. */
void
output_cache_read(struct output *o, uint64_t off)
{
	if (o->cache != NULL && off < o->cache->read_low)
		o->cache->read_low = off;
}

/* The log is freed: its window goes (jobs on the pool hold their own fd). */
void
output_cache_free(struct output *o)
{
	free(o->cache);
	o->cache = NULL;
}

/* Where the cache may be dropped up to: whole steps behind the window. */
static uint64_t
output_cache_floor(const struct output_cache *c)
{
	uint64_t to;

	if (c->flushed < OUTPUT_CACHE_KEEP)
		return 0;
	to = c->flushed - OUTPUT_CACHE_KEEP;
	if (to > c->wanted)
		to = c->wanted;
	/* Nor what a reader read lately: a subscriber far behind, say. */
	if (to > c->read_low)
		to = c->read_low;
	if (to > c->read_low_was)
		to = c->read_low_was;
	/* Whole steps only: a page cut at either end would stay behind. */
	return to - to % OUTPUT_CACHE_STEP;
}

/*
 * The log holds every byte before end: once a step has filled, hand it
 * to writeback, and drop what was handed over a window ago and no reader
 * still wants. Without a descriptor to spare the cache is left to the
 * kernel, as before.
 */
void
output_cache_trim(struct output *o, uint64_t end)
{
	struct output_cache	*c = o->cache;
	struct output_cache_job	*j;
	uint64_t		 to;
	int			 fd;

	if (c == NULL || end - c->flushed < OUTPUT_CACHE_STEP ||
	    o->log_fd == -1 || dmn.cache_jobs >= OUTPUT_CACHE_JOBS ||
	    (fd = fcntl(o->log_fd, F_DUPFD_CLOEXEC, 0)) == -1)
		return;
	j = xcalloc(1, sizeof *j);
	j->fd = fd;
	j->sync_off = c->flushed;
	j->sync_len = end - c->flushed;
	c->flushed = end;
	if ((to = output_cache_floor(c)) >= c->uncached + OUTPUT_CACHE_STEP) {
		j->drop_off = c->uncached;
		j->drop_len = to - c->uncached;
		c->uncached = to;
	}
	c->read_low_was = c->read_low;
	c->read_low = UINT64_MAX;
	j->work.data = j;
	if (uv_queue_work(dmn.loop, &j->work, output_cache_work,
	    output_cache_done) != 0) {
		close(fd);
		free(j);
		return;
	}
	dmn.cache_jobs++;
}
