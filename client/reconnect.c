/*
 * Riding out a daemon's restart: when the daemon dies under a command that
 * waits (logs -f, wait, expect, attach), the sessions it leaves wait for
 * the next daemon (their keepers' sockets beside the socket, see ADOPTION
 * in dbgctld(8)); the command connects to that one, starting it as any
 * command would, and carries on. Bounded: DBGCTLD_ADOPT_GRACE's seconds,
 * as long as the sessions wait, else 30.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dbgctl.h"
#include "paths.h"

/* Seconds a command waits for the next daemon unless told otherwise. */
#define RECONNECT_GRACE_S	30

/* Pause between two connects while the next daemon comes up. */
#define RECONNECT_NAP_MS	20

/* From a start of the next daemon that failed to the next try, in ms. */
#define RECONNECT_START_AGAIN_MS	500

/*
 * Whether sessions of a daemon that died wait beside the socket for the
 * next daemon to adopt them (their keepers' sockets, SOCKET.kID.N): then
 * even a command that only reads starts one, which has them to show.
 */
int
reconnect_sessions_wait(const struct client *c)
{
	char		 dir[PATH_MAX], base[PATH_MAX + 2];
	struct dirent	*de;
	size_t		 len;
	bool		 found = false;
	DIR		*d;

	strlcpy(dir, c->socket, sizeof dir);
	strlcpy(base, c->socket, sizeof base);
	snprintf(base, sizeof base, "%s.k", basename(base));
	len = strlen(base);
	if ((d = opendir(dirname(dir))) == NULL)
		return false;
	while (!found && (de = readdir(d)) != NULL)
		found = strncmp(de->d_name, base, len) == 0 &&
		    de->d_type == DT_SOCK;
	closedir(d);
	return found;
}

/* Milliseconds on the monotonic clock. */
long long
reconnect_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * How long (ms) to wait for the next daemon: as long as the sessions wait
 * for it (DBGCTLD_ADOPT_GRACE, when this client has it too), else 30 s.
 */
long long
reconnect_bound(void)
{
	const char	*env = getenv("DBGCTLD_ADOPT_GRACE");
	long long	 s;

	if (env == NULL || args_strtonum(env, &s) != 0 || s <= 0)
		s = RECONNECT_GRACE_S;
	return s * 1000;
}

/*
 * Whether a daemon may still come to the socket: sessions of the dead one
 * wait there for adoption, or a process (a service manager) has the
 * socket bound, about to listen.
 */
static int
reconnect_expected(struct client *c)
{
	return reconnect_sessions_wait(c) ||
	    paths_socket_bound(c->socket) == 1;
}

/*
 * c lost its daemon: connect to the next one on the same socket, starting
 * it when the sessions of the dead one wait to be adopted (again, a while
 * after a start that failed), and otherwise waiting for one a service
 * manager starts. 0 once connected; -1, said on stderr, when no daemon
 * can come or none came in time.
 */
int
reconnect_again(struct client *c)
{
	long long	 deadline = reconnect_now() + reconnect_bound();
	json_t		*params = json_incref(c->params);
	long long	 next_start = 0;

	/* The request in flight is sent again once connected. */
	client_close(c);
	c->params = params;
	for (;;) {
		if (client_connect_open(c) == 0)
			return 0;
		if (errno != ECONNREFUSED && errno != ENOENT) {
			client_warn("lost connection to the daemon; connect %s: "
			    "%s", c->socket, strerror(errno));
			return -1;
		}
		if (!reconnect_expected(c)) {
			client_warn("lost connection to the daemon, and no "
			    "session waits for another one at %s", c->socket);
			return -1;
		}
		/*
		 * A start fails while the dead daemon's lock or socket is
		 * still being let go of (its exit, on a loaded machine), and
		 * is tried again; one bound by a service manager is its own.
		 */
		if (reconnect_now() >= next_start &&
		    reconnect_sessions_wait(c) &&
		    paths_socket_bound(c->socket) != 1) {
			next_start = reconnect_now() + RECONNECT_START_AGAIN_MS;
			if (autostart_connect(c) == 0)
				return 0;
		}
		if (reconnect_now() >= deadline) {
			client_warn("lost connection to the daemon, and no daemon "
			    "came back at %s within %lld s", c->socket,
			    reconnect_bound() / 1000);
			return -1;
		}
		poll(NULL, 0, RECONNECT_NAP_MS);
	}
}

/* The pid hello names, for telling a daemon from the next; -1 if unknown. */
long long
reconnect_daemon_pid(struct client *c)
{
	json_t		*r;
	long long	 pid;

	if ((r = client_call(c, "hello", json_object())) == NULL)
		return -1;
	pid = json_is_integer(json_object_get(r, "pid")) ?
	    json_integer_value(json_object_get(r, "pid")) : -1;
	json_decref(r);
	return pid;
}

/*
 * Whether a connection to the daemon that had pid *pid finds another
 * daemon now (it restarted): 1, *pid then the new one's; 0 when the same
 * one answers; -1 (said) when none can be reached. Used where the end of
 * a raw stream may be the stream's own or the daemon's death (pipe,
 * attach).
 */
int
reconnect_restarted(struct client *c, long long *pid)
{
	long long	now;
	int		resume = c->resume;

	if (*pid < 0 || client_connect_remote() != NULL)
		return 0;
	client_close(c);
	if (client_connect_open(c) != 0 && reconnect_again(c) != 0)
		return -1;
	/* A dying daemon's socket may still take the connect: ask again. */
	c->resume = 1;
	now = reconnect_daemon_pid(c);
	c->resume = resume;
	if (now == -1 || now == *pid)
		return 0;
	*pid = now;
	return 1;
}
