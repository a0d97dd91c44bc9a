/*
 * The joined MI client's filter, inside: what its files (mi-filter.c, the
 * MI operations and nesting; mi-filter-cli.c, gdb's CLI commands;
 * mi-filter-args.c, arguments split as gdb splits them; mi-filter-observe.c,
 * what an observer may read) share and nothing else includes.
 */
#ifndef DBGCTL_MI_FILTER_H
#define DBGCTL_MI_FILTER_H

#include "mi.h"

/*
 * How deep -interpreter-exec (of either interpreter, MI or CLI form) and
 * the commands that run a command (with, thread apply, ...) may nest
 * inside a client's line; deeper is refused.
 */
#define MI_FILTER_DEPTH		4
/*
 * The longest command a command that runs commands may carry (bytes), and
 * how many places in it may name a command the filter decides on.
 */
#define MI_FILTER_APPLY_MAX	1024
#define MI_FILTER_APPLY_WORDS	16
/* What join.c keeps track of from an MI command's answer. */
#define MIF_TRACKED	(MIF_BREAK_INSERT | MIF_BREAK_DELETE | \
			    MIF_VAR_CREATE | MIF_VAR_DELETE)

/* A command's words, unquoted as gdb does, and its text after the name. */
struct mi_filter_words {
	char		**v;		/* v[0] the command as written */
	int		  n;
	size_t		  cap;
	char		 *buf;		/* the words' bytes */
	const char	 *rest;		/* the raw text after v[0] */
};

/* One entry: a command (MI operation or CLI word) and who decides on it. */
struct mi_filter_entry {
	const char	*name;
	size_t		 min;		/* CLI: the shortest abbreviation */
	void		(*decide)(const struct mi_filter_ctx *,
			    const struct mi_filter_words *, int depth,
			    struct mi_filter *);
	int		 flags;		/* MIF_* it carries when it passes */
	const char	*why;		/* a refusal's reason, if fixed */
};

/* mi-filter-args.c */
int	mi_filter_args_mi(const char *, struct mi_filter_words *);
int	mi_filter_args_cli(const char *, struct mi_filter_words *);
void	mi_filter_args_push(struct mi_filter_words *, char *);
void	mi_filter_args_name(struct mi_filter_words *, char *);
void	mi_filter_args_free(struct mi_filter_words *);

/* mi-filter.c */
void	mi_filter_refuse(struct mi_filter *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	mi_filter_apply(const struct mi_filter_ctx *,
	    const struct mi_filter_entry *, const struct mi_filter_words *,
	    int depth, struct mi_filter *);
bool	mi_filter_control(const char *);
void	mi_filter_nested(const struct mi_filter_ctx *, const char *interp,
	    char *const *cmds, int n, int depth, struct mi_filter *);
void	mi_filter_interp(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_fixed(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_exit(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_pass(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_code(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_attach(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_target(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_file(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_set(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);
void	mi_filter_delete(const struct mi_filter_ctx *,
	    const struct mi_filter_words *, int, struct mi_filter *);

/* mi-filter-cli.c */
void	mi_filter_cli(const struct mi_filter_ctx *, const char *line,
	    int depth, struct mi_filter *);

/* mi-filter-observe.c */
bool	mi_filter_observe(const struct mi_filter_words *,
	    struct mi_filter *);

#endif
