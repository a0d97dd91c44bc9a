/*
 * A client on a pseudo-terminal of the test's own, driven as a user at a
 * terminal would drive it: the bytes it shows are read from the master,
 * keys are typed into it, and its modes are compared before and after.
 *
 * The client runs the way an interactive shell runs a job: a small
 * "shell" process (forked here, never returning into Criterion) is the
 * session leader with the pty as controlling terminal; the client is its
 * child in a process group of its own, made the foreground group. The
 * client's group is then not orphaned, so a SIGTSTP really stops it (the
 * kernel discards SIGTSTP's stop for an orphaned group, which a client
 * that is itself the session leader would be), and SIGWINCH from a
 * TIOCSWINSZ on the master reaches it.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* The last bytes the client's terminal shows, for failure messages. */
const char *
h_pty_screen(const struct h_pty *p)
{
	return h_shown(p->seen.p ? p->seen.p : "", p->seen.len, 2000);
}

/* Change the window size of the client's terminal (SIGWINCH to its group). */
void
h_pty_winsize(struct h_pty *p, unsigned rows, unsigned cols)
{
	struct winsize ws = { 0 };

	ws.ws_row = (unsigned short)rows;
	ws.ws_col = (unsigned short)cols;
	cr_assert_eq(ioctl(p->master, TIOCSWINSZ, &ws), 0, "TIOCSWINSZ: %s",
	    strerror(errno));
}

/*
 * A pty with distinctive modes (^H erase, ^K kill, VMIN 3, VTIME 2, IXANY,
 * ECHOCTL, ECHOKE) and a window size of rows x cols, its modes recorded as
 * p->before.
 */
void
h_pty_open(struct h_pty *p, unsigned rows, unsigned cols)
{
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

	h_pty_winsize(p, rows, cols);
	fcntl(p->master, F_SETFL, fcntl(p->master, F_GETFL) | O_NONBLOCK);
}

/* Write all of buf to fd, ignoring errors (in a child, before _exit). */
static void
h_pty_child_write(int fd, const void *buf, size_t len)
{
	while (write(fd, buf, len) == -1 && errno == EINTR)
		;
}

/*
 * Start dbgctl -s SOCK ARGS... on the pty, as a job of a shell-like
 * session leader (see the top of the file). Returns once its pid is known.
 */
void
h_pty_spawn(struct h_pty *p, const char *const args[])
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
		h_pty_child_write(st[1], &job, sizeof(job));
		while (waitpid(job, &ws, 0) == -1 && errno == EINTR)
			;
		h_pty_child_write(st[1], &ws, sizeof(ws));
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
h_pty_reap_shell(struct h_pty *p)
{
	if (p->shell > 0)
		h_run_reap(p->shell, 5000);
	p->shell = -1;
}

/* Read what is there from the master and the status pipe, waiting up to ms. */
void
h_pty_pump(struct h_pty *p, int ms)
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
		h_pty_reap_shell(p);
	}
}

/*
 * Read the master until text appears at or after offset from, within
 * bound_ms; returns the offset just past it. Fails with what was seen.
 */
size_t
h_pty_expect(struct h_pty *p, size_t from, const char *text, int bound_ms)
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
			h_pty_pump(p, 0);
			if (p->seen.len > from && memmem(p->seen.p + from,
			    p->seen.len - from, text, strlen(text)) != NULL)
				continue;
			break;
		}
		h_pty_pump(p, left < 100 ? left : 100);
	}
	cr_assert_fail("dbgctl %s: expected \"%s\" on its terminal within %d "
	    "ms%s%s; its terminal shows (last bytes):\n%s", p->cmd,
	    h_shown(text, strlen(text), 200), bound_ms,
	    p->done ? "; the client ended: " : "",
	    p->done ? h_run_wstatus(p->status, ws, sizeof(ws)) : "",
	    h_pty_screen(p));
	return 0;
}

/* Type bytes at the client's terminal. */
void
h_pty_type(struct h_pty *p, const char *data, size_t len)
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
		h_pty_pump(p, 10);
	}
}

/* Wait up to bound_ms for the client to end; true if it did. */
bool
h_pty_wait_exit(struct h_pty *p, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;

	while (!p->done && h_now() < end)
		h_pty_pump(p, 50);
	h_pty_pump(p, 0);
	return p->done;
}

