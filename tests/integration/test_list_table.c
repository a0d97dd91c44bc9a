/*
 * The table of dbgctl list as a user reads it: its cells against what
 * dbgctl --json list holds for the same sessions (odd arguments shown
 * safely, a pid that never was as "-", an ended session's age fixed, a
 * kind without a target "-" in TARGET), and every page of a table longer
 * than one.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(list_table, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 180 * H_SLOW);

/* The columns of the table, as its header names them. */
#define TABLE_COLS	8
static const char *const table_header[TABLE_COLS] = { "ID", "NAME", "KIND",
    "STATE", "TARGET", "PID", "AGE", "COMMAND" };

/* One line of the table cut into its cells (malloc'd). */
struct table_row {
	char	*cell[TABLE_COLS];
};

/* The lines of dbgctl list, the header first. */
struct table {
	struct table_row	*rows;
	size_t			 n;
};

/* Run dbgctl list and cut its lines into cells at the header's columns. */
static void
table_read(struct table *t)
{
	struct h_res	 r;
	size_t		 off[TABLE_COLS] = { 0 }, j, len;
	char		*line, *next, *at;

	h_cli(&r, H_ARGS("list"));
	cr_assert_eq(r.code, 0, "dbgctl list: exit %d (%s)", r.code, r.err);
	cr_assert(r.out_len > 0 && r.out[r.out_len - 1] == '\n', "dbgctl "
	    "list: not whole lines: %s", h_shown(r.out, r.out_len, 400));
	t->n = 0;
	t->rows = calloc((size_t)h_count(r.out, r.out_len, "\n"),
	    sizeof *t->rows);
	for (line = r.out; *line != '\0'; line = next) {
		next = strchr(line, '\n');
		*next++ = '\0';
		len = strlen(line);
		for (j = 0; t->n == 0 && j < TABLE_COLS; j++) {
			at = strstr(j == 0 ? line : line + off[j - 1] + 1,
			    table_header[j]);
			cr_assert_not_null(at, "no %s in the header: %s",
			    table_header[j], line);
			off[j] = (size_t)(at - line);
		}
		cr_assert_geq(len, off[TABLE_COLS - 1], "a short line: %s", line);
		for (j = 0; j < TABLE_COLS - 1; j++) {
			cr_assert(line[off[j + 1] - 1] == ' ' &&
			    line[off[j + 1] - 2] == ' ', "columns not aligned "
			    "at %s: %s", table_header[j + 1], line);
			len = off[j + 1] - 2 - off[j];
			while (len > 0 && line[off[j] + len - 1] == ' ')
				len--;
			t->rows[t->n].cell[j] = strndup(line + off[j], len);
		}
		t->rows[t->n++].cell[j] = strdup(line + off[j]);
	}
	h_run_free(&r);
}

/* Free the table's cells. */
static void
table_free(struct table *t)
{
	size_t	i, j;

	for (i = 0; i < t->n; i++)
		for (j = 0; j < TABLE_COLS; j++)
			free(t->rows[i].cell[j]);
	free(t->rows);
}

