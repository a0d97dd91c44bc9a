/*
 * Live memory (issue 36): `memory` with live of the running board's
 * counter, 4 bytes, over the daemon's socket, beside QMP called directly
 * on a QEMU started here (the same firmware, running, HMP's xp through
 * human-monitor-command on a socketpair, as the daemon's own QMP): the
 * qemu kind on lm3s6965evb, which only QMP serves, and on mps2-an385,
 * whose RAM the daemon maps (board-an385.elf beside BENCH_BOARD). Only
 * the timed side's board runs: the others are halted (the daemon's by
 * halt, the direct QEMU by QMP's stop), so that no busy firmware takes a
 * CPU from it.
 */
#include "bench.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads of a sample, and of the warm-up. */
#define FIG_LIVE_READS	200
#define FIG_LIVE_WARM	20

/* The direct QEMU: its process and its QMP, a line at a time. */
struct fig_live_qmp {
	pid_t	 pid;
	int	 fd;
	char	 buf[8192];
	size_t	 len;
};

/* The figure: the daemon's sessions, the direct QEMU, which one runs. */
struct fig_live {
	struct board		 f;	/* lm3s6965evb; f.session */
	json_int_t		 an385;	/* the mps2-an385 session, or 0 */
	char			 addr[32], addr385[32];	/* counter's, in each */
	struct fig_live_qmp	 q;
	int			 running;	/* the side that runs, or -1 */
};

/* One line from the direct QMP (the buffer's start), -1 at its end. */
static int
fig_live_qmp_line(struct fig_live_qmp *q, char **line)
{
	char	*nl;
	ssize_t	 n;

	for (;;) {
		if ((nl = memchr(q->buf, '\n', q->len)) != NULL) {
			*nl = '\0';
			*line = q->buf;
			return (int)(nl - q->buf + 1);
		}
		if (q->len == sizeof q->buf)
			return -1;
		if ((n = read(q->fd, q->buf + q->len, sizeof q->buf - q->len)) <=
		    0)
			return -1;
		q->len += (size_t)n;
	}
}

/* Drop a line fig_live_qmp_line gave. */
static void
fig_live_qmp_drop(struct fig_live_qmp *q, int n)
{
	memmove(q->buf, q->buf + n, q->len - (size_t)n);
	q->len -= (size_t)n;
}

/* Send cmd, read lines to its return (events skipped); 0, or -1. */
static int
fig_live_qmp_call(struct fig_live_qmp *q, const char *cmd, char *ret,
    size_t retlen)
{
	char	*line;
	size_t	 len;
	int	 n, ok;

	if (proc_write_all(q->fd, cmd, strlen(cmd)) == -1)
		return -1;
	while ((n = fig_live_qmp_line(q, &line)) > 0) {
		ok = strncmp(line, "{\"return\"", 9) == 0;
		if (ok && ret != NULL) {
			len = strlen(line) < retlen ? strlen(line) : retlen - 1;
			memcpy(ret, line, len);
			ret[len] = '\0';
		}
		fig_live_qmp_drop(q, n);
		if (ok)
			return 0;
		if (strncmp(line, "{\"error\"", 8) == 0)
			return -1;
	}
	return -1;
}

/* Start QEMU running fw on lm3s6965evb, QMP on a socketpair; -1 with why. */
static int
fig_live_qmp_start(struct bench *b, struct fig_live_qmp *q, const char *fw)
{
	char	*line;
	int	 sv[2], n;
	const char *av[] = { "qemu-system-arm", "-M", "lm3s6965evb",
	    "-nographic", "-kernel", fw, "-serial", "null", "-monitor",
	    "none", "-chardev", "socket,id=qmp,fd=3,server=off", "-mon",
	    "chardev=qmp,mode=control", NULL };

	q->pid = -1;
	q->fd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return bench_fail(b, "socketpair: %m");
	if ((q->pid = fork()) == 0) {
		dup2(sv[1], 3);
		execvp(av[0], (char *const *)av);
		_exit(127);
	}
	close(sv[1]);
	q->fd = sv[0];
	if (q->pid == -1 || (n = fig_live_qmp_line(q, &line)) <= 0)
		return bench_fail(b, "QEMU with QMP did not start");
	fig_live_qmp_drop(q, n);
	if (fig_live_qmp_call(q, "{\"execute\":\"qmp_capabilities\"}\n",
	    NULL, 0) == -1)
		return bench_fail(b, "QMP refused qmp_capabilities");
	return 0;
}

