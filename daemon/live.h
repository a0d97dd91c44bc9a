/*
 * Live memory: reading and writing a target's memory while it runs, with
 * no halt (live.c, live-shm.c, live-qmp.c). A kind that can do it (qemu)
 * opens a session's live channels when it starts its server; the memory
 * verb (method-inspect-live.c) and whatever polls target RAM use them.
 *
 * Every access is asynchronous: live_read and live_write queue it and
 * return at once, and its callback runs later from the loop, never inside
 * the call, exactly once unless live_cancel came first. Two ways serve:
 *   - shm: the machine's RAM is a memfd QEMU maps (a machine memory
 *     backend, live-shm.c): a memcpy, any size up to LIVE_SHM_MAX, reads
 *     and writes, only inside that RAM;
 *   - qmp: QEMU's monitor (QMP on a socketpair, live-qmp.c) runs HMP's
 *     "xp", which reads any guest-physical address (flash, RAM, device
 *     registers, which a read may change as the core's own would), at
 *     most LIVE_QMP_MAX bytes a request, about half a millisecond each,
 *     at most LIVE_QUEUE_MAX outstanding; QMP cannot write memory.
 */
#ifndef DBGCTL_LIVE_H
#define DBGCTL_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon.h"

/* The most bytes one access moves through shared RAM. */
#define LIVE_SHM_MAX	(1024 * 1024)
/* The most bytes one read moves through QMP: xp's text is ~5 bytes a byte. */
#define LIVE_QMP_MAX	4096
/* The most accesses a session has outstanding on QMP. */
#define LIVE_QUEUE_MAX	64

/* What an access's callback hears. */
struct live_result {
	int			 code;	/* 0, or the RPC_* code of error */
	const char		*error;
	const unsigned char	*data;	/* a read's bytes, len of them */
	size_t			 len;
	const char		*via;	/* "shm" or "qmp" */
};
typedef void (*live_cb)(void *arg, const struct live_result *);

struct argv;
struct live;
struct live_op;
struct live_shm;
struct live_qmp;

/* live.c: a session's live memory, and the accesses on it. */
struct live_op	*live_read(struct session *, uint64_t addr, size_t len,
		    live_cb, void *arg, struct rpc_error *);
struct live_op	*live_write(struct session *, uint64_t addr,
		    const unsigned char *data, size_t len, live_cb, void *arg,
		    struct rpc_error *);
void		 live_cancel(struct live_op *);
const unsigned char *live_map(struct session *, uint64_t addr, size_t len);
bool		 live_has(const struct session *);
int		 live_qemu_open(struct session *, const char *machine,
		    bool shm, char *err, size_t errlen);
void		 live_qemu_args(struct session *, struct argv *);
void		 live_qemu_fds(struct session *, int fds[PROC_EXTRA_FDS]);
void		 live_qemu_hold(struct session *, struct session_proc *);
int		 live_qemu_adopt(struct session *, char *err, size_t errlen);

/* live-shm.c: the machine's RAM in a memfd the daemon maps too. */
bool		 live_shm_machine(const char *machine, uint64_t *base,
		    size_t *size);
struct live_shm	*live_shm_open(const char *machine, int fd, char *err,
		    size_t errlen);
int		 live_shm_fd(const struct live_shm *);
bool		 live_shm_covers(const struct live_shm *, uint64_t addr,
		    size_t len);
unsigned char	*live_shm_at(struct live_shm *, uint64_t addr);
void		 live_shm_range(const struct live_shm *, uint64_t *base,
		    size_t *size);
void		 live_shm_close(struct live_shm *);

/* live-qmp.c: QEMU's QMP monitor, a command at a time in order. */
typedef void (*live_qmp_cb)(void *arg, json_t *reply, const char *error);
struct live_qmp	*live_qmp_open(int fd, bool adopted, void (*closed)(void *),
		    void *arg, char *err, size_t errlen);
unsigned long	 live_qmp_hmp(struct live_qmp *, const char *line,
		    live_qmp_cb, void *arg);
void		 live_qmp_cancel(struct live_qmp *, unsigned long token);
size_t		 live_qmp_outstanding(const struct live_qmp *);
void		 live_qmp_close(struct live_qmp *);
int		 live_qmp_xp(const char *text, uint64_t addr, unsigned char *out,
		    size_t len, char *err, size_t errlen);

#endif
