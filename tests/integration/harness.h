/*
 * Integration test harness: a private temp dir, socket and daemon per test,
 * client runs with captured output, raw protocol connections, /proc scans
 * for processes, zombies and fds, and a client on a pty of the test's own.
 *
 * The one header the tests include, grouped by the file that defines each
 * name; a file's functions carry its role as their prefix (harness-conn.c:
 * h_conn_*), the bare h_ is harness-util.c's.
 */
#ifndef DBGCTL_TEST_HARNESS_H
#define DBGCTL_TEST_HARNESS_H

#include <sys/resource.h>
#include <sys/types.h>

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

#include <jansson.h>

/*
 * How much longer everything takes under the sanitizers: each of their
 * processes spends tens of ms in its start and LeakSanitizer's exit, and
 * the suites that start a thousand keepers run side by side.
 */
#ifdef __SANITIZE_ADDRESS__
#define H_SLOW		3
#else
#define H_SLOW		1
#endif
/* Bound for one client run (ms). */
#define H_RUN_BOUND	(30000 * H_SLOW)
/* Bound for waiting on an event (ms). */
#define H_WAIT_BOUND	(20000 * H_SLOW)
/* Most pids a snapshot or scan records. */
#define H_MAXPIDS	512
/* Most fds a description of a process's open fds lists. */
#define H_MAXFDS	1024

/* Build a NULL-terminated argument list in place. */
#define H_ARGS(...)	((const char *[]){ __VA_ARGS__, NULL })

/* A shell script whose tree escapes: a double-forked setsid sleep and more. */
#define H_ESCAPING_TREE \
	"(setsid sleep 300 &); sleep 300 & sleep 300 & sleep 300"

/* harness-util.c */

/* A growing byte buffer, kept NUL-terminated; { NULL, 0 } is empty. */
struct h_bytes {
	char	*p;
	size_t	 len;
};

/* Monotonic clock in seconds. */
double	 h_now(void);
/* Sleep a short poll interval (ms) inside a wait loop. */
void	 h_nap(int ms);
/* Poll pred(arg) every few ms until it is true or bound_ms passes. */
bool	 h_wait_for(bool (*pred)(void *), void *arg, int bound_ms);
/* Read a whole file; NULL if it cannot be read. *len gets its size. */
char	*h_read_file(const char *path, size_t *len);
/* A program's full path from PATH into buf, or NULL if it is not there. */
const char *h_which(const char *name, char *buf, size_t len);
/* Format a session id as a string for argv; returns buf. */
const char *h_idstr(long id, char *buf, size_t len);
/* Join args with spaces into buf, for messages; returns buf. */
const char *h_join_args(const char *const args[], char *buf, size_t len);
/*
 * The last max bytes of data, control bytes shown as \xNN (newlines kept),
 * for failure messages; a static buffer, reused after four calls.
 */
const char *h_shown(const char *data, size_t len, size_t max);
/* Occurrences of needle in data[0..len). */
int	 h_count(const char *data, size_t len, const char *needle);
/* Append n bytes to a byte buffer, keeping it NUL-terminated. */
void	 h_bytes_add(struct h_bytes *, const void *data, size_t n);
/* Member at a dotted path ("fault.cortex_m"), or NULL. */
json_t	*h_jpath(json_t *, const char *path);
/* Integer member at a dotted path ("exit.signal"), or def if absent. */
long long h_jint(json_t *, const char *path, long long def);
/* String member at a dotted path, or NULL if absent. */
const char *h_jstr(json_t *, const char *path);
/* The error kind of a reply (error.data.kind), or "". */
const char *h_jkind(json_t *reply);
/* Whether a JSON array holds the string s. */
bool	 h_jhas(json_t *array, const char *s);
/*
 * The QEMU board's firmware from env var (FIX_BOARD, FIX_BOARD_B); skips
 * the test when it was not built or QEMU or gdb-multiarch is missing.
 */
const char *h_board_firmware(const char *var);

/* harness-ctx.c */

