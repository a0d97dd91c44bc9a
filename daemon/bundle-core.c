/*
 * A board's core in its bundle: in the same run-control job that halts
 * the target for the backtrace, gdb reads the registers and the memory
 * core-map.c plans (RAM, the stack, the System Control Block), in reads
 * of at most CORE_CHUNK; its answers become an ELF core (core-write.c)
 * that `gdb-multiarch FIRMWARE.elf core` loads. The core's bytes are
 * written last, on the threadpool, whole or not at all under the
 * bundle's bound; what gdb could not read, or the core's own bound left
 * out, the manifest's board_core says.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hex.h"
#include "gdb.h"
#include "bundle.h"
#include "core.h"

/* The MI commands this adds, known again among the job's answers. */
#define BUNDLE_CORE_NAMES	"-data-list-register-names"
#define BUNDLE_CORE_VALUES	"-data-list-register-values x"
#define BUNDLE_CORE_READ	"-data-read-memory-bytes "

/* The general registers, in the order of NT_PRSTATUS. */
static const char *const bundle_core_regnames[16] = {
	"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10",
	"r11", "r12", "sp", "lr", "pc"
};

/* What the job's answers made so far. */
struct bundle_core_build {
	json_t			*names;
	json_t			*regs;		/* name to value */
	struct core_seg		*segs;
	size_t			 nsegs;
	json_t			*regions;	/* [{what, start, bytes}] */
	json_t			*unread;	/* [{what, start, error}] */
};

/* The session's program as a path from /, in buf; NULL if it has none. */
static const char *
bundle_core_program(const struct session *s, char *buf, size_t len)
{
	const char *prog = json_string_value(json_array_get(s->l.argv, 0));

	if (prog == NULL)
		return NULL;
	if (prog[0] == '/' || s->l.cwd == NULL)
		snprintf(buf, len, "%s", prog);
	else if ((size_t)snprintf(buf, len, "%s/%s", s->l.cwd, prog) >= len)
		return NULL;
	return buf;
}

/* s quoted for a POSIX shell where it needs it, appended to out. */
static void
bundle_core_quote(char **out, const char *s)
{
	char		*n;
	const char	*p;
	size_t		 len = strlen(*out);

	if (*s != '\0' && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
	    "OPQRSTUVWXYZ0123456789_./-+:,=@%") == strlen(s)) {
		xasprintf(&n, "%s%s%s", *out, len > 0 ? " " : "", s);
		free(*out);
		*out = n;
		return;
	}
	n = xmalloc(len + 4 * strlen(s) + 4);
	memcpy(n, *out, len);
	if (len > 0)
		n[len++] = ' ';
	n[len++] = '\'';
	for (p = s; *p != '\0'; p++) {
		if (*p == '\'') {
			memcpy(n + len, "'\\''", 4);
			len += 4;
		} else
			n[len++] = *p;
	}
	n[len++] = '\'';
	n[len] = '\0';
	free(*out);
	*out = n;
}

/*
 * The one command that opens the bundle's core with its program: the
 * session's debugger, the program (a native one attached by pid has
 * none: gdb -c finds it from the core), the core (in the bundle's
 * directory once an archive is unpacked); NULL without a core.
 */
char *
bundle_core_command(struct bundle *b)
{
	const struct session	*s = b->s;
	const char		*dbg, *prog;
	char			 path[PATH_MAX], core[PATH_MAX + 8];
	char			*cmd;

	if (!bundle_manifest_has(b, "core"))
		return NULL;
	prog = bundle_core_program(s, path, sizeof path);
	dbg = s->backend == &backend_gdb ? "gdb" : s->l.debugger != NULL ?
	    s->l.debugger : s->backend->debugger != NULL ?
	    s->backend->debugger : "gdb";
	snprintf(core, sizeof core, "%s%score", b->tar ? "" : b->path,
	    b->tar ? "" : "/");
	cmd = xstrdup("");
	bundle_core_quote(&cmd, dbg);
	bundle_core_quote(&cmd, prog != NULL ? prog : "-c");
	bundle_core_quote(&cmd, core);
	return cmd;
}

