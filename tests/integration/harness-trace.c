/*
 * A process's writes and closes as strace sees them, to tell what the
 * daemon wrote to one connection: whether anything went to it after its
 * client had left. strace runs as our child with the test's environment,
 * marker and all, so the teardown kills it if a test fails first.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The tracer of pid per /proc/PID/status, 0 if none, -1 if pid is gone. */
static pid_t
h_trace_tracer(pid_t pid)
{
	char path[64], *st, *p;
	pid_t tracer = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((st = h_read_file(path, NULL)) == NULL)
		return -1;
	if ((p = strstr(st, "\nTracerPid:")) != NULL)
		tracer = (pid_t)strtol(p + 11, NULL, 10);
	free(st);
	return tracer;
}

/* Predicate: strace (a struct h_trace) has attached to its process. */
static bool
h_trace_attached(void *arg)
{
	struct h_trace *t = arg;

	return h_trace_tracer(t->traced) == t->pid;
}

/* Start strace on pid's writes and closes; asserted, waits for the attach. */
void
h_trace_start(struct h_trace *t, pid_t pid)
{
	char strace[PATH_MAX], pids[16];
	const char *argv[] = { strace, "-qq", "-s", "256", "-e",
	    "trace=write,writev,sendmsg,sendto,close", "-e", "signal=none",
	    "-o", t->out, "-p", pids, NULL };
	int null;

	memset(t, 0, sizeof(*t));
	cr_assert_not_null(h_which("strace", strace, sizeof(strace)), "strace "
	    "is not on PATH (scripts/setup installs it)");
	t->traced = pid;
	snprintf(pids, sizeof(pids), "%d", pid);
	h_ctx_path(t->out, sizeof(t->out), "strace.out");
	t->pid = fork();
	cr_assert_neq(t->pid, -1, "fork: %s", strerror(errno));
	if (t->pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		execve(strace, (char *const *)argv, H->envp);
		_exit(127);
	}
	cr_assert(h_wait_for(h_trace_attached, t, H_WAIT_BOUND), "strace -p %d "
	    "did not attach within %d ms (tracer: %d)", pid, H_WAIT_BOUND,
	    h_trace_tracer(pid));
}

/* Let go of the traced process and reap strace. */
void
h_trace_stop(struct h_trace *t)
{
	if (t->pid <= 0)
		return;
	kill(t->pid, SIGTERM);
	h_run_reap(t->pid, 10000);
	t->pid = 0;
}

/* text as strace quotes it in its output: a quote becomes \". */
static void
h_trace_quote(const char *text, char *buf, size_t len)
{
	size_t o = 0;

	for (; *text != '\0' && o + 3 < len; text++) {
		if (*text == '"' || *text == '\\')
			buf[o++] = '\\';
		buf[o++] = *text;
	}
	buf[o] = '\0';
}

/* The fd a trace line writes to or closes; -1 for any other line. */
static int
h_trace_line_fd(const char *line, bool *is_close)
{
	static const char *const calls[] = { "write(", "writev(", "sendmsg(",
	    "sendto(", "close(", NULL };
	char *end;
	long fd;
	int i;

	for (i = 0; calls[i] != NULL; i++) {
		if (strncmp(line, calls[i], strlen(calls[i])) != 0)
			continue;
		fd = strtol(line + strlen(calls[i]), &end, 10);
		if (end == line + strlen(calls[i]) || (*end != ',' &&
		    *end != ')'))
			return -1;
		*is_close = strcmp(calls[i], "close(") == 0;
		return (int)fd;
	}
	return -1;
}

/* The fd of the last write that carries text so far, or -1. */
int
h_trace_fd_of(struct h_trace *t, const char *text)
{
	char quoted[512], *log, *line, *next;
	bool is_close;
	int fd = -1, f;

	h_trace_quote(text, quoted, sizeof(quoted));
	if ((log = h_read_file(t->out, NULL)) == NULL)
		return -1;
	for (line = log; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (strstr(line, quoted) != NULL &&
		    (f = h_trace_line_fd(line, &is_close)) >= 0 && !is_close)
			fd = f;
	}
	free(log);
	return fd;
}

/*
 * What the trace shows of fd after the write that carries text: the
 * writes to fd (described in report, "; "-separated) until fd is closed.
 * *closed says whether the close is in the trace yet.
 */
int
h_trace_writes_after(struct h_trace *t, const char *text, int fd,
    bool *closed, char *report, size_t len)
{
	char quoted[512], *log, *line, *next, *res;
	bool after = false, is_close;
	size_t o;
	int n = 0;

	h_trace_quote(text, quoted, sizeof(quoted));
	*closed = false;
	report[0] = '\0';
	if ((log = h_read_file(t->out, NULL)) == NULL)
		return 0;
	for (line = log; line != NULL && *line != '\0' && !*closed;
	    line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (!after) {
			after = strstr(line, quoted) != NULL &&
			    h_trace_line_fd(line, &is_close) == fd;
			continue;
		}
		if (h_trace_line_fd(line, &is_close) != fd)
			continue;
		if (is_close) {
			*closed = true;
			continue;
		}
		n++;
		o = strlen(report);
		/* The call's first bytes and its result: "... = -1 EPIPE". */
		res = strrchr(line, '=');
		if (strlen(line) <= 160 || res == NULL || res - line < 120)
			snprintf(report + o, len - o, "%s%.160s", o > 0 ? "; " :
			    "", line);
		else
			snprintf(report + o, len - o, "%s%.120s ...%s", o > 0 ?
			    "; " : "", line, res - 1);
	}
	free(log);
	return n;
}
