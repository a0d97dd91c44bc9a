/*
 * The keeper's adoption, on the real dbgctl-keeper: the test is the daemon.
 * It spawns the keeper with a pty slave on 0, 1 and 2 and one end of a
 * socketpair on 3, hands it fds to hold, goes away by closing its end, and
 * adopts the keeper again through --adopt's socket as a next daemon would.
 */
#include <criterion/criterion.h>

#include <sys/prctl.h>
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

#define WAIT_MS		10000	/* the bound on every wait */
#define GRACE		"20000"	/* long enough never to end in a test */
#define KEEPER_HOLDS	16	/* the fds a keeper holds at most */

/* Lines and fds read from one stream socket. */
struct reader {
	int	fd;
	char	buf[4096];
	size_t	len;
	int	fds[16];
	size_t	nfds;
};

/* The keeper under test and the daemon's side of it. */
struct kp {
	char		dir[64];
	char		path[128];
	pid_t		pid;		/* the keeper */
	pid_t		main;		/* its program */
	int		master;		/* the pty's master */
	struct reader	ctl;		/* the control socket, or fd -1 */
	pid_t		daemon;		/* the keeper's parent, if not the test */
	int		daemon_fd;	/* its end when closed */
};

static pid_t	keeper_pid = -1;	/* for the fini */
static pid_t	daemon_pid = -1;
static char	keeper_dir[64];

/* Return the monotonic clock in ms. */
static long long
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Sleep a little between two looks at a condition. */
static void
nap(void)
{
	struct timespec	ts = { 0, 10 * 1000000L };

	nanosleep(&ts, NULL);
}

/* Queue the fds a message carried. */
static void
reader_take_fds(struct reader *r, struct msghdr *msg)
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
static int
reader_fill(struct reader *r)
{
	char		cbuf[CMSG_SPACE(16 * sizeof(int))];
	struct pollfd	pfd = { .fd = r->fd, .events = POLLIN };
	struct iovec	iov;
	struct msghdr	msg;
	ssize_t		n;

	cr_assert_eq(poll(&pfd, 1, WAIT_MS), 1, "nothing from the keeper");
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
	reader_take_fds(r, &msg);
	r->len += n;
	return n > 0;
}

