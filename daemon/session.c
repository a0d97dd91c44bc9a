/*
 * The session table, each session's processes and resources, and the one
 * place that fans events out: resources call back here, sinks hear it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "adopt.h"
#include "session.h"
#include "signame.h"

/* How deep session_fire is, and the sinks removed meanwhile, freed at 0. */
static unsigned		 session_firing;
static struct sink	*session_dead_sinks;

static const char *session_state_names[] = {
	[S_STARTING] = "starting",
	[S_RUNNING] = "running",
	[S_STOPPING] = "stopping",
	[S_ABORTING] = "stopping",
	[S_EXITED] = "exited",
	[S_FAILED] = "failed",
};


/* The name of a state as the protocol spells it. */
const char *
session_state_name(enum session_state st)
{
	return session_state_names[st];
}

/*
 * The session's state in the words of every refusal: "has exited" or
 * "has failed" once it has ended, else "is running", "is starting"...
 */
const char *
session_is(const struct session *s)
{
	switch (s->state) {
	case S_EXITED:
		return "has exited";
	case S_FAILED:
		return "has failed";
	case S_STARTING:
		return "is starting";
	case S_RUNNING:
		return "is running";
	default:
		return "is stopping";
	}
}

/* Whether the session has reached a final state. */
bool
session_ended(const struct session *s)
{
	return s->state == S_EXITED || s->state == S_FAILED;
}

/* Hand ev to every sink that wants it; the caller keeps s alive. */
static void
session_fire_sinks(struct session *s, const struct session_event *ev)
{
	struct sink	*k;
	struct sinks	*lists[2] = { &dmn.sinks, &s->sinks };
	size_t		 i;

	session_firing++;
	/*
	 * Subscribers first, then the session's own sinks (waiting requests):
	 * a client hears "running" before the launch's reply. Sinks are only
	 * marked dead while firing, so the lists stay whole.
	 */
	for (i = 0; i < 2; i++) {
		TAILQ_FOREACH(k, lists[i], entry) {
			if (k->dead || !(k->mask & ev->kind) ||
			    (k->s != NULL && k->s != s))
				continue;
			k->cb(k, s, ev);
		}
	}
	if (--session_firing == 0) {
		while ((k = session_dead_sinks) != NULL) {
			session_dead_sinks = k->next_dead;
			k->dead = false;
			session_sink_remove(k);
		}
	}
}

/* Tell every sink that wants it what happened to s. */
void
session_fire(struct session *s, const struct session_event *ev)
{
	session_ref(s);
	session_fire_sinks(s, ev);
	session_unref(s);
}

/*
 * A step of the teardown: the features that keep something of s let it
 * go, in the order daemon_sinks registered them. No reference is taken:
 * the table's caller holds s, and at SE_FREED none is left to take.
 */
static void
session_teardown(struct session *s, enum session_event_kind kind)
{
	struct session_event ev = { .kind = kind };

	session_fire_sinks(s, &ev);
}

/* Fire an event that carries nothing but its kind. */
static void
session_fire_kind(struct session *s, enum session_event_kind kind)
{
	struct session_event ev = { .kind = kind };

	session_fire(s, &ev);
}

/* Listen to s's events in mask (s NULL: every session's). */
struct sink *
session_sink_add(struct session *s, unsigned mask, sink_cb cb, void *arg)
{
	struct sink *k = xcalloc(1, sizeof *k);

	k->s = s;
	k->mask = mask;
	k->cb = cb;
	k->arg = arg;
	if (s != NULL) {
		session_ref(s);
		TAILQ_INSERT_TAIL(&s->sinks, k, entry);
	} else
		TAILQ_INSERT_TAIL(&dmn.sinks, k, entry);
	return k;
}

/* Stop listening; while events are being fired the sink is freed after. */
void
session_sink_remove(struct sink *k)
{
	if (k == NULL || k->dead)
		return;
	if (session_firing > 0) {
		k->dead = true;
		k->next_dead = session_dead_sinks;
		session_dead_sinks = k;
		return;
	}
	if (k->s != NULL) {
		TAILQ_REMOVE(&k->s->sinks, k, entry);
		session_unref(k->s);
	} else
		TAILQ_REMOVE(&dmn.sinks, k, entry);
	free(k);
}

