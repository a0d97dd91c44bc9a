/*
 * list: a table of every session of the daemon's life. The table asks only
 * for the members it prints and reads each page with the pull reader, so
 * thousands of rows cost no tree; --json asks for whole rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"
#include "scan.h"

/* Columns of the list table. */
#define CMD_LIST_COLUMNS	8

/* One row of the list table, each cell allocated. */
struct cmd_list_row {
	char	*cell[CMD_LIST_COLUMNS];
};

/* The rows read so far, the header first. */
struct cmd_list_table {
	struct cmd_list_row	*rows;
	size_t			 n;
	size_t			 cap;
};

/* Every page of the list, as one {"sessions":[...]}; NULL on an error. */
static json_t *
cmd_list_fetch_json(struct client *c)
{
	json_t		*all = json_array(), *page, *next;
	json_int_t	 offset = 0;

	for (;;) {
		page = client_call(c, "list", json_pack("{s:I}", "offset",
		    offset));
		if (page == NULL) {
			json_decref(all);
			return NULL;
		}
		json_array_extend(all, json_object_get(page, "sessions"));
		next = json_object_get(page, "next_offset");
		/* A page that moved nothing on would loop for ever. */
		if (!json_is_integer(next) || json_integer_value(next) <= offset) {
			json_decref(page);
			return json_pack("{s:o}", "sessions", all);
		}
		offset = json_integer_value(next);
		json_decref(page);
	}
}

/* A number as a newly allocated string. */
static char *
cmd_list_number(long long n)
{
	char	buf[32];

	snprintf(buf, sizeof buf, "%lld", n);
	return strdup(buf);
}

/* A string member's value, "-" for null; NULL (text marked bad) otherwise. */
static char *
cmd_list_string(struct scan *sc)
{
	if (scan_word(sc, "null"))
		return strdup("-");
	return scan_string(sc);
}

/* An argv member: its strings joined with spaces, control bytes as '?'. */
static char *
cmd_list_argv(struct scan *sc)
{
	char	*out = NULL, *arg, *p;
	size_t	 len = 0, n;
	bool	 first = true;

	if (!scan_take(sc, '['))
		return scan_skip(sc), strdup("");
	while (scan_element(sc, &first)) {
		if ((arg = scan_string(sc)) == NULL)
			break;
		for (p = arg; *p != '\0'; p++)
			if (fmt_is_control(*p))
				*p = '?';
		n = strlen(arg);
		if ((out = realloc(out, len + n + 2)) == NULL)
			client_fatal("out of memory");
		if (len > 0)
			out[len++] = ' ';
		memcpy(out + len, arg, n + 1);
		len += n;
		free(arg);
	}
	return out != NULL ? out : strdup("");
}

/* A target member: its state, or NULL (text marked bad) for anything else. */
static char *
cmd_list_target_state(struct scan *sc)
{
	char	*key, *state = NULL;
	bool	 first = true;

	if (!scan_take(sc, '{'))
		return scan_skip(sc), NULL;
	while ((key = scan_member(sc, &first)) != NULL) {
		if (strcmp(key, "state") == 0 && state == NULL)
			state = scan_string(sc);
		else
			(void)scan_skip(sc);
		free(key);
		if (sc->bad)
			break;
	}
	return state;
}

/*
 * The TARGET cell: "faulted SIGSEGV" while the target is stopped at its
 * fault, else the target's state; "-" for a kind without a debugger.
 */
static char *
cmd_list_target(char *state, char *faulted)
{
	char	*cell;

	if (faulted != NULL) {
		if (asprintf(&cell, "faulted %s", faulted) < 0)
			client_fatal("out of memory");
		return cell;
	}
	return strdup(state != NULL ? state : "-");
}

/* A hold member: "held, 9m left", or NULL (text marked bad) for anything else. */
static char *
cmd_list_hold(struct scan *sc)
{
	char		*key, *cell = NULL, left[32];
	long long	 ms;
	bool		 first = true;

	if (!scan_take(sc, '{'))
		return scan_skip(sc), NULL;
	while ((key = scan_member(sc, &first)) != NULL) {
		if (strcmp(key, "left_ms") == 0 && cell == NULL &&
		    scan_int(sc, &ms)) {
			cmd_hold_left(ms, left, sizeof left);
			if (asprintf(&cell, "held, %s", left) < 0)
				client_fatal("out of memory");
		} else
			(void)scan_skip(sc);
		free(key);
		if (sc->bad)
			break;
	}
	return cell;
}

