/*
 * expect on the target stream, each beside a C program doing the same
 * with libpcre2 directly: the latency from a write to the target to the
 * waiting client's match of the line it answers, beside a program that
 * owns the target's pipes, polls them and matches with pcre2 (JIT); the
 * throughput of a waiting expect over a flood of lines that do not match,
 * beside pcre2's JIT over the same bytes in memory; and ping beside 100
 * expects waiting on a stream as busy as `yes`, beside an idle daemon.
 *
 * The target is this program: `bench --target tick` answers each byte on
 * its stdin with a line `tick N`, and `bench --target flood MIB` makes
 * its flood, says `ready`, waits for one byte, then writes MIB MiB of
 * lines and a last marker line.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pcre2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Round trips of one latency sample, and a warm-up's. */
#define FIG_EXPECT_ROUNDS 2000
#define FIG_EXPECT_WARM 50
/* A flood line's length, its last byte a line feed. */
#define FIG_EXPECT_LINE 64
/* The pattern no flood line matches, and the flood's last line's. */
#define FIG_EXPECT_NEVER "FATAL: (\\d+) not found"
#define FIG_EXPECT_MARKER "END OF FLOOD (\\d+)\\n"
/* What the flood target says once its flood is made. */
#define FIG_EXPECT_READY "ready\n"
/* Expects waiting on the busy stream, ms it runs first, pings a sample. */
#define FIG_EXPECT_WAITERS 100
#define FIG_EXPECT_BUSY_MS 200
#define FIG_EXPECT_PINGS 200
/* A timeout no answer of these figures should come near, in ms. */
#define FIG_EXPECT_TIMEOUT_MS 600000

/*
 * The flood: mib MiB of lines as a UART prints them, none matching
 * FIG_EXPECT_NEVER, then the marker line; the same bytes for the target
 * and for the baseline. *len is set to the whole, marker included.
 */
static char *
fig_expect_flood(int mib, size_t *len)
{
	size_t	 lines = (size_t)mib * 1048576 / FIG_EXPECT_LINE, i;
	char	*buf, *l;
	int	 k;

	if ((buf = malloc(lines * FIG_EXPECT_LINE + 64)) == NULL)
		abort();
	for (i = 0; i < lines; i++) {
		l = buf + i * FIG_EXPECT_LINE;
		k = snprintf(l, FIG_EXPECT_LINE, "[%5u.%06u] uart0: frame %u "
		    "received, CRC ok, FIFO %u", (unsigned)(i / 1000 % 100000),
		    (unsigned)(i % 1000 * 997), (unsigned)(i % 10000000),
		    (unsigned)(i % 16));
		if (k < 0 || k >= FIG_EXPECT_LINE)
			abort();
		memset(l + k, ' ', FIG_EXPECT_LINE - 1 - k);
		l[FIG_EXPECT_LINE - 1] = '\n';
	}
	k = snprintf(buf + lines * FIG_EXPECT_LINE, 64, "END OF FLOOD %d\n",
	    mib);
	*len = lines * FIG_EXPECT_LINE + (size_t)k;
	return buf;
}

