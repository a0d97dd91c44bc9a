/*
 * Rig hosts over SSH: a real sshd of the test's own on a loopback port,
 * and the client with DBGCTL_HOST=ssh://127.0.0.1:PORT/DIR/sock, which
 * runs the build's `dbgctl dial-stdio` there. Every command works through
 * it; a lease ends with the ssh process; an unknown host key, a refused
 * key, a missing far-side dbgctl, no ssh and no host each fail fast,
 * saying so, with exit 3.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(ssh, .init = h_ctx_setup, .fini = h_ssh_teardown, .timeout = 240);

/* How long a failure of the link may take to be told (s). */
#define SSH_FAIL_FAST	(10.0 * H_SLOW)

/* A bound for a verb the daemon answers at once (ms, as text). */
#define SSH_BOUND	"20000"

/* The daemon on the test's socket and sshd; clients go through ssh. */
static struct h_ssh *
ssh_setup(void)
{
	struct h_ssh *s;

	h_daemon_fg();
	s = h_ssh_start(NULL);
	h_ssh_use(s);
	return s;
}

/* Run dbgctl ARGS... over ssh; assert exit 0 and text on stdout. */
static void
ssh_says(const char *text, const char *const args[])
{
	struct h_res r;

	h_cli_exit(&r, 0, args);
	cr_assert(strstr(r.out, text) != NULL, "dbgctl %s ...: expected \"%s\" "
	    "on stdout, got \"%s\" (stderr \"%s\")", args[0], text,
	    h_shown(r.out, r.out_len, 600), r.err);
	h_run_free(&r);
}

/*
 * Run dbgctl ARGS... expected to fail to reach the daemon: exit 3 within
 * SSH_FAIL_FAST, stderr naming the address and holding text.
 */
static void
ssh_fails(const struct h_ssh *s, const char *text, const char *const args[])
{
	struct h_res r;

	h_cli(&r, args);
	cr_assert_eq(r.code, 3, "dbgctl %s: expected exit 3, got %d (stderr "
	    "\"%s\")", args[0], r.code, r.err);
	cr_assert(strstr(r.err, s->url) != NULL && strstr(r.err, text) !=
	    NULL, "dbgctl %s: expected \"%s\" and the address in \"%s\"",
	    args[0], text, r.err);
	cr_assert_lt(r.elapsed, SSH_FAIL_FAST, "dbgctl %s took %.1f s to fail",
	    args[0], r.elapsed);
	h_run_free(&r);
}

/* Replace the client's ssh config line that starts with key by line. */
static void
ssh_client_option(const struct h_ssh *s, const char *key, const char *line)
{
	char *text, *at, *end, out[8192];
	FILE *f;

	text = h_read_file(s->config, NULL);
	cr_assert_not_null(text, "%s", s->config);
	at = strstr(text, key);
	cr_assert_not_null(at, "%s in %s", key, s->config);
	end = strchr(at, '\n');
	snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, line,
	    end);
	free(text);
	f = fopen(s->config, "w");
	cr_assert_not_null(f, "%s", s->config);
	fputs(out, f);
	fclose(f);
}

/* What ssh_children looks for: the parent and the command name. */
struct ssh_parent {
	pid_t		 ppid;
	const char	*comm;
};

/* Predicate of h_pid_scan: pid is a child of the parent, of that name. */
static bool
ssh_is_child(pid_t pid, void *arg)
{
	struct ssh_parent *p = arg;
	char comm[64];

	if (h_pid_ppid(pid) != p->ppid)
		return false;
	h_pid_comm(pid, comm, sizeof comm);
	return strcmp(comm, p->comm) == 0;
}

/* The children of ppid named comm, at most max, into out; how many. */
static int
ssh_children(pid_t ppid, const char *comm, pid_t *out, int max)
{
	struct ssh_parent p = { ppid, comm };

	return h_pid_scan(ssh_is_child, &p, out, max);
}

