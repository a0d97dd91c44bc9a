/* A session's processes: their ptys, their keepers, and what they report. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "adopt.h"
#include "argv.h"
#include "semihost.h"
#include "session.h"

/* Bytes of a process's last output kept for messages about it. */
#define SESSION_TAIL_BYTES 1024
/* Lines of a server's output that a failure's message quotes. */
#define SESSION_TAIL_LINES 3

extern char **environ;

/* Keep the last bytes a process printed, for messages about it. */
static void
session_proc_keep_tail(struct session_proc *sp, const char *data, size_t len)
{
	size_t room = SESSION_TAIL_BYTES;

	/* Kept from the first output on, so a silent process costs nothing. */
	if (sp->tail == NULL)
		sp->tail = xmalloc(room);
	if (len >= room) {
		memcpy(sp->tail, data + len - room, room);
		sp->taillen = room;
		return;
	}
	if (sp->taillen + len > room) {
		memmove(sp->tail, sp->tail + sp->taillen + len - room,
		    room - len);
		sp->taillen = room - len;
	}
	memcpy(sp->tail + sp->taillen, data, len);
	sp->taillen += len;
}

/*
 * The last lines a process printed, as one line of plain text for a
 * message: escapes and carriage returns gone, line breaks " | ", the cut
 * moved past a character's middle; "" when it printed nothing.
 */
char *
session_proc_tail(const struct session_proc *sp)
{
	char	*text = xmalloc(sp->taillen * 3 + 1);
	size_t	 i = 0, k = 0, n = sp->taillen;
	int	 lines = 0;

	while (n > 0 && (sp->tail[n - 1] == '\n' || sp->tail[n - 1] == '\r'))
		n--;
	/* Only the last few lines: find where they start. */
	for (i = n; i > 0 && lines < SESSION_TAIL_LINES; i--)
		if (sp->tail[i - 1] == '\n')
			lines++;
	if (lines == SESSION_TAIL_LINES)
		i++;
	while (i < n && ((unsigned char)sp->tail[i] & 0xc0) == 0x80)
		i++;
	for (; i < n; i++) {
		if (sp->tail[i] == '\033' && i + 1 < n && sp->tail[i + 1] == '[') {
			for (i += 2; i < n && !isalpha((unsigned char)
			    sp->tail[i]); i++)
				;
			continue;
		}
		if (sp->tail[i] == '\r')
			continue;
		if (sp->tail[i] == '\n') {
			memcpy(text + k, " | ", 3);
			k += 3;
			continue;
		}
		text[k++] = sp->tail[i];
	}
	text[k] = '\0';
	return text;
}

/*
 * A helper that is gone with all its output has ended its stream (the
 * server's), which waiting readers hear of even while the session goes on.
 */
static void
session_proc_check_done(struct session_proc *sp)
{
	if (sp == &sp->s->procs[0] || !session_proc_done(sp))
		return;
	if (strcmp(sp->role, "server") == 0)
		output_end(sp->s->server_out);
	session_fire(sp->s, &(struct session_event){ .kind = SE_SERVER_END });
}

/*
 * Bytes sp's pty printed, for the console's readers: logged here, or
 * (spliced) already in the console's log, and the server's, by the pumps.
 */
static void
session_proc_output(struct session_proc *sp, const char *data, size_t len,
    bool spliced)
{
	struct session		*s = sp->s;
	struct session_event	 out = { .kind = SE_OUTPUT, .data = data,
				    .len = len };

	session_proc_keep_tail(sp, data, len);
	term_feed(&s->modes, data, len);
	if (spliced)
		out.offset = console_spliced_at(sp->console);
	else {
		out.offset = output_size(&s->output);
		output_add(&s->output, data, len);
	}
	/* A server's pty is a stream of its own too. */
	if (strcmp(sp->role, "server") == 0 && (!spliced || !sp->server_pumped))
		output_add(s->server_out, data, len);
	session_fire(s, &out);
}

/* A pty printed, drained, or took input. */
static void
session_proc_console_cb(void *arg, enum console_event ev, const char *data,
    size_t len)
{
	struct session_proc	*sp = arg;
	struct session		*s = sp->s;

	switch (ev) {
	case CONSOLE_OUTPUT:
	case CONSOLE_SPLICED:
		session_proc_output(sp, data, len, ev == CONSOLE_SPLICED);
		return;
	case CONSOLE_SPLICED_ALSO:
		/* The server's stream, pumped beside the console's. */
		session_fire(s, &(struct session_event){ .kind = SE_STREAM,
		    .stream = "server", .data = data, .len = len,
		    .offset = console_spliced_at(sp->console) });
		return;
	case CONSOLE_EOF:
		sp->drained = true;
		session_proc_check_done(sp);
		session_check_gone(s);
		return;
	case CONSOLE_WRITTEN:
		if (sp == &s->procs[0])
			session_fire(s, &(struct session_event){ .kind = SE_CONSOLE_ROOM });
		return;
	}
	log_fatal("console event %d", ev);
}

