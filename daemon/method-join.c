/*
 * The mi method: a connection becomes a joined MI client of the session's
 * gdb. It is seeded with what a front end would have seen had it been
 * there from the start, then its lines are filtered and written to its
 * channel (join.c, join-chan.c), and when it goes it leaves the session
 * as it was. A client on this host may pass its stdin and stdout with the
 * request (stdio): the daemon then reads and writes them itself, and the
 * connection carries only the client's interrupts (dial.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "conn.h"
#include "dial.h"
#include "gdb.h"
#include "join.h"
#include "method.h"
#include "mi.h"
#include "request.h"

/* How long gdb may take to open a channel and answer the seed. */
#define JOIN_START_MS	10000

/* What a client's socket may carry once its stdin and stdout are ours. */
#define JOIN_SIG_MAX	64

/* Forget a client. */
static void
method_join_free_join(struct join *j)
{
	if (j->ch != NULL)
		join_leave_chan(j);
	join_chan_forget(j);
	timer_free(j->leave_timer);
	free(j->exit_token);
	json_decref(j->groups);
	json_decref(j->varobjs);
	json_decref(j->bkpts);
	frame_free(&j->in);
	frame_free(&j->sig);
	free(j->program);
	session_unref(j->s);
	free(j);
}

/*
 * The client's own -dbgctl-interrupt (its SIGINT, before the filter): an
 * observer's halts nothing and is told so, as an MI error without token.
 */
static void
method_join_interrupt(struct join *j)
{
	struct mi_filter f = { .verdict = MIF_ERROR };

	if (!j->observe) {
		join_interrupt(j);
		return;
	}
	strlcpy(f.why, "an observer does not interrupt the target: "
	    "-dbgctl-interrupt is refused", sizeof f.why);
	join_answer(j, "", &f);
}

/* One line a client wrote: filtered, then written, answered or its leave. */
static int
method_join_line(void *arg, char *line, size_t len)
{
	struct join		*j = arg;
	struct mi_filter_ctx	 ctx = { 0 };
	struct mi_filter	 f;
	size_t			 digits = strspn(line, "0123456789");
	char			*ctoken, *cmd;

	if (j->ch == NULL || !j->live || j->leaving)
		return 0;
	while (len > digits && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == digits)
		return 0;
	xasprintf(&ctoken, "%.*s", (int)digits, line);
	xasprintf(&cmd, "%.*s", (int)(len - digits), line + digits);
	if (digits == 0 && strcmp(cmd, "-dbgctl-interrupt") == 0) {
		method_join_interrupt(j);
		free(ctoken);
		free(cmd);
		return 0;
	}
	ctx.program = j->program;
	ctx.remote = j->g->remote[0] != '\0' ? j->g->remote : NULL;
	ctx.pid = j->pid;
	ctx.observe = j->observe;
	ctx.full = j->full;
	ctx.internal = j->g->fault_bkpts;
	if (j->in.cut) {
		memset(&f, 0, sizeof f);
		f.verdict = MIF_ERROR;
		snprintf(f.why, sizeof f.why, "a command longer than %d bytes",
		    FRAME_MAX);
	} else
		mi_filter_decide(&ctx, cmd, &f);
	if (f.verdict == MIF_PASS)
		join_write(j, ctoken, cmd, f.flags);
	else if (f.verdict == MIF_EXIT)
		join_leave(j, ctoken);
	else
		join_answer(j, ctoken, &f);
	free(ctoken);
	free(cmd);
	/* After a leave no line is read. */
	return f.verdict == MIF_EXIT;
}

/* Bytes from a joined client: its command lines. */
static size_t
method_join_input(struct conn *c, const char *data, size_t len)
{
	struct join *j = c->mode_data;

	/* A line past the limit is cut and refused, never fatal. */
	j->feeding = true;
	frame_feed(&j->in, data, len, method_join_line, j);
	j->feeding = false;
	/* Its leave closed the connection: j was kept until the feed ended. */
	if (j->gone)
		method_join_free_join(j);
	return len;
}

