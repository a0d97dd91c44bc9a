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
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keeper-harness.h"

TestSuite(keeper_adopt, .fini = kh_fini, .timeout = 60);

/* The program: a shell with a child of its own, both long-lived. */
#define TREE	"sleep 1000 & echo $! > bg; wait"

Test(keeper_adopt, adrift_tree_runs_on_and_a_next_daemon_gets_its_fds)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	char			line[256], want[64];
	int			p[2];
	pid_t			bg;

	kh_start(&k, KH_GRACE, TREE);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	kh_send_line(k.ctl.fd, "hold out\n", p[1]);
	close(p[1]);
	bg = kh_read_pid(&k, "bg");
	kh_drop(&k);

	kh_adopt(&k, &r);
	kh_reader_expect(&r, "hold out");
	snprintf(want, sizeof want, "started %d", (int)k.main);
	kh_reader_expect(&r, want);
	kh_reader_expect(&r, "adopted");
	cr_assert_eq(r.nfds, 1, "%zu fds handed over", r.nfds);
	cr_assert(!kh_gone(k.main) && !kh_gone(bg), "the tree did not run on");
	kh_expect_no_socket(k.main);
	kh_expect_no_socket(bg);
	kh_expect_through(r.fds[0], p[0]);

	kh_send_line(r.fd, "stop 100\n", -1);
	cr_assert(kh_reader_line(&r, line, sizeof line));
	cr_assert_eq(strncmp(line, "exit ", 5), 0, "%s", line);
	kh_reader_expect_eof(&r);
	kh_wait_exit(&k);
	cr_assert(kh_gone(k.main) && kh_gone(bg), "the tree outlived it");
	cr_assert_eq(access(k.path, F_OK), -1, "the socket is left behind");
}

