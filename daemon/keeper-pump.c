/*
 * The keeper's pumps: what a program prints on its pty, copied by the
 * keeper from the master it holds into a pipe (or two) whose read end the
 * daemon splices into the stream's log. A pty cannot be spliced, so a
 * daemon reading it directly would lose the bytes of a read under way if
 * it were killed before writing them; through the keeper, every byte is in
 * the log, still in a pipe, or in the keeper's one chunk for the next
 * daemon. The keeper reads the pty only once every pipe took the last
 * chunk, so a daemon that does not read holds the program back, as the
 * pty itself would.
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"

/* The live pump from the held source name, or NULL. */
static struct keeper_pump *
keeper_pump_find(struct keeper *k, const char *name)
{
	size_t	i;

	for (i = 0; i < k->npumps; i++)
		if (!k->pumps[i].ended && strcmp(k->pumps[i].src, name) == 0)
			return &k->pumps[i];
	return NULL;
}

/* A free slot for a new pump, ended ones' slots freed; NULL if none. */
static struct keeper_pump *
keeper_pump_slot(struct keeper *k)
{
	size_t	i, n = 0;

	for (i = 0; i < k->npumps; i++)
		if (!k->pumps[i].ended)
			k->pumps[n++] = k->pumps[i];
	k->npumps = n;
	if (n == KEEPER_PUMP_MAX)
		return NULL;
	return &k->pumps[k->npumps++];
}

/* Make fd non-blocking; 0, or -1 if it cannot be. */
static int
keeper_pump_nonblock(int fd)
{
	int	fl = fcntl(fd, F_GETFL);

	if (fl == -1)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Close the pipes of p: the daemon reads what they hold, then their end. */
static void
keeper_pump_end(struct keeper_pump *p)
{
	size_t	i;

	for (i = 0; i < p->ndest; i++) {
		if (p->dest[i] != -1)
			close(p->dest[i]);
		p->dest[i] = -1;
		p->pending[i] = 0;
	}
	if (p->slave != -1)
		close(p->slave);
	p->slave = -1;
	if (p->chunk != NULL)
		munmap(p->chunk, KEEPER_PUMP_CHUNK);
	p->chunk = NULL;
	p->ended = 1;
}

/*
 * Keep a slave of the pty held as name open: a master whose slaves are all
 * closed reads as ended, which a program's terminal under gdb is between
 * two runs, once its daemon, which keeps one open, has died.
 */
static int
keeper_pump_slave(struct keeper *k, const char *name)
{
	struct stat	pt, own;
	char		pts[64];
	int		fd = keeper_hold_fd(k, name);

	if (fd == -1 || ptsname_r(fd, pts, sizeof pts) != 0 ||
	    stat(pts, &pt) != 0)
		return -1;
	/* The keeper's own terminal it holds on 0, 1 and 2 already. */
	if (fstat(STDIN_FILENO, &own) == 0 && S_ISCHR(own.st_mode) &&
	    own.st_rdev == pt.st_rdev)
		return -1;
	return open(pts, O_RDWR | O_NOCTTY | O_CLOEXEC);
}

/*
 * Parse "NAME [N]" into name (KEEPER_HOLD_NAME bytes) and its count of
 * pipes, 1 to KEEPER_PUMP_DESTS (1 if none is given); 0 if it does not.
 */
static size_t
keeper_pump_parse(const char *line, char *name)
{
	const char	*sp = strchr(line, ' '), *errstr;
	size_t		 len = sp != NULL ? (size_t)(sp - line) : strlen(line);
	long long	 n = 1;

	if (len == 0 || len >= KEEPER_HOLD_NAME)
		return 0;
	memcpy(name, line, len);
	name[len] = '\0';
	if (sp != NULL)
		n = keeper_number(sp + 1, 1, KEEPER_PUMP_DESTS, &errstr);
	return sp != NULL && errstr != NULL ? 0 : (size_t)n;
}

/*
 * Handle "pump NAME [N]": copy what the fd held as NAME gives into the N
 * pipes' write ends that came with the line, all at once, so that no chunk
 * goes into one before the other has come. A name not held, a bad count
 * or a pump too many closes what came.
 */
void
keeper_pump_add(struct keeper *k, const char *line)
{
	char			 name[KEEPER_HOLD_NAME];
	struct keeper_pump	*p;
	size_t			 n = keeper_pump_parse(line, name);
	int			 src = -1, fd, ok = 1;

	if (n != 0)
		src = keeper_hold_fd(k, name);
	/* The daemon's master is non-blocking; the keeper makes sure. */
	if (src == -1 || keeper_pump_nonblock(src) != 0 ||
	    keeper_pump_find(k, name) != NULL ||
	    (p = keeper_pump_slot(k)) == NULL) {
		keeper_hold_flush(k);
		return;
	}
	memset(p, 0, sizeof *p);
	strcpy(p->src, name);
	p->slave = -1;
	/*
	 * Pages of its own, not the keeper's struct, which is zeroed, nor
	 * the heap, which a keeper does not use otherwise: a keeper's memory
	 * is what it writes, and a quiet program's chunk is never written.
	 */
	p->chunk = mmap(NULL, KEEPER_PUMP_CHUNK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->chunk == MAP_FAILED)
		p->chunk = NULL;
	ok = p->chunk != NULL;
	while (ok && p->ndest < n && (fd = keeper_hold_take(k)) != -1) {
		p->dest[p->ndest++] = fd;
		ok = keeper_pump_nonblock(fd) == 0;
	}
	if (!ok || p->ndest < n) {
		keeper_pump_end(p);
		keeper_hold_flush(k);
		return;
	}
	p->slave = keeper_pump_slave(k, name);
}

/* Handle "release NAME" of a pump's source: its pipes end. */
void
keeper_pump_release(struct keeper *k, const char *name)
{
	struct keeper_pump	*p = keeper_pump_find(k, name);

	if (p != NULL)
		keeper_pump_end(p);
}

/* Write the chunk to each pipe still owed it; 1 once every one took it. */
static int
keeper_pump_flush(struct keeper_pump *p)
{
	size_t	i;
	ssize_t	n;
	int	owed = 0;

	for (i = 0; i < p->ndest; i++) {
		if (!p->pending[i])
			continue;
		/* At most PIPE_BUF bytes: a pipe takes them whole or not. */
		n = write(p->dest[i], p->chunk, p->len);
		if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
			owed = 1;
			continue;
		}
		/* Nobody will read this pipe again: it is dropped. */
		if (n != (ssize_t)p->len) {
			close(p->dest[i]);
			p->dest[i] = -1;
		}
		p->pending[i] = 0;
	}
	return !owed;
}

