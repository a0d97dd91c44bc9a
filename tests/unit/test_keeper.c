/* Unit tests of the keeper's /proc/PID/stat line parser (keeper-tree.c). */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"

/* The fields after the command name of a real line, from ppid on. */
#define TAIL	"22469 22469 4405 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 " \
		"46565 3133440 394 18446744073709551615 94585977962496 " \
		"0 17 1 0 0 0\n"

/* Parse a NUL-terminated line; fail the test if it does not parse. */
static struct keeper_tree_stat
parse_ok(const char *line)
{
	struct keeper_tree_stat	st;

	memset(&st, 0, sizeof st);
	cr_assert_eq(keeper_tree_parse_stat(line, strlen(line), &st), 0,
	    "refused: \"%s\"", line);
	return st;
}

/* Assert that a line of len bytes does not parse. */
static void
parse_refused(const char *line, size_t len)
{
	struct keeper_tree_stat	st;

	cr_assert_eq(keeper_tree_parse_stat(line, len, &st), -1,
	    "accepted: \"%.*s\"", (int)len, line);
}

Test(keeper_stat, plain_line)
{
	struct keeper_tree_stat	st;

	st = parse_ok("22473 (cat) R " TAIL);
	cr_assert_eq(st.pid, 22473);
	cr_assert_eq(st.state, 'R');
	cr_assert_eq(st.ppid, 22469);
	cr_assert_eq(st.start, 46565);
}

Test(keeper_stat, comm_with_spaces_and_parentheses)
{
	static const char	*comms[] = { "my prog", " ", "", "(", ")",
	    "a) b", "x) R 1 2", ") S 7 ", "((a))", "a\nb", "tmux: server",
	    "kworker/0:1-events" };
	char			 line[512];
	struct keeper_tree_stat	 st;
	size_t			 i;

	for (i = 0; i < sizeof comms / sizeof comms[0]; i++) {
		snprintf(line, sizeof line, "315 (%s) S " TAIL, comms[i]);
		st = parse_ok(line);
		cr_assert_eq(st.pid, 315, "comm \"%s\"", comms[i]);
		cr_assert_eq(st.state, 'S', "comm \"%s\"", comms[i]);
		cr_assert_eq(st.ppid, 22469, "comm \"%s\"", comms[i]);
		cr_assert_eq(st.start, 46565, "comm \"%s\"", comms[i]);
	}
}

Test(keeper_stat, fields_after_the_last_parenthesis_win)
{
	struct keeper_tree_stat	st;

	/* A name that imitates the fields must not supply the parent pid. */
	st = parse_ok("9 (a) Z 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 111) T "
	    TAIL);
	cr_assert_eq(st.state, 'T');
	cr_assert_eq(st.ppid, 22469);
	cr_assert_eq(st.start, 46565);
}

Test(keeper_stat, negative_fields_and_extremes)
{
	struct keeper_tree_stat	st;

	/* A real-time thread: tpgid -1, priority -100, nice -20. */
	st = parse_ok("17 (migration/0) S 2 0 0 0 -1 69238848 0 0 0 0 0 0 0 0 "
	    "-100 -20 1 0 18446744073709551615 0 0\n");
	cr_assert_eq(st.ppid, 2);
	cr_assert_eq(st.start, 18446744073709551615ULL);
	/* kthreadd: parent 0; a line that ends at the start time's newline. */
	st = parse_ok("2147483647 (kthreadd) S 0 0 0 0 -1 0 0 0 0 0 0 0 0 0 "
	    "20 0 1 0 3\n");
	cr_assert_eq(st.pid, 2147483647);
	cr_assert_eq(st.ppid, 0);
	cr_assert_eq(st.start, 3);
}

