/*
 * dbgctl daemon --replace: a new daemon takes the listening sockets over
 * from the running one, which exits, and no connect is refused meanwhile;
 * a replace whose new daemon cannot start leaves the old one serving.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(replace, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 150);

/* What a client that pings on a fresh connection each time saw. */
struct pings {
	unsigned long	 ok;		/* answered */
	unsigned long	 refused;	/* connect failed: never so */
	unsigned long	 closed;	/* closed before the reply */
	int		 error;		/* the first refusal's */
};

/* Connect, ping, close; counted in p. */
static void
ping_once(struct pings *p)
{
	struct h_conn	c;
	json_t		*r;
	int		 rc;

	if ((rc = h_conn_open(&c, H->sock)) != 0) {
		if (p->refused++ == 0)
			p->error = -rc;
		return;
	}
	r = h_conn_call(&c, "ping", "{}", H_WAIT_BOUND);
	if (json_is_true(h_jpath(r, "result.pong")))
		p->ok++;
	else
		p->closed++;
	json_decref(r);
	h_conn_close(&c);
}

/* Assert no ping's connect failed; log how many had to reconnect. */
static void
pings_expect_no_refusal(const struct pings *p, const char *when)
{
	cr_log_info("%s: %lu pings answered, %lu closed before the reply "
	    "(a reconnect)", when, p->ok, p->closed);
	cr_assert_eq(p->refused, 0, "%s: %lu connects failed (the first: "
	    "%s); %lu pings answered", when, p->refused, strerror(p->error),
	    p->ok);
	cr_assert_gt(p->ok, 0, "%s: no ping was answered", when);
}

/* The new daemon's pid from `dbgctl daemon --replace`'s output, asserted. */
static pid_t
replaced_by(const struct h_res *r, pid_t old)
{
	char	want[64];
	pid_t	new;

	snprintf(want, sizeof want, "dbgctld pid %ld replaced by pid ",
	    (long)old);
	cr_assert_eq(r->code, 0, "dbgctl daemon --replace: exit %d (stderr: "
	    "%s)", r->code, r->err);
	cr_assert(strncmp(r->out, want, strlen(want)) == 0, "dbgctl daemon "
	    "--replace said \"%s\", not \"%s...\"", r->out, want);
	new = (pid_t)strtol(r->out + strlen(want), NULL, 10);
	cr_assert(new > 0 && new != old, "the new pid %ld", (long)new);
	return new;
}

/* `dbgctl shutdown` leaves no daemon of the test and no socket file. */
static void
shutdown_leaves_nothing(void)
{
	struct h_res	r;
	struct stat	st;
	pid_t		left[4];

	h_cli_exit(&r, 0, H_ARGS("shutdown"));
	h_run_free(&r);
	cr_assert_eq(h_daemon_list(left, 4), 0, "after shutdown, dbgctld %ld "
	    "is left", (long)left[0]);
	cr_assert(lstat(H->sock, &st) != 0 && errno == ENOENT, "after "
	    "shutdown, %s is still there", H->sock);
}

/*
 * A client that pings on a fresh connection each time, all through the
 * replace, never has a connect refused; the old daemon exits 0, a new
 * one answers on the same socket, and shutdown then leaves nothing.
 */
Test(replace, no_connect_is_refused_and_a_new_daemon_answers)
{
	struct pings	 p = { 0 };
	struct h_proc	 cli;
	pid_t		 old, new;
	double		 end;
	int		 st, i;

	old = h_daemon_fg();
	cr_assert_eq(h_cli_start(&cli, H_ARGS("daemon", "--replace")), 0,
	    "cannot start dbgctl daemon --replace");
	end = h_now() + H_WAIT_BOUND / 1000.0;
	do
		ping_once(&p);
	while ((st = h_daemon_fg_wait(0)) == -1 && h_now() < end);
	cr_assert_neq(st, -1, "the old daemon %ld has not exited within %d ms "
	    "of the replace", (long)old, H_WAIT_BOUND);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the old daemon "
	    "%ld: %s, not exit 0", (long)old, h_run_wstatus(st, (char[64]){ 0 },
	    64));
	for (i = 0; i < 20; i++)
		ping_once(&p);
	h_run_wait(&cli, H_RUN_BOUND);
	pings_expect_no_refusal(&p, "through the replace");
	new = replaced_by(&cli.res, old);
	h_run_free(&cli.res);
	cr_assert_eq(h_daemon_pid(), new, "hello names pid %ld, not the new "
	    "daemon %ld", (long)h_daemon_pid(), (long)new);
	cr_assert_eq(h_pid_state(old), 0, "the old daemon %ld is still there",
	    (long)old);
	shutdown_leaves_nothing();
}

