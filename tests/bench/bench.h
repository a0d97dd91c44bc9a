/*
 * The benchmark: every figure of dbgctl beside its baseline, measured in
 * the same run and interleaved, printed as one table. Grouped by the file
 * that defines each name, as daemon.h is.
 */
#ifndef BENCH_H
#define BENCH_H

#include <sys/types.h>

#include <jansson.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>

/* Most scale points BENCH_SCALE may list. */
#define BENCH_SCALE_MAX 16

/* The run's settings and the private daemon the current figure uses. */
struct bench {
	const char	*dbgctl;	/* the client binary */
	const char	*dbgctld;	/* the daemon binary */
	int		 runs;		/* BENCH_RUNS: samples per median */
	int		 scale[BENCH_SCALE_MAX];	/* BENCH_SCALE */
	int		 nscale;
	int		 idle_s;	/* BENCH_IDLE_SECONDS */
	int		 mib;		/* BENCH_MIB: bytes per pipe sample */
	int		 stopall_runs;	/* BENCH_STOPALL_RUNS */
	int		 list10k;	/* BENCH_LIST10K=1 */
	int		 keep_ended;	/* the daemon's DBGCTLD_KEEP_ENDED */
	int		 tcp;		/* the daemon listens on TCP too */
	int		 tcp_port;	/* where, once it listens */
	int		 hostile_s;	/* BENCH_HOSTILE_SECONDS */
	const char	*board;		/* BENCH_BOARD: the board's firmware */
	char		 board_path[PATH_MAX];	/* it made absolute */
	char		 why[256];	/* why the current figure gave up */
	/* The private daemon (bench-daemon.c). */
	pid_t		 daemon;
	char		 dir[64];	/* its private 0700 directory */
	char		 sock[96];
	char		**envp;		/* environ plus its XDG dirs */
};

/* bench.c */
int	 bench_fail(struct bench *, const char *, ...)
	     __attribute__((format(printf, 2, 3)));

/* bench-b64.c */
char	*b64_encode(const void *, size_t);
size_t	 b64_size(const char *, size_t);
size_t	 b64_decode(const char *, unsigned char *);

/* bench-stat.c: samples and their order statistics. */
struct samples {
	double	*v;
	size_t	 n, cap;
};
double	 stat_now_ms(void);
void	 stat_add(struct samples *, double);
double	 stat_median(struct samples *);
double	 stat_pct(struct samples *, double);
void	 stat_free(struct samples *);
void	 stat_sleep_ms(double);
int	 stat_batches(int, int, int, int, double (*)(void *, int), void *,
	    struct samples (*)[2]);

/* bench-table.c: the rows, and the table printed at the end. */
enum target_kind {
	TARGET_NONE,		/* no target */
	TARGET_RATIO_MAX,	/* dbgctl/baseline at most v */
	TARGET_RATIO_MIN,	/* dbgctl/baseline at least v */
	TARGET_MAX,		/* dbgctl at most v, in the row's unit */
	TARGET_OVER_MAX,	/* dbgctl at most v over the baseline */
	TARGET_ZERO,		/* dbgctl exactly 0 */
	TARGET_RATIO_PLUS_MAX,	/* dbgctl at most v times the baseline plus w */
};
struct target {
	enum target_kind kind;
	double		 v, w;
};
#define TARGET(k, x) ((struct target){ TARGET_##k, (x), 0 })
#define TARGET2(k, x, y) ((struct target){ TARGET_##k, (x), (y) })
#define NO_TARGET TARGET(NONE, 0)
/* A value a row does not have: printed as n/a or a dash. */
#define NA (-1.0 / 0.0)
void	 table_row(const char *, double, double, struct target, const char *,
	     const char *, ...) __attribute__((format(printf, 6, 7)));
void	 table_na(struct target, const char *, const char *, ...)
	     __attribute__((format(printf, 3, 4)));
