/*
 * The harness's small utilities, with no role of their own and so the bare
 * h_ prefix: the clock and bounded waits, files, programs on PATH (and the
 * QEMU board's firmware with what it needs), text for
 * failure messages, byte buffers, and members of parsed JSON at dotted paths.
 */
#include <criterion/criterion.h>

#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Monotonic clock in seconds. */
double
h_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep a short poll interval (ms) inside a wait loop. */
void
h_nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Poll pred(arg) every few ms until it is true or bound_ms passes. */
bool
h_wait_for(bool (*pred)(void *), void *arg, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;

	for (;;) {
		if (pred(arg))
			return true;
		if (h_now() > end)
			return false;
		h_nap(10);
	}
}

/* Read a whole file; NULL if it cannot be read. *len gets its size. */
char *
h_read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf, *nb;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (nb == NULL)
				break;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

/* A program's full path from PATH, or NULL. */
const char *
h_which(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *c;

	for (p = path ? path : "/usr/bin:/bin"; *p != '\0'; p = *c ? c + 1 : c) {
		c = strchr(p, ':');
		if (c == NULL)
			c = p + strlen(p);
		snprintf(buf, len, "%.*s/%s", (int)(c - p), p, name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

/* Format a session id as a string for argv; returns buf. */
const char *
h_idstr(long id, char *buf, size_t len)
{
	snprintf(buf, len, "%ld", id);
	return buf;
}

/* Join args with spaces into buf, for messages; returns buf. */
const char *
h_join_args(const char *const args[], char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; args[i] != NULL && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "",
		    args[i]);
	return buf;
}

/*
 * The last max bytes of data, control bytes shown as \xNN (newlines kept),
 * for failure messages. Four buffers in turn, so that one message may show
 * several.
 */
const char *
h_shown(const char *data, size_t len, size_t max)
{
	static char bufs[4][16384];
	static unsigned next;
	char *out = bufs[next++ % 4];
	size_t o = 0, i = len > max ? len - max : 0;

	for (; i < len && o + 8 < sizeof(bufs[0]); i++) {
		unsigned char ch = (unsigned char)data[i];

		if (ch == '\n' || (ch >= 0x20 && ch < 0x7f))
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, sizeof(bufs[0]) - o,
			    "\\x%02x", ch);
	}
	out[o] = '\0';
	return out;
}

/* Occurrences of needle in data[0..len). */
int
h_count(const char *data, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	const char *p = data, *end = data + len;
	int k = 0;

	while (p < end &&
	    (p = memmem(p, (size_t)(end - p), needle, n)) != NULL) {
		k++;
		p += n;
	}
	return k;
}

/* Append n bytes to a byte buffer, keeping it NUL-terminated. */
void
h_bytes_add(struct h_bytes *b, const void *data, size_t n)
{
	b->p = realloc(b->p, b->len + n + 1);
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Member at a dotted path, or NULL. */
json_t *
h_jpath(json_t *j, const char *path)
{
	char key[128];
	const char *dot;
	size_t n;

	while (j != NULL && *path != '\0') {
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		j = json_object_get(j, key);
		path += n + (dot != NULL);
	}
	return j;
}

/* The error kind of a reply (error.data.kind), or "" if it has none. */
const char *
h_jkind(json_t *reply)
{
	const char *kind = h_jstr(reply, "error.data.kind");

	return kind != NULL ? kind : "";
}

/* Integer member at a dotted path ("exit.signal"), or def if absent. */
long long
h_jint(json_t *j, const char *path, long long def)
{
	json_t *v = h_jpath(j, path);

	return json_is_integer(v) ? json_integer_value(v) : def;
}

/* String member at a dotted path, or NULL if absent. */
const char *
h_jstr(json_t *j, const char *path)
{
	return json_string_value(h_jpath(j, path));
}

/* Whether a JSON array holds the string s. */
bool
h_jhas(json_t *a, const char *s)
{
	json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return true;
	return false;
}

/* The board's firmware at var; skips if the board cannot run here. */
const char *
h_board_firmware(const char *var)
{
	const char *fw = getenv(var);
	char path[4096];

	if (fw == NULL || *fw == '\0')
		cr_skip_test("%s is not set: the firmware was not built (clang "
		    "or ld.lld missing)", var);
	if (h_which("qemu-system-arm", path, sizeof(path)) == NULL)
		cr_skip_test("qemu-system-arm is not on PATH");
	if (h_which("gdb-multiarch", path, sizeof(path)) == NULL)
		cr_skip_test("gdb-multiarch is not on PATH");
	return fw;
}
