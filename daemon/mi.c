/* gdb's machine interface on a second pty (new-ui mi3), beside the console. */
#include <sys/ioctl.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "daemon.h"

/* Undo C-string escapes of an MI value in place, stopping at its closing quote. */
static void
mi_unquote(char *s)
{
	char	*in = s, *out = s;

	if (*in != '"')
		return;
	for (in++; *in != '\0' && *in != '"'; in++) {
		if (*in == '\\' && in[1] != '\0') {
			in++;
			*out++ = *in == 'n' ? '\n' : *in == 't' ? '\t' : *in;
			continue;
		}
		*out++ = *in;
	}
	*out = '\0';
}

/* Handle one MI record; only result records with our tokens matter here. */
static int
mi_line(void *arg, char *line, size_t len)
{
	struct mi	*m = arg;
	char		*p = line, *cls, *msg = NULL;
	unsigned long	 token;

	(void)len;
	if (!isdigit((unsigned char)*p))
		return 0;
	token = strtoul(p, &p, 10);
	if (*p != '^')
		return 0;
	cls = ++p;
	p += strcspn(p, ",");
	if (*p == ',') {
		*p++ = '\0';
		if (strncmp(p, "msg=", 4) == 0) {
			msg = p + 4;
			mi_unquote(msg);
		}
	}
	remote_mi_result(m->s, token, cls, msg);
	return 0;
}

/* Split MI output into records. */
static void
mi_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct mi *m = st->data;

	if (nread > 0) {
		if (frame_feed(&m->frame, buf->base, nread, mi_line, m) ==
		    FRAME_OVERFLOW)
			log_warn("session %lu: MI record too long", m->s->id);
		return;
	}
	if (nread < 0)
		uv_read_stop(st);
}

/* Create the MI pty, raw so that gdb's records arrive as written. */
int
mi_open(struct mi *m, struct session *s, char *err, size_t errlen)
{
	struct termios	tio;

	memset(m, 0, sizeof *m);
	m->s = s;
	m->master = m->slave = -1;
	m->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m->master == -1 || grantpt(m->master) != 0 ||
	    unlockpt(m->master) != 0 ||
	    ptsname_r(m->master, m->pts, sizeof m->pts) != 0)
		goto fail;
	/* Held open by us so the master never reads EIO before gdb opens it. */
	m->slave = ioctl(m->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m->slave == -1 || tcgetattr(m->slave, &tio) != 0)
		goto fail;
	cfmakeraw(&tio);
	if (tcsetattr(m->slave, TCSANOW, &tio) != 0)
		goto fail;
	frame_init(&m->frame, FRAME_MAX);
	uv_pipe_init(dmn.loop, &m->pipe, 0);
	m->pipe.data = m;
	if (uv_pipe_open(&m->pipe, m->master) != 0) {
		uv_close((uv_handle_t *)&m->pipe, NULL);
		goto fail;
	}
	m->open = true;
	uv_read_start((uv_stream_t *)&m->pipe, daemon_alloc_cb, mi_read_cb);
	return 0;
fail:
	snprintf(err, errlen, "MI pty: %s", strerror(errno));
	if (m->slave != -1)
		close(m->slave);
	if (m->master != -1)
		close(m->master);
	m->master = m->slave = -1;
	return -1;
}

/* A command has been written to the MI pty. */
static void
mi_write_cb(uv_write_t *req, int status)
{
	(void)status;
	free(req->data);
	free(req);
}

/* Send one MI command; returns the token its result will carry, 0 if closed. */
unsigned long
mi_send(struct mi *m, const char *fmt, ...)
{
	uv_write_t	*req;
	uv_buf_t	 buf;
	va_list		 ap;
	char		*cmd, *line;
	int		 n;

	if (!m->open)
		return 0;
	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		log_fatal("out of memory");
	va_end(ap);
	n = asprintf(&line, "%lu%s\n", ++m->next_token, cmd);
	free(cmd);
	if (n < 0 || (req = malloc(sizeof *req)) == NULL)
		log_fatal("out of memory");
	req->data = line;
	buf = uv_buf_init(line, n);
	if (uv_write(req, (uv_stream_t *)&m->pipe, &buf, 1, mi_write_cb) != 0) {
		free(line);
		free(req);
		return 0;
	}
	return m->next_token;
}

/* Release the MI pty. */
void
mi_close(struct mi *m)
{
	if (m->slave != -1)
		close(m->slave);
	m->slave = -1;
	if (m->open) {
		uv_close((uv_handle_t *)&m->pipe, NULL);
		frame_free(&m->frame);
	}
	m->open = false;
	m->master = -1;
}
