/*
 * The gdb family, inside: what its files (backend-gdb.c and the kinds
 * that run gdb, gdb*.c, fault.c, join*.c) and the code that drives gdb
 * (method-target.c, method-inspect.c, method-reset.c, method-join.c,
 * method-hold.c, verdict-gather.c, bundle-gather.c) share; nothing else
 * includes it. daemon.h says what the others may ask of a gdb-family
 * session (gdb_family, gdb_breaks_status, fault_breaks).
 */
#ifndef DBGCTL_GDB_H
#define DBGCTL_GDB_H

#include "daemon.h"
#include "argv.h"
#include "server.h"

/* backend-gdb.c: the gdb family (the kinds gdb_family_kind picks). */
/* gdb itself, the one kind whose target is a program on this host. */
extern const struct backend backend_gdb;

/* How far the gdb family's graceful quit has come (gdb-quit.c). */
enum gdb_quit_step {
	GDB_QUIT_NONE,
	GDB_QUIT_INTERRUPT,	/* -exec-interrupt sent, *stopped awaited */
	GDB_QUIT_LIST,		/* -list-thread-groups sent */
	GDB_QUIT_END,		/* kill or -target-detach sent, for each */
	GDB_QUIT_EXIT		/* -gdb-exit sent */
};

struct gdb_data {
	struct session	*s;
	enum gdb_quit_step quit_step;
	struct mi	*mi;
	char		 remote[256];	/* HOST:PORT gdb connects to, or "" */
	struct timer	*timer;		/* connecting's, then settling's, deadline */
	unsigned long	 connect_token;
	char		*connect_err;	/* held while the server may say why */
	bool		 debugger_up;	/* gdb beside its server ran */
	unsigned	 inserts;	/* fault breaks gdb has not answered */
	bool		 breaks_sent;	/* the fault breaks went to gdb */
	bool		 target_up;	/* connected or attached */
	bool		 adopted;	/* gdb-adopt.c: a dead daemon's */
	int		 settle;	/* what the launch awaits (backend-gdb.c) */
	unsigned	 groups;	/* thread groups live: the program runs */
	unsigned	 quit_left;	/* the quit's kills and detaches unanswered */
	struct timer	*attach_timer;	/* --pid: the attach's deadline */
	unsigned long	 attach_token;
	struct server	 server;	/* gdbserver, qemu: the managed server */
	struct replay	*replay;	/* qemu: replay.c's recording or replay */
	/* gdb-control.c: run control. */
	TAILQ_HEAD(, gdb_job) jobs;	/* verbs; the first one runs */
	struct timer	*job_timer;	/* bounds a halt or resume awaited */
	json_t		*exit_held;	/* gdb.c: an exit, until *stopped says how */
	struct timer	*exit_timer;
	int		 halting;	/* GDB_HALT_*: who the next stop is by */
	bool		 resuming;	/* the next running undoes a halt */
	json_t		*fault_bkpts;	/* the fault breaks' numbers (strings) */
	unsigned	 rearmed;	/* fault breaks put back after a delete */
	bool		 disarmed;	/* missing, and could not be put back */
	/* join.c: joined MI clients, by conn serial (0: none). */
	TAILQ_HEAD(, join_chan) chans;	/* new-ui channels, kept for reuse */
	uint64_t	 nchans;
	uint64_t	 run_by;	/* whose resume the next running is */
	uint64_t	 halt_by;	/* whose interrupt the next stop is */
	uint64_t	 last_run_by;	/* who ran the target last */
	uint64_t	 stop_by;	/* whom the current stop is by */
	/* join-seed.c: the thread groups (id: pid or null) and threads (id: group) heard of. */
	json_t		*seen_groups;
	json_t		*seen_threads;
};

/* Who asked for the next stop (gdb_data.halting). */
enum gdb_halt {
	GDB_HALT_NONE,
	GDB_HALT_USER,		/* halt, or -exec-interrupt: by "halt" */
	GDB_HALT_TRANSIENT,	/* the daemon, to serve a verb: skipped */
	GDB_HALT_RESET,		/* a reset that leaves it halted */
	GDB_HALT_VERDICT	/* a deadline's or a silence's: by "verdict" */
};

/* Where a run-control job is. */
enum gdb_job_phase {
	GDB_JOB_QUEUED,
	GDB_JOB_HALTING,	/* -exec-interrupt sent, its stop awaited */
	GDB_JOB_COMMANDS,
	GDB_JOB_RESUMING	/* its running record awaited */
};

