/*
 * Requests that ask for much: a batch of many list calls is answered in
 * one line with limit errors for what did not fit, lines pipelined by a
 * client that reads slowly are all answered in order, neither keeps
 * another connection's pings waiting, and a launch whose reply would be
 * too long is answered with an error carrying its id and its session.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(hostile_req, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* Sessions the list calls walk: enough that each reply is about 50 KB. */
#define SESSIONS	150
/* How long a ping may take while another connection asks for much (s). */
#define PING_BOUND	2.0

/* The start of a message as JSON, for failure messages. */
static const char *
shown(json_t *j)
{
	static char	 buf[4][320];
	static int	 n;
	char		*text = j != NULL ? json_dumps(j, 0) : NULL;

	n = (n + 1) % 4;
	snprintf(buf[n], sizeof buf[n], "%.300s", text != NULL ? text :
	    "(none)");
	free(text);
	return buf[n];
}

/* Launch n exec sessions of sh sleeping, with an argument of pad bytes. */
static void
launch_sleepers(struct h_conn *c, int n, size_t pad)
{
	char	*arg = malloc(pad + 1), *req;
	json_t	*r;
	int	 i, len;

	memset(arg, 'p', pad);
	arg[pad] = '\0';
	len = asprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"exec\",\"cwd\":\"/\",\"argv\":"
	    "[\"sh\",\"-c\",\"sleep 300\",\"%s\"]}}\n", arg);
	cr_assert_gt(len, 0, "asprintf");
	for (i = 0; i < n; i++)
		cr_assert_eq(h_conn_send(c, req, (size_t)len, 5000), 0,
		    "send launch %d", i);
	for (i = 0; i < n; i++) {
		r = h_conn_recv(c, H_WAIT_BOUND);
		cr_assert_not_null(h_jpath(r, "result.id"), "launch %d: %s", i,
		    shown(r));
		json_decref(r);
	}
	free(req);
	free(arg);
}

/* One ping on c: the seconds its answer took (asserted to come). */
static double
ping_time(struct h_conn *c)
{
	double	 t0 = h_now();
	json_t	*r = h_conn_call(c, "ping", NULL, 30000);

	cr_assert_not_null(r, "no answer to a ping within 30 s");
	json_decref(r);
	return h_now() - t0;
}

/*
 * A batch of 1000 list calls over 150 sessions (each list about 45 KB)
 * is answered within the 1 MiB line limit: an array with a reply for
 * every member, those past the budget limit errors saying why; a ping on
 * another connection meanwhile is answered within 2 s, and the daemon
 * does not grow by the replies it did not send.
 */
Test(hostile_req, a_batch_of_lists_gets_a_bounded_reply_and_pings_go_on)
{
	enum { N = 1000 };
	struct h_conn	 c, p;
	char		*batch, *b, *line = NULL;
	double		 worst = 0, lat, t0;
	long		 rss0, rss1, seen[N] = { 0 };
	json_t		*r, *e;
	size_t		 i, limited = 0;
	pid_t		 pid = h_daemon_fg();

	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_open(&p, H->sock), 0, "connect the pinger");
	launch_sleepers(&c, SESSIONS, 1);
	rss0 = h_pid_rss_kib(pid);
	b = batch = malloc(N * 64 + 8);
	*b++ = '[';
	for (i = 0; i < N; i++)
		b += sprintf(b, "%s{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":"
		    "\"list\"}", i > 0 ? "," : "", i);
	b += sprintf(b, "]\n");
	t0 = h_now();
	cr_assert_eq(h_conn_send(&c, batch, (size_t)(b - batch), 5000), 0,
	    "send the batch");
	/* Pings until the batch's reply is in: none waits long. */
	while ((line = h_conn_line(&c, 1)) == NULL && !c.eof &&
	    h_now() - t0 < 60) {
		if ((lat = ping_time(&p)) > worst)
			worst = lat;
		h_nap(10);
	}
	if (line == NULL)
		line = h_conn_line(&c, 30000);
	rss1 = h_pid_rss_kib(pid);
	h_note("batch of %d lists over %d sessions: answered in %.2f s, "
	    "worst ping %.3f s, daemon RSS %ld -> %ld KiB", N, SESSIONS,
	    h_now() - t0, worst, rss0, rss1);
	cr_assert_not_null(line, "no reply to the batch");
	cr_assert_leq(strlen(line), 1024 * 1024, "the batch's reply is %zu "
	    "bytes", strlen(line));
	cr_assert_lt(worst, PING_BOUND, "a ping took %.2f s during the batch",
	    worst);
	r = json_loads(line, 0, NULL);
	cr_assert(json_is_array(r), "the batch's reply is no array: %.300s",
	    line);
	cr_assert_eq(json_array_size(r), N, "%zu replies for %d requests",
	    json_array_size(r), N);
	json_array_foreach(r, i, e) {
		long id = h_jint(e, "id", -1);

		cr_assert(id >= 0 && id < N && seen[id]++ == 0, "reply %zu: "
		    "id %ld", i, id);
		if (json_object_get(e, "result") != NULL)
			continue;
		cr_assert_str_eq(h_jkind(e), "limit", "member %ld: %s", id,
		    shown(e));
		cr_assert_not_null(strstr(h_jstr(e, "error.message"),
		    "batch"), "member %ld: %s", id, h_jstr(e, "error.message"));
		limited++;
	}
	cr_assert_gt(limited, 0, "no member was refused");
	cr_assert_lt(rss1 - rss0, 128 * 1024, "the daemon grew from %ld to "
	    "%ld KiB", rss0, rss1);
	json_decref(r);
	free(line);
	free(batch);
	h_conn_close(&p);
	h_conn_close(&c);
}

