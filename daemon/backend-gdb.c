/* gdb, and what the gdb family (gdb_family_kind) shares: argv, MI, connecting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adopt.h"
#include "gdb.h"
#include "mi.h"
#include "semihost.h"
#include "session-target.h"

/* How long gdb's failed connect waits for its managed server's exit report. */
#define GDB_CONNECT_HOLD_MS 1000

/* What a starting session awaits before it runs (gdb_data.settle). */
enum gdb_settle {
	GDB_SETTLE_NONE,	/* nothing yet, or it runs */
	GDB_SETTLE_KNOWN,	/* the target's state, from gdb */
	GDB_SETTLE_RUN		/* the target's run, after the kind's commands */
};

/* Append a space and str in POSIX sh single quotes, so a shell passes it literally. */
static void
backend_gdb_quote(char **buf, size_t *len, const char *str)
{
	size_t		 at = *len;
	const char	*p;

	*buf = xreallocarray(*buf, *len + strlen(str) * 4 + 4, 1);
	(*buf)[at++] = ' ';
	(*buf)[at++] = '\'';
	for (p = str; *p != '\0'; p++) {
		if (*p == '\'') {
			memcpy(*buf + at, "'\\''", 4);
			at += 4;
		} else
			(*buf)[at++] = *p;
	}
	(*buf)[at++] = '\'';
	(*buf)[at] = '\0';
	*len = at;
}

/* The "set args" command: arguments quoted for gdb's shell, then the pipes. */
static char *
backend_gdb_set_args(struct session *s)
{
	char	*args = xstrdup("set args"), *with;
	size_t	 i, len = strlen(args);

	for (i = 1; i < json_array_size(s->l.argv); i++)
		backend_gdb_quote(&args, &len,
		    json_string_value(json_array_get(s->l.argv, i)));
	if (s->transport == NULL)
		return args;
	xasprintf(&with, "%s </dev/fd/%d >/dev/fd/%d", args, PROC_FD_IN,
	    PROC_FD_OUT);
	free(args);
	return with;
}

/*
 * The settings a session's gdb starts with: the program's terminal,
 * mi-async and, for a remote, a bounded, retry-free connect. They come
 * before the MI channel, which would hear of each change.
 */
static void
backend_gdb_settings(struct argv *av, struct session *s, struct gdb_data *g)
{
	gdb_tty_args(av, s);
	/* Before the target runs, so -exec-interrupt works while it runs. */
	argv_push(av, "-ex");
	argv_push(av, "set mi-async on");
	if (g->remote[0] == '\0')
		return;
	/*
	 * Breakpoints stay in the target of a server the session owns while
	 * it is stopped: by default gdb takes each location out at every stop
	 * and puts it back at every resume, a read and a Z packet a location,
	 * fault breaks included, which was most of a board's breakpoint round
	 * trip. gdb hides them from memory reads, and the server, which ends
	 * with the session, clears them when gdb's connection ends, killed
	 * or not; a --remote server is someone else's, and keeps the default.
	 */
	if (server_managed(&g->server)) {
		argv_push(av, "-ex");
		argv_push(av, "set breakpoint always-inserted on");
	}
	/* gdb's own 15 s of retries would hide a refused port. */
	argv_push(av, "-ex");
	argv_push(av, "set tcp auto-retry off");
	argv_push(av, "-ex");
	argv_pushf(av, "set tcp connect-timeout %ld",
	    (s->l.connect_timeout + 999) / 1000);
}

/* Give gdb its settings, then its MI channel (gdb-newui.c). */
static void
backend_gdb_mi_args(struct argv *av, struct session *s, struct gdb_data *g)
{
	backend_gdb_settings(av, s, g);
	gdb_newui_args(av, s, mi_pts(g->mi));
}

/*
 * gdb: the program as gdb's file, its arguments quoted for the shell gdb
 * starts the inferior with, then the -x commands in order; a remote
 * session types its commands once connected.
 */