/* The argv of a row as the table should show it: control bytes as '?'. */
static char *
table_argv_shown(json_t *argv)
{
	struct h_bytes	 b = { calloc(1, 1), 0 };
	json_t		*v;
	size_t		 i;
	char		*p;

	json_array_foreach(argv, i, v) {
		if (i > 0)
			h_bytes_add(&b, " ", 1);
		h_bytes_add(&b, json_string_value(v),
		    strlen(json_string_value(v)));
	}
	for (p = b.p; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return b.p;
}

/* Assert a cell is want (a number, or "-" for anything else). */
static void
table_expect_cell(const char *cell, json_t *want, size_t row, const char *col)
{
	char	buf[32];

	if (json_is_integer(want))
		snprintf(buf, sizeof buf, "%lld", (long long)
		    json_integer_value(want));
	else
		snprintf(buf, sizeof buf, "%s", json_is_string(want) ?
		    json_string_value(want) : "-");
	cr_assert_str_eq(cell, buf, "row %zu: %s is \"%s\", want \"%s\"", row,
	    col, cell, buf);
}

/* Assert a TARGET cell: "faulted WHAT", else the target's state, else "-". */
static void
table_expect_target(const char *cell, json_t *s, size_t row)
{
	char	buf[128];

	if (h_jstr(s, "faulted") != NULL)
		snprintf(buf, sizeof buf, "faulted %s", h_jstr(s, "faulted"));
	else
		snprintf(buf, sizeof buf, "%s", h_jstr(s, "target.state") ?
		    h_jstr(s, "target.state") : "-");
	cr_assert_str_eq(cell, buf, "row %zu: TARGET is \"%s\", want \"%s\"",
	    row, cell, buf);
}

/* Assert the table holds the sessions of `dbgctl --json list`, in order. */
static void
table_expect_json(const struct table *t)
{
	json_t	*j = h_cli_json(H_ARGS("list")), *s;
	char	*argv;
	size_t	 i;

	cr_assert_eq(t->n - 1, json_array_size(h_jpath(j, "sessions")),
	    "the table has %zu rows, --json %zu", t->n - 1,
	    json_array_size(h_jpath(j, "sessions")));
	json_array_foreach(h_jpath(j, "sessions"), i, s) {
		table_expect_cell(t->rows[i + 1].cell[0], h_jpath(s, "id"), i,
		    "ID");
		table_expect_cell(t->rows[i + 1].cell[1], h_jpath(s, "name"), i,
		    "NAME");
		table_expect_cell(t->rows[i + 1].cell[2], h_jpath(s, "kind"), i,
		    "KIND");
		table_expect_cell(t->rows[i + 1].cell[3], h_jpath(s, "state"), i,
		    "STATE");
		table_expect_target(t->rows[i + 1].cell[4], s, i);
		table_expect_cell(t->rows[i + 1].cell[5], h_jpath(s, "pid"), i,
		    "PID");
		argv = table_argv_shown(h_jpath(s, "argv"));
		cr_assert_str_eq(t->rows[i + 1].cell[7], argv, "row %zu: "
		    "COMMAND", i);
		free(argv);
	}
	json_decref(j);
}

/* The table row of session id, or NULL. */
static struct table_row *
table_find(const struct table *t, long id)
{
	char	buf[32];
	size_t	i;

	snprintf(buf, sizeof buf, "%ld", id);
	for (i = 1; i < t->n; i++)
		if (strcmp(t->rows[i].cell[0], buf) == 0)
			return &t->rows[i];
	return NULL;
}

/*
 * Launch n sessions of params over c, 50 requests in flight at a time;
 * each one's id into ids, from its result or from a failure's data.
 */
static void
table_launch(struct h_conn *c, const char *params, long *ids, int n)
{
	struct h_bytes	 b;
	json_t		*r;
	long		 first, k;
	char		*req;
	int		 i, m, len;

	for (i = 0; i < n; i += m) {
		m = n - i < 50 ? n - i : 50;
		b = (struct h_bytes){ calloc(1, 1), 0 };
		first = c->next_id + 1;
		for (k = 0; k < m; k++) {
			len = asprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
			    "\"method\":\"launch\",\"params\":%s}\n",
			    ++c->next_id, params);
			cr_assert_gt(len, 0, "asprintf");
			h_bytes_add(&b, req, (size_t)len);
			free(req);
		}
		cr_assert_eq(h_conn_send(c, b.p, b.len, H_RUN_BOUND), 0,
		    "send launches");
		free(b.p);
		for (k = 0; k < m; k++) {
			r = h_conn_recv(c, H_RUN_BOUND);
			cr_assert_not_null(r, "launch %ld of %d: no reply",
			    i + k, n);
			cr_assert(h_jint(r, "id", -1) >= first &&
			    h_jint(r, "id", -1) < first + m, "a reply to what "
			    "was not asked: %s", json_dumps(r, 0));
			ids[i + h_jint(r, "id", -1) - first] = (long)h_jint(r,
			    "result.id", h_jint(r, "error.data.session", -1));
			json_decref(r);
		}
	}
}

