/*
 * The semihosting board: a Cortex-M3 firmware for QEMU's lm3s6965evb that
 * talks to its host through Arm semihosting (BKPT 0xAB) instead of a UART.
 *
 * On reset it prints UART_TEXT on UART0 (so a test can tell the two
 * channels apart), then LINE1 and LINE2 on the semihosting console with
 * SYS_WRITE0 (LINE2's newline with SYS_WRITEC), and LINE3 with SYS_WRITE
 * on the handle ":tt" (which QEMU 7.2 writes to its own standard output,
 * not to the console's chardev). Then it ends the run with the code
 * SEMIHOST_EXIT (SYS_EXIT for 0, else SYS_EXIT_EXTENDED): QEMU exits with
 * that status. Built with SEMIHOST_WAIT, it waits for a byte on UART0
 * after LINE1, so that a test can restart the daemon in between.
 *
 * No C library, no interrupts; the vector table is the board's layout.
 */
#include <stdint.h>

#ifndef SEMIHOST_EXIT
#define SEMIHOST_EXIT	3
#endif
#define UART_TEXT	"dbgctl semihost board on the UART\r\n"
#define LINE1		"semihost: hello from the board\n"
#define LINE2		"semihost: exiting with "
#define LINE3		"semihost: a line on the handle :tt\n"

/* The semihosting operations used (Arm's "Semihosting for AArch32 and AArch64"). */
#define SYS_OPEN		0x01
#define SYS_WRITEC		0x03
#define SYS_WRITE0		0x04
#define SYS_WRITE		0x05
#define SYS_EXIT		0x18
#define SYS_EXIT_EXTENDED	0x20
/* The reason an ending program gives: it finished, with a code. */
#define ADP_STOPPED_APPLICATION_EXIT	0x20026
/* SYS_OPEN's mode "w": ":tt" opened so is the console's output. */
#define OPEN_MODE_W		4

/* UART0 of the LM3S6965 (a PL011), as board.c uses it. */
#define UART0_BASE	0x4000C000u
#define UART_DR		(*(volatile uint32_t *)(UART0_BASE + 0x000))
#define UART_FR		(*(volatile uint32_t *)(UART0_BASE + 0x018))
#define UART_LCRH	(*(volatile uint32_t *)(UART0_BASE + 0x02C))
#define UART_CR		(*(volatile uint32_t *)(UART0_BASE + 0x030))
#define UART_FR_RXFE	(1u << 4)
#define UART_FR_TXFF	(1u << 5)
#define UART_LCRH_8N1F	0x70u
#define UART_CR_ON	0x301u

extern uint32_t _estack, _sidata, _sdata, _edata, _sbss, _ebss;

__attribute__((noinline)) int main(void);
void	Reset_Handler(void);
void	Default_Handler(void);

/* The vector table, at address 0: initial SP, then the system exceptions. */
__attribute__((section(".vectors"), used))
void (*const vectors[16])(void) = {
	(void (*)(void))&_estack,
	Reset_Handler,
	Default_Handler, Default_Handler, Default_Handler, Default_Handler,
	Default_Handler,
	0, 0, 0, 0,
	Default_Handler, Default_Handler, 0, Default_Handler, Default_Handler,
};

/* One semihosting call: op in r0, its argument in r1; the answer in r0. */
static uintptr_t
semihost_call(uintptr_t op, const void *arg)
{
	register uintptr_t r0 __asm__("r0") = op;
	register const void *r1 __asm__("r1") = arg;

	__asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
}

/* The length of a NUL-terminated string. */
static uintptr_t
semihost_strlen(const char *s)
{
	uintptr_t n = 0;

	while (s[n] != '\0')
		n++;
	return n;
}

/* Write len bytes to a semihosting handle with SYS_WRITE. */
static void
semihost_write(uintptr_t fd, const char *buf, uintptr_t len)
{
	uintptr_t block[3] = { fd, (uintptr_t)buf, len };

	(void)semihost_call(SYS_WRITE, block);
}

/* Send a NUL-terminated string on UART0. */
static void
uart_puts(const char *s)
{
	UART_LCRH = UART_LCRH_8N1F;
	UART_CR = UART_CR_ON;
	for (; *s != '\0'; s++) {
		while (UART_FR & UART_FR_TXFF)
			;
		UART_DR = (uint8_t)*s;
	}
}

/*
 * End the run: QEMU exits with code. On AArch32, SYS_EXIT takes the
 * reason alone (ApplicationExit is status 0): a code needs
 * SYS_EXIT_EXTENDED's block; 0 goes the plain way, so both are used.
 */
static void
semihost_exit(uintptr_t code)
{
	uintptr_t block[2] = { ADP_STOPPED_APPLICATION_EXIT, code };

	if (code == 0)
		(void)semihost_call(SYS_EXIT,
		    (const void *)ADP_STOPPED_APPLICATION_EXIT);
	(void)semihost_call(SYS_EXIT_EXTENDED, block);
}

/* Copy .data from flash, clear .bss, run main. */
void
Reset_Handler(void)
{
	volatile uint32_t *src = &_sidata, *dst = &_sdata;

	while (dst < &_edata)
		*dst++ = *src++;
	for (dst = &_sbss; dst < &_ebss;)
		*dst++ = 0;
	main();
	for (;;)
		;
}

/* Print on both channels and exit with the code. */
int
main(void)
{
	char		bye[] = LINE2 "N", nl = '\n';
	uintptr_t	tt;

	uart_puts(UART_TEXT);
	(void)semihost_call(SYS_WRITE0, LINE1);
#ifdef SEMIHOST_WAIT
	while (UART_FR & UART_FR_RXFE)
		;
	(void)UART_DR;
#endif
	bye[sizeof bye - 2] = (char)('0' + SEMIHOST_EXIT);
	(void)semihost_call(SYS_WRITE0, bye);
	(void)semihost_call(SYS_WRITEC, &nl);
	tt = semihost_call(SYS_OPEN, (uintptr_t[3]){ (uintptr_t)":tt",
	    OPEN_MODE_W, 3 });
	semihost_write(tt, LINE3, semihost_strlen(LINE3));
	semihost_exit(SEMIHOST_EXIT);
	for (;;)
		;
}

/* Any exception: spin. */
void
Default_Handler(void)
{
	for (;;)
		;
}
