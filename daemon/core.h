/*
 * A board's core, shared by core-map.c (what of the target's memory it
 * holds, from the program's ELF), core-write.c (the ELF core file gdb
 * loads with the program) and bundle-core.c (the bundle's gathering).
 */
#ifndef DBGCTL_CORE_H
#define DBGCTL_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The most of the target's memory one board core holds (bytes). */
#define CORE_MAX	(1024 * 1024)
/* The stack read from sp when RAM's whole span is over CORE_MAX or unknown. */
#define CORE_STACK	(16 * 1024)
/* The most one MI read asks for: its hex must fit in one MI record. */
#define CORE_CHUNK	(64 * 1024)
/* The System Control Block, CPUID to AFSR: the M-profile fault registers. */
#define CORE_SCB_ADDR	0xE000ED00u
#define CORE_SCB_LEN	0x40u
/* The most regions a map has: sections, the stack and the SCB. */
#define CORE_REGIONS	32

/* A range of target memory the core asks gdb for. */
struct core_region {
	uint32_t	 addr;		/* where, unless from_sp */
	uint32_t	 len;
	bool		 from_sp;	/* at gdb's $sp, len bytes up */
	char		 what[48];	/* "ram", "section .data", "stack", "scb" */
};

/* What of the target a board core holds, and what its bound left out. */
struct core_map {
	struct core_region	 regions[CORE_REGIONS];
	size_t			 nregions;
	json_t			*cut;		/* [{what, bytes, why}] */
};

/* A range of memory gdb read: its bytes, for one PT_LOAD segment. */
struct core_seg {
	uint32_t	 addr;
	uint32_t	 len;
	unsigned char	*data;
};

/* The registers a core's NT_PRSTATUS holds: r0-r15 and the status register. */
struct core_regs {
	uint32_t	 r[16];
	uint32_t	 psr;		/* xPSR on M-profile, else CPSR */
	bool		 m_profile;	/* the target has xpsr: say so to gdb */
};

/* core-map.c */
int		 core_map_plan(const char *path, struct core_map *, char *why,
		    size_t whylen);
void		 core_map_free(struct core_map *);

/* core-write.c */
unsigned char	*core_write(const struct core_regs *, const struct core_seg *,
		    size_t nsegs, size_t *len);

#endif
