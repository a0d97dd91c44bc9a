/* gdb's machine interface on a second pty (new-ui mi3), beside the console. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Hand one MI record to the owner; only result records with tokens matter. */
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
	m->cb(m->arg, token, cls, msg);
	return m->closed;
}

/* Split what gdb wrote into records. */
static void
mi_console_cb(void *arg, enum console_event ev, const char *data, size_t len)
{
	struct mi *m = arg;

	if (ev != CONSOLE_OUTPUT || m->closed)
		return;
	/* The owner may close the channel from its callback: free it after. */
	m->feeding = true;
	if (frame_feed(&m->frame, data, len, mi_line, m) == FRAME_OVERFLOW)
		log_warn("an MI record was too long");
	m->feeding = false;
	if (m->closed)
		mi_close(m);
}

/*
 * Create the MI pty, raw so that records arrive as gdb wrote them; its
 * slave stays open here so the master never reads EIO before gdb opens it.
 */
struct mi *
mi_open(mi_cb cb, void *arg, char *err, size_t errlen)
{
	struct mi *m = xcalloc(1, sizeof *m);

	m->cb = cb;
	m->arg = arg;
	if ((m->console = console_open(true, mi_console_cb, m, err,
	    errlen)) == NULL) {
		free(m);
		return NULL;
	}
	frame_init(&m->frame, FRAME_MAX);
	return m;
}

/* The pty gdb is told to open for its MI. */
const char *
mi_pts(const struct mi *m)
{
	return m->console->pts;
}

/* Send one MI command; returns the token its result will carry, 0 if closed. */
unsigned long
mi_send(struct mi *m, const char *fmt, ...)
{
	va_list	 ap;
	char	*cmd, *line;
	int	 n;

	va_start(ap, fmt);
	xvasprintf(&cmd, fmt, ap);
	va_end(ap);
	n = xasprintf(&line, "%lu%s\n", ++m->next_token, cmd);
	free(cmd);
	if (m->closed || console_write(m->console, line, n) != 0) {
		free(line);
		return 0;
	}
	free(line);
	return m->next_token;
}

/* Release the MI pty; nothing is called back after this. */
void
mi_close(struct mi *m)
{
	if (m == NULL)
		return;
	m->closed = true;
	if (m->feeding)
		return;
	console_close(m->console);
	frame_free(&m->frame);
	free(m);
}
