/*
 * Socket activation and the service manager's notifications: a daemon that
 * systemd-socket-activate starts on the first connection, or that is handed
 * a Unix and a TCP socket by LISTEN_FDS, serves them as its own and only
 * them, keeps the socket path at exit, and hides LISTEN_* and NOTIFY_SOCKET
 * from sessions; bad descriptors are refused at start; NOTIFY_SOCKET hears
 * READY=1 and STOPPING=1; and no client ever starts a second daemon beside
 * an activated socket, nor removes a file in the way.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(activate, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 120);

/* The activator the tests run the daemon under. */
#define ACT_SOCKET_ACTIVATE "/usr/bin/systemd-socket-activate"

/* The daemon the test runs: itself, or the wrapper around it. */
static const char *
act_daemon(void)
{
	return H->wrapper[0] != '\0' ? H->wrapper : H->dbgctld;
}

/*
 * Start argv as our child with the test's environment and extra (NULL or
 * NULL-terminated) after it, its output in DIR/daemon.out; the fds in
 * pass become its 3, 4, ..., and with LISTEN_FDS among extra, LISTEN_PID
 * is its own pid, as a service manager sets it. Returns the pid.
 */
static pid_t
act_spawn(const char *const argv[], const char *const extra[],
    const int *pass, int npass)
{
	char out[PATH_MAX], pidkv[64], **envp;
	size_t n = 0, k;
	int i, fd, high[8];
	bool listen_fds = false;
	pid_t pid;

	while (H->envp[n] != NULL)
		n++;
	envp = calloc(n + 16, sizeof(char *));
	for (k = 0; k < n; k++)
		envp[k] = H->envp[k];
	for (i = 0; extra != NULL && extra[i] != NULL; i++) {
		envp[n++] = (char *)extra[i];
		listen_fds |= strncmp(extra[i], "LISTEN_FDS=", 11) == 0;
	}
	if (listen_fds)
		envp[n++] = pidkv;
	h_ctx_path(out, sizeof(out), "daemon.out");
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		snprintf(pidkv, sizeof(pidkv), "LISTEN_PID=%d", (int)getpid());
		/* Out of the way first: a passed fd may already be 3 or 4. */
		for (i = 0; i < npass; i++)
			high[i] = fcntl(pass[i], F_DUPFD, 100);
		for (i = 0; i < npass; i++)
			dup2(high[i], 3 + i);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		dup2(open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
		dup2(fd, 1);
		dup2(fd, 2);
		closefrom(3 + npass);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	free(envp);
	return pid;
}

/* What the daemon (or its activator) wrote so far (malloc'd, maybe ""). */
static char *
act_output(void)
{
	char out[PATH_MAX], *text;

	h_ctx_path(out, sizeof(out), "daemon.out");
	text = h_read_file(out, NULL);
	return text != NULL ? text : strdup("");
}

/* Predicate: the path arg is a socket file. */
static bool
act_is_socket(void *arg)
{
	struct stat st;

	return lstat(arg, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The flag of /proc/net/unix for a listening socket (__SO_ACCEPTCON). */
#define ACT_ACCEPTCON 0x10000

/*
 * Predicate: a socket bound at the path arg listens, as /proc/net/unix
 * tells without connecting (a connect would start the daemon).
 */
static bool
act_listening(void *arg)
{
	const char *path = arg;
	char *text, *line, *next;
	unsigned long flags;
	bool found = false;
	int at;

	if ((text = h_read_file("/proc/net/unix", NULL)) == NULL)
		return false;
	for (line = strchr(text, '\n'); line != NULL && !found; line = next) {
		if ((next = strchr(++line, '\n')) != NULL)
			*next = '\0';
		at = -1;
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %*s %n", &flags,
		    &at) == 1 && at > 0)
			found = strcmp(line + at, path) == 0 &&
			    (flags & ACT_ACCEPTCON) != 0;
	}
	free(text);
	return found;
}

/*
 * Run the daemon under systemd-socket-activate on the test's socket, with
 * the variables the daemon needs passed on (it passes few by itself) and
 * extra ones (-E NAME=VALUE words, or NULL); it is our foreground daemon.
 * Returns once the socket listens, before any daemon runs: a client that
 * came between the activator's bind and its listen would wait (see
 * a_bound_socket_that_does_not_listen_is_left_alone).
 */
static pid_t
act_socket_activate(const char *const extra[])
{
	const char *argv[32];
	char listen[PATH_MAX + 16];
	int n = 0, i;
	pid_t pid;

	if (access(ACT_SOCKET_ACTIVATE, X_OK) != 0)
		cr_skip_test("%s: %s (the systemd package)", ACT_SOCKET_ACTIVATE,
		    strerror(errno));
	snprintf(listen, sizeof(listen), "--listen=%s", H->sock);
	argv[n++] = ACT_SOCKET_ACTIVATE;
	argv[n++] = listen;
	argv[n++] = "--fdname=dbgctl";
	argv[n++] = "-E";
	argv[n++] = "XDG_RUNTIME_DIR";
	argv[n++] = "-E";
	argv[n++] = "XDG_STATE_HOME";
	argv[n++] = "-E";
	argv[n++] = "DBGCTL_TEST_MARKER";
	for (i = 0; extra != NULL && extra[i] != NULL && n < 28; i++) {
		argv[n++] = "-E";
		argv[n++] = extra[i];
	}
	argv[n++] = act_daemon();
	argv[n++] = "--foreground";
	argv[n] = NULL;
	pid = act_spawn(argv, NULL, NULL, 0);
	H->fg_daemon = pid;
	if (!h_wait_for(act_listening, H->sock, H_WAIT_BOUND)) {
		char *text = act_output();

		cr_assert_fail("%s never listened on %s within %d ms; it "
		    "said: %s", ACT_SOCKET_ACTIVATE, H->sock, H_WAIT_BOUND,
		    text);
	}
	return pid;
}

/* Whether pid runs dbgctld and is ours, or names the test's socket. */
static bool
act_keep_dbgctld(pid_t pid, void *arg)
{
	char exe[PATH_MAX], path[64], *cmd;
	size_t len, i;
	bool named;

	(void)arg;
	if (strncmp(h_pid_exe(pid, exe, sizeof(exe)), "dbgctld", 7) != 0)
		return false;
	if (h_pid_ppid(pid) == getpid() || h_pid_sid(pid) == getsid(0))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((cmd = h_read_file(path, &len)) == NULL)
		return false;
	for (i = 0; i < len; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	named = strstr(cmd, H->sock) != NULL;
	free(cmd);
	return named;
}

/*
 * Assert that exactly one daemon serves the test: the activated one, pid
 * (the marker's, our children and session's, and any naming the socket).
 */
static void
act_expect_one_daemon(pid_t pid, const char *when)
{
	pid_t found[H_MAXPIDS];
	char report[4096] = "";
	int n, i;

	n = h_daemon_list(found, H_MAXPIDS);
	for (i = 0; i < n; i++)
		if (found[i] != pid)
			h_pid_describe(report, sizeof(report), "marked", found[i]);
	n = h_pid_scan(act_keep_dbgctld, NULL, found, H_MAXPIDS);
	for (i = 0; i < n; i++)
		if (found[i] != pid)
			h_pid_describe(report, sizeof(report), "ours", found[i]);
	cr_assert_str_eq(report, "", "%s: a dbgctld other than the activated "
	    "pid %d runs: %s", when, (int)pid, report);
	cr_assert(!h_pid_gone(pid), "%s: the activated daemon %d is gone",
	    when, (int)pid);
}

/* Assert that the daemon made no socket of its own at the default path. */
static void
act_expect_no_default_socket(void)
{
	char def[PATH_MAX];
	struct stat st;

	h_ctx_path(def, sizeof(def), "dbgctl/sock");
	cr_assert(lstat(def, &st) != 0, "the daemon bound its default socket "
	    "%s beside the activated one", def);
}

/* Shut the daemon down through the client; assert it exits 0 and keeps the socket. */
static void
act_shutdown(const char *when)
{
	struct h_res r;
	char pidfile[PATH_MAX + 8], *text;
	int st;

	h_cli(&r, H_ARGS("shutdown"));
	cr_assert_eq(r.code, 0, "%s: dbgctl shutdown: exit %d (stderr: %s)",
	    when, r.code, r.err);
	h_run_free(&r);
	st = h_daemon_fg_wait(H_WAIT_BOUND);
	text = act_output();
	cr_assert(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the "
	    "daemon did not exit 0 within %d ms of shutdown (status %d); it "
	    "said: %s", when, H_WAIT_BOUND, st, text);
	free(text);
	cr_assert(act_is_socket(H->sock), "%s: the activated socket %s was "
	    "removed at exit; its manager owns it", when, H->sock);
	snprintf(pidfile, sizeof(pidfile), "%s.pid", H->sock);
	cr_assert(access(pidfile, F_OK) != 0, "%s: the pidfile %s is left",
	    when, pidfile);
}

/* Assert that dbgctl version names both ends, 0.1.0, and the activation. */
static void
act_expect_version(pid_t pid)
{
	char want[128];
	struct h_res r;

	snprintf(want, sizeof(want), "dbgctl 0.1.0\ndbgctld 0.1.0 (pid %d, "
	    "protocol 1, socket-activated)\n", (int)pid);
	h_cli(&r, H_ARGS("version"));
	cr_assert(r.code == 0 && strcmp(r.out, want) == 0, "dbgctl version: "
	    "exit %d, printed \"%s\", want \"%s\" (stderr: %s)", r.code,
	    r.out, want, r.err);
	h_run_free(&r);
}

/*
 * The first clients of a socket that systemd-socket-activate holds, two at
 * once, start no daemon of their own: both are served by the one it
 * starts, which says it was activated, binds nothing beside, and leaves the
 * socket file to its manager at exit.
 */
Test(activate, served_by_the_activated_daemon_only)
{
	struct h_proc a, b;
	json_t *hello, *list;
	char exe[PATH_MAX];
	pid_t pid = act_socket_activate(NULL);

	cr_assert_str_eq(h_pid_exe(pid, exe, sizeof(exe)),
	    "systemd-socket-activate", "before any connection, pid %d is %s",
	    (int)pid, exe);
	h_cli_start(&a, H_ARGS("launch", "--kind", "exec", "--wait", "--",
	    "/bin/true"));
	h_cli_start(&b, H_ARGS("launch", "--kind", "exec", "--wait", "--",
	    "/bin/true"));
	h_run_wait(&a, H_RUN_BOUND);
	h_run_wait(&b, H_RUN_BOUND);
	cr_assert(a.res.code == 0 && b.res.code == 0, "launch --wait beside "
	    "the activated socket: exits %d and %d (stderr: %s | %s)",
	    a.res.code, b.res.code, a.res.err, b.res.err);
	h_run_free(&a.res);
	h_run_free(&b.res);
	hello = h_daemon_hello();
	cr_assert_not_null(hello, "no hello from the activated daemon");
	cr_assert_eq(h_jint(hello, "pid", -1), pid, "hello's pid %lld is not "
	    "the activated process %d", h_jint(hello, "pid", -1), (int)pid);
	cr_assert(json_is_true(json_object_get(hello, "activated")), "hello "
	    "does not say activated: %s", json_dumps(hello, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(hello, "version"), "0.1.0", "hello's version");
	json_decref(hello);
	act_expect_version(pid);
	act_expect_one_daemon(pid, "after two launches");
	act_expect_no_default_socket();
	list = h_cli_json(H_ARGS("list"));
	cr_assert_eq(json_array_size(json_object_get(list, "sessions")), 2,
	    "list: want the 2 sessions: %s", json_dumps(list, JSON_COMPACT));
	json_decref(list);
	json_decref(h_cli_json(H_ARGS("stop", "--all")));
	act_shutdown("systemd-socket-activate");
}

/* A datagram socket at the address NOTIFY_SOCKET would name (path or @name). */
static int
act_notify_socket(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", name);
	if (name[0] == '@') {
		sa.sun_path[0] = '\0';
		len = offsetof(struct sockaddr_un, sun_path) + strlen(name);
	}
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, len), 0, "bind %s: %s",
	    name, strerror(errno));
	return fd;
}

/*
 * A session program of an activated daemon that a manager also asked for
 * notifications gets none of LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES and
 * NOTIFY_SOCKET, nor the listening socket.
 */
Test(activate, sessions_inherit_no_activation)
{
	static const char *const hidden[] = { "LISTEN_PID=", "LISTEN_FDS=",
	    "LISTEN_FDNAMES=", "NOTIFY_SOCKET=", NULL };
	char notify[PATH_MAX], kv[PATH_MAX + 16], path[64], fds[8192];
	char *env;
	size_t len;
	long id;
	pid_t pid, prog;
	int ns, i;

	h_ctx_path(notify, sizeof(notify), "notify");
	ns = act_notify_socket(notify);
	snprintf(kv, sizeof(kv), "NOTIFY_SOCKET=%s", notify);
	pid = act_socket_activate(H_ARGS(kv));
	id = h_cli_launch_exec(H->marker, H_ARGS("sleep", "300"));
	prog = h_cli_status_pid(id, "pid");
	cr_assert_gt(prog, 0, "session %ld has no pid", id);
	cr_assert(h_wait_for(h_pid_environ_read, &prog, H_WAIT_BOUND), "the "
	    "environment of the session's sleep %d never named its session",
	    (int)prog);
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)prog);
	env = h_read_file(path, &len);
	for (i = 0; hidden[i] != NULL; i++)
		cr_assert_eq(h_count(env, len, hidden[i]), 0, "the session's "
		    "sleep %d inherited %s from the activated daemon %d",
		    (int)prog, hidden[i], (int)pid);
	free(env);
	h_pid_fds_text(prog, fds, sizeof(fds));
	cr_assert_null(strstr(fds, "socket:"), "the session's sleep %d holds "
	    "a socket: %s", (int)prog, fds);
	json_decref(h_cli_json(H_ARGS("stop", "--all")));
	act_shutdown("with NOTIFY_SOCKET");
	close(ns);
}