/* An exec session over ssh: launch, list, status, send, recv, expect, logs, pipe, signal, stop, rm, prune, deadline, shutdown. */
Test(ssh, every_command_on_an_exec_session)
{
	struct h_res r;
	char ids[32];
	json_t *dl;
	long id;

	ssh_setup();
	ssh_says("pong", H_ARGS("ping"));
	ssh_says("dbgctl", H_ARGS("version"));
	id = h_cli_launch(H_ARGS("--kind", "exec", "--name", "viassh",
	    "--transport", "--", "cat"));
	h_idstr(id, ids, sizeof ids);
	ssh_says("viassh", H_ARGS("list"));
	ssh_says("running", H_ARGS("status", "viassh"));
	ssh_says("\"viassh\"", H_ARGS("--json", "list"));
	h_cli_exit(&r, 0, H_ARGS("send", ids, "hello over ssh\n"));
	h_run_free(&r);
	ssh_says("hello over ssh", H_ARGS("recv", "--timeout", SSH_BOUND,
	    ids));
	h_cli_exit(&r, 0, H_ARGS("send", ids, "marker-42\n"));
	h_run_free(&r);
	ssh_says("marker-42", H_ARGS("expect", "--stream", "target",
	    "--from", "0", "--timeout", SSH_BOUND, ids, "marker-[0-9]+"));
	ssh_says("marker-42", H_ARGS("logs", "--stream", "target", ids));
	/* What is left by the answer: the record's write comes between. */
	h_cli_exit(&r, 0, H_ARGS("--json", "deadline", ids, "30000"));
	dl = json_loads(r.out, 0, NULL);
	cr_assert(h_jint(dl, "deadline.in_ms", -1) > 25000 &&
	    h_jint(dl, "deadline.in_ms", -1) <= 30000, "deadline 30000 over "
	    "ssh answered %s", r.out);
	json_decref(dl);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("deadline", ids, "off"));
	h_run_free(&r);
	/* pipe: stdin's end is cat's end, and so the stream's. */
	h_cli_input(&r, "through the pipe\n", H_ARGS("pipe", ids));
	cr_assert_eq(r.code, 0, "pipe: exit %d (%s)", r.code, r.err);
	cr_assert(strstr(r.out, "through the pipe") != NULL, "pipe gave "
	    "\"%s\"", r.out);
	h_run_free(&r);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "after pipe's EOF");
	id = h_cli_launch_sh(NULL, "sleep 300");
	h_idstr(id, ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("signal", ids, "TERM"));
	h_run_free(&r);
	h_cli_wait_ended(id, H_WAIT_BOUND);
	ssh_says("", H_ARGS("rm", ids));
	h_cli_launch_sh(NULL, "sleep 300");
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
	ssh_says("", H_ARGS("prune"));
	h_cli_expect_list(0, NULL, "after prune over ssh");
	h_cli_exit(&r, 0, H_ARGS("shutdown"));
	h_run_free(&r);
	cr_assert_geq(h_daemon_fg_wait(H_WAIT_BOUND), 0, "the daemon did not "
	    "exit after shutdown over ssh");
}

/* logs -f follows over ssh until the session ends; launch --wait takes its status. */
Test(ssh, logs_follow_and_launch_wait)
{
	struct h_proc p;
	struct h_res r;
	struct h_bytes b = { NULL, 0 };
	char ids[32];
	long id;

	ssh_setup();
	id = h_cli_launch_sh(NULL, "trap 'echo last-line; exit 0' TERM; "
	    "echo first-line; while :; do sleep 0.1; done");
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_cli_start(&p, H_ARGS("logs", "-f", ids)), 0, "logs -f");
	cr_assert_gt(h_run_out_until(&p, &b, 0, "first-line", H_WAIT_BOUND),
	    0, "logs -f over ssh never showed first-line: \"%s\"", b.p);
	h_cli_exit(&r, 0, H_ARGS("signal", ids, "TERM"));
	h_run_free(&r);
	h_run_wait(&p, H_WAIT_BOUND);
	cr_assert_eq(p.res.code, 0, "logs -f: exit %d (%s)", p.res.code,
	    p.res.err);
	cr_assert(strstr(p.res.out, "last-line") != NULL, "logs -f ended "
	    "without last-line: \"%s\"", p.res.out);
	h_run_free(&p.res);
	free(b.p);
	h_cli(&r, H_ARGS("launch", "--wait", "--kind", "exec", "--", "sh",
	    "-c", "exit 7"));
	cr_assert_eq(r.code, 7, "launch --wait over ssh: exit %d (%s)", r.code,
	    r.err);
	h_run_free(&r);
}

/* A gdb session over ssh: exec, halt, break, resume, eval, mem, regs, wait-stop, reset, load. */
Test(ssh, every_command_on_a_gdb_session)
{
	struct h_ssh *s;
	struct h_res r;
	char ids[32], url[sizeof s->url + 16];
	long id;

	s = ssh_setup();
	id = h_cli_launch(H_ARGS("--kind", "gdb", "-x", "run", "--",
	    h_ctx_fixture("FIX_TALLY"), "20000"));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "session %s: its target never ran", ids);
	ssh_says("stopped", H_ARGS("halt", "--timeout", SSH_BOUND, ids));
	ssh_says("breakpoint ", H_ARGS("break", ids, "tally_write"));
	ssh_says("tally_write", H_ARGS("resume", "--wait", "--timeout",
	    SSH_BOUND, ids));
	ssh_says("tally_write", H_ARGS("wait-stop", "--timeout", SSH_BOUND,
	    ids));
	ssh_says("2", H_ARGS("eval", ids, "1", "+", "1"));
	ssh_says(": ", H_ARGS("mem", ids, "&len", "8"));
	ssh_says("0x", H_ARGS("regs", ids));
	ssh_says("tally_write", H_ARGS("exec", "--timeout", SSH_BOUND, ids,
	    "--", "bt", "1"));
	ssh_says("by reset", H_ARGS("reset", "--halt", "--timeout", SSH_BOUND,
	    ids));
	h_cli_exit(&r, 1, H_ARGS("load", ids));
	cr_assert(strstr(r.err, "cannot load") != NULL, "load: \"%s\"", r.err);
	h_run_free(&r);
	ssh_says("gdb", H_ARGS("mi", "--version"));
	/* The front end's gdb: --connect takes ssh:// and beats DBGCTL_HOST. */
	snprintf(url, sizeof url, "--connect=%s", s->url);
	h_ctx_env_add("DBGCTL_HOST=tcp:127.0.0.1:1");
	h_run(&r, H_RUN_BOUND, H_ARGS(h_ctx_fixture("DBGCTL_GDB_BIN"), url,
	    "--version", ids));
	cr_assert(r.code == 0 && strstr(r.out, "GNU gdb") != NULL,
	    "dbgctl-gdb %s --version: exit %d, \"%s\" (%s)", url, r.code,
	    r.out, r.err);
	h_run_free(&r);
}

