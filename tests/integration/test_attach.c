/*
 * The interactive terminal on real ptys: dbgctl attach and launch --attach
 * driven through a pseudo-terminal the test owns, as a user at a terminal
 * would drive them. Checked: ^C reaches gdb's inferior, ^\ (or
 * --detach-key) detaches, the terminal's modes are bit-identical after
 * every way out (detach, session end, SIGTERM/SIGHUP/SIGINT, ^Z and
 * continue, the daemon killed), the window size reaches the program,
 * several clients see the same output, and the replay on attach.
 *
 * Each client runs the way an interactive shell runs a job: a small
 * "shell" process (forked here, never returning into Criterion) is the
 * session leader with the test's pty as controlling terminal; the client is
 * its child in a process group of its own, made the foreground group. The
 * client's group is then not orphaned, so a SIGTSTP really stops it (the
 * kernel discards SIGTSTP's stop for an orphaned group, which a client
 * that is itself the session leader would be), and SIGWINCH from a
 * TIOCSWINSZ on the master reaches it.
 *
 * Fixtures (meson passes their paths): FIX_ECHO prints its arguments and
 * copies stdin; FIX_SPINNER prints "spinning" and loops forever.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

TestSuite(attach, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 60);

/* The detach key of attach and launch --attach (^\). */
#define KEY_DETACH	"\x1c"

/* One client on a pty of the test's own. */
struct ptc {
	int		 master;	/* the test's side: what the user sees */
	int		 slave;		/* kept open: tcgetattr, no EIO */
	pid_t		 shell;		/* session leader, the client's parent */
	pid_t		 pid;		/* the client */
	int		 stfd;		/* from the shell: client pid, then status */
	struct termios	 before;	/* the modes before the client ran */
	struct h_bytes	 seen;		/* all read from the master */
	bool		 done;		/* the client's status is in */
	int		 status;	/* its wait status */
	char		 cmd[1024];	/* the command line, for messages */
};

/* Describe a wait status in words, for messages. */
static const char *
wstatus(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
		    strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "wait status 0x%x", st);
	return buf;
}

/* An exec session running sh -c SCRIPT; its id, also as a string in ids. */
static long
launch_sh(const char *script, char *ids, size_t len)
{
	long id = h_cli_launch_exec(NULL, H_ARGS("/bin/sh", "-c", script));

	h_idstr(id, ids, len);
	return id;
}

/*
 * A pty with distinctive modes (^H erase, ^K kill, VMIN 3, VTIME 2, IXANY,
 * ECHOCTL, ECHOKE) and a window size of rows x cols, its modes recorded as
 * p->before.
 */