/* Everything private to the running test (one Criterion worker process). */
struct h_ctx {
	char	 dir[256];		/* mkdtemp'd; XDG_RUNTIME_DIR */
	char	 sock[512];		/* DIR/sock */
	char	 state[512];		/* DIR/state/dbgctl */
	char	 marker[128];		/* DBGCTL_TEST_MARKER=<random> */
	char	**envp;			/* environment for every child */
	const char *dbgctl;		/* client binary */
	const char *dbgctld;		/* daemon binary */
	pid_t	 fg_daemon;		/* a daemon that is our own child, or 0 */
	char	 wrapper[512];		/* DIR/dbgctld-wrapped, or "" */
	struct h_bytes memcheck;	/* what memcheck found, for teardown */
	pid_t	 guardian;		/* cleans up if this worker dies */
	int	 guardian_fd;		/* its pipe: EOF means "clean up now" */
	char	 cgroup[PATH_MAX];	/* the daemon's cgroup subtree, or "" */
};

/* The current test's context, set by h_ctx_setup. */
extern struct h_ctx *H;

/* Criterion .init: temp dir, socket path, marker, environment, guardian. */
void	 h_ctx_setup(void);
/* Criterion .fini: stop the daemon, kill marker processes, remove the dir. */
void	 h_ctx_teardown(void);
/* Set NAME=VALUE, replacing NAME, for the children started after this. */
void	 h_ctx_env_add(const char *kv);
/* Take NAME out of the environment of the children started after this. */
void	 h_ctx_env_del(const char *name);
/* Join a path under the test dir into buf. */
void	 h_ctx_path(char *buf, size_t len, const char *rel);
/* The path of a test fixture from the environment meson sets (asserted). */
const char *h_ctx_fixture(const char *var);

/* harness-run.c */

/* Result of one child run. */
struct h_res {
	int	 status;		/* wait status; -1 if never reaped */
	int	 code;			/* exit code, 128+N for signal N, -1 on timeout */
	bool	 timed_out;		/* killed at the bound */
	bool	 eof;			/* stdout and stderr both reached EOF */
	double	 elapsed;		/* seconds from start to exit */
	double	 eof_elapsed;		/* seconds from start to EOF on both pipes */
	char	*out;			/* NUL-terminated captured stdout */
	size_t	 out_len;
	char	*err;			/* NUL-terminated captured stderr */
	size_t	 err_len;
};

/* A child running in the background, for racing several at once. */
struct h_proc {
	pid_t	 pid;
	int	 outfd;
	int	 errfd;
	double	 t0;
	struct h_res res;
};

/* Start argv (argv[0] a path) with H->envp, stdout/stderr piped. */
int	 h_run_start(struct h_proc *, const char *const argv[]);
/* The same with stdin on a pipe: its write end into *in. */
int	 h_run_start_fed(struct h_proc *, int *in, const char *const argv[]);
/* Add what fd gives to b until text is there at or after from: past it, 0 at bound_ms. */
size_t	 h_run_fd_until(int fd, struct h_bytes *b, size_t from,
	    const char *text, int bound_ms);
/* Add its stdout to b until text is there at or after from: past it, 0 at bound_ms. */
size_t	 h_run_out_until(struct h_proc *, struct h_bytes *b, size_t from,
	    const char *text, int bound_ms);
/* Collect output and exit status of a started child within bound_ms. */
void	 h_run_wait(struct h_proc *, int bound_ms);
/* Run argv to completion within bound_ms. Returns the exit code. */
int	 h_run(struct h_res *, int bound_ms, const char *const argv[]);
/* Run argv with input on a pipe as its stdin (SIGPIPE at default). */
int	 h_run_input(struct h_res *, int bound_ms, const char *input,
	    const char *const argv[]);
/* Add a started child's stderr to b until it holds text; false at bound_ms. */
bool	 h_run_err_until(struct h_proc *, struct h_bytes *, const char *text,
	    int bound_ms);
/* Start gdbserver 127.0.0.1:0 PROG as our child; its stderr in b; the port. */
int	 h_run_gdbserver(struct h_proc *, struct h_bytes *b, const char *prog);
/* Free captured output. */
void	 h_run_free(struct h_res *);
/* Reap our child within bound_ms: exit code (128+N: signal N), -1 if killed. */
int	 h_run_reap(pid_t pid, int bound_ms);
/* Reap child pid within bound_ms, its status in *st; false if it still runs. */
bool	 h_run_waitpid(pid_t pid, int bound_ms, int *st);
/* Turn a wait status into the shell's exit code convention. */
int	 h_run_code(int status);
/* Describe a wait status in words into buf, for messages; returns buf. */
const char *h_run_wstatus(int status, char *buf, size_t len);

