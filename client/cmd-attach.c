/* attach: the user's terminal on a session's console, both ways. */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"
#include "term.h"

/* What the attach loop returns when writing to stdout met EPIPE. */
#define ATTACH_STDOUT_GONE	2

/* One attached terminal: the raw console connection and a control one. */
struct attach {
	struct client	*c;		/* control: resize, status */
	struct client	 raw;		/* the console stream */
	json_t		*session;	/* the reference, as given */
	int		 tty;		/* stdin is a terminal in raw mode */
	int		 key;		/* detach key, -1 for none */
	int		 quiet;		/* no lines of its own (-q) */
	long long	 id;		/* the session's id, once attached */
	long long	 viewer;	/* the daemon's name for this attach, or 0 */
	int		 events[2];	/* signal handlers -> loop */
	int		 in_eof;
	char		 last;		/* the last byte of output shown */
	struct term	 term;		/* the modes the console's output set */
	int		 server;	/* typing goes to the server's terminal */
	int		 to_server;	/* the daemon said it does */
	long long	 pid;		/* the daemon's, -1 unknown (remote) */
	int		 lost;		/* after a restart: the attach failed */
};

/*
 * What starts a line of our own: nothing where the cursor is at the start
 * of one already (the output ended a line, or the alternate screen was
 * left for the line after our first), else a newline.
 */
static const char *
cmd_attach_nl(const struct attach *a)
{
	return a->last == '\n' || a->last == '\0' ||
	    (a->term.on & TERM_ALT) ? "" : "\n";
}

/* Parse a detach key: ^X, C-x, a single character, or "none" (-1); -2 if bad. */
static int
cmd_attach_key_parse(const char *s)
{
	if (strcmp(s, "none") == 0)
		return -1;
	if (s[0] == '^' && s[1] != '\0' && s[2] == '\0')
		return s[1] == '?' ? 0x7f : (s[1] & 0x1f);
	if ((s[0] == 'C' || s[0] == 'c') && s[1] == '-' && s[2] != '\0' &&
	    s[3] == '\0')
		return s[2] & 0x1f;
	if (s[0] != '\0' && s[1] == '\0')
		return (unsigned char)s[0];
	return -2;
}

/*
 * Set *key from the command's --detach-key options, the last one winning;
 * 0, or the usage status once a bad one is reported.
 */
int
cmd_attach_key(const struct cmd *self, int *key)
{
	const char	*v;
	int		 pos, k;

	for (pos = 0; (v = args_next(&self->args, "detach-key", &pos)) !=
	    NULL;) {
		if ((k = cmd_attach_key_parse(v)) == -2)
			return cmd_usage(self, "bad --detach-key: %s (use ^X, "
			    "C-x, one character or none)", v);
		*key = k;
	}
	return 0;
}

/* The detach key as a person types it: Ctrl-\\, Ctrl-A, x. */
static void
cmd_attach_key_name(int key, char *buf, size_t len)
{
	if (key == 0x7f)
		strlcpy(buf, "Ctrl-?", len);
	else if (key >= 0 && key < 0x20)
		snprintf(buf, len, "Ctrl-%c", key | 0x40);
	else
		snprintf(buf, len, "%c", key);
}

/*
 * Say on stderr which session this terminal is on and how to leave it,
 * as telnet names its escape character.
 */
static void
cmd_attach_banner(struct attach *a)
{
	const char	*kind = NULL, *name = NULL;
	char		 key[16], named[128] = "";
	json_t		*s;

	if (a->quiet)
		return;
	s = client_call(a->c, "status", json_pack("{s:I}", "session",
	    (json_int_t)a->id));
	kind = json_string_value(json_object_get(s, "kind"));
	name = json_string_value(json_object_get(s, "name"));
	if (name != NULL)
		snprintf(named, sizeof named, " \"%s\"", name);
	cmd_attach_key_name(a->key, key, sizeof key);
	/* Under a server, which of the two terminals the keys reach. */
	if (kind != NULL && strcmp(kind, "gdbserver") == 0)
		kind = a->to_server ? "gdbserver, typing to the program" :
		    "gdbserver, typing to gdb";
	fprintf(stderr, "[attached to session %lld%s (%s); %s%s]\n", a->id,
	    named, kind != NULL ? kind : "?", a->key < 0 ? "no detach key" :
	    "detach: ", a->key < 0 ? "" : key);
	fflush(stderr);
	json_decref(s);
}

