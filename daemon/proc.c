/*
 * Keeper processes: the one place that spawns, talks to keepers and sees
 * them exit. A record lives from proc_spawn until its owner let go and
 * libuv closed its handles; what the keeper says is proc-report.c's, how
 * it is started proc-spawn.c's.
 */
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "cgroup.h"
#include "proc.h"

/* How long past its stop deadline a keeper may take before it is killed. */
#define PROC_WATCHDOG_GRACE 2000
/* How often a keeper that has not said started yet is looked at. */
#define PROC_START_CHECK 1000

/* Every keeper record, until freed. */
static TAILQ_HEAD(, proc) proc_all = TAILQ_HEAD_INITIALIZER(proc_all);

static void	proc_signal_keeper(struct proc *, int);

/* Free the record once the owner let go and libuv has closed both handles. */
static void
proc_maybe_free(struct proc *pr)
{
	if (!pr->freed || pr->handles > 0)
		return;
	if (pr->keeper_live)
		proc_keepers_remove(pr);
	TAILQ_REMOVE(&proc_all, pr, entry);
	timer_free(pr->watchdog);
	timer_free(pr->startw);
	cgroup_close(pr->cg);
	free(pr->exec_name);
	free(pr);
}

/* One of the two handles is closed. */
void
proc_handle_closed(uv_handle_t *h)
{
	struct proc *pr = h->data;

	pr->handles--;
	proc_maybe_free(pr);
}

/*
 * Tell the owner, once, when nothing of the process is left: the keeper
 * has exited, and its cgroup is empty or, without one and if the keeper
 * died unclean, no orphan of a dead keeper is still alive.
 */
void
proc_check_gone(struct proc *pr)
{
	if (pr->gone || pr->keeper_live || pr->ctl_open || pr->freed)
		return;
	if (pr->cg != NULL ? !pr->cg_empty : pr->orphaned && dmn.orphans > 0)
		return;
	pr->gone = true;
	if (pr->watchdog != NULL)
		timer_stop(pr->watchdog);
	cgroup_close(pr->cg);
	pr->cg = NULL;
	pr->cb(pr->arg, pr, PROC_GONE);
}

/* The cgroup of the keeper's tree is empty. */
static void
proc_cgroup_empty(void *arg)
{
	struct proc *pr = arg;

	pr->cg_empty = true;
	proc_check_gone(pr);
}

/* The last orphan is reaped: keepers that died may now be gone. */
void
proc_orphans_gone(void)
{
	struct proc *pr, *next;

	TAILQ_FOREACH_SAFE(pr, &proc_all, entry, next)
		if (pr->cg == NULL)
			proc_check_gone(pr);
}

/* Write a command line to the keeper, if it still listens. */
static void
proc_send(struct proc *pr, const char *line)
{
	uv_buf_t	buf;
	int		n = strlen(line);

	if (!pr->ctl_open)
		return;
	buf = uv_buf_init((char *)line, n);
	/* A few bytes on an empty socketpair: try_write takes them whole. */
	if (uv_try_write((uv_stream_t *)&pr->ctl, &buf, 1) != n)
		log_warn("keeper %ld did not take \"%.*s\"",
		    (long)pr->keeper_pid, n - 1, line);
}

/* The daemon closed what the keeper holds as name: the keeper lets go too. */
void
proc_release(struct proc *pr, const char *name)
{
	char	line[64];

	snprintf(line, sizeof line, "release %s\n", name);
	proc_send(pr, line);
}

/*
 * The keeper missed its stop deadline by the grace: it is stopped or
 * hung, perhaps by its own target. Kill it; its tree is then ended by its
 * cgroup, or comes to the daemon as orphans.
 */
static void
proc_watchdog_cb(void *arg)
{
	struct proc *pr = arg;

	if (!pr->keeper_live)
		return;
	log_warn("keeper %ld missed its stop deadline: killing it",
	    (long)pr->keeper_pid);
	proc_signal_keeper(pr, SIGCONT);
	proc_signal_keeper(pr, SIGKILL);
}

