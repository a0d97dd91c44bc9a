/*
 * The terminal files' own: the modes followed, shared by term.c (which
 * follows them in a program's output) and term-write.c (which writes the
 * sequences that undo them and set them again).
 */
#ifndef DBGCTL_TERM_MODES_H
#define DBGCTL_TERM_MODES_H

#include "term.h"

#define TERM_NITEMS(a)	(sizeof (a) / sizeof (a)[0])

/* A DEC private mode followed; off says the reset turns the mode on. */
struct term_dec_mode {
	uint16_t	mode;
	uint64_t	bit;
	bool		off;
};

/* A colour an OSC sets and the OSC that resets it. */
struct term_color {
	uint16_t	set;
	uint16_t	reset;
	uint64_t	bit;
};

/* term.c */
extern const struct term_dec_mode	term_dec[];
extern const size_t			term_ndec;
extern const struct term_color		term_colors[];
extern const size_t			term_ncolors;

#endif
