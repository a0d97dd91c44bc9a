/*
 * Expects as an attacker writes them: a pattern that backtracks
 * exponentially over a target's output fails with `limit`, naming
 * itself, while every other client's pings are answered quickly and a
 * SIGTERM ends the daemon at once; thousands of compiled patterns cost
 * the daemon a bounded amount of memory, identical ones are compiled
 * once, a connection's share and the daemon's are capped, and the memory
 * goes back when the expects end.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(expect_limits, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* Bound for one reply that is due (ms). */
#define LIMITS_BOUND		H_WAIT_BOUND
/* The worst ping while expects backtrack (ms): a turn is 5 ms of matching. */
#define LIMITS_PING_BOUND	(500 * H_SLOW)
/* Backtracking expects sent at once. */
#define LIMITS_BACKTRACKERS	32
/* The target: 30,000 bytes of 25 a's and a b, then quiet. */
#define LIMITS_TARGET \
	"yes aaaaaaaaaaaaaaaaaaaaaaaaab | head -c 30000; exec sleep 600"

/* A reply shown in a failure message. */
static const char *
limits_show(json_t *j)
{
	static char	 buf[800];
	char		*s;

	if (j == NULL)
		return "(no reply)";
	s = json_dumps(j, JSON_COMPACT);
	snprintf(buf, sizeof buf, "%s", s != NULL ? s : "(unprintable)");
	free(s);
	return buf;
}

/* A daemon and a session running script (the backtracking target if NULL); its id. */
static long
limits_start(struct h_conn *c, const char *script)
{
	char	 params[512];
	json_t	*r;
	long	 id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(c, H->sock), 0, "connect");
	snprintf(params, sizeof params, "{\"kind\":\"exec\",\"transport\":"
	    "true,\"argv\":[\"sh\",\"-c\",\"%s\"]}", script != NULL ? script :
	    LIMITS_TARGET);
	r = h_conn_call(c, "launch", params, LIMITS_BOUND);
	id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "launch: %s", limits_show(r));
	json_decref(r);
	return id;
}

/* Send n expects of pattern (JSON text) on c, ids 1..n, each from offset 0. */
static void
limits_send_expects(struct h_conn *c, long id, const char *pattern, int n,
    int timeout)
{
	char	*req;
	int	 i, len;

	for (i = 1; i <= n; i++) {
		len = asprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
		    "\"expect\",\"params\":{\"session\":%ld,\"patterns\":%s,"
		    "\"from\":0,\"timeout\":%d}}\n", i, id, pattern, timeout);
		cr_assert_gt(len, 0);
		cr_assert_eq(h_conn_send(c, req, (size_t)len, LIMITS_BOUND), 0,
		    "sending expect %d", i);
		free(req);
	}
}

/* One ping on p; how long it took (ms), asserted answered. */
static double
limits_ping(struct h_conn *p)
{
	double	 t = h_now();
	json_t	*r = h_conn_call(p, "ping", "{}", LIMITS_BOUND);

	cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping: %s",
	    limits_show(r));
	json_decref(r);
	return (h_now() - t) * 1000;
}

/*
 * 32 expects of `(a|aa)+c` over 30,000 bytes of 25 a's and a b (each
 * was 6.9 s of the loop, and the daemon answered nobody meanwhile): each
 * fails with `limit`, naming the pattern, within its own budget, and a
 * ping on another connection, sent all along, is never slow.
 */
Test(expect_limits, a_backtracking_expect_fails_and_pings_stay_quick)
{
	struct h_conn	 c, e, p;
	double		 worst = 0, ms, end;
	int		 answered = 0, pings = 0;
	json_t		*r;
	long		 id;

	id = limits_start(&c, NULL);
	cr_assert_eq(h_conn_open(&e, H->sock), 0, "connect");
	cr_assert_eq(h_conn_open(&p, H->sock), 0, "connect");
	limits_send_expects(&e, id, "[\"(a|aa)+c\"]", LIMITS_BACKTRACKERS,
	    1000);
	end = h_now() + 60 * H_SLOW;
	while (answered < LIMITS_BACKTRACKERS && h_now() < end) {
		ms = limits_ping(&p);
		pings++;
		if (ms > worst)
			worst = ms;
		while (answered < LIMITS_BACKTRACKERS &&
		    (r = h_conn_recv(&e, 1)) != NULL) {
			cr_assert_str_eq(h_jkind(r), "limit", "expect: %s",
			    limits_show(r));
			cr_assert(strstr(h_jstr(r, "error.message"),
			    "(a|aa)+c") != NULL, "the error names the "
			    "pattern: %s", limits_show(r));
			json_decref(r);
			answered++;
		}
	}
	h_note("%d backtracking expects answered; %d pings meanwhile, the "
	    "worst %.1f ms", answered, pings, worst);
	cr_assert_eq(answered, LIMITS_BACKTRACKERS, "only %d of %d expects "
	    "were answered in 60 s", answered, LIMITS_BACKTRACKERS);
	cr_assert_lt(worst, LIMITS_PING_BOUND, "a ping took %.1f ms while "
	    "expects backtracked", worst);
	h_conn_close(&p);
	h_conn_close(&e);
	h_conn_close(&c);
}

