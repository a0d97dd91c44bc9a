/*
 * Record and replay of a qemu board, by QEMU's own record/replay (icount):
 * "record" runs the board recording its inputs into the session's state
 * files (the log, and a small qcow2 image for the snapshot it starts
 * from), bounded in size and in time; "replay" runs a bundle's recording
 * again under gdb, to its first fault break or its end, where reverse
 * execution works. QEMU writes
 * the log through stdio and completes it only at its exit, so a bundle
 * of a recording board ends QEMU (SIGTERM, which it handles) before it
 * copies the recording. Only machines checked to replay may record:
 * lm3s6965evb's replay aborts in QEMU's SD card model.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "argv.h"
#include "bundle.h"
#include "gdb.h"
#include "replay.h"

/* The machines checked to record and replay (QEMU 7.2): see dbgctl(1). */
static const char *const replay_machines[] = { "mps2-an385", NULL };

/* How often the recording's size and age are looked at. */
#define REPLAY_LOOK_MS 250
/* How long QEMU gets to write the recording's end before SIGKILL. */
#define REPLAY_FLUSH_MS 10000
/* How long gdb gets to let the board go before QEMU is ended anyway. */
#define REPLAY_DETACH_MS 10000
/*
 * How long the board runs after gdb lets it go before QEMU is ended:
 * QEMU 7.2 writes the instructions run since the log's last event only
 * at its next event, and its end (SIGTERM) is written before them, so
 * a board ended at once replays to the last event, short of the stop.
 */
#define REPLAY_SETTLE_MS 200

/* A session's recording or replay. */
struct replay {
	struct session	*s;
	bool		 record;	/* else a replay */
	char		*log;		/* the log (record), or the bundle's */
	char		*image;		/* the snapshot's image, in the state dir */
	char		*elf;		/* record: the firmware's copy, there */
	uint64_t	 max_bytes;
	uint64_t	 max_ms;
	struct timer	*look;
	struct timer	*settle;	/* QEMU is ended when it fires */
	const char	*capped;	/* "size" or "time" once bounded */
	struct sink	*flush_sink;	/* bundles wait for QEMU's exit */
	struct replay_waiter *waiters;
	size_t		 nwaiters;
};

static void	replay_settled(void *);

/* A bundle waiting for QEMU to have written the recording whole. */
struct replay_waiter {
	replay_flushed_cb cb;
	void		*arg;
};

/* Whether QEMU's record/replay has been checked to work on machine. */
static bool
replay_machine_ok(const char *machine)
{
	size_t i;

	for (i = 0; replay_machines[i] != NULL; i++)
		if (strcmp(replay_machines[i], machine) == 0)
			return true;
	return false;
}

/* Whether dir holds a non-empty file name, not a link; why not in err. */
static int
replay_check_file(const char *dir, const char *name, struct rpc_error *err)
{
	struct stat	 st;
	char		*path;
	int		 rc;

	xasprintf(&path, "%s/%s", dir, name);
	rc = lstat(path, &st);
	free(path);
	if (rc != 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"replay\": %s holds "
		    "no recording (%s: %s); bundles of sessions launched with "
		    "\"record\" have one", dir, name, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"replay\": %s's "
		    "recording is empty or not a regular file (%s; a symbolic "
		    "link is refused): QEMU did not end cleanly while it "
		    "recorded, or the bundle is not one dbgctl wrote", dir,
		    name);
		return -1;
	}
	return 0;
}

