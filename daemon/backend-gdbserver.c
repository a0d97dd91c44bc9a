/* gdbserver: start the server, prove it listens, then connect gdb once. */
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* Delay between two connection probes while the server comes up. */
#define GDBSERVER_PROBE_MS 25

/* A gdbserver session's own state: gdb's, the server and its probe. */
struct gdbserver_data {
	struct gdb_data		 gdb;		/* first: s->bdata points here */
	struct session_proc	*server;
	int			 port;
	struct gdbserver_probe	*probe;		/* the connection in flight */
	struct timer		*retry;
	uint64_t		 deadline;
	bool			 listening;
};

/* One probe connection; it outlives the session's state if it must. */
struct gdbserver_probe {
	uv_tcp_t		 tcp;
	uv_connect_t		 req;
	struct gdbserver_data	*d;		/* NULL once the session ended */
};

static void	backend_gdbserver_probe(void *);

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

/* The server's argv: gdbserver itself, or --server through sh. */
static char **
backend_gdbserver_argv(struct session *s, int port)
{
	struct argv	 av = { 0 };
	char		*cmd;

	if (s->l.server != NULL) {
		cmd = backend_gdbserver_expand(s->l.server, port);
		argv_push(&av, "/bin/sh");
		argv_push(&av, "-c");
		argv_push(&av, cmd);
		free(cmd);
		return av.v;
	}
	argv_push(&av, "gdbserver");
	argv_pushf(&av, "127.0.0.1:%d", port);
	argv_push_json(&av, s->l.argv, 0);
	return av.v;
}

/* A gdbserver session needs something to serve. */
static int
backend_gdbserver_check(const struct launch *l, struct rpc_error *err)
{
	if (l->server != NULL || json_array_size(l->argv) > 0)
		return 0;
	rpc_error_set(err, RPC_INVALID_PARAMS, "a gdbserver session needs a "
	    "PROGRAM or a \"server\" command");
	return -1;
}

/* Pick the port and start the server under its own keeper. */
static int
backend_gdbserver_start(struct session *s, char *err, size_t errlen)
{
	struct gdbserver_data	*d = xcalloc(1, sizeof *d);
	char		       **av, addr[64];
	int			 rc;

	d->port = s->l.port;
	s->bdata = d;
	if (d->port == 0 &&
	    (d->port = backend_gdbserver_free_port(err, errlen)) < 0)
		return -1;
	snprintf(addr, sizeof addr, "127.0.0.1:%d", d->port);
	d->retry = timer_new(backend_gdbserver_probe, d);
	if (backend_gdb_open(s, &d->gdb, addr, err, errlen) != 0)
		return -1;
	if ((d->server = session_proc_add(s, "server", err, errlen)) == NULL)
		return -1;
	/* The target runs inside the server: the pipes are its 0 and 1. */
	d->server->transport = s->transport != NULL;
	d->server->stdio = true;
	av = backend_gdbserver_argv(s, d->port);
	rc = session_proc_spawn(d->server, av, err, errlen);
	argv_free(av);
	return rc;
}

/* The server accepted a probe: start gdb, which connects exactly once. */
static void
backend_gdbserver_listening(struct gdbserver_data *d)
{
	struct session	*s = d->gdb.s;
	char		 why[512];

	d->listening = true;
	log_info("session %lu: the server listens on port %d", s->id, d->port);
	if (session_proc_spawn_main(s, why, sizeof why) != 0)
		session_fail(s, RPC_SPAWN_FAILED, "%s", why);
}

/* A probe's socket is closed: try again, or give up at the deadline. */
static void
backend_gdbserver_probe_closed(uv_handle_t *h)
{
	struct gdbserver_probe	*p = h->data;
	struct gdbserver_data	*d = p->d;
	struct proc		*pr;

	free(p);
	if (d == NULL)
		return;
	d->probe = NULL;
	if (d->listening)
		return;
	/* A server that is gone is never probed again; its end is reported. */
	pr = d->server->proc;
	if (pr == NULL || pr->have_exit || !pr->keeper_live)
		return;
	if (uv_now(dmn.loop) < d->deadline) {
		timer_start(d->retry, GDBSERVER_PROBE_MS);
		return;
	}
	session_fail(d->gdb.s, RPC_TIMEOUT, "the server did not listen on "
	    "port %d within %ld ms", d->port, d->gdb.s->l.connect_timeout);
}

/* A probe connection finished: success means the server listens. */
static void
backend_gdbserver_connected(uv_connect_t *req, int status)
{
	struct gdbserver_probe	*p = req->data;
	struct gdbserver_data	*d = p->d;

	if (status == 0 && d != NULL && d->server->proc != NULL &&
	    !d->server->proc->have_exit)
		backend_gdbserver_listening(d);
	uv_close((uv_handle_t *)&p->tcp, backend_gdbserver_probe_closed);
}

/* Try one TCP connection to the server's port. */
static void
backend_gdbserver_probe(void *arg)
{
	struct gdbserver_data	*d = arg;
	struct gdbserver_probe	*p = xcalloc(1, sizeof *p);
	struct sockaddr_in	 sa;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(d->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p->d = d;
	d->probe = p;
	uv_tcp_init(dmn.loop, &p->tcp);
	p->tcp.data = p;
	p->req.data = p;
	if (uv_tcp_connect(&p->req, &p->tcp, (struct sockaddr *)&sa,
	    backend_gdbserver_connected) != 0)
		uv_close((uv_handle_t *)&p->tcp,
		    backend_gdbserver_probe_closed);
}

/* The server exec'd: probe it until it listens; gdb exec'd: connect it. */
static void
backend_gdbserver_ready(struct session *s, struct session_proc *sp)
{
	struct gdbserver_data *d = s->bdata;

	if (sp != d->server) {
		backend_gdb_connect(s);
		return;
	}
	d->deadline = uv_now(dmn.loop) + s->l.connect_timeout;
	backend_gdbserver_probe(d);
}

/* The server's pid, port and end, beside gdb's remote and the inferior. */
static void
backend_gdbserver_status(const struct session *s, json_t *o)
{
	struct gdbserver_data	*d = s->bdata;
	struct proc		*pr;

	backend_gdb_status(s, o);
	if (d == NULL || d->server == NULL)
		return;
	pr = d->server->proc;
	json_object_set_new(o, "server_pid", pr != NULL && pr->pid ?
	    json_integer(pr->pid) : json_null());
	json_object_set_new(o, "port", json_integer(d->port));
	if (pr != NULL && pr->have_exit)
		json_object_set_new(o, "server_exit", proc_exit_json(pr));
	if (pr != NULL)
		status_add_inferior(s, o, pr->pid);
}

/* Release gdb's state; a probe in flight frees the rest when it closes. */
static void
backend_gdbserver_close(struct session *s)
{
	struct gdbserver_data *d = s->bdata;

	if (d == NULL)
		return;
	backend_gdb_close(s);
	timer_free(d->retry);
	d->retry = NULL;
	if (d->probe != NULL)
		d->probe->d = NULL;
	d->probe = NULL;
	/* The server's process record goes with the session's. */
}

const struct backend backend_gdbserver = {
	.name = "gdbserver",
	.debugger = "gdb",
	.flags = BACKEND_SERVER,
	.check = backend_gdbserver_check,
	.argv = backend_gdb_argv,
	.start = backend_gdbserver_start,
	.ready = backend_gdbserver_ready,
	.command = gdb_command,
	.status = backend_gdbserver_status,
	.close = backend_gdbserver_close,
};
