/*
 * Bundles: everything a person asks for when a session went wrong, in
 * one directory (or .tar.gz) written by the daemon, whether or not a
 * client is still there. A gdb-family target is halted, if it runs, for
 * where every thread is (thread apply all bt full), its registers and,
 * native, a core; then it is left as it was found. Then the logs and
 * transcripts are copied under the size bound, the manifest written, and
 * the temporary directory renamed to the bundle's path.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"

/* How long gdb may take to gather before the bundle goes on without it. */
#define BUNDLE_GATHER_MS 10000

/* A session's bundles: those being written, and its automatic one. */
struct bundles {
	LIST_HEAD(, bundle)	 live;
	bool			 auto_taken;	/* the first trigger took it */
	json_t			*auto_done;	/* {path, reason, time} */
};

/* Where a bundle is. */
enum bundle_phase {
	BUNDLE_GATHER,		/* gdb's answers awaited */
	BUNDLE_FILES,		/* texts, logs and core written */
	BUNDLE_MANIFEST,	/* the manifest written */
	BUNDLE_TAR,		/* the archive made */
};

struct bundle {
	LIST_ENTRY(bundle)	 entry;
	unsigned long		 serial;	/* its gdb job says whose it is */
	struct session		*s;		/* held */
	char			*path;
	char			*tmp;		/* the directory being written */
	char			*tgz;		/* tar: the archive being written */
	char			*record;	/* its record in the state dir */
	bool			 tar;
	bool			 core_wanted;
	const char		*reason;	/* "asked", or an automatic one */
	enum bundle_phase	 phase;
	double			 started_at;
	uint64_t		 t0;		/* uv_now() it began */
	struct bundle_files	*files;
	json_t			*missing;	/* [{what, why}] */
	json_t			*gdb_version;
	bool			 core;		/* gcore wrote "core" */
	struct timer		*bound;
	struct sink		*sink;		/* the session's end */
	struct bundle_tar	*tarp;
	bundle_cb		 cb;
	void			*arg;
	bool			 automatic;	/* bundle_auto's */
	bundle_then		 then;		/* automatic: what comes after */
	void			*then_arg;
};

/* What each file of a bundle is, for the manifest. */
static const struct {
	const char	*name;
	const char	*what;
} bundle_whats[] = {
	{ "backtrace.txt", "thread apply all bt full" },
	{ "registers.txt", "info registers, of the selected thread" },
	{ "console.log", "the console log" },
	{ "target.log", "the target's output (the transport)" },
	{ "target-in.log", "the target's input (the transport)" },
	{ "mi.log", "the daemon's MI channel: > sent, < received" },
	{ "server.log", "the managed server's output" },
	{ "core", "a core file of the target (gcore)" },
};

/* The streams copied, as their names and their files in the bundle. */
static const struct {
	const char	*stream;
	const char	*name;
} bundle_streams[] = {
	{ "console", "console.log" },
	{ "target", "target.log" },
	{ "server", "server.log" },
	{ "target-in", "target-in.log" },
};

/* Serials of bundles, so a late answer finds its bundle or none. */
static unsigned long bundle_serials;

static void	bundle_queue(struct bundle *);

/* The session's bundles, made the first time they are wanted. */
static struct bundles *
bundle_set(struct session *s)
{
	if (s->bundles == NULL) {
		s->bundles = xcalloc(1, sizeof *s->bundles);
		LIST_INIT(&s->bundles->live);
	}
	return s->bundles;
}

/* Say in the manifest that what is not in the bundle, and why. */
static void
bundle_missing(struct bundle *b, const char *what, const char *why)
{
	json_array_append_new(b->missing, json_pack("{s:s, s:s}", "what", what,
	    "why", why != NULL ? why : "?"));
}

