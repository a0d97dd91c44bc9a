/*
 * A blocking JSON-RPC client over the daemon's Unix socket: write a line,
 * read lines until the reply with the request's id. Kept apart from
 * proto/ on purpose, as the tests' raw client is, so that the benchmark
 * measures the daemon and not our own framing.
 */
#include "bench.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Launches one connection keeps in flight when it starts many. */
#define RPC_WINDOW 32

/* Fill a sockaddr_un with path; -1 if it does not fit. */
int
rpc_addr(void *addr, const char *path)
{
	struct sockaddr_un	*sun = addr;
	size_t			 len = strlen(path);

	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	if (len >= sizeof sun->sun_path)
		return -1;
	memcpy(sun->sun_path, path, len + 1);
	return 0;
}

/* Connect to the socket at path; -1 with r->err if we cannot. */
int
rpc_open(struct rpc *r, const char *path)
{
	struct sockaddr_un sun;

	memset(r, 0, sizeof *r);
	r->fd = -1;
	if (rpc_addr(&sun, path) == -1) {
		snprintf(r->err, sizeof r->err, "socket path too long");
		return -1;
	}
	if ((r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(r->fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		snprintf(r->err, sizeof r->err, "connect %s: %s", path,
		    strerror(errno));
		if (r->fd >= 0)
			close(r->fd);
		r->fd = -1;
		return -1;
	}
	r->cap = 64 * 1024;
	if ((r->buf = malloc(r->cap)) == NULL)
		abort();
	return 0;
}

/* Take fd, connected already (a socketpair to ssh), as r's connection. */
int
rpc_adopt(struct rpc *r, int fd)
{
	memset(r, 0, sizeof *r);
	r->fd = fd;
	r->cap = 64 * 1024;
	if ((r->buf = malloc(r->cap)) == NULL)
		abort();
	return 0;
}

/* Close the connection and free its buffer. */
void
rpc_close(struct rpc *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	r->fd = -1;
	r->buf = NULL;
}

/* Write all of data; -1 with r->err if the connection is gone. */
int
rpc_write(struct rpc *r, const void *data, size_t len)
{
	const char	*p = data;
	ssize_t		 n;

	while (len > 0) {
		n = send(r->fd, p, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(r->err, sizeof r->err, "write: %s",
			    strerror(errno));
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* Make room for at least one more read at the end of the buffer. */
static void
rpc_room(struct rpc *r)
{
	if (r->off > 0) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->scan -= r->off;
		r->off = 0;
	}
	if (r->len == r->cap) {
		r->cap *= 2;
		if ((r->buf = realloc(r->buf, r->cap)) == NULL)
			abort();
	}
}

/*
 * The next line, without its LF and NUL-terminated, valid until the next
 * call; NULL with r->err at the end of the connection.
 */
char *
rpc_line(struct rpc *r)
{
	char	*nl, *line;
	ssize_t	 n;

	for (;;) {
		/* Search only what is new: a line of read may be 700 KB. */
		if (r->scan < r->off)
			r->scan = r->off;
		nl = memchr(r->buf + r->scan, '\n', r->len - r->scan);
		if (nl != NULL) {
			*nl = '\0';
			line = r->buf + r->off;
			r->off = r->scan = nl + 1 - r->buf;
			return line;
		}
		r->scan = r->len;
		rpc_room(r);
		n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(r->err, sizeof r->err, "read: %s",
			    n == 0 ? "connection closed" : strerror(errno));
			return NULL;
		}
		r->len += n;
	}
}

/* The ping every figure sends: the daemon answers it, an echo returns it. */
const char rpc_ping_line[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
    "\"ping\"}\n";
const size_t rpc_ping_len = sizeof rpc_ping_line - 1;

/* n pings' round trips on r: their p50 and p99 in µs; -1 on a failure. */
int
rpc_ping_pct(struct rpc *r, int n, double *p50, double *p99)
{
	struct samples	s = { 0 };
	double		us;
	int		i;

	for (i = 0; i < n; i++) {
		if (!((us = rpc_roundtrip_us(r, rpc_ping_line,
		    rpc_ping_len)) >= 0)) {
			stat_free(&s);
			return -1;
		}
		stat_add(&s, us);
	}
	*p50 = stat_pct(&s, 50);
	*p99 = stat_pct(&s, 99);
	stat_free(&s);
	return 0;
}

/* Whether a server at path accepts connections yet. */
int
rpc_listens(const char *path)
{
	struct rpc	r;
	int		ok;

	ok = rpc_open(&r, path) == 0;
	rpc_close(&r);
	return ok;
}

/* Write one whole line and read one back: the round trip in µs, or NA. */
double
rpc_roundtrip_us(struct rpc *r, const char *line, size_t len)
{
	double t0 = stat_now_ms();

	if (rpc_write(r, line, len) == -1 || rpc_line(r) == NULL)
		return NA;
	return (stat_now_ms() - t0) * 1000;
}

/* Send a request (params are taken); its id, or -1 with r->err. */
long
rpc_send(struct rpc *r, const char *method, json_t *params)
{
	json_t	*req;
	char	*text;
	size_t	 len;
	int	 rv;

	req = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id",
	    (json_int_t)++r->id, "method", method, "params",
	    params != NULL ? params : json_object());
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (text == NULL)
		abort();
	/* The line and its LF in one write, as a rig's client sends it. */
	len = strlen(text);
	if ((text = realloc(text, len + 2)) == NULL)
		abort();
	text[len++] = '\n';
	rv = rpc_write(r, text, len);
	free(text);
	if (rv == -1)
		return -1;
	return r->id;
}

/* The next reply, skipping notifications, with its id; NULL at the end. */
json_t *
rpc_reply(struct rpc *r, long *id)
{
	json_error_t	 e;
	json_t		*msg, *jid;
	char		*line;

	while ((line = rpc_line(r)) != NULL) {
		if ((msg = json_loads(line, 0, &e)) == NULL) {
			snprintf(r->err, sizeof r->err, "bad reply: %s",
			    e.text);
			return NULL;
		}
		if ((jid = json_object_get(msg, "id")) != NULL) {
			*id = json_is_integer(jid) ?
			    (long)json_integer_value(jid) : -1;
			return msg;
		}
		json_decref(msg);
	}
	return NULL;
}

/* A reply's result (a new reference), or NULL with its error in r->err. */
static json_t *
rpc_result(struct rpc *r, json_t *msg)
{
	json_t		*res = json_object_get(msg, "result");
	const char	*why;

	if (res != NULL)
		return json_incref(res);
	why = json_string_value(json_object_get(json_object_get(msg,
	    "error"), "message"));
	snprintf(r->err, sizeof r->err, "%s", why != NULL ? why : "error");
	return NULL;
}

/* Call method (params are taken); its result, or NULL with r->err. */
json_t *
rpc_call(struct rpc *r, const char *method, json_t *params)
{
	json_t	*msg, *res;
	long	 want, id;

	if ((want = rpc_send(r, method, params)) == -1)
		return NULL;
	while ((msg = rpc_reply(r, &id)) != NULL) {
		if (id == want) {
			res = rpc_result(r, msg);
			json_decref(msg);
			return res;
		}
		json_decref(msg);
	}
	return NULL;
}

/* The params of a live session: an exec session of `sleep 1000`. */
static json_t *
rpc_sleep_params(void)
{
	return json_pack("{s:s, s:[s, s], s:s}", "kind", "exec", "argv",
	    "sleep", "1000", "cwd", "/");
}

/* Launch one `sleep 1000` session; its session object, or NULL. */
json_t *
rpc_launch_sleep(struct rpc *r)
{
	return rpc_call(r, "launch", rpc_sleep_params());
}

/*
 * Launch n sessions of params (NULL: `sleep 1000`), RPC_WINDOW in flight
 * at a time, to build a scale quickly; 0, or -1 with r->err.
 */
int
rpc_launch_many(struct rpc *r, int n, json_t *params)
{
	json_t	*msg, *p;
	long	 id;
	int	 sent = 0, done = 0, bad = 0;

	while (done < n) {
		while (sent < n && sent - done < RPC_WINDOW) {
			p = params != NULL ? json_deep_copy(params) :
			    rpc_sleep_params();
			if (rpc_send(r, "launch", p) == -1)
				return -1;
			sent++;
		}
		if ((msg = rpc_reply(r, &id)) == NULL)
			return -1;
		if (json_object_get(msg, "result") == NULL && !bad++)
			json_decref(rpc_result(r, msg));
		json_decref(msg);
		done++;
	}
	return bad ? -1 : 0;
}

/* Stop one session and wait for the reply; 0, or -1 with r->err. */
int
rpc_stop(struct rpc *r, json_int_t session)
{
	json_t *res;

	res = rpc_call(r, "stop", json_pack("{s:I}", "session", session));
	if (res == NULL)
		return -1;
	json_decref(res);
	return 0;
}
