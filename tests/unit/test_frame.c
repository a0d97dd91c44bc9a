/* Unit tests of the NDJSON framer (proto/frame.c). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

/* Lines a test's callback received, copied, and when to stop. */
struct frame_got {
	char	**lines;
	size_t	 *lens;
	size_t	  n;
	size_t	  cap;
	size_t	  stop_at;	/* stop at this line (from 1); 0: never */
	int	  stop_rv;
	int	  nul_ok;	/* every line was NUL-terminated at len */
};

/* Record one line in the frame_got passed as arg. */
static int
frame_test_cb(void *arg, char *line, size_t len)
{
	struct frame_got *g = arg;

	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 16;
		g->lines = realloc(g->lines, g->cap * sizeof *g->lines);
		g->lens = realloc(g->lens, g->cap * sizeof *g->lens);
		cr_assert_not_null(g->lines);
		cr_assert_not_null(g->lens);
	}
	if (line[len] != '\0')
		g->nul_ok = 0;
	g->lines[g->n] = malloc(len + 1);
	cr_assert_not_null(g->lines[g->n]);
	memcpy(g->lines[g->n], line, len + 1);
	g->lens[g->n] = len;
	g->n++;
	if (g->stop_at != 0 && g->n == g->stop_at)
		return g->stop_rv;
	return 0;
}

/* Start an empty frame_got. */
static void
frame_got_init(struct frame_got *g)
{
	memset(g, 0, sizeof *g);
	g->nul_ok = 1;
}

/* Free what a frame_got collected. */
static void
frame_got_free(struct frame_got *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free(g->lines[i]);
	free(g->lines);
	free(g->lens);
	memset(g, 0, sizeof *g);
}

/* Feed a C string in one piece. */
static int
frame_test_feed(struct frame *f, const char *s, struct frame_got *g)
{
	return frame_feed(f, s, strlen(s), frame_test_cb, g);
}

/* Assert line i of g is exactly the C string want. */
static void
frame_assert_line(struct frame_got *g, size_t i, const char *want)
{
	cr_assert_lt(i, g->n, "line %zu missing (got %zu lines)", i, g->n);
	cr_assert_eq(g->lens[i], strlen(want), "line %zu: len %zu, want %zu",
	    i, g->lens[i], strlen(want));
	cr_assert_str_eq(g->lines[i], want, "line %zu", i);
}

Test(frame, single_line)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, 0);
	frame_got_init(&g);
	cr_assert_eq(f.max, FRAME_MAX);
	cr_assert_eq(frame_test_feed(&f, "{\"a\":1}\n", &g), 0);
	cr_assert_eq(g.n, 1);
	frame_assert_line(&g, 0, "{\"a\":1}");
	cr_assert(g.nul_ok);
	cr_assert_eq(f.len, 0);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, many_lines_one_read)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	cr_assert_eq(frame_test_feed(&f, "a\nbb\nccc\ndddd\ntail", &g), 0);
	cr_assert_eq(g.n, 4);
	frame_assert_line(&g, 0, "a");
	frame_assert_line(&g, 1, "bb");
	frame_assert_line(&g, 2, "ccc");
	frame_assert_line(&g, 3, "dddd");
	cr_assert_eq(f.len, 4, "the partial \"tail\" stays buffered");
	cr_assert_eq(frame_test_feed(&f, "!\n", &g), 0);
	cr_assert_eq(g.n, 5);
	frame_assert_line(&g, 4, "tail!");
	cr_assert(g.nul_ok);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, split_byte_by_byte)
{
	static const char	*in =
	    "{\"id\":1}\r\n\n{\"id\":22}\n\r\nx\ry\r\r\nend\n";
	struct frame		 f;
	struct frame_got	 g;
	size_t			 i;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	for (i = 0; in[i] != '\0'; i++)
		cr_assert_eq(frame_feed(&f, in + i, 1, frame_test_cb, &g), 0);
	cr_assert_eq(g.n, 4);
	frame_assert_line(&g, 0, "{\"id\":1}");
	frame_assert_line(&g, 1, "{\"id\":22}");
	frame_assert_line(&g, 2, "x\ry\r");
	frame_assert_line(&g, 3, "end");
	cr_assert(g.nul_ok);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, split_at_every_offset)
{
	static const char	*in = "alpha\r\nbeta\n\ngamma\r\n\r\ndelta\n";
	size_t			 len = strlen(in), i, j;

	for (i = 0; i <= len; i++) {
		for (j = i; j <= len; j++) {
			struct frame		f;
			struct frame_got	g;

			frame_init(&f, 8);
			frame_got_init(&g);
			cr_assert_eq(frame_feed(&f, in, i, frame_test_cb, &g),
			    0);
			cr_assert_eq(frame_feed(&f, in + i, j - i,
			    frame_test_cb, &g), 0);
			cr_assert_eq(frame_feed(&f, in + j, len - j,
			    frame_test_cb, &g), 0);
			cr_assert_eq(g.n, 4, "splits %zu/%zu: %zu lines", i, j,
			    g.n);
			frame_assert_line(&g, 0, "alpha");
			frame_assert_line(&g, 1, "beta");
			frame_assert_line(&g, 2, "gamma");
			frame_assert_line(&g, 3, "delta");
			cr_assert_eq(f.len, 0);
			frame_got_free(&g);
			frame_free(&f);
		}
	}
}

