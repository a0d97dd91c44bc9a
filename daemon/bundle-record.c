/*
 * Where bundles are written, and what a daemon killed mid-way leaves: a
 * bundle is built under a temporary name beside its final path and
 * renamed at the end; while it is built, a small record in the state
 * directory (bundles/N, 0600) names both paths, so that the next daemon
 * removes the half bundle, or finds it complete, and logs which.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "bundle.h"
#include "paths.h"

/* What a temporary name has after the final one's: .NAME.partial-XXXXXX */
#define BUNDLE_PARTIAL ".partial-"

/*
 * Whether path may become a bundle: absolute and not there yet (its
 * directory is checked as it is opened); -1 with err saying which it is
 * not.
 */
int
bundle_path_check(const char *path, struct bundle_error *err)
{
	struct stat st;

	err->code = RPC_INVALID_PARAMS;
	err->errnum = 0;
	if (path[0] != '/') {
		snprintf(err->msg, sizeof err->msg, "\"path\" must be "
		    "absolute, not \"%s\"", path);
		return -1;
	}
	if (strlen(path) >= PATH_MAX - 64 || strlen(path) < 2) {
		snprintf(err->msg, sizeof err->msg, "\"path\" is too %s",
		    strlen(path) < 2 ? "short" : "long");
		return -1;
	}
	if (path[strlen(path) - 1] == '/') {
		snprintf(err->msg, sizeof err->msg, "\"path\" must name the "
		    "bundle itself, not end with /: %s", path);
		return -1;
	}
	if (lstat(path, &st) == 0) {
		err->code = RPC_EXISTS;
		snprintf(err->msg, sizeof err->msg, "%s exists already: a "
		    "bundle's path must be new", path);
		return -1;
	}
	return 0;
}

/* A temporary name beside path, unused now: DIR/.NAME.partial-XXXXXX. */
char *
bundle_record_tmp(const char *path)
{
	static const char	 chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const char		*base = strrchr(path, '/') + 1;
	char			*tmp, rnd[7];
	size_t			 i;

	for (i = 0; i < 6; i++)
		rnd[i] = chars[arc4random_uniform(sizeof chars - 1)];
	rnd[6] = '\0';
	xasprintf(&tmp, "%.*s.%s%s%s", (int)(base - path), path, base,
	    BUNDLE_PARTIAL, rnd);
	return tmp;
}

/* The directory of the records: state/bundles. */
static void
bundle_record_dir(char *buf, size_t len)
{
	snprintf(buf, len, "%s/bundles", dmn.state_dir);
}

/*
 * Record a bundle in progress before anything of it is made: its final
 * path and its temporary ones. The record's path, or NULL with err.
 */
char *
bundle_record_open(unsigned long serial, const char *path, const char *tmp,
    const char *tgz, char *err, size_t errlen)
{
	char	 dir[PATH_MAX + 16], *rec, *text;
	json_t	*o;
	int	 fd;
	ssize_t	 n;

	bundle_record_dir(dir, sizeof dir);
	xasprintf(&rec, "%s/%lu", dir, serial);
	o = json_pack("{s:s, s:s, s:s?}", "path", path, "tmp", tmp, "tgz", tgz);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	fd = open(rec, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	n = fd == -1 ? -1 : write(fd, text, strlen(text));
	if (fd == -1 || n != (ssize_t)strlen(text)) {
		snprintf(err, errlen, "%s: %s", rec, n == -1 ? strerror(errno) :
		    "a short write");
		if (fd != -1) {
			close(fd);
			unlink(rec);
		}
		free(text);
		free(rec);
		return NULL;
	}
	close(fd);
	free(text);
	return rec;
}

/* The bundle is complete (or gone): its record goes. */
void
bundle_record_close(const char *rec)
{
	if (rec != NULL && unlink(rec) != 0 && errno != ENOENT)
		log_warn("%s: %s", rec, strerror(errno));
}

/*
 * Remove a temporary bundle directory the daemon made: its files (a
 * bundle holds no subdirectory), then itself; nothing is followed.
 */
int
bundle_record_remove_tree(const char *dir)
{
	struct dirent	*e;
	DIR		*d;
	int		 fd, rc = 0;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, e->d_name, 0) != 0)
			rc = -1;
	}
	closedir(d);
	if (rmdir(dir) != 0)
		rc = -1;
	return rc;
}

