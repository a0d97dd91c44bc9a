/*
 * The terminal modes a program sets with escape sequences, followed as an
 * ECMA-48 parser would (tmux's input.c keeps a whole screen this way; here
 * only the modes that outlive the program matter), with the sequences that
 * undo them and that set them again (term-write.c).
 *
 * The parser keeps its place between calls, so a sequence cut across two
 * reads is read whole. It acts on nothing it does not understand: a
 * sequence with odd bytes in it is passed over to its final byte.
 */
#include <string.h>

#include "term.h"
#include "term-modes.h"

/* Where the parser is. */
enum {
	TERM_GROUND,
	TERM_ESC,	/* after ESC */
	TERM_ESC_INTER,	/* after ESC and an intermediate byte: ESC ( 0 */
	TERM_CSI,	/* after ESC [ */
	TERM_OSC,	/* after ESC ] */
	TERM_OSC_ESC,	/* an ESC in an OSC: ST or a new sequence */
	TERM_STR,	/* DCS, SOS, PM, APC: passed over */
	TERM_STR_ESC,	/* an ESC in one of those */
};

/* The DEC private modes followed. */
const struct term_dec_mode term_dec[] = {
	{ 1, TERM_CKM, false },
	{ 5, TERM_REVERSE, false },
	{ 6, TERM_ORIGIN, false },
	{ 7, TERM_NOWRAP, true },
	{ 9, TERM_MOUSE9, false },
	{ 25, TERM_NOCURSOR, true },
	{ 47, TERM_ALT47, false },
	{ 66, TERM_KEYPAD, false },
	{ 69, TERM_LRMM, false },
	{ 1000, TERM_MOUSE1000, false },
	{ 1001, TERM_MOUSE1001, false },
	{ 1002, TERM_MOUSE1002, false },
	{ 1003, TERM_MOUSE1003, false },
	{ 1004, TERM_FOCUS, false },
	{ 1005, TERM_MOUSE1005, false },
	{ 1006, TERM_MOUSE1006, false },
	{ 1015, TERM_MOUSE1015, false },
	{ 1016, TERM_MOUSE1016, false },
	{ 1047, TERM_ALT1047, false },
	{ 1049, TERM_ALT1049, false },
	{ 2004, TERM_PASTE, false },
	{ 2026, TERM_SYNC, false },
};
const size_t term_ndec = TERM_NITEMS(term_dec);

/* The colours an OSC sets, and the OSC that resets each. */
const struct term_color term_colors[] = {
	{ 4, 104, TERM_COLOR4 },
	{ 10, 110, TERM_COLOR10 },
	{ 11, 111, TERM_COLOR11 },
	{ 12, 112, TERM_COLOR12 },
};
const size_t term_ncolors = TERM_NITEMS(term_colors);

/* What a soft reset (DECSTR) puts back. */
#define TERM_DECSTR	(TERM_NOCURSOR | TERM_INSERT | TERM_ORIGIN | TERM_CKM | \
	TERM_KEYPAD | TERM_REGION | TERM_SGR | TERM_G0 | TERM_G1 | TERM_SO)

/* A fresh terminal: nothing set, the parser on the ground. */
void
term_init(struct term *t)
{
	memset(t, 0, sizeof *t);
}

/* Start reading a control sequence's parameters. */
static void
term_csi_start(struct term *t)
{
	memset(t->p, 0, sizeof t->p);
	t->lead = t->inter = t->n = 0;
	t->any = t->bad = t->over = t->colon = t->sgr_clear_all = false;
	t->sgr_ext = t->sgr_skip = 0;
	t->sgr_set = t->sgr_clr = 0;
	t->state = TERM_CSI;
}

/* Set or clear bit. */
static void
term_bit(struct term *t, uint64_t bit, bool on)
{
	if (on)
		t->on |= bit;
	else
		t->on &= ~bit;
}

