/*
 * proto/term.c: the modes a program's output sets, followed byte by byte
 * as well as in one piece, and the sequences that undo and set them.
 */
#include <criterion/criterion.h>

#include <string.h>

#include "term.h"

/* What top (through ncurses, TERM=xterm) writes as it starts. */
static const char top_start[] =
    "\033[?1049h\033[22;0;0t\033[1;24r\033(B\033[m\033[4l\033[?7h"
    "\033[?1h\033=\033[?25l\033[H\033[2J\033[1mtop - 10:00:00\033[m\017"
    "\033[39;49m\033[K\r\n";

/* The tracker after data in one piece. */
static struct term
fed(const char *data, size_t len)
{
	struct term t;

	term_init(&t);
	term_feed(&t, data, len);
	return t;
}

/* The tracker after data one byte a call. */
static struct term
fed_bytes(const char *data, size_t len)
{
	struct term t;
	size_t i;

	term_init(&t);
	for (i = 0; i < len; i++)
		term_feed(&t, data + i, 1);
	return t;
}

/* The reset sequence of what data sets, as a string. */
static const char *
reset_of(const char *data)
{
	static char buf[TERM_SEQ_MAX];
	struct term t = fed(data, strlen(data));

	term_write_reset(&t, buf, sizeof buf);
	return buf;
}

Test(term, top_start_is_followed)
{
	struct term t = fed(top_start, sizeof top_start - 1);

	cr_assert_eq(t.on, TERM_ALT1049 | TERM_TITLE | TERM_CKM | TERM_KEYPAD |
	    TERM_NOCURSOR | TERM_REGION, "modes 0x%llx", (unsigned long long)
	    t.on);
	cr_assert(t.top == 1 && t.bottom == 24);
}

Test(term, split_anywhere_is_the_same)
{
	static const char mix[] = "\033[?1000;1006h\033]11;#000000\033\\"
	    "\033[38;5;0m\033[>4;2m\033[>1u\033[3 q\033(0\016x\033P+q\033\\"
	    "\033]0;title\007\033[?2004h";
	struct term whole = fed(mix, sizeof mix - 1);
	struct term bytes = fed_bytes(mix, sizeof mix - 1);

	cr_assert(term_write_same(&whole, &bytes));
	cr_assert_eq(whole.on, TERM_MOUSE1000 | TERM_MOUSE1006 | TERM_COLOR11 |
	    TERM_SGR | TERM_MOK | TERM_KITTY | TERM_STYLE | TERM_G0 | TERM_SO |
	    TERM_PASTE, "modes 0x%llx", (unsigned long long)whole.on);
}

Test(term, undone_modes_need_no_reset)
{
	cr_assert_str_eq(reset_of("\033[?1049h\033[?25l\033[1m\033[?1049l"
	    "\033[?25h\033[0m"), "");
	cr_assert_str_eq(reset_of("plain text\r\n"), "");
	cr_assert_str_eq(reset_of("\033[?2004h\033[1;31m\033c"), "");
	cr_assert_str_eq(reset_of("\033[1;2r\033[r"), "");
}

Test(term, colour_zero_is_not_a_reset)
{
	cr_assert_str_eq(reset_of("\033[38;5;0m"), "\033[0m");
	cr_assert_str_eq(reset_of("\033[38;2;0;0;0m"), "\033[0m");
	cr_assert_str_eq(reset_of("\033[1;0m"), "");
}

Test(term, reset_leaves_alternate_screen_last_then_attributes)
{
	const char *r = reset_of("\033[?1049h\033[?25l\033[5;10r\033[7m");

	cr_assert_str_eq(r, "\033[?25h\033[r\033[?1049l\033[0m");
}

Test(term, region_on_normal_screen_keeps_the_cursor)
{
	cr_assert_str_eq(reset_of("\033[2;20r"), "\0337\033[r\0338");
}

Test(term, set_enters_what_was_set)
{
	struct term t = fed(top_start, sizeof top_start - 1);
	char buf[TERM_SEQ_MAX];

	term_write_set(&t, buf, sizeof buf);
	cr_assert_str_eq(buf, "\033[22;0t\033[?1049h\033[1;24r\033[?1h"
	    "\033[?25l\033=");
}

Test(term, queries_and_unknown_sequences_change_nothing)
{
	cr_assert_str_eq(reset_of("\033]11;?\007\033]4;1;?\033\\\033[?u"
	    "\033[>c\033[6n\033[?1049$p"), "");
}

Test(term, osc_reset_clears_colours)
{
	cr_assert_str_eq(reset_of("\033]10;red\007\033]110\007"), "");
	cr_assert_str_eq(reset_of("\033]12;red\007"), "\033]112\033\\");
}
