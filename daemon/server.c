/*
 * A managed server (gdbserver, QEMU's gdb stub, OpenOCD): started under
 * its keeper before the debugger, and seen in /proc to listen, never
 * connected to; the kind's readiness hook hears where it listens.
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "sock.h"
#include "server.h"

/* The first and the longest pause between two looks at the server. */
#define SERVER_LOOK_FIRST	2
#define SERVER_LOOK_MAX		10

/* Most listening sockets of a server looked at. */
#define SERVER_MAXPORTS		16

/*
 * A TCP socket on loopback port (0: the kernel picks), listening if asked;
 * its port, the socket in *fdp; -1 with err.
 */
static int
server_loopback(int port, bool listening, int *fdp, char *err,
    size_t errlen)
{
	struct sockaddr_in	sa;
	socklen_t		len = sizeof sa;
	int			fd, on = 1;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    (listening && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on,
	    sizeof on) != 0) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    (listening && listen(fd, 1) != 0) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		if (port != 0)
			snprintf(err, errlen, "cannot listen on 127.0.0.1:%d: "
			    "%s", port, strerror(errno));
		else
			snprintf(err, errlen, "no free port: %s",
			    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	*fdp = fd;
	return ntohs(sa.sin_port);
}

/* Ask the kernel for a free loopback port. */
int
server_free_port(char *err, size_t errlen)
{
	int	fd, port;

	if ((port = server_loopback(0, false, &fd, err, errlen)) != -1)
		close(fd);
	return port;
}

/*
 * Listen for the server on loopback port (0: one the kernel picks), for a
 * server that takes a listening socket (QEMU's fd=): it gets the socket as
 * PROC_FD_LISTEN, and the debugger connects as soon as it is started, the
 * kernel holding the connection until the server takes it, so that the
 * two start side by side and nothing looks in /proc. The port, or -1.
 */
int
server_bind(struct server *srv, int port, char *err, size_t errlen)
{
	if ((port = server_loopback(port, true, &srv->fd, err, errlen)) == -1)
		return -1;
	srv->bound = true;
	srv->port = port;
	return port;
}

/* Keep the server's argv as one line for status. */
static void
server_keep_argv(struct server *srv, char **av)
{
	size_t o = 0;

	for (; *av != NULL && o < sizeof srv->argv; av++)
		o += (size_t)snprintf(srv->argv + o, sizeof srv->argv - o,
		    "%s%s", o > 0 ? "\x1f" : "", *av);
}

/* The server listens: tell the kind, whose debugger is its one connection. */
static void
server_listening(struct server *srv, int port, const char *host)
{
	srv->listening = true;
	srv->port = port;
	log_info("session %lu: the server listens on %s:%d", srv->s->id, host,
	    port);
	srv->ready(srv->s, host, port);
}

/* Whether text names port num: "port N" or ":N", not inside a longer number. */
static bool
server_names(const char *text, const char *num)
{
	const char	*p;
	size_t		 n = strlen(num);

	for (p = text; (p = strstr(p, num)) != NULL; p += n) {
		if (isdigit((unsigned char)p[n]))
			continue;
		if ((p - text >= 1 && p[-1] == ':') ||
		    (p - text >= 5 && strncmp(p - 5, "port ", 5) == 0))
			return true;
	}
	return false;
}

/*
 * Of the ports the server listens on, the one for gdb: the only one, or
 * the one its output names ("port N", ":N"); 0 while it is not clear.
 */
static int
server_pick(struct server *srv, struct sock_port *ports, size_t n,
    char *host, size_t hostlen)
{
	char	*said = session_proc_tail(srv->proc), num[16];
	size_t	 i;
	int	 port = 0;

	for (i = 0; i < n && port == 0; i++) {
		snprintf(num, sizeof num, "%d", ports[i].port);
		if (n > 1 && !server_names(said, num))
			continue;
		port = ports[i].port;
		strlcpy(host, ports[i].host, hostlen);
	}
	free(said);
	return port;
}

/* The ports a server listens on as "4444, 6666", for a message. */
static void
server_ports(struct sock_port *ports, size_t n, char *buf, size_t len)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i > 0 ? ", " :
		    "", ports[i].port);
}

/* The deadline passed: say how far the server got, and what it printed. */
static void
server_late(struct server *srv, struct sock_port *ports, size_t n)
{
	struct session	*s = srv->s;
	char		*tail = session_proc_tail(srv->proc), list[160];
	char		 port[16] = "";

	server_ports(ports, n, list, sizeof list);
	if (srv->port != 0)
		snprintf(port, sizeof port, "%d", srv->port);
	if (n > 1)
		session_fail(s, RPC_TIMEOUT, "the server %s listens on ports "
		    "%s and none is named in what it printed; give {port} or "
		    "--port; it printed: %s", proc_name(srv->proc->proc), list,
		    *tail != '\0' ? tail : "nothing");
	else
		session_fail(s, RPC_TIMEOUT, "the server %s did not listen%s%s "
		    "within %ld ms; it printed: %s", proc_name(srv->proc->proc),
		    *port != '\0' ? " on port " : "", port,
		    s->l.connect_timeout, *tail != '\0' ? tail : "nothing");
	free(tail);
}

/*
 * Look in /proc whether the server listens (any process under its keeper,
 * so a server its launcher left behind counts); look again a little
 * later, twice as late each time up to a bound, until the deadline.
 */
