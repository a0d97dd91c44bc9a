/*
 * What gdb says for a bundle: where every thread is (thread apply all bt
 * full), the registers, gdb's version and, of a native program, a core
 * by gcore into the bundle's directory (of a board, the reads of its
 * core: bundle-core.c), as one run-control job that
 * halts a running target and resumes it after. Bounded: a gdb that does
 * not answer, or a session that ends first, leaves a bundle that says
 * what is missing. gcore resolves no path of the bundle's: the daemon
 * makes the core's file and gdb writes it through /proc/PID/fd/N; a core
 * that is not written whole leaves no file.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "gdb.h"
#include "bundle.h"

/* How long gdb may take to gather before the bundle goes on without it. */
#define BUNDLE_GATHER_MS 10000

/* Why the gdb of a session cannot gather now, or NULL: it can. */
static const char *
bundle_gather_why(struct session *s)
{
	const char *why = NULL;

	if (!gdb_family(s))
		why = "not a gdb-family session";
	else if (session_ended(s))
		why = "the session has ended";
	else if (s->state != S_RUNNING)
		why = "the session is not running";
	else if (gdb_live(s) == NULL)
		why = "gdb's MI channel is closed";
	return why;
}

/*
 * Whether the target can have a core, cheaply: a native program gdb
 * runs here, or a board gdb holds, alive; NULL, or why not.
 */
static const char *
bundle_gather_core_why(struct bundle *b)
{
	const char *st = gdb_control_state(b->s);

	if (!b->core_wanted)
		return "not asked for";
	if (strcmp(st, "stopped") != 0 && strcmp(st, "running") != 0)
		return "the target has no live process";
	return NULL;
}

/*
 * Make the core's file, 0600 and new, for gcore to write; its fd, held
 * (in the session's bundles) until gdb answers or the session goes: gdb
 * may open /proc/PID/fd/N late, and N must not be another file by then.
 * -1: none, and the manifest says why.
 */
static int
bundle_gather_core_file(struct bundle *b)
{
	struct bundles	*set = b->s->bundles;
	int		 fd;

	if ((fd = bundle_dir_create(b->dir, "core", O_WRONLY)) == -1) {
		bundle_missing(b, "core", strerror(errno));
		return -1;
	}
	set->cores = xreallocarray(set->cores, set->ncores + 1,
	    sizeof *set->cores);
	set->cores[set->ncores].serial = b->serial;
	set->cores[set->ncores].fd = fd;
	set->ncores++;
	b->core_made = true;
	return fd;
}

/* gdb answered the bundle's gcore, or cannot now: its core's fd goes. */
static void
bundle_gather_core_close(struct bundles *set, unsigned long serial)
{
	size_t i;

	for (i = 0; i < set->ncores; i++)
		if (set->cores[i].serial == serial) {
			close(set->cores[i].fd);
			set->cores[i] = set->cores[--set->ncores];
			return;
		}
}

/* The bytes gcore wrote in the bundle's core, or -1 if it is not held. */
static off_t
bundle_gather_core_size(struct bundles *set, unsigned long serial)
{
	struct stat	 st;
	size_t		 i;

	for (i = 0; i < set->ncores; i++)
		if (set->cores[i].serial == serial)
			return fstat(set->cores[i].fd, &st) == 0 ? st.st_size :
			    -1;
	return -1;
}

/* The core is not the bundle's (why): its file goes, and the manifest says why. */
static void
bundle_gather_core_lost(struct bundle *b, const char *why)
{
	if (b->core_made && unlinkat(bundle_dir_fd(b->dir), "core", 0) != 0)
		log_warn("bundle %s: cannot remove its core: %s", b->path,
		    strerror(errno));
	b->core_made = false;
	b->core = false;
	bundle_missing(b, "core", why);
}

/* The session's bundles go: the cores gdb never answered for are let go. */
void
bundle_gather_free(struct bundles *set)
{
	while (set->ncores > 0)
		close(set->cores[--set->ncores].fd);
	free(set->cores);
	set->cores = NULL;
}

