/*
 * What a joined MI client (dbgctl mi) may send to a gdb it shares with the
 * session's owner: one table, consulted before a command is written, that
 * keeps a front end from ending or replacing the shared program, running
 * code of its own in gdb (unless it joined with full control) or, as an
 * observer, changing anything. -interpreter-exec is seen through, its
 * inner commands decided by the same rules, to MI_FILTER_DEPTH levels.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mi-filter.h"

/* Answer with a refusal that names why. */
void
mi_filter_refuse(struct mi_filter *f, const char *fmt, ...)
{
	va_list ap;

	f->verdict = MIF_ERROR;
	va_start(ap, fmt);
	vsnprintf(f->why, sizeof f->why, fmt, ap);
	va_end(ap);
}

/* A command refused for the entry's fixed reason. */
void
mi_filter_fixed(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	(void)ctx;
	(void)w;
	(void)depth;
	f->verdict = MIF_ERROR;
}

/* -gdb-exit, quit: this channel leaves; gdb and the program stay. */
void
mi_filter_exit(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	(void)ctx;
	(void)w;
	(void)depth;
	f->verdict = MIF_EXIT;
}

/* -target-attach, attach: a no-op for the session's own pid. */
void
mi_filter_attach(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	char	*end = NULL;
	long	 pid = w->n > 1 ? strtol(w->v[1], &end, 10) : 0;

	(void)depth;
	/*
	 * No pid (a front end writes "undefined" for none) means the
	 * session's own program, as does its pid.
	 */
	if (w->n < 2 || end == w->v[1] || *end != '\0' ||
	    (ctx->pid > 0 && pid == ctx->pid)) {
		f->verdict = MIF_DONE;
		return;
	}
	if (ctx->pid > 0)
		mi_filter_refuse(f, "the session debugs pid %ld, which others "
		    "share: attaching to another would let go of it",
		    ctx->pid);
	else
		mi_filter_refuse(f, "the session debugs its own program, "
		    "which others share: attaching elsewhere would let go of "
		    "it");
}

/* The port of HOST:PORT, and whether the host is this machine's. */
static long
mi_filter_port(const char *addr, bool *local)
{
	const char	*colon = strrchr(addr, ':');
	size_t		 hl;

	if (colon == NULL)
		return -1;
	hl = colon - addr;
	*local = hl == 0 || (hl == 9 && strncmp(addr, "localhost", 9) == 0) ||
	    (hl == 9 && strncmp(addr, "127.0.0.1", 9) == 0);
	return strtol(colon + 1, NULL, 10);
}

/* Whether two HOST:PORT name the same server (":1234" is localhost's). */
static bool
mi_filter_same_remote(const char *a, const char *b)
{
	bool	la = false, lb = false;
	long	pa = mi_filter_port(a, &la), pb = mi_filter_port(b, &lb);

	if (strcmp(a, b) == 0)
		return true;
	return pa > 0 && pa == pb && la && lb;
}

/* -target-select, target: a no-op for the session's own target only. */
void
mi_filter_target(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	const char *type = w->n > 1 ? w->v[1] : "";

	(void)depth;
	if (ctx->remote == NULL && strcmp(type, "native") == 0) {
		f->verdict = MIF_DONE;
		return;
	}
	if (ctx->remote != NULL && (strcmp(type, "remote") == 0 ||
	    strcmp(type, "extended-remote") == 0) && w->n > 2 &&
	    mi_filter_same_remote(w->v[2], ctx->remote)) {
		f->verdict = MIF_DONE;
		return;
	}
	if (ctx->remote != NULL)
		mi_filter_refuse(f, "the session is connected to %s, which "
		    "others share: another target would drop it", ctx->remote);
	else
		mi_filter_refuse(f, "the session debugs a native program, which "
		    "others share: another target would kill it");
}

/* -file-exec-and-symbols, file: a no-op for the session's own program. */
void
mi_filter_file(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	char	 path[PATH_MAX];
	bool	 same;

	(void)depth;
	if (ctx->program == NULL)
		return;
	if (w->n < 2) {
		mi_filter_refuse(f, "the session's program is %s, which "
		    "others share: it cannot be unloaded", ctx->program);
		return;
	}
	same = strcmp(w->v[1], ctx->program) == 0 ||
	    (realpath(w->v[1], path) != NULL &&
	    strcmp(path, ctx->program) == 0);
	if (same) {
		f->verdict = MIF_DONE;
		return;
	}
	mi_filter_refuse(f, "the session's program is %s, which others "
	    "share: loading %s would replace it", ctx->program, w->v[1]);
}

