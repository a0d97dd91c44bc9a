/*
 * What a keeper says on its control socket: each line read exactly as the
 * keeper writes it, checked against what the daemon knows before it is
 * believed (a target that stole the socket can write there too), then told
 * to the record's owner.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "proc.h"

/*
 * How a process ended, from what its keeper had done by then: nothing
 * means it ended by itself, or by the quit asked of it, which may have
 * detached a target rather than ended it.
 */
static const char *
proc_report_cause(const struct proc *pr, const char *how)
{
	if (strcmp(how, "term") == 0)
		return "term";
	if (strcmp(how, "kill") == 0)
		return "kill";
	if (pr->quit_asked)
		return pr->quit_detached ? "detach" : "quit";
	return "exit";
}

/* The keeper said how the start went: no more checks on it. */
static void
proc_report_start_done(struct proc *pr)
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
int
proc_report_stat(pid_t pid, pid_t *ppid, char *state)
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
	if (proc_report_stat(pid, &ppid, &state) != 0 || ppid == pr->keeper_pid)
		return true;
	/* A program that ended as it was reaped reads Z with no parent. */
	if (state == 'Z' || state == 'X')
		return true;
	return ppid == getpid() && (proc_report_stat(pr->keeper_pid, &kp,
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
	if (proc_report_stat(pr->pid, &ppid, &state) == 0 &&
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
proc_report_line(void *arg, char *line, size_t len)
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
		proc_report_start_done(pr);
		pr->cb(pr->arg, pr, PROC_STARTED);
		return 0;
	case PROC_REPORT_FAILED:
		strlcpy(pr->fail_stage, r.word, sizeof pr->fail_stage);
		pr->fail_errno = (int)r.n;
		proc_report_start_done(pr);
		pr->cb(pr->arg, pr, PROC_FAILED);
		return 0;
	case PROC_REPORT_EXIT:
		if (r.signal)
			pr->exit_signal = (int)r.n;
		else
			pr->exit_code = (int)r.n;
		pr->ended_by = proc_report_cause(pr, r.how);
		pr->have_exit = true;
		pr->cb(pr->arg, pr, PROC_EXITED);
		return 0;
	case PROC_REPORT_STOPPED:
		/* Believed only of a program that is stopped (or gone) now. */
		if (proc_report_stat(pr->pid, &ppid, &state) == 0 &&
		    state != 'T' && state != 't')
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

/*
 * Act on what an adopted keeper said of its program in its snapshot, as
 * if it said it now: the lines are checked like any other.
 */
void
proc_replay(struct proc *pr, const char *lines, size_t len)
{
	(void)frame_feed(&pr->ctl_frame, lines, len, proc_report_line, pr);
	frame_trim(&pr->ctl_frame);
}

/* Read the keeper's reports; EOF means it is gone or going. */
void
proc_report_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct proc *pr = st->data;

	if (nread > 0) {
		/* Long lines are cut (frame_cut): never an overflow. */
		(void)frame_feed(&pr->ctl_frame, buf->base, nread, proc_report_line,
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
