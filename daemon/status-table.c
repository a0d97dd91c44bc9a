/*
 * The list as the table dbgctl list prints, written here from the
 * sessions' own fields: a list of thousands is then neither written as
 * JSON rows nor read back into cells by the client, which only prints
 * the text (tmux's server formats its lists the same way). Columns are
 * as wide as their widest cell over every session, so the pages of one
 * list line up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "fmt.h"
#include "jtext.h"
#include "status-page.h"

/* A page's lines hold at most this many bytes, written as a JSON string. */
#define STATUS_TABLE_BYTES (512 * 1024)

/* A COMMAND cell holds at most this many bytes, as a row's argv does. */
#define STATUS_TABLE_COMMAND 4096

/* The columns' names, the header line's cells. */
static const char *const status_table_names[STATUS_TABLE_COLUMNS] = {
	"ID", "NAME", "KIND", "STATE", "TARGET", "PID", "AGE", "COMMAND"
};

/* One cell: a fixed prefix ("held, ", "faulted ") and its text. */
struct status_table_cell {
	const char	*pre, *text;
	size_t		 prelen;
	size_t		 len;		/* of both */
};

/* The cells of a row before its command, and the numbers' text. */
struct status_table_row {
	struct status_table_cell c[STATUS_TABLE_COLUMNS - 1];
	char			 pid[24], age[24], left[32];
};

/* Set a cell to pre (of prelen bytes, maybe none) and text. */
static void
status_table_set(struct status_table_cell *c, const char *pre, size_t prelen,
    const char *text)
{
	c->pre = pre;
	c->prelen = prelen;
	c->text = text;
	c->len = prelen + strlen(text);
}

/*
 * The AGE cell's text: how long s ran, from its start to its end or to
 * now, in whole seconds as a person counts them.
 */
static const char *
status_table_age(const struct status_table *tab, const struct session *s,
    char *buf, size_t len)
{
	double end = session_ended(s) ? s->ended_at : (double)tab->now;

	if (s->started_at <= 0) {
		strlcpy(buf, "-", len);
		return buf;
	}
	/* Whole seconds of each (both are after 1970): as a person counts. */
	fmt_duration((long long)end - (long long)s->started_at, buf, len);
	return buf;
}

/*
 * The cells of a session that never change (ID, NAME, KIND and COMMAND),
 * made at its first listing and kept in one piece: a list of thousands
 * then reads one block a session, not its launch's argv array and each
 * of its strings from all over the heap.
 */
struct status_line {
	uint16_t	len[4];		/* of each cell */
	char		text[];		/* the cells, each NUL-terminated */
};

/* The cells of struct status_line, in order. */
enum { STATUS_LINE_ID, STATUS_LINE_NAME, STATUS_LINE_KIND, STATUS_LINE_CMD };

/*
 * The command s runs, into tab->cmd: the arguments joined by spaces; for
 * a session attached to a process (--pid), that one's. Cut to what a
 * cell holds (never in a character's middle), and no more copied.
 */
static void
status_table_command(struct status_table *tab, const struct session *s)
{
	json_t	*argv = s->l.argv, *v;
	size_t	 i, n;

	if (json_array_size(s->l.pid_argv) > 1 || (json_array_size(
	    s->l.pid_argv) == 1 && *json_string_value(json_array_get(
	    s->l.pid_argv, 0)) != '\0'))
		argv = s->l.pid_argv;
	tab->cmd.len = 0;
	jtext_raw(&tab->cmd, "", 0);
	json_array_foreach(argv, i, v) {
		if (tab->cmd.len > STATUS_TABLE_COMMAND)
			break;
		if (i > 0)
			jtext_raw(&tab->cmd, " ", 1);
		n = json_string_length(v);
		/* One byte past the cell, for the cut to see a character's end. */
		if (n > STATUS_TABLE_COMMAND + 1)
			n = STATUS_TABLE_COMMAND + 1;
		jtext_raw(&tab->cmd, json_string_value(v), n);
	}
	n = tab->cmd.len;
	if (n > STATUS_TABLE_COMMAND) {
		n = STATUS_TABLE_COMMAND;
		while (n > 0 && ((unsigned char)tab->cmd.p[n] & 0xc0) == 0x80)
			n--;
	}
	tab->cmd.len = n;
	tab->cmd.p[n] = '\0';
}

