/*
 * Text for people shared by the client's output and the daemon's list
 * table: numbers, durations, a hold's time left, control bytes.
 */
#ifndef DBGCTL_FMT_H
#define DBGCTL_FMT_H

#include <stddef.h>

/* n in decimal at the end of buf (24 bytes); the text. */
const char *fmt_int(long long n, char *buf);
/* A duration in its largest whole unit that fits: 5s, 3m, 2h, 4d. */
void	 fmt_duration(long long secs, char *buf, size_t len);
/* A hold's time left: "42s left", "9m left", "1h05m left". */
void	 fmt_hold_left(long long left_ms, char *buf, size_t len);

/*
 * Whether byte ch is a control character, unsafe to print as is. Inline:
 * the list's table asks it of every byte.
 */
static inline int
fmt_is_control(char ch)
{
	return (unsigned char)ch < 0x20 || ch == 0x7f;
}

#endif