/* Whether an on/off word says on. */
static bool
mi_filter_on(const char *v)
{
	return strcmp(v, "on") == 0 || strcmp(v, "1") == 0 ||
	    strcmp(v, "yes") == 0 || strcmp(v, "enable") == 0;
}

/*
 * -gdb-set, set: mi-async and non-stop are the session's (async on,
 * all-stop) and cannot change while its program runs.
 */
void
mi_filter_set(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	const char	*what = w->n > 1 ? w->v[1] : "";
	const char	*v = w->n > 2 ? w->v[2] : "on";
	bool		 async;

	(void)depth;
	async = strcmp(what, "mi-async") == 0 ||
	    strcmp(what, "target-async") == 0;
	if (!async && strcmp(what, "non-stop") != 0) {
		if (ctx->observe)
			mi_filter_refuse(f, "an observer changes no settings");
		return;
	}
	if (mi_filter_on(v) == async) {
		f->verdict = MIF_DONE;
		return;
	}
	mi_filter_refuse(f, "the session runs with mi-async on and non-stop "
	    "off, shared by every client: %s cannot change", what);
}

/* Whether breakpoint word w (N, or a range N-M) takes a fault break. */
static const char *
mi_filter_fault_break(const struct mi_filter_ctx *ctx, const char *w)
{
	const char	*key, *dash = strchr(w, '-');
	json_t		*v;
	long		 lo = strtol(w, NULL, 10), hi, n;

	hi = dash != NULL ? strtol(dash + 1, NULL, 10) : lo;
	json_object_foreach(ctx->internal, key, v) {
		n = strtol(key, NULL, 10);
		if (strcmp(key, w) == 0 || (n >= lo && n <= hi))
			return key;
	}
	return NULL;
}

/*
 * delete, -break-delete: never one of the session's fault breaks, and
 * delete with no numbers would take them too.
 */
void
mi_filter_delete(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	const char	*hit;
	int		 k;

	(void)depth;
	if (w->n < 2 && json_object_size(ctx->internal) > 0) {
		mi_filter_refuse(f, "the session's fault breaks would go too: "
		    "delete breakpoints by number");
		return;
	}
	for (k = 1; k < w->n; k++)
		if ((hit = mi_filter_fault_break(ctx, w->v[k])) != NULL) {
			mi_filter_refuse(f, "breakpoint %s is the session's "
			    "fault break: it stays", hit);
			return;
		}
	f->flags |= MIF_BREAK_DELETE;
}

/* A command that passes, with the entry's flags. */
void
mi_filter_pass(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	(void)ctx;
	(void)w;
	(void)depth;
	(void)f;
}

/* python, shell, source and the like: code of the client's own in gdb. */
void
mi_filter_code(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	(void)depth;
	if (ctx->full)
		return;
	mi_filter_refuse(f, "%s runs code or commands of the client's own in "
	    "the shared gdb: only a client joined with full control may "
	    "(dbgctl mi --full)", w->v[0]);
}

/*
 * -interpreter-exec INTERP CMD..., and the console's interpreter-exec:
 * each CMD decided as INTERP would run it.
 */
void
mi_filter_interp(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	if (w->n < 3) {
		mi_filter_refuse(f, "%s takes an interpreter and a command",
		    w->v[0]);
		return;
	}
	mi_filter_nested(ctx, w->v[1], w->v + 2, w->n - 2, depth, f);
}

/*
 * -break-commands N CMD...: each CMD runs when the breakpoint is hit, as
 * a console command, so it must pass now and must need no answer of ours.
 */
static void
mi_filter_break_commands(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	int k;

	for (k = 2; k < w->n; k++) {
		mi_filter_cli(ctx, w->v[k], depth + 1, f);
		if (f->verdict == MIF_PASS)
			continue;
		if (f->verdict != MIF_ERROR)
			mi_filter_refuse(f, "\"%s\" as a breakpoint's command "
			    "would act on the shared session when it is hit",
			    w->v[k]);
		return;
	}
	/* Its commands run later: this line resumes nothing. */
	f->flags = 0;
}

