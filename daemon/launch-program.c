/*
 * A launch's program found as gdb finds it: relative to the launch's cwd,
 * and a bare name also on the PATH the debugger will search; a debugger's
 * program that is not there fails the launch.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "launch.h"

/* The PATH the debugger will search: the launch's, the kind's, the daemon's. */
static const char *
launch_program_dirs(const struct launch *l)
{
	const char *path;

	path = json_string_value(json_object_get(l->env, "PATH"));
	if (path == NULL)
		path = l->backend->path;
	if (path == NULL)
		path = getenv("PATH");
	return path != NULL ? path : "/usr/bin:/bin";
}

/* Whether dir/name is there (dir relative to cwd), its path then in *found; errno says why not. */
static bool
launch_program_at(const char *cwd, const char *dir, const char *name,
    char **found)
{
	struct stat	 sb;
	char		*path;
	int		 rc;

	if (*name == '/')
		xasprintf(&path, "%s", name);
	else if (dir == NULL || *dir == '\0')
		xasprintf(&path, "%s/%s", cwd, name);
	else if (*dir == '/')
		xasprintf(&path, "%s/%s", dir, name);
	else
		xasprintf(&path, "%s/%s/%s", cwd, dir, name);
	rc = stat(path, &sb);
	if (rc == 0 && S_ISDIR(sb.st_mode))
		errno = EISDIR;
	if (rc == 0 && !S_ISDIR(sb.st_mode)) {
		*found = path;
		return true;
	}
	free(path);
	return false;
}

/*
 * The debugger's PROGRAM as gdb finds it: relative to the launch's cwd,
 * and a bare name also on PATH; NULL, errno saying why, if it is not.
 */
char *
launch_program_path(const struct launch *l)
{
	const char	*prog, *p, *end;
	char		 dir[PATH_MAX], *found;
	int		 first;

	prog = json_string_value(json_array_get(l->argv, 0));
	if (prog == NULL) {
		errno = ENOENT;
		return NULL;
	}
	if (launch_program_at(l->cwd, NULL, prog, &found))
		return found;
	first = errno;
	if (strchr(prog, '/') == NULL) {
		for (p = launch_program_dirs(l); ; p = end + 1) {
			end = strchrnul(p, ':');
			snprintf(dir, sizeof dir, "%.*s", (int)(end - p), p);
			if (launch_program_at(l->cwd, dir, prog, &found))
				return found;
			if (*end == '\0')
				break;
		}
	}
	errno = first;
	return NULL;
}

/*
 * The debugger's PROGRAM is a file it reads, found as gdb finds it:
 * relative to the launch's cwd, and a bare name also on PATH. A missing
 * one fails the launch now, as an exec kind's program fails to exec,
 * rather than leave a debugger running with nothing to debug.
 */
int
launch_program_check(const struct launch *l, struct rpc_error *err)
{
	char *found;

	if (l->backend->debugger == NULL || json_array_size(l->argv) == 0)
		return 0;
	if ((found = launch_program_path(l)) == NULL) {
		rpc_error_set(err, RPC_SPAWN_FAILED, "%s: %s",
		    json_string_value(json_array_get(l->argv, 0)),
		    strerror(errno));
		return -1;
	}
	free(found);
	return 0;
}
