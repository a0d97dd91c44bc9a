/*
 * What a joined MI client (dbgctl mi) may send to a gdb it shares with the
 * session's owner: one table, consulted before a command is written, that
 * keeps a front end from ending or replacing the shared program.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* The most words of a command the filter looks at. */
#define MI_FILTER_ARGS	16

/* A command's words, unquoted. */
struct mi_filter_words {
	char	*v[MI_FILTER_ARGS];
	int	 n;
	char	 buf[1024];
};

/* One entry: a command (MI operation or CLI word) and who decides on it. */
struct mi_filter_entry {
	const char	*name;
	size_t		 min;		/* CLI: the shortest abbreviation */
	void		(*decide)(const struct mi_filter_ctx *,
			    const struct mi_filter_words *, struct mi_filter *);
	int		 flags;		/* MIF_* it carries when it passes */
	const char	*why;		/* a refusal's reason, if fixed */
};

/* Split a command into words, C-style quotes undone; -1 if it is too long. */
static int
mi_filter_split(const char *cmd, struct mi_filter_words *w)
{
	char	*o = w->buf, *end = w->buf + sizeof w->buf - 1;

	w->n = 0;
	while (*cmd != '\0' && w->n < MI_FILTER_ARGS) {
		while (isspace((unsigned char)*cmd))
			cmd++;
		if (*cmd == '\0')
			break;
		w->v[w->n++] = o;
		while (*cmd != '\0' && !isspace((unsigned char)*cmd)) {
			if (o >= end)
				return -1;
			if (*cmd != '"') {
				*o++ = *cmd++;
				continue;
			}
			for (cmd++; *cmd != '\0' && *cmd != '"'; cmd++) {
				if (*cmd == '\\' && cmd[1] != '\0')
					cmd++;
				if (o >= end)
					return -1;
				*o++ = *cmd;
			}
			if (*cmd == '"')
				cmd++;
		}
		*o++ = '\0';
	}
	return 0;
}

