/*
 * A bundle's files, written into its directory on libuv's threadpool so
 * the loop never waits on a disk: texts the daemon has in memory, copies
 * of log files (sendfile, a bounded chunk at a time), and files already
 * there (a core) weighed against the bundle's size bound. What the bound
 * leaves out is listed: a log keeps its last bytes, a core goes whole or
 * not at all. Every file is new, 0600, made by openat in the directory
 * the daemon made and holds, never through a link. A file that cannot be
 * written there (a full disk) ends the pass: the bundle cannot be whole.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "bundle.h"

/* Bytes one sendfile on the threadpool copies at most. */
#define BUNDLE_FILES_CHUNK (4 * 1024 * 1024)

/* Where an item is. */
enum bundle_files_step {
	BF_OPEN_SRC,
	BF_STAT,
	BF_OPEN_DST,
	BF_COPY,
	BF_WRITE,
	BF_CLOSE_SRC,
	BF_CLOSE_DST,
	BF_UNLINK,
};

/* One file of the bundle to write. */
struct bundle_item {
	TAILQ_ENTRY(bundle_item) entry;
	char		*name;		/* in the bundle's directory */
	char		*src;		/* a copy's source, or NULL */
	char		*data;		/* a text's bytes, or NULL */
	size_t		 len;
	bool		 counted;	/* weighs against the bound */
	bool		 existing;	/* already there: only weighed */
	bool		 whole;		/* a text kept whole or left out */
};

struct bundle_files {
	char			*dir;		/* for messages */
	int			 dirfd;		/* where files are made */
	uint64_t		 max;		/* the bound, 0: none */
	uint64_t		 used;		/* counted bytes kept so far */
	TAILQ_HEAD(, bundle_item) items;
	struct bundle_item	*cur;
	enum bundle_files_step	 step;
	uv_fs_t			 req;
	uv_work_t		 at;		/* a request relative to dirfd */
	ssize_t			 at_result;	/* its result, or -errno */
	uint64_t		 at_size;	/* a stat's size */
	bool			 busy;		/* a request is on the threadpool */
	int			 io_errno;	/* a file could not be written */
	char			*io_why;
	int			 in_fd;
	int			 out_fd;
	uint64_t		 from;		/* the first byte kept */
	uint64_t		 off;		/* next byte of the source */
	uint64_t		 end;		/* past the last one kept */
	uint64_t		 size;		/* the source's size */
	json_t			*files;		/* [{name, bytes}] */
	json_t			*cut;		/* [{name, size, kept, why}] */
	json_t			*failed;	/* [{name, error}] */
	bundle_files_cb		 cb;
	void			*arg;
};

static void	bundle_files_next(struct bundle_files *);
static void	bundle_files_fs_cb(uv_fs_t *);
static void	bundle_files_at_cb(uv_work_t *, int);

/* A new set of files to write into dirfd (dir), the counted ones max bytes at most. */
struct bundle_files *
bundle_files_new(const char *dir, int dirfd, uint64_t max, bundle_files_cb cb,
    void *arg)
{
	struct bundle_files *f = xcalloc(1, sizeof *f);

	f->dir = xstrdup(dir);
	f->dirfd = dirfd;
	f->max = max;
	f->in_fd = f->out_fd = -1;
	f->files = json_array();
	f->cut = json_array();
	f->failed = json_array();
	f->cb = cb;
	f->arg = arg;
	TAILQ_INIT(&f->items);
	f->req.data = f;
	f->at.data = f;
	return f;
}

/* Queue an item named name. */
static struct bundle_item *
bundle_files_item(struct bundle_files *f, const char *name)
{
	struct bundle_item *it = xcalloc(1, sizeof *it);

	it->name = xstrdup(name);
	TAILQ_INSERT_TAIL(&f->items, it, entry);
	return it;
}

/* Write len bytes of data as the file name; counted: under the bound. */
void
bundle_files_text(struct bundle_files *f, const char *name, const char *data,
    size_t len, bool counted)
{
	struct bundle_item *it = bundle_files_item(f, name);

	it->data = xmalloc(len + 1);
	memcpy(it->data, data, len);
	it->len = len;
	it->counted = counted;
}

