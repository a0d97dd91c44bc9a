/*
 * QEMU's QMP monitor on a socketpair whose other end QEMU got as a chardev
 * (fd=, server=off): the greeting, qmp_capabilities, then commands, each
 * with an id of this daemon's, answered in order. Everything is on the
 * loop: a command queued before the handshake is done waits for it. QEMU
 * runs the monitor in its main loop while the vCPU goes on, so a command
 * does not stop the core, but a long one holds QEMU's big lock, which the
 * core's device accesses need: hence the bound on a read (live.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "hex.h"
#include "live.h"

/* The longest line QMP may send: a LIVE_QMP_MAX read is ~32 KiB of text. */
#define LIVE_QMP_LINE_MAX	(256 * 1024)

/* Where the handshake is. */
enum live_qmp_phase {
	LIVE_QMP_GREETING,	/* QEMU's greeting awaited */
	LIVE_QMP_CAPS,		/* qmp_capabilities sent, its return awaited */
	LIVE_QMP_READY,
	LIVE_QMP_CLOSED
};

/* One command, from its queueing until its reply (cb NULL: cancelled). */
struct live_qmp_cmd {
	TAILQ_ENTRY(live_qmp_cmd) entry;
	unsigned long	 token;
	char		*line;
	bool		 sent;
	live_qmp_cb	 cb;
	void		*arg;
};

struct live_qmp {
	uv_pipe_t	 pipe;
	enum live_qmp_phase phase;
	char		*buf;		/* a line not yet ended */
	size_t		 len;
	TAILQ_HEAD(, live_qmp_cmd) cmds;
	size_t		 ncmds;
	unsigned long	 next;
	void		(*closed)(void *);
	void		*arg;
};

static void	live_qmp_fail(struct live_qmp *, const char *why);

/* Send one line; a write that fails is the connection's end. */
static void
live_qmp_send(struct live_qmp *q, const char *line)
{
	if (stream_write((uv_stream_t *)&q->pipe, line, strlen(line), NULL,
	    NULL) < 0)
		live_qmp_fail(q, "QEMU's monitor does not take commands");
}

/* Send what is queued and not sent yet, once the handshake is done. */
static void
live_qmp_flush(struct live_qmp *q)
{
	struct live_qmp_cmd *c;

	TAILQ_FOREACH(c, &q->cmds, entry) {
		if (q->phase != LIVE_QMP_READY)
			return;
		if (c->sent)
			continue;
		c->sent = true;
		live_qmp_send(q, c->line);
	}
}

/* Take a command off the queue, before its callback may queue more. */
static void
live_qmp_cmd_unlink(struct live_qmp *q, struct live_qmp_cmd *c)
{
	TAILQ_REMOVE(&q->cmds, c, entry);
	q->ncmds--;
}

/* Free a command that left the queue. */
static void
live_qmp_cmd_free(struct live_qmp_cmd *c)
{
	free(c->line);
	free(c);
}

/* The handle closed: free what was ours. */
static void
live_qmp_handle_closed(uv_handle_t *h)
{
	struct live_qmp *q = h->data;

	free(q->buf);
	free(q);
}

/*
 * The connection ended (QEMU exited, or broke the protocol): each command
 * waiting hears why, then the owner hears of the close.
 */
static void
live_qmp_fail(struct live_qmp *q, const char *why)
{
	struct live_qmp_cmd *c;

	if (q->phase == LIVE_QMP_CLOSED)
		return;
	q->phase = LIVE_QMP_CLOSED;
	uv_read_stop((uv_stream_t *)&q->pipe);
	while ((c = TAILQ_FIRST(&q->cmds)) != NULL) {
		live_qmp_cmd_unlink(q, c);
		if (c->cb != NULL)
			c->cb(c->arg, NULL, why);
		live_qmp_cmd_free(c);
	}
	if (q->closed != NULL)
		q->closed(q->arg);
}

/* The command a reply's id names, or NULL (another daemon's, say). */
static struct live_qmp_cmd *
live_qmp_find(struct live_qmp *q, json_t *id)
{
	struct live_qmp_cmd	*c;
	char			 want[64];

	if (!json_is_string(id))
		return NULL;
	TAILQ_FOREACH(c, &q->cmds, entry) {
		snprintf(want, sizeof want, "dbgctld-%ld-%lu", (long)getpid(),
		    c->token);
		if (c->sent && strcmp(json_string_value(id), want) == 0)
			return c;
	}
	return NULL;
}

