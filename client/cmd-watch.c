/*
 * watch: sample expressions of a running target at a rate (the daemon's
 * watch method) and print them: a table redrawn in place on a terminal,
 * a line a sample otherwise, until Ctrl-C stops the watch it started;
 * with --until, until a sample meets a condition.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "b64.h"
#include "dbgctl.h"

/* Bytes one read of the watch stream asks for. */
#define CMD_WATCH_READ	(64 * 1024)

/* Set by SIGINT: stop the watch after the read in progress. */
static volatile sig_atomic_t cmd_watch_interrupted;

/* What a watch command prints from, as samples come. */
struct cmd_watch_state {
	json_t		*session;
	json_t		*started;	/* the start's answer */
	long long	 id;
	long long	 offset;	/* in the watch stream */
	char		*partial;	/* a line not whole yet */
	size_t		 partial_len;
	int		 tty;
	int		 drawn;		/* lines of the table on screen */
};

/* SIGINT: note it; the loop stops the watch and ends. */
static void
cmd_watch_sigint(int sig)
{
	(void)sig;
	cmd_watch_interrupted = 1;
}

/* A sample's value as text. */
static void
cmd_watch_value(json_t *v, char *buf, size_t size)
{
	char *s;

	if (json_is_string(v)) {
		snprintf(buf, size, "%s", json_string_value(v));
		return;
	}
	s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	snprintf(buf, size, "%s", s != NULL ? s : "?");
	free(s);
}

/* Redraw the table in place: a heading, then an expression and its value a line. */
static void
cmd_watch_table(struct cmd_watch_state *st, json_t *sample)
{
	json_t		*exprs = json_object_get(st->started, "expressions"), *e;
	const char	*name;
	char		 buf[256];
	size_t		 i;

	if (st->drawn > 0)
		printf("\033[%dA", st->drawn);
	printf("\r\033[Kwatch %lld at %lld Hz: seq %lld, skipped %lld\n",
	    st->id, (long long)json_integer_value(json_object_get(st->started,
	    "hz")), (long long)json_integer_value(json_object_get(sample,
	    "seq")), (long long)json_integer_value(json_object_get(st->started,
	    "skipped")));
	json_array_foreach(exprs, i, e) {
		name = json_string_value(json_object_get(e, "expression"));
		cmd_watch_value(json_object_get(json_object_get(sample,
		    "values"), name), buf, sizeof buf);
		printf("\033[K%-24s %-8s %s\n", name, json_string_value(
		    json_object_get(e, "type")), buf);
	}
	st->drawn = (int)json_array_size(exprs) + 1;
	fflush(stdout);
}

/* One sample as a plain line: seq, time, then EXPR=VALUE for each. */
static void
cmd_watch_plain(json_t *sample)
{
	const char	*name;
	json_t		*v;
	char		 buf[256];

	printf("%lld %.6f", (long long)json_integer_value(json_object_get(
	    sample, "seq")), json_real_value(json_object_get(sample, "t")));
	json_object_foreach(json_object_get(sample, "values"), name, v) {
		cmd_watch_value(v, buf, sizeof buf);
		printf(" %s=%s", name, buf);
	}
	if (json_object_get(sample, "skipped") != NULL)
		printf(" skipped=%lld", (long long)json_integer_value(
		    json_object_get(sample, "skipped")));
	printf("\n");
	fflush(stdout);
}

/* One line of the stream: this watch's sample is printed; 1 if it stopped. */
static int
cmd_watch_line(struct client *c, struct cmd_watch_state *st,
    const char *line, size_t len)
{
	json_t	*j = json_loadb(line, len, 0, NULL);
	int	 stopped;

	if (j == NULL || json_integer_value(json_object_get(j, "watch")) !=
	    st->id) {
		json_decref(j);
		return 0;
	}
	stopped = json_is_true(json_object_get(j, "stopped"));
	if (c->json)
		printf("%.*s\n", (int)len, line);
	else if (stopped)
		fprintf(stderr, "dbgctl: watch %lld stopped: %s\n", st->id,
		    json_string_value(json_object_get(j, "why")));
	else if (st->tty) {
		json_object_set_new(st->started, "skipped", json_integer(
		    json_integer_value(json_object_get(st->started,
		    "skipped")) + json_integer_value(json_object_get(j,
		    "skipped"))));
		cmd_watch_table(st, j);
	} else
		cmd_watch_plain(j);
	json_decref(j);
	return stopped;
}

/* The bytes of a read: whole lines go to cmd_watch_line; 1 if the watch stopped. */
static int
cmd_watch_bytes(struct client *c, struct cmd_watch_state *st,
    const unsigned char *data, size_t len)
{
	char	*nl, *p;
	int	 stopped = 0;

	st->partial = realloc(st->partial, st->partial_len + len + 1);
	if (st->partial == NULL)
		client_fatal("out of memory");
	memcpy(st->partial + st->partial_len, data, len);
	st->partial_len += len;
	p = st->partial;
	while (!stopped && (nl = memchr(p, '\n', st->partial_len - (size_t)(p -
	    st->partial))) != NULL) {
		stopped = cmd_watch_line(c, st, p, (size_t)(nl - p));
		p = nl + 1;
	}
	st->partial_len -= (size_t)(p - st->partial);
	memmove(st->partial, p, st->partial_len);
	return stopped;
}

