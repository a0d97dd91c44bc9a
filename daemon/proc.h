/*
 * The proc files' own: a keeper's record, whose fields proc.c and
 * proc-keepers.c alone read and change; every other file holds a struct proc
 * as an opaque handle and asks proc.c's functions (proc_pid, proc_have_exit,
 * proc_mark_detached, ...).
 */
#ifndef DBGCTL_PROC_H
#define DBGCTL_PROC_H

struct proc {
	TAILQ_ENTRY(proc) entry;	/* in proc_all until freed */
	RB_ENTRY(proc)	 keeper_entry;	/* in proc-keepers.c's tree while live */
	char		*exec_name;	/* what the keeper execs */
	pid_t		 pid;
	pid_t		 keeper_pid;
	int		 pidfd;		/* the keeper's, until it is reaped */
	uv_poll_t	 exitw;		/* on the pidfd: readable at its exit */
	bool		 unwatched;	/* no pidfd: reaped at SIGCHLD by pid */
	bool		 reaped;
	uv_pipe_t	 ctl;
	bool		 keeper_live;	/* spawned, not yet exited */
	bool		 ctl_open;
	bool		 gone;
	bool		 freed;		/* the owner let go */
	unsigned	 handles;	/* open libuv handles */
	struct frame	 ctl_frame;
	int		 stop_signal;	/* what stopped it, 0 while it runs */
	bool		 have_exit;
	int		 exit_code;
	int		 exit_signal;
	/* A graceful quit was asked of it (or of the debugger before it). */
	bool		 quit_asked;
	/* Its quit detached a target that lives on (gdb-quit.c). */
	bool		 quit_detached;
	/* How it ended: "exit" by itself, "quit", "detach", "term" or "kill". */
	const char	*ended_by;
	struct cgroup	*cg;		/* its tree's cgroup, or NULL */
	bool		 cg_empty;	/* nothing alive in it */
	bool		 orphaned;	/* its keeper died unclean: orphans? */
	struct timer	*watchdog;	/* the keeper's stop deadline */
	uint64_t	 watchdog_at;	/* uv_now() it runs out, or 0 */
	struct timer	*startw;	/* looks at it until it says started */
	char		 fail_stage[32];
	int		 fail_errno;
	bool		 lied;		/* a line it cannot have sent was logged */
	proc_cb		 cb;
	void		*arg;
};

#endif
