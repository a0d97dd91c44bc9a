/*
 * Adoption: the socket through which a new daemon takes over a keeper whose
 * daemon has gone.  While a daemon holds the keeper, a connection is told
 * "busy"; once it has gone (and --grace is not 0) the keeper is adrift, and
 * one connection at a time from its own uid may say "adopt", get back the
 * held fds with what it missed, and become the control socket.  Nobody
 * adopting before the grace ends is the daemon gone for good.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdpass.h"
#include "keeper.h"

_Static_assert(KEEPER_MAX_HOLD <= FDPASS_MAX, "a keeper hands over more fds "
    "than one message carries");

#define KEEPER_ADOPT_MS_NS	1000000LL
#define KEEPER_ADOPT_BACKLOG	4

/*
 * Bind and listen on --adopt's path, mode 0600, noting which file is the
 * keeper's own so that only that one is ever unlinked.
 */
void
keeper_adopt_listen(struct keeper *k)
{
	struct keeper_adopt	*a = &k->adopt;
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 mask;
	int			 r;

	if (a->path == NULL)
		return;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(a->path) >= sizeof sun.sun_path)
		keeper_fail(k, "setup", ENAMETOOLONG, 1);
	strcpy(sun.sun_path, a->path);
	a->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (a->lfd == -1)
		keeper_fail(k, "setup", errno, 1);
	mask = umask(077);
	r = bind(a->lfd, (struct sockaddr *)&sun, sizeof sun);
	umask(mask);
	if (r != 0)
		keeper_fail(k, "setup", errno, 1);
	if (stat(a->path, &st) != 0)
		keeper_fail(k, "setup", errno, 1);
	a->bound = 1;
	a->dev = st.st_dev;
	a->ino = st.st_ino;
	if (listen(a->lfd, KEEPER_ADOPT_BACKLOG) != 0)
		keeper_fail(k, "setup", errno, 1);
}

/* Drop the connection that has not said "adopt" (yet). */
static void
keeper_adopt_drop(struct keeper_adopt *a)
{
	close(a->afd);
	a->afd = -1;
	a->alen = 0;
}

/* Unlink the socket's path if the file there is still the keeper's. */
static void
keeper_adopt_unlink(struct keeper_adopt *a)
{
	struct stat	st;

	if (!a->bound)
		return;
	a->bound = 0;
	if (lstat(a->path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == a->dev && st.st_ino == a->ino)
		(void)unlink(a->path);
}

/* Stop being adoptable: close the socket, its path, and all that is held. */
void
keeper_adopt_close(struct keeper *k)
{
	struct keeper_adopt	*a = &k->adopt;

	a->adrift = 0;
	if (a->afd != -1)
		keeper_adopt_drop(a);
	keeper_adopt_unlink(a);
	if (a->lfd != -1) {
		close(a->lfd);
		a->lfd = -1;
	}
	keeper_hold_close(k);
}

/*
 * Go adrift: no daemon, the tree runs on, and a new daemon may adopt the
 * keeper until the grace ends.  The keeper's parent is no longer its daemon,
 * so its death must not count as a later adopter's.
 */
static void
keeper_adopt_drift(struct keeper *k)
{
	struct keeper_adopt	*a = &k->adopt;

	if (a->adrift)
		return;
	if (k->ctl != -1) {
		close(k->ctl);
		k->ctl = -1;
	}
	k->linelen = 0;
	k->discard = 0;
	keeper_hold_flush(k);
	(void)prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
	a->adrift = 1;
	a->deadline = keeper_now_ns() + a->grace_ms * KEEPER_ADOPT_MS_NS;
}

/*
 * The daemon is gone (EOF, PDEATHSIG, SIGHUP): drift if a next one may
 * adopt the keeper; if not, let go of everything held, as a dead daemon's
 * own fds go, and do what a gone daemon always meant.
 */
void
keeper_adopt_lost(struct keeper *k)
{
	if (k->adopt.lfd != -1 && k->adopt.grace_ms > 0) {
		keeper_adopt_drift(k);
		return;
	}
	keeper_adopt_close(k);
	keeper_daemon_gone(k);
}

/* Drop a silent adopter, and end the grace if nobody adopted in it. */
void
keeper_adopt_tick(struct keeper *k)
{
	struct keeper_adopt	*a = &k->adopt;
	int64_t			 now;

	if (a->afd == -1 && !a->adrift)
		return;
	now = keeper_now_ns();
	if (a->afd != -1 && now >= a->adeadline)
		keeper_adopt_drop(a);
	if (!a->adrift || now < a->deadline)
		return;
	keeper_adopt_close(k);
	keeper_daemon_gone(k);
}

/* Return the poll timeout to the next adoption deadline, or -1. */
int
keeper_adopt_timeout(struct keeper *k)
{
	struct keeper_adopt	*a = &k->adopt;
	int			 ms = -1, t;

	if (a->adrift)
		ms = keeper_ms_until(a->deadline);
	if (a->afd != -1) {
		t = keeper_ms_until(a->adeadline);
		if (ms == -1 || t < ms)
			ms = t;
	}
	return ms;
}

/* Whether the peer on fd runs as the keeper's own uid. */
static int
keeper_adopt_peer_ok(int fd)
{
	struct ucred	cr;
	socklen_t	len = sizeof cr;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 ||
	    len != sizeof cr)
		return 0;
	return cr.uid == getuid();
}