/* The gdb of a session that can gather now, or NULL and why not. */
static struct gdb_data *
bundle_gdb(struct session *s, const char **why)
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
bundle_core_why(struct bundle *b)
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
bundle_core_file(struct bundle *b)
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
bundle_of_job(struct gdb_job *j)
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
bundle_text(struct bundle *b, json_t *r, const char *name, const char *what)
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
bundle_version(struct bundle *b, json_t *r)
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
bundle_gdb_done(struct gdb_job *j)
{
	struct bundle	*b = bundle_of_job(j);
	json_t		*r;
	const char	*cmd, *cls;
	size_t		 i;

	if (b == NULL)
		return NULL;
	json_array_foreach(j->replies, i, r) {
		cmd = json_string_value(json_array_get(j->cmds, i));
		cls = json_string_value(json_object_get(r, "class"));
		if (strcmp(cmd, "-gdb-version") == 0)
			bundle_version(b, r);
		else if (strstr(cmd, "thread apply all") != NULL)
			bundle_text(b, r, "backtrace.txt", "backtrace");
		else if (strstr(cmd, "info registers") != NULL)
			bundle_text(b, r, "registers.txt", "registers");
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
	if (b->core_wanted && bundle_core_why(b) == NULL) {
		xasprintf(&p, "%s/core", b->tmp);
		(void)unlink(p);
		free(p);
		bundle_missing(b, "core", why);
	}
	bundle_queue(b);
}

/* The gathering's bound ran out. */
static void
bundle_bound_cb(void *arg)
{
	bundle_gather_lost(arg, "gdb did not answer within the bundle's "
	    "bound (10 s)");
}

/* The session ended while gdb gathered: gdb will not answer now. */
static void
bundle_state_cb(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)ev;
	if (session_ended(s))
		bundle_gather_lost(k->arg, "the session ended before gdb "
		    "answered");
}

/* Gather from gdb as a run-control job: it halts a running target, then resumes it. */
static void
bundle_gather(struct bundle *b)
{
	struct gdb_data	*g;
	struct gdb_job	*j;
	const char	*why;
	char		*cmd;

	if ((g = bundle_gdb(b->s, &why)) == NULL) {
		bundle_missing(b, "backtrace", why);
		bundle_missing(b, "registers", why);
		bundle_missing(b, "core", why);
		bundle_queue(b);
		return;
	}
	j = gdb_job_new(NULL, g, GDB_JOB_ORPHAN_OK | GDB_JOB_STOPPED |
	    GDB_JOB_ERRORS_OK | GDB_JOB_OUTPUT | GDB_JOB_BARE, bundle_gdb_done);
	json_object_set_new(j->ctx, "bundle", json_integer(b->serial));
	gdb_job_add(j, "-gdb-version");
	gdb_job_add_console(j, "thread apply all bt full");
	gdb_job_add_console(j, "info registers");
	if ((why = bundle_core_why(b)) != NULL)
		bundle_missing(b, "core", why);
	else if (bundle_core_file(b) == 0) {
		xasprintf(&cmd, "gcore %s/core", b->tmp);
		gdb_job_add_console(j, cmd);
		free(cmd);
	}
	b->bound = timer_new(bundle_bound_cb, b);
	timer_start(b->bound, BUNDLE_GATHER_MS);
	b->sink = session_sink_add(b->s, SE_STATE, bundle_state_cb, b);
	gdb_job_run(j, NULL, 0);
}

/* The path of the session's transcript of MI, if the kind has one. */
static char *
bundle_mi_log(struct session *s)
{
	char *p;

	if (s->backend->command != gdb_command)
		return NULL;
	xasprintf(&p, "%s/sessions/%lu.mi.log", dmn.state_dir, s->id);
	return p;
}

/* Queue the logs and transcripts, then the core, and write them all. */
static void
bundle_queue(struct bundle *b)
{
	struct output	*o;
	char		*mi;
	size_t		 i;

	b->phase = BUNDLE_FILES;
	timer_stop(b->bound);
	for (i = 0; i < sizeof bundle_streams / sizeof bundle_streams[0]; i++) {
		if ((o = session_stream(b->s, bundle_streams[i].stream)) !=
		    NULL)
			bundle_files_copy(b->files, bundle_streams[i].name,
			    o->log_path);
		if (i == 1 && (mi = bundle_mi_log(b->s)) != NULL) {
			bundle_files_copy(b->files, "mi.log", mi);
			free(mi);
		}
	}
	if (b->core)
		bundle_files_weigh(b->files, "core");
	bundle_files_run(b->files);
}

