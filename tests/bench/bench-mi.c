/*
 * The board figures' baseline: QEMU running the board's firmware halted
 * with its gdb stub on a loopback port and its UART0 on pipes of ours, and
 * gdb-multiarch --interpreter=mi3 connected to it, its MI on pipes of
 * ours too: what a rig does when it drives gdb's MI itself, with nothing
 * between it and gdb. Commands carry tokens; a result is the line with
 * the command's token, async records are waited for after it.
 */
#include "bench.h"

#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Milliseconds gdb and QEMU have to end before they are killed. */
#define MI_STOP_MS 5000

/* A loopback TCP port free now, for QEMU's gdb stub; -1 if none. */
int
mi_port(void)
{
	struct sockaddr_in	sin = { .sin_family = AF_INET };
	socklen_t		len = sizeof sin;
	int			fd, port = -1;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

/* Start QEMU on the firmware, halted, its UART0 on our pipes. */
int
mi_start_qemu(struct mi *m, const char *fw, int port)
{
	char		 gdb[64];
	const char	*argv[] = { "qemu-system-arm", "-M", "lm3s6965evb",
			    "-nographic", "-kernel", fw, "-serial", "stdio",
			    "-monitor", "none", "-gdb", gdb, "-S", NULL };

	snprintf(gdb, sizeof gdb, "tcp:127.0.0.1:%d", port);
	m->qemu = proc_spawn_piped(argv, &m->uart_in, &m->uart_out);
	/* Reading UART0 must never block a figure that only drains it. */
	fcntl(m->uart_out, F_SETFL, fcntl(m->uart_out, F_GETFL) | O_NONBLOCK);
	if (m->qemu == -1)
		return mi_fail(m, "qemu-system-arm did not start");
	return 0;
}

/*
 * Start gdb-multiarch on the firmware with its MI on our pipes; async so
 * that -exec-interrupt works while the target runs.
 */
static int
mi_start_gdb(struct mi *m, const char *fw)
{
	const char	*argv[] = { "gdb-multiarch", "-q", "-nx",
			    "--interpreter=mi3", "-iex", "set mi-async on",
			    "-iex", "set confirm off", fw, NULL };

	m->gdb = proc_spawn_piped(argv, &m->to_gdb, &m->from_gdb);
	if (m->gdb == -1)
		return mi_fail(m, "gdb-multiarch did not start");
	return 0;
}

/*
 * Start gdb on a native program, argv its command line, with its MI on
 * our pipes, as mi_start does for the board: the native breakpoint
 * figure's baseline. The program is not run yet. -1 with m->err.
 */
int
mi_start_native(struct mi *m, const char *const argv[])
{
	const char	*gdb[32] = { "gdb", "-q", "-nx", "--interpreter=mi3",
			    "-iex", "set mi-async on", "-iex", "set confirm off",
			    "--args" };
	int		 n = 9, i;

	mi_init(m);
	for (i = 0; argv[i] != NULL && n < 31; i++)
		gdb[n++] = argv[i];
	gdb[n] = NULL;
	m->gdb = proc_spawn_piped(gdb, &m->to_gdb, &m->from_gdb);
	if (m->gdb == -1)
		return mi_fail(m, "gdb did not start");
	return 0;
}

/* A baseline not started yet: no process, no descriptor. */
void
mi_init(struct mi *m)
{
	memset(m, 0, sizeof *m);
	m->qemu = m->gdb = -1;
	m->to_gdb = m->from_gdb = m->uart_in = m->uart_out = -1;
	m->drain[0] = m->drain[1] = m->keep[0] = m->keep[1] = -1;
}

/* Record why the baseline failed; -1 for the caller to return. */
int
mi_fail(struct mi *m, const char *why)
{
	snprintf(m->err, sizeof m->err, "the direct MI baseline: %s", why);
	return -1;
}

/*
 * Start QEMU and gdb and connect gdb to QEMU's stub (gdb retries the
 * connect while QEMU comes up); the target is then halted at its reset
 * vector. -1 with m->err if any of it failed; mi_stop cleans up either way.
 */
int
mi_start(struct mi *m, const char *fw)
{
	char	cmd[96];
	int	port;

	mi_init(m);
	if ((port = mi_port()) == -1)
		return mi_fail(m, "no free loopback port");
	if (mi_start_qemu(m, fw, port) == -1 || mi_start_gdb(m, fw) == -1)
		return -1;
	snprintf(cmd, sizeof cmd, "-target-select remote 127.0.0.1:%d", port);
	return mi_command(m, cmd, NULL);
}

/* Reap pid within MI_STOP_MS, else kill and reap it. */
static void
mi_reap(pid_t pid)
{
	if (pid <= 0 || proc_wait(pid, MI_STOP_MS) != -1)
		return;
	kill(pid, SIGKILL);
	proc_wait(pid, -1);
}

/* End gdb (its MI's end of file makes it quit) and QEMU, and reap both. */
void
mi_stop(struct mi *m)
{
	int i;

	/* A new-ui's end of file does not end gdb: ask it to. */
	if (m->drain[0] >= 0)
		mi_command(m, "-gdb-exit", NULL);
	if (m->to_gdb >= 0)
		close(m->to_gdb);
	mi_reap(m->gdb);
	if (m->qemu > 0)
		kill(m->qemu, SIGTERM);
	mi_reap(m->qemu);
	if (m->from_gdb >= 0)
		close(m->from_gdb);
	if (m->uart_in >= 0)
		close(m->uart_in);
	if (m->uart_out >= 0)
		close(m->uart_out);
	for (i = 0; i < 2; i++) {
		if (m->drain[i] >= 0)
			close(m->drain[i]);
		if (m->keep[i] >= 0)
			close(m->keep[i]);
	}
	m->drain[0] = m->drain[1] = m->keep[0] = m->keep[1] = -1;
	m->to_gdb = m->from_gdb = m->uart_in = m->uart_out = -1;
	m->gdb = m->qemu = -1;
}

/* Read and drop what the drained ptys have, as a front end reads them. */
static void
mi_drain(struct mi *m, struct pollfd *pfd)
{
	char	buf[4096];
	int	i;

	for (i = 0; i < 2; i++) {
		if (!(pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) ||
		    read(m->drain[i], buf, sizeof buf) > 0)
			continue;
		close(m->drain[i]);
		m->drain[i] = pfd[i + 1].fd = -1;
	}
}

/*
 * The next line from gdb, without its LF and NUL-terminated, valid until
 * the next call; NULL with m->err at gdb's end or after MI_LINE_MS.
 */
static char *
mi_line(struct mi *m)
{
	struct pollfd	 pfd[3] = { { .fd = m->from_gdb, .events = POLLIN },
			    { .fd = m->drain[0], .events = POLLIN },
			    { .fd = m->drain[1], .events = POLLIN } };
	double		 end = stat_now_ms() + MI_LINE_MS;
	char		*nl, *line;
	ssize_t		 n;
	int		 left;

	for (;;) {
		if ((nl = memchr(m->buf + m->off, '\n', m->len - m->off)) !=
		    NULL) {
			*nl = '\0';
			line = m->buf + m->off;
			m->off = nl + 1 - m->buf;
			return line;
		}
		memmove(m->buf, m->buf + m->off, m->len - m->off);
		m->len -= m->off;
		m->off = 0;
		if (m->len == sizeof m->buf) {
			mi_fail(m, "a line of gdb's longer than the buffer");
			return NULL;
		}
		left = (int)(end - stat_now_ms());
		if (left <= 0 || poll(pfd, 3, left) <= 0) {
			mi_fail(m, "gdb said nothing more in time");
			return NULL;
		}
		mi_drain(m, pfd);
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(m->from_gdb, m->buf + m->len, sizeof m->buf - m->len);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			mi_fail(m, "gdb-multiarch ended");
			return NULL;
		}
		m->len += n;
	}
}