static void
pt_open(struct ptc *p, unsigned rows, unsigned cols)
{
	struct winsize ws = { 0 };
	struct termios t;

	memset(p, 0, sizeof(*p));
	p->shell = p->pid = -1;
	p->stfd = -1;
	p->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(p->master, 0, "posix_openpt: %s", strerror(errno));
	cr_assert_eq(grantpt(p->master), 0, "grantpt: %s", strerror(errno));
	cr_assert_eq(unlockpt(p->master), 0, "unlockpt: %s", strerror(errno));
	p->slave = ioctl(p->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(p->slave, 0, "TIOCGPTPEER: %s", strerror(errno));

	cr_assert_eq(tcgetattr(p->slave, &t), 0, "tcgetattr: %s",
	    strerror(errno));
	t.c_cc[VERASE] = 0x08;
	t.c_cc[VKILL] = 0x0b;
	t.c_cc[VMIN] = 3;
	t.c_cc[VTIME] = 2;
	t.c_iflag |= IXANY;
	t.c_lflag |= ECHOCTL | ECHOKE | ECHOE;
	cr_assert_eq(tcsetattr(p->slave, TCSANOW, &t), 0, "tcsetattr: %s",
	    strerror(errno));
	cr_assert_eq(tcgetattr(p->slave, &p->before), 0, "tcgetattr: %s",
	    strerror(errno));
	cr_assert(p->before.c_cc[VERASE] == 0x08 &&
	    p->before.c_cc[VMIN] == 3 && (p->before.c_iflag & IXANY) &&
	    (p->before.c_lflag & ICANON) && (p->before.c_lflag & ECHO),
	    "the test pty did not take its distinctive cooked modes");

	ws.ws_row = (unsigned short)rows;
	ws.ws_col = (unsigned short)cols;
	cr_assert_eq(ioctl(p->master, TIOCSWINSZ, &ws), 0, "TIOCSWINSZ: %s",
	    strerror(errno));
	fcntl(p->master, F_SETFL, fcntl(p->master, F_GETFL) | O_NONBLOCK);
}

/* Write all of buf to fd, ignoring errors (in a child, before _exit). */
static void
child_write(int fd, const void *buf, size_t len)
{
	while (write(fd, buf, len) == -1 && errno == EINTR)
		;
}

/*
 * Start dbgctl -s SOCK ARGS... on the pty, as a job of a shell-like
 * session leader (see the top of the file). Returns once its pid is known.
 */
static void
pt_spawn(struct ptc *p, const char *const args[])
{
	static const int sigs[] = { SIGINT, SIGQUIT, SIGTSTP, SIGTTIN,
	    SIGTTOU, SIGHUP, SIGPIPE, SIGTERM, SIGWINCH, SIGCHLD };
	const char **v = h_cli_argv(args);
	struct pollfd pfd;
	sigset_t none;
	pid_t shell, job;
	int st[2], ws;
	ssize_t n;
	size_t k;

	h_join_args(args, p->cmd, sizeof(p->cmd));

	cr_assert_eq(pipe2(st, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	shell = fork();
	cr_assert_neq(shell, -1, "fork: %s", strerror(errno));
	if (shell == 0) {
		/* The "shell": never returns into Criterion. */
		close(st[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setsid() == -1 || ioctl(p->slave, TIOCSCTTY, 0) == -1)
			_exit(126);
		for (k = 0; k < sizeof(sigs) / sizeof(*sigs); k++)
			if (sigs[k] != SIGCHLD)
				signal(sigs[k], SIG_IGN);
		job = fork();
		if (job == -1)
			_exit(125);
		if (job == 0) {
			setpgid(0, 0);
			tcsetpgrp(p->slave, getpid());
			for (k = 0; k < sizeof(sigs) / sizeof(*sigs); k++)
				signal(sigs[k], SIG_DFL);
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			dup2(p->slave, 0);
			dup2(p->slave, 1);
			dup2(p->slave, 2);
			execve(v[0], (char *const *)v, H->envp);
			dprintf(2, "exec %s: %s\n", v[0], strerror(errno));
			_exit(127);
		}
		setpgid(job, job);
		tcsetpgrp(p->slave, job);
		child_write(st[1], &job, sizeof(job));
		while (waitpid(job, &ws, 0) == -1 && errno == EINTR)
			;
		child_write(st[1], &ws, sizeof(ws));
		_exit(0);
	}
	close(st[1]);
	free(v);
	p->shell = shell;
	p->stfd = st[0];
	pfd = (struct pollfd){ p->stfd, POLLIN, 0 };
	cr_assert_eq(poll(&pfd, 1, H_WAIT_BOUND), 1, "dbgctl %s: the shell "
	    "process did not report the client's pid", p->cmd);
	n = read(p->stfd, &p->pid, sizeof(p->pid));
	cr_assert_eq(n, (ssize_t)sizeof(p->pid), "dbgctl %s: the shell "
	    "process failed before starting the client", p->cmd);
	fcntl(p->stfd, F_SETFL, fcntl(p->stfd, F_GETFL) | O_NONBLOCK);
}

/* Reap the shell process once it reported; bounded. */
static void
pt_reap_shell(struct ptc *p)
{
	if (p->shell > 0)
		h_run_reap(p->shell, 5000);
	p->shell = -1;
}

/* Read what is there from the master and the status pipe, waiting up to ms. */
static void
pt_pump(struct ptc *p, int ms)
{
	struct pollfd pfd[2];
	char tmp[8192];
	nfds_t n = 0;
	ssize_t r;
	int ws;

	pfd[n++] = (struct pollfd){ p->master, POLLIN, 0 };
	if (!p->done)
		pfd[n++] = (struct pollfd){ p->stfd, POLLIN, 0 };
	if (ms > 0)
		poll(pfd, n, ms);
	for (;;) {
		r = read(p->master, tmp, sizeof(tmp));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		h_bytes_add(&p->seen, tmp, (size_t)r);
	}
	if (!p->done && read(p->stfd, &ws, sizeof(ws)) == (ssize_t)sizeof(ws)) {
		p->done = true;
		p->status = ws;
		pt_reap_shell(p);
	}
}

/*
 * Read the master until text appears at or after offset from, within
 * bound_ms; returns the offset just past it. Fails with what was seen.
 */
static size_t
pt_expect(struct ptc *p, size_t from, const char *text, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	char ws[96];
	const char *hit;
	int left;

	for (;;) {
		if (p->seen.len > from && (hit = memmem(p->seen.p + from,
		    p->seen.len - from, text, strlen(text))) != NULL)
			return (size_t)(hit - p->seen.p) + strlen(text);
		left = (int)((end - h_now()) * 1000);
		if (left <= 0)
			break;
		if (p->done) {
			/* The client is gone: take what is left, then judge. */
			pt_pump(p, 0);
			if (p->seen.len > from && memmem(p->seen.p + from,
			    p->seen.len - from, text, strlen(text)) != NULL)
				continue;
			break;
		}
		pt_pump(p, left < 100 ? left : 100);
	}
	cr_assert_fail("dbgctl %s: expected \"%s\" on its terminal within %d "
	    "ms%s%s; its terminal shows (last bytes):\n%s", p->cmd,
	    h_shown(text, strlen(text), 200), bound_ms,
	    p->done ? "; the client ended: " : "",
	    p->done ? wstatus(p->status, ws, sizeof(ws)) : "",
	    h_shown(p->seen.p ? p->seen.p : "", p->seen.len, 2000));
	return 0;
}

/* Type bytes at the client's terminal. */
static void
pt_type(struct ptc *p, const char *data, size_t len)
{
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	ssize_t w;

	while (len > 0) {
		w = write(p->master, data, len);
		if (w > 0) {
			data += w;
			len -= (size_t)w;
			continue;
		}
		cr_assert(w < 0 && (errno == EINTR || errno == EAGAIN),
		    "writing to the pty master: %s", strerror(errno));
		cr_assert(h_now() < end, "writing to the pty master: no room "
		    "within %d ms", H_WAIT_BOUND);
		pt_pump(p, 10);
	}
}

/* Wait up to bound_ms for the client to end; true if it did. */
static bool
pt_wait_exit(struct ptc *p, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;

	while (!p->done && h_now() < end)
		pt_pump(p, 50);
	pt_pump(p, 0);
	return p->done;
}

/* Assert the client ends within bound_ms with exit code want. */
static void
pt_expect_exit(struct ptc *p, int want, int bound_ms, const char *when)
{
	char ws[96];

	cr_assert(pt_wait_exit(p, bound_ms), "dbgctl %s %s: expected it to "
	    "exit (%d) within %d ms, it is still running; its terminal shows:"
	    "\n%s", p->cmd, when, want, bound_ms,
	    h_shown(p->seen.p ? p->seen.p : "", p->seen.len, 2000));
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == want,
	    "dbgctl %s %s: expected exit %d, got %s; its terminal shows:\n%s",
	    p->cmd, when, want, wstatus(p->status, ws, sizeof(ws)),
	    h_shown(p->seen.p ? p->seen.p : "", p->seen.len, 2000));
}

/* Describe how two sets of modes differ, into buf. */
static const char *
termios_diff(const struct termios *a, const struct termios *b, char *buf,
    size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
#define FLAGDIFF(f) \
	if (a->f != b->f && o < len) \
		o += (size_t)snprintf(buf + o, len - o, " " #f " 0x%x -> 0x%x", \
		    (unsigned)a->f, (unsigned)b->f)
	FLAGDIFF(c_iflag);
	FLAGDIFF(c_oflag);
	FLAGDIFF(c_cflag);
	FLAGDIFF(c_lflag);
#undef FLAGDIFF
	for (i = 0; i < NCCS && o < len; i++)
		if (a->c_cc[i] != b->c_cc[i])
			o += (size_t)snprintf(buf + o, len - o, " c_cc[%d] "
			    "0x%02x -> 0x%02x", i, a->c_cc[i], b->c_cc[i]);
	return buf;
}

/* True if the modes now are bit-identical to the ones recorded before. */
static bool
termios_same(const struct termios *a, const struct termios *b)
{
	return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag &&
	    a->c_cflag == b->c_cflag && a->c_lflag == b->c_lflag &&
	    memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc)) == 0;
}

/* Assert the pty's modes are bit-identical to those before the client. */
static void
pt_expect_restored(struct ptc *p, const char *when)
{
	struct termios now;
	char diff[1024];

	cr_assert_eq(tcgetattr(p->slave, &now), 0, "tcgetattr: %s",
	    strerror(errno));
	cr_assert(termios_same(&p->before, &now), "dbgctl %s %s: the "
	    "terminal's modes are not the ones it had before:%s", p->cmd, when,
	    termios_diff(&p->before, &now, diff, sizeof(diff)));
}

/* True if the pty is in the client's raw mode (no ICANON, no ECHO, no ISIG). */
static bool
pt_is_raw(void *arg)
{
	struct ptc *p = arg;
	struct termios t;

	return tcgetattr(p->slave, &t) == 0 && !(t.c_lflag & ICANON) &&
	    !(t.c_lflag & ECHO) && !(t.c_lflag & ISIG);
}

/* Assert the client has put its terminal in raw mode (within bound_ms). */
static void
pt_expect_raw(struct ptc *p, int bound_ms, const char *when)
{
	struct termios t;

	if (h_wait_for(pt_is_raw, p, bound_ms))
		return;
	tcgetattr(p->slave, &t);
	cr_assert_fail("dbgctl %s %s: expected its terminal in raw mode "
	    "within %d ms, c_lflag is 0x%x (ICANON %s, ECHO %s, ISIG %s)",
	    p->cmd, when, bound_ms, (unsigned)t.c_lflag,
	    t.c_lflag & ICANON ? "on" : "off", t.c_lflag & ECHO ? "on" : "off",
	    t.c_lflag & ISIG ? "on" : "off");
}

/* Let go of the pty client: kill it if it still runs, close the pty. */
static void
pt_close(struct ptc *p)
{
	if (!p->done && p->pid > 0) {
		kill(p->pid, SIGKILL);
		pt_wait_exit(p, 5000);
	}
	if (p->shell > 0) {
		kill(p->shell, SIGKILL);
		pt_reap_shell(p);
	}
	if (p->stfd >= 0)
		close(p->stfd);
	close(p->master);
	close(p->slave);
	free(p->seen.p);
	p->seen.p = NULL;
}

/* Predicate: the pid is stopped (state T in /proc/PID/stat). */
static bool
is_stopped(void *arg)
{
	return h_pid_state(*(pid_t *)arg) == 'T';
}

/*
 * `dbgctl attach ID` on a fresh 30x100 pty p: wait for ready on its
 * terminal, then for raw mode (asserted, saying when). Returns the offset
 * just past ready.
 */
static size_t
pt_attach(struct ptc *p, const char *ids, const char *ready, const char *when)
{
	size_t off;

	pt_open(p, 30, 100);
	pt_spawn(p, H_ARGS("attach", ids));
	off = pt_expect(p, 0, ready, H_WAIT_BOUND);
	pt_expect_raw(p, H_WAIT_BOUND, when);
	return off;
}

/* Type ^\; assert the client exits 0 and the terminal's modes are restored. */
static void
pt_detach(struct ptc *p, const char *when)
{
	pt_type(p, KEY_DETACH, 1);
	pt_expect_exit(p, 0, H_WAIT_BOUND, when);
	pt_expect_restored(p, when);
}

/*
 * An exec session that prints tag once and then idles, and a client
 * attached to it on p whose terminal is raw. Returns the session id.
 */
static long
attached_idle(struct ptc *p, const char *tag, char *ids, size_t idlen)
{
	char script[256];
	long id;

	snprintf(script, sizeof(script), "echo %s; while :; do sleep 1; done",
	    tag);
	id = launch_sh(script, ids, idlen);
	/* The tag can only come back through the attach (replay). */
	pt_attach(p, ids, tag, "once attached");
	return id;
}

/* The Ctrl-C byte interrupts gdb's running inferior; the session runs on. */
Test(attach, ctrl_c_interrupts_gdb_inferior)
{
	const char *spinner = h_ctx_fixture("FIX_SPINNER");
	char ids[32];
	size_t off;
	struct ptc p;
	pid_t inf;
	json_t *st;
	long id;

	id = h_cli_launch(H_ARGS("-x", "run", "--", spinner));
	h_idstr(id, ids, sizeof(ids));
	off = pt_attach(&p, ids, "spinning", "once attached");
	cr_assert(memmem(p.seen.p, p.seen.len, "Program received signal",
	    23) == NULL, "dbgctl attach %s: a signal was reported before ^C "
	    "was typed:\n%s",
	    ids, h_shown(p.seen.p, p.seen.len, 2000));
	st = h_cli_status(id);
	inf = (pid_t)h_jint(st, "inferior_pid", -1);
	json_decref(st);

	pt_type(&p, "\x03", 1);
	pt_expect(&p, off, "Program received signal SIGINT", H_WAIT_BOUND);
	h_cli_wait_log(ids, "Program received signal SIGINT", H_WAIT_BOUND);
	h_cli_expect_state(id, "running", "after ^C");
	if (inf > 0)
		cr_assert(!h_pid_gone(inf), "inferior %d died of the ^C that "
		    "gdb should have stopped it with", inf);
	cr_assert(!p.done, "dbgctl attach %s ended on ^C: the byte should go "
	    "to the session, not signal the client", ids);

	pt_detach(&p, "after ^\\");
	pt_close(&p);
}

/* Ctrl-\ detaches: exit 0, the session runs on, the modes are identical. */
Test(attach, detach_key_restores_terminal)
{
	char ids[32];
	struct ptc p;
	long id;

	id = attached_idle(&p, "idle-ready", ids, sizeof(ids));
	pt_type(&p, KEY_DETACH, 1);
	pt_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\");
	pt_expect_restored(&p, "after ^\\");
	h_cli_expect_state(id, "running", "after a detach");
	pt_close(&p);

	/* It can be attached again: the detach left nothing behind. */
	pt_attach(&p, ids, "idle-ready", "on a second attach");
	pt_detach(&p, "after ^\\ (second attach)");
	pt_close(&p);
}

/* --detach-key: ^\ then reaches the session (SIGQUIT), ^A detaches. */
Test(attach, detach_key_option)
{
	char ids[32];
	size_t off;
	struct ptc p;
	long id;

	id = launch_sh("trap 'echo got-quit' QUIT; echo quit-ready; "
	    "while :; do sleep 0.1; done", ids, sizeof(ids));
	pt_open(&p, 30, 100);
	pt_spawn(&p, H_ARGS("attach", "--detach-key", "^A", ids));
	off = pt_expect(&p, 0, "quit-ready", H_WAIT_BOUND);
	pt_expect_raw(&p, H_WAIT_BOUND, "once attached");
	pt_type(&p, KEY_DETACH, 1);
	pt_expect(&p, off, "got-quit", H_WAIT_BOUND);
	cr_assert(!p.done, "dbgctl %s: ^\\ detached although --detach-key ^A "
	    "was given", p.cmd);
	pt_type(&p, "\x01", 1);
	pt_expect_exit(&p, 0, H_WAIT_BOUND, "after ^A");
	pt_expect_restored(&p, "after ^A");
	h_cli_expect_state(id, "running", "after a detach with ^A");
	pt_close(&p);
}

/* The session ends while attached: the client exits with its status. */
Test(attach, session_end_exits_with_status)
{
	char ids[32];
	struct ptc p;

	launch_sh("echo end-ready; read x; exit 7", ids, sizeof(ids));
	pt_attach(&p, ids, "end-ready", "once attached");
	pt_type(&p, "go\r", 3);
	pt_expect_exit(&p, 7, H_WAIT_BOUND, "when its session exits 7");
	pt_expect_restored(&p, "after the session ended");
	pt_close(&p);
}

/* A signal to the attached client: restored, then it dies of that signal. */
static void
dies_of(int sig)
{
	char ids[32], ws[96], when[64];
	struct ptc p;
	long id;

	id = attached_idle(&p, "sig-ready", ids, sizeof(ids));
	snprintf(when, sizeof(when), "after SIG%s", sigabbrev_np(sig));
	cr_assert_eq(kill(p.pid, sig), 0, "kill: %s", strerror(errno));
	cr_assert(pt_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still running "
	    "%d ms after SIG%s", p.cmd, H_WAIT_BOUND, sigabbrev_np(sig));
	cr_assert(WIFSIGNALED(p.status) && WTERMSIG(p.status) == sig,
	    "dbgctl %s %s: expected it to die of SIG%s, got %s; its terminal "
	    "shows:\n%s", p.cmd, when, sigabbrev_np(sig),
	    wstatus(p.status, ws, sizeof(ws)),
	    h_shown(p.seen.p, p.seen.len, 2000));
	pt_expect_restored(&p, when);
	h_cli_expect_state(id, "running", when);
	pt_close(&p);
}

Test(attach, sigterm_restores_and_dies)
{
	dies_of(SIGTERM);
}

Test(attach, sighup_restores_and_dies)
{
	dies_of(SIGHUP);
}

Test(attach, sigint_restores_and_dies)
{
	dies_of(SIGINT);
}

/*
 * SIGTSTP: restored while stopped, raw again after SIGCONT, still attached,
 * restored identically on detach.
 */
Test(attach, sigtstp_restores_while_stopped)
{
	char ids[32], diff[1024];
	struct termios now;
	size_t off;
	struct ptc p;
	long id;

	id = launch_sh("echo tstp-ready; while read l; do echo got-$l; done",
	    ids, sizeof(ids));
	off = pt_attach(&p, ids, "tstp-ready", "once attached");

	cr_assert_eq(kill(p.pid, SIGTSTP), 0, "kill: %s", strerror(errno));
	cr_assert(h_wait_for(is_stopped, &p.pid, H_WAIT_BOUND), "dbgctl %s: "
	    "not stopped (state %c) %d ms after SIGTSTP", p.cmd,
	    h_pid_state(p.pid) ? h_pid_state(p.pid) : '-', H_WAIT_BOUND);
	cr_assert_eq(tcgetattr(p.slave, &now), 0, "tcgetattr: %s",
	    strerror(errno));
	cr_assert(termios_same(&p.before, &now), "dbgctl %s stopped by "
	    "SIGTSTP: the terminal's modes are not the original ones while "
	    "it is stopped:%s", p.cmd, termios_diff(&p.before, &now, diff,
	    sizeof(diff)));

	cr_assert_eq(kill(p.pid, SIGCONT), 0, "kill: %s", strerror(errno));
	pt_expect_raw(&p, H_WAIT_BOUND, "after SIGCONT");
	cr_assert(!p.done, "dbgctl %s ended after SIGTSTP + SIGCONT", p.cmd);
	/* Still attached: typing reaches the session. */
	pt_type(&p, "again\r", 6);
	pt_expect(&p, off, "got-again", H_WAIT_BOUND);

	pt_detach(&p, "after SIGTSTP, SIGCONT and ^\\");
	h_cli_expect_state(id, "running", "after the detach");
	pt_close(&p);
}

/* The daemon SIGKILLed under the client: it exits non-zero, restored. */
Test(attach, daemon_killed_restores)
{
	char ids[32], ws[96];
	struct ptc p;
	pid_t d;

	attached_idle(&p, "kill-ready", ids, sizeof(ids));
	d = h_daemon_pid();
	cr_assert_gt(d, 0, "no daemon answers hello");
	cr_assert_eq(kill(d, SIGKILL), 0, "kill %d: %s", d, strerror(errno));
	cr_assert(pt_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still running "
	    "%d ms after the daemon (pid %d) was SIGKILLed; its terminal "
	    "shows:\n%s", p.cmd, H_WAIT_BOUND, d,
	    h_shown(p.seen.p, p.seen.len, 2000));
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) != 0,
	    "dbgctl %s after the daemon was SIGKILLed: expected a non-zero "
	    "exit, got %s; its terminal shows:\n%s", p.cmd,
	    wstatus(p.status, ws, sizeof(ws)),
	    h_shown(p.seen.p, p.seen.len, 2000));
	pt_expect_restored(&p, "after the daemon was SIGKILLed");
	pt_close(&p);
}