/* A detached daemon's successor is detached too and logs where it did. */
Test(replace, a_detached_daemon_is_replaced_by_a_detached_one)
{
	struct h_res	 r;
	pid_t		 old, new;
	char		*log;

	h_cli_exit(&r, 0, H_ARGS("daemon"));
	h_run_free(&r);
	old = h_daemon_pid();
	cr_assert_gt(old, 0, "no daemon answers after dbgctl daemon");
	h_cli(&r, H_ARGS("daemon", "--replace"));
	new = replaced_by(&r, old);
	h_run_free(&r);
	cr_assert_eq(h_daemon_pid(), new, "hello names pid %ld, not the new "
	    "daemon %ld", (long)h_daemon_pid(), (long)new);
	cr_assert_neq(h_pid_sid(new), h_pid_sid(getpid()), "the new daemon "
	    "%ld is in the test's session", (long)new);
	log = h_daemon_log();
	cr_assert(log != NULL && strstr(log, "took over from pid") != NULL,
	    "the daemon log does not say the new daemon took over: %s",
	    log != NULL ? h_shown(log, strlen(log), 2000) : "(none)");
	free(log);
	shutdown_leaves_nothing();
}

/* The TCP listener and its token go over to the new daemon as well. */
Test(replace, the_tcp_listener_and_its_token_go_over)
{
	struct h_conn	 c;
	struct h_res	 r;
	char		 token[512];
	json_t		*reply;
	pid_t		 old, new;
	int		 port;

	h_daemon_token(token, sizeof token, "the-token-of-this-test", 0600);
	port = h_daemon_fg_tcp("127.0.0.1:0", token);
	old = H->fg_daemon;
	h_cli(&r, H_ARGS("daemon", "--replace"));
	new = replaced_by(&r, old);
	h_run_free(&r);
	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect to port %d after "
	    "the replace", port);
	reply = h_conn_call(&c, "hello", "{\"token\":\"the-token-of-this-"
	    "test\"}", H_WAIT_BOUND);
	cr_assert(json_is_true(h_jpath(reply,
	    "result.authentication.authenticated")) &&
	    h_jint(reply, "result.pid", 0) == new, "hello with the token "
	    "on port %d: %s", port, json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	h_conn_close(&c);
	cr_assert_eq(h_daemon_fg_wait(H_WAIT_BOUND), 0, "the old daemon %ld "
	    "did not exit 0", (long)old);
	shutdown_leaves_nothing();
}

/* The launch's and the replace's replies, on one connection, until both came. */
static void
launch_and_replace_replies(struct h_conn *c, json_t **launch, json_t **rep)
{
	json_t *m;

	while ((*launch == NULL || *rep == NULL) &&
	    (m = h_conn_recv(c, H_SESS_BOUND)) != NULL) {
		if (h_jint(m, "id", 0) == 1 && *launch == NULL)
			*launch = m;
		else if (h_jint(m, "id", 0) == 2 && *rep == NULL)
			*rep = m;
		else
			json_decref(m);
	}
}

/*
 * A replace while a session starts (a recording's 60 MB firmware copied,
 * then QEMU and gdb) hands over once it runs: the old daemon answers the
 * launch, the board runs under the new one and prints its banner, and a
 * shutdown leaves nothing of it. Handed over half made, the launch went
 * unanswered and the board never ran.
 */
