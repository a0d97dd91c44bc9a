/*
 * The expect method and the stream transcripts over the raw protocol, as a
 * rig sees them: a pattern split across single-byte writes matches once, a
 * fast counter never gives a truncated number, every connection has its own
 * cursor, a timeout or an end gives back every byte received, non-UTF-8
 * bytes match, and the transcript (logs, the log file) holds every byte the
 * target wrote and was written, with arrival times; many waiting expects on
 * a busy stream neither stall the loop nor the target.
 */
#include "b64.h"
#include "harness.h"
#include "../fixtures/noise.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

TestSuite(expect, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* Bound for one reply that is due (ms). */
#define EXPECT_BOUND	H_WAIT_BOUND
/* How long an expect that must time out waits (ms): short, nothing comes. */
#define EXPECT_QUIET	(300 * H_SLOW)
/* The transcript test's noise: 4 MiB from this seed. */
#define EXPECT_NOISE	(4 * 1024 * 1024)
#define EXPECT_SEED	20261202u

/* A reply shown in a failure message: its last 700 bytes. */
static const char *
expect_show(json_t *j)
{
	const char	*shown;
	char		*s;

	if (j == NULL)
		return "(no reply)";
	s = json_dumps(j, JSON_COMPACT);
	if (s == NULL)
		return "(unprintable)";
	shown = h_shown(s, strlen(s), 700);
	free(s);
	return shown;
}

/* Send method with params (taken) as request id on c; asserted. */
static void
expect_send(struct h_conn *c, long id, const char *method, json_t *params)
{
	char	*p, *req;
	int	 n;

	p = json_dumps(params, JSON_COMPACT);
	cr_assert_not_null(p, "%s: params do not print", method);
	json_decref(params);
	n = asprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\","
	    "\"params\":%s}\n", id, method, p);
	cr_assert_gt(n, 0, "asprintf");
	cr_assert_eq(h_conn_send(c, req, (size_t)n, EXPECT_BOUND), 0,
	    "sending %s", h_shown(req, (size_t)n, 300));
	free(req);
	free(p);
}

/*
 * The reply to id on c, notifications before it skipped; asserted, and
 * so that no other reply comes first (each test has one request of a
 * connection waiting, or knows none of the others can be answered yet).
 */
static json_t *
expect_reply(struct h_conn *c, long id, int bound_ms)
{
	double	 end = h_now() + bound_ms / 1000.0;
	json_t	*j;
	int	 left;

	while ((left = (int)((end - h_now()) * 1000)) > 0 &&
	    (j = h_conn_recv(c, left)) != NULL) {
		if (json_object_get(j, "method") != NULL) {
			json_decref(j);
			continue;
		}
		cr_assert_eq(json_integer_value(json_object_get(j, "id")), id,
		    "waiting for the reply to request %ld, another came: %s",
		    id, expect_show(j));
		return j;
	}
	cr_assert_fail("no reply to request %ld within %d ms%s", id, bound_ms,
	    c->eof ? " (the daemon closed the connection)" : "");
	return NULL;
}

/* Call method with params (taken) on c and return its reply. */
static json_t *
expect_call(struct h_conn *c, const char *method, json_t *params)
{
	long id = ++c->next_id;

	expect_send(c, id, method, params);
	return expect_reply(c, id, EXPECT_BOUND);
}

/* Assert r is a result; it (borrowed from r). */
static json_t *
expect_ok(json_t *r, const char *what)
{
	json_t *res = json_object_get(r, "result");

	cr_assert(json_is_object(res), "%s: expected a result, got %s", what,
	    expect_show(r));
	return res;
}

/* Assert r is an error of code and kind; its data (borrowed from r). */
static json_t *
expect_err(json_t *r, long long code, const char *kind, const char *what)
{
	cr_assert_eq(h_jint(r, "error.code", 0), code, "%s: expected error "
	    "code %lld (%s), got %s", what, code, kind, expect_show(r));
	cr_assert_str_eq(h_jkind(r), kind, "%s: expected kind %s, got %s",
	    what, kind, expect_show(r));
	return h_jpath(r, "error.data");
}

/* Start the test's daemon and open n connections to it. */
static void
expect_start(struct h_conn *c, int n)
{
	int i;

	h_daemon_fg();
	for (i = 0; i < n; i++)
		cr_assert_eq(h_conn_open(&c[i], H->sock), 0, "connect %d", i);
}

/*
 * Launch argv on c: kind "exec", or "gdb" running it at once; with a
 * transport unless kind ends in "-console". The session's id.
 */
static long
expect_launch(struct h_conn *c, const char *kind, const char *const argv[])
{
	json_t	*params, *av = json_array(), *r;
	bool	 console = strcmp(kind, "exec-console") == 0;
	long	 id;
	int	 i;

	for (i = 0; argv[i] != NULL; i++)
		json_array_append_new(av, json_string(argv[i]));
	params = json_pack("{s:s,s:o,s:b,s:s}", "kind", console ? "exec" :
	    kind, "argv", av, "transport", !console, "cwd", "/");
	if (strcmp(kind, "gdb") == 0)
		json_object_set_new(params, "commands", json_pack("[s]", "run"));
	r = expect_call(c, "launch", params);
	id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "launch %s %s: %s", kind, argv[0],
	    expect_show(r));
	json_decref(r);
	return id;
}

/* Write len bytes to the target's stdin; asserted. */
static void
expect_write(struct h_conn *c, long id, const char *data, size_t len)
{
	char	*b = b64_encode((const unsigned char *)data, len);
	json_t	*r;

	r = expect_call(c, "write", json_pack("{s:I,s:s}", "session",
	    (json_int_t)id, "data", b));
	cr_assert_eq(h_jint(r, "result.written", -1), (long long)len,
	    "write of %zu bytes: %s", len, expect_show(r));
	json_decref(r);
	free(b);
}

/* Wait (logs with wait) until stream holds n bytes; asserted. */
static void
expect_wait_size(struct h_conn *c, long id, const char *stream, long long n)
{
	json_t *r;

	r = expect_call(c, "logs", json_pack("{s:I,s:s,s:I,s:i,s:b}",
	    "session", (json_int_t)id, "stream", stream, "offset",
	    (json_int_t)(n - 1), "max", 1, "wait", 1));
	cr_assert_eq(h_jint(r, "result.next_offset", -1), n, "waiting for "
	    "byte %lld of the %s stream: %s", n - 1, stream, expect_show(r));
	json_decref(r);
}

/* Let the dribble fixture write its next piece, and wait until it is in. */
static void
expect_step(struct h_conn *c, long id, long long size)
{
	expect_write(c, id, ".", 1);
	expect_wait_size(c, id, "target", size);
}

/*
 * The bytes of a text value (a JSON string, or {"base64":...}); NULL if it
 * is neither. *b64 tells which it was.
 */
static unsigned char *
expect_bytes(json_t *v, size_t *len, bool *b64)
{
	const char	*s;
	unsigned char	*p;

	*b64 = false;
	if (json_is_string(v)) {
		*len = json_string_length(v);
		p = malloc(*len + 1);
		memcpy(p, json_string_value(v), *len + 1);
		return p;
	}
	s = json_string_value(json_object_get(v, "base64"));
	if (!json_is_object(v) || s == NULL || json_object_size(v) != 1)
		return NULL;
	*b64 = true;
	return b64_decode(s, strlen(s), len);
}

/*
 * Assert text value v (what names it) holds want[0..n): a JSON string if
 * the bytes are valid UTF-8 (utf8), else {"base64":...}.
 */
