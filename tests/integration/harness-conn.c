/*
 * The raw protocol client: a Unix socket, bytes written exactly as given,
 * lines split at LF by hand, requests written with printf and replies
 * parsed with plain jansson. It deliberately does not use proto/ (neither
 * frame.c nor rpc.c): it is the oracle that checks the daemon's framing
 * and envelopes independently, so that a bug shared by the daemon and the
 * client cannot hide behind itself. Keep it that way.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>

#include <netinet/in.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Connect to a unix socket path. 0, or -errno. */
int
h_conn_open(struct h_conn *c, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int e;

	memset(c, 0, sizeof(*c));
	c->next_id = 1000;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		e = errno;
		close(c->fd);
		c->fd = -1;
		return -e;
	}
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Write all of data within bound_ms. 0, or -errno (EPIPE when closed). */
int
h_conn_send(struct h_conn *c, const char *data, size_t len, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	struct pollfd pfd;
	ssize_t w;

	while (len > 0) {
		w = send(c->fd, data, len, MSG_NOSIGNAL);
		if (w > 0) {
			data += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN)
			return -errno;
		if (h_now() > end)
			return -ETIMEDOUT;
		pfd = (struct pollfd){ c->fd, POLLOUT, 0 };
		poll(&pfd, 1, 20);
	}
	return 0;
}

/* Read one line (without LF) within bound_ms; malloc'd, NULL on EOF/timeout. */
char *
h_conn_line(struct h_conn *c, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	struct pollfd pfd;
	char *nl, *line;
	size_t n;
	ssize_t r;

	for (;;) {
		nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl != NULL) {
			n = (size_t)(nl - c->buf);
			line = malloc(n + 1);
			memcpy(line, c->buf, n);
			line[n] = '\0';
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			return line;
		}
		if (c->eof || h_now() > end)
			return NULL;
		if (c->cap - c->len < 65536) {
			c->cap = c->cap ? c->cap * 2 : 131072;
			c->buf = realloc(c->buf, c->cap);
		}
		r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (r > 0) {
			c->len += (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
			c->eof = true;
			continue;
		}
		pfd = (struct pollfd){ c->fd, POLLIN, 0 };
		poll(&pfd, 1, 20);
	}
}

/* Read one line and parse it as JSON; NULL on EOF, timeout or bad JSON. */
json_t *
h_conn_recv(struct h_conn *c, int bound_ms)
{
	char *line = h_conn_line(c, bound_ms);
	json_t *j;

	if (line == NULL)
		return NULL;
	j = json_loads(line, 0, NULL);
	free(line);
	return j;
}

/* Send a request with a fresh id and return the reply with that id. */
json_t *
h_conn_call(struct h_conn *c, const char *method, const char *params,
    int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	long id = ++c->next_id;
	char *req;
	int n;

	n = asprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\","
	    "\"params\":%s}\n", id, method, params ? params : "{}");
	if (n < 0)
		return NULL;
	if (h_conn_send(c, req, (size_t)n, bound_ms) != 0) {
		free(req);
		return NULL;
	}
	free(req);
	return h_conn_reply(c, id, (int)((end - h_now()) * 1000));
}

/* Read until the reply with id (notifications skipped); NULL at the bound. */
json_t *
h_conn_reply(struct h_conn *c, long id, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	json_t *j;
	int left;

	while ((left = (int)((end - h_now()) * 1000)) > 0 &&
	    (j = h_conn_recv(c, left)) != NULL) {
		if (json_is_integer(json_object_get(j, "id")) &&
		    json_integer_value(json_object_get(j, "id")) == id)
			return j;
		json_decref(j);
	}
	return NULL;
}

/* Close the connection and free its buffer. */
void
h_conn_close(struct h_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

/*
 * Read messages until a notification of method whose member at path holds
 * want (a string; NULL: is there at all) comes; false at bound_ms.
 */
bool
h_conn_wait_note(struct h_conn *c, const char *method, const char *path,
    const char *want, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	const char *m, *v;
	json_t *msg;
	bool ok = false;
	int left;

	while (!ok && (left = (int)((end - h_now()) * 1000)) > 0 &&
	    (msg = h_conn_recv(c, left)) != NULL) {
		m = h_jstr(msg, "method");
		v = h_jstr(msg, path);
		ok = m != NULL && strcmp(m, method) == 0 && (want == NULL ?
		    h_jpath(msg, path) != NULL : v != NULL &&
		    strcmp(v, want) == 0);
		json_decref(msg);
	}
	return ok;
}

/* Connect to 127.0.0.1:port over TCP. 0, or -errno. */
int
h_conn_open_tcp(struct h_conn *c, int port)
{
	struct sockaddr_in sa;
	int fd, e;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->next_id = 1000;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		e = errno;
		close(fd);
		return -e;
	}
	c->fd = fd;
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Launch params on a connection closed at once (no lease); the id, asserted. */
long
h_conn_launch_once(const char *params, int bound_ms)
{
	struct h_conn	 c;
	json_t		*r;
	long		 id;

	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect to %s", H->sock);
	r = h_conn_call(&c, "launch", params, bound_ms);
	id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "launch %s: got %s", params, json_dumps(r,
	    JSON_COMPACT));
	json_decref(r);
	h_conn_close(&c);
	return id;
}

/* Send line with nfds descriptors beside it (SCM_RIGHTS), asserted. */
void
h_conn_send_fds(int sock, const char *line, const int *fds, int nfds)
{
	union {
		char buf[CMSG_SPACE(128 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)line, strlen(line) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	memset(&ctl, 0, sizeof ctl);
	if (nfds > 0) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	cr_assert_eq(sendmsg(sock, &msg, MSG_NOSIGNAL), (ssize_t)iov.iov_len,
	    "sendmsg: %s", strerror(errno));
}

/* Listen on a Unix socket in the test dir, named rel; its path in path. */
int
h_unix_listen(const char *rel, char *path, size_t len)
{
	struct sockaddr_un	sa = { .sun_family = AF_UNIX };
	int			fd;

	h_ctx_path(path, len, rel);
	cr_assert_lt(strlen(path), sizeof sa.sun_path, "%s: too long", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(fd != -1 && bind(fd, (struct sockaddr *)&sa, sizeof sa) ==
	    0 && listen(fd, 4) == 0, "listen %s: %s", path, strerror(errno));
	return fd;
}

/* Read one line from fd into buf (NUL-terminated); its length, 0 at EOF. */
size_t
h_read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n < len - 1 && read(fd, buf + n, 1) == 1)
		if (buf[n++] == '\n')
			break;
	buf[n] = '\0';
	return n;
}
