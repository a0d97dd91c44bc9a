/* logs: copy one of a session's streams to stdout, and with -f follow it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "b64.h"
#include "dbgctl.h"
#include "term.h"

/* Where --plain stands in an escape sequence, which may span two reads. */
enum cmd_logs_plain {
	CMD_LOGS_TEXT,		/* between sequences */
	CMD_LOGS_ESC,		/* after ESC */
	CMD_LOGS_CSI,		/* ESC [: parameters, then a final byte */
	CMD_LOGS_STRING,	/* ESC ] P X ^ _: up to BEL or ESC \ */
	CMD_LOGS_STRING_ESC,	/* an ESC in such a string */
	CMD_LOGS_NF,		/* ESC and intermediates: up to a final byte */
	CMD_LOGS_CHARSET,	/* ESC ( and the like: one byte names a set */
};

/* The streams a session may have (expect-spec: console, target, ...). */
static const char *const cmd_logs_streams[] = {
	"console", "target", "target-in", "server", "semihost", "watch",
	"rtt0", "rtt1", "rtt2", "rtt3", NULL
};

/* Where a logs command stands: what to ask for next, what it collected. */
struct cmd_logs_state {
	json_t		*session;	/* the SESSION reference (borrowed) */
	const char	*stream;	/* --stream, or NULL: the console */
	long long	 offset;	/* next byte to ask for */
	long long	 lines;		/* -n N, first call only */
	int		 follow;	/* -f */
	int		 wait;		/* daemon may wait */

	/* --plain: where it stands, and CRs held until what follows shows. */
	int		 plain;
	enum cmd_logs_plain plain_at;
	size_t		 crs;

	/*
	 * --timestamps: the times of the result at hand, the arrival time of
	 * the line being printed, whether the next byte of the stream starts
	 * a line, and whether the next byte printed does; every time seen,
	 * for --json.
	 */
	int		 timestamps;
	json_t		*times;
	size_t		 times_at;	/* where cmd_logs_time_of stands */
	double		 line_time;
	int		 line_start;
	int		 out_start;
	json_t		*all_times;

	/* Ranges the daemon could not give: said on stderr, and the exit. */
	json_t		*missing;

	/*
	 * Output to a terminal (unless --raw): the modes the bytes printed
	 * set, undone when the command ends, however it ends.
	 */
	int		 term_out;
	struct term	 term;

	/* --json: every byte read, and the last result. */
	unsigned char	*all;
	size_t		 all_len;
	json_t		*last;
};

/* Build the params of the next logs request. */
static json_t *
cmd_logs_params(struct cmd_logs_state *st)
{
	json_t	*params;

	params = json_pack("{s:O}", "session", st->session);
	if (st->lines >= 0) {
		json_object_set_new(params, "lines", json_integer(st->lines));
		st->lines = -1;
	} else
		json_object_set_new(params, "offset", json_integer(st->offset));
	/* Only when asked, so that a console log is asked for as before. */
	if (st->stream != NULL)
		json_object_set_new(params, "stream", json_string(st->stream));
	if (st->timestamps)
		json_object_set_new(params, "timestamps", json_true());
	if (st->wait)
		json_object_set_new(params, "wait", json_true());
	return params;
}

/*
 * Whether byte ch, in state st->plain_at, is text to keep (1) or part of
 * an escape sequence or a control to drop (0); moves the state on.
 */
static int
cmd_logs_plain_byte(struct cmd_logs_state *st, unsigned char ch)
{
	switch (st->plain_at) {
	case CMD_LOGS_TEXT:
		if (ch == 0x1b)
			st->plain_at = CMD_LOGS_ESC;
		/* BEL, and SO and SI, which shift character sets. */
		return ch != 0x1b && ch != 0x07 && ch != 0x0e && ch != 0x0f;
	case CMD_LOGS_ESC:
		if (ch == '[')
			st->plain_at = CMD_LOGS_CSI;
		else if (strchr("]PX^_", ch) != NULL && ch != '\0')
			st->plain_at = CMD_LOGS_STRING;
		else if (strchr("()*+-./", ch) != NULL && ch != '\0')
			st->plain_at = CMD_LOGS_CHARSET;
		else if (ch >= 0x20 && ch <= 0x2f)
			st->plain_at = CMD_LOGS_NF;
		else if (ch != 0x1b)
			st->plain_at = CMD_LOGS_TEXT;
		return 0;
	case CMD_LOGS_CSI:
	case CMD_LOGS_NF:
		/* A final byte ends it; a control byte in it is dropped too. */
		if ((st->plain_at == CMD_LOGS_CSI && ch >= 0x40 && ch <= 0x7e) ||
		    (st->plain_at == CMD_LOGS_NF && ch >= 0x30 && ch <= 0x7e))
			st->plain_at = CMD_LOGS_TEXT;
		else if (ch == 0x1b)
			st->plain_at = CMD_LOGS_ESC;
		return 0;
	case CMD_LOGS_STRING:
		if (ch == 0x07)
			st->plain_at = CMD_LOGS_TEXT;
		else if (ch == 0x1b)
			st->plain_at = CMD_LOGS_STRING_ESC;
		return 0;
	case CMD_LOGS_STRING_ESC:
		st->plain_at = ch == '\\' ? CMD_LOGS_TEXT : ch == 0x1b ?
		    CMD_LOGS_STRING_ESC : CMD_LOGS_STRING;
		return 0;
	case CMD_LOGS_CHARSET:
		st->plain_at = CMD_LOGS_TEXT;
		return 0;
	}
	abort();
}