/* The tick target: each byte read is answered with `tick N`, N from 1. */
static int
fig_expect_tick_main(void)
{
	char	in[256], out[sizeof in * 24];
	long	n = 0;
	ssize_t	r, i;
	int	len;

	for (;;) {
		if ((r = read(0, in, sizeof in)) == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		for (i = 0, len = 0; i < r; i++)
			len += snprintf(out + len, sizeof out - len,
			    "tick %ld\n", ++n);
		if (proc_write_all(1, out, (size_t)len) == -1)
			return 1;
	}
}

/*
 * The flood target: make the flood and say so, so that making it is not
 * timed; wait for a byte, then write the flood and end.
 */
static int
fig_expect_flood_main(int mib)
{
	size_t	 len;
	char	*buf = fig_expect_flood(mib, &len), c;
	ssize_t	 r;

	if (proc_write_all(1, FIG_EXPECT_READY,
	    sizeof FIG_EXPECT_READY - 1) == -1)
		return 1;
	while ((r = read(0, &c, 1)) == -1 && errno == EINTR)
		;
	if (r != 1)
		return 1;
	if (proc_write_all(1, buf, len) == -1)
		return 1;
	free(buf);
	return 0;
}

/* `bench --target tick|flood MIB`: the figures' target, run as a child. */
int
fig_expect_target(int argc, char **argv)
{
	if (argc >= 1 && strcmp(argv[0], "tick") == 0)
		return fig_expect_tick_main();
	if (argc >= 2 && strcmp(argv[0], "flood") == 0 && atoi(argv[1]) > 0)
		return fig_expect_flood_main(atoi(argv[1]));
	fprintf(stderr, "usage: bench --target tick | flood MIB\n");
	return 2;
}

/* This program's own path, which the daemon and gdb run as the target. */
const char *
fig_expect_self(void)
{
	static char	path[PATH_MAX];
	ssize_t		n;

	if ((n = readlink("/proc/self/exe", path, sizeof path - 1)) <= 0)
		return NULL;
	path[n] = '\0';
	return path;
}

/* A pattern compiled as the daemon does (no UTF) and JIT-compiled. */
static pcre2_code *
fig_expect_compile(const char *pattern)
{
	pcre2_code	*re;
	PCRE2_SIZE	 at;
	int		 err;

	re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0,
	    &err, &at, NULL);
	if (re == NULL)
		abort();
	(void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	return re;
}

/*
 * Launch argv as an exec session with a transport: its id, and its
 * program's pid in *pid if asked; -1 with r->err if it did not start.
 */
static json_int_t
fig_expect_launch(struct rpc *r, const char *const argv[], pid_t *pid)
{
	json_int_t	 id;
	json_t		*res, *a = json_array();
	int		 i;

	for (i = 0; argv[i] != NULL; i++)
		json_array_append_new(a, json_string(argv[i]));
	res = rpc_call(r, "launch", json_pack("{s:s, s:o, s:s, s:b}", "kind",
	    "exec", "argv", a, "cwd", "/", "transport", 1));
	if (res == NULL)
		return -1;
	id = json_integer_value(json_object_get(res, "id"));
	if (pid != NULL)
		*pid = (pid_t)json_integer_value(json_object_get(res, "pid"));
	json_decref(res);
	return id;
}

/* Stop a session and remove it with its files, whatever state it is in. */
static void
fig_expect_drop(struct rpc *r, json_int_t session)
{
	json_decref(rpc_call(r, "stop", json_pack("{s:I}", "session",
	    session)));
	json_decref(rpc_call(r, "remove", json_pack("{s:I}", "session",
	    session)));
}

/* A reply's error message, or what else it was. */
static const char *
fig_expect_why(json_t *msg)
{
	const char *why;

	why = json_string_value(json_object_get(json_object_get(msg,
	    "error"), "message"));
	return why != NULL ? why : "an answer that was not an error";
}

/*
 * Read replies on r until the one to want, which is returned; one to
 * early that comes first is kept in *got (NULL if none came); other
 * replies are dropped. NULL with r->err at the end of the connection.
 */
static json_t *
fig_expect_until(struct rpc *r, long want, long early, json_t **got)
{
	json_t	*msg;
	long	 id;

	while ((msg = rpc_reply(r, &id)) != NULL) {
		if (id == want)
			return msg;
		if (id == early && got != NULL && *got == NULL)
			*got = msg;
		else
			json_decref(msg);
	}
	return NULL;
}

/*
 * Send an expect on r, then a ping behind it: the ping's answer says the
 * expect is waiting (requests start in order). The expect's id, or -1
 * with b->why if it was answered already or the connection failed.
 */
static long
fig_expect_wait(struct bench *b, struct rpc *r, json_t *params)
{
	json_t	*early = NULL, *ping;
	long	 e, p;

	if ((e = rpc_send(r, "expect", params)) == -1 ||
	    (p = rpc_send(r, "ping", NULL)) == -1 ||
	    (ping = fig_expect_until(r, p, e, &early)) == NULL)
		return bench_fail(b, "expect: %s", r->err);
	json_decref(ping);
	if (early != NULL) {
		bench_fail(b, "expect answered before its line: %s",
		    fig_expect_why(early));
		json_decref(early);
		return -1;
	}
	return e;
}

/*
 * Write one byte to the target and read replies until expect e's answer:
 * the time from the write to it in *us, the answer's result (a new
 * reference), or NULL with b->why. The write's own reply is read after.
 */
static json_t *
fig_expect_poke(struct bench *b, struct rpc *r, json_int_t session, long e,
    double *us)
{
	json_t	*wrote = NULL, *msg, *res;
	char	 line[160];
	double	 t0;
	long	 w = ++r->id;
	int	 len;

	len = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"write\",\"params\":{\"session\":%lld,\"data\":"
	    "\"eA==\"}}\n", w, (long long)session);
	t0 = stat_now_ms();
	if (rpc_write(r, line, (size_t)len) == -1 ||
	    (msg = fig_expect_until(r, e, w, &wrote)) == NULL) {
		json_decref(wrote);
		bench_fail(b, "expect: %s", r->err);
		return NULL;
	}
	*us = (stat_now_ms() - t0) * 1000;
	if (wrote == NULL && (wrote = fig_expect_until(r, w, -1,
	    NULL)) == NULL) {
		json_decref(msg);
		bench_fail(b, "write: %s", r->err);
		return NULL;
	}
	if ((res = json_object_get(msg, "result")) == NULL)
		bench_fail(b, "expect: %s", fig_expect_why(msg));
	else if (json_object_get(wrote, "result") == NULL) {
		bench_fail(b, "write: %s", fig_expect_why(wrote));
		res = NULL;
	}
	json_incref(res);
	json_decref(msg);
	json_decref(wrote);
	return res;
}

