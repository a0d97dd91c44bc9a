/*
 * Expect: waiting for patterns on a session's stream, for method-expect.c
 * and the daemon's end (its state: expect-state.h, the expect files' own).
 */
#ifndef DBGCTL_EXPECT_H
#define DBGCTL_EXPECT_H

#include "daemon.h"

/* expect.c */
/* How far back from the newest byte a match may begin. */
#define EXPECT_WINDOW (1024 * 1024)
/* Patterns one expect tries. */
#define EXPECT_PATTERNS_MAX 64

enum expect_result {
	EXPECT_MATCH,	/* a pattern matched */
	EXPECT_END,	/* the stream ended first */
	EXPECT_MORE,	/* waiting for bytes */
	EXPECT_BUSY,	/* bytes are there: matching goes on next turn */
	EXPECT_FAILED,	/* matching hit one of PCRE2's limits */
	EXPECT_TIMEOUT,	/* time ran out before a match */
	EXPECT_AWAY,	/* the matcher's thread has it (expect.c's own) */
};
struct expect;
typedef void (*expect_cb)(void *arg, struct expect *, enum expect_result);

struct expect		*expect_new(struct session *, const char *stream,
			    struct output *, uint64_t from);
int			 expect_add(struct expect *, const char *, size_t,
			    bool exact, uint32_t options, struct rpc_error *);
enum expect_result	 expect_start(struct expect *, expect_cb, void *);
void			 expect_wake(struct expect *);
void			 expect_poke(struct expect *);
enum expect_result	 expect_time_up(struct expect *);
void			 expect_failure(struct expect *, char *, size_t);
uint64_t		 expect_next(struct expect *);
size_t			 expect_cost(const struct expect *);
void			 expect_worker_stop(void);
void			 expect_free(struct expect *);

/* expect-answer.c: what an expect answers, its match as JSON text. */
char			*expect_answer(struct expect *, size_t *);
json_t			*expect_answer_got(struct expect *);

#endif
