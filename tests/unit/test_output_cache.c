/*
 * Unit tests of output-cache.c: which pages of a log the page cache keeps
 * once it is tens of megabytes long, seen with mincore(2) on a log of
 * ext4 (or whatever the temporary directory is on), on a real loop.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* A log's size in the tests, and the pieces it is written in. */
#define OC_MIB		(1024 * 1024)
#define OC_SIZE		(40 * OC_MIB)
#define OC_PIECE	(256 * 1024)

/* An output with a log in a temporary directory, on an empty daemon. */
static void
oc_open(struct output *o, char *dir)
{
	char		path[4200], err[256];
	struct statfs	fs;

	memset(&dmn, 0, sizeof dmn);
	dmn.loop = uv_default_loop();
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof path, "%s/log", dir);
	if (statfs(dir, &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
		rmdir(dir);
		cr_skip_test("%s is on tmpfs, whose pages never leave memory",
		    dir);
	}
	output_init(o);
	cr_assert_eq(output_open(o, path, OUTPUT_RING_SIZE, err, sizeof err),
	    0, "%s", err);
}

/*
 * Write OC_SIZE bytes, the first half made clean on disk before the
 * second is written (so that a drop is not skipped for a dirty page); a
 * reader at reader_at (or none, at UINT64_MAX) reads between pieces.
 * Then let the pool's jobs end.
 */
static void
oc_fill(struct output *o, uint64_t reader_at)
{
	char	*buf = malloc(OC_PIECE), small[64];
	size_t	 at;

	memset(buf, 'x', OC_PIECE);
	for (at = 0; at < OC_SIZE; at += OC_PIECE) {
		if (at == OC_SIZE / 2)
			cr_assert_eq(fsync(o->log_fd), 0);
		output_add(o, buf, OC_PIECE);
		if (reader_at != UINT64_MAX)
			(void)output_read(o, reader_at, small, sizeof small);
		uv_run(dmn.loop, UV_RUN_NOWAIT);
	}
	uv_run(dmn.loop, UV_RUN_DEFAULT);
	cr_assert_eq(dmn.cache_jobs, 0, "jobs left on the pool");
	free(buf);
}

/* Whether the page of the log at off is in the page cache. */
static bool
oc_cached(struct output *o, uint64_t off)
{
	long		 page = sysconf(_SC_PAGESIZE);
	unsigned char	 vec;
	void		*map;

	map = mmap(NULL, OC_SIZE, PROT_READ, MAP_SHARED, o->log_fd, 0);
	cr_assert_neq(map, MAP_FAILED, "mmap: %s", strerror(errno));
	cr_assert_eq(mincore((char *)map + off - off % page, page, &vec), 0,
	    "mincore: %s", strerror(errno));
	munmap(map, OC_SIZE);
	return vec & 1;
}

/* Close the output and remove its directory. */
static void
oc_close(struct output *o, const char *dir)
{
	char path[4200];

	snprintf(path, sizeof path, "%s/log", dir);
	output_free(o);
	unlink(path);
	snprintf(path, sizeof path, "%s/log.times", dir);
	unlink(path);
	rmdir(dir);
}

/* With no reader behind, what is 16 MiB behind the end leaves the cache. */
Test(output_cache, old_pages_leave_the_cache)
{
	char		dir[] = "/tmp/dbgctl-oc.XXXXXX";
	struct output	o;

	oc_open(&o, dir);
	oc_fill(&o, UINT64_MAX);
	cr_assert(!oc_cached(&o, 10 * OC_MIB), "the page at 10 MiB of a "
	    "40 MiB log, clean and read by none, is still cached");
	cr_assert(oc_cached(&o, OC_SIZE - OC_MIB), "the last pages left the "
	    "cache");
	oc_close(&o, dir);
}

/*
 * A reader far behind (a subscriber on a slow link) keeps what it reads
 * and everything after it in the cache, so that its next reads never wait
 * for the disk in the loop.
 */
Test(output_cache, a_reader_far_behind_keeps_its_pages_cached)
{
	char		dir[] = "/tmp/dbgctl-oc.XXXXXX";
	struct output	o;

	oc_open(&o, dir);
	oc_fill(&o, 2 * OC_MIB);
	cr_assert(oc_cached(&o, 2 * OC_MIB), "the page the reader reads left "
	    "the cache");
	cr_assert(oc_cached(&o, 10 * OC_MIB), "a page after the reader left "
	    "the cache");
	oc_close(&o, dir);
}
