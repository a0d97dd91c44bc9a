/*
 * The private daemon each figure runs against: dbgctld in the foreground
 * on a socket in a 0700 directory of its own, with its state and runtime
 * directories there too, so that nothing of the user's is touched; and the
 * client binary run against it as a whole process.
 */
#include "bench.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* How long a settle may take, and the CPU-free time that ends it (ms). */
#define DAEMON_SETTLE_MS	10000
#define DAEMON_QUIET_MS		100
/* Milliseconds the daemon may take to listen, and to end after shutdown. */
#define DAEMON_START_MS 10000
#define DAEMON_STOP_MS 60000

/*
 * environ with our variables put first, which getenv finds first; the
 * daemon forgets all but keep_ended ended sessions.
 */
static char **
daemon_env(const char *dir, int keep_ended)
{
	char	**envp;
	size_t	  n = 0, i, j = 0;

	while (environ[n] != NULL)
		n++;
	if ((envp = calloc(n + 4, sizeof *envp)) == NULL)
		abort();
	if (asprintf(&envp[j++], "XDG_STATE_HOME=%s/state", dir) < 0 ||
	    asprintf(&envp[j++], "XDG_RUNTIME_DIR=%s/run", dir) < 0 ||
	    asprintf(&envp[j++], "DBGCTLD_KEEP_ENDED=%d", keep_ended) < 0)
		abort();
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "XDG_STATE_HOME=", 15) != 0 &&
		    strncmp(environ[i], "XDG_RUNTIME_DIR=", 16) != 0 &&
		    strncmp(environ[i], "DBGCTLD_KEEP_ENDED=", 19) != 0 &&
		    strncmp(environ[i], "DBGCTL_SOCKET=", 14) != 0)
			envp[j++] = strdup(environ[i]);
	return envp;
}

/* Free what daemon_env built. */
static void
daemon_env_free(char **envp)
{
	size_t i;

	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		free(envp[i]);
	free(envp);
}

/*
 * A token file for a daemon that listens on TCP too, and the words that
 * make it listen there (at a port of the kernel's choice).
 */
static void
daemon_tcp_args(struct bench *b, const char **argv, char *token, size_t len)
{
	FILE *f;

	snprintf(token, len, "%s/token", b->dir);
	if ((f = fopen(token, "w")) != NULL) {
		fputs("a-token-of-the-benchmark-0123456789abcdef\n", f);
		fclose(f);
	}
	chmod(token, 0600);
	argv[0] = "--listen";
	argv[1] = "tcp:127.0.0.1:0";
	argv[2] = "--token-file";
	argv[3] = token;
}

/* The start of a file as a string in text; -1 if it cannot be read. */
static int
daemon_read_text(const char *path, char *text, size_t len)
{
	ssize_t	n;
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, text, len - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	return n >= 0 ? 0 : -1;
}

/* The TCP port the daemon says in its log it listens on, or -1. */
static int
daemon_tcp_port(struct bench *b)
{
	char	path[128], text[4096], *p;

	snprintf(path, sizeof path, "%s/daemon.log", b->dir);
	if (daemon_read_text(path, text, sizeof text) == -1 ||
	    (p = strstr(text, "listening on tcp:")) == NULL ||
	    (p = strchr(p + 17, ':')) == NULL)
		return -1;
	return atoi(p + 1);
}

