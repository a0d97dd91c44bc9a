/*
 * Pages of session rows for list, stop and subscribe: each row written as
 * JSON text straight into the page (no tree of the reply is built), with
 * every member or only those a list named, as many as fit a reply.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "jdump.h"
#include "jtext.h"
#include "status-page.h"

/* A reply's rows hold at most this many bytes. */
#define STATUS_PAGE_BYTES (512 * 1024)

/* Which members to write: every one when fields is NULL, else those named. */
void
status_page_pick(struct status_pick *pick, json_t *fields)
{
	json_t	*v;
	size_t	 i, j;
	bool	 known;

	memset(pick, 0, sizeof *pick);
	if (fields == NULL) {
		pick->all = true;
		return;
	}
	pick->names = fields;
	json_array_foreach(fields, i, v) {
		known = false;
		for (j = 0; j < status_nfields; j++) {
			if (status_fields[j].name != NULL &&
			    strcmp(status_fields[j].name, json_string_value(v)) ==
			    0) {
				pick->mask |= (uint64_t)1 << j;
				known = true;
			}
		}
		if (!known)
			pick->kind_own = true;
	}
	/* Every row says which session it is; the kind's own are its to pick. */
	pick->mask |= 1;
	for (j = 0; j < status_nfields; j++)
		if (status_fields[j].name == NULL)
			pick->mask |= (uint64_t)1 << j;
}

/* Append a string of the page's own making. */
static void
status_page_puts(struct status_page *p, const char *str)
{
	jtext_raw(&p->t, str, strlen(str));
}

/*
 * Write an integer or a string, as most values of a row are, without
 * jansson's dump (its snprintf for every number); false for anything else.
 */
static bool
status_page_simple(struct status_page *p, json_t *value)
{
	if (json_is_integer(value)) {
		jtext_int(&p->t, json_integer_value(value));
		return true;
	}
	if (!json_is_string(value))
		return false;
	jtext_bytes(&p->t, json_string_value(value), json_string_length(value));
	return true;
}

/* Write a member's name, "name":, its value to follow. */
static void
status_page_key(struct status_page *p, bool *first, const char *name)
{
	status_page_puts(p, *first ? "\"" : ",\"");
	status_page_puts(p, name);
	status_page_puts(p, "\":");
	*first = false;
}

/* Write one member, "name":value, and take value. */
static void
status_page_member(struct status_page *p, bool *first, const char *name,
    json_t *value)
{
	status_page_key(p, first, name);
	if (!status_page_simple(p, value) && jdump(value, jtext_put, &p->t) !=
	    0)
		log_fatal("cannot write the member %s of a row", name);
	json_decref(value);
}

/* Whether the pick names the member name. */
static bool
status_page_named(const struct status_pick *pick, const char *name)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(pick->names, i, v)
		if (strcmp(json_string_value(v), name) == 0)
			return true;
	return false;
}

/* Write the kind's own members, or those of them the pick names. */
static void
status_page_kind_own(struct status_page *p, bool *first,
    const struct session *s)
{
	const char	*key;
	json_t		*o, *v;

	if (s->backend->status == NULL || (!p->pick->all &&
	    !p->pick->kind_own))
		return;
	o = json_object();
	s->backend->status(s, o);
	json_object_foreach(o, key, v)
		if (p->pick->all || status_page_named(p->pick, key))
			status_page_member(p, first, key, json_incref(v));
	json_decref(o);
}

/*
 * Write one member of a row's kept text (argv cut where long, and said
 * so): only here, once a session, is a field's name compared.
 */
static void
status_page_field(struct status_page *p, bool *first, const struct session *s,
    const struct status_field *f)
{
	json_t	*v;
	bool	 cut;

	if (strcmp(f->name, "argv") == 0) {
		status_page_member(p, first, f->name,
		    status_row_argv(s->l.argv, &cut));
		if (cut)
			status_page_member(p, first, "argv_cut", json_true());
	} else if ((v = f->value(s)) != NULL)
		status_page_member(p, first, f->name, v);
}

/*
 * A session's fixed members as row text, written at its first row and
 * kept for its life: a list of many sessions copies them, and builds and
 * dumps a tree only for the few members that change.
 */
struct status_row {
	char		*text;
	uint32_t	 off[];		/* field i is text[off[i]..off[i+1]) */
};