Test(keeper_stat, every_truncation_before_the_start_time_is_refused)
{
	static const char	 line[] = "22473 (a) b) R " TAIL;
	struct keeper_tree_stat	 st;
	const char		*start;
	size_t			 len, whole;

	/* The start time and the space after it must both be there. */
	start = strstr(line, " 46565 ");
	cr_assert_not_null(start);
	whole = (size_t)(start - line) + strlen(" 46565 ");
	for (len = 0; len < whole; len++)
		parse_refused(line, len);
	for (len = whole; len < sizeof line; len++) {
		memset(&st, 0, sizeof st);
		cr_assert_eq(keeper_tree_parse_stat(line, len, &st), 0,
		    "length %zu", len);
		cr_assert_eq(st.ppid, 22469);
		cr_assert_eq(st.start, 46565, "length %zu", len);
	}
}

Test(keeper_stat, garbage_is_refused)
{
	static const char	*bad[] = {
	    "",
	    "\n",
	    "hello world",
	    "(cat) R " TAIL,
	    "cat (cat) R " TAIL,
	    "0 (cat) R " TAIL,
	    "-5 (cat) R " TAIL,
	    "+5 (cat) R " TAIL,
	    " 5 (cat) R " TAIL,
	    "5(cat) R " TAIL,
	    "5  (cat) R " TAIL,
	    "5 cat) R " TAIL,
	    "5 (cat R " TAIL,
	    "2147483648 (cat) R " TAIL,
	    "5 (cat)R " TAIL,
	    "5 (cat)  " TAIL,
	    "5 (cat) R" TAIL,
	    "5 (cat) RR " TAIL,
	    "5 (cat) R x 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n",
	    "5 (cat) R -1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n",
	    "5 (cat) R 2147483648 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n",
	    "5 (cat) R 1  1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n",
	    "5 (cat) R 1 1 1 0 - 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n",
	    "5 (cat) R 1 1 1 0 --1 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n",
	    "5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -7\n",
	    "5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 +7\n",
	    "5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7x\n",
	    "5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7",
	    "5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
	    /* One line, split only to fit; parenthesised for clang's sake. */
	    ("5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
	    "18446744073709551616\n"),
	    "5 (cat) R 1\n1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n",
	};
	size_t			 i;

	/* The line the variants below break is itself fine. */
	parse_ok("5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 7\n");
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		parse_refused(bad[i], strlen(bad[i]));
}

Test(keeper_stat, bytes_past_the_length_are_never_read)
{
	static const char	line[] = "5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 "
	    "0 0 20 0 1 0 78 9";
	static const char	nul[] = "5 (cat) R 1 1 1 0 -1 0 0 0 0 0 0 0 "
	    "0 0 20 0 1 0 7\0 ";
	struct keeper_tree_stat	st;

	st = parse_ok(line);
	cr_assert_eq(st.start, 78);
	/* Cut after the 7 of 78: the 8 beyond the length must not count. */
	parse_refused(line, strlen(line) - 3);
	/* A NUL inside the line is no separator either. */
	parse_refused(nul, sizeof nul - 1);
}

Test(keeper_stat, random_bytes_are_refused)
{
	char			buf[256];
	struct keeper_tree_stat	st;
	unsigned int		seed = 12345;
	size_t			i, len;
	int			round;

	for (round = 0; round < 20000; round++) {
		len = (size_t)round % sizeof buf;
		for (i = 0; i < len; i++) {
			seed = seed * 1103515245 + 12345;
			buf[i] = (char)(seed >> 16);
		}
		cr_assert_eq(keeper_tree_parse_stat(buf, len, &st), -1,
		    "round %d", round);
	}
}

Test(keeper_stat, own_stat_line)
{
	struct keeper_tree_stat	st;
	char			buf[1024];
	ssize_t			n;
	int			fd;

	fd = open("/proc/self/stat", O_RDONLY);
	cr_assert_neq(fd, -1);
	n = read(fd, buf, sizeof buf);
	close(fd);
	cr_assert_gt(n, 0);
	cr_assert_eq(keeper_tree_parse_stat(buf, (size_t)n, &st), 0);
	cr_assert_eq(st.pid, getpid());
	cr_assert_eq(st.ppid, getppid());
	cr_assert_eq(st.state, 'R');
	cr_assert_gt(st.start, 0);
}