/* The state of the daemon's side of the latency figure. */
struct fig_expect_tick {
	struct rpc	r;
	json_int_t	session;
	json_int_t	from;	/* the stream offset after the last tick */
	long		n;	/* ticks asked for */
};

/* One round through the daemon: write a byte, await `tick N`; µs or NA. */
static double
fig_expect_daemon_round(struct bench *b, struct fig_expect_tick *t)
{
	json_t	*res;
	char	 pat[64];
	double	 us;
	long	 e;

	snprintf(pat, sizeof pat, "tick %ld\\n", ++t->n);
	e = fig_expect_wait(b, &t->r, json_pack("{s:I, s:[s], s:I, s:i}",
	    "session", t->session, "patterns", pat, "from", t->from,
	    "timeout", FIG_EXPECT_TIMEOUT_MS));
	if (e == -1 || (res = fig_expect_poke(b, &t->r, t->session, e,
	    &us)) == NULL)
		return NA;
	t->from = json_integer_value(json_object_get(res, "next"));
	json_decref(res);
	return us;
}

/* The baseline's target, its pipes and what it has written unmatched. */
struct fig_expect_pipe {
	pid_t			 pid;
	int			 in, out;
	char			 buf[4096];
	size_t			 len;
	long			 n;
	pcre2_match_data	*md;
};

/* Start the tick target on pipes of our own; -1 if it did not start. */
static int
fig_expect_pipe_start(struct fig_expect_pipe *p, const char *self)
{
	const char	*argv[] = { self, "--target", "tick", NULL };

	memset(p, 0, sizeof *p);
	p->pid = proc_spawn_piped(argv, &p->in, &p->out);
	p->md = pcre2_match_data_create(16, NULL);
	return p->pid > 0 ? 0 : -1;
}

/* End the baseline's target: its stdin closed, it exits; reap it. */
static void
fig_expect_pipe_stop(struct fig_expect_pipe *p)
{
	close(p->in);
	close(p->out);
	if (p->pid > 0 && proc_wait(p->pid, 10000) == -1) {
		kill(p->pid, SIGKILL);
		proc_wait(p->pid, -1);
	}
	pcre2_match_data_free(p->md);
}

/*
 * One round of the baseline: the pattern compiled first, as the daemon
 * has it before the write; then write a byte, poll(2) and read the
 * target's pipe and pcre2_match what came until `tick N` matches. µs, or
 * NA if the target went away.
 */
static double
fig_expect_pipe_round(struct fig_expect_pipe *p)
{
	pcre2_code	*re;
	PCRE2_SIZE	*ov;
	char		 pat[64];
	double		 t0, us = NA;

	snprintf(pat, sizeof pat, "tick %ld\\n", ++p->n);
	re = fig_expect_compile(pat);
	t0 = stat_now_ms();
	if (proc_write_all(p->in, "x", 1) == -1)
		goto out;
	for (;;) {
		if (pcre2_match(re, (PCRE2_SPTR)p->buf, p->len, 0, 0, p->md,
		    NULL) >= 0)
			break;
		if (proc_read_more(p->out, p->buf, &p->len, sizeof p->buf) == -1)
			goto out;
	}
	us = (stat_now_ms() - t0) * 1000;
	/* What follows the match stays for the next round. */
	ov = pcre2_get_ovector_pointer(p->md);
	memmove(p->buf, p->buf + ov[1], p->len - ov[1]);
	p->len -= ov[1];
out:
	pcre2_code_free(re);
	return us;
}

