/*
 * The gdb family's graceful quit, over MI: interrupt a running target,
 * detach from it or kill it as the launch's stop_target says, then
 * -gdb-exit. Each step waits for gdb's answer to the one before; an
 * error answer moves on all the same, since the next step (and gdb's own
 * exit) still ends what is left. The session bounds the whole of it.
 */
#include <string.h>

#include "daemon.h"

static int gdb_quit_end(struct gdb_data *);

/* gdb answered -gdb-exit, or went away: nothing more to ask. */
static void
gdb_quit_exit_reply(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct gdb_data *g = arg;

	(void)rec;
	(void)out;
	(void)len;
	g->quit_step = GDB_QUIT_EXIT;
}

/* Ask gdb to exit; -1 if it cannot be asked. */
static int
gdb_quit_exit(struct gdb_data *g)
{
	g->quit_step = GDB_QUIT_EXIT;
	if (mi_command(g->mi, gdb_quit_exit_reply, g, "-gdb-exit") != 0)
		return 0;
	log_warn("session %lu: cannot send -gdb-exit", g->s->id);
	return -1;
}

/* The target is dealt with (or could not be): gdb itself exits. */
static void
gdb_quit_after_end(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	(void)out;
	(void)len;
	if (rec != NULL)	/* NULL: gdb is gone already */
		(void)gdb_quit_exit(arg);
}

/* Whether gdb has a live target to detach from or kill. */
static bool
gdb_quit_has_target(const struct gdb_data *g)
{
	const char *state = json_string_value(json_object_get(g->s->target,
	    "state"));

	return state == NULL || strcmp(state, "exited") != 0;
}

/* The target is stopped (or never ran): detach or kill, as asked. */
static int
gdb_quit_end(struct gdb_data *g)
{
	const char *how = g->s->l.stop_target;

	g->quit_step = GDB_QUIT_END;
	if (!gdb_quit_has_target(g))
		return gdb_quit_exit(g);
	log_info("session %lu: quit: %s the target", g->s->id, how);
	/* gdb's kill asks no question of a UI that is not the console's. */
	if (mi_command(g->mi, gdb_quit_after_end, g, "%s",
	    strcmp(how, "detach") == 0 ? "-target-detach" : "kill") != 0)
		return 0;
	log_warn("session %lu: cannot send the quit to gdb", g->s->id);
	return -1;
}

/* gdb answered the interrupt; a refusal means the target is not running. */
static void
gdb_quit_interrupt_reply(void *arg, const struct mi_record *rec,
    const char *out, size_t len)
{
	struct gdb_data *g = arg;

	(void)out;
	(void)len;
	if (rec == NULL || g->quit_step != GDB_QUIT_INTERRUPT)
		return;
	/* ^done: the *stopped that follows moves the quit on. */
	if (strcmp(rec->cls, "error") == 0)
		(void)gdb_quit_end(g);
}

/* The target stopped: if a quit is waiting for that, it goes on. */
void
gdb_quit_stopped(struct gdb_data *g)
{
	if (g->quit_step == GDB_QUIT_INTERRUPT)
		(void)gdb_quit_end(g);
}

/* Start the quit (a backend's quit hook); -1 if gdb cannot be asked. */
int
gdb_quit(struct session *s)
{
	struct gdb_data	*g = s->bdata;
	const char	*state;

	if (g == NULL || g->mi == NULL || g->quit_step != GDB_QUIT_NONE)
		return -1;
	state = json_string_value(json_object_get(s->target, "state"));
	if (state == NULL || strcmp(state, "running") != 0)
		return gdb_quit_end(g);
	g->quit_step = GDB_QUIT_INTERRUPT;
	log_info("session %lu: quit: interrupt the target", s->id);
	if (mi_command(g->mi, gdb_quit_interrupt_reply, g,
	    "-exec-interrupt") == 0) {
		g->quit_step = GDB_QUIT_NONE;
		return -1;
	}
	return 0;
}
