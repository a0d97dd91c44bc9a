/*
 * A session's live memory (live.h): the ways its kind opened (shared RAM,
 * QMP) and the accesses on them. An access through shared RAM is copied
 * at once and told from the loop's next turn; one through QMP when QEMU
 * answers. The session's end tells every access still waiting, then
 * closes both ways. For adoption, the keeper of QEMU holds the daemon's
 * end of QMP and the RAM's memfd, as it holds the transport's pipes.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "adopt.h"
#include "argv.h"
#include "live.h"

struct live {
	struct session	*s;
	struct sink	*sink;
	struct live_shm	*shm;		/* NULL: the machine's RAM is not shared */
	struct live_qmp	*qmp;
	int		 qmp_fd;	/* the daemon's end, for a keeper to hold */
	int		 qmp_child;	/* QEMU's end until it is spawned */
	bool		 gone;		/* QEMU's monitor closed: QEMU exited */
	TAILQ_HEAD(, live_op) ops;	/* every access not told yet */
	struct timer	*due;		/* tells the shared RAM's */
};

struct live_op {
	TAILQ_ENTRY(live_op) entry;
	struct live	*lv;
	uint64_t	 addr;
	size_t		 len;
	unsigned char	*data;		/* a read's bytes, once in */
	live_cb		 cb;		/* NULL: cancelled */
	void		*arg;
	unsigned long	 token;		/* QMP's, while it waits for QEMU */
	const char	*via;
};

/* The result of op to its callback (unless cancelled), then op is freed. */
static void
live_tell(struct live_op *op, int code, const char *error)
{
	struct live_result r = { code, error, op->data, op->len, op->via };

	TAILQ_REMOVE(&op->lv->ops, op, entry);
	if (op->cb != NULL)
		op->cb(op->arg, &r);
	free(op->data);
	free(op);
}

/* The loop's turn after shared-RAM accesses: each is told. */
static void
live_due(void *arg)
{
	struct live	*lv = arg;
	struct live_op	*op, *next;

	TAILQ_FOREACH_SAFE(op, &lv->ops, entry, next)
		if (op->token == 0)
			live_tell(op, 0, NULL);
}

/* A new access on lv, waiting to be told. */
static struct live_op *
live_op_new(struct live *lv, uint64_t addr, size_t len, live_cb cb,
    void *arg, const char *via)
{
	struct live_op *op = xcalloc(1, sizeof *op);

	op->lv = lv;
	op->addr = addr;
	op->len = len;
	op->cb = cb;
	op->arg = arg;
	op->via = via;
	TAILQ_INSERT_TAIL(&lv->ops, op, entry);
	return op;
}

/* A shared-RAM access done now, told at the loop's next turn. */
static struct live_op *
live_op_due(struct live *lv, struct live_op *op)
{
	timer_start(lv->due, 0);
	return op;
}

/* QEMU answered an xp: its bytes, or why none. */
static void
live_xp_cb(void *arg, json_t *ret, const char *error)
{
	struct live_op	*op = arg;
	char		 why[256];

	op->token = 0;
	if (ret == NULL) {
		live_tell(op, RPC_NOT_RUNNING, error);
		return;
	}
	op->data = xmalloc(op->len);
	if (live_qmp_xp(json_string_value(ret) != NULL ? json_string_value(
	    ret) : "", op->addr, op->data, op->len, why, sizeof why) != 0) {
		live_tell(op, RPC_INVALID_PARAMS, why);
		return;
	}
	live_tell(op, 0, NULL);
}

/* The session's live memory, or NULL with err set (the kind has none). */
static struct live *
live_of(struct session *s, struct rpc_error *err)
{
	if (s->live == NULL) {
		rpc_error_set(err, RPC_NOT_SUPPORTED, "session %lu (kind %s) "
		    "has no live memory", s->id, s->backend->name);
		return NULL;
	}
	if (s->live->gone) {
		rpc_error_set(err, RPC_NOT_RUNNING, "the QEMU of session %lu "
		    "has exited", s->id);
		return NULL;
	}
	return s->live;
}

/*
 * Read len bytes at addr while the target runs: through shared RAM where
 * it covers them, else QMP. NULL with err if neither can (cb is not called).
 */
