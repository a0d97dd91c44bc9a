/*
 * Joined MI clients (dbgctl mi): each gets a new-ui channel of the
 * session's gdb, its commands filtered (mi-filter.c) and given tokens of
 * the channel's own space, so that results gdb gives another UI come back
 * to it. Channels outlive their clients and are reused: gdb never lets go
 * of a UI's pty, so closing one would leak it there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* A command written to a channel and not answered yet. */
struct join_cmd {
	TAILQ_ENTRY(join_cmd)	 entry;
	uint64_t		 token;
	struct join		*j;		/* whose; NULL once it left */
	char			*ctoken;	/* the client's token, or "" */
	int			 flags;		/* MIF_* */
	char			*cmd;		/* as the client wrote it */
	join_internal_cb	 internal;	/* ours: answered here */
};

/* How long a leaving client's commands in flight may take to be answered. */
#define JOIN_LEAVE_MS	5000

/* The most channels, so joined clients, a session has (join_init). */
static long	join_max = JOINS_MAX_DEFAULT;

/*
 * What one read of a channel has for a client, held and sent as one
 * write at the read's end: an answer and its prompt were three writes
 * (three wake-ups of the client) before. Only one client's bytes are
 * held at a time, so the order of everything sent stays as it was.
 */
static struct {
	struct join	*j;		/* whose bytes, or NULL */
	char		*buf;
	size_t		 len, cap;
	int		 depth;		/* inside a channel's read */
} join_held;

/* Take the joiners' cap (DBGCTLD_JOINS_MAX). */
void
join_init(long max)
{
	join_max = max;
}

/* The channel that owns a token, or NULL. */
static struct join_chan *
join_chan_of(struct gdb_data *g, uint64_t token)
{
	struct join_chan *ch;

	TAILQ_FOREACH(ch, &g->chans, entry)
		if (ch->id == token >> 32)
			return ch;
	return NULL;
}

/* Forget a command. */
static void
join_cmd_free(struct join_chan *ch, struct join_cmd *jc)
{
	TAILQ_REMOVE(&ch->cmds, jc, entry);
	free(jc->ctoken);
	free(jc->cmd);
	free(jc);
}

/* Write to the client now; one that reads nothing is dropped. */
static void
join_send_now(struct join *j, const char *data, size_t len)
{
	if (j == NULL || j->c == NULL || !j->live)
		return;
	if (conn_queued(j->c) + len > CONN_WQ_MAX) {
		log_warn("session %lu: dropping a joined MI client that reads "
		    "nothing", j->s->id);
		conn_drop(j->c);
		return;
	}
	conn_send_raw(j->c, data, len);
}

/* Send the bytes held for a client, if any. */
static void
join_flush(void)
{
	struct join	*j = join_held.j;
	size_t		 len = join_held.len;

	join_held.j = NULL;
	join_held.len = 0;
	if (j != NULL && len > 0)
		join_send_now(j, join_held.buf, len);
}

/* A client is freed: bytes held for it go nowhere (its connection went). */
void
join_forget(struct join *j)
{
	if (join_held.j != j)
		return;
	join_held.j = NULL;
	join_held.len = 0;
}

/*
 * Write to the client: inside a channel's read, held to go with the rest
 * of the read (another client's bytes held before go first).
 */
static void
join_send(struct join *j, const char *data, size_t len)
{
	if (j == NULL || j->c == NULL || !j->live)
		return;
	if (join_held.depth == 0) {
		join_send_now(j, data, len);
		return;
	}
	if (join_held.j != j)
		join_flush();
	join_held.j = j;
	if (join_held.len + len > join_held.cap) {
		join_held.cap = join_held.len + len > 2 * join_held.cap ?
		    join_held.len + len : 2 * join_held.cap;
		join_held.buf = xreallocarray(join_held.buf, join_held.cap, 1);
	}
	memcpy(join_held.buf + join_held.len, data, len);
	join_held.len += len;
}

/* Write a line of ours (the format has its newline) to the client. */
void
join_sendf(struct join *j, const char *fmt, ...)
{
	va_list	 ap;
	char	*line;
	int	 n;

	va_start(ap, fmt);
	n = xvasprintf(&line, fmt, ap);
	va_end(ap);
	join_send(j, line, n);
	free(line);
}

/* Every other joined client hears a line (a breakpoint made or gone). */
static void
join_tell_others(struct gdb_data *g, struct join *except, const char *fmt,
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
			join_send(ch->j, line, n);
	free(line);
}