/*
 * Run one MI command and read until its result record: 0 for ^done,
 * ^running or ^connected, with the line in *result if asked (valid until
 * the next read); -1 with m->err for ^error or if gdb went away.
 */
int
mi_command(struct mi *m, const char *cmd, char **result)
{
	char	 tok[24], *line;
	size_t	 tlen;
	int	 len;

	len = snprintf(tok, sizeof tok, "%ld", ++m->token);
	tlen = (size_t)len;
	if (proc_write_all(m->to_gdb, tok, tlen) == -1 ||
	    proc_write_all(m->to_gdb, cmd, strlen(cmd)) == -1 ||
	    proc_write_all(m->to_gdb, "\n", 1) == -1)
		return mi_fail(m, "gdb-multiarch ended");
	while ((line = mi_line(m)) != NULL) {
		if (strncmp(line, tok, tlen) != 0 || line[tlen] != '^')
			continue;
		if (strncmp(line + tlen, "^error", 6) == 0) {
			snprintf(m->err, sizeof m->err, "the direct MI "
			    "baseline: %s: %.160s", cmd, line + tlen);
			return -1;
		}
		if (result != NULL)
			*result = line + tlen;
		return 0;
	}
	return -1;
}

/*
 * What a session's gdb sets on a board before it runs: the four Cortex-M
 * fault breaks, with breakpoints kept in when always_in. -1 with m->err.
 */