/* A batch of rounds on each side, in turn; their p50 and p99 added. */
static int
fig_expect_latency_runs(struct bench *b, struct fig_expect_tick *t,
    struct fig_expect_pipe *p, struct samples s[2][2])
{
	struct samples	one[2] = { { 0 } };
	int		run, k, i, side, rv = 0;
	double		us;

	for (i = 0; i < FIG_EXPECT_WARM; i++)
		if (!(fig_expect_daemon_round(b, t) >= 0))
			return -1;
		else if (!(fig_expect_pipe_round(p) >= 0))
			return bench_fail(b, "the baseline's target went away");
	for (run = 0; run < b->runs && rv == 0; run++)
		for (k = 0; k < 2 && rv == 0; k++) {
			side = (run + k) % 2;
			for (i = 0; i < FIG_EXPECT_ROUNDS && rv == 0; i++) {
				us = side == 0 ? fig_expect_daemon_round(b,
				    t) : fig_expect_pipe_round(p);
				if (!(us >= 0))
					rv = bench_fail(b, "%s", b->why[0] ?
					    b->why : "the baseline's target "
					    "went away");
				stat_add(&one[side], us);
			}
			stat_add(&s[side][0], stat_pct(&one[side], 50));
			stat_add(&s[side][1], stat_pct(&one[side], 99));
			stat_free(&one[side]);
		}
	stat_free(&one[0]);
	stat_free(&one[1]);
	return rv;
}

/* The latency rows: p50 and p99 beside the baseline's. */
static void
fig_expect_latency_rows(struct samples s[2][2])
{
	double	base;
	int	q;

	for (q = 0; q < 2; q++) {
		base = stat_median(&s[1][q]);
		/* The goal, 1.5x the baseline plus 50 us, over it. */
		table_row("us", stat_median(&s[0][q]), base,
		    TARGET(OVER_MAX, round(base / 2 + 50)), "goal <= 1.5x base + 50 us",
		    "expect latency p%d, write to match [vs poll+pcre2]",
		    q == 0 ? 50 : 99);
	}
}

/*
 * Figure: from a byte written to the tick target to the waiting client's
 * match of its answer, beside the same target on pipes this program owns;
 * the daemon, this program and both targets on one CPU, as ping's RTT is.
 */
int
fig_expect_latency(struct bench *b)
{
	const char		*self = fig_expect_self();
	const char		*argv[] = { self, "--target", "tick", NULL };
	struct samples		 s[2][2] = { { { 0 } } };
	struct fig_expect_tick	 t = { 0 };
	struct fig_expect_pipe	 p;
	cpu_set_t		 saved;
	pid_t			 pid = 0;
	int			 rv = -1, i;

	if (self == NULL)
		return bench_fail(b, "cannot read /proc/self/exe");
	if (rpc_open(&t.r, b->sock) == -1)
		return bench_fail(b, "%s", t.r.err);
	fig_ping_pin(b, &saved);
	if ((t.session = fig_expect_launch(&t.r, argv, &pid)) == -1)
		bench_fail(b, "launch: %s", t.r.err);
	else if (fig_expect_pipe_start(&p, self) == -1)
		bench_fail(b, "the baseline's target did not start");
	else {
		fig_ping_pin_pid(pid);
		rv = fig_expect_latency_runs(b, &t, &p, s);
		fig_expect_pipe_stop(&p);
	}
	if (t.session > 0)
		fig_expect_drop(&t.r, t.session);
	fig_ping_unpin(b, &saved);
	rpc_close(&t.r);
	if (rv == 0)
		fig_expect_latency_rows(s);
	for (i = 0; i < 4; i++)
		stat_free(&s[i / 2][i % 2]);
	return rv;
}