char **
backend_gdb_argv(struct session *s, char *err, size_t errlen)
{
	struct gdb_data	*g = s->bdata;
	struct argv	 av = { 0 };
	char		*args;
	/* A remote target, or one attached to, gets its commands once there. */
	bool		 remote = (g != NULL && g->remote[0] != '\0') ||
			    s->l.pid != 0;

	(void)err;
	(void)errlen;
	argv_push(&av, s->l.debugger != NULL ? s->l.debugger :
	    s->backend->debugger);
	argv_push(&av, "-q");
	if (g != NULL)
		backend_gdb_mi_args(&av, s, g);
	gdb_osabi_args(&av, s);
	/* A remote target was started elsewhere, with its own arguments. */
	if (!remote && (json_array_size(s->l.argv) > 1 || s->transport != NULL)) {
		args = backend_gdb_set_args(s);
		argv_push(&av, "-ex");
		argv_push(&av, args);
		free(args);
	}
	if (!remote) {
		size_t i;

		/*
		 * Fault breaks first, so that a -x run meets them; pending
		 * on while they are set, or an unknown one would ask on the
		 * console and wait.
		 */
		if (json_array_size(s->l.fault_breaks) > 0) {
			argv_push(&av, "-ex");
			argv_push(&av, "set breakpoint pending on");
		}
		for (i = 0; i < json_array_size(s->l.fault_breaks); i++) {
			argv_push(&av, "-ex");
			argv_pushf(&av, "break %s", json_string_value(
			    json_array_get(s->l.fault_breaks, i)));
		}
		if (json_array_size(s->l.fault_breaks) > 0) {
			argv_push(&av, "-ex");
			argv_push(&av, "set breakpoint pending auto");
		}
		for (i = 0; i < json_array_size(s->l.commands); i++) {
			argv_push(&av, "-ex");
			argv_push(&av, json_string_value(
			    json_array_get(s->l.commands, i)));
		}
	}
	if (json_array_size(s->l.argv) > 0) {
		argv_push(&av, "--");
		argv_push(&av, json_string_value(json_array_get(s->l.argv, 0)));
	}
	return av.v;
}

/* Type one command line into the console. */
static void
backend_gdb_type(struct session *s, const char *cmd)
{
	char *line;

	xasprintf(&line, "%s\n", cmd);
	session_console_write(s, line, strlen(line));
	free(line);
}

/*
 * Whether the starting session has what its launch awaits: a known target,
 * or for a kind that runs it (qemu's continue) a run after the commands;
 * then it runs, and the launch is answered with that record.
 */
void
backend_gdb_settle(struct gdb_data *g)
{
	const char *st = gdb_control_state(g->s);

	if (g->settle == GDB_SETTLE_NONE)
		return;
	if (g->settle == GDB_SETTLE_KNOWN && strcmp(st, "unknown") == 0)
		return;
	if (g->settle == GDB_SETTLE_RUN && strcmp(st, "running") != 0)
		return;
	g->settle = GDB_SETTLE_NONE;
	timer_stop(g->timer);
	(void)session_ready(g->s);
}

/*
 * Type the -x commands into the console, in order, then the kind's own;
 * the session runs once gdb says where they left the target: for qemu,
 * not at the stop the connection brought (at Reset_Handler), which gdb
 * reports before the continue typed here has even been read.
 */
static void
backend_gdb_type_commands(struct gdb_data *g)
{
	struct session		 *s = g->s;
	const char *const	 *c;
	size_t			  i;

	if (semihost_wanted(s))
		for (c = s->backend->semihost_commands; c != NULL &&
		    *c != NULL; c++)
			backend_gdb_type(s, *c);
	for (i = 0; i < json_array_size(s->l.commands); i++)
		backend_gdb_type(s, json_string_value(json_array_get(
		    s->l.commands, i)));
	for (c = s->backend->run_commands; c != NULL && *c != NULL; c++)
		backend_gdb_type(s, *c);
	g->settle = s->backend->run_commands != NULL ? GDB_SETTLE_RUN :
	    GDB_SETTLE_KNOWN;
	timer_start(g->timer, s->l.connect_timeout);
	backend_gdb_settle(g);
}