/* Check a launch's record and replay params (kind qemu). */
int
replay_check(const struct launch *l, struct rpc_error *err)
{
	const char	*dir = launch_get_str(l, "replay");
	const char	*machine = launch_get_str(l, "machine");
	bool		 record = json_is_true(json_object_get(l->kind_params,
			    "record"));

	if (!record && dir == NULL)
		return 0;
	if (record && dir != NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"record\" and "
		    "\"replay\" exclude each other");
		return -1;
	}
	if (!replay_machine_ok(machine)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "machine %s cannot %s: "
		    "QEMU's record/replay is checked only on %s (on "
		    "lm3s6965evb its replay aborts in the SD card model)",
		    machine, record ? "record" : "replay", replay_machines[0]);
		return -1;
	}
	if (dir == NULL)
		return 0;
	/* QEMU opens it from the launch's cwd, the daemon from its own. */
	if (*dir != '/') {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"replay\" must be an "
		    "absolute path, not \"%s\"", dir);
		return -1;
	}
	if (replay_check_file(dir, REPLAY_LOG, err) != 0 ||
	    replay_check_file(dir, REPLAY_IMAGE, err) != 0)
		return -1;
	return 0;
}

/* The session's replay state, or NULL. */
static struct replay *
replay_of(const struct session *s)
{
	const struct gdb_data *g = gdb_of(s);

	return g != NULL ? g->replay : NULL;
}

/* The session is freed (SE_FREED): its state files and timers go. */
void
replay_freed(struct sink *k, struct session *s, const struct session_event *ev)
{
	struct replay	*r = replay_of(s);
	struct gdb_data	*g = gdb_of(s);

	(void)k;
	(void)ev;
	if (r == NULL)
		return;
	/* Its sink held the session: it cannot be freed while waiting. */
	if (r->flush_sink != NULL || r->nwaiters > 0)
		log_fatal("session %lu: freed while a bundle waits for QEMU",
		    s->id);
	timer_free(r->look);
	timer_free(r->settle);
	if (r->record) {
		session_prune_unlink(s, r->log);
		session_prune_unlink(s, r->elf);
	}
	session_prune_unlink(s, r->image);
	free(r->log);
	free(r->image);
	free(r->elf);
	g->replay = NULL;
	free(r);
}

/* The server (QEMU) of s, alive, or NULL (none for a session not of the gdb family). */
static struct proc *
replay_qemu(const struct session *s)
{
	const struct gdb_data *g = gdb_of(s);

	if (g == NULL || g->server.proc == NULL ||
	    g->server.proc->proc == NULL || !proc_alive(g->server.proc->proc))
		return NULL;
	return g->server.proc->proc;
}

/* A session bounded by its recording's size or age: the bundle is written, so it stops. */
static void
replay_bounded_then(struct session *s, void *arg)
{
	(void)arg;
	if (!session_ended(s))
		session_stop(s, -1);
}

/* The recording reached a bound: say so, bundle it (if asked), stop. */
static void
replay_bounded(struct replay *r, const char *what)
{
	char *text;

	r->capped = what;
	xasprintf(&text, "recording reached its %s bound (%llu bytes, %llu "
	    "ms): the board is stopped, the recording kept whole", what,
	    (unsigned long long)r->max_bytes, (unsigned long long)r->max_ms);
	session_note(r->s, text);
	log_info("session %lu: %s", r->s->id, text);
	free(text);
	bundle_auto(r->s, "record-bound", replay_bounded_then, NULL);
}

/* Look at the recording's size and age; at a bound, the run ends. */
static void
replay_look(void *arg)
{
	struct replay	*r = arg;
	struct stat	 st;

	/* QEMU gone, its recording is over: no bound to reach. */
	if (session_ended(r->s) || r->capped != NULL || replay_qemu(r->s) ==
	    NULL)
		return;
	if (stat(r->log, &st) == 0 && (uint64_t)st.st_size >= r->max_bytes) {
		replay_bounded(r, "size");
		return;
	}
	/* From the session's start, which an adopting daemon keeps. */
	if ((loop_now() - r->s->started_at) * 1000 >= (double)r->max_ms) {
		replay_bounded(r, "time");
		return;
	}
	timer_start(r->look, REPLAY_LOOK_MS);
}