/*
 * 1500 list lines written at once by a client that reads nothing until
 * another connection has had ten pings answered, each within 2 s: then
 * all 1500 replies arrive, in order, about 90 MB in all (more than the
 * 64 MiB of unread replies a client is dropped at).
 */
Test(hostile_req, pipelined_lists_all_reach_a_slow_reader)
{
	enum { N = 1500 };
	static const char fmt[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,"
	    "\"method\":\"list\"}\n";
	struct h_conn	 c, p;
	char		*lines, *l, *line;
	double		 worst = 0, lat;
	size_t		 bytes = 0;
	json_t		*r;
	int		 i;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_open(&p, H->sock), 0, "connect the pinger");
	launch_sleepers(&c, SESSIONS, 100);
	l = lines = malloc(N * (sizeof fmt + 8));
	for (i = 1; i <= N; i++)
		l += sprintf(l, fmt, i);
	cr_assert_eq(h_conn_send(&c, lines, (size_t)(l - lines), 5000), 0,
	    "send the lines");
	for (i = 0; i < 10; i++) {
		if ((lat = ping_time(&p)) > worst)
			worst = lat;
		h_nap(20);
	}
	cr_assert_lt(worst, PING_BOUND, "a ping took %.2f s while the lines "
	    "ran", worst);
	for (i = 1; i <= N; i++) {
		line = h_conn_line(&c, H_WAIT_BOUND);
		cr_assert_not_null(line, "reply %d of %d did not come%s", i, N,
		    c.eof ? ": the daemon closed the connection" : "");
		bytes += strlen(line) + 1;
		r = json_loads(line, 0, NULL);
		cr_assert_eq(h_jint(r, "id", -1), i, "reply %d: %.200s", i,
		    line);
		cr_assert_not_null(h_jpath(r, "result.sessions"), "reply %d: "
		    "%.200s", i, line);
		json_decref(r);
		free(line);
	}
	h_note("%d pipelined lists to a slow reader: %zu bytes of replies, "
	    "worst ping %.3f s", N, bytes, worst);
	cr_assert_gt(bytes, (size_t)64 * 1024 * 1024, "only %zu bytes of "
	    "replies: the test proves nothing", bytes);
	free(lines);
	h_conn_close(&p);
	h_conn_close(&c);
}

/* A launch line of about 1 MiB whose session's argv the reply repeats. */
static char *
launch_line(int id, bool wait, size_t *len)
{
	enum { ARGS = 9, ARG = 116000 };	/* one argument: 128 KiB at most */
	size_t	 cap = 1024 * 1024;
	char	*line = malloc(cap + 1), *p;
	int	 i;

	p = line + sprintf(line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"exec\",\"cwd\":\"/\",\"wait\":"
	    "%s,\"argv\":[\"sh\",\"-c\",\"sleep 300\"", id, wait ? "true" :
	    "false");
	for (i = 0; i < ARGS; i++) {
		p += sprintf(p, ",\"");
		memset(p, 'a' + i, ARG);
		p += ARG;
		*p++ = '"';
	}
	/* Fill the line up to 16 bytes short of its limit. */
	p += sprintf(p, ",\"");
	memset(p, 'z', cap - 16 - (size_t)(p - line));
	p = line + cap - 16;
	p += sprintf(p, "\"]}}\n");
	*len = (size_t)(p - line);
	return line;
}

