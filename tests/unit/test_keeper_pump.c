/*
 * The keeper's pumps, on the real dbgctl-keeper: the test is the daemon,
 * handing it the pty's master to hold and a pipe to pump it into, reading
 * the pipe as the daemon splices it, and going away as a crashed daemon
 * would. Every byte the program prints arrives once, in order, through the
 * pipe, or through the master once the keeper is gone.
 */
#include <criterion/criterion.h>

#include <sys/ioctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keeper-harness.h"

TestSuite(keeper_pump, .fini = kh_fini, .timeout = 60);

/* A program that prints seq 1 N once the file "go" is there, then "fin". */
#define PUMP_SCRIPT(n, then) "while [ ! -e go ]; do sleep 0.01; done; " \
	"seq 1 " #n "; : > fin; " then

/* What the keeper reads and the pipe's read end, the test's. */
struct pump {
	struct kh_keeper	 k;
	int			 rfd;
	char			*got;
	size_t			 len, cap;
};

/* Hand the keeper the master as "console" and a pipe to pump it into. */
static void
pump_start(struct pump *p, const char *script, bool hold_read_end)
{
	int	fds[2], master;

	memset(p, 0, sizeof *p);
	kh_start(&p->k, KH_GRACE, script);
	cr_assert_neq(master = dup(p->k.master), -1);
	kh_send_line(p->k.ctl.fd, "hold console\n", master);
	close(master);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	if (hold_read_end)
		kh_send_line(p->k.ctl.fd, "hold console.pump\n", fds[0]);
	kh_send_line(p->k.ctl.fd, "pump console 1\n", fds[1]);
	close(fds[1]);
	p->rfd = fds[0];
}

/* Let the program print: the file "go" in its directory. */
static void
pump_go(struct pump *p)
{
	char	path[256];
	int	fd;

	snprintf(path, sizeof path, "%s/go", p->k.dir);
	cr_assert_neq(fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600),
	    -1);
	close(fd);
}

/* Whether the program has printed all of its seq. */
static bool
pump_finished(struct pump *p)
{
	char	path[256];

	snprintf(path, sizeof path, "%s/fin", p->k.dir);
	return access(path, F_OK) == 0;
}

/* Read fd once into p->got, waiting up to the bound; 0 at its end. */
static ssize_t
pump_read(struct pump *p, int fd)
{
	struct pollfd	pfd = { .fd = fd, .events = POLLIN };
	ssize_t		n;

	cr_assert_eq(poll(&pfd, 1, KH_WAIT_MS), 1, "nothing came through after %zu bytes", p->len);
	if (p->cap - p->len < 65536) {
		p->cap = p->cap * 2 + 65536;
		cr_assert_not_null(p->got = realloc(p->got, p->cap));
	}
	n = read(fd, p->got + p->len, p->cap - p->len);
	/* A master whose slaves are all gone reads EIO: its end. */
	if (n == -1 && errno == EIO)
		return 0;
	cr_assert_geq(n, 0, "read: %s", strerror(errno));
	p->len += (size_t)n;
	return n;
}

/* The bytes seq 1 n prints on a terminal: its digits, and \r\n a line. */
static size_t
pump_seq_len(long n)
{
	size_t	len = 0;
	long	i;
	char	num[32];

	for (i = 1; i <= n; i++)
		len += (size_t)snprintf(num, sizeof num, "%ld\r\n", i);
	return len;
}

/* Assert that p->got is seq 1 n's lines as a terminal prints them. */
static void
pump_expect_seq(struct pump *p, long n)
{
	char	want[32];
	size_t	at = 0;
	long	i;
	int	w;

	for (i = 1; i <= n; i++) {
		w = snprintf(want, sizeof want, "%ld\r\n", i);
		cr_assert(at + (size_t)w <= p->len && memcmp(p->got + at, want,
		    (size_t)w) == 0, "line %ld is not \"%ld\": a byte was lost "
		    "or repeated at %zu of %zu", i, i, at, p->len);
		at += (size_t)w;
	}
	cr_assert_eq(at, p->len, "%zu bytes after the last line", p->len - at);
	free(p->got);
}

/*
 * What the program prints comes through the pipe; when the program and
 * then the keeper end, the pipe ends, and what the keeper left in the
 * terminal is read from the master: all of it once, in order.
 */
Test(keeper_pump, the_pipe_then_the_master_carry_all_once_in_order)
{
	struct pump	p;
	char		line[256];

	pump_start(&p, PUMP_SCRIPT(100000, "exit 0"), false);
	pump_go(&p);
	while (pump_read(&p, p.rfd) > 0)
		continue;
	cr_assert(kh_reader_line(&p.k.ctl, line, sizeof line));
	cr_assert_str_eq(line, "exit code 0 run");
	while (pump_read(&p, p.k.master) > 0)
		continue;
	pump_expect_seq(&p, 100000);
	kh_wait_exit(&p.k);
}

