/*
 * libFuzzer target: socket activation's variables (daemon/activate.c's
 * activate_parse), LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES.
 *
 * The input's first byte says which variables are unset (bits 0 to 2);
 * the rest, cut at NUL bytes, gives their values in that order. The
 * daemon's pid is 4242. Sockets are taken only when LISTEN_PID is that
 * pid in decimal and LISTEN_FDS a count from 0 to ACTIVATE_MAX; they are
 * fds 3 onwards, each named by its colon-separated field of LISTEN_FDNAMES
 * (cut to fit), the rest unnamed; a refusal always says why.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "daemon.h"
#include "activate.h"
#include "fuzz.h"

/* The pid the parse is done as. */
#define ACTIVATE_FUZZ_SELF 4242

/* A decimal of text (as strtonum reads: sign and leading blanks too), or -1. */
static long long
activate_fuzz_number(const char *text, long long max)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (end == text || *end != '\0' || errno != 0 || v < 0 || v > max)
		return -1;
	return v;
}

/* Field i of names (colon-separated), as much as fits len, into buf. */
static void
activate_fuzz_field(const char *names, size_t i, char *buf, size_t len)
{
	size_t n;

	buf[0] = '\0';
	for (; names != NULL && i > 0; i--) {
		names = strchr(names, ':');
		names = names != NULL ? names + 1 : NULL;
	}
	if (names == NULL)
		return;
	n = strcspn(names, ":");
	if (n >= len)
		n = len - 1;
	memcpy(buf, names, n);
	buf[n] = '\0';
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct activate	 a;
	char		*text, *vars[3] = { NULL, NULL, NULL }, *p, err[256];
	char		 want[64];
	long long	 pid, fds;
	size_t		 i;
	int		 rv;

	if (size == 0)
		return 0;
	/* The values, NUL-terminated one after another. */
	text = calloc(1, size + 1);
	memcpy(text, data + 1, size - 1);
	for (i = 0, p = text; i < 3 && p <= text + size - 1; i++) {
		if (!(data[0] & (1 << i)))
			vars[i] = p;
		p += strlen(p) + 1;
	}
	err[0] = '\0';
	rv = activate_parse(&a, vars[0], vars[1], vars[2], ACTIVATE_FUZZ_SELF,
	    err, sizeof err);
	pid = vars[0] != NULL ? activate_fuzz_number(vars[0], INT32_MAX) : -1;
	fds = vars[1] != NULL ? activate_fuzz_number(vars[1], ACTIVATE_MAX) :
	    -1;
	if (pid != ACTIVATE_FUZZ_SELF || vars[1] == NULL) {
		fuzz_check(rv == 0 && a.n == 0, "variables not meant for pid %d "
		    "(LISTEN_PID=%s) gave %d", ACTIVATE_FUZZ_SELF,
		    vars[0] ? vars[0] : "(unset)", rv);
	} else if (fds == -1) {
		fuzz_check(rv == -1 && err[0] != '\0', "LISTEN_FDS=%s gave %d "
		    "(%s)", vars[1], rv, err);
	} else {
		fuzz_check(rv == fds && a.n == (size_t)fds, "LISTEN_FDS=%s gave "
		    "%d sockets", vars[1], rv);
	}
	fuzz_check(a.n <= ACTIVATE_MAX, "%zu sockets", a.n);
	for (i = 0; i < ACTIVATE_MAX; i++) {
		activate_fuzz_field(i < a.n && vars[2] != NULL &&
		    vars[2][0] != '\0' ? vars[2] : NULL, i, want, sizeof want);
		fuzz_check(strcmp(a.fds[i].name, want) == 0, "fd %zu named "
		    "\"%s\", not \"%s\"", i, a.fds[i].name, want);
		fuzz_check(i >= a.n || a.fds[i].fd == 3 + (int)i, "socket %zu "
		    "is fd %d", i, a.fds[i].fd);
	}
	free(text);
	return 0;
}
