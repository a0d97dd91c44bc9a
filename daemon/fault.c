/*
 * Fault triage: when gdb stops the target on a fatal signal or a fault
 * breakpoint, gather what a person would ask first — the frames, the
 * registers, on Cortex-M the fault status registers decoded and the
 * stacked exception frame, a core file if asked — over MI, before anyone
 * else's command, and leave the target stopped.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "gdb.h"
#include "mi.h"
#include "session-target.h"

/* System Control Block fault registers: CFSR, HFSR, DFSR, MMFAR, BFAR. */
#define FAULT_SCB_ADDR	"0xE000ED28"
#define FAULT_SCB_LEN	20

/* The handlers whose hit is a fault on an M-profile target. */
const char *const fault_cortex_m[] = {
	"*HardFault_Handler",
	"*MemManage_Handler",
	"*BusFault_Handler",
	"*UsageFault_Handler",
	NULL
};

/* The signals a target dies of. */
static const char *const fault_signals[] = {
	"SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT", "SIGSYS", NULL
};

/* A bit of a fault status register and its name. */
struct fault_bit {
	int		 bit;
	const char	*name;
};

static const struct fault_bit fault_cfsr_bits[] = {
	{ 0, "IACCVIOL" }, { 1, "DACCVIOL" }, { 3, "MUNSTKERR" },
	{ 4, "MSTKERR" }, { 5, "MLSPERR" }, { 7, "MMARVALID" },
	{ 8, "IBUSERR" }, { 9, "PRECISERR" }, { 10, "IMPRECISERR" },
	{ 11, "UNSTKERR" }, { 12, "STKERR" }, { 13, "LSPERR" },
	{ 15, "BFARVALID" }, { 16, "UNDEFINSTR" }, { 17, "INVSTATE" },
	{ 18, "INVPC" }, { 19, "NOCP" }, { 24, "UNALIGNED" },
	{ 25, "DIVBYZERO" }, { -1, NULL }
};

static const struct fault_bit fault_hfsr_bits[] = {
	{ 1, "VECTTBL" }, { 30, "FORCED" }, { 31, "DEBUGEVT" }, { -1, NULL }
};

/* Where a gathering is, and what it has so far. */
struct fault_job {
	struct session	*s;
	struct mi	*mi;
	json_t		*rec;
	json_t		*names;		/* register names by number */
	int		 step;		/* sent or answered last */
	int		 next;		/* the next step to send */
	int		 sent[6];	/* the batch's steps, in order */
	int		 nsent;
	int		 nread;		/* of those, answered */
	bool		 m_handler;	/* stopped in an M-profile handler */
	char		 core[PATH_MAX + 32];
};

enum {
	FAULT_FRAMES,
	FAULT_NAMES,
	FAULT_VALUES,
	FAULT_SCB,
	FAULT_STACKED,
	FAULT_CORE,
	FAULT_DONE,
};

static void	fault_next(struct fault_job *);
static void	fault_incomplete(struct fault_job *, const char *);
static bool	fault_stacked_ok(struct fault_job *, const char **);

/* The record's registers as an object, name to value. */
static json_t *
fault_registers(struct fault_job *j)
{
	json_t *r = json_object_get(j->rec, "registers");

	if (r == NULL) {
		r = json_object();
		json_object_set_new(j->rec, "registers", r);
	}
	return r;
}

/* A register's value as a number (0 if it is not there). */
static unsigned long long
fault_reg(struct fault_job *j, const char *name)
{
	const char *v = json_string_value(json_object_get(fault_registers(j),
	    name));

	return v != NULL ? strtoull(v, NULL, 0) : 0;
}

/* A little-endian 32-bit word at byte offset off of a hex dump. */
static unsigned long
fault_word(const char *hex, size_t off)
{
	unsigned long	v = 0;
	unsigned	b;
	int		i;

	for (i = 3; i >= 0; i--) {
		if (strlen(hex) < (off + i) * 2 + 2 ||
		    sscanf(hex + (off + i) * 2, "%2x", &b) != 1)
			return 0;
		v = (v << 8) | b;
	}
	return v;
}

/* A register's value as the record keeps it: 0x and eight hex digits. */
static json_t *
fault_hex(unsigned long v)
{
	char buf[16];

	snprintf(buf, sizeof buf, "0x%08lx", v);
	return json_string(buf);
}

/* Append the names of the set bits of v to list. */
static void
fault_decode(json_t *list, unsigned long v, const struct fault_bit *bits)
{
	for (; bits->name != NULL; bits++)
		if (v & (1UL << bits->bit))
			json_array_append_new(list, json_string(bits->name));
}