/*
 * Matching alone: once the whole flood is in the session's transcript,
 * one expect for both patterns from its first byte, timed from request to
 * answer; MiB/s, or NA.
 */
static double
fig_expect_replay(struct bench *b, struct rpc *r, json_int_t session,
    size_t bytes)
{
	double	 t0 = stat_now_ms(), ms;
	json_t	*res;
	bool	 ok;

	res = rpc_call(r, "expect", json_pack("{s:I, s:[s, s], s:i, s:i}",
	    "session", session, "patterns", FIG_EXPECT_NEVER,
	    FIG_EXPECT_MARKER, "from", (int)sizeof FIG_EXPECT_READY - 1,
	    "timeout", FIG_EXPECT_TIMEOUT_MS));
	ms = stat_now_ms() - t0;
	ok = res != NULL && json_integer_value(json_object_get(res,
	    "index")) == 1;
	json_decref(res);
	if (!ok || ms <= 0)
		return bench_fail(b, "the replayed expect: %s", r->err);
	return bytes / 1048576.0 / (ms / 1000);
}

/*
 * One sample through the daemon: a flood target launched and ready, an
 * expect for FIG_EXPECT_NEVER and the marker waiting from the flood's
 * first byte, then the byte that starts the flood; MiB/s to the marker's
 * answer, or NA. Without never, the marker's pattern only: what the
 * stream costs beside what matching does.
 */
static double
fig_expect_flood_daemon(struct bench *b, struct rpc *r, const char *self,
    size_t bytes, bool never, double *replay)
{
	char		 mib[16];
	const char	*argv[] = { self, "--target", "flood", mib, NULL };
	json_int_t	 session;
	json_t		*res;
	double		 us = NA;
	long		 e;

	snprintf(mib, sizeof mib, "%d", b->mib);
	if ((session = fig_expect_launch(r, argv, NULL)) == -1) {
		bench_fail(b, "launch: %s", r->err);
		return NA;
	}
	if ((res = rpc_call(r, "expect", json_pack("{s:I, s:s, s:i, s:i}",
	    "session", session, "exact", FIG_EXPECT_READY, "from", 0,
	    "timeout", FIG_EXPECT_TIMEOUT_MS))) == NULL) {
		bench_fail(b, "expect ready: %s", r->err);
		fig_expect_drop(r, session);
		return NA;
	}
	json_decref(res);
	e = fig_expect_wait(b, r, json_pack("{s:I, s:o, s:i, s:i}",
	    "session", session, "patterns", never ? json_pack("[s, s]",
	    FIG_EXPECT_NEVER, FIG_EXPECT_MARKER) : json_pack("[s]",
	    FIG_EXPECT_MARKER), "from", (int)sizeof FIG_EXPECT_READY - 1,
	    "timeout", FIG_EXPECT_TIMEOUT_MS));
	if (e != -1 && (res = fig_expect_poke(b, r, session, e, &us)) != NULL) {
		if (json_integer_value(json_object_get(res, "index")) !=
		    (never ? 1 : 0) ||
		    json_integer_value(json_object_get(res, "end")) !=
		    (json_int_t)(bytes + sizeof FIG_EXPECT_READY - 1))
			us = bench_fail(b, "expect matched other than the "
			    "marker at the flood's end");
		json_decref(res);
	}
	if (replay != NULL && us > 0)
		*replay = fig_expect_replay(b, r, session, bytes);
	fig_expect_drop(r, session);
	if (!(us > 0))
		return NA;
	return bytes / 1048576.0 / (us / 1e6);
}

/* One sample of the baseline: both patterns over the flood in memory. */
static double
fig_expect_flood_base(pcre2_code *never, pcre2_code *marker,
    pcre2_match_data *md, const char *buf, size_t len)
{
	double	t0 = stat_now_ms(), ms;
	int	a, c;

	a = pcre2_match(never, (PCRE2_SPTR)buf, len, 0, 0, md, NULL);
	c = pcre2_match(marker, (PCRE2_SPTR)buf, len, 0, 0, md, NULL);
	ms = stat_now_ms() - t0;
	if (a != PCRE2_ERROR_NOMATCH || c < 0 || ms <= 0 ||
	    pcre2_get_ovector_pointer(md)[1] != len)
		return NA;
	return len / 1048576.0 / (ms / 1000);
}

