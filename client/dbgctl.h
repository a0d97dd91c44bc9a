/* dbgctl, the client: shared types and the functions its files export. */
#ifndef DBGCTL_CLIENT_H
#define DBGCTL_CLIENT_H

#include <sys/types.h>

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "fmt.h"
#include "frame.h"

/* Exit statuses (DESIGN.md §4). */
#define EXIT_OK		0	/* success */
#define EXIT_FAILED	1	/* the daemon refused or request failed */
#define EXIT_USAGE	2	/* bad command line */
#define EXIT_NODAEMON	3	/* no daemon, or reply not understood */
#define EXIT_TIMEOUT	4	/* a wait timed out */
#define EXIT_CLOSED	5	/* the transport or session is closed */
#define EXIT_VERDICT	6	/* a deadline or silence ended it, or a wait */
#define EXIT_FAULT	7	/* wait: its target faulted */

/* Command entry flags. */
#define CMD_AUTOSTART	0x1	/* start the daemon when none answers */
#define CMD_SESSION	0x2	/* the first operand is a SESSION */

/* The protocol this client speaks (hello's "protocol"). */
#define CLIENT_PROTOCOL	1

/* The status a command exits with after a daemon error of one kind. */
struct cmd_exit {
	const char	*kind;		/* NULL ends a list: any other kind */
	int		 status;
};

/* An error reply from the daemon. */
struct client_error {
	int	 code;
	char	 kind[64];
	char	 message[1024];
	char	 method[64];	/* the request it answered */
	json_t	*data;		/* its data member, or NULL */
};

/* The longest option name a template may give (its options are as many as it names). */
#define ARGS_NAME_MAX		24

/* The longest word the edit distance is measured for. */
#define ARGS_WORD_MAX		64

/* The most edits a name suggested for an unknown one may be away. */
#define ARGS_NEAR		2

/*
 * What a command accepts: options is its words, a one-letter one a short
 * option (-x), a longer one a long option (--kind); a word ending in ':'
 * takes a value, in '#' a count (digits only). lower and upper bound the
 * operands; upper -1 is no limit.
 */
struct args_template {
	const char	*options;
	int		 lower;
	int		 upper;
};

/* One option of a template. */
struct args_option {
	char	 name[ARGS_NAME_MAX];
	char	 value;			/* 0 none, ':' a string, '#' a count */
};

/* One option as given on the command line. */
struct args_given {
	int		 option;	/* index into the template's options */
	const char	*value;		/* NULL for an option without one */
};

/* A command line parsed against a template. */
struct args {
	struct args_option	*options;	/* grown to fit the template */
	int			 noptions;
	int			 capoptions;
	int			 nown;		/* the command's; the rest global */
	struct args_given	*given;		/* in command-line order */
	int			 ngiven;
	char			**operands;	/* into the caller's argv */
	int			 noperands;
};

/* What args_parse found. */
enum args_status {
	ARGS_OK,
	ARGS_HELP,		/* -h or --help */
	ARGS_BAD,		/* the cause says why */
	ARGS_FEW,		/* fewer operands than the template's lower */
};

/* The one client context: options, the connection and the last error. */
struct client {
	const char		*socket_arg;	/* -s, or NULL */
	char			 socket[PATH_MAX];
	int			 json;		/* --json */
	int			 autostart;	/* may start the daemon */
	const struct cmd_exit	*exits;		/* NULL: client_exits */
	const struct args	*args;		/* the command's, or NULL */

	int			 fd;		/* -1 until connected */
	/* Over ssh://: the ssh process, its stderr (a memfd), the address. */
	pid_t			 ssh_pid;	/* 0 when none */
	int			 ssh_err;	/* -1 when none */
	char			 ssh_url[PATH_MAX + 512];
	struct frame		 frame;
	long long		 next_id;
	/* Passed (SCM_RIGHTS) with the next request sent, then forgotten. */
	const int		*pass_fds;
	size_t			 npass;

	/* The request in flight and what came back for it. */
	long long		 want_id;
	json_t			*reply;
	int			 garbled;
	int			 text;		/* keep a result's line as text */
	/* Told of each notification that comes while a reply is awaited. */
	void			(*note)(struct client *, json_t *msg);
	void			*note_arg;	/* the hook's own */
	char			*reply_text;
	size_t			 reply_len;

	struct client_error	 error;

	/*
	 * Riding out a daemon's restart (reconnect.c): with resume, a lost
	 * connection is made again to the next daemon and the request in
	 * flight (method, params) sent again, after again has adjusted its
	 * params; restarts counts the times.
	 */
	int			 resume;
	int			 restarts;
	const char		*method;
	json_t			*params;
	void			(*again)(struct client *, json_t *params);
	void			*again_arg;	/* again's own */
};