Test(frame, crlf)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	cr_assert_eq(frame_test_feed(&f, "a\r\nb\r\r\nc\rd\n", &g), 0);
	cr_assert_eq(g.n, 3);
	frame_assert_line(&g, 0, "a");
	frame_assert_line(&g, 1, "b\r");	/* only one CR is removed */
	frame_assert_line(&g, 2, "c\rd");
	/* The CR and the LF in different reads. */
	cr_assert_eq(frame_test_feed(&f, "e\r", &g), 0);
	cr_assert_eq(g.n, 3);
	cr_assert_eq(frame_test_feed(&f, "\n", &g), 0);
	cr_assert_eq(g.n, 4);
	frame_assert_line(&g, 3, "e");
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, blank_and_lone_cr_lines_skipped)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	cr_assert_eq(frame_test_feed(&f, "\n\n\r\n", &g), 0);
	cr_assert_eq(g.n, 0);
	cr_assert_eq(frame_test_feed(&f, "\r", &g), 0);
	cr_assert_eq(frame_test_feed(&f, "\n", &g), 0);
	cr_assert_eq(g.n, 0, "a lone CR line split over two reads");
	cr_assert_eq(frame_test_feed(&f, "\n x\n\r\r\n\n", &g), 0);
	cr_assert_eq(g.n, 2);
	frame_assert_line(&g, 0, " x");	/* a space is content */
	frame_assert_line(&g, 1, "\r");	/* CR CR LF leaves one CR */
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, embedded_nul_kept)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	cr_assert_eq(frame_feed(&f, "a\0b\n", 4, frame_test_cb, &g), 0);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.lens[0], 3);
	cr_assert_eq(memcmp(g.lines[0], "a\0b", 4), 0);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, empty_feed)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	cr_assert_eq(frame_feed(&f, "", 0, frame_test_cb, &g), 0);
	cr_assert_eq(g.n, 0);
	cr_assert_eq(f.len, 0);
	frame_got_free(&g);
	frame_free(&f);
}

/* Make a buffer of n 'x' bytes followed by the string tail. */
static char *
frame_test_big(size_t n, const char *tail, size_t *len)
{
	size_t	 t = strlen(tail);
	char	*p;

	p = malloc(n + t + 1);
	cr_assert_not_null(p);
	memset(p, 'x', n);
	memcpy(p + n, tail, t + 1);
	*len = n + t;
	return p;
}