/* The fixed cells of s, made now if it has none yet. */
static const struct status_line *
status_table_fixed(struct status_table *tab, struct session *s)
{
	struct status_line	*line;
	const char		*cell[4];
	char			 id[24];
	size_t			 len[4], total = 0, j;
	char			*p;

	if (s->line != NULL)
		return s->line;
	status_table_command(tab, s);
	cell[STATUS_LINE_ID] = fmt_int((long long)s->id, id);
	cell[STATUS_LINE_NAME] = s->l.name != NULL ? s->l.name : "-";
	cell[STATUS_LINE_KIND] = s->backend->name;
	cell[STATUS_LINE_CMD] = tab->cmd.p;
	for (j = 0; j < 4; j++)
		total += (len[j] = j == STATUS_LINE_CMD ? tab->cmd.len :
		    strlen(cell[j])) + 1;
	line = xmalloc(sizeof *line + total);
	for (p = line->text, j = 0; j < 4; p += len[j++] + 1) {
		/* A name is at most a few dozen bytes, a command 4096. */
		if (len[j] > UINT16_MAX)
			log_fatal("a list cell of %zu bytes", len[j]);
		line->len[j] = (uint16_t)len[j];
		memcpy(p, cell[j], len[j] + 1);
	}
	return s->line = line;
}

/* The text of cell j of line. */
static const char *
status_table_fixed_cell(const struct status_line *line, size_t j)
{
	const char	*p = line->text;
	size_t		 k;

	for (k = 0; k < j; k++)
		p += line->len[k] + 1;
	return p;
}

/* Let go of the fixed cells kept for s (SE_FREED: the session is freed). */
void
status_table_freed(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	free(s->line);
	s->line = NULL;
}

/*
 * Ask the memory for what the cells of s point to (its fixed cells, its
 * main process) a row before they are read: the sessions of a list of
 * thousands lie apart in the heap.
 */
void
status_table_ahead(const struct session *s)
{
	if (s == NULL)
		return;
	if (s->line != NULL)
		__builtin_prefetch(s->line);
	__builtin_prefetch(s->procs[0].proc);
}

/* The cells of s's row, its command line aside. */
static const struct status_line *
status_table_cells(struct status_table *tab, struct session *s,
    struct status_table_row *r)
{
	const struct status_line	*line = status_table_fixed(tab, s);
	const char			*what, *state;
	long long			 left;
	pid_t				 pid = status_main_pid(s);
	size_t				 j;

	for (j = STATUS_LINE_ID; j <= STATUS_LINE_KIND; j++)
		r->c[j] = (struct status_table_cell){ "",
		    status_table_fixed_cell(line, j), 0, line->len[j] };
	/* A held session is running; how long it is kept says more. */
	if ((left = hold_left_ms(s)) >= 0) {
		fmt_hold_left(left, r->left, sizeof r->left);
		status_table_set(&r->c[3], "held, ", 6, r->left);
	} else
		status_table_set(&r->c[3], "", 0, session_state_name(s->state));
	if ((what = status_faulted_what(s)) != NULL)
		status_table_set(&r->c[4], "faulted ", 8, what);
	else {
		state = s->target != NULL ? json_string_value(json_object_get(
		    s->target, "state")) : NULL;
		status_table_set(&r->c[4], "", 0, state != NULL ? state : "-");
	}
	status_table_set(&r->c[5], "", 0, pid != 0 ?
	    fmt_int(pid, r->pid) : "-");
	status_table_set(&r->c[6], "", 0, status_table_age(tab, s, r->age,
	    sizeof r->age));
	return line;
}

/* Start a table whose lines are cut to cols (0: not cut), max_rows a page. */
void
status_table_init(struct status_table *tab, size_t cols, size_t max_rows)
{
	size_t j;

	memset(tab, 0, sizeof *tab);
	tab->cols = cols;
	tab->max_rows = max_rows;
	tab->now = time(NULL);
	for (j = 0; j < STATUS_TABLE_COLUMNS - 1; j++)
		tab->width[j] = strlen(status_table_names[j]);
	/* The page is written as the JSON string it is sent as. */
	jtext_raw(&tab->text, "{\"table\":\"", 10);
}

/* Widen the columns to s's cells: every session is measured, listed or not. */
void
status_table_measure(struct status_table *tab, struct session *s)
{
	struct status_table_row	r;
	size_t				j;

	status_table_cells(tab, s, &r);
	for (j = 0; j < STATUS_TABLE_COLUMNS - 1; j++)
		if (r.c[j].len > tab->width[j])
			tab->width[j] = r.c[j].len;
}