/* harness-cli.c */

/* Run the client: dbgctl -s SOCK ARGS... Returns the exit code. */
int	 h_cli(struct h_res *, const char *const args[]);
/* Run dbgctl ARGS... and assert it exits want; the caller frees r. */
void	 h_cli_exit(struct h_res *, int want, const char *const args[]);
/* Start the client in the background: dbgctl -s SOCK ARGS... */
int	 h_cli_start(struct h_proc *, const char *const args[]);
/* The argv "dbgctl -s SOCK ARGS..." (malloc'd; free the array only). */
const char **h_cli_argv(const char *const args[]);
/* Run the client with input on a pipe as its stdin (SIGPIPE at default). */
int	 h_cli_input(struct h_res *, const char *input,
	    const char *const args[]);
/* Run dbgctl -s SOCK --json ARGS..., assert exit 0, return the parsed JSON. */
json_t	*h_cli_json(const char *const args[]);
/* Run dbgctl launch ARGS...; assert exit 0 and an id on stdout; return it. */
long	 h_cli_launch(const char *const args[]);
/* launch --kind exec [--env MARKER] -- PROG...; asserted; returns the id. */
long	 h_cli_launch_exec(const char *marker, const char *const prog[]);
/* launch --kind exec [--env MARKER] -- sh -c SCRIPT; asserted; the id. */
long	 h_cli_launch_sh(const char *marker, const char *script);
/* status --json of a session (asserts success). */
json_t	*h_cli_status(long id);
/* A pid of status --json ("pid", "inferior_pid", ...), -1 if absent. */
pid_t	 h_cli_status_pid(long id, const char *field);
/* dbgctl --json stop [--timeout MS] ID, asserted: the session the reply holds. */
json_t	*h_cli_stop(long id, const char *timeout_ms, double *elapsed);
/* Poll status until path holds want (NULL: is there at all); false at the bound. */
bool	 h_cli_wait_status(long id, const char *path, const char *want,
	    int bound_ms);
/* Poll status until the state is "exited" or "failed"; it, or NULL. */
json_t	*h_cli_wait_ended(long id, int bound_ms);
/* Assert the session ends within bound_ms, exit.code want; when: messages. */
void	 h_cli_expect_exit(long id, int want, int bound_ms, const char *when);
/* Assert the session's state is want (e.g. "running"); when: messages. */
void	 h_cli_expect_state(long id, const char *want, const char *when);
/* Assert no daemon was started by dbgctl cmd: no socket, no dbgctld. */
void	 h_cli_expect_no_daemon(const char *cmd);
/* Assert `list` shows n sessions, each in state (NULL: any); when: messages. */
void	 h_cli_expect_list(size_t n, const char *state, const char *when);
/* Whether dbgctl exec ID -- version answers as lldb (arg: the id's text). */
bool	 h_cli_lldb_answers(void *ids);
/*
 * dbgctl stop ID, asserted; then none of the tracked processes (an array
 * ended by a zero one) nor any with marker in its environment is left,
 * and the session exited.
 */
struct h_tracked;
void	 h_cli_stop_leaves_nothing(long id, struct h_tracked *,
	    const char *marker);
/* The session's console log as `dbgctl logs ID` prints it (malloc'd). */
char	*h_cli_logs(const char *id);
/* True if `dbgctl logs ID` holds text now. */
bool	 h_cli_log_has(const char *id, const char *text);
/* Wait until the session's log holds text; assert it does within bound_ms. */
void	 h_cli_wait_log(const char *id, const char *text, int bound_ms);
/*
 * Add the target's output (`recv --timeout 1000`, repeated) to b until want
 * is in it: 0; the stream ended: 5; bound_ms passed: -1.
 */
int	 h_cli_recv_until(const char *id, const char *want, struct h_bytes *b,
	    int bound_ms);

/* harness-daemon.c */