/* The manifest's list of files: name, bytes and what it is. */
static json_t *
bundle_manifest_files(struct bundle *b)
{
	json_t	*list = json_deep_copy(bundle_files_list(b->files, "files"));
	json_t	*e;
	size_t	 i, k;

	json_array_foreach(list, i, e)
		for (k = 0; k < sizeof bundle_whats / sizeof bundle_whats[0];
		    k++)
			if (strcmp(json_string_value(json_object_get(e, "name")),
			    bundle_whats[k].name) == 0)
				json_object_set_new(e, "what", json_string(
				    bundle_whats[k].what));
	return list;
}

/* Whether the file name was kept. */
static bool
bundle_has(struct bundle *b, const char *name)
{
	json_t	*e;
	size_t	 i;

	json_array_foreach(bundle_files_list(b->files, "files"), i, e)
		if (strcmp(json_string_value(json_object_get(e, "name")),
		    name) == 0)
			return true;
	return false;
}

/* The manifest: the session's record, versions, and what the bundle holds. */
static json_t *
bundle_manifest(struct bundle *b)
{
	json_t *m, *server = NULL, *st = status_json(b->s);

	if (json_object_get(st, "server") != NULL)
		server = json_pack("{s:O*, s:n, s:s}", "argv",
		    json_object_get(json_object_get(st, "server"), "argv"),
		    "version", "why", "a server does not say its version "
		    "over gdb's protocol: see server.log");
	m = json_pack("{s:s, s:s, s:s, s:o, s:o, s:f, s:f, s:{s:s, s:O*, s:o*},"
	    " s:o, s:O, s:O, s:O, s:s?, s:{s:I, s:I}}",
	    "format", "dbgctl-bundle 1",
	    "path", b->path,
	    "reason", b->reason,
	    "session", st,
	    "verdict", json_incref(b->s->verdict != NULL ? b->s->verdict :
	    json_null()),
	    "started_at", b->started_at,
	    "written_at", loop_now(),
	    "versions", "dbgctl", DBGCTL_VERSION, "gdb", b->gdb_version,
	    "server", server,
	    "files", bundle_manifest_files(b),
	    "cut", bundle_files_list(b->files, "cut"),
	    "failed", bundle_files_list(b->files, "failed"),
	    "missing", b->missing,
	    "core", bundle_has(b, "core") ? "core" : NULL,
	    "bound", "bytes", (json_int_t)dmn.bundle_max, "used",
	    (json_int_t)bundle_files_used(b->files));
	if (json_object_get(m, "core") == NULL)
		json_object_set_new(m, "core", json_null());
	json_object_set(m, "fault", json_object_get(st, "fault") != NULL ?
	    json_object_get(st, "fault") : json_null());
	json_object_set(m, "exit", json_object_get(st, "exit") != NULL ?
	    json_object_get(st, "exit") : json_null());
	return m;
}

/* The method's result: where the bundle is and what it holds. */
static json_t *
bundle_result(struct bundle *b)
{
	json_t	*names = json_array(), *e;
	size_t	 i;

	json_array_foreach(bundle_files_list(b->files, "files"), i, e)
		json_array_append(names, json_object_get(e, "name"));
	return json_pack("{s:s, s:s, s:o, s:O, s:O, s:s?, s:I, s:I, s:b}",
	    "path", b->path, "reason", b->reason, "files", names, "cut",
	    bundle_files_list(b->files, "cut"), "missing", b->missing, "core",
	    bundle_has(b, "core") ? "core" : NULL, "bytes",
	    (json_int_t)bundle_files_used(b->files), "ms", (json_int_t)(
	    uv_now(dmn.loop) - b->t0), "tar", b->tar);
}

