/*
 * The MI channel's transcript: every line sent to gdb and received from
 * it, in a file of the channel's own, written a read's lines at once and
 * cut at a bound; an adopted session's goes on at its end, and tells from
 * what it shows sent where the new daemon's tokens start.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "mi-channel.h"

/* How far back an adopted session's transcript is read for its last token. */
#define MI_TOKEN_SCAN	(64 * 1024)
/*
 * How far above it an adopted session's tokens go on: a dead daemon may
 * have sent commands its transcript had not yet written.
 */
#define MI_TOKEN_GAP	1000000UL
/* Where they go on when the transcript cannot be read. */
#define MI_TOKEN_AFTER_LOSS	(1UL << 31)

/* End the transcript: a write failed, or it reached its bound. */
static void
mi_transcript_end(struct mi *m, const char *why)
{
	if (why != NULL)
		log_warn("the MI transcript stops: %s", why);
	close(m->log_fd);
	m->log_fd = -1;
	m->loglen = 0;
}

/* Write the lines held for the transcript, one write for a read's lines. */
void
mi_transcript_flush(struct mi *m)
{
	ssize_t	n;

	if (m->log_fd == -1 || m->loglen == 0)
		return;
	n = write(m->log_fd, m->logbuf, m->loglen);
	if (n != (ssize_t)m->loglen) {
		mi_transcript_end(m, n == -1 ? strerror(errno) : "a short write");
		return;
	}
	m->log_size += (uint64_t)n;
	m->loglen = 0;
}

/*
 * Add one line to the transcript: dir "> " for what was sent, "< " for
 * what gdb wrote. The lines of one read of gdb's go in one write, as gdb
 * writes a stop's records a byte at a time and the daemon reads them in
 * many pieces. Past its bound a last line says it was cut there; a write
 * that fails ends the transcript, and the daemon log says why.
 */
void
mi_transcript_add(struct mi *m, const char *dir, const char *line, size_t len)
{
	static const char cut[] = "# the transcript is cut here: it reached "
			    "its size bound\n";
	ssize_t		 n;

	if (m->log_fd == -1)
		return;
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (m->log_max != 0 && m->log_size + m->loglen + len + 3 >
	    m->log_max) {
		mi_transcript_flush(m);
		if (m->log_fd == -1)
			return;
		n = write(m->log_fd, cut, sizeof cut - 1);
		(void)n;
		mi_transcript_end(m, NULL);
		return;
	}
	if (m->loglen + len + 3 > m->logcap) {
		m->logcap = (m->loglen + len + 3) * 2;
		m->logbuf = xreallocarray(m->logbuf, m->logcap, 1);
	}
	memcpy(m->logbuf + m->loglen, dir, 2);
	memcpy(m->logbuf + m->loglen + 2, line, len);
	m->logbuf[m->loglen + 2 + len] = '\n';
	m->loglen += len + 3;
	if (!m->feeding)
		mi_transcript_flush(m);
}

/*
 * Keep a transcript of the channel in a new file at path (0600, never
 * through a link), at most max bytes (0: no bound); -1 with err.
 */
int
mi_transcript(struct mi *m, const char *path, uint64_t max, char *err,
    size_t errlen)
{
	m->log_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
	    O_CLOEXEC | O_NOFOLLOW, 0600);
	if (m->log_fd == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	m->log_max = max;
	return 0;
}

/*
 * The highest token the transcript's last lines show sent: an adopted
 * session's commands go on above it, so no answer gdb still owes a dead
 * daemon is taken for one of ours.
 */
static unsigned long
mi_transcript_last_token(int fd, off_t size)
{
	char		*buf = xmalloc(MI_TOKEN_SCAN + 1), *p, *end;
	unsigned long	 t, max = 0;
	off_t		 at = size > MI_TOKEN_SCAN ? size - MI_TOKEN_SCAN : 0;
	ssize_t		 n = pread(fd, buf, MI_TOKEN_SCAN, at);

	buf[n > 0 ? n : 0] = '\0';
	for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, "> ", 2) != 0)
			continue;
		t = strtoul(p + 2, &end, 10);
		if (end != p + 2 && t > max && t < JOIN_TOKEN_BASE)
			max = t;
	}
	free(buf);
	return max;
}

/*
 * Keep an adopted session's transcript going at its end, and its tokens
 * above the last it shows; -1 with err (the tokens then go on from far
 * above any a daemon can have sent in the session's life so far).
 */
int
mi_transcript_reopen(struct mi *m, const char *path, uint64_t max, char *err,
    size_t errlen)
{
	struct stat st;

	m->next_token = MI_TOKEN_AFTER_LOSS;
	m->log_fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NOFOLLOW, 0600);
	if (m->log_fd == -1 || fstat(m->log_fd, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (m->log_fd != -1)
			close(m->log_fd);
		m->log_fd = -1;
		return -1;
	}
	m->next_token = mi_transcript_last_token(m->log_fd, st.st_size) +
	    MI_TOKEN_GAP;
	m->log_size = (uint64_t)st.st_size;
	m->log_max = max;
	return 0;
}

/* Write what the transcript still holds and close it: the channel goes. */
void
mi_transcript_close(struct mi *m)
{
	mi_transcript_flush(m);
	if (m->log_fd != -1)
		close(m->log_fd);
	free(m->logbuf);
}
