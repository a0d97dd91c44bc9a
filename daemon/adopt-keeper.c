/*
 * One waiting keeper taken over: its socket checked (ours, in our own
 * directory), the keeper checked (our uid, the pid it says), and what it
 * hands over read on the loop, bounded in time: the descriptors it held,
 * by name, and what it has to say of its program. Nothing here blocks:
 * the daemon serves while it adopts.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "adopt.h"

/* How long one keeper may take to hand over, in ms. */
#define ADOPT_KEEPER_MS 2000
/*
 * How soon a keeper whose daemon still holds it is asked again, in ms: a
 * daemon that is replaced lets go of its keepers as it exits, after the
 * new one has begun.
 */
#define ADOPT_KEEPER_RETRY_MS 5
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

/*
 * Connect to path, a socket of ours, without blocking (a keeper that does
 * not accept must not hold the loop); the connection, its peer in *peer,
 * or -1 with err.
 */
static int
adopt_keeper_connect(const char *path, pid_t *peer, char *err, size_t errlen)
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
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1 ||
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
	*peer = cr.pid;
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

/* Stop reading the keeper's connection; its handle is freed once closed. */
static void
adopt_keeper_unpoll(struct adopt_keeper *k)
{
	if (k->poll == NULL)
		return;
	uv_close((uv_handle_t *)k->poll, (uv_close_cb)free);
	k->poll = NULL;
}

/* The hand-over is over (err NULL: whole); tell the adoption. */
static void
adopt_keeper_end(struct adopt_keeper *k, const char *err)
{
	adopt_keeper_unpoll(k);
	timer_free(k->timer);
	k->timer = NULL;
	timer_free(k->retry);
	k->retry = NULL;
	free(k->text);
	k->text = NULL;
	free(k->path);
	k->path = NULL;
	if (err != NULL)
		adopt_keeper_close(k);
	k->done(k, err);
}

/* The keeper took too long to hand over, or its daemon to let go of it. */
static void
adopt_keeper_timeout(void *arg)
{
	struct adopt_keeper	*k = arg;
	char			 err[64];

	snprintf(err, sizeof err, k->busy ? "its daemon held it for %d ms" :
	    "no hand-over in %d ms", ADOPT_KEEPER_MS);
	adopt_keeper_end(k, err);
}

/*
 * Take what one message of the keeper's carried; -1 with err, 1 when it
 * has handed over, 2 if its daemon still holds it.
 */
static int
adopt_keeper_recv(struct adopt_keeper *k, char *err, size_t errlen)
{
	char		 cbuf[CMSG_SPACE(ADOPT_HOLD_MAX * sizeof (int))];
	struct iovec	 iov;
	struct msghdr	 msg = { 0 };
	ssize_t		 n;

	if (k->have + 1 >= ADOPT_KEEPER_TEXT) {
		snprintf(err, errlen, "it says more than %d bytes",
		    ADOPT_KEEPER_TEXT);
		return -1;
	}
	iov.iov_base = k->text + k->have;
	iov.iov_len = ADOPT_KEEPER_TEXT - 1 - k->have;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof cbuf;
	n = recvmsg(k->ctl, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		snprintf(err, errlen, "%s", n == 0 ? "it hung up" :
		    strerror(errno));
		return -1;
	}
	adopt_keeper_fds(k, &msg);
	k->have += (size_t)n;
	k->text[k->have] = '\0';
	if (strncmp(k->text, "busy\n", 5) == 0)
		return 2;
	return strstr(k->text, "adopted\n") != NULL;
}

static void	adopt_keeper_busy(struct adopt_keeper *);

/* The keeper has said something: take it, until it has said "adopted". */
static void
adopt_keeper_poll_cb(uv_poll_t *h, int status, int events)
{
	struct adopt_keeper	*k = h->data;
	char			 err[256];
	int			 rc = 0;

	(void)events;
	if (status < 0) {
		snprintf(err, sizeof err, "%s", uv_strerror(status));
		rc = -1;
	}
	/* A message at a time: the poll calls again while more waits. */
	if (rc == 0)
		rc = adopt_keeper_recv(k, err, sizeof err);
	if (rc == 2) {
		adopt_keeper_busy(k);
		return;
	}
	if (rc == 1 && adopt_keeper_parse(k, k->text, k->peer, err,
	    sizeof err) != 0)
		rc = -1;
	if (rc != 0)
		adopt_keeper_end(k, rc == 1 ? NULL : err);
}

/* Call at the keeper's socket and say "adopt"; -1 with err if none is there. */
static int
adopt_keeper_call(struct adopt_keeper *k, char *err, size_t errlen)
{
	if ((k->ctl = adopt_keeper_connect(k->path, &k->peer, err,
	    errlen)) == -1)
		return -1;
	/*
	 * A keeper still held says "busy" and hangs up at once, perhaps
	 * before this is written: its answer is read all the same.
	 */
	(void)send(k->ctl, "adopt\n", 6, MSG_NOSIGNAL);
	k->present = true;
	k->have = 0;
	k->text[0] = '\0';
	k->poll = xcalloc(1, sizeof *k->poll);
	k->poll->data = k;
	uv_poll_init(dmn.loop, k->poll, k->ctl);
	uv_poll_start(k->poll, UV_READABLE, adopt_keeper_poll_cb);
	return 0;
}

/* Ask a keeper that was busy again. */
static void
adopt_keeper_retry_cb(void *arg)
{
	struct adopt_keeper	*k = arg;
	char			 err[256];

	if (adopt_keeper_call(k, err, sizeof err) != 0)
		adopt_keeper_end(k, err);
}

/* Its daemon still holds the keeper: hang up, and ask again soon. */
static void
adopt_keeper_busy(struct adopt_keeper *k)
{
	size_t i;

	adopt_keeper_unpoll(k);
	close(k->ctl);
	k->ctl = -1;
	for (i = 0; i < k->nfds; i++)
		close(k->fds[i]);
	k->nfds = 0;
	k->busy = true;
	if (k->retry == NULL)
		k->retry = timer_new(adopt_keeper_retry_cb, k);
	timer_start(k->retry, ADOPT_KEEPER_RETRY_MS);
}

/*
 * Begin taking over the keeper waiting at path into k, on the loop;
 * done(k, err) says how it went (err NULL: k is whole; else k is empty).
 * -1 with err, done never called, if there is none or it is not ours.
 */
int
adopt_keeper_begin(const char *path, struct adopt_keeper *k,
    void (*done)(struct adopt_keeper *, const char *), void *arg, char *err,
    size_t errlen)
{
	memset(k, 0, sizeof *k);
	k->ctl = -1;
	k->path = xstrdup(path);
	k->text = xmalloc(ADOPT_KEEPER_TEXT);
	if (adopt_keeper_call(k, err, errlen) != 0) {
		free(k->path);
		free(k->text);
		memset(k, 0, sizeof *k);
		k->ctl = -1;
		return -1;
	}
	k->done = done;
	k->arg = arg;
	k->timer = timer_new(adopt_keeper_timeout, k);
	timer_start(k->timer, ADOPT_KEEPER_MS);
	return 0;
}