static void
expect_text(json_t *v, const char *what, const void *want, size_t n,
    bool utf8)
{
	unsigned char	*got;
	size_t		 len;
	bool		 b64;

	got = expect_bytes(v, &len, &b64);
	cr_assert_not_null(got, "%s: not a text value: %s", what,
	    expect_show(v));
	cr_assert(len == n && memcmp(got, want, n) == 0, "%s: expected the %zu "
	    "bytes \"%s\", got %zu: \"%s\"", what, n,
	    h_shown(want, n, 300), len, h_shown((char *)got, len, 300));
	cr_assert_eq(b64, !utf8, "%s: expected %s, got %s", what, utf8 ?
	    "a JSON string (the bytes are UTF-8)" : "{\"base64\":...} (the "
	    "bytes are not UTF-8)", expect_show(v));
	free(got);
}

/* The same for a NUL-terminated UTF-8 want. */
static void
expect_str(json_t *v, const char *what, const char *want)
{
	expect_text(v, what, want, strlen(want), true);
}

/*
 * Assert a match result: pattern index, from, [off, end), next == end,
 * the stream, and its text (NUL-terminated, UTF-8) when text is not NULL.
 */
static void
expect_match(json_t *res, const char *what, long long index, long long from,
    long long off, long long end, const char *text)
{
	cr_assert(h_jint(res, "index", -1) == index && h_jint(res, "from", -1)
	    == from && h_jint(res, "offset", -1) == off && h_jint(res, "end",
	    -1) == end && h_jint(res, "next", -1) == end, "%s: expected index "
	    "%lld, from %lld, [%lld, %lld), next %lld; got %s", what, index,
	    from, off, end, end, expect_show(res));
	if (text != NULL)
		expect_str(json_object_get(res, "text"), what, text);
}

/* Assert group i (0 for group 1) of a match is want at [s, e); NULL: unset. */
static void
expect_group(json_t *res, size_t i, const char *want, long long s,
    long long e)
{
	json_t	*g = json_array_get(json_object_get(res, "groups"), i);
	json_t	*sp = json_array_get(json_object_get(res, "spans"), i);
	char	 what[64];

	snprintf(what, sizeof what, "group %zu", i + 1);
	cr_assert(g != NULL && sp != NULL, "%s: missing in %s", what,
	    expect_show(res));
	if (want == NULL) {
		cr_assert(json_is_null(g) && json_is_null(sp), "%s: expected "
		    "null (it took no part), got %s", what, expect_show(res));
		return;
	}
	expect_str(g, what, want);
	cr_assert(json_integer_value(json_array_get(sp, 0)) == s &&
	    json_integer_value(json_array_get(sp, 1)) == e &&
	    json_array_size(sp) == 2, "%s: expected span [%lld, %lld], got %s",
	    what, s, e, expect_show(res));
}

/* The reply to an expect for one pattern on session id, with timeout ms. */
static json_t *
expect_for(struct h_conn *c, long id, const char *pattern, int timeout)
{
	json_t *p = json_pack("{s:I,s:s}", "session", (json_int_t)id,
	    "patterns", pattern);

	if (timeout >= 0)
		json_object_set_new(p, "timeout", json_integer(timeout));
	return expect_call(c, "expect", p);
}

/* The same from offset from. */
static json_t *
expect_from(struct h_conn *c, long id, const char *pattern, long long from)
{
	return expect_call(c, "expect", json_pack("{s:I,s:s,s:I,s:i}",
	    "session", (json_int_t)id, "patterns", pattern, "from",
	    (json_int_t)from, "timeout", EXPECT_BOUND));
}

/*
 * Read stream from offset 0 to its size with logs into b (each reply named
 * by the stream, at the offset the last ended); the size.
 */
static long long
expect_logs(struct h_conn *c, long id, const char *stream, struct h_bytes *b)
{
	unsigned char	*data;
	long long	 off = 0, size;
	size_t		 len;
	json_t		*r, *res;

	for (;;) {
		r = expect_call(c, "logs", json_pack("{s:I,s:s,s:I}", "session",
		    (json_int_t)id, "stream", stream, "offset",
		    (json_int_t)off));
		res = expect_ok(r, "logs");
		cr_assert_str_eq(h_jstr(res, "stream") ? h_jstr(res, "stream") :
		    "(none)", stream, "logs of the %s stream: %s", stream,
		    expect_show(r));
		cr_assert_null(json_object_get(res, "missing"), "logs of the %s "
		    "stream: bytes missing: %s", stream, expect_show(r));
		cr_assert_eq(h_jint(res, "offset", -1), off, "logs at %lld: %s",
		    off, expect_show(r));
		data = b64_decode(h_jstr(res, "data"), strlen(h_jstr(res,
		    "data")), &len);
		cr_assert_not_null(data, "logs: data not base64");
		h_bytes_add(b, data, len);
		free(data);
		off += (long long)len;
		cr_assert_eq(h_jint(res, "next_offset", -1), off, "logs: "
		    "next_offset after %zu bytes: %s", len, expect_show(r));
		size = h_jint(res, "size", -1);
		json_decref(r);
		if (off >= size || len == 0)
			return size;
	}
}

/* Assert that stream's transcript is want[0..n) by logs, whole. */
static void
expect_transcript_is(struct h_conn *c, long id, const char *stream,
    const void *want, size_t n)
{
	struct h_bytes	 b = { NULL, 0 };
	long long	 size;
	size_t		 i;

	size = expect_logs(c, id, stream, &b);
	cr_assert_eq(size, (long long)n, "logs: the %s stream's size is %lld, "
	    "%zu bytes were written", stream, size, n);
	cr_assert_eq(b.len, n, "logs gave %zu bytes of the %s stream, %zu "
	    "were written", b.len, stream, n);
	for (i = 0; i < n && b.p[i] == ((const char *)want)[i]; i++)
		continue;
	cr_assert_eq(i, n, "logs: byte %zu of the %s stream is 0x%02x, 0x%02x "
	    "was written", i, stream, (unsigned char)b.p[i],
	    ((const unsigned char *)want)[i]);
	free(b.p);
}

/*
 * Launch the dribble fixture on c (kind as expect_launch) with the pieces
 * given, or one piece a byte of text.
 */
static long
expect_dribble(struct h_conn *c, const char *kind, const char *text,
    const char *const pieces[])
{
	const char	**argv;
	char		 *bytes = NULL;
	size_t		  i, n = text != NULL ? strlen(text) : 0;
	long		  id;

	if (text == NULL)
		while (pieces[n] != NULL)
			n++;
	else
		bytes = calloc(n, 2);
	argv = calloc(n + 2, sizeof *argv);
	argv[0] = h_ctx_fixture("FIX_DRIBBLE");
	for (i = 0; i < n; i++) {
		if (text == NULL) {
			argv[i + 1] = pieces[i];
			continue;
		}
		bytes[2 * i] = text[i];
		argv[i + 1] = bytes + 2 * i;
	}
	id = expect_launch(c, kind, argv);
	free(argv);
	free(bytes);
	return id;
}

/* Whether a line is waiting on c (within a few ms): a reply too early. */
static char *
expect_early(struct h_conn *c)
{
	return h_conn_line(c, 1);
}

/*
 * `READY-(\d+)\n`, its bytes written one write(2) each (and each in the
 * daemon before the next is written), matches once, when its last byte
 * arrives: no answer before; offset, end, text, group, before and next
 * right; an expect again finds only the end, with the rest as got.
 */