/* Read the table until session id's AGE is past "1s" (asserted in bound). */
static void
table_read_aged(struct table *t, long id)
{
	double			 end = h_now() + H_WAIT_BOUND / 1000.0;
	struct table_row	*row;

	for (;;) {
		table_read(t);
		row = table_find(t, id);
		cr_assert_not_null(row, "no row for session %ld", id);
		if (strcmp(row->cell[6], "0s") != 0 &&
		    strcmp(row->cell[6], "1s") != 0)
			return;
		cr_assert_lt(h_now(), end, "session %ld's AGE stays %s", id,
		    row->cell[6]);
		table_free(t);
		h_nap(200);
	}
}

/* Assert a cell is a positive number. */
static void
table_expect_number(const char *cell, const char *what)
{
	char	*end;

	cr_assert(strtol(cell, &end, 10) > 0 && *end == '\0', "%s: \"%s\" is "
	    "no pid", what, cell);
}

/*
 * A named session with a tab, a newline, an escape, a quote, a backslash,
 * a DEL and UTF-8 in its argv; one that ended; one whose program never
 * ran. The table shows the name as is, control bytes as '?', quote,
 * backslash and UTF-8 as they are, "-" for the pid that never was, and an
 * ended session's age from its start to its end, not to now; its rows
 * are those of --json list.
 */
Test(list_table, the_table_shows_what_json_list_holds)
{
	struct h_conn		 c;
	struct table		 t;
	struct table_row	*row;
	long			 odd, done, never;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	table_launch(&c, "{\"kind\":\"exec\",\"name\":\"odd-args_1.x\","
	    "\"argv\":[\"sh\",\"-c\",\"sleep 100\",\"t\\tn\\nq\\\"b\\\\ "
	    "\\u001b[1m\\u007f caf\xc3\xa9 \\ud83d\\ude00\"]}", &odd, 1);
	table_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"true\"]}", &done, 1);
	table_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"/nonexistent/dbgctl-"
	    "list\"]}", &never, 1);
	cr_assert(odd > 0 && done > 0 && never > 0, "ids %ld %ld %ld", odd,
	    done, never);
	h_conn_close(&c);
	h_cli_expect_exit(done, 0, H_WAIT_BOUND, "true");
	h_cli_expect_state(never, "failed", "a program that does not exist");
	table_read_aged(&t, odd);
	row = table_find(&t, odd);
	cr_assert_str_eq(row->cell[1], "odd-args_1.x", "NAME");
	cr_assert_str_eq(row->cell[2], "exec", "KIND");
	cr_assert_str_eq(row->cell[3], "running", "STATE");
	cr_assert_str_eq(row->cell[4], "-", "TARGET of an exec session");
	table_expect_number(row->cell[5], "PID of a running session");
	cr_assert_str_eq(row->cell[7], "sh -c sleep 100 t?n?q\"b\\ ?[1m? "
	    "caf\xc3\xa9 \xf0\x9f\x98\x80", "COMMAND");
	row = table_find(&t, done);
	cr_assert_str_eq(row->cell[1], "-", "no NAME");
	cr_assert_str_eq(row->cell[3], "exited", "STATE");
	table_expect_number(row->cell[5], "PID of an ended session");
	cr_assert(strcmp(row->cell[6], "0s") == 0 ||
	    strcmp(row->cell[6], "1s") == 0, "the AGE of true grew to %s",
	    row->cell[6]);
	row = table_find(&t, never);
	cr_assert_str_eq(row->cell[3], "failed", "STATE");
	cr_assert_str_eq(row->cell[5], "-", "PID of a program never run");
	cr_assert_str_eq(row->cell[7], "/nonexistent/dbgctl-list", "COMMAND");
	table_expect_json(&t);
	table_free(&t);
}