/* End the direct QEMU. */
static void
fig_live_qmp_stop(struct fig_live_qmp *q)
{
	if (q->fd != -1)
		close(q->fd);
	if (q->pid > 0) {
		kill(q->pid, SIGKILL);
		waitpid(q->pid, NULL, 0);
	}
}

/* The counter's address in session id, by a live read of &counter. */
static int
fig_live_address(struct fig_live *l, json_int_t id, char *buf, size_t len)
{
	json_t *res;

	res = board_call(&l->f, "memory", json_pack("{s:I, s:s, s:i, s:b}",
	    "session", id, "address", "&counter", "length", 4, "live", 1));
	if (res == NULL)
		return -1;
	snprintf(buf, len, "%s", json_string_value(json_object_get(res,
	    "address")) != NULL ? json_string_value(json_object_get(res,
	    "address")) : "0x20000000");
	json_decref(res);
	return 0;
}

/* Halt or run the daemon's session id (halt or resume). */
static int
fig_live_session(struct fig_live *l, json_int_t id, const char *verb)
{
	json_t *res;

	if (id == 0)
		return 0;
	res = board_call(&l->f, verb, json_pack("{s:I, s:i}", "session", id,
	    "timeout", BOARD_TIMEOUT_MS));
	json_decref(res);
	return res != NULL ? 0 : -1;
}

/*
 * Run only side's board (0: lm3s session, 1: an385 session, 2: direct),
 * the others halted; not timed, once when the side changes.
 */
static int
fig_live_side(struct fig_live *l, int side)
{
	json_int_t	 ids[2] = { l->f.session, l->an385 };
	int		 i;

	if (l->running == side)
		return 0;
	for (i = 0; i < 2; i++)
		if (i != side && fig_live_session(l, ids[i], "halt") == -1)
			return -1;
	if (fig_live_qmp_call(&l->q, side == 2 ? "{\"execute\":\"cont\"}\n" :
	    "{\"execute\":\"stop\"}\n", NULL, 0) == -1)
		return bench_fail(l->f.b, "QMP stop or cont failed");
	if (side < 2 && fig_live_session(l, ids[side], "resume") == -1)
		return -1;
	l->running = side;
	return 0;
}

/* A live read of 4 bytes at addr in session id, timed in us. */
static double
fig_live_daemon(struct fig_live *l, int side, json_int_t id,
    const char *addr, const char *via)
{
	json_t		*res;
	const char	*v;
	double		 t0, us;

	if (fig_live_side(l, side) == -1)
		return NA;
	t0 = stat_now_ms();
	res = board_call(&l->f, "memory", json_pack("{s:I, s:s, s:i, s:b}",
	    "session", id, "address", addr, "length", 4, "live", 1));
	us = (stat_now_ms() - t0) * 1000;
	if (res == NULL)
		return NA;
	v = json_string_value(json_object_get(res, "via"));
	if (v == NULL || strcmp(v, via) != 0 || json_is_true(json_object_get(
	    res, "intrusive"))) {
		json_decref(res);
		return bench_fail(l->f.b, "live read not by %s, or intrusive",
		    via);
	}
	json_decref(res);
	return us;
}

/* The round of the lm3s session: QMP through the daemon. */
static double
fig_live_round_qmp(struct fig_live *l)
{
	return fig_live_daemon(l, 0, l->f.session, l->addr, "qmp");
}

/* The round of the an385 session: shared RAM through the daemon. */
static double
fig_live_round_shm(struct fig_live *l)
{
	return fig_live_daemon(l, 1, l->an385, l->addr385, "shm");
}