/*
 * A helper process (the server) ended while the session needed it: say
 * how, whether it was before the session ran, and what it printed last.
 */
static void
session_proc_exited(struct session_proc *sp)
{
	struct session	*s = sp->s;
	const char	*name = proc_name(sp->proc);
	char		 how[64], *tail;
	int		 code = 0, sig = 0;

	(void)proc_exit(sp->proc, &code, &sig);
	/* A firmware's semihosting exit ends QEMU with its code. */
	if (sig == 0 && strcmp(sp->role, "server") == 0 &&
	    semihost_server_exited(s, code))
		return;
	/*
	 * A server that ends well while the session runs ends with its
	 * program (gdbserver does when its program exits): gdb stays, to be
	 * looked at or run against another server, until the session stops.
	 */
	if (s->state == S_RUNNING && sig == 0 && code == 0) {
		log_info("session %lu: the %s %s ended with code 0; the "
		    "session goes on", s->id, sp->role, name);
		return;
	}
	if (sig != 0)
		snprintf(how, sizeof how, "was killed by signal %d", sig);
	else
		snprintf(how, sizeof how, "exited with code %d", code);
	/* What it printed before it exited is in its pty: read that first. */
	if (sp->console != NULL)
		console_drain(sp->console);
	tail = session_proc_tail(sp);
	session_fail(s, RPC_NOT_READY, "the %s %s %s%s%s%s", sp->role,
	    name, how, s->state == S_STARTING ? " before the "
	    "session ran" : "", *tail != '\0' ? "; it printed: " : "", tail);
	free(tail);
}

/* A keeper reported on its process. */
static void
session_proc_cb(void *arg, struct proc *pr, enum proc_event ev)
{
	struct session_proc	*sp = arg;
	struct session		*s = sp->s;
	bool			 main = sp == &s->procs[0];
	const char		*stage;
	int			 errnum, code = 0, sig = 0;

	switch (ev) {
	case PROC_STARTED:
		log_info("session %lu: %s pid %ld started", s->id, sp->role,
		    (long)proc_pid(pr));
		session_input(s, SI_STARTED, sp);
		return;
	case PROC_FAILED:
		stage = proc_failure(pr, &errnum);
		session_why(s, RPC_SPAWN_FAILED, errnum, "%s %s: %s", stage,
		    strcmp(stage, "chdir") == 0 ? s->l.cwd : proc_name(pr),
		    strerror(errnum));
		return;
	case PROC_EXITED:
		(void)proc_exit(pr, &code, &sig);
		log_info("session %lu: %s ended (%s %d)", s->id, sp->role,
		    sig ? "signal" : "code", sig ? sig : code);
		if (strcmp(proc_ended_by(pr), "kill") == 0)
			session_stop_killed(s);
		if (main)
			session_feed(s, SI_EXIT);
		else
			session_proc_exited(sp);
		return;
	case PROC_STOPPED:
	case PROC_CONTINUED:
		log_info("session %lu: %s %s", s->id, sp->role, ev ==
		    PROC_STOPPED ? "stopped" : "continued");
		if (main)
			session_fire(s, &(struct session_event){
			    .kind = SE_SUSPENDED, .sig = proc_stop_signal(pr) });
		return;
	case PROC_GONE:
		if (sp->console != NULL)
			console_finish(sp->console);
		if (main)
			session_stop_helpers(s);
		session_proc_check_done(sp);
		session_check_gone(s);
		return;
	}
	log_fatal("proc event %d", ev);
}

/* Whether one process of the session is gone with all of its output. */
bool
session_proc_done(const struct session_proc *sp)
{
	if (sp->proc == NULL)
		return true;
	return proc_gone(sp->proc) && sp->drained;
}

/* A process's pty: a new one, or the one its adopted keeper held. */
static struct console *
session_proc_console(struct session_proc *sp, char *err, size_t errlen)
{
	int fd;

	if (dmn.adopting == NULL)
		return console_open(false, session_proc_console_cb, sp, err,
		    errlen);
	if ((fd = adopt_take_fd((size_t)(sp - sp->s->procs), "console")) ==
	    -1) {
		snprintf(err, errlen, "its keeper did not hold its pty");
		return NULL;
	}
	if ((sp->console = console_adopt(fd, false, session_proc_console_cb,
	    sp, err, errlen)) != NULL)
		session_pump_adopt(sp);
	return sp->console;
}