/* Put value in a cell, dropping what a repeated member put there. */
static void
cmd_list_set(char **cell, char *value)
{
	free(*cell);
	*cell = value;
}

/* Read one row object into its cells; false on text not understood. */
static bool
cmd_list_row(struct scan *sc, struct cmd_list_row *row)
{
	char		*key, *started = NULL, *ended = NULL, age[32];
	char		*target = NULL, *faulted = NULL, *held = NULL;
	char		*attached = NULL;
	long long	 n;
	bool		 first = true;

	if (!scan_take(sc, '{'))
		return false;
	while ((key = scan_member(sc, &first)) != NULL) {
		if (strcmp(key, "id") == 0 && scan_int(sc, &n))
			cmd_list_set(&row->cell[0], cmd_list_number(n));
		else if (strcmp(key, "name") == 0)
			cmd_list_set(&row->cell[1], cmd_list_string(sc));
		else if (strcmp(key, "kind") == 0)
			cmd_list_set(&row->cell[2], cmd_list_string(sc));
		else if (strcmp(key, "state") == 0)
			cmd_list_set(&row->cell[3], cmd_list_string(sc));
		else if (strcmp(key, "target") == 0)
			cmd_list_set(&target, cmd_list_target_state(sc));
		else if (strcmp(key, "faulted") == 0)
			cmd_list_set(&faulted, scan_string(sc));
		else if (strcmp(key, "hold") == 0)
			cmd_list_set(&held, cmd_list_hold(sc));
		else if (strcmp(key, "pid") == 0)
			cmd_list_set(&row->cell[5], scan_int(sc, &n) ?
			    cmd_list_number(n) : cmd_list_string(sc));
		else if (strcmp(key, "started_at") == 0)
			cmd_list_set(&started, scan_string(sc));
		else if (strcmp(key, "ended_at") == 0)
			cmd_list_set(&ended, scan_string(sc));
		else if (strcmp(key, "argv") == 0)
			cmd_list_set(&row->cell[7], cmd_list_argv(sc));
		else if (strcmp(key, "pid_argv") == 0)
			cmd_list_set(&attached, cmd_list_argv(sc));
		else
			(void)scan_skip(sc);
		free(key);
		if (sc->bad)
			break;
	}
	fmt_age_between(started, ended, age, sizeof age);
	row->cell[6] = strdup(age);
	row->cell[4] = cmd_list_target(target, faulted);
	/* A held session is running; how long it is kept says more. */
	if (held != NULL)
		cmd_list_set(&row->cell[3], held);
	/* A session attached to a process (--pid) shows that one's command. */
	if (attached != NULL && *attached != '\0')
		cmd_list_set(&row->cell[7], attached);
	else
		free(attached);
	free(started);
	free(ended);
	free(target);
	free(faulted);
	return !sc->bad;
}

/* Add an empty row to the table. */
static struct cmd_list_row *
cmd_list_add(struct cmd_list_table *t)
{
	if (t->n == t->cap) {
		t->cap = t->cap != 0 ? t->cap * 2 : 64;
		if ((t->rows = reallocarray(t->rows, t->cap,
		    sizeof *t->rows)) == NULL)
			client_fatal("out of memory");
	}
	memset(&t->rows[t->n], 0, sizeof t->rows[t->n]);
	return &t->rows[t->n++];
}

/* Read a page's result object: its rows into t, where the next page starts. */
static bool
cmd_list_result(struct scan *sc, struct cmd_list_table *t, long long *next)
{
	char	*key;
	bool	 first = true, more;

	if (!scan_take(sc, '{'))
		return false;
	while ((key = scan_member(sc, &first)) != NULL) {
		if (strcmp(key, "sessions") == 0 && scan_take(sc, '[')) {
			more = true;
			while (scan_element(sc, &more))
				if (!cmd_list_row(sc, cmd_list_add(t)))
					break;
		} else if (strcmp(key, "next_offset") != 0 ||
		    !scan_int(sc, next))
			(void)scan_skip(sc);
		free(key);
	}
	return !sc->bad;
}