/* Ask the keeper to end its tree: TERM now, KILL after timeout_ms. */
void
proc_stop(struct proc *pr, long timeout_ms)
{
	char		line[64];
	uint64_t	at = uv_now(dmn.loop) + timeout_ms + PROC_WATCHDOG_GRACE;

	snprintf(line, sizeof line, "stop %ld\n", timeout_ms);
	proc_send(pr, line);
	if (!pr->keeper_live)
		return;
	if (pr->watchdog == NULL)
		pr->watchdog = timer_new(proc_watchdog_cb, pr);
	/* A later stop may only bring the deadline nearer. */
	if (pr->watchdog_at == 0 || at < pr->watchdog_at) {
		pr->watchdog_at = at;
		timer_start(pr->watchdog, at - uv_now(dmn.loop));
	}
}

/*
 * The keeper has not said whether its program started: if something (its
 * own program, say) has stopped it, continue it, so a launch cannot wait
 * for ever on a keeper that cannot speak; look again later.
 */
static void
proc_start_check(void *arg)
{
	struct proc	*pr = arg;
	pid_t		 ppid;
	char		 state;

	if (!pr->keeper_live)
		return;
	if (proc_report_stat(pr->keeper_pid, &ppid, &state) == 0 &&
	    (state == 'T' || state == 't')) {
		log_warn("keeper %ld was stopped before its program started: "
		    "continuing it", (long)pr->keeper_pid);
		proc_signal_keeper(pr, SIGCONT);
	}
	timer_start(pr->startw, PROC_START_CHECK);
}

/* The keeper exited: nothing it started is alive, unless it was killed. */
static void
proc_exited(struct proc *pr, int status, int sig)
{
	if (pr->keeper_live)
		proc_keepers_remove(pr);
	pr->keeper_live = false;
	if (status != 0 || sig != 0)
		log_warn("keeper %ld ended badly (status %d, signal %d)",
		    (long)pr->keeper_pid, status, sig);
	/* A keeper that exits has ended its tree, unless it was killed. */
	if (pr->cg != NULL && cgroup_populated(pr->cg))
		cgroup_kill(pr->cg);
	else if (pr->cg != NULL)
		pr->cg_empty = true;
	/* One that exits 0 has reaped all it started: no orphan to look for. */
	if (status != 0 || sig != 0) {
		pr->orphaned = true;
		orphan_check();
	}
	proc_check_gone(pr);
}

/*
 * Signal the keeper: through its pidfd, or, where there is none (valgrind
 * knows no pidfd_open), by its pid, which cannot be another's before the
 * daemon has reaped it.
 */
static void
proc_signal_keeper(struct proc *pr, int sig)
{
	if (pr->pidfd != -1)
		(void)pidfd_send_signal(pr->pidfd, sig, NULL, 0);
	else if (pr->keeper_pid > 0 && !pr->reaped)
		(void)kill(pr->keeper_pid, sig);
}

/* Record how a reaped keeper ended. */
static void
proc_reaped(struct proc *pr, const siginfo_t *info)
{
	pr->reaped = true;
	if (info->si_code == CLD_EXITED)
		proc_exited(pr, info->si_status, 0);
	else
		proc_exited(pr, 0, info->si_status);
}

/*
 * A child changed state, and some keeper has no pidfd: reap those that
 * have exited, each by its own pid, so no other child's status is taken.
 */
void
proc_reap_unwatched(void)
{
	struct proc	*pr, *next;
	siginfo_t	 info;

	TAILQ_FOREACH_SAFE(pr, &proc_all, entry, next) {
		if (pr->pidfd != -1 || pr->reaped || pr->keeper_pid <= 0 ||
		    !pr->unwatched)
			continue;
		memset(&info, 0, sizeof info);
		if (waitid(P_PID, (id_t)pr->keeper_pid, &info,
		    WEXITED | WNOHANG) != 0 || info.si_pid == 0)
			continue;
		dmn.unwatched--;
		proc_reaped(pr, &info);
	}
}

/*
 * The keeper's pidfd is readable: it has exited. waitid on the pidfd
 * reaps exactly it, so no other child's status is taken from anyone.
 */
