/*
 * Replacing this daemon by a new one (the replace method), the old
 * daemon's side: the new binary is started with the listening sockets,
 * passed as a service manager passes them, and a channel; once it says on
 * the channel that it may take over, and no session here is starting
 * (whose start this daemon finishes), this daemon answers, stops accepting
 * (the sockets stay bound: connects wait in the backlog, none is refused),
 * lets its connections flush their last replies, and exits without
 * stopping a session: their keepers see their control sockets close, as
 * at a crash. The new daemon waits only for the locks (the channel's end
 * says they are free) before it serves; it adopts each keeper once this
 * one has let go of it, as it does while it exits.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "sdnotify.h"
#include "activate.h"
#include "argv.h"
#include "conn.h"
#include "listener.h"
#include "replace.h"
#include "request.h"

/* How long connections may flush their last replies before the exit (ms). */
#define REPLACE_FLUSH_MS 1000
/* How often the exit looks whether every connection has closed (ms). */
#define REPLACE_FLUSH_POLL_MS 1
/*
 * How long a ready new daemon waits for the sessions starting here (ms):
 * with the flush, well inside the REPLACE_GONE_MS it waits for our exit.
 */
#define REPLACE_STARTS_MS 5000
/* The lowest fd the child's descriptors are copied to before they move. */
#define REPLACE_HIGH_FD (3 + ACTIVATE_MAX + 1)

/* What the new daemon is started with: this one's binary and options. */
static struct {
	char	 self[PATH_MAX];	/* the path it was run from */
	bool	 foreground;
	char	*token_file;
} replace_opts;

/* The replace under way: its request, the new daemon and the channel. */
struct replace {
	struct request	*req;
	pid_t		 pid;
	int		 fd;
	uv_poll_t	 poll;
	char		 path[PATH_MAX];
	struct timer	*flush;		/* waits for connections */
	uint64_t	 flush_end;	/* uv_now() it stops waiting */
	struct sink	*started;	/* hears sessions start, once ready */
	struct timer	*starts;	/* looks again, and bounds that wait */
	uint64_t	 starts_end;	/* uv_now() it stops waiting */
};

static struct replace	*replace_now;

/* What the child needs until exec, made before the fork. */
struct replace_exec {
	char		**argv;
	char		**env;
	char		 *pid_at;	/* LISTEN_PID='s digits go here */
	struct rlimit	  nofile;	/* the fd limit it started with */
	/* The listeners, then the channel. */
	int		  fds[ACTIVATE_MAX + 1];
	size_t		  n;		/* listeners */
};

/*
 * Note how to start a new daemon as this one: the path it was run from,
 * read now, since after an upgrade /proc/self/exe names the old file,
 * deleted, and the new binary is the one at that path.
 */
void
replace_init(bool foreground, const char *token_file)
{
	static const char	deleted[] = " (deleted)";
	ssize_t			n;
	size_t			len;

	n = readlink("/proc/self/exe", replace_opts.self,
	    sizeof replace_opts.self - 1);
	replace_opts.self[n > 0 ? n : 0] = '\0';
	len = strlen(replace_opts.self);
	if (len > sizeof deleted - 1 && strcmp(replace_opts.self + len -
	    (sizeof deleted - 1), deleted) == 0)
		replace_opts.self[len - (sizeof deleted - 1)] = '\0';
	replace_opts.foreground = foreground;
	if (token_file != NULL)
		replace_opts.token_file = xstrdup(token_file);
}

/* Whether pid is the new daemon being started: no orphan to kill. */
bool
replace_child(pid_t pid)
{
	return replace_now != NULL && replace_now->pid == pid;
}

/* Write n in decimal at buf, NUL-terminated; async-signal-safe. */
static void
replace_decimal(long n, char *buf)
{
	char	tmp[24];
	size_t	i = 0, j;

	do
		tmp[i++] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	for (j = 0; j < i; j++)
		buf[j] = tmp[i - 1 - j];
	buf[i] = '\0';
}

