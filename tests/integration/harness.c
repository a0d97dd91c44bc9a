/*
 * Integration test harness (see harness.h). Every test gets its own temp
 * dir, socket, state dir and marker; every process the test starts carries
 * the marker in its environment so it can be found and killed afterwards.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct h_ctx *H;

/* Seconds to wait for EOF on a client's pipes after the client exited. */
#define H_EOF_GRACE	3.0

/* Monotonic clock in seconds. */
double
h_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep a short poll interval (ms) inside a wait loop. */
void
h_nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Poll pred(arg) every few ms until it is true or bound_ms passes. */
bool
h_wait_for(bool (*pred)(void *), void *arg, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;

	for (;;) {
		if (pred(arg))
			return true;
		if (h_now() > end)
			return false;
		h_nap(10);
	}
}

/* Fill buf with n random hex digits. */
static void
random_hex(char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[64];
	size_t i;
	int fd;

	if (n / 2 + 1 > sizeof(b))
		n = (sizeof(b) - 1) * 2;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, b, n / 2 + 1) != (ssize_t)(n / 2 + 1)) {
		/* Fall back to pid and time: still unique enough per test. */
		unsigned long v = (unsigned long)getpid() * 2654435761UL ^
		    (unsigned long)(h_now() * 1e9);
		for (i = 0; i < sizeof(b); i++, v = v * 6364136223846793005UL + 1)
			b[i] = (unsigned char)(v >> 33);
	}
	if (fd >= 0)
		close(fd);
	for (i = 0; i < n; i++)
		buf[i] = hex[(b[i / 2] >> ((i % 2) * 4)) & 15];
	buf[n] = '\0';
}

/* Make a fresh "NAME=<random>" marker for --env. */
void
h_new_marker(const char *name, char *buf, size_t len)
{
	char r[33];

	random_hex(r, 24);
	snprintf(buf, len, "%s=%s", name, r);
}

/* Join a path under the test dir into buf. */
void
h_path(char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", H->dir, rel);
}

/* Read a whole file; NULL if it cannot be read. *len gets its size. */
char *
h_read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf, *nb;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (nb == NULL)
				break;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

/* The path of a test fixture from the environment meson sets (asserted). */
const char *
h_fixture(const char *var)
{
	const char *p = getenv(var);

	cr_assert_not_null(p, "%s is not set (meson sets it)", var);
	cr_assert_eq(access(p, X_OK), 0, "fixture %s=%s: %s", var, p,
	    strerror(errno));
	return p;
}

/* Format a session id as a string for argv; returns buf. */
const char *
h_idstr(long id, char *buf, size_t len)
{
	snprintf(buf, len, "%ld", id);
	return buf;
}

/* Join args with spaces into buf, for messages; returns buf. */
const char *
h_join_args(const char *const args[], char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; args[i] != NULL && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "",
		    args[i]);
	return buf;
}

/*
 * The last max bytes of data, control bytes shown as \xNN (newlines kept),
 * for failure messages. Four buffers in turn, so that one message may show
 * several.
 */
const char *
h_shown(const char *data, size_t len, size_t max)
{
	static char bufs[4][16384];
	static unsigned next;
	char *out = bufs[next++ % 4];
	size_t o = 0, i = len > max ? len - max : 0;

	for (; i < len && o + 8 < sizeof(bufs[0]); i++) {
		unsigned char ch = (unsigned char)data[i];

		if (ch == '\n' || (ch >= 0x20 && ch < 0x7f))
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, sizeof(bufs[0]) - o,
			    "\\x%02x", ch);
	}
	out[o] = '\0';
	return out;
}

/* Occurrences of needle in data[0..len). */
int
h_count(const char *data, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	const char *p = data, *end = data + len;
	int k = 0;

	while (p < end &&
	    (p = memmem(p, (size_t)(end - p), needle, n)) != NULL) {
		k++;
		p += n;
	}
	return k;
}

/* Append n bytes to *buf of *len bytes, keeping it NUL-terminated. */
static void
append(char **buf, size_t *len, const void *data, size_t n)
{
	*buf = realloc(*buf, *len + n + 1);
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
}

/* Append n bytes to a byte buffer, keeping it NUL-terminated. */
void
h_bytes_add(struct h_bytes *b, const void *data, size_t n)
{
	append(&b->p, &b->len, data, n);
}

