/* The daemon's own log: timestamped lines on stderr (the log file once detached). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

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
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
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
