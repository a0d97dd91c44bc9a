/*
 * The test's side of a keeper under test (keeper-harness.h): a daemon that
 * is a test, with bounded waits and a fini that leaves nothing behind.
 */
#include <criterion/criterion.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "keeper-harness.h"
#include "fdpass.h"

static pid_t	keeper_pid = -1;	/* for the fini */
static pid_t	daemon_pid = -1;
static char	keeper_dir[64];

/* Return the monotonic clock in ms. */
long long
kh_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Sleep a little between two looks at a condition. */
void
kh_nap(void)
{
	struct timespec	ts = { 0, 10 * 1000000L };

	nanosleep(&ts, NULL);
}

/* Queue the fds a message carried. */
static void
kh_reader_take_fds(struct kh_reader *r, struct msghdr *msg)
{
	struct cmsghdr	*c;
	size_t		 i, n;

	for (c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			cr_assert_lt(r->nfds, 16);
			memcpy(&r->fds[r->nfds++],
			    CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
	}
}

/* Read more into r within the bound; return 0 at EOF. */
int
kh_reader_fill(struct kh_reader *r)
{
	char		cbuf[CMSG_SPACE(16 * sizeof(int))];
	struct pollfd	pfd = { .fd = r->fd, .events = POLLIN };
	struct iovec	iov;
	struct msghdr	msg;
	ssize_t		n;

	cr_assert_eq(poll(&pfd, 1, KH_WAIT_MS), 1, "nothing from the keeper");
	iov.iov_base = r->buf + r->len;
	iov.iov_len = sizeof r->buf - 1 - r->len;
	memset(&msg, 0, sizeof msg);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof cbuf;
	n = recvmsg(r->fd, &msg, MSG_CMSG_CLOEXEC);
	if (n == -1 && errno == ECONNRESET)
		n = 0;
	cr_assert_geq(n, 0, "recvmsg: %s", strerror(errno));
	kh_reader_take_fds(r, &msg);
	r->len += n;
	return n > 0;
}

/* Read one line without its newline; return 0 at EOF. */
int
kh_reader_line(struct kh_reader *r, char *line, size_t size)
{
	char	*nl;
	size_t	 n;

	while ((nl = memchr(r->buf, '\n', r->len)) == NULL) {
		if (!kh_reader_fill(r)) {
			cr_assert_eq(r->len, 0, "a partial line at EOF");
			return 0;
		}
	}
	n = nl - r->buf;
	cr_assert_lt(n, size);
	memcpy(line, r->buf, n);
	line[n] = '\0';
	memmove(r->buf, nl + 1, r->len - n - 1);
	r->len -= n + 1;
	return 1;
}

/* Assert that the next line is want. */
void
kh_reader_expect(struct kh_reader *r, const char *want)
{
	char	line[256];

	cr_assert(kh_reader_line(r, line, sizeof line), "EOF, not \"%s\"",
	    want);
	cr_assert_str_eq(line, want);
}

/* Assert that the keeper closes the connection with nothing more said. */
void
kh_reader_expect_eof(struct kh_reader *r)
{
	char	line[256];

	cr_assert(!kh_reader_line(r, line, sizeof line), "\"%s\", not EOF",
	    line);
}

/* Send a line with the n fds attached in one message. */
void
kh_send_fds(int sock, const char *line, const int *fds, size_t n)
{
	cr_assert_eq(fdpass_send(sock, line, strlen(line), fds, n),
	    (ssize_t)strlen(line));
}

/* Send a line with fd attached, or none if fd is -1. */
void
kh_send_line(int sock, const char *line, int fd)
{
	kh_send_fds(sock, line, &fd, fd != -1);
}

/*
 * Say "adopt" on a new connection: a keeper held by a daemon may have said
 * "busy" and closed it before, which the reply then tells.
 */
void
kh_say(int fd, const char *what)
{
	ssize_t	n;

	n = send(fd, what, strlen(what), MSG_NOSIGNAL);
	cr_assert(n == (ssize_t)strlen(what) || errno == EPIPE,
	    "send: %s", strerror(errno));
}

/* In the child: put the pty and the socket in place and exec the keeper. */
static void
kh_exec(int slave, int sock, char **argv)
{
	int	fd;

	for (fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) == -1)
			_exit(126);
	if ((sock == 3 ? fcntl(3, F_SETFD, 0) : dup2(sock, 3)) == -1)
		_exit(126);
	execv(KEEPER_BIN, argv);
	_exit(127);
}

/*
 * In the child: be the keeper's parent, as a daemon is, until the test
 * closes the pipe; the keeper's pid goes back on another.
 */