/* A lease ends when the ssh process that carries its connection is killed. */
Test(ssh, a_lease_ends_when_ssh_is_killed)
{
	struct h_proc p;
	char marker[64], ws[96];
	pid_t child[4], sleeper;
	int n;

	ssh_setup();
	h_marker_new("SSH_LEASE", marker, sizeof marker);
	cr_assert_eq(h_cli_start(&p, H_ARGS("launch", "--lease", "--wait",
	    "--kind", "exec", "--env", marker, "--", "sleep", "300")), 0,
	    "launch --lease");
	h_marker_wait(marker, "sleep", 1);
	sleeper = h_marker_pid(marker, "sleep");
	n = ssh_children(p.pid, "ssh", child, 4);
	cr_assert_eq(n, 1, "the client (pid %d) has %d ssh children", p.pid,
	    n);
	cr_assert_eq(kill(child[0], SIGKILL), 0, "kill ssh");
	h_run_wait(&p, H_WAIT_BOUND);
	cr_assert_eq(p.res.code, 3, "launch --lease after ssh's death: %s "
	    "(%s)", h_run_wstatus(p.res.status, ws, sizeof ws), p.res.err);
	cr_assert(strstr(p.res.err, "killed by signal 9") != NULL, "stderr: "
	    "\"%s\"", p.res.err);
	h_run_free(&p.res);
	cr_assert(h_wait_for(h_pid_tracked_gone, (struct h_tracked[]){
	    { "sleep", sleeper, h_pid_start(sleeper) }, { NULL, 0, 0 } },
	    H_WAIT_BOUND), "the leased session's sleep outlived ssh");
}

/* An unknown host key, and a changed one, fail fast; the check is never turned off. */
Test(ssh, an_unknown_or_changed_host_key_fails_fast)
{
	struct h_ssh *s = ssh_setup();
	char line[PATH_MAX + 256], key[PATH_MAX], known[PATH_MAX + 128], *pub;
	struct h_res r;
	FILE *f;

	snprintf(line, sizeof line, "  UserKnownHostsFile %s/nothing-known",
	    s->dir);
	ssh_client_option(s, "  UserKnownHostsFile", line);
	ssh_fails(s, "host key is unknown or has changed", H_ARGS("list"));
	ssh_fails(s, "Host key verification failed", H_ARGS("list"));
	/* Another key where the host's should be: a changed one. */
	snprintf(key, sizeof key, "%s/impostor", s->dir);
	h_run(&r, H_RUN_BOUND, H_ARGS("/usr/bin/ssh-keygen", "-q", "-t",
	    "ed25519", "-N", "", "-f", key));
	cr_assert_eq(r.code, 0, "ssh-keygen: %s", r.err);
	h_run_free(&r);
	strcat(key, ".pub");
	pub = h_read_file(key, NULL);
	cr_assert_not_null(pub, "%s", key);
	*strchrnul(strchr(pub, ' ') + 1, ' ') = '\0';
	snprintf(known, sizeof known, "%s/changed-hosts", s->dir);
	f = fopen(known, "w");
	cr_assert_not_null(f, "%s", known);
	fprintf(f, "[127.0.0.1]:%d %s\n", s->port, pub);
	fclose(f);
	free(pub);
	snprintf(line, sizeof line, "  UserKnownHostsFile %s", known);
	ssh_client_option(s, "  UserKnownHostsFile", line);
	ssh_fails(s, "host key is unknown or has changed", H_ARGS("list"));
	ssh_fails(s, "has changed", H_ARGS("list"));
}

/* A key the host does not accept fails fast, never asking for a password. */
Test(ssh, a_refused_key_fails_fast)
{
	struct h_ssh *s = ssh_setup();
	char line[PATH_MAX + 64], key[PATH_MAX];
	struct h_res r;

	snprintf(key, sizeof key, "%s/other_key", s->dir);
	h_run(&r, H_RUN_BOUND, H_ARGS("/usr/bin/ssh-keygen", "-q", "-t",
	    "ed25519", "-N", "", "-f", key));
	cr_assert_eq(r.code, 0, "ssh-keygen: %s", r.err);
	h_run_free(&r);
	snprintf(line, sizeof line, "  IdentityFile %s", key);
	ssh_client_option(s, "  IdentityFile", line);
	ssh_fails(s, "authentication refused", H_ARGS("list"));
	ssh_fails(s, "Permission denied", H_ARGS("list"));
}

