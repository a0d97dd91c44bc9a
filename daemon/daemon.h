/*
 * dbgctld: the daemon context and the interfaces between its parts, grouped
 * by the file that defines them. Resources (console, transport, mi, proc)
 * are opened with a callback and an argument and call nothing above
 * themselves; session.c fans their news out to sinks.
 *
 * What only a few files use is in a header of its role, included by them:
 * gdb.h, mi.h, mi-filter.h (the gdb family), lldb.h (the lldb kinds),
 * session.h (the session files' own), session-target.h, join.h, server.h,
 * proc.h, keeper.h, transport.h, output.h, expect.h (expect-state.h is the
 * expect files' own), pattern.h, notify.h, attach.h, lease.h, sdnotify.h,
 * cursor-file.h, bundle.h, status-page.h, cgroup.h, sock.h, pty.h, ring.h,
 * argv.h, capbuf.h, jtext.h, and the server's below (listener.h ...
 * request.h).
 */
#ifndef DBGCTL_DAEMON_H
#define DBGCTL_DAEMON_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <uv.h>

#include "frame.h"
#include "rpc.h"
#include "term.h"

struct conn;
struct gdb_data;	/* gdb.h */
struct gdb_job;		/* gdb.h */
struct method;
struct mi_filter;	/* mi.h */
struct mi_record;	/* mi.h */
struct request;
struct session;
struct session_event;
struct sink;

/* xmalloc.c: allocation that cannot fail (it aborts). */
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
char	*xb64_encode(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	 xvasprintf(char **, const char *, va_list);

/* log.c: the daemon's own log. */

/* Events of one kind that may come in floods, such as refused clients. */
struct log_burst {
	const char	*more;		/* how to log n: "refused %lu more ..." */
	double		 at;		/* when the last line was logged */
	unsigned long	 n;		/* events since, not logged yet */
	struct timer	*timer;		/* logs n when the second is over */
};

int	 log_file(const char *path, off_t max);
void	 log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	 log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	 log_burst(struct log_burst *, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	 log_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2),
	    noreturn));

/* flow.c: when a producer must wait for its consumer, and when it may go on. */
bool	 flow_full(size_t queued, size_t high);
bool	 flow_room(size_t queued, size_t high);

/* stream.c: writing to libuv streams. */
typedef void (*stream_done_cb)(void *arg, int status);

int	 stream_write(uv_stream_t *, const char *, size_t, stream_done_cb,
	    void *arg);
size_t	 stream_queued(uv_stream_t *);

/* timer.c: a one-shot timer that frees itself after it is closed. */
struct timer;
typedef void (*timer_cb)(void *arg);

struct timer	*timer_new(timer_cb, void *arg);
void		 timer_start(struct timer *, uint64_t ms);
void		 timer_stop(struct timer *);
void		 timer_weak(struct timer *);
void		 timer_free(struct timer *);

/* ring.c: a bounded window onto the most recent bytes of a stream (ring.h). */
struct ring {
	char		*buf;
	size_t		 cap;
	uint64_t	 end;		/* bytes ever written */
	uint64_t	 from;		/* none held before: skipped */
};

/* console.c: a pty master read and written on the loop. */
enum console_event {
	CONSOLE_OUTPUT,		/* data, len: bytes the pty printed */
	CONSOLE_EOF,		/* every slave is closed and all is read */
	CONSOLE_WRITTEN,	/* a queued write was taken */
	CONSOLE_SPLICED,	/* data, len: printed, and in the first pump's log */
	CONSOLE_SPLICED_ALSO,	/* data, len: the same, in the second pump's log */
};
typedef void (*console_cb)(void *arg, enum console_event, const char *,
    size_t);

/* Bytes queued for a pty's input at most before its writers wait. */
#define CONSOLE_INPUT_MAX (1024 * 1024)

/* Opaque: its fields are console.c's own; others ask its functions. */
struct console;

struct console	*console_open(bool raw, console_cb, void *arg, char *err,
		    size_t errlen);
struct console	*console_adopt(int master, bool keep_slave, console_cb,
		    void *arg, char *err, size_t errlen);
void		 console_release_slave(struct console *);
int		 console_master(const struct console *);
int		 console_slave(const struct console *);
const char	*console_pts(const struct console *);
void		 console_drain(struct console *);
void		 console_finish(struct console *);
int		 console_write(struct console *, const char *, size_t);
size_t		 console_queued(struct console *);
void		 console_close(struct console *);
struct output;
void		 console_pump(struct console *, int, struct output *,
		    enum console_event);
uint64_t	 console_spliced_at(const struct console *);

/* output.c: a session's console output, in memory and in its log file. */
/* Bytes of recent console output each session keeps in memory. */
#define OUTPUT_RING_SIZE (256 * 1024)
/* Most bytes the logs method looks back through for line breaks. */
#define OUTPUT_TAIL_SCAN_MAX (64 * 1024 * 1024)

