/*
 * Adoption: at start, as it begins to serve, the daemon takes over the
 * sessions a dead one left. Their keepers wait at sockets named for its
 * own (SOCK.kID.N, N the process's index in its session) for the grace
 * period; each hands over the descriptors it held (pty masters, the
 * transport's pipes) and what it knows of its program. The session is
 * then entered again as its record launched it, with its id, taking those
 * instead of making new ones (dmn.adopting says so to session_start's
 * steps). A keeper that cannot be adopted whole is told to stop: nothing
 * a dead daemon left runs unsupervised.
 *
 * The daemon serves while it adopts: the hand-overs run on the loop, a
 * few sessions' at a time, so a ping is answered at once and a keeper
 * that does not answer delays no other. Requests that need the sessions
 * wait for the last (request.c parks them while dmn.adoption is set).
 */
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "cursor-file.h"
#include "lease.h"
#include "adopt.h"
#include "proc.h"
#include "rtt.h"

/* The stop a keeper nobody can adopt gets, as a launch's default. */
#define ADOPT_STOP_MS 5000
/*
 * Sessions whose keepers hand over at once: enough to keep the keepers
 * busy beside the daemon, few enough that the sessions whose hand-overs
 * end in one turn of the loop are entered in a few ms.
 */
#define ADOPT_BUSY_MAX 16
/* The most time one turn of the loop spends entering sessions, in ms. */
#define ADOPT_TURN_MS 2

/* One waiting keeper's socket, as the scan found it. */
struct adopt_found {
	unsigned long	 id;
	size_t		 n;
	char		*path;
};

/* The keeper socket of process n of session id; -1 if it cannot be one. */
int
adopt_sock_path(unsigned long id, size_t n, char *buf, size_t len)
{
	struct sockaddr_un sun;
	int	w = snprintf(buf, len, "%s.k%lu.%zu", dmn.sock_path, id, n);

	return w < 0 || (size_t)w >= len || (size_t)w >= sizeof sun.sun_path ?
	    -1 : 0;
}

