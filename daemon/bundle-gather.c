/*
 * What gdb says for a bundle: where every thread is (thread apply all bt
 * full), the registers, gdb's version and, of a native program, a core
 * by gcore into the bundle's directory, as one run-control job that
 * halts a running target and resumes it after. Bounded: a gdb that does
 * not answer, or a session that ends first, leaves a bundle that says
 * what is missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "bundle.h"

/* How long gdb may take to gather before the bundle goes on without it. */
#define BUNDLE_GATHER_MS 10000

/* The gdb of a session that can gather now, or NULL and why not. */
static struct gdb_data *
bundle_gather_gdb(struct session *s, const char **why)
{
	struct gdb_data *g = s->bdata;

	*why = NULL;
	if (s->backend->command != gdb_command)
		*why = "not a gdb-family session";
	else if (session_ended(s))
		*why = "the session has ended";
	else if (s->state != S_RUNNING)
		*why = "the session is not running";
	else if (g == NULL || g->mi == NULL)
		*why = "gdb's MI channel is closed";
	return *why == NULL ? g : NULL;
}

/*
 * Whether the target can have a core, cheaply: a native program gdb
 * runs here, alive; NULL, or why not.
 */
static const char *
bundle_gather_core_why(struct bundle *b)
{
	const char *st = gdb_control_state(b->s);

	if (!b->core_wanted)
		return "not asked for";
	if (b->s->backend != &backend_gdb)
		return "not a native target: a core is written only by gcore "
		    "of a program on this host";
	if (strcmp(st, "stopped") != 0 && strcmp(st, "running") != 0)
		return "the target has no live process";
	return NULL;
}

/* Make the core's file, 0600 and new, before gcore writes it; -1: none. */
static int
bundle_gather_core_file(struct bundle *b)
{
	char	*p;
	int	 fd;

	xasprintf(&p, "%s/core", b->tmp);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	free(p);
	if (fd == -1) {
		bundle_missing(b, "core", strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* The bundle whose serial a job carries, if it still gathers. */
static struct bundle *
bundle_gather_of(struct gdb_job *j)
{
	struct session	*s = j->g->s;
	json_int_t	 serial = json_integer_value(json_object_get(j->ctx,
			    "bundle"));
	struct bundle	*b;

	if (s->bundles == NULL)
		return NULL;
	LIST_FOREACH(b, &s->bundles->live, entry)
		if ((json_int_t)b->serial == serial && b->phase ==
		    BUNDLE_GATHER)
			return b;
	return NULL;
}

/* One console command's answer: its output as the file name, or why not. */
static void
bundle_gather_text(struct bundle *b, json_t *r, const char *name,
    const char *what)
{
	const char	*cls = json_string_value(json_object_get(r, "class"));
	const char	*out = json_string_value(json_object_get(r, "output"));

	if (cls == NULL || strcmp(cls, "error") == 0) {
		bundle_missing(b, what, json_string_value(json_object_get(r,
		    "msg")));
		return;
	}
	if (out == NULL)
		out = "";
	bundle_files_text(b->files, name, out, strlen(out), true);
}

/* The first line of gdb's -gdb-version. */
static void
bundle_gather_version(struct bundle *b, json_t *r)
{
	const char	*out = json_string_value(json_object_get(r, "output"));
	size_t		 n;

	if (out == NULL)
		return;
	n = strcspn(out, "\n");
	json_decref(b->gdb_version);
	b->gdb_version = json_stringn(out, n);
}

/* gdb answered the gathering: keep its texts, then write the files. */
static json_t *
bundle_gather_done(struct gdb_job *j)
{
	struct bundle	*b = bundle_gather_of(j);
	json_t		*r;
	const char	*cmd, *cls;
	size_t		 i;

	if (b == NULL)
		return NULL;
	json_array_foreach(j->replies, i, r) {
		cmd = json_string_value(json_array_get(j->cmds, i));
		cls = json_string_value(json_object_get(r, "class"));
		if (strcmp(cmd, "-gdb-version") == 0)
			bundle_gather_version(b, r);
		else if (strstr(cmd, "thread apply all") != NULL)
			bundle_gather_text(b, r, "backtrace.txt", "backtrace");
		else if (strstr(cmd, "info registers") != NULL)
			bundle_gather_text(b, r, "registers.txt", "registers");
		else if (strstr(cmd, "gcore") != NULL && cls != NULL &&
		    strcmp(cls, "error") != 0)
			b->core = true;
		else if (strstr(cmd, "gcore") != NULL)
			bundle_missing(b, "core", json_string_value(
			    json_object_get(r, "msg")));
	}
	bundle_queue(b);
	return NULL;
}

/*
 * gdb did not answer in time, or the session ended first: the bundle
 * goes on without what gdb would have said, and says so. A core gcore
 * may still be writing is not the bundle's.
 */
static void
bundle_gather_lost(struct bundle *b, const char *why)
{
	char *p;

	if (b->phase != BUNDLE_GATHER)
		return;
	bundle_missing(b, "backtrace", why);
	bundle_missing(b, "registers", why);
	if (b->core_wanted && bundle_gather_core_why(b) == NULL) {
		xasprintf(&p, "%s/core", b->tmp);
		(void)unlink(p);
		free(p);
		bundle_missing(b, "core", why);
	}
	bundle_queue(b);
}

/* The gathering's bound ran out. */
static void
bundle_gather_bound_cb(void *arg)
{
	bundle_gather_lost(arg, "gdb did not answer within the bundle's "
	    "bound (10 s)");
}

/* The session ended while gdb gathered: gdb will not answer now. */
static void
bundle_gather_state_cb(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)ev;
	if (session_ended(s))
		bundle_gather_lost(k->arg, "the session ended before gdb "
		    "answered");
}

/* Gather from gdb as a run-control job: it halts a running target, then resumes it. */
void
bundle_gather(struct bundle *b)
{
	struct gdb_data	*g;
	struct gdb_job	*j;
	const char	*why;
	char		*cmd;

	if ((g = bundle_gather_gdb(b->s, &why)) == NULL) {
		bundle_missing(b, "backtrace", why);
		bundle_missing(b, "registers", why);
		bundle_missing(b, "core", why);
		bundle_queue(b);
		return;
	}
	j = gdb_job_new(NULL, g, GDB_JOB_ORPHAN_OK | GDB_JOB_STOPPED |
	    GDB_JOB_ERRORS_OK | GDB_JOB_OUTPUT | GDB_JOB_BARE,
	    bundle_gather_done);
	json_object_set_new(j->ctx, "bundle", json_integer(b->serial));
	gdb_job_add(j, "-gdb-version");
	gdb_job_add_console(j, "thread apply all bt full");
	gdb_job_add_console(j, "info registers");
	if ((why = bundle_gather_core_why(b)) != NULL)
		bundle_missing(b, "core", why);
	else if (bundle_gather_core_file(b) == 0) {
		xasprintf(&cmd, "gcore %s/core", b->tmp);
		gdb_job_add_console(j, cmd);
		free(cmd);
	}
	b->bound = timer_new(bundle_gather_bound_cb, b);
	timer_start(b->bound, BUNDLE_GATHER_MS);
	b->sink = session_sink_add(b->s, SE_STATE, bundle_gather_state_cb, b);
	gdb_job_run(j, NULL, 0);
}