/* The memory a -data-read-memory-bytes returned, as hex. */
static const char *
fault_memory(const struct mi_record *rec)
{
	json_t *mem = json_array_get(json_object_get(rec->results, "memory"),
	    0);

	return json_string_value(json_object_get(mem, "contents"));
}

/* Keep the frames: level, func, file, line, addr. */
static void
fault_frames(struct fault_job *j, const struct mi_record *rec)
{
	json_object_set_new(j->rec, "frames", gdb_frames(json_object_get(
	    rec->results, "stack")));
}

/* Keep the register values under their names. */
static void
fault_values(struct fault_job *j, const struct mi_record *rec)
{
	json_t *regs = gdb_registers(j->names, json_object_get(rec->results,
	    "register-values"));

	json_object_update(fault_registers(j), regs);
	json_decref(regs);
}

/* Decode CFSR, HFSR, MMFAR and BFAR into the record's cortex_m. */
static void
fault_scb(struct fault_job *j, const char *hex)
{
	json_t		*cm = json_object(), *decoded = json_array();
	unsigned long	 cfsr = fault_word(hex, 0), hfsr = fault_word(hex, 4);

	json_object_set_new(cm, "cfsr", fault_hex(cfsr));
	json_object_set_new(cm, "hfsr", fault_hex(hfsr));
	json_object_set_new(cm, "mmfar", fault_hex(fault_word(hex, 12)));
	json_object_set_new(cm, "bfar", fault_hex(fault_word(hex, 16)));
	fault_decode(decoded, cfsr, fault_cfsr_bits);
	fault_decode(decoded, hfsr, fault_hfsr_bits);
	json_object_set_new(cm, "decoded", decoded);
	json_object_set_new(j->rec, "cortex_m", cm);
}

/* The frame the exception stacked, and the function it names. */
static void
fault_stacked(struct fault_job *j, const char *hex)
{
	static const char *const names[] = { "r0", "r1", "r2", "r3", "r12",
	    "lr", "pc", "xpsr" };
	json_t		*cm = json_object_get(j->rec, "cortex_m");
	json_t		*st = json_object(), *e;
	unsigned long	 pc = fault_word(hex, 24);
	size_t		 i;

	for (i = 0; i < 8; i++)
		json_object_set_new(st, names[i], fault_hex(fault_word(hex,
		    i * 4)));
	json_object_set_new(cm, "stacked", st);
	json_array_foreach(json_object_get(j->rec, "frames"), i, e) {
		if (strtoul(json_string_value(json_object_get(e, "addr")) ?:
		    "0", NULL, 0) != pc || json_object_get(e, "func") == NULL)
			continue;
		json_object_set(cm, "faulting", e);
		break;
	}
}

/* One step's answer: keep what it says, then take the next. */
static void
fault_reply(void *arg, const struct mi_record *rec, const char *out,
    size_t len)
{
	struct fault_job	*j = arg;
	const char		*hex, *sp;

	(void)out;
	(void)len;
	if (j->nread == j->nsent)
		log_fatal("session %lu: a fault record's answer that was not "
		    "asked for", j->s->id);
	j->step = j->sent[j->nread++];
	if (rec != NULL && j->step == FAULT_STACKED && j->m_handler &&
	    !fault_stacked_ok(j, &sp)) {
		fault_next(j);
		return;
	}
	if (rec == NULL) {
		if (j->nread < j->nsent)
			return;	/* the batch's last answer frees it */
		/* gdb went away while the record was gathered. */
		json_decref(j->rec);
		json_decref(j->names);
		free(j);
		return;
	}
	if (strcmp(rec->cls, "error") == 0) {
		fault_incomplete(j, json_string_value(json_object_get(
		    rec->results, "msg")));
	} else switch (j->step) {
	case FAULT_FRAMES:
		fault_frames(j, rec);
		break;
	case FAULT_NAMES:
		j->names = json_incref(json_object_get(rec->results,
		    "register-names"));
		break;
	case FAULT_VALUES:
		fault_values(j, rec);
		break;
	case FAULT_SCB:
		if ((hex = fault_memory(rec)) != NULL)
			fault_scb(j, hex);
		break;
	case FAULT_STACKED:
		if ((hex = fault_memory(rec)) != NULL &&
		    json_object_get(j->rec, "cortex_m") != NULL)
			fault_stacked(j, hex);
		break;
	case FAULT_CORE:
		json_object_set_new(j->rec, "core", json_string(j->core));
		break;
	}
	fault_next(j);
}

/*
 * Make the core file 0600 before gdb writes it, as the logs are: gcore
 * opens it for writing and keeps the mode of a file that is there, so a
 * core is never readable by others, not even while it is written. A
 * link planted at its path is not followed, nor left for gdb to follow:
 * then there is no core, and the record says why.
 */