/* Change the window size of the client's terminal (SIGWINCH to its group). */
static void
pt_winsize(struct ptc *p, unsigned rows, unsigned cols)
{
	struct winsize ws = { 0 };

	ws.ws_row = (unsigned short)rows;
	ws.ws_col = (unsigned short)cols;
	cr_assert_eq(ioctl(p->master, TIOCSWINSZ, &ws), 0, "TIOCSWINSZ: %s",
	    strerror(errno));
}

/* The client terminal's size is the program's; every change follows. */
Test(attach, window_size_follows)
{
	char ids[32], probe[PATH_MAX], script[PATH_MAX * 2 + 256];
	size_t off;
	struct ptc p;
	int fd;

	h_ctx_path(probe, sizeof(probe), "probe");
	snprintf(script, sizeof(script), "trap 'echo size=$(stty size)' WINCH; "
	    "echo start=$(stty size); while :; do if [ -e '%s' ]; then "
	    "rm -f '%s'; echo probe=$(stty size); fi; sleep 0.1; done", probe,
	    probe);
	launch_sh(script, ids, sizeof(ids));
	h_cli_wait_log(ids, "start=", H_WAIT_BOUND);

	pt_open(&p, 37, 101);
	pt_spawn(&p, H_ARGS("attach", ids));
	off = pt_expect(&p, 0, "size=37 101", H_WAIT_BOUND);
	pt_expect_raw(&p, H_WAIT_BOUND, "once attached");

	pt_winsize(&p, 45, 120);
	off = pt_expect(&p, off, "size=45 120", H_WAIT_BOUND);

	/* A burst: the last size wins. */
	pt_winsize(&p, 50, 130);
	pt_winsize(&p, 51, 131);
	pt_winsize(&p, 52, 132);
	off = pt_expect(&p, off, "size=52 132", H_WAIT_BOUND);
	fd = open(probe, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0, "create %s: %s", probe, strerror(errno));
	close(fd);
	pt_expect(&p, off, "probe=52 132", H_WAIT_BOUND);

	pt_detach(&p, "after ^\\");
	pt_close(&p);
}