/* Start dbgctld --foreground --listen unix:SOCK as our child; wait for ping. */
pid_t	 h_daemon_fg(void);
/* The same with more options after the listen (NULL-terminated). */
pid_t	 h_daemon_fg_args(const char *const extra[]);
/* Lower this process's fd limits for the next daemon; skips if hard is too high. */
void	 h_daemon_nofile(rlim_t soft, rlim_t hard);
/* Raise this process's soft fd limit to its hard one again. */
void	 h_daemon_nofile_back(void);
/* Write token as the first line of DIR/token, of mode mode; its path into path. */
void	 h_daemon_token(char *path, size_t len, const char *token, mode_t mode);
/* The same with a TCP listener at spec (HOST:PORT) and token file; its port. */
int	 h_daemon_fg_tcp(const char *spec, const char *token);
/* Wait for our foreground daemon to exit within bound_ms; its status or -1. */
int	 h_daemon_fg_wait(int bound_ms);
/* SIGKILL our foreground daemon; assert it dies of it within 10 s. */
void	 h_daemon_fg_kill(void);
/* The pid that hello reports, or -1 if no daemon answers. */
pid_t	 h_daemon_pid(void);
/* hello's result on a connection of its own, or NULL if no daemon answers. */
json_t	*h_daemon_hello(void);
/* The daemon's cgroup subtree as hello reports it; false if it has none. */
bool	 h_daemon_cgroup(char *buf, size_t len);
/* Every live dbgctld process that carries this test's marker. */
int	 h_daemon_list(pid_t *out, int max);
/* One-shot: connect, send ping, true if {"pong":true} comes back. */
bool	 h_daemon_ping(void);
/* Stop every daemon of this test (shutdown, then SIGKILL); reap ours. */
void	 h_daemon_stop(void);
/* The daemon's own log: our foreground one's output, else dbgctld.log (malloc'd). */
char	*h_daemon_log(void);
/*
 * With DBGCTLD_WRAPPER (words, e.g. "valgrind --tool=memcheck ..."), run
 * every daemon of the test under it: a script in the test dir that the
 * foreground start and the client's auto-start (DBGCTL_DAEMON) exec.
 */
void	 h_daemon_wrap(void);
/* Add what memcheck reported of the test's daemons to H->memcheck. */
void	 h_daemon_memcheck(void);
/* Wait until the daemon's log holds text; asserted within bound_ms. */
void	 h_daemon_wait_log(const char *text, int bound_ms);

/* harness-conn.c: the raw protocol client, independent of proto/. */

/* A raw protocol connection with a line buffer. */
struct h_conn {
	int	 fd;
	char	*buf;
	size_t	 len;
	size_t	 cap;
	bool	 eof;			/* peer closed (EOF or ECONNRESET) */
	long	 next_id;
};

/* Connect to a unix socket path. 0, or -errno. */
int	 h_conn_open(struct h_conn *, const char *path);
/* Write all of data within bound_ms. 0, or -errno (EPIPE when closed). */
int	 h_conn_send(struct h_conn *, const char *data, size_t len,
	    int bound_ms);
/* Read one line (without LF) within bound_ms; malloc'd, NULL on EOF/timeout. */
char	*h_conn_line(struct h_conn *, int bound_ms);
/* Read one line and parse it as JSON; NULL on EOF, timeout or bad JSON. */
json_t	*h_conn_recv(struct h_conn *, int bound_ms);
/* Read until the reply with id (notifications skipped); NULL at the bound. */
json_t	*h_conn_reply(struct h_conn *, long id, int bound_ms);
/* Send a request with a fresh id and return the reply with that id. */
json_t	*h_conn_call(struct h_conn *, const char *method, const char *params,
	    int bound_ms);
/* Connect to 127.0.0.1:port over TCP. 0, or -errno. */
int	 h_conn_open_tcp(struct h_conn *, int port);
/* Read until a notification of method has want at path (NULL: any); false at the bound. */
bool	 h_conn_wait_note(struct h_conn *, const char *method,
	    const char *path, const char *want, int bound_ms);
/* Close the connection and free its buffer. */
void	 h_conn_close(struct h_conn *);
/* Listen on a Unix socket in the test dir, named rel; its path in path. */
int	 h_unix_listen(const char *rel, char *path, size_t len);
/* Read one line from fd into buf (NUL-terminated); its length, 0 at EOF. */
size_t	 h_read_line(int fd, char *buf, size_t len);
/* Send line on sock with nfds descriptors beside it (SCM_RIGHTS), asserted. */
void	 h_conn_send_fds(int sock, const char *line, const int *fds,
	    int nfds);
/* Launch params on a connection closed at once (no lease); the id, asserted. */
long	 h_conn_launch_once(const char *params, int bound_ms);