/* output.c's and output-times.c's own. */
struct output_mark;
struct output_gap;
struct output_time;

/* Embedded in a session, so declared here; its fields are output*.c's own. */
struct output {
	struct ring		 ring;
	char			*log_path;
	uint64_t		 nl;		/* line feeds so far */
	struct output_mark	*marks;		/* at each OUTPUT_MARK_BYTES */
	size_t			 nmarks;
	struct output_gap	*gaps;		/* not in the log file, by offset */
	size_t			 ngaps;
	uint64_t		 missing;	/* bytes in the gaps */
	char			*log_error;	/* why the log first failed */
	uint64_t		 max;		/* bytes its log may have, or 0 */
	struct output_time	*tbuf;		/* not yet written, or NULL */
	size_t			 ntbuf;
	uint64_t		 ntimes;	/* records in the times file */
	struct output_cache	*cache;		/* output-cache.c's, or NULL */
	/* The small members last, together: ten outputs a session. */
	int			 log_fd;
	int			 times_fd;	/* output-times.c: arrival times */
	char			 last;		/* the last byte, or 0 */
	bool			 failing;	/* the last write failed */
	bool			 ended;		/* no byte follows what it has */
	bool			 nosplice;	/* its file system refused splice */
};

void	 output_init(struct output *);
int	 output_open(struct output *, const char *path, size_t ring,
	    char *err, size_t errlen);
int	 output_reopen(struct output *, const char *path, size_t ring,
	    char *err, size_t errlen);
uint64_t output_unkept(const struct output *, uint64_t off);
void	 output_add(struct output *, const char *, size_t);
ssize_t	 output_splice(struct output *, int fd, char *, size_t);
uint64_t output_size(const struct output *);
const char *output_path(const struct output *);
const char *output_error(const struct output *, uint64_t *missing);
size_t	 output_read(struct output *, uint64_t off, char *, size_t);
bool	 output_logged(const struct output *, uint64_t off, size_t);
ssize_t	 output_send(struct output *, int fd, uint64_t off, size_t);
uint64_t output_missing(const struct output *, uint64_t off);
void	 output_close(struct output *);
void	 output_end(struct output *);
bool	 output_ended(const struct output *);
void	 output_free(struct output *);

/* output-cache.c: what of a log the page cache keeps. */
void	 output_cache_want(struct output *, uint64_t);

/* output-times.c: when each piece of a stream arrived, in a file beside it. */
bool	 output_times_path(const struct output *, char *, size_t);
json_t	*output_times_get(struct output *, uint64_t off, uint64_t end);

/* output-lines.c: where the last lines of a stream begin. */
uint64_t output_lines_tail(struct output *, unsigned long lines,
    uint64_t max);

/* transport.c: the target's stdin and stdout as daemon-owned pipes. */
enum transport_event {
	TRANSPORT_OUTPUT,	/* output arrived (data, len when passed through) */
	TRANSPORT_EOF,		/* the output ended: for good, or a run's */
	TRANSPORT_INPUT,	/* input was taken, or it closed */
	TRANSPORT_IN_CLOSED,	/* the daemon closed the target's stdin */
};
typedef void (*transport_cb)(void *arg, enum transport_event, const char *,
    size_t);

/* Bytes of target output held, and of target input queued, at most. */
#define TRANSPORT_MAX (1024 * 1024)

/* Opaque: its fields are transport.c's own; others ask its functions. */
struct transport;

struct transport *transport_open(struct output *log, struct output *in_log,
		    transport_cb, void *arg, char *err, size_t errlen);
void		 transport_child_fds(const struct transport *, int *, int *);
void		 transport_daemon_fds(const struct transport *, int *, int *);
struct transport *transport_adopt(struct output *log, struct output *in_log,
		    transport_cb, void *arg, int in, int out);
void		 transport_spawned(struct transport *);
void		 transport_finish(struct transport *);
size_t		 transport_take(struct transport *, char *, size_t);
void		 transport_unread(struct transport *, const char *, size_t);
uint64_t	 transport_offset(const struct transport *);
int		 transport_seek(struct transport *, uint64_t);
ssize_t		 transport_send_taken(struct transport *, int, size_t);
uint64_t	 transport_held(const struct transport *);
bool		 transport_ended(const struct transport *);
bool		 transport_at_eof(const struct transport *);
bool		 transport_piped(const struct transport *);
bool		 transport_drained(const struct transport *);
unsigned long	 transport_run(const struct transport *);
bool		 transport_exited(const struct transport *);
void		 transport_run_start(struct transport *);
void		 transport_run_end(struct transport *);
void		 transport_pause(struct transport *);
void		 transport_resume(struct transport *);
void		 transport_passthrough(struct transport *, bool);
void		 transport_close(struct transport *);
/* transport-in.c: the target's stdin, fed from the input's transcript. */
size_t		 transport_in_queued(struct transport *);
int		 transport_in_write(struct transport *, const char *, size_t);
void		 transport_in_eof(struct transport *);

