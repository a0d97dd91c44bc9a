/*
 * dbgctl-keeper: the names its files share, grouped by the file that defines
 * them.
 */
#ifndef DBGCTL_KEEPER_H
#define DBGCTL_KEEPER_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#ifndef __dead
#define __dead __attribute__((__noreturn__))
#endif

struct keeper;

/* keeper-tree.c */

/* The fields of one /proc/PID/stat line that the keeper uses. */
struct keeper_tree_stat {
	pid_t			pid;
	char			state;
	pid_t			ppid;
	unsigned long long	start;	/* clock ticks after boot */
};

/* One process seen in /proc. */
struct keeper_tree_proc {
	pid_t			pid;
	pid_t			ppid;
	unsigned long long	start;
};

/* The keeper's descendants, as one walk of /proc found them. */
struct keeper_tree {
	struct keeper_tree_proc	*procs;
	size_t			 n;
	size_t			 cap;
	pid_t			 self;
};

int		keeper_tree_parse_stat(const char *, size_t,
		    struct keeper_tree_stat *);
size_t		keeper_tree_signal(struct keeper_tree *, pid_t, int);
void		keeper_tree_free(struct keeper_tree *);

/* keeper-child.c */

/* Where the child failed before exec, as reported through the error pipe. */
enum keeper_child_stage {
	KEEPER_CHILD_SETUP,
	KEEPER_CHILD_CHDIR,
	KEEPER_CHILD_EXEC
};

/* The message the child writes to the error pipe when it cannot exec. */
struct keeper_child_err {
	int	stage;
	int	error;
};

void		keeper_child_sort_fds(int *, size_t);
void		keeper_child_close_except(const int *, size_t, int);
__dead void	keeper_child_exec(struct keeper *, int);

/* keeper.c */

#define KEEPER_CTL_FD		3	/* the control socket to the daemon */
#define KEEPER_MAX_MS		86400000LL	/* the longest stop timeout */
#define KEEPER_MAX_KEEP		32	/* --keep-fd, --stdin-fd, --stdout-fd */
#define KEEPER_LINE_MAX		256	/* a longer control line is dropped */

/* What the keeper is doing to its descendants. */
enum keeper_phase {
	KEEPER_RUN,		/* supervising */
	KEEPER_HANGUP,		/* the daemon is gone: SIGHUP sent to the program */
	KEEPER_TERM,		/* SIGTERM sent, SIGKILL at the deadline */
	KEEPER_KILL		/* SIGKILL every tick until no child is left */
};

/* Everything the keeper knows. */
struct keeper {
	const char		 *cwd;
	const char		 *cgroup;	/* join DIR/cgroup.procs, or NULL */
	long long		  nofile;	/* the program's soft fd limit, or 0 */
	char			**argv;
	int			  keep[KEEPER_MAX_KEEP];
	size_t			  nkeep;
	int			  stdio[2];	/* become 0 and 1, or -1 */
	long long		  stop_ms;
	long long		  hangup_ms;	/* --hangup: the program's time to end */

	pid_t			  self;
	pid_t			  ppid;
	int			  ctl;
	int			  sfd;
	int			  errfd;

	pid_t			  main_pid;
	int			  main_reaped;
	int			  quiet;	/* "failed" sent: no "exit" */

	enum keeper_phase	  phase;
	int64_t			  deadline;

	char			  line[KEEPER_LINE_MAX];
	size_t			  linelen;
	int			  discard;

	struct keeper_tree	  tree;
};

long long	keeper_number(const char *, long long, long long,
		    const char **);
__dead void	keeper_fail(struct keeper *, const char *, int, int);

/* keeper-setup.c */
void		keeper_setup(struct keeper *, int, char **);

#endif
