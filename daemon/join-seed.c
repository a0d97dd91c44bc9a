/*
 * The seed of a joined MI client: the thread groups, threads and run
 * state a front end would have seen had it been there from the start
 * (a new-ui hears of none of them). gdb is asked on the client's own
 * channel; what it cannot answer (a remote target that runs answers
 * neither -list-thread-groups nor -thread-info) is told from what the
 * daemon's own channel heard of the threads, and from the target's state.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

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

/* Add one line to the seed. */
static void __attribute__((format(printf, 2, 3)))
join_seed_line(struct capbuf *b, const char *fmt, ...)
{
	va_list	 ap;
	char	*line;
	int	 n;

	va_start(ap, fmt);
	n = xvasprintf(&line, fmt, ap);
	va_end(ap);
	capbuf_add(b, line, n);
	free(line);
}

/* The seed's lines: thread groups, threads, and whether the target runs. */
static char *
join_seed_text(struct join *j, json_t *threads, size_t *len)
{
	struct capbuf	 b = { 0 };
	const char	*gid = "i1", *id, *pid, *st, *tg;
	json_t		*v;
	size_t		 i;
	bool		 running = false;

	json_array_foreach(j->groups, i, v) {
		if ((id = json_string_value(json_object_get(v, "id"))) == NULL)
			continue;
		join_seed_line(&b, "=thread-group-added,id=\"%s\"\n", id);
		if ((pid = json_string_value(json_object_get(v, "pid"))) ==
		    NULL)
			continue;
		if (j->pid == 0) {
			j->pid = strtol(pid, NULL, 10);
			gid = id;
		}
		join_seed_line(&b, "=thread-group-started,id=\"%s\",pid="
		    "\"%s\"\n", id, pid);
	}
	json_array_foreach(threads, i, v) {
		id = json_string_value(json_object_get(v, "id"));
		st = json_string_value(json_object_get(v, "state"));
		tg = json_string_value(json_object_get(v, "group-id"));
		if (id == NULL)
			continue;
		running = running || (st != NULL && strcmp(st, "running") == 0);
		join_seed_line(&b, "=thread-created,id=\"%s\",group-id=\"%s\"\n",
		    id, tg != NULL ? tg : gid);
	}
	j->was_running = running;
	if (running)
		join_seed_line(&b, "*running,thread-id=\"all\"\n");
	join_seed_line(&b, "(gdb) \n");
	*len = b.len;
	return b.p;
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
	char		*seed;
	size_t		 len;

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
	seed = join_seed_text(j, threads, &len);
	json_decref(threads);
	join_seeded(j, seed, len);
	free(seed);
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
	join_internal(j->ch, "-list-thread-groups", join_seed_groups);
	join_internal(j->ch, "-thread-info", join_seed_threads);
}