/* Write len bytes of data as the file name if they fit under the bound, else none. */
void
bundle_files_whole(struct bundle_files *f, const char *name, const char *data,
    size_t len)
{
	struct bundle_item *it = bundle_files_item(f, name);

	it->data = xmalloc(len + 1);
	memcpy(it->data, data, len);
	it->len = len;
	it->counted = true;
	it->whole = true;
}

/* Copy the file at src as name: all of it, or its last bytes under the bound. */
void
bundle_files_copy(struct bundle_files *f, const char *name, const char *src)
{
	struct bundle_item *it = bundle_files_item(f, name);

	it->src = xstrdup(src);
	it->counted = true;
}

/* Weigh the file name already in the directory: removed if it is over the bound. */
void
bundle_files_weigh(struct bundle_files *f, const char *name)
{
	struct bundle_item *it = bundle_files_item(f, name);

	it->existing = true;
	it->counted = true;
}

/* Forget the current item and take the next. */
static void
bundle_files_done(struct bundle_files *f)
{
	struct bundle_item *it = f->cur;

	TAILQ_REMOVE(&f->items, it, entry);
	f->cur = NULL;
	free(it->name);
	free(it->src);
	free(it->data);
	free(it);
	bundle_files_next(f);
}

/*
 * The current item failed at what, with libuv's error: a source that
 * cannot be read is listed and the next goes on; a file that cannot be
 * written in the bundle ends the pass, with its errno.
 */
static void
bundle_files_fail(struct bundle_files *f, const char *what, int error)
{
	log_warn("bundle %s: %s: %s: %s", f->dir, f->cur->name, what,
	    uv_strerror(error));
	if (f->step == BF_OPEN_SRC || (f->step == BF_STAT &&
	    !f->cur->existing))
		json_array_append_new(f->failed, json_pack("{s:s, s:s++}",
		    "name", f->cur->name, "error", what, ": ",
		    uv_strerror(error)));
	else if (f->io_errno == 0) {
		f->io_errno = -error;
		xasprintf(&f->io_why, "cannot %s %s in %s: %s", what,
		    f->cur->name, f->dir, uv_strerror(error));
	}
	if (f->in_fd != -1 || f->out_fd != -1) {
		f->step = f->in_fd != -1 ? BF_CLOSE_SRC : BF_CLOSE_DST;
		bundle_files_next(f);
		return;
	}
	bundle_files_done(f);
}