static void
proc_exit_poll_cb(uv_poll_t *w, int status, int events)
{
	struct proc	*pr = w->data;
	siginfo_t	 info;

	(void)status;
	(void)events;
	memset(&info, 0, sizeof info);
	if (pr->adopted) {
		/* Not our child: its end is seen, its status is its parent's. */
		info.si_pid = pr->keeper_pid;
		info.si_code = CLD_EXITED;
	} else if (waitid((idtype_t)P_PIDFD, (id_t)pr->pidfd, &info,
	    WEXITED | WNOHANG) != 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		log_fatal("keeper %ld: waitid: %s", (long)pr->keeper_pid,
		    strerror(errno));
	}
	if (info.si_pid == 0)
		return;		/* readable before it could be reaped */
	/* Stopped, the watch no longer reads the pidfd: it goes at once. */
	uv_poll_stop(w);
	close(pr->pidfd);
	pr->pidfd = -1;
	uv_close((uv_handle_t *)w, proc_handle_closed);
	proc_reaped(pr, &info);
}

/* Watch a spawned keeper: its pidfd for its exit, its socket for its reports. */
static int
proc_watch(struct proc *pr, pid_t pid, int ctl)
{
	pr->handles = 1;
	if ((pr->pidfd = pidfd_open(pid, 0)) != -1) {
		uv_poll_init(dmn.loop, &pr->exitw, pr->pidfd);
		pr->exitw.data = pr;
		uv_poll_start(&pr->exitw, UV_READABLE, proc_exit_poll_cb);
		pr->handles = 2;
	} else if (errno == ENOSYS) {
		/* No pidfds (valgrind's kernel interface): SIGCHLD says. */
		pr->unwatched = true;
		dmn.unwatched++;
	} else
		return -1;
	uv_pipe_init(dmn.loop, &pr->ctl, 0);
	pr->ctl.data = pr;
	if (uv_pipe_open(&pr->ctl, ctl) != 0)
		log_fatal("keeper %ld: cannot watch its control socket",
		    (long)pid);
	return 0;
}

/* Listen to a keeper's reports on ctl, from now on. */
static void
proc_listen(struct proc *pr)
{
	pr->freed = false;
	pr->keeper_live = true;
	proc_keepers_add(pr);
	pr->startw = timer_new(proc_start_check, pr);
	timer_start(pr->startw, PROC_START_CHECK);
	pr->ctl_open = true;
	frame_init(&pr->ctl_frame, 4096);
	/*
	 * A target that stole the socket may write a line of any length: it
	 * is cut and ignored, and the keeper's own lines after it still count.
	 */
	frame_cut(&pr->ctl_frame);
	uv_read_start((uv_stream_t *)&pr->ctl, loop_alloc_cb,
	    proc_report_read_cb);
}

/*
 * Take over a keeper a dead daemon left, on ctl, the connection that
 * adopted it: its tree in the cgroup called cgroup (or none); NULL if
 * its exit cannot be watched, and then ctl is closed.
 */
struct proc *
proc_adopt(pid_t keeper, int ctl, const char *exec_name, const char *cgroup,
    proc_cb cb, void *arg)
{
	struct proc	*pr = xcalloc(1, sizeof *pr);
	int		 rc;

	pr->cb = cb;
	pr->arg = arg;
	pr->pidfd = -1;
	pr->adopted = true;
	pr->exec_name = xstrdup(exec_name);
	TAILQ_INSERT_TAIL(&proc_all, pr, entry);
	pr->freed = true;
	if ((pr->pidfd = pidfd_open(keeper, 0)) == -1) {
		log_warn("keeper %ld: pidfd_open: %s", (long)keeper,
		    strerror(errno));
		close(ctl);
		proc_maybe_free(pr);
		return NULL;
	}
	if (cgroup != NULL)
		pr->cg = cgroup_adopt(cgroup, proc_cgroup_empty, pr);
	pr->handles = 2;
	uv_poll_init(dmn.loop, &pr->exitw, pr->pidfd);
	pr->exitw.data = pr;
	uv_poll_start(&pr->exitw, UV_READABLE, proc_exit_poll_cb);
	uv_pipe_init(dmn.loop, &pr->ctl, 0);
	pr->ctl.data = pr;
	if ((rc = uv_pipe_open(&pr->ctl, ctl)) != 0)
		log_fatal("keeper %ld: cannot watch its control socket %d: %s",
		    (long)keeper, ctl, uv_strerror(rc));
	pr->keeper_pid = keeper;
	proc_listen(pr);
	return pr;
}