/* Read one reply line of a page; false on text not understood. */
static bool
cmd_list_page(const char *line, size_t len, struct cmd_list_table *t,
    long long *next)
{
	struct scan	 sc;
	char		*key;
	bool		 first = true, ok = false;

	scan_init(&sc, line, len);
	if (!scan_take(&sc, '{'))
		return false;
	while ((key = scan_member(&sc, &first)) != NULL) {
		if (strcmp(key, "result") == 0)
			ok = cmd_list_result(&sc, t, next);
		else
			(void)scan_skip(&sc);
		free(key);
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
	bool		 ok;

	for (;;) {
		line = client_call_text(c, "list", json_pack("{s:I, s:[s,s,s,s,"
		    "s,s,s,s,s,s,s]}", "offset", (json_int_t)offset, "fields",
		    "name", "kind", "state", "target", "faulted", "hold", "pid",
		    "started_at", "ended_at", "argv", "pid_argv"), &len);
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

/* Print a cell padded with spaces to width, without printf's machinery. */
static void
cmd_list_cell(const char *cell, size_t width)
{
	static const char	spaces[] = "                                ";
	size_t			len = strlen(cell), pad;

	fwrite(cell, 1, len, stdout);
	for (pad = width > len ? width - len : 0; pad > 0; ) {
		len = pad < sizeof spaces - 1 ? pad : sizeof spaces - 1;
		fwrite(spaces, 1, len, stdout);
		pad -= len;
	}
}

/* Print the rows aligned in columns, the last cut to the terminal's width. */
static void
cmd_list_print(struct cmd_list_row *rows, size_t n)
{
	size_t	width[CMD_LIST_COLUMNS] = { 0 }, i, j, prefix = 0, len;
	int	cols;

	for (i = 0; i < n; i++) {
		for (j = 0; j < CMD_LIST_COLUMNS; j++) {
			if (rows[i].cell[j] == NULL)
				rows[i].cell[j] = strdup("?");
			len = strlen(rows[i].cell[j]);
			if (len > width[j])
				width[j] = len;
		}
	}
	for (j = 0; j < CMD_LIST_COLUMNS - 1; j++)
		prefix += width[j] + 2;
	cols = fmt_terminal_width(STDOUT_FILENO);
	for (i = 0; i < n; i++) {
		for (j = 0; j < CMD_LIST_COLUMNS - 1; j++)
			cmd_list_cell(rows[i].cell[j], width[j] + 2);
		if (cols > 0)
			fmt_truncate(rows[i].cell[j], (size_t)cols > prefix ?
			    (size_t)cols - prefix : 0);
		fputs(rows[i].cell[j], stdout);
		putchar('\n');
	}
}

/* list: print a table of every session of this daemon's life. */
static int
cmd_list_exec(struct cmd *self, struct client *c)
{
	static const char	*header[CMD_LIST_COLUMNS] = {
		"ID", "NAME", "KIND", "STATE", "TARGET", "PID", "AGE",
		"COMMAND"
	};
	struct cmd_list_table	 t = { NULL, 0, 0 };
	struct cmd_list_row	*row;
	json_t			*result;
	size_t			 i, j;

	(void)self;
	if (c->json) {
		if ((result = cmd_list_fetch_json(c)) == NULL)
			return client_error(c);
		cmd_print_json(result);
		json_decref(result);
		return EXIT_OK;
	}
	row = cmd_list_add(&t);
	for (j = 0; j < CMD_LIST_COLUMNS; j++)
		row->cell[j] = strdup(header[j]);
	if (!cmd_list_fetch(c, &t))
		return client_error(c);
	cmd_list_print(t.rows, t.n);
	for (i = 0; i < t.n; i++)
		for (j = 0; j < CMD_LIST_COLUMNS; j++)
			free(t.rows[i].cell[j]);
	free(t.rows);
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
