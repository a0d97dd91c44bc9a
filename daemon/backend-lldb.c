/*
 * lldb: the program as lldb's target, arguments and transport set by us;
 * exec types a command on the console and takes what lldb prints up to its
 * next prompt.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "argv.h"
#include "server.h"
#include "capbuf.h"
#include "lldb.h"
#include "request.h"
#include "session-target.h"

/*
 * Append str in lldb double quotes: lldb's interpreter substitutes `...`
 * even inside quotes, so backticks are escaped along with \ and ".
 */
static void
backend_lldb_quote(char **buf, size_t *len, const char *str)
{
	size_t		 at = *len;
	const char	*p;

	*buf = xreallocarray(*buf, *len + strlen(str) * 2 + 4, 1);
	(*buf)[at++] = ' ';
	(*buf)[at++] = '"';
	for (p = str; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"' || *p == '`')
			(*buf)[at++] = '\\';
		(*buf)[at++] = *p;
	}
	(*buf)[at++] = '"';
	(*buf)[at] = '\0';
	*len = at;
}

/*
 * Whether lldb's "settings set target.run-args" keeps arg as it is: it
 * drops empty values, trims blanks at both ends, reads each -o as one line,
 * and calls a value of nothing but quotes mismatched.
 */
static bool
backend_lldb_passable(const char *arg)
{
	size_t n = strlen(arg);

	if (n == 0 || isspace((unsigned char)arg[0]) ||
	    isspace((unsigned char)arg[n - 1]) || strpbrk(arg, "\n\r") != NULL)
		return false;
	return strspn(arg, "'\"") != n;
}

/* Refuse the arguments lldb's settings cannot carry as they are. */
static int
backend_lldb_check(const struct launch *l, struct rpc_error *err)
{
	size_t i;

	for (i = 1; i < json_array_size(l->argv); i++) {
		if (backend_lldb_passable(
		    json_string_value(json_array_get(l->argv, i))))
			continue;
		rpc_error_set(err, RPC_SPAWN_FAILED, "lldb cannot pass "
		    "argument %zu as it is (empty, blanks at an end, a line "
		    "break, or only quotes); gdb can", i);
		return -1;
	}
	return 0;
}

/* What every lldb kind's argv ends with: the -x commands as -o, the program. */
void
backend_lldb_argv_end(struct session *s, struct argv *av)
{
	size_t i;

	for (i = 0; i < json_array_size(s->l.commands); i++) {
		argv_push(av, "-o");
		argv_push(av,
		    json_string_value(json_array_get(s->l.commands, i)));
	}
	argv_push(av, "--");
	argv_push(av, json_string_value(json_array_get(s->l.argv, 0)));
}

/*
 * lldb: -O settings before the file is loaded (the transport), the
 * arguments set by us (lldb's own "--" handling leaves backticks live),
 * then the -o commands; lldb launches the target without a shell.
 */
static char **
backend_lldb_argv(struct session *s, char *err, size_t errlen)
{
	struct argv	 av = { 0 };
	char		*args;
	size_t		 i, len;

	(void)err;
	(void)errlen;
	argv_push(&av, s->l.debugger != NULL ? s->l.debugger : "lldb");
	if (s->transport != NULL) {
		argv_push(&av, "-O");
		argv_pushf(&av, "settings set target.input-path /dev/fd/%d",
		    PROC_FD_IN);
		argv_push(&av, "-O");
		argv_pushf(&av, "settings set target.output-path /dev/fd/%d",
		    PROC_FD_OUT);
	}
	if (json_array_size(s->l.argv) > 1) {
		args = xstrdup("settings set -- target.run-args");
		len = strlen(args);
		for (i = 1; i < json_array_size(s->l.argv); i++)
			backend_lldb_quote(&args, &len,
			    json_string_value(json_array_get(s->l.argv, i)));
		argv_push(&av, "-o");
		argv_push(&av, args);
		free(args);
	}
	backend_lldb_argv_end(s, &av);
	return av.v;
}

