/*
 * What joined clients do that others must hear: a breakpoint made or
 * deleted over MI, which gdb tells no other UI, goes to the other clients
 * and to the session's sinks; a resume or a stop says which client it is by.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "join.h"
#include "mi.h"
#include "session-target.h"

/* Every other joined client hears a line (a breakpoint made or gone). */
static void
join_news_tell(struct gdb_data *g, struct join *except, const char *fmt,
    ...)
{
	struct join_chan	*ch;
	va_list			 ap;
	char			*line;
	int			 n;

	va_start(ap, fmt);
	n = xvasprintf(&line, fmt, ap);
	va_end(ap);
	TAILQ_FOREACH(ch, &g->chans, entry)
		if (ch->j != NULL && ch->j != except)
			join_chan_send(ch->j, line, n);
	free(line);
}

/* Publish a breakpoint made or deleted, by whom (a client's serial or 0). */
static void
join_news_publish(struct gdb_data *g, const char *event, const char *number,
    json_t *bkpt, uint64_t client, const char *by)
{
	json_t *rec;

	rec = json_pack("{s:s, s:s, s:s}", "event", event, "number", number,
	    "by", by);
	if (bkpt != NULL)
		json_object_set(rec, "bkpt", bkpt);
	if (client != 0)
		json_object_set_new(rec, "client", json_integer(client));
	session_breakpoint(g->s, rec);
}

/*
 * A breakpoint was made over MI by from (a client, or NULL for the
 * daemon's own channel): gdb tells no other UI, so we do.
 */
void
join_news_break_made(struct gdb_data *g, struct join *from,
    const struct mi_record *rec, const char *line, size_t len)
{
	const char	*body = memchr(line, ',', len);
	json_t		*b = json_object_get(rec->results, "bkpt");
	const char	*num;

	num = json_string_value(json_object_get(gdb_breaks_bkpt(rec->results),
	    "number"));
	if (body == NULL || num == NULL || gdb_breaks_internal(g, num))
		return;
	join_news_tell(g, from, "=breakpoint-created%.*s\n",
	    (int)(len - (body - line)), body);
	if (from != NULL)
		json_array_append_new(from->bkpts, json_string(num));
	join_news_publish(g, "created", num, b, from != NULL ?
	    from->c_serial : 0, from != NULL ? "mi" : "dbgctl");
}

/* Breakpoints deleted over MI (cmd's numbers): the other UIs hear of it. */
void
join_news_break_deleted(struct gdb_data *g, struct join *from, const char *cmd)
{
	struct join_chan	*ch;
	char			*copy = xstrdup(cmd), *p = copy, *w;

	strsep(&p, " \t");
	while ((w = strsep(&p, " \t")) != NULL) {
		if (*w == '\0' || strspn(w, "0123456789") != strlen(w))
			continue;
		join_news_tell(g, from, "=breakpoint-deleted,id=\"%s\"\n", w);
		TAILQ_FOREACH(ch, &g->chans, entry)
			if (ch->j != NULL)
				join_array_drop(ch->j->bkpts, w);
		join_news_publish(g, "deleted", w, NULL, from != NULL ?
		    from->c_serial : 0, from != NULL ? "mi" : "dbgctl");
	}
	free(copy);
}

/* One of the daemon's own commands was answered: MI breakpoints are told. */
void
join_news_answered(void *arg, const char *cmd, const struct mi_record *rec,
    const char *line, size_t len)
{
	struct gdb_data *g = arg;

	if (line == NULL || strcmp(rec->cls, "done") != 0)
		return;
	if (strncmp(cmd, "-break-insert", 13) == 0)
		join_news_break_made(g, NULL, rec, line, len);
	else if (strncmp(cmd, "-break-delete", 13) == 0)
		join_news_break_deleted(g, NULL, cmd);
}

/* The joined client that made breakpoint number, or 0. */
static uint64_t
join_news_owner(struct gdb_data *g, json_int_t number)
{
	struct join_chan	*ch;
	json_t			*v;
	size_t			 i;

	TAILQ_FOREACH(ch, &g->chans, entry) {
		if (ch->j == NULL)
			continue;
		json_array_foreach(ch->j->bkpts, i, v)
			if (strtoll(json_string_value(v), NULL, 10) == number)
				return ch->j->c_serial;
	}
	return 0;
}

/* Say a record is by a joined client. */
static void
join_news_by(json_t *o, uint64_t client)
{
	json_object_set_new(o, "by", json_string("mi"));
	json_object_set_new(o, "client", json_integer(client));
}

/*
 * A target record of the gdb family, before it is published: a joined
 * client's resume or interrupt says who it is by, and which client a stop
 * belongs to is kept (it resumes the target when it leaves).
 */
void
join_news_target_by(struct gdb_data *g, json_t *target)
{
	const char	*st = json_string_value(json_object_get(target, "state"));
	json_t		*stop = json_object_get(target, "stop");
	const char	*reason, *sig;

	if (st == NULL || json_is_true(json_object_get(target, "transient")))
		return;
	if (strcmp(st, "running") == 0) {
		g->last_run_by = g->run_by;
		g->run_by = 0;
		if (g->last_run_by != 0)
			join_news_by(target, g->last_run_by);
		return;
	}
	g->stop_by = 0;
	if (strcmp(st, "stopped") != 0)
		return;
	reason = json_string_value(json_object_get(stop, "reason"));
	sig = json_string_value(json_object_get(stop, "signal"));
	if (reason == NULL)
		reason = "";
	if (g->halt_by != 0 && strcmp(reason, "signal-received") == 0 &&
	    sig != NULL && strcmp(sig, "SIGINT") == 0) {
		g->stop_by = g->halt_by;
		g->halt_by = 0;
		join_news_by(stop, g->stop_by);
	} else if (strcmp(reason, "breakpoint-hit") == 0)
		g->stop_by = join_news_owner(g, json_integer_value(
		    json_object_get(stop, "bkptno")));
	else if (strcmp(reason, "end-stepping-range") == 0 ||
	    strcmp(reason, "function-finished") == 0 ||
	    strcmp(reason, "location-reached") == 0)
		g->stop_by = g->last_run_by;
}

/*
 * gdb told every UI of a breakpoint a CLI command made or deleted (the
 * console's, exec's, a client's break): sinks hear of it too.
 */
void
join_news_event(struct gdb_data *g, const struct mi_record *rec)
{
	json_t		*b = json_object_get(rec->results, "bkpt");
	const char	*num;

	if (rec->kind != MI_NOTIFY)
		return;
	join_seed_event(g, rec);
	if (strcmp(rec->cls, "breakpoint-created") == 0) {
		num = json_string_value(json_object_get(gdb_breaks_bkpt(
		    rec->results), "number"));
		if (num != NULL && !gdb_breaks_internal(g, num))
			join_news_publish(g, "created", num, b, 0, "console");
	} else if (strcmp(rec->cls, "breakpoint-deleted") == 0) {
		num = json_string_value(json_object_get(rec->results, "id"));
		if (num != NULL)
			join_news_publish(g, "deleted", num, NULL, 0,
			    "console");
	}
}