/* The attributes each SGR number sets (set) or clears (clear). */
static const struct {
	uint8_t		from;
	uint8_t		to;
	uint16_t	bits;
	bool		set;
} term_sgr[] = {
	{ 1, 2, TERM_A_BOLD, true },
	{ 3, 3, TERM_A_ITALIC, true },
	{ 4, 4, TERM_A_UNDER, true },
	{ 5, 6, TERM_A_BLINK, true },
	{ 7, 7, TERM_A_REVERSE, true },
	{ 8, 8, TERM_A_HIDDEN, true },
	{ 9, 9, TERM_A_STRIKE, true },
	{ 21, 21, TERM_A_UNDER, true },
	{ 22, 22, TERM_A_BOLD, false },
	{ 23, 23, TERM_A_ITALIC, false },
	{ 24, 24, TERM_A_UNDER, false },
	{ 25, 25, TERM_A_BLINK, false },
	{ 27, 27, TERM_A_REVERSE, false },
	{ 28, 28, TERM_A_HIDDEN, false },
	{ 29, 29, TERM_A_STRIKE, false },
	{ 30, 38, TERM_A_FG, true },
	{ 39, 39, TERM_A_FG, false },
	{ 40, 48, TERM_A_BG, true },
	{ 49, 49, TERM_A_BG, false },
	{ 53, 53, TERM_A_OVER, true },
	{ 55, 55, TERM_A_OVER, false },
	{ 58, 58, TERM_A_ULCOLOR, true },
	{ 59, 59, TERM_A_ULCOLOR, false },
	{ 90, 97, TERM_A_FG, true },
	{ 100, 107, TERM_A_BG, true },
};

/* An SGR number's change to the sequence's pending attributes. */
static void
term_sgr_apply(struct term *t, unsigned v)
{
	size_t	i;

	if (v == 0) {
		t->sgr_clear_all = true;
		t->sgr_set = t->sgr_clr = 0;
		return;
	}
	for (i = 0; i < TERM_NITEMS(term_sgr); i++) {
		if (v < term_sgr[i].from || v > term_sgr[i].to)
			continue;
		if (term_sgr[i].set) {
			t->sgr_set |= term_sgr[i].bits;
			t->sgr_clr &= ~term_sgr[i].bits;
		} else {
			t->sgr_clr |= term_sgr[i].bits;
			t->sgr_set &= ~term_sgr[i].bits;
		}
		return;
	}
}

/*
 * One SGR parameter is complete. The colour forms (38;5;N, 38;2;R;G;B)
 * take their numbers with them, so that a colour 0 is not a reset.
 */
static void
term_sgr_param(struct term *t, unsigned v, bool colon)
{
	if (t->sgr_ext) {
		t->sgr_ext = 0;
		t->sgr_skip = v == 5 ? 1 : v == 2 ? 3 : 0;
		return;
	}
	if (t->sgr_skip > 0) {
		t->sgr_skip--;
		return;
	}
	/* 38:5:N and 4:3 carry their own numbers after colons. */
	if (colon && v != 4 && v != 38 && v != 48 && v != 58)
		return;
	term_sgr_apply(t, v);
	if (!colon && (v == 38 || v == 48 || v == 58))
		t->sgr_ext = 1;
}

/* An SGR sequence ended: its pending changes are the attributes' now. */
static void
term_sgr_end(struct term *t, unsigned count)
{
	if (count == 0 || t->sgr_clear_all)
		t->attrs = 0;
	t->attrs = (t->attrs & ~t->sgr_clr) | t->sgr_set;
	term_bit(t, TERM_SGR, t->attrs != 0);
}

/* The parameter being read is complete. */
static void
term_csi_param_end(struct term *t)
{
	term_sgr_param(t, t->p[t->n], t->colon);
	t->colon = false;
	/* Past the last slot only SGR reads on: the rest are not acted on. */
	if (t->n + 1 < TERM_PARAMS)
		t->n++;
	else {
		t->over = true;
		t->p[t->n] = 0;
	}
}

/* DECSET or DECRST: the private modes of the table. */
static void
term_dec_mode(struct term *t, unsigned count, bool set)
{
	unsigned	i;
	size_t		j;

	for (i = 0; i < count; i++)
		for (j = 0; j < term_ndec; j++)
			if (term_dec[j].mode == t->p[i])
				term_bit(t, term_dec[j].bit, set !=
				    term_dec[j].off);
}

/* SM or RM: insert mode and LF as CR LF. */
static void
term_ansi_mode(struct term *t, unsigned count, bool set)
{
	unsigned	i;

	for (i = 0; i < count; i++) {
		if (t->p[i] == 4)
			term_bit(t, TERM_INSERT, set);
		else if (t->p[i] == 20)
			term_bit(t, TERM_LNM, set);
	}
}

