/*
 * The join files' own (join.c, join-chan.c, join-news.c, join-seed.c,
 * method-join.c): a joined MI client, its channel and its commands in
 * flight, grouped by the file that defines each name.
 */
#ifndef DBGCTL_JOIN_H
#define DBGCTL_JOIN_H

#include "daemon.h"

struct gdb_data;
struct join_chan;
struct join_cmd;
struct mi_filter;
struct mi_record;
typedef void (*join_internal_cb)(struct join_chan *, const struct mi_record *);

/* A new-ui of the session's gdb, on a pty of ours; reused, never closed. */
struct join_chan {
	TAILQ_ENTRY(join_chan)	 entry;
	struct gdb_data		*g;
	uint64_t		 id;		/* its tokens' top half */
	bool			 mi2;
	bool			 ready;		/* gdb opened it */
	struct console		*con;
	struct frame		 frame;
	struct join		*j;		/* its client, or NULL: idle */
	uint32_t		 next;		/* its tokens' bottom half */
	unsigned		 prompts;	/* prompts of ours, not shown */
	TAILQ_HEAD(, join_cmd)	 cmds;		/* written, not answered */
};

/* One joined client. */
struct join {
	struct conn		*c;		/* NULL once it is gone */
	uint64_t		 c_serial;	/* who it is in target records */
	struct request		*req;		/* the mi request, until answered */
	struct session		*s;
	struct gdb_data		*g;
	struct join_chan	*ch;
	bool			 mi2;
	bool			 keep_breakpoints;
	bool			 leave_halted;
	bool			 observe;
	bool			 full;		/* may run code of its own */
	bool			 stdio;		/* served from its stdin, stdout */
	bool			 was_running;	/* the target ran when it came */
	bool			 live;		/* seeded: gdb's lines are its */
	bool			 leaving;	/* waits for its answers, then goes */
	char			*exit_token;	/* its -gdb-exit's, answered last */
	struct timer		*leave_timer;	/* bounds that wait */
	bool			 feeding;	/* inside its input's frame_feed */
	bool			 gone;		/* its connection closed meanwhile */
	long			 pid;		/* the program's, from the seed */
	char			*program;	/* resolved, or NULL */
	json_t			*groups;	/* the seed's thread groups */
	json_t			*varobjs;	/* names it made */
	json_t			*bkpts;		/* numbers it made */
	struct frame		 in;		/* its command lines */
	struct frame		 sig;		/* its socket's, with stdio */
};

/* A command written to a channel and not answered yet. */
struct join_cmd {
	TAILQ_ENTRY(join_cmd)	 entry;
	uint64_t		 token;
	struct join		*j;		/* whose; NULL once it left */
	char			*ctoken;	/* the client's token, or "" */
	int			 flags;		/* MIF_* */
	char			*cmd;		/* as the client wrote it */
	join_internal_cb	 internal;	/* ours: answered here */
};

/* join.c: a client's side. */
void		 join_array_drop(json_t *, const char *);
void		 join_answered(struct join_cmd *, const struct mi_record *,
		    const char *line, size_t len);
bool		 join_in_flight(const struct join *);
void		 join_left(struct join *);
void		 join_leave(struct join *, const char *exit_token);
void		 join_live(struct join *);
void		 join_write(struct join *, const char *ctoken, const char *cmd,
		    int flags);
void		 join_interrupt(struct join *);
void		 join_answer(struct join *, const char *ctoken,
		    const struct mi_filter *);
void		 join_leave_chan(struct join *);

/* join-chan.c: the channels and what they carry. */
void		 join_chan_flush(void);
void		 join_chan_forget(struct join *);
void		 join_chan_send(struct join *, const char *, size_t);
void		 join_chan_sendf(struct join *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
struct join_cmd	*join_chan_write(struct join_chan *, const char *cmd);
void		 join_chan_internal(struct join_chan *, const char *cmd,
		    join_internal_cb);
int		 join_chan_take(struct join *, struct rpc_error *);

/* join-news.c: breakpoints and stops, by whom. */
void		 join_news_break_made(struct gdb_data *, struct join *,
		    const struct mi_record *, const char *line, size_t len);
void		 join_news_break_deleted(struct gdb_data *, struct join *,
		    const char *cmd);

/* join-seed.c: what a client is told of the session as it comes. */
void		 join_seed(struct join *);
void		 join_seed_event(struct gdb_data *, const struct mi_record *);
void		 join_seed_close(struct gdb_data *);
void		 join_seeded(struct join *);

/* method-join.c */
void		 join_fail(struct join *, const char *why);
void		 join_gone(struct join *);

#endif