/* Follow the watch stream from the start's offset until a stop or Ctrl-C. */
static int
cmd_watch_follow(struct client *c, struct cmd_watch_state *st)
{
	json_t		*r;
	const char	*data;
	unsigned char	*bytes;
	size_t		 len;
	int		 stopped = 0;

	while (!stopped && !cmd_watch_interrupted) {
		r = client_call(c, "logs", json_pack("{s:O, s:s, s:I, s:I, "
		    "s:b}", "session", st->session, "stream", "watch", "offset",
		    (json_int_t)st->offset, "max", (json_int_t)CMD_WATCH_READ,
		    "wait", 1));
		if (r == NULL)
			return client_error(c);
		data = json_string_value(json_object_get(r, "data"));
		if (data == NULL || (bytes = b64_decode(data, strlen(data),
		    &len)) == NULL)
			client_fatal("reply from the daemon not understood");
		st->offset = json_integer_value(json_object_get(r,
		    "next_offset"));
		stopped = cmd_watch_bytes(c, st, bytes, len);
		if (json_is_true(json_object_get(r, "ended")) && len == 0)
			stopped = 1;
		free(bytes);
		json_decref(r);
	}
	return stopped ? EXIT_CLOSED : EXIT_OK;
}

/* Stop the watch this command started (after Ctrl-C or --until). */
static void
cmd_watch_stop(struct client *c, struct cmd_watch_state *st)
{
	json_t *r;

	r = client_call(c, "watch", json_pack("{s:O, s:s, s:I}", "session",
	    st->session, "action", "stop", "watch", (json_int_t)st->id));
	json_decref(r);
}

/* --until: wait for the condition, print the sample that met it. */
static int
cmd_watch_until(struct cmd *self, struct client *c,
    struct cmd_watch_state *st)
{
	json_t	*params, *r;
	int	 rv = EXIT_OK;

	params = cmd_control_params(self);
	json_object_set_new(params, "action", json_string("wait"));
	json_object_set_new(params, "watch", json_integer(st->id));
	json_object_set_new(params, "condition", json_string(args_get(
	    &self->args, "until")));
	if ((r = client_call(c, "watch", params)) == NULL)
		rv = client_error(c);
	else if (c->json)
		cmd_print_json(r);
	else
		cmd_watch_plain(json_object_get(r, "sample"));
	json_decref(r);
	cmd_watch_stop(c, st);
	return rv;
}

/*
 * watch [--hz N] [--until COND] SESSION EXPR...: start a watch of the
 * expressions, print its samples until Ctrl-C (or COND), then stop it.
 */
static int
cmd_watch(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	struct cmd_watch_state	 st = { 0 };
	struct sigaction	 sa;
	json_t			*params, *exprs = json_array();
	int			 i, rv;

	if ((rv = cmd_control_check(self)) != 0)
		return rv;
	if (args_count(a) < 2)
		return cmd_usage(self, "missing EXPR");
	for (i = 1; i < args_count(a); i++)
		json_array_append_new(exprs, json_string(args_operand(a, i)));
	params = cmd_control_params(self);
	json_object_set_new(params, "expressions", exprs);
	if (args_has(a, "hz"))
		json_object_set_new(params, "hz", json_integer(args_number(a,
		    "hz", 0)));
	st.session = self->session;
	if ((st.started = client_call(c, "watch", params)) == NULL)
		return client_error(c);
	st.id = json_integer_value(json_object_get(st.started, "watch"));
	st.offset = json_integer_value(json_object_get(st.started, "offset"));
	st.tty = isatty(STDOUT_FILENO) && !c->json;
	if (args_has(a, "until"))
		rv = cmd_watch_until(self, c, &st);
	else {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = cmd_watch_sigint;
		sa.sa_flags = SA_RESTART | SA_RESETHAND;
		sigaction(SIGINT, &sa, NULL);
		rv = cmd_watch_follow(c, &st);
		if (rv == EXIT_OK)
			cmd_watch_stop(c, &st);
	}
	json_decref(st.started);
	free(st.partial);
	return rv;
}

/* What help says of each option of watch. */
static const struct cmd_option cmd_watch_options_help[] = {
	{ "hz", "N", "samples a second (default 10; at most 1000 through "
	    "shared RAM, 200 through QEMU's monitor)" },
	{ "until", "COND", "wait for a sample meeting COND (EXPR OP NUMBER, "
	    "OP one of < <= > >= == !=), print it and stop" },
	{ "timeout", "MS", "how long gdb may take to resolve the expressions "
	    "(default 10000), or --until to wait (default: no limit)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_watch_entry = {
	.name = "watch",
	.usage = "[--hz N] [--until COND] [--timeout MS] SESSION EXPR...",
	.args = { "hz# until: timeout#", 2, -1 },
	.flags = CMD_SESSION,
	.exec = cmd_watch,
	.summary = "sample expressions of a running target at a rate, without "
	    "halting it; print them as they change",
	.options = cmd_watch_options_help,
};
