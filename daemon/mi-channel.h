/*
 * The MI channel's own: struct mi, shared by mi.c (the channel: commands
 * and their answers, records to the owner) and mi-transcript.c (the
 * channel's transcript). Nobody else includes it.
 */
#ifndef DBGCTL_MI_CHANNEL_H
#define DBGCTL_MI_CHANNEL_H

#include "daemon.h"
#include "mi.h"

/*
 * Tokens from JOIN_TOKEN_BASE up are joined clients' (join.c): gdb gives
 * some of their results to the first MI UI, ours.
 */
#define JOIN_TOKEN_BASE	(1ULL << 32)

/* The channel to one gdb's MI: its pty, the commands sent, the transcript. */
struct mi {
	struct console		*console;
	struct frame		 frame;
	unsigned long		 next_token;
	TAILQ_HEAD(, mi_cmd)	 cmds;		/* sent, not answered */
	bool			 feeding;	/* inside frame_feed */
	bool			 closed;
	mi_event_cb		 cb;
	void			*arg;
	mi_foreign_cb		 foreign;	/* join.c's, or NULL */
	mi_answered_cb		 answered;
	int			 log_fd;	/* the transcript, or -1 */
	uint64_t		 log_size;	/* bytes written to it */
	uint64_t		 log_max;	/* and at most, then cut */
	char			*logbuf;	/* lines not yet written */
	size_t			 loglen;
	size_t			 logcap;
	bool			 corked;	/* lines held for one write */
	char			*cork;
	size_t			 corklen;
	size_t			 corkcap;
};

/* mi-transcript.c */
void	 mi_transcript_add(struct mi *, const char *dir, const char *line,
	    size_t len);
void	 mi_transcript_flush(struct mi *);
void	 mi_transcript_close(struct mi *);

#endif