/* A Unix stream socket bound at path, not listening. */
static int
act_bound(const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	cr_assert_eq(bind(fd, (struct sockaddr *)&un, sizeof(un)), 0,
	    "bind %s: %s", path, strerror(errno));
	return fd;
}

/* A listening socket: Unix at path, or TCP on 127.0.0.1 (path NULL), its port in *port. */
static int
act_listener(const char *path, int *port)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int fd;

	if (path != NULL)
		fd = act_bound(path);
	else {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		cr_assert_eq(bind(fd, (struct sockaddr *)&in, sizeof(in)), 0,
		    "bind 127.0.0.1:0: %s", strerror(errno));
		getsockname(fd, (struct sockaddr *)&in, &len);
		*port = ntohs(in.sin_port);
	}
	cr_assert_eq(listen(fd, 16), 0, "listen: %s", strerror(errno));
	return fd;
}

/* A token file of mode 0600 in the test dir; its path into path. */
static void
act_token(char *path, size_t len)
{
	FILE *f;

	h_ctx_path(path, len, "token");
	cr_assert_not_null(f = fopen(path, "w"), "token file %s", path);
	fputs("the-token-of-this-test\n", f);
	fclose(f);
	cr_assert_eq(chmod(path, 0600), 0, "chmod %s", path);
}