/* Whether the daemon's process is gone (reaped by the harness or not). */
static bool
limits_daemon_gone(void *arg)
{
	pid_t pid = *(pid_t *)arg;

	return h_pid_gone(pid) || h_pid_state(pid) == 'Z';
}

/* A daemon busy with 256 backtracking expects still ends at once on SIGTERM. */
Test(expect_limits, sigterm_during_backtracking_expects_ends_the_daemon)
{
	struct h_conn	 c, e;
	pid_t		 pid;
	double		 t, acted;
	json_t		*r;
	long		 id;

	id = limits_start(&c, NULL);
	pid = h_daemon_pid();
	cr_assert_eq(h_conn_open(&e, H->sock), 0, "connect");
	limits_send_expects(&e, id, "[\"(a|aa)+c\"]", 256, 600000);
	/* Its answer comes once every expect before it is at work. */
	r = h_conn_call(&e, "ping", "{}", LIMITS_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping after the "
	    "expects: %s", limits_show(r));
	json_decref(r);
	t = h_now();
	cr_assert_eq(kill(pid, SIGTERM), 0);
	h_daemon_wait_log("info: signal 15", LIMITS_BOUND);
	acted = (h_now() - t) * 1000;
	cr_assert(h_wait_for(limits_daemon_gone, &pid, LIMITS_BOUND),
	    "the daemon did not end after SIGTERM");
	t = (h_now() - t) * 1000;
	h_note("SIGTERM with 256 expects at work: acted on in %.1f ms, the "
	    "daemon gone in %.1f ms", acted, t);
	cr_assert_lt(acted, 1000 * H_SLOW, "SIGTERM took %.1f ms to be acted "
	    "on", acted);
	h_conn_close(&e);
	h_conn_close(&c);
}

/* The daemon's resident memory (KiB), asserted known. */
static long
limits_rss(void)
{
	long kib = h_pid_rss_kib(h_daemon_pid());

	cr_assert_gt(kib, 0, "the daemon's RSS");
	return kib;
}

/* 256 expects of 64 patterns each on c, numbered from tag; a ping answers after. */
static void
limits_flood(struct h_conn *c, long id, int tag, bool same)
{
	char	 pats[64 * 40 + 8], *at;
	int	 i, j;
	json_t	*r;

	for (i = 0; i < 256; i++) {
		at = pats;
		*at++ = '[';
		for (j = 0; j < 64; j++)
			at += sprintf(at, "%s\"never%03d-%03d-%02d(x|xx)+y\"",
			    j > 0 ? "," : "", same ? 0 : tag, same ? 0 : i, j);
		strcpy(at, "]");
		limits_send_expects(c, id, pats, 1, 600000);
	}
	r = h_conn_call(c, "ping", "{}", LIMITS_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping after the "
	    "expects: %s", limits_show(r));
	json_decref(r);
}

/* The daemon's RSS before the flood (KiB). */
static long limits_rss0;

/* Whether the daemon is back within 16 MiB of where it began. */
static bool
limits_shrunk(void *arg)
{
	(void)arg;
	return limits_rss() - limits_rss0 < 16 * 1024;
}

/*
 * 256 waiting expects of 64 distinct patterns each (16,384 patterns,
 * 740 MiB of the daemon before), on each of two connections: the daemon
 * grows by less than its cap, the same patterns again cost nearly
 * nothing, and closing the connections gives the memory back.
 */