/* join*.c, method-join.c: joined MI clients on new-ui channels of gdb (join.h). */
/* Joined clients (channels) a session has at once, unless DBGCTLD_JOINS_MAX says. */
#define JOINS_MAX_DEFAULT	16
void		 join_chan_init(long max);

/* proc.c: one process under its own keeper; the one spawn function. */
enum proc_event {
	PROC_STARTED,		/* the process exec'd: proc_pid is known */
	PROC_FAILED,		/* it could not: proc_failure */
	PROC_EXITED,		/* it ended: proc_exit */
	PROC_GONE,		/* its keeper is gone, and so is all of it */
	PROC_STOPPED,		/* it was stopped: proc_stop_signal */
	PROC_CONTINUED,		/* it was continued after a stop */
};
/* Opaque: its fields are proc.c's own (proc.h); others ask its functions. */
struct proc;
typedef void (*proc_cb)(void *arg, struct proc *, enum proc_event);

/* Where a debugger finds the transport pipes: /dev/fd/4 and /dev/fd/5. */
#define PROC_FD_IN 4
#define PROC_FD_OUT 5
/* Where a server gets the listening socket the daemon bound for it. */
#define PROC_FD_LISTEN 6
/*
 * Where QEMU's keeper gets what become QEMU's standard input (/dev/null)
 * and output (its end of the semihosting console: semihost.c).
 */
#define PROC_FD_SEMIHOST 7
#define PROC_FD_SEMIHOST_OUT 8
/* Where a server gets its kind's own fds (qemu: QMP, shared RAM): 9, 10. */
#define PROC_FD_EXTRA 9
#define PROC_EXTRA_FDS 2

/* What a keeper is asked to run, and with what. */
struct proc_spec {
	char		**argv;
	char		**env;
	const char	 *cwd;
	long		  stop_timeout;
	bool		  hangup;	/* SIGHUP first at the daemon's end */
	int		  tty;		/* the pty slave: its 0, 1 and 2 */
	int		  fd_in;	/* transport ends, or -1 */
	int		  fd_out;
	bool		  stdio;	/* transport on 0 and 1, not 4 and 5 */
	int		  fd_listen;	/* at PROC_FD_LISTEN, or -1 */
	int		  fd_semihost;	/* its 0 (then fd_semihost_out its 1), or -1 */
	int		  fd_semihost_out;
	const int	 *fd_extra;	/* PROC_EXTRA_FDS at PROC_FD_EXTRA, -1s */
	const char	 *cgroup;	/* its cgroup's name, where there are */
	const char	 *adopt;	/* the keeper's adoption socket, or NULL */
};

void	 proc_reap_unwatched(void);
struct proc	*proc_spawn(const struct proc_spec *, const char *keeper,
		    proc_cb, void *arg, char *err, size_t errlen);
void		 proc_stop(struct proc *, long timeout_ms);
void		 proc_orphans_gone(void);
json_t		*proc_exit_json(const struct proc *);
void		 proc_free(struct proc *);
pid_t		 proc_pid(const struct proc *);
pid_t		 proc_keeper_pid(const struct proc *);
bool		 proc_alive(const struct proc *);
bool		 proc_gone(const struct proc *);
const char	*proc_name(const struct proc *);
bool		 proc_exit(const struct proc *, int *code, int *sig);
const char	*proc_ended_by(const struct proc *);
const char	*proc_failure(const struct proc *, int *errnum);
int		 proc_stop_signal(const struct proc *);
bool		 proc_contained(const struct proc *);
void		 proc_mark_quit(struct proc *);
void		 proc_mark_detached(struct proc *);
const char	*proc_cgroup(const struct proc *);
bool		 proc_adopted(const struct proc *);
bool		 proc_hold(struct proc *, const char *name, int fd);
bool		 proc_hold_pump(struct proc *, const char *name, const int *,
		    size_t);
void		 proc_release(struct proc *, const char *name);
struct proc	*proc_adopt(pid_t keeper, int ctl, const char *exec_name,
		    const char *cgroup, proc_cb, void *arg);
void		 proc_replay(struct proc *, const char *, size_t);

/* proc-keepers.c */
bool		 proc_keepers_has(pid_t);

/* orphan.c: the daemon as subreaper, for what dead keepers leave. */
void		 orphan_init(void);
void		 orphan_check(void);

/* backend.c: what a debugger kind is, as data plus hooks. */
#define BACKEND_STDIO	0x1	/* the pipes become the program's 0 and 1 */
#define BACKEND_PROGRAM	0x2	/* PROGRAM is required */
#define BACKEND_SERVER	0x4	/* runs a managed server: the pipes are its */
#define BACKEND_TRANSPORT 0x8	/* the transport is on unless a launch says not */
/* Takes "pid"; its targets run on this host, so stop_target "auto" works. */
#define BACKEND_ATTACH	0x10
/* Its sessions outlive the daemon: a new one can adopt them (adopt.c). */
#define BACKEND_ADOPT	0x20