int
mi_fault_breaks(struct mi *m, int always_in)
{
	static const char *const handlers[] = { "HardFault_Handler",
	    "MemManage_Handler", "BusFault_Handler", "UsageFault_Handler",
	    NULL };
	char	cmd[96];
	int	i;

	if (always_in && mi_command(m, "-gdb-set breakpoint always-inserted "
	    "on", NULL) == -1)
		return -1;
	for (i = 0; handlers[i] != NULL; i++) {
		snprintf(cmd, sizeof cmd, "-break-insert *%s", handlers[i]);
		if (mi_command(m, cmd, NULL) == -1)
			return -1;
	}
	return 0;
}

/*
 * Read gdb's lines until an async record starting with what (such as
 * "*stopped"); the line in *line if asked; -1 with m->err if none came.
 */
int
mi_wait(struct mi *m, const char *what, char **line)
{
	size_t	 len = strlen(what);
	char	*l;

	while ((l = mi_line(m)) != NULL)
		if (strncmp(l, what, len) == 0) {
			if (line != NULL)
				*line = l;
			return 0;
		}
	return -1;
}

/* Write bytes to UART0; -1 with m->err if QEMU is gone. */
int
mi_uart_write(struct mi *m, const void *data, size_t len)
{
	if (proc_write_all(m->uart_in, data, len) == -1)
		return mi_fail(m, "qemu-system-arm ended");
	return 0;
}

/* Drop whatever UART0 said so far, so that a search sees only what follows. */
void
mi_uart_drain(struct mi *m)
{
	char	buf[4096];

	while (read(m->uart_out, buf, sizeof buf) > 0)
		;
	m->ulen = 0;
}

/*
 * Read UART0 until it says text (since the last drain or match); what
 * came after the match is dropped. -1 with m->err if QEMU is gone or
 * said nothing more within MI_LINE_MS.
 */
int
mi_uart_until(struct mi *m, const char *text)
{
	struct pollfd	 pfd = { .fd = m->uart_out, .events = POLLIN };
	size_t		 tlen = strlen(text);
	ssize_t		 n;

	for (;;) {
		if (memmem(m->ubuf, m->ulen, text, tlen) != NULL) {
			m->ulen = 0;
			return 0;
		}
		/* Keep the tail only: the text may straddle two reads. */
		if (m->ulen > sizeof m->ubuf / 2) {
			memmove(m->ubuf, m->ubuf + m->ulen - tlen, tlen);
			m->ulen = tlen;
		}
		n = read(m->uart_out, m->ubuf + m->ulen, sizeof m->ubuf -
		    m->ulen);
		if (n > 0) {
			m->ulen += n;
			continue;
		}
		if (n == 0)
			return mi_fail(m, "qemu-system-arm ended");
		if (errno != EAGAIN && errno != EINTR)
			return mi_fail(m, "reading UART0 failed");
		if (poll(&pfd, 1, MI_LINE_MS) == 0)
			return mi_fail(m, "UART0 said nothing more in time");
	}
}

/*
 * -exec-continue to its *stopped at a breakpoint, timed: the round trip
 * in us; NA with m->err if gdb went away or stopped anywhere else.
 */
double
mi_break_round(struct mi *m)
{
	char	*line;
	double	 t0, us;

	t0 = stat_now_ms();
	if (mi_command(m, "-exec-continue", NULL) == -1 ||
	    mi_wait(m, "*stopped", &line) == -1)
		return NA;
	us = (stat_now_ms() - t0) * 1000;
	if (strstr(line, "reason=\"breakpoint-hit\"") == NULL) {
		snprintf(m->err, sizeof m->err, "the direct MI stopped other "
		    "than at the breakpoint: %.120s", line);
		return NA;
	}
	return us;
}