/* Make a message JSON can carry: bytes that are not UTF-8 become '?'. */
static void
session_why_utf8(char *msg)
{
	json_t	*v;
	char	*p;

	if ((v = json_string(msg)) != NULL) {
		json_decref(v);
		return;
	}
	for (p = msg; *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
}

/* Record why the session failed; the first cause is kept. */
void
session_why(struct session *s, int code, int err, const char *fmt, ...)
{
	va_list ap;

	if (s->why.msg != NULL)
		return;
	va_start(ap, fmt);
	xvasprintf(&s->why.msg, fmt, ap);
	va_end(ap);
	session_why_utf8(s->why.msg);
	s->why.code = code;
	s->why.err = err;
	log_info("session %lu: %s", s->id, s->why.msg);
}

/* The console a person or a script types into: the main process's pty. */
struct console *
session_console(const struct session *s)
{
	return s->procs[0].console;
}

/*
 * Where typed bytes go: the program's own terminal (gdb-tty.c) while the
 * program runs on it, a group of its in front there, as at a terminal gdb
 * handed over; else the console. A process gdb attached to has a terminal
 * elsewhere: the console's gdb passes it ^C.
 */
struct console *
session_keyboard(const struct session *s)
{
	const char *state = json_string_value(json_object_get(s->target,
	    "state"));

	if (s->tty == NULL || state == NULL || strcmp(state, "running") != 0 ||
	    tcgetpgrp(console_master(s->tty)) <= 0)
		return session_console(s);
	return s->tty;
}

/* The pty of the session's process in role ("server"), or NULL. */
struct console *
session_console_of(const struct session *s, const char *role)
{
	size_t i;

	for (i = 0; i < s->nprocs; i++)
		if (strcmp(s->procs[i].role, role) == 0)
			return s->procs[i].console;
	return NULL;
}

/* Type bytes into the console, as at its terminal. */
void
session_console_write(struct session *s, const char *data, size_t len)
{
	if (session_console(s) != NULL)
		console_write(session_console(s), data, len);
}

/* The target's output arrived or ended, or its input moved. */
static void
session_transport_cb(void *arg, enum transport_event ev, const char *data,
    size_t len)
{
	struct session		*s = arg;
	struct session_event	 e = { .data = data, .len = len };

	switch (ev) {
	case TRANSPORT_OUTPUT:
		e.kind = SE_TARGET;
		break;
	case TRANSPORT_EOF:
		e.kind = SE_TARGET_EOF;
		/* The transcript is complete once the pipe's EOF is in. */
		if (session_ended(s))
			session_stream_end(s);
		break;
	case TRANSPORT_INPUT:
		e.kind = SE_INPUT;
		break;
	case TRANSPORT_IN_CLOSED:
		session_proc_release(s, "in");
		return;
	default:
		log_fatal("transport event %d", ev);
	}
	session_fire(s, &e);
}

/* Everything of the session gone, and its output in: the table ends it. */
void
session_check_gone(struct session *s)
{
	size_t i;

	if (session_ended(s))
		return;
	for (i = 0; i < s->nprocs; i++)
		if (!session_proc_done(&s->procs[i]))
			return;
	session_feed(s, SI_GONE);
}

/* The session's transport: new pipes, or those its keeper held. */
static struct transport *
session_transport(struct session *s, char *err, size_t errlen)
{
	int in, out;

	if (dmn.adopting == NULL)
		return transport_open(s->target_out, s->target_in,
		    session_transport_cb, s, err, errlen);
	in = adopt_take_fd_any("in");
	out = adopt_take_fd_any("out");
	if (out == -1) {
		snprintf(err, errlen, "its keeper did not hold the "
		    "transport");
		if (in != -1)
			close(in);
		return NULL;
	}
	/* Without "in": the daemon that died had closed the target's stdin. */
	return transport_adopt(s->target_out, s->target_in,
	    session_transport_cb, s, in, out);
}

/* Open what a session needs and start it; -1 with err on failure. */
static int
session_start(struct session *s, char *err, size_t errlen)
{
	if (session_stream_open(s, "console", err, errlen) != 0)
		return -1;
	if (session_proc_add(s, s->backend->debugger ? "debugger" : "program",
	    err, errlen) == NULL)
		return -1;
	if (s->l.transport && (session_stream_open(s, "target", err,
	    errlen) != 0 || session_stream_open(s, "target-in", err,
	    errlen) != 0 || (s->transport = session_transport(s, err,
	    errlen)) == NULL))
		return -1;
	s->procs[0].transport = s->transport != NULL &&
	    !(s->backend->flags & BACKEND_SERVER);
	s->procs[0].stdio = s->backend->flags & BACKEND_STDIO;
	if (s->backend->start != NULL)
		return s->backend->start(s, err, errlen);
	return session_proc_spawn_main(s, err, errlen);
}

/*
 * Enter a launch in the table as session id and start it (or, adopting,
 * take it over); the session owns l's contents.
 */
static struct session *
session_enter(struct launch *l, unsigned long id, double started_at)
{
	struct session	*s;
	char		 why[1024];
	int		 e;

	s = xcalloc(1, sizeof *s);
	s->id = id;
	s->refs = 1;
	s->listed = true;
	s->backend = l->backend;
	s->l = *l;
	memset(l, 0, sizeof *l);
	session_stream_init(s);
	s->stop_ms = -1;
	s->state = S_STARTING;
	s->started_at = started_at;
	TAILQ_INIT(&s->sinks);
	TAILQ_INSERT_TAIL(&dmn.sessions, s, entry);
	RB_INSERT(session_ids, &dmn.session_ids, s);
	log_info("session %lu: %s %s %s", s->id, dmn.adopting != NULL ?
	    "adopting" : "launching", s->backend->name, s->l.remote != NULL ?
	    s->l.remote : json_string_value(json_array_get(s->l.argv, 0)));
	session_fire_kind(s, SE_STATE);
	if (session_start(s, why, sizeof why) != 0) {
		e = errno;
		session_start_fail(s, e, "%s", why);
	}
	return s;
}

/*
 * Starting failed, now or once what it waited for came (errno err): the
 * launch fails with why; with nothing run it fails at once, else what ran
 * is stopped.
 */
void
session_start_fail(struct session *s, int err, const char *fmt, ...)
{
	va_list	 ap;
	char	*why;

	va_start(ap, fmt);
	xvasprintf(&why, fmt, ap);
	va_end(ap);
	session_why(s, RPC_SPAWN_FAILED, err, "%s", why);
	free(why);
	session_check_gone(s);
	session_feed(s, SI_FAIL);
}

/* Enter a launch in the table and start it; the session owns l's contents. */
struct session *
session_create(struct launch *l, struct rpc_error *err)
{
	if (dmn.shutting_down) {
		rpc_error_set(err, RPC_SHUTTING_DOWN, "the daemon is shutting "
		    "down");
		return NULL;
	}
	return session_enter(l, dmn.next_id++, loop_now());
}

/*
 * Enter session id, which a dead daemon left, as l launched it, taking
 * over what dmn.adopting holds; the session owns l's contents.
 */
struct session *
session_adopt(struct launch *l, unsigned long id, double started_at,
    struct rpc_error *err)
{
	struct session *s;

	if (session_by_id(id) != NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "session %lu is known",
		    id);
		return NULL;
	}
	s = session_enter(l, id, started_at);
	s->adopted = true;
	/*
	 * Its records' seq goes on above any a dead daemon can have given:
	 * none gives more than one a microsecond.
	 */
	if (loop_now() > started_at)
		s->target_seq += (uint64_t)((loop_now() - started_at) * 1e6);
	return s;
}

