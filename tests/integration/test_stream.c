/*
 * Target output pushed to a subscriber (subscribe "streams": ["target"]):
 * every byte of a large output arrives in order, named by its offset, in
 * lines within the 1 MiB limit, whether the subscriber reads at once or
 * stalls; bytes it does not get are named by a drop notice, never lost.
 */
#include "b64.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

TestSuite(stream, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* The target's output: 500,000 records of ten bytes, "%09d\n". */
#define STREAM_RECORDS	500000
#define STREAM_BYTES	(STREAM_RECORDS * 10)
/* The protocol's line limit, LF excluded. */
#define STREAM_LINE_MAX	(1024 * 1024)

/* A target that prints the records at once, or once it reads a line. */
#define STREAM_NOW	"exec seq -f %09g 0 499999"
#define STREAM_GATED	"read go; exec seq -f %09g 0 499999"

/* What a target subscriber received, checked as it came. */
struct stream_got {
	char		*want;		/* the records, STREAM_BYTES */
	uint64_t	 next;		/* the offset the next piece must name */
	uint64_t	 received;	/* bytes that came as session.output */
	uint64_t	 dropped;	/* bytes named by session.output.dropped */
	size_t		 pieces;
	size_t		 drops;
	size_t		 longest;	/* the longest line, LF excluded */
	long		 reply;		/* the id of the last reply */
	bool		 eof;
};

/* The bytes the target prints, as the test expects them. */
static char *
stream_records(void)
{
	char	*want = malloc(STREAM_BYTES + 1);
	size_t	 i;

	for (i = 0; i < STREAM_RECORDS; i++)
		snprintf(want + i * 10, 11, "%09zu\n", i);
	return want;
}

/*
 * Launch the target with a transport and ask to subscribe c to its output;
 * the reply is read with the pieces, since held output comes before it.
 */
static long
stream_subscribe(struct h_conn *c, const char *script)
{
	char	 line[256];
	long	 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", script));
	cr_assert_eq(h_conn_open(c, H->sock), 0, "connect");
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":9000,"
	    "\"method\":\"subscribe\",\"params\":{\"session\":%ld,"
	    "\"streams\":[\"target\"]}}\n", id);
	cr_assert_eq(h_conn_send(c, line, strlen(line), 10000), 0, "subscribe");
	return id;
}

/* Open the gate: the target reads its line and starts printing. */
static void
stream_go(struct h_conn *c, long id)
{
	char line[256];

	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":9001,"
	    "\"method\":\"write\",\"params\":{\"session\":%ld,\"data\":"
	    "\"Z28K\"}}\n", id);
	cr_assert_eq(h_conn_send(c, line, strlen(line), 10000), 0, "go");
}

/*
 * Check base64 text that what (a piece, a read) says starts at off: it
 * must start where the last ended, and be what the target printed there.
 */
static void
stream_bytes(struct stream_got *g, const char *what, long long off,
    const char *text)
{
	unsigned char	*bytes;
	size_t		 len;

	cr_assert_not_null(text, "a %s without data", what);
	cr_assert_eq(off, (long long)g->next, "a %s at offset %lld where "
	    "%llu was next: %lld bytes gone without a notice", what, off,
	    (unsigned long long)g->next, off - (long long)g->next);
	bytes = b64_decode(text, strlen(text), &len);
	cr_assert_not_null(bytes, "a %s whose data is not base64", what);
	cr_assert_leq(g->next + len, STREAM_BYTES, "more bytes than the "
	    "target printed, at offset %llu", (unsigned long long)g->next);
	cr_assert(memcmp(bytes, g->want + g->next, len) == 0, "the %zu bytes "
	    "of a %s at offset %llu differ from what the target printed", len,
	    what, (unsigned long long)g->next);
	free(bytes);
	g->next += len;
	g->received += len;
}

/* Check one session.output piece against the records, at its offset. */
static void
stream_piece(struct stream_got *g, json_t *m)
{
	stream_bytes(g, "piece", h_jint(m, "params.offset", -1),
	    h_jstr(m, "params.data"));
	g->pieces++;
	g->eof = json_is_true(h_jpath(m, "params.eof"));
}

