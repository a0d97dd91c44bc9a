/* Formatting session fields for people: exit statuses, command lines, target records. */
#include <sys/ioctl.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dbgctl.h"
#include "signame.h"

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
