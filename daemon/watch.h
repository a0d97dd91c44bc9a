/*
 * Live watch (watch.c, watch-sample.c, method-watch.c): expressions gdb
 * resolves once to an address, a size and a type, then sampled at a rate
 * over live memory (live.h) while the target runs, each sample a JSON
 * line on the session's "watch" stream. gdb is asked only what it works
 * out from the program's symbols (sizeof, &, casts of constants), never
 * the target's memory, so resolving does not halt the target either.
 */
#ifndef DBGCTL_WATCH_H
#define DBGCTL_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon.h"

/* The rate a watch samples at unless "hz" says (samples a second). */
#define WATCH_HZ_DEFAULT	10
/* The most a watch may ask: through shared RAM, through QEMU's monitor. */
#define WATCH_HZ_MAX_SHM	1000
#define WATCH_HZ_MAX_QMP	200
/* Expressions a watch samples, at most; watches a session has at once. */
#define WATCH_EXPRS_MAX		32
#define WATCH_MAX		8
/* Bytes between two expressions that one read still spans. */
#define WATCH_SPAN_GAP		64
/* Ticks whose reads may wait for QEMU's monitor at once; past it ticks are skipped. */
#define WATCH_INFLIGHT		8

/* How a watched value's bytes become JSON. */
enum watch_type {
	WATCH_SIGNED,
	WATCH_UNSIGNED,
	WATCH_FLOAT,
	WATCH_POINTER,
};

/* One watched expression, once resolved. */
struct watch_expr {
	char		*text;		/* as the client gave it */
	uint64_t	 addr;
	size_t		 size;		/* 1, 2, 4 or 8 */
	enum watch_type	 type;
	/* What gdb said while resolving: */
	long long	 integral;	/* (typeof(e))1.5 == 1: 1 not a float */
	long long	 is_signed;	/* (typeof(e))-1 < 0 */
	bool		 pointer;	/* sizeof(*(e)) was answered */
	char		*error;		/* the first refusal, if any */
	size_t		 span;		/* the read that covers it */
	size_t		 off;		/* where it is in that read */
};

/* A read that covers one or more expressions next to each other. */
struct watch_span {
	uint64_t	 addr;
	size_t		 len;
	size_t		 boff;		/* where its bytes are in a tick's */
};

struct watch_slot;

/* One span's read for one tick, while QEMU's monitor answers it. */
struct watch_read {
	struct watch_slot	*slot;
	size_t			 span;
	struct live_op		*op;
};

/* A tick being read: its time, its bytes, its reads still waiting. */
struct watch_slot {
	struct watch		*w;
	uint64_t		 tick;
	uint64_t		 ns;		/* CLOCK_MONOTONIC when it was read */
	size_t			 reading;
	bool			 failed;	/* a read of it failed */
	unsigned char		*bytes;		/* every span's, one after another */
	struct watch_read	*reads;		/* one a span */
};

struct watch_set;
struct watch_ask;
struct watch_clock;

/* One watch of a session: its expressions, its rate, its timer. */
struct watch {
	TAILQ_ENTRY(watch)	 entry;
	struct watch_set	*set;
	struct session		*s;
	struct conn		*owner;		/* the connection that started it */
	unsigned long		 id;
	unsigned		 hz;
	struct watch_expr	*exprs;
	size_t			 nexprs;
	struct watch_span	*spans;
	size_t			 nspans;
	/* Resolving: gdb's answers still to come, and who hears the end. */
	struct mi		*mi;
	unsigned long		*tokens;
	struct watch_ask	*asks;		/* what each token asked */
	size_t			 ntokens;
	size_t			 waiting;
	void			(*started)(void *, struct watch *,
				    const struct rpc_error *);
	void			*started_arg;
	/* Sampling (watch-sample.c): */
	bool			 running;
	struct watch_clock	*clock;		/* watch-sample.c's timerfd */
	uint64_t		 t0;		/* CLOCK_MONOTONIC of tick 0, ns */
	double			 t0_real;	/* its unix time */
	uint64_t		 period;	/* ns */
	uint64_t		 next;		/* the next tick to take */
	struct watch_slot	 slots[WATCH_INFLIGHT]; /* a ring of ticks */
	size_t			 head;		/* the oldest being read */
	size_t			 busy;		/* ticks being read */
	size_t			 nbytes;	/* a tick's bytes, all spans */
	uint64_t		 samples;
	uint64_t		 skipped;	/* ticks not sampled, in all */
	uint64_t		 skipped_new;	/* since the last sample */
	json_t			*last;		/* the last sample */
};
TAILQ_HEAD(watches, watch);

/* A watch's start was resolved, or refused (err set, w is then freed). */
typedef void (*watch_started_cb)(void *arg, struct watch *,
    const struct rpc_error *);

/* watch.c */
struct watch	*watch_start(struct session *, struct mi *, json_t *exprs,
		    unsigned hz, watch_started_cb, void *arg,
		    struct rpc_error *);
void		 watch_stop(struct watch *, const char *why);
struct watch	*watch_find(struct session *, unsigned long id);
json_t		*watch_json(const struct watch *);
json_t		*watch_list(struct session *);
void		 watch_forget_conn(struct conn *);

/* watch-sample.c */
void		 watch_sample_start(struct watch *);
void		 watch_sample_stop(struct watch *, const char *why);
int		 watch_sample_spans(struct watch *, char *err, size_t errlen);

#endif