/* Wait until our foreground daemon pings; assert it does, not exiting first. */
static void
act_wait_ping(pid_t pid)
{
	double end = h_now() + H_WAIT_BOUND / 1000.0;
	char *text;
	int st;

	while (!h_daemon_ping()) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			H->fg_daemon = 0;
			text = act_output();
			cr_assert_fail("the activated daemon exited (status %d) "
			    "before answering ping; it said: %s", h_run_code(st),
			    text);
		}
		cr_assert(h_now() < end, "the activated daemon: no ping within "
		    "%d ms", H_WAIT_BOUND);
		h_nap(10);
	}
}

/*
 * A Unix and a TCP socket handed over as fds 3 and 4 (LISTEN_FDS=2): the
 * Unix one is the daemon's socket, the TCP one wants the token as a
 * --listen tcp: one does, and the client is served on both.
 */
Test(activate, unix_and_tcp_handed_over)
{
	char token[PATH_MAX];
	struct h_conn c;
	struct h_res r;
	json_t *rep;
	int fds[2], port = 0;
	pid_t pid;

	act_token(token, sizeof(token));
	fds[0] = act_listener(H->sock, NULL);
	fds[1] = act_listener(NULL, &port);
	pid = act_spawn(H_ARGS(act_daemon(), "--foreground", "--token-file",
	    token), H_ARGS("LISTEN_FDS=2", "LISTEN_FDNAMES=local:tcp"), fds, 2);
	H->fg_daemon = pid;
	close(fds[0]);
	close(fds[1]);
	act_wait_ping(pid);
	rep = h_daemon_hello();
	cr_assert(json_is_true(json_object_get(rep, "activated")) &&
	    h_jint(rep, "pid", -1) == pid, "hello on the Unix socket: want "
	    "activated and pid %d: %s", (int)pid, json_dumps(rep, JSON_COMPACT));
	json_decref(rep);
	cr_assert_eq(h_conn_open_tcp(&c, port), 0, "connect to the activated "
	    "TCP port %d", port);
	rep = h_conn_call(&c, "ping", "{}", 10000);
	cr_assert_str_eq(h_jkind(rep), "unauthorized", "ping on the activated "
	    "TCP socket without the token: %s", json_dumps(rep, JSON_COMPACT));
	json_decref(rep);
	rep = h_conn_call(&c, "hello", "{\"token\":\"the-token-of-this-test\"}",
	    10000);
	cr_assert(json_is_true(h_jpath(rep, "result.authentication."
	    "authenticated")) && json_is_true(h_jpath(rep, "result.activated")),
	    "hello with the token on TCP: %s", json_dumps(rep, JSON_COMPACT));
	json_decref(rep);
	h_conn_close(&c);
	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--wait", "--",
	    "/bin/true"));
	cr_assert_eq(r.code, 0, "launch --wait on the handed-over socket: "
	    "exit %d (stderr: %s)", r.code, r.err);
	h_run_free(&r);
	act_expect_one_daemon(pid, "handed over");
	act_expect_no_default_socket();
	act_shutdown("handed over");
}

