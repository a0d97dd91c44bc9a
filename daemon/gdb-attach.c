/*
 * Attaching, for the gdb family: launch --pid has gdb attach over MI once
 * it runs, the session running only when gdb has; and whether a target
 * process is the session's own (started below one of its keepers) or one
 * that gdb only attached to, which a stop must leave alive.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "mi.h"

/* Most parents walked up from a target before giving up: it is not ours. */
#define GDB_ATTACH_MAXDEPTH 256

/* The parent of pid from /proc/PID/stat, or 0. */
static pid_t
gdb_attach_parent(pid_t pid)
{
	char	 path[64], buf[512], *p;
	size_t	 n;
	FILE	*f;
	long	 ppid;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The name in parentheses may hold anything: the fields follow the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %*c %ld", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

/* Whether pid is one of the session's processes or their keepers. */
static bool
gdb_attach_is_session(const struct session *s, pid_t pid)
{
	const struct proc	*pr;
	size_t			 i;

	for (i = 0; i < s->nprocs; i++) {
		if ((pr = s->procs[i].proc) == NULL)
			continue;
		if ((proc_alive(pr) && proc_keeper_pid(pr) == pid) ||
		    (proc_pid(pr) != 0 && proc_pid(pr) == pid))
			return true;
	}
	return false;
}

/*
 * Whether the session started pid: one of its keepers (subreapers, so
 * nothing it started can leave) is among pid's ancestors. ptrace does
 * not change a tracee's parent, so an attached process keeps its own.
 */
bool
gdb_attach_ours(const struct session *s, pid_t pid)
{
	int depth;

	for (depth = 0; pid > 1 && depth < GDB_ATTACH_MAXDEPTH; depth++) {
		if ((pid = gdb_attach_parent(pid)) <= 1)
			return false;
		if (gdb_attach_is_session(s, pid))
			return true;
	}
	return false;
}

/* gdb answered the attach: the session runs, or fails with gdb's words. */
static void
gdb_attach_reply(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct gdb_data	*g = arg;
	const char	*msg;

	(void)out;
	(void)len;
	g->attach_token = 0;
	timer_stop(g->attach_timer);
	if (rec == NULL)	/* gdb is gone: its exit fails the launch */
		return;
	if (strcmp(rec->cls, "error") == 0) {
		msg = json_string_value(json_object_get(rec->results, "msg"));
		session_fail(g->s, RPC_SPAWN_FAILED, "cannot attach to process "
		    "%ld: %s", g->s->l.pid, msg != NULL ? msg : "gdb refused");
		return;
	}
	log_info("session %lu: attached to process %ld", g->s->id, g->s->l.pid);
	backend_gdb_target_ready(g);
}

/* gdb did not answer the attach in time. */
static void
gdb_attach_timeout(void *arg)
{
	struct gdb_data *g = arg;

	mi_cancel(g->mi, g->attach_token);
	g->attach_token = 0;
	session_fail(g->s, RPC_TIMEOUT, "cannot attach to process %ld: gdb "
	    "did not answer within %ld ms", g->s->l.pid, g->s->l.connect_timeout);
}

/*
 * gdb exec'd (a ready hook): without --pid the session runs; with it, gdb
 * attaches first, bounded by the connect timeout.
 */
void
gdb_attach_ready(struct session *s, struct session_proc *sp)
{
	struct gdb_data *g = s->bdata;

	(void)sp;
	if (s->l.pid == 0) {
		(void)session_ready(s);
		return;
	}
	g->attach_token = mi_command(g->mi, gdb_attach_reply, g,
	    "-target-attach %ld", s->l.pid);
	if (g->attach_token == 0) {
		session_fail(s, RPC_NOT_READY, "cannot talk to gdb's MI");
		return;
	}
	g->attach_timer = timer_new(gdb_attach_timeout, g);
	timer_start(g->attach_timer, s->l.connect_timeout);
}

/* The session ended: no attach is waited for any more. */
void
gdb_attach_close(struct gdb_data *g)
{
	timer_free(g->attach_timer);
	g->attach_timer = NULL;
}