/* No dbgctl on the PATH the far side sees fails fast, saying so. */
Test(ssh, a_missing_far_side_dbgctl_fails_fast)
{
	struct h_ssh *s;

	h_daemon_fg();
	s = h_ssh_start("/usr/bin:/bin");
	h_ssh_use(s);
	ssh_fails(s, "dbgctl is not installed on the host", H_ARGS("list"));
	ssh_fails(s, "command not found", H_ARGS("ping"));
}

/* No ssh program, and no server on the port, fail fast, saying so. */
Test(ssh, no_ssh_and_no_host_fail_fast)
{
	struct h_ssh *s = ssh_setup();

	char kv[PATH_MAX + 64];

	h_ctx_env_add("DBGCTL_SSH=/nonexistent/ssh");
	ssh_fails(s, "cannot run /nonexistent/ssh", H_ARGS("list"));
	snprintf(kv, sizeof kv, "DBGCTL_SSH=ssh -F %s", s->config);
	h_ctx_env_add(kv);
	h_ssh_stop();
	ssh_fails(s, "host unreachable", H_ARGS("list"));
}

/* DBGCTL_SSH_COMMAND names the far side's command; -H on the line beats the environment; -H unix:PATH is -s; bad addresses are usage errors. */
Test(ssh, the_remote_command_and_the_option)
{
	struct h_ssh *s = ssh_setup();
	char kv[PATH_MAX + 64];
	struct h_res r;

	snprintf(kv, sizeof kv, "DBGCTL_SSH_COMMAND=%s dial-stdio", H->dbgctl);
	h_ctx_env_add(kv);
	h_ctx_env_add("DBGCTL_HOST=tcp:127.0.0.1:1");
	ssh_says("pong", H_ARGS("-H", s->url, "ping"));
	ssh_says("pong", H_ARGS("ping", "--host", s->url));
	snprintf(kv, sizeof kv, "unix:%s", H->sock);
	ssh_says("pong", H_ARGS("-H", kv, "ping"));
	h_cli(&r, H_ARGS("-H", "ssh://-oProxyCommand=x/sock", "ping"));
	cr_assert_eq(r.code, 2, "a host that is an option: exit %d", r.code);
	cr_assert(strstr(r.err, "bad host name") != NULL, "\"%s\"", r.err);
	h_run_free(&r);
	h_cli(&r, H_ARGS("-H", "ssh://127.0.0.1:0", "ping"));
	cr_assert_eq(r.code, 2, "port 0: exit %d", r.code);
	h_run_free(&r);
}

/*
 * dial-stdio starts the far daemon for a command that may (launch), not
 * for ping (--no-start); by itself it bridges bytes and ends at EOF.
 */
Test(ssh, dial_stdio_starts_the_daemon_as_the_client_does)
{
	struct h_ssh *s = h_ssh_start(NULL);
	struct h_res r;
	long id;

	h_ssh_use(s);
	h_cli(&r, H_ARGS("ping"));
	cr_assert_eq(r.code, 3, "ping with no daemon: exit %d", r.code);
	cr_assert(strstr(r.err, "no daemon is running") != NULL, "\"%s\"",
	    r.err);
	h_run_free(&r);
	cr_assert_lt(h_daemon_pid(), 0, "ping over ssh started a daemon");
	id = h_cli_launch_sh(NULL, "sleep 300");
	cr_assert_gt(id, 0, "launch");
	cr_assert_gt(h_daemon_pid(), 0, "launch over ssh started no daemon");
	h_ctx_env_add("DBGCTL_HOST=");
	h_run_input(&r, H_RUN_BOUND, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}\n", H_ARGS(H->dbgctl, "-s", H->sock,
	    "dial-stdio"));
	cr_assert_eq(r.code, 0, "dial-stdio: exit %d (%s)", r.code, r.err);
	cr_assert(strstr(r.out, "\"pong\":true") != NULL, "dial-stdio gave "
	    "\"%s\"", r.out);
	h_run_free(&r);
}

/* Predicate: the daemon at the path arg answers a connection. */
static bool
ssh_other_listens(void *arg)
{
	struct h_conn c;

	if (h_conn_open(&c, arg) != 0)
		return false;
	h_conn_close(&c);
	return true;
}

/*
 * A copy of the binary src at path, 0755: uid 65534 cannot reach the
 * build's own where the checkout lies under a 0700 directory (/root).
 */
static void
ssh_daemon_copy(const char *src, const char *path)
{
	char	*bin;
	size_t	 len;
	int	 fd;

	bin = h_read_file(src, &len);
	cr_assert_not_null(bin, "read %s", src);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	cr_assert_neq(fd, -1, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, bin, len), (ssize_t)len, "write %s", path);
	cr_assert_eq(close(fd), 0);
	free(bin);
}

/*
 * dial-stdio reaches only the invoking user's own daemon: root, whom every
 * daemon admits, is refused one that runs as nobody (uid 65534).
 */