/*
 * Figure: matching throughput of a waiting expect over BENCH_MIB MiB of
 * lines that do not match, to the marker's answer, beside pcre2's JIT
 * over the same bytes in this process's memory.
 */
int
fig_expect_throughput(struct bench *b)
{
	const char		*self = fig_expect_self();
	struct samples		 sd = { 0 }, sb = { 0 }, sm = { 0 }, sr = { 0 };
	double			 replay = NA;
	pcre2_match_data	*md = pcre2_match_data_create(16, NULL);
	pcre2_code		*never, *marker;
	struct rpc		 r;
	size_t			 len;
	char			*buf, note[80];
	int			 run, rv = 0;

	if (self == NULL)
		return bench_fail(b, "cannot read /proc/self/exe");
	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	buf = fig_expect_flood(b->mib, &len);
	never = fig_expect_compile(FIG_EXPECT_NEVER);
	marker = fig_expect_compile(FIG_EXPECT_MARKER);
	for (run = 0; run < b->runs && rv == 0; run++) {
		stat_add(&sd, fig_expect_flood_daemon(b, &r, self, len, true,
		    NULL));
		stat_add(&sb, fig_expect_flood_base(never, marker, md, buf,
		    len));
		stat_add(&sm, fig_expect_flood_daemon(b, &r, self, len, false,
		    &replay));
		stat_add(&sr, replay);
		if (!(sd.v[sd.n - 1] >= 0) || !(sm.v[sm.n - 1] >= 0) ||
		    !(replay >= 0))
			rv = -1;
		else if (!(sb.v[sb.n - 1] >= 0))
			rv = bench_fail(b, "the baseline did not match as "
			    "the flood says");
	}
	snprintf(note, sizeof note, "%d MiB of 64-byte lines (BENCH_MIB), "
	    "2 patterns", b->mib);
	if (rv == 0) {
		table_row("MiB/s", stat_median(&sd), stat_median(&sb),
		    TARGET(RATIO_MIN, 0.5), note,
		    "expect throughput, no match, to a marker [vs pcre2 JIT]");
		table_row("MiB/s", stat_median(&sm), stat_median(&sb),
		    NO_TARGET, "the stream's cost, the marker's pattern only",
		    "expect throughput, marker only [vs pcre2 JIT, both]");
		table_row("MiB/s", stat_median(&sr), stat_median(&sb),
		    TARGET(RATIO_MIN, 0.5), "matching alone: the flood in the "
		    "transcript, expect from its start",
		    "expect matching, over a transcript [vs pcre2 JIT]");
	}
	pcre2_code_free(never);
	pcre2_code_free(marker);
	pcre2_match_data_free(md);
	free(buf);
	rpc_close(&r);
	stat_free(&sd);
	stat_free(&sb);
	stat_free(&sm);
	stat_free(&sr);
	return rv;
}

/* Open the waiters' connections; -1 with b->why if one cannot be. */
static int
fig_expect_open(struct bench *b, struct rpc *w, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (rpc_open(&w[i], b->sock) == -1) {
			bench_fail(b, "%s", w[i].err);
			while (i-- > 0)
				rpc_close(&w[i]);
			return -1;
		}
	return 0;
}

/*
 * Whether every waiter on w is still waiting: nothing came back on its
 * connection since the ping behind its expect; -1 with b->why if one was
 * answered (the answer is read to say why).
 */
static int
fig_expect_still(struct bench *b, struct rpc *w, int n)
{
	struct pollfd	 pfd;
	json_t		*msg;
	long		 id;
	int		 i;

	for (i = 0; i < n; i++) {
		pfd = (struct pollfd){ .fd = w[i].fd, .events = POLLIN };
		if (w[i].off == w[i].len && poll(&pfd, 1, 0) == 0)
			continue;
		if ((msg = rpc_reply(&w[i], &id)) == NULL)
			return bench_fail(b, "expect: %s", w[i].err);
		bench_fail(b, "a waiting expect was answered: %s",
		    fig_expect_why(msg));
		json_decref(msg);
		return -1;
	}
	return 0;
}

/*
 * The busy phase: a session running `yes` with a transport, an expect
 * that never matches waiting on each of n connections (at most
 * FIG_EXPECT_WAITERS), then pings on r; their p50 and p99 in µs. The waiters must all still
 * wait after the pings; then their connections close, which ends them:
 * at the stream's end each would first match every byte `yes` wrote.
 */
