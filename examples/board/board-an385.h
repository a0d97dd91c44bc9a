/*
 * The board firmware's UART on QEMU's mps2-an385 (board.c with
 * -DBOARD_AN385): UART0 there is Arm's CMSDK APB UART, whose registers
 * are data, state, control and a baud divider.
 */
#ifndef BOARD_AN385_H
#define BOARD_AN385_H

#define UART0_BASE	0x40004000u
#define UART_DATA	(*(volatile uint32_t *)(UART0_BASE + 0x000))
#define UART_STATE	(*(volatile uint32_t *)(UART0_BASE + 0x004))
#define UART_CTRL	(*(volatile uint32_t *)(UART0_BASE + 0x008))
#define UART_BAUDDIV	(*(volatile uint32_t *)(UART0_BASE + 0x010))
#define UART_STATE_TXFULL	(1u << 0)
#define UART_STATE_RXFULL	(1u << 1)
#define UART_CTRL_ON	0x3u		/* TX enable | RX enable */
#define UART_BAUDDIV_MIN 16u		/* the least the UART takes */

/* What board.c asks of its UART: full, empty, on; and its data register. */
#define UART_DR		UART_DATA
#define UART_TX_FULL()	(UART_STATE & UART_STATE_TXFULL)
#define UART_RX_EMPTY()	(!(UART_STATE & UART_STATE_RXFULL))
#define UART_ON()	(UART_BAUDDIV = UART_BAUDDIV_MIN, UART_CTRL = UART_CTRL_ON)

#endif
