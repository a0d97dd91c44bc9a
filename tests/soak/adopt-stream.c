/*
 * The adoption soak's streams: each read again after every adoption is
 * what it was before with more after it, in the form its session writes
 * (numbered lines, the beat fixture's lines, the bytes the test sent to
 * an echo), so no byte is lost or repeated; a read of a target at its
 * offsets starts at or past where the last one ended and is the log's
 * bytes there; expect finds what comes after a given offset.
 */
#include "harness.h"
#include "adopt-soak.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64.h"

/* A new stream to follow: session id's stream name, of the given form. */
struct sa_stream *
sa_stream_add(struct sa *s, long id, const char *name, enum sa_form form)
{
	struct sa_stream *st;

	cr_assert_lt(s->nst, SA_STREAMS, "too many streams");
	st = &s->st[s->nst++];
	*st = (struct sa_stream){ .id = id, .name = name, .form = form };
	return st;
}

/* What `dbgctl logs --stream NAME ID` prints (asserted to succeed). */
char *
sa_stream_read(struct sa *s, long id, const char *name, size_t *len)
{
	struct h_res r;
	char ids[32];

	h_cli(&r, H_ARGS("logs", "--stream", name, h_idstr(id, ids,
	    sizeof ids)));
	cr_assert_eq(r.code, 0, "%s: logs --stream %s %ld: exit %d: %s; the "
	    "daemons' logs: %s", s->where, name, id, r.code, r.err,
	    sa_logs(s));
	free(r.err);
	*len = r.out_len;
	return r.out;
}

/* The numbered stream's next whole line into buf: its length. */
static size_t
sa_stream_line(struct sa_stream *st, char *buf, size_t len)
{
	if (st->form == SA_BEAT)
		return (size_t)snprintf(buf, len, "beat %ld twice %ld\n",
		    st->lines + 1, 2 * (st->lines + 1));
	return (size_t)snprintf(buf, len, "%c%ld%s", st->tag, st->lines,
	    st->eol);
}

/* Whether data[0..len) begins what, of wlen bytes (it may be cut). */
static bool
sa_stream_starts(const char *data, size_t len, const char *what,
    size_t wlen)
{
	return len < wlen && memcmp(data, what, len) == 0;
}

/*
 * Check data from where st's whole lines end against its numbered lines,
 * the last possibly cut, and an "end" line after a whole batch of an
 * SA_LINES stream; NULL if it is that, else what is wrong.
 */
static const char *
sa_stream_lines(struct sa_stream *st, const char *data, size_t len)
{
	char	line[64], end[16];
	size_t	n, e;
	bool	may_end;

	e = (size_t)snprintf(end, sizeof end, "end%s", st->eol);
	while (st->whole < len && !st->ended) {
		n = sa_stream_line(st, line, sizeof line);
		may_end = st->form == SA_LINES && st->lines % SA_BATCH == 0;
		if (len - st->whole >= n &&
		    memcmp(data + st->whole, line, n) == 0) {
			st->whole += n;
			st->lines++;
		} else if (may_end && len - st->whole >= e &&
		    memcmp(data + st->whole, end, e) == 0) {
			st->whole += e;
			st->ended = true;
		} else if (sa_stream_starts(data + st->whole, len - st->whole,
		    line, n) || (may_end && sa_stream_starts(data + st->whole,
		    len - st->whole, end, e)))
			return NULL;
		else
			return "not the next line";
	}
	return st->whole == len ? NULL : "bytes after the end line";
}

/* Check data against st's form; NULL if it holds, else what is wrong. */
static const char *
sa_stream_form(struct sa_stream *st, const char *data, size_t len)
{
	switch (st->form) {
	case SA_LINES:
	case SA_BEAT:
		return sa_stream_lines(st, data, len);
	case SA_EXACT:
		st->whole = len;
		return len <= st->want.len && memcmp(data, st->want.p, len) ==
		    0 ? NULL : "not what was sent to it";
	case SA_FREE:
		st->whole = len;
		return NULL;
	}
	return "a stream of no form";
}

/*
 * Read st's stream again: what was read before is its unchanged prefix,
 * and what follows goes on in its form; asserted.
 */
void
sa_stream_check(struct sa *s, struct sa_stream *st)
{
	const char *wrong;
	size_t len, at = st->whole;
	char *data = sa_stream_read(s, st->id, st->name, &len);

	cr_assert(len >= st->seen.len && memcmp(data, st->seen.p,
	    st->seen.len) == 0, "%s: session %ld's %s stream (%zu bytes) does "
	    "not start with the %zu bytes it had before: now %s; the daemons' "
	    "logs: %s", s->where, st->id, st->name, len, st->seen.len,
	    h_shown(data, len, 600), sa_logs(s));
	wrong = sa_stream_form(st, data, len);
	cr_assert_null(wrong, "%s: session %ld's %s stream: %s at offset %zu "
	    "(line %ld): %s; the daemons' logs: %s", s->where, st->id,
	    st->name, wrong, st->form == SA_EXACT ? at : st->whole, st->lines,
	    h_shown(data + at, len - at, 300), sa_logs(s));
	h_bytes_add(&st->seen, data + st->seen.len, len - st->seen.len);
	free(data);
}

/*
 * Read what is there of st's target: it starts at or past where the last
 * read ended (no byte read twice) and is the stream's bytes at its
 * offsets, as the log holds them once it has caught up.
 */
