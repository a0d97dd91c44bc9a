/*
 * Shared RAM: on a machine whose RAM QEMU takes from a memory backend, the
 * daemon makes that RAM a memfd (no name another user could open, gone
 * with its last holder), QEMU maps it shared through /proc/self/fd, and
 * the daemon maps it too: target RAM read and written with a memcpy while
 * the core runs. Which machines have such RAM, where and how big, is the
 * table below, checked on QEMU 7.2 (info mtree; a word written through
 * the mapping read back by the monitor's xp at both ends).
 */
#include <sys/mman.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "live.h"

/* A machine whose RAM is a backend: where the core sees it, how big. */
struct live_shm_machine {
	const char	*name;
	uint64_t	 base;
	size_t		 size;
};

/* QEMU 7.2's Arm machines with a backend RAM ("default-ram-id") at a fixed place. */
static const struct live_shm_machine live_shm_machines[] = {
	{ "mps2-an385", 0x21000000, 16 * 1024 * 1024 },
	{ "mps2-an386", 0x21000000, 16 * 1024 * 1024 },
	{ "mps2-an500", 0x60000000, 16 * 1024 * 1024 },
	{ "mps2-an505", 0x80000000, 16 * 1024 * 1024 },
	{ "mps2-an511", 0x21000000, 16 * 1024 * 1024 },
	{ "mps2-an521", 0x80000000, 16 * 1024 * 1024 },
};

/* The daemon's mapping of a session's shared RAM. */
struct live_shm {
	int		 fd;
	unsigned char	*map;
	uint64_t	 base;
	size_t		 size;
};

/* Whether machine's RAM can be shared; where it is and its size if so. */
bool
live_shm_machine(const char *machine, uint64_t *base, size_t *size)
{
	size_t i;

	for (i = 0; i < sizeof live_shm_machines /
	    sizeof live_shm_machines[0]; i++) {
		if (strcmp(live_shm_machines[i].name, machine) != 0)
			continue;
		*base = live_shm_machines[i].base;
		*size = live_shm_machines[i].size;
		return true;
	}
	return false;
}

/*
 * Machine's RAM as a mapped memfd: fd is one a keeper held (adoption),
 * or -1 for a new one; NULL with err.
 */
struct live_shm *
live_shm_open(const char *machine, int fd, char *err, size_t errlen)
{
	struct live_shm	*m = xcalloc(1, sizeof *m);

	if (!live_shm_machine(machine, &m->base, &m->size))
		log_fatal("live: %s has no shared RAM", machine);
	if (fd == -1 && (fd = memfd_create("dbgctl-ram", MFD_CLOEXEC)) ==
	    -1) {
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		free(m);
		return NULL;
	}
	m->fd = fd;
	if (ftruncate(fd, (off_t)m->size) != 0 || (m->map = mmap(NULL,
	    m->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
	    MAP_FAILED) {
		snprintf(err, errlen, "shared RAM of %zu bytes: %s", m->size,
		    strerror(errno));
		close(fd);
		free(m);
		return NULL;
	}
	return m;
}

/* The memfd, for QEMU (through its keeper) and for a keeper to hold. */
int
live_shm_fd(const struct live_shm *m)
{
	return m->fd;
}

/* Whether [addr, addr + len) lies inside the shared RAM. */
bool
live_shm_covers(const struct live_shm *m, uint64_t addr, size_t len)
{
	return addr >= m->base && len <= m->size && addr - m->base <=
	    m->size - len;
}

/* The byte at target address addr, which live_shm_covers said is inside. */
unsigned char *
live_shm_at(struct live_shm *m, uint64_t addr)
{
	return m->map + (addr - m->base);
}

/* Where the shared RAM is in the target, and its size. */
void
live_shm_range(const struct live_shm *m, uint64_t *base, size_t *size)
{
	*base = m->base;
	*size = m->size;
}

/* Unmap and close: the RAM goes once QEMU and its keeper let go too. */
void
live_shm_close(struct live_shm *m)
{
	if (m == NULL)
		return;
	munmap(m->map, m->size);
	close(m->fd);
	free(m);
}
