/* dbgctld: the daemon context and the interfaces between its parts. */
#ifndef DBGCTL_DAEMON_H
#define DBGCTL_DAEMON_H

#include <sys/types.h>
#include <sys/queue.h>

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "frame.h"
#include "rpc.h"

struct session;
struct conn;
struct pending;

/* Bytes of recent console output each session keeps in memory. */
#define RING_SIZE (256 * 1024)
/* Most bytes logs -n looks back through for line breaks. */
#define TAIL_SCAN_MAX (64 * 1024 * 1024)
/* Most bytes one logs reply carries (before base64). */
#define LOGS_MAX (256 * 1024)
/* Unsent reply bytes a connection may hold before it is dropped. */
#define CONN_WQ_MAX (64 * 1024 * 1024)
/* Default graceful-stop window. */
#define STOP_TIMEOUT_DEFAULT 5000
#define STOP_TIMEOUT_MAX 3600000

/* A bounded window onto the most recent bytes of a stream. */
struct ring {
	char		*buf;
	size_t		 cap;
	uint64_t	 end;		/* bytes ever written */
};

void	 ring_init(struct ring *, size_t cap);
void	 ring_free(struct ring *);
void	 ring_write(struct ring *, const char *, size_t);
uint64_t ring_start(const struct ring *);
size_t	 ring_read(const struct ring *, uint64_t off, char *, size_t);

/* A session's pseudo-terminal, its recent output and its log file. */
struct console {
	int		 master;	/* -1 once closed */
	int		 slave;		/* daemon's copy until the keeper has it */
	char		 pts[64];
	uv_pipe_t	 pipe;
	bool		 handle;	/* pipe initialised */
	bool		 owned;		/* pipe owns master */
	bool		 reading;
	bool		 drained;	/* EOF seen and everything read */
	int		 log_fd;
	char		*log_path;
	struct ring	 ring;
	struct session	*s;
	struct console	*sink;		/* where output goes, if not here */
};

int	 console_open(struct console *, struct session *, const char *logpath,
	    struct console *sink, char *err, size_t errlen);
void	 console_drain(struct console *);
int	 console_write(struct console *, const char *, size_t);
size_t	 console_queued(struct console *);
void	 console_close(struct console *);
uint64_t console_size(const struct console *);
size_t	 console_read(struct console *, uint64_t off, char *, size_t);
uint64_t console_tail_offset(struct console *, unsigned long lines);

/* Bytes of target output held, and of target input queued, at most. */
#define TRANSPORT_MAX (1024 * 1024)
/* Most bytes one read reply carries (before base64). */
#define READ_MAX (512 * 1024)

/* The target's stdin and stdout as daemon-owned pipes. */
struct transport {
	bool		 enabled;
	struct session	*s;
	int		 child_in;	/* target's stdin, until spawned */
	int		 child_out;	/* target's stdout, until spawned */
	uv_pipe_t	 in;		/* we write the target's stdin */
	uv_pipe_t	 out;		/* we read the target's stdout */
	bool		 in_open;
	bool		 out_open;
	bool		 in_closed;	/* EOF sent or the target closed it */
	bool		 out_eof;	/* every writer has closed */
	bool		 reading;
	char		*buf;		/* output nobody has read yet */
	size_t		 len;
	size_t		 cap;
	struct conn	*raw;		/* client bridged by pipe, if any */
	unsigned	 nwrites;	/* write requests waiting for room */
	unsigned	 writes_in_flight; /* handed to libuv, not done */
	bool		 eof_wanted;	/* close stdin once drained */
};

int	 transport_open(struct transport *, struct session *, char *err,
	    size_t errlen);
void	 transport_spawned(struct transport *);
void	 transport_finish(struct transport *);
size_t	 transport_take(struct transport *, char *, size_t);
size_t	 transport_queued(struct transport *);
int	 transport_write(struct transport *, const char *, size_t);
void	 transport_eof(struct transport *);
void	 transport_resume(struct transport *);
void	 transport_attach(struct transport *, struct conn *);
void	 transport_detach(struct transport *);

/* gdb's machine interface on a second pty. */
struct mi {
	int		 master;
	int		 slave;		/* held so the master never sees EIO */
	char		 pts[64];
	uv_pipe_t	 pipe;
	bool		 open;
	struct frame	 frame;
	unsigned long	 next_token;
	struct session	*s;
};

int		 mi_open(struct mi *, struct session *, char *err,
		    size_t errlen);
