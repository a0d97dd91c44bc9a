/*
 * Joined MI clients (dbgctl mi): each gets a new-ui channel of the
 * session's gdb (join-chan.c), its commands filtered (mi-filter.c) and
 * given tokens of the channel's own space, so that results gdb gives
 * another UI come back to it. This file is a client's side: what its
 * commands change, and how it leaves its channel clean.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "capbuf.h"
#include "conn.h"
#include "gdb.h"
#include "join.h"
#include "mi.h"

/* How long a leaving client's commands in flight may take to be answered. */
#define JOIN_LEAVE_MS	5000

/* Whether the session's target is stopped now (not running, not gone). */
static bool
join_target_stopped(const struct session *s)
{
	const char *st = json_string_value(json_object_get(s->target,
	    "state"));

	return st != NULL && strcmp(st, "stopped") == 0;
}

/* Take a string out of an array of strings, if it is there. */
void
join_array_drop(json_t *a, const char *s)
{
	json_t	*v;
	size_t	 i;

	json_array_foreach(a, i, v)
		if (strcmp(json_string_value(v), s) == 0) {
			json_array_remove(a, i);
			return;
		}
}

/* Remember or forget a varobj a client made, as gdb answered. */
static void
join_varobj(struct join *j, const struct join_cmd *jc,
    const struct mi_record *rec)
{
	const char	*name;
	char		*copy, *p, *w, *last = NULL;

	if (jc->flags & MIF_VAR_CREATE) {
		name = json_string_value(json_object_get(rec->results, "name"));
		if (name != NULL)
			json_array_append_new(j->varobjs, json_string(name));
		return;
	}
	/* -var-delete [-c] NAME: its last word. */
	p = copy = xstrdup(jc->cmd);
	while ((w = strsep(&p, " \t")) != NULL)
		if (*w != '\0')
			last = w;
	if (last != NULL)
		join_array_drop(j->varobjs, last);
	free(copy);
}

/* What a client's answered command changes: breakpoints, varobjs, who ran. */
void
join_answered(struct join_cmd *jc, const struct mi_record *rec,
    const char *line, size_t len)
{
	struct join	*j = jc->j;
	struct gdb_data	*g = j->g;
	bool		 done = strcmp(rec->cls, "done") == 0;

	if (strcmp(rec->cls, "error") == 0) {
		if (g->run_by == j->c_serial && (jc->flags & MIF_RESUMES))
			g->run_by = 0;
		if (g->halt_by == j->c_serial && (jc->flags & MIF_INTERRUPT))
			g->halt_by = 0;
		return;
	}
	if (done && (jc->flags & MIF_BREAK_INSERT))
		join_news_break_made(g, j, rec, line, len);
	if (done && (jc->flags & MIF_BREAK_DELETE))
		join_news_break_deleted(g, j, jc->cmd);
	if (done && (jc->flags & (MIF_VAR_CREATE | MIF_VAR_DELETE)))
		join_varobj(j, jc, rec);
}

/* A command and the words of a list after it, space-separated (malloc'd). */
static char *
join_words(const char *cmd, json_t *words)
{
	struct capbuf	 b = { 0 };
	json_t		*v;
	size_t		 i;

	capbuf_add(&b, cmd, strlen(cmd));
	json_array_foreach(words, i, v) {
		capbuf_add(&b, " ", 1);
		capbuf_add(&b, json_string_value(v), strlen(json_string_value(
		    v)));
	}
	return b.p;
}

/* Whether a client has commands gdb has not answered. */
bool
join_in_flight(const struct join *j)
{
	struct join_cmd *jc;

	if (j->ch == NULL)
		return false;
	TAILQ_FOREACH(jc, &j->ch->cmds, entry)
		if (jc->j == j)
			return true;
	return false;
}

/* A leaving client's answers are all sent: it leaves, its ^exit last. */
void
join_left(struct join *j)
{
	timer_free(j->leave_timer);
	j->leave_timer = NULL;
	if (j->exit_token != NULL)
		join_chan_sendf(j, "%s^exit\n", j->exit_token);
	join_leave_chan(j);
	/* This may close the connection and free j at once. */
	if (j->c != NULL)
		conn_finish(j->c);
}

/* gdb left some of a leaving client's commands unanswered: it goes anyway. */
static void
join_leave_timer_cb(void *arg)
{
	struct join *j = arg;

	log_warn("session %lu: a joined MI client leaves with commands gdb "
	    "did not answer within %d ms", j->s->id, JOIN_LEAVE_MS);
	join_left(j);
}