/*
 * The child: the listeners at 3.., the channel after them, LISTEN_PID its
 * own pid, then exec. Only async-signal-safe calls from the fork on: a
 * failure is told on the channel, as its errno.
 */
static void __attribute__((noreturn))
replace_child_exec(const struct replace_exec *x)
{
	sigset_t	none;
	size_t		i;
	int		err;
	char		msg[1 + sizeof err];

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Raised here at start: the new daemon's programs get the first one. */
	(void)setrlimit(RLIMIT_NOFILE, &x->nofile);
	for (i = 0; i <= x->n; i++)
		if (dup2(x->fds[i], 3 + (int)i) == -1)
			goto fail;
	replace_decimal((long)getpid(), x->pid_at);
	execve(x->argv[0], x->argv, x->env);
fail:
	err = errno;
	msg[0] = REPLACE_EXEC_FAILED;
	memcpy(msg + 1, &err, sizeof err);
	if (write(x->fds[x->n], msg, sizeof msg) < 0)
		_exit(127);
	_exit(127);
}

/* Whether the environment entry e sets one of the variables made here. */
static bool
replace_env_ours(const char *e)
{
	static const char *const ours[] = { "LISTEN_PID=", "LISTEN_FDS=",
	    "LISTEN_FDNAMES=", "NOTIFY_SOCKET=", REPLACE_ENV "=", NULL };
	size_t i;

	for (i = 0; ours[i] != NULL; i++)
		if (strncmp(e, ours[i], strlen(ours[i])) == 0)
			return true;
	return false;
}

/*
 * The new daemon's environment: this one's, with the sockets' names
 * (ACTIVATE_OWN for those a daemon made), the service manager's
 * NOTIFY_SOCKET (taken out of this one's at start), and this pid.
 */
static void
replace_env(struct replace_exec *x, const bool *own)
{
	extern char	**environ;
	struct argv	  env = { 0 };
	char		**e, names[ACTIVATE_MAX * 16] = "";
	size_t		  i;

	for (e = environ; *e != NULL; e++)
		if (!replace_env_ours(*e))
			argv_push(&env, *e);
	for (i = 0; i < x->n; i++)
		snprintf(names + strlen(names), sizeof names - strlen(names),
		    "%s%s", i > 0 ? ":" : "", own[i] ? ACTIVATE_OWN : "passed");
	argv_pushf(&env, "LISTEN_FDS=%zu", x->n);
	argv_pushf(&env, "LISTEN_FDNAMES=%s", names);
	argv_pushf(&env, "%s=%ld", REPLACE_ENV, (long)getpid());
	if (sdnotify_socket() != NULL)
		argv_pushf(&env, "NOTIFY_SOCKET=%s", sdnotify_socket());
	/* Room for any pid's digits, written by the child. */
	argv_push(&env, "LISTEN_PID=0000000000000000000000");
	x->pid_at = env.v[env.n - 1] + strlen("LISTEN_PID=");
	x->env = env.v;
}

/* The new daemon's argv: path, and the options this one was started with. */
static char **
replace_argv(const char *path)
{
	struct argv argv = { 0 };

	argv_push(&argv, path);
	if (replace_opts.foreground)
		argv_push(&argv, "--foreground");
	if (replace_opts.token_file != NULL) {
		argv_push(&argv, "--token-file");
		argv_push(&argv, replace_opts.token_file);
	}
	return argv.v;
}

/*
 * Start path as the new daemon, with the channel's other end; its pid, or
 * -1 with errno. The listeners are copied high first, so that none is
 * overwritten in the child before it is moved.
 */
