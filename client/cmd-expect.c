/* expect: wait for a pattern on one of a session's streams, and print the match. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "b64.h"
#include "dbgctl.h"

/*
 * A timeout and an end are told apart from a refusal; a pattern the daemon
 * cannot compile is the command line's fault (invalid_params), as a bad
 * option is.
 */
static const struct cmd_exit cmd_expect_exits[] = {
	{ "timeout", EXIT_TIMEOUT },
	{ "eof", EXIT_FAILED },
	{ "verdict", EXIT_VERDICT },
	{ "invalid_params", EXIT_USAGE },
	{ NULL, EXIT_FAILED },
};

/*
 * A text value of a reply as bytes (malloc'd, NUL-terminated, its length
 * in *len): a JSON string holds them as UTF-8, {"base64": ...} holds any;
 * *utf8 says which it was. NULL if v is neither.
 */
static unsigned char *
cmd_expect_bytes(json_t *v, size_t *len, int *utf8)
{
	unsigned char	*p;
	const char	*text;

	if (json_is_string(v)) {
		*len = json_string_length(v);
		*utf8 = 1;
		if ((p = malloc(*len + 1)) == NULL)
			client_fatal("out of memory");
		memcpy(p, json_string_value(v), *len);
		p[*len] = '\0';
		return p;
	}
	*utf8 = 0;
	if ((text = json_string_value(json_object_get(v, "base64"))) == NULL)
		return NULL;
	return b64_decode(text, strlen(text), len);
}

/*
 * Print bytes to fp as text a terminal shows faithfully: newlines and tabs
 * as they are, a backslash doubled, other control bytes (C1 ones in UTF-8
 * too) and, unless utf8, every byte from 0x80 as \xNN, CR as \r.
 */
static void
cmd_expect_shown(FILE *fp, const unsigned char *p, size_t len, int utf8)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (p[i] == '\n' || p[i] == '\t' || (p[i] >= 0x20 &&
		    p[i] < 0x7f && p[i] != '\\'))
			fputc(p[i], fp);
		else if (p[i] == '\\')
			fputs("\\\\", fp);
		else if (p[i] == '\r')
			fputs("\\r", fp);
		else if (utf8 && p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 &&
		    p[i + 1] <= 0x9f) {
			fprintf(fp, "\\x%02x\\x%02x", p[i], p[i + 1]);
			i++;
		} else if (utf8 && p[i] >= 0x80)
			fputc(p[i], fp);
		else
			fprintf(fp, "\\x%02x", p[i]);
	}
}

/*
 * Say why no match came, the daemon's words first, then every byte it
 * received since from (the got of the error's data) as text; exit status.
 * A got cut to its last bytes says where the rest is.
 */
static int
cmd_expect_nomatch(struct cmd *self, struct client *c, int status)
{
	json_t		*data = c->error.data;
	const char	*stream;
	unsigned char	*got;
	json_int_t	 from, at;
	size_t		 len;
	int		 utf8;

	got = cmd_expect_bytes(json_object_get(data, "got"), &len, &utf8);
	if (got == NULL) {
		client_warn("%s", c->error.message);
		return status;
	}
	from = json_integer_value(json_object_get(data, "from"));
	at = json_integer_value(json_object_get(data, "got_offset"));
	if ((stream = json_string_value(json_object_get(data, "stream"))) ==
	    NULL)
		stream = "STREAM";
	if (len == 0)
		fprintf(stderr, "dbgctl: %s; received nothing\n",
		    c->error.message);
	else if (at > from)
		fprintf(stderr, "dbgctl: %s; received (the last %zu bytes, from "
		    "offset %lld; all from %lld on: dbgctl logs --stream %s "
		    "%s):\n", c->error.message, len, (long long)at,
		    (long long)from, stream, args_operand(&self->args, 0));
	else
		fprintf(stderr, "dbgctl: %s; received:\n", c->error.message);
	cmd_expect_shown(stderr, got, len, utf8);
	if (len > 0 && got[len - 1] != '\n')
		fputc('\n', stderr);
	free(got);
	return status;
}

