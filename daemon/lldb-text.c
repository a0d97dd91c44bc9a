/* lldb's console text: terminal escapes dropped, its prompt found and cut. */
#include <ctype.h>
#include <string.h>

#include "lldb.h"

/*
 * The column the escape ESC [ s[from..at) s[at] moves to, 0 if it is no
 * move to a column (ESC [ n G; no number is 1).
 */
static long
lldb_text_column(const char *s, size_t from, size_t at)
{
	long	 col = 0;
	size_t	 i;

	if (s[at] != 'G')
		return 0;
	if (at == from)
		return 1;
	for (i = from; i < at && col <= LLDB_PROMPT_LEN + 1; i++) {
		if (!isdigit((unsigned char)s[i]))
			return 0;
		col = col * 10 + (s[i] - '0');
	}
	return col == 0 ? 1 : col;
}

/*
 * Drop terminal escapes (ESC [ ... letter) and carriage returns, in place;
 * with lines, a carriage return becomes a line feed, a move to column 1
 * (ESC [ G, ESC [ 1 G: editline redraws its prompt so) LLDB_COLUMN1
 * and one to the column after the prompt LLDB_PROMPTCOL.
 */
size_t
lldb_text_clean(char *s, size_t len, bool lines)
{
	size_t	i, o = 0, from;
	long	col;

	for (i = 0; i < len; i++) {
		if (s[i] == '\033' && i + 1 < len && s[i + 1] == '[') {
			for (from = i += 2; i < len &&
			    !isalpha((unsigned char)s[i]); i++)
				;
			col = lines && i < len ? lldb_text_column(s, from, i) :
			    0;
			if (col == 1)
				s[o++] = LLDB_COLUMN1;
			else if (col == LLDB_PROMPT_LEN + 1)
				s[o++] = LLDB_PROMPTCOL;
			continue;
		}
		if (s[i] != '\r')
			s[o++] = s[i];
		else if (lines)
			s[o++] = '\n';
	}
	s[o] = '\0';
	return o;
}

/* Whether text of len bytes ends with lldb's prompt. */
bool
lldb_text_prompt_end(const char *text, size_t len)
{
	return len >= LLDB_PROMPT_LEN && memcmp(text + len -
	    LLDB_PROMPT_LEN, LLDB_PROMPT,
	    LLDB_PROMPT_LEN) == 0;
}

/*
 * Where the cursor is in text of n bytes that ends with a move to the
 * column after the prompt: right after a prompt the blanks after it follow
 * (editline's redraw of its prompt on its own); else at the end.
 */
size_t
lldb_text_cursor(const char *t, size_t n)
{
	size_t m;

	if (n == 0 || t[n - 1] != LLDB_PROMPTCOL)
		return n;
	for (m = n - 1; !lldb_text_prompt_end(t, m); m--)
		if (m == 0 || t[m - 1] != ' ')
			return n;
	return m;
}

/*
 * The length of s (n bytes) without the terminal escapes that end it;
 * moved, if among them is a move to column 1, or to the column after the
 * prompt, says which.
 */
static size_t
lldb_text_escapes_back(const char *s, size_t n, long *moved)
{
	size_t	i;
	long	col;

	while (n >= 3 && isalpha((unsigned char)s[n - 1])) {
		for (i = n - 1; i > 0 && (isdigit((unsigned char)s[i - 1]) ||
		    s[i - 1] == ';' || s[i - 1] == '?'); i--)
			;
		if (i < 2 || s[i - 1] != '[' || s[i - 2] != '\033')
			break;
		col = lldb_text_column(s, i, n - 1);
		if (col == 1 || col == LLDB_PROMPT_LEN + 1)
			*moved = col;
		n = i - 2;
	}
	return n;
}

/*
 * The length of s (n bytes) without a prompt that ends it, with the
 * escapes after it, and the blanks after it too where the cursor went back
 * to the column after it; n if it does not end with the prompt.
 */
static size_t
lldb_text_prompt_back(const char *s, size_t n)
{
	size_t	m;
	long	col = 0;

	m = lldb_text_escapes_back(s, n, &col);
	if (col == LLDB_PROMPT_LEN + 1)
		while (!lldb_text_prompt_end(s, m) && m > 0 &&
		    s[m - 1] == ' ')
			m = lldb_text_escapes_back(s, m - 1, &col);
	if (!lldb_text_prompt_end(s, m))
		return n;
	return m - LLDB_PROMPT_LEN;
}

/*
 * What lldb printed without its prompt at the end: the prompt, and the same
 * prompt before it if editline went back to column 1 to draw it again.
 */
size_t
lldb_text_unprompt(const char *s, size_t n)
{
	size_t	m;
	long	col = 0;

	m = lldb_text_prompt_back(s, n);
	if (m == n)
		return lldb_text_escapes_back(s, n, &col);
	n = lldb_text_escapes_back(s, m, &col);
	if (col == 1 && lldb_text_prompt_end(s, n))
		n -= LLDB_PROMPT_LEN;
	return n;
}