/* True if an environment entry's name is one the harness sets itself. */
static bool
env_overridden(const char *e)
{
	static const char *names[] = { "DBGCTL_SOCKET=", "DBGCTL_DAEMON=",
	    "XDG_STATE_HOME=", "XDG_RUNTIME_DIR=", "HOME=",
	    "DBGCTL_TEST_MARKER=", NULL };
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strncmp(e, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

/* Build the environment every child of this test gets. */
static void
build_env(void)
{
	size_t n = 0, i = 0;
	char buf[PATH_MAX + 64];

	while (environ[n] != NULL)
		n++;
	H->envp = calloc(n + 8, sizeof(char *));
	for (n = 0; environ[n] != NULL; n++)
		if (!env_overridden(environ[n]))
			H->envp[i++] = strdup(environ[n]);
	H->envp[i++] = strdup(H->marker);
	snprintf(buf, sizeof(buf), "XDG_RUNTIME_DIR=%s", H->dir);
	H->envp[i++] = strdup(buf);
	snprintf(buf, sizeof(buf), "XDG_STATE_HOME=%s/state", H->dir);
	H->envp[i++] = strdup(buf);
	snprintf(buf, sizeof(buf), "HOME=%s", H->dir);
	H->envp[i++] = strdup(buf);
	snprintf(buf, sizeof(buf), "DBGCTL_DAEMON=%s", H->dbgctld);
	H->envp[i++] = strdup(buf);
	H->envp[i] = NULL;
}

/* Add NAME=VALUE to the environment of the children started after this. */
void
h_env_add(const char *kv)
{
	size_t n = 0;

	while (H->envp[n] != NULL)
		n++;
	H->envp = realloc(H->envp, (n + 2) * sizeof(char *));
	H->envp[n] = strdup(kv);
	H->envp[n + 1] = NULL;
}

/* nftw callback removing one entry, for rm -rf. */
static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* rm -rf the test dir unless DBGCTL_TEST_KEEP asks to keep it. */
static void
remove_dir(void)
{
	if (getenv("DBGCTL_TEST_KEEP") != NULL || H->dir[0] == '\0')
		return;
	nftw(H->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * The guardian: a process outside the test that waits for EOF on its pipe
 * (the worker ended, even by a Criterion timeout's SIGKILL) and then kills
 * everything carrying the marker and removes the dir.
 */
static void
start_guardian(void)
{
	int p[2];
	pid_t pid;
	char c;

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setsid();
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		dup2(p[0], 3);
		closefrom(4);
		while (read(3, &c, 1) == -1 && errno == EINTR)
			;
		h_kill_marker(H->marker, 20000);
		remove_dir();
		_exit(0);
	}
	close(p[0]);
	H->guardian = pid;
	H->guardian_fd = p[1];
}

/* Criterion .init: temp dir, socket path, marker, environment, guardian. */
void
h_setup(void)
{
	H = calloc(1, sizeof(*H));
	H->dbgctl = getenv("DBGCTL_BIN");
	H->dbgctld = getenv("DBGCTLD_BIN");
	cr_assert_not_null(H->dbgctl, "DBGCTL_BIN is not set (meson sets it)");
	cr_assert_not_null(H->dbgctld, "DBGCTLD_BIN is not set (meson sets it)");
	cr_assert_eq(access(H->dbgctl, X_OK), 0, "client %s: %s", H->dbgctl,
	    strerror(errno));
	cr_assert_eq(access(H->dbgctld, X_OK), 0, "daemon %s: %s", H->dbgctld,
	    strerror(errno));
	signal(SIGPIPE, SIG_IGN);

	strcpy(H->dir, "/tmp/dbgi-XXXXXX");
	cr_assert_not_null(mkdtemp(H->dir), "mkdtemp: %s", strerror(errno));
	snprintf(H->sock, sizeof(H->sock), "%s/sock", H->dir);
	snprintf(H->state, sizeof(H->state), "%s/state/dbgctl", H->dir);
	h_new_marker("DBGCTL_TEST_MARKER", H->marker, sizeof(H->marker));
	H->guardian_fd = -1;
	build_env();
	start_guardian();
}

/* True once pid is gone or a zombie (its exit is done). */
static bool
pid_ended(void *arg)
{
	pid_t pid = *(pid_t *)arg;
	char s = h_pid_state(pid);

	return s == 0 || s == 'Z';
}

/* Criterion .fini: stop the daemon, kill marker processes, remove the dir. */
void
h_teardown(void)
{
	struct h_conn c;
	pid_t pid, d[16];
	json_t *r;
	int i, n, st;
	double end;

	if (H == NULL)
		return;
	pid = h_daemon_pid();
	if (pid > 0 && h_conn_open(&c, H->sock) == 0) {
		r = h_conn_call(&c, "shutdown", "{\"timeout\":2000}", 20000);
		json_decref(r);
		h_conn_close(&c);
		if (!h_wait_for(pid_ended, &pid, 10000))
			kill(pid, SIGKILL);
	}
	n = h_daemons(d, 16);
	for (i = 0; i < n; i++)
		kill(d[i], SIGKILL);
	if (H->fg_daemon > 0) {
		h_wait_child(H->fg_daemon, 10000);
		H->fg_daemon = 0;
	}
	h_kill_marker(H->marker, 10000);
	remove_dir();
	if (H->guardian > 0) {
		close(H->guardian_fd);
		end = h_now() + 10;
		while (waitpid(H->guardian, &st, WNOHANG) == 0 && h_now() < end)
			h_nap(10);
	}
	/* Reap whatever else of ours is left (orphans re-parented to us). */
	while (waitpid(-1, &st, WNOHANG) > 0)
		;
}

/* Make fd non-blocking. */
static void
set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*
 * Start argv (argv[0] a path) with H->envp, stdout/stderr piped, stdin
 * from in, or /dev/null if in is -1. A child fed from a pipe gets SIGPIPE
 * at its default, as in a shell pipeline.
 */
static int
proc_spawn(struct h_proc *p, const char *const argv[], int in)
{
	int o[2], e[2], null;
	pid_t pid;

	memset(p, 0, sizeof(*p));
	p->res.status = -1;
	p->res.code = -1;
	if (pipe2(o, O_CLOEXEC) == -1)
		return -errno;
	if (pipe2(e, O_CLOEXEC) == -1) {
		close(o[0]);
		close(o[1]);
		return -errno;
	}
	p->t0 = h_now();
	pid = fork();
	if (pid == -1)
		return -errno;
	if (pid == 0) {
		if (in >= 0) {
			signal(SIGPIPE, SIG_DFL);
			dup2(in, 0);
		} else {
			null = open("/dev/null", O_RDONLY);
			dup2(null, 0);
		}
		dup2(o[1], 1);
		dup2(e[1], 2);
		execve(argv[0], (char *const *)argv, H->envp);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	set_nonblock(o[0]);
	set_nonblock(e[0]);
	p->pid = pid;
	p->outfd = o[0];
	p->errfd = e[0];
	return 0;
}

/* Start argv (argv[0] a path) with H->envp, stdout/stderr piped. */
int
h_proc_start(struct h_proc *p, const char *const argv[])
{
	return proc_spawn(p, argv, -1);
}

/* Append what fd has to a growing buffer; false at EOF or error. */
static bool
drain(int fd, char **buf, size_t *len)
{
	char tmp[8192];
	ssize_t r;

	for (;;) {
		r = read(fd, tmp, sizeof(tmp));
		if (r > 0) {
			append(buf, len, tmp, (size_t)r);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return true;
		return false;
	}
}

/* Turn a wait status into the shell's exit code convention. */
static int
status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* Note in captured stderr that the child was killed at the bound. */
static void
drain_note(struct h_res *r, int bound_ms)
{
	char note[96];
	size_t n;

	n = (size_t)snprintf(note, sizeof(note), "[harness: no exit within "
	    "%d ms, killed]", bound_ms);
	append(&r->err, &r->err_len, note, n);
}

/* Collect output and exit status of a started child within bound_ms. */
void
h_proc_wait(struct h_proc *p, int bound_ms)
{
	struct h_res *r = &p->res;
	struct pollfd pfd[2];
	double end = p->t0 + bound_ms / 1000.0, exit_end = 0;
	bool exited = false;
	int st, n;

	if (r->out == NULL)
		r->out = calloc(1, 1);
	if (r->err == NULL)
		r->err = calloc(1, 1);
	for (;;) {
		n = 0;
		if (p->outfd >= 0)
			pfd[n++] = (struct pollfd){ p->outfd, POLLIN, 0 };
		if (p->errfd >= 0)
			pfd[n++] = (struct pollfd){ p->errfd, POLLIN, 0 };
		if (n > 0)
			poll(pfd, (nfds_t)n, 20);
		else if (!exited)
			h_nap(5);
		if (p->outfd >= 0 && !drain(p->outfd, &r->out, &r->out_len)) {
			close(p->outfd);
			p->outfd = -1;
		}
		if (p->errfd >= 0 && !drain(p->errfd, &r->err, &r->err_len)) {
			close(p->errfd);
			p->errfd = -1;
		}
		if (p->outfd < 0 && p->errfd < 0 && !r->eof) {
			r->eof = true;
			r->eof_elapsed = h_now() - p->t0;
		}
		if (!exited && waitpid(p->pid, &st, WNOHANG) == p->pid) {
			exited = true;
			r->status = st;
			r->code = status_code(st);
			r->elapsed = h_now() - p->t0;
			exit_end = h_now() + H_EOF_GRACE;
		}
		if (exited && r->eof)
			break;
		if (exited && h_now() > exit_end)
			break;
		if (!exited && h_now() > end) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			r->status = st;
			r->code = -1;
			r->timed_out = true;
			r->elapsed = h_now() - p->t0;
			drain_note(r, bound_ms);
			break;
		}
	}
	if (p->outfd >= 0)
		close(p->outfd);
	if (p->errfd >= 0)
		close(p->errfd);
	p->outfd = p->errfd = -1;
}

/* Run argv to completion within bound_ms. Returns the exit code. */
int
h_run(struct h_res *r, int bound_ms, const char *const argv[])
{
	struct h_proc p;
	int e;

	e = h_proc_start(&p, argv);
	if (e < 0) {
		memset(r, 0, sizeof(*r));
		r->code = -1;
		r->out = strdup("");
		r->err = strdup(strerror(-e));
		return -1;
	}
	h_proc_wait(&p, bound_ms);
	*r = p.res;
	return r->code;
}

/* Build "dbgctl -s SOCK ARGS..." into a malloc'd argv. */
static const char **
cli_argv(const char *const args[], const char *extra)
{
	const char **v;
	size_t n = 0, i = 0;

	while (args[n] != NULL)
		n++;
	v = calloc(n + 5, sizeof(char *));
	v[i++] = H->dbgctl;
	v[i++] = "-s";
	v[i++] = H->sock;
	if (extra != NULL)
		v[i++] = extra;
	for (n = 0; args[n] != NULL; n++)
		v[i++] = args[n];
	v[i] = NULL;
	return v;
}

/* Run the client: dbgctl -s SOCK ARGS... Returns the exit code. */
int
h_cli(struct h_res *r, const char *const args[])
{
	const char **v = cli_argv(args, NULL);
	int code = h_run(r, H_RUN_BOUND, v);

	free(v);
	return code;
}

/* Start the client in the background: dbgctl -s SOCK ARGS... */
int
h_cli_start(struct h_proc *p, const char *const args[])
{
	const char **v = cli_argv(args, NULL);
	int e = h_proc_start(p, v);

	free(v);
	return e;
}

/* The argv "dbgctl -s SOCK ARGS..." (malloc'd; free the array only). */
const char **
h_cli_argv(const char *const args[])
{
	return cli_argv(args, NULL);
}

/* Run the client with input on a pipe as its stdin (SIGPIPE at default). */
int
h_cli_input(struct h_res *r, const char *input, const char *const args[])
{
	const char **v = cli_argv(args, NULL);
	size_t len = strlen(input);
	struct h_proc p;
	int in[2], e;

	cr_assert_eq(pipe2(in, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
	e = proc_spawn(&p, v, in[0]);
	free(v);
	cr_assert_eq(e, 0, "start dbgctl: %s", strerror(-e));
	close(in[0]);
	/* The input is small: it fits in the pipe; then EOF. */
	while (write(in[1], input, len) == -1 && errno == EINTR)
		;
	close(in[1]);
	h_proc_wait(&p, H_RUN_BOUND);
	*r = p.res;
	return r->code;
}

/* Run dbgctl -s SOCK --json ARGS..., assert exit 0, return the parsed JSON. */
json_t *
h_cli_json(const char *const args[])
{
	const char **v = cli_argv(args, "--json");
	struct h_res r;
	json_error_t je;
	json_t *j;
	char cmd[1024];

	h_run(&r, H_RUN_BOUND, v);
	free(v);
	h_join_args(args, cmd, sizeof(cmd));
	cr_assert_eq(r.code, 0, "dbgctl --json %s: expected exit 0, got %d "
	    "(stderr: %s)", cmd, r.code, r.err);
	j = json_loads(r.out, JSON_DECODE_ANY, &je);
	cr_assert_not_null(j, "dbgctl --json %s: stdout is not JSON (%s): %s",
	    cmd, je.text, r.out);
	h_res_free(&r);
	return j;
}

/* Free captured output. */
void
h_res_free(struct h_res *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* Reap our child within bound_ms: exit code (128+N: signal N), -1 if killed. */
int
h_wait_child(pid_t pid, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	int st;

	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return status_code(st);
		if (h_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		h_nap(10);
	}
}

/* Run dbgctl launch ARGS...; assert exit 0 and an id on stdout; return it. */
long
h_launch(const char *const args[])
{
	const char *v[80];
	struct h_res r;
	char cmd[2048], *end;
	size_t i = 0;
	long id;
	int k;

	v[i++] = "launch";
	for (k = 0; args[k] != NULL && i < 79; k++)
		v[i++] = args[k];
	v[i] = NULL;
	h_join_args(v, cmd, sizeof(cmd));
	h_cli(&r, v);
	cr_assert_eq(r.code, 0, "dbgctl %s: expected exit 0, got %d "
	    "(stderr: %s)", cmd, r.code, r.err);
	id = strtol(r.out, &end, 10);
	cr_assert(end != r.out && id > 0 && (*end == '\n' || *end == '\0'),
	    "dbgctl %s: expected an id on stdout, got \"%s\"", cmd, r.out);
	h_res_free(&r);
	return id;
}

/* launch --kind exec [--env MARKER] -- PROG...; assert success; return the id. */
long
h_launch_exec(const char *marker, const char *const prog[])
{
	const char *v[64];
	size_t i = 0;
	int k;

	v[i++] = "--kind";
	v[i++] = "exec";
	if (marker != NULL) {
		v[i++] = "--env";
		v[i++] = marker;
	}
	v[i++] = "--";
	for (k = 0; prog[k] != NULL && i < 63; k++)
		v[i++] = prog[k];
	v[i] = NULL;
	return h_launch(v);
}

/* status --json of a session (asserts success). */
json_t *
h_status(long id)
{
	char s[32];

	snprintf(s, sizeof(s), "%ld", id);
	return h_cli_json(H_ARGS("status", s));
}

/* Poll status until its state is one of "exited"/"failed"; return it or NULL. */
json_t *
h_wait_ended(long id, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	const char *state;
	json_t *j;

	for (;;) {
		j = h_status(id);
		state = h_jstr(j, "state");
		if (state != NULL && (strcmp(state, "exited") == 0 ||
		    strcmp(state, "failed") == 0))
			return j;
		json_decref(j);
		if (h_now() > end)
			return NULL;
		h_nap(50);
	}
}

/* Assert the session's state is want (e.g. "running"); when: messages. */
void
h_expect_state(long id, const char *want, const char *when)
{
	json_t *st = h_status(id);
	const char *state = h_jstr(st, "state");

	cr_assert(state != NULL && strcmp(state, want) == 0, "dbgctl status "
	    "%ld %s: expected state %s, got %s (error: %s)", id, when, want,
	    state ? state : "(none)", h_jstr(st, "error") ?
	    h_jstr(st, "error") : "none");
	json_decref(st);
}

/* Assert `list` shows n sessions, each in state (NULL: any); when: messages. */
void
h_expect_sessions(size_t n, const char *state, const char *when)
{
	json_t *l = h_cli_json(H_ARGS("list"));
	json_t *all = json_object_get(l, "sessions"), *s;
	const char *got;
	size_t i;

	cr_assert_eq(json_array_size(all), n, "list %s: expected %zu sessions, "
	    "got %zu", when, n, json_array_size(all));
	json_array_foreach(all, i, s) {
		got = h_jstr(s, "state");
		cr_assert(state == NULL || (got != NULL && strcmp(got, state) ==
		    0), "list %s: session %lld: expected state %s, got %s",
		    when, h_jint(s, "id", -1), state, got ? got : "(none)");
	}
	json_decref(l);
}

/* Member at a dotted path, or NULL. */
static json_t *
jpath(json_t *j, const char *path)
{
	char key[128];
	const char *dot;
	size_t n;

	while (j != NULL && *path != '\0') {
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		j = json_object_get(j, key);
		path += n + (dot != NULL);
	}
	return j;
}

/* Integer member at a dotted path ("exit.signal"), or def if absent. */
long long
h_jint(json_t *j, const char *path, long long def)
{
	json_t *v = jpath(j, path);

	return json_is_integer(v) ? json_integer_value(v) : def;
}

/* String member at a dotted path, or NULL if absent. */
const char *
h_jstr(json_t *j, const char *path)
{
	return json_string_value(jpath(j, path));
}

/* The session's console log as `dbgctl logs ID` prints it (malloc'd). */
char *
h_logs(const char *id)
{
	struct h_res r;
	char *out;

	h_cli(&r, H_ARGS("logs", id));
	out = r.code == 0 ? r.out : strdup("");
	if (r.code != 0)
		free(r.out);
	free(r.err);
	return out;
}

/* True if `dbgctl logs ID` holds text now. */
bool
h_log_has(const char *id, const char *text)
{
	char *log = h_logs(id);
	bool ok = strstr(log, text) != NULL;

	free(log);
	return ok;
}

/* Arguments of a wait for text in a session's log. */
struct log_arg {
	const char	*id;
	const char	*text;
};

/* Predicate: the log holds the text; a miss waits a little (a client run). */
static bool
log_has(void *arg)
{
	struct log_arg *a = arg;
	bool ok = h_log_has(a->id, a->text);

	if (!ok)
		h_nap(50);
	return ok;
}

/* Wait until the session's log holds text; assert it does within bound_ms. */
void
h_wait_log(const char *id, const char *text, int bound_ms)
{
	struct log_arg a = { id, text };
	char *log;

	if (h_wait_for(log_has, &a, bound_ms))
		return;
	log = h_logs(id);
	cr_assert_fail("dbgctl logs %s: no \"%s\" within %d ms; log ends "
	    "with:\n%s", id, text, bound_ms, h_shown(log, strlen(log), 1500));
}

/* Predicate: the daemon answers ping. */
static bool
pings(void *arg)
{
	(void)arg;
	return h_ping();
}

/* Start dbgctld --foreground --listen unix:SOCK as our child; wait for ping. */
pid_t
h_daemon_fg(void)
{
	char listen[PATH_MAX + 8], out[PATH_MAX], *log;
	int fd, st;
	pid_t pid;
	double end;

	snprintf(listen, sizeof(listen), "unix:%s", H->sock);
	h_path(out, sizeof(out), "daemon.out");
	pid = fork();
	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(open("/dev/null", O_RDONLY), 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execve(H->dbgctld, (char *const *)H_ARGS(H->dbgctld,
		    "--foreground", "--listen", listen), H->envp);
		_exit(127);
	}
	H->fg_daemon = pid;
	end = h_now() + H_WAIT_BOUND / 1000.0;
	while (!pings(NULL)) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			H->fg_daemon = 0;
			log = h_read_file(out, NULL);
			cr_assert_fail("dbgctld --foreground --listen %s exited "
			    "(status %d) before answering ping; output: %s",
			    listen, status_code(st), log ? log : "");
		}
		cr_assert(h_now() < end, "dbgctld --foreground --listen %s: "
		    "no ping answer within %d ms", listen, H_WAIT_BOUND);
		h_nap(10);
	}
	return pid;
}

/* Wait for our foreground daemon to exit within bound_ms; its status or -1. */
int
h_daemon_fg_wait(int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	int st;

	if (H->fg_daemon <= 0)
		return -1;
	for (;;) {
		if (waitpid(H->fg_daemon, &st, WNOHANG) == H->fg_daemon) {
			H->fg_daemon = 0;
			return st;
		}
		if (h_now() > end)
			return -1;
		h_nap(10);
	}
}

/* SIGKILL our foreground daemon; assert it dies of it within 10 s. */
void
h_daemon_fg_kill(void)
{
	pid_t d = H->fg_daemon;
	int st;

	cr_assert_gt(d, 0, "no foreground daemon to kill (h_daemon_fg first)");
	cr_assert_eq(kill(d, SIGKILL), 0, "kill(%d, SIGKILL): %s", d,
	    strerror(errno));
	st = h_daemon_fg_wait(10000);
	cr_assert(st != -1 && WIFSIGNALED(st), "dbgctld %d: expected death by "
	    "SIGKILL", d);
}

/* The pid that hello reports, or -1 if no daemon answers. */
pid_t
h_daemon_pid(void)
{
	struct h_conn c;
	json_t *r;
	pid_t pid;

	if (h_conn_open(&c, H->sock) != 0)
		return -1;
	r = h_conn_call(&c, "hello", "{}", 10000);
	pid = (pid_t)h_jint(r, "result.pid", -1);
	json_decref(r);
	h_conn_close(&c);
	return pid;
}

/* Every live dbgctld process that carries this test's marker. */
int
h_daemons(pid_t *out, int max)
{
	pid_t p[H_MAXPIDS];
	char path[64], exe[PATH_MAX], *base;
	int i, n, k = 0;
	ssize_t l;

	n = h_marker_pids(H->marker, p, H_MAXPIDS);
	for (i = 0; i < n && k < max; i++) {
		snprintf(path, sizeof(path), "/proc/%d/exe", p[i]);
		l = readlink(path, exe, sizeof(exe) - 1);
		if (l <= 0)
			continue;
		exe[l] = '\0';
		base = strrchr(exe, '/');
		base = base ? base + 1 : exe;
		if (strcmp(base, "dbgctld") == 0 ||
		    strcmp(base, "dbgctld (deleted)") == 0)
			out[k++] = p[i];
	}
	return k;
}

/* Connect to a unix socket path. 0, or -errno. */
int
h_conn_open(struct h_conn *c, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int e;

	memset(c, 0, sizeof(*c));
	c->next_id = 1000;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		e = errno;
		close(c->fd);
		c->fd = -1;
		return -e;
	}
	set_nonblock(c->fd);
	return 0;
}

/* Write all of data within bound_ms. 0, or -errno (EPIPE when closed). */
int
h_conn_send(struct h_conn *c, const char *data, size_t len, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	struct pollfd pfd;
	ssize_t w;

	while (len > 0) {
		w = send(c->fd, data, len, MSG_NOSIGNAL);
		if (w > 0) {
			data += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN)
			return -errno;
		if (h_now() > end)
			return -ETIMEDOUT;
		pfd = (struct pollfd){ c->fd, POLLOUT, 0 };
		poll(&pfd, 1, 20);
	}
	return 0;
}

/* Read one line (without LF) within bound_ms; malloc'd, NULL on EOF/timeout. */
char *
h_conn_line(struct h_conn *c, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	struct pollfd pfd;
	char *nl, *line;
	size_t n;
	ssize_t r;

	for (;;) {
		nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		if (nl != NULL) {
			n = (size_t)(nl - c->buf);
			line = malloc(n + 1);
			memcpy(line, c->buf, n);
			line[n] = '\0';
			memmove(c->buf, nl + 1, c->len - n - 1);
			c->len -= n + 1;
			return line;
		}
		if (c->eof || h_now() > end)
			return NULL;
		if (c->cap - c->len < 65536) {
			c->cap = c->cap ? c->cap * 2 : 131072;
			c->buf = realloc(c->buf, c->cap);
		}
		r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (r > 0) {
			c->len += (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
			c->eof = true;
			continue;
		}
		pfd = (struct pollfd){ c->fd, POLLIN, 0 };
		poll(&pfd, 1, 20);
	}
}

/* Read one line and parse it as JSON; NULL on EOF, timeout or bad JSON. */
json_t *
h_conn_recv(struct h_conn *c, int bound_ms)
{
	char *line = h_conn_line(c, bound_ms);
	json_t *j;

	if (line == NULL)
		return NULL;
	j = json_loads(line, 0, NULL);
	free(line);
	return j;
}

/* Send a request with a fresh id and return the reply with that id. */
json_t *
h_conn_call(struct h_conn *c, const char *method, const char *params,
    int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	long id = ++c->next_id;
	char *req;
	json_t *j;
	int n;

	n = asprintf(&req, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\","
	    "\"params\":%s}\n", id, method, params ? params : "{}");
	if (n < 0)
		return NULL;
	if (h_conn_send(c, req, (size_t)n, bound_ms) != 0) {
		free(req);
		return NULL;
	}
	free(req);
	for (;;) {
		int left = (int)((end - h_now()) * 1000);

		if (left <= 0)
			return NULL;
		j = h_conn_recv(c, left);
		if (j == NULL)
			return NULL;
		if (json_integer_value(json_object_get(j, "id")) == id)
			return j;
		json_decref(j);
	}
}

/* Close the connection and free its buffer. */
void
h_conn_close(struct h_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

/* One-shot: connect, send ping, true if {"pong":true} comes back. */
bool
h_ping(void)
{
	struct h_conn c;
	json_t *r;
	bool ok;

	if (h_conn_open(&c, H->sock) != 0)
		return false;
	r = h_conn_call(&c, "ping", "{}", 5000);
	ok = json_is_true(jpath(r, "result.pong"));
	json_decref(r);
	h_conn_close(&c);
	return ok;
}

/* The fields of /proc/PID/stat the harness reads. */
struct pid_stat {
	char			 state;		/* 'R', 'S', 'Z', ... */
	pid_t			 ppid;
	pid_t			 sid;
	unsigned long long	 start;		/* clock ticks since boot */
};

/* Parse /proc/PID/stat into st. False if the pid is gone. */
static bool
pid_stat(pid_t pid, struct pid_stat *st)
{
	char path[64], buf[2048], *p;
	unsigned long long v;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* The comm in parentheses may hold anything: the last ')' ends it. */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] == '\0')
		return false;
	p += 2;
	st->state = *p;
	p += 2;
	st->ppid = (pid_t)strtol(p, &p, 10);
	/* Fields 5..22 come next: 6 is the session, 22 the start time. */
	for (i = 5; i <= 22; i++) {
		v = strtoull(p, &p, 10);
		if (i == 6)
			st->sid = (pid_t)v;
		if (i == 22)
			st->start = v;
	}
	return true;
}

/* Session id from /proc/PID/stat, -1 if gone. */
pid_t
h_pid_sid(pid_t pid)
{
	struct pid_stat st;

	return pid_stat(pid, &st) ? st.sid : -1;
}

/* State letter from /proc/PID/stat ('R','S','Z',...), 0 if the pid is gone. */
char
h_pid_state(pid_t pid)
{
	struct pid_stat st;

	return pid_stat(pid, &st) ? st.state : 0;
}

/* Parent pid from /proc/PID/stat, -1 if gone. */
pid_t
h_pid_ppid(pid_t pid)
{
	struct pid_stat st;

	return pid_stat(pid, &st) ? st.ppid : -1;
}

/* Start time (clock ticks since boot) from /proc/PID/stat, 0 if gone. */
unsigned long long
h_pid_start(pid_t pid)
{
	struct pid_stat st;

	return pid_stat(pid, &st) ? st.start : 0;
}

/* comm of a pid into buf ("?" if gone). */
void
h_pid_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* True if kill(pid, 0) fails with ESRCH. */
bool
h_pid_gone(pid_t pid)
{
	return kill(pid, 0) == -1 && errno == ESRCH;
}

/* Arguments of a wait on a signal mask in /proc/PID/status. */
struct sigmask_arg {
	pid_t		 pid;
	const char	*field;
	int		 sig;
};

/* Predicate: the mask line "\nFIELD:" of /proc/PID/status holds sig. */
static bool
sigmask_has(void *arg)
{
	struct sigmask_arg *a = arg;
	char path[64], key[32], *s, *l;
	unsigned long long mask = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", a->pid);
	snprintf(key, sizeof(key), "\n%s:", a->field);
	s = h_read_file(path, NULL);
	if (s == NULL)
		return false;
	l = strstr(s, key);
	if (l != NULL)
		mask = strtoull(l + strlen(key), NULL, 16);
	free(s);
	return (mask & (1ULL << (a->sig - 1))) != 0;
}

/* Wait until /proc/PID/status's field ("SigIgn", "SigCgt") holds sig. */
bool
h_wait_sigmask(pid_t pid, const char *field, int sig, int bound_ms)
{
	struct sigmask_arg a = { pid, field, sig };

	return h_wait_for(sigmask_has, &a, bound_ms);
}

/* Arguments of a wait on marker processes named comm. */
struct count_arg {
	const char	*kv;
	const char	*comm;
	int		 want;
};

/* Predicate: at least want live processes carry kv and are named comm. */
static bool
enough_procs(void *arg)
{
	struct count_arg *a = arg;
	pid_t p[H_MAXPIDS];
	char comm[64];
	int i, n, k = 0;

	n = h_marker_pids(a->kv, p, H_MAXPIDS);
	for (i = 0; i < n; i++) {
		h_pid_comm(p[i], comm, sizeof(comm));
		if (a->comm == NULL || strcmp(comm, a->comm) == 0)
			k++;
	}
	return k >= a->want;
}

/* Wait until want live processes named comm (NULL: any) carry kv; asserted. */
void
h_wait_procs(const char *kv, const char *comm, int want)
{
	struct count_arg a = { kv, comm, want };

	cr_assert(h_wait_for(enough_procs, &a, H_WAIT_BOUND),
	    "expected %d '%s' processes carrying %s within %d ms", want,
	    comm ? comm : "*", kv, H_WAIT_BOUND);
}

/* True if the NUL-separated environment block holds kv as one entry. */
static bool
env_has(const char *env, size_t len, const char *kv)
{
	size_t i = 0, kl = strlen(kv);

	while (i < len) {
		size_t el = strnlen(env + i, len - i);

		if (el == kl && memcmp(env + i, kv, kl) == 0)
			return true;
		i += el + 1;
	}
	return false;
}

/* Live (non-zombie) pids whose /proc/PID/environ holds kv exactly. */
int
h_marker_pids(const char *kv, pid_t *out, int max)
{
	struct dirent *de;
	char path[64], *env, *end;
	size_t len;
	pid_t pid, self = getpid();
	DIR *d;
	int n = 0;

	d = opendir("/proc");
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < max) {
		pid = (pid_t)strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/environ", pid);
		env = h_read_file(path, &len);
		if (env == NULL)
			continue;
		if (env_has(env, len, kv) && h_pid_state(pid) != 'Z' &&
		    h_pid_state(pid) != 0)
			out[n++] = pid;
		free(env);
	}
	closedir(d);
	return n;
}

/* Record every live process carrying kv. */
void
h_snap_take(struct h_snap *s, const char *kv)
{
	int i;

	s->n = h_marker_pids(kv, s->pid, H_MAXPIDS);
	for (i = 0; i < s->n; i++)
		s->start[i] = h_pid_start(s->pid[i]);
}

/* True if pid is a member of the snapshot (still the same process). */
static bool
in_snap(const struct h_snap *s, pid_t pid)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->pid[i] == pid)
			return true;
	return false;
}

/* Append one process description to report. */
static void
describe(char *report, size_t len, const char *why, pid_t pid)
{
	char comm[64];
	size_t o = strlen(report);

	h_pid_comm(pid, comm, sizeof(comm));
	if (o < len)
		snprintf(report + o, len - o, "%s%s pid %d (%s) state %c ppid %d",
		    o ? "; " : "", why, pid, comm, h_pid_state(pid) ?
		    h_pid_state(pid) : '-', h_pid_ppid(pid));
}

/*
 * Describe, after why, the zombies whose parent is a member of s (s not
 * NULL; members themselves skipped) or else ppid; returns how many.
 */
static int
zombie_scan(const struct h_snap *s, pid_t ppid, const char *why,
    char *report, size_t len)
{
	struct pid_stat st;
	struct dirent *de;
	char *end;
	pid_t pid;
	int count = 0;
	DIR *d;

	d = opendir("/proc");
	while (d != NULL && (de = readdir(d)) != NULL) {
		pid = (pid_t)strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || (s != NULL && in_snap(s, pid)))
			continue;
		if (pid_stat(pid, &st) && st.state == 'Z' &&
		    (s != NULL ? in_snap(s, st.ppid) : st.ppid == ppid)) {
			describe(report, len, why, pid);
			count++;
		}
	}
	if (d != NULL)
		closedir(d);
	return count;
}

/*
 * Processes left over: snapshot members still present (alive or zombie,
 * same start time), live processes carrying kv, and zombies whose parent is a
 * snapshot member. zombie_ok_ppid1 tolerates zombies re-parented to init.
 */
int
h_leftovers(const struct h_snap *s, const char *kv, bool zombie_ok_ppid1,
    char *report, size_t len)
{
	struct pid_stat st;
	pid_t live[H_MAXPIDS];
	int i, n, count = 0;

	report[0] = '\0';
	for (i = 0; i < s->n; i++) {
		if (!pid_stat(s->pid[i], &st) || st.start != s->start[i])
			continue;
		if (st.state == 'Z' && zombie_ok_ppid1 && st.ppid == 1)
			continue;
		describe(report, len, st.state == 'Z' ? "zombie" : "alive",
		    s->pid[i]);
		count++;
	}
	n = h_marker_pids(kv, live, H_MAXPIDS);
	for (i = 0; i < n; i++) {
		if (in_snap(s, live[i]))
			continue;	/* counted above */
		describe(report, len, "alive (new)", live[i]);
		count++;
	}
	return count + zombie_scan(s, 0, "zombie child of session", report,
	    len);
}

/* Arguments of a wait until nothing of a snapshot is left. */
struct left_arg {
	const struct h_snap	*snap;
	const char		*kv;
	char			*report;
	size_t			 len;
};

/* Predicate: nothing of the snapshot is left (zombies of init tolerated). */
static bool
nothing_left(void *arg)
{
	struct left_arg *a = arg;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return h_leftovers(a->snap, a->kv, true, a->report, a->len) == 0;
}

/*
 * Wait until h_leftovers (zombies of init tolerated) finds nothing, reaping
 * our own children meanwhile; false at bound_ms, the last finding in report.
 */
bool
h_wait_no_leftovers(const struct h_snap *s, const char *kv, int bound_ms,
    char *report, size_t len)
{
	struct left_arg a = { s, kv, report, len };

	return h_wait_for(nothing_left, &a, bound_ms);
}

/* Zombies whose parent is ppid, described in report; returns how many. */
int
h_zombie_children(pid_t ppid, char *report, size_t len)
{
	report[0] = '\0';
	return zombie_scan(NULL, ppid, "zombie", report, len);
}

/* Kill every process carrying kv, repeatedly, until none is left or bound_ms. */
int
h_kill_marker(const char *kv, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	pid_t p[H_MAXPIDS];
	int i, n;

	for (;;) {
		n = h_marker_pids(kv, p, H_MAXPIDS);
		if (n == 0 || h_now() > end)
			return n;
		for (i = 0; i < n; i++)
			kill(p[i], SIGKILL);
		h_nap(10);
	}
}

/* Open fds of a pid: numbers into fds, link targets into targets (may be NULL). */
int
h_fds(pid_t pid, int *fds, char (*targets)[PATH_MAX], int max)
{
	struct dirent *de;
	char path[64], link[PATH_MAX + 64], *end;
	ssize_t l;
	DIR *d;
	int n = 0, fd, i, j, t;
	char tt[PATH_MAX];

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL && n < max) {
		fd = (int)strtol(de->d_name, &end, 10);
		if (*end != '\0' || de->d_name[0] == '\0' || de->d_name[0] == '.')
			continue;
		fds[n] = fd;
		if (targets != NULL) {
			snprintf(link, sizeof(link), "%s/%d", path, fd);
			l = readlink(link, targets[n], PATH_MAX - 1);
			targets[n][l > 0 ? l : 0] = '\0';
		}
		n++;
	}
	closedir(d);
	/* Sort by fd number so callers can compare lists. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
			if (targets != NULL) {
				memcpy(tt, targets[j], PATH_MAX);
				memcpy(targets[j], targets[j - 1], PATH_MAX);
				memcpy(targets[j - 1], tt, PATH_MAX);
			}
		}
	return n;
}
