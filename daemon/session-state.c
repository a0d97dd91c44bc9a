/*
 * The session lifecycle, decided in one table: every input a session gets
 * (from its backend, its processes or a request) is looked up by state and
 * gives the next state and what to do. Nothing else moves a session.
 */
#include <stdlib.h>

#include "daemon.h"
#include "session.h"

/* What an input does in a state: where to go (through via), and an action. */
struct session_action {
	enum session_state	  to;
	enum session_state	  via;
	void			(*act)(struct session *, const void *arg);
};

/* Stay where it is: the input means nothing in this state. */
#define STAY	S_NSTATES

static const char *session_input_names[] = {
	[SI_READY] = "ready",
	[SI_STOP] = "stop",
	[SI_FAIL] = "fail",
	[SI_EXIT] = "exit",
	[SI_GONE] = "gone",
	[SI_STARTED] = "started",
};

/* Record the why an input came with, if any. */
static void
session_act_why(struct session *s, const void *arg)
{
	const struct session_why *why = arg;

	if (why != NULL)
		session_why(s, why->code, why->err, "%s", why->msg);
}

/* End the processes at once: SIGTERM, the main one first, the rest once it is gone. */
static void
session_act_stop(struct session *s, const void *arg)
{
	session_act_why(s, arg);
	session_stop_begin(s, false);
}

/* End a running session in order: the backend's quit, then SIGTERM. */
static void
session_act_quit(struct session *s, const void *arg)
{
	session_act_why(s, arg);
	session_stop_begin(s, true);
}

/* A stop before the session ran: the launch fails with not_running. */
static void
session_act_abort(struct session *s, const void *arg)
{
	(void)arg;
	session_why(s, RPC_NOT_RUNNING, 0, "session %lu was stopped while "
	    "starting", s->id);
	session_act_stop(s, NULL);
}

/* It never ran: the launch fails with the first cause, or a plain one. */
static void
session_act_failed(struct session *s, const void *arg)
{
	(void)arg;
	session_why(s, RPC_SPAWN_FAILED, 0, "the program ended before it ran");
	session_end(s);
}

/* It ran and is gone; a main process whose end nobody reported is a fault. */
static void
session_act_exited(struct session *s, const void *arg)
{
	struct proc *main = s->procs[0].proc;

	(void)arg;
	if (main != NULL && !proc_exit(main, NULL, NULL))
		session_why(s, RPC_NOT_RUNNING, 0, "the %s's keeper ended "
		    "unexpectedly", s->procs[0].role);
	session_end(s);
}

/* A process exec'd while starting: the backend decides when it is ready. */
static void
session_act_started(struct session *s, const void *arg)
{
	struct session_proc *sp = (struct session_proc *)arg;

	if (s->backend->ready != NULL)
		s->backend->ready(s, sp);
	else if (sp == &s->procs[0])
		session_feed(s, SI_READY);
}

/* It runs: what counts its time (a deadline, a silence) starts. */
static void
session_act_ready(struct session *s, const void *arg)
{
	(void)arg;
	session_fire(s, &(struct session_event){ .kind = SE_READY });
}

/* An ended session: every input means nothing. */
#define SESSION_INERT {						\
	[SI_READY] = { STAY, STAY, NULL },				\
	[SI_STOP] = { STAY, STAY, NULL },				\
	[SI_FAIL] = { STAY, STAY, NULL },				\
	[SI_EXIT] = { STAY, STAY, NULL },				\
	[SI_GONE] = { STAY, STAY, NULL },				\
	[SI_STARTED] = { STAY, STAY, NULL },				\
}

static const struct session_action session_actions[S_NSTATES][SI_NINPUTS] = {
	[S_STARTING] = {
		[SI_READY] = { S_RUNNING, STAY, session_act_ready },
		[SI_STOP] = { S_ABORTING, STAY, session_act_abort },
		[SI_FAIL] = { S_ABORTING, STAY, session_act_stop },
		[SI_EXIT] = { STAY, STAY, NULL },
		[SI_GONE] = { S_FAILED, STAY, session_act_failed },
		[SI_STARTED] = { STAY, STAY, session_act_started },
	},
	[S_RUNNING] = {
		[SI_READY] = { STAY, STAY, NULL },
		[SI_STOP] = { S_STOPPING, STAY, session_act_quit },
		[SI_FAIL] = { S_STOPPING, STAY, session_act_quit },
		[SI_EXIT] = { S_STOPPING, STAY, NULL },
		[SI_GONE] = { S_EXITED, S_STOPPING, session_act_exited },
		[SI_STARTED] = { STAY, STAY, NULL },
	},
	[S_STOPPING] = {
		[SI_READY] = { STAY, STAY, NULL },
		/* A second stop may shorten the deadline. */
		[SI_STOP] = { STAY, STAY, session_act_stop },
		[SI_FAIL] = { STAY, STAY, NULL },
		[SI_EXIT] = { STAY, STAY, NULL },
		[SI_GONE] = { S_EXITED, STAY, session_act_exited },
		[SI_STARTED] = { STAY, STAY, NULL },
	},
	[S_ABORTING] = {
		[SI_READY] = { STAY, STAY, NULL },
		[SI_STOP] = { STAY, STAY, session_act_stop },
		[SI_FAIL] = { STAY, STAY, NULL },
		[SI_EXIT] = { STAY, STAY, NULL },
		[SI_GONE] = { S_FAILED, STAY, session_act_failed },
		[SI_STARTED] = { STAY, STAY, NULL },
	},
	[S_EXITED] = SESSION_INERT,
	[S_FAILED] = SESSION_INERT,
};

/*
 * Enter a state on input in: log both in one line (a session's end is
 * thousands of lines at a stop --all) and tell the sinks.
 */
static void
session_enter(struct session *s, enum session_input in,
    enum session_state to)
{
	struct session_event ev = { .kind = SE_STATE };

	log_info("session %lu: %s: %s -> %s", s->id, session_input_names[in],
	    session_state_name(s->state), session_state_name(to));
	s->state = to;
	session_fire(s, &ev);
}

/* Feed an input to the table, with what goes with it (a why, a process). */
void
session_input(struct session *s, enum session_input in, const void *arg)
{
	const struct session_action *a;

	if (s->state >= S_NSTATES || in >= SI_NINPUTS)
		log_fatal("session %lu: state %d, input %d", s->id, s->state,
		    in);
	a = &session_actions[s->state][in];
	/* An input that moves the session is logged with its move. */
	if (a->to == STAY && a->via == STAY)
		log_info("session %lu: %s while %s", s->id,
		    session_input_names[in], session_state_name(s->state));
	/* Nothing goes back to starting: such an entry is one left out. */
	if (a->to == S_STARTING || a->via == S_STARTING)
		log_fatal("session %lu: no action for %s while %s", s->id,
		    session_input_names[in], session_state_name(s->state));
	if (a->to == STAY && a->act == NULL)
		return;
	session_ref(s);
	if (a->act != NULL)
		a->act(s, arg);
	if (a->via != STAY)
		session_enter(s, in, a->via);
	if (a->to != STAY)
		session_enter(s, in, a->to);
	if (session_ended(s))
		session_prune();
	session_unref(s);
}

/* Feed an input to the table (session_fire, not this, tells the sinks). */
void
session_feed(struct session *s, enum session_input in)
{
	session_input(s, in, NULL);
}
