/*
 * The daemon's own lines in a session's console (a fault, a suspension):
 * each on a line of its own, with the unfinished line gdb was showing
 * drawn again after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* Put bytes of the daemon's own into the console stream. */
static void
session_note_add(struct session *s, const char *data, size_t len)
{
	struct session_event ev = { .kind = SE_OUTPUT, .data = data,
	    .len = len };

	ev.offset = output_size(&s->output);
	output_add(&s->output, data, len);
	session_fire(s, &ev);
}

/*
 * Whether the console stream ends in the middle of a line; if so, *line
 * and *len give the main process's unfinished line (gdb's prompt and what
 * was typed after it), maybe empty.
 */
static bool
session_note_midline(struct session *s, const char **line, size_t *len)
{
	const struct session_proc	*sp = &s->procs[0];
	uint64_t			 size = output_size(&s->output);
	char				 last = '\n';
	size_t				 i;

	if (size > 0)
		output_read(&s->output, size - 1, &last, 1);
	if (last == '\n')
		return false;
	for (i = sp->taillen; i > 0 && sp->tail[i - 1] != '\n'; i--)
		;
	*line = sp->tail != NULL ? sp->tail + i : "";
	*len = sp->taillen - i;
	return true;
}

/*
 * Add the daemon's own lines to the session's log, marked as its own, on
 * lines of their own: after a prompt, on the next line, and the prompt
 * (with what was typed) is drawn again below them, as the terminal's
 * next line, so the person at it sees where to type.
 */
void
session_note(struct session *s, const char *text)
{
	const char	*p, *nl, *line = NULL;
	char		*note;
	size_t		 len = 0;
	bool		 midline = session_note_midline(s, &line, &len);
	int		 n;

	if (midline)
		session_note_add(s, "\r\n", 2);
	for (p = text; *p != '\0'; p = nl + (*nl != '\0')) {
		nl = p + strcspn(p, "\n");
		n = xasprintf(&note, "[dbgctl] %.*s\r\n", (int)(nl - p), p);
		session_note_add(s, note, n);
		free(note);
	}
	if (midline && len > 0)
		session_note_add(s, line, len);
}
