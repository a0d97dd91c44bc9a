/*
 * A joined MI client's round trip: -data-evaluate-expression through
 * `dbgctl mi` (a process on pipes, as a front end runs it) and through
 * the mi method on a socket, beside the same command on a new-ui pty of
 * the session's gdb opened directly, with nothing between it and gdb.
 * Batches of the three are interleaved, each batch gives its median.
 */
#include "bench.h"

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* Round trips a batch takes, and a warm-up's. */
#define FIG_JOIN_BATCH 200
#define FIG_JOIN_WARM 20
/* Milliseconds the session's gdb has to come up. */
#define FIG_JOIN_START_MS 30000

/* The ways to gdb, in the order the table has them. */
enum { FIG_JOIN_CLI, FIG_JOIN_METHOD, FIG_JOIN_DIRECT, FIG_JOIN_N };

/* One MI channel: where commands are written, where lines are read. */
struct fig_join_chan {
	int		 wfd;
	struct rpc	 in;	/* only its line reader: any fd reads */
	long		 token;
	pid_t		 pid;	/* dbgctl mi, or 0 */
	int		 slave;	/* the direct pty's, kept open, or -1 */
};

/* A channel reading rfd and writing wfd. */
static void
fig_join_chan_init(struct fig_join_chan *c, int rfd, int wfd)
{
	memset(c, 0, sizeof *c);
	c->in.fd = rfd;
	c->in.cap = 64 * 1024;
	if ((c->in.buf = malloc(c->in.cap)) == NULL)
		abort();
	c->wfd = wfd;
	c->slave = -1;
}

/* Close a channel, and reap its dbgctl mi. */
static void
fig_join_chan_close(struct fig_join_chan *c)
{
	if (c->wfd >= 0 && c->wfd != c->in.fd)
		close(c->wfd);
	c->wfd = -1;
	rpc_close(&c->in);
	if (c->slave >= 0)
		close(c->slave);
	c->slave = -1;
	if (c->pid > 0 && proc_wait(c->pid, 5000) == -1) {
		kill(c->pid, SIGKILL);
		(void)proc_wait(c->pid, -1);
	}
	c->pid = 0;
}

/* Read lines until one starts with prefix; 0, or -1 if the stream ends. */
static int
fig_join_until(struct fig_join_chan *c, const char *prefix, char **line)
{
	size_t	n = strlen(prefix);
	char	*l;

	while ((l = rpc_line(&c->in)) != NULL)
		if (strncmp(l, prefix, n) == 0) {
			if (line != NULL)
				*line = l;
			return 0;
		}
	return -1;
}

/* One round trip in microseconds, or NA if gdb did not answer ^done. */
static double
fig_join_rt_us(struct fig_join_chan *c)
{
	char	cmd[64], want[32], *line;
	double	t0 = stat_now_ms();
	int	n;

	n = snprintf(cmd, sizeof cmd, "%ld-data-evaluate-expression 1+2\n",
	    ++c->token);
	snprintf(want, sizeof want, "%ld^", c->token);
	if (proc_write_all(c->wfd, cmd, n) == -1 ||
	    fig_join_until(c, want, &line) == -1 ||
	    strncmp(line + strlen(want), "done", 4) != 0)
		return NA;
	return (stat_now_ms() - t0) * 1000;
}

/* One batch of round trips: its median added to s, or -1. */
static int
fig_join_batch(struct fig_join_chan *c, int n, struct samples *s)
{
	struct samples	one = { 0 };
	double		us;
	int		i, rv = 0;

	for (i = 0; i < n && rv == 0; i++) {
		if (!((us = fig_join_rt_us(c)) >= 0))
			rv = -1;
		stat_add(&one, us);
	}
	if (rv == 0 && s != NULL)
		stat_add(s, stat_median(&one));
	stat_free(&one);
	return rv;
}

/* Launch a gdb session (of /bin/true, never run) and wait for its gdb. */
static json_int_t
fig_join_launch(struct bench *b, struct rpc *r)
{
	json_t		*res, *st;
	const char	*state;
	json_int_t	 id;
	double		 end = stat_now_ms() + FIG_JOIN_START_MS;
	int		 up = 0;

	res = rpc_call(r, "launch", json_pack("{s:s, s:[s], s:s}", "kind",
	    "gdb", "argv", "/bin/true", "cwd", "/"));
	if (res == NULL)
		return bench_fail(b, "launch: %s", r->err);
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	while (!up && stat_now_ms() < end) {
		st = rpc_call(r, "status", json_pack("{s:I}", "session", id));
		state = json_string_value(json_object_get(st, "state"));
		up = state != NULL && strcmp(state, "running") == 0;
		json_decref(st);
		if (!up)
			stat_sleep_ms(20);
	}
	return up ? id : bench_fail(b, "gdb did not come up within %d ms",
	    FIG_JOIN_START_MS);
}

/* The baseline: a raw pty of ours that the session's gdb opens a new-ui on. */
static int
fig_join_direct(struct bench *b, struct rpc *r, json_int_t id,
    struct fig_join_chan *c)
{
	struct termios	 tio;
	char		 cmd[128];
	json_t		*res;
	int		 m;

