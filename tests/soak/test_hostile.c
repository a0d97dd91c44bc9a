/*
 * The soak's hostile phase: a daemon with a TCP listener and 150 sessions
 * is attacked for ten seconds by peers without the token (idle floods,
 * slowloris lines, token guesses) and by the owner's own heavy work read
 * slowly (a batch of 1500 lists, 1500 pipelined lists), while a target
 * prints millions of bytes to a subscriber that does not read until the
 * attack is over. Meanwhile the owner's client pings over the Unix socket:
 * every ping is answered within the bound dbgctld(8) LIMITS documents, no
 * owner connection is closed, and afterwards every byte the target wrote
 * arrives, in order, at the offsets the notifications name.
 */
#include "harness.h"
#include "hostile.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"

/* Idle sessions that make each list reply long (about 40 KB). */
#define HOSTILE_SESSIONS	150
/*
 * How long the attack lasts (s), and its peers. Under sanitizers every
 * accept, parse and row costs the daemon ten times as much, so a fifth of
 * the peers make as heavy an attack for it there.
 */
#define HOSTILE_SECONDS		10
#ifdef __SANITIZE_ADDRESS__
#define HOSTILE_FLOOD		60
#define HOSTILE_SLOWLORIS	10
#define HOSTILE_GUESSERS	1
#define HOSTILE_BATCH		300
#define HOSTILE_PIPELINED	300
#else
#define HOSTILE_FLOOD		300
#define HOSTILE_SLOWLORIS	50
#define HOSTILE_GUESSERS	2
#define HOSTILE_BATCH		1500
#define HOSTILE_PIPELINED	1500
#endif
/* The target prints `seq 1 N`: 6,888,896 bytes. */
#define HOSTILE_SEQ		1000000
/* The daemon's token. */
#define HOSTILE_TOKEN		"a-token-of-the-hostile-soak-0123456789"
/* Pings kept for the percentiles. */
#define HOSTILE_PINGS		1000000

/*
 * The longest an owner's ping may take during the attack (ms), as
 * dbgctld(8) LIMITS says, on a machine that runs another suite beside
 * this one; sanitizers make the daemon's every turn slower.
 */
#ifdef __SANITIZE_ADDRESS__
#define HOSTILE_PING_BOUND	5000
#else
#define HOSTILE_PING_BOUND	2000
#endif

TestSuite(soak, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 180);

/* Launch a session on c; its id (asserted). */
static long
hostile_launch(struct h_conn *c, const char *params)
{
	json_t *r = h_conn_call(c, "launch", params, H_WAIT_BOUND);
	long id = (long)h_jint(r, "result.id", -1);

	cr_assert_gt(id, 0, "launch %s: %s", params, r ? json_dumps(r,
	    JSON_COMPACT) : "no reply");
	json_decref(r);
	return id;
}

/* The bytes `seq 1 n` prints, written into one buffer of their size. */
static char *
hostile_seq(long n, size_t *len)
{
	size_t cap = (size_t)n * 8 + 1, off = 0;
	char *p = malloc(cap);
	long i;

	cr_assert_not_null(p, "malloc");
	for (i = 1; i <= n; i++)
		off += (size_t)snprintf(p + off, cap - off, "%ld\n", i);
	*len = off;
	return p;
}

/* What the stalled subscriber got: the bytes, and what it was told. */
struct hostile_got {
	struct h_bytes	 data;
	long		 dropped;	/* bytes session.output.dropped named */
	bool		 eof;
	bool		 subscribed;	/* the subscribe's reply came */
	char		 why[512];	/* the first thing out of order */
};