static pid_t
replace_spawn(const char *path, int channel)
{
	struct replace_exec	x;
	int			fds[ACTIVATE_MAX];
	bool			own[ACTIVATE_MAX];
	size_t			i;
	pid_t			pid;
	int			saved;

	memset(&x, 0, sizeof x);
	x.n = listener_fds(fds, own, ACTIVATE_MAX);
	for (i = 0; i <= x.n; i++)
		x.fds[i] = fcntl(i < x.n ? fds[i] : channel, F_DUPFD_CLOEXEC,
		    REPLACE_HIGH_FD);
	x.argv = replace_argv(path);
	replace_env(&x, own);
	if (getrlimit(RLIMIT_NOFILE, &x.nofile) == 0 && dmn.nofile_orig != 0)
		x.nofile.rlim_cur = dmn.nofile_orig;
	pid = -1;
	errno = EMFILE;
	for (i = 0; i <= x.n; i++)
		if (x.fds[i] == -1)
			goto out;
	if ((pid = fork()) == 0)
		replace_child_exec(&x);
out:
	saved = errno;
	for (i = 0; i <= x.n; i++)
		if (x.fds[i] != -1)
			close(x.fds[i]);
	argv_free(x.argv);
	argv_free(x.env);
	errno = saved;
	return pid;
}

/* Free a replace once its poll handle is closed. */
static void
replace_closed(uv_handle_t *h)
{
	struct replace *r = h->data;

	close(r->fd);
	free(r);
}

/* Stop waiting for the sessions starting, if the replace was. */
static void
replace_unwait(struct replace *r)
{
	if (r->started != NULL)
		session_sink_remove(r->started);
	r->started = NULL;
	timer_free(r->starts);
	r->starts = NULL;
}

/* The replace is over, either way: stop watching the channel. */
static void
replace_end(struct replace *r)
{
	if (replace_now == r)
		replace_now = NULL;
	replace_unwait(r);
	uv_close((uv_handle_t *)&r->poll, replace_closed);
}

/*
 * The new daemon failed: make sure it is gone and reaped, answer with why
 * (it took err, or "how": its exit), and go on serving.
 */
static void
replace_fail(struct replace *r, int err, const char *how)
{
	char	why[PATH_MAX + 256];
	int	status = 0;

	(void)kill(r->pid, SIGKILL);
	while (waitpid(r->pid, &status, 0) == -1 && errno == EINTR)
		continue;
	if (err != 0)
		snprintf(why, sizeof why, "cannot run %s: %s", r->path,
		    strerror(err));
	else if (how != NULL)
		snprintf(why, sizeof why, "the new daemon %s (pid %ld) %s",
		    r->path, (long)r->pid, how);
	else if (WIFSIGNALED(status))
		snprintf(why, sizeof why, "the new daemon %s (pid %ld) was "
		    "killed by signal %d before it was ready", r->path,
		    (long)r->pid, WTERMSIG(status));
	else
		snprintf(why, sizeof why, "the new daemon %s (pid %ld) exited "
		    "with status %d before it was ready (its messages are in "
		    "the daemon log)", r->path, (long)r->pid,
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	log_warn("replace: %s; this daemon goes on serving", why);
	request_error(r->req, RPC_SPAWN_FAILED, "%s; this daemon goes on "
	    "serving", why);
	replace_end(r);
}

/*
 * Close every descriptor above stderr but keep and inotify's: the locks
 * go, each keeper's control socket reaches its end, the logs close. The
 * release of an inotify instance waits for a kernel grace period, tens
 * of milliseconds, which the new daemon need not wait for: it is left to
 * the exit.
 */
static void
replace_release(int keep)
{
	struct dirent	*de;
	char		 path[64], what[64];
	ssize_t		 n;
	DIR		*d;
	int		 fd;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		if (fd <= 2 || fd == keep || fd == dirfd(d))
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		n = readlink(path, what, sizeof what - 1);
		what[n > 0 ? n : 0] = '\0';
		if (strcmp(what, "anon_inode:inotify") != 0)
			close(fd);
	}
	closedir(d);
}

/*
 * Every connection has closed, or the time for it is up: exit, leaving
 * the sessions. Nothing is held in memory to write: the session logs and
 * transcripts are written as their bytes arrive, the daemon log a line at
 * a time. The locks are closed first, then the channel, whose end tells
 * the new daemon it may lock and serve; then every other descriptor, the
 * keepers' control sockets among them, which takes a while with many
 * sessions: the new daemon serves meanwhile. Not exit(3): no handler of
 * a daemon that stops may run, nor anything that would remove what the
 * new daemon now serves.
 */