/*
 * --plain: data without escape sequences, CR LF (and CR CR LF) as LF,
 * into out (room for len + st->crs bytes); its length. A CR is held until
 * what follows it shows whether it ends a line, across reads too.
 */
static size_t
cmd_logs_plain(struct cmd_logs_state *st, const unsigned char *data,
    size_t len, unsigned char *out)
{
	size_t	i, n = 0;

	for (i = 0; i < len; i++) {
		if (!cmd_logs_plain_byte(st, data[i]))
			continue;
		if (data[i] == '\r') {
			st->crs++;
			continue;
		}
		if (data[i] != '\n') {
			memset(out + n, '\r', st->crs);
			n += st->crs;
		}
		st->crs = 0;
		out[n++] = data[i];
	}
	return n;
}

/* Copy bytes to stdout, or with --json to the collection. */
static void
cmd_logs_copy(struct client *c, struct cmd_logs_state *st,
    const unsigned char *data, size_t len)
{
	unsigned char	*p;

	/* Known before they are shown: a signal now undoes them too. */
	if (st->term_out) {
		term_feed(&st->term, (const char *)data, len);
		tty_modes(&st->term);
	}
	if (!c->json) {
		if (cmd_write_all(STDOUT_FILENO, data, len) != 0)
			cmd_stdout_failed();
		return;
	}
	if ((p = realloc(st->all, st->all_len + len + 1)) == NULL)
		client_fatal("out of memory");
	memcpy(p + st->all_len, data, len);
	st->all = p;
	st->all_len += len;
}

/*
 * The arrival time of the byte at offset off: that of the last of the
 * result's times that starts at or before it (the first holds the
 * result's first byte), or 0 if none does. Asked for offsets in order, it
 * walks the times once.
 */
static double
cmd_logs_time_of(struct cmd_logs_state *st, long long off)
{
	json_t	*next;

	while ((next = json_array_get(st->times, st->times_at + 1)) != NULL &&
	    json_integer_value(json_array_get(next, 0)) <= off)
		st->times_at++;
	next = json_array_get(st->times, st->times_at);
	if (next == NULL || json_integer_value(json_array_get(next, 0)) > off)
		return 0;
	return json_number_value(json_array_get(next, 1));
}

/* Print --timestamps' prefix of a line that arrived at t (unix time). */
static void
cmd_logs_stamp(struct client *c, struct cmd_logs_state *st, double t)
{
	struct tm	tm;
	time_t		secs;
	long long	ms;
	char		buf[64];
	size_t		n;

	ms = t > 0 ? (long long)(t * 1000.0) : 0;
	secs = (time_t)(ms / 1000);
	if (gmtime_r(&secs, &tm) == NULL)
		memset(&tm, 0, sizeof tm);
	n = strftime(buf, sizeof buf, "[%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof buf - n, ".%03lld] ", ms % 1000);
	cmd_logs_copy(c, st, (const unsigned char *)buf, strlen(buf));
}

/*
 * Hand decoded bytes on, with --plain without their escape sequences;
 * with --timestamps they are one line's, or the start of one (no newline
 * but the last byte), and its prefix comes before the line's first byte
 * printed: --plain may drop a line's first bytes, never its newline.
 */
static void
cmd_logs_line(struct client *c, struct cmd_logs_state *st,
    const unsigned char *data, size_t len)
{
	unsigned char	*plain = NULL;

	if (st->plain) {
		if ((plain = malloc(len + st->crs + 1)) == NULL)
			client_fatal("out of memory");
		len = cmd_logs_plain(st, data, len, plain);
		data = plain;
	}
	/* --json keeps the bytes as they are, the times beside them. */
	if (len > 0 && st->timestamps && !c->json && st->out_start)
		cmd_logs_stamp(c, st, st->line_time);
	if (len > 0)
		st->out_start = data[len - 1] == '\n';
	cmd_logs_copy(c, st, data, len);
	free(plain);
}