/* A reply: its command hears its return, or the error's text. */
static void
live_qmp_reply(struct live_qmp *q, json_t *msg)
{
	struct live_qmp_cmd	*c;
	const char		*desc;

	if ((c = live_qmp_find(q, json_object_get(msg, "id"))) == NULL)
		return;
	desc = json_string_value(json_object_get(json_object_get(msg,
	    "error"), "desc"));
	live_qmp_cmd_unlink(q, c);
	if (c->cb != NULL) {
		if (json_object_get(msg, "return") != NULL)
			c->cb(c->arg, json_object_get(msg, "return"), NULL);
		else
			c->cb(c->arg, NULL, desc != NULL ? desc :
			    "QEMU's monitor refused the command");
	}
	live_qmp_cmd_free(c);
}

/* One whole line from QEMU: greeting, capabilities' return, reply, event. */
static void
live_qmp_line(struct live_qmp *q, const char *line, size_t len)
{
	json_t *msg;

	/* An adopted channel may start in the middle of a dead daemon's line. */
	if ((msg = json_loadb(line, len, 0, NULL)) == NULL)
		return;
	if (q->phase == LIVE_QMP_GREETING && json_object_get(msg, "QMP")) {
		q->phase = LIVE_QMP_CAPS;
		live_qmp_send(q, "{\"execute\":\"qmp_capabilities\"}\n");
	} else if (q->phase == LIVE_QMP_CAPS && (json_object_get(msg,
	    "return") != NULL || json_object_get(msg, "error") != NULL)) {
		q->phase = LIVE_QMP_READY;
		live_qmp_flush(q);
	} else if (q->phase == LIVE_QMP_READY && json_object_get(msg,
	    "event") == NULL)
		live_qmp_reply(q, msg);
	json_decref(msg);
}

/* Bytes from QEMU: split them into lines, keeping an unended one. */
static void
live_qmp_read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct live_qmp	*q = st->data;
	const char	*p = buf->base, *nl;
	size_t		 left;

	if (n < 0) {
		live_qmp_fail(q, "QEMU's monitor closed: QEMU has exited");
		return;
	}
	left = (size_t)n;
	while (left > 0 && q->phase != LIVE_QMP_CLOSED) {
		nl = memchr(p, '\n', left);
		if (q->len + (nl != NULL ? (size_t)(nl - p) : left) >
		    LIVE_QMP_LINE_MAX) {
			live_qmp_fail(q, "QEMU's monitor sent a line over "
			    "256 KiB");
			return;
		}
		q->buf = xreallocarray(q->buf, q->len + left + 1, 1);
		if (nl == NULL) {
			memcpy(q->buf + q->len, p, left);
			q->len += left;
			return;
		}
		memcpy(q->buf + q->len, p, (size_t)(nl - p));
		q->len += (size_t)(nl - p);
		live_qmp_line(q, q->buf, q->len);
		q->len = 0;
		left -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
}

/*
 * QMP on fd (taken): the handshake starts when QEMU greets, or, for an
 * adopted channel, was done by the dead daemon; closed(arg) hears the
 * connection's end. NULL with err.
 */
struct live_qmp *
live_qmp_open(int fd, bool adopted, void (*closed)(void *), void *arg,
    char *err, size_t errlen)
{
	struct live_qmp	*q = xcalloc(1, sizeof *q);
	int		 rc;

	TAILQ_INIT(&q->cmds);
	q->closed = closed;
	q->arg = arg;
	q->phase = adopted ? LIVE_QMP_READY : LIVE_QMP_GREETING;
	uv_pipe_init(dmn.loop, &q->pipe, 0);
	q->pipe.data = q;
	if ((rc = uv_pipe_open(&q->pipe, fd)) != 0 || (rc = uv_read_start(
	    (uv_stream_t *)&q->pipe, loop_alloc_cb, live_qmp_read_cb)) != 0) {
		snprintf(err, errlen, "QMP channel: %s", uv_strerror(rc));
		uv_close((uv_handle_t *)&q->pipe, live_qmp_handle_closed);
		return NULL;
	}
	return q;
}

