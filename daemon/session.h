/*
 * The session files' own: what session.c, session-state.c, session-proc.c,
 * session-pump.c, session-stop.c, session-stream.c and session-prune.c ask
 * of each other, which no other file calls (the unit tests of the table
 * and the streams aside). Grouped by the file that defines each name.
 */
#ifndef DBGCTL_SESSION_H
#define DBGCTL_SESSION_H

#include "daemon.h"

/* session.c */
void			 session_end(struct session *);

/* session-stream.c */
void			 session_stream_init(struct session *);
void			 session_stream_end(struct session *);
void			 session_stream_free(struct session *);
void			 session_stream_remove(struct session *);

/* session-prune.c */
void			 session_prune_ended(struct session *);
void			 session_prune(void);
double			 session_prune_left(const struct session *);
void			 session_prune_soon(void);

/* session-proc.c */
bool			 session_proc_done(const struct session_proc *);
void			 session_proc_release(struct session *, const char *);

/* session-pump.c */
void			 session_pump_start(struct session_proc *);
void			 session_pump_adopt(struct session_proc *);

/* session-stop.c: the ordered teardown against one deadline. */
void			 session_stop_begin(struct session *, bool graceful);
void			 session_stop_helpers(struct session *);
void			 session_stop_killed(struct session *);
void			 session_stop_end(struct session *);

/* session-state.c: the one table that decides. */
enum session_input {
	SI_READY,	/* the backend says the session is ready */
	SI_STOP,	/* someone asked for a stop */
	SI_FAIL,	/* it cannot go on: the why is recorded */
	SI_EXIT,	/* the main process exited */
	SI_GONE,	/* every process is gone and its output is in */
	SI_STARTED,	/* a process exec'd (with its session_proc) */
	SI_NINPUTS
};

void	 session_feed(struct session *, enum session_input);
void	 session_input(struct session *, enum session_input, const void *);

#endif