/* Read one line without its newline; return 0 at EOF. */
static int
reader_line(struct reader *r, char *line, size_t size)
{
	char	*nl;
	size_t	 n;

	while ((nl = memchr(r->buf, '\n', r->len)) == NULL) {
		if (!reader_fill(r)) {
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
static void
reader_expect(struct reader *r, const char *want)
{
	char	line[256];

	cr_assert(reader_line(r, line, sizeof line), "EOF, not \"%s\"", want);
	cr_assert_str_eq(line, want);
}

/* Assert that the keeper closes the connection with nothing more said. */
static void
reader_expect_eof(struct reader *r)
{
	char	line[256];

	cr_assert(!reader_line(r, line, sizeof line), "\"%s\", not EOF", line);
}

/* Send a line with fd attached, or none if fd is -1. */
static void
send_line(int sock, const char *line, int fd)
{
	char		cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec	iov = { (void *)line, strlen(line) };
	struct msghdr	msg;
	struct cmsghdr	*c;

	memset(&msg, 0, sizeof msg);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (fd != -1) {
		memset(cbuf, 0, sizeof cbuf);
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof cbuf;
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	cr_assert_eq(sendmsg(sock, &msg, MSG_NOSIGNAL), (ssize_t)strlen(line));
}

/*
 * Say "adopt" on a new connection: a keeper held by a daemon may have said
 * "busy" and closed it before, which the reply then tells.
 */
static void
say_adopt(int fd, const char *what)
{
	ssize_t	n;

	n = send(fd, what, strlen(what), MSG_NOSIGNAL);
	cr_assert(n == (ssize_t)strlen(what) || errno == EPIPE,
	    "send: %s", strerror(errno));
}

/* In the child: put the pty and the socket in place and exec the keeper. */
static void
kp_exec(int slave, int sock, char **argv)
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
kp_parent(int slave, int sock, char **argv, int life, int back)
{
	pid_t	pid;
	char	c;

	if ((pid = fork()) == -1)
		_exit(125);
	if (pid == 0)
		kp_exec(slave, sock, argv);
	if (write(back, &pid, sizeof pid) != sizeof pid)
		_exit(125);
	while (read(life, &c, 1) == -1 && errno == EINTR)
		continue;
	_exit(0);
}

/* Fork the keeper, or, with via, a process that forks it as its parent. */
static void
kp_fork(struct kp *k, int slave, int sv[2], char **argv, int via)
{
	int	life[2], back[2];

	if (!via) {
		k->pid = fork();
		cr_assert_neq(k->pid, -1);
		if (k->pid == 0)
			kp_exec(slave, sv[1], argv);
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
		kp_parent(slave, sv[1], argv, life[0], back[1]);
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
static void
kp_start_via(struct kp *k, const char *grace, const char *script, int via)
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
	kp_fork(k, slave, sv, argv, via);
	close(slave);
	close(sv[1]);
	k->ctl.fd = sv[0];
	cr_assert(reader_line(&k->ctl, line, sizeof line), "no start");
	cr_assert_eq(sscanf(line, "started %d", &k->main), 1, "%s", line);
}

/* Start a keeper whose parent is the test. */
static void
kp_start(struct kp *k, const char *grace, const char *script)
{
	kp_start_via(k, grace, script, 0);
}

/* Go away as a crashed daemon would: close the control socket. */
static void
kp_drop(struct kp *k)
{
	close(k->ctl.fd);
	k->ctl.fd = -1;
}

/* Connect to the keeper's socket; return the fd, or -1 and errno. */
static int
kp_connect(const char *path)
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
static void
kp_adopt(struct kp *k, struct reader *r)
{
	char		line[256], want[64];
	long long	end = now_ms() + WAIT_MS;

	for (;;) {
		memset(r, 0, sizeof *r);
		r->fd = kp_connect(k->path);
		cr_assert_neq(r->fd, -1, "connect: %s", strerror(errno));
		say_adopt(r->fd, "adopt\n");
		cr_assert(reader_line(r, line, sizeof line), "EOF at adopt");
		if (strcmp(line, "busy") != 0)
			break;
		reader_expect_eof(r);
		close(r->fd);
		cr_assert_lt(now_ms(), end, "still busy");
		nap();
	}
	snprintf(want, sizeof want, "keeper %d", (int)k->pid);
	cr_assert_str_eq(line, want);
}

/* Wait for the keeper to exit, and assert that it exited 0. */
static void
kp_wait_exit(struct kp *k)
{
	long long	end = now_ms() + WAIT_MS;
	pid_t		r;
	int		status;

	while ((r = waitpid(k->pid, &status, WNOHANG)) == 0) {
		cr_assert_lt(now_ms(), end, "the keeper did not exit");
		nap();
	}
	cr_assert_eq(r, k->pid);
	keeper_pid = -1;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "keeper status %#x", status);
}

/* Whether pid is gone (reaped: a keeper reaps all it leaves). */
static int
gone(pid_t pid)
{
	return kill(pid, 0) == -1 && errno == ESRCH;
}

/* Wait until pid is gone. */
static void
wait_gone(pid_t pid)
{
	long long	end = now_ms() + WAIT_MS;

	while (!gone(pid)) {
		cr_assert_lt(now_ms(), end, "%d is still alive", (int)pid);
		nap();
	}
}

/* Read the pid the program wrote to DIR/name once it is there. */
static pid_t
kp_read_pid(struct kp *k, const char *name)
{
	char		path[192];
	long long	end = now_ms() + WAIT_MS;
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
		cr_assert_lt(now_ms(), end, "no %s", name);
		nap();
	}
}

/* Assert that a read from fd sees EOF within the bound. */
static void
expect_eof(int fd)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLIN };
	char		c;

	cr_assert_eq(poll(&pfd, 1, WAIT_MS), 1, "no EOF");
	cr_assert_eq(read(fd, &c, 1), 0, "data, not EOF");
}

/* Write a line through fd and read it back from the pipe's other end. */
static void
expect_through(int fd, int rfd)
{
	struct pollfd	pfd = { .fd = rfd, .events = POLLIN };
	char		buf[16];

	cr_assert_eq(write(fd, "hello\n", 6), 6);
	cr_assert_eq(poll(&pfd, 1, WAIT_MS), 1);
	cr_assert_eq(read(rfd, buf, sizeof buf), 6);
	cr_assert_eq(memcmp(buf, "hello\n", 6), 0);
}

/* Assert that pid holds no socket: neither the keeper's nor a held one. */
static void
expect_no_socket(pid_t pid)
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
proc_session(const char *name)
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
static void
kp_fini(void)
{
	char		path[512];
	DIR		*d;
	struct dirent	*e;

	if (keeper_pid > 0 && (d = opendir("/proc")) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (proc_session(e->d_name) == keeper_pid)
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

TestSuite(keeper_adopt, .fini = kp_fini, .timeout = 60);

/* The program: a shell with a child of its own, both long-lived. */
#define TREE	"sleep 1000 & echo $! > bg; wait"

Test(keeper_adopt, adrift_tree_runs_on_and_a_next_daemon_gets_its_fds)
{
	struct kp	k;
	struct reader	r;
	char		line[256], want[64];
	int		p[2];
	pid_t		bg;

	kp_start(&k, GRACE, TREE);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	send_line(k.ctl.fd, "hold out\n", p[1]);
	close(p[1]);
	bg = kp_read_pid(&k, "bg");
	kp_drop(&k);

	kp_adopt(&k, &r);
	reader_expect(&r, "hold out");
	snprintf(want, sizeof want, "started %d", (int)k.main);
	reader_expect(&r, want);
	reader_expect(&r, "adopted");
	cr_assert_eq(r.nfds, 1, "%zu fds handed over", r.nfds);
	cr_assert(!gone(k.main) && !gone(bg), "the tree did not run on");
	expect_no_socket(k.main);
	expect_no_socket(bg);
	expect_through(r.fds[0], p[0]);

	send_line(r.fd, "stop 100\n", -1);
	cr_assert(reader_line(&r, line, sizeof line));
	cr_assert_eq(strncmp(line, "exit ", 5), 0, "%s", line);
	reader_expect_eof(&r);
	kp_wait_exit(&k);
	cr_assert(gone(k.main) && gone(bg), "the tree outlived its keeper");
	cr_assert_eq(access(k.path, F_OK), -1, "the socket is left behind");
}

Test(keeper_adopt, release_closes_the_held_fd)
{
	struct kp	k;
	int		p[2];

	kp_start(&k, GRACE, "exec sleep 1000");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	send_line(k.ctl.fd, "hold in\n", p[1]);
	close(p[1]);
	send_line(k.ctl.fd, "release in\n", -1);
	expect_eof(p[0]);
	send_line(k.ctl.fd, "stop 100\n", -1);
	kp_wait_exit(&k);
}

Test(keeper_adopt, a_bad_name_closes_the_fd_it_came_with)
{
	struct kp	k;
	int		p[2];

	kp_start(&k, GRACE, "exec sleep 1000");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	send_line(k.ctl.fd, "hold No/Good\n", p[1]);
	close(p[1]);
	expect_eof(p[0]);
	send_line(k.ctl.fd, "stop 100\n", -1);
	kp_wait_exit(&k);
}

Test(keeper_adopt, busy_while_its_daemon_holds_it)
{
	struct kp	k;
	struct reader	r;

	kp_start(&k, GRACE, "exec sleep 1000");
	memset(&r, 0, sizeof r);
	r.fd = kp_connect(k.path);
	cr_assert_neq(r.fd, -1, "connect: %s", strerror(errno));
	say_adopt(r.fd, "adopt\n");
	reader_expect(&r, "busy");
	reader_expect_eof(&r);
	close(r.fd);
	cr_assert(!gone(k.main));
	send_line(k.ctl.fd, "stop 100\n", -1);
	kp_wait_exit(&k);
}

/* In a child as nobody: try to adopt; exit 0 if refused, 1 if adopted. */
static void
adopt_as_nobody(const char *path)
{
	char		buf[64];
	long long	end = now_ms() + WAIT_MS;
	ssize_t		n;
	int		fd;

	if (setgid(65534) != 0 || setuid(65534) != 0)
		_exit(3);
	while (now_ms() < end) {
		if ((fd = kp_connect(path)) == -1)
			_exit(4);
		if (send(fd, "adopt\n", 6, MSG_NOSIGNAL) != 6) {
			close(fd);	/* refused before it could write */
			_exit(0);
		}
		n = read(fd, buf, sizeof buf);
		close(fd);
		if (n <= 0)
			_exit(0);
		if (n < 5 || memcmp(buf, "busy\n", 5) != 0)
			_exit(1);
		nap();
	}
	_exit(2);
}

Test(keeper_adopt, another_uid_is_refused_and_the_keeper_stays_adoptable)
{
	struct kp	k;
	struct reader	r;
	pid_t		pid;
	int		status;

	if (getuid() != 0)
		cr_skip_test("needs root to be another uid");
	kp_start(&k, GRACE, "exec sleep 1000");
	/* Past the modes, which would refuse it first: the keeper's check. */
	cr_assert_eq(chmod(k.dir, 0755), 0);
	cr_assert_eq(chmod(k.path, 0666), 0);
	kp_drop(&k);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0)
		adopt_as_nobody(k.path);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "nobody's adoption: status %#x", status);

	kp_adopt(&k, &r);
	cr_assert(!gone(k.main));
	send_line(r.fd, "stop 100\n", -1);
	kp_wait_exit(&k);
}

Test(keeper_adopt, an_adopter_saying_something_else_is_dropped)
{
	struct kp	k;
	struct reader	r;
	char		line[64];
	long long	end = now_ms() + WAIT_MS;

	kp_start(&k, GRACE, "exec sleep 1000");
	kp_drop(&k);
	for (;;) {
		memset(&r, 0, sizeof r);
		r.fd = kp_connect(k.path);
		cr_assert_neq(r.fd, -1);
		say_adopt(r.fd, "adapt\n");
		if (!reader_line(&r, line, sizeof line))
			break;
		cr_assert_str_eq(line, "busy");
		close(r.fd);
		cr_assert_lt(now_ms(), end, "still busy");
		nap();
	}
	close(r.fd);
	kp_adopt(&k, &r);
	send_line(r.fd, "stop 100\n", -1);
	kp_wait_exit(&k);
}

Test(keeper_adopt, nobody_adopting_in_the_grace_ends_the_tree)
{
	struct kp	k;
	int		p[2];
	pid_t		bg;

	kp_start(&k, "300", TREE);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	send_line(k.ctl.fd, "hold out\n", p[1]);
	close(p[1]);
	bg = kp_read_pid(&k, "bg");
	kp_drop(&k);
	kp_wait_exit(&k);
	cr_assert(gone(k.main) && gone(bg), "the tree outlived its keeper");
	cr_assert_eq(access(k.path, F_OK), -1, "the socket is left behind");
	expect_eof(p[0]);
}

Test(keeper_adopt, no_grace_ends_the_tree_at_once)
{
	struct kp	k;
	struct reader	r;
	pid_t		bg;

	kp_start(&k, NULL, TREE);
	bg = kp_read_pid(&k, "bg");
	kp_drop(&k);
	/* Whenever it connects, a next daemon never adopts this keeper. */
	memset(&r, 0, sizeof r);
	if ((r.fd = kp_connect(k.path)) != -1) {
		say_adopt(r.fd, "adopt\n");
		if (reader_fill(&r))
			cr_assert_eq(memcmp(r.buf, "busy\n", 5), 0, "%s",
			    r.buf);
		close(r.fd);
	}
	kp_wait_exit(&k);
	cr_assert(gone(k.main) && gone(bg), "the tree outlived its keeper");
	cr_assert_eq(access(k.path, F_OK), -1, "the socket is left behind");
}

Test(keeper_adopt, an_exit_while_adrift_is_told_to_the_adopter)
{
	struct kp	k;
	struct reader	r;
	char		want[64];

	kp_start(&k, GRACE, "read x; exit 7");
	kp_drop(&k);
	cr_assert_eq(write(k.master, "go\n", 3), 3);
	wait_gone(k.main);
	kp_adopt(&k, &r);
	snprintf(want, sizeof want, "started %d", (int)k.main);
	reader_expect(&r, want);
	reader_expect(&r, "exit code 7 run");
	reader_expect(&r, "adopted");
	reader_expect_eof(&r);
	kp_wait_exit(&k);
	cr_assert_eq(access(k.path, F_OK), -1, "the socket is left behind");
}

Test(keeper_adopt, a_stop_while_adrift_is_told_to_the_adopter)
{
	struct kp	k;
	struct reader	r;
	char		want[64], stat[64], buf[256];
	long long	end = now_ms() + WAIT_MS;
	FILE		*f;
	char		*p;

	kp_start(&k, GRACE, "exec sleep 1000");
	kp_drop(&k);
	cr_assert_eq(kill(k.main, SIGSTOP), 0);
	snprintf(stat, sizeof stat, "/proc/%d/stat", (int)k.main);
	for (;;) {
		cr_assert_not_null(f = fopen(stat, "r"));
		cr_assert_not_null(fgets(buf, sizeof buf, f));
		fclose(f);
		cr_assert_not_null(p = strrchr(buf, ')'));
		if (p[2] == 'T')
			break;
		cr_assert_lt(now_ms(), end, "not stopped");
		nap();
	}
	kp_adopt(&k, &r);
	snprintf(want, sizeof want, "started %d", (int)k.main);
	reader_expect(&r, want);
	reader_expect(&r, "stopped signal 19");
	reader_expect(&r, "adopted");
	send_line(r.fd, "stop 100\n", -1);
	kp_wait_exit(&k);
	cr_assert(gone(k.main));
}

Test(keeper_adopt, adopted_twice)
{
	struct kp	k;
	struct reader	r1, r2;
	int		p[2];

	kp_start(&k, GRACE, "exec sleep 1000");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	send_line(k.ctl.fd, "hold out\n", p[1]);
	close(p[1]);
	kp_drop(&k);
	kp_adopt(&k, &r1);
	reader_expect(&r1, "hold out");
	close(r1.fd);
	cr_assert_eq(r1.nfds, 1);
	close(r1.fds[0]);

	kp_adopt(&k, &r2);
	reader_expect(&r2, "hold out");
	cr_assert(reader_line(&r2, r2.buf + 2048, 256));
	reader_expect(&r2, "adopted");
	cr_assert_eq(r2.nfds, 1);
	expect_through(r2.fds[0], p[0]);
	send_line(r2.fd, "stop 100\n", -1);
	kp_wait_exit(&k);
	cr_assert(gone(k.main));
}

/*
 * A daemon that hands its keepers over and then exits: its death, which the
 * keeper's parent-death signal tells, is not the adopter's.
 */
Test(keeper_adopt, the_old_daemon_exiting_after_adoption_changes_nothing)
{
	struct kp	k;
	struct reader	r;
	char		line[256], want[64];
	int		status;

	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	kp_start_via(&k, GRACE, "exec sleep 1000", 1);
	kp_drop(&k);
	kp_adopt(&k, &r);
	close(k.daemon_fd);
	cr_assert_eq(waitpid(k.daemon, &status, 0), k.daemon);
	daemon_pid = -1;
	/* Its signal, if any, is the keeper's before this line. */
	send_line(r.fd, "stop 100\n", -1);
	snprintf(want, sizeof want, "started %d", (int)k.main);
	reader_expect(&r, want);
	reader_expect(&r, "adopted");
	cr_assert(reader_line(&r, line, sizeof line), "adrift, not adopted");
	cr_assert_eq(strncmp(line, "exit ", 5), 0, "%s", line);
	kp_wait_exit(&k);
}

/* Hand the keeper a new pipe's write end under name; return the read end. */
static int
hold_pipe(struct kp *k, const char *name)
{
	char	line[64];
	int	p[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	snprintf(line, sizeof line, "hold %s\n", name);
	send_line(k->ctl.fd, line, p[1]);
	close(p[1]);
	return p[0];
}

Test(keeper_adopt, holds_are_named_bounded_and_replaced_in_place)
{
	struct kp	k;
	struct reader	r;
	char		name[16];
	int		rfd[KEEPER_HOLDS + 2], i, status;

	kp_start(&k, GRACE, "exec sleep 1000");
	/*
	 * A line without an fd gets none, even read at once with the next
	 * line's: the keeper, stopped, reads both in one go.
	 */
	cr_assert_eq(kill(k.pid, SIGSTOP), 0);
	cr_assert_eq(waitpid(k.pid, &status, WUNTRACED), k.pid);
	send_line(k.ctl.fd, "hold none\n", -1);
	rfd[0] = hold_pipe(&k, "p0");
	cr_assert_eq(kill(k.pid, SIGCONT), 0);
	for (i = 1; i <= KEEPER_HOLDS; i++) {
		snprintf(name, sizeof name, "p%d", i);
		rfd[i] = hold_pipe(&k, name);
	}
	expect_eof(rfd[KEEPER_HOLDS]);		/* one too many */
	rfd[KEEPER_HOLDS + 1] = hold_pipe(&k, "p0");
	expect_eof(rfd[0]);			/* replaced */
	kp_drop(&k);

	kp_adopt(&k, &r);
	for (i = 0; i < KEEPER_HOLDS; i++) {
		snprintf(name, sizeof name, "hold p%d", i);
		reader_expect(&r, name);
	}
	cr_assert_eq(r.nfds, KEEPER_HOLDS);
	expect_through(r.fds[0], rfd[KEEPER_HOLDS + 1]);
	expect_through(r.fds[KEEPER_HOLDS - 1], rfd[KEEPER_HOLDS - 1]);
	send_line(r.fd, "stop 100\n", -1);
	kp_wait_exit(&k);
}