/* Ask gdb for one region, in reads of at most CORE_CHUNK. */
static void
bundle_core_ask_region(struct gdb_job *j, const struct core_region *r)
{
	uint32_t off, n;

	if (r->from_sp) {
		gdb_job_add(j, BUNDLE_CORE_READ "$sp %u", r->len);
		return;
	}
	for (off = 0; off < r->len; off += n) {
		n = r->len - off > CORE_CHUNK ? CORE_CHUNK : r->len - off;
		gdb_job_add(j, BUNDLE_CORE_READ "0x%08x %u", r->addr + off, n);
	}
}

/*
 * A board session's core: plan it from the program's ELF and add gdb's
 * reads to the job; false (and the manifest says why) if there is none.
 */
bool
bundle_core_ask(struct bundle *b, struct gdb_job *j)
{
	char	 path[PATH_MAX], why[PATH_MAX + 128];
	size_t	 i;

	if (bundle_core_program(b->s, path, sizeof path) == NULL) {
		bundle_missing(b, "core", "the session names no program: a "
		    "board core needs its ELF's load map");
		return false;
	}
	b->board_map = xcalloc(1, sizeof *b->board_map);
	if (core_map_plan(path, b->board_map, why, sizeof why) != 0) {
		bundle_missing(b, "core", why);
		core_map_free(b->board_map);
		free(b->board_map);
		b->board_map = NULL;
		return false;
	}
	gdb_job_add(j, BUNDLE_CORE_NAMES);
	gdb_job_add(j, BUNDLE_CORE_VALUES);
	for (i = 0; i < b->board_map->nregions; i++)
		bundle_core_ask_region(j, &b->board_map->regions[i]);
	return true;
}

/* One block gdb read: a segment of the core, and a region of the manifest. */
static void
bundle_core_block(struct bundle_core_build *c, const char *what, json_t *blk)
{
	const char	*begin = json_string_value(json_object_get(blk, "begin"));
	const char	*end = json_string_value(json_object_get(blk, "end"));
	const char	*hex = json_string_value(json_object_get(blk, "contents"));
	unsigned long	 a, e;
	unsigned char	*data;
	size_t		 len;

	if (begin == NULL || end == NULL || hex == NULL)
		return;
	a = strtoul(begin, NULL, 0);
	e = strtoul(end, NULL, 0);
	if (e <= a || e - a > CORE_MAX || strlen(hex) != (e - a) * 2 ||
	    (data = hex_decode(hex, strlen(hex), &len)) == NULL)
		return;
	c->segs = xreallocarray(c->segs, c->nsegs + 1, sizeof *c->segs);
	c->segs[c->nsegs++] = (struct core_seg){ .addr = a, .len = e - a,
	    .data = data };
	json_array_append_new(c->regions, json_pack("{s:s, s:s, s:I}", "what",
	    what, "start", begin, "bytes", (json_int_t)(e - a)));
}

/* One read's answer: its blocks, or why there are none. */
static void
bundle_core_read(struct bundle_core_build *c, const struct core_region *r,
    const char *cmd, json_t *reply)
{
	const char	*cls = json_string_value(json_object_get(reply, "class"));
	const char	*at = cmd + strlen(BUNDLE_CORE_READ);
	json_t		*blk;
	size_t		 i;

	if (reply == NULL || cls == NULL || strcmp(cls, "error") == 0) {
		json_array_append_new(c->unread, json_pack("{s:s, s:s%, s:s}",
		    "what", r->what, "start", at, strcspn(at, " "), "error",
		    reply == NULL ? "gdb did not answer" : json_string_value(
		    json_object_get(reply, "msg")) ?: "?"));
		return;
	}
	json_array_foreach(json_object_get(reply, "memory"), i, blk)
		bundle_core_block(c, r->what, blk);
}

