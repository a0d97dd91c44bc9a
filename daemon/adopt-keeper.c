/*
 * One waiting keeper taken over: its socket checked (ours, in our own
 * directory), the keeper checked (our uid, the pid it says), and what it
 * hands over read, bounded in time: the descriptors it held, by name, and
 * what it has to say of its program. Done before the daemon serves, so a
 * short blocking wait here delays no client's request.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "adopt.h"

/* How long one keeper may take to hand over, in ms. */
#define ADOPT_KEEPER_MS 2000
/* The most a keeper says at its hand-over. */
#define ADOPT_KEEPER_TEXT 4096

/* Close what k holds: the descriptors nobody took, and its connection. */
void
adopt_keeper_close(struct adopt_keeper *k)
{
	size_t i;

	for (i = 0; i < k->nfds; i++)
		if (k->fds[i] != -1)
			close(k->fds[i]);
	k->nfds = 0;
	if (k->ctl != -1)
		close(k->ctl);
	k->ctl = -1;
	free(k->reports);
	k->reports = NULL;
	k->reportslen = 0;
	k->present = false;
}

/* Connect to path, a socket of ours; the connection, or -1 with err. */
static int
adopt_keeper_connect(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un	sun = { .sun_family = AF_UNIX };
	struct stat		st;
	struct ucred		cr;
	socklen_t		len = sizeof cr;
	int			fd;

	if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode) ||
	    st.st_uid != getuid()) {
		snprintf(err, errlen, "not a socket of ours");
		return -1;
	}
	if (strlcpy(sun.sun_path, path, sizeof sun.sun_path) >=
	    sizeof sun.sun_path) {
		snprintf(err, errlen, "path too long");
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		snprintf(err, errlen, "connect: %s", strerror(errno));
		/* Nobody listens there: a keeper that died unclean left it. */
		if (errno == ECONNREFUSED)
			(void)unlink(path);
		if (fd != -1)
			close(fd);
		return -1;
	}
	/* The keeper checks us the same way: the same user on both ends. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    cr.uid != getuid() || cr.pid <= 0) {
		snprintf(err, errlen, "its peer is not a process of ours");
		close(fd);
		return -1;
	}
	return fd;
}

/* Keep the descriptors one message carried, in order; excess ones close. */
static void
adopt_keeper_fds(struct adopt_keeper *k, struct msghdr *msg)
{
	struct cmsghdr	*cm;
	size_t		 i, n;
	int		 fd;

	for (cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof (int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof (int),
			    sizeof fd);
			if (k->nfds < ADOPT_HOLD_MAX)
				k->fds[k->nfds++] = fd;
			else
				close(fd);
		}
	}
}

/*
 * Read from the keeper until it has said "adopted", or the bound; the
 * text is in buf, NUL-terminated; -1 with err.
 */
static int
adopt_keeper_read(struct adopt_keeper *k, char *buf, size_t size, char *err,
    size_t errlen)
{
	char		 cbuf[CMSG_SPACE(ADOPT_HOLD_MAX * sizeof (int))];
	struct iovec	 iov;
	struct msghdr	 msg;
	struct pollfd	 pfd = { .fd = k->ctl, .events = POLLIN };
	long long	 end = loop_mono_ms() + ADOPT_KEEPER_MS;
	size_t		 have = 0;
	ssize_t		 n;

	buf[0] = '\0';
	while (strstr(buf, "adopted\n") == NULL) {
		if (have + 1 >= size || loop_mono_ms() >= end ||
		    poll(&pfd, 1, (int)(end - loop_mono_ms())) <= 0) {
			snprintf(err, errlen, "no hand-over in %d ms",
			    ADOPT_KEEPER_MS);
			return -1;
		}
		iov.iov_base = buf + have;
		iov.iov_len = size - 1 - have;
		memset(&msg, 0, sizeof msg);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof cbuf;
		n = recvmsg(k->ctl, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "%s", n == 0 ? "it hung up" :
			    strerror(errno));
			return -1;
		}
		adopt_keeper_fds(k, &msg);
		have += (size_t)n;
		buf[have] = '\0';
	}
	return 0;
}

/* Keep a report line of the hand-over, after those before it. */
static void
adopt_keeper_report(struct adopt_keeper *k, const char *line)
{
	size_t	len = strlen(line);

	k->reports = xreallocarray(k->reports, k->reportslen + len + 2, 1);
	memcpy(k->reports + k->reportslen, line, len);
	k->reportslen += len;
	k->reports[k->reportslen++] = '\n';
	k->reports[k->reportslen] = '\0';
}

/*
 * Sort what the keeper said: its pid, the names of the descriptors it
 * handed over (in their order), and its reports, kept for the proc.
 */
static int
adopt_keeper_parse(struct adopt_keeper *k, char *text, pid_t peer, char *err,
    size_t errlen)
{
	char	*line, *next, *rest = strstr(text, "adopted\n") + 8;
	size_t	 named = 0;
	long	 pid;

	char	*since = xstrdup(rest);

	/* What follows the hand-over is what the keeper said since: kept. */
	*rest = '\0';
	for (line = text; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		if (strcmp(line, "busy") == 0) {
			snprintf(err, errlen, "its daemon is alive");
			return -1;
		}
		if (sscanf(line, "keeper %ld", &pid) == 1)
			k->pid = (pid_t)pid;
		else if (strncmp(line, "hold ", 5) == 0) {
			if (named < ADOPT_HOLD_MAX)
				strlcpy(k->names[named++], line + 5,
				    ADOPT_NAME_MAX);
		} else if (strcmp(line, "adopted") != 0)
			adopt_keeper_report(k, line);
	}
	k->reports = xreallocarray(k->reports, k->reportslen + strlen(since) +
	    1, 1);
	memcpy(k->reports + k->reportslen, since, strlen(since) + 1);
	k->reportslen += strlen(since);
	free(since);
	if (k->pid != peer || named != k->nfds) {
		snprintf(err, errlen, "it says pid %ld and %zu descriptors; "
		    "its socket says pid %ld, and it sent %zu", (long)k->pid,
		    named, (long)peer, k->nfds);
		return -1;
	}
	return 0;
}

/*
 * Take over the keeper waiting at path into k; -1 with err if there is
 * none, it is not ours, or it would not hand over (k is then empty).
 */
int
adopt_keeper_take(const char *path, struct adopt_keeper *k, char *err,
    size_t errlen)
{
	char		*text = xmalloc(ADOPT_KEEPER_TEXT);
	struct ucred	 cr;
	socklen_t	 len = sizeof cr;
	int		 rc = -1;

	memset(k, 0, sizeof *k);
	k->ctl = -1;
	if ((k->ctl = adopt_keeper_connect(path, err, errlen)) == -1) {
		free(text);
		return -1;
	}
	k->present = true;
	if (getsockopt(k->ctl, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    write(k->ctl, "adopt\n", 6) != 6)
		snprintf(err, errlen, "it hung up");
	else if (adopt_keeper_read(k, text, ADOPT_KEEPER_TEXT, err, errlen) == 0 &&
	    adopt_keeper_parse(k, text, cr.pid, err, errlen) == 0)
		rc = 0;
	free(text);
	if (rc != 0)
		adopt_keeper_close(k);
	return rc;
}
