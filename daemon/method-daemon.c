/*
 * The daemon methods: hello, ping, dial, subscribe, unsubscribe, shutdown
 * and replace.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "notify.h"
#include "cgroup.h"
#include "conn.h"
#include "dial.h"
#include "method.h"
#include "peer.h"
#include "replace.h"
#include "request.h"
#include "status-page.h"

#define PROTOCOL_VERSION 1

/*
 * hello: who this daemon is; on TCP, where the token is presented: a wrong
 * one is refused, late, and the connection closed (peer.c).
 */
static enum method_return
method_hello_exec(struct request *req)
{
	struct conn	*c = req->conn;
	const char	*token = request_str(req, "token", NULL);
	bool		 tcp = !c->authed;
	json_t		*res;

	if (!c->authed && token != NULL && !peer_token(c, token))
		return peer_refuse(req);
	/* What a client may use beyond protocol 1 as first published. */
	res = json_pack("{s:s, s:i, s:i, s:o, s:[s,s,s], s:{s:b, s:b}, s:b}",
	    "version", DBGCTL_VERSION, "protocol", PROTOCOL_VERSION,
	    "pid", (int)getpid(), "capabilities", backend_names(),
	    "features", "list.fields", "list.table", "launch.wait",
	    "authentication", "token", tcp, "authenticated", c->authed,
	    "activated", dmn.activated);
	/* How sessions are contained is the owner's business only. */
	if (c->authed)
		json_object_set_new(res, "containment", cgroup_json());
	return request_done(req, res);
}