/* Check one session.output.dropped notice: it names the next range. */
static void
stream_drop(struct stream_got *g, json_t *m)
{
	long long off = h_jint(m, "params.offset", -1);
	long long bytes = h_jint(m, "params.bytes", -1);

	cr_assert_eq(off, (long long)g->next, "a drop at offset %lld where "
	    "%llu was next", off, (unsigned long long)g->next);
	cr_assert_gt(bytes, 0, "a drop of %lld bytes", bytes);
	g->next += bytes;
	g->dropped += bytes;
	g->drops++;
}

/* Whether m is the notification method, of the target stream. */
static bool
stream_note(json_t *m, const char *method)
{
	const char *mm = h_jstr(m, "method");
	const char *stream = h_jstr(m, "params.stream");

	return mm != NULL && strcmp(mm, method) == 0 && stream != NULL &&
	    strcmp(stream, "target") == 0;
}

/*
 * One line from the daemon: a target piece, a drop, a reply, or another
 * notification (session.state: not the stream's).
 */
static void
stream_line(struct stream_got *g, const char *line)
{
	json_t *m;

	cr_assert_leq(strlen(line), STREAM_LINE_MAX, "a line of %zu bytes, "
	    "over the 1 MiB limit", strlen(line));
	if (strlen(line) > g->longest)
		g->longest = strlen(line);
	m = json_loads(line, 0, NULL);
	cr_assert_not_null(m, "a line that is not JSON: %s",
	    h_shown(line, strlen(line), 200));
	cr_assert_null(json_object_get(m, "error"), "an error line: %s",
	    h_shown(line, strlen(line), 300));
	if (stream_note(m, "session.output"))
		stream_piece(g, m);
	else if (stream_note(m, "session.output.dropped"))
		stream_drop(g, m);
	else if (h_jstr(m, "method") == NULL && h_jint(m, "id", -1) == 9000)
		cr_assert(json_is_true(h_jpath(m, "result.subscribed")),
		    "subscribe: %s", h_shown(line, strlen(line), 300));
	else if (h_jstr(m, "method") == NULL)
		cr_assert_not_null(h_jpath(m, "result"), "an unexpected line: "
		    "%s", h_shown(line, strlen(line), 300));
	if (h_jpath(m, "id") != NULL)
		g->reply = h_jint(m, "id", -1);
	json_decref(m);
}

/* Assert the offsets cover the whole stream, and the bytes are all named. */
static void
stream_check(const struct stream_got *g)
{
	cr_assert_eq(g->next, STREAM_BYTES, "the offsets cover %llu bytes of "
	    "%d", (unsigned long long)g->next, STREAM_BYTES);
	cr_assert_eq(g->received + g->dropped, STREAM_BYTES, "%llu received "
	    "and %llu dropped of %d", (unsigned long long)g->received,
	    (unsigned long long)g->dropped, STREAM_BYTES);
}

/* Read c until the target stream's end, or the bound. */
static void
stream_read(struct h_conn *c, struct stream_got *g)
{
	double	 end = h_now() + H_WAIT_BOUND / 1000.0;
	char	*line;

	while (!g->eof && h_now() < end &&
	    (line = h_conn_line(c, 5000)) != NULL) {
		stream_line(g, line);
		free(line);
	}
	cr_assert(g->eof, "no end of the target stream after %llu bytes "
	    "(%llu received, %llu dropped)", (unsigned long long)g->next,
	    (unsigned long long)g->received, (unsigned long long)g->dropped);
	stream_check(g);
}

/* Say what arrived, for the TAP output. */
static void
stream_report(const char *what, const struct stream_got *g)
{
	h_note("%s: %llu bytes in %zu pieces, %llu dropped in %zu notices, "
	    "longest line %zu bytes", what, (unsigned long long)g->received,
	    g->pieces, (unsigned long long)g->dropped, g->drops, g->longest);
}

/* Take no line from the daemon for a second: the slow subscriber. */
static void
stream_stall(void)
{
	struct timespec ts = { 1, 0 };

	/* The stall is the scenario, not a wait for an event. */
	while (nanosleep(&ts, &ts) != 0)
		continue;
}

/*
 * Subscribe to the target's whole output, open the gate if there is one,
 * stall for a second if asked, and read it to the end, checked; a subscriber
 * that does not stall must not be dropped a byte. The target exits 0.
 */