/*
 * Read the next chunk of the source into p, owed to every open pipe: 1 if
 * one came, 0 if none now or the pump has ended.
 */
static int
keeper_pump_read(struct keeper *k, struct keeper_pump *p)
{
	size_t	i;
	ssize_t	n;
	int	fd = keeper_hold_fd(k, p->src), live = 0;

	for (i = 0; i < p->ndest; i++)
		live |= p->dest[i] != -1;
	/* With no pipe left to take them, the bytes stay in the source. */
	if (fd == -1 || !live) {
		keeper_pump_end(p);
		return 0;
	}
	do
		n = read(fd, p->chunk, KEEPER_PUMP_CHUNK);
	while (n == -1 && errno == EINTR);
	if (n == -1 && errno == EAGAIN)
		return 0;
	/* EIO: every slave is closed (or hung up); nothing more will come. */
	if (n <= 0) {
		keeper_pump_end(p);
		return 0;
	}
	p->len = (size_t)n;
	for (i = 0; i < p->ndest; i++)
		p->pending[i] = p->dest[i] != -1;
	return 1;
}

/*
 * Move what p's source has into its pipes until either would block, or
 * (all false) after KEEPER_PUMP_ROUNDS chunks, so that a flood leaves the
 * keeper its other duties.
 */
static void
keeper_pump_run(struct keeper *k, struct keeper_pump *p, bool all)
{
	int	rounds;

	for (rounds = 0; (all || rounds < KEEPER_PUMP_ROUNDS) && !p->ended;
	    rounds++) {
		if (!keeper_pump_flush(p))
			return;
		if (!keeper_pump_read(k, p))
			return;
	}
}

/*
 * Move what every pump's source has now; with all, everything the pipes
 * take, as at the program's end, whose last words go before its exit.
 */
void
keeper_pump_drain(struct keeper *k, bool all)
{
	size_t	i;

	for (i = 0; i < k->npumps; i++)
		keeper_pump_run(k, &k->pumps[i], all);
}

/* Add to pfd the pipes p still owes its chunk, for POLLOUT; how many. */
static size_t
keeper_pump_owed(const struct keeper_pump *p, struct pollfd *pfd)
{
	size_t	j, n = 0;

	for (j = 0; j < p->ndest; j++) {
		if (!p->pending[j])
			continue;
		pfd[n].fd = p->dest[j];
		pfd[n++].events = POLLOUT;
	}
	return n;
}

/*
 * Fill pfd (room for KEEPER_PUMP_MAX * KEEPER_PUMP_DESTS) with what the
 * pumps wait for: the pipes still owed a chunk, else the source; the
 * number filled.
 */
size_t
keeper_pump_poll(struct keeper *k, struct pollfd *pfd)
{
	struct keeper_pump	*p;
	size_t			 i, n = 0, owed;

	for (i = 0; i < k->npumps; i++) {
		p = &k->pumps[i];
		if (p->ended)
			continue;
		n += owed = keeper_pump_owed(p, pfd + n);
		if (owed > 0 || keeper_hold_fd(k, p->src) == -1)
			continue;
		pfd[n].fd = keeper_hold_fd(k, p->src);
		pfd[n++].events = POLLIN;
	}
	return n;
}

/*
 * The keeper is done: hand on the chunk a pipe is still owed, waiting up to
 * KEEPER_PUMP_FINISH_MS for the daemon to make room, then close every
 * pipe. What is left in the pty the daemon reads from it directly, once
 * a pipe's end tells it that the keeper has stopped reading.
 */
void
keeper_pump_close(struct keeper *k)
{
	struct pollfd	pfd[KEEPER_PUMP_MAX * KEEPER_PUMP_DESTS];
	int64_t		deadline = keeper_now_ns() + KEEPER_PUMP_FINISH_MS *
			    1000000LL;
	size_t		i, n;

	/* With no daemon to read them, the pipes go with what they hold. */
	if (k->ctl == -1)
		deadline = keeper_now_ns();
	for (;;) {
		for (i = n = 0; i < k->npumps; i++)
			if (!k->pumps[i].ended && !keeper_pump_flush(&k->pumps[i]))
				n += keeper_pump_owed(&k->pumps[i], pfd + n);
		if (n == 0 || keeper_now_ns() >= deadline)
			break;
		(void)poll(pfd, n, keeper_ms_until(deadline));
	}
	for (i = 0; i < k->npumps; i++)
		keeper_pump_end(&k->pumps[i]);
}
