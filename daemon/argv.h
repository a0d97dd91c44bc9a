/* Growable NULL-terminated string vectors, for the argv of what is spawned. */
#ifndef DBGCTL_ARGV_H
#define DBGCTL_ARGV_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* argv.c: growable NULL-terminated string vectors. */
struct argv {
	char	**v;
	size_t	  n;
	size_t	  cap;
};

void	 argv_push(struct argv *, const char *);
void	 argv_pushf(struct argv *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
void	 argv_push_json(struct argv *, json_t *array, size_t from);
void	 argv_free(char **);
int	 argv_split(struct argv *, const char *);
bool	 argv_assigns(const char *);

#endif
