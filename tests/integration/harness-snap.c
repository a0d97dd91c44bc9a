/*
 * Snapshots of the processes carrying a marker, with their start times so
 * that a reused pid is not mistaken for a survivor, and what is left of
 * them later: alive, a zombie, or a new process carrying the marker.
 */
#include "harness.h"

#include <sys/wait.h>

#include <string.h>

/* Record every live process carrying kv. */
void
h_snap_take(struct h_snap *s, const char *kv)
{
	int i;

	s->n = h_marker_pids(kv, s->pid, H_MAXPIDS);
	for (i = 0; i < s->n; i++)
		s->start[i] = h_pid_start(s->pid[i]);
}

/* True if pid is a member of the snapshot (still the same process). */
static bool
h_snap_has(const struct h_snap *s, pid_t pid)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->pid[i] == pid)
			return true;
	return false;
}

/* Zombie filter: not a member itself, and its parent is a member of arg. */
static bool
h_snap_zombie_of(pid_t pid, pid_t ppid, void *arg)
{
	const struct h_snap *s = arg;

	return !h_snap_has(s, pid) && h_snap_has(s, ppid);
}

/*
 * Processes left over: snapshot members still present (alive or zombie,
 * same start time), live processes carrying kv, and zombies whose parent is a
 * snapshot member. zombie_ok_ppid1 tolerates zombies re-parented to init.
 */
int
h_snap_leftovers(const struct h_snap *s, const char *kv, bool zombie_ok_ppid1,
    char *report, size_t len)
{
	struct h_pid_stat st;
	pid_t live[H_MAXPIDS];
	int i, n, count = 0;

	report[0] = '\0';
	for (i = 0; i < s->n; i++) {
		if (!h_pid_stat(s->pid[i], &st) || st.start != s->start[i])
			continue;
		if (st.state == 'Z' && zombie_ok_ppid1 && st.ppid == 1)
			continue;
		h_pid_describe(report, len, st.state == 'Z' ? "zombie" :
		    "alive", s->pid[i]);
		count++;
	}
	n = h_marker_pids(kv, live, H_MAXPIDS);
	for (i = 0; i < n; i++) {
		if (h_snap_has(s, live[i]))
			continue;	/* counted above */
		h_pid_describe(report, len, "alive (new)", live[i]);
		count++;
	}
	return count + h_pid_zombies_if(h_snap_zombie_of, (void *)s,
	    "zombie child of session", report, len);
}

/* Arguments of a wait until nothing of a snapshot is left. */
struct h_snap_arg {
	const struct h_snap	*snap;
	const char		*kv;
	char			*report;
	size_t			 len;
};

/* Predicate: nothing of the snapshot is left (zombies of init tolerated). */
static bool
h_snap_nothing_left(void *arg)
{
	struct h_snap_arg *a = arg;

	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	return h_snap_leftovers(a->snap, a->kv, true, a->report, a->len) == 0;
}

/*
 * Wait until h_snap_leftovers (zombies of init tolerated) finds nothing,
 * reaping our own children meanwhile; false at bound_ms, the last finding
 * in report.
 */
bool
h_snap_wait_gone(const struct h_snap *s, const char *kv, int bound_ms,
    char *report, size_t len)
{
	struct h_snap_arg a = { s, kv, report, len };

	return h_wait_for(h_snap_nothing_left, &a, bound_ms);
}
