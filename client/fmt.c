/* Formatting session fields for people: ages, exit statuses, command lines, target records. */
#include <sys/ioctl.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dbgctl.h"
#include "signame.h"

/* The n digits at s as a number; -1 if any is not a digit. */
static long
fmt_digits(const char *s, int n)
{
	long	v = 0;
	int	i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian). */
static long long
fmt_days(long y, long m, long d)
{
	long long	era, yoe, doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/*
 * Parse a UTC time such as "2026-11-30T04:32:33.123Z" (as the daemon
 * writes them) by hand: a table of thousands of rows has one or two each,
 * and strptime and timegm cost more than all the rest of a row.
 */
static time_t
fmt_parse_time(const char *s)
{
	long	y, mo, d, h, mi, sec;

	if (s == NULL || strnlen(s, 19) < 19 || s[4] != '-' || s[7] != '-' ||
	    s[10] != 'T' || s[13] != ':' || s[16] != ':')
		return -1;
	y = fmt_digits(s, 4);
	mo = fmt_digits(s + 5, 2);
	d = fmt_digits(s + 8, 2);
	h = fmt_digits(s + 11, 2);
	mi = fmt_digits(s + 14, 2);
	sec = fmt_digits(s + 17, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 ||
	    h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60)
		return -1;
	return (time_t)(fmt_days(y, mo, d) * 86400 + h * 3600 + mi * 60 +
	    sec);
}

/* Write how long a session ran: from started to ended (NULL: now). */
void
fmt_age_between(const char *started, const char *ended, char *buf,
    size_t len)
{
	time_t	start, end;

	if ((start = fmt_parse_time(started)) == -1) {
		strlcpy(buf, "-", len);
		return;
	}
	if ((end = fmt_parse_time(ended)) == -1)
		end = time(NULL);
	fmt_duration((long long)(end - start), buf, len);
}

/* Write how long a session ran: from started_at to ended_at, or to now. */
void
fmt_age(json_t *session, char *buf, size_t len)
{
	fmt_age_between(json_string_value(json_object_get(session,
	    "started_at")), json_string_value(json_object_get(session,
	    "ended_at")), buf, len);
}

/* Write an exit record: "code 0" or "signal 15 (TERM)"; "-" if none. */
void
fmt_exit(json_t *rec, char *buf, size_t len)
{
	json_t		*code, *sig;
	const char	*name;
	int		 n;

	code = json_object_get(rec, "code");
	sig = json_object_get(rec, "signal");
	if (json_is_integer(code)) {
		snprintf(buf, len, "code %lld", json_integer_value(code));
		return;
	}
	if (!json_is_integer(sig)) {
		strlcpy(buf, "-", len);
		return;
	}
	n = (int)json_integer_value(sig);
	if ((name = signame_name(n)) != NULL)
		snprintf(buf, len, "signal %d (%s)", n, name);
	else
		snprintf(buf, len, "signal %d", n);
}

/* Join the strings of an argv array with spaces, control bytes shown as '?'. */
char *
fmt_argv(json_t *argv)
{
	const char	*s;
	char		*out, *p;
	size_t		 i, len = 1;
	json_t		*v;

	json_array_foreach(argv, i, v) {
		if ((s = json_string_value(v)) != NULL)
			len += strlen(s);
		len++;
	}
	if ((p = out = malloc(len)) == NULL)
		return NULL;
	json_array_foreach(argv, i, v) {
		if ((s = json_string_value(v)) == NULL)
			s = "";
		if (i > 0)
			*p++ = ' ';
		for (; *s != '\0'; s++)
			*p++ = fmt_is_control(*s) ? '?' : *s;
	}
	*p = '\0';
	return out;
}

/* The width of the terminal on fd, or 0 if fd is not a terminal. */
int
fmt_terminal_width(int fd)
{
	struct winsize	ws;

	if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) == -1)
		return 0;
	return ws.ws_col;
}

/*
 * A target record as a person reads it: "running", or "stopped
 * (signal-received SIGSEGV) in crash at fault.c:7, 0x401136".
 */
void
fmt_target(json_t *target, char *buf, size_t len)
{
	json_t		*stop = json_object_get(target, "stop");
	json_t		*code = json_object_get(target, "exit_code");
	const char	*state, *reason, *sig, *func, *file, *addr;
	size_t		 o;

	state = json_string_value(json_object_get(target, "state"));
	o = (size_t)snprintf(buf, len, "%s", state != NULL ? state : "?");
	if (code != NULL && o < len)
		o += (size_t)snprintf(buf + o, len - o, " (code %s)",
		    json_string_value(code) ? json_string_value(code) : "?");
	if (stop == NULL || o >= len)
		return;
	reason = json_string_value(json_object_get(stop, "reason"));
	sig = json_string_value(json_object_get(stop, "signal"));
	func = json_string_value(json_object_get(stop, "func"));
	file = json_string_value(json_object_get(stop, "file"));
	addr = json_string_value(json_object_get(stop, "addr"));
	if (reason != NULL && o < len)
		o += (size_t)snprintf(buf + o, len - o, " (%s%s%s)", reason,
		    sig != NULL ? " " : "", sig != NULL ? sig : "");
	if (func != NULL && o < len)
		o += (size_t)snprintf(buf + o, len - o, " in %s", func);
	if (file != NULL && o < len)
		o += (size_t)snprintf(buf + o, len - o, " at %s:%lld", file,
		    (long long)json_integer_value(json_object_get(stop,
		    "line")));
	if (addr != NULL && o < len)
		snprintf(buf + o, len - o, ", %s", addr);
}

