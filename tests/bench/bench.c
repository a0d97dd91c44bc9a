/*
 * dbgctl's benchmark: every figure beside its baseline, measured in the
 * same run and interleaved, medians over BENCH_RUNS samples, printed as
 * one table with the machine it ran on. Each figure gets a private daemon
 * of its own, started before it and shut down after it whatever happened.
 *
 * bench [DBGCTL DBGCTLD]; else $DBGCTL and $DBGCTLD. BENCH_ONLY=a,b runs
 * only the figures of those names. `bench --target ...` is the expect
 * figures' target program instead (bench-fig-expect.c), `bench --target
 * loop` the native breakpoint figure's (bench-fig-break.c).
 */
#include "bench.h"

#include <sys/utsname.h>

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BENCH_BUILDTYPE
#define BENCH_BUILDTYPE "unknown"
#endif

/* A figure: its name for BENCH_ONLY, what it measures, its function. */
struct bench_figure {
	const char	*name;
	const char	*title;
	int		(*run)(struct bench *);
	int		 keep_ended;	/* its daemon's; 0: 10 */
	bool		 optional;	/* only with BENCH_LIST10K=1 */
	bool		 tcp;		/* its daemon listens on TCP too */
};

/* The figures, in the order of the table. */
static const struct bench_figure bench_figures[] = {
	{ "rtt", "ping round trip on a held connection",
	    fig_ping_rtt, 0, false, false },
	{ "rps", "requests per second", fig_ping_rps, 0, false, false },
	{ "cli", "the client as a whole process",
	    fig_cli_run, 0, false, false },
	{ "launch", "launch --kind exec --wait /bin/true",
	    fig_launch_exec, 0, false, false },
	{ "gdb", "gdb launch to its first -x command",
	    fig_launch_gdb, 0, false, false },
	{ "stop", "stop of one live session",
	    fig_stop_one, 0, false, false },
	{ "pipe", "pipe and send/recv throughput",
	    fig_pipe_run, 0, false, false },
	{ "scale", "figures at scale", fig_scale_run, 0, false, false },
	{ "stopall", "stop --all of 1000 sessions",
	    fig_stop_all, 0, false, false },
	{ "adopt", "adoption of 10, 100 and 1000 sessions after SIGKILL",
	    fig_adopt, 0, false, false },
	{ "subscribers", "ping beside stalled subscribers",
	    fig_stall_subscribers, 0, false, false },
	{ "logs", "ping behind a burst of logs tail lookups",
	    fig_stall_logs, 0, false, false },
	{ "hostile", "ping under hostile peers",
	    fig_hostile, 0, false, true },
	{ "expect", "expect latency, write to match",
	    fig_expect_latency, 0, false, false },
	{ "expect-echo", "expect round trip on an echo target, pipelined",
	    fig_expect_echo, 0, false, false },
	{ "expect-scan", "expect throughput over lines that do not match",
	    fig_expect_throughput, 0, false, false },
	{ "expect-busy", "ping beside 100 expects on a busy stream",
	    fig_expect_busy_ping, 0, false, false },
	{ "expect-backtrack", "ping beside backtracking expects",
	    fig_backtrack_ping, 0, false, false },
	{ "board-break", "board breakpoint round trip, resume until_stop",
	    fig_board_break, 0, false, false },
	{ "board-memory", "board memory read of 4 KiB",
	    fig_board_memory, 0, false, false },
	{ "live-read", "board live memory read, running, beside QMP",
	    fig_live_read, 0, false, false },
	{ "watch", "board live watch: rate and jitter of the samples",
	    fig_watch, 0, false, false },
	{ "rtt", "board RTT channel read, against the firmware's write rate",
	    fig_rtt_throughput, 0, false, false },
	{ "board-reset", "board reset to its banner",
	    fig_board_reset, 0, false, false },
	{ "board-uart", "board UART round trip, write and expect",
	    fig_board_uart, 0, false, false },
	{ "board-load", "board load to its banner",
	    fig_board_ops_load, 0, false, false },
	{ "board-breakset", "board break set, byte, stop, delete, resume",
	    fig_board_ops_breakset, 0, false, false },
	{ "board-eval", "board eval and exec of an expression, halted",
	    fig_board_ops_eval, 0, false, false },
	{ "board-fault", "board fault byte to its fault record",
	    fig_board_life_fault, 0, false, false },
	{ "board-launch", "board launch to its banner",
	    fig_board_life_launch, 0, false, false },
	{ "break-native", "native breakpoint round trip, resume until_stop",
	    fig_break_native, 0, false, false },
	{ "join", "a joined MI client's round trip",
	    fig_join_rtt, 0, false, false },
	{ "verdict", "deadline expiry to its verdict, native gdb",
	    fig_verdict_native, 0, false, false },
	{ "verdict-board", "deadline expiry to its verdict, the board",
	    fig_verdict_board, 0, false, false },
	{ "bundle", "a bundle of a native gdb session and of the board",
	    fig_bundle, 0, false, false },
	{ "record", "the board's loop recorded, beside unrecorded",
	    fig_record, 0, false, false },
	{ "ssh", "ssh:// beside ssh -L and ssh host true",
	    fig_ssh_run, 0, false, false },
	{ "replace", "the longest ping gap in daemon --replace",
	    fig_replace_gap, 0, false, false },
	{ "list10k", "dbgctl list of 10,000 sessions",
	    fig_list10k, FIG_LIST10K, true, false },
};

