/*
 * The soak's hostile phase for patterns: for ten seconds, a peer keeps
 * backtracking expects waiting on a target that prints blocks of a's
 * (each fails with `limit`, and another is sent), and floods the daemon
 * with compiled patterns (256 expects of 64 distinct patterns on a
 * connection, closed and made again with new ones), while the owner
 * pings: every ping is answered within the bound dbgctld(8) LIMITS gives,
 * every backtracking expect ends with `limit`, and the daemon's memory
 * is back near where it began once the peer has gone.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/wait.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long the attack lasts (s). */
#define PATTERNS_SECONDS	10
/* Backtracking expects the peer keeps waiting, on each of its connections. */
#define PATTERNS_CONNS		4
#define PATTERNS_EACH		16
/* Pings kept for the percentiles. */
#define PATTERNS_PINGS		200000
/*
 * The worst and the 99th percentile of the owner's pings (ms), as
 * dbgctld(8) LIMITS says, on a machine that runs another suite beside
 * this one; a quiet machine's p99 is within 50 ms (the benchmark's).
 */
#define PATTERNS_WORST		(2000 * H_SLOW)
#define PATTERNS_P99		(250 * H_SLOW)
/* The target: 30,000 bytes of 25 a's and a b, then quiet. */
#define PATTERNS_TARGET \
	"yes aaaaaaaaaaaaaaaaaaaaaaaaab | head -c 30000; exec sleep 600"

TestSuite(soak_patterns, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 180);

/* Launch an exec session running script with a transport on c; its id. */
static long
patterns_launch(struct h_conn *c, const char *script)
{
	char	 params[512];
	json_t	*r;
	long	 id;

	snprintf(params, sizeof params, "{\"kind\":\"exec\",\"transport\":"
	    "true,\"argv\":[\"sh\",\"-c\",\"%s\"]}", script);
	r = h_conn_call(c, "launch", params, H_WAIT_BOUND);
	id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "launch: %s", r ? json_dumps(r, JSON_COMPACT) :
	    "no reply");
	json_decref(r);
	return id;
}

/* Send one backtracking expect on c (the peer's; no assertion there). */
static bool
patterns_backtrack(struct h_conn *c, long id)
{
	char	req[256];
	int	n;

	n = snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"expect\",\"params\":{\"session\":%ld,\"patterns\":"
	    "[\"(a|aa)+c\"],\"from\":0,\"timeout\":1000}}\n", ++c->next_id, id);
	return h_conn_send(c, req, (size_t)n, 5000) == 0;
}

/* One flood: 256 waiting expects of 64 patterns never seen before, on a new c. */
static bool
patterns_flood(struct h_conn *c, long id, int round)
{
	static char	 req[64 * 48 + 256];
	char		*at;
	int		 i, j;

	if (h_conn_open(c, H->sock) != 0)
		return false;
	for (i = 0; i < 256; i++) {
		at = req + sprintf(req, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"expect\",\"params\":{\"session\":%ld,"
		    "\"timeout\":600000,\"patterns\":[", i, id);
		for (j = 0; j < 64; j++)
			at += sprintf(at, "%s\"n%05d-%03d-%02d(x|xx)+y\"", j > 0 ?
			    "," : "", round, i, j);
		at += sprintf(at, "]}}\n");
		if (h_conn_send(c, req, (size_t)(at - req), 5000) != 0)
			return false;
	}
	return true;
}

/*
 * The peer, in a child: backtracking expects kept waiting and floods of
 * patterns until the end. Exits with the number of backtracking expects
 * that ended in anything but `limit` (at most 100), 101 on a lost
 * connection.
 */