/* Append printf-style text to buf, of len, at *o; nothing once it is full. */
static void __attribute__((format(printf, 4, 5)))
fmt_add(char *buf, size_t len, size_t *o, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	if (*o >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *o, len - *o, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o += (size_t)n;
}

/* The last component of a path: "board.c" of "../src/board.c". */
const char *
fmt_basename(const char *path)
{
	const char	*slash = strrchr(path, '/');

	return slash != NULL && slash[1] != '\0' ? slash + 1 : path;
}

/* A line number as MI gives it (a string) or as an integer; 0 if neither. */
static long long
fmt_line(json_t *line)
{
	if (json_is_string(line))
		return strtoll(json_string_value(line), NULL, 10);
	return json_integer_value(line);
}

/*
 * Why a stop record stopped, into buf at *o: " (breakpoint-hit,
 * breakpoint 2)", " (signal-received, SIGINT, by halt)"; who stopped it
 * only if not the program itself. An exit without a code says its own
 * why the same way: " (exited-signalled, SIGSEGV)".
 */
static void
fmt_stop_why(json_t *stop, json_t *target, char *buf, size_t len, size_t *o)
{
	const char	*reason, *sig, *by;
	json_t		*bkptno;
	const char	*sep = " (";

	reason = json_string_value(json_object_get(stop, "reason"));
	sig = json_string_value(json_object_get(stop, "signal"));
	if ((by = json_string_value(json_object_get(stop, "by"))) == NULL)
		by = json_string_value(json_object_get(target, "by"));
	bkptno = json_object_get(stop, "bkptno");
	if (bkptno == NULL)
		bkptno = json_object_get(target, "bkptno");
	if (reason != NULL) {
		fmt_add(buf, len, o, "%s%s", sep, reason);
		sep = ", ";
	}
	if (json_is_integer(bkptno)) {
		fmt_add(buf, len, o, "%sbreakpoint %lld", sep,
		    (long long)json_integer_value(bkptno));
		sep = ", ";
	} else if (json_is_string(bkptno)) {
		fmt_add(buf, len, o, "%sbreakpoint %s", sep,
		    json_string_value(bkptno));
		sep = ", ";
	}
	if (sig != NULL) {
		fmt_add(buf, len, o, "%s%s", sep, sig);
		sep = ", ";
	}
	if (by != NULL && strcmp(by, "target") != 0 && (reason == NULL ||
	    strcmp(reason, by) != 0)) {
		fmt_add(buf, len, o, "%sby %s", sep, by);
		sep = ", ";
	}
	if (*sep == ',')
		fmt_add(buf, len, o, ")");
}

/*
 * Where a stop record stopped, into buf at *o: " at uart_putc
 * (board.c:41)", " at 0x401136", from the stop, else from its frame.
 */
static void
fmt_stop_where(json_t *stop, json_t *target, char *buf, size_t len,
    size_t *o)
{
	json_t		*frame = json_object_get(stop, "frame");
	json_t		*at = stop;
	const char	*func, *file, *addr;

	if (!json_is_object(frame))
		frame = json_object_get(target, "frame");
	if (json_string_value(json_object_get(stop, "func")) == NULL &&
	    json_string_value(json_object_get(stop, "addr")) == NULL &&
	    json_is_object(frame))
		at = frame;
	func = json_string_value(json_object_get(at, "func"));
	file = json_string_value(json_object_get(at, "file"));
	addr = json_string_value(json_object_get(at, "addr"));
	if (func != NULL)
		fmt_add(buf, len, o, " at %s", func);
	else if (addr != NULL)
		fmt_add(buf, len, o, " at %s", addr);
	/* The file's last name: the line is a summary, --json has it all. */
	if (file != NULL)
		fmt_add(buf, len, o, " (%s:%lld)", fmt_basename(file),
		    (long long)fmt_line(json_object_get(at, "line")));
}

/*
 * A target record in one line, as a verb's answer says it: "stopped
 * (breakpoint-hit, breakpoint 2) at uart_putc (board.c:41), seq 7",
 * "running, seq 8", "exited (code 0), seq 9".
 */
void
fmt_stop(json_t *target, char *buf, size_t len)
{
	json_t		*stop = json_object_get(target, "stop");
	json_t		*code = json_object_get(target, "exit_code");
	json_t		*seq = json_object_get(target, "seq");
	const char	*state;
	size_t		 o = 0;

	*buf = '\0';
	state = json_string_value(json_object_get(target, "state"));
	fmt_add(buf, len, &o, "%s", state != NULL ? state : "unknown");
	if (json_is_string(code))
		fmt_add(buf, len, &o, " (code %s)", json_string_value(code));
	else if (json_is_integer(code))
		fmt_add(buf, len, &o, " (code %lld)",
		    (long long)json_integer_value(code));
	else if (state != NULL && strcmp(state, "exited") == 0)
		fmt_stop_why(target, target, buf, len, &o);
	if (json_is_object(stop)) {
		fmt_stop_why(stop, target, buf, len, &o);
		fmt_stop_where(stop, target, buf, len, &o);
	}
	if (json_is_true(json_object_get(target, "transient")))
		fmt_add(buf, len, &o, ", transient");
	if (json_is_integer(seq))
		fmt_add(buf, len, &o, ", seq %lld",
		    (long long)json_integer_value(seq));
}
