/*
 * gdb's machine interface on a second pty (new-ui mi3), beside the
 * console: commands go out with tokens and are answered in order; what
 * gdb says on its own (async records) goes to the owner. The channel may
 * keep a transcript of every line sent and received (mi-transcript.c).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "capbuf.h"
#include "mi-channel.h"

/* One command sent and not answered yet. */
struct mi_cmd {
	TAILQ_ENTRY(mi_cmd)	 entry;
	unsigned long		 token;
	mi_reply_cb		 cb;		/* NULL once cancelled */
	void			*arg;
	struct mi_cmd		*opens;		/* a marker: the command it opens */
	char			*cmd;		/* as sent, for the answered hook */
	bool			 collecting;	/* its console output is its own */
	struct capbuf		 out;		/* console stream it caused */
};

/* What the answer of a command says when gdb gave it none. */
static const char mi_no_answer[] = "gdb gave no answer to this command";

/* Forget a command. */
static void
mi_cmd_free(struct mi *m, struct mi_cmd *c)
{
	TAILQ_REMOVE(&m->cmds, c, entry);
	capbuf_free(&c->out);
	free(c->cmd);
	free(c);
}

/* Answer a command that gets no result record, with an error of ours. */
static void
mi_cmd_fail(struct mi_cmd *c, const char *why)
{
	struct mi_record	rec = { .kind = MI_RESULT };
	mi_reply_cb		cb = c->cb;

	if (cb == NULL)
		return;
	c->cb = NULL;
	strlcpy(rec.cls, "error", sizeof rec.cls);
	rec.results = json_pack("{s:s}", "msg", why);
	cb(c->arg, &rec, "", 0);
	json_decref(rec.results);
}

/* Give a command its answer: the record, and what it printed. */
static void
mi_cmd_answer(struct mi_cmd *c, const struct mi_record *rec)
{
	mi_reply_cb cb = c->cb;

	if (c->opens != NULL) {
		c->opens->collecting = true;
		return;
	}
	if (cb == NULL)
		return;
	c->cb = NULL;
	capbuf_mark(&c->out);
	cb(c->arg, rec, c->out.p != NULL ? c->out.p : "", c->out.len);
}

/*
 * A result record: it answers the command with its token. gdb answers in
 * order, so commands sent before it that have no answer never get one.
 */
static void
mi_result(struct mi *m, const struct mi_record *rec, const char *line,
    size_t len)
{
	struct mi_cmd	*c, *next;
	char		*cmd;

	TAILQ_FOREACH(c, &m->cmds, entry)
		if (rec->has_token && c->token == rec->token)
			break;
	if (c == NULL)
		return;
	while ((next = TAILQ_FIRST(&m->cmds)) != c && !m->closed) {
		mi_cmd_fail(next, mi_no_answer);
		if (!m->closed)
			mi_cmd_free(m, next);
	}
	cmd = c->cmd;
	c->cmd = NULL;
	mi_cmd_answer(c, rec);
	if (!m->closed)
		mi_cmd_free(m, c);
	if (!m->closed && m->answered != NULL && cmd != NULL)
		m->answered(m->arg, cmd, rec, line, len);
	free(cmd);
}

/*
 * A record longer than FRAME_MAX, cut there, is still attributed: a result
 * answers its command with an error of ours; console text the command was
 * collecting is kept as far as it goes and its output marked cut; any other
 * record goes on with what the cut left of it (a class, no results).
 */
static int
mi_cut(struct mi *m, const char *line, size_t len)
{
	struct mi_record	 rec;
	struct mi_cmd		*head = TAILQ_FIRST(&m->cmds);
	char			 err[256];

	log_warn("an MI record was longer than %d bytes, cut there: %.40s",
	    FRAME_MAX, line);
	if (mi_parse_cut(line, len, &rec, err, sizeof err) != 0) {
		log_warn("gdb's MI said something unreadable (%s)", err);
		return 0;
	}
	if (rec.kind == MI_RESULT) {
		strlcpy(rec.cls, "error", sizeof rec.cls);
		json_object_set_new(rec.results, "msg", json_string("gdb's "
		    "answer was longer than 1 MiB"));
		mi_result(m, &rec, NULL, 0);
	} else if (rec.kind == MI_CONSOLE && head != NULL && head->collecting) {
		capbuf_add(&head->out, rec.text, rec.textlen);
		capbuf_lost(&head->out);
	} else
		m->cb(m->arg, &rec);
	mi_record_free(&rec);
	return m->closed;
}