static void
server_look(void *arg)
{
	struct server		*srv = arg;
	struct proc		*pr = srv->proc->proc;
	struct sock_port	 ports[SERVER_MAXPORTS];
	char			 host[64];
	size_t			 n;
	int			 port;

	if (srv->listening || pr == NULL || proc_exit(pr, NULL, NULL) ||
	    !proc_alive(pr))
		return;
	n = sock_listening(proc_keeper_pid(pr), srv->port, ports,
	    SERVER_MAXPORTS);
	if (n > 0 && (port = server_pick(srv, ports, n, host,
	    sizeof host)) > 0) {
		server_listening(srv, port, host);
		return;
	}
	if (uv_now(dmn.loop) >= srv->deadline) {
		server_late(srv, ports, n);
		return;
	}
	timer_start(srv->look, srv->pause);
	if ((srv->pause *= 2) > SERVER_LOOK_MAX)
		srv->pause = SERVER_LOOK_MAX;
}

/*
 * Start the server with argv under its keeper, the transport's pipes as
 * its 0 and 1 (the target runs inside it); port is the one it will
 * listen on, 0 for the one it picks; ready hears where it listens.
 */
int
server_start(struct server *srv, struct session *s, char **av, int port,
    server_ready_cb ready, char *err, size_t errlen)
{
	srv->s = s;
	srv->port = port;
	srv->ready = ready;
	srv->look = timer_new(server_look, srv);
	if ((srv->proc = session_proc_add(s, "server", err, errlen)) == NULL)
		return -1;
	srv->proc->transport = s->transport != NULL;
	srv->proc->stdio = true;
	if (srv->bound) {
		srv->proc->listen_fd = srv->fd;
		srv->fd = -1;
	}
	memcpy(srv->proc->extra_fds, srv->extra_fds, sizeof srv->extra_fds);
	memset(srv->extra_fds, -1, sizeof srv->extra_fds);
	server_keep_argv(srv, av);
	return session_proc_spawn(srv->proc, av, err, errlen);
}

/* A process exec'd: if it is the server, watch it until it listens. */
bool
server_started(struct server *srv, struct session_proc *sp)
{
	if (srv->proc == NULL || sp != srv->proc)
		return false;
	srv->deadline = uv_now(dmn.loop) + srv->s->l.connect_timeout;
	srv->pause = SERVER_LOOK_FIRST;
	if (srv->bound)
		server_listening(srv, srv->port, "127.0.0.1");
	else
		server_look(srv);
	return true;
}

/* The server as status shows it: pid, port, argv, and how it ended. */
void
server_status(const struct server *srv, json_t *o)
{
	struct proc	*pr;
	json_t		*argv;
	char		 copy[sizeof srv->argv], *w, *next;

	if (srv->proc == NULL)
		return;
	argv = json_array();
	pr = srv->proc->proc;
	json_object_set_new(o, "server_pid", pr != NULL && proc_pid(pr) ?
	    json_integer(proc_pid(pr)) : json_null());
	json_object_set_new(o, "port", json_integer(srv->port));
	if (pr != NULL && proc_exit(pr, NULL, NULL))
		json_object_set_new(o, "server_exit", proc_exit_json(pr));
	if (pr != NULL)
		status_add_inferior(srv->s, o, proc_pid(pr));
	strlcpy(copy, srv->argv, sizeof copy);
	for (w = copy; w != NULL; w = next) {
		if ((next = strchr(w, '\x1f')) != NULL)
			*next++ = '\0';
		if (*w != '\0' || next != NULL)
			json_array_append_new(argv, json_string(w));
	}
	json_object_set_new(o, "server", json_pack("{s:o, s:i, s:o}", "pid",
	    pr != NULL && proc_pid(pr) ? json_integer(proc_pid(pr)) :
	    json_null(),
	    "port", srv->port, "argv", argv));
}

/* A server not started yet: no process, no socket. */
void
server_init(struct server *srv)
{
	memset(srv, 0, sizeof *srv);
	srv->fd = -1;
	memset(srv->extra_fds, -1, sizeof srv->extra_fds);
}

/*
 * A process of an adopted session exec'd: if it is the server, it has
 * listened since the dead daemon saw it, at the port its record kept, and
 * gdb is connected to it: nothing is looked for.
 */
bool
server_adopted(struct server *srv, struct session_proc *sp)
{
	if (srv->proc == NULL || sp != srv->proc)
		return false;
	srv->listening = true;
	return true;
}

/* Whether a server was started for the session. */
bool
server_managed(const struct server *srv)
{
	return srv->proc != NULL;
}

/* Whether the daemon bound the server's socket and hands it over. */
bool
server_bound(const struct server *srv)
{
	return srv->bound;
}

/* Whether the server listens, seen in /proc or bound by the daemon. */
bool
server_up(const struct server *srv)
{
	return srv->listening;
}

/* Whether the server's keeper has reported its exit. */
bool
server_exited(const struct server *srv)
{
	return srv->proc != NULL && proc_exit(srv->proc->proc, NULL, NULL);
}

/* The port the server listens on, or will: 0 until it is known. */
int
server_port(const struct server *srv)
{
	return srv->port;
}

/* Stop watching; the server's process record goes with the session's. */
void
server_close(struct server *srv)
{
	size_t i;

	timer_free(srv->look);
	srv->look = NULL;
	if (srv->bound && srv->fd != -1)
		close(srv->fd);
	srv->fd = -1;
	for (i = 0; i < PROC_EXTRA_FDS; i++)
		if (srv->extra_fds[i] != -1)
			close(srv->extra_fds[i]);
	memset(srv->extra_fds, -1, sizeof srv->extra_fds);
}