/* What status says of session id (malloc'd), for a failure's message. */
static char *
table_status_text(long id)
{
	struct h_res	 r;
	char		 ids[32], *text;

	h_idstr(id, ids, sizeof ids);
	h_cli(&r, H_ARGS("status", ids));
	text = strdup(r.out != NULL ? r.out : "");
	h_run_free(&r);
	return text;
}

/* Poll list until no session of the n is still starting or running. */
static bool
table_all_ended(void *arg)
{
	struct h_conn	*c = arg;
	json_t		*r, *row;
	const char	*state;
	size_t		 i;
	bool		 ended = true;

	r = h_conn_call(c, "list", "{\"fields\":[\"state\"],\"limit\":10000}",
	    H_RUN_BOUND);
	cr_assert_not_null(r, "list: no reply");
	json_array_foreach(h_jpath(r, "result.sessions"), i, row) {
		state = h_jstr(row, "state");
		if (strcmp(state, "exited") != 0 && strcmp(state, "failed") != 0)
			ended = false;
	}
	json_decref(r);
	return ended;
}

/*
 * 1500 sessions (more than a page of 1000): dbgctl list prints all of
 * them under its header, ids increasing, as --json list has them.
 */
Test(list_table, every_page_of_1500_sessions_is_printed)
{
	enum { N = 1500 };
	struct h_conn	 c;
	struct table	 t;
	json_t		*r;
	long		*ids = calloc(N, sizeof *ids), prev = 0, id;
	double		 t0 = h_now();
	size_t		 i;

	/* The daemon forgets ended sessions past 1000 by default. */
	h_ctx_env_add("DBGCTLD_KEEP_ENDED=2000");
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	table_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"/bin/true\"]}", ids,
	    N);
	h_note("1500 launches took %.1f s", h_now() - t0);
	for (i = 0; i < N; i++)
		cr_assert_gt(ids[i], 0, "launch %zu failed", i);
	cr_assert(h_wait_for(table_all_ended, &c, 60000), "sessions still run");
	r = h_conn_call(&c, "list", "{\"fields\":[\"state\"]}", H_RUN_BOUND);
	cr_assert_eq(json_array_size(h_jpath(r, "result.sessions")), 1000,
	    "a page's rows by default");
	cr_assert_eq(h_jint(r, "result.next_offset", -1), 1000, "next_offset");
	cr_assert_eq(h_jint(r, "result.total", -1), N, "total");
	json_decref(r);
	h_conn_close(&c);
	t0 = h_now();
	table_read(&t);
	h_note("dbgctl list of 1500 took %.2f s", h_now() - t0);
	cr_assert_eq(t.n, N + 1, "dbgctl list printed %zu lines", t.n);
	for (i = 1; i < t.n; i++) {
		id = strtol(t.rows[i].cell[0], NULL, 10);
		cr_assert_gt(id, prev, "line %zu: id %ld after %ld", i, id, prev);
		prev = id;
		cr_assert_str_eq(t.rows[i].cell[3], "exited", "line %zu: session "
		    "%ld is %s: %s", i, id, t.rows[i].cell[3],
		    table_status_text(id));
	}
	table_expect_json(&t);
	table_free(&t);
	free(ids);
}

/*
 * 300 sessions whose arguments take 3000 bytes each: dbgctl list asks for
 * pages of as many rows as fit a reply, which the daemon cuts by their
 * bytes, not at a thousand rows; the table still shows every session
 * once, in id order, each with its whole command.
 */
