/*
 * The transport files' own: its record, whose fields transport.c,
 * transport-in.c and transport-out.c alone read and change; every other
 * file holds a struct transport as an opaque handle and asks their
 * functions.
 */
#ifndef DBGCTL_TRANSPORT_H
#define DBGCTL_TRANSPORT_H

#include "daemon.h"

/* Ends of runs kept ahead of the reader; past them, the newest two merge. */
#define TRANSPORT_RUNS_MAX 16

struct transport {
	int		 child_in;	/* target's stdin, until spawned */
	int		 child_out;	/* target's stdout, until spawned */
	uv_pipe_t	 in;		/* we write the target's stdin */
	uv_poll_t	 out;		/* we read the target's stdout */
	int		 out_fd;	/* its descriptor, while out_open */
	uv_poll_t	 in_poll;	/* room in stdin, for in_at's bytes */
	int		 in_poll_fd;	/* its own descriptor of stdin, or -1 */
	bool		 in_polling;
	uint64_t	 in_at;		/* in_log bytes before it written or queued */
	bool		 in_open;
	bool		 out_open;
	bool		 in_closed;	/* EOF sent or the target closed it */
	bool		 out_eof;	/* every writer has closed */
	bool		 eof_told;	/* to the consumer passed through to */
	bool		 reading;
	bool		 paused;	/* a consumer asked for no more */
	bool		 passthrough;	/* output goes to the callback, unheld */
	bool		 eof_wanted;	/* close stdin once drained */
	bool		 closing;
	unsigned	 handles;	/* open libuv handles */
	unsigned	 writes;	/* handed to libuv, not done */
	struct output	*log;		/* the transcript: every byte read */
	struct output	*in_log;	/* every byte written, or NULL */
	uint64_t	 taken;		/* bytes handed out; the rest is held */
	uint64_t	 ends[TRANSPORT_RUNS_MAX]; /* where runs ended, ahead */
	size_t		 nends;
	bool		 open;		/* a run is live after the last end */
	bool		 exited;	/* the program has exited: input refused */
	unsigned long	 run;		/* the run of the next byte taken, from 1 */
	transport_cb	 cb;
	void		*arg;
};

/* transport.c */
void	transport_handle_closed(uv_handle_t *);
void	transport_close_handle(uv_pipe_t *, bool *);

void	transport_advance(struct transport *);

/* transport-out.c: the target's stdout, read into its transcript. */
uint64_t transport_out_got(const struct transport *);
void	transport_out_watch(struct transport *, int);
void	transport_out_start(struct transport *);
void	transport_out_stop(struct transport *);
void	transport_out_reached(struct transport *);
void	transport_out_close(struct transport *);

/* transport-in.c: the target's stdin, fed from the input's transcript. */
void	transport_in_poll_close(struct transport *);

#endif