struct live_op *
live_read(struct session *s, uint64_t addr, size_t len, live_cb cb,
    void *arg, struct rpc_error *err)
{
	struct live	*lv;
	struct live_op	*op;
	char		 line[64];

	if ((lv = live_of(s, err)) == NULL)
		return NULL;
	if (lv->shm != NULL && live_shm_covers(lv->shm, addr, len)) {
		if (len > LIVE_SHM_MAX) {
			rpc_error_set(err, RPC_INVALID_PARAMS, "a live read "
			    "moves at most %d bytes", LIVE_SHM_MAX);
			return NULL;
		}
		op = live_op_new(lv, addr, len, cb, arg, "shm");
		op->data = xmalloc(len);
		memcpy(op->data, live_shm_at(lv->shm, addr), len);
		return live_op_due(lv, op);
	}
	if (len > LIVE_QMP_MAX) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "a live read outside the "
		    "machine's shared RAM goes through QEMU's monitor, at most "
		    "%d bytes a read (%zu asked)", LIVE_QMP_MAX, len);
		return NULL;
	}
	if (live_qmp_outstanding(lv->qmp) >= LIVE_QUEUE_MAX) {
		rpc_error_set(err, RPC_BUSY, "session %lu has %d live reads "
		    "waiting for QEMU already", s->id, LIVE_QUEUE_MAX);
		return NULL;
	}
	op = live_op_new(lv, addr, len, cb, arg, "qmp");
	snprintf(line, sizeof line, "xp /%zubx 0x%llx", len,
	    (unsigned long long)addr);
	op->token = live_qmp_hmp(lv->qmp, line, live_xp_cb, op);
	return op;
}

/*
 * Write len bytes at addr while the target runs: only shared RAM can (QMP
 * has no command that writes memory). NULL with err if it cannot.
 */
struct live_op *
live_write(struct session *s, uint64_t addr, const unsigned char *data,
    size_t len, live_cb cb, void *arg, struct rpc_error *err)
{
	struct live	*lv;
	uint64_t	 base;
	size_t		 size;

	if ((lv = live_of(s, err)) == NULL)
		return NULL;
	if (lv->shm == NULL) {
		rpc_error_set(err, RPC_NOT_SUPPORTED, "machine %s shares no "
		    "RAM with the daemon and QEMU's monitor cannot write "
		    "memory: a live write needs a machine of shared RAM "
		    "(dbgctl-protocol(7)); write without live, which halts",
		    launch_get_str(&s->l, "machine"));
		return NULL;
	}
	live_shm_range(lv->shm, &base, &size);
	if (!live_shm_covers(lv->shm, addr, len)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "a live write reaches "
		    "only the shared RAM, 0x%llx to 0x%llx; 0x%llx + %zu is "
		    "outside", (unsigned long long)base, (unsigned long long)
		    (base + size - 1), (unsigned long long)addr, len);
		return NULL;
	}
	if (len > LIVE_SHM_MAX) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "a live write moves at "
		    "most %d bytes", LIVE_SHM_MAX);
		return NULL;
	}
	memcpy(live_shm_at(lv->shm, addr), data, len);
	return live_op_due(lv, live_op_new(lv, addr, len, cb, arg, "shm"));
}

/* The access's callback will not be called; it goes now or when QEMU answers. */
void
live_cancel(struct live_op *op)
{
	if (op == NULL)
		return;
	op->cb = NULL;
	if (op->token == 0)
		return;
	live_qmp_cancel(op->lv->qmp, op->token);
	TAILQ_REMOVE(&op->lv->ops, op, entry);
	free(op->data);
	free(op);
}

/*
 * The shared RAM at addr, len bytes of it, for a reader that polls it
 * (RTT, watch) without a copy or a callback; NULL if it is not shared.
 */
const unsigned char *
live_map(struct session *s, uint64_t addr, size_t len)
{
	struct live *lv = s->live;

	if (lv == NULL || lv->gone || lv->shm == NULL ||
	    !live_shm_covers(lv->shm, addr, len))
		return NULL;
	return live_shm_at(lv->shm, addr);
}

/* Whether the session's kind opened live memory (qemu's does). */
bool
live_has(const struct session *s)
{
	return s->live != NULL;
}

/* QEMU's monitor closed: QEMU exited, and live memory with it. */
static void
live_qmp_closed(void *arg)
{
	struct live *lv = arg;

	lv->gone = true;
}

/*
 * The session ended: every access still waiting hears so, then QMP and
 * the shared RAM close (QEMU's copy went with QEMU, its keeper's with it).
 */
static void
live_ended(struct sink *sink, struct session *s,
    const struct session_event *ev)
{
	struct live	*lv = s->live;
	struct live_op	*op;
	char		 why[64];

	(void)sink;
	(void)ev;
	if (lv == NULL)
		return;
	snprintf(why, sizeof why, "session %lu has ended", s->id);
	while ((op = TAILQ_FIRST(&lv->ops)) != NULL) {
		if (op->token != 0)
			live_qmp_cancel(lv->qmp, op->token);
		op->token = 0;
		live_tell(op, RPC_NOT_RUNNING, why);
	}
	session_sink_remove(lv->sink);
	live_qmp_close(lv->qmp);
	live_shm_close(lv->shm);
	if (lv->qmp_child != -1)
		close(lv->qmp_child);
	timer_free(lv->due);
	free(lv);
	s->live = NULL;
}

