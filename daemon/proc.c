/* Keeper processes: the one place that spawns, talks to keepers and sees them exit. */
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "proc.h"

/* How long past its stop deadline a keeper may take before it is killed. */
#define PROC_WATCHDOG_GRACE 2000
/* How often a keeper that has not said started yet is looked at. */
#define PROC_START_CHECK 1000

/* Every keeper record, until freed. */
static TAILQ_HEAD(, proc) proc_all = TAILQ_HEAD_INITIALIZER(proc_all);

static void	proc_signal_keeper(struct proc *, int);

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
	/* Then the window a graceful stop has to end. */
	if (sp->hangup) {
		argv_push(&av, "--hangup");
		argv_pushf(&av, "%ld", sp->stop_timeout > 0 ?
		    sp->stop_timeout : 1);
	}
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
	if (sp->fd_listen != -1) {
		argv_push(&av, "--keep-fd");
		argv_pushf(&av, "%d", PROC_FD_LISTEN);
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
static void
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
static void
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
 * How a process ended, from what its keeper had done by then: nothing
 * means it ended by itself, or by the quit asked of it, which may have
 * detached a target rather than ended it.
 */
static const char *
proc_end_cause(const struct proc *pr, const char *how)
{
	if (strcmp(how, "term") == 0)
		return "term";
	if (strcmp(how, "kill") == 0)
		return "kill";
	if (pr->quit_asked)
		return pr->quit_detached ? "detach" : "quit";
	return "exit";
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
	char		 path[64], stat[512], *p;
	ssize_t		 n = -1;
	int		 fd;

	if (!pr->keeper_live)
		return;
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pr->keeper_pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, stat, sizeof stat);
		close(fd);
	}
	/* The state follows the last ')': the name may hold any byte. */
	p = n > 0 ? memrchr(stat, ')', n) : NULL;
	if (p != NULL && p + 2 < stat + n && (p[2] == 'T' || p[2] == 't')) {
		log_warn("keeper %ld was stopped before its program started: "
		    "continuing it", (long)pr->keeper_pid);
		proc_signal_keeper(pr, SIGCONT);
	}
	timer_start(pr->startw, PROC_START_CHECK);
}

/* The keeper said how the start went: no more checks on it. */
static void
proc_start_done(struct proc *pr)
{
	timer_free(pr->startw);
	pr->startw = NULL;
}

/* The words a keeper's lines may hold: where a start failed, how an exit came. */
static const char *const proc_report_stages[] = { "setup", "fork", "chdir",
    "exec", NULL };
static const char *const proc_report_hows[] = { "run", "term", "kill", NULL };

/*
 * A decimal from min to max, as the keeper writes one (no sign, no
 * leading zero), at *p and followed by a space or the line's end; -1 if
 * there is none. *p moves past it.
 */
static long
proc_report_number(const char **p, const char *end, long min, long max)
{
	const char	*s = *p;
	long		 v = 0;

	for (; *p < end && **p >= '0' && **p <= '9'; (*p)++) {
		if (*p > s && *s == '0')
			return -1;
		if ((v = v * 10 + (**p - '0')) > max)
			return -1;
	}
	if (*p == s || v < min || (*p < end && **p != ' '))
		return -1;
	return v;
}

/* One of words at *p, followed by a space or the line's end, into out; -1 if none. */
static int
proc_report_word(const char **p, const char *end, const char *const *words,
    char *out, size_t outlen)
{
	size_t	n;

	for (; *words != NULL; words++) {
		n = strlen(*words);
		if ((size_t)(end - *p) < n || memcmp(*p, *words, n) != 0 ||
		    (*p + n < end && (*p)[n] != ' '))
			continue;
		strlcpy(out, *words, outlen);
		*p += n;
		return 0;
	}
	return -1;
}

/* Whether the literal lit is at *p; *p moves past it. */
static bool
proc_report_lit(const char **p, const char *end, const char *lit)
{
	size_t	n = strlen(lit);

	if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
		return false;
	*p += n;
	return true;
}

