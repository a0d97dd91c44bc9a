/*
 * The filter's console commands: a joined client's line that is not an MI
 * operation, or a command inside -interpreter-exec console, -break-commands
 * or a command that runs another (with, thread apply, frame apply, ...).
 * gdb 13 takes a unique prefix of a command's name, and a few aliases, so
 * the table gives each command the shortest word gdb resolves to it (or
 * only finds ambiguous, which gdb refuses anyway).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mi-filter.h"

static void	mi_filter_cli_apply(const struct mi_filter_ctx *,
		    const struct mi_filter_words *, int, struct mi_filter *);

/* CLI commands the filter knows, with gdb's shortest abbreviations. */
static const struct mi_filter_entry mi_filter_cli_table[] = {
	{ "quit", 1, mi_filter_exit, 0, NULL },
	{ "exit", 3, mi_filter_exit, 0, NULL },
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
	{ "disconnect", 4, mi_filter_fixed, 0, "the session's target is "
	    "shared: disconnecting would drop it for everyone" },
	{ "new-ui", 3, mi_filter_fixed, 0, "a joined client opens no UIs of "
	    "the shared gdb" },
	{ "core-file", 3, mi_filter_fixed, 0, "the session's program is "
	    "shared: a core file would replace it for everyone" },
	{ "signal", 3, mi_filter_fixed, 0, "the session's program is shared: "
	    "a signal given to it could end it for everyone (dbgctl signal "
	    "sends one)" },
	{ "queue-signal", 3, mi_filter_fixed, 0, "the session's program is "
	    "shared: a signal queued for it could end it for everyone "
	    "(dbgctl signal sends one)" },
	{ "attach", 2, mi_filter_attach, 0, NULL },
	{ "target", 3, mi_filter_target, 0, NULL },
	{ "file", 3, mi_filter_file, 0, NULL },
	{ "exec-file", 3, mi_filter_file, 0, NULL },
	{ "set", 3, mi_filter_set, 0, NULL },
	{ "delete", 1, mi_filter_delete, 0, NULL },
	/* Code or commands of the client's own, run by gdb. */
	{ "python", 2, mi_filter_code, 0, NULL },
	{ "python-interactive", 7, mi_filter_code, 0, NULL },
	{ "pi", 2, mi_filter_code, 0, NULL },
	{ "guile", 2, mi_filter_code, 0, NULL },
	{ "guile-repl", 6, mi_filter_code, 0, NULL },
	{ "gr", 2, mi_filter_code, 0, NULL },
	{ "source", 2, mi_filter_code, 0, NULL },
	{ "shell", 3, mi_filter_code, 0, NULL },
	{ "!", 1, mi_filter_code, 0, NULL },
	{ "pipe", 3, mi_filter_code, 0, NULL },
	{ "|", 1, mi_filter_code, 0, NULL },
	{ "make", 3, mi_filter_code, 0, NULL },
	{ "eval", 2, mi_filter_code, 0, NULL },
	{ "define", 3, mi_filter_code, 0, NULL },
	{ "define-prefix", 7, mi_filter_code, 0, NULL },
	{ "document", 3, mi_filter_code, 0, NULL },
	{ "alias", 2, mi_filter_code, 0, NULL },
	{ "compile", 5, mi_filter_code, 0, NULL },
	/* The server's own commands: QEMU's monitor quits, or runs a shell. */
	{ "monitor", 2, mi_filter_code, 0, NULL },
	{ "expression", 4, mi_filter_code, 0, NULL },
	/* A loop the client cannot break would hold gdb for everyone. */
	{ "while", 3, mi_filter_code, 0, NULL },
	/* Commands that run a command: it is looked at too. */
	{ "interpreter-exec", 6, mi_filter_interp, 0, NULL },
	{ "with", 3, mi_filter_cli_apply, 0, NULL },
	{ "w", 1, mi_filter_cli_apply, 0, NULL },
	{ "thread", 3, mi_filter_cli_apply, 0, NULL },
	{ "t", 1, mi_filter_cli_apply, 0, NULL },
	{ "frame", 2, mi_filter_cli_apply, 0, NULL },
	{ "f", 1, mi_filter_cli_apply, 0, NULL },
	{ "faas", 2, mi_filter_cli_apply, 0, NULL },
	{ "taas", 3, mi_filter_cli_apply, 0, NULL },
	{ "tfaas", 3, mi_filter_cli_apply, 0, NULL },
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

/*
 * The length of the command name s starts with, as gdb 13's
 * find_command_name_length counts it: "!" and "|" alone, else letters,
 * digits and -_.+<>$ (so "pyt(1)" is "pyt", "!ls" is "!").
 */
static size_t
mi_filter_cli_name_len(const char *s)
{
	size_t n = 0;

	if (*s == '!' || *s == '|')
		return 1;
	while (s[n] != '\0' && (isalnum((unsigned char)s[n]) ||
	    strchr("-_.+<>$", s[n]) != NULL))
		n++;
	return n;
}

/* The entry a command word names, or NULL. */
static const struct mi_filter_entry *
mi_filter_cli_find(const char *word)
{
	const struct mi_filter_entry	*e;
	size_t				 n = strlen(word);

	for (e = mi_filter_cli_table; e->name != NULL; e++)
		if (n >= e->min && strncmp(e->name, word, n) == 0)
			return e;
	/* gdb's own aliases of the ones above. */
	if (strcmp(word, "c") == 0 || strcmp(word, "fg") == 0)
		return mi_filter_cli_find("continue");
	if (strcmp(word, "si") == 0)
		return mi_filter_cli_find("stepi");
	if (strcmp(word, "ni") == 0)
		return mi_filter_cli_find("nexti");
	return NULL;
}

/*
 * with, thread apply, frame apply, faas, taas, tfaas run a command found
 * past words of their own. Rather than parse each one's options as gdb
 * does, every place a command could start (after a space or any byte not
 * a letter) is decided as a command: what any of them would refuse, or
 * answer here, is refused. They do not nest, which keeps this linear.
 */
static void
mi_filter_cli_apply(const struct mi_filter_ctx *ctx,
    const struct mi_filter_words *w, int depth, struct mi_filter *f)
{
	const struct mi_filter_entry	*e;
	const char			*s = w->rest, *p;
	struct mi_filter		 in;
	char				 word[64];
	size_t				 n;
	int				 decided = 0;

	if (strlen(s) > MI_FILTER_APPLY_MAX) {
		mi_filter_refuse(f, "%s with more than %d bytes after it",
		    w->v[0], MI_FILTER_APPLY_MAX);
		return;
	}
	for (p = s; *p != '\0'; p++) {
		if (isspace((unsigned char)*p) || (p > s &&
		    isalpha((unsigned char)p[-1])))
			continue;
		n = mi_filter_cli_name_len(p);
		if (n == 0 || n >= sizeof word)
			continue;
		memcpy(word, p, n);
		word[n] = '\0';
		if ((e = mi_filter_cli_find(word)) == NULL)
			continue;
		if (e->decide == mi_filter_cli_apply ||
		    e->decide == mi_filter_interp) {
			mi_filter_refuse(f, "%s inside %s: commands that run "
			    "commands do not nest here", word, w->v[0]);
			return;
		}
		if (e->decide == mi_filter_pass)
			continue;
		/* Each costs a split of the rest: a line's work stays small. */
		if (++decided > MI_FILTER_APPLY_WORDS) {
			mi_filter_refuse(f, "%s with more than %d commands the "
			    "filter knows after it", w->v[0],
			    MI_FILTER_APPLY_WORDS);
			return;
		}
		memset(&in, 0, sizeof in);
		mi_filter_cli(ctx, p, depth + 1, &in);
		if (in.verdict == MIF_ERROR) {
			mi_filter_refuse(f, "%s", in.why);
			return;
		}
		if (in.verdict != MIF_PASS) {
			mi_filter_refuse(f, "%s inside %s would act on the "
			    "shared session", word, w->v[0]);
			return;
		}
	}
}

/* Decide on a command once its name is known and its arguments split. */
static void
mi_filter_cli_words(const struct mi_filter_ctx *ctx, const char *s,
    size_t n, int depth, struct mi_filter *f)
{
	const struct mi_filter_entry	*e;
	struct mi_filter_words		 w;
	char				*name;

	name = xmalloc(n + 1);
	memcpy(name, s, n);
	name[n] = '\0';
	e = mi_filter_cli_find(name);
	if (ctx->observe && (e == NULL || e->decide != mi_filter_exit)) {
		mi_filter_refuse(f, "an observer runs no console command: "
		    "%s could change the target or the session", name);
		free(name);
		return;
	}
	if (mi_filter_args_cli(s + n, &w) != 0)
		mi_filter_refuse(f, "%s: a backslash inside single quotes "
		    "is read differently by gdb's versions", name);
	else {
		w.rest = s + n;
		mi_filter_args_name(&w, name);
		mi_filter_apply(ctx, e, &w, depth, f);
	}
	mi_filter_args_free(&w);
	free(name);
}

/*
 * A console command, as gdb's execute_command reads it: spaces, then a
 * command's name. Nested ones (depth > 0) may not be empty: gdb would run
 * the last command again, which may be another client's.
 */
void
mi_filter_cli(const struct mi_filter_ctx *ctx, const char *s, int depth,
    struct mi_filter *f)
{
	size_t n;

	if (mi_filter_control(s)) {
		mi_filter_refuse(f, "a console command with a control "
		    "character in it");
		return;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '\0') {
		if (depth > 0)
			mi_filter_refuse(f, "an empty console command repeats "
			    "the last one gdb ran, which may be another "
			    "client's");
		return;
	}
	if ((n = mi_filter_cli_name_len(s)) == 0) {
		if (ctx->observe)
			mi_filter_refuse(f, "an observer runs no console "
			    "command: \"%.40s\" could change the target", s);
		return;
	}
	mi_filter_cli_words(ctx, s, n, depth, f);
}
