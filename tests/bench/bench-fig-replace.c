/*
 * Replace: the longest a client that pings on a fresh connection each
 * time waits between two answers while `dbgctl daemon --replace` hands
 * the sockets to a new daemon, with no session; beside the same through
 * the restart it replaces, `dbgctl shutdown` and a new dbgctld. Connects
 * refused meanwhile are counted: the replace must have none. The
 * pinger's longest wait over as long a time with neither is its noise.
 * Then the same with 1000 sessions to hand over, pinged until a list sent
 * once the command returned is answered: the new daemon has them all.
 */
#include "bench.h"

#include <poll.h>
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
 * Run `dbgctl daemon --replace`, pinging all through from one answer before
 * it starts (p reset, its start in *t0); its exit status, or -1.
 */
static int
fig_replace_run(struct bench *b, struct fig_replace_pings *p, double *t0)
{
	const char	*argv[] = { b->dbgctl, "-s", b->sock, "daemon",
			    "--replace", NULL };
	pid_t		 pid;
	int		 code;

	memset(p, 0, sizeof *p);
	p->last = *t0 = stat_now_ms();
	fig_replace_ping(b->sock, p);
	if ((pid = proc_spawn(argv, b->envp, -1, -1, -1)) == -1)
		return -1;
	while ((code = proc_wait(pid, 0)) == -1)
		fig_replace_ping(b->sock, p);
	return code;
}

/*
 * One replace, pinged all through: from one answer before the command
 * starts to the first answer after it has returned. Its length (ms), or
 * NA if the command failed.
 */
static double
fig_replace_once(struct bench *b, struct fig_replace_pings *p)
{
	double	t0;
	int	code = fig_replace_run(b, p, &t0);

	fig_replace_ping(b->sock, p);
	return code == 0 ? stat_now_ms() - t0 : NA;
}

/*
 * One restart, pinged all through: shutdown, then a new dbgctld, our
 * child in place of the one the bench started (reaped here: it has
 * exited by now, replaced), until one ping is answered; NA if it failed.
 */
static double
fig_replace_restart(struct bench *b, struct fig_replace_pings *p)
{
	char		 listen[128];
	const char	*stop[] = { b->dbgctl, "-s", b->sock, "shutdown",
			    NULL };
	const char	*start[] = { b->dbgctld, "--foreground", "--listen",
			    listen, NULL };
	double		 t0, end;
	pid_t		 pid;
	int		 code;

	snprintf(listen, sizeof listen, "unix:%s", b->sock);
	memset(p, 0, sizeof *p);
	p->last = t0 = stat_now_ms();
	fig_replace_ping(b->sock, p);
	if ((pid = proc_spawn(stop, b->envp, -1, -1, -1)) == -1)
		return NA;
	while ((code = proc_wait(pid, 0)) == -1)
		fig_replace_ping(b->sock, p);
	proc_wait(b->daemon, -1);
	b->daemon = proc_spawn(start, b->envp, -1, -1, -1);
	if (code != 0 || b->daemon == -1)
		return NA;
	end = stat_now_ms() + 10000;
	for (code = (int)p->ok; p->ok == code && stat_now_ms() < end;)
		fig_replace_ping(b->sock, p);
	return p->ok > code ? stat_now_ms() - t0 : NA;
}

/* The sessions of the loaded figure. */
#define FIG_REPLACE_SESSIONS 1000
/* How long a list may wait for the adoption, in ms. */
#define FIG_REPLACE_LIST_MS 60000

/*
 * Ping until the list sent on l is answered; how many sessions it shows
 * running, or -1 with b->why.
 */
static int
fig_replace_listed(struct bench *b, struct rpc *l, struct fig_replace_pings *p)
{
	struct pollfd	 pfd = { .fd = l->fd, .events = POLLIN };
	double		 end = stat_now_ms() + FIG_REPLACE_LIST_MS;
	json_t		*msg, *res;
	long		 id;

	if (rpc_send(l, "list", NULL) == -1)
		return bench_fail(b, "list: %s", l->err);
	while (poll(&pfd, 1, 0) == 0) {
		if (stat_now_ms() > end)
			return bench_fail(b, "no list in %d ms",
			    FIG_REPLACE_LIST_MS);
		fig_replace_ping(b->sock, p);
	}
	if ((msg = rpc_reply(l, &id)) == NULL)
		return bench_fail(b, "list: %s", l->err);
	res = json_incref(json_object_get(msg, "result"));
	json_decref(msg);
	if (res == NULL)
		return bench_fail(b, "list failed");
	return fig_adopt_count_running(res);
}