Test(ssh, dial_stdio_refuses_another_users_daemon)
{
	char dir[512], sock[PATH_MAX], listen[PATH_MAX + 16];
	char state[PATH_MAX], bin[PATH_MAX], keeper[PATH_MAX];
	struct h_res r;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("needs root, to run a daemon as another user");
	h_ctx_path(dir, sizeof dir, "other");
	snprintf(sock, sizeof sock, "%s/sock", dir);
	snprintf(state, sizeof state, "XDG_STATE_HOME=%s/state", dir);
	snprintf(listen, sizeof listen, "unix:%s", sock);
	cr_assert_eq(mkdir(dir, 0700), 0, "%s", dir);
	cr_assert(chown(dir, 65534, 65534) == 0 && chmod(H->dir, 0711) == 0,
	    "chown %s: %s", dir, strerror(errno));
	/* The daemon and, beside it where it looks, its keeper. */
	snprintf(bin, sizeof bin, "%s/dbgctld", dir);
	ssh_daemon_copy(H->dbgctld, bin);
	snprintf(keeper, sizeof keeper, "%s", H->dbgctld);
	snprintf(strrchr(keeper, '/'), sizeof keeper - (size_t)(strrchr(keeper,
	    '/') - keeper), "/dbgctl-keeper");
	snprintf(bin, sizeof bin, "%s/dbgctl-keeper", dir);
	ssh_daemon_copy(keeper, bin);
	snprintf(bin, sizeof bin, "%s/dbgctld", dir);
	h_ctx_env_add(state);
	pid = fork();
	cr_assert_neq(pid, -1, "fork");
	if (pid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(126);
		execve(bin, (char *const *)H_ARGS(bin, "--foreground",
		    "--listen", listen), H->envp);
		_exit(127);
	}
	cr_assert(h_wait_for(ssh_other_listens, sock, H_WAIT_BOUND),
	    "the daemon of uid 65534 did not listen at %s", sock);
	h_run_input(&r, H_RUN_BOUND, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}\n", H_ARGS(H->dbgctl, "-s", sock,
	    "dial-stdio", "--no-start"));
	kill(pid, SIGTERM);
	h_run_reap(pid, H_WAIT_BOUND);
	cr_assert_eq(r.code, 3, "dial-stdio to uid 65534's daemon: exit %d "
	    "(%s), output \"%s\"", r.code, r.err, r.out);
	cr_assert(strstr(r.err, "runs as uid 65534") != NULL && r.out_len ==
	    0, "stderr \"%s\", stdout \"%s\"", r.err, r.out);
	h_run_free(&r);
}

/*
 * Predicate of h_pid_scan: a dbgctl (dial-stdio) whose parent is an sshd
 * below the test's own (arg, its pid), not another test's beside it.
 */
static bool
ssh_is_dial(pid_t pid, void *arg)
{
	pid_t	sshd = *(pid_t *)arg, p;
	char	comm[64];
	int	up;

	h_pid_comm(pid, comm, sizeof comm);
	if (strcmp(comm, "dbgctl") != 0)
		return false;
	h_pid_comm(h_pid_ppid(pid), comm, sizeof comm);
	if (strcmp(comm, "sshd") != 0)
		return false;
	for (p = h_pid_ppid(pid), up = 0; p > 1 && up < 4; p = h_pid_ppid(p),
	    up++)
		if (p == sshd)
			return true;
	return false;
}

/* The pipes pid holds, as "pipe:[INODE]" targets into out; how many. */
static int
ssh_pipes(pid_t pid, char (*out)[PATH_MAX], int max)
{
	char (*target)[PATH_MAX] = calloc(H_MAXFDS, PATH_MAX);
	int fds[H_MAXFDS], n, i, k = 0;

	cr_assert_not_null(target);
	n = h_pid_fds(pid, fds, target, H_MAXFDS);
	for (i = 0; i < n && k < max; i++)
		if (strncmp(target[i], "pipe:", 5) == 0)
			snprintf(out[k++], PATH_MAX, "%s", target[i]);
	free(target);
	return k;
}

/* How many of the pipes in a (na) are in b (nb). */
static int
ssh_pipes_shared(char (*a)[PATH_MAX], int na, char (*b)[PATH_MAX], int nb)
{
	int i, j, n = 0;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			if (strcmp(a[i], b[j]) == 0) {
				n++;
				break;
			}
	return n;
}

/* Where fd of pid points, into buf. */
static const char *
ssh_fd_target(pid_t pid, int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t l;

	snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
	l = readlink(path, buf, len - 1);
	buf[l > 0 ? l : 0] = '\0';
	return buf;
}

/*
 * No process copies between ssh and the daemon: dial-stdio hands sshd's
 * pipes to the daemon, keeps none of them (its stdin and stdout are
 * /dev/null), and the daemon holds the pipes sshd holds the other ends of;
 * requests and replies go through them, and dial-stdio ends with ssh.
 */