static void
kh_parent(int slave, int sock, char **argv, int life, int back)
{
	pid_t	pid;
	char	c;

	if ((pid = fork()) == -1)
		_exit(125);
	if (pid == 0)
		kh_exec(slave, sock, argv);
	if (write(back, &pid, sizeof pid) != sizeof pid)
		_exit(125);
	while (read(life, &c, 1) == -1 && errno == EINTR)
		continue;
	_exit(0);
}

/* Fork the keeper, or, with via, a process that forks it as its parent. */
static void
kh_fork(struct kh_keeper *k, int slave, int sv[2], char **argv, int via)
{
	int	life[2], back[2];

	if (!via) {
		k->pid = fork();
		cr_assert_neq(k->pid, -1);
		if (k->pid == 0)
			kh_exec(slave, sv[1], argv);
		keeper_pid = k->pid;
		return;
	}
	cr_assert_eq(pipe2(life, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(back, O_CLOEXEC), 0);
	k->daemon = fork();
	cr_assert_neq(k->daemon, -1);
	if (k->daemon == 0) {
		close(sv[0]);
		close(life[1]);
		kh_parent(slave, sv[1], argv, life[0], back[1]);
	}
	daemon_pid = k->daemon;
	close(life[0]);
	close(back[1]);
	k->daemon_fd = life[1];
	cr_assert_eq(read(back[0], &k->pid, sizeof k->pid), sizeof k->pid);
	close(back[0]);
	keeper_pid = k->pid;
}

/*
 * Start a keeper adoptable at DIR/k.sock with --grace grace (none if NULL)
 * running sh -c script in DIR, and read its "started PID"; with via, its
 * parent is another process than the test.
 */
void
kh_start_via(struct kh_keeper *k, const char *grace, const char *script,
    int via)
{
	char	*argv[16], line[256];
	int	 sv[2], slave, n = 0;

	memset(k, 0, sizeof *k);
	strcpy(k->dir, "/tmp/keeper-adopt-XXXXXX");
	cr_assert_not_null(mkdtemp(k->dir));
	strcpy(keeper_dir, k->dir);
	snprintf(k->path, sizeof k->path, "%s/k.sock", k->dir);
	cr_assert_eq(openpty(&k->master, &slave, NULL, NULL, NULL), 0);
	fcntl(k->master, F_SETFD, FD_CLOEXEC);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	argv[n++] = "dbgctl-keeper";
	argv[n++] = "--adopt";
	argv[n++] = k->path;
	if (grace != NULL) {
		argv[n++] = "--grace";
		argv[n++] = (char *)grace;
	}
	argv[n++] = "--cwd";
	argv[n++] = k->dir;
	argv[n++] = "--stop-timeout";
	argv[n++] = "5000";
	argv[n++] = "--";
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = (char *)script;
	argv[n] = NULL;
	kh_fork(k, slave, sv, argv, via);
	close(slave);
	close(sv[1]);
	k->ctl.fd = sv[0];
	cr_assert(kh_reader_line(&k->ctl, line, sizeof line), "no start");
	cr_assert_eq(sscanf(line, "started %d", &k->main), 1, "%s", line);
}

/* Start a keeper whose parent is the test. */
void
kh_start(struct kh_keeper *k, const char *grace, const char *script)
{
	kh_start_via(k, grace, script, 0);
}

/* Go away as a crashed daemon would: close the control socket. */
void
kh_drop(struct kh_keeper *k)
{
	close(k->ctl.fd);
	k->ctl.fd = -1;
}

/* Connect to the keeper's socket; return the fd, or -1 and errno. */
int
kh_connect(const char *path)
{
	struct sockaddr_un	sun;
	int			fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(fd, -1);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0)
		return fd;
	close(fd);
	return -1;
}

/*
 * Adopt the keeper as a next daemon: say "adopt" until the keeper, adrift,
 * no longer answers "busy", and read its "keeper PID".  r becomes the
 * keeper's control socket.
 */
void
kh_adopt(struct kh_keeper *k, struct kh_reader *r)
{
	char		line[256], want[64];
	long long	end = kh_now_ms() + KH_WAIT_MS;

	for (;;) {
		memset(r, 0, sizeof *r);
		r->fd = kh_connect(k->path);
		cr_assert_neq(r->fd, -1, "connect: %s", strerror(errno));
		kh_say(r->fd, "adopt\n");
		cr_assert(kh_reader_line(r, line, sizeof line), "EOF at adopt");
		if (strcmp(line, "busy") != 0)
			break;
		kh_reader_expect_eof(r);
		close(r->fd);
		cr_assert_lt(kh_now_ms(), end, "still busy");
		kh_nap();
	}
	snprintf(want, sizeof want, "keeper %d", (int)k->pid);
	cr_assert_str_eq(line, want);
}

