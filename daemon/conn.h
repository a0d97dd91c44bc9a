/*
 * A client connection: its modes (rpc, pipe, attach, join), its state, and
 * what conn.c offers the files that read from it and write to it.
 */
#ifndef DBGCTL_CONN_H
#define DBGCTL_CONN_H

#include "daemon.h"

struct listener;

/* conn.c: one client connection, carrying requests or raw bytes. */
/* A connection's or a listener's socket: a Unix one or a TCP one. */
union listener_handle {
	uv_handle_t		 handle;
	uv_pipe_t		 pipe;
	uv_tcp_t		 tcp;
};

/* What else wants to know that a connection closed (a lease). */
typedef void (*conn_hook_cb)(struct conn *, void *arg);
struct conn_hook;
/* Descriptors kept free at accepts, for sessions and refusals. */
#define CONN_FD_RESERVE 64
/* Unsent bytes a connection may hold before it is dropped. */
#define CONN_WQ_MAX (64 * 1024 * 1024)
/* Bytes of its waiting writes after which a connection is read no more. */
#define CONN_HOLD_MAX (4 * 1024 * 1024)

/* What a connection does with what its peer sends (rpc, pipe, attach). */
struct conn_mode {
	const char	*name;
	bool		 raw;		/* bytes, not JSON lines */
	/* The mode's own state for a new connection (rpc), or NULL. */
	void	       *(*open)(void);
	/* Bytes from the peer; returns how many it used (the mode changed). */
	size_t		(*input)(struct conn *, const char *, size_t);
	void		(*eof)(struct conn *);
	/* Queued output was written: producers may go on. */
	void		(*drained)(struct conn *);
	void		(*close)(struct conn *);
};

struct conn {
	TAILQ_ENTRY(conn)	 entry;
	union listener_handle	 h;
	uid_t			 uid;
	pid_t			 pid;		/* a Unix peer's, or 0 */
	bool			 authed;	/* may use every method */
	const struct conn_mode	*mode;
	void			*mode_data;
	bool			 eof;		/* the peer sent no more */
	bool			 finishing;	/* flushing before close */
	bool			 closing;
	bool			 paused;	/* what it sent waits for room */
	bool			 dropped;	/* closed on the next turn */
	struct conn_hook	*hooks;		/* told when it closes */
	unsigned		 npending;	/* its requests still waiting */
	size_t			 held;		/* bytes of its waiting writes */
	char			*in;		/* read, left for a later turn */
	size_t			 inlen;
	TAILQ_ENTRY(conn)	 again_entry;	/* conn.c: waits to be fed in */
	bool			 again;		/* on that list */
	uint64_t		 serial;	/* never the same for two */
	struct method_expect_cursor *cursors;	/* method-expect.c */
	size_t			 ncursors;
	unsigned		 nexpects;	/* its expects that wait */
	size_t			 pattern_bytes;	/* their compiled patterns' */
	uv_stream_t		*rd;		/* conn_in: what it reads */
	uv_stream_t		*wr;		/* conn_out: where it writes */
	bool			 fed;		/* has read from its socket */
	unsigned		 nhandles;	/* not closed: freed at none */
	uv_pipe_t		 fds[2];	/* dial.c: stdin, stdout passed */
	unsigned		 nfds;		/* of those, taken */
	bool			 claimed;	/* a request took them */
	bool			 dialed;	/* served from them */
};

void	 conn_accept(struct listener *);
void	 conn_set_mode(struct conn *, const struct conn_mode *, void *);
void	 conn_send(struct conn *, json_t *msg);
void	 conn_send_id(struct conn *, json_t *msg, const char *id_text);
void	 conn_send_raw(struct conn *, const char *, size_t);
void	 conn_send_line(struct conn *, const char *, size_t);
void	 conn_send_text(struct conn *, char *, size_t);
size_t	 conn_queued(struct conn *);
void	 conn_pause(struct conn *);
void	 conn_resume(struct conn *);
void	 conn_finish(struct conn *);
void	 conn_drop(struct conn *);
void	 conn_close(struct conn *);
void	 conn_close_all(void);
size_t	 conn_count(void);
void	 conn_abandon_all(void);
void	 conn_hook_add(struct conn *, conn_hook_cb, void *arg);
void	 conn_hook_remove(struct conn *, conn_hook_cb, void *arg);
uv_stream_t *conn_out(struct conn *);
void	 conn_read_cb(uv_stream_t *, ssize_t, const uv_buf_t *);
void	 conn_free_cb(uv_handle_t *);

#endif