/*
 * An adopted gdb is asked what it knows (gdb-adopt.c): bounded, as a
 * connect is; the session runs once it has answered, or at the bound.
 */
void
backend_gdb_adopt_wait(struct gdb_data *g)
{
	g->settle = GDB_SETTLE_KNOWN;
	timer_start(g->timer, g->s->l.connect_timeout);
}

/* gdb has answered its new daemon: the session runs, its target as it is. */
void
backend_gdb_adopt_done(struct gdb_data *g)
{
	if (g->settle == GDB_SETTLE_NONE)
		return;
	g->settle = GDB_SETTLE_NONE;
	timer_stop(g->timer);
	(void)session_ready(g->s);
}

/* A fault break is in (or gdb found no such symbol): after the last, the commands. */
static void
backend_gdb_break_reply(void *arg, const struct mi_record *rec,
    const char *out, size_t len)
{
	struct gdb_data *g = arg;

	(void)out;
	(void)len;
	if (rec == NULL)
		return;
	gdb_breaks_inserted(g, rec);
	if (--g->inserts == 0 && g->target_up)
		backend_gdb_type_commands(g);
}

/*
 * Send the fault breaks to gdb, once: answered in order, before any
 * command sent after them. A remote target gets them before the connect,
 * as gdb holds them until it has a target to put them in: with the
 * connect's own packets for a server the session owns (always-inserted),
 * else at the first resume. Either way no resume can pass them by.
 */
static void
backend_gdb_breaks_send(struct gdb_data *g)
{
	json_t	*breaks, *v;
	char	*q;
	size_t	 i;

	if (g->breaks_sent)
		return;
	g->breaks_sent = true;
	breaks = fault_breaks(g->s);
	json_array_foreach(breaks, i, v) {
		q = mi_cstring_quote(json_string_value(v));
		if (mi_command(g->mi, backend_gdb_break_reply, g,
		    "-break-insert %s", q) != 0)
			g->inserts++;
		free(q);
	}
	json_decref(breaks);
}

/*
 * Connected or attached: once gdb has answered every fault break (a
 * remote's went before its connect, an attach's go now), the -x commands
 * go to the console in order, so a "continue" among them meets the
 * breakpoints; the session runs once the target's state after them is
 * known (backend_gdb_settle).
 */
void
backend_gdb_target_ready(struct gdb_data *g)
{
	if (g->s->state != S_STARTING)
		return;
	g->target_up = true;
	backend_gdb_breaks_send(g);
	if (g->inserts == 0)
		backend_gdb_type_commands(g);
}

/* Connected: the target is there. */
static void
backend_gdb_connected(struct gdb_data *g)
{
	timer_stop(g->timer);
	log_info("session %lu: connected to %s", g->s->id, g->remote);
	backend_gdb_target_ready(g);
}

/* gdb answered the connect: connected, or why not. */
static void
backend_gdb_connect_reply(void *arg, const struct mi_record *rec,
    const char *out, size_t len)
{
	struct gdb_data	*g = arg;
	const char	*msg;

	(void)out;
	(void)len;
	g->connect_token = 0;
	if (rec == NULL)
		return;
	if (strcmp(rec->cls, "connected") == 0 || strcmp(rec->cls, "done") == 0) {
		backend_gdb_connected(g);
		return;
	}
	timer_stop(g->timer);
	msg = json_string_value(json_object_get(rec->results, "msg"));
	free(g->connect_err);
	/* gdb's message usually names the address already. */
	if (msg != NULL && strstr(msg, g->remote) != NULL)
		xasprintf(&g->connect_err, "cannot connect: %s", msg);
	else
		xasprintf(&g->connect_err, "cannot connect to %s: %s",
		    g->remote, msg != NULL ? msg : rec->cls);
	/*
	 * A managed server that refused gdb has likely just exited, and its
	 * keeper's report of that, with the server's own words, may come a
	 * moment after gdb's: it is given that moment to speak first.
	 */
	if (server_managed(&g->server) && !server_exited(&g->server)) {
		timer_start(g->timer, GDB_CONNECT_HOLD_MS);
		return;
	}
	session_fail(g->s, RPC_NOT_READY, "%s", g->connect_err);
}

