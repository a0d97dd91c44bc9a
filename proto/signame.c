/* Signal names and numbers as users write them: INT, SIGINT, 2. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "signame.h"

#define SIGNAME_NITEMS(a)	(sizeof (a) / sizeof (a)[0])

/* Names glibc's sigabbrev_np does not give but kill(1) accepts. */
static const struct {
	const char	*name;
	int		 signo;
} signame_aliases[] = {
	{ "IOT", SIGIOT },
	{ "IO", SIGIO },
	{ "CLD", SIGCHLD },
};

/* Names of the real-time signals, indexed by signo - SIGRTMIN. */
static const char *const signame_rt[] = {
	"RTMIN", "RTMIN+1", "RTMIN+2", "RTMIN+3", "RTMIN+4", "RTMIN+5",
	"RTMIN+6", "RTMIN+7", "RTMIN+8", "RTMIN+9", "RTMIN+10", "RTMIN+11",
	"RTMIN+12", "RTMIN+13", "RTMIN+14", "RTMIN+15", "RTMIN+16", "RTMIN+17",
	"RTMIN+18", "RTMIN+19", "RTMIN+20", "RTMIN+21", "RTMIN+22", "RTMIN+23",
	"RTMIN+24", "RTMIN+25", "RTMIN+26", "RTMIN+27", "RTMIN+28", "RTMIN+29",
	"RTMIN+30", "RTMIN+31", "RTMIN+32",
};

/* Parse a decimal number made only of digits; -1 if s is not one. */
static long
signame_number(const char *s)
{
	char	*end;
	long	 n;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	return n;
}

/* Resolve "RTMIN", "RTMIN+N", "RTMAX" or "RTMAX-N" (no SIG); -1 if not. */
static int
signame_parse_rt(const char *s)
{
	long	n;
	int	base, sign;

	if (strncasecmp(s, "RTMIN", 5) == 0) {
		base = SIGRTMIN;
		sign = 1;
	} else if (strncasecmp(s, "RTMAX", 5) == 0) {
		base = SIGRTMAX;
		sign = -1;
	} else
		return -1;
	s += 5;
	if (*s == '\0')
		return base;
	if (*s != (sign > 0 ? '+' : '-'))
		return -1;
	if ((n = signame_number(s + 1)) < 0 || n > SIGRTMAX - SIGRTMIN)
		return -1;
	return base + sign * (int)n;
}

/* Parse "INT", "SIGINT", "sigint", "RTMIN+1" or "2"; -1 if no signal. */
int
signame_parse(const char *s)
{
	const char	*abbrev;
	long		 n;
	size_t		 i;
	int		 signo;

	if (s == NULL || *s == '\0')
		return -1;
	if (isdigit((unsigned char)*s)) {
		n = signame_number(s);
		if (n < 1 || n > SIGRTMAX)
			return -1;
		return (int)n;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	if (*s == '\0')
		return -1;
	for (signo = 1; signo < SIGRTMIN; signo++) {
		abbrev = sigabbrev_np(signo);
		if (abbrev != NULL && strcasecmp(s, abbrev) == 0)
			return signo;
	}
	for (i = 0; i < SIGNAME_NITEMS(signame_aliases); i++) {
		if (strcasecmp(s, signame_aliases[i].name) == 0)
			return signame_aliases[i].signo;
	}
	return signame_parse_rt(s);
}

/* "INT" for 2, "RTMIN+1" for SIGRTMIN + 1; NULL for an unknown number. */
const char *
signame_name(int signo)
{
	size_t	i;

	if (signo >= SIGRTMIN && signo <= SIGRTMAX) {
		i = signo - SIGRTMIN;
		if (i < SIGNAME_NITEMS(signame_rt))
			return signame_rt[i];
		return NULL;
	}
	return sigabbrev_np(signo);
}
