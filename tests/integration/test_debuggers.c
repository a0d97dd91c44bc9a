/*
 * Debugger sessions with real gdb, lldb and gdbserver against the tiny
 * targets of tests/fixtures: the transport (send, recv, pipe), arguments
 * that must reach the target literally, signals into the inferior,
 * gdbserver and remote sessions, and what is left after a stop or after
 * the daemon dies.
 *
 * Fixtures (meson passes their paths): FIX_ECHO prints arg<i>=[<value>]
 * for every argv element, copies stdin to stdout until EOF and exits 3;
 * FIX_SPINNER prints "spinning" and loops forever.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(transport, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);
TestSuite(debuggers, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* Size of the random payload of the pipe round trips. */
#define PAYLOAD_SIZE	(8 * 1024 * 1024)

/* The end of a log, for failure messages. */
static const char *
tail_of(const char *log)
{
	return h_shown(log, strlen(log), 1500);
}

/* Assert that exactly want came through the transport of a session. */
static void
expect_output(const char *id, const char *want, int bound_ms)
{
	struct h_bytes b = { calloc(1, 1), 0 };
	const char *last;
	char *log;
	int code;

	/* The last line marks the end of what the target should print. */
	last = want + strlen(want) - 1;
	while (last > want && last[-1] != '\n')
		last--;
	code = h_cli_recv_until(id, last, &b, bound_ms);
	if (code != 0) {
		log = h_cli_logs(id);
		cr_assert_fail("session %s: expected target output \"%s\" "
		    "within %d ms, got %s after %zu bytes: \"%s\"; console log "
		    "ends with:\n%s", id, want, bound_ms, code == 5 ?
		    "end of stream" : "nothing more", b.len, b.p,
		    tail_of(log));
	}
	cr_assert(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0,
	    "session %s: expected exactly \"%s\" from the target, got \"%s\"",
	    id, want, b.p);
	free(b.p);
}

/* Write n random bytes to path. */
static void
random_file(const char *path, size_t n)
{
	char buf[65536];
	int in, out;
	size_t done = 0;
	ssize_t r;

	in = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert(in >= 0 && out >= 0, "%s: %s", path, strerror(errno));
	while (done < n) {
		r = read(in, buf, n - done < sizeof(buf) ? n - done :
		    sizeof(buf));
		cr_assert_gt(r, 0, "read /dev/urandom: %s", strerror(errno));
		cr_assert_eq(write(out, buf, (size_t)r), r, "write %s: %s", path,
		    strerror(errno));
		done += (size_t)r;
	}
	close(in);
	close(out);
}

/* Start dbgctl -s SOCK ARGS... with stdin from in, stdout/stderr to files. */
static pid_t
spawn_redirected(const char *const args[], const char *in, const char *out,
    const char *err)
{
	const char **v = h_cli_argv(args);
	pid_t pid;
	int fd;

	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		if ((fd = open(in, O_RDONLY)) < 0 || dup2(fd, 0) < 0)
			_exit(126);
		if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
		    dup2(fd, 1) < 0)
			_exit(126);
		if ((fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0 ||
		    dup2(fd, 2) < 0)
			_exit(126);
		closefrom(3);
		execve(v[0], (char *const *)v, H->envp);
		_exit(127);
	}
	free(v);
	return pid;
}

/* Size of a file, or 0. */
static size_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

/* Arguments of a wait for a file to reach a size. */
struct size_arg {
	const char	*path;
	size_t		 size;
};

/* Predicate: the file has at least the size. */
static bool
size_reached(void *arg)
{
	struct size_arg *a = arg;

	return file_size(a->path) >= a->size;
}

/* A loopback TCP socket bound to a kernel-chosen port; *port gets it. */
static int
bound_socket(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(fd >= 0, "socket: %s", strerror(errno));
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0,
	    "bind 127.0.0.1:0: %s", strerror(errno));
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0,
	    "getsockname: %s", strerror(errno));
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Bind 127.0.0.1:port WITHOUT SO_REUSEADDR and close it: 0 or errno. */
static int
try_bind(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd, e = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		e = errno;
	close(fd);
	return e;
}

/*
 * Local ports of pid's established IPv4 TCP connections to 127.0.0.1:port,
 * found by matching the socket inodes of /proc/PID/fd in /proc/net/tcp.
 */
static int
tcp_conns_to(pid_t pid, int port, int *local, int max)
{
	char (*target)[PATH_MAX] = calloc(256, PATH_MAX), line[512];
	unsigned long inode[256], ino, la, ra;
	unsigned int lp, rp, st;
	int fds[256], nfd, ni = 0, n = 0, i;
	FILE *f;

	nfd = h_pid_fds(pid, fds, target, 256);
	for (i = 0; i < nfd; i++)
		if (sscanf(target[i], "socket:[%lu]", &ino) == 1)
			inode[ni++] = ino;
	free(target);
	f = fopen("/proc/net/tcp", "re");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL && n < max) {
		if (sscanf(line, " %*d: %lx:%x %lx:%x %x %*x:%*x %*x:%*x %*x "
		    "%*u %*u %lu", &la, &lp, &ra, &rp, &st, &ino) != 6)
			continue;
		if ((int)rp != port || st != 1 || ra != htonl(INADDR_LOOPBACK))
			continue;
		for (i = 0; i < ni; i++)
			if (inode[i] == ino)
				local[n++] = (int)lp;
	}
	if (f != NULL)
		fclose(f);
	return n;
}

