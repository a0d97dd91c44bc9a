/*
 * The sequences written from what a program's output set: those that undo
 * it, for a terminal let go of, and those that set it again, for a
 * terminal that attaches; each cut short rather than overrun its buffer.
 */
#include <stdio.h>
#include <string.h>

#include "term.h"
#include "term-modes.h"

/* Whether two trackers would write the same resets and sets. */
bool
term_write_same(const struct term *a, const struct term *b)
{
	return a->on == b->on && a->top == b->top && a->bottom == b->bottom &&
	    a->style == b->style && a->mok == b->mok && a->kitty == b->kitty &&
	    a->kitty_flags == b->kitty_flags &&
	    a->kitty_set == b->kitty_set && a->titles == b->titles;
}

/* A buffer being filled, cut short rather than overrun. */
struct term_write_buf {
	char	*p;
	size_t	 len;
	size_t	 used;
};

/* Append a formatted piece, if it fits whole. */
static void
term_write_put(struct term_write_buf *b, const char *fmt, unsigned a, unsigned c)
{
	int	n;

	if (b->used >= b->len)
		return;
	n = snprintf(b->p + b->used, b->len - b->used, fmt, a, c);
	if (n > 0 && (size_t)n < b->len - b->used)
		b->used += (size_t)n;
	else
		b->p[b->used] = '\0';
}

/* The DEC private modes of the table that are on, set (h) or reset (l). */
static void
term_write_dec(struct term_write_buf *b, const struct term *t, bool set)
{
	size_t	i;

	for (i = 0; i < term_ndec; i++) {
		if (!(t->on & term_dec[i].bit) ||
		    (term_dec[i].bit & (TERM_ALT | TERM_SYNC | TERM_KEYPAD)))
			continue;
		term_write_put(b, (set != term_dec[i].off) ? "\033[?%uh" :
		    "\033[?%ul", term_dec[i].mode, 0);
	}
}

/* The bytes that undo what the output set, into buf; their length. */
size_t
term_write_reset(const struct term *t, char *buf, size_t len)
{
	struct term_write_buf	b = { buf, len, 0 };
	unsigned	i;
	size_t		j;

	if (len > 0)
		buf[0] = '\0';
	/* Show what follows at once. */
	if (t->on & TERM_SYNC)
		term_write_put(&b, "\033[?2026l", 0, 0);
	if (t->kitty > 0)
		term_write_put(&b, "\033[<%uu", t->kitty, 0);
	if (t->kitty_set != 0)
		term_write_put(&b, "\033[=0;1u", 0, 0);
	if (t->on & TERM_MOK)
		term_write_put(&b, "\033[>4m", 0, 0);
	term_write_dec(&b, t, false);
	if (t->on & TERM_KEYPAD)
		term_write_put(&b, "\033>", 0, 0);
	if (t->on & TERM_INSERT)
		term_write_put(&b, "\033[4l", 0, 0);
	if (t->on & TERM_LNM)
		term_write_put(&b, "\033[20l", 0, 0);
	if (t->on & (TERM_G0 | TERM_SO))
		term_write_put(&b, "\017\033(B", 0, 0);
	if (t->on & TERM_G1)
		term_write_put(&b, "\033)B", 0, 0);
	/*
	 * DECSTBM homes the cursor: keep it where it is on the normal
	 * screen, but not with ESC 7 on the alternate one, whose leaving
	 * (?1049) restores the cursor saved in that same slot.
	 */
	if ((t->on & TERM_REGION) && (t->on & TERM_ALT))
		term_write_put(&b, "\033[r", 0, 0);
	else if (t->on & TERM_REGION)
		term_write_put(&b, "\0337\033[r\0338", 0, 0);
	if (t->on & TERM_STYLE)
		term_write_put(&b, "\033[0 q", 0, 0);
	for (j = 0; j < term_ncolors; j++)
		if (t->on & term_colors[j].bit)
			term_write_put(&b, "\033]%u\033\\", term_colors[j].reset, 0);
	for (i = 0; i < t->titles; i++)
		term_write_put(&b, "\033[23;0t", 0, 0);
	if (t->on & TERM_ALT47)
		term_write_put(&b, "\033[?47l", 0, 0);
	if (t->on & TERM_ALT1047)
		term_write_put(&b, "\033[?1047l", 0, 0);
	if (t->on & TERM_ALT1049)
		term_write_put(&b, "\033[?1049l", 0, 0);
	/* Last: leaving the alternate screen may restore old attributes. */
	if (t->on & TERM_SGR)
		term_write_put(&b, "\033[0m", 0, 0);
	return b.used;
}

/*
 * The bytes that set again what the output set, into buf; their length.
 * Attributes, colours and synchronized output are not set again: the
 * program's next drawing sets them.
 */
size_t
term_write_set(const struct term *t, char *buf, size_t len)
{
	struct term_write_buf	b = { buf, len, 0 };
	unsigned	i;

	if (len > 0)
		buf[0] = '\0';
	for (i = 0; i < t->titles; i++)
		term_write_put(&b, "\033[22;0t", 0, 0);
	if (t->on & TERM_ALT1049)
		term_write_put(&b, "\033[?1049h", 0, 0);
	if (t->on & TERM_ALT1047)
		term_write_put(&b, "\033[?1047h", 0, 0);
	if (t->on & TERM_ALT47)
		term_write_put(&b, "\033[?47h", 0, 0);
	if ((t->on & TERM_REGION) && t->bottom != 0)
		term_write_put(&b, "\033[%u;%ur", t->top, t->bottom);
	else if (t->on & TERM_REGION)
		term_write_put(&b, "\033[%ur", t->top, 0);
	term_write_dec(&b, t, true);
	if (t->on & TERM_KEYPAD)
		term_write_put(&b, "\033=", 0, 0);
	if (t->on & TERM_INSERT)
		term_write_put(&b, "\033[4h", 0, 0);
	if (t->on & TERM_LNM)
		term_write_put(&b, "\033[20h", 0, 0);
	if (t->on & TERM_G0)
		term_write_put(&b, "\033(0", 0, 0);
	if (t->on & TERM_G1)
		term_write_put(&b, "\033)0", 0, 0);
	if (t->on & TERM_SO)
		term_write_put(&b, "\016", 0, 0);
	if (t->on & TERM_STYLE)
		term_write_put(&b, "\033[%u q", t->style, 0);
	if (t->on & TERM_MOK)
		term_write_put(&b, "\033[>4;%um", t->mok, 0);
	if (t->kitty_set != 0)
		term_write_put(&b, "\033[=%uu", t->kitty_set, 0);
	for (i = 0; i < t->kitty; i++)
		term_write_put(&b, "\033[>%uu", t->kitty_flags, 0);
	return b.used;
}
