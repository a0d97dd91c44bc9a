/*
 * The board firmware's RTT (Real-Time Transfer): ring buffers in RAM a
 * host reads and writes while the core runs, in the control block layout
 * SEGGER documents publicly (this is the project's own minimal code): the
 * id "SEGGER RTT" in 16 bytes, the numbers of up- and down-buffers, then
 * each buffer's name, address, size, write and read offsets and flags,
 * all 32-bit words. The target writes an up-buffer's WrOff and the host
 * its RdOff; for a down-buffer the reverse.
 */
#ifndef BOARD_RTT_H
#define BOARD_RTT_H

#include <stdint.h>

/* An up-buffer's mode when full (Flags): drop what does not fit, or wait. */
#define RTT_MODE_SKIP	0u
#define RTT_MODE_BLOCK	2u

/* One buffer's descriptor, as the host finds it. */
struct rtt_buffer {
	const char		*name;
	char			*buf;
	uint32_t		 size;
	volatile uint32_t	 wr;
	volatile uint32_t	 rd;
	volatile uint32_t	 flags;
};

/* The control block: one up-buffer (channel 0) and one down-buffer. */
struct rtt_control {
	char			 id[16];
	int32_t			 max_up;
	int32_t			 max_down;
	struct rtt_buffer	 up[1];
	struct rtt_buffer	 down[1];
};

void		rtt_init(void);
unsigned	rtt_write(const char *, unsigned len);
int		rtt_getc(void);
void		rtt_mode(uint32_t);

#endif