/* A client that sends no more leaves, once it has its answers. */
static void
method_join_eof(struct conn *c)
{
	join_leave(c->mode_data, NULL);
}

/* The client's connection closed. */
static void
method_join_close(struct conn *c)
{
	struct join *j = c->mode_data;

	log_info("session %lu: a joined MI client left", j->s->id);
	j->c = NULL;
	if (j->feeding) {
		j->gone = true;
		return;
	}
	method_join_free_join(j);
}

/* A line on the socket of a client served from its stdio: its interrupt. */
static int
method_join_sig_line(void *arg, char *line, size_t len)
{
	struct join *j = arg;

	if (j->sig.cut || len != strlen("-dbgctl-interrupt") ||
	    strcmp(line, "-dbgctl-interrupt") != 0) {
		log_warn("session %lu: closing a joined MI client whose socket "
		    "carried more than interrupts", j->s->id);
		conn_drop(j->c);
		return 1;
	}
	if (j->live && !j->leaving)
		method_join_interrupt(j);
	return 0;
}

/*
 * The socket of a client served from its stdio: interrupt lines, and at
 * its end the client is gone, as when a bridged client's socket closes.
 */
static void
method_join_sock_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct conn	*c = st->data;
	struct join	*j = c->mode_data;

	if (nread == 0)
		return;
	if (nread < 0) {
		uv_read_stop(st);
		conn_close(c);
		return;
	}
	j->feeding = true;
	frame_feed(&j->sig, buf->base, nread, method_join_sig_line, j);
	j->feeding = false;
	if (j->gone)
		method_join_free_join(j);
}

static const struct conn_mode method_join_mode = {
	.name = "mi",
	.raw = true,
	.input = method_join_input,
	.eof = method_join_eof,
	.close = method_join_close,
};

/* The client's seed is known: the join is answered, and the stream begins. */
void
join_seeded(struct join *j)
{
	struct request	*req = j->req;
	struct conn	*c = j->c;

	join_live(j);
	j->req = NULL;
	/* Answered on the socket; with stdio, the seed goes to stdout. */
	request_done(req, json_pack("{s:b, s:I, s:I, s:s, s:b}", "raw", 1,
	    "session", (json_int_t)j->s->id, "channel", (json_int_t)j->ch->id,
	    "mi", j->mi2 ? "mi2" : "mi3", "stdio", j->stdio));
	conn_set_mode(c, &method_join_mode, j);
	if (j->stdio)
		dial_start(c, method_join_sock_cb);
}

/* gdb could not open a channel: the join fails with why. */
void
join_fail(struct join *j, const char *why)
{
	if (j->req != NULL)
		request_error(j->req, RPC_NOT_READY, "gdb could not open an MI "
		    "channel: %s", why != NULL ? why : "no reason given");
}

/* The session's gdb is gone: a joined client hears EOF, a joining one why. */
void
join_gone(struct join *j)
{
	if (j->ch != NULL) {
		j->ch->j = NULL;
		j->ch = NULL;
	}
	timer_free(j->leave_timer);
	j->leave_timer = NULL;
	if (j->req != NULL)
		request_error(j->req, RPC_NOT_RUNNING, "session %lu ended while "
		    "joining", j->s->id);
	else if (j->c != NULL)
		conn_finish(j->c);
}

/* The mi request is done waiting: a client not joined yet is forgotten. */
static void
method_join_free(struct request *req)
{
	struct join *j = req->data;

	if (j->req == req)
		j->req = NULL;
	if (!j->live)
		method_join_free_join(j);
}

/* The channel or its seed took too long. */
static void
method_join_timeout(struct request *req)
{
	request_error(req, RPC_TIMEOUT, "gdb did not open an MI channel within "
	    "%d ms", JOIN_START_MS);
}