void
sa_stream_read_at(struct sa *s, struct sa_stream *st)
{
	const char *b64;
	unsigned char *data;
	size_t len = 0;
	long off, next;
	json_t *r;
	char ids[32];

	r = h_cli_json(H_ARGS("recv", "--max", "65536", "--timeout", "20000",
	    h_idstr(st->id, ids, sizeof ids)));
	off = (long)h_jint(r, "offset", -1);
	next = (long)h_jint(r, "next_offset", -1);
	b64 = h_jstr(r, "data") != NULL ? h_jstr(r, "data") : "";
	data = b64_decode(b64, strlen(b64), &len);
	json_decref(r);
	cr_assert(data != NULL && off >= st->read_next && next == off +
	    (long)len, "%s: a read of session %ld after the last one ended at "
	    "%ld gave %zu bytes at %ld to %ld", s->where, st->id,
	    st->read_next, len, off, next);
	/* The log may not hold yet what the read took: it soon does. */
	while (st->seen.len < (size_t)next) {
		sa_stream_check(s, st);
		if (st->seen.len < (size_t)next)
			h_nap(20);
	}
	cr_assert(memcmp(st->seen.p + off, data, len) == 0, "%s: the read "
	    "of session %ld at %ld gave %s, its log there holds %s", s->where,
	    st->id, off, h_shown((char *)data, len, 200),
	    h_shown(st->seen.p + off, len, 200));
	free(data);
	st->read_next = next;
	s->reads++;
}

/* expect text (exact, or a pattern) in st from offset from; asserted. */
static void
sa_stream_expect_how(struct sa *s, struct sa_stream *st, size_t from,
    const char *text, bool exact)
{
	char ids[32], froms[32];
	struct h_res r;

	snprintf(froms, sizeof froms, "%zu", from);
	h_idstr(st->id, ids, sizeof ids);
	if (exact)
		h_cli(&r, H_ARGS("expect", "--exact", "--stream", st->name,
		    "--from", froms, "--timeout", "20000", ids, text));
	else
		h_cli(&r, H_ARGS("expect", "--stream", st->name, "--from",
		    froms, "--timeout", "20000", ids, text));
	cr_assert_eq(r.code, 0, "%s: expect %s on session %ld's %s from %s: "
	    "exit %d: %s; the daemons' logs: %s", s->where, h_shown(text,
	    strlen(text), 80), st->id, st->name, froms, r.code, r.err,
	    sa_logs(s));
	h_run_free(&r);
}

/* expect --exact text in st's stream from offset from; asserted. */
void
sa_stream_expect(struct sa *s, struct sa_stream *st, size_t from,
    const char *text)
{
	sa_stream_expect_how(s, st, from, text, true);
}

/* expect the pattern re in st's stream from offset from; asserted. */
void
sa_stream_expect_re(struct sa *s, struct sa_stream *st, size_t from,
    const char *re)
{
	sa_stream_expect_how(s, st, from, re, false);
}

/* A line of a streamer after what it has shown comes: expect answers. */
void
sa_stream_expect_next(struct sa *s, struct sa_stream *st)
{
	char pat[64];

	snprintf(pat, sizeof pat, "%c%ld%s", st->tag, st->lines + SA_BATCH,
	    st->eol);
	sa_stream_expect(s, st, st->whole, pat);
}

/*
 * An expect of a line a second or so on in st, in flight across the
 * kill: it
 * rides out the restart, from where it began matching. (Once connected:
 * a client that finds no daemon at its start starts one, which only the
 * test does here.)
 */
void
sa_stream_expect_start(struct sa *s, struct sa_stream *st, struct h_proc *p)
{
	char ids[32], from[32], pat[64];

	sa_stream_check(s, st);
	snprintf(from, sizeof from, "%zu", st->whole);
	snprintf(pat, sizeof pat, "%c%ld%s", st->tag, st->lines +
	    SA_AHEAD * SA_BATCH, st->eol);
	cr_assert_eq(h_cli_start(p, H_ARGS("expect", "--exact", "--stream",
	    st->name, "--from", from, "--timeout", "30000", h_idstr(st->id,
	    ids, sizeof ids), pat)), 0, "start expect");
	sa_client_wait_connected(s, p, "expect");
}

/* The expect in flight across the kill found its line; asserted. */
void
sa_stream_expect_end(struct sa *s, struct h_proc *p)
{
	h_run_wait(p, H_RUN_BOUND * 2);
	cr_assert_eq(p->res.code, 0, "%s: an expect across the kill exited "
	    "%d: %s; the daemons' logs: %s", s->where, p->res.code, p->res.err,
	    sa_logs(s));
	h_run_free(&p->res);
	s->rode++;
}

/* Send a line to echo and wait for it to come back; asserted. */
void
sa_stream_echo(struct sa *s, const char *line)
{
	struct sa_stream st = { .id = s->echo, .name = "target" };
	char ids[32];
	struct h_res r;
	size_t len, from = s->sent.len;
	char *out;

	h_idstr(s->echo, ids, sizeof ids);
	h_cli(&r, H_ARGS("send", ids, line));
	cr_assert_eq(r.code, 0, "%s: send to echo: exit %d: %s; the daemons' "
	    "logs: %s", s->where, r.code, r.err, sa_logs(s));
	h_run_free(&r);
	sa_stream_expect(s, &st, from, line);
	h_bytes_add(&s->sent, line, strlen(line));
	out = sa_stream_read(s, s->echo, "target", &len);
	cr_assert(len == s->sent.len && memcmp(out, s->sent.p, len) == 0,
	    "%s: echo's target stream is not what it was sent, once, in order: "
	    "%s", s->where, h_shown(out, len, 400));
	free(out);
}