/* Publish a breakpoint made or deleted, by whom (a client's serial or 0). */
static void
join_publish(struct gdb_data *g, const char *event, const char *number,
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

/* Whether the session's target is stopped now (not running, not gone). */
static bool
join_target_stopped(const struct session *s)
{
	const char *st = json_string_value(json_object_get(s->target,
	    "state"));

	return st != NULL && strcmp(st, "stopped") == 0;
}

/* Take a string out of an array of strings, if it is there. */
static void
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

/*
 * A breakpoint was made over MI by from (a client, or NULL for the
 * daemon's own channel): gdb tells no other UI, so we do.
 */
static void
join_break_made(struct gdb_data *g, struct join *from,
    const struct mi_record *rec, const char *line, size_t len)
{
	const char	*body = memchr(line, ',', len);
	json_t		*b = json_object_get(rec->results, "bkpt");
	const char	*num;

	num = json_string_value(json_object_get(gdb_breaks_bkpt(rec->results),
	    "number"));
	if (body == NULL || num == NULL || gdb_breaks_internal(g, num))
		return;
	join_tell_others(g, from, "=breakpoint-created%.*s\n",
	    (int)(len - (body - line)), body);
	if (from != NULL)
		json_array_append_new(from->bkpts, json_string(num));
	join_publish(g, "created", num, b, from != NULL ? from->c_serial : 0,
	    from != NULL ? "mi" : "dbgctl");
}

/* Breakpoints deleted over MI (cmd's numbers): the other UIs hear of it. */
static void
join_break_deleted(struct gdb_data *g, struct join *from, const char *cmd)
{
	struct join_chan	*ch;
	char			*copy = xstrdup(cmd), *p = copy, *w;

	strsep(&p, " \t");
	while ((w = strsep(&p, " \t")) != NULL) {
		if (*w == '\0' || strspn(w, "0123456789") != strlen(w))
			continue;
		join_tell_others(g, from, "=breakpoint-deleted,id=\"%s\"\n", w);
		TAILQ_FOREACH(ch, &g->chans, entry)
			if (ch->j != NULL)
				join_array_drop(ch->j->bkpts, w);
		join_publish(g, "deleted", w, NULL, from != NULL ?
		    from->c_serial : 0, from != NULL ? "mi" : "dbgctl");
	}
	free(copy);
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
static void
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
		join_break_made(g, j, rec, line, len);
	if (done && (jc->flags & MIF_BREAK_DELETE))
		join_break_deleted(g, j, jc->cmd);
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
static bool
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
static void
join_left(struct join *j)
{
	timer_free(j->leave_timer);
	j->leave_timer = NULL;
	if (j->exit_token != NULL)
		join_sendf(j, "%s^exit\n", j->exit_token);
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
 * A result with a joined token, on whichever UI gdb wrote it: it goes to
 * the command's client with the client's own token, or is ours.
 */
static void
join_route(struct gdb_data *g, const char *line, size_t len)
{
	struct join_chan	*ch;
	struct join_cmd		*jc;
	struct join		*j;
	struct mi_record	 rec;
	uint64_t		 token;
	const char		*rest;
	char			 err[128];
	bool			 parsed;

	token = strtoull(line, NULL, 10);
	rest = line + strspn(line, "0123456789");
	if ((ch = join_chan_of(g, token)) == NULL)
		return;
	TAILQ_FOREACH(jc, &ch->cmds, entry)
		if (jc->token == token)
			break;
	if (jc == NULL)
		return;
	if (!(parsed = mi_parse(line, len, &rec, err, sizeof err) == 0))
		log_warn("session %lu: gdb's MI said something unreadable (%s): "
		    "%.80s", g->s->id, err, line);
	j = jc->j;
	if (jc->internal != NULL && parsed)
		jc->internal(ch, &rec);
	else if (j != NULL) {
		/* Unreadable, it is still the client's: it is passed on. */
		if (parsed)
			join_answered(jc, &rec, line, len);
		join_sendf(j, "%s%.*s\n", jc->ctoken,
		    (int)(len - (rest - line)), rest);
	}
	if (parsed)
		mi_record_free(&rec);
	join_cmd_free(ch, jc);
	if (j != NULL && j->leaving && !join_in_flight(j))
		join_left(j);
}

/* A line a channel's UI wrote: a result is routed, the rest is its client's. */
static int
join_chan_line(void *arg, char *line, size_t len)
{
	struct join_chan	*ch = arg;
	size_t			 digits = strspn(line, "0123456789");

	if (digits > 0 && digits < len && line[digits] == '^') {
		join_route(ch->g, line, len);
		return 0;
	}
	if (len >= 5 && strncmp(line, "(gdb)", 5) == 0 && ch->prompts > 0) {
		ch->prompts--;
		return 0;
	}
	if (ch->j != NULL) {
		join_send(ch->j, line, len);
		join_send(ch->j, "\n", 1);
	}
	return 0;
}

/* What gdb wrote on a channel, or room for more of what we write. */
static void
join_chan_cb(void *arg, enum console_event ev, const char *data, size_t len)
{
	struct join_chan *ch = arg;

	if (ev == CONSOLE_WRITTEN && ch->j != NULL && ch->j->c != NULL &&
	    flow_room(console_queued(ch->con), CONSOLE_INPUT_MAX))
		conn_resume(ch->j->c);
	if (ev != CONSOLE_OUTPUT)
		return;
	join_held.depth++;
	if (frame_feed(&ch->frame, data, len, join_chan_line, ch) ==
	    FRAME_OVERFLOW)
		log_fatal("out of memory for an MI record");
	if (--join_held.depth == 0)
		join_flush();
}

/* Write one command with the channel's next token; NULL if gdb is gone. */
static struct join_cmd *
join_chan_write(struct join_chan *ch, const char *cmd)
{
	struct join_cmd	*jc;
	uint64_t	 token = ch->id << 32 | ++ch->next;
	char		*line;
	int		 n;

	n = xasprintf(&line, "%llu%s\n", (unsigned long long)token, cmd);
	if (console_write(ch->con, line, n) != 0) {
		free(line);
		return NULL;
	}
	free(line);
	jc = xcalloc(1, sizeof *jc);
	jc->token = token;
	jc->cmd = xstrdup(cmd);
	jc->ctoken = xstrdup("");
	TAILQ_INSERT_TAIL(&ch->cmds, jc, entry);
	return jc;
}

/* Send a command of ours on a channel: its answer and prompt are not shown. */
void
join_internal(struct join_chan *ch, const char *cmd,
    join_internal_cb cb)
{
	struct join_cmd *jc;

	if ((jc = join_chan_write(ch, cmd)) == NULL)
		return;
	jc->internal = cb;
	if (ch->j != NULL && ch->j->live)
		ch->prompts++;
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

/* Close a channel: gdb has gone (its session ended). */
static void
join_chan_free(struct join_chan *ch)
{
	struct join_cmd *jc;

	TAILQ_REMOVE(&ch->g->chans, ch, entry);
	while ((jc = TAILQ_FIRST(&ch->cmds)) != NULL)
		join_cmd_free(ch, jc);
	console_close(ch->con);
	frame_free(&ch->frame);
	free(ch);
}

/* gdb answered the new-ui: the channel is ready, or the join fails. */
static void
join_chan_made(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct join_chan	*ch = arg;
	struct join		*j = ch->j;

	(void)out;
	(void)len;
	/* No answer: gdb is gone, and join_gdb_close frees the channel. */
	if (rec == NULL)
		return;
	if (strcmp(rec->cls, "done") != 0) {
		ch->j = NULL;
		join_chan_free(ch);
		if (j != NULL) {
			j->ch = NULL;
			join_fail(j, json_string_value(json_object_get(
			    rec->results, "msg")));
		}
		return;
	}
	ch->ready = true;
	if (j != NULL)
		join_seed(j);
}

/* A new channel: a pty gdb is told to open as a new UI. */
static struct join_chan *
join_chan_new(struct gdb_data *g, bool mi2, char *err, size_t errlen)
{
	struct join_chan *ch = xcalloc(1, sizeof *ch);

	ch->g = g;
	ch->id = ++g->nchans;
	ch->mi2 = mi2;
	TAILQ_INIT(&ch->cmds);
	if ((ch->con = console_open(true, join_chan_cb, ch, err,
	    errlen)) == NULL) {
		free(ch);
		return NULL;
	}
	frame_init(&ch->frame, FRAME_MAX);
	frame_cut(&ch->frame);
	TAILQ_INSERT_TAIL(&g->chans, ch, entry);
	if (mi_command(g->mi, join_chan_made, ch, "-interpreter-exec console "
	    "\"new-ui %s %s\"", mi2 ? "mi2" : "mi3", console_pts(ch->con)) == 0) {
		snprintf(err, errlen, "cannot talk to gdb's MI");
		join_chan_free(ch);
		return NULL;
	}
	return ch;
}

/*
 * A channel for a client: an idle one of its MI version, else a new one
 * while the session has fewer than join_max (gdb never lets go of one).
 * 0, or -1 with err (limit, or not_ready naming why).
 */
int
join_chan_take(struct join *j, struct rpc_error *err)
{
	struct join_chan	*ch;
	char			 why[256];
	long			 n = 0, busy = 0;

	TAILQ_FOREACH(ch, &j->g->chans, entry) {
		if (ch->j == NULL && ch->ready && ch->mi2 == j->mi2)
			break;
		n++;
		busy += ch->j != NULL || !ch->ready;
	}
	if (ch == NULL && n >= join_max) {
		rpc_error_set(err, RPC_LIMIT, "session %lu has %ld joined MI "
		    "clients and %ld channels, its most (DBGCTLD_JOINS_MAX "
		    "%ld)%s", j->s->id, busy, n, join_max, busy < n ? ": the "
		    "idle ones speak the other MI version" : "");
		return -1;
	}
	if (ch == NULL && (ch = join_chan_new(j->g, j->mi2, why,
	    sizeof why)) == NULL) {
		rpc_error_set(err, RPC_NOT_READY, "cannot open an MI channel: "
		    "%s", why);
		return -1;
	}
	ch->j = j;
	j->ch = ch;
	return 0;
}

/* The session's gdb is gone: every client hears EOF, channels close. */
void
join_gdb_close(struct gdb_data *g)
{
	struct join_chan *ch;

	while ((ch = TAILQ_FIRST(&g->chans)) != NULL) {
		if (ch->j != NULL)
			join_gone(ch->j);
		join_chan_free(ch);
	}
	join_seed_close(g);
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
	join_internal(j->ch, "-exec-interrupt", join_ignore);
}

/* Answer a client's command here: a no-op or a refusal. */
void
join_answer(struct join *j, const char *ctoken, const struct mi_filter *f)
{
	char *q;

	switch (f->verdict) {
	case MIF_DONE:
		join_sendf(j, "%s^done\n(gdb) \n", ctoken);
		return;
	case MIF_ERROR:
		q = mi_quote(f->why);
		join_sendf(j, "%s^error,msg=%s\n(gdb) \n", ctoken, q);
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
	join_flush();
	if (ch == NULL)
		return;
	TAILQ_FOREACH(jc, &ch->cmds, entry)
		if (jc->j == j)
			jc->j = NULL;
	if (ch->ready) {
		json_array_foreach(j->varobjs, i, v) {
			xasprintf(&cmd, "-var-delete %s", json_string_value(v));
			join_internal(ch, cmd, join_ignore);
			free(cmd);
		}
		if (!j->keep_breakpoints && json_array_size(j->bkpts) > 0) {
			cmd = join_words("-break-delete", j->bkpts);
			join_internal(ch, cmd, join_ignore);
			/* It empties j->bkpts: the numbers are cmd's now. */
			join_break_deleted(j->g, j, cmd);
			free(cmd);
		}
		if (!j->leave_halted && j->was_running &&
		    j->g->stop_by == j->c_serial && join_target_stopped(j->s)) {
			log_info("session %lu: a joined client left the target "
			    "it halted: resuming it", j->s->id);
			j->g->run_by = j->c_serial;
			join_internal(ch, "-exec-continue",
			    join_ignore);
		}
	}
	ch->j = NULL;
	ch->prompts = 0;
	j->ch = NULL;
}

/* One of the daemon's own commands was answered: MI breakpoints are told. */
void
join_mi_answered(void *arg, const char *cmd, const struct mi_record *rec,
    const char *line, size_t len)
{
	struct gdb_data *g = arg;

	if (line == NULL || strcmp(rec->cls, "done") != 0)
		return;
	if (strncmp(cmd, "-break-insert", 13) == 0)
		join_break_made(g, NULL, rec, line, len);
	else if (strncmp(cmd, "-break-delete", 13) == 0)
		join_break_deleted(g, NULL, cmd);
}

/* A joined client's result gdb gave the daemon's own channel. */
void
join_mi_foreign(void *arg, const char *line, size_t len)
{
	join_route(arg, line, len);
}

/* The joined client that made breakpoint number, or 0. */
static uint64_t
join_break_owner(struct gdb_data *g, json_int_t number)
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
join_by(json_t *o, uint64_t client)
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
join_target_by(struct gdb_data *g, json_t *target)
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
			join_by(target, g->last_run_by);
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
		join_by(stop, g->stop_by);
	} else if (strcmp(reason, "breakpoint-hit") == 0)
		g->stop_by = join_break_owner(g, json_integer_value(
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
join_mi_event(struct gdb_data *g, const struct mi_record *rec)
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
			join_publish(g, "created", num, b, 0, "console");
	} else if (strcmp(rec->cls, "breakpoint-deleted") == 0) {
		num = json_string_value(json_object_get(rec->results, "id"));
		if (num != NULL)
			join_publish(g, "deleted", num, NULL, 0, "console");
	}
}