/* launch --attach of gdb: the prompt, quit ends it, exit 0, restored. */
Test(attach, launch_attach_gdb_quit)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	const char *state;
	char *end;
	struct ptc p;
	json_t *l, *s;
	long lead;

	pt_open(&p, 30, 100);
	pt_spawn(&p, H_ARGS("launch", "--attach", "--", echo));
	pt_expect(&p, 0, "(gdb)", H_WAIT_BOUND);
	pt_expect_raw(&p, H_WAIT_BOUND, "once attached");
	lead = strtol(p.seen.p, &end, 10);
	cr_assert(!(end != p.seen.p && lead > 0 && (*end == '\r' ||
	    *end == '\n')), "dbgctl %s: printed the session id (%ld) on the "
	    "terminal; it should not:\n%s", p.cmd, lead,
	    h_shown(p.seen.p, p.seen.len, 500));

	pt_type(&p, "quit\r", 5);
	pt_expect_exit(&p, 0, H_WAIT_BOUND, "after quit at the (gdb) prompt");
	pt_expect_restored(&p, "after gdb quit");

	l = h_cli_json(H_ARGS("list"));
	s = json_is_array(l) ? json_array_get(l, 0) :
	    json_array_get(json_object_get(l, "sessions"), 0);
	state = h_jstr(s, "state");
	cr_assert(state != NULL && strcmp(state, "exited") == 0 &&
	    h_jint(s, "exit.code", -1) == 0, "dbgctl list after gdb quit: "
	    "expected the session exited with code 0, got state %s, code %lld",
	    state ? state : "(none)", h_jint(s, "exit.code", -1));
	json_decref(l);
	pt_close(&p);
}

