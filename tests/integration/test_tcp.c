/*
 * TCP with a token: a TCP client may use nothing but hello until it
 * presents the daemon's token there; a wrong one closes the connection; a
 * token file others may read, or a short token, is refused; an empty host
 * is loopback. The client reaches such a daemon with --connect and
 * --token-file.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(tcp, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 60);

/* Write a token file of mode mode; its path into path. */
static void
token_file(char *path, size_t len, mode_t mode)
{
	h_daemon_token(path, len, "the-token-of-this-test", mode);
}

/* Start the daemon with a TCP listener at spec; the port it listens on. */
static int
tcp_daemon(const char *spec)
{
	char token[512];

	token_file(token, sizeof token, 0600);
	return h_daemon_fg_tcp(spec, token);
}

/* Without the token only hello answers; the right token opens the rest. */
Test(tcp, only_hello_until_the_token)
{
	struct h_conn c;
	json_t *r;
	int port = tcp_daemon("127.0.0.1:0");

	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect");
	r = h_conn_call(&c, "ping", "{}", 10000);
	cr_assert_str_eq(h_jkind(r), "unauthorized", "ping without the token");
	json_decref(r);
	r = h_conn_call(&c, "list", "{}", 10000);
	cr_assert_str_eq(h_jkind(r), "unauthorized", "list without the token");
	json_decref(r);
	r = h_conn_call(&c, "hello", "{}", 10000);
	cr_assert(json_is_true(h_jpath(r, "result.authentication.token")) &&
	    json_is_false(h_jpath(r, "result.authentication.authenticated")),
	    "hello says a token is wanted: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	r = h_conn_call(&c, "hello", "{\"token\":\"the-token-of-this-test\"}",
	    10000);
	cr_assert(json_is_true(h_jpath(r, "result.authentication.authenticated")),
	    "the right token: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	r = h_conn_call(&c, "ping", "{}", 10000);
	cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping after the "
	    "token");
	json_decref(r);
	h_conn_close(&c);
}

/*
 * Without the token an unknown method gets the answer a known one gets,
 * word for word, and not "no method": the peer learns nothing before it
 * authenticates. With the token the unknown name is reported.
 */
Test(tcp, an_unknown_method_without_the_token_is_unauthorized)
{
	struct h_conn c;
	json_t *known, *unknown;
	int port = tcp_daemon("127.0.0.1:0");

	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect");
	known = h_conn_call(&c, "ping", "{}", 10000);
	unknown = h_conn_call(&c, "no-such-method", "{}", 10000);
	cr_assert_str_eq(h_jkind(unknown), "unauthorized",
	    "an unknown method without the token: %s",
	    json_dumps(unknown, JSON_COMPACT));
	cr_assert(json_equal(json_object_get(known, "error"),
	    json_object_get(unknown, "error")), "a known and an unknown method "
	    "are answered differently: %s, %s",
	    json_dumps(known, JSON_COMPACT), json_dumps(unknown, JSON_COMPACT));
	json_decref(known);
	json_decref(unknown);
	unknown = h_conn_call(&c, "hello",
	    "{\"token\":\"the-token-of-this-test\"}", 10000);
	json_decref(unknown);
	unknown = h_conn_call(&c, "no-such-method", "{}", 10000);
	cr_assert(json_is_integer(h_jpath(unknown, "error.code")) &&
	    json_integer_value(h_jpath(unknown, "error.code")) == -32601,
	    "an unknown method with the token: %s",
	    json_dumps(unknown, JSON_COMPACT));
	json_decref(unknown);
	h_conn_close(&c);
}

/* A wrong token is refused and the connection closed. */
Test(tcp, a_wrong_token_closes_the_connection)
{
	struct h_conn c;
	json_t *r;
	int port = tcp_daemon("127.0.0.1:0");

	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect");
	r = h_conn_call(&c, "hello", "{\"token\":\"not-it\"}", 10000);
	cr_assert_str_eq(h_jkind(r), "unauthorized", "a wrong token");
	json_decref(r);
	cr_assert_null(h_conn_recv(&c, 10000), "the connection stayed open");
	cr_assert(c.eof, "no end of the connection after a wrong token");
	h_conn_close(&c);
	cr_assert(h_daemon_ping(), "the daemon serves on");
}

/* The client with --connect and --token-file; an empty host is loopback. */
Test(tcp, the_client_connects_with_its_token)
{
	char addr[64], token[512], *text, out[512];
	struct h_res r;
	int port = tcp_daemon(":0");

	h_ctx_path(out, sizeof out, "daemon.out");
	text = h_read_file(out, NULL);
	cr_assert_not_null(strstr(text, "listening on tcp:127.0.0.1:"),
	    "an empty host is not loopback: %s", text);
	free(text);
	h_ctx_path(token, sizeof token, "token");
	snprintf(addr, sizeof addr, "tcp:127.0.0.1:%d", port);
	h_cli(&r, H_ARGS("--connect", addr, "--token-file", token, "list"));
	cr_assert_eq(r.code, 0, "list over TCP: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
}

/* A token file others may read makes the daemon refuse to start. */
Test(tcp, a_readable_token_file_is_refused)
{
	char token[512], listen[PATH_MAX + 8];
	struct h_res r;

	token_file(token, sizeof token, 0644);
	snprintf(listen, sizeof listen, "unix:%s", H->sock);
	h_run(&r, H_RUN_BOUND, H_ARGS(H->dbgctld, "--foreground", "--listen",
	    listen, "--listen", "tcp:127.0.0.1:0", "--token-file", token));
	cr_assert_eq(r.code, 1, "exit %d (%s)", r.code, r.err);
	cr_assert_not_null(strstr(r.err, "chmod 600"), "stderr: %s", r.err);
	h_run_free(&r);
}

/*
 * A token shorter than 16 characters makes the daemon refuse to start,
 * saying how long one must be and how to make one.
 */
Test(tcp, a_short_token_is_refused)
{
	char token[512], listen[PATH_MAX + 8];
	struct h_res r;

	h_daemon_token(token, sizeof token, "fifteen-chars15", 0600);
	snprintf(listen, sizeof listen, "unix:%s", H->sock);
	h_run(&r, 10000, H_ARGS(H->dbgctld, "--foreground", "--listen",
	    listen, "--listen", "tcp:127.0.0.1:0", "--token-file", token));
	cr_assert_eq(r.code, 1, "a 15-character token: exit %d (%s)", r.code,
	    r.err);
	cr_assert(strstr(r.err, "15 characters") != NULL &&
	    strstr(r.err, "at least 16") != NULL &&
	    strstr(r.err, "/dev/urandom") != NULL, "stderr: %s", r.err);
	h_run_free(&r);
}

/*
 * Over TCP a close cannot be told from a shutdown: a pipe client that
 * closes with cat's echo unread (the kernel resets the connection) still
 * gives cat its EOF, and cat exits.
 */
Test(tcp, a_closed_pipe_is_a_half_close)
{
	struct h_conn	 c;
	struct pollfd	 pfd;
	char		 ids[32], params[64];
	json_t		*r;
	long		 id;
	int		 port = tcp_daemon("127.0.0.1:0");

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "cat"));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect");
	r = h_conn_call(&c, "hello", "{\"token\":\"the-token-of-this-test\"}",
	    10000);
	json_decref(r);
	snprintf(params, sizeof params, "{\"session\":%s}", ids);
	r = h_conn_call(&c, "pipe", params, 10000);
	cr_assert(json_is_true(h_jpath(r, "result.raw")), "pipe over TCP: %s",
	    r ? json_dumps(r, JSON_COMPACT) : "no reply");
	json_decref(r);
	cr_assert_eq(h_conn_send(&c, "tcp\n", 4, 10000), 0, "send");
	/* The echo waits unread, so that the close is a reset. */
	pfd = (struct pollfd){ c.fd, POLLIN, 0 };
	cr_assert_eq(poll(&pfd, 1, H_WAIT_BOUND), 1, "cat's echo never came");
	h_conn_close(&c);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "(cat) after its TCP pipe "
	    "closed");
}