static void
patterns_peer(long bt, long quiet, double end)
{
	struct h_conn	 c[PATTERNS_CONNS], f = { .fd = -1 };
	json_t		*r;
	int		 i, k, bad = 0, round = 0;
	double		 next_flood = 0;

	for (i = 0; i < PATTERNS_CONNS; i++) {
		if (h_conn_open(&c[i], H->sock) != 0)
			_exit(101);
		for (k = 0; k < PATTERNS_EACH; k++)
			if (!patterns_backtrack(&c[i], bt))
				_exit(101);
	}
	while (h_now() < end) {
		if (h_now() >= next_flood) {
			if (f.fd >= 0)
				h_conn_close(&f);
			if (!patterns_flood(&f, quiet, round++))
				_exit(101);
			next_flood = h_now() + 1;
		}
		for (i = 0; i < PATTERNS_CONNS; i++)
			while ((r = h_conn_recv(&c[i], 1)) != NULL) {
				if (strcmp(h_jkind(r), "limit") != 0 && bad < 100)
					bad++;
				json_decref(r);
				if (!patterns_backtrack(&c[i], bt))
					_exit(101);
			}
		h_nap(5);
	}
	_exit(bad);
}

/* Ordered pings, for the percentiles. */
static int
patterns_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Backtracking expects and floods of compiled patterns leave the owner
 * served: pings within the bound, every backtracking expect refused
 * with `limit`, and the memory the patterns took given back.
 */
Test(soak_patterns, backtracking_expects_and_pattern_floods_leave_the_owner_served)
{
	static double	 ping[PATTERNS_PINGS];
	struct h_conn	 own;
	double		 end, t;
	long		 bt, quiet, rss0, rss1;
	size_t		 n = 0;
	pid_t		 peer;
	int		 st;
	json_t		*r;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&own, H->sock), 0, "connect");
	bt = patterns_launch(&own, PATTERNS_TARGET);
	quiet = patterns_launch(&own, "exec sleep 600");
	rss0 = h_pid_rss_kib(h_daemon_pid());
	end = h_now() + PATTERNS_SECONDS;
	peer = fork();
	cr_assert_geq(peer, 0, "fork");
	if (peer == 0)
		patterns_peer(bt, quiet, end);
	while (h_now() < end && n < PATTERNS_PINGS) {
		t = h_now();
		r = h_conn_call(&own, "ping", "{}", PATTERNS_WORST);
		cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping %zu "
		    "unanswered within %d ms", n, PATTERNS_WORST);
		json_decref(r);
		ping[n++] = (h_now() - t) * 1000;
		h_nap(2);
	}
	cr_assert(h_run_waitpid(peer, H_WAIT_BOUND, &st), "the peer did not "
	    "end");
	qsort(ping, n, sizeof ping[0], patterns_cmp);
	h_note("%zu pings under backtracking expects and pattern floods: "
	    "p50 %.2f ms, p99 %.2f ms, worst %.2f ms", n, ping[n / 2],
	    ping[n * 99 / 100], ping[n - 1]);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 101, "the peer lost a "
	    "connection (status %d)", st);
	cr_assert_eq(WEXITSTATUS(st), 0, "%d backtracking expects ended in "
	    "something other than limit", WEXITSTATUS(st));
	cr_assert_lt(ping[n * 99 / 100], PATTERNS_P99, "p99 of the pings "
	    "%.1f ms", ping[n * 99 / 100]);
	/* The peer's connections closed: the patterns' memory goes back. */
#ifdef __SANITIZE_ADDRESS__
	/* ASan's quarantine keeps what was freed: RSS says nothing then. */
	h_conn_close(&own);
	return;
#endif
	end = h_now() + H_WAIT_BOUND / 1000.0;
	while ((rss1 = h_pid_rss_kib(h_daemon_pid())) - rss0 > 32 * 1024 &&
	    h_now() < end)
		h_nap(50);
	h_note("daemon RSS %ld KiB before, %ld KiB after", rss0, rss1);
	cr_assert_lt(rss1 - rss0, 32 * 1024, "the daemon kept %ld KiB",
	    rss1 - rss0);
	h_conn_close(&own);
}