Test(replace, a_session_starting_runs_before_the_hand_over)
{
	const char	*fw = h_board_firmware("FIX_BOARD_AN385");
	char		 big[PATH_MAX], cmd[3 * PATH_MAX], req[4 * PATH_MAX];
	char		 bound[32];
	json_t		*launch = NULL, *rep = NULL;
	struct h_conn	 c;
	struct h_res	 r;
	pid_t		 old, qemu;

	old = h_daemon_fg();
	h_ctx_path(big, sizeof big, "big.elf");
	snprintf(cmd, sizeof cmd, "cp %s %s && truncate -s 60M %s", fw, big,
	    big);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	/* In one write: the replace is read while the copy runs. */
	snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"qemu\",\"machine\":"
	    "\"mps2-an385\",\"record\":true,\"name\":\"starting\",\"argv\":"
	    "[\"%s\"]}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"replace\",\"params\":{}}\n", big);
	cr_assert_eq(h_conn_send(&c, req, strlen(req), H_WAIT_BOUND), 0);
	launch_and_replace_replies(&c, &launch, &rep);
	h_conn_close(&c);
	cr_assert_not_null(launch, "the launch under way was not answered "
	    "before the hand-over");
	cr_assert_str_eq(h_jstr(launch, "result.state") ?: "(none)",
	    "running", "the launch: %s", h_sess_shown(launch));
	cr_assert_not_null(rep, "the replace was not answered");
	cr_assert_gt(h_jint(rep, "result.new_pid", 0), 0, "the replace: %s",
	    h_sess_shown(rep));
	qemu = (pid_t)h_jint(launch, "result.pid", 0);
	cr_assert_eq(h_daemon_fg_wait(H_WAIT_BOUND), 0, "the old daemon %ld "
	    "did not exit 0", (long)old);
	snprintf(bound, sizeof bound, "%d", H_WAIT_BOUND);
	h_cli_exit(&r, 0, H_ARGS("expect", "--timeout", bound, "starting",
	    "an385 ready"));
	h_run_free(&r);
	shutdown_leaves_nothing();
	cr_assert_eq(h_pid_state(qemu), 0, "the session's QEMU %ld is still "
	    "there after the shutdown", (long)qemu);
	json_decref(launch);
	json_decref(rep);
}

/* A new binary that does not exist: a clear error, the old one serves. */
Test(replace, a_missing_binary_fails_and_the_daemon_serves_on)
{
	struct h_res	 r;
	struct pings	 p = { 0 };
	pid_t		 old, left[4];

	old = h_daemon_fg();
	h_cli(&r, H_ARGS("daemon", "--replace", "--binary",
	    "/nonexistent/dbgctld"));
	cr_assert_eq(r.code, 1, "a replace by a missing binary: exit %d "
	    "(stderr: %s)", r.code, r.err);
	cr_assert(strstr(r.err, "cannot run /nonexistent/dbgctld: No such "
	    "file or directory") != NULL && strstr(r.err, "goes on serving") !=
	    NULL, "the error does not say why: %s", r.err);
	h_run_free(&r);
	ping_once(&p);
	pings_expect_no_refusal(&p, "after the failed replace");
	cr_assert_eq(h_daemon_pid(), old, "hello names pid %ld, not the old "
	    "daemon %ld", (long)h_daemon_pid(), (long)old);
	cr_assert_eq(h_daemon_list(left, 4), 1, "dbgctld processes other than "
	    "the old one");
}

/* A new daemon that exits before it is ready: its status, the old serves. */
Test(replace, a_new_daemon_that_exits_early_fails_and_the_daemon_serves_on)
{
	struct h_res	 r;
	char		 script[PATH_MAX], report[1024];
	pid_t		 old;
	FILE		*f;

	h_ctx_path(script, sizeof script, "exits-3");
	f = fopen(script, "w");
	cr_assert_not_null(f, "cannot write %s", script);
	fputs("#!/bin/sh\nexit 3\n", f);
	fclose(f);
	chmod(script, 0700);
	old = h_daemon_fg();
	h_cli(&r, H_ARGS("daemon", "--replace", "--binary", script));
	cr_assert_eq(r.code, 1, "a replace by a binary that exits 3: exit %d "
	    "(stderr: %s)", r.code, r.err);
	cr_assert(strstr(r.err, "exited with status 3 before it was ready") !=
	    NULL, "the error does not say how it ended: %s", r.err);
	h_run_free(&r);
	cr_assert_eq(h_daemon_pid(), old, "hello names pid %ld, not the old "
	    "daemon %ld", (long)h_daemon_pid(), (long)old);
	cr_assert_eq(h_pid_zombies(old, report, sizeof report), 0, "the old "
	    "daemon left its failed successor unreaped: %s", report);
	cr_assert_gt(h_cli_launch_exec(NULL, H_ARGS("true")), 0, "the old "
	    "daemon launches no session after the failed replace");
}

/*
 * A new daemon that never says it is ready: the old one serves meanwhile,
 * kills and reaps it at the bound, and answers why.
 */