/* The automatic bundle is written or failed: status, the news, then what comes after. */
static void
bundle_auto_report(struct bundle *b, const char *error)
{
	struct session_event	 ev = { .kind = SE_BUNDLE };
	struct bundles		*set = bundle_set(b->s);
	char			*text;

	json_decref(set->auto_done);
	set->auto_done = json_pack("{s:s, s:s, s:f}", "path", b->path,
	    "reason", b->reason, "time", loop_now());
	if (error != NULL)
		json_object_set_new(set->auto_done, "error", json_string(error));
	xasprintf(&text, "bundle (%s): %s%s%s", b->reason, b->path,
	    error != NULL ? ": not written: " : "", error != NULL ? error : "");
	session_note(b->s, text);
	free(text);
	ev.json = set->auto_done;
	session_fire(b->s, &ev);
	if (b->then != NULL)
		b->then(b->s, b->then_arg);
}

/* The bundle is done (result) or failed (error): its owner hears, then it goes. */
static void
bundle_end(struct bundle *b, json_t *result, const char *error)
{
	struct session *s = b->s;

	if (error != NULL)
		log_warn("session %lu: bundle %s: %s", s->id, b->path, error);
	else
		log_info("session %lu: bundle %s written (%s)", s->id, b->path,
		    b->reason);
	LIST_REMOVE(b, entry);
	if (b->cb != NULL)
		b->cb(b->arg, b, result, error);
	if (b->automatic)
		bundle_auto_report(b, error);
	json_decref(result);
	session_sink_remove(b->sink);
	timer_free(b->bound);
	bundle_files_free(b->files);
	bundle_tar_free(b->tarp);
	json_decref(b->missing);
	json_decref(b->gdb_version);
	free(b->path);
	free(b->tmp);
	free(b->tgz);
	free(b->record);
	free(b);
	session_unref(s);
}

/* Give up on the bundle: what it made goes, and the owner hears why. */
static void
bundle_fail(struct bundle *b, const char *fmt, const char *arg)
{
	char why[PATH_MAX + 256];

	snprintf(why, sizeof why, fmt, arg);
	if (b->tgz != NULL)
		(void)unlink(b->tgz);
	(void)bundle_record_remove_tree(b->tmp);
	bundle_record_close(b->record);
	bundle_end(b, NULL, why);
}

/* Put the bundle in its place at once: the rename is the commit. */
static void
bundle_commit(struct bundle *b)
{
	if (rename(b->tar ? b->tgz : b->tmp, b->path) != 0) {
		bundle_fail(b, "cannot rename it into place: %s",
		    strerror(errno));
		return;
	}
	bundle_record_close(b->record);
	if (b->tar && bundle_record_remove_tree(b->tmp) != 0)
		log_warn("bundle %s: cannot remove %s: %s", b->path, b->tmp,
		    strerror(errno));
	bundle_end(b, bundle_result(b), NULL);
}

/* The archive is made, or not (why). */
static void
bundle_tar_done(void *arg, const char *why)
{
	struct bundle *b = arg;

	if (why != NULL) {
		bundle_fail(b, "tar: %s", why);
		return;
	}
	bundle_commit(b);
}

/* A pass of files is written: the manifest next, then the archive or the rename. */
static void
bundle_written(void *arg)
{
	struct bundle	*b = arg;
	json_t		*m;
	char		*text, why[256];

	if (b->phase == BUNDLE_FILES) {
		b->phase = BUNDLE_MANIFEST;
		m = bundle_manifest(b);
		text = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS);
		json_decref(m);
		bundle_files_text(b->files, "manifest.json", text, strlen(text),
		    false);
		free(text);
		bundle_files_run(b->files);
		return;
	}
	if (!b->tar) {
		bundle_commit(b);
		return;
	}
	b->phase = BUNDLE_TAR;
	if ((b->tarp = bundle_tar_start(b->tmp, b->tgz, bundle_tar_done, b,
	    why, sizeof why)) == NULL)
		bundle_fail(b, "tar: %s", why);
}

/*
 * Start writing session s's bundle at path (a directory, or with tar a
 * .tar.gz file), a core too if core and cheap; cb hears once it is done.
 * NULL with err if it cannot begin. Nothing is called back before this
 * returns.
 */