/* Assert the client ends within bound_ms with exit code want. */
void
h_pty_expect_exit(struct h_pty *p, int want, int bound_ms, const char *when)
{
	char ws[96];

	cr_assert(h_pty_wait_exit(p, bound_ms), "dbgctl %s %s: expected it to "
	    "exit (%d) within %d ms, it is still running; its terminal shows:"
	    "\n%s", p->cmd, when, want, bound_ms,
	    h_pty_screen(p));
	cr_assert(WIFEXITED(p->status) && WEXITSTATUS(p->status) == want,
	    "dbgctl %s %s: expected exit %d, got %s; its terminal shows:\n%s",
	    p->cmd, when, want, h_run_wstatus(p->status, ws, sizeof(ws)),
	    h_pty_screen(p));
}

/* Describe how two sets of modes differ, into buf. */
static const char *
h_pty_modes_diff(const struct termios *a, const struct termios *b, char *buf,
    size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
#define H_PTY_FLAG(f) \
	if (a->f != b->f && o < len) \
		o += (size_t)snprintf(buf + o, len - o, \
		    " " #f " 0x%x -> 0x%x", (unsigned)a->f, (unsigned)b->f)
	H_PTY_FLAG(c_iflag);
	H_PTY_FLAG(c_oflag);
	H_PTY_FLAG(c_cflag);
	H_PTY_FLAG(c_lflag);
#undef H_PTY_FLAG
	for (i = 0; i < NCCS && o < len; i++)
		if (a->c_cc[i] != b->c_cc[i])
			o += (size_t)snprintf(buf + o, len - o, " c_cc[%d] "
			    "0x%02x -> 0x%02x", i, a->c_cc[i], b->c_cc[i]);
	return buf;
}

/* True if the modes now are bit-identical to the ones recorded before. */
static bool
h_pty_modes_same(const struct termios *a, const struct termios *b)
{
	return a->c_iflag == b->c_iflag && a->c_oflag == b->c_oflag &&
	    a->c_cflag == b->c_cflag && a->c_lflag == b->c_lflag &&
	    memcmp(a->c_cc, b->c_cc, sizeof(a->c_cc)) == 0;
}

/* Assert the pty's modes are bit-identical to those before the client. */
void
h_pty_expect_restored(struct h_pty *p, const char *when)
{
	struct termios now;
	char diff[1024];

	cr_assert_eq(tcgetattr(p->slave, &now), 0, "tcgetattr: %s",
	    strerror(errno));
	cr_assert(h_pty_modes_same(&p->before, &now), "dbgctl %s %s: the "
	    "terminal's modes are not the ones it had before:%s", p->cmd, when,
	    h_pty_modes_diff(&p->before, &now, diff, sizeof(diff)));
}

/* True if the pty is in the client's raw mode (no ICANON, no ECHO, no ISIG). */
static bool
h_pty_is_raw(void *arg)
{
	struct h_pty *p = arg;
	struct termios t;

	return tcgetattr(p->slave, &t) == 0 && !(t.c_lflag & ICANON) &&
	    !(t.c_lflag & ECHO) && !(t.c_lflag & ISIG);
}

/* Assert the client has put its terminal in raw mode (within bound_ms). */
void
h_pty_expect_raw(struct h_pty *p, int bound_ms, const char *when)
{
	struct termios t;

	if (h_wait_for(h_pty_is_raw, p, bound_ms))
		return;
	tcgetattr(p->slave, &t);
	cr_assert_fail("dbgctl %s %s: expected its terminal in raw mode "
	    "within %d ms, c_lflag is 0x%x (ICANON %s, ECHO %s, ISIG %s)",
	    p->cmd, when, bound_ms, (unsigned)t.c_lflag,
	    t.c_lflag & ICANON ? "on" : "off", t.c_lflag & ECHO ? "on" : "off",
	    t.c_lflag & ISIG ? "on" : "off");
}

/* Let go of the pty client: kill it if it still runs, close the pty. */
void
h_pty_close(struct h_pty *p)
{
	if (!p->done && p->pid > 0) {
		kill(p->pid, SIGKILL);
		h_pty_wait_exit(p, 5000);
	}
	if (p->shell > 0) {
		kill(p->shell, SIGKILL);
		h_pty_reap_shell(p);
	}
	if (p->stfd >= 0)
		close(p->stfd);
	close(p->master);
	close(p->slave);
	free(p->seen.p);
	p->seen.p = NULL;
}