/* A session's live memory with nothing open yet. */
static struct live *
live_new(struct session *s)
{
	struct live *lv = xcalloc(1, sizeof *lv);

	lv->s = s;
	lv->qmp_fd = lv->qmp_child = -1;
	TAILQ_INIT(&lv->ops);
	lv->due = timer_new(live_due, lv);
	lv->sink = session_sink_add(s, SE_ENDED, live_ended, lv);
	s->live = lv;
	return lv;
}

/*
 * A qemu session's live memory: QMP on a socketpair, and machine's RAM
 * in a memfd where the machine has such RAM and shm allows it. Its
 * descriptors go to QEMU through live_qemu_fds. 0, or -1 with err.
 */
int
live_qemu_open(struct session *s, const char *machine, bool shm, char *err,
    size_t errlen)
{
	struct live	*lv = live_new(s);
	uint64_t	 base;
	size_t		 size;
	int		 sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "QMP socketpair: %s", strerror(errno));
		return -1;
	}
	lv->qmp_fd = sv[0];
	lv->qmp_child = sv[1];
	if ((lv->qmp = live_qmp_open(sv[0], false, live_qmp_closed, lv, err,
	    errlen)) == NULL)
		return -1;
	if (shm && live_shm_machine(machine, &base, &size) &&
	    (lv->shm = live_shm_open(machine, -1, err, errlen)) == NULL)
		return -1;
	return 0;
}

/* QEMU's arguments for the session's live memory: its monitor, its RAM. */
void
live_qemu_args(struct session *s, struct argv *av)
{
	struct live	*lv = s->live;
	uint64_t	 base;
	size_t		 size;

	if (lv == NULL)
		return;
	argv_push(av, "-chardev");
	argv_pushf(av, "socket,id=dbgctl-qmp,fd=%d,server=off",
	    PROC_FD_EXTRA);
	argv_push(av, "-mon");
	argv_push(av, "chardev=dbgctl-qmp,mode=control");
	if (lv->shm == NULL)
		return;
	live_shm_range(lv->shm, &base, &size);
	argv_push(av, "-object");
	argv_pushf(av, "memory-backend-file,id=dbgctl-ram,size=%zu,"
	    "mem-path=/proc/self/fd/%d,share=on", size, PROC_FD_EXTRA + 1);
	argv_push(av, "-machine");
	argv_push(av, "memory-backend=dbgctl-ram");
}

/* The descriptors QEMU gets at 9 and 10 (taken by the spawn): QMP's, RAM's. */
void
live_qemu_fds(struct session *s, int fds[PROC_EXTRA_FDS])
{
	struct live *lv = s->live;

	fds[0] = fds[1] = -1;
	if (lv == NULL)
		return;
	fds[0] = lv->qmp_child;
	lv->qmp_child = -1;
	if (lv->shm != NULL)
		fds[1] = fcntl(live_shm_fd(lv->shm), F_DUPFD_CLOEXEC, 0);
}

/* Give QEMU's keeper the daemon's end of QMP and the RAM to hold. */
void
live_qemu_hold(struct session *s, struct session_proc *sp)
{
	struct live *lv = s->live;

	if (lv == NULL || sp->proc == NULL)
		return;
	proc_hold(sp->proc, "qmp", lv->qmp_fd);
	if (lv->shm != NULL)
		proc_hold(sp->proc, "ram", live_shm_fd(lv->shm));
}

/*
 * An adopted qemu session's live memory, from what QEMU's keeper held:
 * QMP, whose handshake the dead daemon did, and the RAM, if shared. 0,
 * or -1 with err (the session then has none).
 */
int
live_qemu_adopt(struct session *s, char *err, size_t errlen)
{
	const char	*machine = launch_get_str(&s->l, "machine");
	struct live	*lv;
	uint64_t	 base;
	size_t		 size;
	int		 qmp = adopt_take_fd(1, "qmp"), ram = adopt_take_fd(1,
			    "ram");

	if (qmp == -1) {
		if (ram != -1)
			close(ram);
		snprintf(err, errlen, "QEMU's keeper held no QMP channel");
		return -1;
	}
	lv = live_new(s);
	lv->qmp_fd = qmp;
	if ((lv->qmp = live_qmp_open(qmp, true, live_qmp_closed, lv, err,
	    errlen)) == NULL)
		return -1;
	if (ram != -1 && machine != NULL && live_shm_machine(machine, &base,
	    &size) && (lv->shm = live_shm_open(machine,
	    ram, err, errlen)) == NULL)
		return -1;
	return 0;
}