Test(replace, a_new_daemon_never_ready_is_killed_and_the_daemon_serves_on)
{
	struct h_proc	 cli;
	struct pings	 p = { 0 };
	char		 script[PATH_MAX], *at;
	pid_t		 old, child;
	FILE		*f;

	h_ctx_path(script, sizeof script, "never-ready");
	f = fopen(script, "w");
	cr_assert_not_null(f, "cannot write %s", script);
	fputs("#!/bin/sh\nexec sleep 300\n", f);
	fclose(f);
	chmod(script, 0700);
	old = h_daemon_fg();
	cr_assert_eq(h_cli_start(&cli, H_ARGS("daemon", "--replace",
	    "--binary", script)), 0, "cannot start dbgctl daemon --replace");
	h_daemon_wait_log("replace: started", H_WAIT_BOUND);
	ping_once(&p);
	pings_expect_no_refusal(&p, "while the new daemon is waited for");
	h_run_wait(&cli, H_RUN_BOUND);
	cr_assert_eq(cli.res.code, 1, "a replace by a binary never ready: exit "
	    "%d (stderr: %s)", cli.res.code, cli.res.err);
	at = strstr(cli.res.err, "(pid ");
	cr_assert(at != NULL && strstr(cli.res.err, "was not ready within 10 "
	    "s: it was killed") != NULL, "the error does not say it was "
	    "killed: %s", cli.res.err);
	child = (pid_t)strtol(at + 5, NULL, 10);
	h_run_free(&cli.res);
	cr_assert_eq(h_pid_state(child), 0, "the new daemon %ld is still there",
	    (long)child);
	cr_assert_eq(h_daemon_pid(), old, "hello names pid %ld, not the old "
	    "daemon %ld", (long)h_daemon_pid(), (long)old);
}

/*
 * A shutdown that begins while the new daemon starts wins: the new one is
 * killed once it is ready, and nothing is left, no daemon on a socket
 * file removed.
 */
Test(replace, a_shutdown_meanwhile_leaves_nothing)
{
	struct h_proc	 cli;
	char		 script[PATH_MAX];
	FILE		*f;

	h_ctx_path(script, sizeof script, "slow-dbgctld");
	f = fopen(script, "w");
	cr_assert_not_null(f, "cannot write %s", script);
	/* exec keeps the pid: LISTEN_PID and the parent are still right. */
	fprintf(f, "#!/bin/sh\nsleep 1\nexec %s \"$@\"\n", H->dbgctld);
	fclose(f);
	chmod(script, 0700);
	h_daemon_fg();
	cr_assert_eq(h_cli_start(&cli, H_ARGS("daemon", "--replace",
	    "--binary", script)), 0, "cannot start dbgctl daemon --replace");
	h_daemon_wait_log("replace: started", H_WAIT_BOUND);
	shutdown_leaves_nothing();
	h_run_wait(&cli, H_RUN_BOUND);
	/* Its connection closed with the others, unanswered. */
	cr_assert_neq(cli.res.code, 0, "the replace succeeded: %s",
	    cli.res.out);
	h_run_free(&cli.res);
}

/* A Unix socket of type at path, bound (and listening, for a stream). */
static int
manager_socket(int type, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	cr_assert(fd != -1 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ==
	    0 && (type != SOCK_STREAM || listen(fd, 64) == 0), "socket at %s: "
	    "%s", path, strerror(errno));
	return fd;
}

/*
 * Start the daemon as a service manager would: the listening socket lfd
 * as fd 3 (LISTEN_FDS=1, LISTEN_PID its pid), NOTIFY_SOCKET=notify.
 */
static pid_t
manager_start(int lfd, const char *notify)
{
	char out[PATH_MAX], pidkv[32], notkv[PATH_MAX + 16], **envp;
	size_t n = 0, k;
	pid_t pid;
	int fd;

	while (H->envp[n] != NULL)
		n++;
	envp = calloc(n + 4, sizeof(char *));
	for (k = 0; k < n; k++)
		envp[k] = H->envp[k];
	snprintf(notkv, sizeof(notkv), "NOTIFY_SOCKET=%s", notify);
	envp[n++] = notkv;
	envp[n++] = "LISTEN_FDS=1";
	envp[n++] = pidkv;
	h_ctx_path(out, sizeof(out), "daemon.out");
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		snprintf(pidkv, sizeof(pidkv), "LISTEN_PID=%d", (int)getpid());
		dup2(lfd, 3);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		dup2(open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execve(H->dbgctld, (char *const []){ (char *)H->dbgctld,
		    "--foreground", NULL }, envp);
		_exit(127);
	}
	free(envp);
	H->fg_daemon = pid;
	return pid;
}