Test(ssh, the_daemon_reads_and_writes_sshs_pipes_itself)
{
	static char sshd_p[64][PATH_MAX], dmn_p[64][PATH_MAX];
	struct h_tracked dial[2] = { { NULL, 0, 0 }, { NULL, 0, 0 } };
	struct h_ssh *s;
	struct h_proc p;
	char marker[64], t0[PATH_MAX], t1[PATH_MAX];
	pid_t pid, sshd, child[4];
	int n, shared;

	s = ssh_setup();
	h_marker_new("SSH_DIAL", marker, sizeof marker);
	cr_assert_eq(h_cli_start(&p, H_ARGS("launch", "--lease", "--wait",
	    "--kind", "exec", "--env", marker, "--", "sleep", "300")), 0,
	    "launch --lease");
	/* The reply to launch --wait came back through the pipes. */
	h_marker_wait(marker, "sleep", 1);
	n = h_pid_scan(ssh_is_dial, &s->pid, &pid, 1);
	cr_assert_eq(n, 1, "no dial-stdio under sshd");
	h_pid_track(&dial[0], "dial-stdio", pid);
	ssh_fd_target(pid, 0, t0, sizeof t0);
	ssh_fd_target(pid, 1, t1, sizeof t1);
	cr_assert(strcmp(t0, "/dev/null") == 0 && strcmp(t1, "/dev/null") ==
	    0, "dial-stdio still holds stdin %s, stdout %s", t0, t1);
	sshd = h_pid_ppid(pid);
	n = ssh_pipes(sshd, sshd_p, 64);
	shared = ssh_pipes_shared(sshd_p, n, dmn_p, ssh_pipes(h_daemon_pid(),
	    dmn_p, 64));
	cr_assert_geq(shared, 2, "the daemon holds %d of sshd's %d pipes",
	    shared, n);
	ssh_says("\"pong\"", H_ARGS("--json", "ping"));
	n = ssh_children(p.pid, "ssh", child, 4);
	cr_assert_eq(n, 1, "the client (pid %d) has %d ssh children", p.pid,
	    n);
	cr_assert_eq(kill(child[0], SIGKILL), 0, "kill ssh");
	h_run_wait(&p, H_WAIT_BOUND);
	h_run_free(&p.res);
	cr_assert(h_wait_for(h_pid_tracked_gone, dial, H_WAIT_BOUND),
	    "dial-stdio outlived its ssh");
}

/* Connect to the daemon's socket (asserted); the socket. */
static int
ssh_unix_connect(struct h_conn *c)
{
	cr_assert_eq(h_conn_open(c, H->sock), 0, "connect %s", H->sock);
	return c->fd;
}

/* Whether the daemon closed sock (non-blocking) within the bound, reading what comes first. */
static bool
ssh_closed_by_daemon(int sock)
{
	struct pollfd pfd = { .fd = sock, .events = POLLIN };
	char buf[4096];
	ssize_t n;
	int left = H_WAIT_BOUND;

	while (left > 0) {
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			return false;
		left -= 100;
		n = read(sock, buf, sizeof buf);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
	}
	return false;
}

/* What ssh_fds_back waits for: the daemon's pid and its fd count. */
struct ssh_fd_count {
	pid_t	pid;
	int	want;
};

/* Predicate: the daemon holds no more descriptors than it did. */
static bool
ssh_fds_back(void *arg)
{
	struct ssh_fd_count *f = arg;
	int fds[H_MAXFDS];

	return h_pid_fds(f->pid, fds, NULL, H_MAXFDS) <= f->want;
}

/*
 * Send line with nfds descriptors on a new connection; assert the daemon
 * drops the connection and its descriptor count comes back to count's.
 */
static void
ssh_fds_refused(struct ssh_fd_count *count, const char *line, const int *fds,
    int nfds, const char *what)
{
	struct h_conn	 raw;
	int		 sock = ssh_unix_connect(&raw);

	h_conn_send_fds(sock, line, fds, nfds);
	cr_assert(ssh_closed_by_daemon(sock), "%s: kept open", what);
	h_conn_close(&raw);
	cr_assert(h_wait_for(ssh_fds_back, count, H_WAIT_BOUND),
	    "%s: the daemon kept them", what);
}

/*
 * After a first request and its answer, a dial with two pipes beside it
 * on the same connection: the daemon no longer looks for descriptors
 * there, so they are closed unread, the dial is refused for want of
 * them, the connection goes on, and the daemon's count comes back.
 */
static void
ssh_fds_after_first(pid_t daemon, const int *fds)
{
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}\n";
	static const char dial[] = "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"dial\"}\n";
	struct ssh_fd_count	 count = { .pid = daemon };
	struct h_conn		 raw;
	const char		*msg;
	json_t			*r;
	int			 sock = ssh_unix_connect(&raw);
	int			 fdv[H_MAXFDS];

	h_conn_send_fds(sock, ping, NULL, 0);
	r = h_conn_reply(&raw, 1, H_WAIT_BOUND);
	cr_assert_not_null(r, "no answer to the first request");
	json_decref(r);
	/* The daemon's count with this connection open, before the fds. */
	count.want = h_pid_fds(daemon, fdv, NULL, H_MAXFDS);
	h_conn_send_fds(sock, dial, fds, 2);
	r = h_conn_reply(&raw, 2, H_WAIT_BOUND);
	msg = json_string_value(h_jpath(r, "error.message"));
	cr_assert(msg != NULL && strstr(msg, "SCM_RIGHTS") != NULL,
	    "a dial after the first request was not refused: %s",
	    r != NULL ? json_dumps(r, JSON_COMPACT) : "no answer");
	json_decref(r);
	h_conn_send_fds(sock, ping, NULL, 0);
	r = h_conn_reply(&raw, 1, H_WAIT_BOUND);
	cr_assert_not_null(r, "no answer after the refused dial");
	json_decref(r);
	cr_assert(h_wait_for(ssh_fds_back, &count, H_WAIT_BOUND),
	    "the daemon kept the descriptors passed after the first request");
	h_conn_close(&raw);
}