struct launch;
struct session_proc;
struct method_param;

struct backend {
	const char	*name;
	const char	*debugger;	/* default program, NULL for exec */
	const char	*path;		/* PATH the debugger needs, or NULL */
	/* What the quit does to the target by default: "auto", "detach", "kill", NULL. */
	const char	*stop_target;
	int		 flags;
	/* Console commands that reset the target, in order (NULL: none). */
	const char *const *reset_commands;
	/* Console commands that write the program to the target, before a reset. */
	const char *const *load_commands;
	/* The fault breaks a launch gets unless it says otherwise, or NULL. */
	const char *const *fault_defaults;
	/* With no reset_commands: a reset runs the program again (native). */
	bool		 reset_rerun;
	/*
	 * The daemon's death hangs the main process up before killing it:
	 * gdb detaches from what it only attached to, where a kill would
	 * leave it with its breakpoints.
	 */
	bool		 hangup;
	/* Console commands typed after the launch's (qemu: "continue"). */
	const char *const *run_commands;
	/* Console commands typed first with "semihosting" (remote: OpenOCD's). */
	const char *const *semihost_commands;
	/* Its own launch params (ends with a NULL name), as a method's. */
	const struct method_param *params;
	/* Refuse what this kind cannot do with a launch; err says why. */
	int		(*check)(const struct launch *, struct rpc_error *);
	/* Build the argv the main process's keeper runs; NULL with err. */
	char	      **(*argv)(struct session *, char *err, size_t errlen);
	/* Set up private state and start (NULL: spawn the main process). */
	int		(*start)(struct session *, char *err, size_t errlen);
	/* A process of the session exec'd (NULL: ready once main has). */
	void		(*ready)(struct session *, struct session_proc *);
	/*
	 * Ask the main process to quit gracefully before SIGTERM (NULL, or
	 * -1: SIGTERM at once); the session reports its exit as it comes.
	 */
	int		(*quit)(struct session *);
	/* Run a debugger command for a request. */
	int		(*command)(struct session *, struct request *);
	/* Add this kind's fields to the session object. */
	void		(*status)(const struct session *, json_t *);
	/*
	 * The session has ended: release what is live. What status reads
	 * stays; session_free frees s->bdata, which holds no pointers then.
	 */
	void		(*close)(struct session *);
	/*
	 * Give a process's keeper what else of the session it must hold for
	 * a new daemon to adopt it (BACKEND_ADOPT; NULL: nothing else).
	 */
	void		(*hold)(struct session *, struct session_proc *);
};

/* Whether a kind is one a message names. */
typedef bool (*backend_pick)(const struct backend *, const void *arg);

const struct backend	*backend_find(const char *);
const struct backend	*backend_at(size_t);
json_t			*backend_names(void);
char			*backend_kinds(backend_pick, const void *arg);
char			*backend_kinds_that(backend_pick, const void *arg);
bool			 backend_takes(const struct backend *, const void *name);
bool			 backend_has(const struct backend *, const void *flags);

/* gdb.h: the gdb family's own; what the other files ask of it. */
bool		 gdb_family(const struct session *);
bool		 gdb_family_kind(const struct backend *, const void *);
json_t		*gdb_breaks_status(const struct session *);
json_t		*fault_breaks(const struct session *);
void		 gdb_tty_ended(struct sink *, struct session *,
		    const struct session_event *);

/* launch.c: a launch request's params, checked once. */
/* Hex digits of a lease's token: 128 random bits (lease.c). */
#define LEASE_TOKEN_LEN 32
struct launch {
	const struct backend	*backend;
	json_t			*params;	/* as asked, for its record */
	json_t			*argv;		/* PROGRAM ARG..., maybe [] */
	json_t			*env;		/* object of strings, or NULL */
	json_t			*term_env;	/* the client's TERM, COLORTERM, or NULL */
	json_t			*commands;	/* -x commands, or NULL */
	char			*name;
	char			*cwd;
	char			*debugger;
	char			*remote;	/* remote: HOST:PORT */
	char			*server;	/* gdbserver: --server */
	int			 port;		/* gdbserver: 0 for any */
	long			 connect_timeout;
	long			 stop_timeout;
	const char		*stop_target;	/* "auto", "detach", "kill" or NULL */
	long			 pid;		/* --pid: attach to it, or 0 */
	json_t			*pid_argv;	/* its command line, or NULL */
	bool			 transport;
	json_t			*fault_breaks;	/* --fault-break locations, or NULL */
	json_t			*reset_commands; /* overrides the kind's, or NULL */
	json_t			*load_commands;	/* overrides the kind's, or NULL */
	json_t			*kind_params;	/* the kind's own, checked, or NULL */
	bool			 no_fault_defaults; /* --no-fault-break */
	bool			 core;		/* --core: gcore at a fault */
	bool			 lease;		/* ends with its connection */
	long			 lease_grace;	/* ms after that */
	char			 lease_token[LEASE_TOKEN_LEN + 1]; /* or "" */
	long			 deadline;	/* ms after it runs, or 0 */
	long			 silence_timeout; /* ms with no output, or 0 */
	const char		*on_deadline;	/* "stop" or "hold" */
	char			*artifacts;	/* automatic bundles' directory */
};