/* Take one notification of the target stream into g; false at the end. */
static bool
hostile_take(struct hostile_got *g, json_t *n)
{
	const char *method = h_jstr(n, "method"), *data;
	long long off = h_jint(n, "params.offset", -1);
	unsigned char *bytes;
	size_t len;

	if (json_object_get(n, "id") != NULL) {
		cr_assert(json_is_true(h_jpath(n, "result.subscribed")),
		    "subscribe: %s", json_dumps(n, JSON_COMPACT));
		g->subscribed = true;
		return true;
	}
	if (method != NULL && strcmp(method, "session.output.dropped") == 0) {
		g->dropped += (long)h_jint(n, "params.bytes", 0);
		return true;
	}
	if (method == NULL || strcmp(method, "session.output") != 0 ||
	    strcmp(h_jstr(n, "params.stream"), "target") != 0)
		return true;
	if (off != (long long)(g->data.len + (size_t)g->dropped) &&
	    g->why[0] == '\0')
		snprintf(g->why, sizeof(g->why), "a piece at offset %lld after "
		    "%zu bytes and %ld dropped", off, g->data.len, g->dropped);
	data = h_jstr(n, "params.data");
	bytes = b64_decode(data ? data : "", data ? strlen(data) : 0, &len);
	cr_assert_not_null(bytes, "target output that is not base64");
	h_bytes_add(&g->data, bytes, len);
	free(bytes);
	g->eof = json_is_true(h_jpath(n, "params.eof"));
	return !g->eof;
}

/* Read the subscriber's notifications until the target's end. */
static void
hostile_drain(struct h_conn *sub, struct hostile_got *g)
{
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	char *line;
	json_t *n;

	while (h_now() < end && (line = h_conn_line(sub, H_WAIT_BOUND))) {
		cr_assert_leq(strlen(line), 1 << 20, "a line of %zu bytes, "
		    "over the 1 MiB limit", strlen(line));
		n = json_loads(line, 0, NULL);
		cr_assert_not_null(n, "a line that is not JSON: %s",
		    h_shown(line, strlen(line), 300));
		cr_assert_null(json_object_get(n, "error"), "the subscriber "
		    "got an error: %s", h_shown(line, strlen(line), 300));
		free(line);
		if (!hostile_take(g, n)) {
			json_decref(n);
			return;
		}
		json_decref(n);
	}
}

/* Predicate: no process of the test's but its daemon is alive. */
static bool
hostile_none_left(void *arg)
{
	pid_t p[H_MAXPIDS];
	int i, n = h_marker_pids(H->marker, p, H_MAXPIDS);

	(void)arg;
	for (i = 0; i < n; i++)
		if (p[i] != H->fg_daemon)
			return false;
	return true;
}

/* Ordered pings, for the percentiles. */
static int
hostile_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Under every attack at once, the owner's pings are answered within the
 * bound, the owner's slowly read batches and pipelines are answered whole,
 * and the stalled target subscriber loses no byte.
 */