/*
 * Answer "busy" and close: the "adopt" the caller sent already is read
 * first, as closing over unread bytes would make its read fail with
 * ECONNRESET instead of ending.
 */
static void
keeper_adopt_busy(int fd)
{
	char	buf[64];

	(void)send(fd, "busy\n", 5, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)recv(fd, buf, sizeof buf, MSG_DONTWAIT);
	close(fd);
}

/*
 * Take one connection: while a daemon holds the keeper, say "busy" so that
 * the caller need not wait; adrift, keep it (if it is the keeper's uid and
 * no other is pending) until it says "adopt".
 */
static void
keeper_adopt_take(struct keeper *k, int fd)
{
	struct keeper_adopt	*a = &k->adopt;

	if (!a->adrift) {
		keeper_adopt_busy(fd);
		return;
	}
	if (!keeper_adopt_peer_ok(fd) || a->afd != -1) {
		close(fd);
		return;
	}
	a->afd = fd;
	a->alen = 0;
	a->adeadline = keeper_now_ns() +
	    KEEPER_ADOPT_WAIT_MS * KEEPER_ADOPT_MS_NS;
}

/* Take every connection waiting on the listening socket. */
void
keeper_adopt_accept(struct keeper *k)
{
	int	fd;

	for (;;) {
		fd = accept4(k->adopt.lfd, NULL, NULL,
		    SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd == -1 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd == -1)
			return;
		keeper_adopt_take(k, fd);
	}
}

/*
 * Write the snapshot at buf: who the keeper is, what it holds, in the order
 * of the fds attached, what the program did, and "adopted"; return its length.
 */
static size_t
keeper_adopt_snapshot(struct keeper *k, char *buf, size_t size)
{
	struct keeper_hold	*h = &k->hold;
	size_t			 len, i;

	len = keeper_report_line(buf, size, "keeper", NULL, (long)k->self, NULL);
	for (i = 0; i < h->n; i++) {
		if (size - len < 6 + strlen(h->names[i]) + 1)
			abort();
		strcpy(buf + len, "hold ");
		strcat(buf + len, h->names[i]);
		strcat(buf + len, "\n");
		len += strlen(buf + len);
	}
	len += keeper_report_state(k, buf + len, size - len);
	if (size - len < 9)
		abort();
	memcpy(buf + len, "adopted\n", 8);
	return len + 8;
}

/*
 * Send the snapshot with copies of every held fd in one message, on a
 * blocking socket (it is tiny); the keeper keeps its own copies for a
 * later crash.  Return 0, or -1 if the adopter went away.
 */
static int
keeper_adopt_send(struct keeper *k, int fd)
{
	char		 buf[1024];
	size_t		 len, off;
	ssize_t		 n;

	len = keeper_adopt_snapshot(k, buf, sizeof buf);
	/* The fds go with the first bytes; the rest of a long line after. */
	if ((n = fdpass_send(fd, buf, len, k->hold.fds, k->hold.n)) <= 0)
		return -1;
	for (off = (size_t)n; off < len; off += (size_t)n) {
		n = send(fd, buf + off, len - off, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			n = 0;
		else if (n <= 0)
			return -1;
	}
	return 0;
}

/*
 * The adopter said "adopt": hand over, and its connection becomes the
 * control socket, blocking as fd 3 was so that reports are written whole.
 */
static void
keeper_adopt_hand_over(struct keeper *k)
{
	struct keeper_adopt	*a = &k->adopt;
	int			 fd = a->afd, fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1 ||
	    keeper_adopt_send(k, fd) != 0) {
		keeper_adopt_drop(a);
		return;
	}
	a->afd = -1;
	a->alen = 0;
	a->adrift = 0;
	k->ctl = fd;
}

/*
 * Read what the pending adopter sent, never more than "adopt\n": anything
 * else, or its end, drops it and the keeper stays adrift.
 */
void
keeper_adopt_read(struct keeper *k)
{
	static const char	 want[] = KEEPER_ADOPT_LINE;
	struct keeper_adopt	*a = &k->adopt;
	char			 buf[sizeof want];
	ssize_t			 n;

	n = recv(a->afd, buf, sizeof want - 1 - a->alen, 0);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0 || memcmp(buf, want + a->alen, n) != 0) {
		keeper_adopt_drop(a);
		return;
	}
	a->alen += n;
	if (a->alen == sizeof want - 1)
		keeper_adopt_hand_over(k);
}