/*
 * Run the daemon with the fds of pass and LISTEN_FDS=listen_fds (and
 * args); assert it exits with code want within the bound, saying text.
 */
static void
act_refused(const char *listen_fds, const int *pass, int npass,
    const char *const args[], int want, const char *text)
{
	const char *argv[16];
	char kv[64], *said;
	int n = 0, i, st;
	pid_t pid;

	argv[n++] = act_daemon();
	argv[n++] = "--foreground";
	for (i = 0; args != NULL && args[i] != NULL && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	snprintf(kv, sizeof(kv), "LISTEN_FDS=%s", listen_fds);
	pid = act_spawn(argv, H_ARGS(kv, "LISTEN_FDNAMES=bogus"), pass, npass);
	H->fg_daemon = pid;
	st = h_daemon_fg_wait(H_WAIT_BOUND);
	said = act_output();
	cr_assert(st != -1, "LISTEN_FDS=%s (%s): the daemon still runs after "
	    "%d ms", listen_fds, text, H_WAIT_BOUND);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == want, "LISTEN_FDS=%s "
	    "(%s): want exit %d, got status %d; it said: %s", listen_fds, text,
	    want, st, said);
	cr_assert(strstr(said, text) != NULL && strstr(said, "dbgctld: ") !=
	    NULL, "LISTEN_FDS=%s: want \"dbgctld: ...%s...\" on stderr, got: "
	    "%s", listen_fds, text, said);
	free(said);
	cr_assert(!h_daemon_ping(), "LISTEN_FDS=%s (%s): a daemon answers",
	    listen_fds, text);
	act_expect_no_default_socket();
}

