/*
 * The MI parser's own: a line being parsed, shared by mi-parse.c (records,
 * results, tuples and lists) and mi-cstring.c (the c-strings in them).
 */
#ifndef DBGCTL_MI_PARSE_H
#define DBGCTL_MI_PARSE_H

#include "mi.h"

/* A line being parsed. */
struct mi_parse_in {
	const char	*s;
	size_t		 len;
	size_t		 pos;
	int		 depth;
	char		*err;
	size_t		 errlen;
};

/* mi-parse.c */
int	 mi_parse_peek(const struct mi_parse_in *);
int	 mi_parse_error(struct mi_parse_in *, size_t pos, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
int	 mi_parse_expected(struct mi_parse_in *, const char *what);

/* mi-cstring.c */
int	 mi_cstring_escape(struct mi_parse_in *, char *out);
char	*mi_cstring_read(struct mi_parse_in *, size_t *lenp);
json_t	*mi_cstring_json(const char *s, size_t n);

#endif