/* Order found sockets by session, then process. */
static int
adopt_found_cmp(const void *a, const void *b)
{
	const struct adopt_found *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* Whether name is a keeper socket of this daemon's: into id and n. */
static bool
adopt_name(const char *name, const char *base, unsigned long *id, size_t *n)
{
	size_t	 len = strlen(base);
	char	*end;

	if (strncmp(name, base, len) != 0 || strncmp(name + len, ".k", 2) != 0)
		return false;
	errno = 0;
	*id = strtoul(name + len + 2, &end, 10);
	if (errno != 0 || *id == 0 || *end != '.')
		return false;
	*n = strtoul(end + 1, &end, 10);
	return *end == '\0' && *n < SESSION_MAXPROCS;
}

/* The keeper sockets beside the daemon's, sorted; how many. */
static size_t
adopt_scan(struct adopt_found **out)
{
	char		 dir[PATH_MAX], base[PATH_MAX];
	struct adopt_found *f = NULL;
	struct dirent	*de;
	size_t		 n = 0, idx;
	unsigned long	 id;
	DIR		*d;

	strlcpy(dir, dmn.sock_path, sizeof dir);
	strlcpy(base, dmn.sock_path, sizeof base);
	if ((d = opendir(dirname(dir))) == NULL)
		return 0;
	strlcpy(base, basename(base), sizeof base);
	while ((de = readdir(d)) != NULL) {
		if (!adopt_name(de->d_name, base, &id, &idx))
			continue;
		f = xreallocarray(f, n + 1, sizeof *f);
		f[n].id = id;
		f[n].n = idx;
		xasprintf(&f[n].path, "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(f, n, sizeof *f, adopt_found_cmp);
	*out = f;
	return n;
}

/* The adoption under way: the keepers found, and how far it has got. */
struct adopt_run {
	struct adopt_found	*found;
	size_t			 nfound;
	size_t			 next;		/* the first not begun */
	size_t			 busy;		/* sessions begun, not entered */
	TAILQ_HEAD(, adopt)	 ready;		/* handed over, to enter */
	size_t			 starting;	/* entered, not yet running */
	uv_idle_t		 idle;		/* enters them, a turn at a time */
	void			(*done)(void);
};

static void	adopt_turn(uv_idle_t *);

/* A keeper nobody adopts has been told to stop: forget it once gone. */
static void
adopt_discard_cb(void *arg, struct proc *pr, enum proc_event ev)
{
	(void)arg;
	if (ev == PROC_GONE)
		proc_free(pr);
}

/* Stop what a keeper that cannot be adopted runs, and watch it go. */
static void
adopt_discard(struct adopt_keeper *k, const char *why)
{
	struct proc *pr;

	if (!k->present)
		return;
	log_warn("keeper %ld: not adopted (%s): stopping what it runs",
	    (long)k->pid, why);
	pr = proc_adopt(k->pid, k->ctl, "a session's", NULL, adopt_discard_cb,
	    NULL);
	k->ctl = -1;
	adopt_keeper_close(k);
	if (pr != NULL)
		proc_stop(pr, ADOPT_STOP_MS);
}

/* Why the session of record rec cannot be adopted, or NULL. */
static const char *
adopt_refused(const struct adopt *a, struct launch *l, struct rpc_error *err)
{
	if (a->record == NULL)
		return "no record of its session";
	if (!a->keepers[0].present)
		return "its session's main keeper is gone";
	if (launch_parse(l, json_object_get(a->record, "params"), err) != 0)
		return err->message;
	if (!(l->backend->flags & BACKEND_ADOPT)) {
		launch_free(l);
		return "its kind is not adoptable";
	}
	/* Its server listens where the dead daemon saw it. */
	if (json_is_integer(json_object_get(a->record, "port")))
		l->port = (int)json_integer_value(json_object_get(a->record,
		    "port"));
	lease_token_load(l, json_string_value(json_object_get(a->record,
	    "lease_token")));
	return NULL;
}

/* What an adopted session gets back once it runs again. */
struct adopt_resume {
	json_t		*hold;		/* its record's, or NULL */
	json_t		*rtt;		/* its record's, or NULL */
	double		 deadline_at;	/* when its deadline runs out, or 0 */
	struct sink	*sink;
	bool		 counted;	/* in the adoption's starting */
};

/*
 * The deadline runs out when the record said, however long the session
 * took to run again: armed as it started with what it had left at the
 * adoption, it is set again now (a verdict given meanwhile stands).
 */
static void
adopt_resume_deadline(struct session *s, double at)
{
	double left = at - loop_now();

	if (at > 0)
		(void)verdict_deadline_set(s, left > 0.001 ? (long)(left *
		    1000) : 1);
}

/*
 * RTT reads on from the block the record names, where the target's own
 * read offsets stand: what it wrote while no daemon read waited in its
 * buffers (a blocking channel held the firmware meanwhile).
 */
static void
adopt_resume_rtt(struct session *s, json_t *rec)
{
	struct rpc_error	err = { 0 };
	json_t			*a = json_object_get(rec, "address");
	json_t			*hz = json_object_get(rec, "hz");

	if (!json_is_integer(a) || !json_is_integer(hz) ||
	    json_integer_value(hz) <= 0 ||
	    json_integer_value(hz) > RTT_HZ_MAX) {
		log_warn("session %lu: its record's RTT is not one: RTT is off",
		    s->id);
		return;
	}
	if (rtt_start(s, true, (uint64_t)json_integer_value(a),
	    (unsigned)json_integer_value(hz), &err) != 0)
		log_warn("session %lu: its RTT is lost: %s", s->id, err.message);
}

/*
 * The adopted session runs: its hold comes back for the time it had left,
 * by whom it was (its lease ended already if the hold alone kept it).
 */
static void
adopt_resume_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct adopt_resume	*r = k->arg;
	struct rpc_error	 err;
	double			 left;
	bool			 lease_ended;

	(void)ev;
	if (s->state == S_STARTING)
		return;
	lease_ended = json_is_true(json_object_get(r->hold, "lease_ended"));
	if (s->state == S_RUNNING && r->hold != NULL) {
		left = json_number_value(json_object_get(r->hold, "until")) -
		    loop_now();
		if (hold_set(s, left > 0.001 ? (long)(left * 1000) : 1,
		    json_incref(json_object_get(r->hold, "by")), &err) != 0)
			log_warn("session %lu: its hold is lost: %s", s->id,
			    err.message);
		else if (lease_ended)
			(void)hold_keeps(s);
	}
	if (s->state == S_RUNNING && r->hold == NULL)
		adopt_resume_deadline(s, r->deadline_at);
	if (s->state == S_RUNNING && r->rtt != NULL)
		adopt_resume_rtt(s, r->rtt);
	/* The adoption is over once none it entered is starting: look soon. */
	if (r->counted && dmn.adoption != NULL) {
		dmn.adoption->starting--;
		uv_idle_start(&dmn.adoption->idle, adopt_turn);
	}
	session_sink_remove(r->sink);
	json_decref(r->hold);
	json_decref(r->rtt);
	free(r);
}

/*
 * Give the adopted session back what its record kept that the launch
 * does not say: the deadline it had left (or none, if it was cleared)
 * and its lease, now; its hold once it runs.
 */
static void
adopt_resume(struct session *s, json_t *rec)
{
	struct adopt_resume	*r = xcalloc(1, sizeof *r);
	json_t			*d = json_object_get(rec, "deadline");
	double			 left;

	if (json_is_null(d))
		s->l.deadline = 0;
	else if (d != NULL) {
		r->deadline_at = json_number_value(json_object_get(d, "at"));
		left = r->deadline_at - loop_now();
		s->l.deadline = left > 0.001 ? (long)(left * 1000) : 1;
	}
	r->hold = json_incref(json_object_get(rec, "hold"));
	r->rtt = json_incref(json_object_get(rec, "rtt"));
	/*
	 * Its lease, whose connection went with the daemon that died, unless
	 * it had ended already: at once, for its client's claim; its grace
	 * runs from when the session runs.
	 */
	if (s->l.lease && !json_is_true(json_object_get(r->hold,
	    "lease_ended")))
		lease_add(s, NULL, s->l.lease_grace);
	r->sink = session_sink_add(s, SE_STATE, adopt_resume_state, r);
	/* Requests wait until gdb has been asked again, not only entered. */
	if (s->state == S_STARTING && dmn.adoption != NULL) {
		r->counted = true;
		dmn.adoption->starting++;
	}
	adopt_resume_state(r->sink, s, NULL);
}

/* Adopt one session from its keepers; what it cannot use is stopped. */
static void
adopt_session(struct adopt *a)
{
	struct rpc_error	 err = { 0 };
	struct launch		 l;
	struct session		*s = NULL;
	const char		*why;
	size_t			 i;

	a->record = session_record_read(a->id);
	if ((why = adopt_refused(a, &l, &err)) == NULL) {
		dmn.adopting = a;
		s = session_adopt(&l, a->id, json_real_value(json_object_get(
		    a->record, "started_at")), &err);
		dmn.adopting = NULL;
		why = s == NULL ? err.message : NULL;
	}
	if (s != NULL) {
		adopt_resume(s, a->record);
		cursor_file_adopt(s);
	}
	json_decref(a->record);
	a->record = NULL;
	for (i = 0; i < SESSION_MAXPROCS; i++) {
		/* What a keeper said while no daemon listened, said now. */
		if (why == NULL && i < s->nprocs && s->procs[i].proc != NULL &&
		    a->keepers[i].reports != NULL)
			proc_replay(s->procs[i].proc, a->keepers[i].reports,
			    a->keepers[i].reportslen);
		adopt_discard(&a->keepers[i], why != NULL ? why :
		    "its session has no such process");
		adopt_keeper_close(&a->keepers[i]);
	}
	if (why != NULL) {
		session_record_remove(a->id);
		return;
	}
	log_info("session %lu: adopted", a->id);
	/* A shutdown's stop of every session could not reach it: it ends too. */
	if (dmn.shutting_down)
		session_stop(s, -1);
}

/*
 * Remove the records of sessions no keeper waited for: they ended while
 * no daemon ran, or their keepers' grace ran out.
 */
static void
adopt_forget_records(void)
{
	char		 dir[PATH_MAX + 16], *end;
	unsigned long	 id;
	struct dirent	*de;
	DIR		*d;

	snprintf(dir, sizeof dir, "%s/sessions", dmn.state_dir);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		errno = 0;
		id = strtoul(de->d_name, &end, 10);
		if (errno != 0 || end == de->d_name || strcmp(end, ".rec") != 0)
			continue;
		if (session_by_id(id) != NULL)
			continue;
		session_record_remove(id);
		cursor_file_remove(id);
	}
	closedir(d);
}

static void	adopt_begin(struct adopt_run *);

/* The adoption's last handle is closed: free it. */
static void
adopt_run_free(uv_handle_t *h)
{
	free(h->data);
}

/* Every keeper has handed over or failed: the daemon has its sessions. */
static void
adopt_finish(struct adopt_run *r)
{
	size_t i;

	dmn.adoption = NULL;
	for (i = 0; i < r->nfound; i++)
		free(r->found[i].path);
	free(r->found);
	adopt_forget_records();
	if (r->nfound > 0)
		log_info("adoption done: %lu sessions", session_live_count());
	r->done();
	uv_close((uv_handle_t *)&r->idle, adopt_run_free);
}

/* Begin sessions' hand-overs while few are under way; finish after the last. */
static void
adopt_next(struct adopt_run *r)
{
	while (r->busy < ADOPT_BUSY_MAX && r->next < r->nfound)
		adopt_begin(r);
	if (r->busy == 0 && r->next == r->nfound && r->starting == 0)
		adopt_finish(r);
}

/*
 * A turn of the loop: enter the sessions whose keepers are in, for at
 * most ADOPT_TURN_MS, so that a ping waits no longer; then begin more.
 */
static void
adopt_turn(uv_idle_t *h)
{
	struct adopt_run	*r = h->data;
	struct adopt		*a;
	long long		 end = loop_mono_ms() + ADOPT_TURN_MS;

	while ((a = TAILQ_FIRST(&r->ready)) != NULL &&
	    loop_mono_ms() < end) {
		TAILQ_REMOVE(&r->ready, a, entry);
		adopt_session(a);
		free(a);
		r->busy--;
	}
	if (a == NULL)
		uv_idle_stop(h);
	adopt_next(r);
}

/* Session a's keepers have all handed over (or failed): enter it soon. */
static void
adopt_ready(struct adopt_run *r, struct adopt *a)
{
	TAILQ_INSERT_TAIL(&r->ready, a, entry);
	uv_idle_start(&r->idle, adopt_turn);
}

/* One of a's keepers has handed over (err NULL) or failed. */
static void
adopt_keeper_done(struct adopt_keeper *k, const char *err)
{
	struct adopt	*a = k->arg;

	if (err != NULL)
		log_warn("session %lu: keeper %zu not adopted: %s", a->id,
		    (size_t)(k - a->keepers), err);
	if (--a->waiting == 0)
		adopt_ready(dmn.adoption, a);
}

/* Begin the hand-over of the next session's keepers. */
static void
adopt_begin(struct adopt_run *r)
{
	struct adopt		*a = xcalloc(1, sizeof *a);
	struct adopt_found	*f;
	char			 err[256];
	size_t			 i;

	a->id = r->found[r->next].id;
	for (i = 0; i < SESSION_MAXPROCS; i++)
		a->keepers[i].ctl = -1;
	r->busy++;
	for (; r->next < r->nfound && r->found[r->next].id == a->id;
	    r->next++) {
		f = &r->found[r->next];
		if (adopt_keeper_begin(f->path, &a->keepers[f->n],
		    adopt_keeper_done, a, err, sizeof err) == 0)
			a->waiting++;
		else
			log_warn("%s: not adopted: %s", f->path, err);
	}
	if (a->waiting == 0)
		adopt_ready(r, a);
}

/*
 * Take over every session a dead daemon left waiting, on the loop; done()
 * once the last is in (at once if none waits). Before the sweep of
 * cgroups, which would kill what they run.
 */
void
adopt_start(void (*done)(void))
{
	struct adopt_run *r = xcalloc(1, sizeof *r);

	r->done = done;
	TAILQ_INIT(&r->ready);
	uv_idle_init(dmn.loop, &r->idle);
	r->idle.data = r;
	if ((r->nfound = adopt_scan(&r->found)) > 0) {
		log_info("adopting the sessions of %zu keepers", r->nfound);
		dmn.adoption = r;
	}
	adopt_next(r);
}

/* The descriptor process n's keeper held as name, now the caller's; or -1. */
int
adopt_take_fd(size_t n, const char *name)
{
	struct adopt_keeper	*k = &dmn.adopting->keepers[n];
	size_t			 i;
	int			 fd;

	for (i = 0; i < k->nfds; i++) {
		if (k->fds[i] == -1 || strcmp(k->names[i], name) != 0)
			continue;
		fd = k->fds[i];
		k->fds[i] = -1;
		return fd;
	}
	return -1;
}

/* The descriptor any keeper of the session held as name; or -1. */
int
adopt_take_fd_any(const char *name)
{
	size_t	i;
	int	fd;

	for (i = 0; i < SESSION_MAXPROCS; i++)
		if ((fd = adopt_take_fd(i, name)) != -1)
			return fd;
	return -1;
}

/*
 * Process n's keeper as a proc reporting to cb, its tree in the cgroup
 * its record names; NULL if it is not there.
 */
struct proc *
adopt_take_proc(size_t n, const char *exec_name, proc_cb cb, void *arg)
{
	struct adopt_keeper	*k = &dmn.adopting->keepers[n];
	json_t			*p;
	struct proc		*pr;

	if (!k->present)
		return NULL;
	p = json_array_get(json_object_get(dmn.adopting->record, "procs"), n);
	pr = proc_adopt(k->pid, k->ctl, exec_name, json_string_value(
	    json_object_get(p, "cgroup")), cb, arg);
	/* Its reports stay, to be replayed once the session is entered. */
	k->ctl = -1;
	k->present = false;
	return pr;
}
