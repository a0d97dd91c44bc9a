/*
 * The adoption soak's state, shared by its rounds (test_adopt.c) and its
 * gdb session's checks (adopt-gdb.c).
 */
#ifndef DBGCTL_SOAK_ADOPT_H
#define DBGCTL_SOAK_ADOPT_H

#include "harness.h"

/* Rounds of kill and adoption. */
#define SA_ROUNDS	20
/* The kill comes 0 to this many ms into a round. */
#define SA_KILL_MS	800
/* No daemon runs for 0 to this many ms. */
#define SA_ABSENT_MS	300
/* A round's deadline session's deadline (ms): past the kill, mostly. */
#define SA_DEADLINE_MS	(2000 * H_SLOW)
/* Lines a streamer writes at once, between its checks for the end. */
#define SA_BATCH	50

/* One stream of a streaming session and what it has shown so far. */
struct sa_stream {
	long		 id;
	const char	*name;		/* "console", "target" */
	char		 tag;		/* its lines are TAG0, TAG1, ... */
	const char	*eol;
	struct h_bytes	 seen;		/* the stream as last read */
	size_t		 whole;		/* bytes of whole lines in it */
	long		 lines;
	bool		 ended;		/* its "end" line has come */
};

/* The soak: its generator, sessions, streams and the dead daemons' logs. */
struct sa {
	unsigned	 seed;
	unsigned	 rng;
	int		 round;
	char		 where[64];	/* "seed S round R", for messages */
	char		 flag[PATH_MAX];	/* its file ends the streamers */
	long		 echo;
	long		 gdb;		/* gdb, stopped at a breakpoint */
	long		 gdb_seq;	/* its target's seq at the last stop */
	int		 hits;
	long		 deadline[SA_ROUNDS];
	struct sa_stream st[3];	/* tx's target and console, con's console */
	struct h_bytes	 sent;		/* every line echo was sent, in order */
	long		 read_next;	/* where tx's last read ended */
	int		 reads;
	int		 held;		/* holds found after an adoption */
	int		 early;		/* deadlines that fired before the kill */
	struct h_bytes	 logs;		/* what the killed daemons logged */
};

/* test_adopt.c */
const char *sa_logs(struct sa *);
long	 sa_launch(const char *const args[]);

/* adopt-gdb.c */
void	 sa_gdb_start(struct sa *);
void	 sa_gdb_hit(struct sa *);
void	 sa_gdb_check(struct sa *);

#endif