Test(list_table, every_page_cut_by_its_bytes_is_printed)
{
	enum { N = 300, ARG = 3000 };
	struct h_conn	 c;
	struct table	 t;
	json_t		*r;
	long		*ids = calloc(N, sizeof *ids), prev = 0, id;
	char		*params, arg[ARG + 1], want[ARG + 16];
	size_t		 i;

	memset(arg, 'a', ARG);
	arg[ARG] = '\0';
	cr_assert_gt(asprintf(&params, "{\"kind\":\"exec\",\"argv\":[\"true\","
	    "\"%s\"]}", arg), 0, "asprintf");
	snprintf(want, sizeof want, "true %s", arg);
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	table_launch(&c, params, ids, N);
	for (i = 0; i < N; i++)
		cr_assert_gt(ids[i], 0, "launch %zu failed", i);
	cr_assert(h_wait_for(table_all_ended, &c, 60000), "sessions still run");
	r = h_conn_call(&c, "list", "{\"fields\":[\"argv\"],\"limit\":10000}",
	    H_RUN_BOUND);
	cr_assert_lt(json_array_size(h_jpath(r, "result.sessions")), N,
	    "test setup: the rows of %d sessions fit one reply", N);
	cr_assert_gt(h_jint(r, "result.next_offset", -1), 0, "next_offset");
	json_decref(r);
	h_conn_close(&c);
	table_read(&t);
	cr_assert_eq(t.n, N + 1, "dbgctl list printed %zu lines", t.n);
	for (i = 1; i < t.n; i++) {
		id = strtol(t.rows[i].cell[0], NULL, 10);
		cr_assert_gt(id, prev, "line %zu: id %ld after %ld", i, id, prev);
		prev = id;
		cr_assert_str_eq(t.rows[i].cell[7], want, "line %zu: session "
		    "%ld's COMMAND", i, id);
	}
	table_free(&t);
	free(params);
	free(ids);
}

/* The table's text of a list page, asked for over c (malloc'd). */
static char *
table_page(struct h_conn *c, const char *params)
{
	json_t	*r = h_conn_call(c, "list", params, H_RUN_BOUND);
	char	*text, *reply;

	if (h_jstr(r, "result.table") == NULL) {
		reply = r != NULL ? json_dumps(r, JSON_COMPACT) : NULL;
		cr_assert_fail("list %s: no table: %s", params, reply != NULL ?
		    h_shown(reply, strlen(reply), 600) : "no reply");
	}
	text = strdup(h_jstr(r, "result.table"));
	json_decref(r);
	return text;
}

/* Whether the n bytes at s are whole UTF-8 characters. */
static bool
table_utf8_whole(const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		k = (unsigned char)s[i] < 0x80 ? 1 : (unsigned char)s[i] < 0xe0 ?
		    2 : (unsigned char)s[i] < 0xf0 ? 3 : 4;
		if (i + k > n)
			return false;
		i += k;
	}
	return true;
}

/*
 * Assert cut, the table asked for with width, is whole's lines cut to
 * width bytes, or one less where width would split a character.
 */
static void
table_expect_cut(const char *cut, const char *whole, size_t width)
{
	const char	*line, *next, *wline = whole;
	size_t		 len, wlen;

	for (line = cut; *line != '\0'; line = next) {
		next = strchr(line, '\n') + 1;
		len = (size_t)(next - 1 - line);
		wlen = (size_t)(strchr(wline, '\n') - wline);
		cr_assert(len <= wlen && strncmp(line, wline, len) == 0, "cut "
		    "line \"%.*s\" does not start \"%.*s\"", (int)len, line,
		    (int)wlen, wline);
		cr_assert(len == wlen || len == width || (len == width - 1 &&
		    ((unsigned char)wline[width] & 0xc0) == 0x80), "line "
		    "of %zu bytes (whole %zu) for a width of %zu: %.*s", len,
		    wlen, width, (int)len, line);
		cr_assert(table_utf8_whole(line, len), "a character split at "
		    "a width of %zu: %.*s", width, (int)len, line);
		wline += wlen + 1;
	}
	cr_assert_eq(*wline, '\0', "the cut table has fewer lines");
}