/* Say why expect failed; the status its kind maps to. */
static int
cmd_expect_failed(struct cmd *self, struct client *c)
{
	if (strcmp(c->error.kind, "timeout") == 0)
		return cmd_expect_nomatch(self, c, EXIT_TIMEOUT);
	if (strcmp(c->error.kind, "eof") == 0)
		return cmd_expect_nomatch(self, c, EXIT_FAILED);
	return client_error(c);
}

/* Build the params of the expect request from the command line. */
static json_t *
cmd_expect_params(struct cmd *self)
{
	const struct args	*a = &self->args;
	json_t			*params, *list;
	int			 i;

	params = json_pack("{s:O}", "session", self->session);
	list = json_array();
	for (i = 1; i < args_count(a); i++)
		json_array_append_new(list, json_string(args_operand(a, i)));
	json_object_set_new(params, args_has(a, "exact") ? "exact" :
	    "patterns", list);
	if (args_has(a, "stream"))
		json_object_set_new(params, "stream",
		    json_string(args_get(a, "stream")));
	if (args_has(a, "timeout"))
		json_object_set_new(params, "timeout",
		    json_integer(args_number(a, "timeout", 0)));
	if (args_has(a, "from"))
		json_object_set_new(params, "from",
		    json_integer(args_number(a, "from", 0)));
	/* Each dbgctl expect goes on where the last one matched. */
	json_object_set_new(params, "cursor", json_string(args_has(a,
	    "cursor") ? args_get(a, "cursor") : "cli"));
	if (args_has(a, "i") || args_has(a, "ignore-case"))
		json_object_set_new(params, "flags", json_pack("[s]",
		    "caseless"));
	return params;
}

/* Where an expect sent again goes on from, and when its --timeout ends. */
struct cmd_expect_again {
	long long	from;		/* -1: as the request says */
	long long	deadline;
};

/*
 * An expect sent again after a restart matches from where the first one
 * began, since the next daemon knows no cursor of the dead one's, with
 * what is left of its --timeout.
 */
static void
cmd_expect_again(struct client *c, json_t *params)
{
	struct cmd_expect_again	*ag = c->again_arg;
	long long		 left;

	if (ag->from >= 0 && json_object_get(params, "from") == NULL)
		json_object_set_new(params, "from", json_integer(ag->from));
	if (json_object_get(params, "timeout") == NULL)
		return;
	left = ag->deadline - reconnect_now();
	json_object_set_new(params, "timeout", json_integer(left > 0 ? left :
	    0));
}

/*
 * Where the cursor an expect goes on from stands: an expect of nothing
 * that does not wait matches there at once (and moves nothing), or on an
 * empty stream times out saying where it began; -1 if it failed
 * (c->error says why, as the expect would).
 */
static long long
cmd_expect_cursor(struct cmd *self, struct client *c)
{
	json_t		*params, *result;
	long long	 from;

	params = cmd_expect_params(self);
	json_object_del(params, "patterns");
	json_object_del(params, "flags");
	json_object_set_new(params, "exact", json_pack("[s]", ""));
	json_object_set_new(params, "timeout", json_integer(0));
	/* Nothing to match yet (an empty stream) times out, saying from. */
	if ((result = client_call(c, "expect", params)) == NULL) {
		if (strcmp(c->error.kind, "timeout") != 0 ||
		    !json_is_integer(json_object_get(c->error.data, "from")))
			return -1;
		return json_integer_value(json_object_get(c->error.data,
		    "from"));
	}
	from = json_integer_value(json_object_get(result, "from"));
	json_decref(result);
	return from;
}

/*
 * Make the expect ride out a restart of the daemon: sent again, it goes
 * on from the offset it began at (--from's, or the cursor's, asked first);
 * 0, or -1 when that asking failed.
 */
static int
cmd_expect_resume(struct cmd *self, struct client *c,
    struct cmd_expect_again *ag)
{
	const struct args *a = &self->args;

