/*
 * The new-ui channels of a session's gdb, each on a pty of ours, and what
 * they carry: commands written with the channel's tokens, results routed
 * back to the client that sent them, the rest of a read held and sent to
 * its client as one write. Channels outlive their clients and are reused:
 * gdb never lets go of a UI's pty, so closing one would leak it there.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "conn.h"
#include "gdb.h"
#include "join.h"
#include "mi.h"

/* The most channels, so joined clients, a session has (join_chan_init). */
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
join_chan_init(long max)
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
join_chan_cmd_free(struct join_chan *ch, struct join_cmd *jc)
{
	TAILQ_REMOVE(&ch->cmds, jc, entry);
	free(jc->ctoken);
	free(jc->cmd);
	free(jc);
}

/* Write to the client now; one that reads nothing is dropped. */
static void
join_chan_send_now(struct join *j, const char *data, size_t len)
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
void
join_chan_flush(void)
{
	struct join	*j = join_held.j;
	size_t		 len = join_held.len;

	join_held.j = NULL;
	join_held.len = 0;
	if (j != NULL && len > 0)
		join_chan_send_now(j, join_held.buf, len);
}

/* A client is freed: bytes held for it go nowhere (its connection went). */
void
join_chan_forget(struct join *j)
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
void
join_chan_send(struct join *j, const char *data, size_t len)
{
	if (j == NULL || j->c == NULL || !j->live)
		return;
	if (join_held.depth == 0) {
		join_chan_send_now(j, data, len);
		return;
	}
	if (join_held.j != j)
		join_chan_flush();
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
join_chan_sendf(struct join *j, const char *fmt, ...)
{
	va_list	 ap;
	char	*line;
	int	 n;

	va_start(ap, fmt);
	n = xvasprintf(&line, fmt, ap);
	va_end(ap);
	join_chan_send(j, line, n);
	free(line);
}

/*
 * A result with a joined token, on whichever UI gdb wrote it: it goes to
 * the command's client with the client's own token, or is ours.
 */
static void
join_chan_route(struct gdb_data *g, const char *line, size_t len)
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
		join_chan_sendf(j, "%s%.*s\n", jc->ctoken,
		    (int)(len - (rest - line)), rest);
	}
	if (parsed)
		mi_record_free(&rec);
	join_chan_cmd_free(ch, jc);
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
		join_chan_route(ch->g, line, len);
		return 0;
	}
	if (len >= 5 && strncmp(line, "(gdb)", 5) == 0 && ch->prompts > 0) {
		ch->prompts--;
		return 0;
	}
	if (ch->j != NULL) {
		join_chan_send(ch->j, line, len);
		join_chan_send(ch->j, "\n", 1);
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
		join_chan_flush();
}

/* Write one command with the channel's next token; NULL if gdb is gone. */
struct join_cmd *
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
join_chan_internal(struct join_chan *ch, const char *cmd,
    join_internal_cb cb)
{
	struct join_cmd *jc;

	if ((jc = join_chan_write(ch, cmd)) == NULL)
		return;
	jc->internal = cb;
	if (ch->j != NULL && ch->j->live)
		ch->prompts++;
}

/* Close a channel: gdb has gone (its session ended). */
static void
join_chan_free(struct join_chan *ch)
{
	struct join_cmd *jc;

	TAILQ_REMOVE(&ch->g->chans, ch, entry);
	while ((jc = TAILQ_FIRST(&ch->cmds)) != NULL)
		join_chan_cmd_free(ch, jc);
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
	/* No answer: gdb is gone, and join_chan_gdb_close frees the channel. */
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
join_chan_gdb_close(struct gdb_data *g)
{
	struct join_chan *ch;

	while ((ch = TAILQ_FIRST(&g->chans)) != NULL) {
		if (ch->j != NULL)
			join_gone(ch->j);
		join_chan_free(ch);
	}
	join_seed_close(g);
}

/* A joined client's result gdb gave the daemon's own channel. */
void
join_chan_foreign(void *arg, const char *line, size_t len)
{
	join_chan_route(arg, line, len);
}