/*
 * Queue HMP's line (human-monitor-command); cb(arg, return, NULL) or
 * cb(arg, NULL, why) follows from the loop. Its token, 0 if QMP is closed.
 */
unsigned long
live_qmp_hmp(struct live_qmp *q, const char *line, live_qmp_cb cb, void *arg)
{
	struct live_qmp_cmd	*c;
	json_t			*cmd;
	char			 id[64], *text;

	if (q->phase == LIVE_QMP_CLOSED)
		return 0;
	c = xcalloc(1, sizeof *c);
	c->token = ++q->next;
	c->cb = cb;
	c->arg = arg;
	snprintf(id, sizeof id, "dbgctld-%ld-%lu", (long)getpid(), c->token);
	cmd = json_pack("{s:s, s:{s:s}, s:s}", "execute",
	    "human-monitor-command", "arguments", "command-line", line, "id",
	    id);
	text = json_dumps(cmd, JSON_COMPACT);
	json_decref(cmd);
	xasprintf(&c->line, "%s\n", text);
	free(text);
	TAILQ_INSERT_TAIL(&q->cmds, c, entry);
	q->ncmds++;
	live_qmp_flush(q);
	return c->token;
}

/* Its callback is not called: the reply, when it comes, is dropped. */
void
live_qmp_cancel(struct live_qmp *q, unsigned long token)
{
	struct live_qmp_cmd *c;

	TAILQ_FOREACH(c, &q->cmds, entry)
		if (c->token == token)
			c->cb = NULL;
}

/* Commands queued or sent and not answered yet. */
size_t
live_qmp_outstanding(const struct live_qmp *q)
{
	return q->ncmds;
}

/* Close the connection: no callback is called any more. */
void
live_qmp_close(struct live_qmp *q)
{
	struct live_qmp_cmd *c;

	if (q == NULL)
		return;
	q->phase = LIVE_QMP_CLOSED;
	while ((c = TAILQ_FIRST(&q->cmds)) != NULL) {
		live_qmp_cmd_unlink(q, c);
		live_qmp_cmd_free(c);
	}
	uv_close((uv_handle_t *)&q->pipe, live_qmp_handle_closed);
}

/* One "0xNN" of xp's /bx output at *p, advanced past it; -1 if not one. */
static int
live_qmp_xp_byte(const char **p)
{
	const char	*s = *p + strspn(*p, " ");
	int		 hi, lo;

	if (s[0] != '0' || s[1] != 'x' || (hi = hex_digit(s[2])) < 0 ||
	    (lo = hex_digit(s[3])) < 0 || hex_digit(s[4]) >= 0)
		return -1;
	*p = s + 4;
	return hi << 4 | lo;
}

/*
 * The bytes of "xp /LENbx ADDR"'s text into out: lines of "ADDRESS: 0xNN
 * ..."; one that says "Cannot access memory" (nothing at that address)
 * fails. 0, or -1 with err.
 */
int
live_qmp_xp(const char *text, uint64_t addr, unsigned char *out, size_t len,
    char *err, size_t errlen)
{
	const char		*p = text, *colon;
	unsigned long long	 at;
	size_t			 got = 0;
	int			 b;

	while (*p != '\0' && got < len) {
		at = strtoull(p, NULL, 16);
		if ((colon = strchr(p, ':')) == NULL)
			break;
		p = colon + 1;
		if (strncmp(p + strspn(p, " "), "Cannot access memory", 20) ==
		    0) {
			snprintf(err, errlen, "no memory at 0x%llx (%zu of %zu "
			    "bytes read)", at, got, len);
			return -1;
		}
		while ((b = live_qmp_xp_byte(&p)) >= 0 && got < len)
			out[got++] = (unsigned char)b;
		p += strcspn(p, "\n");
		p += *p == '\n';
	}
	if (got != len) {
		snprintf(err, errlen, "QEMU's monitor answered %zu of %zu bytes "
		    "at 0x%llx", got, len, (unsigned long long)addr);
		return -1;
	}
	return 0;
}