Test(keeper_adopt, release_closes_the_held_fd)
{
	struct kh_keeper	k;
	int			p[2];

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	kh_send_line(k.ctl.fd, "hold in\n", p[1]);
	close(p[1]);
	kh_send_line(k.ctl.fd, "release in\n", -1);
	kh_expect_eof(p[0]);
	kh_send_line(k.ctl.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
}

Test(keeper_adopt, a_bad_name_closes_the_fd_it_came_with)
{
	struct kh_keeper	k;
	int			p[2];

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	kh_send_line(k.ctl.fd, "hold No/Good\n", p[1]);
	close(p[1]);
	kh_expect_eof(p[0]);
	kh_send_line(k.ctl.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
}

/* A line the keeper does not know (a later daemon's) leaves no fd queued. */
Test(keeper_adopt, a_line_not_known_closes_the_fds_it_came_with)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	int			p[2], q[2];

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	kh_send_line(k.ctl.fd, "frobnicate console 1\n", p[1]);
	close(p[1]);
	kh_expect_eof(p[0]);
	/* The next hold takes its own fd, not the one that came before. */
	cr_assert_eq(pipe2(q, O_CLOEXEC), 0);
	kh_send_line(k.ctl.fd, "hold out\n", q[1]);
	close(q[1]);
	kh_drop(&k);
	kh_adopt(&k, &r);
	kh_reader_expect(&r, "hold out");
	cr_assert_eq(r.nfds, 1, "%zu fds handed over", r.nfds);
	kh_expect_through(r.fds[0], q[0]);
	kh_send_line(r.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
}

Test(keeper_adopt, busy_while_its_daemon_holds_it)
{
	struct kh_keeper	k;
	struct kh_reader	r;

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	memset(&r, 0, sizeof r);
	r.fd = kh_connect(k.path);
	cr_assert_neq(r.fd, -1, "connect: %s", strerror(errno));
	kh_say(r.fd, "adopt\n");
	kh_reader_expect(&r, "busy");
	kh_reader_expect_eof(&r);
	close(r.fd);
	cr_assert(!kh_gone(k.main));
	kh_send_line(k.ctl.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
}

/* In a child as nobody: try to adopt; exit 0 if refused, 1 if adopted. */
static void
adopt_as_nobody(const char *path)
{
	char		buf[64];
	long long	end = kh_now_ms() + KH_WAIT_MS;
	ssize_t		n;
	int		fd;

	if (setgid(65534) != 0 || setuid(65534) != 0)
		_exit(3);
	while (kh_now_ms() < end) {
		if ((fd = kh_connect(path)) == -1)
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
		kh_nap();
	}
	_exit(2);
}

Test(keeper_adopt, another_uid_is_refused_and_the_keeper_stays_adoptable)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	pid_t			pid;
	int			status;

	if (getuid() != 0)
		cr_skip_test("needs root to be another uid");
	kh_start(&k, KH_GRACE, "exec sleep 1000");
	/* Past the modes, which would refuse it first: the keeper's check. */
	cr_assert_eq(chmod(k.dir, 0755), 0);
	cr_assert_eq(chmod(k.path, 0666), 0);
	kh_drop(&k);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0)
		adopt_as_nobody(k.path);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "nobody's adoption: status %#x", status);

	kh_adopt(&k, &r);
	cr_assert(!kh_gone(k.main));
	kh_send_line(r.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
}

Test(keeper_adopt, an_adopter_saying_something_else_is_dropped)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	char			line[64];
	long long		end = kh_now_ms() + KH_WAIT_MS;

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	kh_drop(&k);
	for (;;) {
		memset(&r, 0, sizeof r);
		r.fd = kh_connect(k.path);
		cr_assert_neq(r.fd, -1);
		kh_say(r.fd, "adapt\n");
		if (!kh_reader_line(&r, line, sizeof line))
			break;
		cr_assert_str_eq(line, "busy");
		close(r.fd);
		cr_assert_lt(kh_now_ms(), end, "still busy");
		kh_nap();
	}
	close(r.fd);
	kh_adopt(&k, &r);
	kh_send_line(r.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
}

Test(keeper_adopt, nobody_adopting_in_the_grace_ends_the_tree)
{
	struct kh_keeper	k;
	int			p[2];
	pid_t			bg;

	kh_start(&k, "300", TREE);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	kh_send_line(k.ctl.fd, "hold out\n", p[1]);
	close(p[1]);
	bg = kh_read_pid(&k, "bg");
	kh_drop(&k);
	kh_wait_exit(&k);
	cr_assert(kh_gone(k.main) && kh_gone(bg), "the tree outlived it");
	cr_assert_eq(access(k.path, F_OK), -1, "the socket is left behind");
	kh_expect_eof(p[0]);
}

Test(keeper_adopt, no_grace_ends_the_tree_at_once)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	pid_t			bg;

	kh_start(&k, NULL, TREE);
	bg = kh_read_pid(&k, "bg");
	kh_drop(&k);
	/* Whenever it connects, a next daemon never adopts this keeper. */
	memset(&r, 0, sizeof r);
	if ((r.fd = kh_connect(k.path)) != -1) {
		kh_say(r.fd, "adopt\n");
		if (kh_reader_fill(&r))
			cr_assert_eq(memcmp(r.buf, "busy\n", 5), 0, "%s",
			    r.buf);
		close(r.fd);
	}
	kh_wait_exit(&k);
	cr_assert(kh_gone(k.main) && kh_gone(bg), "the tree outlived it");
	cr_assert_eq(access(k.path, F_OK), -1, "the socket is left behind");
}

Test(keeper_adopt, an_exit_while_adrift_is_told_to_the_adopter)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	char			want[64];

	kh_start(&k, KH_GRACE, "read x; exit 7");
	kh_drop(&k);
	cr_assert_eq(write(k.master, "go\n", 3), 3);
	kh_wait_gone(k.main);
	kh_adopt(&k, &r);
	snprintf(want, sizeof want, "started %d", (int)k.main);
	kh_reader_expect(&r, want);
	kh_reader_expect(&r, "exit code 7 run");
	kh_reader_expect(&r, "adopted");
	kh_reader_expect_eof(&r);
	kh_wait_exit(&k);
	cr_assert_eq(access(k.path, F_OK), -1, "the socket is left behind");
}

Test(keeper_adopt, a_stop_while_adrift_is_told_to_the_adopter)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	char			want[64], stat[64], buf[256];
	long long		end = kh_now_ms() + KH_WAIT_MS;
	FILE		*f;
	char		*p;

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	kh_drop(&k);
	cr_assert_eq(kill(k.main, SIGSTOP), 0);
	snprintf(stat, sizeof stat, "/proc/%d/stat", (int)k.main);
	for (;;) {
		cr_assert_not_null(f = fopen(stat, "r"));
		cr_assert_not_null(fgets(buf, sizeof buf, f));
		fclose(f);
		cr_assert_not_null(p = strrchr(buf, ')'));
		if (p[2] == 'T')
			break;
		cr_assert_lt(kh_now_ms(), end, "not stopped");
		kh_nap();
	}
	kh_adopt(&k, &r);
	snprintf(want, sizeof want, "started %d", (int)k.main);
	kh_reader_expect(&r, want);
	kh_reader_expect(&r, "stopped signal 19");
	kh_reader_expect(&r, "adopted");
	kh_send_line(r.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
	cr_assert(kh_gone(k.main));
}