/* Hand one MI record to whoever it is for. */
static int
mi_line(void *arg, char *line, size_t len)
{
	struct mi		*m = arg;
	struct mi_record	 rec;
	struct mi_cmd		*head;
	char			 err[256];

	mi_transcript_add(m, "< ", line, len);
	if (m->frame.cut)
		return mi_cut(m, line, len);
	if (mi_parse(line, len, &rec, err, sizeof err) != 0) {
		log_warn("gdb's MI said something unreadable (%s): %.80s", err,
		    line);
		return 0;
	}
	head = TAILQ_FIRST(&m->cmds);
	/*
	 * A result or a stop may answer a client at once: the transcript has
	 * the lines that led to it first, as a bundle taken then must.
	 */
	if (rec.kind == MI_RESULT || rec.kind == MI_EXEC)
		mi_transcript_flush(m);
	switch (rec.kind) {
	case MI_RESULT:
		if (rec.has_token && rec.token >= JOIN_TOKEN_BASE) {
			if (m->foreign != NULL)
				m->foreign(m->arg, line, len);
			break;
		}
		mi_result(m, &rec, line, len);
		break;
	case MI_CONSOLE:
		/*
		 * Console output after the command's marker was answered and
		 * before its own reply is that command's; any other is gdb's.
		 */
		if (head != NULL && head->collecting) {
			capbuf_add(&head->out, rec.text, rec.textlen);
			break;
		}
		m->cb(m->arg, &rec);
		break;
	case MI_PROMPT:
		break;
	default:
		m->cb(m->arg, &rec);
		break;
	}
	mi_record_free(&rec);
	return m->closed;
}

/* Split what gdb wrote into records. */
static void
mi_console_cb(void *arg, enum console_event ev, const char *data, size_t len)
{
	struct mi *m = arg;

	if (ev != CONSOLE_OUTPUT || m->closed)
		return;
	/* The owner may close the channel from its callback: free it after. */
	m->feeding = true;
	/* The framer cuts long records: it fails only out of memory. */
	if (frame_feed(&m->frame, data, len, mi_line, m) == FRAME_OVERFLOW)
		log_fatal("out of memory for an MI record");
	m->feeding = false;
	mi_transcript_flush(m);
	if (m->closed)
		mi_close(m);
}

/* Let join.c hear the joined clients' results gdb gives on this channel. */
void
mi_hooks(struct mi *m, mi_foreign_cb foreign, mi_answered_cb answered)
{
	m->foreign = foreign;
	m->answered = answered;
}

/*
 * The channel on a new pty (master -1), or on the master of an adopted
 * session's gdb, which its keeper held: what gdb wrote while no daemon
 * read is read now, answers to a dead daemon's commands among it, which
 * no token of ours matches.
 */
static struct mi *
mi_make(int master, mi_event_cb cb, void *arg, char *err, size_t errlen)
{
	struct mi *m = xcalloc(1, sizeof *m);

	m->cb = cb;
	m->arg = arg;
	m->log_fd = -1;
	TAILQ_INIT(&m->cmds);
	m->console = master == -1 ? console_open(true, mi_console_cb, m, err,
	    errlen) : console_adopt(master, false, mi_console_cb, m, err,
	    errlen);
	if (m->console == NULL) {
		free(m);
		return NULL;
	}
	frame_init(&m->frame, FRAME_MAX);
	frame_cut(&m->frame);
	return m;
}

/*
 * Create the MI pty, raw so that records arrive as gdb wrote them; its
 * slave stays open here so the master never reads EIO before gdb opens it.
 */
struct mi *
mi_open(mi_event_cb cb, void *arg, char *err, size_t errlen)
{
	return mi_make(-1, cb, arg, err, errlen);
}

/* Go on with the MI pty of an adopted session's gdb. */
struct mi *
mi_adopt(int master, mi_event_cb cb, void *arg, char *err, size_t errlen)
{
	return mi_make(master, cb, arg, err, errlen);
}

/* The master of the MI pty, for the keeper to hold. */
int
mi_master(const struct mi *m)
{
	return console_master(m->console);
}

/* The pty gdb is told to open for its MI. */
const char *
mi_pts(const struct mi *m)
{
	return console_pts(m->console);
}

/* Hold a command line for the write mi_uncork makes. */
static void
mi_cork_add(struct mi *m, const char *line, size_t len)
{
	if (m->corklen + len > m->corkcap) {
		m->corkcap = (m->corklen + len) * 2;
		m->cork = xreallocarray(m->cork, m->corkcap, 1);
	}
	memcpy(m->cork + m->corklen, line, len);
	m->corklen += len;
}