/*
 * The client leaves (its EOF, or -gdb-exit with exit_token): it reads the
 * answers to what it sent first, within JOIN_LEAVE_MS, then the channel is
 * cleaned and its connection finished.
 */
void
join_leave(struct join *j, const char *exit_token)
{
	if (j->leaving)
		return;
	j->leaving = true;
	if (exit_token != NULL)
		j->exit_token = xstrdup(exit_token);
	if (!join_in_flight(j)) {
		join_left(j);
		return;
	}
	j->leave_timer = timer_new(join_leave_timer_cb, j);
	timer_start(j->leave_timer, JOIN_LEAVE_MS);
}

/*
 * The client sees gdb's lines from now on; the prompts our commands still
 * in flight will get are not its.
 */
void
join_live(struct join *j)
{
	struct join_cmd *jc;

	j->ch->prompts = 0;
	TAILQ_FOREACH(jc, &j->ch->cmds, entry)
		j->ch->prompts += jc->internal != NULL;
	j->live = true;
}

/* An answer of ours nobody needs. */
static void
join_ignore(struct join_chan *ch, const struct mi_record *rec)
{
	(void)ch;
	(void)rec;
}

/* The channel a client wrote a command to, with its token ours. */
void
join_write(struct join *j, const char *ctoken, const char *cmd, int flags)
{
	struct join_cmd *jc;

	if ((jc = join_chan_write(j->ch, cmd)) == NULL)
		return;
	free(jc->ctoken);
	jc->ctoken = xstrdup(ctoken);
	jc->j = j;
	jc->flags = flags;
	if (flags & MIF_RESUMES)
		j->g->run_by = j->c_serial;
	if (flags & MIF_INTERRUPT)
		j->g->halt_by = j->c_serial;
	if (j->c != NULL && flow_full(console_queued(j->ch->con),
	    CONSOLE_INPUT_MAX))
		conn_pause(j->c);
}

/* The client's own -dbgctl-interrupt (its SIGINT): stop the target. */
void
join_interrupt(struct join *j)
{
	j->g->halt_by = j->c_serial;
	join_chan_internal(j->ch, "-exec-interrupt", join_ignore);
}

/* Answer a client's command here: a no-op or a refusal. */
void
join_answer(struct join *j, const char *ctoken, const struct mi_filter *f)
{
	char *q;

	switch (f->verdict) {
	case MIF_DONE:
		join_chan_sendf(j, "%s^done\n(gdb) \n", ctoken);
		return;
	case MIF_ERROR:
		q = mi_cstring_quote(f->why);
		join_chan_sendf(j, "%s^error,msg=%s\n(gdb) \n", ctoken, q);
		free(q);
		return;
	default:
		log_fatal("answering a command that passes");
	}
}

/*
 * The client leaves its channel: its varobjs go, its breakpoints unless
 * it keeps them, and a target it halted that ran when it came runs again.
 */
void
join_leave_chan(struct join *j)
{
	struct join_chan	*ch = j->ch;
	struct join_cmd		*jc;
	json_t			*v;
	size_t			 i;
	char			*cmd;

	/* Its connection may close and j be freed once it left. */
	join_chan_flush();
	if (ch == NULL)
		return;
	TAILQ_FOREACH(jc, &ch->cmds, entry)
		if (jc->j == j)
			jc->j = NULL;
	if (ch->ready) {
		json_array_foreach(j->varobjs, i, v) {
			xasprintf(&cmd, "-var-delete %s", json_string_value(v));
			join_chan_internal(ch, cmd, join_ignore);
			free(cmd);
		}
		if (!j->keep_breakpoints && json_array_size(j->bkpts) > 0) {
			cmd = join_words("-break-delete", j->bkpts);
			join_chan_internal(ch, cmd, join_ignore);
			/* It empties j->bkpts: the numbers are cmd's now. */
			join_news_break_deleted(j->g, j, cmd);
			free(cmd);
		}
		if (!j->leave_halted && j->was_running &&
		    j->g->stop_by == j->c_serial && join_target_stopped(j->s)) {
			log_info("session %lu: a joined client left the target "
			    "it halted: resuming it", j->s->id);
			j->g->run_by = j->c_serial;
			join_chan_internal(ch, "-exec-continue",
			    join_ignore);
		}
	}
	ch->j = NULL;
	ch->prompts = 0;
	j->ch = NULL;
}
