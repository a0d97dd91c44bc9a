/*
 * A board core as an ELF core file that gdb loads with the program
 * (gdb-multiarch FIRMWARE.elf core): a PT_NOTE with the registers in an
 * NT_PRSTATUS of the 32-bit Arm layout (r0-r15, then the status
 * register, as gdb's Arm core reader takes them), on an M-profile target
 * an NT_GDB_TDESC naming them (xpsr, not cpsr, and the M-profile
 * exception unwinding), then one PT_LOAD for each range of memory read.
 * Checked with gdb 13 whether its OS ABI is GNU/Linux or none.
 */
#include <elf.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "core.h"

/* gdb's note of a target description (binutils' NT_GDB_TDESC). */
#define CORE_WRITE_NT_GDB_TDESC	0xff000000u
/* The Arm Linux elf_prstatus: 72 bytes before pr_reg, 18 words, pr_fpvalid. */
#define CORE_WRITE_PRSTATUS	148
#define CORE_WRITE_PR_REG	72
#define CORE_WRITE_PR_CURSIG	12

/* The M-profile description, as QEMU and OpenOCD give it: xpsr is register 25. */
static const char core_write_tdesc[] =
    "<?xml version=\"1.0\"?>\n"
    "<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
    "<target>\n"
    "  <architecture>arm</architecture>\n"
    "  <feature name=\"org.gnu.gdb.arm.m-profile\">\n"
    "    <reg name=\"r0\" bitsize=\"32\" regnum=\"0\"/>\n"
    "    <reg name=\"r1\" bitsize=\"32\"/>\n"
    "    <reg name=\"r2\" bitsize=\"32\"/>\n"
    "    <reg name=\"r3\" bitsize=\"32\"/>\n"
    "    <reg name=\"r4\" bitsize=\"32\"/>\n"
    "    <reg name=\"r5\" bitsize=\"32\"/>\n"
    "    <reg name=\"r6\" bitsize=\"32\"/>\n"
    "    <reg name=\"r7\" bitsize=\"32\"/>\n"
    "    <reg name=\"r8\" bitsize=\"32\"/>\n"
    "    <reg name=\"r9\" bitsize=\"32\"/>\n"
    "    <reg name=\"r10\" bitsize=\"32\"/>\n"
    "    <reg name=\"r11\" bitsize=\"32\"/>\n"
    "    <reg name=\"r12\" bitsize=\"32\"/>\n"
    "    <reg name=\"sp\" bitsize=\"32\" type=\"data_ptr\"/>\n"
    "    <reg name=\"lr\" bitsize=\"32\"/>\n"
    "    <reg name=\"pc\" bitsize=\"32\" type=\"code_ptr\"/>\n"
    "    <reg name=\"xpsr\" bitsize=\"32\" regnum=\"25\"/>\n"
    "  </feature>\n"
    "</target>\n";

/* A growing buffer of the file's bytes. */
struct core_write_buf {
	unsigned char	*p;
	size_t		 len, size;
};

/* Append n bytes (NULL: zeros), then pad to align. */
static void
core_write_put(struct core_write_buf *b, const void *data, size_t n,
    size_t align)
{
	size_t pad = (align - n % align) % align;

	if (b->len + n + pad > b->size) {
		b->size = (b->len + n + pad) * 2;
		b->p = xreallocarray(b->p, b->size, 1);
	}
	if (data != NULL)
		memcpy(b->p + b->len, data, n);
	else
		memset(b->p + b->len, 0, n);
	memset(b->p + b->len + n, 0, pad);
	b->len += n + pad;
}

/* Append one note: its header, name and description, each 4-aligned. */
static void
core_write_note(struct core_write_buf *b, const char *name, uint32_t type,
    const void *desc, size_t n)
{
	Elf32_Nhdr nh = { .n_namesz = strlen(name) + 1, .n_descsz = n,
	    .n_type = type };

	core_write_put(b, &nh, sizeof nh, 4);
	core_write_put(b, name, nh.n_namesz, 4);
	core_write_put(b, desc, n, 4);
}

/* The notes: the registers, and on M-profile the description naming them. */
static void
core_write_notes(struct core_write_buf *b, const struct core_regs *regs)
{
	unsigned char	pr[CORE_WRITE_PRSTATUS] = { 0 };
	uint32_t	w[18] = { 0 };
	uint16_t	sig = SIGTRAP;

	memcpy(w, regs->r, sizeof regs->r);
	w[16] = regs->psr;
	memcpy(pr + CORE_WRITE_PR_CURSIG, &sig, sizeof sig);
	memcpy(pr + CORE_WRITE_PR_REG, w, sizeof w);
	core_write_note(b, "CORE", NT_PRSTATUS, pr, sizeof pr);
	if (regs->m_profile)
		core_write_note(b, "GDB", CORE_WRITE_NT_GDB_TDESC,
		    core_write_tdesc, sizeof core_write_tdesc);
}

/* The ELF header of a 32-bit little-endian Arm core with phnum headers. */
static void
core_write_ehdr(struct core_write_buf *b, size_t phnum)
{
	Elf32_Ehdr eh = { .e_type = ET_CORE, .e_machine = EM_ARM,
	    .e_version = EV_CURRENT, .e_phoff = sizeof eh,
	    .e_flags = EF_ARM_EABI_VER5, .e_ehsize = sizeof eh,
	    .e_phentsize = sizeof(Elf32_Phdr), .e_phnum = phnum };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	core_write_put(b, &eh, sizeof eh, 1);
}

/*
 * The core of registers and segs, malloc'd, its size in *len: the
 * headers, the notes, then each segment's bytes.
 */
unsigned char *
core_write(const struct core_regs *regs, const struct core_seg *segs,
    size_t nsegs, size_t *len)
{
	struct core_write_buf	 b = { 0 }, notes = { 0 };
	Elf32_Phdr		 ph;
	size_t			 i, off;

	core_write_notes(&notes, regs);
	core_write_ehdr(&b, nsegs + 1);
	off = sizeof(Elf32_Ehdr) + (nsegs + 1) * sizeof ph;
	ph = (Elf32_Phdr){ .p_type = PT_NOTE, .p_offset = off,
	    .p_filesz = notes.len, .p_align = 4 };
	core_write_put(&b, &ph, sizeof ph, 1);
	off += notes.len;
	for (i = 0; i < nsegs; i++) {
		ph = (Elf32_Phdr){ .p_type = PT_LOAD, .p_offset = off,
		    .p_vaddr = segs[i].addr, .p_filesz = segs[i].len,
		    .p_memsz = segs[i].len, .p_flags = PF_R | PF_W,
		    .p_align = 1 };
		core_write_put(&b, &ph, sizeof ph, 1);
		off += segs[i].len;
	}
	core_write_put(&b, notes.p, notes.len, 1);
	for (i = 0; i < nsegs; i++)
		core_write_put(&b, segs[i].data, segs[i].len, 1);
	free(notes.p);
	*len = b.len;
	return b.p;
}
