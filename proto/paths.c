/* Path resolution shared by the daemon and the client. */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

/* Format into buf, failing rather than truncating. */
static int
paths_fmt(char *buf, size_t len, const char *fmt, const char *a, const char *b)
{
	int n;

	n = snprintf(buf, len, fmt, a, b);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* The socket path when neither an override nor $DBGCTL_SOCKET names one. */
static int
paths_socket_default(char *buf, size_t len)
{
	const char	*v;
	char		 uid[32];

	if ((v = getenv("XDG_RUNTIME_DIR")) != NULL && *v == '/')
		return paths_fmt(buf, len, "%s%s", v, "/dbgctl/sock");
	snprintf(uid, sizeof uid, "%u", (unsigned)geteuid());
	return paths_fmt(buf, len, "/tmp/dbgctl-%s%s", uid, "/sock");
}

/* Resolve the socket path: override, $DBGCTL_SOCKET, $XDG_RUNTIME_DIR, /tmp. */
int
paths_socket(const char *override, char *buf, size_t len)
{
	const char *v;

	if (override != NULL && *override != '\0')
		return paths_fmt(buf, len, "%s%s", override, "");
	if ((v = getenv("DBGCTL_SOCKET")) != NULL && *v != '\0')
		return paths_fmt(buf, len, "%s%s", v, "");
	return paths_socket_default(buf, len);
}

/*
 * The path of a socket as the file system names it: its directory's real
 * path and its own name, so that "sock", "./sock" and "//tmp/x/sock" are
 * one socket; as given when the directory cannot be resolved.
 */
static int
paths_canonical(const char *path, char *buf, size_t len)
{
	char		 dir[PATH_MAX], real[PATH_MAX];
	const char	*name;

	if (paths_dirname(path, dir, sizeof dir) != 0 ||
	    realpath(dir, real) == NULL)
		return paths_fmt(buf, len, "%s%s", path, "");
	name = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	return paths_fmt(buf, len, strcmp(real, "/") == 0 ? "%s%s" : "%s/%s",
	    real, name);
}

/*
 * Resolve the state directory of the daemon on socket sock: the base,
 * $XDG_STATE_HOME/dbgctl or ~/.local/state/dbgctl, for the default socket;
 * for any other, base/daemons/ and the 64-bit FNV-1a hash of its path (as
 * paths_canonical gives it) in hex, so that daemons side by side never
 * share ids, logs or records. The socket's directory must exist by then.
 */
int
paths_state_dir(const char *sock, char *buf, size_t len)
{
	const char	*v;
	char		 dflt[PATH_MAX], given[PATH_MAX], mine[PATH_MAX];
	char		 hex[32];
	uint64_t	 h = 0xcbf29ce484222325ULL;
	size_t		 n;

	if ((v = getenv("XDG_STATE_HOME")) != NULL && *v == '/') {
		if (paths_fmt(buf, len, "%s%s", v, "/dbgctl") != 0)
			return -1;
	} else {
		if ((v = getenv("HOME")) == NULL || *v != '/')
			v = "/tmp";
		if (paths_fmt(buf, len, "%s%s", v, "/.local/state/dbgctl") != 0)
			return -1;
	}
	if (paths_socket_default(given, sizeof given) != 0 ||
	    paths_canonical(given, dflt, sizeof dflt) != 0 ||
	    paths_canonical(sock, mine, sizeof mine) != 0)
		return -1;
	if (strcmp(mine, dflt) == 0)
		return 0;
	for (v = mine; *v != '\0'; v++)
		h = (h ^ (unsigned char)*v) * 0x100000001b3ULL;
	snprintf(hex, sizeof hex, "/daemons/%016llx", (unsigned long long)h);
	n = strlen(buf);
	return paths_fmt(buf + n, len - n, "%s%s", hex, "");
}

/* Create dir and its parents with mode, like mkdir -p. */
int
paths_mkdirs(const char *dir, int mode)
{
	char	tmp[PATH_MAX];
	char   *p;

	if (paths_fmt(tmp, sizeof tmp, "%s%s", dir, "") != 0)
		return -1;
	for (p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* Create dir (and parents) 0700 if missing; refuse a foreign or loose one. */
int
paths_secure_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (paths_mkdirs(dir, 0700) != 0) {
		snprintf(err, errlen, "mkdir %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) != 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by uid %u, not by uid %u", dir,
		    (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	if ((st.st_mode & 022) != 0) {
		snprintf(err, errlen, "%s: mode %03o is group or world "
		    "writable", dir, (unsigned)(st.st_mode & 0777));
		return -1;
	}
	return 0;
}

/* Copy the directory part of path into buf. */
int
paths_dirname(const char *path, char *buf, size_t len)
{
	const char *slash;

	slash = strrchr(path, '/');
	if (slash == NULL)
		return paths_fmt(buf, len, "%s%s", ".", "");
	if (slash == path)
		return paths_fmt(buf, len, "%s%s", "/", "");
	if ((size_t)(slash - path) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, slash - path);
	buf[slash - path] = '\0';
	return 0;
}

/* Find a sibling executable of this program, else fall back to dir/name. */
int
paths_sibling(const char *name, const char *fallback_dir, char *buf,
    size_t len)
{
	char	self[PATH_MAX], dir[PATH_MAX];
	ssize_t	n;

	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0) {
		self[n] = '\0';
		if (paths_dirname(self, dir, sizeof dir) == 0 &&
		    paths_fmt(buf, len, "%s/%s", dir, name) == 0 &&
		    access(buf, X_OK) == 0)
			return 0;
	}
	return paths_fmt(buf, len, "%s/%s", fallback_dir, name);
}

/*
 * Whether a live socket of any process is bound at path, as /proc/net/unix
 * lists the names sockets were bound to: 1 if one is, 0 if none, -1 if
 * that cannot be told. A socket file nobody listens on is a dead daemon's
 * only when none is: one bound there may be a service manager's, between
 * its bind and its listen.
 */
int
paths_socket_bound(const char *path)
{
	char	 line[PATH_MAX + 128];
	size_t	 len = strlen(path);
	int	 at, found = 0;
	FILE	*f;

	if ((f = fopen("/proc/net/unix", "re")) == NULL)
		return -1;
	/* The first line names the columns. */
	if (fgets(line, sizeof line, f) == NULL) {
		fclose(f);
		return -1;
	}
	while (!found && fgets(line, sizeof line, f) != NULL) {
		at = -1;
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %n", &at) != 0 ||
		    at < 0)
			continue;
		found = strncmp(line + at, path, len) == 0 &&
		    (line[at + len] == '\n' || line[at + len] == '\0');
	}
	fclose(f);
	return found;
}