static void
replace_exit(void *arg)
{
	struct replace *r = arg;

	if (conn_count() > 0 && uv_now(dmn.loop) < r->flush_end) {
		timer_start(r->flush, REPLACE_FLUSH_POLL_MS);
		return;
	}
	if (conn_count() > 0)
		log_warn("replace: %zu clients did not read their last "
		    "replies", conn_count());
	log_info("handed over to pid %ld: exiting, leaving %lu sessions",
	    (long)r->pid, session_live_count());
	fflush(NULL);
	close(dmn.lock_fds[0]);
	close(dmn.lock_fds[1]);
	close(r->fd);
	replace_release(-1);
	_exit(0);
}

/*
 * The new daemon may take over: answer, stop accepting (it accepts from
 * the same sockets once this one has gone), tell the service manager the
 * new main process, and close every connection after its replies.
 */
static void
replace_hand_over(struct replace *r)
{
	log_info("replace: pid %ld is ready: handing over the sockets",
	    (long)r->pid);
	replace_unwait(r);
	request_done(r->req, json_pack("{s:I, s:I}", "old_pid",
	    (json_int_t)getpid(), "new_pid", (json_int_t)r->pid));
	listener_hand_over();
	sdnotify_mainpid(r->pid);
	conn_close_all();
	uv_poll_stop(&r->poll);
	r->flush = timer_new(replace_exit, r);
	r->flush_end = uv_now(dmn.loop) + REPLACE_FLUSH_MS;
	timer_start(r->flush, 0);
}

/* How many sessions are starting: each is this daemon's to finish. */
static unsigned long
replace_starting(void)
{
	struct session	*s;
	unsigned long	 n = 0;

	TAILQ_FOREACH(s, &dmn.sessions, entry)
		if (s->state == S_STARTING)
			n++;
	return n;
}

/*
 * A session left its start: if it was the last, look again on the next
 * turn of the loop, once what its start answers (the launch) is queued.
 */
static void
replace_state(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	struct replace *r = k->arg;

	(void)ev;
	if (s->state != S_STARTING && replace_starting() == 0)
		timer_start(r->starts, 0);
}

/*
 * While the new daemon waits: hand over once no session is starting, and
 * fail if some still are at REPLACE_STARTS_MS or this one shuts down.
 */
static void
replace_starts_check(void *arg)
{
	struct replace	*r = arg;
	unsigned long	 n = replace_starting();
	uint64_t	 now = uv_now(dmn.loop);
	char		 how[128];

	if (dmn.shutting_down) {
		replace_fail(r, 0, "was ready after this daemon began to "
		    "shut down: it was killed");
		return;
	}
	if (n == 0) {
		replace_hand_over(r);
		return;
	}
	if (now < r->starts_end) {
		timer_start(r->starts, r->starts_end - now);
		return;
	}
	snprintf(how, sizeof how, "was ready, but %lu session%s of this "
	    "daemon %s still starting %d s later: it was killed", n,
	    n == 1 ? "" : "s", n == 1 ? "was" : "were", REPLACE_STARTS_MS /
	    1000);
	replace_fail(r, 0, how);
}

/*
 * The new daemon is ready: hand over now, or once no session is starting.
 * A start's steps (a firmware's copy, gdb's connect, the fault breaks,
 * the first continue) and its launch's answer are this daemon's: the new
 * one would adopt the session half made, its target never run.
 */
static void
replace_ready(struct replace *r)
{
	unsigned long n = replace_starting();

	if (n == 0) {
		replace_hand_over(r);
		return;
	}
	log_info("replace: pid %ld is ready: handing over once no session is "
	    "starting (%lu are)", (long)r->pid, n);
	r->started = session_sink_add(NULL, SE_STATE, replace_state, r);
	r->starts = timer_new(replace_starts_check, r);
	r->starts_end = uv_now(dmn.loop) + REPLACE_STARTS_MS;
	timer_start(r->starts, REPLACE_STARTS_MS);
}

