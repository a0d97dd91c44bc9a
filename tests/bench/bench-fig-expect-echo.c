/*
 * The expect round trip on an echo target: a line written to `cat` run as
 * an exec session with a transport and expected back, the write and the
 * expect sent together (pipelined, as a rig sends them) and timed to both
 * answers, beside the same line written to a `cat` on pipes of ours and
 * read back; and beside the same requests to a relay written by hand
 * (bench-relay.c), the floor of what a relay with transcripts costs. The
 * daemon, this program, the relay and the cats on one CPU, as the other
 * expect and ping figures are.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Round trips of a sample, and of the warm-up. */
#define FIG_ECHO_ROUNDS 1000
#define FIG_ECHO_WARM 50
/* A bound no answer of this figure should come near, in ms. */
#define FIG_ECHO_TIMEOUT_MS 30000

/* The daemon's side: its session of `cat` and where the stream is read. */
struct fig_echo_daemon {
	struct rpc	 r;
	json_int_t	 session;
	json_int_t	 from;
	pid_t		 pid;
	long		 n;
};

/* The baseline's side: a `cat` on our pipes, and what it wrote unread. */
struct fig_echo_pipe {
	pid_t		 pid;
	int		 in, out;
	char		 buf[4096];
	size_t		 len;
	long		 n;
};

/* The line of round n, with its LF: the same length every round. */
static int
fig_echo_line(char *buf, size_t size, long n)
{
	return snprintf(buf, size, "echo %08ld\n", n);
}

/* Launch `cat` as an exec session with a transport; -1 with b->why. */
static int
fig_echo_launch(struct bench *b, struct fig_echo_daemon *d)
{
	json_t *res;

	res = rpc_call(&d->r, "launch", json_pack("{s:s, s:[s], s:s, s:b}",
	    "kind", "exec", "argv", "cat", "cwd", "/", "transport", 1));
	if (res == NULL)
		return bench_fail(b, "launch cat: %s", d->r.err);
	d->session = json_integer_value(json_object_get(res, "id"));
	d->pid = (pid_t)json_integer_value(json_object_get(res, "pid"));
	json_decref(res);
	return 0;
}

/*
 * One round through the daemon: write the line and expect it from the
 * last round's end, both sent at once, timed to both answers; µs or NA.
 */
static double
fig_echo_daemon_round(struct bench *b, struct fig_echo_daemon *d)
{
	char	 line[32], *b64;
	json_t	*wrote, *msg, *res = NULL;
	double	 t0, us;
	long	 id;
	bool	 ok;
	int	 len;

	len = fig_echo_line(line, sizeof line, ++d->n);
	b64 = b64_encode(line, (size_t)len);
	t0 = stat_now_ms();
	if (rpc_send(&d->r, "write", json_pack("{s:I, s:s}", "session",
	    d->session, "data", b64)) == -1 || rpc_send(&d->r, "expect",
	    json_pack("{s:I, s:s, s:I, s:i}", "session", d->session, "exact",
	    line, "from", d->from, "timeout", FIG_ECHO_TIMEOUT_MS)) == -1) {
		free(b64);
		return bench_fail(b, "write and expect: %s", d->r.err);
	}
	free(b64);
	wrote = rpc_reply(&d->r, &id);
	msg = rpc_reply(&d->r, &id);
	us = (stat_now_ms() - t0) * 1000;
	ok = wrote != NULL && json_object_get(wrote, "result") != NULL &&
	    msg != NULL && (res = json_object_get(msg, "result")) != NULL;
	if (ok)
		d->from = json_integer_value(json_object_get(res, "next"));
	json_decref(wrote);
	json_decref(msg);
	return ok ? us : bench_fail(b, "write and expect of the line were "
	    "not both answered with a result");
}

/* Start the baseline's `cat` on pipes of ours; -1 with b->why. */
static int
fig_echo_pipe_start(struct bench *b, struct fig_echo_pipe *p)
{
	const char	*argv[] = { "cat", NULL };

	memset(p, 0, sizeof *p);
	p->pid = proc_spawn_piped(argv, &p->in, &p->out);
	return p->pid > 0 ? 0 : bench_fail(b, "cat did not start");
}

/* End the baseline's `cat`: its stdin closed, it exits; reap it. */
static void
fig_echo_pipe_stop(struct fig_echo_pipe *p)
{
	close(p->in);
	close(p->out);
	if (p->pid > 0 && proc_wait(p->pid, 10000) == -1) {
		kill(p->pid, SIGKILL);
		proc_wait(p->pid, -1);
	}
}

/*
 * One round of the baseline: write the line, poll(2) and read until it
 * is back; µs, or NA if cat went away.
 */