/*
 * Hand decoded bytes on, the result's from offset off on; with
 * --timestamps line by line, each line's time that of its first byte.
 */
static void
cmd_logs_output(struct client *c, struct cmd_logs_state *st,
    const unsigned char *data, size_t len, long long off)
{
	const unsigned char	*nl;
	size_t			 n;

	if (!st->timestamps) {
		cmd_logs_line(c, st, data, len);
		return;
	}
	while (len > 0) {
		if (st->line_start)
			st->line_time = cmd_logs_time_of(st, off);
		nl = memchr(data, '\n', len);
		n = nl != NULL ? (size_t)(nl - data) + 1 : len;
		st->line_start = nl != NULL;
		cmd_logs_line(c, st, data, n);
		data += n;
		len -= n;
		off += n;
	}
}

/* Say that the log lacks a range (a write to it failed), and remember it. */
static void
cmd_logs_missing(struct client *c, struct cmd_logs_state *st, json_t *gap)
{
	json_int_t off = json_integer_value(json_object_get(gap, "offset"));
	json_int_t n = json_integer_value(json_object_get(gap, "bytes"));

	if (gap == NULL)
		return;
	if (!c->json && (st->stream == NULL || strcmp(st->stream,
	    "console") == 0))
		fprintf(stderr, "dbgctl: %lld bytes of the console from offset "
		    "%lld are missing from the log (see status: log_error)\n",
		    (long long)n, (long long)off);
	else if (!c->json)
		fprintf(stderr, "dbgctl: %lld bytes of the %s stream from offset "
		    "%lld are missing from its log (see status: log_error)\n",
		    (long long)n, st->stream, (long long)off);
	json_array_append(st->missing, gap);
}

/*
 * Take the times of a result for --timestamps, and keep them for --json
 * (a chunk that two results hold once); -1 if they are not [[OFF, T], ...].
 */
static int
cmd_logs_times(struct cmd_logs_state *st, json_t *result)
{
	json_t	*times, *entry, *last;
	size_t	 i;

	times = json_object_get(result, "times");
	if (!json_is_array(times))
		return -1;
	json_array_foreach(times, i, entry) {
		if (!json_is_integer(json_array_get(entry, 0)) ||
		    !json_is_number(json_array_get(entry, 1)))
			return -1;
		last = json_array_get(st->all_times,
		    json_array_size(st->all_times) - 1);
		if (last == NULL || json_integer_value(json_array_get(entry,
		    0)) > json_integer_value(json_array_get(last, 0)))
			json_array_append(st->all_times, entry);
	}
	json_decref(st->times);
	st->times = json_incref(times);
	st->times_at = 0;
	return 0;
}

/*
 * Take one logs result: output its data and advance. Returns 1 when there is
 * more to read, 0 when done.
 */
static int
cmd_logs_result(struct client *c, struct cmd_logs_state *st, json_t *result)
{
	const char	*data;
	unsigned char	*bytes;
	json_t		*next, *size;
	size_t		 len;
	long long	 prev = st->offset;
	int		 waited = st->wait;

	data = json_string_value(json_object_get(result, "data"));
	next = json_object_get(result, "next_offset");
	size = json_object_get(result, "size");
	if (data == NULL || !json_is_integer(next) || !json_is_integer(size))
		client_fatal("reply from the daemon not understood");
	if ((bytes = b64_decode(data, strlen(data), &len)) == NULL)
		client_fatal("reply from the daemon not understood");
	if (st->timestamps && cmd_logs_times(st, result) != 0)
		client_fatal("reply from the daemon not understood");
	cmd_logs_output(c, st, bytes, len, json_integer_value(
	    json_object_get(result, "offset")));
	free(bytes);
	cmd_logs_missing(c, st, json_object_get(result, "missing"));

	st->offset = json_integer_value(next);
	if (st->offset < json_integer_value(size)) {
		st->wait = 0;
		/* No progress without waiting: do not spin. */
		return len > 0 || st->offset != prev || waited;
	}
	if (!st->follow || json_is_true(json_object_get(result, "ended")))
		return 0;
	st->wait = 1;
	return 1;
}

/* Print, for --json, one result object holding every byte read. */
static void
cmd_logs_json(struct cmd_logs_state *st, long long first)
{
	char	*data;

	if ((data = b64_encode(st->all, st->all_len)) == NULL)
		client_fatal("out of memory");
	json_object_set_new(st->last, "data", json_string(data));
	json_object_set_new(st->last, "offset", json_integer(first));
	json_object_del(st->last, "missing");
	if (json_array_size(st->missing) > 0)
		json_object_set(st->last, "missing", st->missing);
	if (st->timestamps)
		json_object_set(st->last, "times", st->all_times);
	free(data);
	cmd_print_json(st->last);
}

