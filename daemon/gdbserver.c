/* gdbserver sessions: start the server, prove it listens, then connect gdb once. */
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

static void	gdbserver_probe(struct session *);

/* Ask the kernel for a free loopback port. */
static int
gdbserver_free_port(char *err, size_t errlen)
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
gdbserver_expand(const char *cmd, int port)
{
	char	*out, num[16], *o;
	size_t	 n = 0;
	const char *p;

	snprintf(num, sizeof num, "%d", port);
	for (p = cmd; (p = strstr(p, "{port}")) != NULL; p += 6)
		n++;
	if ((out = malloc(strlen(cmd) + n * strlen(num) + 1)) == NULL)
		log_fatal("out of memory");
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
gdbserver_argv(struct session *s)
{
	struct backend_av	 av = { 0 };
	char			 port[32], *cmd;

	if (s->server_cmd != NULL) {
		cmd = gdbserver_expand(s->server_cmd, s->port);
		backend_push(&av, "/bin/sh");
		backend_push(&av, "-c");
		backend_push(&av, cmd);
		free(cmd);
		return av.v;
	}
	snprintf(port, sizeof port, "127.0.0.1:%d", s->port);
	backend_push(&av, "gdbserver");
	backend_push(&av, port);
	backend_push_all(&av, s->argv, 0);
	return av.v;
}

/* Pick the port and start the server under its own keeper. */
int
gdbserver_start(struct session *s, char *err, size_t errlen)
{
	char	**av;
	int	  rc;

	if (s->port == 0 && (s->port = gdbserver_free_port(err, errlen)) < 0)
		return -1;
	if (asprintf(&s->remote, "127.0.0.1:%d", s->port) < 0)
		log_fatal("out of memory");
	if (console_open(&s->server_console, s, NULL, &s->console, err,
	    errlen) != 0)
		return -1;
	s->server.transport = s->transport.enabled;
	s->server.stdio_transport = true;
	av = gdbserver_argv(s);
	rc = proc_spawn(&s->server, av, err, errlen);
	backend_argv_free(av);
	return rc;
}

/* The next probe is due. */
static void
gdbserver_timer_cb(uv_timer_t *t)
{
	gdbserver_probe(t->data);
}

/* A probe's socket is closed; try again or give up. */
static void
gdbserver_probe_closed(uv_handle_t *h)
{
	struct session	*s = h->data;
	char		 why[256];

	if (!s->probing)
		return;
	if (s->state != S_STARTING || !s->server.keeper_live ||
	    s->server.have_exit) {
		s->probing = false;
		session_check_done(s);
		return;
	}
	if (uv_now(dmn.loop) >= s->probe_deadline) {
		s->probing = false;
		snprintf(why, sizeof why, "the server did not listen on port "
		    "%d within %ld ms", s->port, s->connect_timeout);
		s->fail_code = RPC_TIMEOUT;
		session_fail(s, 0, "%s", why);
		session_stop(s, -1);
		return;
	}
	uv_timer_start(&s->ready_timer, gdbserver_timer_cb,
	    GDBSERVER_PROBE_MS, 0);
	s->timer_armed = true;
}

/* The server accepted our probe: start gdb, which connects exactly once. */
static void
gdbserver_listening(struct session *s)
{
	char why[512];

	log_info("session %lu: the server listens on port %d", s->id,
	    s->port);
	if (session_spawn_main(s, why, sizeof why) != 0) {
		session_fail(s, 0, "%s", why);
		session_stop(s, -1);
	}
}

/* A probe connection finished: success means the server listens. */
static void
gdbserver_connect_cb(uv_connect_t *req, int status)
{
	struct session *s = req->data;

	if (status == 0 && s->probing && s->state == S_STARTING &&
	    s->server.keeper_live && !s->server.have_exit) {
		s->probing = false;
		uv_close((uv_handle_t *)&s->probe, NULL);
		gdbserver_listening(s);
		return;
	}
	uv_close((uv_handle_t *)&s->probe, gdbserver_probe_closed);
}

/* Try one TCP connection to the server's port. */
static void
gdbserver_probe(struct session *s)
{
	struct sockaddr_in sa;

	s->timer_armed = false;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(s->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	uv_tcp_init(dmn.loop, &s->probe);
	s->probe.data = s;
	s->probe_req.data = s;
	if (uv_tcp_connect(&s->probe_req, &s->probe,
	    (struct sockaddr *)&sa, gdbserver_connect_cb) != 0)
		uv_close((uv_handle_t *)&s->probe, gdbserver_probe_closed);
}

/* The server exec'd: probe its port until it accepts, within the deadline. */
void
gdbserver_started(struct session *s)
{
	if (!s->timer_init) {
		uv_timer_init(dmn.loop, &s->ready_timer);
		s->ready_timer.data = s;
		s->timer_init = true;
	}
	s->probing = true;
	s->probe_deadline = uv_now(dmn.loop) + s->connect_timeout;
	gdbserver_probe(s);
}

/* Stop probing (the session is stopping or the server is gone). */
void
gdbserver_close(struct session *s)
{
	if (!s->probing)
		return;
	/* The probe in flight finishes; its close callback sees this. */
	if (s->timer_armed) {
		uv_timer_stop(&s->ready_timer);
		s->timer_armed = false;
		s->probing = false;
	}
}
