/*
 * Notes a test leaves for the CI log: figures, printed as TAP comments
 * after the binary's results. Under --tap Criterion gives its workers
 * /dev/null for stdout and prints the report when every test is done, so a
 * worker appends its notes to a file the runner made before the first test
 * and named in the environment; the runner prints them at its exit, after
 * the report, where meson's TAP parser takes them as comments.
 */
#include "harness.h"

#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The variable that names the notes file to the workers. */
#define H_NOTE_ENV	"DBGCTL_TEST_NOTES"

static char h_note_path[64];
static pid_t h_note_runner;

/* At the runner's exit: print the notes after the report, remove the file. */
static void
h_note_flush(void)
{
	size_t len;
	char *s;

	if (getpid() != h_note_runner)
		return;
	s = h_read_file(h_note_path, &len);
	if (s != NULL) {
		fwrite(s, 1, len, stdout);
		fflush(stdout);
		free(s);
	}
	unlink(h_note_path);
}

/* In the runner, before any test: the notes file, named in the environment. */
ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	int fd;

	(void)set;
	snprintf(h_note_path, sizeof(h_note_path), "/tmp/dbgi-notes-XXXXXX");
	fd = mkstemp(h_note_path);
	if (fd < 0)
		return;
	close(fd);
	h_note_runner = getpid();
	setenv(H_NOTE_ENV, h_note_path, 1);
	atexit(h_note_flush);
}

/* Leave a line for the TAP output, "# " before it, printed after the results. */
void
h_note(const char *fmt, ...)
{
	const char *path = getenv(H_NOTE_ENV);
	char line[1024];
	va_list ap;
	size_t n;
	int fd;

	memcpy(line, "# ", 2);
	va_start(ap, fmt);
	vsnprintf(line + 2, sizeof(line) - 3, fmt, ap);
	va_end(ap);
	n = strlen(line);
	line[n++] = '\n';
	/* One write with O_APPEND: parallel workers' lines never mix. */
	fd = path != NULL ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
	while (write(fd >= 0 ? fd : STDERR_FILENO, line, n) == -1 &&
	    errno == EINTR)
		;
	if (fd >= 0)
		close(fd);
}
