/*
 * list: a table of every session of the daemon's life. The table asks only
 * for the members it prints and reads each page with the pull reader, so
 * thousands of rows cost no tree; --json asks for whole rows and prints
 * each as the daemon wrote it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"
#include "scan.h"

/* Columns of the list table. */
#define CMD_LIST_COLUMNS	8

/*
 * Rows a page may hold at most (the daemon's LIST_LIMIT_MAX): a page is
 * cut to what fits a reply anyway, so asking for the most spares the
 * daemon a walk to the next page's start and a round trip a thousand rows.
 */
#define CMD_LIST_LIMIT	10000

/* The bytes of one piece of the arena the cells are kept in. */
#define CMD_LIST_PIECE	65536

/* One row of the list table, each cell kept in the table's arena. */
struct cmd_list_row {
	const char	*cell[CMD_LIST_COLUMNS];
};

/* A piece of the arena: cells are copied in one after another. */
struct cmd_list_piece {
	struct cmd_list_piece	*next;
	size_t			 len;
	size_t			 cap;
	char			 text[];
};

/*
 * The rows read so far, the header first, and the arena their cells are
 * kept in: a list of thousands of sessions makes tens of thousands of
 * cells and keys, which are neither malloc'd nor freed one by one.
 */
struct cmd_list_table {
	struct cmd_list_row	*rows;
	size_t			 n;
	size_t			 cap;
	struct cmd_list_piece	*arena;
	char			*join;	/* an argv cell being joined */
	size_t			 join_len, join_cap;
	bool			 json;	/* rows kept whole, as text */
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

/* Keep a malloc'd string (freed) in the arena; NULL stays NULL. */
static const char *
cmd_list_take(struct cmd_list_table *t, char *s)
{
	const char *kept;

	if (s == NULL)
		return NULL;
	kept = cmd_list_keep(t, s, strlen(s));
	free(s);
	return kept;
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
	free(t->join);
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

/* A number as a cell. */
static const char *
cmd_list_number(struct cmd_list_table *t, long long n)
{
	char	buf[32], *p = buf + sizeof buf;
	unsigned long long v = n < 0 ? 0ULL - (unsigned long long)n :
	    (unsigned long long)n;

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	if (n < 0)
		*--p = '-';
	return cmd_list_keep(t, p, (size_t)(buf + sizeof buf - p));
}

/*
 * A string member's value as a cell, "-" for null; NULL (text marked bad)
 * otherwise. Most are plain and are copied straight from the reply.
 */
static const char *
cmd_list_string(struct cmd_list_table *t, struct scan *sc)
{
	const char	*s;
	size_t		 n;

	if (scan_word(sc, "null"))
		return "-";
	if (scan_plain(sc, &s, &n))
		return cmd_list_keep(t, s, n);
	return cmd_list_take(t, scan_string(sc));
}

/* Add an argument to the argv cell being joined, after a space if any. */
static void
cmd_list_join(struct cmd_list_table *t, const char *arg, size_t n)
{
	if (t->join_len + n + 1 > t->join_cap) {
		t->join_cap = t->join_len + n + 1 + 256;
		if ((t->join = realloc(t->join, t->join_cap)) == NULL)
			client_fatal("out of memory");
	}
	if (t->join_len > 0)
		t->join[t->join_len++] = ' ';
	memcpy(t->join + t->join_len, arg, n);
	t->join_len += n;
}

/*
 * An argv member: its strings joined with spaces, control bytes as '?'.
 * Plain strings (most) are joined straight from the reply, in a buffer
 * the table keeps: no string is made for each argument.
 */
static const char *
cmd_list_argv(struct cmd_list_table *t, struct scan *sc)
{
	const char	*s;
	char		*arg, *p;
	size_t		 n;
	bool		 first = true, any = false;

	if (!scan_take(sc, '['))
		return scan_skip(sc), "";
	t->join_len = 0;
	while (scan_element(sc, &first)) {
		any = true;
		if (scan_plain(sc, &s, &n)) {
			cmd_list_join(t, s, n);
			continue;
		}
		if ((arg = scan_string(sc)) == NULL)
			break;
		for (p = arg; *p != '\0'; p++)
			if (fmt_is_control(*p))
				*p = '?';
		cmd_list_join(t, arg, strlen(arg));
		free(arg);
	}
	return any ? cmd_list_keep(t, t->join, t->join_len) : "";
}

/* A target member: its state, or NULL (text marked bad) for anything else. */
static const char *
cmd_list_target_state(struct cmd_list_table *t, struct scan *sc)
{
	const char	*state = NULL;
	char		 key[64];
	bool		 first = true;

	if (!scan_take(sc, '{'))
		return scan_skip(sc), NULL;
	while (cmd_list_key(sc, &first, key, sizeof key)) {
		if (strcmp(key, "state") == 0 && state == NULL)
			state = cmd_list_take(t, scan_string(sc));
		else
			(void)scan_skip(sc);
		if (sc->bad)
			break;
	}
	return state;
}

/*
 * The TARGET cell: "faulted SIGSEGV" while the target is stopped at its
 * fault, else the target's state; "-" for a kind without a debugger.
 */
static const char *
cmd_list_target(struct cmd_list_table *t, const char *state,
    const char *faulted)
{
	char	*cell;

	if (faulted != NULL) {
		if (asprintf(&cell, "faulted %s", faulted) < 0)
			client_fatal("out of memory");
		return cmd_list_take(t, cell);
	}
	return state != NULL ? state : "-";
}

/* A hold member: "held, 9m left", or NULL (text marked bad) for anything else. */
static const char *
cmd_list_hold(struct cmd_list_table *t, struct scan *sc)
{
	char		*cell = NULL, key[64], left[32];
	long long	 ms;
	bool		 first = true;

	if (!scan_take(sc, '{'))
		return scan_skip(sc), NULL;
	while (cmd_list_key(sc, &first, key, sizeof key)) {
		if (strcmp(key, "left_ms") == 0 && cell == NULL &&
		    scan_int(sc, &ms)) {
			fmt_hold_left(ms, left, sizeof left);
			if (asprintf(&cell, "held, %s", left) < 0)
				client_fatal("out of memory");
		} else
			(void)scan_skip(sc);
		if (sc->bad)
			break;
	}
	return cmd_list_take(t, cell);
}

/* A string member's value as it is, NULL for anything else (null, say). */
static const char *
cmd_list_plain(struct cmd_list_table *t, struct scan *sc)
{
	if (scan_peek(sc) != '"')
		return scan_skip(sc), NULL;
	return cmd_list_string(t, sc);
}

/* The members of one row that are read but not printed as they are. */
struct cmd_list_more {
	const char	*started, *ended, *target, *faulted, *held, *attached;
};

/* Read one member of a row into its cell, or into more; false if unknown. */
static bool
cmd_list_member(struct cmd_list_table *t, struct scan *sc, const char *key,
    struct cmd_list_row *row, struct cmd_list_more *m)
{
	long long n;

	if (strcmp(key, "id") == 0 && scan_int(sc, &n))
		row->cell[0] = cmd_list_number(t, n);
	else if (strcmp(key, "name") == 0)
		row->cell[1] = cmd_list_string(t, sc);
	else if (strcmp(key, "kind") == 0)
		row->cell[2] = cmd_list_string(t, sc);
	else if (strcmp(key, "state") == 0)
		row->cell[3] = cmd_list_string(t, sc);
	else if (strcmp(key, "target") == 0)
		m->target = cmd_list_target_state(t, sc);
	else if (strcmp(key, "faulted") == 0)
		m->faulted = cmd_list_take(t, scan_string(sc));
	else if (strcmp(key, "hold") == 0)
		m->held = cmd_list_hold(t, sc);
	else if (strcmp(key, "pid") == 0)
		row->cell[5] = scan_int(sc, &n) ? cmd_list_number(t, n) :
		    cmd_list_string(t, sc);
	else if (strcmp(key, "started_at") == 0)
		m->started = cmd_list_plain(t, sc);
	else if (strcmp(key, "ended_at") == 0)
		m->ended = cmd_list_plain(t, sc);
	else if (strcmp(key, "argv") == 0)
		row->cell[7] = cmd_list_argv(t, sc);
	else if (strcmp(key, "pid_argv") == 0)
		m->attached = cmd_list_argv(t, sc);
	else
		return false;
	return true;
}

/* Read one row object into its cells; false on text not understood. */
static bool
cmd_list_row(struct cmd_list_table *t, struct scan *sc,
    struct cmd_list_row *row)
{
	struct cmd_list_more	 m = { NULL, NULL, NULL, NULL, NULL, NULL };
	char			 key[64], age[32];
	bool			 first = true;

	if (!scan_take(sc, '{'))
		return false;
	while (cmd_list_key(sc, &first, key, sizeof key)) {
		if (!cmd_list_member(t, sc, key, row, &m))
			(void)scan_skip(sc);
		if (sc->bad)
			break;
	}
	fmt_age_between(m.started, m.ended, age, sizeof age);
	row->cell[6] = cmd_list_keep(t, age, strlen(age));
	row->cell[4] = cmd_list_target(t, m.target, m.faulted);
	/* A held session is running; how long it is kept says more. */
	if (m.held != NULL)
		row->cell[3] = m.held;
	/* A session attached to a process (--pid) shows that one's command. */
	if (m.attached != NULL && *m.attached != '\0')
		row->cell[7] = m.attached;
	return !sc->bad;
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
	cmd_list_add(t)->cell[0] = cmd_list_keep(t, start,
	    (size_t)(sc->p - start));
	return true;
}

/* Read a page's result object: its rows into t, where the next page starts. */
static bool
cmd_list_result(struct scan *sc, struct cmd_list_table *t, long long *next)
{
	char	key[64];
	bool	first = true, more;

	if (!scan_take(sc, '{'))
		return false;
	while (cmd_list_key(sc, &first, key, sizeof key)) {
		if (strcmp(key, "sessions") == 0 && scan_take(sc, '[')) {
			more = true;
			while (scan_element(sc, &more))
				if (!(t->json ? cmd_list_json_row(t, sc) :
				    cmd_list_row(t, sc, cmd_list_add(t))))
					break;
		} else if (strcmp(key, "next_offset") != 0 ||
		    !scan_int(sc, next))
			(void)scan_skip(sc);
	}
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

/* Every page of the list as table rows; false after an error reply. */
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
		/* The table asks only for what it prints; --json for all. */
		if (!t->json)
			json_object_set_new(params, "fields", json_pack("[s,s,s,"
			    "s,s,s,s,s,s,s,s]", "name", "kind", "state",
			    "target", "faulted", "hold", "pid", "started_at",
			    "ended_at", "argv", "pid_argv"));
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

/*
 * Put a cell padded with spaces to width at out; the byte after it. The
 * copy finds the cell's end: its length is not looked for a second time.
 */
static char *
cmd_list_cell(char *out, const char *cell, size_t width)
{
	char *end = stpcpy(out, cell);

	memset(end, ' ', width - (size_t)(end - out));
	return out + width;
}

/*
 * Print the rows aligned in columns, the last cut to the terminal's width:
 * each line made whole in one buffer and written at once, not a write of
 * stdio's a cell and a pad.
 */
static void
cmd_list_print(struct cmd_list_row *rows, size_t n)
{
	size_t		 width[CMD_LIST_COLUMNS] = { 0 }, i, j, prefix = 0;
	size_t		 len, most = 0;
	const char	*last;
	char		*line, *p;
	int		 cols;

	for (i = 0; i < n; i++) {
		for (j = 0; j < CMD_LIST_COLUMNS; j++) {
			if (rows[i].cell[j] == NULL)
				rows[i].cell[j] = "?";
			len = strlen(rows[i].cell[j]);
			if (len > width[j])
				width[j] = len;
		}
	}
	for (j = 0; j < CMD_LIST_COLUMNS - 1; j++)
		prefix += width[j] + 2;
	if ((line = malloc(prefix + width[j] + 1)) == NULL)
		client_fatal("out of memory");
	cols = fmt_terminal_width(STDOUT_FILENO);
	if (cols > 0)
		most = (size_t)cols > prefix ? (size_t)cols - prefix : 0;
	for (i = 0; i < n; i++) {
		p = line;
		for (j = 0; j < CMD_LIST_COLUMNS - 1; j++)
			p = cmd_list_cell(p, rows[i].cell[j], width[j] + 2);
		last = rows[i].cell[j];
		len = cols > 0 ? fmt_cut_len(last, most) : strlen(last);
		memcpy(p, last, len);
		p[len] = '\n';
		fwrite_unlocked(line, 1, (size_t)(p + len + 1 - line), stdout);
	}
	free(line);
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
		fputs(rows[i].cell[0], stdout);
	}
	fputs("]}\n", stdout);
}

/* list: print a table of every session of this daemon's life. */
static int
cmd_list_exec(struct cmd *self, struct client *c)
{
	static const char	*header[CMD_LIST_COLUMNS] = {
		"ID", "NAME", "KIND", "STATE", "TARGET", "PID", "AGE",
		"COMMAND"
	};
	static char		 out[CMD_LIST_PIECE];
	struct cmd_list_table	 t = { .rows = NULL };
	struct cmd_list_row	*row;
	size_t			 j;

	(void)self;
	/* Nothing is printed yet: the list goes out in a few large writes. */
	setvbuf(stdout, out, _IOFBF, sizeof out);
	t.json = c->json;
	if (!t.json) {
		row = cmd_list_add(&t);
		for (j = 0; j < CMD_LIST_COLUMNS; j++)
			row->cell[j] = header[j];
	}
	if (!cmd_list_fetch(c, &t)) {
		cmd_list_free(&t);
		return client_error(c);
	}
	if (t.json)
		cmd_list_print_json(t.rows, t.n);
	else
		cmd_list_print(t.rows, t.n);
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
