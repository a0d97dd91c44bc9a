/*
 * The daemon's own log: timestamped lines on stderr, which is the log file
 * once detached, turned over at its size cap; events that come in floods
 * (refused clients) are counted and summarised once a second.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

/* The log file stderr writes to once detached: "" while it is not ours. */
static char	log_path[PATH_MAX];
static off_t	log_size;	/* its bytes, as far as the daemon wrote them */
static off_t	log_max;	/* turned over before it would pass this */

/* Open path for appending as stdout and stderr; -1 if it cannot be. */
static int
log_reopen(const char *path)
{
	struct stat	st;
	int		fd;

	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	log_size = fstat(fd, &st) == 0 ? st.st_size : 0;
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	return 0;
}

/*
 * Make path, appended to, the log on stdout and stderr, turned over to
 * path.1 when it would pass max bytes; -1 if it cannot be opened.
 */
int
log_file(const char *path, off_t max)
{
	if (strlcpy(log_path, path, sizeof log_path) >= sizeof log_path ||
	    log_reopen(path) != 0) {
		log_path[0] = '\0';
		return -1;
	}
	log_max = max;
	return 0;
}

/*
 * Turn the log over: it becomes path.1 (the one before is gone) and a new
 * one starts; if no new one can be opened, the old one goes on.
 */
static void
log_rotate(void)
{
	char old[PATH_MAX + 4];

	snprintf(old, sizeof old, "%s.1", log_path);
	/* One removed meanwhile is simply started again. */
	if ((rename(log_path, old) != 0 && errno != ENOENT) ||
	    log_reopen(log_path) != 0)
		log_size = 0;
}

/* Write one timestamped line to stderr. */
static void
log_vline(const char *level, const char *fmt, va_list ap)
{
	struct timespec	ts;
	struct tm	tm;
	char		when[32], line[2048];
	int		n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof line, "%s.%03ldZ dbgctld[%ld] %s: ", when,
	    ts.tv_nsec / 1000000, (long)getpid(), level);
	if (n < 0 || (size_t)n >= sizeof line)
		return;
	vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	n = strlen(line) + 1;
	if (log_path[0] != '\0' && log_size > 0 && log_size + n > log_max)
		log_rotate();
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
	log_size += n;
}

/* Record an ordinary event. */
void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("info", fmt, ap);
	va_end(ap);
}

/* Record something that went wrong but that the daemon survives. */
void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("warning", fmt, ap);
	va_end(ap);
}

/* The second of a burst is over: say how many were not logged. */
static void
log_burst_over(void *arg)
{
	struct log_burst *b = arg;

	log_warn(b->more, b->n);
	b->n = 0;
	b->at = loop_now();
}

/*
 * Record an event that may come in floods as a warning, unless one was
 * logged less than a second ago: then it is counted, and the count is
 * logged with b->more once that second is over.
 */
void
log_burst(struct log_burst *b, const char *fmt, ...)
{
	double	now = loop_now(), wait;
	va_list	ap;

	if (b->n == 0 && (now - b->at >= 1.0 || now < b->at)) {
		va_start(ap, fmt);
		log_vline("warning", fmt, ap);
		va_end(ap);
		b->at = now;
		return;
	}
	if (b->n++ > 0)
		return;
	if (b->timer == NULL) {
		b->timer = timer_new(log_burst_over, b);
		/* A count left to log never holds the daemon's exit. */
		timer_weak(b->timer);
	}
	wait = (b->at + 1.0 - now) * 1000;
	timer_start(b->timer, wait > 0 && wait <= 1000 ? (uint64_t)wait : 0);
}

/* Record an impossible state and abort loudly. */
void
log_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vline("fatal", fmt, ap);
	va_end(ap);
	abort();
}