/* Give the session one more process slot, with a pty of its own. */
struct session_proc *
session_proc_add(struct session *s, const char *role, char *err,
    size_t errlen)
{
	struct session_proc *sp;

	if (s->nprocs == SESSION_MAXPROCS)
		log_fatal("session %lu: more than %d processes", s->id,
		    SESSION_MAXPROCS);
	sp = &s->procs[s->nprocs++];
	sp->s = s;
	sp->role = role;
	sp->listen_fd = -1;
	sp->extra_fds[0] = sp->extra_fds[1] = -1;
	if (strcmp(role, "server") == 0 && session_stream_open(s, "server",
	    err, errlen) != 0)
		return NULL;
	if ((sp->console = session_proc_console(sp, err, errlen)) == NULL)
		return NULL;
	return sp;
}

/*
 * Whether e, one of the daemon's variables, is left out: the session's
 * own, a launch's value, or the terminal's where the client named its own
 * (the daemon's are those of whatever started it, or none at all).
 */
static bool
session_proc_env_skip(const struct session *s, const char *e)
{
	size_t	len = strcspn(e, "=");

	if (strncmp(e, "DBGCTL_SESSION=", 15) == 0)
		return true;
	if (strncmp(e, "PATH=", 5) == 0 && s->backend->path != NULL)
		return true;
	if (s->l.term_env != NULL && ((len == 4 && strncmp(e, "TERM", 4) ==
	    0) || (len == 9 && strncmp(e, "COLORTERM", 9) == 0)))
		return true;
	return json_object_getn(s->l.env, e, len) != NULL;
}

/*
 * Build a process's environment: the daemon's, the launching client's
 * terminal, the launch's, the session's.
 */
static char **
session_proc_env(struct session *s)
{
	const char	*key;
	json_t		*val;
	struct argv	 av = { 0 };
	char	       **e;
	bool		 have_term = false;

	for (e = environ; *e != NULL; e++) {
		if (session_proc_env_skip(s, *e))
			continue;
		if (strncmp(*e, "TERM=", 5) == 0)
			have_term = true;
		argv_push(&av, *e);
	}
	json_object_foreach(s->l.term_env, key, val) {
		/* A launch's own value replaces the client's. */
		if (json_object_get(s->l.env, key) != NULL)
			continue;
		if (strcmp(key, "TERM") == 0)
			have_term = true;
		argv_pushf(&av, "%s=%s", key, json_string_value(val));
	}
	json_object_foreach(s->l.env, key, val) {
		/* The daemon names the session; a launch cannot. */
		if (strcmp(key, "DBGCTL_SESSION") == 0)
			continue;
		if (strcmp(key, "TERM") == 0)
			have_term = true;
		argv_pushf(&av, "%s=%s", key, json_string_value(val));
	}
	argv_pushf(&av, "DBGCTL_SESSION=%lu", s->id);
	if (!have_term)
		argv_push(&av, "TERM=dumb");
	if (s->backend->path != NULL && json_object_get(s->l.env, "PATH") ==
	    NULL)
		argv_pushf(&av, "PATH=%s", s->backend->path);
	return av.v;
}

/*
 * Where a keeper of an adoptable session waits for a new daemon should
 * this one die, or NULL where its kind cannot be adopted.
 */
static const char *
session_proc_adopt_path(const struct session_proc *sp, char *buf,
    size_t len)
{
	if (!(sp->s->backend->flags & BACKEND_ADOPT) ||
	    dmn.adopt_grace_ms == 0 || adopt_sock_path(sp->s->id,
	    (size_t)(sp - sp->s->procs), buf, len) != 0)
		return NULL;
	return buf;
}

/*
 * Give the keeper of an adoptable session copies of the daemon's ends of
 * what its process talks through, to hold while no daemon does.
 */
static void
session_proc_hold(struct session_proc *sp)
{
	int	in, out, fd;
	bool	held;

	if (sp->proc == NULL || !(sp->s->backend->flags & BACKEND_ADOPT) ||
	    dmn.adopt_grace_ms == 0)
		return;
	held = proc_hold(sp->proc, "console", console_master(sp->console));
	/* The keeper reads the semihosting console too, as it does the pty. */
	if (strcmp(sp->role, "server") == 0 && semihost_daemon_fd(sp->s) !=
	    -1 && proc_hold(sp->proc, "semihost", semihost_daemon_fd(sp->s)) &&
	    session_pump_pipes(sp, "semihost", (const char *const[]){
	    "semihost.pump" }, &fd, 1) == 0)
		semihost_pump(sp->s, fd);
	if (sp->s->backend->hold != NULL)
		sp->s->backend->hold(sp->s, sp);
	if (sp->transport) {
		transport_daemon_fds(sp->s->transport, &in, &out);
		proc_hold(sp->proc, "in", in);
		proc_hold(sp->proc, "out", out);
	}
	if (held)
		session_pump_start(sp);
}