/* How long an exec waits for lldb's prompt by default. */
#define LLDB_EXEC_TIMEOUT 10000

/* lldb's own state: whether it sits at its prompt, which exec types. */
struct lldb_data {
	struct sink	*watch;		/* every console output */
	struct timer	*settle;	/* a prompt right after text: is it one? */
	struct request	*exec;		/* the exec typing, or NULL */
	bool		 at_prompt;
	bool		 echoed;	/* the typed line's echo has ended */
	bool		 redraws;	/* editline draws each prompt again */
	char		 tail[64];	/* the last text it printed, as lines */
	size_t		 taillen;
	struct sink	*runs;		/* its lines about the process */
	char		 line[160];	/* the line it is printing, cut */
	size_t		 linelen;
	long		 run_pid;	/* the process it said launched */
	long		 exited_pid;	/* the process it said exited */
	struct server	 server;	/* the lldb-server kind's, or none */
};

/* What a waiting exec has collected of the console. */
struct lldb_exec {
	struct session	*s;
	struct capbuf	 out;		/* what lldb printed for it */
};

/* Raw bytes at a chunk's end the prompt watch reads: prompt and escapes. */
#define BACKEND_LLDB_WINDOW 256

/*
 * How long nothing may follow a prompt that comes right after text, not at
 * a line's start, before it is taken for lldb's (it prints it so after
 * output that does not end a line, with colours off).
 */
#define BACKEND_LLDB_SETTLE 100

/* Add the newest text (as lines) to the tail the prompt is looked for in. */
static void
backend_lldb_tail(struct lldb_data *d, const char *text, size_t n)
{
	size_t keep = n >= sizeof d->tail ? sizeof d->tail - 1 : n;

	if (d->taillen + keep >= sizeof d->tail) {
		memmove(d->tail, d->tail + d->taillen + keep -
		    (sizeof d->tail - 1), sizeof d->tail - 1 - keep);
		d->taillen = sizeof d->tail - 1 - keep;
	}
	memcpy(d->tail + d->taillen, text + n - keep, keep);
	d->taillen += keep;
}


static void	backend_lldb_answer(struct request *);

/* Nothing followed a prompt that came right after text: it was lldb's. */
static void
backend_lldb_settled(void *arg)
{
	struct lldb_data *d = arg;

	d->at_prompt = true;
	if (d->exec != NULL)
		backend_lldb_answer(d->exec);
}

/*
 * Whether the tail ends with lldb's prompt, the cursor right after it (see
 * lldb_text_cursor): 1 for sure, 0 not, -1 if only silence after it can
 * tell. With colours on, editline draws every prompt twice, the second time
 * after a move to column 1 (and on its own, after a stop, only so): once
 * seen, only a prompt drawn so is lldb's, and text that says "(lldb) "
 * never is. Else a prompt at a line's start is, and one right after other
 * text may be.
 */
static int
backend_lldb_prompt(struct lldb_data *d)
{
	const size_t	 n = lldb_text_cursor(d->tail, d->taillen);
	const size_t	 p = LLDB_PROMPT_LEN;
	const char	*t = d->tail;

	if (!lldb_text_prompt_end(t, n))
		return 0;
	if (n > p && t[n - p - 1] == LLDB_COLUMN1 &&
	    lldb_text_prompt_end(t, n - p - 1))
		d->redraws = true;
	if (n > p && t[n - p - 1] == LLDB_COLUMN1)
		return 1;
	if (d->redraws)
		return 0;
	return n == p || t[n - p - 1] == '\n' ? 1 : -1;
}

/*
 * Whatever lldb prints: note whether it now sits at its prompt, which ends
 * what it printed; a prompt that may be text (see backend_lldb_prompt)
 * counts once nothing follows it for BACKEND_LLDB_SETTLE ms. While an
 * exec's line is echoed, none counts.
 */
