/*
 * Compiled patterns (pattern.c), for the expect files that match with
 * them (expect.c, expect-match.c, expect-worker.c) and their unit test.
 */
#ifndef DBGCTL_PATTERN_H
#define DBGCTL_PATTERN_H

#include "daemon.h"

struct pattern;
struct pattern		*pattern_get(const char *, size_t, uint32_t options,
			    struct rpc_error *);
void			 pattern_put(struct pattern *);
size_t			 pattern_cost(const struct pattern *);
uint32_t		 pattern_groups(const struct pattern *);
uint32_t		 pattern_lookbehind(const struct pattern *);
const char		*pattern_text(const struct pattern *);
void			 pattern_names(const struct pattern *, uint32_t *,
			    uint32_t *, const unsigned char **);
void			 pattern_usage(size_t *, size_t *);
void			 pattern_error(int, char *, size_t);
struct pattern_matcher;
struct pattern_matcher	*pattern_matcher_new(void);
void			 pattern_matcher_free(struct pattern_matcher *);
int			 pattern_match(struct pattern_matcher *, struct pattern *,
			    const char *, size_t, size_t start, size_t last,
			    uint32_t steps, uint32_t opts);
const size_t		*pattern_ovector(const struct pattern_matcher *);

#endif