/*
 * Nothing came back in time: no connection, which fails the launch; or
 * the target's state after the start, in which case the session runs as
 * gdb left it (commands of the launch's own may have kept it stopped),
 * and the answer says how.
 */
static void
backend_gdb_timeout(void *arg)
{
	struct gdb_data *g = arg;

	if (g->settle != GDB_SETTLE_NONE) {
		log_warn("session %lu: the target was not %s within %ld ms of "
		    "the start; the session runs with it %s", g->s->id,
		    g->settle == GDB_SETTLE_RUN ? "running" : "known",
		    g->s->l.connect_timeout, gdb_control_state(g->s));
		g->settle = GDB_SETTLE_NONE;
		(void)session_ready(g->s);
		return;
	}
	if (g->connect_err != NULL) {
		session_fail(g->s, RPC_NOT_READY, "%s", g->connect_err);
		return;
	}
	mi_cancel(g->mi, g->connect_token);
	g->connect_token = 0;
	session_fail(g->s, RPC_TIMEOUT, "%s: no connection within %ld ms",
	    g->remote, g->s->l.connect_timeout);
}

/*
 * Set up the family's state, the session's from now on: the MI channel,
 * and where gdb will connect (NULL: not yet known, or nowhere).
 */
int
backend_gdb_open(struct session *s, const char *remote, char *err,
    size_t errlen)
{
	struct gdb_data	*g = xcalloc(1, sizeof *g);
	char		 path[PATH_MAX + 64], why[PATH_MAX + 128];

	g->s = s;
	server_init(&g->server);
	s->bdata = g;
	TAILQ_INIT(&g->jobs);
	TAILQ_INIT(&g->chans);
	if (remote != NULL)
		strlcpy(g->remote, remote, sizeof g->remote);
	g->timer = timer_new(backend_gdb_timeout, g);
	session_target(s, json_pack("{s:s}", "state", "unknown"));
	snprintf(path, sizeof path, "%s/sessions/%lu.mi.log", dmn.state_dir,
	    s->id);
	if (dmn.adopting != NULL)
		return (g->mi = gdb_adopt_mi(g, path, err, errlen)) == NULL ?
		    -1 : 0;
	if ((g->mi = mi_open(gdb_event, g, err, errlen)) == NULL)
		return -1;
	/* A transcript that cannot be kept costs the session nothing else. */
	if (mi_transcript(g->mi, path, dmn.transcript_max, why,
	    sizeof why) != 0)
		log_warn("session %lu: no MI transcript: %s", s->id, why);
	/* Joined clients' results gdb gives us go back to them. */
	mi_hooks(g->mi, join_chan_foreign, join_news_answered);
	return 0;
}

/* gdb runs: the fault breaks, then the connect, through MI; and the deadline. */
static void
backend_gdb_connect(struct session *s)
{
	struct gdb_data *g = s->bdata;

	backend_gdb_breaks_send(g);
	/*
	 * A bound server's socket takes the connection before the server
	 * runs: gdb waits for its first answer as long as the launch may,
	 * not its own 2 s, which a server still starting would outlast.
	 */
	if (server_bound(&g->server))
		g->connect_token = mi_command(g->mi, backend_gdb_connect_reply,
		    g, "-interpreter-exec console \"with remotetimeout %ld -- "
		    "target remote %s\"", (s->l.connect_timeout + 999) / 1000,
		    g->remote);
	else
		g->connect_token = mi_command(g->mi, backend_gdb_connect_reply,
		    g, "-target-select remote %s", g->remote);
	if (g->connect_token == 0) {
		session_fail(s, RPC_NOT_READY, "cannot talk to gdb's MI");
		return;
	}
	timer_start(g->timer, s->l.connect_timeout);
}

/*
 * The session ended: release the family's live state, and stop watching
 * a server kind's server (a close hook).
 */