/* The last session in `list --json`. */
static json_t *
last_session(void)
{
	json_t *l, *s;

	l = h_cli_json(H_ARGS("list"));
	s = json_array_get(json_object_get(l, "sessions"),
	    json_array_size(json_object_get(l, "sessions")) - 1);
	cr_assert_not_null(s, "list: expected a session, got none");
	json_incref(s);
	json_decref(l);
	return s;
}

/* The expected FIX_ECHO output for argv (argv[0] included). */
static char *
echo_lines(const char *const argv[], const char *tail)
{
	struct h_bytes b = { calloc(1, 1), 0 };
	char head[64];
	int i;

	for (i = 0; argv[i] != NULL; i++) {
		snprintf(head, sizeof(head), "arg%d=[", i);
		h_bytes_add(&b, head, strlen(head));
		h_bytes_add(&b, argv[i], strlen(argv[i]));
		h_bytes_add(&b, "]\n", 2);
	}
	if (tail != NULL)
		h_bytes_add(&b, tail, strlen(tail));
	return b.p;
}

/* Shared body: hello round trip through a debugger's transport. */
static void
round_trip(const char *kind)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	char ids[32], *want;
	struct h_res r;
	long id;

	id = h_cli_launch(H_ARGS("--kind", kind, "--transport", "-x", "run",
	    "--", echo));
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("send", ids, "hello\n")), 0, "dbgctl "
	    "send %s 'hello\\n': expected exit 0, got %d (stderr: %s)", ids,
	    r.code, r.err);
	h_run_free(&r);
	/* The echo target prints its argv[0] first, then what it reads. */
	want = echo_lines(H_ARGS(echo), "hello\n");
	expect_output(ids, want, H_WAIT_BOUND);
	free(want);
}

/* gdb --transport -x run: "hello\n" sent comes back from the echo target. */
Test(transport, gdb_round_trip)
{
	round_trip("gdb");
}

/* lldb --transport -x run: "hello\n" sent comes back from the echo target. */
Test(transport, lldb_round_trip)
{
	round_trip("lldb");
}

/*
 * gdbserver --transport -x continue: the transport is the server's stdin and
 * stdout, which its inferior inherits.
 */
Test(transport, gdbserver_round_trip)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	char ids[32], *want;
	struct h_res r;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--transport", "-x",
	    "continue", "--", echo, "x y"));
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("send", ids, "hello\n")), 0, "dbgctl "
	    "send %s: expected exit 0, got %d (stderr: %s)", ids, r.code,
	    r.err);
	h_run_free(&r);
	want = echo_lines(H_ARGS(echo, "x y"), "hello\n");
	expect_output(ids, want, H_WAIT_BOUND);
	free(want);
}

/* Compare two files byte for byte; assert they are equal. */
static void
expect_same_file(const char *want_path, const char *prefix,
    const char *got_path)
{
	size_t wl, gl, pl = prefix ? strlen(prefix) : 0, i;
	char *w = h_read_file(want_path, &wl);
	char *g = h_read_file(got_path, &gl);

	cr_assert(w != NULL && g != NULL, "cannot read %s or %s", want_path,
	    got_path);
	cr_assert_eq(gl, pl + wl, "%s: expected %zu bytes, got %zu", got_path,
	    pl + wl, gl);
	cr_assert(pl == 0 || memcmp(g, prefix, pl) == 0, "%s: expected it to "
	    "start with \"%s\", got \"%.*s\"", got_path, prefix, (int)pl, g);
	if (memcmp(g + pl, w, wl) != 0) {
		for (i = 0; i < wl && g[pl + i] == w[i]; i++)
			;
		cr_assert_fail("%s: differs from %s at payload byte %zu",
		    got_path, want_path, i);
	}
	free(w);
	free(g);
}

/* Paths under the test dir for a pipe run: in holds the random payload. */
static void
pipe_files(char *in, char *out, char *err, size_t len)
{
	h_ctx_path(in, len, "in.bin");
	h_ctx_path(out, len, "out.bin");
	h_ctx_path(err, len, "err.txt");
	random_file(in, PAYLOAD_SIZE);
}

/* 8 MiB of random bytes through `dbgctl pipe` to cat (exec) and back, exact. */
Test(transport, pipe_8mib_exec_cat)
{
	char ids[32], in[PATH_MAX], out[PATH_MAX], err[PATH_MAX], *e;
	double t0;
	pid_t pid;
	long id;
	int code;

	pipe_files(in, out, err, PATH_MAX);
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "cat"));
	h_idstr(id, ids, sizeof(ids));
	t0 = h_now();
	pid = spawn_redirected(H_ARGS("pipe", ids), in, out, err);
	/* cat exits at stdin's EOF; then its output ends and so does pipe. */
	code = h_run_reap(pid, 40000);
	e = h_read_file(err, NULL);
	cr_assert_eq(code, 0, "dbgctl pipe %s < 8 MiB > out: expected exit 0 "
	    "after cat ended, got %d after %.1f s (stderr: %s; %zu bytes out)",
	    ids, code, h_now() - t0, e ? e : "", file_size(out));
	free(e);
	expect_same_file(in, NULL, out);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "(cat) after its input ended");
}

/*
 * The same 8 MiB through gdb's transport to the echo target: the target
 * exits 3 at EOF, and though gdb still holds the pipe, the output ends
 * there, after every byte: the pipe ends by itself, gdb stays.
 */