/*
 * Say how the session ended, from its exit record:
 * "[session 3 ended: exit code 0, by quit]", "[session 3 ended: signal 15
 * (TERM), by term]".
 */
static void
cmd_attach_ended(struct attach *a, json_t *s)
{
	json_t		*rec = json_object_get(s, "exit");
	const char	*by = json_string_value(json_object_get(rec, "by"));
	char		 how[64];

	if (a->quiet || rec == NULL)
		return;
	/* A signal in stop's and list's words: "signal 15 (TERM)". */
	if (json_is_integer(json_object_get(rec, "code")))
		snprintf(how, sizeof how, "exit code %lld", (long long)
		    json_integer_value(json_object_get(rec, "code")));
	else
		fmt_exit(rec, how, sizeof how);
	fprintf(stderr, "%s[session %lld ended: %s%s%s]\n", cmd_attach_nl(a),
	    (long long)json_integer_value(json_object_get(s, "id")), how,
	    by != NULL ? ", by " : "", by != NULL ? by : "");
}

/* Send the terminal's size; redraw forces the program to repaint. */
static void
cmd_attach_resize(struct attach *a, int redraw)
{
	unsigned	 rows, cols;
	json_t		*p, *r;

	if (!a->tty || tty_size(STDIN_FILENO, &rows, &cols) != 0)
		return;
	p = json_pack("{s:O, s:i, s:i, s:b}", "session", a->session, "rows",
	    rows, "cols", cols, "redraw", redraw);
	/* Named, the size is this terminal's, kept while it is attached. */
	if (a->viewer > 0)
		json_object_set_new(p, "viewer", json_integer(a->viewer));
	r = client_call(a->c, "resize", p);
	json_decref(r);
}

/* Pass typed bytes on; the detach key ends the attach. Returns 1 to detach. */
static int
cmd_attach_input(struct attach *a)
{
	char	 buf[4096], *key;
	ssize_t	 n;
	size_t	 len;

	n = read(STDIN_FILENO, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		/* No more input: keep showing the console until it ends. */
		a->in_eof = 1;
		return 0;
	}
	len = n;
	key = a->key >= 0 ? memchr(buf, a->key, len) : NULL;
	if (key != NULL)
		len = key - buf;
	if (len > 0 && cmd_write_all(a->raw.fd, buf, len) != 0)
		return 0;	/* the console is gone; its EOF follows */
	return key != NULL;
}

/* Handle what the signal handlers reported. */
static void
cmd_attach_events(struct attach *a)
{
	char	what[64];
	ssize_t	n, i;
	int	redraw = 0, resize = 0;

	n = read(a->events[0], what, sizeof what);
	for (i = 0; i < n; i++) {
		if (what[i] == 'c')
			redraw = 1;
		resize = 1;
	}
	if (resize)
		cmd_attach_resize(a, redraw);
}

/*
 * Copy console output to stdout and stdin to the console until the session
 * ends (1), the user detaches (0) or stdout's reader has gone
 * (ATTACH_STDOUT_GONE).
 */
static int
cmd_attach_loop(struct attach *a)
{
	struct pollfd	pfd[3];
	char		buf[65536];
	ssize_t		n;

	for (;;) {
		pfd[0].fd = a->in_eof ? -1 : STDIN_FILENO;
		pfd[0].events = POLLIN;
		pfd[1].fd = a->raw.fd;
		pfd[1].events = POLLIN;
		pfd[2].fd = a->events[0];
		pfd[2].events = POLLIN;
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pfd[2].revents != 0)
			cmd_attach_events(a);
		if (pfd[0].revents != 0 && cmd_attach_input(a))
			return 0;
		if (pfd[1].revents == 0)
			continue;
		n = read(a->raw.fd, buf, sizeof buf);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return 1;
		/* Known before they are shown: a signal now undoes them too. */
		term_feed(&a->term, buf, n);
		tty_modes(&a->term);
		a->last = buf[n - 1];
		if (cmd_write_all(STDOUT_FILENO, buf, n) != 0)
			return errno == EPIPE ? ATTACH_STDOUT_GONE : 1;
	}
}

