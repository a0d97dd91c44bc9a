/*
 * The native breakpoint figure's floor: gdb alone in the daemon's layout,
 * driven by hand. Its console (stdin, stdout, stderr) on a pty, its MI on
 * a second, raw pty through new-ui, the program on a third (set
 * inferior-tty), the console's and the program's output read and dropped
 * as the daemon reads them. gdb writes a stop's console-stream and
 * notification records a byte at a time, and on a pty each byte costs the
 * kernel a flip-buffer work item: this is what a debugger costs that keeps
 * line editing on its console and its MI beside it, with no daemon.
 * The board's load floor: the same layout for gdb-multiarch and QEMU.
 */
#include "bench.h"

#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

/* A pty pair, close-on-exec, raw if asked, the slave named in pts; or -1. */
static int
mi_pty_open(int *master, int *slave, char *pts, size_t len, int raw)
{
	struct termios tio;

	*slave = -1;
	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master == -1 || grantpt(*master) != 0 ||
	    unlockpt(*master) != 0 || ptsname_r(*master, pts, len) != 0 ||
	    (*slave = ioctl(*master, TIOCGPTPEER, O_RDWR | O_NOCTTY |
	    O_CLOEXEC)) == -1)
		return -1;
	if (!raw)
		return 0;
	if (tcgetattr(*slave, &tio) != 0)
		return -1;
	cfmakeraw(&tio);
	return tcsetattr(*slave, TCSANOW, &tio);
}

/*
 * Start gdb on a native program, argv its command line, in the daemon's
 * layout (above); the program is not run yet. -1 with m->err.
 */
int
mi_start_native_pty(struct mi *m, const char *const argv[])
{
	char		 mi_pts[64], tty_pts[64], cons_pts[64];
	char		 newui[96], tty[96];
	const char	*gdb[32] = { "gdb", "-q", "-nx", "-iex", "set mi-async on",
			    "-iex", "set confirm off", "-ex", newui, "-ex", tty,
			    "--args" };
	int		 n = 12, i, cons_m, cons_s;

	mi_init(m);
	if (mi_pty_open(&m->to_gdb, &m->keep[0], mi_pts, sizeof mi_pts,
	    1) == -1 || mi_pty_open(&m->drain[1], &m->keep[1], tty_pts,
	    sizeof tty_pts, 0) == -1 || mi_pty_open(&cons_m, &cons_s,
	    cons_pts, sizeof cons_pts, 0) == -1)
		abort();
	m->drain[0] = cons_m;
	snprintf(newui, sizeof newui, "new-ui mi3 %s", mi_pts);
	snprintf(tty, sizeof tty, "set inferior-tty %s", tty_pts);
	for (i = 0; argv[i] != NULL && n < 31; i++)
		gdb[n++] = argv[i];
	gdb[n] = NULL;
	m->gdb = proc_spawn(gdb, NULL, cons_s, cons_s, cons_s);
	/*
	 * The MI's and the program's slaves stay open (keep), so that no
	 * master reads EIO before gdb opens them.
	 */
	close(cons_s);
	if ((m->from_gdb = dup(m->to_gdb)) == -1)
		abort();
	if (m->gdb == -1)
		return mi_fail(m, "gdb did not start");
	return 0;
}

/*
 * QEMU on the firmware and gdb-multiarch in the daemon's layout (above),
 * with what a session's gdb has on a board: told the firmware names no
 * OS, breakpoints kept in, the four fault breaks; connected, halted at
 * the reset vector. -1 with m->err.
 */
int
mi_start_board_pty(struct mi *m, const char *fw)
{
	char		 mi_pts[64], cons_pts[64], newui[96], cmd[96];
	const char	*gdb[] = { "gdb-multiarch", "-q", "-nx", "-iex",
			    "set mi-async on", "-iex", "set confirm off", "-iex",
			    "set osabi none", "-iex", "set breakpoint "
			    "always-inserted on", "-ex", newui, fw, NULL };
	int		 port, cons_m, cons_s;

	mi_init(m);
	if ((port = mi_port()) == -1)
		return mi_fail(m, "no free loopback port");
	if (mi_start_qemu(m, fw, port) == -1)
		return -1;
	if (mi_pty_open(&m->to_gdb, &m->keep[0], mi_pts, sizeof mi_pts,
	    1) == -1 || mi_pty_open(&cons_m, &cons_s, cons_pts,
	    sizeof cons_pts, 0) == -1)
		abort();
	m->drain[0] = cons_m;
	snprintf(newui, sizeof newui, "new-ui mi3 %s", mi_pts);
	m->gdb = proc_spawn(gdb, NULL, cons_s, cons_s, cons_s);
	close(cons_s);
	if ((m->from_gdb = dup(m->to_gdb)) == -1)
		abort();
	if (m->gdb == -1)
		return mi_fail(m, "gdb-multiarch did not start");
	/* always-inserted is in gdb's -iex settings above. */
	if (mi_fault_breaks(m, 0) == -1)
		return -1;
	snprintf(cmd, sizeof cmd, "-target-select remote 127.0.0.1:%d", port);
	return mi_command(m, cmd, NULL);
}
