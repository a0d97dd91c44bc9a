/*
 * The OS ABI of a bare-metal program. A gdb built for a host (Debian's
 * gdb-multiarch) takes an ELF that names no OS for a GNU/Linux program:
 * then every frame it unwinds is first tried as each of the Linux signal
 * trampolines, two or three memory reads each, and on a remote target
 * every read is a round trip (listing a HardFault's four frames took 53
 * reads, 5 without them); and a breakpoint it writes into memory would be
 * Linux's, an undefined instruction, not BKPT. An ELF for an M-profile core (its
 * build attributes say so, as gdb itself reads them) that names no OS,
 * asks for no interpreter and links nothing dynamically is firmware:
 * gdb is told it has no OS, as a gdb built for arm-none-eabi assumes.
 * A -x command given at launch comes later, and may say otherwise.
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "argv.h"
#include "gdb.h"

/* The build attributes' section (ARM ELF), and the tags this reads. */
#ifndef SHT_ARM_ATTRIBUTES
#define SHT_ARM_ATTRIBUTES	0x70000003
#endif
#define GDB_OSABI_TAG_FILE	1	/* a subsection of the whole file */
#define GDB_OSABI_TAG_COMPAT	32	/* a number, then a string */
#define GDB_OSABI_TAG_PROFILE	7	/* Tag_CPU_arch_profile */
/* The most of a section this reads: attributes and notes are small. */
#define GDB_OSABI_SECTION_MAX	(64 * 1024)

/* An open ELF file: its descriptor and byte order. */
struct gdb_osabi_elf {
	int	fd;
	bool	big;		/* big-endian */
};

/* A 16-bit field in the file's byte order. */
static uint32_t
gdb_osabi_u16(const struct gdb_osabi_elf *e, const unsigned char *p)
{
	return e->big ? (uint32_t)p[0] << 8 | p[1] : (uint32_t)p[1] << 8 | p[0];
}

/* A 32-bit field in the file's byte order. */
static uint32_t
gdb_osabi_u32(const struct gdb_osabi_elf *e, const unsigned char *p)
{
	if (e->big)
		return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		    (uint32_t)p[2] << 8 | p[3];
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[1] << 8 | p[0];
}

/* Read len bytes at off, all of them; 0 or -1. */
static int
gdb_osabi_read(const struct gdb_osabi_elf *e, void *buf, size_t len,
    uint32_t off)
{
	return pread(e->fd, buf, len, off) == (ssize_t)len ? 0 : -1;
}

/* An unsigned LEB128 number at *p before end, *p moved past it; -1: cut. */
static long
gdb_osabi_uleb(const unsigned char **p, const unsigned char *end)
{
	unsigned long	v = 0;
	int		shift = 0;

	while (*p < end && shift < 28) {
		v |= (unsigned long)(**p & 0x7f) << shift;
		if ((*(*p)++ & 0x80) == 0)
			return (long)v;
		shift += 7;
	}
	return -1;
}

/* Move *p past a NUL-terminated string before end; -1: cut. */
static int
gdb_osabi_skip_str(const unsigned char **p, const unsigned char *end)
{
	const unsigned char *nul = memchr(*p, '\0', end - *p);

	if (nul == NULL)
		return -1;
	*p = nul + 1;
	return 0;
}

/*
 * Tag_CPU_arch_profile in a file subsection's attributes, or 0. A tag's
 * value is a string for 4, 5, 67 and odd tags above 32, a number and a
 * string for 32, a number otherwise (the ARM ABI's build attributes).
 */
