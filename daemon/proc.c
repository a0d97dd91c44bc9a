/* Keeper processes: the one place that spawns, talks to keepers and sees them exit. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* Build the keeper's own argv around the process's. */
static char **
proc_keeper_argv(const struct proc_spec *sp, const char *keeper,
    const struct cgroup *cg)
{
	struct argv	 av = { 0 };
	char	       **p;

	argv_push(&av, keeper);
	argv_push(&av, "--cwd");
	argv_push(&av, sp->cwd);
	argv_push(&av, "--stop-timeout");
	argv_pushf(&av, "%ld", sp->stop_timeout);
	if (cg != NULL) {
		argv_push(&av, "--cgroup");
		argv_push(&av, cgroup_path(cg));
	}
	if (dmn.nofile_orig != 0 && dmn.nofile_orig < dmn.nofile) {
		argv_push(&av, "--nofile");
		argv_pushf(&av, "%lu", dmn.nofile_orig);
	}
	if (sp->fd_in != -1) {
		argv_push(&av, sp->stdio ? "--stdin-fd" : "--keep-fd");
		argv_pushf(&av, "%d", PROC_FD_IN);
		argv_push(&av, sp->stdio ? "--stdout-fd" : "--keep-fd");
		argv_pushf(&av, "%d", PROC_FD_OUT);
	}
	argv_push(&av, "--");
	for (p = sp->argv; *p != NULL; p++)
		argv_push(&av, *p);
	return av.v;
}

/* Free the record once the owner let go and libuv has closed both handles. */
static void
proc_maybe_free(struct proc *pr)
{
	if (!pr->freed || pr->handles > 0)
		return;
	TAILQ_REMOVE(&dmn.procs, pr, entry);
	timer_free(pr->watchdog);
	cgroup_close(pr->cg);
	free(pr->exec_name);
	free(pr);
}

/* One of the two handles is closed. */
static void
proc_handle_closed(uv_handle_t *h)
{
	struct proc *pr = h->data;

	pr->handles--;
	proc_maybe_free(pr);
}

/*
 * Tell the owner, once, when nothing of the process is left: the keeper
 * has exited, and its cgroup is empty or, without one, no orphan of a
 * dead keeper is still alive.
 */
static void
proc_check_gone(struct proc *pr)
{
	if (pr->gone || pr->keeper_live || pr->ctl_open || pr->freed)
		return;
	if (pr->cg != NULL ? !pr->cg_empty : dmn.orphans > 0)
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

/* Whether pid is a live keeper of the daemon's (not an orphan). */
bool
proc_is_keeper(pid_t pid)
{
	struct proc *pr;

	TAILQ_FOREACH(pr, &dmn.procs, entry)
		if (pr->keeper_live && pr->keeper_pid == pid)
			return true;
	return false;
}

/* The last orphan is reaped: keepers that died may now be gone. */
void
proc_orphans_gone(void)
{
	struct proc *pr, *next;

	TAILQ_FOREACH_SAFE(pr, &dmn.procs, entry, next)
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
	(void)uv_process_kill(&pr->keeper, SIGCONT);
	(void)uv_process_kill(&pr->keeper, SIGKILL);
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
 * How a process ended, from what its keeper had done by then: nothing
 * means it ended by itself, or by the quit asked of it.
 */
static const char *
proc_ended_by(const struct proc *pr, const char *how)
{
	if (strcmp(how, "term") == 0)
		return "term";
	if (strcmp(how, "kill") == 0)
		return "kill";
	return pr->quit_asked ? "quit" : "exit";
}

/* Act on one line the keeper sent. */
static int
proc_line(void *arg, char *line, size_t len)
{
	struct proc	*pr = arg;
	long		 a;
	int		 b;
	char		 how[8];

	(void)len;
	if (pr->freed)
		return 1;
	if (sscanf(line, "started %ld", &a) == 1) {
		pr->pid = (pid_t)a;
		pr->cb(pr->arg, pr, PROC_STARTED);
		return 0;
	}
	if (sscanf(line, "failed %31s %d", pr->fail_stage, &b) == 2) {
		pr->fail_errno = b;
		pr->cb(pr->arg, pr, PROC_FAILED);
		return 0;
	}
	if (sscanf(line, "exit code %d %7s", &b, how) == 2)
		pr->exit_code = b;
	else if (sscanf(line, "exit signal %d %7s", &b, how) == 2)
		pr->exit_signal = b;
	else {
		log_warn("keeper %ld said \"%s\"", (long)pr->keeper_pid, line);
		return 0;
	}
	pr->ended_by = proc_ended_by(pr, how);
	pr->have_exit = true;
	pr->cb(pr->arg, pr, PROC_EXITED);
	return 0;
}

/* Read the keeper's reports; EOF means it is gone or going. */
static void
proc_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct proc *pr = st->data;

	if (nread > 0) {
		if (frame_feed(&pr->ctl_frame, buf->base, nread, proc_line,
		    pr) == FRAME_OVERFLOW)
			log_warn("keeper %ld sent garbage",
			    (long)pr->keeper_pid);
		return;
	}
	if (nread == 0)
		return;
	uv_read_stop(st);
	uv_close((uv_handle_t *)st, proc_handle_closed);
	pr->ctl_open = false;
	frame_free(&pr->ctl_frame);
	proc_check_gone(pr);
}

/* The keeper exited: nothing it started is alive. */
static void
proc_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct proc *pr = p->data;

	pr->keeper_live = false;
	uv_close((uv_handle_t *)p, proc_handle_closed);
	if (status != 0 || sig != 0)
		log_warn("keeper %ld ended badly (status %ld, signal %d)",
		    (long)pr->keeper_pid, (long)status, sig);
	/* A keeper that exits has ended its tree, unless it was killed. */
	if (pr->cg != NULL && cgroup_populated(pr->cg))
		cgroup_kill(pr->cg);
	else if (pr->cg != NULL)
		pr->cg_empty = true;
	/* One that exits 0 has reaped all it started: no orphan to look for. */
	if (status != 0 || sig != 0)
		orphan_check();
	proc_check_gone(pr);
}