/* harness-adopt.c */
/* The path of the socket keeper n of session id waits at. */
void	 h_adopt_keeper_sock(long id, int n, char *buf, size_t len);
/* Assert that a resume of session ids stops at loop_tick again; its seq. */
long	 h_adopt_resume_hits(const char *ids, const char *after);
/* SIGKILL the daemon, start the next; assert id keeps its server and port. */
void	 h_adopt_keeps_server(long id, const char *what);

/* harness-sess.c: a session driven over one connection of the test's. */
#define H_SESS_BOUND	(60000 * H_SLOW)
struct h_sess {
	struct h_conn	 c;
	long		 id;
	char		 ids[32];
};
/* A short form of a JSON value for messages (a static buffer, reused). */
const char *h_sess_shown(json_t *);
/* Call method on the session with params (taken); the whole reply. */
json_t	*h_sess_call(struct h_sess *, const char *method, json_t *params);
/* Call method (params taken); its result, asserted to be one. */
json_t	*h_sess_ok(struct h_sess *, const char *method, json_t *params);
/* Call method (params taken); assert an error of kind with text in it. */
void	 h_sess_fail(struct h_sess *, const char *kind, const char *text,
	    const char *method, json_t *params);
/* Launch with params (taken) on the test's own daemon; note the id. */
void	 h_sess_launch(struct h_sess *, json_t *params);
/* Launch the board firmware of var on machine; wait for its banner. */
void	 h_sess_board(struct h_sess *, const char *var, const char *machine,
	    const char *banner);
/* Stop the session and let go of the connection. */
void	 h_sess_end(struct h_sess *);

/* harness-pid.c */

/* The fields of /proc/PID/stat the harness reads. */
struct h_pid_stat {
	char			 state;		/* 'R', 'S', 'Z', ... */
	pid_t			 ppid;
	pid_t			 sid;
	unsigned long long	 start;		/* clock ticks since boot */
};

/* Parse /proc/PID/stat into st. False if the pid is gone. */
bool	 h_pid_stat(pid_t, struct h_pid_stat *st);
/* Session id from /proc/PID/stat, -1 if gone. */
pid_t	 h_pid_sid(pid_t);
/* State letter from /proc/PID/stat ('R','S','Z',...), 0 if the pid is gone. */
char	 h_pid_state(pid_t);
/* Parent pid from /proc/PID/stat, -1 if gone. */
pid_t	 h_pid_ppid(pid_t);
/* Start time (clock ticks since boot) from /proc/PID/stat, 0 if gone. */
unsigned long long h_pid_start(pid_t);
/* comm of a pid into buf ("?" if gone). */
void	 h_pid_comm(pid_t, char *buf, size_t len);
/* Assert that the comm of pid is name; what names the pid in messages. */
void	 h_pid_expect_comm(pid_t, const char *what, const char *name);
/* The exe link of a pid into buf ("" if gone); returns its last component. */
const char *h_pid_exe(pid_t, char *buf, size_t len);
/* True if kill(pid, 0) fails with ESRCH. */
bool	 h_pid_gone(pid_t);
/* The environment of *(pid_t *)arg names DBGCTL_SESSION (h_wait_for). */
bool	 h_pid_environ_read(void *);
/* A field of /proc/PID/status ("VmRSS") into buf; false if gone or absent. */
bool	 h_pid_status(pid_t, const char *field, char *buf, size_t len);
/* Resident memory of a pid in KiB (VmRSS), -1 if gone. */
long	 h_pid_rss_kib(pid_t);
/* Wait until /proc/PID/status's field ("SigIgn", "SigCgt") holds sig. */
bool	 h_pid_wait_sigmask(pid_t, const char *field, int sig, int bound_ms);
/* The pids in /proc but ours that keep(pid, arg) accepts, at most max. */
int	 h_pid_scan(bool (*keep)(pid_t, void *), void *arg, pid_t *out,
	    int max);
/* Append "why pid N (comm) state S ppid P" to report, "; "-separated. */
void	 h_pid_describe(char *report, size_t len, const char *why, pid_t);
/*
 * Zombies for which of(pid, ppid, arg) is true, appended to report after
 * why; returns how many.
 */
int	 h_pid_zombies_if(bool (*of)(pid_t, pid_t, void *), void *arg,
	    const char *why, char *report, size_t len);
