/*
 * Containment by cgroup v2: where the daemon may write below its own
 * cgroup, every keeper's tree lives in a cgroup of its own, so "nothing is
 * left" is read from cgroup.events (populated 0), not guessed from
 * parents, and stragglers die by cgroup.kill whoever their parent is. A
 * daemon that starts kills what a dead one left in the same subtree. A
 * target may make cgroups below its own (a few, not deep: the kernel's
 * cgroup.max.* say so); they go with it, deepest first.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "cgroup.h"

/* Why sessions are not contained, when they are not. */
static char	 cgroup_why[PATH_MAX + 64];

/* How many freeze-and-kill rounds a kernel without cgroup.kill gets. */
#define CGROUP_KILL_ROUNDS 100
/* How long a sweep at start waits for a killed cgroup to empty, in 10 ms steps. */
#define CGROUP_SWEEP_STEPS 200
/* How deep, and how many, the cgroups a target may make below its own. */
#define CGROUP_NEST_DEPTH "8"
#define CGROUP_NEST_MAX "128"
/* How deep a removal looks (a target as root could raise the limits). */
#define CGROUP_WALK_DEPTH 8

/*
 * The daemon's subtree, open: a keeper's cgroup is made, opened and
 * removed relative to it, without a walk of the subtree's long path each
 * time (AT_FDCWD, with whole paths, where it could not be opened).
 */
static int cgroup_root_fd = AT_FDCWD;

/* The cgroups of adopted sessions, which the sweep at start leaves alone. */
static char	**cgroup_adopted;
static size_t	  cgroup_nadopted;

/* One keeper's cgroup. */
struct cgroup {
	char		*path;
	const char	*name;		/* path's last part */
	uv_fs_event_t	 ev;		/* on cgroup.events */
	int		 events_fd;	/* cgroup.events, for pread */
	bool		 watching;
	bool		 empty_told;
	cgroup_cb	 cb;
	void		*arg;
};