Test(transport, pipe_8mib_gdb_echo)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	char ids[32], in[PATH_MAX], out[PATH_MAX], err[PATH_MAX], *e, *head;
	struct size_arg sa;
	struct h_res r;
	pid_t pid;
	long id;
	int code;

	pipe_files(in, out, err, PATH_MAX);
	head = echo_lines(H_ARGS(echo), NULL);
	id = h_cli_launch(H_ARGS("--transport", "-x", "run", "--", echo));
	h_idstr(id, ids, sizeof(ids));
	pid = spawn_redirected(H_ARGS("pipe", ids), in, out, err);
	/* gdb reports the target's exit code 3: it read its stdin to EOF. */
	h_cli_wait_log(ids, "exited with code 03", 40000);
	sa.path = out;
	sa.size = strlen(head) + PAYLOAD_SIZE;
	cr_assert(h_wait_for(size_reached, &sa, H_WAIT_BOUND), "dbgctl pipe "
	    "%s: expected %zu bytes out, got %zu", ids, sa.size,
	    file_size(out));
	code = h_run_reap(pid, H_WAIT_BOUND);
	e = h_read_file(err, NULL);
	cr_assert_eq(code, 0, "dbgctl pipe %s: expected exit 0 once the "
	    "target exited, gdb still running, got %d (stderr: %s)", ids, code,
	    e ? e : "");
	free(e);
	h_cli_expect_state(id, "running", "after its target exited");
	expect_same_file(in, head, out);
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: "
	    "expected exit 0, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	free(head);
}

/* Open a pipe of session ids on a new raw connection; asserts it is taken. */
static void
pipe_open(struct h_conn *c, const char *ids, const char *which)
{
	char params[64];
	json_t *r;

	cr_assert_eq(h_conn_open(c, H->sock), 0, "connect for the %s pipe",
	    which);
	snprintf(params, sizeof params, "{\"session\":%s}", ids);
	r = h_conn_call(c, "pipe", params, 10000);
	cr_assert(json_is_true(h_jpath(r, "result.raw")), "the %s pipe of "
	    "session %s was refused: %s", which, ids, r ? json_dumps(r,
	    JSON_COMPACT) : "no reply");
	json_decref(r);
}

/*
 * A pipe client that sends a partial line and closes its connection: the
 * target's stdin stays open and a second pipe is taken at once, with no
 * target output in between (the target prints only whole lines); the
 * second pipe's bytes complete the line, which comes back whole.
 */
Test(transport, a_closed_pipe_leaves_stdin_open_for_the_next)
{
	struct h_conn	 a, b;
	char		 ids[32], *line;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", "while IFS= read -r l; do printf 'got:%s\\n' \"$l\"; done"));
	h_idstr(id, ids, sizeof ids);
	pipe_open(&a, ids, "first");
	cr_assert_eq(h_conn_send(&a, "first-", 6, 10000), 0, "send to the "
	    "first pipe");
	h_conn_close(&a);
	/* No output can free the session: only the close may. */
	pipe_open(&b, ids, "second");
	cr_assert_eq(h_conn_send(&b, "second\n", 7, 10000), 0, "send to the "
	    "second pipe");
	line = h_conn_line(&b, H_WAIT_BOUND);
	cr_assert_str_eq(line ? line : "(none)", "got:first-second",
	    "the line back through the second pipe (eof %d)", b.eof);
	free(line);
	h_cli_expect_state(id, "running", "after the second pipe's line");
	h_conn_close(&b);
}

/*
 * A pipe client that shuts down its sending side: cat reads EOF after the
 * bytes and exits, its output ends, and the daemon closes the connection
 * once it has sent all of it.
 */
Test(transport, a_half_closed_pipe_gives_the_target_eof)
{
	struct h_conn	 c;
	char		 ids[32], *line;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "cat"));
	h_idstr(id, ids, sizeof ids);
	pipe_open(&c, ids, "half-closed");
	cr_assert_eq(h_conn_send(&c, "hello\n", 6, 10000), 0, "send");
	cr_assert_eq(shutdown(c.fd, SHUT_WR), 0, "shutdown(SHUT_WR): %s",
	    strerror(errno));
	line = h_conn_line(&c, H_WAIT_BOUND);
	cr_assert_str_eq(line ? line : "(none)", "hello", "cat's echo after "
	    "the half close");
	free(line);
	line = h_conn_line(&c, H_WAIT_BOUND);
	cr_assert(line == NULL && c.eof, "the daemon did not close the "
	    "connection after cat's output ended (got \"%s\", eof %d)",
	    line ? line : "", c.eof);
	h_conn_close(&c);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "(cat) after the pipe's half "
	    "close");
}

