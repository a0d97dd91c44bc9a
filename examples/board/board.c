/*
 * The board stand-in: a Cortex-M3 firmware for QEMU's lm3s6965evb (or,
 * built with -DBOARD_AN385, for mps2-an385: board-an385.h, .ld).
 *
 * On reset it prints BANNER on UART0, then loops forever: it counts in
 * `counter`, and echoes every byte it receives on UART0, except FAULT_BYTE,
 * which makes it execute an undefined instruction in
 * fault_undefined_instruction(). That is a HardFault (CFSR UNDEFINSTR,
 * HFSR FORCED): HardFault_Handler prints FAULT_TEXT and spins, a place for
 * a debugger's breakpoint. In the mps2-an385 build, the one QEMU can
 * record and replay, CORRUPT_BYTE is a bug of another shape: it stores
 * a bad `board_hook` (board_corrupt_hook()), which the loop calls up to
 * a thousand passes later (board_tick()): a HardFault (INVSTATE) whose
 * backtrace does not name the line at fault, which a replay's reverse
 * watchpoint on board_hook finds.
 *
 * Built with -DBOARD_RTT (the mps2-an385 build), it also writes lines on
 * an RTT channel and takes commands on another (board-rtt.c, rtt.c).
 *
 * No C library, no clock setup (QEMU needs none for UART0), no interrupts.
 */
#include <stdint.h>

/*
 * What the firmware prints on UART0 when it starts; a second build
 * (board-b.elf, -DBOARD_VARIANT=\"b\") says which it is, so a test that
 * loads one over the other sees the change.
 */
#ifdef BOARD_VARIANT
#define BANNER		"dbgctl board " BOARD_VARIANT " ready\r\n"
#else
#define BANNER		"dbgctl board ready\r\n"
#endif
/* The byte that makes the firmware fault instead of echoing it. */
#define FAULT_BYTE	'!'
#ifdef BOARD_AN385
/* The byte that stores a bad board_hook, called a little later. */
#define CORRUPT_BYTE	'%'
/* The bad hook: an even address, not Thumb code (INVSTATE when called). */
#define BAD_HOOK	0x00000100u
/* board_tick calls the hook when counter's low bits are all 0. */
#define HOOK_PERIOD	0x3FFu
#endif
/* What HardFault_Handler prints on UART0 before it spins. */
#define FAULT_TEXT	"HardFault\r\n"

#ifdef BOARD_RTT
#include "board-rtt.h"
#endif

#ifdef BOARD_AN385
#include "board-an385.h"
#else
/* UART0 of the LM3S6965 (a PL011): data, flags, line and control. */
#define UART0_BASE	0x4000C000u
#define UART_DR		(*(volatile uint32_t *)(UART0_BASE + 0x000))
#define UART_FR		(*(volatile uint32_t *)(UART0_BASE + 0x018))
#define UART_LCRH	(*(volatile uint32_t *)(UART0_BASE + 0x02C))
#define UART_CR		(*(volatile uint32_t *)(UART0_BASE + 0x030))
#define UART_FR_RXFE	(1u << 4)	/* receive FIFO empty */
#define UART_FR_TXFF	(1u << 5)	/* transmit FIFO full */
#define UART_LCRH_8N1F	0x70u		/* 8 data bits, FIFOs on */
#define UART_CR_ON	0x301u		/* UARTEN | TXE | RXE */
#define UART_TX_FULL()	(UART_FR & UART_FR_TXFF)
#define UART_RX_EMPTY()	(UART_FR & UART_FR_RXFE)
#define UART_ON()	(UART_LCRH = UART_LCRH_8N1F, UART_CR = UART_CR_ON)
#endif

/* Incremented once per pass of the main loop: the firmware is running. */
volatile unsigned counter;

#ifdef CORRUPT_BYTE
/* What the loop calls now and then once set: only CORRUPT_BYTE sets it. */
void (*volatile board_hook)(void);
#endif

/* Symbols of the linker script (board.ld). */
extern uint32_t _estack, _sidata, _sdata, _edata, _sbss, _ebss;