static double
fig_echo_pipe_round(struct fig_echo_pipe *p)
{
	char		 line[32], *at;
	double		 t0;
	int		 len;

	len = fig_echo_line(line, sizeof line, ++p->n);
	t0 = stat_now_ms();
	if (proc_write_all(p->in, line, (size_t)len) == -1)
		return NA;
	while ((at = memmem(p->buf, p->len, line, (size_t)len)) == NULL)
		if (proc_read_more(p->out, p->buf, &p->len, sizeof p->buf) == -1)
			return NA;
	t0 = (stat_now_ms() - t0) * 1000;
	/* What follows the line stays for the next round. */
	p->len -= at + len - p->buf;
	memmove(p->buf, at + len, p->len);
	return t0;
}

/* Start the hand relay and its cat; its requests go as the daemon's do. */
static int
fig_echo_relay_start(struct bench *b, struct fig_echo_daemon *h)
{
	int sock;

	memset(h, 0, sizeof *h);
	if ((h->pid = relay_start(b->dir, &sock)) <= 0)
		return bench_fail(b, "the hand relay did not start");
	rpc_adopt(&h->r, sock);
	h->session = 1;
	return 0;
}

/* What a round of any side needs. */
struct fig_echo_sides {
	struct bench		*b;
	struct fig_echo_daemon	*d;
	struct fig_echo_pipe	*p;
	struct fig_echo_daemon	*h;
};

/* One round of side 0 (the daemon), 1 (the baseline) or 2 (the relay). */
static double
fig_echo_round(void *arg, int side)
{
	struct fig_echo_sides *e = arg;

	if (side == 2)
		return fig_echo_daemon_round(e->b, e->h);
	return side == 0 ? fig_echo_daemon_round(e->b, e->d) :
	    fig_echo_pipe_round(e->p);
}

/* Batches of each side in turn, p50 and p99 of each into s[side]. */
static int
fig_echo_runs(struct bench *b, struct fig_echo_sides *e,
    struct samples s[3][2])
{
	if (stat_batches(b->runs, 3, FIG_ECHO_ROUNDS, FIG_ECHO_WARM,
	    fig_echo_round, e, s) == 0)
		return 0;
	return b->why[0] ? -1 : bench_fail(b, "cat went away");
}

/* The rows: p50 against the goal of 1.5x + 30 us, p99 beside; the floor. */
static void
fig_echo_rows(struct samples s[3][2])
{
	double base;

	base = stat_median(&s[1][0]);
	table_row("us", stat_median(&s[0][0]), base,
	    TARGET2(RATIO_PLUS_MAX, 1.5, 30), "write and expect pipelined",
	    "expect round trip p50, echo target [vs its own pipes]");
	table_row("us", stat_median(&s[0][1]), stat_median(&s[1][1]),
	    NO_TARGET, NULL, "expect round trip p99, echo target [vs its own "
	    "pipes]");
	table_row("us", stat_median(&s[0][0]), stat_median(&s[2][0]),
	    NO_TARGET, "the floor: transcripts, JSON, a socket",
	    "expect round trip p50, echo target [vs a hand relay]");
	table_row("us", stat_median(&s[0][1]), stat_median(&s[2][1]),
	    NO_TARGET, NULL, "expect round trip p99, echo target [vs a hand "
	    "relay]");
}

/*
 * Figure: the expect round trip on `cat`, p50 and p99, beside the line
 * written to cat's own pipes and read back.
 */
int
fig_expect_echo(struct bench *b)
{
	struct samples		s[3][2] = { { { 0 } } };
	struct fig_echo_daemon	d = { 0 }, h;
	struct fig_echo_pipe	p;
	struct fig_echo_sides	e = { b, &d, &p, &h };
	cpu_set_t		saved;
	int			rv = -1, i;

	if (rpc_open(&d.r, b->sock) == -1)
		return bench_fail(b, "%s", d.r.err);
	fig_ping_pin(b, &saved);
	if (fig_echo_launch(b, &d) == 0 && fig_echo_pipe_start(b, &p) == 0) {
		fig_ping_pin_pid(d.pid);
		if (fig_echo_relay_start(b, &h) == 0) {
			rv = fig_echo_runs(b, &e, s);
			relay_stop(h.pid, h.r.fd);
			h.r.fd = -1;
			rpc_close(&h.r);
		}
		fig_echo_pipe_stop(&p);
	}
	if (d.session > 0) {
		json_decref(rpc_call(&d.r, "stop", json_pack("{s:I}",
		    "session", d.session)));
		json_decref(rpc_call(&d.r, "remove", json_pack("{s:I}",
		    "session", d.session)));
	}
	fig_ping_unpin(b, &saved);
	rpc_close(&d.r);
	if (rv == 0)
		fig_echo_rows(s);
	for (i = 0; i < 6; i++)
		stat_free(&s[i / 2][i % 2]);
	return rv;
}
