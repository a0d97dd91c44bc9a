/*
 * The proc files' own: a keeper's record, whose fields proc.c, proc-report.c
 * and proc-keepers.c alone read and change; every other file holds a struct
 * proc as an opaque handle and asks proc.c's functions (proc_pid, proc_exit,
 * proc_mark_detached, ...). Grouped by the file that defines each name.
 */
#ifndef DBGCTL_PROC_H
#define DBGCTL_PROC_H

#include "daemon.h"

struct cgroup;

struct proc {
	TAILQ_ENTRY(proc) entry;	/* in proc_all until freed */
	RB_ENTRY(proc)	 keeper_entry;	/* in proc-keepers.c's tree while live */
	char		*exec_name;	/* what the keeper execs */
	pid_t		 pid;
	pid_t		 keeper_pid;
	int		 pidfd;		/* the keeper's, until it is reaped */
	uv_poll_t	 exitw;		/* on the pidfd: readable at its exit */
	bool		 unwatched;	/* no pidfd: reaped at SIGCHLD by pid */
	bool		 adopted;	/* a dead daemon's: not our child */
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

/* proc.c */
void		 proc_handle_closed(uv_handle_t *);
void		 proc_check_gone(struct proc *);

/* proc-report.c: what one line of a keeper says ("started", "failed", ...). */
enum proc_report_kind {
	PROC_REPORT_STARTED,	/* n: the program's pid */
	PROC_REPORT_FAILED,	/* word: the stage; n: its errno */
	PROC_REPORT_EXIT,	/* n: the code, or the signal; how */
	PROC_REPORT_STOPPED,	/* n: the signal that stopped it */
	PROC_REPORT_CONTINUED,	/* n: 0 */
};
/* The highest errno a "failed" line may carry. */
#define PROC_REPORT_ERRNO_MAX 4095

struct proc_report {
	enum proc_report_kind	 kind;
	long			 n;
	bool			 signal;	/* exit: n is a signal */
	char			 word[8];	/* failed: setup ... exec */
	char			 how[8];	/* exit: run, term, kill */
};

int		 proc_report_parse(const char *, size_t, struct proc_report *);
int		 proc_report_stat(pid_t, pid_t *ppid, char *state);
void		 proc_report_read_cb(uv_stream_t *, ssize_t, const uv_buf_t *);

/* proc-spawn.c */
pid_t		 proc_spawn_keeper(const struct proc_spec *, const char *keeper,
		    const struct cgroup *, int ctl);

/* proc-keepers.c */
void		 proc_keepers_add(struct proc *);
void		 proc_keepers_remove(struct proc *);

#endif