/* Start the daemon and wait until it listens; -1 with b->why if not. */
int
daemon_start(struct bench *b)
{
	char		 listen[128], sub[128], token[128];
	const char	*argv[] = { b->dbgctld, "--foreground", "--listen",
			    listen, NULL, NULL, NULL, NULL, NULL };
	const char	*tmp;
	double		 end;
	int		 fd;

	/* TMPDIR says which file system the sessions' files are made on. */
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	if ((size_t)snprintf(b->dir, sizeof b->dir, "%s/dbgctl-bench.XXXXXX",
	    tmp) >= sizeof b->dir)
		return bench_fail(b, "TMPDIR %s: too long for the daemon's "
		    "socket path", tmp);
	if (mkdtemp(b->dir) == NULL)
		return bench_fail(b, "mkdtemp: %s", strerror(errno));
	snprintf(sub, sizeof sub, "%s/run", b->dir);
	mkdir(sub, 0700);
	snprintf(b->sock, sizeof b->sock, "%s/sock", b->dir);
	snprintf(listen, sizeof listen, "unix:%s", b->sock);
	b->envp = daemon_env(b->dir, b->keep_ended > 0 ? b->keep_ended : 10);
	if (b->tcp)
		daemon_tcp_args(b, argv + 4, token, sizeof token);
	snprintf(sub, sizeof sub, "%s/daemon.log", b->dir);
	fd = open(sub, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	b->daemon = proc_spawn(argv, b->envp, -1, fd, fd);
	if (fd >= 0)
		close(fd);
	if (b->daemon == -1)
		return bench_fail(b, "cannot spawn %s", b->dbgctld);
	end = stat_now_ms() + DAEMON_START_MS;
	while (!rpc_listens(b->sock)) {
		if (proc_wait(b->daemon, 0) != -1) {
			b->daemon = 0;
			return bench_fail(b, "dbgctld exited at start");
		}
		if (stat_now_ms() > end)
			return bench_fail(b, "dbgctld does not listen");
		stat_sleep_ms(2);
	}
	while (b->tcp && (b->tcp_port = daemon_tcp_port(b)) <= 0) {
		if (stat_now_ms() > end)
			return bench_fail(b, "dbgctld does not say its port");
		stat_sleep_ms(2);
	}
	return 0;
}

/* The daemon's CPU time so far, in clock ticks; -1 if it is gone. */
static long
daemon_ticks(const struct bench *b)
{
	char		 path[64], text[1024], *p;
	unsigned long	 utime, stime;

	snprintf(path, sizeof path, "/proc/%d/stat", b->daemon);
	/* Fields 14 and 15, after the comm's closing parenthesis. */
	if (daemon_read_text(path, text, sizeof text) == -1 ||
	    (p = strrchr(text, ')')) == NULL || sscanf(p + 2, "%*c %*d %*d "
	    "%*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
		return -1;
	return (long)(utime + stime);
}

/*
 * Wait (up to DAEMON_SETTLE_MS) until the daemon's loop is idle: no CPU
 * tick used over DAEMON_QUIET_MS, so that a figure taken after growth
 * measures the daemon, not what the growth left it to do.
 */
void
daemon_settle(struct bench *b)
{
	double	end = stat_now_ms() + DAEMON_SETTLE_MS;
	long	t0 = daemon_ticks(b), t;

	while (stat_now_ms() < end) {
		stat_sleep_ms(DAEMON_QUIET_MS);
		if ((t = daemon_ticks(b)) == t0 || t == -1)
			return;
		t0 = t;
	}
}

/* Remove one entry of the daemon's directory, for nftw. */
static int
daemon_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/*
 * Shut the daemon down and reap it, always: SIGKILL if it has not ended
 * in time, so that a failed figure leaves no daemon behind; then remove
 * its directory.
 */
void
daemon_stop(struct bench *b)
{
	const char *argv[] = { b->dbgctl, "-s", b->sock, "shutdown", NULL };
	pid_t pid;

	if (b->daemon > 0) {
		if ((pid = proc_spawn(argv, b->envp, -1, -1, -1)) > 0 &&
		    proc_wait(pid, DAEMON_STOP_MS) == -1) {
			kill(pid, SIGKILL);
			proc_wait(pid, -1);
		}
		if (proc_wait(b->daemon, DAEMON_STOP_MS) == -1) {
			fprintf(stderr, "bench: dbgctld did not end: "
			    "SIGKILL\n");
			kill(b->daemon, SIGKILL);
			proc_wait(b->daemon, -1);
		}
	}
	b->daemon = 0;
	if (b->dir[0] != '\0')
		nftw(b->dir, daemon_rm, 16, FTW_DEPTH | FTW_PHYS);
	b->dir[0] = '\0';
	daemon_env_free(b->envp);
	b->envp = NULL;
}

/* Run `dbgctl -s SOCK ARGS...` whole; its time in ms, or NA if it failed. */
double
daemon_client_ms(struct bench *b, const char *const args[])
{
	const char	*argv[32];
	int		 n = 0, i;

	argv[n++] = b->dbgctl;
	argv[n++] = "-s";
	argv[n++] = b->sock;
	for (i = 0; args[i] != NULL && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return proc_time_ms(argv, b->envp);
}