struct cmd;
/* What a command does once its command line has been parsed. */
typedef int (*cmd_exec)(struct cmd *, struct client *);

/*
 * One option's line in help: name as its template names it ("kind", "x"),
 * the word shown for its value (NULL: the template's kind of value), and
 * one line saying what it does and its default. A list ends with a NULL
 * name; an option of the template missing from it is shown bare.
 */
struct cmd_option {
	const char	*name;
	const char	*value;
	const char	*text;
};

/*
 * One command, declared in its own file: what it accepts, parsed before
 * exec runs and before any daemon is contacted, and how it runs; summary
 * and options (both optional) are what help says of it.
 */
struct cmd_entry {
	const char		*name;
	const char		*usage;		/* arguments, after the name */
	struct args_template	 args;
	int			 flags;		/* CMD_* */
	const struct cmd_exit	*exits;		/* NULL: timeout 4, else 1 */
	cmd_exec		 exec;
	const char		*summary;	/* one line for `dbgctl help` */
	const struct cmd_option	*options;	/* help's lines, or NULL */
};

/* A command line parsed against its entry: what exec acts on. */
struct cmd {
	const struct cmd_entry	*entry;
	struct args		 args;
	json_t			*session;	/* CMD_SESSION: operand 0 */
};

/* client.c */
void		 client_init(struct client *, const char *, int);
void		 client_close(struct client *);
json_t		*client_call(struct client *, const char *, json_t *);
char		*client_call_text(struct client *, const char *, json_t *,
		    size_t *);
json_t		*client_raw_call(struct client *, const char *, json_t *);
json_t		*client_raw_try(struct client *, const char *, json_t *, int *);
int		 client_error(struct client *);
int		 client_daemon_path(char *, size_t);
void		 client_fatal(const char *, ...)
		    __attribute__((format(printf, 1, 2), noreturn));
void		 client_vwarn(const char *, va_list);
void		 client_warn(const char *, ...)
		    __attribute__((format(printf, 1, 2)));

/* client-connect.c */
const char	*client_connect_address(void);
const char	*client_connect_remote(void);
int		 client_connect_check(char *, size_t);
int		 client_connect_open(struct client *);
int		 client_connect_absent(struct client *);
void		 client_connect_fatal(struct client *)
		    __attribute__((noreturn));
void		 client_connect(struct client *);

/* reconnect.c */
int		 reconnect_sessions_wait(const struct client *);
long long	 reconnect_now(void);
long long	 reconnect_bound(void);
int		 reconnect_again(struct client *);
long long	 reconnect_daemon_pid(struct client *);
int		 reconnect_restarted(struct client *, long long *);

/* args.c */
int		 args_strtonum(const char *, long long *);
enum args_status args_parse(struct args *, const struct args_template *,
		    const char *, int, char **, char *, size_t);
void		 args_free(struct args *);
int		 args_has(const struct args *, const char *);
int		 args_last(const struct args *, const char *);
const char	*args_get(const struct args *, const char *);
long long	 args_number(const struct args *, const char *, long long);
const char	*args_next(const struct args *, const char *, int *);
int		 args_count(const struct args *);
int		 args_known(const struct args *, const char *);
void		 args_split(struct args *, const struct args_template *);
const char	*args_operand(const struct args *, int);

/* args-suggest.c */
void		 args_suggest_nearest(const char *, const char *const *,
		    size_t, const char *, char *, size_t);
void		 args_suggest_long(const char *, const char *const *, size_t,
		    char *, size_t);

/* args-param.c */
void		 args_param_to_option(char *, size_t, const char *,
		    const char *);
void		 args_param_names(const struct args *, char *, size_t);

/* autostart.c */
int		 autostart_connect(struct client *);
int		 autostart_pid_alive(pid_t);

/* cmd.c */
int		 cmd_run(const struct cmd_entry *, int, char **, const char *,
		    int);