void	 table_head(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 table_print(void);

/* bench-proc.c: child processes, timed whole, and what /proc says. */
pid_t	 proc_spawn(const char *const[], char *const[], int, int, int);
pid_t	 proc_spawn_piped(const char *const[], int *, int *);
int	 proc_wait(pid_t, double);
double	 proc_time_ms(const char *const[], char *const[]);
long	 proc_status_kib(pid_t, const char *);
long	 proc_rollup_kib(pid_t, const char *);
long	 proc_ctxsw(pid_t);
int	 proc_exists(const char *);
int	 proc_write_all(int, const void *, size_t);
int	 proc_read_more(int, char *, size_t *, size_t);

/* bench-daemon.c: a private daemon, and its client run as a process. */
/* A keeper started by hand (bench-keeper.c), for the floors. */
struct keeper_run {
	pid_t	 pid;
	int	 sock, ptm;
	char	 cg[PATH_MAX];
};
int	 keeper_start(const struct bench *, struct keeper_run *, int,
	     const char *const[]);
int	 keeper_started(struct keeper_run *);
int	 keeper_stop(struct keeper_run *);
int	 keeper_finish(struct keeper_run *);
int	 keeper_cg_new(int, char *, size_t);
void	 keeper_cg_done(void);

int	 daemon_start(struct bench *);
void	 daemon_stop(struct bench *);
void	 daemon_settle(struct bench *);
double	 daemon_client_ms(struct bench *, const char *const[]);

/* bench-relay.c: the hand relay, the floor of the expect figure. */
pid_t	 relay_start(const char *, int *);
pid_t	 relay_start_target(const char *, const char *const[], int *, pid_t *);
void	 relay_stop(pid_t, int);

/* bench-rpc.c: a blocking JSON-RPC client over a Unix socket. */
struct rpc {
	int	 fd;
	char	*buf;
	size_t	 len, off, cap;
	size_t	 scan;		/* how far the buffer has no LF */
	long	 id;
	char	 err[256];
};
int	 rpc_addr(void *, const char *);
int	 rpc_open(struct rpc *, const char *);
int	 rpc_adopt(struct rpc *, int);
int	 rpc_listens(const char *);
extern const char rpc_ping_line[];
extern const size_t rpc_ping_len;
int	 rpc_ping_pct(struct rpc *, int, double *, double *);
void	 rpc_close(struct rpc *);
int	 rpc_write(struct rpc *, const void *, size_t);
char	*rpc_line(struct rpc *);
double	 rpc_roundtrip_us(struct rpc *, const char *, size_t);
long	 rpc_send(struct rpc *, const char *, json_t *);
json_t	*rpc_reply(struct rpc *, long *);
json_t	*rpc_call(struct rpc *, const char *, json_t *);
json_t	*rpc_launch_sleep(struct rpc *);
int	 rpc_launch_many(struct rpc *, int, json_t *);
int	 rpc_stop(struct rpc *, json_int_t);

/* bench-echo.c: the blocking and the libuv echo servers, as children. */
enum echo_kind { ECHO_BLOCKING, ECHO_LIBUV };
struct echo {
	pid_t	 pid;
	char	 path[96];
};
int	 echo_start(struct echo *, enum echo_kind, const char *);
void	 echo_stop(struct echo *);

/* bench-mi.c: QEMU and gdb-multiarch's MI on our own pipes, the board's baseline. */
/* Milliseconds gdb or UART0 may stay silent before the baseline gives up. */
#define MI_LINE_MS 30000
struct mi {
	pid_t	 qemu, gdb;
	int	 to_gdb, from_gdb;	/* gdb's MI: its stdin and stdout */
	int	 uart_in, uart_out;	/* QEMU's stdio: the board's UART0 */
	int	 drain[2];		/* ptys read and dropped, or -1 */
	int	 keep[2];		/* their slaves, held until the end */
	long	 token;
	char	 buf[64 * 1024];	/* gdb's lines, from off to len */
	size_t	 len, off;
	char	 ubuf[4096];		/* UART0 since the last drain */
	size_t	 ulen;
	char	 err[256];
};
int	 mi_start(struct mi *, const char *);
int	 mi_port(void);
int	 mi_start_qemu(struct mi *, const char *, int);
int	 mi_start_native(struct mi *, const char *const[]);
void	 mi_init(struct mi *);
void	 mi_stop(struct mi *);
int	 mi_fail(struct mi *, const char *);
int	 mi_command(struct mi *, const char *, char **);
int	 mi_fault_breaks(struct mi *, int);
int	 mi_wait(struct mi *, const char *, char **);
double	 mi_break_round(struct mi *);
int	 mi_uart_write(struct mi *, const void *, size_t);
void	 mi_uart_drain(struct mi *);
int	 mi_uart_until(struct mi *, const char *);

/* bench-mi-pty.c: gdb alone in the daemon's layout, the native floor. */
int	 mi_start_native_pty(struct mi *, const char *const[]);
int	 mi_start_board_pty(struct mi *, const char *);

/* bench-board.c: the board figures' two boards, the daemon's and the direct. */
/* The end of the banner the firmware prints at reset. */
#define BOARD_BANNER "board ready\r\n"
/* A bound no answer of the board figures should come near, in ms. */
#define BOARD_TIMEOUT_MS 30000
struct board {
	struct bench	*b;
	struct rpc	 r;
	json_int_t	 session;
	json_int_t	 from;		/* the transport's offset after the banner */
	struct mi	 m;
	int		 direct;	/* the baseline was started */
	int		 running;	/* the side that runs, or -1 */
	struct mi	 floor;		/* a floor's board (board_floor_start) */
	int		 floored;	/* the floor's board was started */
};
/* A round of one side: its time in the figure's unit, or NA with b->why. */
typedef double (*board_round)(struct board *);
const char *board_missing(const struct bench *);
json_t	*board_call(struct board *, const char *, json_t *);
int	 board_banner(struct board *);
int	 board_launch(struct board *);
int	 board_launch_qemu(struct board *);
void	 board_end(struct board *);
int	 board_direct(struct board *);
void	 board_direct_end(struct board *);
int	 board_connect(struct board *, struct bench *);
int	 board_open(struct board *, struct bench *);
void	 board_close(struct board *);
int	 board_halt(struct board *);
int	 board_direct_halt(struct board *);
int	 board_halt_both(struct board *);
int	 board_side(struct board *, int);
const char *board_reason(json_t *);
json_t	*board_notice(struct board *, struct rpc *, const char *);
int	 board_batches(struct board *, board_round[], int, int, int,
	     struct samples (*)[2]);
void	 board_rows(struct samples (*)[2], int, int, const char *, double,
	     const char *, const char *);
void	 board_rows_floor(struct samples (*)[2], const char *, const char *);
int	 board_floor_start(struct board *);
void	 board_free(struct samples (*)[2], int);
/* A two-sided board figure: its rounds, unit, goal margin and words. */
struct board_marks {
	int		 n;		/* rounds a batch */
	int		 warm;		/* rounds of the warm-up */
	const char	*unit;
	double		 over;		/* the p50 goal: 1.2x base + over */
	const char	*note;
	const char	*what;
};
int	 board_daemon_runs(struct board *);
double	 board_daemon_recipe(struct board *, const char *);
double	 board_mi_recipe(struct board *, struct mi *, const char *const *);
double	 board_direct_recipe(struct board *, const char *const *);
int	 board_figure(struct bench *, struct board *, board_round[2],
	    int (*)(struct board *), const struct board_marks *);

/* The figures, a file each: every one adds its rows to the table. */
/* bench-fig-ping.c */
int	 fig_ping_rtt(struct bench *);
int	 fig_ping_rps(struct bench *);
void	 fig_ping_pin(struct bench *, cpu_set_t *);
void	 fig_ping_pin_pid(pid_t);
void	 fig_ping_unpin(struct bench *, const cpu_set_t *);

/* bench-fig-cli.c */
int	 fig_cli_run(struct bench *);

/* bench-fig-launch.c */
int	 fig_launch_exec(struct bench *);
int	 fig_launch_gdb(struct bench *);

/* bench-fig-stop.c */
int	 fig_stop_one(struct bench *);
int	 fig_stop_all(struct bench *);
double	 fig_stop_session_ms(struct rpc *);
double	 fig_stop_bare_ms(void);

/* bench-fig-replace.c */
int	 fig_replace_gap(struct bench *);

/* bench-fig-adopt.c */
int	 fig_adopt(struct bench *);
int	 fig_adopt_grow(struct bench *, int);
int	 fig_adopt_count_running(json_t *);

/* bench-fig-pipe.c */
int	 fig_pipe_run(struct bench *);

/* bench-fig-scale.c */
int	 fig_scale_run(struct bench *);
/* Sessions of the list10k figure, whose daemon keeps them all. */
#define FIG_LIST10K 10000
int	 fig_list10k(struct bench *);

/* bench-fig-stall.c */
int	 fig_stall_subscribers(struct bench *);
int	 fig_stall_logs(struct bench *);

/* bench-fig-hostile.c */
int	 fig_hostile(struct bench *);

/* bench-fig-verdict.c */
int	 fig_verdict_native(struct bench *);
int	 fig_verdict_board(struct bench *);

/* bench-fig-expect.c */
const char	*fig_expect_self(void);
int	 fig_expect_target(int, char **);
int	 fig_expect_latency(struct bench *);
int	 fig_expect_throughput(struct bench *);
int	 fig_expect_busy_ping(struct bench *);
int	 fig_backtrack_ping(struct bench *);

/* bench-fig-board.c */
int	 fig_board_break(struct bench *);
int	 fig_board_memory(struct bench *);

/* bench-fig-live.c */
int	 fig_live_read(struct bench *);
/* bench-fig-record.c */
int	 fig_record(struct bench *);
/* bench-fig-watch.c */
int	 fig_watch(struct bench *);
/* bench-fig-rtt.c */
int	 fig_rtt_throughput(struct bench *);
int	 fig_board_reset(struct bench *);
int	 fig_board_uart(struct bench *);

/* bench-fig-board-ops.c */
int	 fig_board_ops_load(struct bench *);
int	 fig_board_ops_breakset(struct bench *);
int	 fig_board_ops_eval(struct bench *);

/* bench-fig-board-life.c */
int	 fig_board_life_fault(struct bench *);
int	 fig_board_life_launch(struct bench *);

/* bench-fig-break.c */
int	 fig_break_target(void);
int	 fig_break_native(struct bench *);

/* bench-fig-expect-echo.c */
int	 fig_expect_echo(struct bench *);

/* bench-fig-join.c */
int	 fig_join_rtt(struct bench *);

/* bench-fig-bundle.c */
int	 fig_bundle(struct bench *);
/* bench-fig-ssh.c */
int	 fig_ssh_run(struct bench *);

#endif
