/*
 * list: a table of every session of the daemon's life. The daemon writes
 * the table's lines and the client prints them, so thousands of rows are
 * neither written as JSON rows nor read back into cells; --json asks for
 * whole rows and prints each as the daemon wrote it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"
#include "scan.h"

/*
 * Rows a page may hold at most (the daemon's LIST_LIMIT_MAX): a page is
 * cut to what fits a reply anyway, so asking for the most spares the
 * daemon a walk to the next page's start and a round trip a thousand rows.
 */
#define CMD_LIST_LIMIT	10000

/* The bytes of one piece of the arena --json's rows are kept in. */
#define CMD_LIST_PIECE	65536

/* One row of --json list: its text, kept in the table's arena. */
struct cmd_list_row {
	const char	*text;
};

/* A piece of the arena: rows are copied in one after another. */
struct cmd_list_piece {
	struct cmd_list_piece	*next;
	size_t			 len;
	size_t			 cap;
	char			 text[];
};

/*
 * What the pages brought: --json's rows, kept in an arena (thousands of
 * rows are neither malloc'd nor freed one by one), or the table's lines.
 */
struct cmd_list_table {
	struct cmd_list_row	*rows;
	size_t			 n;
	size_t			 cap;
	struct cmd_list_piece	*arena;
	bool			 json;	/* rows kept whole, as text */
	char			**lines; /* a page of the table's lines each */
	size_t			 nlines;
	int			 width;	/* the terminal's columns, 0 for none */
};

/* Keep n bytes of s, NUL-terminated, in the table's arena. */
static const char *
cmd_list_keep(struct cmd_list_table *t, const char *s, size_t n)
{
	struct cmd_list_piece	*p = t->arena;
	size_t			 cap;
	char			*out;

	if (p == NULL || p->cap - p->len < n + 1) {
		cap = n + 1 > CMD_LIST_PIECE ? n + 1 : CMD_LIST_PIECE;
		if ((p = malloc(sizeof *p + cap)) == NULL)
			client_fatal("out of memory");
		p->next = t->arena;
		p->len = 0;
		p->cap = cap;
		t->arena = p;
	}
	out = p->text + p->len;
	memcpy(out, s, n);
	out[n] = '\0';
	p->len += n + 1;
	return out;
}

/* Free the table's rows and arena. */
static void
cmd_list_free(struct cmd_list_table *t)
{
	struct cmd_list_piece *p;

	while ((p = t->arena) != NULL) {
		t->arena = p->next;
		free(p);
	}
	free(t->rows);
	while (t->nlines > 0)
		free(t->lines[--t->nlines]);
	free(t->lines);
}

/*
 * Step into the next member of an object, as scan_member does, its key
 * copied into key (cut to len) rather than malloc'd: a page of rows has
 * a dozen keys a row.
 */
static bool
cmd_list_key(struct scan *sc, bool *first, char *key, size_t len)
{
	const char	*k;
	char		*any;
	size_t		 n;

	if (scan_take(sc, '}'))
		return false;
	if (!*first && !scan_take(sc, ','))
		return (sc->bad = true), false;
	*first = false;
	if (scan_plain(sc, &k, &n)) {
		if (n >= len)
			n = len - 1;
		memcpy(key, k, n);
		key[n] = '\0';
	} else if ((any = scan_string(sc)) != NULL) {
		strlcpy(key, any, len);
		free(any);
	} else
		return (sc->bad = true), false;
	if (!scan_take(sc, ':'))
		return (sc->bad = true), false;
	return true;
}

/* Add an empty row to the table. */
static struct cmd_list_row *
cmd_list_add(struct cmd_list_table *t)
{
	if (t->n == t->cap) {
		t->cap = t->cap != 0 ? t->cap * 2 : 1024;
		if ((t->rows = reallocarray(t->rows, t->cap,
		    sizeof *t->rows)) == NULL)
			client_fatal("out of memory");
	}
	memset(&t->rows[t->n], 0, sizeof t->rows[t->n]);
	return &t->rows[t->n++];
}

/*
 * Keep a whole row for --json as the daemon wrote it, its text the row's
 * first cell: thousands of rows are neither parsed into a tree nor dumped
 * from one.
 */
static bool
cmd_list_json_row(struct cmd_list_table *t, struct scan *sc)
{
	const char *start;

	(void)scan_peek(sc);
	start = sc->p;
	if (!scan_skip(sc))
		return false;
	cmd_list_add(t)->text = cmd_list_keep(t, start,
	    (size_t)(sc->p - start));
	return true;
}