/* Start a keeper running sp->argv; the one spawn function. */
struct proc *
proc_spawn(const struct proc_spec *sp, const char *keeper, proc_cb cb,
    void *arg, char *err, size_t errlen)
{
	struct proc		*pr = xcalloc(1, sizeof *pr);
	uv_process_options_t	 opt;
	uv_stdio_container_t	 stdio[6];
	char		       **kav;
	int			 rc, i;

	pr->cb = cb;
	pr->arg = arg;
	pr->exec_name = xstrdup(sp->argv[0]);
	TAILQ_INSERT_TAIL(&dmn.procs, pr, entry);
	if (sp->cgroup != NULL)
		pr->cg = cgroup_open(sp->cgroup, proc_cgroup_empty, pr);
	kav = proc_keeper_argv(sp, keeper, pr->cg);
	memset(&opt, 0, sizeof opt);
	for (i = 0; i < 3; i++) {
		stdio[i].flags = UV_INHERIT_FD;
		stdio[i].data.fd = sp->tty;
	}
	uv_pipe_init(dmn.loop, &pr->ctl, 0);
	pr->ctl.data = pr;
	stdio[3].flags = UV_CREATE_PIPE | UV_READABLE_PIPE | UV_WRITABLE_PIPE;
	stdio[3].data.stream = (uv_stream_t *)&pr->ctl;
	opt.file = kav[0];
	opt.args = kav;
	opt.env = sp->env;
	opt.stdio = stdio;
	opt.stdio_count = 4;
	if (sp->fd_in != -1) {
		stdio[PROC_FD_IN].flags = UV_INHERIT_FD;
		stdio[PROC_FD_IN].data.fd = sp->fd_in;
		stdio[PROC_FD_OUT].flags = UV_INHERIT_FD;
		stdio[PROC_FD_OUT].data.fd = sp->fd_out;
		opt.stdio_count = 6;
	}
	opt.exit_cb = proc_exit_cb;
	pr->keeper.data = pr;
	rc = uv_spawn(dmn.loop, &pr->keeper, &opt);
	argv_free(kav);
	pr->handles = 2;
	if (rc != 0) {
		snprintf(err, errlen, "spawn %s: %s", keeper, uv_strerror(rc));
		pr->freed = true;
		uv_close((uv_handle_t *)&pr->keeper, proc_handle_closed);
		uv_close((uv_handle_t *)&pr->ctl, proc_handle_closed);
		return NULL;
	}
	pr->keeper_live = true;
	pr->keeper_pid = pr->keeper.pid;
	pr->ctl_open = true;
	frame_init(&pr->ctl_frame, 4096);
	uv_read_start((uv_stream_t *)&pr->ctl, loop_alloc_cb, proc_read_cb);
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