/* Take the attach's answer: the session, the viewer, the terminal. */
static void
cmd_attach_took(struct attach *a, json_t *r)
{
	a->id = json_integer_value(json_object_get(r, "session"));
	a->viewer = json_integer_value(json_object_get(r, "viewer"));
	a->to_server = json_is_string(json_object_get(r, "terminal")) &&
	    strcmp(json_string_value(json_object_get(r, "terminal")),
	    "server") == 0;
}

/* The attach is over: the session's status, or why it ended. */
static int
cmd_attach_finish(struct attach *a, int ended)
{
	json_t		*s;
	const char	*state;
	int		 rv;

	if (!ended) {
		if (!a->quiet)
			fprintf(stderr, "%s[detached from session %lld]\n",
			    cmd_attach_nl(a), a->id);
		return EXIT_OK;
	}
	/* The console closed: the session ended, or the daemon went away. */
	a->c->autostart = 0;
	if ((s = client_call(a->c, "status", json_pack("{s:O}", "session",
	    a->session))) == NULL)
		return client_error(a->c);
	state = json_string_value(json_object_get(s, "state"));
	if (state != NULL && strcmp(state, "running") == 0) {
		json_decref(s);
		client_warn("the daemon closed this attach (output not read "
		    "fast enough?); the session is still running");
		return EXIT_FAILED;
	}
	json_decref(s);
	s = client_call(a->c, "wait", json_pack("{s:O, s:i}", "session",
	    a->session, "timeout", 10000));
	if (s == NULL)
		return client_error(a->c);
	cmd_attach_ended(a, s);
	rv = cmd_session_status(s);
	json_decref(s);
	return rv;
}

/* The attach request's params: the session, and which of its terminals. */
static json_t *
cmd_attach_params(const struct attach *a)
{
	json_t *p = json_pack("{s:O}", "session", a->session);

	if (a->server)
		json_object_set_new(p, "server", json_true());
	return p;
}

/*
 * Attaching again after a restart failed: no daemon came back (said
 * already), the session ended meanwhile (told as an end is), or the
 * next daemon did not adopt it. An exit status.
 */
static int
cmd_attach_lost(struct attach *a)
{
	if (a->raw.error.kind[0] == '\0')
		return EXIT_NODAEMON;
	if (strcmp(a->raw.error.kind, "not_running") == 0)
		return cmd_attach_finish(a, 1);
	return client_error(&a->raw);
}

/*
 * The console's stream ended: when the daemon restarted under it, attach
 * again to the next one, which adopted the session, and redraw (its last
 * lines, then a forced repaint), the terminal raw all along. 1 once
 * attached again; 0 when the end stands, a->lost set when attaching
 * again failed (said once the terminal is restored).
 */
static int
cmd_attach_again(struct attach *a)
{
	json_t	*r;
	int	 restarted;

	if ((restarted = reconnect_restarted(a->c, &a->pid)) == 0)
		return 0;
	if (restarted == -1) {
		a->lost = 1;
		return 0;
	}
	client_close(&a->raw);
	a->raw.restarts++;
	if ((r = client_raw_call(&a->raw, "attach", cmd_attach_params(a))) ==
	    NULL) {
		a->lost = 1;
		return 0;
	}
	cmd_attach_took(a, r);
	json_decref(r);
	if (!a->quiet)
		fprintf(stderr, "%s[the daemon restarted: attached again to "
		    "session %lld]\r\n", a->last == '\n' ? "\r" : "\r\n",
		    a->id);
	cmd_attach_resize(a, 1);
	return 1;
}