struct bundle *
bundle_start(struct session *s, const char *path, bool tar, bool core,
    const char *reason, bundle_cb cb, void *arg, char *err, size_t errlen)
{
	struct bundle *b;

	if (bundle_path_check(path, err, errlen) != 0)
		return NULL;
	b = xcalloc(1, sizeof *b);
	b->serial = ++bundle_serials;
	b->path = xstrdup(path);
	b->tmp = bundle_record_tmp(path);
	if (tar)
		xasprintf(&b->tgz, "%s.tar.gz", b->tmp);
	if ((b->record = bundle_record_open(b->serial, b->path, b->tmp, b->tgz,
	    err, errlen)) == NULL || mkdir(b->tmp, 0700) != 0) {
		if (b->record != NULL) {
			snprintf(err, errlen, "%s: %s", b->tmp,
			    strerror(errno));
			bundle_record_close(b->record);
		}
		free(b->record);
		free(b->path);
		free(b->tmp);
		free(b->tgz);
		free(b);
		return NULL;
	}
	b->s = s;
	session_ref(s);
	b->tar = tar;
	b->core_wanted = core;
	b->reason = reason != NULL ? reason : "asked";
	b->started_at = loop_now();
	b->t0 = uv_now(dmn.loop);
	b->missing = json_array();
	b->cb = cb;
	b->arg = arg;
	b->files = bundle_files_new(b->tmp, dmn.bundle_max, bundle_written, b);
	LIST_INSERT_HEAD(&bundle_set(s)->live, b, entry);
	log_info("session %lu: writing bundle %s (%s)", s->id, path, b->reason);
	bundle_gather(b);
	return b;
}

/* The owner no longer wants to hear of the bundle; it is written all the same. */
void
bundle_forget(struct bundle *b)
{
	b->cb = NULL;
	b->arg = NULL;
}

/* What bundle_auto calls when it writes nothing. */
static void
bundle_auto_none(struct session *s, bundle_then then, void *arg)
{
	if (then != NULL)
		then(s, arg);
}

/*
 * A session ends with a verdict, a fault, or its lease: write its
 * automatic bundle into its artifacts directory as ID-REASON, once per
 * session, then call then (at once when there is none to write).
 */
void
bundle_auto(struct session *s, const char *reason, bundle_then then,
    void *arg)
{
	struct bundles	*set;
	struct bundle	*b;
	char		 path[PATH_MAX], err[PATH_MAX + 256];
	struct stat	 st;
	int		 i;

	if (s->l.artifacts == NULL || bundle_set(s)->auto_taken) {
		bundle_auto_none(s, then, arg);
		return;
	}
	set = bundle_set(s);
	set->auto_taken = true;
	/* A path an earlier daemon's session of this id took is kept. */
	snprintf(path, sizeof path, "%s/%lu-%s", s->l.artifacts, s->id, reason);
	for (i = 2; i < 100 && lstat(path, &st) == 0; i++)
		snprintf(path, sizeof path, "%s/%lu-%s-%d", s->l.artifacts,
		    s->id, reason, i);
	if ((b = bundle_start(s, path, false, true, reason, NULL, NULL, err,
	    sizeof err)) == NULL) {
		log_warn("session %lu: no automatic bundle: %s", s->id, err);
		json_decref(set->auto_done);
		set->auto_done = json_pack("{s:s, s:s, s:f, s:s}", "path", path,
		    "reason", reason, "time", loop_now(), "error", err);
		bundle_auto_none(s, then, arg);
		return;
	}
	b->automatic = true;
	b->then = then;
	b->then_arg = arg;
}

/* The member "bundle": the automatic bundle, once it is written. */
json_t *
bundle_status(const struct session *s)
{
	if (s->bundles == NULL || s->bundles->auto_done == NULL)
		return NULL;
	return json_incref(s->bundles->auto_done);
}

/* The session is freed: no bundle holds it, so only its record is left. */
void
bundle_session_free(struct session *s)
{
	if (s->bundles == NULL)
		return;
	if (!LIST_EMPTY(&s->bundles->live))
		log_fatal("session %lu: freed while a bundle holds it", s->id);
	json_decref(s->bundles->auto_done);
	free(s->bundles);
	s->bundles = NULL;
}
