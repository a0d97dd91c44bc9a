/*
 * Running children: a program started with the test's environment, stdout
 * and stderr captured through non-blocking pipes, its exit status and
 * whether both pipes reached EOF, all within a bound.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Seconds to wait for EOF on a client's pipes after the client exited. */
#define H_EOF_GRACE	3.0

/* Make fd non-blocking. */
static void
h_run_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*
 * Start argv (argv[0] a path) with H->envp, stdout/stderr piped, stdin
 * from in, or /dev/null if in is -1. A child fed from a pipe gets SIGPIPE
 * at its default, as in a shell pipeline.
 */
static int
h_run_spawn(struct h_proc *p, const char *const argv[], int in)
{
	int o[2], e[2], null;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->res.status = -1;
	p->res.code = -1;
	if (pipe2(o, O_CLOEXEC) == -1)
		return -errno;
	if (pipe2(e, O_CLOEXEC) == -1) {
		close(o[0]);
		close(o[1]);
		return -errno;
	}
	p->t0 = h_now();
	pid = fork();
	if (pid == -1)
		return -errno;
	if (pid == 0) {
		if (in >= 0) {
			signal(SIGPIPE, SIG_DFL);
			dup2(in, 0);
		} else {
			null = open("/dev/null", O_RDONLY);
			dup2(null, 0);
		}
		dup2(o[1], 1);
		dup2(e[1], 2);
		execve(argv[0], (char *const *)argv, H->envp);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	h_run_nonblock(o[0]);
	h_run_nonblock(e[0]);
	p->pid = pid;
	p->outfd = o[0];
	p->errfd = e[0];
	return 0;
}

/* Start argv (argv[0] a path) with H->envp, stdout/stderr piped. */
int
h_run_start(struct h_proc *p, const char *const argv[])
{
	return h_run_spawn(p, argv, -1);
}

/* Append n bytes to *buf of *len bytes, keeping it NUL-terminated. */
static void
h_run_append(char **buf, size_t *len, const void *data, size_t n)
{
	struct h_bytes b = { *buf, *len };

	h_bytes_add(&b, data, n);
	*buf = b.p;
	*len = b.len;
}

/* Append what fd has to a growing buffer; false at EOF or error. */
static bool
h_run_drain(int fd, char **buf, size_t *len)
{
	char tmp[8192];
	ssize_t r;

	for (;;) {
		r = read(fd, tmp, sizeof(tmp));
		if (r > 0) {
			h_run_append(buf, len, tmp, (size_t)r);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return true;
		return false;
	}
}

/* Turn a wait status into the shell's exit code convention. */
int
h_run_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Note in captured stderr that the child was killed at the bound. */
static void
h_run_note(struct h_res *r, int bound_ms)
{
	char note[96];
	size_t n;

	n = (size_t)snprintf(note, sizeof(note), "[harness: no exit within "
	    "%d ms, killed]", bound_ms);
	h_run_append(&r->err, &r->err_len, note, n);
}

/* Collect output and exit status of a started child within bound_ms. */
void
h_run_wait(struct h_proc *p, int bound_ms)
{
	struct h_res *r = &p->res;
	struct pollfd pfd[2];
	double end = p->t0 + bound_ms / 1000.0, exit_end = 0;
	bool exited = false;
	int st, n;

	if (r->out == NULL)
		r->out = calloc(1, 1);
	if (r->err == NULL)
		r->err = calloc(1, 1);
	for (;;) {
		n = 0;
		if (p->outfd >= 0)
			pfd[n++] = (struct pollfd){ p->outfd, POLLIN, 0 };
		if (p->errfd >= 0)
			pfd[n++] = (struct pollfd){ p->errfd, POLLIN, 0 };
		if (n > 0)
			poll(pfd, (nfds_t)n, 20);
		else if (!exited)
			h_nap(5);
		if (p->outfd >= 0 &&
		    !h_run_drain(p->outfd, &r->out, &r->out_len)) {
			close(p->outfd);
			p->outfd = -1;
		}
		if (p->errfd >= 0 &&
		    !h_run_drain(p->errfd, &r->err, &r->err_len)) {
			close(p->errfd);
			p->errfd = -1;
		}
		if (p->outfd < 0 && p->errfd < 0 && !r->eof) {
			r->eof = true;
			r->eof_elapsed = h_now() - p->t0;
		}
		if (!exited && waitpid(p->pid, &st, WNOHANG) == p->pid) {
			exited = true;
			r->status = st;
			r->code = h_run_code(st);
			r->elapsed = h_now() - p->t0;
			exit_end = h_now() + H_EOF_GRACE;
		}
		if (exited && r->eof)
			break;
		if (exited && h_now() > exit_end)
			break;
		if (!exited && h_now() > end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			r->status = st;
			r->code = -1;
			r->timed_out = true;
			r->elapsed = h_now() - p->t0;
			h_run_note(r, bound_ms);
			break;
		}
	}
	if (p->outfd >= 0)
		close(p->outfd);
	if (p->errfd >= 0)
		close(p->errfd);
	p->outfd = p->errfd = -1;
}

/*
 * Start argv (argv[0] a path) with H->envp, stdin on a pipe whose write
 * end (close-on-exec) goes to *in, stdout/stderr piped, for a child that
 * is talked to line by line.
 */
int
h_run_start_fed(struct h_proc *p, int *in, const char *const argv[])
{
	int fd[2], e;

	if (pipe2(fd, O_CLOEXEC) == -1)
		return -errno;
	e = h_run_spawn(p, argv, fd[0]);
	close(fd[0]);
	if (e < 0) {
		close(fd[1]);
		return e;
	}
	*in = fd[1];
	return 0;
}

/*
 * Add what fd gives to b until b holds text at or after offset from; the
 * offset just past it, or 0 once bound_ms has passed.
 */
size_t
h_run_fd_until(int fd, struct h_bytes *b, size_t from, const char *text,
    int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	const char *at;
	char buf[4096];
	ssize_t n;

	for (;;) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			h_bytes_add(b, buf, (size_t)n);
		if (b->p != NULL && b->len >= from &&
		    (at = strstr(b->p + from, text)) != NULL)
			return (size_t)(at - b->p) + strlen(text);
		if (h_now() > end)
			return 0;
		poll(&(struct pollfd){ fd, POLLIN, 0 }, 1, 20);
	}
}

/*
 * Add a started child's stdout to b until it holds text at or after
 * offset from; the offset past it, 0 at bound_ms.
 */
size_t
h_run_out_until(struct h_proc *p, struct h_bytes *b, size_t from,
    const char *text, int bound_ms)
{
	return h_run_fd_until(p->outfd, b, from, text, bound_ms);
}

/* Run argv to completion within bound_ms. Returns the exit code. */
int
h_run(struct h_res *r, int bound_ms, const char *const argv[])
{
	struct h_proc p;
	int e;

	e = h_run_start(&p, argv);
	if (e < 0) {
		memset(r, 0, sizeof(*r));
		r->code = -1;
		r->out = strdup("");
		r->err = strdup(strerror(-e));
		return -1;
	}
	h_run_wait(&p, bound_ms);
	*r = p.res;
	return r->code;
}

/* Run argv with input on a pipe as its stdin (SIGPIPE at default). */
int
h_run_input(struct h_res *r, int bound_ms, const char *input,
    const char *const argv[])
{
	size_t len = strlen(input);
	struct h_proc p;
	int in[2], e;

	cr_assert_eq(pipe2(in, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	e = h_run_spawn(&p, argv, in[0]);
	cr_assert_eq(e, 0, "start %s: %s", argv[0], strerror(-e));
	close(in[0]);
	/* The input is small: it fits in the pipe; then EOF. */
	while (write(in[1], input, len) == -1 && errno == EINTR)
		;
	close(in[1]);
	h_run_wait(&p, bound_ms);
	*r = p.res;
	return r->code;
}

/* Free captured output. */
void
h_run_free(struct h_res *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* Describe a wait status in words, for messages. */
const char *
h_run_wstatus(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
		    strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "wait status 0x%x", st);
	return buf;
}

/* Reap our child within bound_ms: exit code (128+N: signal N), -1 if killed. */
int
h_run_reap(pid_t pid, int bound_ms)
{
	int st;

	if (h_run_waitpid(pid, bound_ms, &st))
		return h_run_code(st);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

/* Reap our child pid within bound_ms, its wait status in *st; false if it still runs. */
bool
h_run_waitpid(pid_t pid, int bound_ms, int *st)
{
	double end = h_now() + bound_ms / 1000.0;

	for (;;) {
		if (waitpid(pid, st, WNOHANG) == pid)
			return true;
		if (h_now() > end)
			return false;
		h_nap(10);
	}
}

/* Add a started child's stderr to b until it holds text; false at bound_ms. */
bool
h_run_err_until(struct h_proc *p, struct h_bytes *b, const char *text,
    int bound_ms)
{
	return h_run_fd_until(p->errfd, b, 0, text, bound_ms) != 0;
}

/*
 * Start gdbserver 127.0.0.1:0 PROG as our child (port 0: it picks one and
 * prints it, no race for a port); its stderr so far in b; the port.
 */
int
h_run_gdbserver(struct h_proc *srv, struct h_bytes *b, const char *prog)
{
	char gs[PATH_MAX];
	const char *p;
	int port;

	cr_assert_not_null(h_which("gdbserver", gs, sizeof(gs)), "gdbserver is "
	    "not on PATH");
	cr_assert_eq(h_run_start(srv, H_ARGS(gs, "127.0.0.1:0", prog)), 0,
	    "start gdbserver");
	cr_assert(h_run_err_until(srv, b, "Listening on port ", H_WAIT_BOUND),
	    "gdbserver 127.0.0.1:0: no \"Listening on port\" within %d ms: %s",
	    H_WAIT_BOUND, b->p);
	p = strstr(b->p, "Listening on port ") + strlen("Listening on port ");
	port = atoi(p);
	cr_assert_gt(port, 0, "gdbserver: cannot read its port from \"%s\"",
	    b->p);
	return port;
}