/* The state of a session as list shows it (its row keeps argv short). */
static const char *
list_state(struct h_conn *c, long id)
{
	static char	 state[32];
	char		 params[96];
	json_t		*r;

	snprintf(params, sizeof params, "{\"offset\":%ld,\"limit\":1,"
	    "\"fields\":[\"state\"]}", id - 1);
	r = h_conn_call(c, "list", params, 10000);
	snprintf(state, sizeof state, "%s", h_jstr(json_array_get(h_jpath(r,
	    "result.sessions"), 0), "state") ?: "?");
	cr_assert_eq(h_jint(json_array_get(h_jpath(r, "result.sessions"), 0),
	    "id", -1), id, "list's row: %s", shown(r));
	json_decref(r);
	return state;
}

/* dbgctl stop --all, asserted to stop n sessions. */
static void
stop_all(long n)
{
	struct h_res	 res;
	json_t		*j;

	h_cli(&res, H_ARGS("--json", "stop", "--all"));
	cr_assert_eq(res.code, 0, "stop --all: exit %d (%s)", res.code,
	    res.err);
	j = json_loads(res.out, 0, NULL);
	cr_assert_eq(h_jint(j, "stopped", -1), n, "stop --all: %s", res.out);
	json_decref(j);
	h_run_free(&res);
}

/*
 * A launch whose reply would be longer than a line (its argv alone fills
 * one) is answered with a limit error that carries its id and the
 * session; the session runs and stop --all ends it. With wait, session.launched names
 * the session by id alone, and the answer once it ended is such an error.
 */
Test(hostile_req, a_launch_too_long_to_answer_gets_its_id_and_session)
{
	struct h_conn	 c;
	char		*line;
	size_t		 len;
	json_t		*r;
	long		 id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	line = launch_line(5, false, &len);
	cr_assert_eq(h_conn_send(&c, line, len, 10000), 0, "send the launch");
	free(line);
	r = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert_not_null(r, "no reply to the launch");
	cr_assert_eq(h_jint(r, "id", -1), 5, "the reply's id: %s",
	    shown(r));
	cr_assert_str_eq(h_jkind(r), "limit", "the reply: %s", shown(r));
	id = h_jint(r, "error.data.session", -1);
	cr_assert_gt(id, 0, "no session in %s", shown(r));
	json_decref(r);
	cr_assert_str_eq(list_state(&c, id), "running", "session %ld after "
	    "the launch's error", id);
	stop_all(1);
	cr_assert_str_eq(list_state(&c, id), "exited", "session %ld after "
	    "stop --all", id);

	line = launch_line(6, true, &len);
	cr_assert_eq(h_conn_send(&c, line, len, 10000), 0, "send the launch");
	free(line);
	r = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert_str_eq(h_jstr(r, "method"), "session.launched", "%s",
	    r != NULL ? shown(r) : "no notification");
	cr_assert_eq(h_jint(r, "params.request", -1), 6, "%s", shown(r));
	id = h_jint(r, "params.session.id", -1);
	cr_assert_gt(id, 0, "no session in %s", shown(r));
	json_decref(r);
	stop_all(1);
	r = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert_eq(h_jint(r, "id", -1), 6, "the answer once it ended: %s",
	    r != NULL ? shown(r) : "none");
	cr_assert_str_eq(h_jkind(r), "limit", "%s", shown(r));
	cr_assert_eq(h_jint(r, "error.data.session", -1), id, "%s",
	    shown(r));
	json_decref(r);
	h_conn_close(&c);
}

/*
 * A batch whose members could not each get an error in one line (8000
 * pings) is refused whole with one limit error, and none of it runs: a
 * batch of 8000 launches starts no session. The connection serves on.
 */