	if ((m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 ||
	    grantpt(m) != 0 || unlockpt(m) != 0)
		return bench_fail(b, "a pty: %s", strerror(errno));
	fig_join_chan_init(c, m, m);
	/* Raw, so that commands are not echoed back among gdb's lines. */
	if ((c->slave = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC)) ==
	    -1 || tcgetattr(c->slave, &tio) != 0)
		return bench_fail(b, "the pty's slave: %s", strerror(errno));
	cfmakeraw(&tio);
	tcsetattr(c->slave, TCSANOW, &tio);
	snprintf(cmd, sizeof cmd, "new-ui mi3 %s", ptsname(m));
	if ((res = rpc_call(r, "exec", json_pack("{s:I, s:s}", "session", id,
	    "command", cmd))) == NULL)
		return bench_fail(b, "exec %s: %s", cmd, r->err);
	json_decref(res);
	/* Its greeting ends with a prompt; a round trip says it is all read. */
	if (!(fig_join_rt_us(c) >= 0))
		return bench_fail(b, "the direct new-ui did not answer");
	return 0;
}

/* Join through the mi method on a socket of ours. */
static int
fig_join_method(struct bench *b, json_int_t id, struct fig_join_chan *c)
{
	char	req[160];
	int	n;

	/* The socket is both ends, and rpc_open makes the line reader. */
	memset(c, 0, sizeof *c);
	c->slave = -1;
	c->wfd = -1;
	if (rpc_open(&c->in, b->sock) == -1)
		return bench_fail(b, "%s", c->in.err);
	c->wfd = c->in.fd;
	n = snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"mi\",\"params\":{\"session\":%lld}}\n",
	    (long long)id);
	if (rpc_write(&c->in, req, n) == -1 ||
	    fig_join_until(c, "{", NULL) == -1 ||
	    fig_join_until(c, "(gdb)", NULL) == -1)
		return bench_fail(b, "the mi method: %s", c->in.err);
	return 0;
}

/* Join through `dbgctl mi SESSION` on pipes of ours. */
static int
fig_join_cli(struct bench *b, json_int_t id, struct fig_join_chan *c)
{
	const char	*argv[] = { b->dbgctl, "-s", b->sock, "mi", NULL, NULL };
	char		 ids[32];
	int		 in[2], out[2];

	snprintf(ids, sizeof ids, "%lld", (long long)id);
	argv[4] = ids;
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		return bench_fail(b, "pipe: %s", strerror(errno));
	fig_join_chan_init(c, out[0], in[1]);
	c->pid = proc_spawn(argv, b->envp, in[0], out[1], -1);
	close(in[0]);
	close(out[1]);
	if (c->pid == -1 || fig_join_until(c, "(gdb)", NULL) == -1)
		return bench_fail(b, "dbgctl mi %s did not join", ids);
	return 0;
}

/* Interleave the channels' batches, a run at a time. */
static int
fig_join_runs(struct bench *b, struct fig_join_chan c[FIG_JOIN_N],
    struct samples s[FIG_JOIN_N])
{
	int run, k, i;

	for (i = 0; i < FIG_JOIN_N; i++)
		if (c[i].wfd >= 0 &&
		    fig_join_batch(&c[i], FIG_JOIN_WARM, NULL) == -1)
			return bench_fail(b, "warm-up: no answer");
	for (run = 0; run < b->runs; run++)
		for (k = 0; k < FIG_JOIN_N; k++) {
			i = (run + k) % FIG_JOIN_N;
			if (c[i].wfd >= 0 &&
			    fig_join_batch(&c[i], FIG_JOIN_BATCH, &s[i]) == -1)
				return bench_fail(b, "a round trip had no "
				    "answer");
		}
	return 0;
}

/* Figure: a joined client's MI round trip beside a direct new-ui. */
int
fig_join_rtt(struct bench *b)
{
	struct fig_join_chan	c[FIG_JOIN_N];
	struct samples		s[FIG_JOIN_N] = { 0 };
	struct rpc		r;
	json_int_t		id;
	char			cli_why[256] = "";
	int			rv, i;

	for (i = 0; i < FIG_JOIN_N; i++)
		fig_join_chan_init(&c[i], -1, -1);
	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	if ((id = fig_join_launch(b, &r)) == -1)
		rv = -1;
	else
		rv = fig_join_direct(b, &r, id, &c[FIG_JOIN_DIRECT]) == -1 ||
		    fig_join_method(b, id, &c[FIG_JOIN_METHOD]) == -1 ? -1 : 0;
	/* Without the client's mi the method's row is still had. */
	if (rv == 0 && fig_join_cli(b, id, &c[FIG_JOIN_CLI]) == -1) {
		snprintf(cli_why, sizeof cli_why, "%s", b->why);
		fig_join_chan_close(&c[FIG_JOIN_CLI]);
	}
	if (rv == 0)
		rv = fig_join_runs(b, c, s);
	if (rv == 0 && cli_why[0] != '\0')
		table_na(TARGET2(RATIO_PLUS_MAX, 1.3, 50), cli_why, "MI round "
		    "trip via dbgctl mi [vs direct new-ui pty]");
	else if (rv == 0)
		table_row("us", stat_median(&s[FIG_JOIN_CLI]),
		    stat_median(&s[FIG_JOIN_DIRECT]), TARGET2(RATIO_PLUS_MAX,
		    1.3, 50), NULL, "MI round trip via dbgctl mi [vs direct "
		    "new-ui pty]");
	if (rv == 0) {
		table_row("us", stat_median(&s[FIG_JOIN_METHOD]),
		    stat_median(&s[FIG_JOIN_DIRECT]), TARGET2(RATIO_PLUS_MAX,
		    1.3, 50), "no client process", "MI round trip via the mi "
		    "method [vs direct new-ui pty]");
	}
	for (i = 0; i < FIG_JOIN_N; i++) {
		fig_join_chan_close(&c[i]);
		stat_free(&s[i]);
	}
	rpc_close(&r);
	return rv;
}
