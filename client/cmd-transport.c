/* send, recv, pipe: the target's stdin and stdout through the daemon. */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
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

/* A closed stream is a status of its own for the transport's commands. */
static const struct cmd_exit cmd_transport_exits[] = {
	{ "timeout", EXIT_TIMEOUT },
	{ "not_running", EXIT_CLOSED },
	{ "verdict", EXIT_VERDICT },
	{ NULL, EXIT_FAILED },
};

/* Send len bytes to the target; returns an exit status. */
static int
cmd_transport_send_chunk(struct client *c, json_t *session,
    const char *stream, const void *data, size_t len, int eof)
{
	json_t	*params, *result;
	char	*text;

	if ((text = b64_encode(data, len)) == NULL)
		client_fatal("out of memory");
	params = json_pack("{s:O, s:s, s:s, s:b}", "session", session,
	    "stream", stream, "data", text, "eof", eof);
	free(text);
	if ((result = client_call(c, "write", params)) == NULL)
		return client_error(c);
	json_decref(result);
	return EXIT_OK;
}

/* Send all of stdin, chunk by chunk; returns an exit status. */
static int
cmd_transport_send_stdin(struct client *c, json_t *session,
    const char *stream, int eof)
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
			rv = cmd_transport_send_chunk(c, session, stream, buf,
			    len, n == 0 && eof);
			if (rv != EXIT_OK)
				return rv;
		}
		len = 0;
		if (n == 0)
			return EXIT_OK;
	}
}

/*
 * send [--eof] [--stream S] SESSION [DATA]: bytes to the target's stdin,
 * or to an RTT down-channel (--stream rttN).
 */
static int
cmd_send_exec(struct cmd *self, struct client *c)
{
	const char	*data, *stream = args_get(&self->args, "stream");
	int		 eof, rv;

	if (stream == NULL)
		stream = "target";
	eof = args_has(&self->args, "eof") > 0;
	if ((data = args_operand(&self->args, 1)) != NULL)
		rv = cmd_transport_send_chunk(c, self->session, stream, data,
		    strlen(data), eof);
	else
		rv = cmd_transport_send_stdin(c, self->session, stream, eof);
	if (rv == EXIT_OK && c->json) {
		json_t *sent = json_pack("{s:b}", "sent", 1);

		cmd_print_json(sent);
		json_decref(sent);
	}
	return rv;
}