unsigned long	 mi_send(struct mi *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
void		 mi_close(struct mi *);

/* Connecting gdb to a remote target. */
void	 remote_start(struct session *);
void	 remote_mi_result(struct session *, unsigned long token,
	    const char *cls, const char *msg);
void	 remote_stop_timer(struct session *);
void	 remote_close(struct session *);

/* Default bound on a remote connection. */
#define CONNECT_TIMEOUT_DEFAULT 10000

/* What a debugger kind is: data plus a few hooks. */
struct backend {
	const char	*name;
	const char	*debugger;	/* default program, NULL for exec */
	bool		 stdio_transport; /* pipes become the program's 0 and 1 */
	const char	*path;		/* PATH the debugger needs, or NULL */
	bool		 mi;		/* needs gdb's MI channel */
	bool		 server;	/* runs a gdbserver first */
	bool		 needs_program;	/* PROGRAM is required */
	/* Build the argv the keeper runs; NULL with err set on failure. */
	char	      **(*argv)(struct session *, char *err, size_t errlen);
	/* The debugger runs; make the session ready (NULL: it is ready). */
	void		(*start)(struct session *);
};

/* A growable NULL-terminated argv. */
struct backend_av {
	char	**v;
	size_t	  n;
	size_t	  cap;
};

const struct backend	*backend_find(const char *);
void			 backend_push(struct backend_av *, const char *);
void			 backend_push_all(struct backend_av *, json_t *array,
			    size_t from);
json_t			*backend_names(void);
void			 backend_argv_free(char **);

/* One process of a session, run under its own keeper. */
struct proc {
	struct session		*s;
	const char		*role;		/* "debugger" or "server" */
	struct console		*console;	/* its pty */
	bool			 used;
	bool			 transport;	/* gets the transport pipes */
	bool			 stdio_transport; /* on 0 and 1, not 4 and 5 */
	char			*exec_name;	/* what the keeper execs */
	pid_t			 pid;
	pid_t			 keeper_pid;
	uv_process_t		 keeper;
	bool			 keeper_live;	/* spawned, not yet exited */
	uv_pipe_t		 ctl;
	bool			 ctl_open;
	struct frame		 ctl_frame;
	bool			 have_exit;
	int			 exit_code;
	int			 exit_signal;
};

enum sstate {
	S_STARTING,
	S_RUNNING,
	S_STOPPING,
	S_EXITED,
	S_FAILED,
};

/* One supervised debugger or program, from launch until it is forgotten. */
struct session {
	TAILQ_ENTRY(session)	 entry;
	unsigned long		 id;
	char			*name;
	const struct backend	*backend;
	enum sstate		 state;

	json_t			*argv;		/* PROGRAM ARG... as launched */
	json_t			*env;		/* additions, object */
	json_t			*commands;	/* -x commands, array */
	char			*cwd;
	char			*debugger;
	long			 stop_timeout;

	struct proc		 main;		/* the debugger or program */
	struct proc		 server;	/* gdbserver or --server */
	long			 stop_ms;	/* the stop being carried out */

	struct console		 console;	/* the session's, main's pty */
	struct console		 server_console;
	char			*server_cmd;	/* --server, {port} unexpanded */
	int			 port;
	uv_tcp_t		 probe;
	uv_connect_t		 probe_req;
	bool			 probing;
	uint64_t		 probe_deadline;
	struct transport	 transport;
	struct mi		 mi;

	char			*remote;	/* HOST:PORT */
	long			 connect_timeout;
	uv_timer_t		 ready_timer;
	bool			 timer_init;
	bool			 timer_armed;
	unsigned long		 connect_token;
	bool			 ran;		/* reached running */
	unsigned long		 ended_gen;	/* loop turn it ended in */
	int			 fail_code;	/* error code of a failed launch */

	char			*error;		/* why it failed */
	int			 error_errno;

	struct conn	       **viewers;	/* attached clients */
	size_t			 nviewers;

	double			 started_at;	/* unix time, seconds */
	double			 ended_at;
};

const char	*session_state_name(enum sstate);
bool		 session_ended(const struct session *);
struct session	*session_create(json_t *params, struct rpc_error *);
struct session	*session_find(json_t *ref, struct rpc_error *);
void		 session_set_state(struct session *, enum sstate);
void		 session_stop(struct session *, long timeout_ms);
void		 session_fail(struct session *, int err, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
void		 session_check_done(struct session *);
json_t		*status_json(const struct session *);
int		 session_signal(struct session *, int sig, pid_t *pgrp,
		    struct rpc_error *);
unsigned long	 session_live_count(void);
void		 session_prune(void);
/* Ended sessions kept in the table unless DBGCTLD_KEEP_ENDED says otherwise. */
#define KEEP_ENDED_DEFAULT 1000

/* Where a debugger finds the transport pipes: /dev/fd/4 and /dev/fd/5. */
#define PROC_FD_IN 4
#define PROC_FD_OUT 5

/* Keeper processes: spawn, control channel, exit. */
void	 proc_init(struct proc *, struct session *, const char *role,
	    struct console *);
int	 proc_spawn(struct proc *, char **argv, char *err, size_t errlen);
void	 proc_stop(struct proc *, long timeout_ms);
bool	 proc_done(const struct proc *);

/* What the session makes of its processes' news. */
void	 session_proc_started(struct proc *);
void	 session_proc_exited(struct proc *);
void	 session_proc_gone(struct proc *);
int	 session_spawn_main(struct session *, char *err, size_t errlen);

/* gdbserver sessions: the server, its port, proof that it listens. */
int	 gdbserver_start(struct session *, char *err, size_t errlen);
void	 gdbserver_started(struct session *);
void	 gdbserver_close(struct session *);

/* Attached clients of a console. */
void	 attach_add(struct session *, struct conn *, unsigned long lines);
void	 attach_remove(struct conn *);
void	 attach_output(struct session *, const char *, size_t);
void	 attach_end(struct session *);
void	 attach_input(struct conn *, const char *, size_t);
void	 attach_drained(struct session *);
int	 attach_resize(struct session *, unsigned rows, unsigned cols,
	    bool redraw);
/* Console lines replayed to a client when it attaches. */
#define ATTACH_REPLAY_LINES 200

/* A client connection. */
struct conn {
	TAILQ_ENTRY(conn)	 entry;
	uv_pipe_t		 pipe;
	struct frame		 frame;
	uid_t			 uid;
	unsigned		 npending;	/* requests still waiting */
	bool			 eof;		/* client sent no more */
	bool			 finishing;	/* flushing before close */
	bool			 closing;
	struct transport	*raw;		/* bridged to a target by pipe */
	struct {
		bool		 all;		/* every session */
		bool		 output;	/* console output too */
		unsigned long	*ids;
		size_t		 n;
	}			 sub;		/* notifications wanted */
	struct session		*viewing;	/* attached to this console */
	bool			 paused;	/* what it sent waits for room */
};

void	 conn_accept(uv_stream_t *);
void	 conn_send(struct conn *, json_t *msg);
void	 conn_reply(struct conn *, json_t *id, json_t *result);
void	 conn_error(struct conn *, json_t *id, const struct rpc_error *,
	    json_t *data);
void	 conn_close(struct conn *);
void	 conn_close_all(void);
void	 conn_request_done(struct conn *);
size_t	 conn_write_queue(struct conn *);
void	 conn_send_raw(struct conn *, const char *, size_t);
void	 conn_raw_eof(struct conn *);
void	 conn_go_raw(struct conn *, struct transport *);
void	 conn_pause(struct conn *);
void	 conn_resume(struct conn *);

/* Notifications to subscribed connections. */
void	 notify_subscribe(struct conn *, unsigned long id, bool output);
void	 notify_unsubscribe(struct conn *, unsigned long id);
void	 notify_state(struct session *);
void	 notify_output(struct session *, const char *, size_t, uint64_t end);

/* Requests that wait for an event; each completes or fails exactly once. */
enum ptype {
	P_LAUNCH,
	P_WAIT,
	P_STOP,
	P_LOGS,
	P_SHUTDOWN,
	P_READ,
	P_WRITE,
	P_ATTACH,
};

struct pending {
	TAILQ_ENTRY(pending)	 entry;
	enum ptype		 type;
	struct conn		*conn;		/* NULL once the client left */
	json_t			*id;
	json_t			*params;
	struct session	       **sessions;
	size_t			 nsessions;
	uv_timer_t		*timer;
	char			*data;		/* bytes a write holds */
	size_t			 len;
};

struct pending	*pending_new(enum ptype, struct conn *, json_t *id,
		    json_t *params);
void		 pending_add_session(struct pending *, struct session *);
void		 pending_arm_timeout(struct pending *, uint64_t ms);
void		 pending_poke(void);
void		 pending_forget_conn(struct conn *);

/* Request handlers. */
void	 method_dispatch(struct conn *, struct rpc_request *);
json_t	*method_logs_result(struct session *, uint64_t off, size_t max);

/* Daemon log. */
void	 log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	 log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	 log_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2),
	    noreturn));

