/*
 * What the debugger tells of a session's target, kept and fanned out:
 * its state, each with its seq, its breakpoints, its program's runs, and
 * its fault records with their history.
 */
#include <string.h>

#include "daemon.h"
#include "session-target.h"

/* Fault records a session keeps in its history (status "faults"). */
#define FAULTS_KEPT 16

/* The debugged target's state changed (the record is taken): tell the sinks. */
void
session_target(struct session *s, json_t *target)
{
	struct session_event ev = { .kind = SE_RUNSTATE, .json = target };

	json_decref(s->target);
	s->target = target;
	/* One count for every record, so a waiter tells a new stop from the last. */
	json_object_set_new(target, "seq", json_integer(++s->target_seq));
	/* A fault's record comes after its stop; any later state ends it. */
	s->faulted = false;
	log_info("session %lu: target %s", s->id,
	    json_string_value(json_object_get(target, "state")));
	session_fire(s, &ev);
}

/* A breakpoint was made or deleted (rec taken): sinks hear of it. */
void
session_breakpoint(struct session *s, json_t *rec)
{
	struct session_event ev = { .kind = SE_BREAKPOINT, .json = rec };

	session_fire(s, &ev);
	json_decref(rec);
}

/*
 * The debugger says its program started or exited: the target stream's
 * run begins or ends (a debugger holds the pipes, so no EOF tells).
 */
void
session_target_run(struct session *s, bool running)
{
	if (s->transport == NULL)
		return;
	log_info("session %lu: the program %s", s->id, running ? "runs" :
	    "has exited");
	if (running)
		transport_run_start(s->transport);
	else
		transport_run_end(s->transport);
}

/* A fault record was gathered (it is taken): keep it, log it, tell the sinks. */
void
session_fault(struct session *s, json_t *fault)
{
	struct session_event ev = { .kind = SE_FAULT, .json = fault };

	json_decref(s->fault);
	s->fault = fault;
	s->faulted = true;
	/* The stop it was gathered at: a waiter's "after" compares with it. */
	json_object_set_new(fault, "seq", json_integer(s->target_seq));
	json_object_set_new(fault, "time", json_real(loop_now()));
	if (s->faults == NULL)
		s->faults = json_array();
	if (json_array_size(s->faults) == FAULTS_KEPT)
		json_array_remove(s->faults, 0);
	json_array_append(s->faults, fault);
	/* Kept, made the verdict and noted before anyone hears of it. */
	session_fire(s, &(struct session_event){ .kind = SE_FAULT_KEPT,
	    .json = fault });
	session_fire(s, &ev);
}

/*
 * A reset, a load or a new run (by says which): the fault and the verdict
 * are history now ("faults" and "verdicts" keep them).
 */
void
session_fault_clear(struct session *s, const char *by)
{
	json_decref(s->fault);
	s->fault = NULL;
	s->faulted = false;
	session_fire(s, &(struct session_event){ .kind = SE_FAULT_CLEARED,
	    .data = by, .len = strlen(by) });
}