/* Answer with a refusal that names why. */
static void
mi_filter_refuse(struct mi_filter *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void
mi_filter_refuse(struct mi_filter *f, const char *fmt, ...)
{
	va_list ap;

	f->verdict = MIF_ERROR;
	va_start(ap, fmt);
	vsnprintf(f->why, sizeof f->why, fmt, ap);
	va_end(ap);
}

/* A command refused for the entry's fixed reason. */
static void
mi_filter_fixed(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	(void)ctx;
	(void)w;
	f->verdict = MIF_ERROR;
}

/* -gdb-exit, quit: this channel leaves; gdb and the program stay. */
static void
mi_filter_exit(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	(void)ctx;
	(void)w;
	f->verdict = MIF_EXIT;
}

/* -target-attach, attach: a no-op for the session's own pid. */
static void
mi_filter_attach(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	char	*end = NULL;
	long	 pid = w->n > 1 ? strtol(w->v[1], &end, 10) : 0;

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
static void
mi_filter_target(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	const char *type = w->n > 1 ? w->v[1] : "";

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
static void
mi_filter_file(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	char	 path[PATH_MAX];
	bool	 same;

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
static void
mi_filter_set(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	const char	*what = w->n > 1 ? w->v[1] : "";
	const char	*v = w->n > 2 ? w->v[2] : "on";
	bool		 async;

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

/* delete with no numbers would take the session's fault breaks too. */
static void
mi_filter_cli_delete(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	if (w->n < 2 && json_object_size(ctx->internal) > 0) {
		mi_filter_refuse(f, "the session's fault breaks would go too: "
		    "delete breakpoints by number");
		return;
	}
	f->flags |= MIF_BREAK_DELETE;
}

/* -break-delete: never one of the session's fault breaks. */
static void
mi_filter_break_delete(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	int k;

	if (w->n < 2) {
		mi_filter_cli_delete(ctx, w, f);
		return;
	}
	for (k = 1; k < w->n; k++)
		if (json_object_get(ctx->internal, w->v[k]) != NULL) {
			mi_filter_refuse(f, "breakpoint %s is the session's "
			    "fault break: it stays", w->v[k]);
			return;
		}
}

/* A command that passes, with the entry's flags. */
static void
mi_filter_pass(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	(void)ctx;
	(void)w;
	(void)f;
}

static void	mi_filter_console(const struct mi_filter_ctx *,
		    const struct mi_filter_words *, struct mi_filter *);

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
	{ "-interpreter-exec", 0, mi_filter_console, 0, NULL },
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
	{ "-break-delete", 0, mi_filter_break_delete, MIF_BREAK_DELETE, NULL },
	{ "-var-create", 0, mi_filter_pass, MIF_VAR_CREATE, NULL },
	{ "-var-delete", 0, mi_filter_pass, MIF_VAR_DELETE, NULL },
	{ NULL, 0, NULL, 0, NULL }
};

/* CLI commands the filter knows, with gdb's shortest abbreviations. */
static const struct mi_filter_entry mi_filter_cli[] = {
	{ "quit", 1, mi_filter_exit, 0, NULL },
	{ "exit", 4, mi_filter_exit, 0, NULL },
	{ "kill", 1, mi_filter_fixed, 0, "the session's program is shared: "
	    "killing it is dbgctl stop's" },
	{ "run", 1, mi_filter_fixed, 0, "the session's program is running "
	    "already: run would start a new copy (dbgctl reset runs it "
	    "again)" },
	{ "start", 5, mi_filter_fixed, 0, "the session's program is running "
	    "already: start would start a new copy" },
	{ "starti", 6, mi_filter_fixed, 0, "the session's program is running "
	    "already: starti would start a new copy" },
	{ "detach", 3, mi_filter_fixed, 0, "the session's program is shared: "
	    "detaching would let go of it for everyone" },
	{ "disconnect", 5, mi_filter_fixed, 0, "the session's target is "
	    "shared: disconnecting would drop it for everyone" },
	{ "new-ui", 6, mi_filter_fixed, 0, "a joined client opens no UIs of "
	    "the shared gdb" },
	{ "attach", 3, mi_filter_attach, 0, NULL },
	{ "target", 3, mi_filter_target, 0, NULL },
	{ "file", 4, mi_filter_file, 0, NULL },
	{ "exec-file", 9, mi_filter_file, 0, NULL },
	{ "set", 3, mi_filter_set, 0, NULL },
	{ "delete", 1, mi_filter_cli_delete, 0, NULL },
	{ "interrupt", 9, mi_filter_pass, MIF_INTERRUPT, NULL },
	{ "continue", 1, mi_filter_pass, MIF_RESUMES, NULL },
	{ "next", 1, mi_filter_pass, MIF_RESUMES, NULL },
	{ "step", 1, mi_filter_pass, MIF_RESUMES, NULL },
	{ "finish", 3, mi_filter_pass, MIF_RESUMES, NULL },
	{ "until", 1, mi_filter_pass, MIF_RESUMES, NULL },
	{ "advance", 3, mi_filter_pass, MIF_RESUMES, NULL },
	{ "jump", 1, mi_filter_pass, MIF_RESUMES, NULL },
	{ "stepi", 2, mi_filter_pass, MIF_RESUMES, NULL },
	{ "nexti", 2, mi_filter_pass, MIF_RESUMES, NULL },
	{ NULL, 0, NULL, 0, NULL }
};

/* The entry of a table a command's first word names, or NULL. */
static const struct mi_filter_entry *
mi_filter_find(const struct mi_filter_entry *table, const char *word,
    bool cli)
{
	const struct mi_filter_entry	*e;
	size_t				 n = strlen(word);

	for (e = table; e->name != NULL; e++) {
		if (!cli && strcmp(e->name, word) == 0)
			return e;
		if (cli && n >= e->min && strncmp(e->name, word, n) == 0)
			return e;
	}
	/* gdb's own aliases of the ones above. */
	if (cli && (strcmp(word, "c") == 0 || strcmp(word, "fg") == 0))
		return mi_filter_find(table, "continue", true);
	if (cli && strcmp(word, "si") == 0)
		return mi_filter_find(table, "stepi", true);
	if (cli && strcmp(word, "ni") == 0)
		return mi_filter_find(table, "nexti", true);
	return NULL;
}

/* Whether an observer may not run this command: it changes something. */
static bool
mi_filter_writes(const char *op, bool cli)
{
	static const char *const prefixes[] = { "-exec-", "-break-",
	    "-dprintf-", "-data-write-", "-var-assign", "-target-", "-file-",
	    NULL };
	const char *const *p;

	if (cli)
		return true;
	for (p = prefixes; *p != NULL; p++)
		if (strncmp(op, *p, strlen(*p)) == 0)
			return true;
	return false;
}

/* Decide on a command's words by one of the tables. */
static void
mi_filter_words(const struct mi_filter_ctx *ctx, struct mi_filter_words *w,
    bool cli, struct mi_filter *f)
{
	const struct mi_filter_entry *e;

	if (w->n == 0)
		return;
	e = mi_filter_find(cli ? mi_filter_cli : mi_filter_mi, w->v[0], cli);
	if (ctx->observe && (e == NULL || e->decide != mi_filter_exit) &&
	    mi_filter_writes(w->v[0], cli)) {
		mi_filter_refuse(f, "an observer runs no command that could "
		    "change the target or the session: %s", w->v[0]);
		return;
	}
	if (e == NULL)
		return;
	f->flags |= e->flags;
	e->decide(ctx, w, f);
	if (f->verdict == MIF_ERROR && f->why[0] == '\0' && e->why != NULL)
		strlcpy(f->why, e->why, sizeof f->why);
	if (f->verdict != MIF_PASS)
		f->flags = 0;
}

/* -interpreter-exec console "CMD": CMD is decided as a CLI command. */
static void
mi_filter_console(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, struct mi_filter *f)
{
	struct mi_filter_words	cli;

	if (w->n < 3 || strcmp(w->v[1], "console") != 0)
		return;
	if (mi_filter_split(w->v[2], &cli) != 0) {
		mi_filter_refuse(f, "a console command longer than %zu bytes",
		    sizeof cli.buf - 1);
		return;
	}
	mi_filter_words(ctx, &cli, true, f);
}

/*
 * Decide on one command line (its token taken off) of a joined client:
 * pass it to gdb, answer it ourselves, refuse it, or end the channel.
 */
void
mi_filter_decide(const struct mi_filter_ctx *ctx, const char *cmd,
    struct mi_filter *f)
{
	struct mi_filter_words w;

	memset(f, 0, sizeof *f);
	f->verdict = MIF_PASS;
	while (isspace((unsigned char)*cmd))
		cmd++;
	if (mi_filter_split(cmd, &w) != 0) {
		/* Only its first words matter; those of a long line too. */
		w.n = w.n > 1 ? w.n - 1 : w.n;
	}
	mi_filter_words(ctx, &w, cmd[0] != '-', f);
}