static void
backend_lldb_watch(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct lldb_data	*d = k->arg;
	char			 text[BACKEND_LLDB_WINDOW + 1], *nl;
	size_t			 from, n;

	(void)s;
	timer_stop(d->settle);
	/* Only a chunk's end can make the prompt: no copy of all of it. */
	from = ev->len > BACKEND_LLDB_WINDOW ? ev->len - BACKEND_LLDB_WINDOW : 0;
	memcpy(text, ev->data + from, ev->len - from);
	n = lldb_text_clean(text, ev->len - from, true);
	/* The echo ends at its line feed; a window's worth is plenty. */
	if (!d->echoed) {
		if ((nl = memchr(text, '\n', n)) == NULL)
			return;
		d->echoed = true;
		n -= nl + 1 - text;
		memmove(text, nl + 1, n + 1);
	}
	if (n == 0)
		return;
	backend_lldb_tail(d, text, n);
	switch (backend_lldb_prompt(d)) {
	case 1:
		d->at_prompt = true;
		break;
	case -1:
		timer_start(d->settle, BACKEND_LLDB_SETTLE);
		/* FALLTHROUGH */
	default:
		d->at_prompt = false;
	}
}

/* How lldb begins what a command that failed prints. */
#define BACKEND_LLDB_ERROR "error: "

/*
 * Answer with what lldb printed for the command: a command that failed
 * (its text begins with lldb's "error: ") is a debugger_error, as gdb's
 * ^error is, its message lldb's words and its data class "error" and
 * the whole output.
 */
static void
backend_lldb_reply(struct request *req, const char *out)
{
	const char	*msg;
	size_t		 len;

	if (strncmp(out, BACKEND_LLDB_ERROR, strlen(BACKEND_LLDB_ERROR)) != 0) {
		request_done(req, json_pack("{s:s, s:{}, s:s}", "class", "done",
		    "results", "output", out));
		return;
	}
	msg = out + strlen(BACKEND_LLDB_ERROR);
	for (len = strlen(msg); len > 0 && msg[len - 1] == '\n'; len--)
		;
	request_error_data(req, RPC_DEBUGGER_ERROR, json_pack("{s:s, s:s}",
	    "class", "error", "output", out), "%.*s", (int)len, msg);
}

/*
 * lldb sits at its prompt again: the answer is what it printed after the
 * echoed command line and before that prompt.
 */
static void
backend_lldb_answer(struct request *req)
{
	struct lldb_exec	*e = req->data;
	char			*text, *nl;
	size_t			 n;

	text = xmalloc(e->out.len + sizeof CAPBUF_CUT_MARK);
	memcpy(text, e->out.p != NULL ? e->out.p : "", e->out.len);
	n = lldb_text_unprompt(text, e->out.len);
	lldb_text_clean(text, n, false);
	nl = strchr(text, '\n');
	/* After the prompt is taken off: the marker ends the reply. */
	if (e->out.cut)
		strlcat(text, CAPBUF_CUT_MARK, e->out.len +
		    sizeof CAPBUF_CUT_MARK);
	backend_lldb_reply(req, nl != NULL ? nl + 1 : "");
	free(text);
}

/* Console output came: once lldb sits at its prompt again, answer. */
static void
backend_lldb_output(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct request		*req = k->arg;
	struct lldb_exec	*e = req->data;
	struct lldb_data	*d = s->bdata;

	if (ev->kind == SE_STATE) {
		if (session_ended(s))
			request_error(req, RPC_NOT_RUNNING, "lldb ended before "
			    "its prompt came back");
		return;
	}
	capbuf_add(&e->out, ev->data, ev->len);
	if (d->at_prompt)
		backend_lldb_answer(req);
}

/* lldb did not show its prompt in time. */
static void
backend_lldb_timeout(struct request *req)
{
	request_error(req, RPC_TIMEOUT, "lldb's prompt did not come back "
	    "within %lld ms", request_int(req, "timeout", LLDB_EXEC_TIMEOUT));
}

