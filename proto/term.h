/*
 * The terminal modes a program sets with escape sequences, tracked from its
 * output: the daemon keeps them per console and puts an attaching terminal
 * into them; the client writes their resets when it lets go of a terminal.
 */
#ifndef DBGCTL_TERM_H
#define DBGCTL_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the output turned on (or, for TERM_NOWRAP and TERM_NOCURSOR, off). */
#define TERM_ALT1049	(1ULL << 0)	/* ?1049: alternate screen, cursor kept */
#define TERM_ALT1047	(1ULL << 1)	/* ?1047: alternate screen */
#define TERM_ALT47	(1ULL << 2)	/* ?47: alternate screen */
#define TERM_NOCURSOR	(1ULL << 3)	/* ?25 reset: cursor hidden */
#define TERM_CKM	(1ULL << 4)	/* ?1: application cursor keys */
#define TERM_KEYPAD	(1ULL << 5)	/* ESC = or ?66: application keypad */
#define TERM_PASTE	(1ULL << 6)	/* ?2004: bracketed paste */
#define TERM_FOCUS	(1ULL << 7)	/* ?1004: focus events */
#define TERM_MOUSE9	(1ULL << 8)	/* ?9: X10 mouse */
#define TERM_MOUSE1000	(1ULL << 9)	/* ?1000: mouse buttons */
#define TERM_MOUSE1001	(1ULL << 10)	/* ?1001: highlight tracking */
#define TERM_MOUSE1002	(1ULL << 11)	/* ?1002: mouse drags */
#define TERM_MOUSE1003	(1ULL << 12)	/* ?1003: all motion */
#define TERM_MOUSE1005	(1ULL << 13)	/* ?1005: UTF-8 mouse coordinates */
#define TERM_MOUSE1006	(1ULL << 14)	/* ?1006: SGR mouse coordinates */
#define TERM_MOUSE1015	(1ULL << 15)	/* ?1015: urxvt mouse coordinates */
#define TERM_MOUSE1016	(1ULL << 16)	/* ?1016: SGR pixel coordinates */
#define TERM_ORIGIN	(1ULL << 17)	/* ?6: origin mode */
#define TERM_NOWRAP	(1ULL << 18)	/* ?7 reset: no autowrap */
#define TERM_REVERSE	(1ULL << 19)	/* ?5: reverse video */
#define TERM_LRMM	(1ULL << 20)	/* ?69: left and right margins */
#define TERM_SYNC	(1ULL << 21)	/* ?2026: synchronized output */
#define TERM_INSERT	(1ULL << 22)	/* CSI 4 h: insert mode */
#define TERM_LNM	(1ULL << 23)	/* CSI 20 h: LF is CR LF */
#define TERM_SGR	(1ULL << 24)	/* attributes or colours not reset */
#define TERM_REGION	(1ULL << 25)	/* a scroll region (DECSTBM) */
#define TERM_STYLE	(1ULL << 26)	/* a cursor shape (DECSCUSR) */
#define TERM_G0		(1ULL << 27)	/* ESC ( X: G0 not ASCII */
#define TERM_G1		(1ULL << 28)	/* ESC ) X: G1 not ASCII */
#define TERM_SO		(1ULL << 29)	/* SO: G1 shifted in */
#define TERM_MOK	(1ULL << 30)	/* CSI > 4 ; N m: modifyOtherKeys */
#define TERM_KITTY	(1ULL << 31)	/* CSI > F u: kitty keyboard flags */
#define TERM_TITLE	(1ULL << 32)	/* CSI 22 t: title pushed */
#define TERM_COLOR4	(1ULL << 33)	/* OSC 4: palette changed */
#define TERM_COLOR10	(1ULL << 34)	/* OSC 10: foreground changed */
#define TERM_COLOR11	(1ULL << 35)	/* OSC 11: background changed */
#define TERM_COLOR12	(1ULL << 36)	/* OSC 12: cursor colour changed */

/* The attributes SGR sets; TERM_SGR while any is. */
#define TERM_A_BOLD	0x0001	/* bold or faint */
#define TERM_A_ITALIC	0x0002
#define TERM_A_UNDER	0x0004
#define TERM_A_BLINK	0x0008
#define TERM_A_REVERSE	0x0010
#define TERM_A_HIDDEN	0x0020
#define TERM_A_STRIKE	0x0040
#define TERM_A_OVER	0x0080
#define TERM_A_FG	0x0100
#define TERM_A_BG	0x0200
#define TERM_A_ULCOLOR	0x0400

/* The alternate screens. */
#define TERM_ALT	(TERM_ALT1049 | TERM_ALT1047 | TERM_ALT47)

/* The most bytes term_write_reset or term_write_set writes. */
#define TERM_SEQ_MAX	1024
/* Parameters of one control sequence that are acted on. */
#define TERM_PARAMS	16
/* The deepest stack (kitty keyboard, titles) that is followed. */
#define TERM_STACK	8

/* What the output has set, and where its parser is in a sequence. */
struct term {
	uint64_t	on;		/* TERM_* */
	uint16_t	top;		/* TERM_REGION: its rows, as given */
	uint16_t	bottom;
	uint8_t		style;		/* TERM_STYLE: the shape */
	uint8_t		mok;		/* TERM_MOK: the level */
	uint8_t		kitty;		/* TERM_KITTY: flags pushed */
	uint8_t		kitty_flags;	/* the last flags pushed */
	uint8_t		kitty_set;	/* flags set with CSI = F u */
	uint8_t		titles;		/* TERM_TITLE: pushes */
	uint16_t	attrs;		/* TERM_A_*: TERM_SGR while not 0 */

	/* The parser: it keeps its place across chunks. */
	uint8_t		state;
	uint8_t		lead;		/* CSI: '?', '>', '<', '='; ESC: its byte */
	uint8_t		inter;		/* CSI: an intermediate byte, or 0 */
	uint8_t		n;		/* the parameter being read */
	bool		any;		/* a parameter byte was read */
	bool		bad;		/* a sequence not to act on */
	bool		over;		/* more parameters than TERM_PARAMS */
	bool		colon;		/* the parameter has sub-parameters */
	bool		sgr_clear_all;	/* SGR: a 0 was read */
	uint8_t		sgr_ext;	/* SGR: 1 after 38/48/58 */
	uint8_t		sgr_skip;	/* SGR: colour parameters to pass */
	uint16_t	sgr_set;	/* SGR: TERM_A_* it sets */
	uint16_t	sgr_clr;	/* SGR: TERM_A_* it clears */
	uint16_t	p[TERM_PARAMS];
	uint16_t	osc;		/* OSC: its number */
	uint8_t		osc_at;		/* OSC: 0 number, 1 first byte, 2 rest */
	bool		osc_query;	/* OSC: the argument starts with '?' */
	uint8_t		osc_last;	/* OSC: its last byte */
};

/* term.c */
/* A fresh terminal: nothing set, the parser on the ground. */
void	 term_init(struct term *);
/* Follow len bytes of output; a sequence may go on in the next call. */
void	 term_feed(struct term *, const char *, size_t);

/* term-write.c */
/* Whether two trackers would write the same resets and sets. */
bool	 term_write_same(const struct term *, const struct term *);
/* The bytes that undo what the output set, into buf; their length. */
size_t	 term_write_reset(const struct term *, char *buf, size_t len);
/* The bytes that set again what the output set, into buf; their length. */
size_t	 term_write_set(const struct term *, char *buf, size_t len);

#endif