/* recv: timeout (exit 4) and end of stream (exit 5) are never confused. */
Test(transport, recv_timeout_versus_eof)
{
	struct h_bytes b = { calloc(1, 1), 0 };
	struct h_res r;
	char ids[32];
	long id;
	int code;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "cat"));
	h_idstr(id, ids, sizeof(ids));

	/* Nothing sent: a bounded wait times out, after the bound. */
	h_cli(&r, H_ARGS("recv", "--timeout", "300", ids));
	cr_assert_eq(r.code, 4, "dbgctl recv --timeout 300 %s with no data: "
	    "expected exit 4, got %d (stdout: \"%s\", stderr: %s)", ids,
	    r.code, r.out, r.err);
	cr_assert_eq(r.out_len, 0, "recv timeout: expected no output, got "
	    "\"%s\"", r.out);
	cr_assert(r.elapsed >= 0.25, "dbgctl recv --timeout 300: returned "
	    "after %.3f s, expected >= 0.25 s", r.elapsed);
	h_run_free(&r);

	/* A timeout of 0 does not wait. */
	h_cli(&r, H_ARGS("recv", "--timeout", "0", ids));
	cr_assert_eq(r.code, 4, "dbgctl recv --timeout 0 %s with no data: "
	    "expected exit 4, got %d (stderr: %s)", ids, r.code, r.err);
	cr_assert(r.elapsed < 1.0, "dbgctl recv --timeout 0: took %.3f s, "
	    "expected an immediate answer", r.elapsed);
	h_run_free(&r);

	/* Data sent comes back; then it is a timeout again, not an EOF. */
	cr_assert_eq(h_cli(&r, H_ARGS("send", ids, "abc")), 0, "dbgctl send "
	    "%s abc: exit %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	code = h_cli_recv_until(ids, "abc", &b, H_WAIT_BOUND);
	cr_assert_eq(code, 0, "recv %s: expected \"abc\" back from cat, got "
	    "\"%s\" (last exit %d)", ids, b.p, code);
	cr_assert_str_eq(b.p, "abc", "recv %s: expected exactly \"abc\"", ids);
	free(b.p);
	h_cli(&r, H_ARGS("recv", "--timeout", "300", ids));
	cr_assert_eq(r.code, 4, "dbgctl recv --timeout 300 %s after the data "
	    "was read: expected exit 4, got %d (stderr: %s)", ids, r.code,
	    r.err);
	h_run_free(&r);

	/* EOF to cat: it exits, its stdout ends: recv says 5 with no bytes. */
	cr_assert_eq(h_cli(&r, H_ARGS("send", "--eof", ids, "")), 0, "dbgctl "
	    "send --eof %s '': exit %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	h_cli(&r, H_ARGS("recv", ids));
	cr_assert_eq(r.code, 5, "dbgctl recv %s after send --eof to cat: "
	    "expected exit 5 (end of stream), got %d (stdout: \"%s\", stderr: "
	    "%s)", ids, r.code, r.out, r.err);
	cr_assert_eq(r.out_len, 0, "recv at end of stream: expected no "
	    "output, got \"%s\"", r.out);
	h_run_free(&r);
	/* And it stays 5, whatever the timeout. */
	h_cli(&r, H_ARGS("recv", "--timeout", "0", ids));
	cr_assert_eq(r.code, 5, "dbgctl recv --timeout 0 %s at end of stream: "
	    "expected exit 5, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	h_cli(&r, H_ARGS("recv", "--timeout", "300", ids));
	cr_assert_eq(r.code, 5, "dbgctl recv --timeout 300 %s at end of "
	    "stream: expected exit 5, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
}

/* Arguments a shell (or lldb's interpreter) would act on. */
#define HOSTILE_SHELL \
	"$(touch PWNED1)", "`touch PWNED2`", "x; touch PWNED3", \
	"a && touch PWNED4", "> PWNED5", "| touch PWNED6", "it's", \
	"say \"hi\"", "two  inner  spaces", "*", "\\n", "$HOME", "\\", \
	"tab\there"

/* Arguments that are easy to lose: empty, padded, multi-line, lone quotes. */
#define HOSTILE_EDGE \
	"", "  padded  ", "line1\nline2", "'", "\""

/* Shared body: every argument reaches the echo target literally. */
static void
hostile(const char *kind, const char *const args[])
{
	const char *v[64];
	char work[PATH_MAX], decoy[PATH_MAX + 16], ids[32], *want, names[1024];
	struct dirent *de;
	size_t i = 0, o = 0;
	DIR *d;
	long id;
	int k, fd;

	/* A dir with one file: a glob or a touch would show up in it. */
	h_ctx_path(work, sizeof(work), "work");
	cr_assert_eq(mkdir(work, 0700), 0, "mkdir %s: %s", work,
	    strerror(errno));
	snprintf(decoy, sizeof(decoy), "%s/decoy", work);
	fd = open(decoy, O_WRONLY | O_CREAT, 0600);
	cr_assert(fd >= 0, "%s: %s", decoy, strerror(errno));
	close(fd);

	v[i++] = "--kind";
	v[i++] = kind;
	v[i++] = "--cwd";
	v[i++] = work;
	v[i++] = "--transport";
	v[i++] = "-x";
	v[i++] = "run";
	v[i++] = "--";
	for (k = 0; args[k] != NULL && i < 63; k++)
		v[i++] = args[k];
	v[i] = NULL;
	id = h_cli_launch(v);
	h_idstr(id, ids, sizeof(ids));
	want = echo_lines(args, NULL);
	expect_output(ids, want, H_WAIT_BOUND);
	free(want);

	d = opendir(work);
	cr_assert_not_null(d, "opendir %s: %s", work, strerror(errno));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			o += (size_t)snprintf(names + o, sizeof(names) - o, " %s",
			    de->d_name);
	closedir(d);
	cr_assert_str_eq(names, " decoy", "%s (the session's cwd): expected "
	    "only \"decoy\", got:%s (an argument was run by a shell)", work,
	    names);
}

/* gdb: $(...), backticks, ;, &&, >, |, quotes, blanks, *, newlines: as is. */
Test(debuggers, gdb_hostile_args_literal)
{
	hostile("gdb", H_ARGS(h_ctx_fixture("FIX_ECHO"), HOSTILE_SHELL,
	    HOSTILE_EDGE));
}

/* lldb: $(...), backticks, ;, &&, >, |, quotes in words, *: as is. */
Test(debuggers, lldb_hostile_args_literal)
{
	hostile("lldb", H_ARGS(h_ctx_fixture("FIX_ECHO"), HOSTILE_SHELL));
}

/*
 * lldb: empty and padded arguments, a newline, lone quotes. Each either
 * reaches the target as is, or the launch is refused with a message (exit
 * 1): never dropped, trimmed, split into commands, or a launch that never
 * runs. One session an argument, each followed by "end" so that a dropped
 * argument shows.
 */
Test(debuggers, lldb_edge_args_literal_or_refused)
{
	static const char *const edge[] = { HOSTILE_EDGE, NULL };
	const char *echo = h_ctx_fixture("FIX_ECHO");
	char ids[8][32], report[8192] = "", *want, *log;
	struct h_bytes b[8];
	struct h_res r;
	double end;
	size_t o = 0;
	int i, code, left;
	long id[8] = { 0 };

	for (i = 0; edge[i] != NULL; i++) {
		h_cli(&r, H_ARGS("launch", "--kind", "lldb", "--transport", "-x",
		    "run", "--", echo, edge[i], "end"));
		if (r.code == 0) {
			id[i] = strtol(r.out, NULL, 10);
			cr_assert_gt(id[i], 0, "launch: expected an id, got "
			    "\"%s\"", r.out);
			h_idstr(id[i], ids[i], sizeof(ids[i]));
		} else if (r.code != 1 || strncmp(r.err, "dbgctl: ", 8) != 0 ||
		    r.err_len < 12)
			o += (size_t)snprintf(report + o, sizeof(report) - o,
			    "\n- argument \"%s\": launch exited %d with stderr "
			    "\"%s\" (expected 0, or 1 with a message)", edge[i],
			    r.code, r.err);
		h_run_free(&r);
	}
	/* All run at once; the bound is for all of them together. */
	end = h_now() + H_WAIT_BOUND / 1000.0;
	for (i = 0; edge[i] != NULL; i++) {
		if (id[i] == 0)
			continue;
		b[i] = (struct h_bytes){ calloc(1, 1), 0 };
		left = (int)((end - h_now()) * 1000);
		code = h_cli_recv_until(ids[i], "[end]\n", &b[i],
		    left > 2000 ? left : 2000);
		want = echo_lines(H_ARGS(echo, edge[i], "end"), NULL);
		if (code != 0) {
			log = h_cli_logs(ids[i]);
			o += (size_t)snprintf(report + o, sizeof(report) - o,
			    "\n- argument \"%s\": the target never ran (got "
			    "\"%s\"); console log ends with:\n%s", edge[i],
			    b[i].p, h_shown(log, strlen(log), 400));
			free(log);
		} else if (strcmp(b[i].p, want) != 0)
			o += (size_t)snprintf(report + o, sizeof(report) - o,
			    "\n- argument \"%s\": expected \"%s\", got \"%s\"",
			    edge[i], want, b[i].p);
		free(want);
		free(b[i].p);
	}
	cr_assert_eq(o, 0, "lldb: arguments not passed as they are (nor "
	    "refused):%s", report);
}

/*
 * Launch FIX_SPINNER with opts before its "--" and wait until the console
 * says "spinning". Returns the id, also as a string in ids.
 */
static long
launch_spinning(const char *const opts[], char *ids, size_t len)
{
	const char *v[32];
	size_t i = 0;
	long id;

	while (opts[i] != NULL && i < 29) {
		v[i] = opts[i];
		i++;
	}
	v[i++] = "--";
	v[i++] = h_ctx_fixture("FIX_SPINNER");
	v[i] = NULL;
	id = h_cli_launch(v);
	h_idstr(id, ids, len);
	h_cli_wait_log(ids, "spinning", H_WAIT_BOUND);
	return id;
}

/* signal ID INT reaches gdb's inferior: gdb reports it, the session runs on. */
Test(debuggers, gdb_signal_int_to_inferior)
{
	char ids[32], *log;
	struct h_res r;
	pid_t inf;
	long id;

	id = launch_spinning(H_ARGS("-x", "run"), ids, sizeof(ids));
	log = h_cli_logs(ids);
	cr_assert(strstr(log, "Program received signal") == NULL, "dbgctl "
	    "logs %s: a signal was reported before any was sent:\n%s", ids,
	    tail_of(log));
	free(log);
	inf = h_cli_status_pid(id, "inferior_pid");
	cr_assert_gt(inf, 0, "status %s: expected an inferior_pid while the "
	    "spinner runs", ids);
	h_pid_expect_comm(inf, "inferior", "fix-spinner");

	cr_assert_eq(h_cli(&r, H_ARGS("signal", ids, "INT")), 0, "dbgctl "
	    "signal %s INT: expected exit 0, got %d (stderr: %s)", ids, r.code,
	    r.err);
	h_run_free(&r);
	h_cli_wait_log(ids, "Program received signal SIGINT", H_WAIT_BOUND);
	h_cli_expect_state(id, "running", "after SIGINT");
	cr_assert(!h_pid_gone(inf), "inferior %d died of the SIGINT that gdb "
	    "should have stopped it with", inf);
}

/* A gdbserver session: status fields, gdb connected once, stop frees all. */
Test(debuggers, gdbserver_session_and_stop)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	char ids[32], m[96], remote[64], want[128], *log, report[4096];
	struct h_tracked t[4] = { { 0 } };
	struct h_snap snap;
	struct h_res r;
	const char *state;
	int port, local[8], n, total, e, left;
	size_t loglen;
	json_t *st;
	pid_t gdb, srv, inf;
	long id;

	h_marker_new("DBGI_GDBSRV", m, sizeof(m));
	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--env", m, "--",
	    echo));
	h_idstr(id, ids, sizeof(ids));
	st = h_cli_status(id);
	state = h_jstr(st, "state");
	cr_assert(state && strcmp(state, "running") == 0, "status %s: "
	    "expected running, got %s", ids, state ? state : "(none)");
	gdb = (pid_t)h_jint(st, "pid", -1);
	srv = (pid_t)h_jint(st, "server_pid", -1);
	inf = (pid_t)h_jint(st, "inferior_pid", -1);
	port = (int)h_jint(st, "port", -1);
	cr_assert(port > 0 && port < 65536, "status %s: expected a port, got "
	    "%d", ids, port);
	snprintf(remote, sizeof(remote), "127.0.0.1:%d", port);
	cr_assert_str_eq(h_jstr(st, "remote") ? h_jstr(st, "remote") : "",
	    remote, "status %s: remote", ids);
	json_decref(st);
	h_pid_track(&t[0], "gdb", gdb);
	h_pid_track(&t[1], "server", srv);
	h_pid_track(&t[2], "inferior", inf);
	h_pid_expect_comm(gdb, "pid", "gdb");
	h_pid_expect_comm(srv, "server_pid", "gdbserver");
	h_pid_expect_comm(inf, "inferior_pid", "fix-echo");
	cr_assert_eq(h_pid_ppid(inf), srv, "inferior %d: expected the server "
	    "%d as its parent, got %d", inf, srv, h_pid_ppid(inf));

	/*
	 * gdb holds exactly one connection to the server, and the server saw
	 * it exactly once. The daemon's readiness probe (a TCP connect that
	 * hangs up at once) also shows up in gdbserver's output as "Remote
	 * debugging from host" followed by "Remote side has terminated
	 * connection": every connection but gdb's must be such a probe.
	 */
	n = tcp_conns_to(gdb, port, local, 8);
	cr_assert_eq(n, 1, "gdb %d: expected exactly one TCP connection to "
	    "%s, got %d", gdb, remote, n);
	snprintf(want, sizeof(want), "Remote debugging from host 127.0.0.1, "
	    "port %d\r", local[0]);
	h_cli_wait_log(ids, want, H_WAIT_BOUND);
	log = h_cli_logs(ids);
	loglen = strlen(log);
	cr_assert_eq(h_count(log, loglen, want), 1, "dbgctl logs %s: expected "
	    "gdb's connection (\"%s\") once, got %d", ids, want,
	    h_count(log, loglen, want));
	total = h_count(log, loglen, "Remote debugging from host");
	cr_assert(total <= 2, "dbgctl logs %s: expected at most 2 connections "
	    "(probe + gdb), got %d:\n%s", ids, total, tail_of(log));
	cr_assert_eq(h_count(log, loglen, "Remote side has terminated "
	    "connection"), total - 1, "dbgctl logs %s: expected every "
	    "connection but gdb's (%d) to have hung up at once:\n%s", ids,
	    total - 1, tail_of(log));
	free(log);

	h_snap_take(&snap, m);
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: "
	    "expected exit 0, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	/* Checked at once: stop returns when everything is gone. */
	e = try_bind(port);
	cr_assert_eq(e, 0, "right after stop: bind 127.0.0.1:%d (without "
	    "SO_REUSEADDR): %s", port, strerror(e));
	cr_assert(h_pid_tracked_gone(t), "right after stop: processes of the "
	    "session exist: %s", h_pid_tracked_left(t, report,
	    sizeof(report)));
	left = h_snap_leftovers(&snap, m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "right after stop: expected no process of the "
	    "session, got %d: %s", left, report);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state") ? h_jstr(st, "state") : "",
	    "exited", "status %s after stop: state", ids);
	json_decref(st);
}