__attribute__((noinline)) int main(void);
void	Reset_Handler(void);
void	NMI_Handler(void);
void	HardFault_Handler(void);
void	MemManage_Handler(void);
void	BusFault_Handler(void);
void	UsageFault_Handler(void);
void	Default_Handler(void);

/* The vector table, at address 0: initial SP, then the system exceptions. */
__attribute__((section(".vectors"), used))
void (*const vectors[16])(void) = {
	(void (*)(void))&_estack,	/* initial main stack pointer */
	Reset_Handler,
	NMI_Handler,
	HardFault_Handler,
	MemManage_Handler,
	BusFault_Handler,
	UsageFault_Handler,
	0, 0, 0, 0,			/* reserved */
	Default_Handler,		/* SVCall */
	Default_Handler,		/* DebugMonitor */
	0,				/* reserved */
	Default_Handler,		/* PendSV */
	Default_Handler,		/* SysTick */
};

/* Send one byte on UART0, waiting while its transmit FIFO is full. */
static void
uart_putc(char c)
{
	while (UART_TX_FULL())
		;
	UART_DR = (uint8_t)c;
}

/* Send a NUL-terminated string on UART0. */
static void
uart_puts(const char *s)
{
	while (*s != '\0')
		uart_putc(*s++);
}

/* Execute an undefined instruction (UDF): a HardFault with UNDEFINSTR. */
__attribute__((noinline)) void
fault_undefined_instruction(void)
{
	__builtin_trap();
}

#ifdef CORRUPT_BYTE
/* The bug CORRUPT_BYTE stands for: a hook stored wrong, called later. */
__attribute__((noinline)) void
board_corrupt_hook(void)
{
	board_hook = (void (*)(void))BAD_HOOK;
}

/* Call the hook, where there is one, once every HOOK_PERIOD + 1 passes. */
__attribute__((noinline)) void
board_tick(unsigned n)
{
	if (board_hook != 0 && (n & HOOK_PERIOD) == 0)
		board_hook();
}
#endif

/* Copy .data from flash, clear .bss, run main (kept out of line: a frame). */
void
Reset_Handler(void)
{
	volatile uint32_t *src = &_sidata, *dst = &_sdata;

	/* volatile: the compiler must not turn these loops into memcpy. */
	while (dst < &_edata)
		*dst++ = *src++;
	for (dst = &_sbss; dst < &_ebss;)
		*dst++ = 0;
	main();
	for (;;)
		;
}

/* Print the banner, then count and echo UART0's bytes until FAULT_BYTE. */
int
main(void)
{
	char c;

	UART_ON();
#ifdef BOARD_RTT
	/* Before the banner: a host that saw it finds the control block. */
	board_rtt_start();
#endif
	uart_puts(BANNER);
	for (;;) {
		counter++;
#ifdef CORRUPT_BYTE
		board_tick(counter);
#endif
#ifdef BOARD_RTT
		board_rtt_step(counter);
#endif
		if (UART_RX_EMPTY())
			continue;
		c = (char)UART_DR;
		if (c == FAULT_BYTE)
			fault_undefined_instruction();
#ifdef CORRUPT_BYTE
		if (c == CORRUPT_BYTE) {
			board_corrupt_hook();
			continue;
		}
#endif
		uart_putc(c);
	}
}

/* A HardFault: say so on UART0 and spin, for a debugger to look at. */
void
HardFault_Handler(void)
{
	uart_puts(FAULT_TEXT);
	for (;;)
		;
}

/* A non-maskable interrupt: spin. */
void
NMI_Handler(void)
{
	for (;;)
		;
}

/* A memory management fault (not enabled, so escalated to HardFault). */
void
MemManage_Handler(void)
{
	for (;;)
		;
}

/* A bus fault (not enabled, so escalated to HardFault). */
void
BusFault_Handler(void)
{
	for (;;)
		;
}

/* A usage fault (not enabled, so escalated to HardFault). */
void
UsageFault_Handler(void)
{
	for (;;)
		;
}

/* Any other exception: spin. */
void
Default_Handler(void)
{
	for (;;)
		;
}