/* Which region of the map the n-th read of the job is. */
static const struct core_region *
bundle_core_region(const struct core_map *m, size_t n)
{
	size_t	i, reads;

	for (i = 0; i < m->nregions; i++) {
		reads = m->regions[i].from_sp ? 1 : (m->regions[i].len +
		    CORE_CHUNK - 1) / CORE_CHUNK;
		if (n < reads)
			return &m->regions[i];
		n -= reads;
	}
	return NULL;
}

/* The registers' values into regs; why not, or NULL. */
static const char *
bundle_core_regs(const struct bundle_core_build *c, struct core_regs *regs)
{
	const char	*v;
	json_t		*psr;
	int		 i;

	for (i = 0; i < 16; i++) {
		v = json_string_value(json_object_get(c->regs,
		    bundle_core_regnames[i]));
		if (v == NULL)
			return "gdb gave no r0-r15: not a 32-bit Arm target";
		regs->r[i] = strtoul(v, NULL, 0);
	}
	psr = json_object_get(c->regs, "xpsr");
	regs->m_profile = psr != NULL;
	if (psr == NULL)
		psr = json_object_get(c->regs, "cpsr");
	regs->psr = json_string_value(psr) != NULL ? strtoul(
	    json_string_value(psr), NULL, 0) : 0;
	return NULL;
}

/* The core from what gdb answered: its bytes kept for bundle_queue, and its record. */
static void
bundle_core_make(struct bundle *b, struct bundle_core_build *c)
{
	struct core_regs	 regs = { 0 };
	const char		*why;

	if (c->regs == NULL || (why = bundle_core_regs(c, &regs)) != NULL) {
		bundle_missing(b, "core", c->regs == NULL ? "gdb did not give "
		    "the registers" : why);
		return;
	}
	b->board_core = core_write(&regs, c->segs, c->nsegs,
	    &b->board_core_len);
	b->board_info = json_pack("{s:O, s:O, s:O, s:i, s:s}", "regions",
	    c->regions, "unread", c->unread, "cut", b->board_map->cut, "bound",
	    CORE_MAX, "registers", regs.m_profile ? "r0-r15, xpsr" :
	    "r0-r15, cpsr");
}

/* gdb answered the job: make the board core, if it was asked for. */
void
bundle_core_take(struct bundle *b, struct gdb_job *j)
{
	struct bundle_core_build	 c = { 0 };
	const struct core_region	*r;
	const char			*cmd;
	json_t				*reply;
	size_t				 i, n = 0;

	if (b->board_map == NULL)
		return;
	c.regions = json_array();
	c.unread = json_array();
	for (i = 0; i < json_array_size(j->cmds); i++) {
		cmd = json_string_value(json_array_get(j->cmds, i));
		reply = json_array_get(j->replies, i);
		if (strcmp(cmd, BUNDLE_CORE_NAMES) == 0)
			c.names = json_object_get(reply, "register-names");
		else if (strcmp(cmd, BUNDLE_CORE_VALUES) == 0 && reply != NULL)
			c.regs = gdb_registers(c.names, json_object_get(reply,
			    "register-values"));
		else if (strncmp(cmd, BUNDLE_CORE_READ,
		    strlen(BUNDLE_CORE_READ)) == 0 && (r = bundle_core_region(
		    b->board_map, n++)) != NULL)
			bundle_core_read(&c, r, cmd, reply);
	}
	bundle_core_make(b, &c);
	for (i = 0; i < c.nsegs; i++)
		free(c.segs[i].data);
	free(c.segs);
	json_decref(c.regs);
	json_decref(c.regions);
	json_decref(c.unread);
}

/* The bundle goes: what its board core held. */
void
bundle_core_free(struct bundle *b)
{
	if (b->board_map != NULL)
		core_map_free(b->board_map);
	free(b->board_map);
	free(b->board_core);
	json_decref(b->board_info);
}
