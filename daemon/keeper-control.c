/*
 * The keeper's end of its control socket: lines from the daemon ("stop",
 * "hold", "pump", "release") and the fds that come with them.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"

/*
 * Execute one command line from the daemon; a "stop" whose timeout does not
 * parse still stops, with the default timeout, since stopping is what the
 * daemon asked for.  Other lines are ignored, and the fds they brought
 * closed.
 */
static void
keeper_control_run(struct keeper *k, const char *line)
{
	const char	*errstr;
	long long	 ms;

	if (strncmp(line, "hold ", 5) == 0) {
		keeper_hold_add(k, line + 5);
		return;
	}
	if (strncmp(line, "pump ", 5) == 0) {
		keeper_pump_add(k, line + 5);
		return;
	}
	if (strncmp(line, "release ", 8) == 0) {
		keeper_pump_release(k, line + 8);
		keeper_hold_release(k, line + 8);
		return;
	}
	if (strcmp(line, "stop") == 0) {
		keeper_stop(k, k->stop_ms);
		return;
	}
	/* What came with a line not known is nobody's: no later line's. */
	if (strncmp(line, "stop ", 5) != 0) {
		keeper_hold_flush(k);
		return;
	}
	ms = keeper_number(line + 5, 0, KEEPER_MAX_MS, &errstr);
	keeper_stop(k, errstr == NULL ? ms : k->stop_ms);
}

/* Add one byte of control input to the line, running complete lines. */
static void
keeper_control_byte(struct keeper *k, char c)
{
	if (c == '\n') {
		if (!k->discard) {
			if (k->linelen > 0 && k->line[k->linelen - 1] == '\r')
				k->linelen--;
			k->line[k->linelen] = '\0';
			keeper_control_run(k, k->line);
		}
		k->linelen = 0;
		k->discard = 0;
		return;
	}
	if (k->linelen + 1 < sizeof k->line)
		k->line[k->linelen++] = c;
	else
		k->discard = 1;
}

/*
 * Read commands from the daemon, and the fds its "hold" lines name, which
 * come close-on-exec; EOF or an error means it died.  The kernel ends a
 * read after the message that carried fds, so they came with the line that
 * holds the last byte read: the lines ended before it get none of them.
 */
void
keeper_control_read(struct keeper *k)
{
	char		buf[512];
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(KEEPER_MAX_HOLD * sizeof(int))];
	}		cbuf;
	struct iovec	iov = { .iov_base = buf, .iov_len = sizeof buf };
	struct msghdr	msg;
	ssize_t		n, i, cut;

	memset(&msg, 0, sizeof msg);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.b;
	msg.msg_controllen = sizeof cbuf.b;
	n = recvmsg(k->ctl, &msg, MSG_CMSG_CLOEXEC);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(k->ctl);
		k->ctl = -1;
		keeper_adopt_lost(k);
		return;
	}
	for (cut = n - 1; cut > 0 && buf[cut - 1] != '\n'; cut--)
		continue;
	for (i = 0; i < cut; i++)
		keeper_control_byte(k, buf[i]);
	keeper_hold_receive(k, &msg);
	for (; i < n; i++)
		keeper_control_byte(k, buf[i]);
}
