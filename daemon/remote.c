/* Connecting gdb to a remote target: observed through MI, bounded in time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* The connection failed: record why and end the session. */
static void
remote_failed(struct session *s, int code, const char *why)
{
	s->fail_code = code;
	session_fail(s, 0, "%s", why);
	remote_stop_timer(s);
	session_stop(s, -1);
}

/* Nothing came back in time. */
static void
remote_timer_cb(uv_timer_t *t)
{
	struct session	*s = t->data;
	char		 why[512];

	if (s->state != S_STARTING)
		return;
	snprintf(why, sizeof why, "%s: no connection within %ld ms",
	    s->remote, s->connect_timeout);
	remote_failed(s, RPC_TIMEOUT, why);
}

/* Cancel the connection deadline. */
void
remote_stop_timer(struct session *s)
{
	if (s->timer_armed)
		uv_timer_stop(&s->ready_timer);
	s->timer_armed = false;
}

/* Release the deadline's handle when the session ends. */
void
remote_close(struct session *s)
{
	remote_stop_timer(s);
	if (s->timer_init && !uv_is_closing((uv_handle_t *)&s->ready_timer))
		uv_close((uv_handle_t *)&s->ready_timer, NULL);
	mi_close(&s->mi);
}

/* gdb runs: ask it, through MI, to connect, and start the deadline. */
void
remote_start(struct session *s)
{
	s->connect_token = mi_send(&s->mi, "-target-select remote %s",
	    s->remote);
	if (s->connect_token == 0) {
		remote_failed(s, RPC_NOT_READY, "cannot talk to gdb's MI");
		return;
	}
	if (!s->timer_init) {
		uv_timer_init(dmn.loop, &s->ready_timer);
		s->ready_timer.data = s;
		s->timer_init = true;
	}
	uv_timer_start(&s->ready_timer, remote_timer_cb, s->connect_timeout,
	    0);
	s->timer_armed = true;
}

/* Connected: the session runs; the -x commands go to the console in order. */
static void
remote_ready(struct session *s)
{
	const char	*cmd;
	char		*line;
	size_t		 i;

	remote_stop_timer(s);
	log_info("session %lu: connected to %s", s->id, s->remote);
	session_set_state(s, S_RUNNING);
	for (i = 0; i < json_array_size(s->commands); i++) {
		cmd = json_string_value(json_array_get(s->commands, i));
		if (asprintf(&line, "%s\n", cmd) < 0)
			log_fatal("out of memory");
		console_write(&s->console, line, strlen(line));
		free(line);
	}
}

/* A result record came back from gdb's MI. */
void
remote_mi_result(struct session *s, unsigned long token, const char *cls,
    const char *msg)
{
	char why[1024];

	if (token != s->connect_token || s->state != S_STARTING)
		return;
	if (strcmp(cls, "connected") == 0 || strcmp(cls, "done") == 0) {
		remote_ready(s);
		return;
	}
	/* gdb's message usually names the address already. */
	if (msg != NULL && strstr(msg, s->remote) != NULL)
		snprintf(why, sizeof why, "cannot connect: %s", msg);
	else
		snprintf(why, sizeof why, "cannot connect to %s: %s",
		    s->remote, msg != NULL ? msg : cls);
	remote_failed(s, RPC_NOT_READY, why);
}
