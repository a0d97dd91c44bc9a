/*
 * gdbserver: start the server, see in /proc that one of its processes
 * listens, then connect gdb: the server's one connection is gdb's.
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

/* The first and the longest pause between two looks at the server. */
#define GDBSERVER_LOOK_FIRST	2
#define GDBSERVER_LOOK_MAX	50

/* A gdbserver session's own state: gdb's, the server and how it is watched. */
struct gdbserver_data {
	struct gdb_data		 gdb;		/* first: s->bdata points here */
	struct session_proc	*server;
	int			 port;		/* the one wanted, 0: any */
	char			 argv[1024];	/* the server's, for status */
	struct timer		*look;
	uint64_t		 deadline;
	unsigned		 pause;		/* ms before the next look */
	bool			 listening;
};

/* Ask the kernel for a free loopback port. */
static int
backend_gdbserver_free_port(char *err, size_t errlen)
{
	struct sockaddr_in	sa;
	socklen_t		len = sizeof sa;
	int			fd, port;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		snprintf(err, errlen, "no free port: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* Replace every {port} in the server command. */
static char *
backend_gdbserver_expand(const char *cmd, int port)
{
	char		*out, num[16], *o;
	size_t		 n = 0;
	const char	*p;

	snprintf(num, sizeof num, "%d", port);
	for (p = cmd; (p = strstr(p, "{port}")) != NULL; p += 6)
		n++;
	out = xmalloc(strlen(cmd) + n * strlen(num) + 1);
	for (o = out, p = cmd; *p != '\0';) {
		if (strncmp(p, "{port}", 6) == 0) {
			o = stpcpy(o, num);
			p += 6;
		} else
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

/*
 * The server's argv: gdbserver itself (port 0: it picks), or --server as
 * words, or through sh with exec in front when it needs a shell, so the
 * pid is the server's either way.
 */
static char **
backend_gdbserver_argv(struct session *s, int port)
{
	struct argv	 av = { 0 };
	char		*cmd;

	if (s->l.server == NULL && s->l.pid != 0) {
		argv_push(&av, "gdbserver");
		argv_push(&av, "--attach");
		argv_pushf(&av, "127.0.0.1:%d", port);
		argv_pushf(&av, "%ld", s->l.pid);
		return av.v;
	}
	if (s->l.server == NULL) {
		argv_push(&av, "gdbserver");
		argv_pushf(&av, "127.0.0.1:%d", port);
		argv_push_json(&av, s->l.argv, 0);
		return av.v;
	}
	cmd = backend_gdbserver_expand(s->l.server, port);
	if (argv_split(&av, cmd) != 0) {
		argv_push(&av, "/bin/sh");
		argv_push(&av, "-c");
		/* exec only where the shell would run one command. */
		if (strpbrk(cmd, ";&|()\n") != NULL || argv_assigns(cmd))
			argv_push(&av, cmd);
		else
			argv_pushf(&av, "exec %s", cmd);
	}
	free(cmd);
	return av.v;
}

/* Keep the server's argv as one line for status. */
static void
backend_gdbserver_keep_argv(struct gdbserver_data *d, char **av)
{
	size_t o = 0;

	for (; *av != NULL && o < sizeof d->argv; av++)
		o += (size_t)snprintf(d->argv + o, sizeof d->argv - o, "%s%s",
		    o > 0 ? "\x1f" : "", *av);
}

/* A gdbserver session needs something to serve. */
static int
backend_gdbserver_check(const struct launch *l, struct rpc_error *err)
{
	if (l->server != NULL || json_array_size(l->argv) > 0 || l->pid != 0)
		return 0;
	rpc_error_set(err, RPC_INVALID_PARAMS, "a gdbserver session needs a "
	    "PROGRAM, a \"pid\" or a \"server\" command");
	return -1;
}

/* The server listens: connect gdb to it, which is its one connection. */
static void
backend_gdbserver_listening(struct gdbserver_data *d, int port,
    const char *host)
{
	struct session	*s = d->gdb.s;
	char		 why[512];

	d->listening = true;
	d->port = port;
	snprintf(d->gdb.remote, sizeof d->gdb.remote, "%s:%d", host, port);
	log_info("session %lu: the server listens on %s", s->id,
	    d->gdb.remote);
	if (session_proc_spawn_main(s, why, sizeof why) != 0)
		session_fail(s, RPC_SPAWN_FAILED, "%s", why);
}

/* Most listening sockets of a server looked at. */
#define GDBSERVER_MAXPORTS 16

/* Whether text names port num: "port N" or ":N", not inside a longer number. */
static bool
backend_gdbserver_names(const char *text, const char *num)
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
backend_gdbserver_pick(struct gdbserver_data *d, struct sock_port *ports,
    size_t n, char *host, size_t hostlen)
{
	char	*said = session_proc_tail(d->server), num[16];
	size_t	 i;
	int	 port = 0;

	for (i = 0; i < n && port == 0; i++) {
		snprintf(num, sizeof num, "%d", ports[i].port);
		if (n > 1 && !backend_gdbserver_names(said, num))
			continue;
		port = ports[i].port;
		strlcpy(host, ports[i].host, hostlen);
	}
	free(said);
	return port;
}

/* The ports a server listens on as "4444, 6666", for a message. */
static void
backend_gdbserver_ports(struct sock_port *ports, size_t n, char *buf,
    size_t len)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i > 0 ? ", " :
		    "", ports[i].port);
}

/* The deadline passed: say how far the server got, and what it printed. */
static void
backend_gdbserver_late(struct gdbserver_data *d, struct sock_port *ports,
    size_t n)
{
	struct session	*s = d->gdb.s;
	char		*tail = session_proc_tail(d->server), list[160];

	backend_gdbserver_ports(ports, n, list, sizeof list);
	if (n > 1)
		session_fail(s, RPC_TIMEOUT, "the server %s listens on ports "
		    "%s and none is named in what it printed; give {port} or "
		    "--port; it printed: %s", d->server->proc->exec_name, list,
		    *tail != '\0' ? tail : "nothing");
	else
		session_fail(s, RPC_TIMEOUT, "the server %s did not listen%s%s "
		    "within %ld ms; it printed: %s", d->server->proc->exec_name,
		    d->port != 0 ? " on port " : "", d->port != 0 ?
		    strchr(d->gdb.remote, ':') + 1 : "", s->l.connect_timeout,
		    *tail != '\0' ? tail : "nothing");
	free(tail);
}

/*
 * Look in /proc whether the server listens (any process under its keeper,
 * so a server its launcher left behind counts); look again a little
 * later, twice as late each time up to a bound, until the deadline.
 */
static void
backend_gdbserver_look(void *arg)
{
	struct gdbserver_data	*d = arg;
	struct proc		*pr = d->server->proc;
	struct sock_port	 ports[GDBSERVER_MAXPORTS];
	char			 host[64];
	size_t			 n;
	int			 port;

	if (d->listening || pr == NULL || pr->have_exit || !pr->keeper_live)
		return;
	n = sock_listening(pr->keeper_pid, d->port, ports, GDBSERVER_MAXPORTS);
	if (n > 0 && (port = backend_gdbserver_pick(d, ports, n, host,
	    sizeof host)) > 0) {
		backend_gdbserver_listening(d, port, host);
		return;
	}
	if (uv_now(dmn.loop) >= d->deadline) {
		backend_gdbserver_late(d, ports, n);
		return;
	}
	timer_start(d->look, d->pause);
	if ((d->pause *= 2) > GDBSERVER_LOOK_MAX)
		d->pause = GDBSERVER_LOOK_MAX;
}

/* Pick the port (or let the server pick) and start it under its keeper. */
static int
backend_gdbserver_start(struct session *s, char *err, size_t errlen)
{
	struct gdbserver_data	*d = xcalloc(1, sizeof *d);
	char		       **av, addr[64];
	int			 rc, port;

	s->bdata = d;
	/* {port} wants a number now; anything else can pick and be seen. */
	d->port = port = s->l.port;
	if (port == 0 && s->l.server != NULL &&
	    strstr(s->l.server, "{port}") != NULL &&
	    (d->port = port = backend_gdbserver_free_port(err, errlen)) < 0)
		return -1;
	snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
	d->look = timer_new(backend_gdbserver_look, d);
	if (backend_gdb_open(s, &d->gdb, addr, err, errlen) != 0)
		return -1;
	if ((d->server = session_proc_add(s, "server", err, errlen)) == NULL)
		return -1;
	/* The target runs inside the server: the pipes are its 0 and 1. */
	d->server->transport = s->transport != NULL;
	d->server->stdio = true;
	av = backend_gdbserver_argv(s, port);
	backend_gdbserver_keep_argv(d, av);
	rc = session_proc_spawn(d->server, av, err, errlen);
	argv_free(av);
	return rc;
}

/* The server exec'd: watch it until it listens; gdb exec'd: connect it. */
static void
backend_gdbserver_ready(struct session *s, struct session_proc *sp)
{
	struct gdbserver_data *d = s->bdata;

	if (sp != d->server) {
		backend_gdb_connect(s);
		return;
	}
	d->deadline = uv_now(dmn.loop) + s->l.connect_timeout;
	d->pause = GDBSERVER_LOOK_FIRST;
	backend_gdbserver_look(d);
}

/* The server as status shows it: pid, port, argv, and how it ended. */
static void
backend_gdbserver_status(const struct session *s, json_t *o)
{
	struct gdbserver_data	*d = s->bdata;
	struct proc		*pr;
	json_t			*srv, *argv;
	char			 copy[sizeof d->argv], *w, *next;

	backend_gdb_status(s, o);
	if (d == NULL || d->server == NULL)
		return;
	argv = json_array();
	pr = d->server->proc;
	json_object_set_new(o, "server_pid", pr != NULL && pr->pid ?
	    json_integer(pr->pid) : json_null());
	json_object_set_new(o, "port", json_integer(d->port));
	if (pr != NULL && pr->have_exit)
		json_object_set_new(o, "server_exit", proc_exit_json(pr));
	if (pr != NULL)
		status_add_inferior(s, o, pr->pid);
	strlcpy(copy, d->argv, sizeof copy);
	for (w = copy; w != NULL; w = next) {
		if ((next = strchr(w, '\x1f')) != NULL)
			*next++ = '\0';
		if (*w != '\0' || next != NULL)
			json_array_append_new(argv, json_string(w));
	}
	srv = json_pack("{s:o, s:i, s:o}", "pid", pr != NULL && pr->pid ?
	    json_integer(pr->pid) : json_null(), "port", d->port, "argv",
	    argv);
	json_object_set_new(o, "server", srv);
}

/* Release gdb's state and stop watching the server. */
static void
backend_gdbserver_close(struct session *s)
{
	struct gdbserver_data *d = s->bdata;

	if (d == NULL)
		return;
	backend_gdb_close(s);
	timer_free(d->look);
	d->look = NULL;
	/* The server's process record goes with the session's. */
}

const struct backend backend_gdbserver = {
	.name = "gdbserver",
	.debugger = "gdb",
	.stop_target = "auto",
	.flags = BACKEND_SERVER | BACKEND_ATTACH,
	.check = backend_gdbserver_check,
	.argv = backend_gdb_argv,
	.start = backend_gdbserver_start,
	.ready = backend_gdbserver_ready,
	.quit = gdb_quit,
	.command = gdb_command,
	.status = backend_gdbserver_status,
	.close = backend_gdbserver_close,
};
