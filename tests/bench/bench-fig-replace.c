/*
 * Replace: the longest a client that pings on a fresh connection each
 * time waits between two answers while `dbgctl daemon --replace` hands
 * the sockets to a new daemon, with no session; beside the longest wait
 * of the same pinger over as long a time with no replace, its own noise.
 * A connect refused meanwhile is counted: there must be none.
 */
#include "bench.h"

#include <stdio.h>
#include <string.h>

/* What the pinger saw over one window. */
struct fig_replace_pings {
	double	 last;		/* when the last answer came (ms) */
	double	 gap;		/* the longest between two answers */
	long	 ok;
	long	 refused;	/* the connect failed */
	long	 closed;	/* closed before the answer: again */
};

/* One ping on a fresh connection, counted in p. */
static void
fig_replace_ping(const char *sock, struct fig_replace_pings *p)
{
	struct rpc	r;
	double		now;

	if (rpc_open(&r, sock) == -1) {
		p->refused++;
		return;
	}
	if (rpc_roundtrip_us(&r, rpc_ping_line, rpc_ping_len) >= 0) {
		now = stat_now_ms();
		if (now - p->last > p->gap)
			p->gap = now - p->last;
		p->last = now;
		p->ok++;
	} else
		p->closed++;
	rpc_close(&r);
}

/*
 * One replace, pinged all through: from one answer before the command
 * starts to the first answer after it has returned. Its length (ms), or
 * NA if the command failed.
 */
static double
fig_replace_once(struct bench *b, struct fig_replace_pings *p)
{
	const char	*argv[] = { b->dbgctl, "-s", b->sock, "daemon",
			    "--replace", NULL };
	double		 t0;
	pid_t		 pid;
	int		 code;

	memset(p, 0, sizeof *p);
	p->last = t0 = stat_now_ms();
	fig_replace_ping(b->sock, p);
	if ((pid = proc_spawn(argv, b->envp, -1, -1, -1)) == -1)
		return NA;
	while ((code = proc_wait(pid, 0)) == -1)
		fig_replace_ping(b->sock, p);
	fig_replace_ping(b->sock, p);
	return code == 0 ? stat_now_ms() - t0 : NA;
}

/* The pinger alone for ms: its own longest wait between answers. */
static void
fig_replace_idle(struct bench *b, double ms, struct fig_replace_pings *p)
{
	double end;

	memset(p, 0, sizeof *p);
	p->last = stat_now_ms();
	end = p->last + ms;
	while (stat_now_ms() < end)
		fig_replace_ping(b->sock, p);
}

/* Figure: the longest gap a pinging client sees during daemon --replace. */
int
fig_replace_gap(struct bench *b)
{
	struct fig_replace_pings	 pr, pi;
	struct samples			 sg = { 0 }, sb = { 0 };
	double				 len, worst = 0;
	long				 refused = 0, closed = 0;
	int				 run;

	for (run = 0; run < b->runs; run++) {
		if (!((len = fig_replace_once(b, &pr)) >= 0))
			return bench_fail(b, "dbgctl daemon --replace failed");
		fig_replace_idle(b, len, &pi);
		stat_add(&sg, pr.gap);
		stat_add(&sb, pi.gap);
		worst = pr.gap > worst ? pr.gap : worst;
		refused += pr.refused;
		closed += pr.closed;
	}
	table_row("ms", stat_median(&sg), stat_median(&sb), TARGET(MAX, 100),
	    NULL, "longest ping gap in daemon --replace, no session "
	    "[vs no replace]");
	table_row("ms", worst, NA, TARGET(MAX, 100), NULL, "the same, the "
	    "worst of %d replaces", b->runs);
	table_row("", (double)refused, NA, TARGET(ZERO, 0), NULL,
	    "connects refused in them (%ld reconnects)", closed);
	stat_free(&sg);
	stat_free(&sb);
	return 0;
}