static int
fault_core_file(struct fault_job *j)
{
	char	why[PATH_MAX + 64];
	int	fd;

	fd = open(j->core, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1 || fchmod(fd, 0600) != 0) {
		snprintf(why, sizeof why, "%s: %s", j->core, strerror(errno));
		fault_incomplete(j, why);
		if (fd != -1)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The console command that saves a core file, quoted for MI; NULL: none. */
static char *
fault_core_command(struct fault_job *j)
{
	char	*cmd, *q;

	snprintf(j->core, sizeof j->core, "%s/sessions/%lu.core",
	    dmn.state_dir, j->s->id);
	if (fault_core_file(j) != 0)
		return NULL;
	xasprintf(&cmd, "gcore %s", j->core);
	q = mi_cstring_quote(cmd);
	free(cmd);
	return q;
}

/* A step gdb refused: the record says which, and why. */
static void
fault_incomplete(struct fault_job *j, const char *why)
{
	static const char *const names[] = { "frames", "names", "registers",
	    "scb", "stacked", "core" };
	json_t *list;

	if (j->rec == NULL || j->step >= FAULT_DONE)
		return;
	if ((list = json_object_get(j->rec, "incomplete")) == NULL) {
		list = json_array();
		json_object_set_new(j->rec, "incomplete", list);
	}
	json_array_append_new(list, json_pack("{s:s, s:s}", "step",
	    names[j->step], "error", why != NULL ? why : "?"));
	log_info("session %lu: fault record: %s: %s", j->s->id,
	    names[j->step], why != NULL ? why : "?");
}

/*
 * Why the stacked exception frame cannot be read, or NULL and *sp the
 * stack it is on: lr must hold an EXC_RETURN (0xFFFFFFxx, the handler's
 * first instruction), whose bit 2 says the process stack (psp, if gdb
 * has it) or the main one (sp there).
 */
static const char *
fault_stacked_why(struct fault_job *j, const char **sp)
{
	unsigned long long lr = fault_reg(j, "lr");

	*sp = "sp";
	if ((lr & 0xFFFFFF00ULL) != 0xFFFFFF00ULL)
		return "lr holds no EXC_RETURN: not at a handler's entry";
	if ((lr & 4) && json_object_get(fault_registers(j), "psp") == NULL)
		return "the frame is on the process stack, and gdb has no psp";
	if (lr & 4)
		*sp = "psp";
	return NULL;
}

/* Whether the stacked frame can be read; if not, the record says why. */
static bool
fault_stacked_ok(struct fault_job *j, const char **sp)
{
	json_t		*cm = json_object_get(j->rec, "cortex_m");
	const char	*why = fault_stacked_why(j, sp);

	if (why != NULL && cm != NULL)
		json_object_set_new(cm, "stacked_unavailable", json_string(why));
	return why == NULL;
}

/* Read the stacked exception frame, once the registers say where it is. */
static unsigned long
fault_stacked_read(struct fault_job *j)
{
	const char *sp;

	if (!fault_stacked_ok(j, &sp))
		return 0;
	return mi_command(j->mi, fault_reply, j,
	    "-data-read-memory-bytes 0x%llx 32", fault_reg(j, sp));
}

/*
 * At an M-profile handler's break, read the stacked frame in the first
 * batch, where fault_stacked_why will look for it (psp where lr's bit 2
 * is set, else sp), before the registers are known: its answer is kept
 * only if they then say it is a frame there.
 */
static unsigned long
fault_stacked_ahead(struct fault_job *j)
{
	return mi_command(j->mi, fault_reply, j,
	    "-data-read-memory-bytes \"($lr & 4) ? $psp : $sp\" 32");
}

/* Send the command of the job's step; 0 when the step does not apply. */
static unsigned long
fault_send(struct fault_job *j)
{
	bool		 m = j->m_handler || json_object_get(fault_registers(j),
			    "xpsr") != NULL;
	unsigned long	 t;
	char		*q;

	switch (j->step) {
	case FAULT_FRAMES:
		return mi_command(j->mi, fault_reply, j,
		    "-stack-list-frames 0 63");
	case FAULT_NAMES:
		return mi_command(j->mi, fault_reply, j,
		    "-data-list-register-names");
	case FAULT_VALUES:
		return mi_command(j->mi, fault_reply, j,
		    "-data-list-register-values x");
	case FAULT_SCB:
		return !m ? 0 : mi_command(j->mi, fault_reply, j,
		    "-data-read-memory-bytes %s %d", FAULT_SCB_ADDR,
		    FAULT_SCB_LEN);
	case FAULT_STACKED:
		if (j->m_handler)
			return fault_stacked_ahead(j);
		return !m ? 0 : fault_stacked_read(j);
	case FAULT_CORE:
		if (!j->s->l.core || m)
			return 0;
		if ((q = fault_core_command(j)) == NULL)
			return 0;
		t = mi_command(j->mi, fault_reply, j,
		    "-interpreter-exec console %s", q);
		free(q);
		return t;
	}
	return 0;
}

/*
 * Whether a step ends a batch: those after it need its answer. The first
 * three need nothing, and gdb answers them in one go, with the SCB's read
 * and the stacked frame's where the stop is at an M-profile handler
 * already; elsewhere what follows reads registers and the SCB's answer.
 */
static bool
fault_batch_ends(const struct fault_job *j, int step)
{
	if (step == FAULT_VALUES)
		return !j->m_handler;
	if (step == FAULT_SCB)
		return !j->m_handler;
	return step > FAULT_VALUES;
}

/* Send the next batch's commands, in one write; how many there are. */
static int
fault_batch(struct fault_job *j)
{
	mi_cork(j->mi);
	while (j->next < FAULT_DONE) {
		j->step = j->next++;
		if (fault_send(j) != 0)
			j->sent[j->nsent++] = j->step;
		if (j->nsent > 0 && fault_batch_ends(j, j->step))
			break;
	}
	mi_uncork(j->mi);
	return j->nsent;
}

/*
 * Once the batch is all answered, send the next one, of the steps that
 * apply; after the last, the record is the session's.
 */
static void
fault_next(struct fault_job *j)
{
	if (j->nread < j->nsent)
		return;
	j->nread = j->nsent = 0;
	if (fault_batch(j) > 0)
		return;
	if (j->rec != NULL) {
		session_fault(j->s, j->rec);
		bundle_auto(j->s, "fault", NULL, NULL);
	}
	json_decref(j->names);
	free(j);
}

/* Whether a fault break's location is one of the M-profile handlers. */
static bool
fault_m_handler(const char *location)
{
	size_t i;

	for (i = 0; location != NULL && fault_cortex_m[i] != NULL; i++)
		if (strcmp(location, fault_cortex_m[i]) == 0)
			return true;
	return false;
}

/* Whether a signal's name is one a target dies of. */
static bool
fault_is_signal(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && fault_signals[i] != NULL; i++)
		if (strcmp(fault_signals[i], name) == 0)
			return true;
	return false;
}

/*
 * gdb stopped the target: on a fatal signal, or at one of the session's
 * fault breaks (known by number, so a user's breakpoint costs nothing),
 * start gathering the fault record.
 */
void
fault_stopped(struct gdb_data *g, const struct mi_record *rec)
{
	struct session		*s = g->s;
	const char		*reason, *sig, *bkpt;
	struct fault_job	*j;

	reason = json_string_value(json_object_get(rec->results, "reason"));
	sig = json_string_value(json_object_get(rec->results, "signal-name"));
	bkpt = json_string_value(json_object_get(rec->results, "bkptno"));
	if (reason == NULL)
		return;
	if (strcmp(reason, "signal-received") == 0 && !fault_is_signal(sig))
		return;
	if (strcmp(reason, "breakpoint-hit") == 0 &&
	    !gdb_breaks_internal(g, bkpt))
		return;
	if (strcmp(reason, "signal-received") != 0 &&
	    strcmp(reason, "breakpoint-hit") != 0)
		return;
	j = xcalloc(1, sizeof *j);
	j->s = s;
	j->mi = g->mi;
	j->rec = json_pack("{s:s}", "reason", reason);
	if (sig != NULL)
		json_object_set_new(j->rec, "signal", json_string(sig));
	if (strcmp(reason, "breakpoint-hit") == 0) {
		json_object_set_new(j->rec, "bkptno", json_string(bkpt));
		json_object_set_new(j->rec, "location", json_string(
		    gdb_breaks_location(g, bkpt)));
		j->m_handler = fault_m_handler(gdb_breaks_location(g, bkpt));
	}
	log_info("session %lu: %s%s%s: gathering the fault record", s->id,
	    reason, sig != NULL ? " " : "", sig != NULL ? sig : "");
	fault_next(j);
}

/* The breakpoints whose hit is a fault: the kind's defaults, then --fault-break. */
json_t *
fault_breaks(const struct session *s)
{
	json_t	*all = json_array();
	size_t	 i;

	for (i = 0; !s->l.no_fault_defaults && s->backend->fault_defaults !=
	    NULL && s->backend->fault_defaults[i] != NULL; i++)
		json_array_append_new(all, json_string(
		    s->backend->fault_defaults[i]));
	json_array_extend(all, s->l.fault_breaks);
	return all;
}