static int
gdb_osabi_profile_in(const unsigned char *p, const unsigned char *end)
{
	long tag, v;

	while (p < end) {
		if ((tag = gdb_osabi_uleb(&p, end)) == -1)
			return 0;
		if (tag == 4 || tag == 5 || tag == 67 || (tag > 32 &&
		    tag % 2 == 1)) {
			if (gdb_osabi_skip_str(&p, end) == -1)
				return 0;
			continue;
		}
		if ((v = gdb_osabi_uleb(&p, end)) == -1)
			return 0;
		if (tag == GDB_OSABI_TAG_PROFILE)
			return (int)v;
		if (tag == GDB_OSABI_TAG_COMPAT &&
		    gdb_osabi_skip_str(&p, end) == -1)
			return 0;
	}
	return 0;
}

/*
 * The profile the "aeabi" attributes of a section give the whole file
 * ('M' for a microcontroller), or 0: the section is a version byte 'A',
 * then vendor subsections (length, name), each of tagged subsections
 * (tag, length), of which the file's holds the attributes.
 */
static int
gdb_osabi_profile(const struct gdb_osabi_elf *e, const unsigned char *sec,
    size_t len)
{
	const unsigned char	*p = sec + 1, *end = sec + len, *sub, *sub_end;
	const char		*name;
	uint32_t		 n;
	long			 tag;

	if (len < 1 || sec[0] != 'A')
		return 0;
	while (end - p >= 4) {
		n = gdb_osabi_u32(e, p);
		if (n < 4 || n > (size_t)(end - p))
			return 0;
		sub = p + 4;
		sub_end = p + n;
		p = sub_end;
		name = (const char *)sub;
		if (gdb_osabi_skip_str(&sub, sub_end) == -1 ||
		    strcmp(name, "aeabi") != 0)
			continue;
		while (sub_end - sub > 4) {
			const unsigned char *at = sub;

			if ((tag = gdb_osabi_uleb(&sub, sub_end)) == -1 ||
			    sub_end - sub < 4)
				return 0;
			n = gdb_osabi_u32(e, sub);
			if (n < 5 || n > (size_t)(sub_end - at))
				return 0;
			if (tag == GDB_OSABI_TAG_FILE)
				return gdb_osabi_profile_in(sub + 4, at + n);
			sub = at + n;
		}
	}
	return 0;
}

/* Whether a note section holds an ABI tag (type 1): the file names an OS. */
static bool
gdb_osabi_abi_note(const struct gdb_osabi_elf *e, const unsigned char *sec,
    size_t len)
{
	size_t	off = 0, namesz, descsz;

	while (len - off >= 12) {
		namesz = gdb_osabi_u32(e, sec + off);
		descsz = gdb_osabi_u32(e, sec + off + 4);
		if (gdb_osabi_u32(e, sec + off + 8) == 1)
			return true;
		if (namesz > len || descsz > len)
			return false;
		off += 12 + ((namesz + 3) & ~(size_t)3) +
		    ((descsz + 3) & ~(size_t)3);
	}
	return false;
}

/*
 * A table of num entries of size entsize (each at least min bytes) at off,
 * read whole with one read; NULL if it is bigger than any firmware's.
 */