/*
 * What is passed must be listening stream sockets, and a TCP one needs the
 * token: anything else stops the daemon at start with the reason, exit 1
 * (2 for the missing --token-file, as for --listen tcp:).
 */
Test(activate, bad_descriptors_are_refused)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char file[PATH_MAX];
	int fd, port;

	h_ctx_path(file, sizeof(file), "not-a-socket");
	fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	act_refused("1", &fd, 1, NULL, 1, "fd 3 (\"bogus\"): not a socket");
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	act_refused("1", &fd, 1, NULL, 1, "does not listen");
	close(fd);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	h_ctx_path(sa.sun_path, sizeof(sa.sun_path), "dgram");
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind");
	act_refused("1", &fd, 1, NULL, 1, "not a stream socket");
	close(fd);
	/* Under a wrapper (valgrind) fd 3 is the wrapper's own. */
	if (H->wrapper[0] == '\0')
		act_refused("1", NULL, 0, NULL, 1, "fd 3 (\"bogus\"): not open");
	act_refused("many", NULL, 0, NULL, 1, "LISTEN_FDS=many is invalid");
	fd = act_listener(NULL, &port);
	act_refused("1", &fd, 1, NULL, 2, "needs --token-file");
	close(fd);
}

/* Read notifications from fd into b until one holds text; false at the bound. */
static bool
act_notified(int fd, struct h_bytes *b, const char *text, int bound_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double end = h_now() + bound_ms / 1000.0;
	char buf[4096];
	ssize_t n;

	while (b->p == NULL || strstr(b->p, text) == NULL) {
		if (h_now() > end)
			return false;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if ((n = recv(fd, buf, sizeof(buf) - 1, 0)) <= 0)
			continue;
		h_bytes_add(b, buf, (size_t)n);
		h_bytes_add(b, "\n--\n", 4);
	}
	return true;
}