/*
 * Hold the command lines sent from now on until mi_uncork, to go to gdb
 * in one write: written one by one, the first wakes gdb, which may run
 * before the rest are written (and on a busy machine does, for
 * milliseconds), and each is a wake-up more.
 */
void
mi_cork(struct mi *m)
{
	m->corked = true;
}

/*
 * Write the lines held since mi_cork, at once. Their commands wait for
 * their answers already; a channel that cannot be written to is closing,
 * and its close answers them.
 */
void
mi_uncork(struct mi *m)
{
	m->corked = false;
	if (m->corklen == 0 || m->closed)
		return;
	if (console_write(m->console, m->cork, m->corklen) != 0)
		log_warn("the MI channel took no more commands: %zu bytes of "
		    "them are lost", m->corklen);
	m->corklen = 0;
}

/* Write one command line with a new token; the command, or NULL if closed. */
static struct mi_cmd *
mi_send(struct mi *m, mi_reply_cb cb, void *arg, const char *cmd)
{
	struct mi_cmd	*c;
	char		*line;
	int		 n;

	if (m->closed)
		return NULL;
	n = xasprintf(&line, "%lu%s\n", m->next_token + 1, cmd);
	if (m->corked)
		mi_cork_add(m, line, n);
	else if (console_write(m->console, line, n) != 0) {
		free(line);
		return NULL;
	}
	mi_transcript_add(m, "> ", line, n);
	free(line);
	c = xcalloc(1, sizeof *c);
	c->token = ++m->next_token;
	if (m->answered != NULL)
		c->cmd = xstrdup(cmd);
	c->cb = cb;
	c->arg = arg;
	TAILQ_INSERT_TAIL(&m->cmds, c, entry);
	return c;
}

/*
 * Send one MI command; cb(arg, record, output) gets its result record.
 * Returns its token, 0 if the channel is closed (cb is not called then).
 */
unsigned long
mi_command(struct mi *m, mi_reply_cb cb, void *arg, const char *fmt, ...)
{
	struct mi_cmd	*c;
	va_list		 ap;
	char		*cmd;

	va_start(ap, fmt);
	xvasprintf(&cmd, fmt, ap);
	va_end(ap);
	c = mi_send(m, cb, arg, cmd);
	free(cmd);
	return c != NULL ? c->token : 0;
}

/*
 * Send a command whose console output is wanted: a no-op marker goes
 * first, and only the output that comes between the marker's answer and
 * the command's own is the command's, not what gdb printed for earlier
 * work (a stop's source line, say).
 */
unsigned long
mi_command_output(struct mi *m, mi_reply_cb cb, void *arg, const char *fmt,
    ...)
{
	struct mi_cmd	*mark, *c;
	va_list		 ap;
	char		*cmd;

	if ((mark = mi_send(m, NULL, NULL, "-list-features")) == NULL)
		return 0;
	va_start(ap, fmt);
	xvasprintf(&cmd, fmt, ap);
	va_end(ap);
	c = mi_send(m, cb, arg, cmd);
	free(cmd);
	if (c == NULL)
		return 0;
	mark->opens = c;
	return c->token;
}


/* Nobody waits for this command's answer any more; it is dropped when it comes. */
void
mi_cancel(struct mi *m, unsigned long token)
{
	struct mi_cmd *c;

	TAILQ_FOREACH(c, &m->cmds, entry) {
		if (c->token == token)
			c->cb = NULL;
		if (c->opens != NULL && c->opens->token == token)
			c->opens = NULL;
	}
}

/* Release the MI pty; every command still waiting hears that gdb is gone. */
void
mi_close(struct mi *m)
{
	struct mi_cmd	*c;
	mi_reply_cb	 cb;

	if (m == NULL)
		return;
	if (!m->closed) {
		m->closed = true;
		TAILQ_FOREACH(c, &m->cmds, entry) {
			cb = c->cb;
			c->cb = NULL;
			if (cb != NULL)
				cb(c->arg, NULL, NULL, 0);
		}
	}
	if (m->feeding)
		return;
	while ((c = TAILQ_FIRST(&m->cmds)) != NULL)
		mi_cmd_free(m, c);
	console_close(m->console);
	frame_free(&m->frame);
	mi_transcript_close(m);
	free(m->cork);
	free(m);
}