/*
 * A gdbserver session ended by stop ended as asked: no error in status.
 * (Otherwise an "error" would not tell a dying server from a stop.)
 */
Test(debuggers, gdbserver_stop_leaves_no_error)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	struct h_res r;
	char ids[32];
	json_t *st;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--", echo));
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: "
	    "expected exit 0, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state") ? h_jstr(st, "state") : "",
	    "exited", "status %s after stop: state", ids);
	cr_assert_null(h_jstr(st, "error"), "status %s after a requested "
	    "stop: expected no \"error\", got \"%s\"", ids,
	    h_jstr(st, "error"));
	json_decref(st);
}

/* --port N: the server listens on that port and status says so. */
Test(debuggers, gdbserver_given_port)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	char ids[32], ports[16], remote[64];
	int fd, port, local[4];
	json_t *st;
	long id;

	fd = bound_socket(&port);
	close(fd);
	snprintf(ports, sizeof(ports), "%d", port);
	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--port", ports, "--",
	    echo));
	h_idstr(id, ids, sizeof(ids));
	st = h_cli_status(id);
	cr_assert_eq(h_jint(st, "port", -1), port, "status %s: expected port "
	    "%d, got %lld", ids, port, h_jint(st, "port", -1));
	snprintf(remote, sizeof(remote), "127.0.0.1:%d", port);
	cr_assert_str_eq(h_jstr(st, "remote") ? h_jstr(st, "remote") : "",
	    remote, "status %s: remote", ids);
	cr_assert_eq(tcp_conns_to((pid_t)h_jint(st, "pid", -1), port, local,
	    4), 1, "gdb: expected one connection to %s", remote);
	json_decref(st);
}