/* The longest graceful-stop window. */
#define STOP_TIMEOUT_MAX 3600000

int	 launch_parse(struct launch *, json_t *params, struct rpc_error *);
const char *launch_get_str(const struct launch *, const char *name);
void	 launch_free(struct launch *);
void	 launch_freed(struct sink *, struct session *,
	    const struct session_event *);

/* launch-check.c: what a launch's params' types alone do not say. */
int	 launch_check_params(json_t *params, json_t *out, struct rpc_error *);

/* launch-program.c: a launch's program, found as gdb finds it. */
char	*launch_program_path(const struct launch *);

/* verdict.c: deadlines, silences, and the verdict of why a session ends. */
struct verdict_watch;
void	 verdict_arm(struct sink *, struct session *,
	    const struct session_event *);
int	 verdict_deadline_set(struct session *, long ms);
json_t	*verdict_deadline_json(const struct session *);
void	 verdict_record(struct sink *, struct session *,
	    const struct session_event *);
void	 verdict_fault(struct sink *, struct session *,
	    const struct session_event *);
void	 verdict_end(struct sink *, struct session *,
	    const struct session_event *);
bool	 verdict_bundled_yet(const struct session *);
void	 verdict_disarm(struct session *);
void	 verdict_ended(struct sink *, struct session *,
	    const struct session_event *);

/* hold.c: sessions kept, their target halted, past their lease, for a time. */
/* A hold's time to live (s), unless DBGCTLD_HOLD_TTL says; the most one may ask. */
#define HOLD_TTL_DEFAULT	600
#define HOLD_TTL_MAX		86400
/* Holds at once, and their total time left (s), unless DBGCTLD_HOLDS_MAX and DBGCTLD_HOLD_TOTAL say. */
#define HOLDS_MAX_DEFAULT	16
#define HOLD_TOTAL_DEFAULT	14400
struct hold;
void	 hold_init(long ttl_s, long max, long total_s);
long	 hold_default_ttl(void);
int	 hold_set(struct session *, long ttl_ms, json_t *by, struct rpc_error *);
void	 hold_release(struct session *);
void	 hold_reset(struct session *, const struct conn *by);
bool	 hold_keeps(struct session *);
bool	 hold_active(const struct session *);
bool	 hold_by_verdict(const struct session *);
json_t	*hold_json(const struct session *);
long long hold_left_ms(const struct session *);
void	 hold_record(struct sink *, struct session *,
	    const struct session_event *);
void	 hold_ended(struct sink *, struct session *,
	    const struct session_event *);
/* bundle*.c, method-bundle.c: a session's bundle, written atomically. */
struct bundle;
struct bundles;
/* Why a bundle was refused or failed: its kind (RPC_*), errno or 0, the cause. */
struct bundle_error {
	int	 code;
	int	 errnum;
	char	 msg[PATH_MAX + 256];
};
/* A bundle is written (result) or failed (error); b is freed after. */
typedef void (*bundle_cb)(void *arg, struct bundle *b, json_t *result,
    const struct bundle_error *error);
/* What bundle_auto calls once the automatic bundle is written, or none is. */
typedef void (*bundle_then)(struct session *, void *arg);

/* bundle-record.c: recovery at start, and automatic bundles' directory. */
void		 bundle_recover(void);
int		 bundle_artifacts(const char *dir, char *err, size_t errlen);

/* bundle.c: writing one bundle, and a session's automatic one. */
struct bundle	*bundle_start(struct session *, const char *path, bool tar,
		    bool core, const char *reason, bundle_cb, void *arg,
		    struct bundle_error *);
void		 bundle_forget(struct bundle *);
void		 bundle_auto(struct session *, const char *reason, bundle_then,
		    void *arg);
json_t		*bundle_status(const struct session *);
void		 bundle_freed(struct sink *, struct session *,
		    const struct session_event *);

/* session.c: the session table, its processes and the one fan-out point. */
enum session_state {
	S_STARTING,
	S_RUNNING,
	S_STOPPING,
	S_ABORTING,	/* stopping before it ever ran; shown as stopping */
	S_EXITED,
	S_FAILED,
	S_NSTATES
};