/* MI operations the filter knows; any other passes. */
static const struct mi_filter_entry mi_filter_mi[] = {
	{ "-gdb-exit", 0, mi_filter_exit, 0, NULL },
	{ "-exec-run", 0, mi_filter_fixed, 0, "the session's program is "
	    "running already: -exec-run would start a new copy (dbgctl "
	    "reset runs it again)" },
	{ "-exec-abort", 0, mi_filter_fixed, 0, "the session's program is "
	    "shared: killing it is dbgctl stop's" },
	{ "-target-detach", 0, mi_filter_fixed, 0, "the session's program "
	    "is shared: detaching would let go of it for everyone (a client "
	    "leaves with -gdb-exit)" },
	{ "-target-disconnect", 0, mi_filter_fixed, 0, "the session's target "
	    "is shared: disconnecting would drop it for everyone" },
	{ "-target-attach", 0, mi_filter_attach, 0, NULL },
	{ "-target-select", 0, mi_filter_target, 0, NULL },
	{ "-file-exec-and-symbols", 0, mi_filter_file, 0, NULL },
	{ "-file-exec-file", 0, mi_filter_file, 0, NULL },
	{ "-gdb-set", 0, mi_filter_set, 0, NULL },
	{ "-interpreter-exec", 0, mi_filter_interp, 0, NULL },
	{ "-break-commands", 0, mi_filter_break_commands, 0, NULL },
	{ "-var-set-visualizer", 0, mi_filter_code, 0, NULL },
	{ "-exec-interrupt", 0, mi_filter_pass, MIF_INTERRUPT, NULL },
	{ "-exec-continue", 0, mi_filter_pass, MIF_RESUMES, NULL },
	{ "-exec-next", 0, mi_filter_pass, MIF_RESUMES, NULL },
	{ "-exec-step", 0, mi_filter_pass, MIF_RESUMES, NULL },
	{ "-exec-finish", 0, mi_filter_pass, MIF_RESUMES, NULL },
	{ "-exec-until", 0, mi_filter_pass, MIF_RESUMES, NULL },
	{ "-exec-jump", 0, mi_filter_pass, MIF_RESUMES, NULL },
	{ "-exec-next-instruction", 0, mi_filter_pass, MIF_RESUMES, NULL },
	{ "-exec-step-instruction", 0, mi_filter_pass, MIF_RESUMES, NULL },
	{ "-break-insert", 0, mi_filter_pass, MIF_BREAK_INSERT, NULL },
	{ "-dprintf-insert", 0, mi_filter_pass, MIF_BREAK_INSERT, NULL },
	{ "-break-delete", 0, mi_filter_delete, MIF_BREAK_DELETE, NULL },
	{ "-var-create", 0, mi_filter_pass, MIF_VAR_CREATE, NULL },
	{ "-var-delete", 0, mi_filter_pass, MIF_VAR_DELETE, NULL },
	{ NULL, 0, NULL, 0, NULL }
};

/*
 * Decide on a command's words by its entry (NULL: a command the tables do
 * not name); an observer's are first checked to read only.
 */
void
mi_filter_apply(const struct mi_filter_ctx *ctx,
    const struct mi_filter_entry *e, const struct mi_filter_words *w,
    int depth, struct mi_filter *f)
{
	if (e == NULL || e->decide != mi_filter_exit) {
		if (ctx->observe && !mi_filter_observe(w, f))
			return;
	}
	if (e == NULL)
		return;
	f->flags |= e->flags;
	e->decide(ctx, w, depth, f);
	if (f->verdict == MIF_ERROR && f->why[0] == '\0' && e->why != NULL)
		strlcpy(f->why, e->why, sizeof f->why);
	if (f->verdict != MIF_PASS)
		f->flags = 0;
}

/*
 * gdb's options of every MI operation (--all, --thread-group G, --thread
 * N, --frame N, --language L), taken off as its mi_parse does before the
 * operation's own arguments.
 */
static const char *
mi_filter_options(const char *s)
{
	static const char *const opts[] = { "--thread-group ", "--thread ",
	    "--frame ", "--language ", NULL };
	const char *const	*o;

	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (strncmp(s, "--all", 5) == 0 && (s[5] == '\0' ||
		    s[5] == ' ')) {
			s += 5;
			continue;
		}
		for (o = opts; *o != NULL; o++)
			if (strncmp(s, *o, strlen(*o)) == 0)
				break;
		if (*o == NULL)
			return s;
		s += strlen(*o);
		while (isspace((unsigned char)*s))
			s++;
		while (*s != '\0' && !isspace((unsigned char)*s))
			s++;
	}
}

/* Whether s holds a control byte (a tab is a space): no command has one. */
bool
mi_filter_control(const char *s)
{
	for (; *s != '\0'; s++)
		if (iscntrl((unsigned char)*s) && *s != '\t')
			return true;
	return false;
}

