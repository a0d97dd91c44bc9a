/*
 * A session process's keeper pumps (keeper-pump.c): its terminal, a
 * server's twice (the console's stream and its own), a gdb program's
 * terminal and QEMU's semihosting console, copied by the keeper into pipes
 * that the daemon splices into their logs (pump.c), so that a daemon
 * killed in the middle of a read loses no byte; and taken over by the
 * daemon that adopts the session.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "adopt.h"
#include "session.h"

/* The pipes one source is pumped into: a server's terminal has two. */
#define SESSION_PUMPS	2

/* Close the n pipes of fds (read ends) and w (write ends); -1. */
static int
session_pump_undo(int *fds, int *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		close(fds[i]);
		close(w[i]);
	}
	return -1;
}

/*
 * Have sp's keeper copy what the fd it holds as src gives (a pty, a
 * socket) into n new pipes whose read ends it holds too, as held[i]: the
 * read ends into fds, for pumps (pump.c), 0; or -1 if the keeper did not
 * take them, and the source is read directly, as before keepers pumped.
 * Called before the loop has read the source.
 */
int
session_pump_pipes(struct session_proc *sp, const char *src,
    const char *const held[], int *fds, size_t n)
{
	int	p[2], w[SESSION_PUMPS] = { -1, -1 };
	size_t	i, made;

	if (n > SESSION_PUMPS)
		log_fatal("session %lu: %zu pumps of its %s", sp->s->id, n, src);
	for (made = 0; made < n; made++) {
		if (pipe2(p, O_CLOEXEC) != 0) {
			log_warn("session %lu: pipe for its %s: %s", sp->s->id,
			    held[made], strerror(errno));
			return session_pump_undo(fds, w, made);
		}
		fds[made] = p[0];
		w[made] = p[1];
	}
	for (i = 0; i < n; i++)
		if (!proc_hold(sp->proc, held[i], fds[i]))
			break;
	if (i < n || !proc_hold_pump(sp->proc, src, w, n)) {
		while (i-- > 0)
			proc_release(sp->proc, held[i]);
		return session_pump_undo(fds, w, n);
	}
	/* The keeper's copies are the only writers: their ends are the pipes'. */
	for (i = 0; i < n; i++)
		close(w[i]);
	return 0;
}

/*
 * Read sp's pty from the pipe console, into the console's log, and from
 * server (or -1), a server's own stream's.
 */
static void
session_pump_read(struct session_proc *sp, int console, int server)
{
	console_pump(sp->console, console, &sp->s->output, CONSOLE_SPLICED);
	if (server == -1)
		return;
	console_pump(sp->console, server, sp->s->server_out,
	    CONSOLE_SPLICED_ALSO);
	sp->server_pumped = true;
}

/*
 * The keeper reads sp's pty from here on, into the console's pipe and a
 * server's own, so that no read under way dies with the daemon: it is
 * told before the loop has read the pty, so that no byte goes another way.
 */
void
session_pump_start(struct session_proc *sp)
{
	static const char *const held[] = { "console.pump", "server.pump" };
	int	fds[2];
	size_t	n = strcmp(sp->role, "server") == 0 ? 2 : 1;

	if (session_pump_pipes(sp, "console", held, fds, n) == 0)
		session_pump_read(sp, fds[0], n == 2 ? fds[1] : -1);
}

/*
 * The pipes an adopted keeper pumps sp's pty into, read from here on as
 * the last daemon read them (or, with none, the pty itself).
 */
void
session_pump_adopt(struct session_proc *sp)
{
	size_t	n = (size_t)(sp - sp->s->procs);
	int	fd;

	if ((fd = adopt_take_fd(n, "console.pump")) != -1)
		session_pump_read(sp, fd, adopt_take_fd(n, "server.pump"));
}
