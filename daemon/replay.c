/*
 * Record and replay of a qemu board, by QEMU's own record/replay (icount):
 * "record" runs the board recording its inputs into the session's state
 * files (the log, and a small qcow2 image for the snapshot it starts
 * from), bounded in size and in time; "replay" runs a bundle's recording
 * again, halted, under gdb, where reverse execution works. QEMU writes
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
/*
 * How long the board runs after gdb lets it go before QEMU is ended:
 * QEMU 7.2 writes the instructions run since the log's last event only
 * at its next event, and its end (SIGTERM) is written before them, so
 * a board ended at once replays to the last event, short of the stop.
 */
#define REPLAY_SETTLE_MS 200
/* The qcow2 image QEMU saves its starting snapshot in: four clusters. */
#define REPLAY_CLUSTER 65536

/* A session's recording or replay. */
struct replay {
	struct session	*s;
	bool		 record;	/* else a replay */
	char		*log;		/* the log (record), or the bundle's */
	char		*image;		/* the snapshot's image, in the state dir */
	uint64_t	 max_bytes;
	uint64_t	 max_ms;
	uint64_t	 t0;		/* uv_now() at the start */
	struct timer	*look;
	struct timer	*settle;	/* QEMU is ended when it fires */
	const char	*capped;	/* "size" or "time" once bounded */
	struct sink	*freed;
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

/* Whether dir holds a non-empty file name; why not in err. */
static int
replay_check_file(const char *dir, const char *name, struct rpc_error *err)
{
	struct stat	 st;
	char		 path[PATH_MAX];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (stat(path, &st) != 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"replay\": %s holds "
		    "no recording (%s: %s); bundles of sessions launched with "
		    "\"record\" have one", dir, name, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"replay\": %s's "
		    "recording is empty or not a file (%s): QEMU did not end "
		    "cleanly while it recorded", dir, name);
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
	if (replay_check_file(dir, REPLAY_LOG, err) != 0 ||
	    replay_check_file(dir, REPLAY_IMAGE, err) != 0)
		return -1;
	return 0;
}

/* Write the empty qcow2 image (version 3, 64 KiB clusters, 1 MiB) at path. */
static int
replay_image_new(const char *path, char *err, size_t errlen)
{
	static unsigned char	 img[4 * REPLAY_CLUSTER];
	/* magic, version 3, cluster_bits 16, size 1 MiB, l1_size 1, ... */
	static const unsigned char hdr[] = {
		'Q', 'F', 'I', 0xfb, 0, 0, 0, 3,
		0, 0, 0, 0, 0, 0, 0, 0,		/* no backing file */
		0, 0, 0, 0, 0, 0, 0, 16,	/* its size, cluster_bits */
		0, 0, 0, 0, 0, 0x10, 0, 0,	/* 1 MiB */
		0, 0, 0, 0, 0, 0, 0, 1,		/* no encryption; l1_size */
		0, 0, 0, 0, 0, 3, 0, 0,		/* L1 table: cluster 3 */
		0, 0, 0, 0, 0, 1, 0, 0,		/* refcount table: cluster 1 */
		0, 0, 0, 1, 0, 0, 0, 0,		/* its clusters; no snapshot */
		0, 0, 0, 0, 0, 0, 0, 0,		/* snapshots' offset */
		0, 0, 0, 0, 0, 0, 0, 0,		/* incompatible features */
		0, 0, 0, 0, 0, 0, 0, 0,		/* compatible features */
		0, 0, 0, 0, 0, 0, 0, 0,		/* autoclear features */
		0, 0, 0, 4, 0, 0, 0, 104,	/* refcount order, header length */
	};
	int	 fd, i;
	ssize_t	 n;

	memset(img, 0, sizeof img);
	memcpy(img, hdr, sizeof hdr);
	/* The refcount table's one block, in cluster 2. */
	img[REPLAY_CLUSTER + 5] = 2;
	/* Clusters 0 to 3 (header, refcount table and block, L1) are used once. */
	for (i = 0; i < 4; i++)
		img[2 * REPLAY_CLUSTER + 2 * i + 1] = 1;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = write(fd, img, sizeof img);
	if (close(fd) != 0 || n != (ssize_t)sizeof img) {
		snprintf(err, errlen, "%s: cannot write", path);
		return -1;
	}
	return 0;
}

/* Copy src to the new file dst (a bundle's image, a few MiB at most). */
static int
replay_copy(const char *src, const char *dst, char *err, size_t errlen)
{
	char	 buf[65536];
	int	 in, out, rc = 0;
	ssize_t	 n;

	if ((in = open(src, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		return -1;
	}
	if ((out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) ==
	    -1) {
		snprintf(err, errlen, "%s: %s", dst, strerror(errno));
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	if (n < 0 || close(out) != 0) {
		snprintf(err, errlen, "cannot copy %s to %s", src, dst);
		rc = -1;
	}
	close(in);
	return rc;
}

/* The session's replay state, or NULL. */
static struct replay *
replay_of(const struct session *s)
{
	const struct gdb_data *g = s->bdata;

	if (!gdb_family(s) || g == NULL)
		return NULL;
	return g->replay;
}

/* The session is freed: its state files and timer go. */
static void
replay_freed(struct sink *k, struct session *s, const struct session_event *ev)
{
	struct replay	*r = k->arg;
	struct gdb_data	*g = s->bdata;

	(void)ev;
	session_sink_remove(r->freed);
	session_sink_remove(r->flush_sink);
	free(r->waiters);
	timer_free(r->look);
	timer_free(r->settle);
	if (r->record)
		unlink(r->log);
	unlink(r->image);
	free(r->log);
	free(r->image);
	if (g != NULL)
		g->replay = NULL;
	free(r);
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

	if (session_ended(r->s) || r->capped != NULL)
		return;
	if (stat(r->log, &st) == 0 && (uint64_t)st.st_size >= r->max_bytes) {
		replay_bounded(r, "size");
		return;
	}
	if (uv_now(dmn.loop) - r->t0 >= r->max_ms) {
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
 * Make the session's recording or replay state: the snapshot's image
 * (new for a recording, a copy of the bundle's for a replay, which QEMU
 * writes to), the log's path, the bounds. Nothing for a plain launch.
 */
int
replay_open(struct session *s, char *err, size_t errlen)
{
	struct gdb_data	*g = s->bdata;
	const char	*dir = launch_get_str(&s->l, "replay");
	struct replay	*r;
	char		*src;
	int		 rc;

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
		rc = replay_image_new(r->image, err, errlen);
	} else {
		xasprintf(&r->log, "%s/%s", dir, REPLAY_LOG);
		xasprintf(&src, "%s/%s", dir, REPLAY_IMAGE);
		rc = replay_copy(src, r->image, err, errlen);
		free(src);
	}
	r->max_bytes = replay_param(s, "record_bytes", REPLAY_MAX_BYTES);
	r->max_ms = replay_param(s, "record_seconds", REPLAY_MAX_SECONDS) *
	    1000;
	r->look = timer_new(replay_look, r);
	r->settle = timer_new(replay_settled, r);
	r->freed = session_sink_add(s, SE_FREED, replay_freed, r);
	g->replay = r;
	return rc;
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
	if (!r->record)
		return;
	r->t0 = uv_now(dmn.loop);
	timer_start(r->look, REPLAY_LOOK_MS);
}

/* The server (QEMU) of s, alive, or NULL. */
static struct proc *
replay_qemu(const struct session *s)
{
	const struct gdb_data *g = s->bdata;

	if (g->server.proc == NULL || g->server.proc->proc == NULL ||
	    !proc_alive(g->server.proc->proc))
		return NULL;
	return g->server.proc->proc;
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
	if ((g = gdb_live(s)) == NULL) {
		proc_stop(qemu, REPLAY_FLUSH_MS);
		return true;
	}
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

/* A recording session's files for its bundle: the log, its image, the firmware. */
void
replay_bundle(struct session *s, struct bundle_files *f)
{
	struct replay	*r = replay_of(s);
	char		*text;

	if (r == NULL || !r->record)
		return;
	bundle_files_copy(f, REPLAY_LOG, r->log);
	bundle_files_copy(f, REPLAY_IMAGE, r->image);
	bundle_files_copy(f, REPLAY_FIRMWARE, json_string_value(
	    json_array_get(s->l.argv, 0)));
	text = replay_describe(s, r);
	bundle_files_text(f, REPLAY_META, text, strlen(text), true);
	free(text);
}