/* CSI ... u with a marker: the kitty keyboard's stack of flags. */
static void
term_kitty(struct term *t, unsigned count)
{
	unsigned	n;

	if (t->lead == '>') {
		if (t->kitty < TERM_STACK)
			t->kitty++;
		t->kitty_flags = (uint8_t)t->p[0];
	} else if (t->lead == '<') {
		n = count > 0 && t->p[0] > 0 ? t->p[0] : 1;
		t->kitty = n >= t->kitty ? 0 : t->kitty - n;
	} else if (t->lead == '=')
		t->kitty_set = (uint8_t)t->p[0];
	term_bit(t, TERM_KITTY, t->kitty > 0 || t->kitty_set != 0);
}

/* CSI 22 ; N t and CSI 23 ; N t: the title stack. */
static void
term_title(struct term *t, unsigned count)
{
	if (count == 0 || (t->p[0] != 22 && t->p[0] != 23) ||
	    (count > 1 && t->p[1] != 0 && t->p[1] != 2))
		return;
	if (t->p[0] == 22 && t->titles < TERM_STACK)
		t->titles++;
	else if (t->p[0] == 23 && t->titles > 0)
		t->titles--;
	term_bit(t, TERM_TITLE, t->titles > 0);
}

/* A control sequence ended with final: act on it if it is one followed. */
static void
term_csi_dispatch(struct term *t, char final)
{
	unsigned	count;

	if (t->any)
		term_csi_param_end(t);
	if (t->bad || (t->over && final != 'm'))
		return;
	count = t->any ? t->n : 0;
	if (t->lead == '?' && t->inter == 0 && (final == 'h' || final == 'l'))
		term_dec_mode(t, count, final == 'h');
	else if (t->lead == 0 && t->inter == 0 && (final == 'h' ||
	    final == 'l'))
		term_ansi_mode(t, count, final == 'h');
	else if (t->lead == 0 && t->inter == 0 && final == 'm')
		term_sgr_end(t, count);
	else if (t->lead == '>' && t->inter == 0 && (final == 'm' ||
	    final == 'n') && count > 0 && t->p[0] == 4) {
		t->mok = final == 'm' && count > 1 ? (uint8_t)t->p[1] : 0;
		term_bit(t, TERM_MOK, t->mok != 0);
	} else if (t->lead == 0 && t->inter == 0 && final == 'r') {
		t->top = count > 0 ? t->p[0] : 0;
		t->bottom = count > 1 ? t->p[1] : 0;
		term_bit(t, TERM_REGION, t->top > 1 || t->bottom != 0);
	} else if (t->lead == 0 && t->inter == ' ' && final == 'q') {
		t->style = count > 0 ? (uint8_t)t->p[0] : 0;
		term_bit(t, TERM_STYLE, t->style != 0);
	} else if (t->lead == 0 && t->inter == '!' && final == 'p')
		t->on &= ~TERM_DECSTR;
	else if (t->lead != 0 && t->lead != '?' && t->inter == 0 &&
	    final == 'u')
		term_kitty(t, count);
	else if (t->lead == 0 && t->inter == 0 && final == 't')
		term_title(t, count);
}

/* One byte inside a control sequence. */
static void
term_csi_byte(struct term *t, unsigned char c)
{
	if (c >= '0' && c <= '9') {
		if (t->inter != 0)
			t->bad = true;
		else if (!t->colon && t->p[t->n] < 6553)
			t->p[t->n] = t->p[t->n] * 10 + (c - '0');
		else if (!t->colon)
			t->p[t->n] = 65535;
		t->any = true;
	} else if (c == ';') {
		t->any = true;
		term_csi_param_end(t);
	} else if (c == ':') {
		t->any = t->colon = true;
	} else if (c >= '<' && c <= '?') {
		if (t->any || t->lead != 0 || t->inter != 0)
			t->bad = true;
		else
			t->lead = c;
	} else if (c >= 0x20 && c <= 0x2f) {
		if (t->inter != 0)
			t->bad = true;
		t->inter = c;
	} else if (c >= 0x40 && c <= 0x7e) {
		term_csi_dispatch(t, (char)c);
		t->state = TERM_GROUND;
	} else if (c >= 0x80) {
		/* Not a sequence after all. */
		t->state = TERM_GROUND;
	}
	/* C0 controls inside a sequence are carried out and it goes on. */
}

/* An OSC ended: the colours it set or reset. */
static void
term_osc_dispatch(struct term *t)
{
	size_t	i;

	for (i = 0; i < term_ncolors; i++) {
		if (t->osc == term_colors[i].reset)
			t->on &= ~term_colors[i].bit;
		/* A question (OSC 11;? or OSC 4;N;?) changes nothing. */
		if (t->osc == term_colors[i].set && t->osc_at > 0 &&
		    !t->osc_query && t->osc_last != '?')
			t->on |= term_colors[i].bit;
	}
}