static void
expect_split(const char *kind)
{
	static const char	 text[] = "boot\nREADY-42\nbye\n";
	struct h_conn		 c[2];
	json_t			*r, *res, *d;
	size_t			 i;
	char			*early;
	long			 id;

	expect_start(c, 2);
	id = expect_dribble(&c[0], kind, text, NULL);
	expect_send(&c[0], 1, "expect", json_pack("{s:I,s:s}", "session",
	    (json_int_t)id, "patterns", "READY-(\\d+)\\n"));
	for (i = 0; i < 14; i++) {
		early = expect_early(&c[0]);
		cr_assert_null(early, "%s: an answer after %zu bytes, before the "
		    "match's last: %s", kind, i, early);
		expect_step(&c[1], id, (long long)i + 1);
	}
	r = expect_reply(&c[0], 1, EXPECT_BOUND);
	res = expect_ok(r, "expect READY-(\\d+)\\n");
	expect_match(res, kind, 0, 0, 5, 14, "READY-42\n");
	cr_assert_str_eq(h_jstr(res, "stream") ? h_jstr(res, "stream") : "",
	    "target", "%s: the default stream with a transport: %s", kind,
	    expect_show(r));
	expect_group(res, 0, "42", 11, 13);
	cr_assert_eq(json_array_size(json_object_get(res, "groups")), 1,
	    "%s: one group: %s", kind, expect_show(r));
	expect_str(json_object_get(res, "before"), "before", "boot\n");
	cr_assert_eq(h_jint(res, "before_offset", -1), 0, "%s: before_offset: "
	    "%s", kind, expect_show(r));
	json_decref(r);
	for (i = 14; i < strlen(text); i++)
		expect_step(&c[1], id, (long long)i + 1);
	r = expect_for(&c[0], id, "READY-(\\d+)\\n", EXPECT_BOUND);
	d = expect_err(r, 13, "eof", "expect again after the program exited");
	expect_str(json_object_get(d, "got"), "got", "bye\n");
	cr_assert(h_jint(d, "from", -1) == 14 && h_jint(d, "got_offset", -1) ==
	    14 && h_jint(d, "next", -1) == 18, "%s: the end's from, got_offset "
	    "and next: expected 14, 14, 18: %s", kind, expect_show(r));
	json_decref(r);
	h_conn_close(&c[0]);
	h_conn_close(&c[1]);
}

Test(expect, a_pattern_split_across_single_byte_writes_matches_once)
{
	expect_split("exec");
}

Test(expect, a_pattern_split_across_single_byte_writes_matches_once_gdb)
{
	expect_split("gdb");
}

/* The number of a counter match, asserted to be counter=N(\r\n). */
static unsigned long long
expect_count(json_t *r, const char *pattern, bool crlf, int i)
{
	json_t			*res = expect_ok(r, pattern);
	const char		*g = json_string_value(json_array_get(
				    json_object_get(res, "groups"), 0));
	char			 want[64], *endp;
	unsigned long long	 n;

	cr_assert_not_null(g, "expect %d of %s: no group 1: %s", i, pattern,
	    expect_show(r));
	n = strtoull(g, &endp, 10);
	cr_assert(*g != '\0' && *endp == '\0', "expect %d of %s: group 1 \"%s\" "
	    "is not a number", i, pattern, g);
	snprintf(want, sizeof want, "counter=%llu%s", n, crlf ? "\r\n" : "");
	expect_str(json_object_get(res, "text"), pattern, want);
	return n;
}

/*
 * On the tally fixture (pause microseconds inside each number), n expects
 * of `counter=(\d+)\r\n` and then n of `counter=(\d+)` on the connection's
 * cursor (launched by another connection: from the stream's end) each give
 * the next number, whole: each is the last plus one, from where the last
 * ended, at its offset (after its CR LF for the second kind).
 */
static void
expect_counter(const char *pause, int n, const char *what)
{
	static const char *const pats[2] = {
		"counter=(\\d+)\\r\\n", "counter=(\\d+)"
	};
	unsigned long long	 got, last = 0;
	long long		 next = -1, off, from;
	struct h_conn		 c[2];
	json_t			*r;
	long			 id;
	int			 i;
	bool			 crlf;

	expect_start(c, 2);
	id = expect_launch(&c[1], "exec", H_ARGS(h_ctx_fixture("FIX_TALLY"),
	    pause));
	for (i = 0; i < 2 * n; i++) {
		crlf = i < n;
		r = expect_for(&c[0], id, pats[!crlf], EXPECT_BOUND);
		got = expect_count(r, pats[!crlf], crlf, i);
		off = h_jint(r, "result.offset", -1);
		from = h_jint(r, "result.from", -1);
		if (i > 0) {
			cr_assert_eq(got, last + 1, "%s: expect %d of %s: "
			    "counter=%llu after counter=%llu: a number lost or "
			    "cut short", what, i, pats[!crlf], got, last);
			cr_assert_eq(from, next, "%s: expect %d: from %lld, the "
			    "last match ended at %lld", what, i, from, next);
			cr_assert_eq(off, next + (crlf || i == n ? 0 : 2),
			    "%s: expect %d: the match at %lld, the last ended "
			    "at %lld: %s", what, i, off, next, expect_show(r));
		}
		last = got;
		next = h_jint(r, "result.next", -1);
		json_decref(r);
	}
	h_note("%s: %d numbers from %llu whole, up to offset %lld", what,
	    2 * n, last + 1 - 2 * (unsigned long long)n, next);
	h_conn_close(&c[0]);
	h_conn_close(&c[1]);
}

/* A counter as fast as it can: the expects read behind it. */
Test(expect, a_fast_counter_gives_every_number_whole)
{
	expect_counter("0", 200, "fast counter");
}

/*
 * A counter that pauses a millisecond inside each number: the expects wait
 * at the newest byte, each seeing half a number first.
 */
Test(expect, a_counter_cut_inside_its_numbers_gives_every_number_whole)
{
	expect_counter("1000", 100, "paced counter");
}

/*
 * A connection that did not launch the session starts at the stream's end
 * (what is there already is not matched); `from: 0` finds the first line,
 * and the match moves the cursor: the next expect goes on after it.
 */
Test(expect, another_connection_starts_at_the_end)
{
	static const char *const pieces[] = { "first line\n", "second\n",
		NULL };
	struct h_conn	 c[2];
	json_t		*r, *d;
	long		 id;

	expect_start(c, 2);
	id = expect_dribble(&c[1], "exec", NULL, pieces);
	expect_step(&c[1], id, 11);
	r = expect_for(&c[0], id, "first", EXPECT_QUIET);
	d = expect_err(r, 5, "timeout", "expect first on another connection");
	cr_assert(h_jint(d, "from", -1) == 11 && h_jint(d, "next", -1) == 11 &&
	    h_jint(d, "got_offset", -1) == 11, "the cursor of a connection that "
	    "did not launch: expected the stream's end (11): %s",
	    expect_show(r));
	expect_str(json_object_get(d, "got"), "got", "");
	json_decref(r);
	r = expect_from(&c[0], id, "first", 0);
	expect_match(expect_ok(r, "expect first from 0"), "from 0", 0, 0, 0, 5,
	    "first");
	expect_str(h_jpath(r, "result.before"), "before", "");
	json_decref(r);
	r = expect_for(&c[0], id, "line\\n", EXPECT_BOUND);
	expect_match(expect_ok(r, "expect line after from 0"), "the cursor "
	    "after a match from 0", 0, 5, 6, 11, "line\n");
	expect_str(h_jpath(r, "result.before"), "before", " ");
	json_decref(r);
	expect_step(&c[1], id, 18);
	r = expect_for(&c[0], id, "second", EXPECT_BOUND);
	expect_match(expect_ok(r, "expect second"), "second", 0, 11, 11, 17,
	    "second");
	json_decref(r);
	h_conn_close(&c[0]);
	h_conn_close(&c[1]);
}