/* Whether a record's temporary path is one the daemon names its own way. */
static bool
bundle_record_ours(const char *tmp)
{
	const char *base;

	if (tmp == NULL || tmp[0] != '/' || (base = strrchr(tmp, '/')) ==
	    NULL)
		return false;
	return base[1] == '.' && strstr(base, BUNDLE_PARTIAL) != NULL;
}

/* Recover after one record: remove the half bundle, or say it is whole. */
static void
bundle_record_recover(const char *rec)
{
	json_t		*o = json_load_file(rec, 0, NULL);
	const char	*path = json_string_value(json_object_get(o, "path"));
	const char	*tmp = json_string_value(json_object_get(o, "tmp"));
	const char	*tgz = json_string_value(json_object_get(o, "tgz"));
	struct stat	 st;
	bool		 half;

	if (path == NULL || !bundle_record_ours(tmp) || (tgz != NULL &&
	    !bundle_record_ours(tgz))) {
		log_warn("bundle record %s is not one of ours: left alone", rec);
		json_decref(o);
		return;
	}
	half = lstat(tmp, &st) == 0 || (tgz != NULL && lstat(tgz, &st) == 0);
	if (tgz != NULL && unlink(tgz) != 0 && errno != ENOENT)
		log_warn("recovery: cannot remove %s: %s", tgz, strerror(errno));
	if (bundle_record_remove_tree(tmp) != 0)
		log_warn("recovery: cannot remove %s: %s", tmp, strerror(errno));
	if (lstat(path, &st) == 0)
		log_info("recovery: bundle %s was complete when the daemon "
		    "died; its record is removed%s", path, half ? ", and the "
		    "temporary files left beside it" : "");
	else if (half)
		log_info("recovery: removed the half-written bundle %s (it was "
		    "to be %s): the daemon died while writing it", tmp, path);
	else
		log_info("recovery: bundle %s was never begun; its record is "
		    "removed", path);
	bundle_record_close(rec);
	json_decref(o);
}

/*
 * At start, before any session: finish with the bundles a daemon that
 * died left in progress, as their records say.
 */
void
bundle_recover(void)
{
	char		 dir[PATH_MAX + 16], err[PATH_MAX + 128], *rec;
	struct dirent	*e;
	DIR		*d;

	bundle_record_dir(dir, sizeof dir);
	if (paths_secure_dir(dir, err, sizeof err) != 0) {
		log_warn("bundles are not recorded: %s", err);
		return;
	}
	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		xasprintf(&rec, "%s/%s", dir, e->d_name);
		bundle_record_recover(rec);
		free(rec);
	}
	closedir(d);
}

/* Check (and make, 0700) the directory automatic bundles go to, as a bundle's parent is; -1 with err. */
int
bundle_artifacts(const char *dir, char *err, size_t errlen)
{
	struct stat	 st;
	char		 why[PATH_MAX + 192];

	if (dir[0] != '/') {
		snprintf(err, errlen, "\"artifacts\" must be an absolute "
		    "directory, not \"%s\"", dir);
		return -1;
	}
	if (strlen(dir) >= PATH_MAX - 128) {
		snprintf(err, errlen, "\"artifacts\" is too long");
		return -1;
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "artifacts directory %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (stat(dir, &st) != 0 || access(dir, W_OK | X_OK) != 0) {
		snprintf(err, errlen, "artifacts directory %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (bundle_dir_safe(dir, &st, why, sizeof why) != 0) {
		snprintf(err, errlen, "artifacts directory %s", why);
		return -1;
	}
	return 0;
}