Test(soak, hostile_peers_leave_the_owner_served)
{
	static double ping[HOSTILE_PINGS];
	struct hostile att = { 0 };
	struct hostile_got got = { { NULL, 0 }, 0, false, false, "" };
	struct h_conn own, sub;
	char params[256], params2[512], token[PATH_MAX], *want, *line;
	size_t want_len, n = 0;
	double t0, dt, end, start, worst = 0, worst_at = 0;
	json_t *r;
	long id;
	int i, port;

	h_daemon_token(token, sizeof(token), HOSTILE_TOKEN, 0600);
	port = h_daemon_fg_tcp("127.0.0.1:0", token);
	cr_assert_eq(h_conn_open(&own, H->sock), 0, "connect");
	for (i = 0; i < HOSTILE_SESSIONS; i++)
		hostile_launch(&own, "{\"kind\":\"exec\",\"argv\":[\"sleep\","
		    "\"1000\"]}");
	snprintf(params, sizeof(params), "{\"kind\":\"exec\",\"transport\":"
	    "true,\"argv\":[\"seq\",\"1\",\"%d\"]}", HOSTILE_SEQ);
	id = hostile_launch(&own, params);
	cr_assert_eq(h_conn_open(&sub, H->sock), 0, "connect");
	snprintf(params, sizeof(params), "{\"session\":%ld,\"streams\":"
	    "[\"target\"]}", id);
	/*
	 * Sent, not called: the bytes the target printed before may come
	 * ahead of the reply, which hostile_drain takes among them.
	 */
	line = params2;
	snprintf(line, sizeof(params2), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"subscribe\",\"params\":%s}\n", params);
	cr_assert_eq(h_conn_send(&sub, line, strlen(line), 10000), 0, "send");
	n = 0;

	att.unix_path = H->sock;
	att.tcp_port = port;
	att.flood = HOSTILE_FLOOD;
	att.slowloris = HOSTILE_SLOWLORIS;
	att.guessers = HOSTILE_GUESSERS;
	att.batch = HOSTILE_BATCH;
	att.pipelined = HOSTILE_PIPELINED;
	att.seconds = HOSTILE_SECONDS;
	cr_assert_eq(hostile_start(&att), 0, "start the hostile peers");
	start = h_now();
	end = start + HOSTILE_SECONDS;
	while (h_now() < end && n < HOSTILE_PINGS) {
		t0 = h_now();
		r = h_conn_call(&own, "ping", "{}", H_WAIT_BOUND);
		dt = (h_now() - t0) * 1000;
		if (!json_is_true(h_jpath(r, "result.pong")))
			hostile_kill(&att);
		cr_assert(json_is_true(h_jpath(r, "result.pong")), "a ping "
		    "during the attack: %s after %.0f ms", r ? json_dumps(r,
		    JSON_COMPACT) : "no reply", dt);
		json_decref(r);
		if (dt > worst) {
			worst = dt;
			worst_at = t0 - start;
		}
		ping[n++] = dt;
	}
	cr_assert_eq(hostile_wait(&att, HOSTILE_SECONDS + 20), 0, "the "
	    "hostile peers did not report: %s", att.report);
	qsort(ping, n, sizeof(*ping), hostile_cmp);
	h_note("soak hostile: %zu pings in %d s under attack: p50 %.2f ms, "
	    "p99 %.2f ms, max %.2f ms at %.1f s (bound %d); %s", n,
	    HOSTILE_SECONDS, ping[n / 2], ping[n * 99 / 100], worst, worst_at,
	    HOSTILE_PING_BOUND, att.report);
	cr_assert_leq(worst, HOSTILE_PING_BOUND, "the slowest of %zu pings "
	    "took %.0f ms, sent %.1f s into the attack: %s", n, worst,
	    worst_at, att.report);
	cr_assert_eq(att.owner_dropped, 0, "the daemon closed owner "
	    "connections: %s", att.report);
	/*
	 * The pipeline's replies (about 40 KB each) take longer to sip than
	 * the attack lasts: what counts is that they keep coming, in order
	 * of reading, and the connection is never closed.
	 */
	cr_assert(att.batch_replies >= 1 && att.pipelined_replies >= 1,
	    "the owner's slow batch or pipeline went unanswered: %s",
	    att.report);

	hostile_drain(&sub, &got);
	want = hostile_seq(HOSTILE_SEQ, &want_len);
	cr_assert(got.why[0] == '\0', "the target stream: %s", got.why);
	cr_assert(got.eof && got.subscribed, "no end of the target stream "
	    "after %zu bytes, or no reply to subscribe", got.data.len);
	cr_assert_eq(got.dropped, 0, "%ld bytes of target output dropped",
	    got.dropped);
	cr_assert(got.data.len == want_len && memcmp(got.data.p, want,
	    want_len) == 0, "the target printed %zu bytes, the subscriber "
	    "got %zu, different", want_len, got.data.len);
	free(want);
	free(got.data.p);
	h_conn_close(&sub);

	r = h_conn_call(&own, "stop", "{\"all\":true}", H_WAIT_BOUND);
	/* The target may have ended by itself already, once it printed. */
	cr_assert_geq(h_jint(r, "result.stopped", -1), HOSTILE_SESSIONS,
	    "stop all stopped %lld sessions, not %d", h_jint(r,
	    "result.stopped", -1), HOSTILE_SESSIONS);
	json_decref(r);
	h_conn_close(&own);
	cr_assert(h_wait_for(hostile_none_left, NULL, H_WAIT_BOUND), "processes "
	    "of the sessions are still alive after stop all");
}
