/*
 * The adoption soak's end: the streamers end, every stream whole; stop
 * --all leaves no process of any session, no keeper's socket and no
 * session cgroup that holds a process; and the list and process checks
 * the rounds use.
 */
#include "harness.h"
#include "adopt-soak.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether list shows session id, and its row's hold into *held. */
bool
sa_end_listed(long id, bool *held)
{
	json_t *l = h_cli_json(H_ARGS("list")), *row;
	bool found = false;
	size_t i;

	json_array_foreach(json_object_get(l, "sessions"), i, row)
		if (h_jint(row, "id", -1) == id) {
			found = true;
			*held = json_is_object(json_object_get(row, "hold"));
		}
	json_decref(l);
	return found;
}

/* Sessions' processes alive: those carrying the marker but the daemon. */
int
sa_end_procs(char *report, size_t len)
{
	pid_t p[H_MAXPIDS];
	int i, n, k = 0;

	n = h_marker_pids(H->marker, p, H_MAXPIDS);
	for (i = 0; i < n; i++)
		if (p[i] != H->fg_daemon) {
			h_pid_describe(report, len, "alive", p[i]);
			k++;
		}
	return k;
}

/* Predicate: no process of any session is alive. */
bool
sa_end_no_procs(void *arg)
{
	char report[4096] = "";

	(void)arg;
	if (sa_end_procs(report, sizeof report) == 0)
		return true;
	h_nap(20);
	return false;
}

/* Keeper sockets beside the daemon's (SOCK.k*), named into buf. */
int
sa_end_keeper_socks(char *buf, size_t len)
{
	struct dirent *de;
	DIR *d = opendir(H->dir);
	int n = 0;

	buf[0] = '\0';
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "sock.k", 6) == 0) {
			snprintf(buf + strlen(buf), len - strlen(buf), "%s ",
			    de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

/* Predicate: no keeper socket is left. */
bool
sa_end_no_socks(void *arg)
{
	char names[1024];

	(void)arg;
	if (sa_end_keeper_socks(names, sizeof names) == 0)
		return true;
	h_nap(20);
	return false;
}

/* Session cgroups in the daemon's subtree that hold a process, into buf. */
static int
sa_end_cgroups(const char *root, char *buf, size_t len)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(root);
	int n = 0;

	buf[0] = '\0';
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", root, de->d_name);
		if (h_contain_populated(path)) {
			snprintf(buf + strlen(buf), len - strlen(buf), "%s ",
			    de->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* Predicate: no session cgroup under the subtree at arg holds a process. */
static bool
sa_end_no_cgroups(void *arg)
{
	char names[1024];

	if (sa_end_cgroups(arg, names, sizeof names) == 0)
		return true;
	h_nap(20);
	return false;
}

/* The streamers end: every stream holds its whole sequence, then "end". */
void
sa_end_streams(struct sa *s)
{
	struct sa_stream *st;
	int fd, i;

	snprintf(s->where, sizeof s->where, "seed %u at the end", s->seed);
	fd = open(s->flag, O_WRONLY | O_CREAT, 0600);
	cr_assert_neq(fd, -1, "%s", s->flag);
	close(fd);
	for (i = 0; i < s->nst; i++) {
		st = &s->st[i];
		while (st->form == SA_LINES && !st->ended) {
			sa_stream_check(s, st);
			if (!st->ended)
				h_nap(50);
		}
		cr_assert(st->form != SA_LINES || st->lines % SA_BATCH == 0,
		    "%s: session %ld's %s stream ended after %ld lines",
		    s->where, st->id, st->name, st->lines);
		if (st->form != SA_LINES)
			sa_stream_check(s, st);
	}
}

/* Whether pid's parent is *(pid_t *)arg. */
static bool
sa_end_child_of(pid_t pid, void *arg)
{
	return h_pid_ppid(pid) == *(pid_t *)arg;
}

/*
 * The remote session's server goes, and the program it ran, which its
 * gdb left running when it detached: the test's own, not the session's.
 */
static void
sa_end_server(struct sa *s)
{
	pid_t kids[H_MAXPIDS];
	int i, n;

	if (s->server.pid <= 0)
		return;
	n = h_pid_scan(sa_end_child_of, &s->server.pid, kids, H_MAXPIDS);
	for (i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	kill(s->server.pid, SIGKILL);
	h_run_wait(&s->server, H_RUN_BOUND);
	h_run_free(&s->server.res);
}

/*
 * stop --all, then the clients end with their sessions and the remote
 * session's server goes (the test's own); then no process of any session
 * is left, nor a keeper's socket.
 */
void
sa_end_stop_all(struct sa *s)
{
	char report[8192] = "", names[1024], root[PATH_MAX];
	bool contained = h_daemon_cgroup(root, sizeof root);
	struct h_res r;

	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
	sa_client_end(s);
	sa_end_server(s);
	if (!h_wait_for(sa_end_no_procs, NULL, H_WAIT_BOUND)) {
		sa_end_procs(report, sizeof report);
		cr_assert_fail("%s: after stop --all, processes of sessions "
		    "live: %s", s->where, report);
	}
	cr_assert(h_wait_for(sa_end_no_socks, NULL, H_WAIT_BOUND), "%s: keeper "
	    "sockets left after stop --all: %s", s->where,
	    (sa_end_keeper_socks(names, sizeof names), names));
	cr_assert(!contained || h_wait_for(sa_end_no_cgroups, root,
	    H_WAIT_BOUND), "%s: session cgroups in %s hold processes after "
	    "stop --all: %s", s->where, root, (sa_end_cgroups(root, names,
	    sizeof names), names));
	s->cgroups = contained;
}