/* One byte inside an OSC. */
static void
term_osc_byte(struct term *t, unsigned char c)
{
	if (c == 0x07) {
		term_osc_dispatch(t);
		t->state = TERM_GROUND;
		return;
	}
	if (t->osc_at == 0) {
		if (c >= '0' && c <= '9' && t->osc < 1000)
			t->osc = t->osc * 10 + (c - '0');
		else if (c == ';')
			t->osc_at = 1;
		else
			t->osc = 0xffff;	/* a number that matches none */
		return;
	}
	if (t->osc_at == 1)
		t->osc_query = c == '?';
	t->osc_at = 2;
	t->osc_last = c;
}

/* The byte after ESC. */
static void
term_esc_byte(struct term *t, unsigned char c)
{
	t->state = TERM_GROUND;
	switch (c) {
	case '[':
		term_csi_start(t);
		return;
	case ']':
		t->osc = t->osc_at = t->osc_last = 0;
		t->osc_query = false;
		t->state = TERM_OSC;
		return;
	case 'P': case 'X': case '^': case '_':
		t->state = TERM_STR;
		return;
	case '=':
		t->on |= TERM_KEYPAD;
		return;
	case '>':
		t->on &= ~TERM_KEYPAD;
		return;
	case 'c':
		/* A full reset: the terminal as it starts. */
		t->on = 0;
		t->kitty = t->kitty_set = t->titles = t->mok = t->style = 0;
		t->attrs = 0;
		return;
	case 0x1b:
		t->state = TERM_ESC;
		return;
	}
	if (c >= 0x20 && c <= 0x2f) {
		t->lead = c;
		t->state = TERM_ESC_INTER;
	}
}

/* The byte after ESC and an intermediate: which set ESC ( or ESC ) names. */
static void
term_esc_inter_byte(struct term *t, unsigned char c)
{
	if (c >= 0x20 && c <= 0x2f)
		return;
	t->state = c == 0x1b ? TERM_ESC : TERM_GROUND;
	if (c < 0x30 || c > 0x7e)
		return;
	if (t->lead == '(')
		term_bit(t, TERM_G0, c != 'B');
	else if (t->lead == ')')
		term_bit(t, TERM_G1, c != 'B');
}

/* One byte of output. */
static void
term_byte(struct term *t, unsigned char c)
{
	/* CAN and SUB end any sequence; ESC starts a new one. */
	if ((c == 0x18 || c == 0x1a) && t->state != TERM_GROUND) {
		t->state = TERM_GROUND;
		return;
	}
	switch (t->state) {
	case TERM_GROUND:
		if (c == 0x1b)
			t->state = TERM_ESC;
		else if (c == 0x0e)
			t->on |= TERM_SO;
		else if (c == 0x0f)
			t->on &= ~TERM_SO;
		return;
	case TERM_ESC:
		term_esc_byte(t, c);
		return;
	case TERM_ESC_INTER:
		term_esc_inter_byte(t, c);
		return;
	case TERM_CSI:
		if (c == 0x1b)
			t->state = TERM_ESC;
		else
			term_csi_byte(t, c);
		return;
	case TERM_OSC:
		if (c == 0x1b)
			t->state = TERM_OSC_ESC;
		else
			term_osc_byte(t, c);
		return;
	case TERM_OSC_ESC:
		if (c == '\\') {
			term_osc_dispatch(t);
			t->state = TERM_GROUND;
		} else
			term_esc_byte(t, c);
		return;
	case TERM_STR:
		if (c == 0x1b)
			t->state = TERM_STR_ESC;
		return;
	case TERM_STR_ESC:
		if (c == '\\')
			t->state = TERM_GROUND;
		else
			term_esc_byte(t, c);
		return;
	}
	t->state = TERM_GROUND;
}

/* Follow len bytes of output; a sequence may go on in the next call. */
void
term_feed(struct term *t, const char *data, size_t len)
{
	const unsigned char	*p = (const unsigned char *)data;
	const unsigned char	*end = p + len;

	while (p < end) {
		/* Text on the ground is most of it: pass over it quickly. */
		if (t->state == TERM_GROUND)
			while (p < end && *p >= 0x20)
				p++;
		if (p < end)
			term_byte(t, *p++);
	}
}