/* Read the target with read on c until n bytes came; their text. */
static char *
expect_read(struct h_conn *c, long id, long long at, size_t n)
{
	struct h_bytes	 b = { NULL, 0 };
	unsigned char	*data;
	size_t		 len;
	json_t		*r;

	while (b.len < n) {
		r = expect_call(c, "read", json_pack("{s:I,s:i}", "session",
		    (json_int_t)id, "timeout", EXPECT_BOUND));
		expect_ok(r, "read");
		cr_assert_eq(h_jint(r, "result.offset", -1), at + (long long)
		    b.len, "read: %s", expect_show(r));
		data = b64_decode(h_jstr(r, "result.data"), strlen(h_jstr(r,
		    "result.data")), &len);
		cr_assert(data != NULL && len > 0, "read: %s", expect_show(r));
		cr_assert_eq(h_jint(r, "result.next_offset", -1), at +
		    (long long)(b.len + len), "read: next_offset: %s",
		    expect_show(r));
		h_bytes_add(&b, data, len);
		free(data);
		json_decref(r);
	}
	cr_assert_eq(b.len, n, "read more than was written");
	return b.p;
}

/*
 * Two connections expect on one stream independently: both get the same
 * match at the same offsets, each on its own cursor, and a third that takes
 * the bytes with read changes nothing of what they see.
 */
Test(expect, two_connections_expect_on_one_stream_independently)
{
	static const char *const pieces[] = { "noise\n", "MARK-7\n", "tail\n",
		NULL };
	struct h_conn	 c[3];
	json_t		*r;
	char		*got;
	long		 id;
	int		 i;

	expect_start(c, 3);
	id = expect_dribble(&c[2], "exec", NULL, pieces);
	expect_step(&c[2], id, 6);
	for (i = 0; i < 2; i++) {
		/* The first expect sets the cursor: the end, 6. */
		r = expect_for(&c[i], id, "MARK-(\\d+)", 0);
		expect_err(r, 5, "timeout", "a first expect with timeout 0");
		cr_assert_eq(h_jint(r, "error.data.from", -1), 6, "connection "
		    "%d's cursor: %s", i, expect_show(r));
		json_decref(r);
		expect_send(&c[i], 1, "expect", json_pack("{s:I,s:s}",
		    "session", (json_int_t)id, "patterns", "MARK-(\\d+)"));
	}
	expect_step(&c[2], id, 13);
	got = expect_read(&c[2], id, 0, 13);
	cr_assert(memcmp(got, "noise\nMARK-7\n", 13) == 0, "read: %s", got);
	free(got);
	for (i = 0; i < 2; i++) {
		r = expect_reply(&c[i], 1, EXPECT_BOUND);
		expect_match(expect_ok(r, "expect MARK"), i == 0 ?
		    "connection 1" : "connection 2", 0, 6, 6, 12, "MARK-7");
		expect_group(h_jpath(r, "result"), 0, "7", 11, 12);
		expect_str(h_jpath(r, "result.before"), "before", "");
		json_decref(r);
	}
	expect_step(&c[2], id, 18);
	got = expect_read(&c[2], id, 13, 5);
	free(got);
	for (i = 0; i < 2; i++) {
		r = expect_for(&c[i], id, "\\w+", EXPECT_BOUND);
		expect_match(expect_ok(r, "expect \\w+"), i == 0 ?
		    "connection 1 after the read" : "connection 2 after the "
		    "read", 0, 12, 13, 17, "tail");
		expect_str(h_jpath(r, "result.before"), "before", "\n");
		json_decref(r);
	}
	for (i = 0; i < 3; i++)
		h_conn_close(&c[i]);
}

/*
 * A timeout gives back every byte received since from (those that came in
 * its window too) as got, with got_offset and next, and leaves the cursor
 * where it was: a second expect matches in the bytes the first saw.
 */
Test(expect, a_timeout_returns_every_byte_received)
{
	static const char *const pieces[] = { "part1 ", "part2 ", "DONE\n",
		NULL };
	struct h_conn	 c[2];
	json_t		*r, *d;
	const char	*msg;
	long		 id;

	expect_start(c, 2);
	id = expect_dribble(&c[0], "exec", NULL, pieces);
	expect_step(&c[1], id, 6);
	expect_send(&c[0], 1, "expect", json_pack("{s:I,s:s,s:i}", "session",
	    (json_int_t)id, "patterns", "DONE", "timeout", 3000 * H_SLOW));
	expect_step(&c[1], id, 12);
	r = expect_reply(&c[0], 1, EXPECT_BOUND);
	d = expect_err(r, 5, "timeout", "expect DONE");
	expect_str(json_object_get(d, "got"), "got", "part1 part2 ");
	cr_assert(h_jint(d, "from", -1) == 0 && h_jint(d, "got_offset", -1) ==
	    0 && h_jint(d, "next", -1) == 12, "the timeout's from, got_offset "
	    "and next: expected 0, 0, 12: %s", expect_show(r));
	cr_assert_str_eq(h_jstr(d, "stream") ? h_jstr(d, "stream") : "",
	    "target", "the timeout's stream: %s", expect_show(r));
	msg = h_jstr(r, "error.message");
	cr_assert(msg != NULL && strstr(msg, "no match for") != NULL &&
	    strstr(msg, "DONE") != NULL && strstr(msg, "target stream") !=
	    NULL, "the timeout's message: %s", expect_show(r));
	json_decref(r);
	expect_transcript_is(&c[1], id, "target", "part1 part2 ", 12);
	r = expect_for(&c[0], id, "part(\\d) ", EXPECT_BOUND);
	expect_match(expect_ok(r, "expect part after the timeout"), "the "
	    "cursor after a timeout", 0, 0, 0, 6, "part1 ");
	json_decref(r);
	r = expect_for(&c[0], id, "part(\\d) ", EXPECT_BOUND);
	expect_match(expect_ok(r, "expect part again"), "the bytes that came "
	    "in the timeout's window", 0, 6, 6, 12, "part2 ");
	json_decref(r);
	expect_step(&c[1], id, 17);
	r = expect_for(&c[0], id, "DONE", EXPECT_BOUND);
	expect_match(expect_ok(r, "expect DONE at last"), "DONE", 0, 12, 12,
	    16, "DONE");
	json_decref(r);
	h_conn_close(&c[0]);
	h_conn_close(&c[1]);
}

/*
 * A program that exits without printing the pattern: kind eof, code 13,
 * with every byte it wrote as got; blast writes its alphabet and exits.
 */