/* attach with stdin not a terminal: exit 1 and a message, nothing else. */
Test(attach, attach_needs_a_terminal)
{
	char ids[32];
	struct h_res r;
	long id;

	id = launch_sh("echo notty-ready; while :; do sleep 1; done", ids,
	    sizeof(ids));
	h_cli(&r, H_ARGS("attach", ids));
	cr_assert_eq(r.code, 1, "dbgctl attach %s with stdin /dev/null: "
	    "expected exit 1, got %d (stderr: %s)", ids, r.code, r.err);
	cr_assert(strstr(r.err, "dbgctl: ") != NULL &&
	    strstr(r.err, "terminal") != NULL, "dbgctl attach %s with stdin "
	    "/dev/null: expected a \"dbgctl: ...terminal...\" message on "
	    "stderr, got \"%s\"", ids, r.err);
	cr_assert(strstr(r.out, "notty-ready") == NULL, "dbgctl attach %s "
	    "without a terminal printed the console anyway: %s", ids, r.out);
	h_run_free(&r);
	h_cli_expect_state(id, "running", "after a refused attach");
}

/* launch --attach with stdin a pipe: bridges it; ends when gdb quits. */
Test(attach, launch_attach_pipe_quit)
{
	const char *echo = h_ctx_fixture("FIX_ECHO");
	struct h_res r;

	h_cli_input(&r, "quit\n", H_ARGS("launch", "--attach", "--", echo));
	cr_assert(!r.timed_out, "printf 'quit\\n' | dbgctl launch --attach -- "
	    "%s: still running after %d ms; stdout: %s; stderr: %s", echo,
	    H_RUN_BOUND, h_shown(r.out, r.out_len, 1500), r.err);
	cr_assert_eq(r.code, 0, "printf 'quit\\n' | dbgctl launch --attach -- "
	    "%s: expected exit 0 (gdb's status), got %d; stdout: %s; stderr: "
	    "%s", echo, r.code, h_shown(r.out, r.out_len, 1500), r.err);
	h_run_free(&r);
}

