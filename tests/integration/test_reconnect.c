/*
 * Clients ride out a restart of the daemon: `logs -f` (console and target
 * stream), `wait`, `expect` and `attach` started before a SIGKILL of
 * dbgctld carry on with the next daemon, which adopted the session, so
 * each follower prints every line once, in order, and ends when the
 * session does; the next daemon started by the test (as a service
 * manager would), by the clients themselves, or handed over by `daemon
 * --replace`. A `pipe` through an echo target goes on too, every byte
 * once both ways; a wait on a session that was not adopted says it is
 * gone.
 *
 * The target paces itself and waits for a file before its second half,
 * so the kill always comes mid-stream; the test never sleeps.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(reconnect, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 150);

/* Lines the target prints before it waits for the go file, and in all. */
#define RECONNECT_FIRST	40
#define RECONNECT_LINES	120

/* The target's exit code, which wait must bring back. */
#define RECONNECT_EXIT	7

/* One session streaming numbered lines, and the clients following it. */
struct reconnect_run {
	char		 ids[32];
	char		 go[PATH_MAX];	/* the file the second half waits for */
	long		 id;
	struct h_proc	 console;	/* logs -f ID */
	struct h_proc	 target;	/* logs -f --stream target ID */
	struct h_proc	 wait;		/* wait ID, traced */
	struct h_proc	 expect;	/* expect ID 'line(0|FIRST)\n', traced */
	char		 wait_trace[PATH_MAX];	/* their sendto calls */
	char		 expect_trace[PATH_MAX];
	struct h_bytes	 console_out;
	struct h_bytes	 target_out;
};

/*
 * Launch the exec session: lineN on its transport and its console, a few
 * ms apart, RECONNECT_FIRST of them, then (once the go file is there) the
 * rest; it exits RECONNECT_EXIT.
 */
static void
reconnect_launch(struct reconnect_run *r)
{
	char script[PATH_MAX + 512];
	const char *line = "echo line$i; echo line$i >&2; i=$((i+1)); "
	    "sleep 0.01";

	h_ctx_path(r->go, sizeof r->go, "go");
	snprintf(script, sizeof script, "i=0; while [ $i -lt %d ]; do %s; "
	    "done; while [ ! -e %s ]; do sleep 0.01; done; while [ $i -lt %d "
	    "]; do %s; done; exit %d", RECONNECT_FIRST, line, r->go,
	    RECONNECT_LINES, line, RECONNECT_EXIT);
	r->id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--name",
	    "streamer", "--", "sh", "-c", script));
	h_idstr(r->id, r->ids, sizeof r->ids);
}

/* A client whose requests strace notes, and how many it must have sent. */
struct reconnect_traced {
	const char	*trace;
	int		 sends;
};

/* Predicate: the traced client has sent its requests. */
static bool
reconnect_sent(void *arg)
{
	struct reconnect_traced *t = arg;
	size_t len;
	char *out = h_read_file(t->trace, &len);
	bool ok = out != NULL && h_count(out, len, "sendto(") >= t->sends;

	free(out);
	if (!ok)
		h_nap(20);
	return ok;
}

/*
 * Start dbgctl ARGS... under strace, its sendto calls noted in trace, and
 * wait until it has sent sends requests: the daemon then has them, or
 * its death makes the client send them again.
 */