/* What sinks hear of a session. */
enum session_event_kind {
	SE_STATE = 0x1,		/* the state changed */
	SE_OUTPUT = 0x2,	/* the console printed data, len */
	SE_TARGET = 0x4,	/* target output arrived (data if passed through) */
	SE_TARGET_EOF = 0x8,	/* the target's output ended */
	SE_INPUT = 0x10,	/* the target's input took bytes, or closed */
	SE_CONSOLE_ROOM = 0x20,	/* the console took queued input */
	SE_RUNSTATE = 0x40,	/* the debugged target started, stopped, exited */
	SE_FAULT = 0x80,	/* a fault record was gathered (json) */
	SE_STOPPING = 0x100,	/* a stop escalates: json {step, after_ms} */
	SE_SERVER_END = 0x200,	/* the server is gone with all its output */
	SE_BREAKPOINT = 0x400,	/* a breakpoint was made or deleted (json) */
	SE_VERDICT = 0x800,	/* a deadline's or silence's verdict (json) */
	SE_BUNDLE = 0x1000,	/* an automatic bundle was written (json) */
	/* The teardown, heard by global sinks in daemon.c's order: */
	SE_STOP = 0x2000,	/* a stop was asked, before the table hears it */
	SE_ENDING = 0x4000,	/* it ended; its streams and log are still open */
	SE_ENDED = 0x8000,	/* it ended; its live parts are released */
	SE_FREED = 0x10000,	/* it is freed: let go of what is kept for it */
	/* What features built on the session hear, also from daemon.c: */
	SE_READY = 0x20000,	/* it is about to run: its time counts */
	SE_FAULT_KEPT = 0x40000, /* a fault record is kept, before it is told */
	SE_FAULT_CLEARED = 0x80000, /* a reset, load or run (data) ended it */
	SE_SUSPENDED = 0x100000, /* the main process stopped (sig), or went on */
	SE_RECORD = 0x200000,	/* its record is written: json, to which each
				   feature adds what a new daemon needs */
	SE_STREAM = 0x400000,	/* a feature's stream (semihost, watch, rttN) got
				   data, len at offset; len 0: it ended; watch's
				   line also as json */
};

struct session_event {
	enum session_event_kind	 kind;
	const char		*data;
	size_t			 len;
	uint64_t		 offset;	/* SE_OUTPUT, SE_STREAM: where data starts */
	const char		*stream;	/* SE_STREAM: the stream's name */
	json_t			*json;		/* SE_RUNSTATE, SE_FAULT: the record;
						   SE_STOPPING: the step */
	int			 sig;		/* SE_SUSPENDED: 0 if continued */
};

struct sink;
typedef void (*sink_cb)(struct sink *, struct session *,
    const struct session_event *);

/* A listener to session events: one session's, or every session's. */
struct sink {
	TAILQ_ENTRY(sink)	 entry;
	struct sink		*next_dead;
	struct session		*s;		/* NULL: every session */
	unsigned		 mask;		/* session_event_kind bits */
	sink_cb			 cb;
	void			*arg;
	bool			 dead;
};
TAILQ_HEAD(sinks, sink);

/* Why a session failed: the first cause is kept. */
struct session_why {
	int		 code;		/* RPC code for a failed launch */
	int		 err;		/* errno, or 0 */
	char		*msg;
};

/* A process of a session with its own pty. */
struct session_proc {
	struct session		*s;
	const char		*role;		/* "debugger", "program", "server" */
	struct proc		*proc;		/* NULL until spawned */
	struct console		*console;	/* NULL once closed */
	bool			 drained;	/* its pty's output is all in */
	bool			 server_pumped;	/* its keeper pumps the server's log */
	bool			 transport;	/* gets the transport pipes */
	bool			 stdio;		/* on 0 and 1 */
	int			 listen_fd;	/* its 6, or -1 */
	int			 extra_fds[PROC_EXTRA_FDS]; /* its 7, 8, or -1 */
	char			*tail;		/* the last it printed, */
	size_t			 taillen;	/* SESSION_TAIL_BYTES once it has */
};

/* Processes a session may have: its main one and a server. */
#define SESSION_MAXPROCS 2

/* One supervised debugger or program, from launch until it is forgotten. */
/* rtt.c: the most RTT up-channels a session streams (rtt0..rtt3). */
#define RTT_UP_MAX 4
json_t			*rtt_status(const struct session *);

struct session {
	TAILQ_ENTRY(session)	 entry;
	RB_ENTRY(session)	 id_entry;	/* in dmn.session_ids while listed */
	RB_ENTRY(session)	 ended_entry;	/* in session-prune.c's tree */
	unsigned long		 id;
	unsigned		 refs;
	bool			 listed;	/* in the table */
	const struct backend	*backend;
	void			*bdata;		/* the backend's own state */
	enum session_state	 state;
	struct launch		 l;
	long			 stop_ms;	/* the stop being carried out */
	bool			 stop_begun;
	bool			 quitting;	/* the backend's quit runs */
	uint64_t		 stop_deadline;	/* uv_now() of the SIGKILL */
	struct timer		*stop_timer;
	uint64_t		 stop_timer_at;	/* uv_now() it runs out, or 0 */
	uint64_t		 stop_started;	/* uv_now() of the first stop */
	struct timer		*stop_kill_timer; /* tells of the SIGKILL */
	bool			 stop_kill_told;  /* its clients heard of it */
	bool			 in_cgroup;	/* its main process's tree has one */