/* The baseline's round: xp of the counter over QMP by hand, in us. */
static double
fig_live_round_direct(struct fig_live *l)
{
	char	cmd[256], ret[512];
	double	t0, us;

	if (fig_live_side(l, 2) == -1)
		return NA;
	snprintf(cmd, sizeof cmd, "{\"execute\":\"human-monitor-command\","
	    "\"arguments\":{\"command-line\":\"xp /4bx %s\"}}\n", l->addr);
	t0 = stat_now_ms();
	if (fig_live_qmp_call(&l->q, cmd, ret, sizeof ret) == -1)
		return bench_fail(l->f.b, "QMP xp failed");
	us = (stat_now_ms() - t0) * 1000;
	if (strstr(ret, "0x") == NULL)
		return bench_fail(l->f.b, "QMP xp answered no bytes: %s", ret);
	return us;
}

/* One round of side of the figure (stat_batches). */
static double
fig_live_round(void *arg, int side)
{
	struct fig_live *l = arg;

	if (side == 0)
		return fig_live_round_qmp(l);
	if (side == 1)
		return l->an385 != 0 ? fig_live_round_shm(l) :
		    fig_live_round_direct(l);
	return fig_live_round_direct(l);
}

/* The an385 firmware beside BENCH_BOARD into buf; NULL if not built. */
static const char *
fig_live_an385(const struct bench *b, char *buf, size_t len)
{
	const char *slash = strrchr(b->board, '/');

	snprintf(buf, len, "%.*sboard-an385.elf", slash != NULL ? (int)(slash -
	    b->board + 1) : 0, b->board);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

/* The sessions, the direct QEMU, the counter's addresses; -1 with why. */
static int
fig_live_open(struct fig_live *l, struct bench *b)
{
	char	 fw[PATH_MAX];
	json_t	*res;

	l->q.pid = -1;
	l->q.fd = -1;
	l->running = -1;
	if (board_connect(&l->f, b) == -1 || board_launch_qemu(&l->f) == -1 ||
	    fig_live_address(l, l->f.session, l->addr, sizeof l->addr) == -1)
		return -1;
	if (fig_live_an385(b, fw, sizeof fw) != NULL) {
		res = board_call(&l->f, "launch", json_pack("{s:s, s:s, s:[s], "
		    "s:s}", "kind", "qemu", "machine", "mps2-an385", "argv", fw,
		    "cwd", "/"));
		if (res == NULL)
			return -1;
		l->an385 = json_integer_value(json_object_get(res, "id"));
		json_decref(res);
		if (fig_live_address(l, l->an385, l->addr385,
		    sizeof l->addr385) == -1)
			return -1;
	}
	return fig_live_qmp_start(b, &l->q, b->board);
}

/* Stop the sessions and the direct QEMU. */
static void
fig_live_close(struct fig_live *l)
{
	if (l->an385 != 0)
		json_decref(rpc_call(&l->f.r, "stop", json_pack("{s:I}",
		    "session", l->an385)));
	board_close(&l->f);
	fig_live_qmp_stop(&l->q);
}

/*
 * Figure: a live read of the running board's counter (4 bytes) through
 * the daemon, by QMP (lm3s6965evb) and by shared RAM (mps2-an385), beside
 * QMP's xp by hand; p50 and p99 in us.
 */
int
fig_live_read(struct bench *b)
{
	struct samples	 s[3][2] = { { { 0 } } };
	struct fig_live	 l;
	int		 rv, nside;

	memset(&l, 0, sizeof l);
	rv = fig_live_open(&l, b);
	nside = l.an385 != 0 ? 3 : 2;
	if (rv == 0)
		rv = stat_batches(b->runs, nside, FIG_LIVE_READS, FIG_LIVE_WARM,
		    fig_live_round, &l, s);
	fig_live_close(&l);
	if (rv == 0) {
		board_rows(s, 0, nside - 1, "us", 500, "goal p50 <= 1.2x base + "
		    "0.5 ms, p99 <= 2x; running, never halted",
		    "live read 4 B by QMP [vs QMP xp by hand]");
		if (nside == 3)
			board_rows(s, 1, 2, "us", 500, "the RAM the daemon maps; "
			    "running, never halted", "live read 4 B by shared "
			    "RAM [vs QMP xp by hand]");
		else
			table_na(NO_TARGET, "no board-an385.elf", "board live "
			    "read 4 B by shared RAM");
	}
	board_free(s, 3);
	return rv;
}
