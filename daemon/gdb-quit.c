/*
 * The gdb family's graceful quit, over MI: interrupt a running target,
 * list gdb's inferiors, detach from or kill each live one as the
 * launch's stop_target says, then -gdb-exit. "auto" follows gdb's own
 * rule, kill what the session started and detach from what it attached
 * to, telling the two apart by where the process is: one the session
 * started is below one of its keepers (gdb-attach.c). MI cannot tell
 * them apart itself: an attach and a run both say only
 * =thread-group-started with the pid. Each step waits for gdb's answer
 * to the one before; an error answer moves on all the same, since the
 * next step (and gdb's own exit, which detaches what gdb attached to)
 * still ends what is left. The session bounds the whole of it.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "mi.h"

/* One kill or detach of one inferior, waiting for gdb's answer. */
struct gdb_quit_one {
	struct gdb_data	*g;
	long		 pid;
	bool		 detach;
};

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

/*
 * gdb answered a kill or a detach: a detach that worked is what the exit
 * record and the target's state tell; after the last, gdb itself exits.
 */
static void
gdb_quit_one_reply(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct gdb_quit_one	*one = arg;
	struct gdb_data		*g = one->g;
	struct proc		*main = g->s->procs[0].proc;

	(void)out;
	(void)len;
	if (rec != NULL && one->detach && strcmp(rec->cls, "done") == 0) {
		if (main != NULL)
			proc_mark_detached(main);
		gdb_target(g, json_pack("{s:s, s:I}", "state", "detached",
		    "pid", (json_int_t)one->pid));
	}
	free(one);
	if (rec == NULL)	/* gdb is gone already */
		return;
	if (--g->quit_left == 0)
		(void)gdb_quit_exit(g);
}

/*
 * Whether the quit detaches from the inferior with this pid, or kills it;
 * under "auto" a process whose parents cannot be read is not the
 * session's, so a doubt detaches.
 */
static bool
gdb_quit_detaches(const struct gdb_data *g, long pid)
{
	const char *how = g->s->l.stop_target;

	if (strcmp(how, "auto") == 0)
		return !gdb_attach_ours(g->s, (pid_t)pid);
	return strcmp(how, "detach") == 0;
}

/* Detach from or kill one inferior (gdb's "iN", live as pid). */
static void
gdb_quit_one(struct gdb_data *g, const char *id, long pid)
{
	struct gdb_quit_one	*one = xcalloc(1, sizeof *one);
	unsigned long		 token;

	one->g = g;
	one->pid = pid;
	one->detach = gdb_quit_detaches(g, pid);
	log_info("session %lu: quit: %s the target, process %ld (inferior "
	    "%s)", g->s->id, one->detach ? "detach" : "kill", pid, id);
	/* gdb's kill asks no question of a UI that is not the console's. */
	if (one->detach)
		token = mi_command(g->mi, gdb_quit_one_reply, one,
		    "-target-detach %s", id);
	else
		token = mi_command(g->mi, gdb_quit_one_reply, one,
		    "kill inferiors %s", id + 1);
	if (token == 0) {
		log_warn("session %lu: cannot send the quit to gdb", g->s->id);
		free(one);
		return;
	}
	g->quit_left++;
}

/* Whether an MI thread group id is one gdb could have made: "i" and digits. */
static bool
gdb_quit_group_id(const char *id)
{
	return id != NULL && id[0] == 'i' && id[1] != '\0' &&
	    strspn(id + 1, "0123456789") == strlen(id + 1);
}

/*
 * gdb listed its inferiors: each with a pid is live, and is detached
 * from or killed; without an answer, gdb's own exit does gdb's rule.
 */
static void
gdb_quit_groups_reply(void *arg, const struct mi_record *rec,
    const char *out, size_t len)
{
	struct gdb_data	*g = arg;
	json_t		*group, *pid;
	const char	*id;
	size_t		 i;

	(void)out;
	(void)len;
	if (rec == NULL)	/* gdb is gone already */
		return;
	g->quit_step = GDB_QUIT_END;
	json_array_foreach(json_object_get(rec->results, "groups"), i, group) {
		id = json_string_value(json_object_get(group, "id"));
		pid = json_object_get(group, "pid");
		if (!gdb_quit_group_id(id) || !json_is_string(pid))
			continue;
		gdb_quit_one(g, id, strtol(json_string_value(pid), NULL, 10));
	}
	if (g->quit_left == 0)
		(void)gdb_quit_exit(g);
}

/*
 * The target is stopped (or never ran, or exited): ask which inferiors
 * live, since another may while the main one is gone.
 */
static int
gdb_quit_end(struct gdb_data *g)
{
	g->quit_step = GDB_QUIT_LIST;
	log_info("session %lu: quit: end the targets (stop_target %s)",
	    g->s->id, g->s->l.stop_target);
	if (mi_command(g->mi, gdb_quit_groups_reply, g,
	    "-list-thread-groups") != 0)
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