/* Wait for the keeper to exit, and assert that it exited 0. */
void
kh_wait_exit(struct kh_keeper *k)
{
	long long	end = kh_now_ms() + KH_WAIT_MS;
	pid_t		r;
	int		status;

	while ((r = waitpid(k->pid, &status, WNOHANG)) == 0) {
		cr_assert_lt(kh_now_ms(), end, "the keeper did not exit");
		kh_nap();
	}
	cr_assert_eq(r, k->pid);
	keeper_pid = -1;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "keeper status %#x", status);
}

/* Whether pid is gone (reaped: a keeper reaps all it leaves). */
int
kh_gone(pid_t pid)
{
	return kill(pid, 0) == -1 && errno == ESRCH;
}

/* Wait until pid is gone. */
void
kh_wait_gone(pid_t pid)
{
	long long	end = kh_now_ms() + KH_WAIT_MS;

	while (!kh_gone(pid)) {
		cr_assert_lt(kh_now_ms(), end, "%d is still alive", (int)pid);
		kh_nap();
	}
}

/* Read the pid the program wrote to DIR/name once it is there. */
pid_t
kh_read_pid(struct kh_keeper *k, const char *name)
{
	char		path[192];
	long long	end = kh_now_ms() + KH_WAIT_MS;
	FILE		*f;
	int		pid = 0;

	snprintf(path, sizeof path, "%s/%s", k->dir, name);
	for (;;) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fscanf(f, "%d", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid > 0)
			return pid;
		cr_assert_lt(kh_now_ms(), end, "no %s", name);
		kh_nap();
	}
}

/* Assert that a read from fd sees EOF within the bound. */
void
kh_expect_eof(int fd)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLIN };
	char		c;

	cr_assert_eq(poll(&pfd, 1, KH_WAIT_MS), 1, "no EOF");
	cr_assert_eq(read(fd, &c, 1), 0, "data, not EOF");
}

/* Write a line through fd and read it back from the pipe's other end. */
void
kh_expect_through(int fd, int rfd)
{
	struct pollfd	pfd = { .fd = rfd, .events = POLLIN };
	char		buf[16];

	cr_assert_eq(write(fd, "hello\n", 6), 6);
	cr_assert_eq(poll(&pfd, 1, KH_WAIT_MS), 1);
	cr_assert_eq(read(rfd, buf, sizeof buf), 6);
	cr_assert_eq(memcmp(buf, "hello\n", 6), 0);
}

/* Assert that pid holds no socket: neither the keeper's nor a held one. */
void
kh_expect_no_socket(pid_t pid)
{
	char		dir[64], path[512], link[128];
	DIR		*d;
	struct dirent	*e;
	ssize_t		 n;

	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	cr_assert_not_null(d = opendir(dir));
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if ((n = readlink(path, link, sizeof link - 1)) <= 0)
			continue;
		link[n] = '\0';
		cr_assert_neq(strncmp(link, "socket:", 7), 0,
		    "%d holds %s as fd %s", (int)pid, link, e->d_name);
	}
	closedir(d);
}

/* Return the session of the process named by a /proc entry, or -1. */
static int
kh_proc_session(const char *name)
{
	char	path[512], buf[512], *p;
	FILE	*f;
	int	 sid = -1;

	snprintf(path, sizeof path, "/proc/%s/stat", name);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	/* pid (comm) state ppid pgrp session: comm may hold anything. */
	if (fgets(buf, sizeof buf, f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL &&
	    sscanf(p + 1, " %*c %*d %*d %d", &sid) != 1)
		sid = -1;
	fclose(f);
	return sid;
}

/* Kill what is left of a failed test's keeper session, and its files. */
void
kh_fini(void)
{
	char		path[512];
	DIR		*d;
	struct dirent	*e;

	if (keeper_pid > 0 && (d = opendir("/proc")) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (kh_proc_session(e->d_name) == keeper_pid)
				kill(atoi(e->d_name), SIGKILL);
		}
		closedir(d);
		kill(keeper_pid, SIGKILL);
		waitpid(keeper_pid, NULL, 0);
	}
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	if (keeper_dir[0] == '\0' || (d = opendir(keeper_dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "%s/%s", keeper_dir, e->d_name);
		if (e->d_name[0] != '.')
			unlink(path);
	}
	closedir(d);
	rmdir(keeper_dir);
}

/* Let the keeper's parent, not the test, exit, and reap it. */
void
kh_daemon_exit(struct kh_keeper *k)
{
	int	status;

	close(k->daemon_fd);
	cr_assert_eq(waitpid(k->daemon, &status, 0), k->daemon);
	daemon_pid = -1;
}