/* Whether name is a stream a session may have. */
int
cmd_logs_stream_known(const char *name)
{
	const char *const	*s;

	for (s = cmd_logs_streams; *s != NULL; s++) {
		if (strcmp(*s, name) == 0)
			return 1;
	}
	return 0;
}

/*
 * A terminal on stdout is left as it was found, as attach leaves it: what
 * the log's escape sequences turn on (the alternate screen, a hidden
 * cursor, keypad keys, mouse reports) is undone at the end, at a fatal
 * signal (^C ends logs -f) and while stopped. --raw, --json and a stdout
 * that is no terminal get the bytes alone.
 */
static void
cmd_logs_terminal(struct cmd *self, struct client *c,
    struct cmd_logs_state *st)
{
	if (c->json || args_has(&self->args, "raw") ||
	    !isatty(STDOUT_FILENO))
		return;
	st->term_out = 1;
	term_init(&st->term);
	tty_output(STDOUT_FILENO);
	tty_plain(-1);
}

/* logs: print the console log of a session, raw, and follow it with -f. */
static int
cmd_logs_exec(struct cmd *self, struct client *c)
{
	struct cmd_logs_state	 st;
	json_t			*result;
	long long		 first = -1;
	int			 rv = EXIT_OK, more = 1;

	memset(&st, 0, sizeof st);
	st.session = self->session;
	st.stream = args_get(&self->args, "stream");
	if (st.stream != NULL && !cmd_logs_stream_known(st.stream))
		return cmd_usage(self, "bad --stream: %s (console, target, "
		    "target-in, server, semihost or watch, or rtt0 to rtt3)",
		    st.stream);
	st.lines = args_number(&self->args, "n", -1);
	st.follow = args_has(&self->args, "f");
	st.plain = args_has(&self->args, "plain");
	st.timestamps = args_has(&self->args, "timestamps");
	st.line_start = st.out_start = 1;
	st.all_times = json_array();
	st.missing = json_array();
	cmd_logs_terminal(self, c, &st);
	/*
	 * Each request names the offset after the last byte printed: sent
	 * again to the daemon that adopts the session, it goes on there.
	 */
	c->resume = 1;
	while (more) {
		result = client_call(c, "logs", cmd_logs_params(&st));
		if (result == NULL) {
			rv = client_error(c);
			break;
		}
		if (first == -1)
			first = json_integer_value(json_object_get(result,
			    "offset"));
		more = cmd_logs_result(c, &st, result);
		json_decref(st.last);
		st.last = result;
	}
	/* CRs held at the end are the log's last bytes. */
	for (; rv == EXIT_OK && st.crs > 0; st.crs--)
		cmd_logs_copy(c, &st, (const unsigned char *)"\r", 1);
	if (st.term_out)
		tty_leave();
	if (rv == EXIT_OK && c->json)
		cmd_logs_json(&st, first);
	/* Output that was printed but is not all there is not a success. */
	if (rv == EXIT_OK && json_array_size(st.missing) > 0)
		rv = EXIT_FAILED;
	json_decref(st.missing);
	json_decref(st.last);
	json_decref(st.times);
	json_decref(st.all_times);
	free(st.all);
	return rv;
}

/* What help says of each option of logs. */
static const struct cmd_option cmd_logs_options_help[] = {
	{ "f", NULL,
	    "follow: print more as it comes, until the session has ended" },
	{ "n", "N",
	    "start at the last N lines (default: the first byte)" },
	{ "plain", NULL,
	    "without escape sequences, and CR LF as LF (default: byte for "
	    "byte)" },
	{ "raw", NULL,
	    "byte for byte to a terminal too: the modes the log sets are not "
	    "undone at the end (default: undone when stdout is a terminal)" },
	{ "stream", "S",
	    "console, target (the transport's output), target-in (what was "
	    "sent to it), server, semihost (the firmware's semihosting "
	    "console), watch (dbgctl watch's samples) or rtt0 to rtt3 (its "
	    "RTT channels) (default: console)" },
	{ "timestamps", NULL,
	    "start each line with the UTC time its first byte arrived, as "
	    "[2026-12-02T03:04:05.678] (default: none)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_logs_entry = {
	.name = "logs",
	.usage = "[-f] [-n N] [--plain] [--raw] [--stream S] [--timestamps] "
	    "SESSION",
	.args = { "f n# plain raw stream: timestamps", 1, 1 },
	.flags = CMD_SESSION,	/* read-only: never starts a daemon */
	.exec = cmd_logs_exec,
	.summary = "print a session's console log (or another stream), and "
	    "follow it",
	.options = cmd_logs_options_help,
};
