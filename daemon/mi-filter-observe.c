/*
 * What an observer (a client joined with observe) may run: MI operations
 * that read, named in a list (anything else is refused), whose arguments
 * hold no expression that would change the program. gdb's may-write-*
 * settings are global, not a UI's, so the check is by syntax, and it errs
 * on the side of refusing: an assignment of any kind, ++ or --, and a
 * call (a '(' after a name or a closing bracket) are refused wherever
 * they stand, in a string or a comment alike.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "mi-filter.h"

/* Operations an observer may run; a trailing '-' makes a prefix. */
static const char *const mi_filter_observe_ops[] = {
	"-data-evaluate-expression", "-data-list-", "-data-read-memory",
	"-data-read-memory-bytes", "-data-disassemble", "-stack-", "-thread-",
	"-symbol-", "-file-list-", "-list-", "-info-", "-var-create", "-var-delete", "-var-update",
	"-var-list-children", "-var-evaluate-expression", "-var-info-",
	"-var-show-", "-var-set-format", "-var-set-frozen",
	"-var-set-update-range", "-break-list", "-break-info",
	"-gdb-version", "-gdb-show", "-gdb-exit", "-gdb-set",
	"-enable-pretty-printing", "-enable-frame-filters", "-enable-timings",
	"-interpreter-exec", "-inferior-tty-show", "-environment-pwd",
	"-trace-status", "-ada-task-info", "-complete", NULL
};

/* Options of those operations that start with "--" (not a decrement). */
static const char *const mi_filter_observe_options[] = {
	"--", "--all-values", "--simple-values", "--no-values",
	"--skip-unavailable", "--no-frame-filters", "--max-results", "--name",
	"--type", "--include-nondebug", "--available", "--recurse", "--all",
	"--source", "--opcodes", NULL
};

/* Whether op is in a list of names and prefixes. */
static bool
mi_filter_observe_listed(const char *const *list, const char *op)
{
	size_t n;

	for (; *list != NULL; list++) {
		n = strlen(*list);
		if ((*list)[n - 1] == '-' && n > 2 && strncmp(op, *list, n) == 0)
			return true;
		if (strcmp(op, *list) == 0)
			return true;
	}
	return false;
}

/* Whether the '(' at p calls what stands before it (not sizeof). */
static bool
mi_filter_observe_call(const char *s, const char *p)
{
	const char	*q = p, *start;
	size_t		 n;

	while (q > s && isspace((unsigned char)q[-1]))
		q--;
	if (q == s)
		return false;
	if (q[-1] == ')' || q[-1] == ']')
		return true;
	for (start = q; start > s && (isalnum((unsigned char)start[-1]) ||
	    start[-1] == '_' || start[-1] == '$'); start--)
		continue;
	if ((n = q - start) == 0)
		return false;
	return !((n == 6 && strncmp(start, "sizeof", 6) == 0) ||
	    (n == 7 && strncmp(start, "alignof", 7) == 0) ||
	    (n == 8 && strncmp(start, "_Alignof", 8) == 0));
}

/* Whether the '=' at p assigns (=, +=, <<=, ...), not compares. */
static bool
mi_filter_observe_assigns(const char *s, const char *p)
{
	char prev = p > s ? p[-1] : '\0';

	if (prev == '!')
		return false;
	if (prev == '<' || prev == '>')
		return p - 1 > s && p[-2] == prev;
	return true;
}

/* What in an argument could change the program, or NULL. */
static const char *
mi_filter_observe_expr(const char *s)
{
	const char *p;

	if (s[0] == '-' && s[1] == '-' &&
	    mi_filter_observe_listed(mi_filter_observe_options, s))
		return NULL;
	for (p = s; *p != '\0'; p++) {
		if ((p[0] == '+' || p[0] == '-') && p[1] == p[0])
			return "an increment or decrement";
		if (*p == '=' && p[1] == '=') {
			p++;
			continue;
		}
		if (*p == '=' && mi_filter_observe_assigns(s, p))
			return "an assignment";
		if (*p == '(' && mi_filter_observe_call(s, p))
			return "a function call, which runs the program's code";
	}
	return NULL;
}

/*
 * Whether an observer may run an MI operation (w->v[0]) with its
 * arguments; if not, f says why.
 */
bool
mi_filter_observe(const struct mi_filter_words *w, struct mi_filter *f)
{
	const char	*op = w->v[0], *why;
	int		 k;

	if (op[0] != '-' || !mi_filter_observe_listed(mi_filter_observe_ops,
	    op)) {
		mi_filter_refuse(f, "an observer runs only commands that read: "
		    "%s could change the target or the session", op);
		return false;
	}
	/* Their commands are decided themselves; settings by their names. */
	if (strcmp(op, "-interpreter-exec") == 0 || strcmp(op, "-gdb-set") == 0)
		return true;
	for (k = 1; k < w->n; k++)
		if ((why = mi_filter_observe_expr(w->v[k])) != NULL) {
			mi_filter_refuse(f, "an observer changes nothing: \"%s\" "
			    "has %s", w->v[k], why);
			return false;
		}
	return true;
}
