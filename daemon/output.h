/*
 * The output files' own: what output.c asks of output-cache.c,
 * output-times.c and output-lines.c, which no other file calls.
 */
#ifndef DBGCTL_OUTPUT_H
#define DBGCTL_OUTPUT_H

#include "daemon.h"

/* output.c */
size_t	 output_fetch(struct output *, int *fd, uint64_t off, char *,
	    size_t);

/* output-cache.c */
void	 output_cache_open(struct output *);
void	 output_cache_read(struct output *, uint64_t);
void	 output_cache_trim(struct output *, uint64_t end);
void	 output_cache_free(struct output *);

/* output-times.c */
void	 output_times_open(struct output *);
void	 output_times_reopen(struct output *);
void	 output_times_add(struct output *, uint64_t off);
void	 output_times_close(struct output *);

/* output-lines.c */
void	 output_lines_add(struct output *, uint64_t at, const char *,
	    size_t);
uint64_t output_lines_base(struct output *, uint64_t size);

#endif