static void
reconnect_start_traced(struct h_proc *p, char *trace, size_t len,
    const char *name, int sends, const char *const args[])
{
	struct reconnect_traced t = { trace, sends };
	const char *full[32], **argv;
	char strace[PATH_MAX];
	size_t n = 0, i;
	int e;

	cr_assert_not_null(h_which("strace", strace, sizeof strace),
	    "strace is not installed");
	h_ctx_path(trace, len, name);
	argv = h_cli_argv(args);
	full[n++] = strace;
	full[n++] = "-qq";
	full[n++] = "-e";
	full[n++] = "trace=sendto";
	full[n++] = "-o";
	full[n++] = trace;
	/*
	 * LeakSanitizer cannot run under ptrace: in a sanitizer build, leaks
	 * are looked for in the clients that are not traced.
	 */
	full[n++] = "-E";
	full[n++] = "LSAN_OPTIONS=detect_leaks=0";
	for (i = 0; argv[i] != NULL && n < 31; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	e = h_run_start(p, full);
	free(argv);
	cr_assert_eq(e, 0, "start strace dbgctl %s: %s", args[0],
	    strerror(-e));
	cr_assert(h_wait_for(reconnect_sent, &t, H_WAIT_BOUND), "dbgctl %s "
	    "never sent its request", args[0]);
}

/*
 * Start the followers and wait until they are mid-stream: both logs -f
 * have printed the first half, the wait is sent, and the expect (its
 * cursor past line0) has asked where that cursor stands and sent its
 * wait for line FIRST.
 */
static void
reconnect_follow(struct reconnect_run *r)
{
	char last[32], pat[32];
	struct h_res res;

	h_cli_start(&r->console, H_ARGS("logs", "-f", r->ids));
	h_cli_start(&r->target, H_ARGS("logs", "-f", "--stream", "target",
	    r->ids));
	reconnect_start_traced(&r->wait, r->wait_trace, sizeof r->wait_trace,
	    "wait.trace", 1, H_ARGS("wait", r->ids));
	snprintf(last, sizeof last, "line%d", RECONNECT_FIRST - 1);
	cr_assert(h_run_out_until(&r->console, &r->console_out, 0, last,
	    H_WAIT_BOUND) > 0, "logs -f never printed %s: %s", last,
	    h_shown(r->console_out.p, r->console_out.len, 300));
	cr_assert(h_run_out_until(&r->target, &r->target_out, 0, last,
	    H_WAIT_BOUND) > 0, "logs -f --stream target never printed %s: %s",
	    last, h_shown(r->target_out.p, r->target_out.len, 300));
	h_cli_exit(&res, 0, H_ARGS("expect", r->ids, "line0\n"));
	h_run_free(&res);
	snprintf(pat, sizeof pat, "line(0|%d)\n", RECONNECT_FIRST);
	reconnect_start_traced(&r->expect, r->expect_trace,
	    sizeof r->expect_trace, "expect.trace", 2, H_ARGS("expect",
	    "--json", r->ids, pat));
}

/* Let the target's second half go. */
static void
reconnect_go(struct reconnect_run *r)
{
	int fd = open(r->go, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	cr_assert_geq(fd, 0, "create %s: %s", r->go, strerror(errno));
	close(fd);
}

/* Assert out holds line0 to the last line, each once, in order (CRs dropped). */
static void
reconnect_lines(const char *what, const char *out, size_t len)
{
	char *want, *got;
	size_t wlen = 0, glen = 0, i;

	want = malloc(RECONNECT_LINES * 12 + 1);
	got = malloc(len + 1);
	for (i = 0; i < RECONNECT_LINES; i++)
		wlen += (size_t)sprintf(want + wlen, "line%zu\n", i);
	for (i = 0; i < len; i++)
		if (out[i] != '\r')
			got[glen++] = out[i];
	cr_assert(glen == wlen && memcmp(got, want, wlen) == 0, "%s across "
	    "the restart: expected line0 to line%d once each, in order (%zu "
	    "bytes), got %zu bytes: %s", what, RECONNECT_LINES - 1, wlen, glen,
	    h_shown(got, glen, 600));
	free(want);
	free(got);
}

/* Collect a follower to its end; assert it exited want. */
static void
reconnect_end(struct h_proc *p, struct h_bytes *b, const char *what, int want)
{
	h_run_wait(p, H_RUN_BOUND * 2);
	cr_assert_eq(p->res.code, want, "%s: expected exit %d, got %d; stderr: "
	    "%s", what, want, p->res.code, p->res.err);
	if (b != NULL)
		h_bytes_add(b, p->res.out, p->res.out_len);
}

/* Everything the followers printed after the restart, checked. */
static void
reconnect_check(struct reconnect_run *r)
{
	char want[32];
	json_t *m;

	reconnect_end(&r->console, &r->console_out, "logs -f", 0);
	reconnect_lines("logs -f", r->console_out.p, r->console_out.len);
	reconnect_end(&r->target, &r->target_out, "logs -f --stream target",
	    0);
	reconnect_lines("logs -f --stream target", r->target_out.p,
	    r->target_out.len);
	reconnect_end(&r->wait, NULL, "wait", RECONNECT_EXIT);
	reconnect_end(&r->expect, NULL, "expect", 0);
	/* From the cursor the dead daemon had: never line0 again. */
	m = json_loads(r->expect.res.out, 0, NULL);
	cr_assert_not_null(m, "expect --json printed no JSON: %s",
	    r->expect.res.out);
	snprintf(want, sizeof want, "line%d\n", RECONNECT_FIRST);
	cr_assert_str_eq(h_jstr(m, "text"), want, "expect across the "
	    "restart matched %s at %lld (from %lld)", h_jstr(m, "text"),
	    h_jint(m, "offset", -1), h_jint(m, "from", -1));
	json_decref(m);
	h_run_free(&r->console.res);
	h_run_free(&r->target.res);
	h_run_free(&r->wait.res);
	h_run_free(&r->expect.res);
	free(r->console_out.p);
	free(r->target_out.p);
}

/*
 * The next daemon is started from outside (as a service manager
 * restarts it): the followers, which cannot start one themselves here,
 * wait for it, then carry on from where they were.
 */
Test(reconnect, followers_carry_on_with_a_daemon_started_for_them)
{
	struct reconnect_run r;

	memset(&r, 0, sizeof r);
	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	reconnect_launch(&r);
	/* Only the test starts daemons: the clients' starts fail. */
	h_ctx_env_add("DBGCTL_DAEMON=/nonexistent/dbgctld");
	reconnect_follow(&r);
	h_daemon_fg_kill();
	reconnect_go(&r);
	h_daemon_fg();
	reconnect_check(&r);
}

/* The followers start the next daemon themselves, which adopts the session. */
Test(reconnect, followers_start_the_next_daemon_and_carry_on)
{
	struct reconnect_run r;

	memset(&r, 0, sizeof r);
	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	reconnect_launch(&r);
	reconnect_follow(&r);
	h_daemon_fg_kill();
	reconnect_go(&r);
	reconnect_check(&r);
	cr_assert_gt(h_daemon_pid(), 0, "no daemon answers after the restart");
}

/*
 * `dbgctl daemon --replace` closes the old daemon's connections once the
 * new one has the sessions: the followers connect again and carry on.
 */
Test(reconnect, followers_carry_on_across_a_replace)
{
	struct reconnect_run r;
	struct h_res res;

	memset(&r, 0, sizeof r);
	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_cli_exit(&res, 0, H_ARGS("daemon"));
	h_run_free(&res);
	reconnect_launch(&r);
	reconnect_follow(&r);
	h_cli_exit(&res, 0, H_ARGS("daemon", "--replace"));
	h_run_free(&res);
	reconnect_go(&r);
	reconnect_check(&r);
}

/*
 * attach on a pty: after the SIGKILL it attaches again to the next daemon
 * (which it starts), typing still reaches the program, the session's end
 * ends it with the program's status, and the terminal is as before.
 */
Test(reconnect, attach_carries_on_and_restores_the_terminal)
{
	char go[PATH_MAX], script[PATH_MAX + 256], ids[32];
	struct h_pty p;
	size_t off;
	int fd;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_ctx_path(go, sizeof go, "go");
	snprintf(script, sizeof script, "echo attach-ready; while [ ! -e %s "
	    "]; do sleep 0.01; done; echo after-the-restart; read l; "
	    "echo got-$l; exit %d", go, RECONNECT_EXIT);
	id = h_cli_launch_sh(NULL, script);
	h_idstr(id, ids, sizeof ids);
	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	off = h_pty_expect(&p, 0, "attach-ready", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "once attached");
	h_daemon_fg_kill();
	fd = open(go, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0, "create %s: %s", go, strerror(errno));
	close(fd);
	off = h_pty_expect(&p, off, "attached again to session", H_WAIT_BOUND);
	off = h_pty_expect(&p, off, "after-the-restart", H_WAIT_BOUND);
	cr_assert(!p.done, "attach ended across the restart:\n%s",
	    h_pty_screen(&p));
	h_pty_expect_raw(&p, H_WAIT_BOUND, "attached again");
	h_pty_type(&p, "typed\r", 6);
	h_pty_expect(&p, off, "got-typed", H_WAIT_BOUND);
	h_pty_expect_exit(&p, RECONNECT_EXIT, H_WAIT_BOUND,
	    "when the adopted session ended");
	h_pty_expect_restored(&p, "after the restart and the session's end");
	h_pty_close(&p);
}

/* Lines each of the pipe's three batches sends through the echo target. */
#define RECONNECT_PIPE_LINES 300

/* Write batch b's lines, pN from b * RECONNECT_PIPE_LINES, to p's fd. */
static void
reconnect_pipe_batch(struct h_proc *p, int fd, int b)
{
	char buf[RECONNECT_PIPE_LINES * 16];
	size_t len = 0, off = 0;
	ssize_t n;
	int i;

	for (i = 0; i < RECONNECT_PIPE_LINES; i++)
		len += (size_t)sprintf(buf + len, "p%d\n",
		    b * RECONNECT_PIPE_LINES + i);
	while (off < len) {
		n = write(fd, buf + off, len - off);
		if (n < 0 && errno != EINTR) {
			h_run_wait(p, H_RUN_BOUND);
			cr_assert_fail("write to dbgctl pipe: %s; it exited %d, "
			    "stderr: %s", strerror(errno), p->res.code,
			    p->res.err);
		}
		if (n > 0)
			off += (size_t)n;
	}
}

/* Assert out holds every line of the three batches, each once, in order. */
static void
reconnect_pipe_lines(const char *out, size_t len)
{
	char *want = malloc(3 * RECONNECT_PIPE_LINES * 16);
	size_t wlen = 0;
	int i;

	for (i = 0; i < 3 * RECONNECT_PIPE_LINES; i++)
		wlen += (size_t)sprintf(want + wlen, "p%d\n", i);
	cr_assert(len == wlen && memcmp(out, want, wlen) == 0, "pipe across "
	    "the restart: expected p0 to p%d once each, in order (%zu bytes), "
	    "got %zu bytes: %s", 3 * RECONNECT_PIPE_LINES - 1, wlen, len,
	    h_shown(out, len, 600));
	free(want);
}

/*
 * A pipe through an echo target (cat) while the daemon restarts (killed,
 * then started by the pipe itself, or replaced): one batch echoed before,
 * one sent just before (in flight as the daemon goes), one after. The
 * pipe goes on with the next daemon, sends again what it lacks of the
 * input, and gets the output from the next byte: every line once, in
 * order, and exit 0 once the target's output ends.
 */
static void
reconnect_pipe(bool replace)
{
	struct h_bytes seen = { NULL, 0 };
	struct h_proc pp;
	struct h_res res;
	char ids[32], last[32];
	int in;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	if (replace) {
		h_cli_exit(&res, 0, H_ARGS("daemon"));
		h_run_free(&res);
	} else
		h_daemon_fg();
	h_idstr(h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "cat")), ids, sizeof ids);
	cr_assert_eq(h_run_start_fed(&pp, &in, h_cli_argv(H_ARGS("pipe",
	    ids))), 0, "start dbgctl pipe");
	reconnect_pipe_batch(&pp, in, 0);
	snprintf(last, sizeof last, "p%d\n", RECONNECT_PIPE_LINES - 1);
	cr_assert(h_run_out_until(&pp, &seen, 0, last, H_WAIT_BOUND) > 0,
	    "the pipe's first batch never came back: %s", h_shown(seen.p,
	    seen.len, 300));
	reconnect_pipe_batch(&pp, in, 1);
	if (replace) {
		h_cli_exit(&res, 0, H_ARGS("daemon", "--replace"));
		h_run_free(&res);
	} else
		h_daemon_fg_kill();
	reconnect_pipe_batch(&pp, in, 2);
	close(in);
	h_run_wait(&pp, H_RUN_BOUND * 2);
	cr_assert_eq(pp.res.code, 0, "pipe across a restart: exit %d, stderr "
	    "%s", pp.res.code, pp.res.err);
	h_bytes_add(&seen, pp.res.out, pp.res.out_len);
	reconnect_pipe_lines(seen.p, seen.len);
	h_run_free(&pp.res);
	free(seen.p);
}

