/*
 * A bundle's place on disk, held by descriptors so that no path is
 * resolved twice: its parent directory, opened once and checked (the
 * daemon's user's or root's, and writable by no one else unless sticky,
 * as OpenSSH's StrictModes ask), the temporary directory made there by
 * mkdirat and opened without following a link, every file created
 * relative to it, and the bundle put in place by renameat2 with
 * RENAME_NOREPLACE relative to the parent, once the name is seen to
 * still lead to what the daemon made. A user who can rename in the
 * parent can then move the bundle away, never steer where it is written.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "bundle.h"

struct bundle_dir {
	int		 parent;	/* the bundle's parent directory */
	int		 dir;		/* the temporary directory made, or -1 */
	int		 tgz;		/* tar: the archive, or -1 */
	char		*base;		/* the bundle's name in parent */
	char		*tmp;		/* the temporary directory's name */
	char		*tgz_name;	/* the archive's name, or NULL */
	bool		 placed;	/* renamed to base */
};

/* Set err's kind, errno and cause. */
static void __attribute__((format(printf, 4, 5)))
bundle_dir_error(struct bundle_error *err, int code, int errnum,
    const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->errnum = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

/*
 * Whether the directory dir, of status st, may hold what the daemon
 * writes: its user's or root's, and no one else may rename in it unless
 * it is sticky; -1 with err saying why not.
 */
int
bundle_dir_safe(const char *dir, const struct stat *st, char *err,
    size_t errlen)
{
	uid_t me = geteuid();

	if (!S_ISDIR(st->st_mode)) {
		snprintf(err, errlen, "%s is not a directory", dir);
		return -1;
	}
	if (st->st_uid != me && st->st_uid != 0) {
		snprintf(err, errlen, "%s is owned by uid %lu, not by this "
		    "daemon's user (%lu) or root: its owner could steer the "
		    "bundle's files", dir, (unsigned long)st->st_uid,
		    (unsigned long)me);
		return -1;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    (st->st_mode & S_ISVTX) == 0) {
		snprintf(err, errlen, "%s is writable by %s (mode %04o) and "
		    "not sticky: another user could steer the bundle's files",
		    dir,
		    (st->st_mode & S_IWOTH) ? "every user" : "its group",
		    (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

/*
 * Open and check the directory path is to be made in: held from now on,
 * so whatever is renamed later the bundle is made there. NULL with err.
 */
struct bundle_dir *
bundle_dir_open(const char *path, struct bundle_error *err)
{
	struct bundle_dir	*d;
	struct stat		 st;
	char			 copy[PATH_MAX], why[PATH_MAX + 256], *dir;
	int			 fd;

	strlcpy(copy, path, sizeof copy);
	dir = dirname(copy);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		bundle_dir_error(err, RPC_INVALID_PARAMS, errno, "the bundle's "
		    "directory %s: %s", dir, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		bundle_dir_error(err, RPC_IO_ERROR, errno, "the bundle's "
		    "directory %s: %s", dir, strerror(errno));
		close(fd);
		return NULL;
	}
	if (bundle_dir_safe(dir, &st, why, sizeof why) != 0) {
		bundle_dir_error(err, RPC_INVALID_PARAMS, 0, "the bundle's "
		    "directory %s", why);
		close(fd);
		return NULL;
	}
	d = xcalloc(1, sizeof *d);
	d->parent = fd;
	d->dir = d->tgz = -1;
	d->base = xstrdup(strrchr(path, '/') + 1);
	return d;
}

/*
 * Make the temporary directory tmp (a path whose last component is its
 * name) under the parent, and hold it: it must be a directory, ours,
 * 0700 at most, as made. -1 with err; err->errnum EEXIST: the name was
 * taken, another may do.
 */
int
bundle_dir_make(struct bundle_dir *d, const char *tmp, struct bundle_error *err)
{
	const char	*name = strrchr(tmp, '/') + 1;
	struct stat	 st;
	int		 fd, e;

	if (mkdirat(d->parent, name, 0700) != 0) {
		e = errno;
		/* A directory the daemon may not write in is a bad path, not a failing disk. */
		bundle_dir_error(err, e == EACCES || e == EPERM ?
		    RPC_INVALID_PARAMS : RPC_IO_ERROR, e, "cannot make %s: %s",
		    tmp, strerror(e));
		return -1;
	}
	fd = openat(d->parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	/* Gone, or a link or a file in its place: swapped as it was made. */
	if (fd == -1 && (errno == ENOENT || errno == ENOTDIR ||
	    errno == ELOOP)) {
		bundle_dir_error(err, RPC_IO_ERROR, errno, "%s was moved or "
		    "replaced as soon as it was made: another user renames in "
		    "its directory", tmp);
		return -1;
	}
	if (fd == -1 || fstat(fd, &st) != 0) {
		bundle_dir_error(err, RPC_IO_ERROR, errno, "cannot open %s: %s",
		    tmp, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0) {
		bundle_dir_error(err, RPC_IO_ERROR, 0, "%s was moved or "
		    "replaced as soon as it was made: another user renames in "
		    "its directory", tmp);
		close(fd);
		return -1;
	}
	free(d->tmp);
	d->tmp = xstrdup(name);
	d->dir = fd;
	return 0;
}

/* The temporary directory, for files made in it with openat. */
int
bundle_dir_fd(const struct bundle_dir *d)
{
	return d->dir;
}

/* Create the file name in the temporary directory: new, 0600, not through a link. */
int
bundle_dir_create(const struct bundle_dir *d, const char *name, int flags)
{
	return openat(d->dir, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
}

/* Make the archive tgz (a path) beside the directory: new, 0600; its fd, or -1 with err. */
int
bundle_dir_archive(struct bundle_dir *d, const char *tgz, char *err,
    size_t errlen)
{
	const char *name = strrchr(tgz, '/') + 1;

	if ((d->tgz = openat(d->parent, name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", tgz, strerror(errno));
		return -1;
	}
	d->tgz_name = xstrdup(name);
	return d->tgz;
}

/* Whether name in the parent still leads to the file fd, not to a link put there. */
static bool
bundle_dir_same(const struct bundle_dir *d, const char *name, int fd)
{
	struct stat a, b;

	return fd != -1 && name != NULL && fstatat(d->parent, name, &a,
	    AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Rename name to the bundle's, never over what is there: where the
 * filesystem cannot refuse in the rename itself, a file is linked then
 * unlinked, and a directory renamed only if nothing is there.
 */
static int
bundle_dir_rename(struct bundle_dir *d, const char *name, bool file)
{
	struct stat st;

	if (renameat2(d->parent, name, d->parent, d->base,
	    RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (file) {
		if (linkat(d->parent, name, d->parent, d->base, 0) != 0)
			return -1;
		(void)unlinkat(d->parent, name, 0);
		return 0;
	}
	if (fstatat(d->parent, d->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(d->parent, name, d->parent, d->base);
}

/*
 * Put the bundle (the directory, or with tar the archive) at its path,
 * which must be new; path names it in messages. -1 with err: `exists`
 * if something is there now, else an I/O error.
 */
int
bundle_dir_place(struct bundle_dir *d, const char *path,
    struct bundle_error *err)
{
	const char	*name = d->tgz_name != NULL ? d->tgz_name : d->tmp;
	int		 fd = d->tgz_name != NULL ? d->tgz : d->dir;

	if (!bundle_dir_same(d, name, fd)) {
		bundle_dir_error(err, RPC_IO_ERROR, 0, "the bundle's temporary "
		    "%s %s was moved or replaced while it was written: another "
		    "user renames in its directory", d->tgz_name != NULL ?
		    "archive" : "directory", name);
		return -1;
	}
	if (bundle_dir_rename(d, name, d->tgz_name != NULL) != 0) {
		if (errno == EEXIST || errno == ENOTEMPTY)
			bundle_dir_error(err, RPC_EXISTS, 0, "%s appeared "
			    "while the bundle was written: a bundle never "
			    "replaces what is there", path);
		else
			bundle_dir_error(err, RPC_IO_ERROR, errno, "cannot "
			    "rename the bundle into place: %s",
			    strerror(errno));
		return -1;
	}
	d->placed = true;
	return 0;
}

/* Remove the files of the temporary directory, through its descriptor. */
static void
bundle_dir_empty(struct bundle_dir *d)
{
	struct dirent	*e;
	DIR		*dp;
	int		 fd;

	if (d->dir == -1 || (fd = dup(d->dir)) == -1)
		return;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	rewinddir(dp);
	while ((e = readdir(dp)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			(void)unlinkat(d->dir, e->d_name, 0);
	closedir(dp);
}

/*
 * Remove what the daemon made and did not place: the temporary
 * directory's files, the directory and the archive where their names
 * still lead to them (a moved one is left empty where it was moved).
 */
void
bundle_dir_remove(struct bundle_dir *d)
{
	if (d == NULL)
		return;
	if (d->tgz_name != NULL && !(d->placed) && bundle_dir_same(d,
	    d->tgz_name, d->tgz))
		(void)unlinkat(d->parent, d->tgz_name, 0);
	if (d->dir == -1 || (d->placed && d->tgz_name == NULL))
		return;
	bundle_dir_empty(d);
	if (bundle_dir_same(d, d->tmp, d->dir))
		(void)unlinkat(d->parent, d->tmp, AT_REMOVEDIR);
}

/* Let go of the descriptors. */
void
bundle_dir_free(struct bundle_dir *d)
{
	if (d == NULL)
		return;
	if (d->dir != -1)
		close(d->dir);
	if (d->tgz != -1)
		close(d->tgz);
	close(d->parent);
	free(d->base);
	free(d->tmp);
	free(d->tgz_name);
	free(d);
}