static void
expect_eof(const char *kind)
{
	char		 want[1000];
	struct h_conn	 c;
	json_t		*r, *d;
	const char	*msg;
	size_t		 i;
	long		 id;

	for (i = 0; i < sizeof want; i++)
		want[i] = "0123456789abcdefghijklmnopqrstuvwxyz\n"[i % 37];
	expect_start(&c, 1);
	id = expect_launch(&c, kind, H_ARGS(h_ctx_fixture("FIX_BLAST"),
	    "1000"));
	r = expect_for(&c, id, "login: ", -1);
	d = expect_err(r, 13, "eof", "expect login: of a program that exits");
	expect_text(json_object_get(d, "got"), "got", want, sizeof want, true);
	cr_assert(h_jint(d, "from", -1) == 0 && h_jint(d, "got_offset", -1) ==
	    0 && h_jint(d, "next", -1) == 1000, "%s: the end's from, got_offset "
	    "and next: expected 0, 0, 1000: %s", kind, expect_show(r));
	msg = h_jstr(r, "error.message");
	cr_assert(msg != NULL && strstr(msg, "ended with no match") != NULL,
	    "%s: the end's message: %s", kind, expect_show(r));
	json_decref(r);
	/*
	 * Ended is a state: asked again, the end comes again at once, from
	 * the same cursor (an end does not move it).
	 */
	r = expect_for(&c, id, "login: ", -1);
	d = expect_err(r, 13, "eof", "expect again");
	cr_assert(h_jint(d, "from", -1) == 0 && h_jint(d, "next", -1) == 1000,
	    "%s: the end again: %s", kind, expect_show(r));
	json_decref(r);
	h_conn_close(&c);
}

Test(expect, a_program_that_exits_without_the_pattern_is_eof)
{
	expect_eof("exec");
}

Test(expect, a_program_that_exits_without_the_pattern_is_eof_gdb)
{
	expect_eof("gdb");
}

/*
 * Under gdb the target stream ends with each run of the program, and a
 * later run reopens it: after `exec run`, an expect from the first run's
 * end matches in the second run's bytes, at the offsets after the first,
 * and then ends again at the second run's end.
 */
Test(expect, a_program_run_again_reopens_the_target_stream_gdb)
{
	struct h_conn	 c;
	json_t		*r, *d;
	long		 id;

	expect_start(&c, 1);
	id = expect_launch(&c, "gdb", H_ARGS(h_ctx_fixture("FIX_BLAST"),
	    "1000"));
	r = expect_for(&c, id, "login: ", -1);
	d = expect_err(r, 13, "eof", "expect login: in the first run");
	cr_assert_eq(h_jint(d, "next", -1), 1000, "the first run's end: %s",
	    expect_show(r));
	json_decref(r);
	r = expect_call(&c, "exec", json_pack("{s:I,s:s}", "session",
	    (json_int_t)id, "command", "run"));
	expect_ok(r, "exec run");
	json_decref(r);
	r = expect_from(&c, id, "5678", 1000);
	expect_match(expect_ok(r, "expect 5678 in the second run"), "the "
	    "second run", 0, 1000, 1005, 1009, "5678");
	json_decref(r);
	r = expect_for(&c, id, "login: ", -1);
	d = expect_err(r, 13, "eof", "expect login: in the second run");
	cr_assert(h_jint(d, "from", -1) == 1009 && h_jint(d, "next", -1) ==
	    2000, "the second run's end: expected from 1009, next 2000: %s",
	    expect_show(r));
	json_decref(r);
	h_conn_close(&c);
}

/*
 * Output that is not UTF-8 (0xff 0xfe 0x80 around ASCII) matches byte for
 * byte (`\xff\xfe(..)`), and the text fields that are not UTF-8 come as
 * {"base64":...} that decodes to the bytes; those that are come as strings.
 */
Test(expect, non_utf8_output_matches_bytes)
{
	static const char	 bytes[] = "a\xff\xfeOK\x80z\n";
	struct h_conn		 c;
	json_t			*r, *res, *d;
	long			 id;

	expect_start(&c, 1);
	id = expect_launch(&c, "exec", H_ARGS("sh", "-c",
	    "printf 'a\\377\\376OK\\200z\\n'; exec sleep 1000"));
	r = expect_for(&c, id, "\\xff\\xfe(..)", EXPECT_BOUND);
	res = expect_ok(r, "expect \\xff\\xfe(..)");
	expect_match(res, "\\xff\\xfe(..)", 0, 0, 1, 5, NULL);
	expect_text(json_object_get(res, "text"), "text", "\xff\xfeOK", 4,
	    false);
	expect_group(res, 0, "OK", 3, 5);
	expect_str(json_object_get(res, "before"), "before", "a");
	json_decref(r);
	r = expect_for(&c, id, "(.)z\\n", EXPECT_BOUND);
	res = expect_ok(r, "expect (.)z\\n");
	expect_match(res, "(.)z\\n", 0, 5, 5, 8, NULL);
	expect_text(json_object_get(res, "text"), "text", "\x80z\n", 3, false);
	expect_text(json_array_get(json_object_get(res, "groups"), 0),
	    "group 1", "\x80", 1, false);
	json_decref(r);
	r = expect_call(&c, "expect", json_pack("{s:I,s:s,s:i,s:i}", "session",
	    (json_int_t)id, "patterns", "never", "from", 0, "timeout",
	    EXPECT_QUIET));
	d = expect_err(r, 5, "timeout", "expect never from 0");
	expect_text(json_object_get(d, "got"), "got", bytes, 8, false);
	json_decref(r);
	h_conn_close(&c);
}

/*
 * A match that more bytes could still grow (`\d+` at the newest byte) is
 * taken as it stands at the timeout, and at the stream's end, rather than
 * failing: "value=12" with nothing after it.
 */
Test(expect, a_growable_match_is_taken_at_the_timeout_and_at_the_end)
{
	static const char *const pieces[] = { "value=12", "3\n", NULL };
	struct h_conn	 c;
	json_t		*r, *res;
	double		 t;
	long		 id;

	expect_start(&c, 1);
	id = expect_dribble(&c, "exec", NULL, pieces);
	expect_step(&c, id, 8);
	t = h_now();
	r = expect_for(&c, id, "value=(\\d+)", EXPECT_QUIET);
	t = (h_now() - t) * 1000;
	res = expect_ok(r, "value=(\\d+) at the timeout");
	/* Taken before the timeout, it could have been cut short. */
	cr_assert_geq(t, EXPECT_QUIET - 10, "value=(\\d+) was answered after "
	    "%.0f ms, before its timeout of %d ms", t, EXPECT_QUIET);
	expect_match(res, "at the timeout", 0, 0, 0, 8, "value=12");
	expect_group(res, 0, "12", 6, 8);
	json_decref(r);
	id = expect_launch(&c, "exec", H_ARGS("printf", "value=34"));
	r = expect_for(&c, id, "value=(\\d+)", -1);
	res = expect_ok(r, "value=(\\d+) at the end");
	expect_match(res, "at the end", 0, 0, 0, 8, "value=34");
	expect_group(res, 0, "34", 6, 8);
	json_decref(r);
	h_conn_close(&c);
}

/* An expect from 0 of a params object (taken) on session id: its result. */
static json_t *
expect_with(struct h_conn *c, long id, json_t *p, const char *what)
{
	json_t *r;

	json_object_set_new(p, "session", json_integer(id));
	json_object_set_new(p, "from", json_integer(0));
	json_object_set_new(p, "timeout", json_integer(EXPECT_BOUND));
	r = expect_call(c, "expect", p);
	expect_ok(r, what);
	return r;
}

/* What the groups test's program prints, then it waits. */
#define EXPECT_GROUPS	"one two three\nkey=42 name=dbg\naxbbc a.b*c f(x) HELLO\n"

/*
 * Numbered and named groups (a group that takes no part is null); a list
 * of patterns: the earliest match wins, a tie goes to the lower index;
 * `exact` takes regex metacharacters literally; the caseless flag.
 */