/*
 * Attach this terminal (or, without one, stdin and stdout) to the console
 * of session; returns the exit status.
 */
int
cmd_attach_session(struct client *c, json_t *session, int key, int quiet)
{
	return cmd_attach_terminal(c, session, key, quiet, 0);
}

/*
 * The same, typing into the server's terminal (the program's, under
 * gdbserver) when server is set.
 */
int
cmd_attach_terminal(struct client *c, json_t *session, int key, int quiet,
    int server)
{
	struct attach	 a;
	json_t		*r;
	int		 rv, ended;

	memset(&a, 0, sizeof a);
	a.c = c;
	a.session = session;
	a.key = key;
	a.quiet = quiet;
	term_init(&a.term);
	a.server = server;
	/* Which daemon serves it, to tell its death from the session's end. */
	a.pid = client_connect_remote() == NULL ? reconnect_daemon_pid(c) : -1;
	client_init(&a.raw, c->socket_arg, c->json);
	a.raw.autostart = 0;
	if ((r = client_raw_call(&a.raw, "attach", cmd_attach_params(&a))) ==
	    NULL) {
		if (strcmp(a.raw.error.kind, "not_running") != 0)
			return client_error(&a.raw);
		/* Already over: report how it ended, as a finished attach would. */
		return cmd_attach_finish(&a, 1);
	}
	cmd_attach_took(&a, r);
	json_decref(r);
	cmd_attach_banner(&a);
	if (pipe2(a.events, O_CLOEXEC | O_NONBLOCK) != 0)
		client_fatal("pipe: %s", strerror(errno));
	tty_output(STDOUT_FILENO);
	a.tty = isatty(STDIN_FILENO) && tty_raw(STDIN_FILENO, a.events[1]) == 0;
	if (!a.tty)
		tty_plain(a.events[1]);
	cmd_attach_resize(&a, 1);
	while ((ended = cmd_attach_loop(&a)) == 1 && cmd_attach_again(&a))
		continue;
	tty_leave();
	if (a.lost)
		return cmd_attach_lost(&a);
	/* `dbgctl attach 3 | head -3`: our reader left, not the daemon. */
	if (ended == ATTACH_STDOUT_GONE)
		cmd_stdout_gone();
	/*
	 * Over ssh, an end that ssh did not end well is a lost connection:
	 * told before the close reaps ssh and forgets how it ended.
	 */
	if (ended)
		ssh_end(&a.raw);
	client_close(&a.raw);
	rv = cmd_attach_finish(&a, ended);
	return rv;
}

/*
 * attach [--detach-key KEY] [-q] SESSION: this terminal on the session's
 * console.
 */
static int
cmd_attach_exec(struct cmd *self, struct client *c)
{
	int	key = CMD_DETACH_KEY;

	if (cmd_attach_key(self, &key) != 0)
		return EXIT_USAGE;
	if (!isatty(STDIN_FILENO)) {
		client_warn("attach needs a terminal on stdin; without one, "
		    "use send and recv (the target's input and output) and "
		    "logs (the console's output)");
		return EXIT_FAILED;
	}
	return cmd_attach_terminal(c, self->session, key,
	    args_has(&self->args, "q") || args_has(&self->args, "quiet"),
	    args_has(&self->args, "server"));
}

/* What help says of each option of attach. */
static const struct cmd_option cmd_attach_options_help[] = {
	{ "detach-key", "KEY",
	    "the key that detaches, as ^X (default: ^\\, Ctrl-\\)" },
	{ "q", NULL,
	    "print no line of its own on attaching, detaching or the end" },
	{ "quiet", NULL, "the same as -q" },
	{ "server", NULL,
	    "type into the server's terminal (the program's, under gdbserver)" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_attach_entry = {
	.name = "attach",
	.usage = "[--detach-key KEY] [-q | --quiet] [--server] SESSION",
	.args = { "detach-key: q quiet server", 1, 1 },
	.flags = CMD_SESSION,
	.exec = cmd_attach_exec,
	.summary = "work at a session's console from this terminal",
	.options = cmd_attach_options_help,
};