static const struct method_param method_hello_params[] = {
	{ "token", PT_STRING, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_hello = {
	.name = "hello",
	.params = method_hello_params,
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_NOAUTH | METHOD_WHILE_ADOPTING,
	.exec = method_hello_exec,
};

/* ping: proof of life. */
static enum method_return
method_ping_exec(struct request *req)
{
	static const char	pong[] = "{\"pong\":true}";

	return request_done_text(req, xstrdup(pong), sizeof pong - 1);
}

static const struct method method_ping = {
	.name = "ping",
	.flags = METHOD_WHILE_SHUTDOWN | METHOD_WHILE_ADOPTING,
	.exec = method_ping_exec,
};

/*
 * dial: serve this connection from the stdin and stdout passed with the
 * request (dial-stdio's, from sshd). The reply goes on the socket, the
 * replies to what follows on the stdout passed.
 */
static enum method_return
method_dial_exec(struct request *req)
{
	struct conn		*c = req->conn;
	struct rpc_error	 err;
	enum method_return	 rv;

	memset(&err, 0, sizeof err);
	if (dial_check(c, "dial", &err) != 0)
		return request_fail(req, &err);
	/* Answered on the socket, before the switch. */
	rv = request_done(req, json_pack("{s:b}", "dialed", 1));
	dial_start(c, dial_sock_end_cb);
	return rv;
}

static const struct method method_dial = {
	.name = "dial",
	.flags = METHOD_ALONE,
	.exec = method_dial_exec,
};

/*
 * Which streams a subscribe asks for: console by default ("output": false
 * says none); "target" makes the client the reader of a session's target
 * output; the others' output comes as the console's does. -1 with the
 * error answered when a name is none of them.
 */
static int
method_subscribe_streams(struct request *req, unsigned *streams,
    bool *target)
{
	json_t		*names = request_get(req, "streams"), *v;
	char		 names_ok[256];
	unsigned	 bit;
	size_t		 i;

	*streams = request_get(req, "output") == NULL ||
	    request_bool(req, "output") ? session_stream_bit("console") : 0;
	*target = false;
	if (names == NULL)
		return 0;
	*streams = 0;
	json_array_foreach(names, i, v) {
		if (strcmp(json_string_value(v), "target") == 0)
			*target = true;
		else if ((bit = session_stream_subscribable(
		    json_string_value(v))) != 0)
			*streams |= bit;
		else {
			session_stream_subscribables(names_ok, sizeof names_ok);
			request_error(req, RPC_INVALID_PARAMS, "\"streams\" "
			    "holds \"%s\": the streams are \"target\", %s",
			    json_string_value(v), names_ok);
			return -1;
		}
	}
	return 0;
}

/*
 * The sessions a subscription covers as they are now, as many as fit the
 * reply: with the notifications that follow, nothing is missed between.
 */
static void
method_subscribe_snapshot(struct session *only, struct status_page *page)
{
	struct session *s;

	status_page_init(page, "sessions", SIZE_MAX, NULL);
	if (only != NULL) {
		(void)status_page_add(page, only);
		return;
	}
	TAILQ_FOREACH(s, &dmn.sessions, entry)
		if (!status_page_add(page, s))
			return;
}

/* subscribe: session.state (and session.output) notifications from now on. */
static enum method_return
method_subscribe_exec(struct request *req)
{
	struct session		*s = req->session;
	struct rpc_error	 err;
	struct status_page	 page;
	unsigned		 streams;
	bool			 target;
	size_t			 len;
	char			*text;

	if (method_subscribe_streams(req, &streams, &target) != 0)
		return METHOD_ERROR;
	/* watch and RTT begin later: their output comes once they do. */
	if ((streams & session_stream_bit("semihost")) != 0 && s != NULL &&
	    session_stream_find(s, "semihost", &err) == NULL)
		return request_fail(req, &err);
	if (target && s == NULL)
		return request_error(req, RPC_INVALID_PARAMS, "the \"target\" "
		    "stream is one session's: name its \"session\"");
	if (target && tap_start(req->conn, s, &err) != 0)
		return request_fail(req, &err);
	notify_subscribe(req->conn, s != NULL ? s->id : 0, streams);
	method_subscribe_snapshot(s, &page);
	text = status_page_done(&page, &len);
	return request_done_head(req, text, len, json_pack("{s:b, s:b}",
	    "subscribed", 1, "truncated", page.full));
}

static const struct method_param method_subscribe_params[] = {
	{ "session", PT_SESSION, false, 0, 0 },
	{ "output", PT_BOOL, false, 0, 0 },
	{ "streams", PT_STRINGS, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_subscribe = {
	.name = "subscribe",
	.params = method_subscribe_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_subscribe_exec,
};

/* unsubscribe: no more notifications (of one session, or of any). */
static enum method_return
method_unsubscribe_exec(struct request *req)
{
	struct session *s = req->session;

	if (notify_unsubscribe(req->conn, s != NULL ? s->id : 0) != 0)
		return request_error(req, RPC_INVALID_PARAMS, "this connection "
		    "hears of every session: unsubscribe without \"session\", "
		    "then subscribe to the ones wanted");
	tap_stop(req->conn, s);
	return request_done(req, json_pack("{s:b}", "subscribed", 0));
}

static const struct method_param method_unsubscribe_params[] = {
	{ "session", PT_SESSION, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_unsubscribe = {
	.name = "unsubscribe",
	.params = method_unsubscribe_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_unsubscribe_exec,
};

/* How many sessions a shutdown stopped, for its answer. */
struct method_shutdown_data {
	unsigned long	stopped;
};

/* A session ended: the shutdown answers once none is left. */
static void
method_shutdown_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request			*req = k->arg;
	struct method_shutdown_data	*d = req->data;

	(void)s;
	(void)ev;
	if (session_live_count() == 0)
		request_done(req, json_pack("{s:I}", "stopped",
		    (json_int_t)d->stopped));
}

/* Free a shutdown's state. */
static void
method_shutdown_free(struct request *req)
{
	free(req->data);
}

/* shutdown: stop every session, answer, then exit. */
static enum method_return
method_shutdown_exec(struct request *req)
{
	struct method_shutdown_data	*d = xcalloc(1, sizeof *d);
	struct sink			 k = { .arg = req };

	d->stopped = session_live_count();
	pending_wait(req, d, method_shutdown_free);
	pending_sink(req, NULL, SE_STATE, method_shutdown_state);
	daemon_shutdown(request_int(req, "timeout", -1));
	if (!req->finished)
		method_shutdown_state(&k, NULL, NULL);
	return METHOD_WAIT;
}

static const struct method_param method_shutdown_params[] = {
	{ "timeout", PT_INT, false, 0, STOP_TIMEOUT_MAX },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_shutdown = {
	.name = "shutdown",
	.params = method_shutdown_params,
	.flags = METHOD_WHILE_SHUTDOWN,
	.exec = method_shutdown_exec,
};

/*
 * replace: start a new daemon (the binary this one was run from, or
 * "binary") on the same sockets, and exit once it is ready, leaving it
 * the sessions (replace.c).
 */
static enum method_return
method_replace_exec(struct request *req)
{
	return replace_start(req, request_str(req, "binary", NULL));
}

static const struct method_param method_replace_params[] = {
	{ "binary", PT_STRING, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

static const struct method method_replace = {
	.name = "replace",
	.params = method_replace_params,
	.exec = method_replace_exec,
};

const struct method *const method_daemon[] = {
	&method_hello,
	&method_ping,
	&method_dial,
	&method_subscribe,
	&method_unsubscribe,
	&method_shutdown,
	&method_replace,
	NULL
};
