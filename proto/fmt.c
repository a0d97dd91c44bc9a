/*
 * Text for people shared by the client's output and the daemon's list
 * table: numbers, durations, a hold's time left, control bytes.
 */
#include <stdio.h>
#include <string.h>

#include "fmt.h"

/*
 * Write n in decimal at the end of buf (24 bytes) without printf's
 * machinery, for hot paths: replies' ids, a table's numbers.
 */
const char *
fmt_int(long long n, char *buf)
{
	unsigned long long	 u = n < 0 ? 0ULL - (unsigned long long)n :
				    (unsigned long long)n;
	char			*p = buf + 23;

	*p = '\0';
	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (n < 0)
		*--p = '-';
	return p;
}

/*
 * Write a duration in the largest whole unit that fits: 5s, 3m, 2h, 4d.
 * By hand, with no printf: a table of thousands of rows has one each.
 */
void
fmt_duration(long long secs, char *buf, size_t len)
{
	char	digits[24], *p = digits + sizeof digits - 1;
	char	unit = 's';
	size_t	n;

	if (secs < 0)
		secs = 0;
	if (secs >= 86400) {
		secs /= 86400;
		unit = 'd';
	} else if (secs >= 3600) {
		secs /= 3600;
		unit = 'h';
	} else if (secs >= 60) {
		secs /= 60;
		unit = 'm';
	}
	*p = '\0';
	*--p = unit;
	do
		*--p = (char)('0' + secs % 10);
	while ((secs /= 10) != 0);
	/* Copied by hand: proto links no libbsd (strlcpy) of its own. */
	n = (size_t)(digits + sizeof digits - 1 - p);
	if (len == 0)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
}

/* Write how long a hold has left, rounded up: "42s left", "9m left". */
void
fmt_hold_left(long long left_ms, char *buf, size_t len)
{
	long long s = (left_ms + 999) / 1000;

	if (s < 60)
		snprintf(buf, len, "%llds left", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm left", (s + 59) / 60);
	else
		snprintf(buf, len, "%lldh%02lldm left", s / 3600,
		    (s % 3600) / 60);
}
