/*
 * The board firmware's use of RTT (rtt.h), in the mps2-an385 build: on
 * up-channel 0 a line "rtt N counter C" every period passes of the main
 * loop (N counts the lines tried, so a reader sees the ones dropped), and
 * on down-channel 0 one-byte commands that change it, each answered by a
 * line "mode ...":
 *   f  fast: a line every pass     s  slow: every BOARD_RTT_SLOW passes
 *   b  block when the buffer is full (the core waits for the host)
 *   d  drop the line that does not fit (the default)
 *   u  upper case: "RTT N COUNTER C"   l  lower case again
 */
#include <stdint.h>

#include "board-rtt.h"
#include "rtt.h"

/* Passes of the main loop between two lines, slow. */
#define BOARD_RTT_SLOW	65536u

static unsigned board_rtt_period = BOARD_RTT_SLOW;
static unsigned board_rtt_lines;
static unsigned board_rtt_upper;

/* Append n's decimal digits at p; the end. */
static char *
board_rtt_num(char *p, unsigned n)
{
	char		 d[10];
	unsigned	 i = 0;

	do
		d[i++] = (char)('0' + n % 10);
	while ((n /= 10) != 0);
	while (i > 0)
		*p++ = d[--i];
	return p;
}

/* Append the NUL-terminated s at p, in upper case if asked; the end. */
static char *
board_rtt_text(char *p, const char *s)
{
	for (; *s != '\0'; s++)
		*p++ = board_rtt_upper && *s >= 'a' && *s <= 'z' ?
		    (char)(*s - 'a' + 'A') : *s;
	return p;
}

/* Write a line of text on channel 0. */
static void
board_rtt_say(const char *text)
{
	char line[48], *p = board_rtt_text(line, text);

	*p++ = '\n';
	rtt_write(line, (unsigned)(p - line));
}

/* Act on one command byte from the host. */
static void
board_rtt_command(int c)
{
	switch (c) {
	case 'f':
		board_rtt_period = 1;
		board_rtt_say("mode fast");
		break;
	case 's':
		board_rtt_period = BOARD_RTT_SLOW;
		board_rtt_say("mode slow");
		break;
	case 'b':
		rtt_mode(RTT_MODE_BLOCK);
		board_rtt_say("mode block");
		break;
	case 'd':
		rtt_mode(RTT_MODE_SKIP);
		board_rtt_say("mode drop");
		break;
	case 'u':
		board_rtt_upper = 1;
		board_rtt_say("mode upper");
		break;
	case 'l':
		board_rtt_upper = 0;
		board_rtt_say("mode lower");
		break;
	}
}

/* Set up RTT and say so on channel 0. */
void
board_rtt_start(void)
{
	rtt_init();
	board_rtt_say("rtt ready");
}

/* One pass of the main loop: take commands, and write a line when due. */
void
board_rtt_step(unsigned counter)
{
	char	 line[48], *p;
	int	 c;

	while ((c = rtt_getc()) != -1)
		board_rtt_command(c);
	if (counter % board_rtt_period != 0)
		return;
	p = board_rtt_text(line, "rtt ");
	p = board_rtt_num(p, board_rtt_lines++);
	p = board_rtt_text(p, " counter ");
	p = board_rtt_num(p, counter);
	*p++ = '\n';
	rtt_write(line, (unsigned)(p - line));
}