/* The channel has something: the new daemon is ready, or failed. */
static void
replace_poll_cb(uv_poll_t *h, int status, int events)
{
	struct replace	*r = h->data;
	char		 msg[1 + sizeof(int)];
	ssize_t		 n;
	int		 err;

	(void)events;
	if (status != 0) {
		replace_fail(r, -status, NULL);
		return;
	}
	do
		n = read(r->fd, msg, sizeof msg);
	while (n == -1 && errno == EINTR);
	if (n == -1 && errno == EAGAIN)
		return;
	/* A shutdown has begun (and removes the socket): none takes over. */
	if (n >= 1 && msg[0] == REPLACE_READY && dmn.shutting_down) {
		replace_fail(r, 0, "was ready after this daemon began to shut "
		    "down: it was killed");
		return;
	}
	if (n >= 1 && msg[0] == REPLACE_READY) {
		replace_ready(r);
		return;
	}
	if (n == (ssize_t)sizeof msg && msg[0] == REPLACE_EXEC_FAILED) {
		memcpy(&err, msg + 1, sizeof err);
		replace_fail(r, err, NULL);
		return;
	}
	/* Its end while this one waited for its starts: not "before ready". */
	replace_fail(r, 0, r->started != NULL ? "was ready, then went away "
	    "while this daemon waited for its sessions starting" : NULL);
}

/* The new daemon was not ready in time: it is killed. */
static void
replace_timeout(struct request *req)
{
	char how[128];

	(void)req;
	if (replace_now->started != NULL)
		snprintf(how, sizeof how, "was ready, but sessions of this "
		    "daemon (%lu) were still starting %d s after the replace "
		    "began: it was killed", replace_starting(),
		    REPLACE_READY_MS / 1000);
	else
		snprintf(how, sizeof how, "was not ready within %d s: it was "
		    "killed", REPLACE_READY_MS / 1000);
	replace_fail(replace_now, 0, how);
}

/*
 * replace: start binary (NULL: the one this daemon was run from) as the
 * new daemon and wait, without blocking, for it to be ready.
 */
enum method_return
replace_start(struct request *req, const char *binary)
{
	const char	*path = binary != NULL ? binary : replace_opts.self;
	struct replace	*r;
	int		 sv[2];

	if (replace_now != NULL)
		return request_error(req, RPC_BUSY, "a replace is under way: "
		    "pid %ld is starting", (long)replace_now->pid);
	if (*path == '\0' || access(path, X_OK) != 0)
		return request_error(req, RPC_SPAWN_FAILED, "cannot run %s: "
		    "%s; this daemon goes on serving", *path != '\0' ? path :
		    "this daemon's binary", *path != '\0' ? strerror(errno) :
		    "its path is unknown");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    sv) != 0)
		return request_error(req, RPC_SPAWN_FAILED, "socketpair: %s",
		    strerror(errno));
	r = xcalloc(1, sizeof *r);
	r->req = req;
	r->fd = sv[0];
	strlcpy(r->path, path, sizeof r->path);
	/* From now on an orphan scan leaves the child alone. */
	replace_now = r;
	r->pid = replace_spawn(path, sv[1]);
	close(sv[1]);
	if (r->pid == -1) {
		replace_now = NULL;
		close(r->fd);
		free(r);
		return request_error(req, RPC_SPAWN_FAILED, "fork: %s",
		    strerror(errno));
	}
	log_info("replace: started %s as pid %ld", path, (long)r->pid);
	uv_poll_init(dmn.loop, &r->poll, r->fd);
	r->poll.data = r;
	uv_poll_start(&r->poll, UV_READABLE | UV_DISCONNECT, replace_poll_cb);
	/* It goes on, and the daemon hands over, if the client leaves. */
	req->keep_orphan = true;
	pending_wait(req, NULL, NULL);
	pending_timeout(req, REPLACE_READY_MS, replace_timeout);
	return METHOD_WAIT;
}
