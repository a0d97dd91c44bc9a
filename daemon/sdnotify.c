/*
 * Telling a service manager how the daemon is (NOTIFY_SOCKET, the protocol
 * of sd_notify(3), without libsystemd): READY=1 once it listens, STATUS=
 * as its sessions come and go, STOPPING=1 at shutdown. One datagram each,
 * never waited for: a manager that is gone costs a log line, nothing more.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "sdnotify.h"

/* Where the notifications go, and what was last said. */
struct sdnotify {
	int			 fd;
	struct sockaddr_un	 sa;
	socklen_t		 salen;
	char			 env[PATH_MAX];	/* NOTIFY_SOCKET= */
	unsigned long		 live;		/* sessions the last STATUS= told */
	bool			 failed;	/* a send failed: said once */
};

/* NOTIFY_SOCKET's, or NULL. */
static struct sdnotify	*sdnotify_to;

/*
 * The address NOTIFY_SOCKET names into n: a path, or an abstract name
 * written @NAME; -1 if it is neither or does not fit.
 */
static int
sdnotify_address(struct sdnotify *n, const char *v)
{
	size_t len = strlen(v);

	if ((*v != '/' && *v != '@') || len < 2 || len > sizeof n->sa.sun_path)
		return -1;
	if (*v == '/' && len == sizeof n->sa.sun_path)
		return -1;	/* no room for its NUL */
	n->sa.sun_family = AF_UNIX;
	memcpy(n->sa.sun_path, v, len);
	n->salen = offsetof(struct sockaddr_un, sun_path) + len;
	if (*v == '@')
		n->sa.sun_path[0] = '\0';	/* abstract: no NUL counted */
	else
		n->salen++;
	return 0;
}

/*
 * Take NOTIFY_SOCKET from the environment, so that no session program
 * inherits it (it would tell the manager about the daemon), and open a
 * datagram socket for it. A bad one is logged and ignored.
 */
void
sdnotify_init(void)
{
	struct sdnotify	*n;
	char		 v[sizeof n->sa.sun_path + 8];
	const char	*env = getenv("NOTIFY_SOCKET");

	if (env == NULL)
		return;
	snprintf(v, sizeof v, "%s", env);
	unsetenv("NOTIFY_SOCKET");
	if (*v == '\0')
		return;
	n = xcalloc(1, sizeof *n);
	strlcpy(n->env, v, sizeof n->env);
	if (sdnotify_address(n, v) != 0) {
		log_warn("NOTIFY_SOCKET=%s is not a socket path or an abstract "
		    "@name that fits; the service manager is not told", v);
		free(n);
		return;
	}
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (n->fd == -1) {
		log_warn("NOTIFY_SOCKET: socket: %s; the service manager is "
		    "not told", strerror(errno));
		free(n);
		return;
	}
	sdnotify_to = n;
}

/* Send one notification (newline-separated assignments); failures logged. */
static void
sdnotify_send(const char *fmt, ...)
{
	struct sdnotify	*n = sdnotify_to;
	char		 msg[PATH_MAX + 256];
	va_list		 ap;

	if (n == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (sendto(n->fd, msg, strlen(msg), MSG_NOSIGNAL,
	    (struct sockaddr *)&n->sa, n->salen) != -1 || n->failed)
		return;
	/* Every state change would say it again: once is enough. */
	n->failed = true;
	log_warn("cannot tell the service manager (NOTIFY_SOCKET): %s",
	    strerror(errno));
}

/* Say how many sessions are served, when that changed. */
static void
sdnotify_status(void)
{
	unsigned long live = session_live_count();

	if (live == sdnotify_to->live)
		return;
	sdnotify_to->live = live;
	if (dmn.shutting_down)
		sdnotify_send("STATUS=shutting down: %lu session%s left", live,
		    live == 1 ? "" : "s");
	else
		sdnotify_send("STATUS=serving %lu session%s on %s", live,
		    live == 1 ? "" : "s", dmn.sock_path);
}

/* A session changed state: the count in STATUS= may have changed. */
static void
sdnotify_session_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)s;
	(void)ev;
	sdnotify_status();
}

/*
 * The daemon listens: READY=1, with its pid (the one a detached daemon
 * ended up with) and what it serves; from now on STATUS= follows the
 * sessions.
 */
void
sdnotify_ready(void)
{
	if (sdnotify_to == NULL)
		return;
	sdnotify_send("READY=1\nMAINPID=%ld\nSTATUS=serving 0 sessions on %s",
	    (long)getpid(), dmn.sock_path);
	session_sink_add(NULL, SE_STATE, sdnotify_session_state, NULL);
}

/* The daemon is shutting down: STOPPING=1, and how many sessions it ends. */
void
sdnotify_stopping(void)
{
	unsigned long live = session_live_count();

	if (sdnotify_to == NULL)
		return;
	sdnotify_to->live = live;
	sdnotify_send("STOPPING=1\nSTATUS=shutting down: stopping %lu "
	    "session%s", live, live == 1 ? "" : "s");
}

/*
 * The value NOTIFY_SOCKET had, or NULL: a daemon that replaces this one is
 * given it, as the service's main process from then on.
 */
const char *
sdnotify_socket(void)
{
	return sdnotify_to != NULL ? sdnotify_to->env : NULL;
}

/*
 * The daemon hands over to pid: it is the service's main process now
 * (MAINPID=), so that this one's exit neither stops nor fails the unit.
 */
void
sdnotify_mainpid(pid_t pid)
{
	sdnotify_send("MAINPID=%ld\nSTATUS=handing over to pid %ld", (long)pid,
	    (long)pid);
}