/*
 * The table the daemon writes (list's table): pages of one line each make
 * the whole table, the header only on the first; with width 110 or 111
 * every line is the start of its whole line, that many bytes or one less
 * where that would split a character (a command of two-byte characters
 * meets both cases); and dbgctl list on a terminal of 110 columns prints
 * exactly the lines cut to 110. The AGE column ticks each second, so all
 * of it is taken again until the table was the same before and after.
 */
Test(list_table, lines_are_cut_to_the_terminal_and_pages_line_up)
{
	struct h_conn	 c;
	struct h_pty	 p;
	long		 id[3];
	char		*whole, *cut, *cut111, *page, *line, *next, *again;
	char		 params[128];
	struct h_bytes	 pages = { NULL, 0 };
	size_t		 i, len;
	int		 tries;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	table_launch(&c, "{\"kind\":\"exec\",\"name\":\"wide-name-longer-than-its-header\",\"argv\":[\"sh\","
	    "\"-c\",\"sleep 100\",\"x\",\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
	    "\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
	    "\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
	    "\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
	    "\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"]}",
	    &id[0], 1);
	table_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"sh\",\"-c\","
	    "\"sleep 100\",\"y\",\"a\\\"b\\\\c\"]}", &id[1], 1);
	table_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"sh\",\"-c\","
	    "\"sleep 100\"]}", &id[2], 1);
	for (i = 0; i < 3; i++)
		cr_assert_gt(id[i], 0, "launch %zu failed", i);
	for (tries = 0;; tries++) {
		cr_assert_lt(tries, 10, "the table changed while it was read, "
		    "10 times");
		whole = table_page(&c, "{\"table\":true}");
		free(pages.p);
		pages.p = calloc(1, 1);
		pages.len = 0;
		for (i = 0; i < 3; i++) {
			snprintf(params, sizeof params, "{\"table\":true,"
			    "\"limit\":1,\"offset\":%zu}", i);
			page = table_page(&c, params);
			cr_assert(i == 0 || strstr(page, "ID ") == NULL, "page "
			    "%zu has the header: %s", i, page);
			h_bytes_add(&pages, page, strlen(page));
			free(page);
		}
		cut111 = table_page(&c, "{\"table\":true,\"width\":111}");
		cut = table_page(&c, "{\"table\":true,\"width\":110}");
		/* The client asks for its terminal's width and prints the lines. */
		h_pty_open(&p, 30, 110);
		h_pty_spawn(&p, H_ARGS("list"));
		h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "list on a pty");
		again = table_page(&c, "{\"table\":true}");
		if (strcmp(again, whole) == 0)
			break;
		free(whole);
		free(cut111);
		free(cut);
		free(again);
		h_pty_close(&p);
	}
	free(again);
	h_conn_close(&c);
	cr_assert(strncmp(whole, "ID  ", 4) == 0, "the header first: %s",
	    whole);
	cr_assert_not_null(strstr(whole, "sh -c sleep 100 y a\"b\\c\n"),
	    "a command's quote and backslash as they are: %s", whole);
	cr_assert_str_eq(pages.p, whole, "pages of one line each, one after "
	    "another, are not the whole table");
	table_expect_cut(cut111, whole, 111);
	free(cut111);
	table_expect_cut(cut, whole, 110);
	line = strstr(cut, "wide-name-");
	cr_assert(line != NULL && strstr(line, "x \xc3\xa9") != NULL &&
	    strstr(line, "\xc3\xa9\n") != NULL, "test setup: wide's line is "
	    "not cut among its two-byte characters: %s", cut);
	for (line = cut; *line != '\0'; line = next) {
		next = strchr(line, '\n') + 1;
		len = (size_t)(next - 1 - line);
		cr_assert(memmem(p.seen.p, p.seen.len, line, len) != NULL,
		    "the terminal does not show \"%.*s\": %s", (int)len, line,
		    h_pty_screen(&p));
	}
	h_pty_close(&p);
	free(pages.p);
	free(whole);
	free(cut);
}