/* The fixed members' text of s, written now if it has none yet. */
static const struct status_row *
status_page_fixed(struct session *s)
{
	struct status_page	 w = { 0 };
	struct status_row	*r;
	size_t			 i;
	bool			 first;

	if (s->row != NULL)
		return s->row;
	r = xmalloc(sizeof *r + (status_nfields + 1) * sizeof r->off[0]);
	for (i = 0; i < status_nfields; i++) {
		r->off[i] = (uint32_t)w.t.len;
		first = true;
		if (status_fields[i].fixed)
			status_page_field(&w, &first, s, &status_fields[i]);
	}
	r->off[i] = (uint32_t)w.t.len;
	r->text = w.t.p;
	return s->row = r;
}

/*
 * Ask the memory for the session fields a row reads, of s a row or two
 * before it is written: the sessions of a list of thousands lie apart in
 * the heap, and a row otherwise waits on each of their lines in turn.
 */
void
status_page_ahead(const struct session *s)
{
	if (s == NULL)
		return;
	__builtin_prefetch(&s->entry);
	__builtin_prefetch(&s->state);
	__builtin_prefetch(&s->procs[0]);
	__builtin_prefetch(&s->target);
	__builtin_prefetch(&s->hold);
	__builtin_prefetch(&s->row);
}

/*
 * Ask for what the fields of s point to (its kept text, its main
 * process), once the fields themselves are in (status_page_ahead).
 */
void
status_page_ahead_more(const struct session *s)
{
	if (s == NULL)
		return;
	if (s->row != NULL) {
		__builtin_prefetch(s->row);
		__builtin_prefetch(s->row->text);
	}
	__builtin_prefetch(s->procs[0].proc);
}

/* Let go of the row text kept for s (SE_FREED: the session is freed). */
void
status_page_freed(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	if (s->row == NULL)
		return;
	free(s->row->text);
	free(s->row);
	s->row = NULL;
}

/* Write s as a row: its members in status_json's order, a long argv cut. */
static void
status_page_row(struct status_page *p, struct session *s)
{
	const struct status_row		*r = status_page_fixed(s);
	const struct status_field	*f;
	json_t				*v;
	uint64_t			 todo;
	size_t				 i;
	bool				 first = true;

	status_page_puts(p, "{");
	/* Only the picked members are visited, not the whole table a row. */
	todo = p->pick->all ? UINT64_MAX : p->pick->mask;
	for (; todo != 0; todo &= todo - 1) {
		if ((i = (size_t)__builtin_ctzll(todo)) >= status_nfields)
			break;
		f = &status_fields[i];
		if (f->name == NULL) {
			status_page_kind_own(p, &first, s);
			continue;
		}
		if (!f->fixed && f->text != NULL) {
			status_page_key(p, &first, f->name);
			f->text(s, &p->t);
			continue;
		}
		if (!f->fixed) {
			if ((v = f->value(s)) != NULL)
				status_page_member(p, &first, f->name, v);
			continue;
		}
		if (r->off[i] == r->off[i + 1])
			continue;
		if (!first)
			status_page_puts(p, ",");
		jtext_raw(&p->t, r->text + r->off[i], r->off[i + 1] -
		    r->off[i]);
		first = false;
	}
	status_page_puts(p, "}");
}

/* Start an empty page whose rows go under key, at most max_rows of them. */
void
status_page_init(struct status_page *p, const char *key, size_t max_rows,
    const struct status_pick *pick)
{
	static const struct status_pick	all = { .all = true };

	/* A row visits the picked members by a mask's bits. */
	if (status_nfields > 64)
		log_fatal("status_fields has %zu members, a mask 64",
		    status_nfields);
	memset(p, 0, sizeof *p);
	p->max_rows = max_rows;
	p->pick = pick != NULL ? pick : &all;
	status_page_puts(p, "{\"");
	status_page_puts(p, key);
	status_page_puts(p, "\":[");
}

/*
 * Add s's row unless the page is full (by rows, or by bytes: a reply must
 * stay well inside the line limit); the first row always goes in.
 */
bool
status_page_add(struct status_page *p, struct session *s)
{
	size_t	mark = p->t.len;

	if (p->full || p->n >= p->max_rows) {
		p->full = true;
		return false;
	}
	if (p->n > 0)
		status_page_puts(p, ",");
	status_page_row(p, s);
	if (p->n > 0 && p->t.len > STATUS_PAGE_BYTES) {
		p->t.len = mark;
		p->t.p[mark] = '\0';
		p->full = true;
		return false;
	}
	p->n++;
	return true;
}

/*
 * The page as the head of a result, {"KEY":[rows] without its closing
 * brace, for request_done_head to end with its other members; the page
 * is spent.
 */
char *
status_page_done(struct status_page *p, size_t *len)
{
	status_page_puts(p, "]");
	*len = p->t.len;
	return p->t.p;
}
