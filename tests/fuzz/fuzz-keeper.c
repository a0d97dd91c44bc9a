/*
 * libFuzzer target: the lines a keeper sends the daemon
 * (daemon/proc-report.c's proc_report_parse), the daemon's side of the
 * keeper's control protocol.
 *
 * The input is cut into lines as the daemon's framer cuts them. A line is
 * accepted only as the keeper writes one, each number in its range: so
 * every accepted line, written again from what was read, is the same
 * bytes. Each input also makes one line from its first bytes in the
 * keeper's own format, which must be read back as it was made.
 */
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "daemon.h"
#include "fuzz.h"
#include "proc.h"

/* The words the keeper writes, as it writes them. */
static const char *const keeper_fuzz_stages[] = { "setup", "fork", "chdir",
    "exec" };
static const char *const keeper_fuzz_hows[] = { "run", "term", "kill" };

/* Write r as the keeper would into buf; its length. */
static size_t
keeper_fuzz_text(const struct proc_report *r, char *buf, size_t len)
{
	int n = -1;

	switch (r->kind) {
	case PROC_REPORT_STARTED:
		n = snprintf(buf, len, "started %ld", r->n);
		break;
	case PROC_REPORT_FAILED:
		n = snprintf(buf, len, "failed %s %ld", r->word, r->n);
		break;
	case PROC_REPORT_EXIT:
		n = snprintf(buf, len, "exit %s %ld %s", r->signal ? "signal" :
		    "code", r->n, r->how);
		break;
	case PROC_REPORT_STOPPED:
		n = snprintf(buf, len, "stopped signal %ld", r->n);
		break;
	case PROC_REPORT_CONTINUED:
		n = snprintf(buf, len, "continued");
		break;
	}
	fuzz_check(n > 0 && (size_t)n < len, "report kind %d", r->kind);
	return (size_t)n;
}

/* A line read: accepted only in the keeper's form, its numbers in range. */
static int
keeper_fuzz_line(void *arg, char *line, size_t len)
{
	struct proc_report	r;
	char			again[128];
	size_t			n;

	(void)arg;
	if (proc_report_parse(line, len, &r) != 0)
		return 0;
	switch (r.kind) {
	case PROC_REPORT_STARTED:
		fuzz_check(r.n > 0 && r.n <= INT_MAX, "pid %ld", r.n);
		break;
	case PROC_REPORT_FAILED:
		fuzz_check(r.n >= 0 && r.n <= PROC_REPORT_ERRNO_MAX, "errno %ld",
		    r.n);
		break;
	case PROC_REPORT_EXIT:
		fuzz_check(r.signal ? r.n >= 1 && r.n <= 127 : r.n >= 0 &&
		    r.n <= 255, "exit %s %ld", r.signal ? "signal" : "code",
		    r.n);
		break;
	case PROC_REPORT_STOPPED:
		fuzz_check(r.n >= 1 && r.n <= 127, "stop signal %ld", r.n);
		break;
	case PROC_REPORT_CONTINUED:
		fuzz_check(r.n == 0, "continued %ld", r.n);
		break;
	default:
		fuzz_check(false, "kind %d", r.kind);
	}
	n = keeper_fuzz_text(&r, again, sizeof again);
	fuzz_check(n == len && memcmp(again, line, len) == 0, "\"%.*s\" read "
	    "as \"%s\"", (int)(len > 80 ? 80 : len), line, again);
	return 0;
}

/* A line the keeper could write, made from data: read back as made. */
static void
keeper_fuzz_made(const uint8_t *data, size_t size)
{
	struct proc_report	made, got;
	char			line[128];
	unsigned long		v = 0;
	size_t			i, len;

	if (size < 6)
		return;
	for (i = 2; i < 6; i++)
		v = v << 8 | data[i];
	memset(&made, 0, sizeof made);
	made.kind = (enum proc_report_kind)(data[0] % 5);
	switch (made.kind) {
	case PROC_REPORT_STARTED:
		made.n = (long)(v % INT_MAX) + 1;
		break;
	case PROC_REPORT_FAILED:
		strcpy(made.word, keeper_fuzz_stages[data[1] % 4]);
		made.n = (long)(v % (PROC_REPORT_ERRNO_MAX + 1));
		break;
	case PROC_REPORT_EXIT:
		made.signal = data[1] & 1;
		strcpy(made.how, keeper_fuzz_hows[(data[1] >> 1) % 3]);
		made.n = made.signal ? (long)(v % 127) + 1 : (long)(v % 256);
		break;
	case PROC_REPORT_STOPPED:
		made.signal = true;
		made.n = (long)(v % 127) + 1;
		break;
	case PROC_REPORT_CONTINUED:
		break;
	}
	len = keeper_fuzz_text(&made, line, sizeof line);
	fuzz_check(proc_report_parse(line, len, &got) == 0, "the keeper's "
	    "\"%s\" is refused", line);
	fuzz_check(got.kind == made.kind && got.n == made.n && got.signal ==
	    made.signal && strcmp(got.word, made.word) == 0 &&
	    strcmp(got.how, made.how) == 0, "\"%s\" read otherwise", line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_lines(data, size, keeper_fuzz_line);
	keeper_fuzz_made(data, size);
	return 0;
}