/*
 * A daemon that does not read holds the program back (the pipe, the
 * keeper's chunk and the terminal full); after its death a next daemon
 * adopts the pipe's read end and reads every byte on from there.
 */
Test(keeper_pump, a_full_pipe_holds_the_program_and_an_adopter_reads_on)
{
	struct pump		p;
	struct kh_reader	r;
	long long		end = kh_now_ms() + KH_WAIT_MS;
	int			queued = 0;

	pump_start(&p, PUMP_SCRIPT(200000, "exec sleep 1000"), true);
	pump_go(&p);
	/* A pipe takes 16 pages, of the terminal's reads of up to one each. */
	while (queued < 40000 && kh_now_ms() < end) {
		cr_assert_eq(ioctl(p.rfd, FIONREAD, &queued), 0);
		kh_nap();
	}
	cr_assert_geq(queued, 40000, "the pipe never filled: %d bytes", queued);
	cr_assert(!pump_finished(&p), "the program printed 1.3 MB into a "
	    "pipe nobody read");
	/* What the test read of it, the dead daemon had logged. */
	(void)pump_read(&p, p.rfd);
	close(p.rfd);
	kh_drop(&p.k);
	kh_adopt(&p.k, &r);
	kh_reader_expect(&r, "hold console");
	kh_reader_expect(&r, "hold console.pump");
	cr_assert_eq(r.nfds, 2, "%zu fds handed over", r.nfds);
	while (p.len < pump_seq_len(200000))
		(void)pump_read(&p, r.fds[1]);
	end = kh_now_ms() + KH_WAIT_MS;
	while (!pump_finished(&p) && kh_now_ms() < end)
		kh_nap();
	cr_assert(pump_finished(&p), "the program did not go on printing");
	pump_expect_seq(&p, 200000);
	kh_send_line(r.fd, "stop 100\n", -1);
	kh_wait_exit(&p.k);
}

/*
 * A server's terminal is pumped into two pipes, its own stream's and the
 * console's: each carries every byte, in order, whichever is read first.
 */
Test(keeper_pump, two_pipes_carry_the_same_bytes)
{
	struct pump	p, second;
	int		fds[2];

	int		w[2];

	memset(&p, 0, sizeof p);
	memset(&second, 0, sizeof second);
	kh_start(&p.k, KH_GRACE, PUMP_SCRIPT(50000, "exec sleep 1000"));
	cr_assert_neq(w[0] = dup(p.k.master), -1);
	kh_send_line(p.k.ctl.fd, "hold console\n", w[0]);
	close(w[0]);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	p.rfd = fds[0];
	w[0] = fds[1];
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	w[1] = fds[1];
	/* Both in one line: no chunk goes into one before the other has come. */
	kh_send_fds(p.k.ctl.fd, "pump console 2\n", w, 2);
	close(w[0]);
	close(w[1]);
	pump_go(&p);
	/* Each read as it has bytes: the keeper waits for the slower. */
	while (p.len < pump_seq_len(50000) ||
	    second.len < pump_seq_len(50000)) {
		if (p.len <= second.len)
			(void)pump_read(&p, p.rfd);
		else
			(void)pump_read(&second, fds[0]);
	}
	pump_expect_seq(&p, 50000);
	pump_expect_seq(&second, 50000);
	kh_send_line(p.k.ctl.fd, "stop 100\n", -1);
	kh_wait_exit(&p.k);
}

/*
 * A pump of what the keeper does not hold, or with fewer pipes than it
 * names, or more than it takes, is refused: its pipes' EOF.
 */
Test(keeper_pump, a_pump_of_nothing_held_or_a_bad_count_is_refused)
{
	static const char *const lines[] = { "pump nothing 1\n",
	    "pump console 3\n", "pump console 0\n", "pump console x\n" };
	struct kh_keeper	k;
	size_t			i;
	int			fds[2], master;

	kh_start(&k, KH_GRACE, "exec sleep 1000");
	cr_assert_neq(master = dup(k.master), -1);
	kh_send_line(k.ctl.fd, "hold console\n", master);
	close(master);
	for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
		kh_send_line(k.ctl.fd, lines[i], fds[1]);
		close(fds[1]);
		kh_expect_eof(fds[0]);
		close(fds[0]);
	}
	kh_send_line(k.ctl.fd, "stop 100\n", -1);
	kh_wait_exit(&k);
}