/* Zombies whose parent is ppid, described in report; returns how many. */
int	 h_pid_zombies(pid_t ppid, char *report, size_t len);
/* Open fds of a pid, sorted: numbers into fds, link targets (or NULL). */
int	 h_pid_fds(pid_t, int *fds, char (*targets)[PATH_MAX], int max);
/* Open fds of a pid as "N target; ..." into buf; how many, -1 if gone. */
int	 h_pid_fds_text(pid_t, char *buf, size_t len);

/* A process to check for afterwards: pid plus start time against reuse. */
struct h_tracked {
	const char		*what;		/* NULL ends a list */
	pid_t			 pid;
	unsigned long long	 start;
};

/* Record a process to check afterwards; asserts it is alive now. */
void	 h_pid_track(struct h_tracked *, const char *what, pid_t);
/* Predicate: none of a NULL-what-terminated list of processes exists. */
bool	 h_pid_tracked_gone(void *tracked);
/* Describe the tracked processes that still exist into buf; returns buf. */
const char *h_pid_tracked_left(const struct h_tracked *, char *buf,
	    size_t len);

/* harness-marker.c */

/* Make a fresh "NAME=<random>" marker for --env. */
void	 h_marker_new(const char *name, char *buf, size_t len);
/* Live (non-zombie) pids whose /proc/PID/environ holds kv exactly. */
int	 h_marker_pids(const char *kv, pid_t *out, int max);
/* True if no live process carries kv. */
bool	 h_marker_gone(const char *kv);
/* Wait until want live processes named comm (NULL: any) carry kv; asserted. */
void	 h_marker_wait(const char *kv, const char *comm, int want);
/* A live process named comm that carries kv, or -1. */
pid_t	 h_marker_pid(const char *kv, const char *comm);
/* Kill what carries kv, again and again, until none is left or bound_ms. */
int	 h_marker_kill(const char *kv, int bound_ms);
/* Live processes carrying kv, described in report; returns how many. */
int	 h_marker_describe(const char *kv, char *report, size_t len);

/* harness-snap.c */

/* A snapshot of processes: pid and start time, to tell reuse apart. */
struct h_snap {
	int	 n;
	pid_t	 pid[H_MAXPIDS];
	unsigned long long start[H_MAXPIDS];
};

/* Record every live process carrying kv. */
void	 h_snap_take(struct h_snap *, const char *kv);
/*
 * Processes left over: snapshot members still present (alive or zombie,
 * same start time), live processes carrying kv, and zombies whose parent is a
 * snapshot member. zombie_ok_ppid1 tolerates zombies re-parented to init.
 * Describes them in report; returns how many.
 */
int	 h_snap_leftovers(const struct h_snap *, const char *kv,
	    bool zombie_ok_ppid1, char *report, size_t len);
/*
 * Wait until h_snap_leftovers (zombies of init tolerated) finds nothing,
 * reaping our own children meanwhile; false at bound_ms, the last finding
 * in report.
 */
bool	 h_snap_wait_gone(const struct h_snap *, const char *kv,
	    int bound_ms, char *report, size_t len);

/* harness-note.c */

/* Leave a line for the TAP output as a comment, printed after the results. */
void	 h_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* harness-pty.c */

/* One client on a pty of the test's own. */
struct h_pty {
	int		 master;	/* the test's side: what the user sees */
	int		 slave;		/* kept open: tcgetattr, no EIO */
	pid_t		 shell;		/* session leader, the client's parent */
	pid_t		 pid;		/* the client */
	int		 stfd;		/* from the shell: client pid, then status */
	struct termios	 before;	/* the modes before the client ran */
	struct h_bytes	 seen;		/* all read from the master */
	bool		 done;		/* the client's status is in */
	int		 status;	/* its wait status */
	char		 cmd[1024];	/* the command line, for messages */
};

/* A pty with distinctive cooked modes and a rows x cols window. */
void	 h_pty_open(struct h_pty *, unsigned rows, unsigned cols);
/* Start dbgctl -s SOCK ARGS... on the pty as a shell's foreground job. */
void	 h_pty_spawn(struct h_pty *, const char *const args[]);
/* Read what is there from the master and the status pipe, waiting up to ms. */
void	 h_pty_pump(struct h_pty *, int ms);
/* Read until text shows at or after offset from; the offset past it. */
size_t	 h_pty_expect(struct h_pty *, size_t from, const char *text,
	    int bound_ms);