/* On the threadpool: the current step's request relative to the directory. */
static void
bundle_files_at_work(uv_work_t *w)
{
	struct bundle_files	*f = w->data;
	const char		*name = f->cur->name;
	struct stat		 st;

	switch (f->step) {
	case BF_OPEN_DST:
		f->at_result = openat(f->dirfd, name, O_WRONLY | O_CREAT |
		    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		break;
	case BF_STAT:
		f->at_result = fstatat(f->dirfd, name, &st,
		    AT_SYMLINK_NOFOLLOW);
		if (f->at_result == 0 && !S_ISREG(st.st_mode)) {
			f->at_result = -1;
			errno = EINVAL;
		}
		f->at_size = f->at_result == 0 ? (uint64_t)st.st_size : 0;
		break;
	default:
		f->at_result = unlinkat(f->dirfd, name, 0);
		break;
	}
	if (f->at_result == -1)
		f->at_result = -errno;
}

/* Put the current step's request relative to the directory on the threadpool. */
static void
bundle_files_at(struct bundle_files *f, enum bundle_files_step step)
{
	f->step = step;
	f->busy = true;
	if (uv_queue_work(dmn.loop, &f->at, bundle_files_at_work,
	    bundle_files_at_cb) != 0)
		log_fatal("bundle %s: cannot queue work", f->dir);
}

/* Open the current item's file in the bundle: new, 0600, no link followed. */
static void
bundle_files_open_dst(struct bundle_files *f)
{
	bundle_files_at(f, BF_OPEN_DST);
}

/* How much of a source of size bytes the bound keeps: its last bytes. */
static void
bundle_files_keep(struct bundle_files *f, uint64_t size)
{
	uint64_t room = f->max == 0 ? size : f->max > f->used ? f->max -
	    f->used : 0;

	f->size = size;
	f->end = size;
	f->off = size > room ? size - room : 0;
	f->from = f->off;
	if (f->off > 0)
		json_array_append_new(f->cut, json_pack("{s:s, s:I, s:I, s:s}",
		    "name", f->cur->name, "size", (json_int_t)size, "kept",
		    (json_int_t)(size - f->off), "why", "the bundle's size "
		    "bound: only the last bytes are kept"));
}

/* Start the current item's next threadpool request. */
static void
bundle_files_send(struct bundle_files *f)
{
	struct bundle_item	*it = f->cur;
	uv_buf_t		 buf;

	f->busy = true;
	switch (f->step) {
	case BF_OPEN_SRC:
		uv_fs_open(dmn.loop, &f->req, it->src, O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC, 0, bundle_files_fs_cb);
		return;
	case BF_STAT:
		if (it->existing)
			bundle_files_at(f, BF_STAT);
		else
			uv_fs_fstat(dmn.loop, &f->req, f->in_fd,
			    bundle_files_fs_cb);
		return;
	case BF_COPY:
		uv_fs_sendfile(dmn.loop, &f->req, f->out_fd, f->in_fd,
		    (int64_t)f->off, f->end - f->off > BUNDLE_FILES_CHUNK ?
		    BUNDLE_FILES_CHUNK : f->end - f->off, bundle_files_fs_cb);
		return;
	case BF_WRITE:
		buf = uv_buf_init(it->data + f->off, it->len - f->off);
		uv_fs_write(dmn.loop, &f->req, f->out_fd, &buf, 1, -1,
		    bundle_files_fs_cb);
		return;
	case BF_CLOSE_SRC:
		uv_fs_close(dmn.loop, &f->req, f->in_fd, bundle_files_fs_cb);
		f->in_fd = -1;
		return;
	case BF_CLOSE_DST:
		uv_fs_close(dmn.loop, &f->req, f->out_fd, bundle_files_fs_cb);
		f->out_fd = -1;
		return;
	case BF_UNLINK:
		bundle_files_at(f, BF_UNLINK);
		return;
	case BF_OPEN_DST:
		break;
	}
	log_fatal("bundle: step %d sent", f->step);
}

/* A file is whole: list it with its size, and count it. */
static void
bundle_files_kept(struct bundle_files *f, uint64_t bytes)
{
	json_array_append_new(f->files, json_pack("{s:s, s:I}", "name",
	    f->cur->name, "bytes", (json_int_t)bytes));
	if (f->cur->counted)
		f->used += bytes;
}

/* An existing file's size is known: kept if it fits, removed if not. */
static void
bundle_files_weighed(struct bundle_files *f, uint64_t size)
{
	if (f->max == 0 || f->used + size <= f->max) {
		bundle_files_kept(f, size);
		bundle_files_done(f);
		return;
	}
	json_array_append_new(f->cut, json_pack("{s:s, s:I, s:I, s:s}", "name",
	    f->cur->name, "size", (json_int_t)size, "kept", (json_int_t)0,
	    "why", "the bundle's size bound: the file is left out whole"));
	f->step = BF_UNLINK;
	bundle_files_send(f);
}

/* One threadpool request is done: r, its result (-errno), size a stat's. */
static void
bundle_files_step_done(struct bundle_files *f, ssize_t r, uint64_t size)
{
	f->busy = false;
	if (r < 0 && f->step != BF_CLOSE_SRC && f->step != BF_CLOSE_DST) {
		static const char *const what[] = { "open", "stat", "create",
		    "copy", "write", "close", "close", "remove" };

		bundle_files_fail(f, what[f->step], (int)r);
		return;
	}
	switch (f->step) {
	case BF_OPEN_SRC:
		f->in_fd = (int)r;
		f->step = BF_STAT;
		break;
	case BF_STAT:
		if (f->cur->existing) {
			bundle_files_weighed(f, size);
			return;
		}
		bundle_files_keep(f, size);
		bundle_files_open_dst(f);
		return;
	case BF_OPEN_DST:
		f->out_fd = (int)r;
		f->step = f->cur->src != NULL ? BF_COPY : BF_WRITE;
		if (f->step == BF_WRITE)
			f->off = 0;
		break;
	case BF_COPY:
		/* A log that shrank under us (r 0) ends the copy. */
		f->off += (uint64_t)r;
		if (r == 0 || f->off >= f->end) {
			bundle_files_kept(f, f->off - f->from);
			f->step = BF_CLOSE_SRC;
		}
		break;
	case BF_WRITE:
		f->off += (uint64_t)r;
		if (f->off >= f->cur->len) {
			bundle_files_kept(f, f->cur->len);
			f->step = BF_CLOSE_DST;
		}
		break;
	case BF_CLOSE_SRC:
		if (f->out_fd == -1) {
			bundle_files_done(f);
			return;
		}
		f->step = BF_CLOSE_DST;
		break;
	case BF_CLOSE_DST:
	case BF_UNLINK:
		bundle_files_done(f);
		return;
	}
	bundle_files_send(f);
}

/* A libuv file request is done. */
static void
bundle_files_fs_cb(uv_fs_t *req)
{
	struct bundle_files	*f = req->data;
	ssize_t			 r = req->result;
	uint64_t		 size = req->statbuf.st_size;

	uv_fs_req_cleanup(req);
	bundle_files_step_done(f, r, size);
}

/* A request relative to the directory is done (status: was it run). */
static void
bundle_files_at_cb(uv_work_t *w, int status)
{
	struct bundle_files *f = w->data;

	bundle_files_step_done(f, status < 0 ? status : f->at_result,
	    f->at_size);
}

/* Forget the items not yet written: the pass ends early. */
static void
bundle_files_drop(struct bundle_files *f)
{
	struct bundle_item *it;

	while ((it = TAILQ_FIRST(&f->items)) != NULL) {
		TAILQ_REMOVE(&f->items, it, entry);
		free(it->name);
		free(it->src);
		free(it->data);
		free(it);
	}
}

/* Take the next item, or tell the owner all are written. */
static void
bundle_files_next(struct bundle_files *f)
{
	if (f->cur != NULL) {
		bundle_files_send(f);
		return;
	}
	if (f->io_errno != 0)
		bundle_files_drop(f);
	if ((f->cur = TAILQ_FIRST(&f->items)) == NULL) {
		f->cb(f->arg);
		return;
	}
	if (f->cur->whole && f->max != 0 && f->used + f->cur->len > f->max) {
		json_array_append_new(f->cut, json_pack("{s:s, s:I, s:I, s:s}",
		    "name", f->cur->name, "size", (json_int_t)f->cur->len,
		    "kept", (json_int_t)0, "why", "the bundle's size bound: the "
		    "file is left out whole"));
		bundle_files_done(f);
	} else if (f->cur->src != NULL) {
		f->step = BF_OPEN_SRC;
		bundle_files_send(f);
	} else if (f->cur->existing) {
		f->step = BF_STAT;
		bundle_files_send(f);
	} else
		bundle_files_open_dst(f);
}

/* Write what is queued; the callback says when it is all done. */
void
bundle_files_run(struct bundle_files *f)
{
	if (f->busy || f->cur != NULL)
		log_fatal("bundle %s: written twice at once", f->dir);
	bundle_files_next(f);
}

/* The files written, those cut by the bound, and those that failed. */
json_t *
bundle_files_list(const struct bundle_files *f, const char *which)
{
	if (strcmp(which, "files") == 0)
		return f->files;
	if (strcmp(which, "cut") == 0)
		return f->cut;
	return f->failed;
}

/* The errno of a file that could not be written in the bundle (and why), or 0. */
int
bundle_files_error(const struct bundle_files *f, const char **why)
{
	*why = f->io_why;
	return f->io_errno;
}

/* Bytes of counted files kept. */
uint64_t
bundle_files_used(const struct bundle_files *f)
{
	return f->used;
}

/* Free the set; none of its requests may be on the threadpool. */
void
bundle_files_free(struct bundle_files *f)
{
	if (f == NULL)
		return;
	if (f->busy)
		log_fatal("bundle %s: freed while it writes", f->dir);
	bundle_files_drop(f);
	free(f->io_why);
	json_decref(f->files);
	json_decref(f->cut);
	json_decref(f->failed);
	free(f->dir);
	free(f);
}