/* Signal the foreground process group of the session's pty. */
int
session_signal(struct session *s, int sig, pid_t *pgrp, struct rpc_error *err)
{
	struct proc *main = s->procs[0].proc;

	if ((s->state != S_RUNNING && s->state != S_STOPPING) ||
	    session_console(s) == NULL) {
		rpc_error_set(err, RPC_NOT_RUNNING, "session %lu %s", s->id,
		    session_is(s));
		return -1;
	}
	/* Where ^C would go: the program's own terminal while it runs there. */
	*pgrp = tcgetpgrp(console_master(session_keyboard(s)));
	/* The keeper's own group in front means the program is gone. */
	if (*pgrp <= 0 || main == NULL || *pgrp == proc_keeper_pid(main)) {
		rpc_error_set(err, RPC_NOT_RUNNING, "session %lu has no "
		    "foreground process", s->id);
		return -1;
	}
	if (kill(-*pgrp, sig) != 0) {
		rpc_error_set(err, RPC_NOT_RUNNING, "kill -%s %ld: %s",
		    signame_name(sig) ? signame_name(sig) : "?", (long)*pgrp,
		    strerror(errno));
		return -1;
	}
	log_info("session %lu: signal %d to group %ld", s->id, sig,
	    (long)*pgrp);
	return 0;
}