int		 cmd_usage(const struct cmd *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
void		 cmd_print_usage(const struct cmd_entry *, FILE *,
		    const char *);
void		 cmd_print_option(FILE *, const char *, const char *,
		    const char *);
void		 cmd_print_help(const struct cmd_entry *, FILE *);
extern const struct cmd_option cmd_global_options[];
json_t		*cmd_session_ref(const char *);
int		 cmd_print_json(json_t *);
int		 cmd_write_all(int, const void *, size_t);
void		 cmd_stdout_gone(void) __attribute__((noreturn));
void		 cmd_stdout_failed(void) __attribute__((noreturn));

/* cmd-session.c */
int		 cmd_session_status(json_t *);
void		 cmd_stop_print_session(json_t *);
void		 cmd_status_fault(json_t *);

/* cmd-hold.c */
void		 cmd_hold_status(json_t *);

/* cmd-bundle.c */
char		*cmd_bundle_path(const char *);
void		 cmd_bundle_status(json_t *session);

/* cmd-logs.c */
int		 cmd_logs_stream_known(const char *);

/* cmd-control.c */
int		 cmd_control_check(struct cmd *);
json_t		*cmd_control_params(const struct cmd *);
void		 cmd_control_print_target(const struct cmd *, FILE *, json_t *,
		    const char *);
int		 cmd_control_failed(const struct cmd *, struct client *);
int		 cmd_control_run(struct cmd *, struct client *, const char *,
		    json_t *, void (*)(struct cmd *, json_t *));

/* cmd-inspect.c: what the inspecting commands (cmd-mem.c too) share. */
char		*cmd_inspect_join(const struct args *, int);
/* What help says of --timeout for the inspecting commands. */
#define CMD_INSPECT_TIMEOUT_HELP \
	{ "timeout", "MS", "exit 4 if the debugger has not answered by then, " \
	    "a halt for it included (default: 10000)" }

/* tty.c */
int		 tty_raw(int, int);
void		 tty_plain(int);
void		 tty_restore(void);
void		 tty_leave(void);
int		 tty_size(int, unsigned *, unsigned *);
struct term;
void		 tty_modes(const struct term *);
void		 tty_output(int);

/* cmd-attach.c */
int		 cmd_attach_session(struct client *, json_t *, int, int);
int		 cmd_attach_terminal(struct client *, json_t *, int key,
		    int quiet, int server);
int		 cmd_attach_key(const struct cmd *, int *);
/* Ctrl-\ detaches unless --detach-key says otherwise. */
#define CMD_DETACH_KEY	0x1c

/* cmd-mi.c */
/* What a joined MI client asks of its leave and channel (dbgctl-protocol(7) mi). */
extern const struct cmd_entry cmd_mi_entry;

/* cmd-mi-gdb.c */
int		 cmd_mi_gdb_main(int, char **);

/* bridge.c */
void		 bridge_catch(void);
int		 bridge_run(int sock);
int		 bridge_handed(int sock);

/* handover.c */
bool		 handover_possible(struct client *);
void		 handover_release(void);

/* tcp.c */
int		 tcp_open(struct client *, const char *);

/* ssh.c */
int		 ssh_is_url(const char *);
int		 ssh_check(const char *, char *, size_t);
void		 ssh_open(struct client *, const char *);
void		 ssh_lost(struct client *) __attribute__((noreturn));
void		 ssh_end(struct client *);
void		 ssh_close(struct client *);

/* pump.c */
/*
 * A local pipe's offsets and its input kept (pump-keep.c), to go on where
 * it was with the next daemon after a restart.
 */
struct pump_resume {
	uint64_t	 out;		/* target offset of the next byte to come */
	uint64_t	 in;		/* target-in offset after the last byte read */
	bool		 in_ended;	/* stdin ended: a half close follows */
	char		*keep;		/* a ring of the last bytes read */
	size_t		 size, len, head;
	char		*again;		/* to send first, after a restart */
	size_t		 again_len;
};
int		 pump_run(int sock, int out_ends, struct pump_resume *);
int		 pump_down(int sock, int splice_out, uint64_t *moved);
/* pump-keep.c */
void		 pump_keep_init(struct pump_resume *, int sock);
char		*pump_keep_room(struct pump_resume *, size_t, size_t *);
void		 pump_keep_add(struct pump_resume *, size_t);
int		 pump_keep_again(struct pump_resume *, uint64_t in);
void		 pump_keep_free(struct pump_resume *);

/* fmt.c */
/* cmd-exec.c: what an exec gave, printed as exec prints it. */
void		 cmd_exec_print(const char *cmd, json_t *result);

/* cmd-deadline.c: what status shows of a deadline and a verdict. */
void		 cmd_deadline_status(json_t *session);
void		 cmd_deadline_frames(json_t *frames, size_t max, const char *indent);

void		 fmt_exit(json_t *, char *, size_t);
void		 fmt_target(json_t *, char *, size_t);
void		 fmt_stop(json_t *, char *, size_t);
const char	*fmt_basename(const char *);
char		*fmt_argv(json_t *);
int		 fmt_terminal_width(int);

#endif