/* An exec is over: the console is free for the next. */
static void
backend_lldb_exec_free(struct request *req)
{
	struct lldb_exec	*e = req->data;
	struct lldb_data	*d = e->s->bdata;

	d->exec = NULL;
	capbuf_free(&e->out);
	free(e);
}

/*
 * exec for lldb: lldb has no machine interface, so the command is typed
 * on its console, as a person would, and what it prints up to its next
 * prompt is the answer; it shows in the console log too. Refused while a
 * person is attached, so nobody's typing is mixed with it, and one at a
 * time.
 */
static int
backend_lldb_command(struct session *s, struct request *req)
{
	struct lldb_data	*d = s->bdata;
	struct lldb_exec	*e;
	const char		*cmd = request_str(req, "command", "");
	char			*line;

	if (session_ended(s))
		return request_error(req, RPC_NOT_RUNNING, "session %lu %s",
		    s->id, session_is(s));
	if (session_console(s) == NULL)
		return request_error(req, RPC_NOT_RUNNING, "lldb's console in "
		    "session %lu is closed", s->id);
	if (s->viewers > 0)
		return request_error(req, RPC_NOT_SUPPORTED, "a client is "
		    "attached to lldb's console in session %lu; exec would "
		    "type among its keys", s->id);
	if (strpbrk(cmd, "\r\n") != NULL || *cmd == '\0')
		return request_error(req, RPC_INVALID_PARAMS, "\"command\" "
		    "must be one non-empty line");
	if (d->exec != NULL)
		return request_error(req, RPC_BUSY, "an exec is already "
		    "typing on lldb's console in session %lu", s->id);
	if (!d->at_prompt)
		return request_error(req, RPC_NOT_READY, "lldb in session %lu "
		    "is not at its prompt (starting, running a process, or "
		    "busy); try again", s->id);
	d->at_prompt = false;
	d->echoed = false;
	d->taillen = 0;
	e = xcalloc(1, sizeof *e);
	e->s = s;
	pending_wait(req, e, backend_lldb_exec_free);
	d->exec = req;
	pending_sink(req, s, SE_OUTPUT | SE_STATE, backend_lldb_output);
	pending_timeout(req, request_int(req, "timeout", LLDB_EXEC_TIMEOUT),
	    backend_lldb_timeout);
	xasprintf(&line, "%s\n", cmd);
	session_console_write(s, line, strlen(line));
	free(line);
	return METHOD_WAIT;
}

/*
 * A line lldb printed about its process: "Process N launched: ..." begins
 * a run of the program, "Process N exited with status = ..." or "Process N
 * detached" ends it; prompts editline cleared to print it may come first.
 * lldb may print the exit before the launch (it waits for the launch to
 * return); a launch of a process already gone is not a run, and an exit of
 * one not seen launched was a run of its own.
 */
static void
backend_lldb_process_line(struct lldb_data *d, struct session *s,
    const char *line)
{
	const char	*p = line;
	char		*end;
	long		 pid;

	/* The prompts drawn before it, with the blanks of an own redraw. */
	while (strncmp(p, LLDB_PROMPT, LLDB_PROMPT_LEN) == 0)
		p += LLDB_PROMPT_LEN + strspn(p +
		    LLDB_PROMPT_LEN, " ");
	if (strncmp(p, "Process ", 8) != 0 || !isdigit((unsigned char)p[8]))
		return;
	pid = strtol(p + 8, &end, 10);
	if (strncmp(end, " launched: ", 11) == 0) {
		if (pid == d->exited_pid || pid == d->run_pid)
			return;
		d->run_pid = pid;
		session_target_run(s, true);
		return;
	}
	if (strncmp(end, " exited with status = ", 22) != 0 &&
	    strcmp(end, " detached") != 0)
		return;
	if (pid == d->exited_pid)
		return;
	if (pid != d->run_pid)
		session_target_run(s, true);
	d->run_pid = 0;
	d->exited_pid = pid;
	session_target_run(s, false);
}