	ag->from = -1;
	ag->deadline = reconnect_now() + args_number(a, "timeout", 0);
	if (client_connect_remote() == NULL && !args_has(a, "from") &&
	    (ag->from = cmd_expect_cursor(self, c)) == -1)
		return -1;
	c->resume = 1;
	c->again = cmd_expect_again;
	c->again_arg = ag;
	return 0;
}

/* Print the match's text and a newline; an exit status. */
static int
cmd_expect_print(json_t *result)
{
	unsigned char	*text;
	size_t		 len;
	int		 utf8;

	if ((text = cmd_expect_bytes(json_object_get(result, "text"), &len,
	    &utf8)) == NULL)
		client_fatal("reply from the daemon not understood");
	text[len] = '\n';
	if (cmd_write_all(STDOUT_FILENO, text, len + 1) != 0)
		cmd_stdout_failed();
	free(text);
	return EXIT_OK;
}

/*
 * expect SESSION PATTERN...: wait until one of the patterns matches the
 * stream from --from (default: where the session's "cli" cursor, or
 * --cursor's, is: after the last match of a dbgctl expect, at first the
 * session's first byte), and print the match. A Ctrl-C meanwhile ends the client as
 * SIGINT does by default, so that a shell script is interrupted too; the
 * daemon forgets the wait with the connection.
 */
static int
cmd_expect_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	struct cmd_expect_again	 ag;
	const char		*stream;
	json_t			*result;
	int			 rv;

	stream = args_get(a, "stream");
	if (stream != NULL && !cmd_logs_stream_known(stream))
		return cmd_usage(self, "bad --stream: %s (console, target, "
		    "target-in, server, semihost or watch, or rtt0 to rtt3)",
		    stream);
	if (args_number(a, "timeout", 0) > INT32_MAX)
		return cmd_usage(self, "bad --timeout: %s (at most %d ms)",
		    args_get(a, "timeout"), INT32_MAX);
	if (cmd_expect_resume(self, c, &ag) != 0)
		return cmd_expect_failed(self, c);
	if ((result = client_call(c, "expect", cmd_expect_params(self))) ==
	    NULL)
		return cmd_expect_failed(self, c);
	if (c->json)
		rv = cmd_print_json(result) == 0 ? EXIT_OK : EXIT_FAILED;
	else
		rv = cmd_expect_print(result);
	json_decref(result);
	return rv;
}

/* What help says of each option of expect. */
static const struct cmd_option cmd_expect_options_help[] = {
	{ "stream", "S",
	    "console, target, target-in, server, semihost, watch or rtt0 to "
	    "rtt3 (RTT channels) (default: target if the session has a "
	    "transport, else console)" },
	{ "timeout", "MS",
	    "exit 4 if nothing matched by then (default: wait for a match or "
	    "the stream's end)" },
	{ "exact", NULL,
	    "the patterns are literal text, not regular expressions" },
	{ "from", "OFF",
	    "match from this offset in the stream, as --json's next of an "
	    "earlier match (default: where the last dbgctl expect on the "
	    "session matched, at first its start)" },
	{ "cursor", "NAME",
	    "go on from, and move, the session's cursor NAME instead of the "
	    "one every dbgctl expect shares (cli)" },
	{ "i", NULL,
	    "ignore case: a matches A (default: case matters)" },
	{ "ignore-case", NULL,
	    "the same as -i" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_expect_entry = {
	.name = "expect",
	.usage = "[--stream S] [--timeout MS] [--exact] [--from OFF] "
	    "[--cursor NAME] [-i|--ignore-case] SESSION PATTERN...",
	.args = { "stream: timeout# exact from# cursor: i ignore-case", 2,
	    -1 },
	.flags = CMD_SESSION,	/* read-only: never starts a daemon */
	.exits = cmd_expect_exits,
	.exec = cmd_expect_exec,
	.summary = "wait for a pattern in a session's output, print the match",
	.options = cmd_expect_options_help,
};