/* kill -9 of the server mid-session ends the session, saying why. */
Test(debuggers, gdbserver_killed_ends_session)
{
	char ids[32], m[96], report[4096];
	struct h_tracked t[4] = { { 0 } };
	struct h_snap snap;
	const char *state, *error;
	json_t *st;
	long id;
	int left;

	h_marker_new("DBGI_SRVKILL", m, sizeof(m));
	id = launch_spinning(H_ARGS("--kind", "gdbserver", "--env", m, "-x",
	    "continue"), ids, sizeof(ids));
	st = h_cli_status(id);
	h_pid_track(&t[0], "gdb", (pid_t)h_jint(st, "pid", -1));
	h_pid_track(&t[1], "server", (pid_t)h_jint(st, "server_pid", -1));
	h_pid_track(&t[2], "inferior", (pid_t)h_jint(st, "inferior_pid", -1));
	json_decref(st);
	h_snap_take(&snap, m);

	cr_assert_eq(kill(t[1].pid, SIGKILL), 0, "kill -9 %d: %s", t[1].pid,
	    strerror(errno));
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "session %s did not end within %d ms of kill "
	    "-9 of its server", ids, H_WAIT_BOUND);
	state = h_jstr(st, "state");
	error = h_jstr(st, "error");
	cr_assert(state && (strcmp(state, "exited") == 0 ||
	    strcmp(state, "failed") == 0), "status %s: expected exited or "
	    "failed, got %s", ids, state ? state : "(none)");
	cr_assert(error != NULL && strstr(error, "server") != NULL, "status "
	    "%s after kill -9 of the server: expected an \"error\" that "
	    "mentions the server, got %s", ids, error ? error : "none");
	if (json_object_get(st, "server_exit") != NULL)
		cr_assert_eq(h_jint(st, "server_exit.signal", -1), SIGKILL,
		    "status %s: server_exit: expected signal 9", ids);
	json_decref(st);
	/* An ended session has nothing left: checked at once. */
	cr_assert(h_pid_tracked_gone(t), "session %s ended but processes "
	    "exist: %s", ids, h_pid_tracked_left(t, report, sizeof(report)));
	left = h_snap_leftovers(&snap, m, false, report, sizeof(report));
	cr_assert_eq(left, 0, "session %s ended: expected no process of it, "
	    "got %d: %s", ids, left, report);
}

