/*
 * Unit tests of core-map.c and core-write.c: which of a program's memory
 * a board core holds, planned from ELF files written here (RAM's whole
 * span where it fits the bound; else the sections, the stack from sp and
 * what was cut), programs it refuses and why, and the core file's layout.
 * That gdb loads the cores is the integration suite's (integ-bundle_core).
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "core.h"

/* A section of a test program: name, address, size, flags. */
struct tc_sec {
	const char	*name;
	uint32_t	 addr, size, flags;
};

/* The section names' table of secs, in out; each one's offset in off. */
static size_t
tc_strtab(const struct tc_sec *secs, size_t n, char *out, uint32_t *off)
{
	size_t len = 1, i;

	out[0] = '\0';
	for (i = 0; i <= n; i++) {
		off[i] = len;
		strcpy(out + len, i < n ? secs[i].name : ".shstrtab");
		len += strlen(out + len) + 1;
	}
	return len;
}

/*
 * Write a 32-bit Arm program at path: one loaded segment at 0 whose first
 * word is sp0 (a vector table's), then the sections secs and the names.
 */
static void
tc_elf(const char *path, uint16_t machine, uint32_t sp0,
    const struct tc_sec *secs, size_t n)
{
	Elf32_Ehdr	eh = { .e_type = ET_EXEC, .e_machine = machine,
			    .e_version = EV_CURRENT, .e_ehsize = sizeof eh,
			    .e_phoff = sizeof eh, .e_phentsize = sizeof(Elf32_Phdr),
			    .e_phnum = 1, .e_shentsize = sizeof(Elf32_Shdr) };
	Elf32_Phdr	ph = { .p_type = PT_LOAD, .p_filesz = 4, .p_memsz = 4,
			    .p_flags = PF_R | PF_X };
	Elf32_Shdr	sh[16] = { { 0 } };
	char		strtab[512];
	uint32_t	off[16];
	size_t		len, i;
	FILE		*f;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	len = tc_strtab(secs, n, strtab, off);
	ph.p_offset = sizeof eh + sizeof ph;
	eh.e_shoff = ph.p_offset + 4 + len;
	eh.e_shnum = n + 2;
	eh.e_shstrndx = n + 1;
	for (i = 0; i < n; i++)
		sh[i + 1] = (Elf32_Shdr){ .sh_name = off[i], .sh_type =
		    secs[i].flags & SHF_WRITE ? SHT_NOBITS : SHT_PROGBITS,
		    .sh_flags = secs[i].flags, .sh_addr = secs[i].addr,
		    .sh_size = secs[i].size };
	sh[n + 1] = (Elf32_Shdr){ .sh_name = off[n], .sh_type = SHT_STRTAB,
	    .sh_offset = ph.p_offset + 4, .sh_size = len };
	cr_assert_not_null(f = fopen(path, "w"), "%s: %s", path,
	    strerror(errno));
	fwrite(&eh, sizeof eh, 1, f);
	fwrite(&ph, sizeof ph, 1, f);
	fwrite(&sp0, 4, 1, f);
	fwrite(strtab, len, 1, f);
	fwrite(sh, sizeof sh[0], n + 2, f);
	cr_assert_eq(fclose(f), 0);
}

/* A temporary file's path, made. */
static void
tc_path(char *buf)
{
	int fd;

	strcpy(buf, "/tmp/dbgctl-core-XXXXXX");
	cr_assert_neq(fd = mkstemp(buf), -1);
	close(fd);
}

/* Plan the core of the program at path; assert it plans one. */
static void
tc_plan(const char *path, struct core_map *m)
{
	char why[512];

	cr_assert_eq(core_map_plan(path, m, why, sizeof why), 0, "%s", why);
}

/* The .data and .bss of a 64 KiB RAM at 0x20000000, and the flash's text. */
static const struct tc_sec tc_small[] = {
	{ ".text", 0, 0x400, SHF_ALLOC | SHF_EXECINSTR },
	{ ".data", 0x20000000, 0x10, SHF_ALLOC | SHF_WRITE },
	{ ".bss", 0x20000010, 0x100, SHF_ALLOC | SHF_WRITE },
};

Test(core_map, ram_up_to_the_initial_sp_is_one_region_then_the_scb)
{
	struct core_map	m;
	char		path[64];

	tc_path(path);
	tc_elf(path, EM_ARM, 0x20010000, tc_small, 3);
	tc_plan(path, &m);
	cr_assert_eq(m.nregions, 2);
	cr_assert_str_eq(m.regions[0].what, "ram");
	cr_assert_eq(m.regions[0].addr, 0x20000000);
	cr_assert_eq(m.regions[0].len, 0x10000);
	cr_assert_str_eq(m.regions[1].what, "scb");
	cr_assert_eq(m.regions[1].addr, CORE_SCB_ADDR);
	cr_assert_eq(json_array_size(m.cut), 0);
	core_map_free(&m);
	unlink(path);
}