/* Start a keeper running sp->argv; the one spawn function. */
struct proc *
proc_spawn(const struct proc_spec *sp, const char *keeper, proc_cb cb,
    void *arg, char *err, size_t errlen)
{
	struct proc	*pr = xcalloc(1, sizeof *pr);
	int		 sv[2];
	pid_t		 pid;

	pr->cb = cb;
	pr->arg = arg;
	pr->pidfd = -1;
	pr->exec_name = xstrdup(sp->argv[0]);
	TAILQ_INSERT_TAIL(&proc_all, pr, entry);
	/* Until the keeper runs, a failure frees it: no handle is open yet. */
	pr->freed = true;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		proc_maybe_free(pr);
		return NULL;
	}
	if (sp->cgroup != NULL)
		pr->cg = cgroup_open(sp->cgroup, proc_cgroup_empty, pr);
	pid = proc_spawn_keeper(sp, keeper, pr->cg, sv[1]);
	close(sv[1]);
	if (pid == -1 || proc_watch(pr, pid, sv[0]) != 0) {
		snprintf(err, errlen, "spawn %s: %s", keeper, strerror(errno));
		close(sv[0]);
		/* A keeper that runs without a pidfd is told to go, and reaped. */
		if (pid != -1) {
			(void)kill(pid, SIGKILL);
			(void)waitpid(pid, NULL, 0);
		}
		proc_maybe_free(pr);
		return NULL;
	}
	pr->keeper_pid = pid;
	proc_listen(pr);
	return pr;
}

/* A process's exit record: {"code":N} or {"signal":N}, and how it came to end. */
json_t *
proc_exit_json(const struct proc *pr)
{
	if (pr->exit_signal != 0)
		return json_pack("{s:i, s:s}", "signal", pr->exit_signal,
		    "by", pr->ended_by);
	return json_pack("{s:i, s:s}", "code", pr->exit_code, "by",
	    pr->ended_by);
}

/*
 * The owner lets go: no more callbacks. A keeper still running keeps its
 * record until libuv has reaped it and closed both handles.
 */
void
proc_free(struct proc *pr)
{
	if (pr == NULL)
		return;
	pr->freed = true;
	proc_maybe_free(pr);
}

/* Its program's pid once the keeper said it started, else 0. */
pid_t
proc_pid(const struct proc *pr)
{
	return pr->pid;
}

/* Its keeper's pid (a group leader, and the program's parent). */
pid_t
proc_keeper_pid(const struct proc *pr)
{
	return pr->keeper_pid;
}

/* Whether its keeper runs: spawned and not yet exited. */
bool
proc_alive(const struct proc *pr)
{
	return pr->keeper_live;
}

/* Whether its keeper is gone, and so is all of it. */
bool
proc_gone(const struct proc *pr)
{
	return pr->gone;
}

/* What the keeper execs, for messages. */
const char *
proc_name(const struct proc *pr)
{
	return pr->exec_name;
}

/*
 * Whether its program has exited; if so, with what code or by what signal
 * (either pointer may be NULL).
 */
bool
proc_exit(const struct proc *pr, int *code, int *sig)
{
	if (!pr->have_exit)
		return false;
	if (code != NULL)
		*code = pr->exit_code;
	if (sig != NULL)
		*sig = pr->exit_signal;
	return true;
}

/* How it ended: "exit", "quit", "detach", "term" or "kill". */
const char *
proc_ended_by(const struct proc *pr)
{
	return pr->ended_by;
}

/* Where it failed to start ("setup" ... "exec"), and the errno. */
const char *
proc_failure(const struct proc *pr, int *errnum)
{
	*errnum = pr->fail_errno;
	return pr->fail_stage;
}

/* The signal that stopped it, 0 while it runs. */
int
proc_stop_signal(const struct proc *pr)
{
	return pr->stop_signal;
}

/* Whether its tree is in a cgroup of its own. */
bool
proc_contained(const struct proc *pr)
{
	return pr->cg != NULL;
}

/* Whether it is a keeper a dead daemon left, which this one adopted. */
bool
proc_adopted(const struct proc *pr)
{
	return pr->adopted;
}

/* The name of its tree's cgroup, for a session's record; or NULL. */
const char *
proc_cgroup(const struct proc *pr)
{
	return pr->cg != NULL ? cgroup_name(pr->cg) : NULL;
}

/* A graceful quit was asked of it, or of the debugger before it. */
void
proc_mark_quit(struct proc *pr)
{
	pr->quit_asked = true;
}

/* Its quit detached a target that lives on: it ended by "detach". */
void
proc_mark_detached(struct proc *pr)
{
	pr->quit_detached = true;
}
