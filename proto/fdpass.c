/*
 * Passing descriptors over a Unix socket: the daemon hands a keeper what
 * it is to hold or pump, a keeper hands an adopting daemon what it held,
 * the client hands the daemon its stdin and stdout (dial, mi). Shared by
 * the three programs, which each once built the message by hand.
 */
#include <sys/socket.h>

#include <errno.h>
#include <string.h>

#include "fdpass.h"

/*
 * Send len bytes of buf with copies of the nfd fds attached, in one
 * sendmsg (signals retried); the bytes it took, as sendmsg says, or -1
 * with errno (EINVAL for more than FDPASS_MAX fds).
 */
ssize_t
fdpass_send(int sock, const void *buf, size_t len, const int *fds,
    size_t nfd)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(FDPASS_MAX * sizeof (int))];
	}		 cbuf;
	struct iovec	 iov = { (void *)buf, len };
	struct msghdr	 msg;
	struct cmsghdr	*c;
	ssize_t		 n;

	if (nfd > FDPASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(&msg, 0, sizeof msg);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (nfd > 0) {
		memset(&cbuf, 0, sizeof cbuf);
		msg.msg_control = cbuf.b;
		msg.msg_controllen = CMSG_SPACE(nfd * sizeof (int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfd * sizeof (int));
		memcpy(CMSG_DATA(c), fds, nfd * sizeof (int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	return n;
}