/* Two clients on one session both see what is printed after they attached. */
Test(attach, two_clients_see_output)
{
	char ids[32];
	size_t offa, offb;
	struct ptc a, b;
	long id;

	id = launch_sh("echo two-ready; read x; echo got-$x; sleep 100", ids,
	    sizeof(ids));
	offa = pt_attach(&a, ids, "two-ready", "once attached (client A)");
	offb = pt_attach(&b, ids, "two-ready", "once attached (client B)");
	cr_assert(memmem(a.seen.p, a.seen.len, "got-", 4) == NULL &&
	    memmem(b.seen.p, b.seen.len, "got-", 4) == NULL,
	    "output before any input");

	pt_type(&a, "hello\r", 6);
	pt_expect(&a, offa, "got-hello", H_WAIT_BOUND);
	pt_expect(&b, offb, "got-hello", H_WAIT_BOUND);

	pt_detach(&a, "after ^\\ (client A)");
	cr_assert(!b.done, "client B ended when client A detached");
	pt_detach(&b, "after ^\\ (client B)");
	h_cli_expect_state(id, "running", "after both detached");
	pt_close(&a);
	pt_close(&b);
}

/* True if data holds "<line>\r\n" as a whole line. */
static bool
has_line(const char *data, size_t len, const char *line)
{
	char want[64];
	size_t n;

	n = (size_t)snprintf(want, sizeof(want), "%s\r\n", line);
	if (len >= n && memcmp(data, want, n) == 0)
		return true;
	n = (size_t)snprintf(want, sizeof(want), "\n%s\r\n", line);
	return memmem(data, len, want, n) != NULL;
}

