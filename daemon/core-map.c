/*
 * What a board core holds: the RAM of the program's ELF load map, read
 * from its section headers (the allocated, writable sections: .data,
 * .bss, a heap's or stack's own section) and the stack, up to the
 * initial stack pointer that a Cortex-M vector table's first word holds
 * (the first word of the lowest loaded segment). Where that whole span
 * fits under CORE_MAX it is read as one region, the heap between the
 * sections and the stack with it; else each section (cut at the bound)
 * and CORE_STACK bytes from sp, and the map says what was left out. The
 * System Control Block's fault registers come last. Flash needs no copy:
 * gdb reads it from the program. A 32-bit little-endian Arm ELF only.
 */
#include <sys/stat.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

/* The most section headers read: firmware has tens. */
#define CORE_MAP_SECTIONS	4096

/* The lowest and highest addresses of the writable sections, and the stack's top. */
struct core_map_span {
	uint32_t	lo, hi;
	uint32_t	sp0;		/* the initial stack pointer, or 0 */
};

/* Read len bytes at off, all of them; 0 or -1. */
static int
core_map_read(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/* Add a region to the map, if it has room; its length from the bound left. */
static void
core_map_add(struct core_map *m, uint32_t addr, uint32_t len, bool from_sp,
    const char *what)
{
	struct core_region *r;

	if (m->nregions == CORE_REGIONS || len == 0)
		return;
	r = &m->regions[m->nregions++];
	r->addr = addr;
	r->len = len;
	r->from_sp = from_sp;
	snprintf(r->what, sizeof r->what, "%s", what);
}

/* Bytes the map's regions already take. */
static uint64_t
core_map_used(const struct core_map *m)
{
	uint64_t	n = 0;
	size_t		i;

	for (i = 0; i < m->nregions; i++)
		n += m->regions[i].len;
	return n;
}

/* Note that the bound left bytes of what out, and why. */
static void
core_map_cut(struct core_map *m, const char *what, uint64_t bytes,
    const char *why)
{
	json_array_append_new(m->cut, json_pack("{s:s, s:I, s:s}", "what",
	    what, "bytes", (json_int_t)bytes, "why", why));
}

/* A section's name from the string table strtab of size n, or "?". */
static const char *
core_map_name(const char *strtab, size_t n, uint32_t off)
{
	if (strtab == NULL || off >= n || memchr(strtab + off, '\0', n - off) ==
	    NULL)
		return "?";
	return strtab + off;
}

/* The section name table of the ELF, read whole; NULL if it has none. */
static char *
core_map_strtab(int fd, const Elf32_Shdr *sh, size_t nsh, uint16_t shstrndx,
    size_t *n)
{
	char *t;

	*n = 0;
	if (shstrndx >= nsh || sh[shstrndx].sh_size > CORE_MAX)
		return NULL;
	*n = sh[shstrndx].sh_size;
	t = calloc(1, *n + 1);
	if (t == NULL || core_map_read(fd, t, *n, sh[shstrndx].sh_offset) !=
	    0) {
		free(t);
		*n = 0;
		return NULL;
	}
	return t;
}

/* The writable sections: their span, and each kept in sec (at most CORE_REGIONS). */
static size_t
core_map_sections(int fd, const Elf32_Ehdr *eh, struct core_map_span *sp,
    struct core_region *sec)
{
	Elf32_Shdr	*sh;
	char		*strtab;
	size_t		 i, n, nsec = 0, nstr;

	n = eh->e_shnum;
	if (n == 0 || n > CORE_MAP_SECTIONS || eh->e_shentsize != sizeof *sh)
		return 0;
	sh = calloc(n, sizeof *sh);
	if (sh == NULL || core_map_read(fd, sh, n * sizeof *sh, eh->e_shoff) !=
	    0) {
		free(sh);
		return 0;
	}
	strtab = core_map_strtab(fd, sh, n, eh->e_shstrndx, &nstr);
	for (i = 0; i < n && nsec < CORE_REGIONS - 2; i++) {
		if ((sh[i].sh_flags & (SHF_ALLOC | SHF_WRITE)) != (SHF_ALLOC |
		    SHF_WRITE) || sh[i].sh_size == 0 ||
		    (uint64_t)sh[i].sh_addr + sh[i].sh_size > UINT32_MAX)
			continue;
		sec[nsec].addr = sh[i].sh_addr;
		sec[nsec].len = sh[i].sh_size;
		snprintf(sec[nsec].what, sizeof sec[nsec].what, "section %s",
		    core_map_name(strtab, nstr, sh[i].sh_name));
		if (nsec == 0 || sh[i].sh_addr < sp->lo)
			sp->lo = sh[i].sh_addr;
		if (nsec == 0 || sh[i].sh_addr + sh[i].sh_size > sp->hi)
			sp->hi = sh[i].sh_addr + sh[i].sh_size;
		nsec++;
	}
	free(strtab);
	free(sh);
	return nsec;
}

/* The first word of the lowest loaded segment: a vector table's initial sp, or 0. */
static uint32_t
core_map_sp0(int fd, const Elf32_Ehdr *eh)
{
	Elf32_Phdr	ph;
	uint32_t	best = UINT32_MAX, sp0 = 0, w;
	size_t		i;

	if (eh->e_phentsize != sizeof ph)
		return 0;
	for (i = 0; i < eh->e_phnum; i++) {
		if (core_map_read(fd, &ph, sizeof ph, eh->e_phoff + i *
		    sizeof ph) != 0)
			return 0;
		if (ph.p_type != PT_LOAD || ph.p_filesz < 4 || ph.p_vaddr >=
		    best)
			continue;
		if (core_map_read(fd, &w, sizeof w, ph.p_offset) != 0)
			return 0;
		best = ph.p_vaddr;
		sp0 = w;
	}
	return sp0;
}

/* Why the ELF header eh is not a 32-bit little-endian Arm program, or NULL. */
static const char *
core_map_elf_why(const Elf32_Ehdr *eh)
{
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return "the program is not an ELF file";
	if (eh->e_ident[EI_CLASS] != ELFCLASS32 || eh->e_ident[EI_DATA] !=
	    ELFDATA2LSB || eh->e_machine != EM_ARM)
		return "not a native target, nor a board: the program is not "
		    "a 32-bit little-endian Arm ELF";
	return NULL;
}

/*
 * The regions: RAM's whole span where it is known and fits, else the
 * sections and the stack from sp, then the SCB.
 */
static void
core_map_regions(struct core_map *m, const struct core_map_span *sp,
    const struct core_region *sec, size_t nsec)
{
	uint64_t	left;
	size_t		i;
	char		why[160];

	if (nsec > 0 && sp->sp0 > sp->hi && sp->sp0 - sp->lo <= CORE_MAX) {
		core_map_add(m, sp->lo, sp->sp0 - sp->lo, false, "ram");
		core_map_add(m, CORE_SCB_ADDR, CORE_SCB_LEN, false, "scb");
		return;
	}
	if (nsec > 0 && sp->sp0 > sp->hi) {
		snprintf(why, sizeof why, "RAM from 0x%08x to the initial sp "
		    "0x%08x is over the core's bound (%d bytes): the writable "
		    "sections and %d bytes from sp instead", sp->lo, sp->sp0,
		    CORE_MAX, CORE_STACK);
		core_map_cut(m, "ram", sp->sp0 - sp->lo, why);
	}
	for (i = 0; i < nsec; i++) {
		left = CORE_MAX - CORE_STACK - CORE_SCB_LEN - core_map_used(m);
		if (sec[i].len > left)
			core_map_cut(m, sec[i].what, sec[i].len - left, "the "
			    "core's bound: the section's first bytes only");
		core_map_add(m, sec[i].addr, sec[i].len > left ? left :
		    sec[i].len, false, sec[i].what);
	}
	core_map_add(m, 0, CORE_STACK, true, "stack");
	core_map_add(m, CORE_SCB_ADDR, CORE_SCB_LEN, false, "scb");
}

/*
 * Plan the core of the program at path: 0, or -1 with why (not an Arm
 * ELF, not readable).
 */
int
core_map_plan(const char *path, struct core_map *m, char *why, size_t whylen)
{
	struct core_region	*sec;
	struct core_map_span	 sp = { 0 };
	struct stat		 st;
	Elf32_Ehdr		 eh;
	const char		*bad;
	size_t			 nsec;
	int			 fd;

	memset(m, 0, sizeof *m);
	m->cut = json_array();
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd == -1 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    core_map_read(fd, &eh, sizeof eh, 0) != 0) {
		snprintf(why, whylen, "the program %s cannot be read: %s", path,
		    fd == -1 ? strerror(errno) : "not a whole ELF file");
		if (fd != -1)
			close(fd);
		return -1;
	}
	if ((bad = core_map_elf_why(&eh)) != NULL) {
		snprintf(why, whylen, "%s", bad);
		close(fd);
		return -1;
	}
	sec = calloc(CORE_REGIONS, sizeof *sec);
	nsec = sec != NULL ? core_map_sections(fd, &eh, &sp, sec) : 0;
	sp.sp0 = core_map_sp0(fd, &eh);
	close(fd);
	core_map_regions(m, &sp, sec, nsec);
	free(sec);
	return 0;
}

/* Let go of what the map holds. */
void
core_map_free(struct core_map *m)
{
	json_decref(m->cut);
	m->cut = NULL;
}