Test(hostile_req, a_batch_too_big_to_answer_is_refused_whole)
{
	enum { N = 8000 };
	static const char launch[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"exec\",\"argv\":[\"true\"]}}";
	struct h_conn	 c;
	char		*batch, *b;
	json_t		*r;
	int		 i;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	b = batch = malloc(N * (sizeof launch + 8) + 8);
	*b++ = '[';
	for (i = 0; i < N; i++) {
		if (i > 0)
			*b++ = ',';
		b += sprintf(b, launch, i);
	}
	b += sprintf(b, "]\n");
	cr_assert_eq(h_conn_send(&c, batch, (size_t)(b - batch), 10000), 0,
	    "send the batch");
	free(batch);
	r = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert(json_is_object(r), "the batch's reply: %s", shown(r));
	cr_assert(json_is_null(json_object_get(r, "id")), "%s", shown(r));
	cr_assert_str_eq(h_jkind(r), "limit", "%s", shown(r));
	json_decref(r);
	r = h_conn_call(&c, "list", "{}", 10000);
	cr_assert_eq(h_jint(r, "result.total", -1), 0, "sessions after the "
	    "refused batch: %s", shown(r));
	json_decref(r);
	h_conn_close(&c);
}

/*
 * Members that wait still work in a batch under the budget: a launch (it
 * waits until the session runs), a stop of a session that ends when
 * stopped, and a ping come back in one array.
 */
Test(hostile_req, waiting_members_of_a_batch_are_answered)
{
	struct h_conn	 c;
	char		 batch[512];
	json_t		*r, *e;
	long		 id;
	size_t		 i;
	int		 got = 0;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	launch_sleepers(&c, 1, 1);
	id = 1;
	snprintf(batch, sizeof batch, "[{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"launch\",\"params\":{\"kind\":\"exec\",\"argv\":"
	    "[\"sleep\",\"300\"]}},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"stop\",\"params\":{\"session\":%ld}},{\"jsonrpc\":\"2.0\","
	    "\"id\":3,\"method\":\"ping\"}]\n", id);
	cr_assert_eq(h_conn_send(&c, batch, strlen(batch), 10000), 0, "send");
	r = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert(json_is_array(r) && json_array_size(r) == 3, "the batch's "
	    "reply: %s", shown(r));
	json_array_foreach(r, i, e) {
		cr_assert_not_null(json_object_get(e, "result"), "member %zu: "
		    "%s", i, shown(e));
		got |= 1 << h_jint(e, "id", 0);
	}
	cr_assert_eq(got, 0xe, "ids of the replies: %s", shown(r));
	json_decref(r);
	h_conn_close(&c);
	stop_all(1);
}

/* Launches in one batch: more than its time lets run. */
#define BATCH_LAUNCHES 400

/*
 * A batch of 400 launches runs its first 16 whatever the time and then
 * members for 50 ms only: the rest are answered "not run" (each launch
 * costs the daemon a millisecond or more), every one answered once, and
 * exactly the sessions whose launch says so run.
 */
Test(hostile_req, a_batch_of_launches_runs_for_its_time_only)
{
	struct h_bytes	 b = { NULL, 0 };
	struct h_conn	 c;
	const char	*msg;
	json_t		*r, *e;
	size_t		 i;
	long		 ran = 0, not_run = 0;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	h_bytes_add(&b, "[", 1);
	for (i = 0; i < BATCH_LAUNCHES; i++) {
		char m[160];

		h_bytes_add(&b, m, (size_t)snprintf(m, sizeof m, "%s{\"jsonrpc\":"
		    "\"2.0\",\"id\":%zu,\"method\":\"launch\",\"params\":{\"kind\":"
		    "\"exec\",\"argv\":[\"sleep\",\"300\"]}}", i ? "," : "",
		    i + 1));
	}
	h_bytes_add(&b, "]\n", 2);
	cr_assert_eq(h_conn_send(&c, b.p, b.len, 10000), 0, "send");
	free(b.p);
	r = h_conn_recv(&c, H_WAIT_BOUND);
	cr_assert(json_is_array(r) && json_array_size(r) == BATCH_LAUNCHES,
	    "the batch's reply: %s", shown(r));
	json_array_foreach(r, i, e) {
		msg = h_jstr(e, "error.message");
		if (json_object_get(e, "result") != NULL)
			ran++;
		else if (msg != NULL && strstr(msg, "50 ms") != NULL)
			not_run++;
		else
			cr_assert_fail("member %zu: %s", i, shown(e));
	}
	json_decref(r);
	h_note("batch of %d launches: %ld ran, %ld not run", BATCH_LAUNCHES,
	    ran, not_run);
	cr_assert(ran >= 16 && not_run > 0 && ran + not_run == BATCH_LAUNCHES,
	    "%ld launches ran and %ld were not run", ran, not_run);
	h_conn_close(&c);
	stop_all(ran);
}