/* Type bytes at the client's terminal. */
void	 h_pty_type(struct h_pty *, const char *data, size_t len);
/* Wait up to bound_ms for the client to end; true if it did. */
bool	 h_pty_wait_exit(struct h_pty *, int bound_ms);
/* Assert the client ends within bound_ms with exit code want. */
void	 h_pty_expect_exit(struct h_pty *, int want, int bound_ms,
	    const char *when);
/* Assert the pty's modes are bit-identical to those before the client. */
void	 h_pty_expect_restored(struct h_pty *, const char *when);
/* Assert the client has put its terminal in raw mode (within bound_ms). */
void	 h_pty_expect_raw(struct h_pty *, int bound_ms, const char *when);
/* Change the window size of the client's terminal (SIGWINCH to its group). */
void	 h_pty_winsize(struct h_pty *, unsigned rows, unsigned cols);
/* The last bytes the client's terminal shows, for failure messages. */
const char *h_pty_screen(const struct h_pty *);
/* Let go of the pty client: kill it if it still runs, close the pty. */
void	 h_pty_close(struct h_pty *);

/* harness-trace.c */

/* strace attached to one process, its output in the test dir. */
struct h_trace {
	pid_t	 pid;			/* strace, our child */
	pid_t	 traced;
	char	 out[PATH_MAX];		/* its -o file */
};

/* Start strace on pid's writes and closes; asserted, waits for the attach. */
void	 h_trace_start(struct h_trace *, pid_t pid);
/* The fd of the last write that carries text so far, or -1. */
int	 h_trace_fd_of(struct h_trace *, const char *text);
/*
 * Writes to fd after the write that carries text, until fd is closed
 * (*closed: the close is in the trace yet); described in report.
 */
int	 h_trace_writes_after(struct h_trace *, const char *text, int fd,
	    bool *closed, char *report, size_t len);
/* Let go of the traced process and reap strace. */
void	 h_trace_stop(struct h_trace *);

/* harness-contain.c */

/* hello's containment on an authenticated (unix) connection; asserted. */
json_t	*h_contain_hello(void);
/*
 * Start the daemon in mode ("cgroup", or "subreaper" forced by
 * DBGCTLD_NO_CGROUP), hello asserted to say so; a cgroup the machine
 * cannot give skips the test, saying why. Sets H->cgroup in cgroup mode.
 */
void	 h_contain_daemon(const char *mode);
/* The cgroup of daemon's session id's process index: ROOT/DAEMON-ID-INDEX. */
void	 h_contain_dir(char *buf, size_t len, pid_t daemon, long id,
	    int index);
/* Whether the cgroup at dir holds a live process (cgroup.events). */
bool	 h_contain_populated(const char *dir);
/* Whether the cgroup at dir lists pid in its cgroup.procs. */
bool	 h_contain_holds(const char *dir, pid_t pid);
/* Write value to the file of the cgroup at dir: 0, or -1 with errno. */
int	 h_contain_write(const char *dir, const char *file, const char *value);
/*
 * Shut our foreground daemon down: it answers and exits 0 within the
 * bounds, and in cgroup mode its subtree is gone then; when: messages.
 */
void	 h_contain_shutdown(const char *when);
/* Remove the cgroup subtrees the daemon logs under dir name (teardown). */
void	 h_contain_sweep(const char *dir, int depth);

/* harness-ssh.c */

/* The test's own sshd on a loopback port, and how to reach the daemon by it. */
struct h_ssh {
	pid_t	 pid;			/* sshd, our child */
	int	 port;
	char	 dir[300];		/* DIR/ssh: keys, configs, its log */
	char	 config[400];		/* the client's ssh_config */
	char	 url[640];		/* ssh://127.0.0.1:PORT/DIR/sock */
};

/* Start sshd, the far side's PATH path (NULL: the build's client first). */
struct h_ssh *h_ssh_start(const char *path);
/* Give every client started after this the test's daemon through ssh. */
void	 h_ssh_use(const struct h_ssh *);
/* Stop the test's sshd, if it runs, and reap it. */
void	 h_ssh_stop(void);
/* Criterion .fini: stop sshd, then the daemon and all of the test's. */
void	 h_ssh_teardown(void);

#endif