/* A path for a QEMU option's value: its commas doubled. */
static char *
replay_opt_path(const char *path)
{
	char	*out = xmalloc(2 * strlen(path) + 1), *p = out;

	for (; *path != '\0'; path++) {
		*p++ = *path;
		if (*path == ',')
			*p++ = ',';
	}
	*p = '\0';
	return out;
}

/* A bound param of the launch, or its default. */
static uint64_t
replay_param(const struct session *s, const char *name, uint64_t dflt)
{
	json_t *v = json_object_get(s->l.kind_params, name);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : dflt;
}

/*
 * A recording's files: an empty image to snapshot into, and the firmware,
 * found as gdb finds it, copied beside the log so that a rebuild cannot
 * change it; a replay's: a copy of the bundle's image, which QEMU writes
 * to. The copies are made off the loop; cb hears when.
 */
static int
replay_files(struct session *s, const struct replay *r, const char *dir,
    replay_copied_cb cb, char *err, size_t errlen)
{
	char *src;

	if (!r->record) {
		xasprintf(&src, "%s/%s", dir, REPLAY_IMAGE);
		replay_file_copy_async(s, src, r->image, REPLAY_FILE_QCOW2, cb);
		free(src);
		return 0;
	}
	if (replay_file_image_new(r->image, err, errlen) != 0)
		return -1;
	if ((src = launch_program_path(&s->l)) == NULL) {
		snprintf(err, errlen, "%s: %s", json_string_value(
		    json_array_get(s->l.argv, 0)), strerror(errno));
		return -1;
	}
	replay_file_copy_async(s, src, r->elf, REPLAY_FILE_FOLLOW, cb);
	free(src);
	return 0;
}

/*
 * Make the session's recording or replay state: the paths, the bounds,
 * the timers, and its files in the state dir (see replay-file.c): 1 when
 * cb is to hear that they are made, 0 when there is nothing to wait for,
 * -1 with err. An adopted session's QEMU holds its files already: they
 * are kept as they are. Nothing for a plain launch.
 */
int
replay_open(struct session *s, replay_copied_cb cb, char *err,
    size_t errlen)
{
	struct gdb_data	*g = gdb_of(s);
	const char	*dir = launch_get_str(&s->l, "replay");
	struct replay	*r;

	if (dir == NULL && !json_is_true(json_object_get(s->l.kind_params,
	    "record")))
		return 0;
	r = xcalloc(1, sizeof *r);
	r->s = s;
	r->record = dir == NULL;
	xasprintf(&r->image, "%s/sessions/%lu.rr.qcow2", dmn.state_dir, s->id);
	if (r->record) {
		xasprintf(&r->log, "%s/sessions/%lu.rr.bin", dmn.state_dir,
		    s->id);
		xasprintf(&r->elf, "%s/sessions/%lu.rr.elf", dmn.state_dir,
		    s->id);
	} else
		xasprintf(&r->log, "%s/%s", dir, REPLAY_LOG);
	r->max_bytes = replay_param(s, "record_bytes", REPLAY_MAX_BYTES);
	r->max_ms = replay_param(s, "record_seconds", REPLAY_MAX_SECONDS) *
	    1000;
	r->look = timer_new(replay_look, r);
	r->settle = timer_new(replay_settled, r);
	g->replay = r;
	if (dmn.adopting != NULL)
		return 0;
	return replay_files(s, r, dir, cb, err, errlen) != 0 ? -1 : 1;
}

/* QEMU's arguments of the recording or the replay, from -S on. */
void
replay_args(struct session *s, struct argv *av)
{
	struct replay	*r = replay_of(s);
	char		*log, *image;

	if (r == NULL)
		return;
	log = replay_opt_path(r->log);
	image = replay_opt_path(r->image);
	argv_push(av, "-icount");
	argv_pushf(av, "shift=auto,rr=%s,rrfile=%s,rrsnapshot=init",
	    r->record ? "record" : "replay", log);
	argv_push(av, "-drive");
	argv_pushf(av, "file=%s,if=none,id=rr", image);
	free(log);
	free(image);
	if (r->record)
		timer_start(r->look, REPLAY_LOOK_MS);
}