/* Add notifications from fd to b until one holds text; false at the bound. */
static bool
manager_heard(int fd, struct h_bytes *b, const char *text)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	char buf[4096];
	ssize_t n;

	while (b->p == NULL || strstr(b->p, text) == NULL) {
		if (h_now() > end)
			return false;
		if (poll(&pfd, 1, 100) <= 0 ||
		    (n = recv(fd, buf, sizeof(buf) - 1, 0)) <= 0)
			continue;
		h_bytes_add(b, buf, (size_t)n);
		h_bytes_add(b, "\n--\n", 4);
	}
	return true;
}

/*
 * A session of the new daemon sees none of what the hand-over passed: no
 * variable of it, and no socket (a listener or the channel).
 */
static void
session_inherits_nothing(void)
{
	static const char *const hidden[] = { "LISTEN_PID=", "LISTEN_FDS=",
	    "LISTEN_FDNAMES=", "NOTIFY_SOCKET=", "DBGCTLD_REPLACE=", NULL };
	char path[64], fds[8192], *env;
	size_t len;
	pid_t prog;
	long id;
	int i;

	id = h_cli_launch_exec(H->marker, H_ARGS("sleep", "300"));
	prog = h_cli_status_pid(id, "pid");
	cr_assert(prog > 0 && h_wait_for(h_pid_environ_read, &prog, H_WAIT_BOUND),
	    "the session's sleep %d never named its session", (int)prog);
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)prog);
	env = h_read_file(path, &len);
	for (i = 0; hidden[i] != NULL; i++)
		cr_assert_eq(h_count(env, len, hidden[i]), 0, "the session's "
		    "sleep %d inherited %s", (int)prog, hidden[i]);
	free(env);
	h_pid_fds_text(prog, fds, sizeof(fds));
	cr_assert_null(strstr(fds, "socket:"), "the session's sleep %d holds "
	    "a socket: %s", (int)prog, fds);
}

/*
 * Under a service manager: the new daemon serves the manager's socket,
 * the old one says MAINPID= of the new one and the new one READY=1, its
 * sessions see nothing of the hand-over, and after shutdown the socket
 * file is still the manager's.
 */
Test(replace, a_managers_socket_stays_and_mainpid_moves)
{
	char		 notify[PATH_MAX], want[64];
	struct h_bytes	 b = { NULL, 0 };
	struct h_res	 r;
	struct stat	 st;
	json_t		*hello;
	pid_t		 old, new, left[4];
	int		 lfd, nfd;

	h_ctx_path(notify, sizeof notify, "notify");
	nfd = manager_socket(SOCK_DGRAM, notify);
	lfd = manager_socket(SOCK_STREAM, H->sock);
	old = manager_start(lfd, notify);
	snprintf(want, sizeof want, "READY=1\nMAINPID=%ld", (long)old);
	cr_assert(manager_heard(nfd, &b, want), "no \"%s\": %s", want,
	    b.p != NULL ? b.p : "nothing");
	h_cli(&r, H_ARGS("daemon", "--replace"));
	new = replaced_by(&r, old);
	h_run_free(&r);
	snprintf(want, sizeof want, "MAINPID=%ld\nSTATUS=handing over",
	    (long)new);
	cr_assert(manager_heard(nfd, &b, want), "the old daemon did not say "
	    "\"%s\": %s", want, b.p);
	snprintf(want, sizeof want, "READY=1\nMAINPID=%ld", (long)new);
	cr_assert(manager_heard(nfd, &b, want), "the new daemon did not say "
	    "\"%s\": %s", want, b.p);
	hello = h_daemon_hello();
	cr_assert(json_is_true(h_jpath(hello, "activated")), "the new daemon "
	    "does not say it is activated: %s", json_dumps(hello,
	    JSON_COMPACT));
	json_decref(hello);
	cr_assert_eq(h_daemon_fg_wait(H_WAIT_BOUND), 0, "the old daemon %ld "
	    "did not exit 0", (long)old);
	session_inherits_nothing();
	h_cli_exit(&r, 0, H_ARGS("shutdown"));
	h_run_free(&r);
	cr_assert(lstat(H->sock, &st) == 0 && S_ISSOCK(st.st_mode), "the "
	    "manager's socket file %s was removed", H->sock);
	cr_assert_eq(h_daemon_list(left, 4), 0, "after shutdown, dbgctld %ld "
	    "is left", (long)left[0]);
	free(b.p);
	close(lfd);
	close(nfd);
}