/* The session's program, resolved, for the filter; NULL if it has none. */
static char *
method_join_program(struct session *s)
{
	const char	*p = json_string_value(json_array_get(s->l.argv, 0));
	char		 path[PATH_MAX], *rel;

	if (p == NULL || s->l.pid != 0)
		return NULL;
	if (p[0] != '/') {
		xasprintf(&rel, "%s/%s", s->l.cwd, p);
		if (realpath(rel, path) == NULL)
			strlcpy(path, rel, sizeof path);
		free(rel);
	} else if (realpath(p, path) == NULL)
		strlcpy(path, p, sizeof path);
	return xstrdup(path);
}

/*
 * Whether a joining client that passed its stdin and stdout (stdio) is
 * served from them; one whose descriptors cannot be (a terminal, a pipe
 * the daemon holds) is told so in the reply and bridges them itself.
 */
static bool
method_join_stdio(struct request *req)
{
	struct rpc_error err;

	if (!request_bool(req, "stdio"))
		return false;
	memset(&err, 0, sizeof err);
	if (dial_check(req->conn, "mi's stdio", &err) == 0)
		return true;
	log_info("session %lu: a joining MI client's stdin and stdout are "
	    "not served: %s", req->session->id, err.message);
	dial_close(req->conn);
	return false;
}

/* mi: the connection becomes an MI client of the session's gdb. */
static enum method_return
method_join_exec(struct request *req)
{
	const char	*mi = request_str(req, "mi", "mi3");
	struct gdb_data	*g;
	struct join	*j;
	struct rpc_error	 err = { .id = NULL };

	if ((g = method_target_gdb(req, "joining over MI")) == NULL)
		return METHOD_ERROR;
	if (strcmp(mi, "mi2") != 0 && strcmp(mi, "mi3") != 0)
		return request_error(req, RPC_INVALID_PARAMS, "mi is \"mi2\" or "
		    "\"mi3\", not \"%s\"", mi);
	if (req->conn == NULL)
		return request_error(req, RPC_INVALID_REQUEST, "a joined MI "
		    "client needs a connection");
	if (request_bool(req, "observe") && request_bool(req, "full"))
		return request_error(req, RPC_INVALID_PARAMS, "observe and full "
		    "exclude each other: an observer changes nothing");
	j = xcalloc(1, sizeof *j);
	j->s = req->session;
	session_ref(j->s);
	j->g = g;
	j->c = req->conn;
	j->c_serial = req->conn->serial;
	j->req = req;
	j->mi2 = strcmp(mi, "mi2") == 0;
	j->keep_breakpoints = request_bool(req, "keep_breakpoints");
	j->leave_halted = request_bool(req, "leave_halted");
	j->observe = request_bool(req, "observe");
	j->full = request_bool(req, "full");
	j->program = method_join_program(j->s);
	j->groups = json_array();
	j->varobjs = json_array();
	j->bkpts = json_array();
	frame_init(&j->in, FRAME_MAX);
	frame_cut(&j->in);
	frame_init(&j->sig, JOIN_SIG_MAX);
	frame_cut(&j->sig);
	j->stdio = method_join_stdio(req);
	if (join_chan_take(j, &err) != 0) {
		j->req = NULL;
		method_join_free_join(j);
		return request_error(req, err.code, "%s", err.message);
	}
	pending_wait(req, j, method_join_free);
	pending_timeout(req, JOIN_START_MS, method_join_timeout);
	if (j->ch->ready)
		join_seed(j);
	return METHOD_WAIT;
}

static const struct method_param method_join_params[] = {
	{ "session", PT_SESSION, true, 0, 0 },
	{ "mi", PT_STRING, false, 0, 0 },
	{ "keep_breakpoints", PT_BOOL, false, 0, 0 },
	{ "leave_halted", PT_BOOL, false, 0, 0 },
	{ "observe", PT_BOOL, false, 0, 0 },
	{ "full", PT_BOOL, false, 0, 0 },
	{ "stdio", PT_BOOL, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_join = {
	.name = "mi",
	.params = method_join_params,
	.flags = METHOD_ALONE,
	.exec = method_join_exec,
};

const struct method *const method_joins[] = {
	&method_join,
	NULL
};
