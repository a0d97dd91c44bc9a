/*
 * A gdb session a dead daemon left, taken over (adopt.c): gdb never
 * stopped, so nothing is run, attached or typed again; its MI pty and the
 * program's terminal come from its keeper, and what the daemon knew is
 * asked of gdb again: its fault breaks' numbers (-break-list), whether
 * its program lives (-list-thread-groups) and whether it runs or where it
 * stopped (-thread-info). The session runs once gdb has answered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "adopt.h"
#include "gdb.h"
#include "live.h"
#include "mi.h"
#include "session-target.h"

/*
 * Give gdb's keeper its MI pty and its program's terminal to hold, and a
 * server's keeper what live memory talks to it through.
 */
void
gdb_adopt_hold(struct session *s, struct session_proc *sp)
{
	struct gdb_data	*g = gdb_of(s);
	int		 fd;

	if (sp != &s->procs[0])
		live_qemu_hold(s, sp);
	if (sp != &s->procs[0] || g == NULL || g->mi == NULL)
		return;
	proc_hold(sp->proc, "mi", mi_master(g->mi));
	/* The program's output goes by the keeper too: none dies with us. */
	if (s->tty != NULL && proc_hold(sp->proc, "tty",
	    console_master(s->tty)) && session_pump_pipes(sp, "tty",
	    (const char *const[]){ "tty.pump" }, &fd, 1) == 0)
		console_pump(s->tty, fd, &s->output, CONSOLE_SPLICED);
}

/* The MI channel of an adopted gdb: its pty, its transcript going on. */
struct mi *
gdb_adopt_mi(struct gdb_data *g, const char *transcript, char *err,
    size_t errlen)
{
	char		 why[PATH_MAX + 128];
	struct mi	*m;
	int		 fd;

	if ((fd = adopt_take_fd(0, "mi")) == -1) {
		snprintf(err, errlen, "its keeper did not hold gdb's MI pty");
		return NULL;
	}
	if ((m = mi_adopt(fd, gdb_event, g, err, errlen)) == NULL)
		return NULL;
	if (mi_transcript_reopen(m, transcript, dmn.transcript_max, why,
	    sizeof why) != 0)
		log_warn("session %lu: no MI transcript: %s", g->s->id, why);
	g->adopted = true;
	return m;
}

/* The program's terminal of an adopted gdb, which its keeper held. */
struct console *
gdb_adopt_tty(struct session *s, console_cb cb, char *err, size_t errlen)
{
	int fd;

	if ((fd = adopt_take_fd(0, "tty")) == -1) {
		snprintf(err, errlen, "its keeper did not hold the program's "
		    "terminal");
		return NULL;
	}
	if ((s->tty = console_adopt(fd, true, cb, s, err, errlen)) != NULL &&
	    (fd = adopt_take_fd(0, "tty.pump")) != -1)
		console_pump(s->tty, fd, &s->output, CONSOLE_SPLICED);
	return s->tty;
}

/* The fault breaks gdb lists are the session's again, by their numbers. */
static void
gdb_adopt_breaks_reply(void *arg, const struct mi_record *rec,
    const char *out, size_t len)
{
	struct gdb_data	*g = arg;
	json_t		*listed, *b, *want, *v;
	const char	*loc;
	size_t		 i, k;

	(void)out;
	(void)len;
	if (rec == NULL)
		return;
	want = fault_breaks(g->s);
	listed = gdb_breaks_listed(rec->results);
	json_array_foreach(listed, i, b) {
		loc = json_string_value(json_object_get(b,
		    "original-location"));
		json_array_foreach(want, k, v)
			if (loc != NULL && strcmp(loc, json_string_value(v)) ==
			    0)
				gdb_breaks_inserted_bkpt(g, b);
	}
	json_decref(listed);
	json_decref(want);
}

/* Whether gdb's program lives: its thread groups with a pid. */
static void
gdb_adopt_groups_reply(void *arg, const struct mi_record *rec,
    const char *out, size_t len)
{
	struct gdb_data	*g = arg;
	json_t		*group;
	size_t		 i;

	(void)out;
	(void)len;
	if (rec == NULL)
		return;
	json_array_foreach(json_object_get(rec->results, "groups"), i, group)
		if (json_is_string(json_object_get(group, "pid")))
			g->groups++;
	if (g->groups > 0)
		session_target_run(g->s, true);
}

/*
 * The stop record of a target found stopped at frame: where, as a
 * *stopped's; by "adoption", as why it stopped was the dead daemon's.
 */
static json_t *
gdb_adopt_stop(json_t *frame)
{
	struct mi_record	 rec = { 0 };
	json_t			*stop;

	rec.results = json_pack("{s:O}", "frame", frame);
	stop = gdb_stop_json(&rec);
	json_decref(rec.results);
	json_object_set_new(stop, "by", json_string("adoption"));
	return stop;
}

/*
 * Where gdb's program is: running, stopped (at the current thread's
 * frame), or not running at all; then the session runs.
 */
static void
gdb_adopt_threads_reply(void *arg, const struct mi_record *rec,
    const char *out, size_t len)
{
	struct gdb_data	*g = arg;
	json_t		*threads, *t, *target, *frame = NULL;
	const char	*cur, *state = g->groups > 0 ? "running" : "exited";
	size_t		 i;

	(void)out;
	(void)len;
	if (rec == NULL)
		return;
	threads = json_object_get(rec->results, "threads");
	cur = json_string_value(json_object_get(rec->results,
	    "current-thread-id"));
	json_array_foreach(threads, i, t) {
		if (strcmp(json_string_value(json_object_get(t, "state")) ?
		    json_string_value(json_object_get(t, "state")) : "",
		    "stopped") != 0)
			continue;
		state = "stopped";
		if (frame == NULL || (cur != NULL && strcmp(cur,
		    json_string_value(json_object_get(t, "id")) ?
		    json_string_value(json_object_get(t, "id")) : "") == 0))
			frame = json_object_get(t, "frame");
	}
	if (g->groups == 0 && json_array_size(threads) == 0)
		state = "unknown";
	/* A remote target in all-stop says nothing while it runs, but that. */
	if (gdb_refused_running(rec)) {
		state = "running";
		session_target_run(g->s, true);
	}
	target = json_pack("{s:s}", "state", state);
	if (frame != NULL)
		json_object_set_new(target, "stop", gdb_adopt_stop(frame));
	log_info("session %lu: gdb, adopted, has its target %s", g->s->id,
	    state);
	g->target_up = true;
	g->breaks_sent = true;
	gdb_target(g, target);
	backend_gdb_adopt_done(g);
}

/* gdb's keeper was adopted: ask gdb what the daemon knew. */
void
gdb_adopt_ready(struct gdb_data *g)
{
	backend_gdb_adopt_wait(g);
	if (mi_command(g->mi, gdb_adopt_breaks_reply, g, "-break-list") == 0 ||
	    mi_command(g->mi, gdb_adopt_groups_reply, g,
	    "-list-thread-groups") == 0 ||
	    mi_command(g->mi, gdb_adopt_threads_reply, g, "-thread-info") == 0)
		session_fail(g->s, RPC_NOT_READY, "gdb does not answer its "
		    "new daemon");
}
