/*
 * A recording's files in the state dir: the empty qcow2 image a
 * recording starts from, and the bounded copies a session keeps of what
 * it must not see change under it (a replay's image, which QEMU writes
 * to; a recording's firmware, which a rebuild would replace). A source
 * is opened once, without blocking (a FIFO would hold the loop), and
 * judged by what that descriptor is: a regular file within the bound.
 * A bundle's image is also refused if its qcow2 header names a backing
 * file, which QEMU would open: a bundle may come from anyone.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "replay.h"

/* The qcow2 image QEMU saves its starting snapshot in: four clusters. */
#define REPLAY_FILE_CLUSTER 65536
/* A qcow2 header's magic, and where its backing file's offset is. */
#define REPLAY_FILE_QCOW2_MAGIC "QFI\xfb"
#define REPLAY_FILE_BACKING_AT 8

/* Write all of buf to fd, through short writes and signals; errno if not. */
static int
replay_file_write(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read up to len bytes of fd, through signals; the count, or -1. */
static ssize_t
replay_file_read(int fd, void *buf, size_t len)
{
	ssize_t n;

	while ((n = read(fd, buf, len)) == -1 && errno == EINTR)
		;
	return n;
}

/* Close fd after writing it: its error (a full disk shows late) in err. */
static int
replay_file_close(int fd, const char *path, char *err, size_t errlen)
{
	if (close(fd) != 0 && errno != EINTR) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Write the empty qcow2 image (version 3, 64 KiB clusters, 1 MiB) at path. */
int
replay_file_image_new(const char *path, char *err, size_t errlen)
{
	static unsigned char	 img[4 * REPLAY_FILE_CLUSTER];
	/* magic, version 3, cluster_bits 16, size 1 MiB, l1_size 1, ... */
	static const unsigned char hdr[] = {
		'Q', 'F', 'I', 0xfb, 0, 0, 0, 3,
		0, 0, 0, 0, 0, 0, 0, 0,		/* no backing file */
		0, 0, 0, 0, 0, 0, 0, 16,	/* its size, cluster_bits */
		0, 0, 0, 0, 0, 0x10, 0, 0,	/* 1 MiB */
		0, 0, 0, 0, 0, 0, 0, 1,		/* no encryption; l1_size */
		0, 0, 0, 0, 0, 3, 0, 0,		/* L1 table: cluster 3 */
		0, 0, 0, 0, 0, 1, 0, 0,		/* refcount table: cluster 1 */
		0, 0, 0, 1, 0, 0, 0, 0,		/* its clusters; no snapshot */
		0, 0, 0, 0, 0, 0, 0, 0,		/* snapshots' offset */
		0, 0, 0, 0, 0, 0, 0, 0,		/* incompatible features */
		0, 0, 0, 0, 0, 0, 0, 0,		/* compatible features */
		0, 0, 0, 0, 0, 0, 0, 0,		/* autoclear features */
		0, 0, 0, 4, 0, 0, 0, 104,	/* refcount order, header length */
	};
	int	 fd, i;

	memset(img, 0, sizeof img);
	memcpy(img, hdr, sizeof hdr);
	/* The refcount table's one block, in cluster 2. */
	img[REPLAY_FILE_CLUSTER + 5] = 2;
	/* Clusters 0 to 3 (header, refcount table and block, L1) are used once. */
	for (i = 0; i < 4; i++)
		img[2 * REPLAY_FILE_CLUSTER + 2 * i + 1] = 1;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (replay_file_write(fd, img, sizeof img) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return replay_file_close(fd, path, err, errlen);
}

/* Whether fd (at its start) is a qcow2 image with no backing file; why not in err. */
static int
replay_file_qcow2(int fd, const char *src, char *err, size_t errlen)
{
	unsigned char	 hdr[REPLAY_FILE_BACKING_AT + 8];
	uint64_t	 backing = 0;
	ssize_t		 n;
	int		 i;

	if ((n = replay_file_read(fd, hdr, sizeof hdr)) == -1) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		return -1;
	}
	if (n != (ssize_t)sizeof hdr || memcmp(hdr, REPLAY_FILE_QCOW2_MAGIC,
	    4) != 0) {
		snprintf(err, errlen, "%s is not a qcow2 image", src);
		return -1;
	}
	for (i = 0; i < 8; i++)
		backing = backing << 8 | hdr[REPLAY_FILE_BACKING_AT + i];
	if (backing != 0) {
		snprintf(err, errlen, "%s names a backing file, which QEMU "
		    "would open: a recording's image never does", src);
		return -1;
	}
	if (lseek(fd, 0, SEEK_SET) == -1) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		return -1;
	}
	return 0;
}

/* Open src for a copy: a regular file of at most REPLAY_MAX_FILE bytes. */
static int
replay_file_open_src(const char *src, int flags, char *err, size_t errlen)
{
	struct stat	 st;
	int		 fd, oflags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;

	if (!(flags & REPLAY_FILE_FOLLOW))
		oflags |= O_NOFOLLOW;
	if ((fd = open(src, oflags)) == -1) {
		snprintf(err, errlen, "%s: %s%s", src, strerror(errno),
		    errno == ELOOP ? " (a symbolic link is refused)" : "");
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", src);
		close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size > REPLAY_MAX_FILE) {
		snprintf(err, errlen, "%s is %lld bytes, over the %llu a "
		    "recording's image or firmware may have", src,
		    (long long)st.st_size, (unsigned long long)REPLAY_MAX_FILE);
		close(fd);
		return -1;
	}
	if ((flags & REPLAY_FILE_QCOW2) && replay_file_qcow2(fd, src, err,
	    errlen) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Copy in's bytes to out, REPLAY_MAX_FILE at most (a file growing meanwhile). */
static int
replay_file_pump(int in, int out, const char *src, const char *dst, char *err,
    size_t errlen)
{
	char		 buf[65536];
	uint64_t	 total = 0;
	ssize_t		 n;

	while ((n = replay_file_read(in, buf, sizeof buf)) > 0) {
		if ((total += (uint64_t)n) > REPLAY_MAX_FILE) {
			snprintf(err, errlen, "%s grew over %llu bytes while "
			    "it was copied", src,
			    (unsigned long long)REPLAY_MAX_FILE);
			return -1;
		}
		if (replay_file_write(out, buf, (size_t)n) != 0) {
			snprintf(err, errlen, "cannot copy %s to %s: %s", src,
			    dst, strerror(errno));
			return -1;
		}
	}
	if (n == -1) {
		snprintf(err, errlen, "cannot read %s: %s", src,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Copy src to dst (made anew, 0600), bounded by REPLAY_MAX_FILE; flags
 * REPLAY_FILE_FOLLOW lets src be a symbolic link, REPLAY_FILE_QCOW2
 * wants a qcow2 image without a backing file. On failure dst is gone.
 */
int
replay_file_copy(const char *src, const char *dst, int flags, char *err,
    size_t errlen)
{
	int in, out, rc;

	if ((in = replay_file_open_src(src, flags, err, errlen)) == -1)
		return -1;
	if ((out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		close(in);
		return -1;
	}
	rc = replay_file_pump(in, out, src, dst, err, errlen);
	close(in);
	if (rc != 0)
		close(out);
	else
		rc = replay_file_close(out, dst, err, errlen);
	if (rc != 0)
		unlink(dst);
	return rc;
}

/* A copy on the threadpool, for a session that waits for it to start. */
struct replay_file_job {
	uv_work_t		 work;
	struct session		*s;
	char			*src;
	char			*dst;
	int			 flags;
	int			 rc;
	int			 err;
	char			 why[2 * PATH_MAX + 128];
	replay_copied_cb	 cb;
};

/* On the threadpool: the copy, as replay_file_copy makes it. */
static void
replay_file_job_work(uv_work_t *w)
{
	struct replay_file_job *j = w->data;

	j->rc = replay_file_copy(j->src, j->dst, j->flags, j->why,
	    sizeof j->why);
	j->err = j->rc != 0 ? errno : 0;
}

/* Back on the loop: the session hears how the copy went. */
static void
replay_file_job_done(uv_work_t *w, int status)
{
	struct replay_file_job *j = w->data;

	if (status != 0 && j->rc == 0) {
		j->rc = -1;
		j->err = -status;
		snprintf(j->why, sizeof j->why, "cannot copy %s: %s", j->src,
		    uv_strerror(status));
	}
	j->cb(j->s, j->err, j->rc != 0 ? j->why : NULL);
	session_unref(j->s);
	free(j->src);
	free(j->dst);
	free(j);
}

/*
 * replay_file_copy on the threadpool, since up to REPLAY_MAX_FILE bytes
 * would hold every other session's I/O: cb(s, 0, NULL) once dst is made,
 * or cb(s, errno, why); s is kept until then, whatever happens to it.
 */
void
replay_file_copy_async(struct session *s, const char *src, const char *dst,
    int flags, replay_copied_cb cb)
{
	struct replay_file_job *j = xcalloc(1, sizeof *j);

	j->s = s;
	session_ref(s);
	j->src = xstrdup(src);
	j->dst = xstrdup(dst);
	j->flags = flags;
	j->cb = cb;
	j->work.data = j;
	if (uv_queue_work(dmn.loop, &j->work, replay_file_job_work,
	    replay_file_job_done) != 0)
		log_fatal("session %lu: cannot queue the copy of %s", s->id,
		    src);
}
