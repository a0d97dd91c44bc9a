/*
 * The expect files' own: an expect's state, shared by expect.c (its life,
 * the window and the turns) and expect-match.c (the calls into PCRE2 and
 * their bounds).
 */
#ifndef DBGCTL_EXPECT_STATE_H
#define DBGCTL_EXPECT_STATE_H

#include "expect.h"

#include "pattern.h"

/*
 * How slowly a call goes: at level 0 many starts with few backtracking
 * steps from each, and where a start needs more, its run of starts is
 * tried again a level down, fewer starts with more steps, down to one
 * start with EXPECT_SLOW_STEPS; the product stays near a million.
 */
#define EXPECT_LEVELS		4
#define EXPECT_SLOW_STEPS	1000000
/*
 * On the loop's thread: starts a call (shared by the patterns) and steps
 * from each, the most unscanned bytes it takes on (times the patterns),
 * and how long one call may take (ns) before the expect goes to the
 * matcher's thread.
 */
#define EXPECT_INLINE_STARTS	64
#define EXPECT_INLINE_STEPS	32
#define EXPECT_INLINE_SPAN	4096
#define EXPECT_INLINE_CALL_NS	(200 * 1000)
/* Bytes given to the matcher's thread at once, where there are so many. */
#define EXPECT_BATCH		(512 * 1024)
/* The matcher thread's slice of one expect before the next one's turn (ns). */
#define EXPECT_SLICE_NS		(10 * 1000 * 1000)
/*
 * A call's starts, times the bytes from its first start to the end of what
 * it may look at: kept within this by trying fewer starts (one at least).
 */
#define EXPECT_CALL_SCAN	(24 * 1024 * 1024)
/* Bytes past the last start a call may look at first (doubled as needed). */
#define EXPECT_REACH		1024
/* An expect's matching time: a first allowance, and more per 4 KiB taken in (ns). */
#define EXPECT_BUDGET_NS	(250 * 1000 * 1000ULL)
#define EXPECT_BUDGET_PER_4K	(1000 * 1000ULL)
/* The failure of an expect that went past its budget (not PCRE2's). */
#define EXPECT_OVER_BUDGET	1

/*
 * One waiter: its stream, its patterns, the window of the stream it may
 * still match in, and whom to tell of the outcome.
 */
struct expect {
	TAILQ_ENTRY(expect)	 entry;		/* on expect_busy while it has work */
	bool			 busy;
	TAILQ_ENTRY(expect)	 wentry;	/* on the matcher's queues */
	bool			 heavy;		/* matched on the matcher's thread */
	bool			 away;		/* the matcher has it: hands off */
	bool			 queued;	/* on its todo queue (its lock's) */
	bool			 dead;		/* freed while away */
	enum expect_result	 wresult;	/* the matcher's answer */
	struct session		*s;
	struct output		*o;
	char			*stream;
	uint64_t		 from;
	struct pattern		*pats[EXPECT_PATTERNS_MAX];
	size_t			 npats;
	uint32_t		 lookbehind;	/* bytes kept before scan */
	char			*buf;		/* the stream's bytes [base, fed) */
	size_t			 len, cap;
	uint64_t		 base;
	uint64_t		 fed;		/* the next byte to take in */
	uint64_t		 scan;		/* where the next try starts */
	uint64_t		 stalled;	/* fed when a partial match waited */
	uint64_t		 until[EXPECT_LEVELS];	/* starts before it: that level */
	size_t			 reach;		/* bytes a call looks past its starts */
	size_t			 index;		/* the pattern that matched */
	size_t			*ov;		/* its offsets */
	bool			 matched;
	bool			 final;		/* no more bytes: no partial matching */
	int			 failed;	/* why matching failed, or 0 */
	uint64_t		 spent;		/* matching time (ns) */
	uint64_t		 spent_by[EXPECT_PATTERNS_MAX];
	uint64_t		 taken;		/* bytes taken in */
	uint64_t		 deadline;	/* time ran out with this much in */
	bool			 timed_out;
	expect_cb		 cb;
	void			*arg;
};

/* expect.c */
void			 expect_back(struct expect *);
void			 expect_destroy(struct expect *);

/* expect-match.c */
bool			 expect_match_limit(int);
enum expect_result	 expect_match_scan(struct expect *,
			    struct pattern_matcher *, bool inline_,
			    uint64_t until);

/* expect-worker.c */
void			 expect_worker_give(struct expect *);
bool			 expect_worker_take(struct expect *);

#endif