/* QEMU has ended (or the session): the bundles waiting for it go on, in order. */
static void
replay_flush_cb(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct replay		*r = k->arg;
	struct replay_waiter	*w = r->waiters;
	size_t			 i, n = r->nwaiters;

	(void)ev;
	if (replay_qemu(s) != NULL && !session_ended(s))
		return;
	session_sink_remove(r->flush_sink);
	r->flush_sink = NULL;
	r->waiters = NULL;
	r->nwaiters = 0;
	for (i = 0; i < n; i++)
		w[i].cb(w[i].arg);
	free(w);
}

/* The board has run on past its stop: QEMU is ended (SIGTERM, SIGKILL at the bound). */
static void
replay_settled(void *arg)
{
	struct replay	*r = arg;
	struct proc	*qemu = replay_qemu(r->s);

	if (qemu != NULL)
		proc_stop(qemu, REPLAY_FLUSH_MS);
}

/* gdb has let the board go: QEMU is ended once it has run on a while. */
static json_t *
replay_detached(struct gdb_job *j)
{
	struct replay *r = replay_of(j->g->s);

	if (r != NULL)
		timer_start(r->settle, REPLAY_SETTLE_MS);
	return NULL;
}

/*
 * Before a bundle copies a recording, QEMU must have written it whole,
 * which it does at its exit: gdb detaches first (QEMU 7.2 loses the
 * log's last events when it ends while gdb holds the board stopped),
 * then QEMU is ended (SIGTERM, SIGKILL after REPLAY_FLUSH_MS), and cb is
 * called once it is gone (after those of bundles that asked before).
 * A gdb that does not let go within REPLAY_DETACH_MS (stuck, stopped,
 * its job failed) holds nothing: QEMU is ended then all the same.
 * False (and no call) if there is nothing to wait for.
 */
bool
replay_flush(struct session *s, replay_flushed_cb cb, void *arg)
{
	struct replay	*r = replay_of(s);
	struct proc	*qemu;
	struct gdb_data	*g;
	struct gdb_job	*j;

	if (r == NULL || !r->record || (qemu = replay_qemu(s)) == NULL)
		return false;
	r->waiters = xreallocarray(r->waiters, r->nwaiters + 1,
	    sizeof *r->waiters);
	r->waiters[r->nwaiters].cb = cb;
	r->waiters[r->nwaiters++].arg = arg;
	/* A second bundle meanwhile waits for the same end. */
	if (r->nwaiters > 1)
		return true;
	session_note(s, "the board's QEMU is ended for the bundle: a "
	    "recording is whole only once QEMU exits");
	r->flush_sink = session_sink_add(s, SE_SERVER_END | SE_ENDING |
	    SE_ENDED, replay_flush_cb, r);
	/* The recording ends here: a bound is not to be looked for. */
	timer_stop(r->look);
	if ((g = gdb_live(s)) == NULL) {
		proc_stop(qemu, REPLAY_FLUSH_MS);
		return true;
	}
	timer_start(r->settle, REPLAY_DETACH_MS + REPLAY_SETTLE_MS);
	j = gdb_job_new(NULL, g, GDB_JOB_ORPHAN_OK | GDB_JOB_ERRORS_OK |
	    GDB_JOB_BARE, replay_detached);
	gdb_job_add(j, "-target-detach");
	gdb_job_run(j, NULL, 0);
	return true;
}