	struct session_proc	 procs[SESSION_MAXPROCS]; /* [0]: main */
	size_t			 nprocs;
	struct output		 output;	/* the console stream */
	/*
	 * session-stream.c's other streams, each made when it is opened:
	 * most sessions have one or two of the nine.
	 */
	struct output		*target_out;
	struct output		*target_in;
	struct output		*server_out;
	struct output		*semihost_out;
	struct semihost		*semihost;	/* semihost.c, or NULL */
	struct output		*watch_out;	/* watch.c's samples */
	struct output		*rtt_out[RTT_UP_MAX];	/* rtt.c's up-channels */
	uint64_t		 launched_by;	/* the launching conn's serial */
	struct method_expect_cursor *cursors;	/* named ones (method-expect.c) */
	size_t			 ncursors;
	struct cursor_file	*cursor_file;	/* cursor-file.c: kept for adoption */
	struct transport	*transport;	/* NULL without --transport */
	struct console		*tty;		/* the program's own (gdb-tty.c) */
	unsigned		 writers;	/* write requests waiting */
	unsigned		 viewers;	/* clients attached (attach.c) */
	LIST_HEAD(, attach)	 attached;	/* attach.c: the latest first */
	struct term		 modes;		/* what its console's output set */
	int			 suspended;	/* the main process's stop signal */

	struct session_why	 why;
	json_t			*target;	/* gdb family: the target's state */
	json_t			*fault;		/* the last fault record, or NULL */
	json_t			*faults;	/* the last FAULTS_KEPT records */
	json_t			*verdict;	/* why it is ending, or NULL */
	json_t			*verdicts;	/* the last few (verdict.c) */
	struct verdict_watch	*vw;		/* verdict.c: its deadline, silence */
	struct hold		*hold;		/* hold.c: while it is held */
	struct bundles		*bundles;	/* bundle.c: being written, automatic */
	struct live		*live;		/* live.c: memory read as it runs */
	struct rtt		*rtt;		/* rtt.c: RTT channels, once on */
	bool			 faulted;	/* the target is stopped at it */
	uint64_t		 target_seq;	/* the last target record's seq */
	struct sinks		 sinks;
	double			 started_at;	/* unix time, seconds */
	double			 ended_at;
	bool			 adopted;	/* from a dead daemon's keepers */
	struct status_row	*row;		/* status-page.c: fixed members' text */
	struct status_line	*line;		/* status-table.c: fixed cells */
};

const char		*session_state_name(enum session_state);
bool			 session_ended(const struct session *);
struct session		*session_create(struct launch *, struct rpc_error *);
struct session		*session_adopt(struct launch *, unsigned long id,
			    double started_at, struct rpc_error *);
RB_HEAD(session_ids, session);
/* The index's functions, session_ids_RB_*, are session.c's alone. */
RB_PROTOTYPE(session_ids, session, id_entry, session_cmp)
struct session		*session_find(json_t *ref, struct rpc_error *);
struct session		*session_by_name(const char *, bool live_only);
struct session		*session_by_id(unsigned long);
void			 session_ref(struct session *);
void			 session_unref(struct session *);
void			 session_console_write(struct session *,
			    const char *, size_t);
struct console		*session_console(const struct session *);
struct console		*session_keyboard(const struct session *);
struct console		*session_console_of(const struct session *,
			    const char *role);
void			 session_check_gone(struct session *);
int			 session_signal(struct session *, int sig,
			    pid_t *pgrp, struct rpc_error *);
void			 session_stop(struct session *, long timeout_ms);
bool			 session_ready(struct session *);
void			 session_fail(struct session *, int code,
			    const char *fmt, ...)
			    __attribute__((format(printf, 3, 4)));
void			 session_start_fail(struct session *, int err,
			    const char *fmt, ...)
			    __attribute__((format(printf, 3, 4)));
void			 session_why(struct session *, int code, int err,
			    const char *fmt, ...)
			    __attribute__((format(printf, 4, 5)));
unsigned long		 session_live_count(void);
void			 session_fire(struct session *,
			    const struct session_event *);
struct sink		*session_sink_add(struct session *, unsigned mask,
			    sink_cb, void *arg);
void			 session_sink_remove(struct sink *);
const char		*session_is(const struct session *);

/* session-stream.c: a session's streams by name. */
int			 session_stream_open(struct session *, const char *,
			    char *err, size_t errlen);
struct output		*session_stream(struct session *, const char *);
struct output		*session_stream_find(struct session *, const char *,
			    struct rpc_error *);