/*
 * A local peer cannot make the daemon keep descriptors: fds passed with a
 * request other than dial, more than two (a hundred), or ones that are
 * not pipes or sockets drop the connection; fds passed after the first
 * request are closed unread and the dial is refused; either way the
 * daemon's count is back where it was; dial without fds is refused and
 * the connection goes on.
 */
Test(ssh, passed_descriptors_are_never_kept_without_dial)
{
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}\n";
	static const char dial[] = "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"dial\"}\n";
	struct ssh_fd_count count;
	struct h_conn c;
	int pp[2], fds[4], many[100], fdv[H_MAXFDS], i;
	json_t *r;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	r = h_conn_call(&c, "ping", NULL, H_WAIT_BOUND);
	cr_assert_not_null(r, "ping");
	json_decref(r);
	cr_assert_eq(pipe2(pp, O_CLOEXEC), 0, "pipe");
	fds[0] = pp[0];
	fds[1] = pp[1];
	fds[2] = pp[0];
	count.pid = h_daemon_pid();
	count.want = h_pid_fds(count.pid, fdv, NULL, H_MAXFDS);
	cr_assert_gt(count.want, 0, "the daemon's fds");

	ssh_fds_refused(&count, ping, fds, 2, "fds beside ping");
	ssh_fds_refused(&count, dial, fds, 3, "three fds beside dial");
	/* More than libuv's 64 a message: truncated. */
	for (i = 0; i < 100; i++)
		many[i] = pp[i % 2];
	ssh_fds_refused(&count, dial, many, 100, "a hundred fds");
	ssh_fds_after_first(count.pid, fds);
	/* Not pipes: a directory. */
	fds[3] = open("/", O_RDONLY | O_CLOEXEC);
	cr_assert_neq(fds[3], -1, "open /");
	ssh_fds_refused(&count, dial, (int[]){ fds[3], fds[3] }, 2,
	    "a directory");
	close(fds[3]);

	/* dial without fds: refused, the connection goes on. */
	r = h_conn_call(&c, "dial", NULL, H_WAIT_BOUND);
	cr_assert(r != NULL && json_object_get(r, "error") != NULL,
	    "dial without fds was not refused");
	json_decref(r);
	r = h_conn_call(&c, "ping", NULL, H_WAIT_BOUND);
	cr_assert_not_null(r, "ping after a refused dial");
	json_decref(r);
	h_conn_close(&c);
	close(pp[0]);
	close(pp[1]);
}

/*
 * Pass fds with dial on a new connection; assert that it is refused with
 * want in the error's message.
 */
static void
ssh_dial_refused(const int fds[2], const char *want, const char *what)
{
	static const char dial[] = "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"dial\"}\n";
	struct h_conn	 b;
	json_t		*r;
	const char	*msg;

	h_conn_send_fds(ssh_unix_connect(&b), dial, fds, 2);
	r = h_conn_reply(&b, 2, H_WAIT_BOUND);
	msg = json_string_value(h_jpath(r, "error.message"));
	cr_assert(msg != NULL && strstr(msg, want) != NULL,
	    "dial with %s was not refused: %s", what,
	    r != NULL ? json_dumps(r, JSON_COMPACT) : "no answer");
	json_decref(r);
	h_conn_close(&b);
}

/*
 * A client that passes, with dial, the socket of another of its own
 * connections to the daemon (stdin and stdout both) would have the daemon
 * read its own replies as requests and answer them without end, as would
 * both ends of one pipe: the dial is refused, saying why, and the other
 * connection and the daemon go on answering.
 */
Test(ssh, dial_with_a_connection_to_the_daemon_itself_is_refused)
{
	struct h_conn	 a, c;
	json_t		*r;
	int		 pp[2];

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&a, H->sock), 0, "connect");
	r = h_conn_call(&a, "ping", NULL, H_WAIT_BOUND);
	cr_assert_not_null(r, "ping");
	json_decref(r);
	ssh_dial_refused((int[]){ a.fd, a.fd }, "own socket",
	    "a connection to the daemon");
	cr_assert_eq(pipe2(pp, O_CLOEXEC), 0, "pipe");
	ssh_dial_refused(pp, "one pipe", "both ends of one pipe");
	close(pp[0]);
	close(pp[1]);

	/* Its replies reach it, not the daemon's own reader. */
	r = h_conn_call(&a, "ping", NULL, H_WAIT_BOUND);
	cr_assert(r != NULL && json_object_get(r, "result") != NULL,
	    "the connection passed is not answered");
	json_decref(r);
	h_conn_close(&a);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect again");
	r = h_conn_call(&c, "ping", NULL, H_WAIT_BOUND);
	cr_assert_not_null(r, "the daemon stopped answering");
	json_decref(r);
	h_conn_close(&c);
}

