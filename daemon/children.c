/*
 * A process's children, from /proc/PID/task/TID/children: the one reader
 * of those files, shared by the daemon (its orphans) and the keeper (its
 * tree); it links libc alone, as the keeper does.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "children.h"

/*
 * Append the children of every thread of pid to pids[n..max); return the
 * new count. A list longer than one read is cut: callers look again.
 */
size_t
children_of(pid_t pid, pid_t *pids, size_t n, size_t max)
{
	char		 path[320], buf[8192], *p, *end;
	struct dirent	*de;
	DIR		*d;
	ssize_t		 len;
	long		 c;
	int		 fd;

	snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
	if ((d = opendir(path)) == NULL)
		return n;
	while ((de = readdir(d)) != NULL && n < max) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%ld/task/%s/children",
		    (long)pid, de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		len = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (p = buf; n < max && (c = strtol(p, &end, 10)) > 0; p = end)
			pids[n++] = (pid_t)c;
	}
	closedir(d);
	return n;
}
