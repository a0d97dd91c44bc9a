/*
 * The options or commands a mistyped word may have meant, as git suggests
 * them: those it begins, else those fewest edits away.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbgctl.h"
#include "args.h"

/* The edit distance of a and b (insert, delete, replace, swap: one each). */
static size_t
args_suggest_distance(const char *a, const char *b)
{
	size_t	la = strlen(a), lb = strlen(b), i, j, d[3][ARGS_WORD_MAX + 1];
	size_t	cost, best;

	if (la > ARGS_WORD_MAX || lb > ARGS_WORD_MAX)
		return SIZE_MAX;
	/* Three rows: the one before last for a swap of two letters. */
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		d[i % 3][0] = i;
		for (j = 1; j <= lb; j++) {
			cost = a[i - 1] != b[j - 1];
			best = d[(i - 1) % 3][j - 1] + cost;
			if (d[(i - 1) % 3][j] + 1 < best)
				best = d[(i - 1) % 3][j] + 1;
			if (d[i % 3][j - 1] + 1 < best)
				best = d[i % 3][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[(i - 2) % 3][j - 2] + 1 <
			    best)
				best = d[(i - 2) % 3][j - 2] + 1;
			d[i % 3][j] = best;
		}
	}
	return d[la % 3][lb];
}

/*
 * The names nearest to word among the n of names, as git suggests them:
 * those fewest edits away, if that is at most ARGS_NEAR and under half of
 * word, joined with ", " and " or " into buf ("" when none is near).
 */
void
args_suggest_nearest(const char *word, const char *const *names, size_t n,
    const char *prefix, char *buf, size_t len)
{
	size_t	i, d, best = SIZE_MAX, many = 0, k = 0;

	*buf = '\0';
	for (i = 0; i < n; i++) {
		if ((d = args_suggest_distance(word, names[i])) < best) {
			best = d;
			many = 0;
		}
		many += d == best;
	}
	if (best > ARGS_NEAR || 2 * best >= strlen(word))
		return;
	for (i = 0; i < n; i++) {
		if (args_suggest_distance(word, names[i]) != best)
			continue;
		k++;
		strlcat(buf, k == 1 ? "" : k == many ? " or " : ", ", len);
		strlcat(buf, prefix, len);
		strlcat(buf, names[i], len);
	}
}

/* Join the n names into buf as "--a, --b or --c". */
static void
args_suggest_join(const char *const *names, size_t n, char *buf, size_t len)
{
	size_t	i;

	*buf = '\0';
	for (i = 0; i < n; i++) {
		strlcat(buf, i == 0 ? "" : i == n - 1 ? " or " : ", ", len);
		strlcat(buf, "--", len);
		strlcat(buf, names[i], len);
	}
}

/*
 * The long options "--word" may have meant, among the n of names, into
 * buf ("" for none): those it begins (getopt would have taken one), else
 * the nearest.
 */
void
args_suggest_long(const char *word, const char *const *names, size_t n,
    char *buf, size_t len)
{
	const char	**begun = args_array(n, sizeof *begun);
	size_t		  i, nbegun = 0, wlen = strlen(word);

	for (i = 0; i < n; i++)
		if (wlen > 0 && strncmp(names[i], word, wlen) == 0)
			begun[nbegun++] = names[i];
	if (nbegun > 0)
		args_suggest_join(begun, nbegun, buf, len);
	else
		args_suggest_nearest(word, names, n, "--", buf, len);
	free(begun);
}