/*
 * Read one line of a keeper, exactly as the keeper writes it: "started
 * PID", "failed STAGE ERRNO", "exit code N HOW", "exit signal N HOW",
 * "stopped signal N" or "continued", each number in the range it can
 * have; 0, or -1 if the line is not one.
 */
int
proc_report_parse(const char *line, size_t len, struct proc_report *r)
{
	const char	*p = line, *end = line + len;

	memset(r, 0, sizeof *r);
	if (proc_report_lit(&p, end, "started ")) {
		r->kind = PROC_REPORT_STARTED;
		r->n = proc_report_number(&p, end, 1, INT_MAX);
	} else if (proc_report_lit(&p, end, "failed ")) {
		r->kind = PROC_REPORT_FAILED;
		if (proc_report_word(&p, end, proc_report_stages, r->word,
		    sizeof r->word) != 0 || !proc_report_lit(&p, end, " "))
			return -1;
		r->n = proc_report_number(&p, end, 0, PROC_REPORT_ERRNO_MAX);
	} else if (proc_report_lit(&p, end, "exit ")) {
		r->kind = PROC_REPORT_EXIT;
		if (proc_report_lit(&p, end, "code "))
			r->n = proc_report_number(&p, end, 0, 255);
		else if (proc_report_lit(&p, end, "signal ")) {
			r->signal = true;
			r->n = proc_report_number(&p, end, 1, 127);
		} else
			return -1;
		if (r->n == -1 || !proc_report_lit(&p, end, " ") ||
		    proc_report_word(&p, end, proc_report_hows, r->how,
		    sizeof r->how) != 0)
			return -1;
	} else if (proc_report_lit(&p, end, "stopped signal ")) {
		r->kind = PROC_REPORT_STOPPED;
		r->signal = true;
		r->n = proc_report_number(&p, end, 1, 127);
	} else if (proc_report_lit(&p, end, "continued"))
		r->kind = PROC_REPORT_CONTINUED;
	else
		return -1;
	return r->n == -1 || p != end ? -1 : 0;
}

/*
 * The parent and state of pid from /proc/PID/stat; -1 if there is no such
 * process (any longer).
 */
static int
proc_stat_of(pid_t pid, pid_t *ppid, char *state)
{
	char	 path[64], buf[512], *p;
	ssize_t	 n = -1;
	long	 pp;
	int	 fd;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
	}
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The state follows the last ')': the name may hold any byte. */
	if ((p = memrchr(buf, ')', n)) == NULL || sscanf(p + 1, " %c %ld",
	    state, &pp) != 2)
		return -1;
	*ppid = (pid_t)pp;
	return 0;
}

/*
 * Whether pid can be the program the keeper started: gone already (it may
 * end before the line is read, or be a zombie being released, whose parent
 * reads 0), the keeper's child, or the daemon's once the keeper has died;
 * never a keeper.
 */
static bool
proc_report_is_child(const struct proc *pr, pid_t pid)
{
	pid_t	ppid, kp;
	char	state, kstate;

	if (pid == pr->keeper_pid || proc_keepers_has(pid))
		return false;
	if (proc_stat_of(pid, &ppid, &state) != 0 || ppid == pr->keeper_pid)
		return true;
	/* A program that ended as it was reaped reads Z with no parent. */
	if (state == 'Z' || state == 'X')
		return true;
	return ppid == getpid() && (proc_stat_of(pr->keeper_pid, &kp,
	    &kstate) != 0 || kstate == 'Z');
}

/*
 * Why what a keeper says contradicts what the daemon knows, or NULL: a
 * start is said once, before any exit, and names the keeper's child; an
 * exit follows a start, once, when the program is no longer the keeper's
 * unreaped child.
 */