/* Record why the figure gives up; returns -1 for the figure to return. */
int
bench_fail(struct bench *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b->why, sizeof b->why, fmt, ap);
	va_end(ap);
	return -1;
}

/* An integer from the environment, or def if unset or not positive. */
static int
bench_env_int(const char *name, int def)
{
	const char	*v = getenv(name);
	int		 n;

	if (v == NULL || (n = atoi(v)) <= 0)
		return def;
	return n;
}

/* Order two scale points, for qsort. */
static int
bench_scale_cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* BENCH_SCALE, the live-session counts of the scale figure, ascending. */
static void
bench_scale(struct bench *b)
{
	const char	*v = getenv("BENCH_SCALE");
	char		*end;
	long		 n;

	if (v == NULL || *v == '\0')
		v = "10 100 1000 3000";
	for (b->nscale = 0; b->nscale < BENCH_SCALE_MAX; v = end) {
		n = strtol(v, &end, 10);
		if (end == v)
			break;
		if (n > 0)
			b->scale[b->nscale++] = (int)n;
	}
	/* Sessions are only ever added, so the points must grow. */
	qsort(b->scale, b->nscale, sizeof b->scale[0], bench_scale_cmp);
}

/* The settings, from argv and the environment; -1 if a binary is missing. */
static int
bench_config(struct bench *b, int argc, char **argv)
{
	b->dbgctl = argc > 2 ? argv[1] : getenv("DBGCTL");
	b->dbgctld = argc > 2 ? argv[2] : getenv("DBGCTLD");
	if (b->dbgctl == NULL || b->dbgctld == NULL) {
		fprintf(stderr, "usage: bench DBGCTL DBGCTLD (or set $DBGCTL "
		    "and $DBGCTLD)\n");
		return -1;
	}
	b->runs = bench_env_int("BENCH_RUNS", 15);
	b->idle_s = bench_env_int("BENCH_IDLE_SECONDS", 10);
	b->mib = bench_env_int("BENCH_MIB", 64);
	b->stopall_runs = bench_env_int("BENCH_STOPALL_RUNS", 3);
	b->list10k = bench_env_int("BENCH_LIST10K", 0) == 1;
	b->hostile_s = bench_env_int("BENCH_HOSTILE_SECONDS", 10);
	b->board = getenv("BENCH_BOARD");
	/*
	 * Absolute: the daemon's sessions run QEMU and gdb in a directory of
	 * their own, where a path relative to the bench's is not there.
	 */
	if (b->board != NULL && *b->board != '\0' &&
	    realpath(b->board, b->board_path) != NULL)
		b->board = b->board_path;
	bench_scale(b);
	return 0;
}

/* The machine line: CPU model, cores, kernel, build type. */
static void
bench_machine(const struct bench *b)
{
	char		 line[256], model[128] = "unknown CPU";
	struct utsname	 u;
	FILE		*f;

	if ((f = fopen("/proc/cpuinfo", "r")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL)
			if (strncmp(line, "model name", 10) == 0 &&
			    strchr(line, ':') != NULL) {
				snprintf(model, sizeof model, "%s",
				    strchr(line, ':') + 2);
				model[strcspn(model, "\n")] = '\0';
				break;
			}
		fclose(f);
	}
	uname(&u);
	table_head("machine: %s, %ld cores, Linux %s, build %s", model,
	    sysconf(_SC_NPROCESSORS_ONLN), u.release, BENCH_BUILDTYPE);
	table_head("medians of %d runs (BENCH_RUNS), each beside its baseline "
	    "in the same run, interleaved", b->runs);
}

/* Whether BENCH_ONLY (a comma list) leaves this figure in. */
static int
bench_selected(const char *name)
{
	const char	*only = getenv("BENCH_ONLY"), *p;
	size_t		 len = strlen(name);

	if (only == NULL || *only == '\0')
		return 1;
	for (p = only; (p = strstr(p, name)) != NULL; p += len)
		if ((p == only || p[-1] == ',') &&
		    (p[len] == ',' || p[len] == '\0'))
			return 1;
	return 0;
}

/* Run one figure against a daemon of its own; n/a rows if it gave up. */
static void
bench_run(struct bench *b, const struct bench_figure *f)
{
	double t0 = stat_now_ms();

	fprintf(stderr, "bench: %s ...\n", f->title);
	b->why[0] = '\0';
	b->keep_ended = f->keep_ended;
	b->tcp = f->tcp;
	if (daemon_start(b) == -1 || f->run(b) == -1)
		table_na(NO_TARGET, b->why, "%s", f->title);
	daemon_stop(b);
	fprintf(stderr, "bench: %s took %.1f s\n", f->title,
	    (stat_now_ms() - t0) / 1000);
}

/* Run every figure selected, then print the table. */
int
main(int argc, char **argv)
{
	struct bench	b = { 0 };
	size_t		i;

	if (argc > 2 && strcmp(argv[1], "--target") == 0 &&
	    strcmp(argv[2], "loop") == 0)
		return fig_break_target();
	if (argc > 1 && strcmp(argv[1], "--target") == 0)
		return fig_expect_target(argc - 2, argv + 2);
	if (bench_config(&b, argc, argv) == -1)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stderr, NULL, _IOLBF, 0);
	bench_machine(&b);
	for (i = 0; i < sizeof bench_figures / sizeof bench_figures[0]; i++)
		if (bench_selected(bench_figures[i].name) &&
		    (!bench_figures[i].optional || b.list10k))
			bench_run(&b, &bench_figures[i]);
	table_print();
	return 0;
}