Test(expect, groups_lists_exact_and_flags)
{
	struct h_conn	 c;
	json_t		*r, *res, *named;
	long		 id;

	expect_start(&c, 1);
	id = expect_launch(&c, "exec", H_ARGS("sh", "-c", "printf '"
	    EXPECT_GROUPS "'; exec sleep 1000"));
	expect_wait_size(&c, id, "target", strlen(EXPECT_GROUPS));

	r = expect_with(&c, id, json_pack("{s:s}", "patterns",
	    "(?P<key>\\w+)=(?P<val>\\d+) (\\w+)"), "named groups");
	res = json_object_get(r, "result");
	expect_match(res, "named groups", 0, 0, 14, 25, "key=42 name");
	expect_group(res, 0, "key", 14, 17);
	expect_group(res, 1, "42", 18, 20);
	expect_group(res, 2, "name", 21, 25);
	named = json_object_get(res, "named");
	cr_assert_eq(json_object_size(named), 2, "named: %s", expect_show(r));
	expect_str(json_object_get(named, "key"), "named key", "key");
	expect_str(json_object_get(named, "val"), "named val", "42");
	expect_str(json_object_get(res, "before"), "before",
	    "one two three\n");
	json_decref(r);

	r = expect_with(&c, id, json_pack("{s:s}", "patterns",
	    "(?P<no>zzz)?(x)?(two)"), "an unset group");
	res = json_object_get(r, "result");
	expect_match(res, "an unset group", 0, 0, 4, 7, "two");
	expect_group(res, 0, NULL, 0, 0);
	expect_group(res, 1, NULL, 0, 0);
	expect_group(res, 2, "two", 4, 7);
	named = json_object_get(res, "named");
	cr_assert(json_object_size(named) == 1 && json_is_null(
	    json_object_get(named, "no")), "named (unset): %s",
	    expect_show(r));
	json_decref(r);

	r = expect_with(&c, id, json_pack("{s:[s,s,s]}", "patterns", "name",
	    "three", "two"), "a list");
	expect_match(json_object_get(r, "result"), "the earliest of a list", 2,
	    0, 4, 7, "two");
	json_decref(r);
	r = expect_with(&c, id, json_pack("{s:[s,s]}", "patterns", "tw",
	    "two"), "a tie");
	expect_match(json_object_get(r, "result"), "a tie (tw first)", 0, 0,
	    4, 6, "tw");
	json_decref(r);
	r = expect_with(&c, id, json_pack("{s:[s,s]}", "patterns", "two",
	    "tw"), "a tie");
	expect_match(json_object_get(r, "result"), "a tie (two first)", 0, 0,
	    4, 7, "two");
	json_decref(r);

	r = expect_with(&c, id, json_pack("{s:s}", "exact", "a.b*c"),
	    "exact");
	expect_match(json_object_get(r, "result"), "exact a.b*c (the regex "
	    "matches axbbc first)", 0, 0, 36, 41, "a.b*c");
	json_decref(r);
	r = expect_with(&c, id, json_pack("{s:[s,s]}", "exact", "zzz", "f(x)"),
	    "an exact list");
	expect_match(json_object_get(r, "result"), "exact [zzz, f(x)]", 1, 0,
	    42, 46, "f(x)");
	json_decref(r);
	r = expect_with(&c, id, json_pack("{s:s}", "patterns", "a.b*c"),
	    "the same as a pattern");
	expect_match(json_object_get(r, "result"), "pattern a.b*c", 0, 0, 30,
	    35, "axbbc");
	json_decref(r);

	r = expect_with(&c, id, json_pack("{s:s,s:[s]}", "patterns", "hello",
	    "flags", "caseless"), "caseless");
	expect_match(json_object_get(r, "result"), "hello caseless", 0, 0, 47,
	    52, "HELLO");
	json_decref(r);
	r = expect_call(&c, "expect", json_pack("{s:I,s:s,s:i,s:i}", "session",
	    (json_int_t)id, "patterns", "hello", "from", 0, "timeout",
	    EXPECT_QUIET));
	expect_err(r, 5, "timeout", "hello without caseless");
	json_decref(r);
	h_conn_close(&c);
}

/* Assert an expect with params p (taken) fails with code, kind and text. */
static void
expect_refused(struct h_conn *c, json_t *p, long long code, const char *kind,
    const char *text)
{
	const char	*msg;
	char		*shown = json_dumps(p, JSON_COMPACT);
	json_t		*r;

	r = expect_call(c, "expect", p);
	expect_err(r, code, kind, shown);
	msg = h_jstr(r, "error.message");
	cr_assert(msg != NULL && strstr(msg, text) != NULL, "expect %s: "
	    "expected a message with \"%s\", got %s", shown, text,
	    expect_show(r));
	json_decref(r);
	free(shown);
}

/*
 * A bad pattern is invalid_params with PCRE2's words and the pattern's
 * index; a stream the session lacks is not_supported, for expect and logs.
 */
Test(expect, bad_patterns_and_missing_streams)
{
	struct h_conn	 c;
	const char	*msg;
	json_t		*r;
	long		 id, plain;

	expect_start(&c, 1);
	id = expect_launch(&c, "exec", H_ARGS("sleep", "1000"));
	plain = expect_launch(&c, "exec-console", H_ARGS("sh", "-c",
	    "echo plain-console; exec sleep 1000"));

	r = expect_call(&c, "expect", json_pack("{s:I,s:[s,s,s]}", "session",
	    (json_int_t)id, "patterns", "ok", "fine", "(abcdef"));
	expect_err(r, -32602, "invalid_params", "a bad third pattern");
	msg = h_jstr(r, "error.message");
	cr_assert(msg != NULL && strstr(msg, "missing closing parenthesis") !=
	    NULL, "PCRE2's words: %s", expect_show(r));
	/* The index counts from 0, as result.index does. */
	cr_assert(msg != NULL && strncmp(msg, "pattern 2:", 10) == 0, "the bad "
	    "pattern's index (2, the third): %s", expect_show(r));
	h_note("bad pattern: %s", msg);
	json_decref(r);
	expect_refused(&c, json_pack("{s:I,s:s,s:s}", "session", (json_int_t)id,
	    "patterns", "a", "exact", "b"), -32602, "invalid_params", "");
	expect_refused(&c, json_pack("{s:I}", "session", (json_int_t)id),
	    -32602, "invalid_params", "");
	expect_refused(&c, json_pack("{s:I,s:s,s:[s]}", "session",
	    (json_int_t)id, "patterns", "a", "flags", "unicode"), -32602,
	    "invalid_params", "");
	expect_refused(&c, json_pack("{s:I,s:[]}", "session", (json_int_t)id,
	    "patterns"), -32602, "invalid_params", "");

	expect_refused(&c, json_pack("{s:I,s:s,s:s}", "session",
	    (json_int_t)plain, "patterns", "x", "stream", "target"), 9,
	    "not_supported", "no target stream");
	expect_refused(&c, json_pack("{s:I,s:s,s:s}", "session", (json_int_t)id,
	    "patterns", "x", "stream", "server"), 9, "not_supported",
	    "no server stream");
	r = expect_call(&c, "logs", json_pack("{s:I,s:s}", "session",
	    (json_int_t)plain, "stream", "target"));
	expect_err(r, 9, "not_supported", "logs of a target stream without a "
	    "transport");
	json_decref(r);

	/* Without a transport, the default stream is the console. */
	r = expect_call(&c, "expect", json_pack("{s:I,s:s,s:i}", "session",
	    (json_int_t)plain, "patterns", "plain-(\\w+)", "timeout",
	    EXPECT_BOUND));
	cr_assert_str_eq(h_jstr(expect_ok(r, "expect on the console"),
	    "stream") ? h_jstr(r, "result.stream") : "", "console",
	    "the default stream without a transport: %s", expect_show(r));
	expect_group(h_jpath(r, "result"), 0, "console", 6, 13);
	json_decref(r);
	h_conn_close(&c);
}