/*
 * Start the daemon with NOTIFY_SOCKET=name; assert READY=1 with its pid
 * and socket comes, STATUS= follows a session, and STOPPING=1 comes at
 * shutdown.
 */
static void
act_notify(const char *name)
{
	char kv[PATH_MAX + 16], want[PATH_MAX + 64];
	struct h_bytes b = { NULL, 0 };
	pid_t pid;
	int fd = act_notify_socket(name);

	snprintf(kv, sizeof(kv), "NOTIFY_SOCKET=%s", name);
	h_ctx_env_add(kv);
	pid = h_daemon_fg();
	snprintf(want, sizeof(want), "READY=1\nMAINPID=%d\nSTATUS=serving 0 "
	    "sessions on %s", (int)pid, H->sock);
	cr_assert(act_notified(fd, &b, want, H_WAIT_BOUND), "NOTIFY_SOCKET=%s:"
	    " no \"%s\" within %d ms; got: %s", name, want, H_WAIT_BOUND,
	    b.p ? b.p : "nothing");
	h_cli_launch_exec(H->marker, H_ARGS("sleep", "300"));
	cr_assert(act_notified(fd, &b, "STATUS=serving 1 session on",
	    H_WAIT_BOUND), "NOTIFY_SOCKET=%s: no STATUS= for a session; got: "
	    "%s", name, b.p);
	json_decref(h_cli_json(H_ARGS("shutdown")));
	cr_assert(act_notified(fd, &b, "STOPPING=1", H_WAIT_BOUND),
	    "NOTIFY_SOCKET=%s: no STOPPING=1 at shutdown; got: %s", name, b.p);
	cr_assert_neq(h_daemon_fg_wait(H_WAIT_BOUND), -1, "the daemon did not "
	    "exit after shutdown");
	free(b.p);
	close(fd);
}

/* NOTIFY_SOCKET naming a path hears READY=1, STATUS= and STOPPING=1. */
Test(activate, notify_socket_path)
{
	char path[PATH_MAX];

	h_ctx_path(path, sizeof(path), "notify");
	act_notify(path);
}

/* NOTIFY_SOCKET naming an abstract socket (@name) hears them too. */
Test(activate, notify_socket_abstract)
{
	char name[160];

	snprintf(name, sizeof(name), "@%s-notify", strrchr(H->dir, '/') + 1);
	act_notify(name);
}

/*
 * Assert that what is at the socket path is left alone: a client command
 * exits 3 saying client_says and starts no daemon, and a daemon told to
 * listen there exits 1 saying daemon_says.
 */
static void
act_left_alone(const char *what, const char *client_says,
    const char *daemon_says)
{
	char listen[PATH_MAX + 8];
	struct h_res r;
	pid_t found[16];

	h_cli(&r, H_ARGS("launch", "--kind", "exec", "--", "/bin/true"));
	cr_assert(r.code == 3 && strstr(r.err, client_says) != NULL, "launch "
	    "with %s at the socket path: want exit 3 and \"%s\", got %d "
	    "(stderr: %s)", what, client_says, r.code, r.err);
	h_run_free(&r);
	cr_assert_eq(h_daemon_list(found, 16), 0, "%s: a daemon was started",
	    what);
	snprintf(listen, sizeof(listen), "unix:%s", H->sock);
	h_run(&r, H_RUN_BOUND, H_ARGS(H->dbgctld, "--foreground", "--listen",
	    listen));
	cr_assert(r.code == 1 && strstr(r.err, daemon_says) != NULL, "dbgctld "
	    "--listen %s over %s: want exit 1 and \"%s\", got %d (stderr: "
	    "%s)", listen, what, daemon_says, r.code, r.err);
	h_run_free(&r);
}

