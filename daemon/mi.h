/*
 * gdb's machine interface: its records parsed (mi-parse.c), strings
 * quoted as c-strings (mi-cstring.c), the channel to one gdb (mi.c), and
 * what a joined client may send (mi-filter.c; the filter's inside is
 * mi-filter.h). Included by the files that speak MI, not by every daemon
 * file.
 */
#ifndef DBGCTL_MI_H
#define DBGCTL_MI_H

#include "daemon.h"

/* mi-parse.c: one gdb/MI output record, parsed. */
enum mi_kind {
	MI_RESULT,	/* ^done, ^running, ^connected, ^error, ^exit */
	MI_EXEC,	/* *running, *stopped: exec async */
	MI_STATUS,	/* +download...: status async */
	MI_NOTIFY,	/* =thread-group-exited, =breakpoint-modified, ... */
	MI_CONSOLE,	/* ~"...": console stream */
	MI_TARGET,	/* @"...": target stream */
	MI_LOG,		/* &"...": log stream */
	MI_PROMPT,	/* (gdb) */
};

/* Tuples and lists nested deeper than this make a line malformed. */
#define MI_PARSE_DEPTH 64

struct mi_record {
	enum mi_kind	 kind;
	bool		 has_token;
	unsigned long	 token;
	char		 cls[64];	/* result or async class: "done", "stopped" */
	json_t		*results;	/* result/async: an object, never NULL */
	char		*text;		/* stream: the unescaped text, NUL-terminated */
	size_t		 textlen;	/* its length (it may hold NUL bytes) */
};

/* Parse one line (no newline; a trailing \r is ignored); -1 with err on a malformed line. */
int	 mi_parse(const char *line, size_t len, struct mi_record *, char *err,
	    size_t errlen);
/* A line cut before its end: token, kind, class, a stream's text so far. */
int	 mi_parse_cut(const char *line, size_t len, struct mi_record *,
	    char *err, size_t errlen);
void	 mi_record_free(struct mi_record *);

/*
 * mi-cstring.c: s as an MI c-string, quotes included, for
 * -interpreter-exec console "...". Caller frees.
 */
char	*mi_cstring_quote(const char *s);

/* mi.c: gdb's machine interface on a second, raw pty. */
/* A command's answer: its result record (NULL: gdb went away) and output. */
typedef void (*mi_reply_cb)(void *arg, const struct mi_record *,
    const char *output, size_t len);
/* A record gdb sent on its own: async, or stream output nobody asked for. */
typedef void (*mi_event_cb)(void *arg, const struct mi_record *);
/*
 * Tokens from mi-channel.h's JOIN_TOKEN_BASE up are joined clients'
 * (join.c): gdb gives some of their results to the first MI UI, ours.
 */
/* A result of another UI's command, as gdb wrote it. */
typedef void (*mi_foreign_cb)(void *arg, const char *line, size_t len);
/* One of our commands was answered: cmd, its record and line. */
typedef void (*mi_answered_cb)(void *arg, const char *cmd,
    const struct mi_record *, const char *line, size_t len);

/* A channel to one gdb's MI, mi.c's and mi-transcript.c's alone. */
struct mi;

struct mi	*mi_open(mi_event_cb, void *arg, char *err, size_t errlen);
void		 mi_hooks(struct mi *, mi_foreign_cb, mi_answered_cb);
const char	*mi_pts(const struct mi *);
struct mi	*mi_adopt(int master, mi_event_cb, void *arg, char *err,
		    size_t errlen);
int		 mi_master(const struct mi *);
unsigned long	 mi_command(struct mi *, mi_reply_cb, void *arg,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
unsigned long	 mi_command_output(struct mi *, mi_reply_cb, void *arg,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void		 mi_cancel(struct mi *, unsigned long token);
void		 mi_cork(struct mi *);
void		 mi_uncork(struct mi *);
void		 mi_close(struct mi *);

/* mi-transcript.c: every line of a channel, in a file of its own. */
int		 mi_transcript(struct mi *, const char *path, uint64_t max,
		    char *err, size_t errlen);
int		 mi_transcript_reopen(struct mi *, const char *path,
		    uint64_t max, char *err, size_t errlen);

/* mi-filter.c: what a joined MI client may send to the shared gdb. */
enum mi_filter_verdict {
	MIF_PASS,		/* written to gdb */
	MIF_DONE,		/* a no-op here: answered ^done */
	MIF_ERROR,		/* refused: answered ^error with why */
	MIF_EXIT		/* the client leaves: answered ^exit */
};
#define MIF_RESUMES	 0x1	/* it resumes the target */
#define MIF_INTERRUPT	 0x2	/* it stops the target */
#define MIF_BREAK_INSERT 0x4	/* an MI breakpoint: gdb tells no other UI */
#define MIF_BREAK_DELETE 0x8
#define MIF_VAR_CREATE	 0x10	/* a varobj: deleted when the client leaves */
#define MIF_VAR_DELETE	 0x20

/* What the filter knows of the session. */
struct mi_filter_ctx {
	const char	*program;	/* its program, resolved, or NULL */
	const char	*remote;	/* HOST:PORT gdb is connected to, or NULL */
	long		 pid;		/* the native program's pid, or 0 */
	bool		 observe;	/* a read-only client */
	bool		 full;		/* may run code of its own in gdb */
	json_t		*internal;	/* the fault breaks, by number, or NULL */
};

struct mi_filter {
	enum mi_filter_verdict	 verdict;
	int			 flags;		/* MIF_*, when it passes */
	char			 why[256];	/* MIF_ERROR: the reason */
};

void	mi_filter_decide(const struct mi_filter_ctx *, const char *cmd,
	    struct mi_filter *);

#endif