/*
 * The target-in stream is what write sent: logs reads it at its offsets,
 * and expect, which waits for what a session writes, refuses it by name.
 */
Test(expect, expect_on_target_in_is_refused_and_logs_reads_it)
{
	struct h_conn	 c;
	json_t		*r;
	long		 id;

	expect_start(&c, 1);
	id = expect_launch(&c, "exec", H_ARGS("sleep", "1000"));
	expect_write(&c, id, "boot\n", 5);
	r = expect_call(&c, "expect", json_pack("{s:I,s:s,s:s,s:i}", "session",
	    (json_int_t)id, "stream", "target-in", "patterns", "boot",
	    "timeout", EXPECT_BOUND));
	cr_assert_str_eq(h_jstr(r, "error.data.kind") ? h_jstr(r,
	    "error.data.kind") : "", "not_supported", "expect on target-in: "
	    "%s", expect_show(r));
	cr_assert_not_null(strstr(h_jstr(r, "error.message"), "logs"),
	    "the refusal does not say where to read it: %s", expect_show(r));
	json_decref(r);
	h_conn_close(&c);
}

/* The size of a stream now, by logs. */
static long long
expect_size(struct h_conn *c, long id, const char *stream)
{
	long long	 size;
	json_t		*r;

	r = expect_call(c, "logs", json_pack("{s:I,s:s,s:I,s:i}", "session",
	    (json_int_t)id, "stream", stream, "offset", (json_int_t)0, "max",
	    1));
	size = h_jint(expect_ok(r, "logs"), "size", -1);
	json_decref(r);
	return size;
}

/* qsort's order of doubles. */
static int
expect_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Waiting expects in the busy-stream test: conns x each. */
#define EXPECT_WAITER_CONNS	10
#define EXPECT_WAITERS_EACH	10
/* Pings measured, and the bound of the worst (ms). */
#define EXPECT_PINGS		50
#define EXPECT_PING_BOUND	500.0

/*
 * 100 expects waiting (for a pattern that never comes) on the output of
 * `yes`, which nobody reads: a ping on another connection is answered,
 * the worst of 50 well within a generous bound, and the transcript keeps
 * growing past 8 MiB: the target is not stalled.
 */
Test(expect, waiting_expects_on_a_busy_stream_keep_the_loop_and_target_going)
{
	struct h_conn	 w[EXPECT_WAITER_CONNS], p, l;
	double		 t[EXPECT_PINGS], worst, end;
	long long	 size0, size;
	json_t		*r;
	long		 id;
	int		 i, j;

	expect_start(&p, 1);
	cr_assert_eq(h_conn_open(&l, H->sock), 0, "connect");
	id = expect_launch(&l, "exec", H_ARGS("yes"));
	for (i = 0; i < EXPECT_WAITER_CONNS; i++) {
		cr_assert_eq(h_conn_open(&w[i], H->sock), 0, "connect");
		for (j = 0; j < EXPECT_WAITERS_EACH; j++)
			expect_send(&w[i], j + 1, "expect", json_pack("{s:I,"
			    "s:s}", "session", (json_int_t)id, "patterns",
			    "never-(\\d+)"));
		/* The ping's answer comes after any at-once error of theirs. */
		r = expect_call(&w[i], "ping", json_object());
		cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping behind "
		    "the expects: %s", expect_show(r));
		json_decref(r);
	}
	size0 = expect_size(&l, id, "target");
	for (i = 0; i < EXPECT_PINGS; i++) {
		t[i] = h_now();
		r = expect_call(&p, "ping", json_object());
		t[i] = (h_now() - t[i]) * 1000;
		cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping %d: %s",
		    i, expect_show(r));
		json_decref(r);
	}
	qsort(t, EXPECT_PINGS, sizeof t[0], expect_cmp);
	worst = t[EXPECT_PINGS - 1];
	h_note("busy stream: %d pings with %d waiting expects: median %.3f ms, "
	    "worst %.3f ms", EXPECT_PINGS, EXPECT_WAITER_CONNS *
	    EXPECT_WAITERS_EACH, t[EXPECT_PINGS / 2], worst);
	cr_assert_lt(worst, EXPECT_PING_BOUND * H_SLOW, "the worst ping took "
	    "%.1f ms with %d expects waiting on a busy stream", worst,
	    EXPECT_WAITER_CONNS * EXPECT_WAITERS_EACH);
	end = h_now() + EXPECT_BOUND / 1000.0;
	/* Growing: past where it was when the pings began, and past 8 MiB. */
	while (((size = expect_size(&l, id, "target")) <= 8 * 1024 * 1024 ||
	    size <= size0) && h_now() < end)
		h_nap(20);
	cr_assert_gt(size, 8 * 1024 * 1024, "the target stream stopped at %lld "
	    "bytes (%lld when the pings began): the target stalled", size,
	    size0);
	cr_assert_gt(size, size0, "the target stream did not grow past %lld "
	    "bytes", size0);
	for (i = 0; i < EXPECT_WAITER_CONNS; i++) {
		cr_assert_null(expect_early(&w[i]), "a waiting expect was "
		    "answered");
		h_conn_close(&w[i]);
	}
	r = expect_call(&p, "ping", json_object());
	cr_assert(json_is_true(h_jpath(r, "result.pong")), "ping after the "
	    "waiters left: %s", expect_show(r));
	json_decref(r);
	h_conn_close(&p);
	h_conn_close(&l);
}

/* A file and the size it is to reach. */
struct expect_file {
	const char	*path;
	off_t		 size;
};

/* Predicate: a file (struct expect_file) has reached its size. */
static bool
expect_file_full(void *arg)
{
	struct expect_file	*f = arg;
	struct stat		 st;

	return stat(f->path, &st) == 0 && st.st_size >= f->size;
}

/* Assert the file at path holds want[0..n) and is of mode 0600. */
static void
expect_file_is(const char *path, const void *want, size_t n)
{
	struct expect_file	 f = { path, (off_t)n };
	struct stat		 st;
	size_t			 len, i;
	char			*data;

	cr_assert(h_wait_for(expect_file_full, &f, EXPECT_BOUND), "%s did not "
	    "reach %zu bytes", path, n);
	cr_assert_eq(stat(path, &st), 0, "stat %s", path);
	cr_assert_eq(st.st_mode & 07777, 0600, "%s: mode %o, not 0600", path,
	    (unsigned)(st.st_mode & 07777));
	data = h_read_file(path, &len);
	cr_assert_not_null(data, "read %s", path);
	cr_assert_eq(len, n, "%s: %zu bytes, %zu were written", path, len, n);
	for (i = 0; i < n && data[i] == ((const char *)want)[i]; i++)
		continue;
	cr_assert_eq(i, n, "%s: byte %zu differs from what was written", path,
	    i);
	free(data);
}

/*
 * Over the 4 MiB of noise: the last 8 bytes, as \xHH escapes, match from 0
 * at their offset (4 MiB on from where the expect began), with the 256 KiB
 * before the match as before; a pattern that is not there ends in eof with
 * the last 512 KiB as got, from got_offset.
 */