Test(expect_limits, compiled_patterns_are_bounded_shared_and_given_back)
{
	struct h_conn	 c, f[3];
	long		 id, rss0, rss1, rss2, rss3;
	int		 i;

	id = limits_start(&c, "exec sleep 600");
	rss0 = limits_rss();
	for (i = 0; i < 2; i++) {
		cr_assert_eq(h_conn_open(&f[i], H->sock), 0, "connect");
		limits_flood(&f[i], id, i, false);
	}
	rss1 = limits_rss();
	cr_assert_eq(h_conn_open(&f[2], H->sock), 0, "connect");
	limits_flood(&f[2], id, 0, true);
	rss2 = limits_rss();
	for (i = 0; i < 3; i++)
		h_conn_close(&f[i]);
	/* The connections' ends are the daemon's to see, a little later. */
	limits_rss0 = rss0;
	(void)h_wait_for(limits_shrunk, NULL, LIMITS_BOUND);
	rss3 = limits_rss();
	h_note("daemon RSS: %ld KiB, with 32,768 distinct patterns %ld, and "
	    "16,384 of one pattern more %ld, after closing %ld", rss0, rss1,
	    rss2, rss3);
#ifdef __SANITIZE_ADDRESS__
	/* ASan's redzones and quarantine make RSS say nothing of the heap. */
	h_conn_close(&c);
	return;
#endif
	cr_assert_lt(rss1 - rss0, 96 * 1024, "32,768 patterns took %ld KiB",
	    rss1 - rss0);
	cr_assert_lt(rss2 - rss1, 4 * 1024, "one pattern 16,384 times took "
	    "%ld KiB", rss2 - rss1);
	cr_assert_lt(rss3 - rss0, 16 * 1024, "%ld KiB stayed after the "
	    "expects ended", rss3 - rss0);
	h_conn_close(&c);
}

/* An expect of 30 distinct literals of 30,000 bytes on c, request id; its reply. */
static json_t *
limits_big(struct h_conn *c, long id, int n)
{
	static char	 pats[30 * 30010 + 8];
	char		*at = pats, *req;
	int		 j, len;
	json_t		*r;

	*at++ = '[';
	for (j = 0; j < 30; j++) {
		at += sprintf(at, "%s\"%06d-%02d-", j > 0 ? "," : "", n, j);
		memset(at, 'q', 29990);
		at += 29990;
		*at++ = '"';
	}
	strcpy(at, "]");
	len = asprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"expect\",\"params\":{\"session\":%ld,\"exact\":%s,"
	    "\"timeout\":600000}}\n", n, id, pats);
	cr_assert_gt(len, 0);
	cr_assert_eq(h_conn_send(c, req, (size_t)len, LIMITS_BOUND), 0);
	free(req);
	/* A waiting expect is not answered: a ping's reply comes first. */
	len = asprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":\"p%d\",\"method\":"
	    "\"ping\"}\n", n);
	cr_assert_eq(h_conn_send(c, req, (size_t)len, LIMITS_BOUND), 0);
	free(req);
	r = h_conn_recv(c, LIMITS_BOUND);
	cr_assert_not_null(r, "no reply to expect %d nor its ping", n);
	if (json_is_string(json_object_get(r, "id"))) {
		json_decref(r);
		return NULL;
	}
	json_decref(h_conn_recv(c, LIMITS_BOUND));
	return r;
}

/*
 * Expects of big patterns: one connection's waiting ones stop at its
 * share (16 MiB) with `limit`, and the daemon's at its cap (64 MiB),
 * while another connection's expects still work.
 */
Test(expect_limits, a_connection_s_and_the_daemon_s_patterns_are_capped)
{
	struct h_conn	 c, f[6];
	json_t		*r = NULL;
	int		 i, n = 0, k;
	double		 end;
	long		 id;

	id = limits_start(&c, "exec sleep 600");
	for (k = 0; k < 6; k++) {
		cr_assert_eq(h_conn_open(&f[k], H->sock), 0, "connect");
		for (i = 0; i < 64 && r == NULL; i++)
			r = limits_big(&f[k], id, ++n);
		cr_assert_not_null(r, "connection %d: 64 expects of 900 KB "
		    "patterns all wait", k);
		cr_assert_str_eq(h_jkind(r), "limit", "%s", limits_show(r));
		h_note("connection %d: refused after %d expects: %s", k, i - 1,
		    h_jstr(r, "error.message"));
		if (strstr(h_jstr(r, "error.message"), "daemon") != NULL)
			break;
		cr_assert(strstr(h_jstr(r, "error.message"), "16 MiB") != NULL,
		    "%s", limits_show(r));
		json_decref(r);
		r = NULL;
	}
	cr_assert_lt(k, 6, "the daemon's cap was never reached");
	cr_assert(strstr(h_jstr(r, "error.message"), "64 MiB") != NULL, "%s",
	    limits_show(r));
	json_decref(r);
	/* Once some end, expects compile again (once the daemon sees the close). */
	h_conn_close(&f[0]);
	cr_assert_eq(h_conn_open(&f[0], H->sock), 0, "connect");
	end = h_now() + LIMITS_BOUND / 1000.0;
	while ((r = limits_big(&f[0], id, ++n)) != NULL && h_now() < end) {
		json_decref(r);
		h_nap(10);
	}
	cr_assert_null(r, "an expect after a connection's expects ended: %s",
	    limits_show(r));
	for (i = 0; i <= k; i++)
		h_conn_close(&f[i]);
	h_conn_close(&c);
}