/* The pipe starts the next daemon itself after a SIGKILL, and goes on. */
Test(reconnect, pipe_carries_on_across_a_sigkill)
{
	reconnect_pipe(false);
}

/* The pipe goes on with the daemon `daemon --replace` handed over to. */
Test(reconnect, pipe_carries_on_across_a_replace)
{
	reconnect_pipe(true);
}

/*
 * A wait on a session the next daemon did not adopt (its record is gone,
 * as for any session a daemon cannot take over) ends with exit 3 saying
 * the daemon restarted and the session is gone.
 */
Test(reconnect, wait_on_a_session_not_adopted_says_it_is_gone)
{
	char ids[32], trace[PATH_MAX], rec[PATH_MAX + 64];
	struct h_proc w;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	/* Another session's keeper waits too: the wait waits for the next. */
	(void)h_cli_launch_sh(NULL, "while :; do sleep 1; done");
	id = h_cli_launch_sh(NULL, "while :; do sleep 1; done");
	h_idstr(id, ids, sizeof ids);
	/* The next daemon is the test's, once the record is gone. */
	h_ctx_env_add("DBGCTL_DAEMON=/nonexistent/dbgctld");
	reconnect_start_traced(&w, trace, sizeof trace, "wait.trace", 1,
	    H_ARGS("wait", ids));
	h_daemon_fg_kill();
	snprintf(rec, sizeof rec, "%s/sessions/%ld.rec", H->state, id);
	cr_assert_eq(unlink(rec), 0, "unlink %s: %s", rec, strerror(errno));
	h_daemon_fg();
	h_run_wait(&w, H_RUN_BOUND);
	cr_assert_eq(w.res.code, 3, "wait on a session that was not adopted: "
	    "exit %d, stderr %s", w.res.code, w.res.err);
	cr_assert(strstr(w.res.err, "the daemon restarted, and the session "
	    "did not outlive it") != NULL, "wait said: %s", w.res.err);
	h_run_free(&w.res);
}
