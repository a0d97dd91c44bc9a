/* dbgctl-keeper: the state shared by its files. */
#ifndef DBGCTL_KEEPER_H
#define DBGCTL_KEEPER_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#ifndef __dead
#define __dead __attribute__((__noreturn__))
#endif

#define KEEPER_CTL_FD		3
#define KEEPER_MAX_KEEP		32
#define KEEPER_LINE_MAX		256
#define KEEPER_MAX_MS		86400000LL
#define KEEPER_DEFAULT_MS	5000
#define KEEPER_TICK_NS		(50 * 1000000LL)
#define KEEPER_MS_NS		1000000LL

/* Where the child failed before exec, as reported through the error pipe. */
enum keeper_child_stage {
	KEEPER_CHILD_SETUP,
	KEEPER_CHILD_CHDIR,
	KEEPER_CHILD_EXEC
};

/* What the keeper is doing to its descendants. */
enum keeper_phase {
	KEEPER_RUN,		/* supervising */
	KEEPER_TERM,		/* SIGTERM sent, SIGKILL at the deadline */
	KEEPER_KILL		/* SIGKILL every tick until no child is left */
};

/* The message the child writes to the error pipe when it cannot exec. */
struct keeper_child_err {
	int	stage;
	int	error;
};

/* One process seen in /proc. */
struct keeper_tree_proc {
	pid_t			pid;
	pid_t			ppid;
	unsigned long long	start;
	int			desc;
};

/* The process table of one scan of /proc. */
struct keeper_tree {
	struct keeper_tree_proc	*procs;
	size_t			 n;
	size_t			 cap;
	pid_t			 self;
};

/* Everything the keeper knows. */
struct keeper {
	const char		 *cwd;
	char			**argv;
	int			  keep[KEEPER_MAX_KEEP];
	size_t			  nkeep;
	int			  stdio[2];	/* fds to become 0 and 1, or -1 */
	long long		  stop_ms;

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

/* keeper-child.c */
void		keeper_child_sort_fds(int *, size_t);
void		keeper_child_close_except(const int *, size_t, int);
__dead void	keeper_child_exec(struct keeper *, int);

/* keeper-tree.c */
int		keeper_tree_read_stat(pid_t, pid_t *, unsigned long long *);
size_t		keeper_tree_signal(struct keeper_tree *, pid_t, int);
void		keeper_tree_free(struct keeper_tree *);

#endif