static const char *
proc_report_check(const struct proc *pr, const struct proc_report *r)
{
	pid_t	ppid;
	char	state;

	/* A stop or continue is of the running program: a hint, checked so. */
	if (r->kind == PROC_REPORT_STOPPED || r->kind == PROC_REPORT_CONTINUED)
		return pr->pid == 0 ? "a stop before a start" : pr->have_exit ?
		    "a stop after the exit" : NULL;
	if (r->kind != PROC_REPORT_EXIT) {
		if (pr->pid != 0 || pr->fail_stage[0] != '\0')
			return "a second start";
		if (r->kind == PROC_REPORT_STARTED &&
		    !proc_report_is_child(pr, (pid_t)r->n))
			return "not a pid of its child";
		return NULL;
	}
	if (pr->pid == 0)
		return "an exit before a start";
	if (pr->have_exit)
		return "a second exit";
	if (proc_stat_of(pr->pid, &ppid, &state) == 0 &&
	    ppid == pr->keeper_pid)
		return "an exit while its program is not yet reaped";
	return NULL;
}

/*
 * The keeper's control socket carried a line that cannot be the keeper's:
 * a target that stole it (pidfd_getfd) can write there. Such lines are
 * dropped, the first logged; the tree's end is proved by the keeper's exit
 * and the containment, never by what is said here.
 */
static void
proc_report_refuse(struct proc *pr, const char *line, size_t len,
    const char *why)
{
	char	shown[65];
	size_t	i;

	if (pr->lied)
		return;
	pr->lied = true;
	for (i = 0; i < len && i + 1 < sizeof shown; i++)
		shown[i] = line[i] >= ' ' && line[i] <= '~' ? line[i] : '?';
	shown[i] = '\0';
	log_warn("keeper %ld: ignored \"%s\"%s (%s), and from now on every "
	    "line that contradicts what the daemon knows", (long)pr->keeper_pid,
	    shown, i < len ? "..." : "", why);
}

/* Act on one line the keeper sent, once it is one the keeper can have sent. */
static int
proc_line(void *arg, char *line, size_t len)
{
	struct proc		*pr = arg;
	struct proc_report	 r;
	const char		*why;
	pid_t			 ppid;
	char			 state;

	if (pr->freed)
		return 1;
	if (pr->ctl_frame.cut)
		why = "a line longer than a keeper's";
	else if (proc_report_parse(line, len, &r) != 0)
		why = "not a line of a keeper";
	else
		why = proc_report_check(pr, &r);
	if (why != NULL) {
		proc_report_refuse(pr, line, len, why);
		return 0;
	}
	switch (r.kind) {
	case PROC_REPORT_STARTED:
		pr->pid = (pid_t)r.n;
		proc_start_done(pr);
		pr->cb(pr->arg, pr, PROC_STARTED);
		return 0;
	case PROC_REPORT_FAILED:
		strlcpy(pr->fail_stage, r.word, sizeof pr->fail_stage);
		pr->fail_errno = (int)r.n;
		proc_start_done(pr);
		pr->cb(pr->arg, pr, PROC_FAILED);
		return 0;
	case PROC_REPORT_EXIT:
		if (r.signal)
			pr->exit_signal = (int)r.n;
		else
			pr->exit_code = (int)r.n;
		pr->ended_by = proc_end_cause(pr, r.how);
		pr->have_exit = true;
		pr->cb(pr->arg, pr, PROC_EXITED);
		return 0;
	case PROC_REPORT_STOPPED:
		/* Believed only of a program that is stopped (or gone) now. */
		if (proc_stat_of(pr->pid, &ppid, &state) == 0 && state != 'T' &&
		    state != 't')
			return 0;
		pr->stop_signal = (int)r.n;
		pr->cb(pr->arg, pr, PROC_STOPPED);
		return 0;
	case PROC_REPORT_CONTINUED:
		pr->stop_signal = 0;
		pr->cb(pr->arg, pr, PROC_CONTINUED);
		return 0;
	}
	log_fatal("keeper report %d", r.kind);
}