/* remote to a gdbserver the test started: running, one connection. */
Test(debuggers, remote_live_gdbserver)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	struct h_bytes b = { calloc(1, 1), 0 };
	char ids[32], remote[64];
	struct h_proc srv;
	struct h_res r;
	const char *state;
	json_t *st;
	long id;

	snprintf(remote, sizeof(remote), "127.0.0.1:%d",
	    h_run_gdbserver(&srv, &b, echo));

	id = h_cli_launch(H_ARGS("--remote", remote, "--", echo));
	h_idstr(id, ids, sizeof(ids));
	st = h_cli_status(id);
	state = h_jstr(st, "state");
	cr_assert(state && strcmp(state, "running") == 0, "status %s: "
	    "expected running, got %s (error: %s)", ids,
	    state ? state : "(none)", h_jstr(st, "error") ?
	    h_jstr(st, "error") : "none");
	cr_assert_str_eq(h_jstr(st, "kind") ? h_jstr(st, "kind") : "",
	    "remote", "status %s: kind", ids);
	cr_assert_str_eq(h_jstr(st, "remote") ? h_jstr(st, "remote") : "",
	    remote, "status %s: remote", ids);
	json_decref(st);
	/* A server of someone else's keeps gdb's own breakpoint handling. */
	st = h_cli_json(H_ARGS("exec", ids, "--", "-gdb-show", "breakpoint",
	    "always-inserted"));
	cr_assert_str_eq(h_jstr(st, "results.value") ? h_jstr(st,
	    "results.value") : "(none)", "off", "always-inserted of a remote "
	    "session");
	json_decref(st);
	/* No probe here: the server sees gdb's connection and only that. */
	cr_assert(h_run_err_until(&srv, &b, "Remote debugging from host",
	    H_WAIT_BOUND), "gdbserver: no connection reported: %s", b.p);
	cr_assert_eq(h_count(b.p, b.len, "Remote debugging from host"), 1,
	    "gdbserver: expected one connection, got:\n%s", b.p);

	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: "
	    "expected exit 0, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	kill(srv.pid, SIGKILL);
	h_run_wait(&srv, 60000);
	h_run_free(&srv.res);
	free(b.p);
}

/* Assert that the last launched session failed and left no debugger behind. */
static void
expect_failed_session(const char *what)
{
	json_t *s = last_session();
	const char *state = h_jstr(s, "state");
	pid_t pid = (pid_t)h_jint(s, "pid", 0);

	cr_assert(state && strcmp(state, "failed") == 0, "%s: expected the "
	    "session failed, got %s", what, state ? state : "(none)");
	cr_assert(pid <= 0 || h_pid_gone(pid), "%s: the failed session's gdb "
	    "%d is still there (state %c)", what, pid, h_pid_state(pid));
	json_decref(s);
}

