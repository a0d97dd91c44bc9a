/*
 * The board firmware's RTT (rtt.h): channel 0 up ("Terminal") and down,
 * written from the documented layout. The id is written last, so a host
 * scanning RAM never finds a half-made block, and it is built from two
 * halves so the whole id appears nowhere in the firmware's image but the
 * block itself.
 */
#include "rtt.h"

/* Bytes of channel 0's up- and down-buffers. */
#define RTT_UP_SIZE	1024
#define RTT_DOWN_SIZE	64

/* The control block; hosts find it by this symbol or by its id in RAM. */
struct rtt_control _SEGGER_RTT;

static char rtt_up_buf[RTT_UP_SIZE];
static char rtt_down_buf[RTT_DOWN_SIZE];
/* The channel's name, in RAM: a host that reaches only RAM reads it too. */
static char rtt_name[] = "Terminal";

/* Fill in the control block, its id last. */
void
rtt_init(void)
{
	static const char first[] = "SEGGER", second[] = " RTT";
	volatile char	*id = _SEGGER_RTT.id;
	unsigned	 i;

	_SEGGER_RTT.max_up = 1;
	_SEGGER_RTT.max_down = 1;
	_SEGGER_RTT.up[0] = (struct rtt_buffer){ rtt_name, rtt_up_buf,
	    RTT_UP_SIZE, 0, 0, RTT_MODE_SKIP };
	_SEGGER_RTT.down[0] = (struct rtt_buffer){ rtt_name, rtt_down_buf,
	    RTT_DOWN_SIZE, 0, 0, 0 };
	for (i = 0; i < 4; i++)
		id[6 + i] = second[i];
	for (i = 10; i < 16; i++)
		id[i] = '\0';
	for (i = 0; i < 6; i++)
		id[i] = first[i];
}

/* Bytes free in the up-buffer: one slot stays empty (WrOff == RdOff is empty). */
static unsigned
rtt_room(const struct rtt_buffer *b)
{
	uint32_t rd = b->rd, wr = b->wr;

	return rd > wr ? rd - wr - 1 : b->size - 1 - wr + rd;
}

/*
 * Write len bytes on channel 0: all of them (waiting for the host in
 * block mode), or none if they do not fit in skip mode. The bytes
 * written, 0 or len.
 */
unsigned
rtt_write(const char *p, unsigned len)
{
	struct rtt_buffer	*b = &_SEGGER_RTT.up[0];
	uint32_t		 wr = b->wr;
	unsigned		 i;

	if (len >= b->size)
		return 0;
	while (rtt_room(b) < len)
		if (b->flags != RTT_MODE_BLOCK)
			return 0;
	for (i = 0; i < len; i++) {
		b->buf[wr] = p[i];
		wr = wr + 1 == b->size ? 0 : wr + 1;
	}
	b->wr = wr;
	return len;
}

/* The next byte the host wrote on down-channel 0, or -1 if none. */
int
rtt_getc(void)
{
	struct rtt_buffer	*b = &_SEGGER_RTT.down[0];
	uint32_t		 rd = b->rd;
	int			 c;

	if (rd == b->wr)
		return -1;
	c = (unsigned char)b->buf[rd];
	b->rd = rd + 1 == b->size ? 0 : rd + 1;
	return c;
}

/* Channel 0's mode when full: RTT_MODE_SKIP or RTT_MODE_BLOCK. */
void
rtt_mode(uint32_t mode)
{
	_SEGGER_RTT.up[0].flags = mode;
}