static int
fig_expect_busy(struct bench *b, struct rpc *r, int n, double *p50,
    double *p99)
{
	const char	*argv[] = { "yes", NULL };
	struct rpc	 w[FIG_EXPECT_WAITERS];
	json_int_t	 session;
	int		 i, rv = 0;

	if ((session = fig_expect_launch(r, argv, NULL)) == -1)
		return bench_fail(b, "launch yes: %s", r->err);
	if (fig_expect_open(b, w, n) == -1) {
		fig_expect_drop(r, session);
		return -1;
	}
	for (i = 0; i < n && rv == 0; i++)
		if (fig_expect_wait(b, &w[i], json_pack("{s:I, s:s, s:i}",
		    "session", session, "patterns", FIG_EXPECT_NEVER,
		    "timeout", FIG_EXPECT_TIMEOUT_MS)) == -1)
			rv = -1;
	if (rv == 0) {
		stat_sleep_ms(FIG_EXPECT_BUSY_MS);
		if (rpc_ping_pct(r, FIG_EXPECT_PINGS, p50, p99) == -1)
			rv = bench_fail(b, "ping: %s", r->err);
		else
			rv = fig_expect_still(b, w, n);
	}
	for (i = 0; i < n; i++)
		rpc_close(&w[i]);
	fig_expect_drop(r, session);
	return rv;
}

/* The phases of the busy figure, and what each measures ping beside. */
enum { FIG_EXPECT_BUSY, FIG_EXPECT_IDLE, FIG_EXPECT_YES, FIG_EXPECT_PHASES };

/* One phase's pings: p50 and p99 into *p50 and *p99; -1 with b->why. */
static int
fig_expect_phase(struct bench *b, struct rpc *r, int phase, double *p50,
    double *p99)
{
	daemon_settle(b);
	if (phase == FIG_EXPECT_BUSY)
		return fig_expect_busy(b, r, FIG_EXPECT_WAITERS, p50, p99);
	if (phase == FIG_EXPECT_YES)
		return fig_expect_busy(b, r, 0, p50, p99);
	if (rpc_ping_pct(r, FIG_EXPECT_PINGS, p50, p99) == -1)
		return bench_fail(b, "ping: %s", r->err);
	return 0;
}

/*
 * Figure: ping beside 100 expects waiting on a stream as busy as `yes`,
 * beside pings on the same daemon idle; and beside the same `yes` with no
 * expect, which tells the stream's cost from the waiters'. The phases
 * are interleaved, each run starting with another.
 */
int
fig_expect_busy_ping(struct bench *b)
{
	struct samples	 s[FIG_EXPECT_PHASES][2] = { { { 0 } } };
	struct rpc	 r;
	double		 a = NA, c = NA;
	int		 run, k, ph, rv = 0, i;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	for (run = 0; run < b->runs && rv == 0; run++)
		for (k = 0; k < FIG_EXPECT_PHASES && rv == 0; k++) {
			ph = (run + k) % FIG_EXPECT_PHASES;
			rv = fig_expect_phase(b, &r, ph, &a, &c);
			stat_add(&s[ph][0], a);
			stat_add(&s[ph][1], c);
		}
	if (rv == 0) {
		table_row("us", stat_median(&s[FIG_EXPECT_BUSY][0]),
		    stat_median(&s[FIG_EXPECT_IDLE][0]), NO_TARGET,
		    "a session running yes, transport",
		    "ping p50, 100 expects waiting on yes [vs idle]");
		table_row("us", stat_median(&s[FIG_EXPECT_BUSY][1]),
		    stat_median(&s[FIG_EXPECT_IDLE][1]), TARGET(OVER_MAX, 3000),
		    "target: a few ms",
		    "ping p99, 100 expects waiting on yes [vs idle]");
		table_row("us", stat_median(&s[FIG_EXPECT_BUSY][1]),
		    stat_median(&s[FIG_EXPECT_YES][1]), NO_TARGET,
		    "the waiters' own cost",
		    "ping p99, 100 expects waiting on yes [vs yes, none]");
	}
	rpc_close(&r);
	for (i = 0; i < FIG_EXPECT_PHASES * 2; i++)
		stat_free(&s[i / 2][i % 2]);
	return rv;
}