/*
 * One replace with sessions, pinged all through, to the list that shows
 * them all running again; its length (ms), or NA with b->why.
 */
static double
fig_replace_loaded(struct bench *b, struct fig_replace_pings *p)
{
	struct rpc	 l;
	double		 t0;
	int		 n;

	if (fig_replace_run(b, p, &t0) != 0 || rpc_open(&l, b->sock) == -1) {
		bench_fail(b, "dbgctl daemon --replace failed");
		return NA;
	}
	n = fig_replace_listed(b, &l, p);
	rpc_close(&l);
	fig_replace_ping(b->sock, p);
	if (n >= 0 && n != FIG_REPLACE_SESSIONS)
		bench_fail(b, "%d of %d sessions running after the replace",
		    n, FIG_REPLACE_SESSIONS);
	return n == FIG_REPLACE_SESSIONS ? stat_now_ms() - t0 : NA;
}

/* The rows of the replace with sessions: its gap, and its whole length. */
static int
fig_replace_gap_loaded(struct bench *b)
{
	struct fig_replace_pings p;
	struct samples		 sg = { 0 }, sl = { 0 };
	double			 len;
	long			 refused = 0;
	int			 run;

	if (fig_adopt_grow(b, FIG_REPLACE_SESSIONS) != 0)
		return -1;
	daemon_settle(b);
	for (run = 0; run < b->runs; run++) {
		if (!((len = fig_replace_loaded(b, &p)) >= 0))
			return -1;
		stat_add(&sg, p.gap);
		stat_add(&sl, len);
		refused += p.refused;
	}
	table_row("ms", stat_median(&sg), NA, TARGET(MAX, 100), NULL,
	    "longest ping gap in daemon --replace, %d sessions",
	    FIG_REPLACE_SESSIONS);
	table_row("ms", stat_median(&sl), NA, TARGET(MAX, 1000), NULL,
	    "the same, to all %d listed running again (%ld refused)",
	    FIG_REPLACE_SESSIONS, refused);
	stat_free(&sg);
	stat_free(&sl);
	return 0;
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
	struct fig_replace_pings pr, ps, pi;
	struct samples		 sg = { 0 }, sr = { 0 }, si = { 0 };
	double			 len, worst = 0, rworst = 0;
	long			 refused = 0, rrefused = 0, closed = 0;
	int			 run;

	for (run = 0; run < b->runs; run++) {
		if (!((len = fig_replace_once(b, &pr)) >= 0))
			return bench_fail(b, "dbgctl daemon --replace failed");
		if (!(fig_replace_restart(b, &ps) >= 0))
			return bench_fail(b, "shutdown and start failed");
		fig_replace_idle(b, len, &pi);
		stat_add(&sg, pr.gap);
		stat_add(&sr, ps.gap);
		stat_add(&si, pi.gap);
		worst = pr.gap > worst ? pr.gap : worst;
		rworst = ps.gap > rworst ? ps.gap : rworst;
		refused += pr.refused;
		rrefused += ps.refused;
		closed += pr.closed;
	}
	table_row("ms", stat_median(&sg), stat_median(&sr), TARGET(MAX, 100),
	    NULL, "longest ping gap in daemon --replace, no session "
	    "[vs shutdown, dbgctld]");
	table_row("ms", worst, rworst, TARGET(MAX, 100), NULL, "the same, the "
	    "worst of %d", b->runs);
	table_row("", (double)refused, (double)rrefused, TARGET(ZERO, 0), NULL,
	    "connects refused in them (%ld reconnects)", closed);
	table_row("ms", stat_median(&si), NA, NO_TARGET, NULL, "the pinger's "
	    "longest gap, as long without either");
	stat_free(&sg);
	stat_free(&sr);
	stat_free(&si);
	return fig_replace_gap_loaded(b);
}
