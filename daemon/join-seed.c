/*
 * The seed of a joined MI client: the thread groups, threads and run
 * state a front end would have seen had it been there from the start
 * (a new-ui hears of none of them). gdb is asked on the client's own
 * channel; what it cannot answer (a remote target that runs answers
 * neither -list-thread-groups nor -thread-info) is told from what the
 * daemon's own channel heard of the threads, and from the target's state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "join.h"
#include "mi.h"

/* A notification's string result, or NULL. */
static const char *
join_seed_str(const struct mi_record *rec, const char *name)
{
	return json_string_value(json_object_get(rec->results, name));
}

/* Keep what gdb says of thread groups and threads, for a later seed. */
void
join_seed_event(struct gdb_data *g, const struct mi_record *rec)
{
	const char	*id = join_seed_str(rec, "id");
	const char	*pid = join_seed_str(rec, "pid");
	const char	*gid = join_seed_str(rec, "group-id");

	if (rec->kind != MI_NOTIFY || id == NULL)
		return;
	if (g->seen_groups == NULL) {
		g->seen_groups = json_object();
		g->seen_threads = json_object();
	}
	if (strcmp(rec->cls, "thread-group-added") == 0)
		json_object_set_new(g->seen_groups, id, json_null());
	else if (strcmp(rec->cls, "thread-group-started") == 0 && pid != NULL)
		json_object_set_new(g->seen_groups, id, json_string(pid));
	else if (strcmp(rec->cls, "thread-group-exited") == 0)
		json_object_set_new(g->seen_groups, id, json_null());
	else if (strcmp(rec->cls, "thread-group-removed") == 0)
		json_object_del(g->seen_groups, id);
	else if (strcmp(rec->cls, "thread-created") == 0 && gid != NULL)
		json_object_set_new(g->seen_threads, id, json_string(gid));
	else if (strcmp(rec->cls, "thread-exited") == 0)
		json_object_del(g->seen_threads, id);
}

/* Forget what was heard: the session's gdb is gone. */
void
join_seed_close(struct gdb_data *g)
{
	json_decref(g->seen_groups);
	json_decref(g->seen_threads);
	g->seen_groups = g->seen_threads = NULL;
}

/* The groups heard of, as -list-thread-groups would give them. */
static json_t *
join_seed_heard_groups(const struct gdb_data *g)
{
	json_t		*groups = json_array(), *pid;
	const char	*id;

	json_object_foreach(g->seen_groups, id, pid) {
		if (json_is_string(pid))
			json_array_append_new(groups, json_pack("{s:s, s:O}",
			    "id", id, "pid", pid));
		else
			json_array_append_new(groups, json_pack("{s:s}", "id",
			    id));
	}
	return groups;
}

/* The threads heard of, as -thread-info would give them, in state. */
static json_t *
join_seed_heard_threads(const struct gdb_data *g, const char *state)
{
	json_t		*threads = json_array(), *gid;
	const char	*id;

	json_object_foreach(g->seen_threads, id, gid)
		json_array_append_new(threads, json_pack("{s:s, s:O, s:s}", "id",
		    id, "group-id", gid, "state", state));
	return threads;
}

/*
 * Write the seed, once the join is answered: thread groups, threads,
 * whether the target runs, then a prompt.
 */
static void
join_seed_write(struct join *j, json_t *threads)
{
	const char	*gid = "i1", *id, *pid, *st, *tg;
	json_t		*v;
	size_t		 i;

	json_array_foreach(j->groups, i, v) {
		if ((id = json_string_value(json_object_get(v, "id"))) == NULL)
			continue;
		join_chan_sendf(j, "=thread-group-added,id=\"%s\"\n", id);
		if ((pid = json_string_value(json_object_get(v, "pid"))) ==
		    NULL)
			continue;
		if (j->pid == 0) {
			j->pid = strtol(pid, NULL, 10);
			gid = id;
		}
		join_chan_sendf(j, "=thread-group-started,id=\"%s\",pid=\"%s\"\n",
		    id, pid);
	}
	json_array_foreach(threads, i, v) {
		id = json_string_value(json_object_get(v, "id"));
		st = json_string_value(json_object_get(v, "state"));
		tg = json_string_value(json_object_get(v, "group-id"));
		if (id == NULL)
			continue;
		j->was_running = j->was_running || (st != NULL &&
		    strcmp(st, "running") == 0);
		join_chan_sendf(j, "=thread-created,id=\"%s\",group-id=\"%s\"\n",
		    id, tg != NULL ? tg : gid);
	}
	if (j->was_running)
		join_chan_sendf(j, "*running,thread-id=\"all\"\n");
	join_chan_sendf(j, "(gdb) \n");
	log_info("session %lu: an MI client joined on channel %llu%s",
	    j->s->id, (unsigned long long)j->ch->id, j->was_running ?
	    " (the target runs)" : "");
}

/*
 * The seed's threads came, or gdb could not say: the join is answered
 * and the stream begins.
 */
static void
join_seed_threads(struct join_chan *ch, const struct mi_record *rec)
{
	struct join	*j = ch->j;
	const char	*state;
	json_t		*threads;

	if (j == NULL || j->req == NULL)
		return;
	threads = json_incref(json_object_get(rec->results, "threads"));
	if (strcmp(rec->cls, "done") != 0 || !json_is_array(threads)) {
		json_decref(threads);
		state = json_string_value(json_object_get(j->s->target,
		    "state"));
		threads = join_seed_heard_threads(j->g, state != NULL &&
		    strcmp(state, "running") == 0 ? "running" : "stopped");
	}
	join_seeded(j);
	join_seed_write(j, threads);
	json_decref(threads);
}

/* The seed's thread groups, from gdb or, if it could not say, as heard. */
static void
join_seed_groups(struct join_chan *ch, const struct mi_record *rec)
{
	struct join	*j = ch->j;
	json_t		*groups = json_object_get(rec->results, "groups");

	if (j == NULL)
		return;
	json_decref(j->groups);
	if (strcmp(rec->cls, "done") == 0 && json_is_array(groups))
		j->groups = json_incref(groups);
	else
		j->groups = join_seed_heard_groups(j->g);
}

/* The channel is open: ask what the seed says, on the channel itself. */
void
join_seed(struct join *j)
{
	join_chan_internal(j->ch, "-list-thread-groups", join_seed_groups);
	join_chan_internal(j->ch, "-thread-info", join_seed_threads);
}
