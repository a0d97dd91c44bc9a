/*
 * The adoption soak's state, shared by its rounds (test_adopt.c), its
 * streams (adopt-stream.c), its debugger sessions (adopt-gdb.c,
 * adopt-lldb.c), its holds and deadlines (adopt-hold.c), its clients
 * riding out the kills (adopt-client.c) and its end (adopt-end.c).
 */
#ifndef DBGCTL_SOAK_ADOPT_H
#define DBGCTL_SOAK_ADOPT_H

#include "harness.h"

/* Rounds of kill and adoption. */
#define SA_ROUNDS	20
/* The kill comes 0 to this many ms into a round. */
#define SA_KILL_MS	800
/* Or 0 to this many ms after the resume in flight began. */
#define SA_RUN_MS	60
/* No daemon runs for 0 to this many ms. */
#define SA_ABSENT_MS	300
/* A round's deadline session's deadline (ms): past the kill, mostly. */
#define SA_DEADLINE_MS	(2000 * H_SLOW)
/* Lines a streamer writes at once, between its checks for the end. */
#define SA_BATCH	10
/* Batches ahead the expect across the kill waits for: about a second. */
#define SA_AHEAD	20
/* Most streams the soak follows. */
#define SA_STREAMS	16
/* The gdb family's sessions: gdb, gdbserver, remote, qemu. */
#define SA_DBGS		4
/* The long hold's and the long deadline's time (s): the soak's whole. */
#define SA_LONG_S	3600

/* What a stream holds, as the soak checks it. */
enum sa_form {
	SA_LINES,	/* TAG0 EOL TAG1 EOL ..., "end" after a whole batch */
	SA_BEAT,	/* "beat N twice 2N\n" from N = 1 (the beat fixture) */
	SA_EXACT,	/* a prefix of want, which the test knows */
	SA_FREE		/* a debugger's console: only ever appended to */
};

/* One stream of a session and what it has shown so far. */
struct sa_stream {
	long		 id;
	const char	*name;		/* "console", "target" */
	enum sa_form	 form;
	char		 tag;		/* SA_LINES: its lines are TAG0, ... */
	const char	*eol;
	struct h_bytes	 want;		/* SA_EXACT: what it must become */
	struct h_bytes	 seen;		/* the stream as last read */
	size_t		 whole;		/* bytes of whole lines in it */
	long		 lines;
	bool		 ended;		/* its "end" line has come */
	long		 read_next;	/* where its last recv ended */
};

/* A session of the gdb family, stopped at its breakpoint between rounds. */
struct sa_dbg {
	const char	*what;		/* "gdb", "gdbserver", "remote", "qemu" */
	long		 id;
	const char	*func;		/* where its breakpoint stops it */
	const char	*where;		/* its breakpoint's location */
	long		 seq;		/* its target's seq at the last stop */
	int		 hits;
	struct sa_stream *target;	/* what the stops print, or NULL */
	struct sa_stream *console;
	char		 pending;	/* qemu: the byte its stop holds */
};

/* A client that follows the soak through every kill. */
struct sa_clients {
	struct h_pty	 pty;		/* attach ID, on the test's pty */
	long		 attached;	/* the session it is attached to */
	size_t		 pty_off;	/* what the checks saw of its screen */
	int		 again;		/* "attached again" lines seen */
	struct h_proc	 follow;	/* logs -f ID */
	struct sa_stream *followed;	/* the stream it follows */
	struct h_bytes	 out;		/* what it printed */
};

/* The soak: its generator, sessions, streams and the dead daemons' logs. */
struct sa {
	unsigned	 seed;
	unsigned	 rng;
	int		 round;
	char		 where[64];	/* "seed S round R", for messages */
	char		 flag[PATH_MAX];	/* its file ends the streamers */
	long		 echo;
	struct sa_dbg	 dbg[SA_DBGS];
	int		 ndbg;
	long		 lldb;
	pid_t		 lldb_pid;
	int		 lldb_answers;
	struct h_proc	 server;	/* the remote session's gdbserver */
	struct h_bytes	 server_err;
	long		 deadline[SA_ROUNDS];
	long		 held_id;	/* held for SA_LONG_S by hold --ttl */
	long		 held_left;	/* its hold's left_ms, last seen */
	long		 due_id;	/* with a deadline of SA_LONG_S */
	long		 due_left;	/* its deadline's in_ms, last seen */
	double		 long_t_set;	/* before both were set */
	double		 long_t0;	/* when both were set */
	struct sa_stream st[SA_STREAMS];
	int		 nst;
	struct h_bytes	 sent;		/* every line echo was sent, in order */
	int		 reads;
	int		 lost;		/* resumes, execs lost with their daemon */
	int		 rode;		/* expects that rode out a kill */
	int		 held;		/* holds found after an adoption */
	int		 early;		/* deadlines that fired before the kill */
	struct sa_clients cl;
	bool		 cgroups;	/* the daemon put sessions in cgroups */
	struct h_bytes	 logs;		/* what the killed daemons logged */
};

/* test_adopt.c */
const char *sa_logs(struct sa *);
long	 sa_launch(const char *const args[]);

/* adopt-stream.c */
struct sa_stream *sa_stream_add(struct sa *, long id, const char *name,
	    enum sa_form);
char	*sa_stream_read(struct sa *, long id, const char *name, size_t *len);
void	 sa_stream_check(struct sa *, struct sa_stream *);
void	 sa_stream_read_at(struct sa *, struct sa_stream *);
void	 sa_stream_expect(struct sa *, struct sa_stream *, size_t from,
	    const char *text);
void	 sa_stream_expect_re(struct sa *, struct sa_stream *, size_t from,
	    const char *re);
void	 sa_stream_expect_next(struct sa *, struct sa_stream *);
void	 sa_stream_expect_start(struct sa *, struct sa_stream *,
	    struct h_proc *);
void	 sa_stream_expect_end(struct sa *, struct h_proc *);
void	 sa_stream_echo(struct sa *, const char *line);

/* adopt-gdb.c */
void	 sa_gdb_start(struct sa *);
void	 sa_gdb_hit(struct sa *, struct sa_dbg *);
void	 sa_gdb_hit_start(struct sa *, struct sa_dbg *, struct h_proc *);
void	 sa_gdb_hit_end(struct sa *, struct sa_dbg *, struct h_proc *);
void	 sa_gdb_check(struct sa *, struct sa_dbg *);

/* adopt-lldb.c */
void	 sa_lldb_start(struct sa *);
void	 sa_lldb_check(struct sa *);
void	 sa_lldb_exec_start(struct sa *, struct h_proc *);
void	 sa_lldb_exec_end(struct sa *, struct h_proc *);

/* adopt-hold.c */
void	 sa_hold_start(struct sa *);
void	 sa_hold_round(struct sa *);
void	 sa_hold_check(struct sa *);

/* adopt-client.c */
void	 sa_client_start(struct sa *, struct sa_stream *followed);
void	 sa_client_check(struct sa *);
void	 sa_client_wait_connected(struct sa *, struct h_proc *,
	    const char *what);
void	 sa_client_end(struct sa *);

/* adopt-end.c */
bool	 sa_end_listed(long id, bool *held);
int	 sa_end_procs(char *report, size_t len);
bool	 sa_end_no_procs(void *);
int	 sa_end_keeper_socks(char *buf, size_t len);
bool	 sa_end_no_socks(void *);
void	 sa_end_streams(struct sa *);
void	 sa_end_stop_all(struct sa *);

#endif