/*
 * Append len bytes of text as a JSON string's inside: '"' and '\\'
 * escaped, control bytes shown as '?'. The sessions' strings are UTF-8
 * already (jansson's), and cells are cut only between characters.
 */
static void
status_table_escaped(struct status_table *tab, const char *text, size_t len)
{
	char	*out;
	size_t	 i;

	jtext_room(&tab->text, 2 * len);
	out = tab->text.p + tab->text.len;
	for (i = 0; i < len; i++) {
		if (text[i] == '"' || text[i] == '\\')
			*out++ = '\\';
		*out++ = fmt_is_control(text[i]) ? '?' : text[i];
	}
	tab->text.len = (size_t)(out - tab->text.p);
	tab->text.p[tab->text.len] = '\0';
}

/* Write a cell padded with spaces to its column's width and the gap. */
static void
status_table_put(struct status_table *tab, const struct status_table_cell *c,
    size_t width)
{
	size_t	pad;

	/* Every cell of a list was measured before any line was written. */
	if (c->len > width)
		log_fatal("a list cell of %zu bytes in a column of %zu", c->len,
		    width);
	pad = width + 2 - c->len;
	jtext_raw(&tab->text, c->pre, c->prelen);
	status_table_escaped(tab, c->text, c->len - c->prelen);
	jtext_room(&tab->text, pad);
	memset(tab->text.p + tab->text.len, ' ', pad);
	tab->text.len += pad;
	tab->text.p[tab->text.len] = '\0';
}

/*
 * Write the line's last cell, the command line, cut to what the terminal
 * has left after the other columns and to STATUS_TABLE_COMMAND; never in
 * a character's middle.
 */
static void
status_table_last(struct status_table *tab, const char *text, size_t len)
{
	size_t	most = STATUS_TABLE_COMMAND, prefix = 0, j;

	for (j = 0; j < STATUS_TABLE_COLUMNS - 1; j++)
		prefix += tab->width[j] + 2;
	if (tab->cols > 0 && tab->cols - prefix < most)
		most = tab->cols > prefix ? tab->cols - prefix : 0;
	if (len > most) {
		len = most;
		while (len > 0 && ((unsigned char)text[len] & 0xc0) == 0x80)
			len--;
	}
	status_table_escaped(tab, text, len);
	jtext_raw(&tab->text, "\\n", 2);
}

/* Write the header line: the columns' names. */
void
status_table_header(struct status_table *tab)
{
	struct status_table_cell	c;
	size_t				j;

	for (j = 0; j < STATUS_TABLE_COLUMNS - 1; j++) {
		status_table_set(&c, "", 0, status_table_names[j]);
		status_table_put(tab, &c, tab->width[j]);
	}
	status_table_last(tab, status_table_names[j],
	    strlen(status_table_names[j]));
}

/*
 * Add s's line unless the page is full (by rows, or by bytes); the first
 * always goes in. The columns must have been measured over every session.
 */
bool
status_table_add(struct status_table *tab, struct session *s)
{
	const struct status_line	*line;
	struct status_table_row		 r;
	size_t				 j, mark = tab->text.len;

	if (tab->full || tab->n >= tab->max_rows) {
		tab->full = true;
		return false;
	}
	line = status_table_cells(tab, s, &r);
	for (j = 0; j < STATUS_TABLE_COLUMNS - 1; j++)
		status_table_put(tab, &r.c[j], tab->width[j]);
	status_table_last(tab, status_table_fixed_cell(line, STATUS_LINE_CMD),
	    line->len[STATUS_LINE_CMD]);
	if (tab->n > 0 && tab->text.len > STATUS_TABLE_BYTES) {
		tab->text.len = mark;
		tab->text.p[mark] = '\0';
		tab->full = true;
		return false;
	}
	tab->n++;
	return true;
}

/*
 * The page as the head of a result, {"table":"LINES" without its closing
 * brace, for request_done_head to end with its other members; the table
 * is spent.
 */
char *
status_table_done(struct status_table *tab, size_t *len)
{
	char *head;

	jtext_raw(&tab->text, "\"", 1);
	free(tab->cmd.p);
	tab->cmd = (struct jtext){ 0 };
	head = tab->text.p;
	*len = tab->text.len;
	tab->text = (struct jtext){ 0 };
	return head;
}
