/*
 * dbgctl-keeper: the names its files share, grouped by the file that defines
 * them.
 */
#ifndef DBGCTL_KEEPER_H
#define DBGCTL_KEEPER_H

#include <sys/types.h>

#include <stdbool.h>
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

/* keeper-control.c */
void		keeper_control_read(struct keeper *);

/* keeper-hold.c */

#define KEEPER_MAX_HOLD		16	/* held fds; fds queued for a line */
#define KEEPER_HOLD_NAME	32	/* a NAME's 1..31 chars and its NUL */

/* The fds the daemon gave the keeper to keep, and those not yet named. */
struct keeper_hold {
	char	names[KEEPER_MAX_HOLD][KEEPER_HOLD_NAME];
	int	fds[KEEPER_MAX_HOLD];	/* in the order they were held */
	size_t	n;
	int	queue[KEEPER_MAX_HOLD];	/* received, FIFO, for "hold" lines */
	size_t	nqueue;
};

struct msghdr;
void		keeper_hold_receive(struct keeper *, struct msghdr *);
void		keeper_hold_add(struct keeper *, const char *);
void		keeper_hold_release(struct keeper *, const char *);
void		keeper_hold_flush(struct keeper *);
void		keeper_hold_close(struct keeper *);
int		keeper_hold_take(struct keeper *);
int		keeper_hold_fd(struct keeper *, const char *);

/* keeper-pump.c */

#define KEEPER_PUMP_MAX		2	/* ptys pumped: a process's own, gdb's program's */
#define KEEPER_PUMP_DESTS	2	/* pipes one pty is copied into */
#define KEEPER_PUMP_CHUNK	4096	/* PIPE_BUF: a pipe takes it whole or not */
#define KEEPER_PUMP_ROUNDS	16	/* chunks one turn of the loop moves */
#define KEEPER_PUMP_FINISH_MS	5000	/* for the daemon to take the last chunk */

/* A held pty's output, copied into the pipes the daemon reads. */
struct keeper_pump {
	char	src[KEEPER_HOLD_NAME];	/* the held fd it reads */
	int	slave;			/* the pty's, kept open, or -1 */
	int	dest[KEEPER_PUMP_DESTS];	/* pipes' write ends, or -1 */
	int	pending[KEEPER_PUMP_DESTS];	/* still owed the chunk */
	size_t	ndest;
	char	*chunk;			/* KEEPER_PUMP_CHUNK bytes, its own */
	size_t	len;
	int	ended;			/* the source ended, or was released */
};

struct pollfd;
void		keeper_pump_add(struct keeper *, const char *);
void		keeper_pump_release(struct keeper *, const char *);
void		keeper_pump_drain(struct keeper *, bool);
size_t		keeper_pump_poll(struct keeper *, struct pollfd *);
void		keeper_pump_close(struct keeper *);

/* keeper-adopt.c */

#define KEEPER_ADOPT_LINE	"adopt\n"
#define KEEPER_ADOPT_WAIT_MS	5000	/* for an adopter's "adopt" line */

/* The socket a new daemon adopts the keeper through, and the adoption. */
struct keeper_adopt {
	const char	*path;		/* --adopt, or NULL */
	long long	 grace_ms;	/* --grace */
	int		 lfd;		/* listening, or -1 */
	int		 bound;		/* path is the keeper's socket */
	dev_t		 dev;
	ino_t		 ino;
	int		 afd;		/* yet to say "adopt", or -1 */
	size_t		 alen;		/* bytes of its line read */
	int64_t		 adeadline;	/* when it is dropped */
	int		 adrift;	/* no daemon: waiting to be adopted */
	int64_t		 deadline;	/* when the grace ends */
};

void		keeper_adopt_listen(struct keeper *);
void		keeper_adopt_lost(struct keeper *);
void		keeper_adopt_tick(struct keeper *);
int		keeper_adopt_timeout(struct keeper *);
void		keeper_adopt_accept(struct keeper *);
void		keeper_adopt_read(struct keeper *);
void		keeper_adopt_close(struct keeper *);

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

	/* What was reported, kept for an adopter's snapshot. */
	int			  started;	/* the program exec'd */
	int			  fail_stage;	/* or failed here, or -1 */
	int			  fail_error;
	int			  stopsig;	/* stopped by it now, or 0 */
	int			  exit_status;	/* once main_reaped */
	enum keeper_phase	  exit_phase;

	enum keeper_phase	  phase;
	int64_t			  deadline;

	char			  line[KEEPER_LINE_MAX];
	size_t			  linelen;
	int			  discard;

	struct keeper_tree	  tree;
	struct keeper_hold	  hold;
	struct keeper_pump	  pumps[KEEPER_PUMP_MAX];
	size_t			  npumps;
	struct keeper_adopt	  adopt;
};

int64_t		keeper_now_ns(void);
int		keeper_ms_until(int64_t);
long long	keeper_number(const char *, long long, long long,
		    const char **);
__dead void	keeper_fail(struct keeper *, const char *, int, int);
void		keeper_daemon_gone(struct keeper *);
void		keeper_stop(struct keeper *, long long);
void		keeper_kill_now(struct keeper *);

/* keeper-report.c */
void		keeper_report_write(struct keeper *, const char *, size_t);
void		keeper_report_send(struct keeper *, const char *, const char *,
		    long, const char *);
void		keeper_report_exec(struct keeper *);
void		keeper_report_exit(struct keeper *, int);
void		keeper_report_stop(struct keeper *, int);
size_t		keeper_report_line(char *, size_t, const char *, const char *, long,
		    const char *);
size_t		keeper_report_state(struct keeper *, char *, size_t);

/* keeper-setup.c */
void		keeper_setup(struct keeper *, int, char **);

#endif