/* Whatever lldb prints, cut into lines for what it says of its process. */
static void
backend_lldb_runs(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct lldb_data	*d = k->arg;
	size_t			 i, n;

	for (i = 0; i < ev->len; i++) {
		if (ev->data[i] != '\n' && ev->data[i] != '\r') {
			if (d->linelen < sizeof d->line - 1)
				d->line[d->linelen++] = ev->data[i];
			continue;
		}
		n = lldb_text_clean(d->line, d->linelen, false);
		while (n > 0 && d->line[n - 1] == ' ')
			d->line[--n] = '\0';
		backend_lldb_process_line(d, s, d->line);
		d->linelen = 0;
	}
}

/*
 * lldb's state, made on first use: no prompt yet, nobody typing. A kind
 * that starts a server before lldb (lldb-server) keeps the server here.
 */
static struct lldb_data *
backend_lldb_data(struct session *s)
{
	struct lldb_data *d = s->bdata;

	if (d != NULL)
		return d;
	s->bdata = d = xcalloc(1, sizeof *d);
	server_init(&d->server);
	d->echoed = true;	/* nothing typed yet */
	d->settle = timer_new(backend_lldb_settled, d);
	d->watch = session_sink_add(s, SE_OUTPUT, backend_lldb_watch, d);
	d->runs = session_sink_add(s, SE_OUTPUT, backend_lldb_runs, d);
	return d;
}

/* The managed server of an lldb session (see backend-lldb-server.c). */
struct server *
backend_lldb_managed(struct session *s)
{
	return &backend_lldb_data(s)->server;
}

/* An lldb session's managed server, or NULL before lldb's state is made. */
const struct server *
backend_lldb_peek_managed(const struct session *s)
{
	const struct lldb_data *d = s->bdata;

	return d != NULL ? &d->server : NULL;
}

/*
 * An adopted lldb is where its console log ends: at its prompt if the
 * log's last bytes draw it, as they would have been watched arriving.
 */
void
backend_lldb_adopted(struct session *s)
{
	struct lldb_data	*d = backend_lldb_data(s);
	char			 buf[BACKEND_LLDB_WINDOW];
	uint64_t		 end = output_size(&s->output);
	uint64_t		 from = end > sizeof buf ? end - sizeof buf : 0;
	struct session_event	 ev = { .kind = SE_OUTPUT, .data = buf };

	ev.len = output_read(&s->output, from, buf, (size_t)(end - from));
	if (ev.len == 0)
		return;
	backend_lldb_watch(d->watch, s, &ev);
	/* Nothing followed it while no daemon ran: a prompt that may be is. */
	if (!d->at_prompt && backend_lldb_prompt(d) == -1) {
		timer_stop(d->settle);
		d->at_prompt = true;
	}
}

/* lldb's state, then lldb (or, adopted, where it is). */
static int
backend_lldb_start(struct session *s, char *err, size_t errlen)
{
	(void)backend_lldb_data(s);
	if (dmn.adopting != NULL)
		backend_lldb_adopted(s);
	return session_proc_spawn_main(s, err, errlen);
}

/* The session ended: stop watching for the prompt. */
static void
backend_lldb_close(struct session *s)
{
	struct lldb_data *d = s->bdata;

	if (d == NULL)
		return;
	session_sink_remove(d->watch);
	d->watch = NULL;
	session_sink_remove(d->runs);
	d->runs = NULL;
	timer_free(d->settle);
	d->settle = NULL;
}

const struct backend backend_lldb = {
	.name = "lldb",
	.debugger = "lldb",
	/* lldb's embedded Python breaks when another python3 leads PATH. */
	.path = "/usr/local/bin:/usr/bin:/bin",
	.flags = BACKEND_PROGRAM | BACKEND_ADOPT,
	.check = backend_lldb_check,
	.argv = backend_lldb_argv,
	.start = backend_lldb_start,
	.command = backend_lldb_command,
	.status = status_main_inferior,
	.close = backend_lldb_close,
};
