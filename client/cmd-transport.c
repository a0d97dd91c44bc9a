/* send, recv, pipe: the target's stdin and stdout through the daemon. */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "b64.h"
#include "dbgctl.h"
#include "rpc.h"

/* Bytes one send request carries (its base64 stays far below 1 MiB). */
#define TRANSPORT_CHUNK (256 * 1024)
/* Bytes recv asks for when --max is not given. */
#define TRANSPORT_RECV_MAX 65536
/* Buffer of each direction of pipe. */
#define TRANSPORT_PIPE_BUF (256 * 1024)

/* Send len bytes to the target; returns an exit status. */
static int
cmd_transport_send_chunk(struct client *c, json_t *session, const void *data,
    size_t len, int eof)
{
	json_t	*params, *result;
	char	*text;

	if ((text = b64_encode(data, len)) == NULL)
		client_fatal("out of memory");
	params = json_pack("{s:O, s:s, s:s, s:b}", "session", session,
	    "stream", "target", "data", text, "eof", eof);
	free(text);
	if ((result = client_call(c, "write", params)) == NULL)
		return client_error(c);
	json_decref(result);
	return EXIT_OK;
}

/* Send all of stdin, chunk by chunk; returns an exit status. */
static int
cmd_transport_send_stdin(struct client *c, json_t *session, int eof)
{
	static char	buf[TRANSPORT_CHUNK];
	size_t		len = 0;
	ssize_t		n;
	int		rv;

	for (;;) {
		n = read(STDIN_FILENO, buf + len, sizeof buf - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			client_fatal("read: stdin: %s", strerror(errno));
		len += n;
		if (n > 0 && len < sizeof buf)
			continue;
		if (len > 0 || (n == 0 && eof)) {
			rv = cmd_transport_send_chunk(c, session, buf, len,
			    n == 0 && eof);
			if (rv != EXIT_OK)
				return rv;
		}
		len = 0;
		if (n == 0)
			return EXIT_OK;
	}
}

/* send [--eof] SESSION [DATA]: bytes to the target's stdin. */
int
cmd_send(const struct cmd_entry *self, struct client *c, int argc,
    char **argv)
{
	static const struct option longopts[] = {
		{ "eof", no_argument, NULL, 'e' },
		CMD_HELP_OPTION,
		{ NULL, 0, NULL, 0 }
	};
	json_t	*session;
	int	 ch, eof = 0, rv;

	while ((ch = cmd_getopt(self, argc, argv, "+eh", longopts)) != -1) {
		if (ch == 'e')
			eof = 1;
	}
	argc -= optind;
	argv += optind;
	if (argc < 1 || argc > 2)
		return cmd_usage(self, "%s", argc < 1 ? "missing SESSION" :
		    "too many arguments");
	session = cmd_session_ref(argv[0]);
	if (argc == 2)
		rv = cmd_transport_send_chunk(c, session, argv[1],
		    strlen(argv[1]), eof);
	else
		rv = cmd_transport_send_stdin(c, session, eof);
	json_decref(session);
	if (rv == EXIT_OK && c->json)
		cmd_print_json(json_pack("{s:b}", "sent", 1));
	return rv;
}

/* recv [--max N] [--timeout MS] SESSION: bytes from the target's stdout. */
int
cmd_recv(const struct cmd_entry *self, struct client *c, int argc,
    char **argv)
{
	static const struct option longopts[] = {
		{ "max", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		CMD_HELP_OPTION,
		{ NULL, 0, NULL, 0 }
	};
	json_t		*params, *result;
	const char	*data;
	unsigned char	*bytes;
	long long	 max = TRANSPORT_RECV_MAX, timeout = -1;
	size_t		 len;
	int		 ch, eof;

	while ((ch = cmd_getopt(self, argc, argv, "+m:t:h", longopts)) != -1) {
		if (ch == 'm' && (cmd_parse_count(optarg, &max) != 0 || max < 1))
			return cmd_usage(self, "bad --max: %s", optarg);
		if (ch == 't' && cmd_parse_count(optarg, &timeout) != 0)
			return cmd_usage(self, "bad --timeout: %s", optarg);
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		return cmd_usage(self, "%s", argc < 1 ? "missing SESSION" :
		    "too many arguments");
	params = json_pack("{s:o, s:s, s:I}", "session",
	    cmd_session_ref(argv[0]), "stream", "target", "max",
	    (json_int_t)max);
	if (timeout >= 0)
		json_object_set_new(params, "timeout", json_integer(timeout));
	if ((result = client_call(c, "read", params)) == NULL)
		return client_error(c);
	data = json_string_value(json_object_get(result, "data"));
	eof = json_is_true(json_object_get(result, "eof"));
	if (data == NULL || (bytes = b64_decode(data, strlen(data), &len)) ==
	    NULL)
		client_fatal("reply from the daemon not understood");
	if (c->json)
		cmd_print_json(json_incref(result));
	else if (cmd_write_all(STDOUT_FILENO, bytes, len) != 0)
		client_fatal("write: stdout: %s", strerror(errno));
	free(bytes);
	json_decref(result);
	if (eof && len == 0) {
		if (!c->json)
			client_warn("the target's output has ended");
		return EXIT_CLOSED;
	}
	return EXIT_OK;
}

/* Copy both ways between stdin/stdout and the raw socket until the target's output ends. */
static int
cmd_transport_pump(int sock)
{
	static char	up[TRANSPORT_PIPE_BUF], down[TRANSPORT_PIPE_BUF];
	struct pollfd	pfd[2];
	size_t		uplen = 0, upoff = 0;
	ssize_t		n;
	int		in_eof = 0, shut = 0;

	fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
	for (;;) {
		if (in_eof && uplen == upoff && !shut) {
			shutdown(sock, SHUT_WR);
			shut = 1;
		}
		pfd[0].fd = (!in_eof && uplen == upoff) ? STDIN_FILENO : -1;
		pfd[0].events = POLLIN;
		pfd[1].fd = sock;
		pfd[1].events = POLLIN | (uplen > upoff ? POLLOUT : 0);
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			client_fatal("poll: %s", strerror(errno));
		}
		if (pfd[0].revents != 0) {
			n = read(STDIN_FILENO, up, sizeof up);
			if (n < 0 && errno != EINTR && errno != EAGAIN)
				client_fatal("read: stdin: %s", strerror(errno));
			if (n == 0)
				in_eof = 1;
			if (n > 0) {
				uplen = n;
				upoff = 0;
			}
		}
		if (uplen > upoff) {
			n = send(sock, up + upoff, uplen - upoff, MSG_NOSIGNAL);
			/*
			 * The target stopped reading and the daemon is closing:
			 * send no more, but read what it still has for us.
			 */
			if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
				in_eof = shut = 1;
				uplen = upoff = 0;
				continue;
			}
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				client_fatal("lost connection to the daemon: %s",
				    strerror(errno));
			if (n > 0)
				upoff += n;
			if (upoff == uplen)
				uplen = upoff = 0;
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(sock, down, sizeof down);
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (n < 0 && errno != ECONNRESET)
				client_fatal("lost connection to the daemon: %s",
				    strerror(errno));
			if (n <= 0)
				return EXIT_OK;
			if (cmd_write_all(STDOUT_FILENO, down, n) != 0)
				client_fatal("write: stdout: %s",
				    strerror(errno));
		}
	}
}

/* pipe SESSION: bridge this process's stdin and stdout to the target. */
int
cmd_pipe(const struct cmd_entry *self, struct client *c, int argc,
    char **argv)
{
	json_t *result;

	if (cmd_getopt_none(self, argc, argv) != 0)
		return EXIT_USAGE;
	if (argc - optind != 1)
		return cmd_usage(self, "%s", argc - optind < 1 ?
		    "missing SESSION" : "too many arguments");
	result = client_raw_call(c, "pipe", json_pack("{s:o, s:s}", "session",
	    cmd_session_ref(argv[optind]), "stream", "target"));
	if (result == NULL)
		return client_error(c);
	json_decref(result);
	if (cmd_transport_pump(c->fd) != EXIT_OK)
		return EXIT_FAILED;
	/* The stream ended: the target's output did, unless the daemon died. */
	client_close(c);
	c->autostart = 0;
	if ((result = client_call(c, "ping", json_object())) == NULL)
		return client_error(c);
	json_decref(result);
	return EXIT_OK;
}