/*
 * dbgctl launch [--connect-timeout MS] --remote REMOTE -- FIX_ECHO, REMOTE
 * a loopback port of ours ("127.0.0.1:PORT" into remote): only bound, it
 * refuses connections; listening, it completes them and never answers.
 * The port is closed once the launch has returned.
 */
static void
launch_remote(struct h_res *r, bool listening, const char *timeout_ms,
    char *remote, size_t len)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	int port, fd = bound_socket(&port);

	if (listening)
		cr_assert_eq(listen(fd, 8), 0, "listen: %s", strerror(errno));
	snprintf(remote, len, "127.0.0.1:%d", port);
	if (timeout_ms != NULL)
		h_cli(r, H_ARGS("launch", "--connect-timeout", timeout_ms,
		    "--remote", remote, "--", echo));
	else
		h_cli(r, H_ARGS("launch", "--remote", remote, "--", echo));
	close(fd);
}

/* True if err is "dbgctl: <message>" and the message names remote and why. */
static bool
names_remote(const char *err, const char *remote, const char *why)
{
	return strncmp(err, "dbgctl: ", 8) == 0 && strstr(err, remote) != NULL &&
	    strstr(err, why) != NULL;
}

/* remote to a port that refuses: exit 1 at once, "Connection refused". */
Test(debuggers, remote_refused_port)
{
	char remote[64];
	struct h_res r;

	/* Bound but not listening: the port is ours and refuses connections. */
	launch_remote(&r, false, NULL, remote, sizeof(remote));
	cr_assert_eq(r.code, 1, "dbgctl launch --remote %s (refused): expected "
	    "exit 1, got %d (stdout: %s, stderr: %s)", remote, r.code, r.out,
	    r.err);
	/* The wording around them may change; the address and reason may not. */
	cr_assert(names_remote(r.err, remote, "Connection refused"), "dbgctl "
	    "launch --remote %s: expected \"dbgctl: ...%s...Connection "
	    "refused\" on stderr, got: %s", remote, remote, r.err);
	cr_assert(r.elapsed < 5.0, "dbgctl launch --remote %s (refused): took "
	    "%.2f s, expected a quick failure (< 5 s)", remote, r.elapsed);
	h_run_free(&r);
	expect_failed_session("launch --remote (refused)");
}

/* remote to a port that accepts and never answers: exit 4 at the timeout. */
Test(debuggers, remote_silent_port)
{
	char remote[64];
	struct h_res r;

	/* Listening, never answering: the kernel completes the handshake. */
	launch_remote(&r, true, "2000", remote, sizeof(remote));
	cr_assert_eq(r.code, 4, "dbgctl launch --connect-timeout 2000 --remote "
	    "%s (silent): expected exit 4 (timeout), got %d after %.2f s "
	    "(stdout: %s, stderr: %s)", remote, r.code, r.elapsed, r.out,
	    r.err);
	cr_assert(r.elapsed >= 1.5 && r.elapsed <= 6.0, "dbgctl launch "
	    "--connect-timeout 2000 --remote %s (silent): expected 1.5 s <= "
	    "elapsed <= 6 s, got %.2f s", remote, r.elapsed);
	cr_assert(names_remote(r.err, remote, "2000 ms"), "dbgctl launch "
	    "--remote %s (silent): expected \"dbgctl: ...%s...2000 ms\" on "
	    "stderr, got: %s", remote, remote, r.err);
	h_run_free(&r);
	expect_failed_session("launch --remote (silent)");
}

/*
 * With DBGCTLD_ADOPT_GRACE=0, SIGKILL of the daemon ends gdb, its inferior
 * and a gdbserver session at once, as before sessions could be adopted.
 */
Test(debuggers, daemon_sigkill_kills_debuggers)
{
	struct h_tracked t[8] = { { 0 } };
	char ids[32], m[96], report[4096];
	struct h_snap snap;
	json_t *st;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=0");
	h_daemon_fg();
	h_marker_new("DBGI_DKILL", m, sizeof(m));
	id = launch_spinning(H_ARGS("--env", m, "-x", "run"), ids, sizeof(ids));
	st = h_cli_status(id);
	h_pid_track(&t[0], "gdb", (pid_t)h_jint(st, "pid", -1));
	h_pid_track(&t[1], "gdb's inferior",
	    (pid_t)h_jint(st, "inferior_pid", -1));
	json_decref(st);

	id = launch_spinning(H_ARGS("--kind", "gdbserver", "--env", m, "-x",
	    "continue"), ids, sizeof(ids));
	st = h_cli_status(id);
	h_pid_track(&t[2], "gdbserver session's gdb",
	    (pid_t)h_jint(st, "pid", -1));
	h_pid_track(&t[3], "gdbserver", (pid_t)h_jint(st, "server_pid", -1));
	h_pid_track(&t[4], "gdbserver's inferior",
	    (pid_t)h_jint(st, "inferior_pid", -1));
	json_decref(st);
	h_snap_take(&snap, m);

	h_daemon_fg_kill();
	if (!h_wait_for(h_pid_tracked_gone, t, 3000))
		cr_assert_fail("3 s after SIGKILL of the daemon, processes "
		    "exist: %s", h_pid_tracked_left(t, report, sizeof(report)));
	/*
	 * The keepers go too, a little later under a sanitizer build, whose
	 * leak check at exit can take seconds on a loaded machine.
	 */
	if (!h_snap_wait_gone(&snap, m, 15000, report, sizeof(report)))
		cr_assert_fail("15 s after SIGKILL of the daemon: expected no "
		    "process of its sessions (keepers included), got: %s",
		    report);
}