Test(frame, exactly_max_accepted)
{
	struct frame		f;
	struct frame_got	g;
	char			*p;
	size_t			 len;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	p = frame_test_big(FRAME_MAX, "\n", &len);
	cr_assert_eq(frame_feed(&f, p, len, frame_test_cb, &g), 0);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.lens[0], FRAME_MAX);
	cr_assert_eq(g.lines[0][FRAME_MAX - 1], 'x');
	cr_assert(g.nul_ok);
	free(p);

	/* The CR before the LF does not count. */
	p = frame_test_big(FRAME_MAX, "\r\n", &len);
	cr_assert_eq(frame_feed(&f, p, len, frame_test_cb, &g), 0);
	cr_assert_eq(g.n, 2);
	cr_assert_eq(g.lens[1], FRAME_MAX);
	free(p);

	/* Still alive and usable. */
	cr_assert_eq(frame_test_feed(&f, "ok\n", &g), 0);
	cr_assert_eq(g.n, 3);
	frame_assert_line(&g, 2, "ok");
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, exactly_max_in_pieces)
{
	struct frame		f;
	struct frame_got	g;
	char			*p;
	size_t			 len, off, n;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	p = frame_test_big(FRAME_MAX, "\r\n", &len);
	for (off = 0; off < len; off += n) {
		n = len - off < 4093 ? len - off : 4093;
		cr_assert_eq(frame_feed(&f, p + off, n, frame_test_cb, &g), 0,
		    "at offset %zu", off);
	}
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.lens[0], FRAME_MAX);
	free(p);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, one_byte_over_max)
{
	struct frame		f;
	struct frame_got	g;
	char			*p;
	size_t			 len;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	p = frame_test_big(FRAME_MAX + 1, "\n", &len);
	cr_assert_eq(frame_feed(&f, p, len, frame_test_cb, &g),
	    FRAME_OVERFLOW);
	cr_assert_eq(g.n, 0);
	cr_assert(f.dead);
	free(p);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, one_byte_over_max_crlf)
{
	struct frame		f;
	struct frame_got	g;
	char			*p;
	size_t			 len;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	p = frame_test_big(FRAME_MAX + 1, "\r\n", &len);
	cr_assert_eq(frame_feed(&f, p, len, frame_test_cb, &g),
	    FRAME_OVERFLOW);
	cr_assert_eq(g.n, 0);
	free(p);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, over_max_split_before_lf)
{
	struct frame		f;
	struct frame_got	g;
	char			*p;
	size_t			 len;

	/* max content, then the over-long byte and the LF in the next read. */
	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	p = frame_test_big(FRAME_MAX, "", &len);
	cr_assert_eq(frame_feed(&f, p, len, frame_test_cb, &g), 0);
	cr_assert_eq(frame_test_feed(&f, "y\n", &g), FRAME_OVERFLOW);
	cr_assert_eq(g.n, 0);
	free(p);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, overflow_detected_before_lf)
{
	struct frame		f;
	struct frame_got	g;
	char			*p;
	size_t			 len;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	/* max + 1 bytes may still end as content + CR: not yet an error. */
	p = frame_test_big(FRAME_MAX + 1, "", &len);
	cr_assert_eq(frame_feed(&f, p, len, frame_test_cb, &g), 0);
	cr_assert_not(f.dead);
	/* One more byte without any LF is already hopeless. */
	cr_assert_eq(frame_test_feed(&f, "x", &g), FRAME_OVERFLOW);
	cr_assert(f.dead);
	cr_assert_eq(g.n, 0);
	free(p);

	/* And in one read, a large blob without LF fails at once. */
	frame_got_free(&g);
	frame_free(&f);
	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	p = frame_test_big(3 * FRAME_MAX, "", &len);
	cr_assert_eq(frame_feed(&f, p, len, frame_test_cb, &g),
	    FRAME_OVERFLOW);
	cr_assert_leq(f.cap, FRAME_MAX + 2, "never buffers past the limit");
	free(p);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, max_plus_cr_then_lf_accepted)
{
	struct frame		f;
	struct frame_got	g;
	char			*p;
	size_t			 len;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	p = frame_test_big(FRAME_MAX, "\r", &len);
	cr_assert_eq(frame_feed(&f, p, len, frame_test_cb, &g), 0);
	cr_assert_eq(frame_test_feed(&f, "\n", &g), 0);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.lens[0], FRAME_MAX);
	free(p);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, dead_after_overflow)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, 4);
	frame_got_init(&g);
	cr_assert_eq(frame_test_feed(&f, "abcd\nabcde\nok\n", &g),
	    FRAME_OVERFLOW);
	cr_assert_eq(g.n, 1, "lines before the long one are delivered");
	frame_assert_line(&g, 0, "abcd");
	cr_assert_eq(frame_test_feed(&f, "ok\n", &g), FRAME_OVERFLOW);
	cr_assert_eq(frame_test_feed(&f, "", &g), FRAME_OVERFLOW);
	cr_assert_eq(g.n, 1);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, small_max)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, 1);
	frame_got_init(&g);
	cr_assert_eq(frame_test_feed(&f, "a\r\nb\n\n", &g), 0);
	cr_assert_eq(g.n, 2);
	cr_assert_eq(frame_test_feed(&f, "ab", &g), 0);
	cr_assert_eq(frame_test_feed(&f, "\n", &g), FRAME_OVERFLOW);
	cr_assert_eq(g.n, 2);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, callback_stops_feed)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	g.stop_at = 2;
	g.stop_rv = 42;
	cr_assert_eq(frame_test_feed(&f, "a\nb\nc\nd\n", &g), 42);
	cr_assert_eq(g.n, 2, "no line after the stop");
	frame_assert_line(&g, 1, "b");
	cr_assert_eq(f.used, 4, "used %zu: the rest \"c\\nd\\n\" is the "
	    "caller's", f.used);
	cr_assert_not(f.dead);
	/* The framer stays usable; the unconsumed rest is not replayed. */
	g.stop_at = 0;
	cr_assert_eq(frame_test_feed(&f, "e\n", &g), 0);
	cr_assert_eq(f.used, 2, "a whole feed is used");
	cr_assert_eq(g.n, 3);
	frame_assert_line(&g, 2, "e");
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, callback_negative_stop)
{
	struct frame		f;
	struct frame_got	g;

	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	g.stop_at = 1;
	g.stop_rv = -1;
	cr_assert_eq(frame_test_feed(&f, "x\ny\n", &g), -1);
	cr_assert_eq(g.n, 1);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, long_line_byte_by_byte_is_linear, .timeout = 20)
{
	struct frame		f;
	struct frame_got	g;
	char			*p;
	size_t			 len, i;

	/* Quadratic rescanning would take minutes here. */
	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	p = frame_test_big(FRAME_MAX, "\n", &len);
	for (i = 0; i < len; i++)
		cr_assert_eq(frame_feed(&f, p + i, 1, frame_test_cb, &g), 0);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.lens[0], FRAME_MAX);
	free(p);
	frame_got_free(&g);
	frame_free(&f);
}