Test(core_map, ram_over_the_bound_gives_the_sections_and_the_stack_and_says_so)
{
	struct core_map	m;
	char		path[64];

	tc_path(path);
	tc_elf(path, EM_ARM, 0x20000000 + 2 * CORE_MAX, tc_small, 3);
	tc_plan(path, &m);
	cr_assert_eq(m.nregions, 4);
	cr_assert_str_eq(m.regions[0].what, "section .data");
	cr_assert_eq(m.regions[0].len, 0x10);
	cr_assert_str_eq(m.regions[1].what, "section .bss");
	cr_assert_str_eq(m.regions[2].what, "stack");
	cr_assert(m.regions[2].from_sp);
	cr_assert_eq(m.regions[2].len, CORE_STACK);
	cr_assert_str_eq(m.regions[3].what, "scb");
	cr_assert_eq(json_array_size(m.cut), 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    m.cut, 0), "what")), "ram");
	core_map_free(&m);
	unlink(path);
}

Test(core_map, no_vector_table_gives_the_sections_and_the_stack)
{
	struct core_map	m;
	char		path[64];

	tc_path(path);
	tc_elf(path, EM_ARM, 0, tc_small, 3);
	tc_plan(path, &m);
	cr_assert_eq(m.nregions, 4);
	cr_assert_str_eq(m.regions[2].what, "stack");
	cr_assert_eq(json_array_size(m.cut), 0);
	core_map_free(&m);
	unlink(path);
}

Test(core_map, a_section_over_the_bound_keeps_its_first_bytes_and_says_so)
{
	static const struct tc_sec big[] = {
		{ ".bss", 0x60000000, 4 * CORE_MAX, SHF_ALLOC | SHF_WRITE },
	};
	struct core_map	m;
	char		path[64];
	uint64_t	total = 0;
	size_t		i;

	tc_path(path);
	tc_elf(path, EM_ARM, 0, big, 1);
	tc_plan(path, &m);
	for (i = 0; i < m.nregions; i++)
		total += m.regions[i].len;
	cr_assert_eq(total, CORE_MAX, "the regions take %llu bytes",
	    (unsigned long long)total);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    m.cut, 0), "what")), "section .bss");
	core_map_free(&m);
	unlink(path);
}

Test(core_map, a_program_not_for_arm_or_not_there_is_refused_with_why)
{
	struct core_map	m;
	char		path[64], why[512];

	tc_path(path);
	tc_elf(path, EM_RISCV, 0x20010000, tc_small, 3);
	cr_assert_eq(core_map_plan(path, &m, why, sizeof why), -1);
	cr_assert_not_null(strstr(why, "not a 32-bit little-endian Arm ELF"),
	    "%s", why);
	core_map_free(&m);
	cr_assert_eq(truncate(path, 10), 0);
	cr_assert_eq(core_map_plan(path, &m, why, sizeof why), -1);
	cr_assert_not_null(strstr(why, "cannot be read"), "%s", why);
	core_map_free(&m);
	unlink(path);
	cr_assert_eq(core_map_plan(path, &m, why, sizeof why), -1);
	cr_assert_not_null(strstr(why, "No such file"), "%s", why);
	core_map_free(&m);
}

Test(core_write, a_core_has_the_registers_note_then_one_load_per_segment)
{
	unsigned char	 a[8] = "abcdefg", b[4] = { 1, 2, 3, 4 }, *core;
	struct core_seg	 segs[] = { { 0x20000000, 8, a }, { 0xE000ED00, 4, b } };
	struct core_regs regs = { .psr = 0x61000003, .m_profile = true };
	Elf32_Ehdr	 eh;
	Elf32_Phdr	 ph[3];
	Elf32_Nhdr	 nh;
	uint32_t	 pc;
	size_t		 len, i;

	for (i = 0; i < 16; i++)
		regs.r[i] = 0x100 + i;
	core = core_write(&regs, segs, 2, &len);
	memcpy(&eh, core, sizeof eh);
	cr_assert_eq(eh.e_type, ET_CORE);
	cr_assert_eq(eh.e_machine, EM_ARM);
	cr_assert_eq(eh.e_phnum, 3);
	memcpy(ph, core + eh.e_phoff, sizeof ph);
	cr_assert_eq(ph[0].p_type, PT_NOTE);
	memcpy(&nh, core + ph[0].p_offset, sizeof nh);
	cr_assert_eq(nh.n_type, NT_PRSTATUS);
	cr_assert_eq(nh.n_descsz, 148);
	/* pc is pr_reg's 16th word, 72 bytes into the description. */
	memcpy(&pc, core + ph[0].p_offset + sizeof nh + 8 + 72 + 15 * 4, 4);
	cr_assert_eq(pc, 0x10f);
	cr_assert_not_null(memmem(core, len, "org.gnu.gdb.arm.m-profile", 25),
	    "an M-profile core names its registers' description");
	cr_assert_eq(ph[1].p_type, PT_LOAD);
	cr_assert_eq(ph[1].p_vaddr, 0x20000000);
	cr_assert_eq(memcmp(core + ph[1].p_offset, a, 8), 0);
	cr_assert_eq(ph[2].p_vaddr, 0xE000ED00);
	cr_assert_eq(ph[2].p_offset + ph[2].p_filesz, len);
	free(core);
}
