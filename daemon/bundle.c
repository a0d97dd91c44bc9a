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

#include "daemon.h"
#include "bundle.h"
#include "replay.h"

/* The streams copied, as their names and their files in the bundle. */
static const struct {
	const char	*stream;
	const char	*name;
} bundle_streams[] = {
	{ "console", "console.log" },
	{ "target", "target.log" },
	{ "server", "server.log" },
	{ "target-in", "target-in.log" },
	{ "semihost", "semihost.log" },
	{ "watch", "watch.log" },
	{ "rtt0", "rtt0.log" },
	{ "rtt1", "rtt1.log" },
	{ "rtt2", "rtt2.log" },
	{ "rtt3", "rtt3.log" },
};

/* Serials of bundles, so a late answer finds its bundle or none. */
static unsigned long bundle_serials;

static void	bundle_auto_waited(struct session *);


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
void
bundle_missing(struct bundle *b, const char *what, const char *why)
{
	json_array_append_new(b->missing, json_pack("{s:s, s:s}", "what", what,
	    "why", why != NULL ? why : "?"));
}

/* The path of the session's transcript of MI, if the kind has one. */
static char *
bundle_mi_log(struct session *s)
{
	char *p;

	if (!gdb_family(s))
		return NULL;
	xasprintf(&p, "%s/sessions/%lu.mi.log", dmn.state_dir, s->id);
	return p;
}

/* QEMU has written its recording whole: the files are queued. */
static void
bundle_queue_flushed(void *arg)
{
	bundle_queue(arg);
}

/*
 * Queue the logs and transcripts, a recording (once its QEMU has
 * written it whole), then the core, and write them all.
 */
void
bundle_queue(struct bundle *b)
{
	struct output	*o;
	char		*mi;
	size_t		 i;

	b->phase = BUNDLE_FILES;
	timer_stop(b->bound);
	if (replay_flush(b->s, bundle_queue_flushed, b))
		return;
	/* Before the logs: the bound may cut a log, never the recording. */
	replay_bundle(b);
	for (i = 0; i < sizeof bundle_streams / sizeof bundle_streams[0]; i++) {
		if ((o = session_stream(b->s, bundle_streams[i].stream)) !=
		    NULL)
			bundle_files_copy(b->files, bundle_streams[i].name,
			    output_path(o));
		if (i == 1 && (mi = bundle_mi_log(b->s)) != NULL) {
			bundle_files_copy(b->files, "mi.log", mi);
			free(mi);
		}
	}
	if (b->core)
		bundle_files_weigh(b->files, "core");
	else if (b->board_core != NULL)
		bundle_files_whole(b->files, "core", (char *)b->board_core,
		    b->board_core_len);
	bundle_files_run(b->files);
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
	bundle_auto_waited(b->s);
}

/* The bundle is done (result) or failed (error): its owner hears, then it goes. */
static void
bundle_end(struct bundle *b, json_t *result, const struct bundle_error *error)
{
	struct session *s = b->s;

	if (error != NULL)
		log_warn("session %lu: bundle %s: %s", s->id, b->path,
		    error->msg);
	else
		log_info("session %lu: bundle %s written (%s)", s->id, b->path,
		    b->reason);
	LIST_REMOVE(b, entry);
	if (b->cb != NULL)
		b->cb(b->arg, b, result, error);
	if (b->automatic)
		bundle_auto_report(b, error != NULL ? error->msg : NULL);
	json_decref(result);
	session_sink_remove(b->sink);
	timer_free(b->bound);
	bundle_files_free(b->files);
	bundle_tar_free(b->tarp);
	bundle_dir_free(b->dir);
	json_decref(b->missing);
	json_decref(b->gdb_version);
	bundle_core_free(b);
	free(b->path);
	free(b->tmp);
	free(b->tgz);
	free(b->record);
	free(b);
	session_unref(s);
}

/* Give up on the bundle for error: what it made goes, and the owner hears why. */
static void
bundle_fail_with(struct bundle *b, const struct bundle_error *error)
{
	bundle_dir_remove(b->dir);
	bundle_record_close(b->record);
	bundle_end(b, NULL, error);
}

/* Give up on the bundle (an internal error, why in fmt and arg). */
static void
bundle_fail(struct bundle *b, const char *fmt, const char *arg)
{
	struct bundle_error error = { .code = RPC_INTERNAL_ERROR };

	snprintf(error.msg, sizeof error.msg, fmt, arg);
	bundle_fail_with(b, &error);
}