/* The listening socket. */
int	 server_listen(const char *path, char *err, size_t errlen);
void	 server_close(void);

/* Lifecycle. */
void	 daemon_shutdown(long long timeout_ms);
void	 daemon_check_shutdown(void);
void	 daemon_watch_signals(void);
void	 daemon_watch_turns(void);
void	 daemon_alloc_cb(uv_handle_t *, size_t, uv_buf_t *);
double	 daemon_now(void);

/* The one daemon context. */
struct daemon {
	uv_loop_t		*loop;
	char			 sock_path[PATH_MAX];
	char			 state_dir[PATH_MAX];
	char			 keeper_path[PATH_MAX];
	uv_pipe_t		 listener;
	bool			 listening;
	uv_signal_t		 sigterm;
	uv_signal_t		 sigint;
	struct pidfh		*pidfh;
	TAILQ_HEAD(, session)	 sessions;
	TAILQ_HEAD(, conn)	 conns;
	TAILQ_HEAD(, pending)	 pendings;
	unsigned long		 next_id;
	bool			 shutting_down;
	bool			 finished;
	uv_prepare_t		 turn;		/* counts loop turns, prunes */
	unsigned long		 gen;		/* loop turns so far */
	unsigned long		 keep_ended;	/* ended sessions kept */
	unsigned long		 nended;
	bool			 poking;	/* pending_poke is running */
	bool			 poke_again;	/* and must look again */
	char			 readbuf[65536]; /* every libuv read */
};

extern struct daemon dmn;

#endif