/* gcore answered r: the core is the bundle's if gdb says so and wrote some. */
static void
bundle_gather_core(struct bundle *b, json_t *r)
{
	const char	*cls = json_string_value(json_object_get(r, "class"));
	const char	*msg = json_string_value(json_object_get(r, "msg"));

	if (cls == NULL || strcmp(cls, "error") == 0)
		bundle_gather_core_lost(b, msg != NULL ? msg : "gcore failed");
	else if (bundle_gather_core_size(b->s->bundles, b->serial) <= 0)
		bundle_gather_core_lost(b, "gcore wrote nothing");
	else
		b->core = true;
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

/*
 * gdb answered the gathering: keep its texts, then write the files. A
 * bundle that went on without it lets go of its core's file only.
 */
static json_t *
bundle_gather_done(struct gdb_job *j)
{
	struct bundle	*b = bundle_gather_of(j);
	json_t		*r;
	const char	*cmd;
	size_t		 i;
	unsigned long	 serial = (unsigned long)json_integer_value(
			    json_object_get(j->ctx, "bundle"));

	if (b == NULL) {
		if (j->g->s->bundles != NULL)
			bundle_gather_core_close(j->g->s->bundles, serial);
		return NULL;
	}
	json_array_foreach(j->replies, i, r) {
		cmd = json_string_value(json_array_get(j->cmds, i));
		if (strcmp(cmd, "-gdb-version") == 0)
			bundle_gather_version(b, r);
		else if (strstr(cmd, "thread apply all") != NULL)
			bundle_gather_text(b, r, "backtrace.txt", "backtrace");
		else if (strstr(cmd, "info registers") != NULL)
			bundle_gather_text(b, r, "registers.txt", "registers");
		else if (strstr(cmd, "gcore") != NULL)
			bundle_gather_core(b, r);
	}
	if (b->core_made && !b->core && json_array_size(j->replies) <
	    json_array_size(j->cmds))
		bundle_gather_core_lost(b, "gdb did not run gcore");
	bundle_gather_core_close(b->s->bundles, b->serial);
	bundle_core_take(b, j);
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
	if (b->phase != BUNDLE_GATHER)
		return;
	bundle_missing(b, "backtrace", why);
	bundle_missing(b, "registers", why);
	/* gdb may still write it: into a file no name leads to. */
	if (b->core_made)
		bundle_gather_core_lost(b, why);
	if (b->board_map != NULL)
		bundle_missing(b, "core", why);
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
	struct gdb_job	*j;
	const char	*why;
	char		*cmd;
	int		 fd;

	if ((why = bundle_gather_why(b->s)) != NULL) {
		bundle_missing(b, "backtrace", why);
		bundle_missing(b, "registers", why);
		bundle_missing(b, "core", why);
		bundle_queue(b);
		return;
	}
	j = gdb_job_new(NULL, gdb_live(b->s), GDB_JOB_ORPHAN_OK | GDB_JOB_STOPPED |
	    GDB_JOB_ERRORS_OK | GDB_JOB_OUTPUT | GDB_JOB_BARE,
	    bundle_gather_done);
	json_object_set_new(j->ctx, "bundle", json_integer(b->serial));
	gdb_job_add(j, "-gdb-version");
	gdb_job_add_console(j, "thread apply all bt full");
	gdb_job_add_console(j, "info registers");
	if ((why = bundle_gather_core_why(b)) != NULL)
		bundle_missing(b, "core", why);
	else if (b->s->backend != &backend_gdb)
		bundle_core_ask(b, j);
	else if ((fd = bundle_gather_core_file(b)) != -1) {
		/* gdb is another process: the daemon's fd, by its pid. */
		xasprintf(&cmd, "gcore /proc/%ld/fd/%d", (long)getpid(), fd);
		gdb_job_add_console(j, cmd);
		free(cmd);
	}
	b->bound = timer_new(bundle_gather_bound_cb, b);
	timer_start(b->bound, BUNDLE_GATHER_MS);
	b->sink = session_sink_add(b->s, SE_STATE, bundle_gather_state_cb, b);
	gdb_job_run(j, NULL, 0);
}