/* Put the bundle in its place at once: the rename is the commit. */
static void
bundle_commit(struct bundle *b)
{
	struct bundle_error error;

	if (bundle_dir_place(b->dir, b->path, &error) != 0) {
		bundle_fail_with(b, &error);
		return;
	}
	bundle_record_close(b->record);
	/* With tar, the directory archived goes. */
	bundle_dir_remove(b->dir);
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

/* Whether a file could not be written in the bundle: then it failed, as an I/O error. */
static bool
bundle_written_badly(struct bundle *b)
{
	struct bundle_error	 error = { .code = RPC_IO_ERROR };
	const char		*why;

	if ((error.errnum = bundle_files_error(b->files, &why)) == 0)
		return false;
	snprintf(error.msg, sizeof error.msg, "%s", why);
	bundle_fail_with(b, &error);
	return true;
}

/* A pass of files is written: the manifest next, then the archive or the rename. */
static void
bundle_written(void *arg)
{
	struct bundle	*b = arg;
	json_t		*m;
	char		*text, why[PATH_MAX + 64];
	int		 fd;

	if (bundle_written_badly(b))
		return;
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
	if ((fd = bundle_dir_archive(b->dir, b->tgz, why, sizeof why)) == -1 ||
	    (b->tarp = bundle_tar_start(bundle_dir_fd(b->dir), fd, b->path,
	    bundle_tar_done, b, why, sizeof why)) == NULL)
		bundle_fail(b, "tar: %s", why);
}

/* Free a bundle that never began. */
static void
bundle_unmade(struct bundle *b)
{
	bundle_record_close(b->record);
	bundle_dir_free(b->dir);
	free(b->record);
	free(b->path);
	free(b->tmp);
	free(b->tgz);
	free(b);
}

/*
 * Make the bundle's temporary directory under its held parent, named
 * afresh while the name is taken, each name recorded before it is made.
 */
static int
bundle_make(struct bundle *b, struct bundle_error *err)
{
	int i;

	for (i = 0; i < 16; i++) {
		free(b->tmp);
		free(b->tgz);
		b->tgz = NULL;
		b->tmp = bundle_record_tmp(b->path);
		if (b->tar)
			xasprintf(&b->tgz, "%s.tar.gz", b->tmp);
		free(b->record);
		if ((b->record = bundle_record_open(b->serial, b->path, b->tmp,
		    b->tgz, err->msg, sizeof err->msg)) == NULL) {
			err->code = RPC_IO_ERROR;
			err->errnum = 0;
			return -1;
		}
		if (bundle_dir_make(b->dir, b->tmp, err) == 0)
			return 0;
		if (err->errnum != EEXIST)
			return -1;
	}
	return -1;
}

/*
 * Start writing session s's bundle at path (a directory, or with tar a
 * .tar.gz file), a core too if core and cheap; cb hears once it is done.
 * NULL with err if it cannot begin. Nothing is called back before this
 * returns.
 */
struct bundle *
bundle_start(struct session *s, const char *path, bool tar, bool core,
    const char *reason, bundle_cb cb, void *arg, struct bundle_error *err)
{
	struct bundle *b;

	if (bundle_path_check(path, err) != 0)
		return NULL;
	b = xcalloc(1, sizeof *b);
	b->serial = ++bundle_serials;
	b->path = xstrdup(path);
	b->tar = tar;
	if ((b->dir = bundle_dir_open(path, err)) == NULL ||
	    bundle_make(b, err) != 0) {
		bundle_unmade(b);
		return NULL;
	}
	b->s = s;
	session_ref(s);
	b->core_wanted = core;
	b->reason = reason != NULL ? reason : "asked";
	b->started_at = loop_now();
	b->t0 = uv_now(dmn.loop);
	b->missing = json_array();
	b->cb = cb;
	b->arg = arg;
	b->files = bundle_files_new(b->tmp, bundle_dir_fd(b->dir),
	    dmn.bundle_max, bundle_written, b);
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
 * A later trigger (a signal after the lease's end, say) while the
 * automatic bundle is written: its stop waits for the bundle.
 */
static void
bundle_auto_wait(struct session *s, bundle_then then, void *arg)
{
	struct bundles *set = bundle_set(s);

	if (then == NULL)
		return;
	set->waiters = xreallocarray(set->waiters, set->nwaiters + 1,
	    sizeof *set->waiters);
	set->waiters[set->nwaiters].then = then;
	set->waiters[set->nwaiters].arg = arg;
	set->nwaiters++;
}

/* The automatic bundle is written: the triggers that waited for it go on. */
static void
bundle_auto_waited(struct session *s)
{
	struct bundles		*set = s->bundles;
	struct bundle_waiter	*w = set->waiters;
	size_t			 i, n = set->nwaiters;

	set->waiters = NULL;
	set->nwaiters = 0;
	for (i = 0; i < n; i++)
		w[i].then(s, w[i].arg);
	free(w);
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
	struct bundles		*set;
	struct bundle		*b;
	char			 path[PATH_MAX];
	struct bundle_error	 err;
	struct stat		 st;
	int			 i;

	if (s->l.artifacts == NULL) {
		bundle_auto_none(s, then, arg);
		return;
	}
	if (bundle_set(s)->auto_taken) {
		if (s->bundles->auto_done == NULL)
			bundle_auto_wait(s, then, arg);
		else
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
	if ((b = bundle_start(s, path, false, true, reason, NULL, NULL,
	    &err)) == NULL) {
		log_warn("session %lu: no automatic bundle: %s", s->id,
		    err.msg);
		json_decref(set->auto_done);
		set->auto_done = json_pack("{s:s, s:s, s:f, s:s}", "path", path,
		    "reason", reason, "time", loop_now(), "error", err.msg);
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

/* The session is freed (SE_FREED): no bundle holds it, only its record. */
void
bundle_freed(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	(void)k;
	(void)ev;
	if (s->bundles == NULL)
		return;
	if (!LIST_EMPTY(&s->bundles->live))
		log_fatal("session %lu: freed while a bundle holds it", s->id);
	bundle_gather_free(s->bundles);
	json_decref(s->bundles->auto_done);
	free(s->bundles->waiters);
	free(s->bundles);
	s->bundles = NULL;
}