/* End everything: TERM now, KILL after timeout_ms (-1: the session's own). */
void
session_stop(struct session *s, long timeout_ms)
{
	s->stop_ms = timeout_ms >= 0 ? timeout_ms : s->l.stop_timeout;
	/* What holds the session still (a suspension) lets go before. */
	session_teardown(s, SE_STOP);
	session_feed(s, SI_STOP);
}

/* The backend says the session is ready; true if it now runs. */
bool
session_ready(struct session *s)
{
	session_feed(s, SI_READY);
	return s->state == S_RUNNING;
}

/* The session cannot go on: record why (code for a launch) and stop it. */
void
session_fail(struct session *s, int code, const char *fmt, ...)
{
	struct session_why	 why = { .code = code };
	va_list			 ap;

	va_start(ap, fmt);
	xvasprintf(&why.msg, fmt, ap);
	va_end(ap);
	session_input(s, SI_FAIL, &why);
	free(why.msg);
}

/* Sessions that have not ended yet. */
unsigned long
session_live_count(void)
{
	struct session	*s;
	unsigned long	 n = 0;

	TAILQ_FOREACH(s, &dmn.sessions, entry)
		if (!session_ended(s))
			n++;
	return n;
}

/*
 * The session has reached a final state: release its ptys and pipes and
 * the backend's live parts; what status and logs read stays.
 */
void
session_end(struct session *s)
{
	size_t i;

	s->ended_at = loop_now();
	for (i = 0; i < s->nprocs; i++) {
		console_close(s->procs[i].console);
		s->procs[i].console = NULL;
	}
	/* Into the log while it is open: what the program printed last. */
	session_teardown(s, SE_ENDING);
	session_stream_end(s);
	if (s->transport != NULL)
		transport_finish(s->transport);
	if (s->backend->close != NULL)
		s->backend->close(s);
	session_stop_end(s);
	session_teardown(s, SE_ENDED);
	session_prune_ended(s);
}

/* Take a reference: the session is not freed while it is held. */
void
session_ref(struct session *s)
{
	s->refs++;
}

/* Free an ended session and everything it holds. */
static void
session_free(struct session *s)
{
	size_t i;

	log_info("session %lu: forgotten", s->id);
	for (i = 0; i < s->nprocs; i++) {
		console_close(s->procs[i].console);
		proc_free(s->procs[i].proc);
		free(s->procs[i].tail);
	}
	timer_free(s->stop_timer);
	timer_free(s->stop_kill_timer);
	transport_close(s->transport);
	session_stream_free(s);
	/* While the records below are still whole, if a feature reads them. */
	session_teardown(s, SE_FREED);
	free(s->why.msg);
	json_decref(s->target);
	json_decref(s->fault);
	json_decref(s->faults);
	json_decref(s->verdict);
	json_decref(s->verdicts);
	free(s->cursors);
	free(s->bdata);
	free(s);
}

/* Drop a reference; the last one frees the session. */
void
session_unref(struct session *s)
{
	if (s->refs == 0)
		log_fatal("session %lu: unreferenced too often", s->id);
	if (--s->refs == 0)
		session_free(s);
	else if (s->refs == 1 && s->listed && session_ended(s) &&
	    session_prune_left(s) <= 0)
		session_prune_soon();
	else if (s->refs == 1 && s->listed && session_ended(s))
		session_prune();
}