const char		*session_stream_default(const struct session *);
unsigned		 session_stream_events(void);
unsigned		 session_stream_bit(const char *);
unsigned		 session_stream_subscribable(const char *);
void			 session_stream_subscribables(char *, size_t);
bool			 session_stream_ended(struct session *, const char *,
			    bool for_good);

/* session-note.c: the daemon's own lines in a console. */
void			 session_note(struct session *, const char *);

/* session-prune.c: ended sessions forgotten, or removed when asked. */
void			 session_prune_remove(struct session *, bool keep_files);
void			 session_prune_unlink(struct session *, const char *);

/* session-proc.c: a session's processes, their ptys and their news. */
struct session_proc	*session_proc_add(struct session *, const char *role,
			    char *err, size_t errlen);
int			 session_proc_spawn(struct session_proc *, char **argv,
			    char *err, size_t errlen);
int			 session_proc_spawn_main(struct session *, char *err,
			    size_t errlen);

/* session-pump.c */
int			 session_pump_pipes(struct session_proc *,
			    const char *, const char *const *, int *, size_t);
char			*session_proc_tail(const struct session_proc *);

/* status.c: the session object of the protocol (its table: status-page.h). */
json_t	*status_json(const struct session *);
void	 status_add_inferior(const struct session *, json_t *, pid_t parent);
void	 status_main_inferior(const struct session *, json_t *);
void	 status_fault_note(struct sink *, struct session *,
	    const struct session_event *);
void	 status_comm(pid_t, char *, size_t);
json_t	*status_exit(const struct session *);

/* status-page.c: rows of sessions as JSON text (the rest: status-page.h). */
void	 status_page_freed(struct sink *, struct session *,
	    const struct session_event *);
/* status-table.c: the list's table (the rest: status-page.h). */
void	 status_table_freed(struct sink *, struct session *,
	    const struct session_event *);

/*
 * The server, each part in its own header for the files that use it:
 * listener.h, activate.h, peer.h (sockets and who may use them), conn.h,
 * dial.h (connections), method.h, request.h (methods, requests, checking,
 * batches and waiting). What other files need of them follows.
 */

/* request.c: what a method's exec did: answered, refused, or waits. */
enum method_return {
	METHOD_DONE,
	METHOD_ERROR,
	METHOD_WAIT,
};

/* pipe.c: a client bridged to a session's transport. */
void	 pipe_start(struct conn *, struct session *);

/* daemon.c: the daemon's life. */
void	 daemon_shutdown(long long timeout_ms);
void	 daemon_ready(void);
void	 daemon_watch_signals(void);
void	 daemon_sinks(void);

/* loop.c: the daemon context, the clock and the loop's read buffer. */
void	 loop_alloc_cb(uv_handle_t *, size_t, uv_buf_t *);
double	 loop_now(void);
void	 loop_refresh(void);
uint64_t loop_left_ms(uint64_t);
long long loop_mono_ms(void);

/* spawn.c: starting a keeper without copying the daemon or its descriptors. */
#define SPAWN_SLOTS 11
/* The lowest fd a spawn copies through: above every fd a keeper gets. */
#define SPAWN_FD_MIN 16
void	 spawn_init(void);
pid_t	 spawn_keeper(const char *, char **, char **, const int *,
	    const int *, int, int);

/*
 * The one daemon context: what several files share. A file's own state is
 * static in that file (spawn.c's slots, notify.c's last line, ...).
 */
struct daemon {
	uv_loop_t		*loop;
	unsigned		 cache_jobs;	/* on the pool */
	char			 sock_path[PATH_MAX];
	char			 state_dir[PATH_MAX];
	char			 keeper_path[PATH_MAX];
	unsigned		 orphans;	/* killed, not yet reaped */
	unsigned		 unwatched;	/* keepers without a pidfd, alive */
	unsigned long		 nofile;	/* the soft fd limit, raised */
	unsigned long		 nofile_orig;	/* as started, for programs */
	char			*cgroup_root;	/* our cgroup subtree, or NULL */
	bool			 activated;	/* listens on sockets passed to it */
	int			 lock_fds[2];	/* main.c: pid file, state directory */
	TAILQ_HEAD(, session)	 sessions;
	struct session_ids	 session_ids;	/* the same, by id */
	struct sinks		 sinks;		/* on every session */
	unsigned long		 next_id;
	unsigned long		 keep_ended;	/* ended sessions kept */
	unsigned long		 keep_ended_s;	/* and for how many seconds */
	uint64_t		 transcript_max; /* bytes a transcript's log may have */
	uint64_t		 bundle_max;	/* bytes a bundle's files may have */
	bool			 shutting_down;
	long long		 adopt_grace_ms; /* a keeper waits this long */
	struct adopt		*adopting;	/* adopt.c: the session being */
	struct adopt_run	*adoption;	/* adopt.c: while it adopts */
};

extern struct daemon dmn;

#endif