/*
 * A file in the way of the socket that is no socket (connecting to it is
 * refused as to a dead daemon's socket) is never removed: the client says
 * so and starts no daemon, and a daemon told to listen there refuses.
 */
Test(activate, a_file_in_the_way_is_never_removed)
{
	char *text;
	int fd;

	fd = open(H->sock, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_eq(write(fd, "mine\n", 5), 5, "write %s", H->sock);
	close(fd);
	act_left_alone("a file", "not a socket", "is not a socket");
	text = h_read_file(H->sock, NULL);
	cr_assert_str_eq(text ? text : "(gone)", "mine\n", "the file at %s",
	    H->sock);
	free(text);
}

/*
 * A socket another process has bound but does not listen on, as a service
 * manager's between its bind and its listen, refuses like a dead daemon's,
 * but is not one: the client waits for it to listen, then says it does
 * not and starts nothing; a daemon told to listen there leaves it too.
 */
Test(activate, a_bound_socket_that_does_not_listen_is_left_alone)
{
	int fd = act_bound(H->sock);

	act_left_alone("a bound socket", "does not listen",
	    "another process has a socket bound");
	cr_assert(act_is_socket(H->sock), "the bound socket %s was removed",
	    H->sock);
	close(fd);
}

/*
 * Under socket activation the daemon has no TERM: a session takes the
 * launching client's TERM and COLORTERM, not TERM=dumb.
 */
Test(activate, sessions_take_the_clients_term)
{
	char path[64], ids[32], *env, *log;
	size_t len;
	long id;
	pid_t pid;

	/* A service manager starts it with no TERM; the activator passes one. */
	h_ctx_env_del("TERM");
	act_socket_activate(NULL);
	h_ctx_env_add("TERM=xterm-256color");
	h_ctx_env_add("COLORTERM=truecolor");
	id = h_cli_launch_sh(H->marker, "echo \"TERM=[$TERM] "
	    "COLORTERM=[$COLORTERM]\"; exec sleep 300");
	h_idstr(id, ids, sizeof(ids));
	pid = h_daemon_pid();
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	env = h_read_file(path, &len);
	cr_assert(env != NULL && memmem(env, len, "\0TERM=", 6) == NULL &&
	    strncmp(env, "TERM=", 5) != 0, "the "
	    "activated daemon %d has a TERM of its own: the test tells "
	    "nothing", (int)pid);
	free(env);
	h_cli_wait_log(ids, "COLORTERM=[", H_WAIT_BOUND);
	log = h_cli_logs(ids);
	cr_assert(strstr(log, "TERM=[xterm-256color] COLORTERM=[truecolor]") !=
	    NULL, "session %s of an activated daemon: expected the client's "
	    "TERM and COLORTERM, it printed: %s", ids, log);
	free(log);
	json_decref(h_cli_json(H_ARGS("stop", "--all")));
	act_shutdown("after the TERM check");
}

/*
 * gdb at a terminal under a socket-activated daemon, which has no TERM:
 * with the launching client's, `tui enable` draws its TUI on the
 * alternate screen instead of failing for TERM=dumb.
 */
Test(activate, gdb_tui_draws_under_activation)
{
	char ids[32];
	struct h_pty p;
	size_t off;

	h_ctx_env_del("TERM");
	act_socket_activate(NULL);
	h_ctx_env_add("TERM=xterm");
	h_idstr(h_cli_launch(H_ARGS("--", h_ctx_fixture("FIX_ECHO"))), ids,
	    sizeof(ids));
	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	off = h_pty_expect(&p, 0, "(gdb) ", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "once attached");
	h_pty_type(&p, "tui enable\r", 11);
	h_pty_expect(&p, off, "\033[?1049h", H_WAIT_BOUND);
	h_pty_type(&p, "\x1c", 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\ from gdb's TUI");
	h_pty_expect_restored(&p, "after ^\\ from gdb's TUI");
	h_pty_close(&p);
	json_decref(h_cli_json(H_ARGS("stop", "--all")));
	act_shutdown("after gdb's TUI");
}