static void
expect_noise_ends(struct h_conn *c, long id, const unsigned char *want)
{
	char		 pat[8 * 4 + 1];
	json_t		*r, *res, *d;
	long long	 at = EXPECT_NOISE - 8;
	int		 i;

	for (i = 0; i < 8; i++)
		snprintf(pat + 4 * i, 5, "\\x%02x", want[at + i]);
	r = expect_from(c, id, pat, 0);
	res = expect_ok(r, "expect the last 8 bytes");
	expect_match(res, "the last 8 bytes", 0, 0, at, EXPECT_NOISE, NULL);
	expect_text(json_object_get(res, "text"), "text", want + at, 8,
	    json_is_string(json_object_get(res, "text")));
	cr_assert_eq(h_jint(res, "before_offset", -1), at - 256 * 1024,
	    "before_offset: %s", expect_show(r));
	expect_text(json_object_get(res, "before"), "before", want + at -
	    256 * 1024, 256 * 1024, false);
	json_decref(r);
	r = expect_from(c, id, "never-ever-(\\d+)", 0);
	d = expect_err(r, 13, "eof", "expect a pattern not in the noise");
	cr_assert(h_jint(d, "from", -1) == 0 && h_jint(d, "next", -1) ==
	    EXPECT_NOISE && h_jint(d, "got_offset", -1) == EXPECT_NOISE - 512 *
	    1024, "the end of 4 MiB: expected from 0, got_offset 4 MiB - 512 "
	    "KiB, next 4 MiB: got_offset %lld, next %lld",
	    h_jint(d, "got_offset", -1), h_jint(d, "next", -1));
	expect_text(json_object_get(d, "got"), "got", want + EXPECT_NOISE -
	    512 * 1024, 512 * 1024, false);
	json_decref(r);
}

/*
 * The transcript holds every byte the target wrote: 4 MiB of noise, read
 * with read (every byte in order, as before), then with logs from 0 to the
 * end, and in sessions/ID.target.log (0600) on disk; and target-in holds
 * what write sent, in logs and in sessions/ID.target-in.log.
 */
static void
expect_transcript(const char *kind)
{
	static const char	 input[] = "hello, target\ngo\n";
	struct h_conn		 c;
	unsigned char		*want;
	char			*got, path[PATH_MAX];
	uint32_t		 seed = EXPECT_SEED;
	long			 id;

	want = malloc(EXPECT_NOISE);
	noise_fill(&seed, want, EXPECT_NOISE);
	expect_start(&c, 1);
	id = expect_launch(&c, kind, H_ARGS(h_ctx_fixture("FIX_NOISE"),
	    "4194304", "20261202"));
	expect_write(&c, id, input, 14);
	expect_write(&c, id, input + 14, 3);
	got = expect_read(&c, id, 0, EXPECT_NOISE);
	cr_assert(memcmp(got, want, EXPECT_NOISE) == 0, "%s: read: the bytes "
	    "differ from what the program wrote", kind);
	free(got);
	expect_transcript_is(&c, id, "target", want, EXPECT_NOISE);
	snprintf(path, sizeof path, "%s/sessions/%ld.target.log", H->state, id);
	expect_file_is(path, want, EXPECT_NOISE);
	expect_transcript_is(&c, id, "target-in", input, strlen(input));
	snprintf(path, sizeof path, "%s/sessions/%ld.target-in.log", H->state,
	    id);
	expect_file_is(path, input, strlen(input));
	expect_noise_ends(&c, id, want);
	free(want);
	h_conn_close(&c);
}

Test(expect, the_transcript_holds_every_byte_the_target_wrote)
{
	expect_transcript("exec");
}

Test(expect, the_transcript_holds_every_byte_the_target_wrote_gdb)
{
	expect_transcript("gdb");
}

/*
 * The wall clock in seconds, as precise as the daemon's: time(2) reads a
 * coarse clock that may be a tick behind, so a time the daemon took just
 * before could be past it.
 */
static double
expect_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Check logs' times from offset off of a stream: nondecreasing offsets
 * and times, the first the chunk holding off, the others starting in
 * [off, next_offset), each time within [t0, now]; the offsets.
 */
static size_t
expect_times(struct h_conn *c, long id, const char *stream, long long off,
    double t0, long long *offs, size_t max)
{
	long long	 o, last_o = -1, next;
	double		 t, last_t = 0, now = expect_wall() + 1;
	json_t		*r, *times, *e;
	size_t		 i;

	r = expect_call(c, "logs", json_pack("{s:I,s:s,s:I,s:b}", "session",
	    (json_int_t)id, "stream", stream, "offset", (json_int_t)off,
	    "timestamps", 1));
	next = h_jint(expect_ok(r, "logs with timestamps"), "next_offset", -1);
	times = h_jpath(r, "result.times");
	cr_assert(json_is_array(times) && json_array_size(times) > 0,
	    "%s: logs from %lld with timestamps: no times: %s", stream, off,
	    expect_show(r));
	json_array_foreach(times, i, e) {
		o = json_integer_value(json_array_get(e, 0));
		t = json_number_value(json_array_get(e, 1));
		cr_assert(json_array_size(e) == 2 && json_is_integer(
		    json_array_get(e, 0)) && json_is_number(json_array_get(e,
		    1)), "%s: a times entry is not [offset, time]: %s", stream,
		    expect_show(e));
		cr_assert(o >= last_o && t >= last_t, "%s: times go back at "
		    "entry %zu: %s", stream, i, expect_show(times));
		cr_assert(i == 0 ? o <= off : o >= off && o < next, "%s: entry "
		    "%zu at %lld, for [%lld, %lld): %s", stream, i, o, off, next,
		    expect_show(times));
		cr_assert(t >= t0 - 1 && t <= now, "%s: entry %zu at time %.3f, "
		    "not within the test's [%.3f, %.3f]", stream, i, t, t0, now);
		if (i < max)
			offs[i] = o;
		last_o = o;
		last_t = t;
	}
	json_decref(r);
	return i;
}

/*
 * logs with timestamps gives times: the target's three pieces, each in
 * before the next is written, are three chunks at their offsets, in order,
 * at times within the test's; from the middle of one, it comes first. The
 * console has times too.
 */
Test(expect, logs_with_timestamps_gives_arrival_times)
{
	static const char *const pieces[] = { "a\n", "bb\n", "ccc\n", NULL };
	struct h_conn	 c;
	long long	 offs[8];
	double		 t0 = expect_wall();
	long		 id, plain;
	size_t		 n;

	expect_start(&c, 1);
	id = expect_dribble(&c, "exec", NULL, pieces);
	expect_step(&c, id, 2);
	expect_step(&c, id, 5);
	expect_step(&c, id, 9);
	n = expect_times(&c, id, "target", 0, t0, offs, 8);
	cr_assert(n == 3 && offs[0] == 0 && offs[1] == 2 && offs[2] == 5,
	    "target: expected chunks at 0, 2, 5, got %zu entries", n);
	n = expect_times(&c, id, "target", 3, t0, offs, 8);
	cr_assert(n == 2 && offs[0] == 2 && offs[1] == 5, "target from 3: "
	    "expected chunks at 2, 5, got %zu entries", n);
	n = expect_times(&c, id, "target-in", 0, t0, offs, 8);
	cr_assert_eq(n, 3, "target-in: expected the three writes, got %zu "
	    "entries", n);
	plain = expect_launch(&c, "exec-console", H_ARGS("sh", "-c",
	    "echo one; exec sleep 1000"));
	expect_wait_size(&c, plain, "console", 5);
	expect_times(&c, plain, "console", 0, t0, offs, 8);
	h_conn_close(&c);
}