/* What help says of each option of send. */
static const struct cmd_option cmd_send_options_help[] = {
	{ "eof", NULL,
	    "then close the target's standard input" },
	{ "stream", "S",
	    "target (the default), or rtt0 to rtt3: an RTT down-channel" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_send_entry = {
	.name = "send",
	.usage = "[--eof] [--stream S] SESSION [DATA]",
	.args = { "eof stream:", 1, 2 },
	.flags = CMD_AUTOSTART | CMD_SESSION,
	.exits = cmd_transport_exits,
	.exec = cmd_send_exec,
	.summary = "write DATA, or standard input, to the target's standard input",
	.options = cmd_send_options_help,
};

/* recv [--max N] [--timeout MS] SESSION: bytes from the target's stdout. */
static int
cmd_recv_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	json_t			*params, *result;
	const char		*data;
	unsigned char		*bytes;
	long long		 max;
	size_t			 len;
	int			 eof;

	if ((max = args_number(a, "max", TRANSPORT_RECV_MAX)) < 1)
		return cmd_usage(self, "bad --max: %s", args_get(a, "max"));
	params = json_pack("{s:O, s:s, s:I}", "session", self->session,
	    "stream", "target", "max", (json_int_t)max);
	if (args_has(a, "timeout"))
		json_object_set_new(params, "timeout",
		    json_integer(args_number(a, "timeout", 0)));
	if ((result = client_call(c, "read", params)) == NULL)
		return client_error(c);
	data = json_string_value(json_object_get(result, "data"));
	eof = json_is_true(json_object_get(result, "eof"));
	if (data == NULL || (bytes = b64_decode(data, strlen(data), &len)) ==
	    NULL)
		client_fatal("reply from the daemon not understood");
	if (c->json)
		cmd_print_json(result);
	else if (cmd_write_all(STDOUT_FILENO, bytes, len) != 0)
		cmd_stdout_failed();
	free(bytes);
	json_decref(result);
	if (eof && len == 0) {
		if (!c->json)
			client_warn("the target's output has ended");
		return EXIT_CLOSED;
	}
	return EXIT_OK;
}

/* What help says of each option of recv. */
static const struct cmd_option cmd_recv_options_help[] = {
	{ "max", "N",
	    "the most bytes to print (default: 65536)" },
	{ "timeout", "MS",
	    "exit 4 if nothing came by then, 0: do not wait (default: wait)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_recv_entry = {
	.name = "recv",
	.usage = "[--max N] [--timeout MS] SESSION",
	.args = { "max# timeout#", 1, 1 },
	.flags = CMD_AUTOSTART | CMD_SESSION,
	.exits = cmd_transport_exits,
	.exec = cmd_recv_exec,
	.summary = "print what the target wrote to its standard output",
	.options = cmd_recv_options_help,
};

/* What a pipe does next: go on with the next daemon, or end with a status. */
#define CMD_PIPE_AGAIN (-1)

/*
 * The pipe's stream ended: the target's output did, unless the daemon
 * died. Then a local pipe goes on with the next daemon (CMD_PIPE_AGAIN,
 * connected to it), from the offsets it kept; a remote one, which cannot
 * tell, ends. An exit status otherwise.
 */
static int
cmd_pipe_ended(struct client *c, long long *pid)
{
	json_t	*result;
	int	 restarted;

	client_close(c);
	c->autostart = 0;
	if ((restarted = reconnect_restarted(c, pid)) == -1)
		return EXIT_NODAEMON;
	if (restarted) {
		c->restarts++;
		return CMD_PIPE_AGAIN;
	}
	if ((result = client_call(c, "ping", json_object())) == NULL)
		return client_error(c);
	json_decref(result);
	return EXIT_OK;
}

/*
 * Ask for the pipe: the first time where the daemon's reader stands, and
 * after a restart from r's offsets, with the input the next daemon lacks
 * to be sent again. CMD_PIPE_AGAIN once the connection is raw; else an
 * exit status.
 */
static int
cmd_pipe_open(struct cmd *self, struct client *c, struct pump_resume *r,
    bool again)
{
	json_t		*params, *result;
	uint64_t	 in;

	params = json_pack("{s:O, s:s}", "session", self->session, "stream",
	    "target");
	if (again)
		json_object_set_new(params, "from", json_integer((json_int_t)
		    r->out));
	if ((result = client_raw_call(c, "pipe", params)) == NULL) {
		/* The output ended while no daemon ran: every byte is here. */
		if (again && strcmp(c->error.kind, "not_running") == 0)
			return EXIT_OK;
		return client_error(c);
	}
	in = (uint64_t)json_integer_value(json_object_get(result, "in_offset"));
	if (r != NULL && !again) {
		r->out = (uint64_t)json_integer_value(json_object_get(result,
		    "offset"));
		r->in = in;
		pump_keep_init(r, c->fd);
	}
	json_decref(result);
	if (again && pump_keep_again(r, in) != 0) {
		client_warn("the daemon restarted while piping, and the input "
		    "of session %s ends at offset %llu, before the %llu bytes "
		    "this pipe still kept: what the target got is in `dbgctl "
		    "logs --stream target-in %s`", args_operand(&self->args, 0),
		    (unsigned long long)in, (unsigned long long)r->len,
		    args_operand(&self->args, 0));
		return EXIT_FAILED;
	}
	return CMD_PIPE_AGAIN;
}

/*
 * pipe SESSION: bridge this process's stdin and stdout to the target. A
 * local pipe rides out a restart of the daemon: it connects to the next
 * one and goes on from the next byte of output it lacks, sending again
 * the input that daemon lacks (pump-keep.c).
 */
static int
cmd_pipe_exec(struct cmd *self, struct client *c)
{
	struct pump_resume	 r, *rp = NULL;
	long long		 pid = -1;
	int			 rv;

	memset(&r, 0, sizeof r);
	/* Which daemon pipes, to tell its death from the output's end. */
	if (client_connect_remote() == NULL) {
		pid = reconnect_daemon_pid(c);
		rp = &r;
	}
	rv = cmd_pipe_open(self, c, rp, false);
	while (rv == CMD_PIPE_AGAIN) {
		if (pump_run(c->fd, 0, rp) != EXIT_OK) {
			rv = EXIT_FAILED;
			break;
		}
		ssh_end(c);
		if ((rv = cmd_pipe_ended(c, &pid)) == CMD_PIPE_AGAIN)
			rv = cmd_pipe_open(self, c, rp, true);
	}
	pump_keep_free(&r);
	return rv;
}

const struct cmd_entry cmd_pipe_entry = {
	.name = "pipe",
	.usage = "SESSION",
	.args = { "", 1, 1 },
	.flags = CMD_AUTOSTART | CMD_SESSION,
	.exits = cmd_transport_exits,
	.exec = cmd_pipe_exec,
	.summary = "connect standard input and output to the target's",
};
