/* Auto-start: run dbgctld when no daemon answers, then connect to it. */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dbgctl.h"

extern char **environ;

/* What a started daemon wrote to its stderr before it detached. */
struct autostart_said {
	char	buf[8192];
	size_t	len;
};

/* How long a started daemon may take before its socket accepts. */
#define AUTOSTART_TIMEOUT_MS	10000

/* Pause between connect attempts, growing from the first to the last. */
#define AUTOSTART_DELAY_MIN_MS	5
#define AUTOSTART_DELAY_MAX_MS	50

/* How often to look whether the daemon's first process has exited. */
#define AUTOSTART_POLL_MS	20

/* Times the daemon is started again after the one holding the lock died. */
#define AUTOSTART_SPAWNS	5

/* Milliseconds on the monotonic clock. */
static long long
autostart_now(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep for ms milliseconds (the client may sleep; the daemon never does). */
static void
autostart_sleep(long long ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		continue;
}

/* Tell whether pid names a process that has not yet exited (zombies have). */
int
autostart_pid_alive(pid_t pid)
{
	char	 path[64], buf[512], *paren;
	ssize_t	 n;
	int	 fd;

	if (pid <= 0 || (kill(pid, 0) == -1 && errno != EPERM))
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	if ((paren = strrchr(buf, ')')) == NULL || paren[1] == '\0')
		return 1;
	return paren[2] != 'Z' && paren[2] != 'X';
}

/*
 * Read the pid in the daemon's pidfile (SOCKET.pid): the pid, 0 if the file
 * exists but holds none yet (a daemon is starting), -1 if there is no file.
 */
static pid_t
autostart_pidfile(struct client *c)
{
	char	 path[PATH_MAX + 8], buf[32], *end;
	ssize_t	 n;
	long	 pid;
	int	 fd;

	snprintf(path, sizeof path, "%s.pid", c->socket);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	if (end == buf || pid <= 0)
		return 0;
	return (pid_t)pid;
}

/* Keep what the daemon said on stderr, as much as fits. */
static void
autostart_keep(struct autostart_said *said, const char *buf, size_t len)
{
	if (len > sizeof said->buf - said->len)
		len = sizeof said->buf - said->len;
	memcpy(said->buf + said->len, buf, len);
	said->len += len;
}

/*
 * Collect the daemon's stderr from fd until EOF, or until its first process
 * pid has exited and the pipe is drained; return that process's wait status.
 */
static int
autostart_collect(int fd, pid_t pid, struct autostart_said *said)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	char		buf[1024];
	ssize_t		n;
	int		status = 0, exited = 0;

	for (;;) {
		if (poll(&pfd, 1, exited ? 0 : AUTOSTART_POLL_MS) == -1 &&
		    errno != EINTR)
			break;
		if (pfd.revents != 0) {
			if ((n = read(fd, buf, sizeof buf)) <= 0)
				break;
			autostart_keep(said, buf, n);
			continue;
		}
		if (exited)
			break;	/* drained; a descendant holds the pipe */
		if (waitpid(pid, &status, WNOHANG) != 0)
			exited = 1;
	}
	if (exited)
		return status;
	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR)
			return 0;	/* SIGCHLD ignored: reaped already */
	}
	return status;
}

/*
 * Run "dbgctld --listen unix:SOCKET" and wait for its first process, which
 * exits once the socket listens. Its stderr is kept in said, to be shown if
 * no daemon comes up (not when it merely lost a race to another daemon).
 * Returns its wait status, or -1 if it could not be run.
 */
static int
autostart_spawn(struct client *c, struct autostart_said *said)
{
	posix_spawn_file_actions_t	 fa;
	char				 path[PATH_MAX];
	char				 listen[PATH_MAX + 8];
	char				*argv[4];
	pid_t				 pid;
	int				 error, fds[2], status;

	if (client_daemon_path(path, sizeof path) != 0) {
		client_warn("cannot find dbgctld: %s", strerror(errno));
		return -1;
	}
	snprintf(listen, sizeof listen, "unix:%s", c->socket);
	argv[0] = path;
	argv[1] = (char *)"--listen";
	argv[2] = listen;
	argv[3] = NULL;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		client_warn("pipe: %s", strerror(errno));
		return -1;
	}

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
	error = posix_spawn(&pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (error != 0) {
		close(fds[0]);
		client_warn("cannot start the daemon: %s: %s", path,
		    strerror(error));
		return -1;
	}
	said->len = 0;
	status = autostart_collect(fds[0], pid, said);
	close(fds[0]);
	return status;
}

/* Show what the daemon said on stderr. */
static void
autostart_show(struct autostart_said *said)
{
	cmd_write_all(STDERR_FILENO, said->buf, said->len);
	said->len = 0;
}

/*
 * Start the daemon and connect to it, waiting up to AUTOSTART_TIMEOUT_MS.
 * A daemon that exits non-zero because another one holds the start lock is
 * fine: we wait for that one, and start ours again should it die first.
 * Returns 0 once connected; -1 (after saying why) if no daemon came up.
 */
int
autostart_connect(struct client *c)
{
	struct autostart_said	said;
	long long		deadline, delay = AUTOSTART_DELAY_MIN_MS;
	pid_t			holder = 0;
	int			status, spawns = 0, waiting = 0;

	said.len = 0;
	deadline = autostart_now() + AUTOSTART_TIMEOUT_MS;
	for (;;) {
		if (spawns == 0 || (waiting && holder != 0 &&
		    !autostart_pid_alive(holder))) {
			if (spawns++ == AUTOSTART_SPAWNS)
				break;
			if ((status = autostart_spawn(c, &said)) == -1)
				return -1;
			if ((waiting = (status != 0)) == 0)
				autostart_show(&said);
			holder = 0;
			if (waiting && autostart_pidfile(c) == -1)
				break;
		}
		if (client_connect_open(c) == 0)
			return 0;
		if (!client_connect_absent(c)) {
			autostart_show(&said);
			client_connect_fatal(c);
		}
		if (autostart_now() >= deadline)
			break;
		if (waiting)
			holder = autostart_pidfile(c);
		autostart_sleep(delay);
		if ((delay *= 2) > AUTOSTART_DELAY_MAX_MS)
			delay = AUTOSTART_DELAY_MAX_MS;
	}
	autostart_show(&said);
	client_warn("could not start a daemon at %s", c->socket);
	return -1;
}