void
backend_gdb_close(struct session *s)
{
	struct gdb_data *g = s->bdata;

	if (g == NULL)
		return;
	mi_close(g->mi);
	g->mi = NULL;
	gdb_newui_remove(s);
	join_chan_gdb_close(g);
	gdb_control_close(g);
	timer_free(g->timer);
	g->timer = NULL;
	free(g->connect_err);
	g->connect_err = NULL;
	gdb_attach_close(g);
	server_close(&g->server);
}

/*
 * The kind's fields of the session object (a status hook): where gdb
 * connects and a server kind's server; or, for gdb here, its program.
 */
void
backend_gdb_status(const struct session *s, json_t *o)
{
	struct gdb_data *g = s->bdata;

	if (g == NULL || g->remote[0] == '\0') {
		status_main_inferior(s, o);
		return;
	}
	json_object_set_new(o, "remote", json_string(g->remote));
	server_status(&g->server, o);
}

/* The managed server listens: gdb, once it runs, connects, its one client. */
static void
backend_gdb_served(struct session *s, const char *host, int port)
{
	struct gdb_data	*g = s->bdata;

	snprintf(g->remote, sizeof g->remote, "%s:%d", host, port);
	/* Its record has the port now, for a daemon that adopts it. */
	session_record_note(s);
	if (g->debugger_up)
		backend_gdb_connect(s);
}

/*
 * Listen on a loopback port for a server kind's server, which gets the
 * socket (port 0: any): gdb connects there. The port, or -1 with err.
 */
int
backend_gdb_server_bind(struct session *s, int port, char *err,
    size_t errlen)
{
	struct gdb_data *g = s->bdata;

	/* An adopted server listens already, on its socket: none is made. */
	if (dmn.adopting == NULL && (port = server_bind(&g->server, port, err,
	    errlen)) == -1)
		return -1;
	snprintf(g->remote, sizeof g->remote, "127.0.0.1:%d", port);
	return port;
}

/*
 * Start a server kind's server under its keeper, and gdb beside it: gdb
 * takes about as long to start as the server, and connects once both
 * are up (the server listening, gdb exec'd), whichever comes last.
 */
int
backend_gdb_server_start(struct session *s, char **server_argv, int port,
    char *err, size_t errlen)
{
	struct gdb_data *g = s->bdata;

	if (server_start(&g->server, s, server_argv, port, backend_gdb_served,
	    err, errlen) != 0)
		return -1;
	return session_proc_spawn_main(s, err, errlen);
}

/*
 * A process of the session exec'd (a ready hook): a server kind's server
 * is watched until it listens; gdb connects once its target is there (a
 * server kind's, when both are up; a remote one's at once), or, for gdb
 * here, runs its program or attaches (gdb-attach.c).
 */
void
backend_gdb_ready(struct session *s, struct session_proc *sp)
{
	struct gdb_data *g = s->bdata;

	if (g->adopted) {
		if (!server_adopted(&g->server, sp))
			gdb_adopt_ready(g);
		return;
	}
	if (server_started(&g->server, sp))
		return;
	if (server_managed(&g->server)) {
		g->debugger_up = true;
		if (server_up(&g->server))
			backend_gdb_connect(s);
	} else if (g->remote[0] != '\0')
		backend_gdb_connect(s);
	else
		gdb_attach_ready(s, sp);
}

/* gdb and remote: the MI channel beside the console, then gdb itself. */
int
backend_gdb_start(struct session *s, char *err, size_t errlen)
{
	/* Only remote sessions have an address (launch checks it). */
	if (backend_gdb_open(s, s->l.remote, err, errlen) != 0)
		return -1;
	/* A program gdb starts here gets a terminal of its own. */
	if (s->l.remote == NULL && gdb_tty_open(s, err, errlen) != 0)
		return -1;
	return session_proc_spawn_main(s, err, errlen);
}

const struct backend backend_gdb = {
	.name = "gdb",
	.debugger = "gdb",
	.stop_target = "auto",
	.flags = BACKEND_PROGRAM | BACKEND_ATTACH | BACKEND_ADOPT,
	.reset_rerun = true,
	.start = backend_gdb_start,
	BACKEND_GDB_FAMILY
};