/* Read the keeper's reports; EOF means it is gone or going. */
static void
proc_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct proc *pr = st->data;

	if (nread > 0) {
		/* Long lines are cut (frame_cut): never an overflow. */
		(void)frame_feed(&pr->ctl_frame, buf->base, nread, proc_line,
		    pr);
		/* A keeper says a line or two in its life: hold no buffer between. */
		frame_trim(&pr->ctl_frame);
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
	if (waitid((idtype_t)P_PIDFD, (id_t)pr->pidfd, &info,
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

/*
 * A copy of fd at 10 or above, so that no dup2 of the spawn's file actions
 * lands on a descriptor another one still reads from; -1 with errno.
 */
static int
proc_high_fd(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

/*
 * The keeper's descriptors, each at its number: the pty's slave on 0, 1
 * and 2, its control socket on 3, the transport on 4 and 5, a server's
 * listening socket on 6; how many.
 */
static int
proc_keeper_fds(const struct proc_spec *sp, int ctl, int src[SPAWN_SLOTS],
    int target[SPAWN_SLOTS])
{
	int	n = 0, i;

	for (i = 0; i < 3; i++) {
		src[n] = sp->tty;
		target[n++] = i;
	}
	src[n] = ctl;
	target[n++] = 3;
	if (sp->fd_in != -1) {
		src[n] = sp->fd_in;
		target[n++] = PROC_FD_IN;
		src[n] = sp->fd_out;
		target[n++] = PROC_FD_OUT;
	}
	if (sp->fd_listen != -1) {
		src[n] = sp->fd_listen;
		target[n++] = PROC_FD_LISTEN;
	}
	return n;
}

/*
 * Start the keeper with proc_keeper_fds' descriptors, signals back to
 * their defaults and none blocked: by spawn_keeper, which copies neither
 * the daemon nor its descriptors, else by posix_spawn, which copies the
 * descriptors only (glibc uses a vfork-like clone); its pid, or -1 with
 * errno.
 */
static pid_t
proc_start_keeper(const struct proc_spec *sp, char **kav, int ctl)
{
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 attr;
	sigset_t			 all, none;
	int				 src[SPAWN_SLOTS], target[SPAWN_SLOTS];
	int				 high[SPAWN_SLOTS];
	int				 i, n, rc = 0;
	pid_t				 pid = -1;

	n = proc_keeper_fds(sp, ctl, src, target);
	/* The way that copies no descriptor table, where the kernel has it. */
	if ((pid = spawn_keeper(kav[0], kav, sp->env, src, target, n)) != 0)
		return pid;
	pid = -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	for (i = 0; i < n; i++)
		if ((high[i] = proc_high_fd(src[i])) == -1)
			rc = errno;
	if (rc == 0) {
		for (i = 0; i < n; i++)
			posix_spawn_file_actions_adddup2(&fa, high[i],
			    target[i]);
		/* The daemon ignores SIGPIPE and SIGHUP; the keeper must not. */
		sigfillset(&all);
		sigemptyset(&none);
		posix_spawnattr_setsigdefault(&attr, &all);
		posix_spawnattr_setsigmask(&attr, &none);
		posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF |
		    POSIX_SPAWN_SETSIGMASK);
		rc = posix_spawn(&pid, kav[0], &fa, &attr, kav, sp->env);
	}
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	for (i = 0; i < n; i++)
		if (high[i] != -1)
			close(high[i]);
	errno = rc;
	return rc == 0 ? pid : -1;
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

/* Start a keeper running sp->argv; the one spawn function. */
struct proc *
proc_spawn(const struct proc_spec *sp, const char *keeper, proc_cb cb,
    void *arg, char *err, size_t errlen)
{
	struct proc	*pr = xcalloc(1, sizeof *pr);
	char	       **kav;
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
	kav = proc_keeper_argv(sp, keeper, pr->cg);
	pid = proc_start_keeper(sp, kav, sv[1]);
	argv_free(kav);
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
	pr->freed = false;
	pr->keeper_live = true;
	pr->keeper_pid = pid;
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
