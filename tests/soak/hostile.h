/*
 * Hostile peers of a daemon, in a child process of their own: tokenless
 * TCP connections held idle, slowloris lines dribbled a byte at a time,
 * token guesses, and the owner's own heavy batches and pipelined lines
 * read slowly. The soak's hostile phase and the benchmark run them beside
 * an owner's client; this file links nothing of the project's, as the
 * test harness's raw client does not.
 */
#ifndef DBGCTL_TEST_HOSTILE_H
#define DBGCTL_TEST_HOSTILE_H

#include <sys/types.h>

/* What the peers do and for how long; the counts they end with. */
struct hostile {
	/* Set by the caller (0 or NULL: that attack is not made). */
	const char	*unix_path;	/* the owner's socket: batches, pipelines */
	int		 tcp_port;	/* the daemon's TCP listener on loopback */
	int		 flood;		/* idle tokenless connections to hold */
	int		 slowloris;	/* tokenless ones sending a byte a tick */
	int		 guessers;	/* connections guessing tokens in a loop */
	int		 batch;		/* list calls in each batch line */
	int		 pipelined;	/* list lines written at once */
	double		 seconds;	/* how long the attack lasts */

	/* Set by hostile_start and hostile_wait. */
	pid_t		 pid;
	int		 fd;		/* the child's report comes on it */
	char		 report[512];	/* its counts, in words */
	int		 owner_dropped;	/* owner connections the daemon closed */
	long		 batch_replies;	/* batch replies taken whole */
	long		 pipelined_replies; /* pipelined replies taken */
};

/* Start the peers in a child process; 0, or -1 with errno. */
int	 hostile_start(struct hostile *);
/* Wait up to bound_s for the peers to end; 0 with the report, or -1. */
int	 hostile_wait(struct hostile *, double bound_s);
/* Kill the peers if they still run (for a failing test's cleanup). */
void	 hostile_kill(struct hostile *);

#endif
