/* JSON text written straight, for the replies of hot paths. */
#ifndef DBGCTL_JTEXT_H
#define DBGCTL_JTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <jansson.h>

/* jtext.c: JSON text written straight, for the replies of hot paths. */
struct jtext {
	char	*p;		/* NUL-terminated, or NULL */
	size_t	 len, cap;
	bool	 first;		/* no member yet in the open object */
};

void	 jtext_room(struct jtext *, size_t);

/*
 * Append len bytes as they are. Inline: a list's row is tens of pieces,
 * most of them constants whose copy the compiler then makes a move.
 */
static inline void
jtext_raw(struct jtext *t, const char *s, size_t len)
{
	if (t->len + len + 1 > t->cap)
		jtext_room(t, len);
	memcpy(t->p + t->len, s, len);
	t->len += len;
	t->p[t->len] = '\0';
}

int	 jtext_put(const char *, size_t, void *);
void	 jtext_open(struct jtext *);
void	 jtext_key(struct jtext *, const char *);
void	 jtext_int(struct jtext *, long long);
void	 jtext_bytes(struct jtext *, const char *, size_t);
void	 jtext_json(struct jtext *, json_t *);
char	*jtext_close(struct jtext *, size_t *);

#endif