/* What a replay needs beside the recording: how the board was launched. */
static char *
replay_describe(const struct session *s, const struct replay *r)
{
	json_t	*o = json_object(), *v;
	char	*text;

	json_object_set(o, "machine", json_object_get(s->l.kind_params,
	    "machine"));
	if ((v = json_object_get(s->l.kind_params, "cpu")) != NULL)
		json_object_set(o, "cpu", v);
	if ((v = json_object_get(s->l.kind_params, "qemu_args")) != NULL)
		json_object_set(o, "qemu_args", v);
	if ((v = json_object_get(s->l.kind_params, "shared_ram")) != NULL)
		json_object_set(o, "shared_ram", v);
	json_object_set(o, "program", json_array_get(s->l.argv, 0));
	json_object_set_new(o, "firmware", json_string(REPLAY_FIRMWARE));
	json_object_set_new(o, "log", json_string(REPLAY_LOG));
	json_object_set_new(o, "image", json_string(REPLAY_IMAGE));
	json_object_set_new(o, "bound", r->capped != NULL ?
	    json_string(r->capped) : json_null());
	json_object_set_new(o, "open", json_string("dbgctl replay BUNDLE"));
	text = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(o);
	return text;
}

/* Why the recording is not whole (QEMU not ended cleanly), or NULL. */
static char *
replay_broken(struct session *s)
{
	const struct gdb_data	*g = gdb_of(s);
	char			*why;
	int			 code, sig;

	if (g->server.proc == NULL || g->server.proc->proc == NULL)
		return NULL;
	if (replay_qemu(s) != NULL) {
		xasprintf(&why, "QEMU still ran: the recording has no end");
		return why;
	}
	if (!proc_exit(g->server.proc->proc, &code, &sig) || sig == 0)
		return NULL;
	xasprintf(&why, "QEMU was killed (signal %d) before it wrote the "
	    "recording's end", sig);
	return why;
}

/* The recording's files' bytes together, or why they cannot be weighed. */
static int
replay_weigh(const struct replay *r, uint64_t *total, char **why)
{
	const char	*paths[] = { r->log, r->image, r->elf };
	struct stat	 st;
	size_t		 i;

	*total = 0;
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		if (lstat(paths[i], &st) != 0) {
			xasprintf(why, "%s: %s", paths[i], strerror(errno));
			return -1;
		}
		*total += (uint64_t)st.st_size;
	}
	return 0;
}

/* Whether the recording fits whole in the room b has left; why not in *why. */
static bool
replay_fits(struct bundle *b, const struct replay *r, char **why)
{
	uint64_t total, used = bundle_files_used(b->files);

	if (replay_weigh(r, &total, why) != 0)
		return false;
	if (dmn.bundle_max == 0 || (used <= dmn.bundle_max && total <=
	    dmn.bundle_max - used))
		return true;
	xasprintf(why, "the recording's %llu bytes are over the room the "
	    "bundle's size bound leaves (%llu of %llu): a recording is kept "
	    "whole or not at all", (unsigned long long)total,
	    (unsigned long long)(used <= dmn.bundle_max ? dmn.bundle_max -
	    used : 0), (unsigned long long)dmn.bundle_max);
	return false;
}

/*
 * A recording session's files for its bundle: the log, its image, the
 * firmware's copy, replay.json; all of them or, if QEMU did not end
 * cleanly or the bound would cut one, none, and the manifest says why.
 * Queued before the logs, so that the bound cuts a log, not these.
 */
void
replay_bundle(struct bundle *b)
{
	struct replay	*r = replay_of(b->s);
	char		*text, *why;

	if (r == NULL || !r->record)
		return;
	if ((why = replay_broken(b->s)) != NULL || !replay_fits(b, r, &why)) {
		bundle_missing(b, "replay", why);
		free(why);
		return;
	}
	bundle_files_copy(b->files, REPLAY_LOG, r->log);
	bundle_files_copy(b->files, REPLAY_IMAGE, r->image);
	bundle_files_copy(b->files, REPLAY_FIRMWARE, r->elf);
	text = replay_describe(b->s, r);
	bundle_files_text(b->files, REPLAY_META, text, strlen(text), true);
	free(text);
}