/* The keeper a dead daemon left for the process, taken over. */
static struct proc *
session_proc_adopt(struct session_proc *sp, const char *exec_name, char *err,
    size_t errlen)
{
	struct proc *pr;

	pr = adopt_take_proc((size_t)(sp - sp->s->procs), exec_name,
	    session_proc_cb, sp);
	if (pr == NULL)
		snprintf(err, errlen, "its %s's keeper is gone", sp->role);
	return pr;
}

/* The daemon closed what the session's keepers hold as name: they let go. */
void
session_proc_release(struct session *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (s->procs[i].transport && s->procs[i].proc != NULL)
			proc_release(s->procs[i].proc, name);
}

/* The keeper holds the kind's own fds now (or they went with it): ours go. */
static void
session_proc_close_extra(struct session_proc *sp)
{
	size_t i;

	for (i = 0; i < PROC_EXTRA_FDS; i++) {
		if (sp->extra_fds[i] != -1)
			close(sp->extra_fds[i]);
		sp->extra_fds[i] = -1;
	}
}

/* Start argv under a keeper on the process's pty. */
int
session_proc_spawn(struct session_proc *sp, char **argv, char *err, size_t errlen)
{
	struct session		*s = sp->s;
	char			 cg[64], sock[PATH_MAX];
	struct proc_spec	 spec = {
		.argv = argv,
		.cwd = s->l.cwd,
		.stop_timeout = s->l.stop_timeout,
		.tty = console_slave(sp->console),
		.fd_in = -1,
		.fd_out = -1,
		.stdio = sp->stdio,
		.fd_listen = sp->listen_fd,
		.fd_semihost = -1,
		.fd_extra = sp->extra_fds,
		.cgroup = cg,
	};

	/*
	 * A daemon's death hangs the debugger up first, as tmux's end does
	 * a shell, where its kind says so: gdb detaches from what it only
	 * attached to (launch --pid, -x attach), which a kill would leave
	 * with its breakpoints.
	 */
	spec.hangup = sp == &s->procs[0] && s->backend->hangup;
	if (sp->transport)
		transport_child_fds(s->transport, &spec.fd_in, &spec.fd_out);
	/* QEMU's stdio is the semihosting console; the UART's pipes 4 and 5. */
	if (strcmp(sp->role, "server") == 0) {
		semihost_child_fds(s, &spec.fd_semihost, &spec.fd_semihost_out);
		if (spec.fd_semihost != -1)
			spec.stdio = false;
	}
	snprintf(cg, sizeof cg, "%ld-%lu-%zu", (long)getpid(), s->id,
	    (size_t)(sp - s->procs));
	if (dmn.adopting != NULL)
		sp->proc = session_proc_adopt(sp, argv[0], err, errlen);
	else {
		spec.env = session_proc_env(s);
		spec.adopt = session_proc_adopt_path(sp, sock, sizeof sock);
		sp->proc = proc_spawn(&spec, dmn.keeper_path, session_proc_cb,
		    sp, err, errlen);
		session_proc_hold(sp);
	}
	if (sp == &s->procs[0])
		s->in_cgroup = sp->proc != NULL &&
		    proc_contained(sp->proc);
	argv_free(spec.env);
	/* The keeper holds the child ends now; our copies would hide EOF. */
	console_release_slave(sp->console);
	if (sp->listen_fd != -1) {
		close(sp->listen_fd);
		sp->listen_fd = -1;
	}
	if (spec.fd_semihost != -1)
		semihost_spawned(s);
	session_proc_close_extra(sp);
	if (sp->transport)
		transport_spawned(s->transport);
	if (sp->proc != NULL && spec.adopt != NULL && sp == &s->procs[0])
		session_record_write(s);
	return sp->proc == NULL ? -1 : 0;
}

/* Build the main process's argv and start it, unless the session is ending. */
int
session_proc_spawn_main(struct session *s, char *err, size_t errlen)
{
	char	**av;
	int	  rc;

	if (s->state != S_STARTING) {
		snprintf(err, errlen, "session %lu is %s", s->id,
		    session_state_name(s->state));
		return -1;
	}
	if ((av = s->backend->argv(s, err, errlen)) == NULL)
		return -1;
	rc = session_proc_spawn(&s->procs[0], av, err, errlen);
	argv_free(av);
	return rc;
}