static void
stream_whole(const char *what, const char *script, bool stall)
{
	struct stream_got	g = { .want = stream_records() };
	struct h_conn		c;
	long			id;

	id = stream_subscribe(&c, script);
	if (strcmp(script, STREAM_GATED) == 0)
		stream_go(&c, id);
	if (stall)
		stream_stall();
	stream_read(&c, &g);
	stream_report(what, &g);
	if (!stall)
		cr_assert_eq(g.dropped, 0, "a prompt subscriber was dropped "
		    "%llu bytes", (unsigned long long)g.dropped);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "after the stream");
	h_conn_close(&c);
	free(g.want);
}

/*
 * Read c until a reply with id comes (id 0: until the pieces reach offset
 * upto), the pieces before it checked.
 */
static void
stream_read_until(struct h_conn *c, struct stream_got *g, long id,
    uint64_t upto)
{
	double	 end = h_now() + H_WAIT_BOUND / 1000.0;
	char	*line;

	g->reply = 0;
	while ((id != 0 ? g->reply != id : g->next < upto) && !g->eof &&
	    h_now() < end && (line = h_conn_line(c, 5000)) != NULL) {
		stream_line(g, line);
		free(line);
	}
	if (id != 0)
		cr_assert_eq(g->reply, id, "no reply %ld after %llu bytes", id,
		    (unsigned long long)g->next);
	else
		cr_assert_geq(g->next, upto, "%llu bytes, not %llu",
		    (unsigned long long)g->next, (unsigned long long)upto);
}

/* Take the rest of the stream with read: each reply at the offset next. */
static void
stream_read_rest(struct h_conn *c, struct stream_got *g, long id)
{
	double	 end = h_now() + H_WAIT_BOUND / 1000.0;
	char	 params[128];
	json_t	*r;

	snprintf(params, sizeof params, "{\"session\":%ld,\"timeout\":5000}",
	    id);
	while (!g->eof && h_now() < end) {
		r = h_conn_call(c, "read", params, 10000);
		cr_assert_not_null(h_jpath(r, "result"), "read: %s", r != NULL ?
		    json_dumps(r, JSON_COMPACT) : "no reply");
		stream_bytes(g, "read", h_jint(r, "result.offset", -1),
		    h_jstr(r, "result.data"));
		g->eof = json_is_true(h_jpath(r, "result.eof"));
		json_decref(r);
	}
	cr_assert(g->eof, "no end of the target stream read after %llu "
	    "bytes", (unsigned long long)g->next);
}

/*
 * A subscriber that reads at once gets all 5,000,000 bytes a target prints,
 * in order, each piece at the offset it names, in lines within 1 MiB, and
 * no error line; the target exits 0.
 */
Test(stream, a_prompt_target_subscriber_gets_every_byte)
{
	stream_whole("prompt", STREAM_GATED, false);
}

/*
 * A subscriber that stalls for a second while the target prints still gets
 * every byte, or a drop notice for each range it does not get, the two
 * adding up to all 5,000,000, in order; no error line.
 */
Test(stream, a_stalled_target_subscriber_loses_nothing_silently)
{
	stream_whole("stalled", STREAM_GATED, true);
}

/*
 * A subscriber that comes while the target is already printing (what was
 * held for read comes first, however much) gets every byte from offset 0.
 */
Test(stream, a_late_target_subscriber_gets_the_held_bytes_first)
{
	stream_whole("late", STREAM_NOW, false);
}

/*
 * A subscriber that unsubscribes halfway gives the stream back to read
 * with no byte lost between: read's offsets go on from where the last
 * piece ended, and the two together are all 5,000,000 bytes.
 */
Test(stream, read_goes_on_where_a_target_subscriber_stopped)
{
	struct stream_got	g = { .want = stream_records() };
	struct h_conn		c;
	char			line[256];
	long			id;

	id = stream_subscribe(&c, STREAM_GATED);
	stream_go(&c, id);
	stream_read_until(&c, &g, 0, 1000000);
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":9002,"
	    "\"method\":\"unsubscribe\",\"params\":{\"session\":%ld}}\n",
	    id);
	cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0,
	    "unsubscribe");
	stream_read_until(&c, &g, 9002, 0);
	cr_assert(!g.eof, "the stream ended before the unsubscribe");
	h_note("handed over to read at offset %llu",
	    (unsigned long long)g.next);
	stream_read_rest(&c, &g, id);
	stream_check(&g);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "after the stream");
	h_conn_close(&c);
	free(g.want);
}
