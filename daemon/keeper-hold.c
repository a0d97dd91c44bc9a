/*
 * The fds the daemon gives the keeper to hold across its own death: the
 * keeper only keeps them open, so that the kernel keeps a pty or a pipe,
 * and the bytes in it, for the next daemon (but a pty it is told to pump,
 * keeper-pump.c, which it reads).
 * They arrive close-on-exec, queued in the order they came, and each
 * "hold NAME" line takes the first of the queue.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <string.h>
#include <unistd.h>

#include "keeper.h"

/* Queue the fds a control message carried; beyond the bound, close them. */
void
keeper_hold_receive(struct keeper *k, struct msghdr *msg)
{
	struct keeper_hold	*h = &k->hold;
	struct cmsghdr		*c;
	size_t			 i, n;
	int			 fd;

	for (c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof fd;
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
			if (h->nqueue == KEEPER_MAX_HOLD)
				close(fd);
			else
				h->queue[h->nqueue++] = fd;
		}
	}
}

/* Take the first queued fd, or -1 if none came. */
static int
keeper_hold_pop(struct keeper_hold *h)
{
	int	fd;

	if (h->nqueue == 0)
		return -1;
	fd = h->queue[0];
	memmove(h->queue, h->queue + 1, --h->nqueue * sizeof h->queue[0]);
	return fd;
}

/* Whether name is 1 to 31 of [a-z0-9.-]. */
static int
keeper_hold_name_ok(const char *name)
{
	size_t	len = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789.-");

	return len > 0 && len < KEEPER_HOLD_NAME && name[len] == '\0';
}

/* Return the index of the fd held under name, or -1. */
static int
keeper_hold_find(struct keeper_hold *h, const char *name)
{
	size_t	i;

	for (i = 0; i < h->n; i++) {
		if (strcmp(h->names[i], name) == 0)
			return (int)i;
	}
	return -1;
}

/*
 * Handle "hold NAME": keep the next queued fd under name, in place of an
 * earlier one; a bad name, or one more than the keeper holds, closes it.
 */
void
keeper_hold_add(struct keeper *k, const char *name)
{
	struct keeper_hold	*h = &k->hold;
	int			 fd, i;

	if ((fd = keeper_hold_pop(h)) == -1)
		return;
	if (!keeper_hold_name_ok(name)) {
		close(fd);
		return;
	}
	if ((i = keeper_hold_find(h, name)) != -1) {
		close(h->fds[i]);
		h->fds[i] = fd;
		return;
	}
	if (h->n == KEEPER_MAX_HOLD) {
		close(fd);
		return;
	}
	strcpy(h->names[h->n], name);
	h->fds[h->n++] = fd;
}

/* Handle "release NAME": close what is held under it, the order kept. */
void
keeper_hold_release(struct keeper *k, const char *name)
{
	struct keeper_hold	*h = &k->hold;
	int			 i;

	if ((i = keeper_hold_find(h, name)) == -1)
		return;
	close(h->fds[i]);
	h->n--;
	memmove(h->fds + i, h->fds + i + 1, (h->n - i) * sizeof h->fds[0]);
	memmove(h->names + i, h->names + i + 1,
	    (h->n - i) * sizeof h->names[0]);
}

/* Take the first queued fd for a line other than "hold"; -1 if none came. */
int
keeper_hold_take(struct keeper *k)
{
	return keeper_hold_pop(&k->hold);
}

/* The fd held under name, which stays held; -1 if none is. */
int
keeper_hold_fd(struct keeper *k, const char *name)
{
	int	i = keeper_hold_find(&k->hold, name);

	return i == -1 ? -1 : k->hold.fds[i];
}

/* Close the fds no line claimed: they belonged to a daemon now gone. */
void
keeper_hold_flush(struct keeper *k)
{
	int	fd;

	while ((fd = keeper_hold_pop(&k->hold)) != -1)
		close(fd);
}

/* Close everything held and queued: no daemon will want it. */
void
keeper_hold_close(struct keeper *k)
{
	struct keeper_hold	*h = &k->hold;

	keeper_hold_flush(k);
	while (h->n > 0)
		close(h->fds[--h->n]);
}