/* An MI operation (s at its '-'), decided by the MI table. */
static void
mi_filter_mi_op(const struct mi_filter_ctx *ctx, const char *s, int depth,
    struct mi_filter *f)
{
	const struct mi_filter_entry	*e;
	struct mi_filter_words		 w;
	char				*op;
	size_t				 n = 0;

	if (mi_filter_control(s)) {
		mi_filter_refuse(f, "a command with a control character in it");
		return;
	}
	while (s[n] != '\0' && !isspace((unsigned char)s[n]))
		n++;
	op = xmalloc(n + 1);
	memcpy(op, s, n);
	op[n] = '\0';
	s = mi_filter_options(s + n);
	if (mi_filter_args_mi(s, &w) != 0) {
		mi_filter_refuse(f, "the arguments of %s do not parse as "
		    "gdb/MI's (a c-string unclosed, or with a NUL or a line "
		    "break escaped)", op);
	} else {
		w.rest = s;
		mi_filter_args_name(&w, op);
		for (e = mi_filter_mi; e->name != NULL; e++)
			if (strcmp(e->name, op) == 0)
				break;
		if (depth > 0 && (e->flags & MIF_TRACKED))
			mi_filter_refuse(f, "%s inside -interpreter-exec: the "
			    "daemon keeps track of it (to tell other clients, "
			    "and to clean up when the client leaves) only on a "
			    "line of its own", op);
		else
			mi_filter_apply(ctx, e->name != NULL ? e : NULL, &w,
			    depth, f);
	}
	mi_filter_args_free(&w);
	free(op);
}

/*
 * A line the MI interpreter runs, inside -interpreter-exec mi: as gdb's
 * mi_parse reads it, spaces and a token first, then an operation or a
 * console command.
 */
static void
mi_filter_mi_line(const struct mi_filter_ctx *ctx, const char *s, int depth,
    struct mi_filter *f)
{
	while (isspace((unsigned char)*s))
		s++;
	s += strspn(s, "0123456789");
	if (*s == '-')
		mi_filter_mi_op(ctx, s, depth, f);
	else
		mi_filter_cli(ctx, s, depth, f);
}

/* Whether an interpreter's name is one of gdb 13's MI versions. */
static bool
mi_filter_is_mi(const char *interp)
{
	return strcmp(interp, "mi") == 0 || strcmp(interp, "mi1") == 0 ||
	    strcmp(interp, "mi2") == 0 || strcmp(interp, "mi3") == 0;
}

/*
 * Commands run by an interpreter on the client's behalf, one nesting
 * deeper (-interpreter-exec, interpreter-exec). One command's answer of
 * ours (a no-op, a leave) stands for the line's, since nothing of the line
 * is sent; among several, any such is refused: gdb would run the others.
 */
void
mi_filter_nested(const struct mi_filter_ctx *ctx, const char *interp,
    char *const *cmds, int n, int depth, struct mi_filter *f)
{
	bool	mi = mi_filter_is_mi(interp);
	int	k;

	if (depth >= MI_FILTER_DEPTH) {
		mi_filter_refuse(f, "interpreter-exec nested more than %d "
		    "deep", MI_FILTER_DEPTH);
		return;
	}
	if (!mi && strcmp(interp, "console") != 0) {
		mi_filter_refuse(f, "interpreter-exec of \"%s\": a joined "
		    "client may use console and mi only", interp);
		return;
	}
	for (k = 0; k < n && f->verdict == MIF_PASS; k++) {
		if (mi)
			mi_filter_mi_line(ctx, cmds[k], depth + 1, f);
		else
			mi_filter_cli(ctx, cmds[k], depth + 1, f);
	}
	if (n > 1 && (f->verdict == MIF_DONE || f->verdict == MIF_EXIT))
		mi_filter_refuse(f, "\"%s\" is answered by the daemon alone, "
		    "not among other commands: send it on a line of its own",
		    cmds[k - 1]);
}

/*
 * Decide on one command line (its token taken off) of a joined client:
 * pass it to gdb, answer it ourselves, refuse it, or end the channel.
 * gdb reads the line as our token and cmd: an operation if cmd starts
 * with '-', else a console command.
 */
void
mi_filter_decide(const struct mi_filter_ctx *ctx, const char *cmd,
    struct mi_filter *f)
{
	memset(f, 0, sizeof *f);
	f->verdict = MIF_PASS;
	if (cmd[0] == '-')
		mi_filter_mi_op(ctx, cmd, 0, f);
	else
		mi_filter_cli(ctx, cmd, 0, f);
}
