/*
 * A process's children, from /proc/PID/task/TID/children: the one reader
 * of those files, shared by the daemon (its orphans) and the keeper (its
 * tree); it links libc alone, as the keeper does.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "children.h"

/* Read a whole file of unknown length; malloc'd and NUL-terminated, or NULL. */
static char *
children_read(const char *path, size_t *len)
{
	char	*buf = NULL, *p;
	size_t	 cap = 0, n = 0;
	ssize_t	 r;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	/* The kernel gives a page of pids a read: read to the end. */
	for (;;) {
		if (cap - n < 4097) {
			cap = cap == 0 ? 8192 : cap * 2;
			if ((p = realloc(buf, cap)) == NULL)
				break;
			buf = p;
		}
		if ((r = read(fd, buf + n, cap - n - 1)) <= 0)
			break;
		n += r;
	}
	close(fd);
	if (buf != NULL)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* Append the pids of a children list to *pids (of *n, room for *cap). */
static void
children_parse(const char *text, pid_t **pids, size_t *n, size_t *cap)
{
	const char	*p = text;
	char		*end;
	long		 c;
	pid_t		*grown;

	for (; (c = strtol(p, &end, 10)) > 0 && (*end == ' ' || *end == '\n');
	    p = end + 1) {
		if (*n == *cap) {
			grown = realloc(*pids, (*cap == 0 ? 64 : *cap * 2) *
			    sizeof **pids);
			if (grown == NULL)
				return;
			*pids = grown;
			*cap = *cap == 0 ? 64 : *cap * 2;
		}
		(*pids)[(*n)++] = (pid_t)c;
	}
}

/*
 * n in decimal, written into the end of buf (24 bytes) without printf,
 * whose deep frames would dirty stack pages the keeper keeps for its
 * whole life; where the digits start.
 */
char *
children_decimal(long n, char *buf)
{
	unsigned long	 v = n < 0 ? 0UL - (unsigned long)n : (unsigned long)n;
	char		*p = buf + 23;

	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	if (n < 0)
		*--p = '-';
	return p;
}

/* "/proc/PID" and rest into buf, without printf; NULL if too long. */
char *
children_proc_path(char *buf, size_t len, pid_t pid, const char *rest)
{
	char	 num[24], *p = children_decimal(pid, num);
	size_t	 n;

	n = strlen("/proc/") + strlen(p) + strlen(rest);
	if (n >= len)
		return NULL;
	strcpy(buf, "/proc/");
	strcat(buf, p);
	strcat(buf, rest);
	return buf;
}

/*
 * The children of a process that runs one thread (the keeper starts
 * none): its one list, read without the walk of its task directory; a
 * malloc'd array of *n pids as children_of gives.
 */
pid_t *
children_of_single(pid_t pid, size_t *n)
{
	char	 path[320], num[24], *text;
	pid_t	*pids = NULL;
	size_t	 cap = 0, len;

	*n = 0;
	if (children_proc_path(path, sizeof path, pid, "/task/") == NULL ||
	    strlen(path) + 24 + sizeof "/children" > sizeof path)
		return NULL;
	strcat(path, children_decimal(pid, num));
	strcat(path, "/children");
	if ((text = children_read(path, &len)) == NULL)
		return NULL;
	children_parse(text, &pids, n, &cap);
	free(text);
	return pids;
}

/*
 * Every child of every thread of pid, however many: a malloc'd array of
 * *n pids (NULL and 0 if none, or pid is gone). Free it.
 */
pid_t *
children_of(pid_t pid, size_t *n)
{
	char		 path[320], *text;
	struct dirent	*de;
	pid_t		*pids = NULL;
	size_t		 cap = 0, len, base;
	DIR		*d;

	*n = 0;
	if (children_proc_path(path, sizeof path, pid, "/task/") == NULL ||
	    (d = opendir(path)) == NULL)
		return NULL;
	base = strlen(path);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || base + strlen(de->d_name) +
		    sizeof "/children" > sizeof path)
			continue;
		/* PID/task/TID/children, on the PID/task/ already written. */
		strcpy(path + base, de->d_name);
		strcat(path + base, "/children");
		if ((text = children_read(path, &len)) == NULL)
			continue;
		children_parse(text, &pids, n, &cap);
		free(text);
	}
	closedir(d);
	return pids;
}