#define GDB_JOB_STOPPED		0x1	/* needs the target stopped */
#define GDB_JOB_KEEP_HALTED	0x2	/* and leaves it so */
#define GDB_JOB_AWAIT_RUNNING	0x4	/* answer once the target runs */
#define GDB_JOB_ERRORS_OK	0x8	/* an ^error is a reply like any */
#define GDB_JOB_ORPHAN_OK	0x10	/* runs with no request */
#define GDB_JOB_BARE		0x20	/* its answer has no "target" */
#define GDB_JOB_OUTPUT		0x40	/* each reply has its console output */
#define GDB_JOB_RERUN		0x80	/* a reset's run: it ends the fault */

struct gdb_job;
typedef json_t *(*gdb_job_done)(struct gdb_job *);

/* A verb's MI commands, run in order when its turn comes. */
struct gdb_job {
	TAILQ_ENTRY(gdb_job)	 entry;
	struct gdb_data		*g;
	struct request		*req;	/* NULL once finished or gone */
	/* A request that waits on its own after the job, told of its failure. */
	struct request		*waiter;
	void			(*unlink)(struct gdb_job *);
	int			 flags;
	enum gdb_job_phase	 phase;
	bool			 queued;
	bool			 halted;	/* it interrupted the target */
	bool			 halted_for;	/* resume after the commands */
	int			 halting;	/* g->halting at the first command */
	int			 halt_as;	/* GDB_JOB_STOPPED's halt is by, or 0 */
	json_t			*cmds;		/* MI lines */
	size_t			 next;
	unsigned long		 token;
	json_t			*replies;	/* each answer's results + class */
	json_t			*ctx;		/* the verb's own */
	json_t			*result;
	char			*error;
	int			 code;
	/* At its turn, before any command; nonzero: answered already. */
	int			(*start)(struct gdb_job *);
	/* After each answer: may add commands. */
	void			(*step)(struct gdb_job *, json_t *reply);
	/* The answer, or NULL: the request goes on waiting (or failed). */
	gdb_job_done		 done;
};

/*
 * What every gdb-family kind shares: its hooks, and gdb hung up at the
 * daemon's death. A kind adds its data and its .start (backend_gdb_start,
 * or one that starts its managed server).
 */
#define BACKEND_GDB_FAMILY					\
	.hangup = true,						\
	.argv = backend_gdb_argv,				\
	.ready = backend_gdb_ready,				\
	.quit = gdb_quit,					\
	.command = gdb_command,					\
	.status = backend_gdb_status,				\
	.close = backend_gdb_close,				\
	.hold = gdb_adopt_hold

/* gdb-adopt.c */
void		 gdb_adopt_hold(struct session *, struct session_proc *);
struct mi	*gdb_adopt_mi(struct gdb_data *, const char *transcript,
		    char *err, size_t errlen);
struct console	*gdb_adopt_tty(struct session *, console_cb, char *err,
		    size_t errlen);
void		 gdb_adopt_ready(struct gdb_data *);

char	**backend_gdb_argv(struct session *, char *err, size_t errlen);
int	 backend_gdb_start(struct session *, char *err, size_t errlen);
int	 backend_gdb_open(struct session *, const char *remote, char *err,
	    size_t errlen);
void	 backend_gdb_ready(struct session *, struct session_proc *);
void	 backend_gdb_target_ready(struct gdb_data *);
void	 backend_gdb_settle(struct gdb_data *);
void	 backend_gdb_adopt_wait(struct gdb_data *);
void	 backend_gdb_adopt_done(struct gdb_data *);
void	 backend_gdb_status(const struct session *, json_t *);
void	 backend_gdb_close(struct session *);
int	 backend_gdb_server_bind(struct session *, int port, char *err,
	    size_t errlen);
int	 backend_gdb_server_start(struct session *, char **server_argv,
	    int port, char *err, size_t errlen);

/* fault.c: the fault record of a target stopped by a fault. */
/* A Cortex-M's fault handlers, the fault breaks of a probe's kinds. */
extern const char *const fault_cortex_m[];
void	 fault_stopped(struct gdb_data *, const struct mi_record *);