/* Keep a page of the table's lines (malloc'd) to print once all came. */
static void
cmd_list_lines(struct cmd_list_table *t, char *text)
{
	if ((t->lines = reallocarray(t->lines, t->nlines + 1,
	    sizeof *t->lines)) == NULL)
		client_fatal("out of memory");
	t->lines[t->nlines++] = text;
}

/*
 * Read a page's result object: its rows or its table's lines into t,
 * where the next page starts. A daemon older than the table answers with
 * rows, which a table is not printed from.
 */
static bool
cmd_list_result(struct scan *sc, struct cmd_list_table *t, long long *next)
{
	char	key[64], *text;
	bool	first = true, more, table = false;

	if (!scan_take(sc, '{'))
		return false;
	while (cmd_list_key(sc, &first, key, sizeof key)) {
		if (t->json && strcmp(key, "sessions") == 0 &&
		    scan_take(sc, '[')) {
			more = true;
			while (scan_element(sc, &more))
				if (!cmd_list_json_row(t, sc))
					break;
		} else if (!t->json && strcmp(key, "table") == 0 &&
		    (text = scan_string(sc)) != NULL) {
			cmd_list_lines(t, text);
			table = true;
		} else if (strcmp(key, "next_offset") != 0 ||
		    !scan_int(sc, next))
			(void)scan_skip(sc);
	}
	if (!t->json && !table && !sc->bad)
		client_fatal("the daemon is older than this client and does not "
		    "write the list's table: 'dbgctl daemon --replace' starts "
		    "this version's daemon in its place");
	return !sc->bad;
}

/* Read one reply line of a page; false on text not understood. */
static bool
cmd_list_page(const char *line, size_t len, struct cmd_list_table *t,
    long long *next)
{
	struct scan	sc;
	char		key[64];
	bool		first = true, ok = false;

	scan_init(&sc, line, len);
	if (!scan_take(&sc, '{'))
		return false;
	while (cmd_list_key(&sc, &first, key, sizeof key)) {
		if (strcmp(key, "result") == 0)
			ok = cmd_list_result(&sc, t, next);
		else
			(void)scan_skip(&sc);
	}
	return ok && !sc.bad;
}

/* Every page of the list; false after an error reply. */
static bool
cmd_list_fetch(struct client *c, struct cmd_list_table *t)
{
	long long	 offset = 0, next;
	size_t		 len;
	char		*line;
	json_t		*params;
	bool		 ok;

	for (;;) {
		params = json_pack("{s:I, s:i}", "offset", (json_int_t)offset,
		    "limit", CMD_LIST_LIMIT);
		/* The daemon writes the table, cut to the terminal's width. */
		if (!t->json)
			json_object_update_new(params, json_pack("{s:b, s:i}",
			    "table", 1, "width", t->width));
		line = client_call_text(c, "list", params, &len);
		if (line == NULL)
			return false;
		next = -1;
		ok = cmd_list_page(line, len, t, &next);
		free(line);
		if (!ok)
			client_fatal("reply from the daemon not understood");
		/* A page that moved nothing on would loop for ever. */
		if (next <= offset)
			return true;
		offset = next;
	}
}

/* Print the rows kept whole as one {"sessions":[...]} line. */
static void
cmd_list_print_json(struct cmd_list_row *rows, size_t n)
{
	size_t i;

	fputs("{\"sessions\":[", stdout);
	for (i = 0; i < n; i++) {
		if (i > 0)
			putchar(',');
		fputs(rows[i].text, stdout);
	}
	fputs("]}\n", stdout);
}

/* list: print a table of every session of this daemon's life. */
static int
cmd_list_exec(struct cmd *self, struct client *c)
{
	static char		 out[CMD_LIST_PIECE];
	struct cmd_list_table	 t = { .rows = NULL };
	size_t			 i;

	(void)self;
	/* Nothing is printed yet: the list goes out in a few large writes. */
	setvbuf(stdout, out, _IOFBF, sizeof out);
	t.json = c->json;
	t.width = t.json ? 0 : fmt_terminal_width(STDOUT_FILENO);
	if (!cmd_list_fetch(c, &t)) {
		cmd_list_free(&t);
		return client_error(c);
	}
	if (t.json)
		cmd_list_print_json(t.rows, t.n);
	for (i = 0; i < t.nlines; i++)
		fputs(t.lines[i], stdout);
	(void)fflush(stdout);
	cmd_list_free(&t);
	return EXIT_OK;
}

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.usage = "",
	.args = { "", 0, 0 },
	.flags = 0,	/* read-only: a new daemon would list nothing */
	.exec = cmd_list_exec,
	.summary = "print a table of the sessions",
};
