/* Pseudo-terminal pairs for consoles and gdb's MI. */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "daemon.h"
#include "pty.h"

/*
 * Open a pty: master and slave close-on-exec (openpty() would leave them
 * inheritable), 24x80, raw when asked so that what is written arrives as
 * written (no echo, no CR added). -1 with err set on failure.
 */
int
pty_open(int *master, int *slave, char *pts, size_t ptslen, bool raw,
    char *err, size_t errlen)
{
	struct winsize	ws = { .ws_row = 24, .ws_col = 80 };
	struct termios	tio;

	*slave = -1;
	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master == -1 || grantpt(*master) != 0 || unlockpt(*master) != 0 ||
	    ptsname_r(*master, pts, ptslen) != 0)
		goto fail;
	*slave = ioctl(*master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave == -1)
		goto fail;
	ioctl(*master, TIOCSWINSZ, &ws);
	if (!raw)
		return 0;
	if (tcgetattr(*slave, &tio) != 0)
		goto fail;
	cfmakeraw(&tio);
	if (tcsetattr(*slave, TCSANOW, &tio) != 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "pty: %s", strerror(errno));
	if (*slave != -1)
		close(*slave);
	if (*master != -1)
		close(*master);
	*master = *slave = -1;
	return -1;
}
