/*
 * Markers: a "NAME=<random>" entry in a process's environment, which every
 * descendant inherits, finds the processes of a test or a session however
 * they escaped (double forks, setsid, re-parenting to init).
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fill buf with n random hex digits. */
static void
h_marker_hex(char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[64];
	size_t i;
	int fd;

	if (n / 2 + 1 > sizeof(b))
		n = (sizeof(b) - 1) * 2;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, b, n / 2 + 1) != (ssize_t)(n / 2 + 1)) {
		/* Fall back to pid and time: still unique enough per test. */
		unsigned long v = (unsigned long)getpid() * 2654435761UL ^
		    (unsigned long)(h_now() * 1e9);
		for (i = 0; i < sizeof(b); i++) {
			b[i] = (unsigned char)(v >> 33);
			v = v * 6364136223846793005UL + 1;
		}
	}
	if (fd >= 0)
		close(fd);
	for (i = 0; i < n; i++)
		buf[i] = hex[(b[i / 2] >> ((i % 2) * 4)) & 15];
	buf[n] = '\0';
}

/* Make a fresh "NAME=<random>" marker for --env. */
void
h_marker_new(const char *name, char *buf, size_t len)
{
	char r[33];

	h_marker_hex(r, 24);
	snprintf(buf, len, "%s=%s", name, r);
}

/* True if the NUL-separated environment block holds kv as one entry. */
static bool
h_marker_env_has(const char *env, size_t len, const char *kv)
{
	size_t i = 0, kl = strlen(kv);

	while (i < len) {
		size_t el = strnlen(env + i, len - i);

		if (el == kl && memcmp(env + i, kv, kl) == 0)
			return true;
		i += el + 1;
	}
	return false;
}

/* Scan filter: pid is alive and its environment holds the kv arg. */
static bool
h_marker_carries(pid_t pid, void *arg)
{
	const char *kv = arg;
	char path[64], *env, state;
	bool has;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	env = h_read_file(path, &len);
	if (env == NULL)
		return false;
	has = h_marker_env_has(env, len, kv);
	free(env);
	state = has ? h_pid_state(pid) : 0;
	return state != 'Z' && state != 0;
}

/* Live (non-zombie) pids whose /proc/PID/environ holds kv exactly. */
int
h_marker_pids(const char *kv, pid_t *out, int max)
{
	return h_pid_scan(h_marker_carries, (void *)kv, out, max);
}

/* True if no live process carries kv. */
bool
h_marker_gone(const char *kv)
{
	pid_t p[1];

	return h_marker_pids(kv, p, 1) == 0;
}

/* Arguments of a wait on marker processes named comm. */
struct h_marker_arg {
	const char	*kv;
	const char	*comm;
	int		 want;
};

/* Predicate: at least want live processes carry kv and are named comm. */
static bool
h_marker_enough(void *arg)
{
	struct h_marker_arg *a = arg;
	pid_t p[H_MAXPIDS];
	char comm[64];
	int i, n, k = 0;

	n = h_marker_pids(a->kv, p, H_MAXPIDS);
	for (i = 0; i < n; i++) {
		h_pid_comm(p[i], comm, sizeof(comm));
		if (a->comm == NULL || strcmp(comm, a->comm) == 0)
			k++;
	}
	return k >= a->want;
}

/* Wait until want live processes named comm (NULL: any) carry kv; asserted. */
void
h_marker_wait(const char *kv, const char *comm, int want)
{
	struct h_marker_arg a = { kv, comm, want };

	cr_assert(h_wait_for(h_marker_enough, &a, H_WAIT_BOUND),
	    "expected %d '%s' processes carrying %s within %d ms", want,
	    comm ? comm : "*", kv, H_WAIT_BOUND);
}

/* A live process named comm that carries kv, or -1. */
pid_t
h_marker_pid(const char *kv, const char *comm)
{
	pid_t p[H_MAXPIDS];
	char c[64];
	int i, n;

	n = h_marker_pids(kv, p, H_MAXPIDS);
	for (i = 0; i < n; i++) {
		h_pid_comm(p[i], c, sizeof(c));
		if (strcmp(c, comm) == 0)
			return p[i];
	}
	return -1;
}

/* Kill what carries kv, again and again, until none is left or bound_ms. */
int
h_marker_kill(const char *kv, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	pid_t p[H_MAXPIDS];
	int i, n;

	for (;;) {
		n = h_marker_pids(kv, p, H_MAXPIDS);
		if (n == 0 || h_now() > end)
			return n;
		for (i = 0; i < n; i++)
			kill(p[i], SIGKILL);
		h_nap(10);
	}
}

/* Live processes carrying kv, described in report; returns how many. */
int
h_marker_describe(const char *kv, char *report, size_t len)
{
	pid_t p[H_MAXPIDS];
	int i, n;

	report[0] = '\0';
	n = h_marker_pids(kv, p, H_MAXPIDS);
	for (i = 0; i < n; i++)
		h_pid_describe(report, len, "alive", p[i]);
	return n;
}
