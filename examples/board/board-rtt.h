/* The board firmware's RTT lines and commands (board-rtt.c). */
#ifndef BOARD_RTT_BOARD_H
#define BOARD_RTT_BOARD_H

void	board_rtt_start(void);
void	board_rtt_step(unsigned counter);

#endif