/* Join dir and file into path; -1 with ENAMETOOLONG if it does not fit. */
static int
cgroup_join(char *path, size_t len, const char *dir, const char *file)
{
	int	n;

	n = snprintf(path, len, "%s/%s", dir, file);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Read a small file of path into buf; -1 with errno. */
static int
cgroup_read(const char *dir, const char *file, char *buf, size_t len)
{
	char	path[PATH_MAX];
	ssize_t	n;
	int	fd;

	if (cgroup_join(path, sizeof path, dir, file) != 0)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Write str to a file of the cgroup open at dir; -1 with errno. */
static int
cgroup_write_at(int dir, const char *file, const char *str)
{
	ssize_t	n;
	int	fd, saved;

	if ((fd = openat(dir, file, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, str, strlen(str));
	saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(str) ? 0 : -1;
}

/* Write str to a cgroup file; -1 with errno. */
static int
cgroup_write(const char *dir, const char *file, const char *str)
{
	char path[PATH_MAX];

	if (cgroup_join(path, sizeof path, dir, file) != 0)
		return -1;
	return cgroup_write_at(AT_FDCWD, path, str);
}

/* Whether the text of a cgroup.events says a live process is there. */
static bool
cgroup_events_populated(const char *buf)
{
	const char *p = strstr(buf, "populated ");

	return p != NULL && p[10] == '1';
}

/* Whether the cgroup at dir holds a live process (a missing one does not). */
static bool
cgroup_dir_populated(const char *dir)
{
	char buf[256];

	if (cgroup_read(dir, "cgroup.events", buf, sizeof buf) != 0)
		return false;
	return cgroup_events_populated(buf);
}

/* What cgroup_walk does to one cgroup: its parent's fd, its name, its own fd. */
typedef int (*cgroup_walk_fn)(int parent, const char *name, int fd);

/*
 * Call fn on every cgroup below the one open at fd, each after those below
 * it (deepest first), no deeper than CGROUP_WALK_DEPTH; the sum of what fn
 * returned.
 */
static int
cgroup_walk(int fd, int depth, cgroup_walk_fn fn)
{
	struct dirent	*e;
	DIR		*d;
	int		 f, sub, sum = 0;

	if (depth >= CGROUP_WALK_DEPTH || (f = dup(fd)) == -1)
		return 0;
	if ((d = fdopendir(f)) == NULL) {
		close(f);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' || (sub =
		    openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC)) == -1)
			continue;
		sum += cgroup_walk(sub, depth + 1, fn);
		sum += fn(dirfd(d), e->d_name, sub);
		close(sub);
	}
	closedir(d);
	return sum;
}

/* SIGKILL every process the cgroup open at fd lists; how many there were. */
static int
cgroup_kill_listed(int parent, const char *name, int fd)
{
	char	 buf[4096], *p, *end;
	ssize_t	 n = -1;
	long	 pid;
	int	 f, count = 0;

	(void)parent;
	(void)name;
	if ((f = openat(fd, "cgroup.procs", O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(f, buf, sizeof buf - 1);
		close(f);
	}
	buf[n > 0 ? n : 0] = '\0';
	for (p = buf; (pid = strtol(p, &end, 10)) > 0; p = end, count++)
		(void)kill((pid_t)pid, SIGKILL);
	return count;
}

/* Remove one (empty) cgroup below another. */
static int
cgroup_rmdir_at(int parent, const char *name, int fd)
{
	(void)fd;
	(void)unlinkat(parent, name, AT_REMOVEDIR);
	return 0;
}

/*
 * End every process of the cgroup at dir and of the cgroups below it:
 * cgroup.kill where the kernel has it (5.14), which takes the subtree,
 * else freeze the cgroup (its subtree with it) and SIGKILL what the
 * cgroup.procs list until none lists anything, since a frozen process
 * cannot fork.
 */
static void
cgroup_dir_kill(const char *dir)
{
	int	fd, i;

	if (cgroup_write(dir, "cgroup.kill", "1") == 0 || errno != ENOENT)
		return;
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return;
	(void)cgroup_write(dir, "cgroup.freeze", "1");
	for (i = 0; i < CGROUP_KILL_ROUNDS; i++)
		if (cgroup_kill_listed(-1, NULL, fd) +
		    cgroup_walk(fd, 0, cgroup_kill_listed) == 0)
			break;
	(void)cgroup_write(dir, "cgroup.freeze", "0");
	close(fd);
}

/*
 * Remove the (empty) cgroup at dir with every cgroup below it, deepest
 * first, logged if one is left: they are empty when its subtree is, so
 * each rmdir succeeds at once, and the limits cgroup_open set bound the
 * work (128 of them take about 3 ms). Most have none below them: the
 * rmdir alone is tried first, and the walk follows only where it fails
 * (EBUSY while a cgroup is below).
 */
static void
cgroup_dir_remove(const char *dir)
{
	int	fd;

	if (rmdir(dir) == 0 || errno == ENOENT)
		return;
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		(void)cgroup_walk(fd, 0, cgroup_rmdir_at);
		close(fd);
	}
	if (rmdir(dir) != 0 && errno != ENOENT)
		log_warn("cgroup %s: rmdir: %s", dir, strerror(errno));
}

/* The cgroup v2 mount point, from mountinfo; -1 if there is none. */
static int
cgroup_mount(char *buf, size_t len)
{
	FILE	*f = fopen("/proc/self/mountinfo", "re");
	char	 line[4096], mnt[PATH_MAX];
	int	 rc = -1;

	if (f == NULL)
		return -1;
	while (rc != 0 && fgets(line, sizeof line, f) != NULL) {
		/* ID PARENT MAJ:MIN ROOT MOUNT OPTS... - TYPE SOURCE SUPER */
		if (strstr(line, " - cgroup2 ") == NULL ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		rc = strlcpy(buf, mnt, len) < len ? 0 : -1;
	}
	fclose(f);
	return rc;
}

/* The daemon's own cgroup, the "0::PATH" line of /proc/self/cgroup. */
static int
cgroup_own(char *buf, size_t len)
{
	FILE	*f = fopen("/proc/self/cgroup", "re");
	char	 line[PATH_MAX + 8];
	int	 rc = -1;

	if (f == NULL)
		return -1;
	while (rc != 0 && fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "0::", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		rc = strlcpy(buf, line + 3, len) < len ? 0 : -1;
	}
	fclose(f);
	return rc;
}

/*
 * Wait, boundedly, for a killed cgroup to empty: at start, before the loop
 * runs, so nothing waits on it but the daemon's own readiness.
 */
static void
cgroup_dir_wait_empty(const char *dir)
{
	struct timespec	step = { 0, 10 * 1000000L };
	int		i;

	for (i = 0; i < CGROUP_SWEEP_STEPS && cgroup_dir_populated(dir); i++)
		nanosleep(&step, NULL);
}

/* Whether name is the cgroup of a session this daemon adopted. */
static bool
cgroup_is_adopted(const char *name)
{
	size_t i;

	for (i = 0; i < cgroup_nadopted; i++)
		if (strcmp(cgroup_adopted[i], name) == 0)
			return true;
	return false;
}

/*
 * Kill what a dead daemon left in the subtree and remove its cgroups,
 * but for those of the sessions adopted from it.
 */
static void
cgroup_sweep(const char *root)
{
	DIR		*d = opendir(root);
	struct dirent	*e;
	char		 dir[PATH_MAX];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    cgroup_is_adopted(e->d_name))
			continue;
		if (snprintf(dir, sizeof dir, "%s/%s", root, e->d_name) >=
		    (int)sizeof dir)
			continue;
		if (cgroup_dir_populated(dir)) {
			log_warn("cgroup %s: a previous daemon left processes "
			    "there: killing them", dir);
			cgroup_dir_kill(dir);
			cgroup_dir_wait_empty(dir);
		}
		/* Still emptying after the wait: the next sweep takes it. */
		cgroup_dir_remove(dir);
	}
	closedir(d);
}

/*
 * Choose how sessions are contained: a subtree of the daemon's own cgroup
 * named for its socket, where it can be made, else the daemon as child
 * subreaper only; say which, and why, in the daemon log.
 */
void
cgroup_init(void)
{
	char		 mnt[PATH_MAX], own[PATH_MAX], root[PATH_MAX];
	unsigned long	 h = 5381;
	const char	*p;

	for (p = dmn.sock_path; *p != '\0'; p++)
		h = h * 33 + (unsigned char)*p;
	if (getenv("DBGCTLD_NO_CGROUP") != NULL) {
		strlcpy(cgroup_why, "DBGCTLD_NO_CGROUP is set",
		    sizeof cgroup_why);
	} else if (cgroup_mount(mnt, sizeof mnt) != 0) {
		strlcpy(cgroup_why, "no cgroup v2 mount",
		    sizeof cgroup_why);
	} else if (cgroup_own(own, sizeof own) != 0) {
		strlcpy(cgroup_why, "no cgroup v2 line in /proc/self/cgroup",
		    sizeof cgroup_why);
	} else if (snprintf(root, sizeof root, "%s%s/dbgctld-%lu-%08lx", mnt,
	    strcmp(own, "/") == 0 ? "" : own, (unsigned long)getuid(),
	    h & 0xffffffffUL) >= (int)sizeof root) {
		strlcpy(cgroup_why, "the cgroup path is too long",
		    sizeof cgroup_why);
	} else if (mkdir(root, 0755) != 0 && errno != EEXIST) {
		snprintf(cgroup_why, sizeof cgroup_why, "cannot make %s: %s",
		    root, strerror(errno));
	} else {
		dmn.cgroup_root = xstrdup(root);
		if ((cgroup_root_fd = open(root, O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) == -1)
			cgroup_root_fd = AT_FDCWD;
		log_info("containment: cgroup, in %s", root);
		return;
	}
	log_info("containment: subreaper (%s)", cgroup_why);
}

/*
 * Once the sessions a dead daemon left are adopted: kill what else it
 * left in the subtree.
 */
void
cgroup_sweep_left(void)
{
	size_t i;

	if (dmn.cgroup_root != NULL)
		cgroup_sweep(dmn.cgroup_root);
	for (i = 0; i < cgroup_nadopted; i++)
		free(cgroup_adopted[i]);
	free(cgroup_adopted);
	cgroup_adopted = NULL;
	cgroup_nadopted = 0;
}

/* The daemon exits: its subtree goes, if nothing is left in it. */
void
cgroup_fini(void)
{
	if (dmn.cgroup_root == NULL)
		return;
	if (cgroup_root_fd != AT_FDCWD)
		close(cgroup_root_fd);
	cgroup_root_fd = AT_FDCWD;
	/* What an earlier sweep could not remove yet is empty by now. */
	cgroup_sweep(dmn.cgroup_root);
	if (rmdir(dmn.cgroup_root) != 0)
		log_warn("cgroup %s: rmdir: %s", dmn.cgroup_root,
		    strerror(errno));
}

/* The containment in use, for hello: the mode and its cgroup, or why there is none. */
json_t *
cgroup_json(void)
{
	if (dmn.cgroup_root != NULL)
		return json_pack("{s:s, s:s}", "mode", "cgroup", "cgroup",
		    dmn.cgroup_root);
	return json_pack("{s:s, s:s}", "mode", "subreaper", "reason",
	    cgroup_why);
}

/*
 * Whether a process of the tree is alive: cgroup.events read again
 * through the descriptor kept open, which spares a lookup of its long
 * path at every exit (a stop of a thousand sessions reads it twice each).
 */
bool
cgroup_populated(const struct cgroup *cg)
{
	char	buf[256];
	ssize_t	n;

	if (cg->events_fd == -1)
		return cgroup_dir_populated(cg->path);
	n = pread(cg->events_fd, buf, sizeof buf - 1, 0);
	if (n < 0)
		return cgroup_dir_populated(cg->path);
	buf[n] = '\0';
	return cgroup_events_populated(buf);
}

/* cgroup.events changed: tell the owner once the cgroup is empty. */
static void
cgroup_events_cb(uv_fs_event_t *ev, const char *file, int events, int status)
{
	struct cgroup *cg = ev->data;

	(void)file;
	(void)events;
	(void)status;
	if (cg->empty_told || cgroup_populated(cg))
		return;
	cg->empty_told = true;
	cg->cb(cg->arg);
}

/* The name to give with cgroup_root_fd for cg: its own, or its whole path. */
static const char *
cgroup_rel(const struct cgroup *cg)
{
	return cgroup_root_fd == AT_FDCWD ? cg->path : cg->name;
}

/*
 * Bound what the target may make below the cgroup, and the work of
 * removing it; open its cgroup.events, which is read again at its end.
 */
static void
cgroup_setup(struct cgroup *cg)
{
	int dir;

	cg->events_fd = -1;
	if ((dir = openat(cgroup_root_fd, cgroup_rel(cg), O_PATH |
	    O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    cgroup_write_at(dir, "cgroup.max.depth", CGROUP_NEST_DEPTH) != 0 ||
	    cgroup_write_at(dir, "cgroup.max.descendants", CGROUP_NEST_MAX) != 0)
		log_warn("cgroup %s: cannot limit the cgroups below it: %s",
		    cg->path, strerror(errno));
	if (dir != -1) {
		cg->events_fd = openat(dir, "cgroup.events", O_RDONLY |
		    O_CLOEXEC);
		close(dir);
	}
}

/*
 * Make a cgroup for one keeper's tree, or with existing take the one a
 * dead daemon made for a tree now adopted; NULL (logged) if it cannot be.
 */
static struct cgroup *
cgroup_make(const char *name, bool existing, cgroup_cb cb, void *arg)
{
	struct cgroup	*cg;
	char		 events[PATH_MAX];
	int		 fd;

	if (dmn.cgroup_root == NULL)
		return NULL;
	cg = xcalloc(1, sizeof *cg);
	xasprintf(&cg->path, "%s/%s", dmn.cgroup_root, name);
	cg->name = cg->path + strlen(dmn.cgroup_root) + 1;
	cg->cb = cb;
	cg->arg = arg;
	if (existing && (fd = openat(cgroup_root_fd, cgroup_rel(cg), O_PATH |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1)
		close(fd);
	else if (existing || mkdirat(cgroup_root_fd, cgroup_rel(cg),
	    0755) != 0) {
		log_warn("cgroup %s: %s: %s", cg->path, existing ? "open" :
		    "mkdir", strerror(errno));
		free(cg->path);
		free(cg);
		return NULL;
	}
	if (existing) {
		cgroup_adopted = xreallocarray(cgroup_adopted,
		    cgroup_nadopted + 1, sizeof *cgroup_adopted);
		cgroup_adopted[cgroup_nadopted++] = xstrdup(name);
	}
	cgroup_setup(cg);
	snprintf(events, sizeof events, "%s/cgroup.events", cg->path);
	uv_fs_event_init(dmn.loop, &cg->ev);
	cg->ev.data = cg;
	if (uv_fs_event_start(&cg->ev, cgroup_events_cb, events, 0) == 0)
		cg->watching = true;
	else
		log_warn("cgroup %s: cannot watch cgroup.events", cg->path);
	return cg;
}

/* Make a cgroup for one keeper's tree; NULL (logged) if it cannot be made. */
struct cgroup *
cgroup_open(const char *name, cgroup_cb cb, void *arg)
{
	return cgroup_make(name, false, cb, arg);
}

/* Take the cgroup of an adopted keeper's tree, which the sweep then spares. */
struct cgroup *
cgroup_adopt(const char *name, cgroup_cb cb, void *arg)
{
	if (strchr(name, '/') != NULL || name[0] == '.')
		return NULL;
	return cgroup_make(name, true, cb, arg);
}

/* The directory the keeper joins. */
const char *
cgroup_path(const struct cgroup *cg)
{
	return cg->path;
}

/*
 * An O_PATH descriptor of its directory, to start a keeper in it; -1 with
 * errno.
 */
int
cgroup_fd(const struct cgroup *cg)
{
	return openat(cgroup_root_fd, cgroup_rel(cg), O_PATH | O_DIRECTORY |
	    O_CLOEXEC);
}

/* Its name below the daemon's subtree, as a record keeps it. */
const char *
cgroup_name(const struct cgroup *cg)
{
	return cg->name;
}

/* SIGKILL everything in the cgroup; the owner hears when it is empty. */
void
cgroup_kill(struct cgroup *cg)
{
	log_warn("cgroup %s: processes outlived their keeper: killing them",
	    cg->path);
	cgroup_dir_kill(cg->path);
	/* Emptied at once, or before the watch began: look again. */
	cgroup_events_cb(&cg->ev, NULL, 0, 0);
}

/* Free the watch's memory once libuv has closed it. */
static void
cgroup_closed(uv_handle_t *h)
{
	struct cgroup *cg = h->data;

	free(cg->path);
	free(cg);
}

/* Remove the (empty) cgroup and stop watching it; no callback after this. */
void
cgroup_close(struct cgroup *cg)
{
	if (cg == NULL)
		return;
	if (cg->events_fd != -1)
		close(cg->events_fd);
	cg->events_fd = -1;
	/* Most have no cgroup below them: removed at once. */
	if (unlinkat(cgroup_root_fd, cgroup_rel(cg), AT_REMOVEDIR) != 0 &&
	    errno != ENOENT)
		cgroup_dir_remove(cg->path);
	uv_close((uv_handle_t *)&cg->ev, cgroup_closed);
}