/* Attaching replays the last 200 lines: 101..300 of 300, not 1..100. */
Test(attach, replay_last_200_lines)
{
	char ids[32];
	size_t off;
	struct ptc p;

	launch_sh("i=1; while [ $i -le 300 ]; do echo line-$i; "
	    "i=$((i+1)); done; exec sleep 100", ids, sizeof(ids));
	h_cli_wait_log(ids, "line-300", H_WAIT_BOUND);

	pt_open(&p, 30, 100);
	pt_spawn(&p, H_ARGS("attach", ids));
	off = pt_expect(&p, 0, "line-300\r\n", H_WAIT_BOUND);
	cr_assert(!has_line(p.seen.p, off, "line-1"), "dbgctl attach %s: "
	    "line-1 was replayed; only the last 200 lines should be:\n%s", ids,
	    h_shown(p.seen.p, off, 600));
	cr_assert(has_line(p.seen.p, off, "line-101") &&
	    !has_line(p.seen.p, off, "line-100") &&
	    h_count(p.seen.p, off, "line-") == 200, "dbgctl attach %s: "
	    "expected exactly lines 101..300 replayed (200), got %d lines "
	    "starting with:\n%s", ids, h_count(p.seen.p, off, "line-"),
	    h_shown(p.seen.p, off < 300 ? off : 300, 300));
	pt_expect_raw(&p, H_WAIT_BOUND, "once attached");

	pt_detach(&p, "after ^\\");
	pt_close(&p);
}