Test(keeper_adopt, adopted_twice)
{
	struct kh_keeper	k;
	struct kh_reader	r1, r2;
	int			p[2];

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	kh_send_line(k.ctl.fd, "hold out\n", p[1]);
	close(p[1]);
	kh_drop(&k);
	kh_adopt(&k, &r1);
	kh_reader_expect(&r1, "hold out");
	close(r1.fd);
	cr_assert_eq(r1.nfds, 1);
	close(r1.fds[0]);

	kh_adopt(&k, &r2);
	kh_reader_expect(&r2, "hold out");
	cr_assert(kh_reader_line(&r2, r2.buf + 2048, 256));
	kh_reader_expect(&r2, "adopted");
	cr_assert_eq(r2.nfds, 1);
	kh_expect_through(r2.fds[0], p[0]);
	kh_send_line(r2.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
	cr_assert(kh_gone(k.main));
}

/*
 * A daemon that hands its keepers over and then exits: its death, which the
 * keeper's parent-death signal tells, is not the adopter's.
 */
Test(keeper_adopt, the_old_daemon_exiting_after_adoption_changes_nothing)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	char			line[256], want[64];

	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	kh_start_via(&k, KH_GRACE, "exec sleep 1000", 1);
	kh_drop(&k);
	kh_adopt(&k, &r);
	kh_daemon_exit(&k);
	/* Its signal, if any, is the keeper's before this line. */
	kh_send_line(r.fd, "stop 100\n", -1);
	snprintf(want, sizeof want, "started %d", (int)k.main);
	kh_reader_expect(&r, want);
	kh_reader_expect(&r, "adopted");
	cr_assert(kh_reader_line(&r, line, sizeof line), "adrift, not adopted");
	cr_assert_eq(strncmp(line, "exit ", 5), 0, "%s", line);
	kh_wait_exit(&k);
}

/* Hand the keeper a new pipe's write end under name; return the read end. */
static int
hold_pipe(struct kh_keeper *k, const char *name)
{
	char	line[64];
	int	p[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	snprintf(line, sizeof line, "hold %s\n", name);
	kh_send_line(k->ctl.fd, line, p[1]);
	close(p[1]);
	return p[0];
}

Test(keeper_adopt, holds_are_named_bounded_and_replaced_in_place)
{
	struct kh_keeper	k;
	struct kh_reader	r;
	char			name[16];
	int			rfd[KH_HOLDS + 2], i, status;

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	/*
	 * A line without an fd gets none, even read at once with the next
	 * line's: the keeper, stopped, reads both in one go.
	 */
	cr_assert_eq(kill(k.pid, SIGSTOP), 0);
	cr_assert_eq(waitpid(k.pid, &status, WUNTRACED), k.pid);
	kh_send_line(k.ctl.fd, "hold none\n", -1);
	rfd[0] = hold_pipe(&k, "p0");
	cr_assert_eq(kill(k.pid, SIGCONT), 0);
	for (i = 1; i <= KH_HOLDS; i++) {
		snprintf(name, sizeof name, "p%d", i);
		rfd[i] = hold_pipe(&k, name);
	}
	kh_expect_eof(rfd[KH_HOLDS]);		/* one too many */
	rfd[KH_HOLDS + 1] = hold_pipe(&k, "p0");
	kh_expect_eof(rfd[0]);			/* replaced */
	kh_drop(&k);

	kh_adopt(&k, &r);
	for (i = 0; i < KH_HOLDS; i++) {
		snprintf(name, sizeof name, "hold p%d", i);
		kh_reader_expect(&r, name);
	}
	cr_assert_eq(r.nfds, KH_HOLDS);
	kh_expect_through(r.fds[0], rfd[KH_HOLDS + 1]);
	kh_expect_through(r.fds[KH_HOLDS - 1], rfd[KH_HOLDS - 1]);
	kh_send_line(r.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
}
