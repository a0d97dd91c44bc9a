/*
 * The connection to the daemon: send one request, read its reply, say
 * what went wrong. Finding and connecting to the daemon is
 * client-connect.c's.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "dbgctl.h"
#include "fdpass.h"
#include "scan.h"
#include "paths.h"
#include "rpc.h"

/* Bytes read from the socket at a time. */
#define CLIENT_READ_SIZE	65536

/* How daemon errors end a command that declares nothing else. */
static const struct cmd_exit client_exits[] = {
	{ "timeout", EXIT_TIMEOUT },
	{ "verdict", EXIT_VERDICT },
	{ NULL, EXIT_FAILED },
};

/* Print "dbgctl: message" on stderr, from a va_list. */
void
client_vwarn(const char *fmt, va_list ap)
{
	fputs("dbgctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* Print "dbgctl: message" on stderr. */
void
client_warn(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	client_vwarn(fmt, ap);
	va_end(ap);
}

/* Print "dbgctl: message" and exit: no daemon, or its reply is unusable. */
void
client_fatal(const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	client_vwarn(fmt, ap);
	va_end(ap);
	exit(EXIT_NODAEMON);
}

/* Set up c for the socket given with -s (NULL: the default one). */
void
client_init(struct client *c, const char *socket_arg, int json)
{
	const char	*addr;

	memset(c, 0, sizeof *c);
	c->socket_arg = socket_arg;
	c->json = json;
	c->fd = -1;
	c->next_id = 1;
	frame_init(&c->frame, 0);
	c->ssh_err = -1;
	addr = client_connect_address();
	/* -H unix:PATH names the socket as -s does. */
	if (addr != NULL && strncmp(addr, "unix:", 5) == 0)
		socket_arg = addr + 5;
	if (paths_socket(socket_arg, c->socket, sizeof c->socket) != 0)
		client_fatal("socket path too long");
}

/* Close the connection of c, if any, and free what it holds. */
void
client_close(struct client *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	ssh_close(c);
	frame_free(&c->frame);
	frame_init(&c->frame, 0);
	json_decref(c->reply);
	c->reply = NULL;
	json_decref(c->error.data);
	c->error.data = NULL;
	json_decref(c->params);
	c->params = NULL;
}

/*
 * Find the dbgctld binary: $DBGCTL_DAEMON, next to dbgctl, in the build tree
 * (../daemon/dbgctld from client/dbgctl), else in bindir.
 */
int
client_daemon_path(char *buf, size_t len)
{
	const char	*env;
	char		 tree[PATH_MAX], real[PATH_MAX];

	env = getenv("DBGCTL_DAEMON");
	if (env != NULL && *env != '\0') {
		if (strlcpy(buf, env, len) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		return 0;
	}
	if (paths_sibling("../daemon/dbgctld", "/nonexistent", tree,
	    sizeof tree) == 0 && access(tree, X_OK) == 0 &&
	    realpath(tree, real) != NULL && strlcpy(buf, real, len) < len)
		return 0;
	return paths_sibling("dbgctld", DBGCTL_BINDIR, buf, len);
}

/* The connection is lost: say so (over ssh, why) and exit. */
static void __attribute__((noreturn))
client_lost(struct client *c, int error)
{
	if (c->ssh_pid > 0)
		ssh_lost(c);
	if (error != 0)
		client_fatal("lost connection to the daemon: %s",
		    strerror(error));
	client_fatal("lost connection to the daemon");
}

/*
 * Write a whole request line to the socket, the descriptors to pass (if
 * any) with its first bytes: 0, or the errno it failed with.
 */
static int
client_send(struct client *c, const char *buf, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if (c->npass > 0) {
			n = fdpass_send(c->fd, buf, len, c->pass_fds, c->npass);
			if (n >= 0)
				c->npass = 0;
		} else
			n = send(c->fd, buf, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return errno;
		buf += n;
		len -= n;
	}
	return 0;
}

static void	client_deliver(struct client *);

/*
 * The connection was lost with a request in flight (error its errno, or 0
 * at EOF): a command that rides out a restart (c->resume) connects to the
 * next daemon and sends the request again, adjusted by c->again; any
 * other says so and exits.
 */
static void
client_recover(struct client *c, int error)
{
	if (!c->resume || client_connect_remote() != NULL || c->ssh_pid > 0)
		client_lost(c, error);
	if (reconnect_again(c) != 0)
		exit(EXIT_NODAEMON);
	c->restarts++;
	if (c->again != NULL)
		c->again(c, c->params);
	client_deliver(c);
}

/*
 * Whether line is the result of the request in flight, told without a
 * tree: the daemon writes "id" before "result".
 */
static bool
client_line_result(const struct client *c, const char *line, size_t len)
{
	struct scan	 sc;
	long long	 id;
	bool		 first = true, have_id = false;
	char		*key;

	scan_init(&sc, line, len);
	if (!scan_take(&sc, '{'))
		return false;
	while ((key = scan_member(&sc, &first)) != NULL) {
		if (strcmp(key, "id") == 0)
			have_id = scan_int(&sc, &id) && id == c->want_id;
		else if (strcmp(key, "result") == 0) {
			free(key);
			return have_id;
		} else
			(void)scan_skip(&sc);
		free(key);
		if (sc.bad)
			return false;
	}
	return false;
}

/* Take one line from the daemon: keep the reply we wait for, skip others. */
static int
client_line(void *arg, char *line, size_t len)
{
	struct client	*c = arg;
	json_t		*msg, *id;
	json_error_t	 error;

	if (c->text && c->reply_text == NULL && client_line_result(c, line,
	    len)) {
		/* The line is the frame's buffer: kept as it is, not copied. */
		c->reply_text = frame_take(&c->frame);
		c->reply_len = len;
		return 0;
	}
	msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &error);
	if (msg == NULL || !json_is_object(msg)) {
		json_decref(msg);
		c->garbled = 1;
		return 1;
	}
	id = json_object_get(msg, "id");
	if (id == NULL && c->reply == NULL && c->note != NULL)
		c->note(c, msg);
	if (c->reply != NULL || id == NULL)
		goto skip;	/* a notification, or after our reply */
	if (json_is_null(id) && json_object_get(msg, "error") != NULL)
		goto keep;	/* our request could not be read */
	if (!json_is_integer(id) || json_integer_value(id) != c->want_id)
		goto skip;
keep:
	c->reply = msg;
	return 0;
skip:
	json_decref(msg);
	return 0;
}

/* Read from the socket until the reply to the request in flight is in. */
static void
client_read(struct client *c)
{
	char	buf[CLIENT_READ_SIZE];
	ssize_t	n;
	int	rv;

	while (c->reply == NULL && c->reply_text == NULL) {
		n = read(c->fd, buf, sizeof buf);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && c->resume && errno == ECONNRESET)
			n = 0;
		if (n == -1)
			client_lost(c, errno);
		if (n == 0) {
			client_recover(c, 0);
			continue;
		}
		rv = frame_feed(&c->frame, buf, n, client_line, c);
		if (rv == FRAME_OVERFLOW)
			client_fatal("reply from the daemon is too long");
		if (rv != 0 || c->garbled)
			client_fatal("reply from the daemon not understood");
	}
}

/* Remember an error reply to method in c->error. */
static void
client_error_set(struct client *c, const char *method, json_t *error)
{
	json_t		*code, *data;
	const char	*message, *kind;

	code = json_object_get(error, "code");
	message = json_string_value(json_object_get(error, "message"));
	data = json_object_get(error, "data");
	kind = json_string_value(json_object_get(data, "kind"));

	/* What a timeout or an end brings with it (expect's got) is kept. */
	json_decref(c->error.data);
	c->error.data = json_incref(data);
	c->error.code = json_is_integer(code) ? json_integer_value(code) : 0;
	strlcpy(c->error.method, method, sizeof c->error.method);
	if (kind == NULL && json_is_integer(code))
		kind = rpc_kind(c->error.code);
	strlcpy(c->error.kind, kind != NULL ? kind : "", sizeof c->error.kind);
	if (message == NULL || *message == '\0') {
		snprintf(c->error.message, sizeof c->error.message,
		    "%s failed (error %d)", method, c->error.code);
	} else
		strlcpy(c->error.message, message, sizeof c->error.message);
}

/* Send the request in flight, c->method with c->params, as want_id. */
static void
client_deliver(struct client *c)
{
	json_t	*id, *msg;
	char	*line;
	size_t	 len;
	int	 error;

	id = json_integer(c->want_id);
	msg = rpc_request_new(id, c->method, json_incref(c->params));
	json_decref(id);
	if (msg == NULL || (line = rpc_dump(msg, &len)) == NULL)
		client_fatal("%s: cannot build the request", c->method);
	json_decref(msg);
	error = client_send(c, line, len);
	free(line);
	if (error != 0)
		client_recover(c, error);
}

/* Send method with params (stolen) as request want_id. */
static void
client_request(struct client *c, const char *method, json_t *params)
{
	if (c->fd == -1)
		client_connect(c);
	c->want_id = c->next_id++;
	c->method = method;
	json_decref(c->params);
	c->params = params;
	client_deliver(c);
}

/* Take a reply apart: its result (a new reference), or NULL with c->error set. */
static json_t *
client_result(struct client *c, const char *method, json_t *reply)
{
	json_t *result, *error;

	if ((result = json_object_get(reply, "result")) != NULL) {
		json_incref(result);
		json_decref(reply);
		return result;
	}
	if (!json_is_object(error = json_object_get(reply, "error")))
		client_fatal("reply from the daemon not understood");
	client_error_set(c, method, error);
	json_decref(reply);
	return NULL;
}

/*
 * Send method with params (stolen) and wait for its reply. Returns the result
 * (a new reference), or NULL after an error reply, described in c->error.
 */
json_t *
client_call(struct client *c, const char *method, json_t *params)
{
	json_t *reply;

	client_request(c, method, params);
	client_read(c);
	reply = c->reply;
	c->reply = NULL;
	return client_result(c, method, reply);
}

/*
 * Send method with params (stolen) and wait for its reply, as client_call
 * does, but hand back a result's whole reply line untouched, for a reader
 * that walks it without a tree; NULL after an error reply (in c->error).
 */
char *
client_call_text(struct client *c, const char *method, json_t *params,
    size_t *len)
{
	json_t	*result;
	char	*line;

	client_request(c, method, params);
	c->text = 1;
	client_read(c);
	c->text = 0;
	if ((line = c->reply_text) != NULL) {
		c->reply_text = NULL;
		*len = c->reply_len;
		return line;
	}
	result = client_result(c, method, c->reply);
	c->reply = NULL;
	if (result != NULL)
		client_fatal("reply from the daemon not understood");
	return NULL;
}

/*
 * Send a request after which the connection carries raw bytes (pipe,
 * attach, mi), as client_raw_call does; a connection lost before the
 * reply sets *lost (errno's value, or -1 at EOF) and returns NULL.
 */
json_t *
client_raw_try(struct client *c, const char *method, json_t *params,
    int *lost)
{
	json_t	*reply;
	char	 line[65536];
	size_t	 len = 0;
	ssize_t	 n;

	*lost = 0;
	client_request(c, method, params);
	while (len < sizeof line - 1) {
		n = read(c->fd, line + len, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*lost = n < 0 ? errno : -1;
			return NULL;
		}
		if (line[len++] == '\n')
			break;
	}
	line[len] = '\0';
	if ((reply = json_loads(line, 0, NULL)) == NULL)
		client_fatal("reply from the daemon not understood");
	return client_result(c, method, reply);
}

/*
 * Send a request after which the connection carries raw bytes (pipe,
 * attach). The reply line is read a byte at a time so that nothing raw is
 * read with it. Returns the result, or NULL after an error (in c->error).
 */
json_t *
client_raw_call(struct client *c, const char *method, json_t *params)
{
	json_t	*r;
	int	 lost;

	if ((r = client_raw_try(c, method, params, &lost)) == NULL && lost != 0)
		client_lost(c, lost > 0 ? lost : 0);
	return r;
}

/*
 * Print the last error reply and return the exit status its kind maps to in
 * the command's list of exits.
 */
int
client_error(struct client *c)
{
	const struct cmd_exit	*e;

	if (c->args != NULL)
		args_param_names(c->args, c->error.message,
		    sizeof c->error.message);
	/* The next daemon adopted what it could: this session was not. */
	if (c->restarts > 0 && strcmp(c->error.kind, "no_such_session") == 0) {
		client_warn("the daemon restarted, and the session did not "
		    "outlive it: %s", c->error.message);
		return EXIT_NODAEMON;
	}
	client_warn("%s", c->error.message);
	for (e = c->exits != NULL ? c->exits : client_exits; e->kind != NULL;
	    e++) {
		if (strcmp(e->kind, c->error.kind) == 0)
			break;
	}
	return e->status;
}