static unsigned char *
gdb_osabi_table(const struct gdb_osabi_elf *e, uint32_t off, uint32_t entsize,
    uint32_t num, size_t min)
{
	unsigned char	*buf;
	size_t		 len = (size_t)entsize * num;

	if (entsize < min || len == 0 || len > GDB_OSABI_SECTION_MAX)
		return NULL;
	buf = xmalloc(len);
	if (gdb_osabi_read(e, buf, len, off) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A section's bytes (at most GDB_OSABI_SECTION_MAX), or NULL. */
static unsigned char *
gdb_osabi_section(const struct gdb_osabi_elf *e, const unsigned char *sh,
    size_t *len)
{
	*len = gdb_osabi_u32(e, sh + 20);
	return gdb_osabi_table(e, gdb_osabi_u32(e, sh + 16), (uint32_t)*len, 1,
	    1);
}

/*
 * Go through the section headers: the profile the build attributes give,
 * or 0, and -1 where a note names an OS.
 */
static int
gdb_osabi_sections(const struct gdb_osabi_elf *e, const unsigned char *eh)
{
	unsigned char	*tab, *sh, *sec;
	uint32_t	 shentsize = gdb_osabi_u16(e, eh + 46);
	uint32_t	 shnum = gdb_osabi_u16(e, eh + 48), type, i;
	size_t		 len;
	int		 profile = 0;

	if ((tab = gdb_osabi_table(e, gdb_osabi_u32(e, eh + 32), shentsize,
	    shnum, 40)) == NULL)
		return 0;
	for (i = 0; i < shnum && profile != -1; i++) {
		sh = tab + (size_t)i * shentsize;
		type = gdb_osabi_u32(e, sh + 4);
		if (type != SHT_ARM_ATTRIBUTES && type != SHT_NOTE)
			continue;
		if ((sec = gdb_osabi_section(e, sh, &len)) == NULL)
			continue;
		if (type == SHT_NOTE && gdb_osabi_abi_note(e, sec, len))
			profile = -1;
		else if (type == SHT_ARM_ATTRIBUTES && profile == 0)
			profile = gdb_osabi_profile(e, sec, len);
		free(sec);
	}
	free(tab);
	return profile;
}

/* Whether a program header asks for an interpreter or dynamic linking. */
static bool
gdb_osabi_dynamic(const struct gdb_osabi_elf *e, const unsigned char *eh)
{
	unsigned char	*tab;
	uint32_t	 phentsize = gdb_osabi_u16(e, eh + 42);
	uint32_t	 phnum = gdb_osabi_u16(e, eh + 44), type, i;
	bool		 yes = false;

	if ((tab = gdb_osabi_table(e, gdb_osabi_u32(e, eh + 28), phentsize,
	    phnum, 32)) == NULL)
		return phnum != 0;
	for (i = 0; i < phnum && !yes; i++) {
		type = gdb_osabi_u32(e, tab + (size_t)i * phentsize);
		yes = type == PT_INTERP || type == PT_DYNAMIC;
	}
	free(tab);
	return yes;
}

/* Whether the open file is an M-profile ARM ELF that names no OS. */
static bool
gdb_osabi_firmware(struct gdb_osabi_elf *e)
{
	unsigned char eh[52];

	if (gdb_osabi_read(e, eh, sizeof eh, 0) != 0 ||
	    memcmp(eh, ELFMAG, SELFMAG) != 0 || eh[EI_CLASS] != ELFCLASS32 ||
	    eh[EI_OSABI] != ELFOSABI_NONE)
		return false;
	e->big = eh[EI_DATA] == ELFDATA2MSB;
	if (gdb_osabi_u16(e, eh + 18) != EM_ARM || gdb_osabi_dynamic(e, eh))
		return false;
	return gdb_osabi_sections(e, eh) == 'M';
}

/* Whether the file at path (from the session's directory) is firmware. */
static bool
gdb_osabi_file(const struct session *s, const char *path)
{
	struct gdb_osabi_elf	 e = { .fd = -1 };
	struct stat		 st;
	char			 full[PATH_MAX];
	bool			 yes;

	if (path[0] != '/' && s->l.cwd != NULL) {
		if ((size_t)snprintf(full, sizeof full, "%s/%s", s->l.cwd,
		    path) >= sizeof full)
			return false;
		path = full;
	}
	/* Not a FIFO's writer to wait for: a program is a regular file. */
	e.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (e.fd == -1)
		return false;
	yes = fstat(e.fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    gdb_osabi_firmware(&e);
	close(e.fd);
	return yes;
}

/* Tell gdb the session's program runs on no OS, where it is firmware. */
void
gdb_osabi_args(struct argv *av, struct session *s)
{
	const char *prog = json_string_value(json_array_get(s->l.argv, 0));

	if (prog == NULL || !gdb_osabi_file(s, prog))
		return;
	argv_push(av, "-ex");
	argv_push(av, "set osabi none");
}