Test(frame, many_small_lines_in_chunks)
{
	struct frame		f;
	struct frame_got	g;
	char			*buf, *q;
	size_t			 i, n = 100000, off, len, chunk;

	buf = malloc(n * 16);
	cr_assert_not_null(buf);
	q = buf;
	for (i = 0; i < n; i++)
		q += sprintf(q, "{\"id\":%zu}\n", i);
	len = q - buf;
	frame_init(&f, FRAME_MAX);
	frame_got_init(&g);
	for (off = 0; off < len; off += chunk) {
		chunk = len - off < 7 ? len - off : 7;
		cr_assert_eq(frame_feed(&f, buf + off, chunk, frame_test_cb,
		    &g), 0);
	}
	cr_assert_eq(g.n, n);
	frame_assert_line(&g, 0, "{\"id\":0}");
	frame_assert_line(&g, n - 1, "{\"id\":99999}");
	free(buf);
	frame_got_free(&g);
	frame_free(&f);
}

/* Whether the line handed over is a cut one, for frame_cut_cb's arg. */
static struct frame *frame_test_cutting;
static int frame_test_cuts;

/* Count the cut lines as they come, then keep every line. */
static int
frame_cut_cb(void *arg, char *line, size_t len)
{
	frame_test_cuts += frame_test_cutting->cut;
	return frame_test_cb(arg, line, len);
}

/*
 * After frame_cut, an overlong line is handed over once, cut to max bytes,
 * and the rest of it dropped up to its LF, however it is split; the next
 * lines come as usual and the feed never fails.
 */
Test(frame, cut_lines_go_on)
{
	static const char	*in = "abcd\nabcdefghij\nok\nxyzzy\r\nabcdefg";
	struct frame		 f;
	struct frame_got	 g;
	size_t			 i, step;

	for (step = 1; step <= strlen(in); step++) {
		frame_init(&f, 4);
		frame_cut(&f);
		frame_got_init(&g);
		frame_test_cutting = &f;
		frame_test_cuts = 0;
		for (i = 0; i < strlen(in); i += step)
			cr_assert_eq(frame_feed(&f, in + i, step < strlen(in)
			    - i ? step : strlen(in) - i, frame_cut_cb, &g), 0,
			    "step %zu", step);
		cr_assert_eq(frame_feed(&f, "hij\nend\n", 8, frame_cut_cb,
		    &g), 0);
		cr_assert_eq(g.n, 6, "step %zu: %zu lines", step, g.n);
		frame_assert_line(&g, 0, "abcd");
		frame_assert_line(&g, 1, "abcd");
		frame_assert_line(&g, 2, "ok");
		frame_assert_line(&g, 3, "xyzz");
		frame_assert_line(&g, 4, "abcd");
		frame_assert_line(&g, 5, "end");
		cr_assert_eq(frame_test_cuts, 3, "step %zu: %d cut", step,
		    frame_test_cuts);
		cr_assert_eq(f.cut, 0);
		cr_assert(g.nul_ok);
		frame_got_free(&g);
		frame_free(&f);
	}
}

/* The frame a frame_take test reads, and the lines it took. */
struct frame_taken {
	struct frame	*f;
	char		*lines[4];
	size_t		 n;
};

/* Take every line's buffer, as a reader that keeps a large reply does. */
static int
frame_take_cb(void *arg, char *line, size_t len)
{
	struct frame_taken *t = arg;

	cr_assert_lt(t->n, 4);
	cr_assert_eq(line[len], '\0');
	t->lines[t->n] = frame_take(t->f);
	cr_assert_eq(t->lines[t->n], line, "the line is the frame's buffer");
	t->n++;
	return 0;
}

Test(frame, taken_lines_stay_and_later_lines_come)
{
	struct frame		f;
	struct frame_taken	t = { .f = &f };
	size_t			i;

	frame_init(&f, 0);
	cr_assert_eq(frame_feed(&f, "one\ntwo\nthr", 11, frame_take_cb, &t), 0);
	cr_assert_eq(frame_feed(&f, "ee\n", 3, frame_take_cb, &t), 0);
	cr_assert_eq(t.n, 3);
	cr_assert_str_eq(t.lines[0], "one");
	cr_assert_str_eq(t.lines[1], "two");
	cr_assert_str_eq(t.lines[2], "three");
	for (i = 0; i < t.n; i++)
		free(t.lines[i]);
	frame_free(&f);
}