/* gdb-attach.c: launch --pid, and whether a target is the session's own. */
void	 gdb_attach_ready(struct session *, struct session_proc *);
bool	 gdb_attach_ours(const struct session *, pid_t);
void	 gdb_attach_close(struct gdb_data *);

/* gdb-quit.c: the gdb family's quit hook. */
int	 gdb_quit(struct session *);
void	 gdb_quit_stopped(struct gdb_data *);

/* gdb-osabi.c: no OS for a bare-metal program's gdb. */
void	 gdb_osabi_args(struct argv *, struct session *);

/* gdb-tty.c: the program's own terminal in a gdb session. */
int	 gdb_tty_open(struct session *, char *err, size_t errlen);
void	 gdb_tty_args(struct argv *, struct session *);

/* gdb-newui.c: gdb's MI channel, opened without a word on the console. */
void	 gdb_newui_args(struct argv *, struct session *, const char *pts);
void	 gdb_newui_remove(struct session *);

/* gdb-breaks.c: the session's own fault breakpoints, kept armed. */
json_t		*gdb_breaks_bkpt(json_t *results);
void		 gdb_breaks_inserted(struct gdb_data *, const struct mi_record *);
void		 gdb_breaks_inserted_bkpt(struct gdb_data *, json_t *);
bool		 gdb_breaks_internal(const struct gdb_data *, const char *);
bool		 gdb_breaks_placed(const struct gdb_data *, const char *loc);
const char	*gdb_breaks_location(const struct gdb_data *, const char *);
bool		 gdb_breaks_deletes(const char *cmd);
json_t		*gdb_breaks_listed(json_t *reply);
enum method_return gdb_breaks_exec(struct request *, struct gdb_data *,
		    const char *cmd);

/* gdb-control.c: run control, a job at a time. */
const char	*gdb_control_state(const struct session *);
bool		 gdb_refused_running(const struct mi_record *);
struct gdb_job	*gdb_job_new(struct request *, struct gdb_data *, int flags,
		    gdb_job_done);
void		 gdb_job_add(struct gdb_job *, const char *fmt, ...)
		    __attribute__((format(printf, 2, 3)));
void		 gdb_job_add_console(struct gdb_job *, const char *cmd);
void		 gdb_job_fail(struct gdb_job *, int code, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
enum method_return gdb_job_run(struct gdb_job *, void (*)(struct request *),
		    long long ms);
void		 gdb_job_timeout(struct request *);
void		 gdb_control_target(struct gdb_data *, const json_t *);
const char	*gdb_control_stop_by(struct gdb_data *, const char *reason,
		    const char *sig, bool *transient);
bool		 gdb_control_running_transient(struct gdb_data *);
void		 gdb_control_close(struct gdb_data *);

/* gdb.c: the target's state from MI, and exec, for the gdb family. */
/* A gdb-family session's state; NULL for another kind, or none yet. */
struct gdb_data	*gdb_of(const struct session *);
/* The same while gdb's MI channel is open; NULL once gdb is gone. */
struct gdb_data	*gdb_live(const struct session *);
json_t	*gdb_text(const char *out, size_t len);
json_t	*gdb_frames(json_t *stack);
json_t	*gdb_registers(json_t *names, json_t *values);
void	 gdb_exit_flush(struct gdb_data *);
void	 gdb_target(struct gdb_data *, json_t *target);
void	 gdb_event(void *arg, const struct mi_record *);
json_t	*gdb_stop_json(const struct mi_record *);
int	 gdb_command(struct session *, struct request *);
void	 gdb_copy(json_t *dst, const char *key, json_t *src, const char *from);

/* join-chan.c, join-news.c: what gdb's files tell the joined clients (join.h). */
void		 join_chan_foreign(void *g, const char *line, size_t len);
void		 join_chan_gdb_close(struct gdb_data *);
void		 join_news_answered(void *g, const char *cmd,
		    const struct mi_record *, const char *line, size_t len);
void		 join_news_event(struct gdb_data *, const struct mi_record *);
void		 join_news_target_by(struct gdb_data *, json_t *target);

/* method-target.c: the session's gdb for a verb, or NULL (answered). */
struct gdb_data	*method_target_gdb(struct request *, const char *verb);
enum method_return method_target_halt_for(struct request *, json_t *extra);
enum method_return method_target_job_stop(struct request *, struct gdb_job *,
		    bool strict, json_t *extra);

#endif
