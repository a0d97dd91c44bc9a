/*
 * The verdict files' own: a session's watch (its deadline, its silence and
 * the verdict being gathered), shared by verdict.c (the watch and what
 * follows a verdict) and verdict-gather.c (what a verdict records).
 */
#ifndef DBGCTL_VERDICT_H
#define DBGCTL_VERDICT_H

#include "daemon.h"

/* A session's deadline and silence, and the verdict being gathered. */
struct verdict_watch {
	struct session	*s;
	struct timer	*deadline;
	uint64_t	 deadline_at;	/* uv_hrtime() it runs out, or 0: none */
	struct timer	*silence;
	uint64_t	 armed_at;	/* uv_now() the session ran */
	uint64_t	 last_console;	/* uv_now() of its last byte, or 0 */
	uint64_t	 last_target;
	uint64_t	 last_semihost;
	struct sink	*sink;		/* the streams' bytes, for the above */
	struct timer	*gather;	/* bounds the gathering */
	struct timer	*end;		/* stops the session after it */
	json_t		*pending;	/* the verdict being gathered */
	bool		 given;		/* a deadline or silence verdict is out */
	bool		 bundled;	/* and its automatic bundle is written */
	bool		 stopping;	/* and the session is to be stopped */
};

/* verdict.c */
void	 verdict_publish(struct verdict_watch *);

/* verdict-gather.c */
void	 verdict_gather(struct verdict_watch *, const char *kind);

#endif