/* The CPU time pid has used, in clock ticks (utime + stime); -1 if gone. */
static long
ssh_cpu_ticks(pid_t pid)
{
	char		 path[64], *buf, *p;
	unsigned long	 ut, st;
	size_t		 len;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((buf = h_read_file(path, &len)) == NULL)
		return -1;
	/* The fields after comm, which may hold anything, from state on. */
	p = strrchr(buf, ')');
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u "
	    "%*u %*u %lu %lu", &ut, &st) != 2) {
		free(buf);
		return -1;
	}
	free(buf);
	return (long)(ut + st);
}

/*
 * Dial's stdin and stdout as the two ends of one socketpair: nothing can
 * tell it from a peer's, so the dial is taken, and the daemon's replies
 * come back to it as lines. A response is never answered (the daemon
 * asks clients nothing), so a ping through it is the end of it: the
 * daemon is idle a second later, where it answered its own replies
 * without end before.
 */
Test(ssh, dial_with_both_ends_of_one_socketpair_does_not_loop)
{
	static const char dial[] = "{\"jsonrpc\":\"2.0\",\"id\":2,"
	    "\"method\":\"dial\"}\n";
	static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":7,"
	    "\"method\":\"ping\"}\n"
	    "[{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}]\n";
	struct h_conn	 b, c;
	long		 t0, t1;
	json_t		*r;
	int		 sp[2];
	pid_t		 d;

	d = h_daemon_fg();
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	h_conn_send_fds(ssh_unix_connect(&b), dial, sp, 2);
	r = h_conn_reply(&b, 2, H_WAIT_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.dialed")), "dial: %s",
	    r != NULL ? json_dumps(r, JSON_COMPACT) : "no answer");
	json_decref(r);
	/* Into the end the daemon reads; our copies go, so the pair is its own. */
	cr_assert_eq(write(sp[1], ping, sizeof ping - 1),
	    (ssize_t)(sizeof ping - 1));
	close(sp[0]);
	close(sp[1]);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	r = h_conn_call(&c, "ping", NULL, H_WAIT_BOUND);
	cr_assert_not_null(r, "the daemon stopped answering");
	json_decref(r);
	t0 = ssh_cpu_ticks(d);
	h_nap(1000);
	t1 = ssh_cpu_ticks(d);
	cr_assert(t0 >= 0 && t1 - t0 < 20, "the daemon used %ld ticks of CPU "
	    "in a second with nothing to do: it answers its own replies",
	    t1 - t0);
	h_conn_close(&c);
	h_conn_close(&b);
}

/*
 * A daemon from before dial, one connection long: it reads with read(2),
 * which drops passed descriptors, answers dial "method not found", then
 * pong to the next line. Runs in a child; never returns.
 */
static void __attribute__((noreturn))
ssh_old_daemon(int lfd)
{
	static const char nodial[] = "{\"jsonrpc\":\"2.0\",\"id\":\"dial-stdio\","
	    "\"error\":{\"code\":-32601,\"message\":\"no method \\\"dial\\\"\"}}\n";
	static const char pong[] = "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"result\":{\"pong\":true}}\n";
	char line[4096];
	int fd;

	if ((fd = accept(lfd, NULL, NULL)) == -1)
		_exit(1);
	if (h_read_line(fd, line, sizeof line) == 0 ||
	    strstr(line, "\"dial\"") == NULL ||
	    write(fd, nodial, sizeof nodial - 1) != sizeof nodial - 1)
		_exit(2);
	if (h_read_line(fd, line, sizeof line) == 0 ||
	    strstr(line, "\"ping\"") == NULL ||
	    write(fd, pong, sizeof pong - 1) != sizeof pong - 1)
		_exit(3);
	_exit(0);
}

/* With a daemon that has no dial, dial-stdio copies bytes as it always did. */
Test(ssh, dial_stdio_copies_for_a_daemon_without_dial)
{
	char path[256];
	struct h_res r;
	pid_t pid;
	int lfd, st;

	lfd = h_unix_listen("old.sock", path, sizeof path);
	pid = fork();
	cr_assert_neq(pid, -1, "fork");
	if (pid == 0)
		ssh_old_daemon(lfd);
	close(lfd);
	h_ctx_env_add("DBGCTL_HOST=");
	h_run_input(&r, H_RUN_BOUND, "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\"}\n", H_ARGS(H->dbgctl, "-s", path,
	    "dial-stdio", "--no-start"));
	cr_assert_eq(r.code, 0, "dial-stdio: exit %d (%s)", r.code, r.err);
	cr_assert(strstr(r.out, "\"pong\":true") != NULL && strstr(r.out,
	    "dial") == NULL, "dial-stdio gave \"%s\"", r.out);
	h_run_free(&r);
	cr_assert(h_run_waitpid(pid, H_WAIT_BOUND, &st) && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0, "the old daemon: status %#x", st);
}
