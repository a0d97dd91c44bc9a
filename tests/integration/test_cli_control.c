/*
 * The run-control commands as a shell script sees them, on native gdb
 * running FIX_TALLY (it calls tally_write(s, len) twice a line): halt
 * prints a stop line; break, resume --wait, break --list and --delete; eval;
 * mem read against eval, mem --write read back; regs; where; --json with seq;
 * usage errors (exit 2) and no daemon (exit 3) without a daemon started;
 * the refusal on an exec session (exit 1); a timeout (exit 4).
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(clicontrol, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 180);

/* A generous bound for a verb the daemon answers at once (ms, as text). */
#define CLI_CONTROL_BOUND	"20000"

/* What tally pauses between the halves of a line (us): a calm target. */
#define CLI_CONTROL_PAUSE	"20000"

/* Register names of this architecture's pc and sp, as gdb calls them. */
#ifdef __x86_64__
#define CLI_CONTROL_PC	"rip"
#define CLI_CONTROL_SP	"rsp"
#elif defined(__aarch64__)
#define CLI_CONTROL_PC	"pc"
#define CLI_CONTROL_SP	"sp"
#else
#define CLI_CONTROL_PC	"pc"
#define CLI_CONTROL_SP	"sp"
#endif

/* Run dbgctl ARGS..., assert exit 0 and one line on stdout; it (malloc'd, no newline). */
static char *
cli_control_line(const char *const args[])
{
	struct h_res	 r;
	char		*line;

	h_cli_exit(&r, 0, args);
	cr_assert(r.out_len > 0 && r.out[r.out_len - 1] == '\n' &&
	    memchr(r.out, '\n', r.out_len) == r.out + r.out_len - 1,
	    "dbgctl %s ...: expected one line, got \"%s\"", args[0],
	    h_shown(r.out, r.out_len, 600));
	r.out[r.out_len - 1] = '\0';
	line = strdup(r.out);
	h_run_free(&r);
	return line;
}

/* Launch gdb on FIX_TALLY, run it, and wait until its target runs; its id in ids. */
static long
cli_control_gdb(char *ids, size_t len)
{
	long	id;

	id = h_cli_launch(H_ARGS("--kind", "gdb", "-x", "run", "--",
	    h_ctx_fixture("FIX_TALLY"), CLI_CONTROL_PAUSE));
	h_idstr(id, ids, len);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "session %s: its target never ran", ids);
	return id;
}

/* Assert that line starts with "session ID: " and holds text. */
static void
cli_control_says(const char *line, const char *ids, const char *text,
    const char *when)
{
	char	want[64];

	snprintf(want, sizeof want, "session %s: ", ids);
	cr_assert(strncmp(line, want, strlen(want)) == 0 && strstr(line, text)
	    != NULL, "%s: expected \"%s...%s...\", got \"%s\"", when, want,
	    text, line);
}

/* The seq a stop line ends with (", seq N"); asserted there. */
static long long
cli_control_seq(const char *line, const char *when)
{
	const char	*p = strstr(line, ", seq ");

	cr_assert_not_null(p, "%s: no \", seq N\" in \"%s\"", when, line);
	return strtoll(p + 6, NULL, 10);
}

/* The number of the breakpoint `break ID LOCATION` made, from its line. */
static char *
cli_control_break(const char *ids, const char *location, char *num,
    size_t len)
{
	char	*line;

	line = cli_control_line(H_ARGS("break", ids, location));
	cr_assert(strncmp(line, "breakpoint ", 11) == 0 &&
	    isdigit((unsigned char)line[11]), "break %s %s: expected "
	    "\"breakpoint N ...\", got \"%s\"", ids, location, line);
	snprintf(num, len, "%.*s", (int)strspn(line + 11, "0123456789"),
	    line + 11);
	cr_assert(strstr(line, location) != NULL, "break %s %s: the line "
	    "does not name %s: \"%s\"", ids, location, location, line);
	free(line);
	return num;
}

/* Halt the session and stop it at tally_write with a breakpoint of its own; its number. */
static void
cli_control_at_tally_write(const char *ids, char *num, size_t len)
{
	char	*line;

	free(cli_control_line(H_ARGS("halt", "--timeout", CLI_CONTROL_BOUND,
	    ids)));
	cli_control_break(ids, "tally_write", num, len);
	line = cli_control_line(H_ARGS("resume", "--wait", "--timeout",
	    CLI_CONTROL_BOUND, ids));
	free(line);
}

/* halt on a running target prints one stop line with its seq, exit 0; again: "(already)". */
Test(clicontrol, halt_prints_a_stop_line)
{
	char		 ids[32], *line, *again;
	long long	 seq;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	line = cli_control_line(H_ARGS("halt", "--timeout", CLI_CONTROL_BOUND,
	    ids));
	cli_control_says(line, ids, ": stopped", "halt");
	seq = cli_control_seq(line, "halt");
	cr_assert_gt(seq, 1, "halt: seq %lld, expected more than the first "
	    "record's 1: \"%s\"", seq, line);
	cr_assert(h_cli_wait_status(atol(ids), "target.state", "stopped",
	    H_WAIT_BOUND), "after halt: status does not say stopped");
	again = cli_control_line(H_ARGS("halt", ids));
	cli_control_says(again, ids, "(already)", "a second halt");
	cr_assert_eq(cli_control_seq(again, "a second halt"), seq, "a second "
	    "halt: \"%s\", expected the seq of \"%s\"", again, line);
	free(again);
	free(line);
}

/*
 * break makes a breakpoint; resume --wait stops at it, the line naming
 * it, a seq after the halt's; break --list shows it; break --delete
 * removes it and --list no longer shows it.
 */
Test(clicontrol, break_resume_wait_list_delete)
{
	char		 ids[32], num[16], want[64], *halt, *stop, *list, *del;
	struct h_res	 r;
	long long	 seq;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	halt = cli_control_line(H_ARGS("halt", "--timeout", CLI_CONTROL_BOUND,
	    ids));
	seq = cli_control_seq(halt, "halt");
	cli_control_break(ids, "tally_write", num, sizeof num);
	stop = cli_control_line(H_ARGS("resume", "--wait", "--timeout",
	    CLI_CONTROL_BOUND, ids));
	snprintf(want, sizeof want, "(breakpoint-hit, breakpoint %s", num);
	cli_control_says(stop, ids, want, "resume --wait");
	cli_control_says(stop, ids, "at tally_write (tally.c:", "resume --wait");
	cr_assert_gt(cli_control_seq(stop, "resume --wait"), seq, "resume "
	    "--wait: \"%s\" is no later than the halt's \"%s\"", stop, halt);

	list = cli_control_line(H_ARGS("break", "--list", ids));
	snprintf(want, sizeof want, "breakpoint %s at tally_write", num);
	cr_assert(strstr(list, want) != NULL, "break --list: no \"%s\" in "
	    "\"%s\"", want, list);
	del = cli_control_line(H_ARGS("break", "--delete", ids, num));
	snprintf(want, sizeof want, "deleted 1 breakpoint: %s", num);
	cr_assert_str_eq(del, want, "break --delete %s %s", ids, num);
	free(list);
	h_cli_exit(&r, 0, H_ARGS("break", "--list", ids));
	cr_assert(strstr(r.out, "tally_write") == NULL, "break --list after "
	    "the delete still shows it: \"%s\"", r.out);
	h_run_free(&r);
	free(del);
	free(stop);
	free(halt);
}

/* eval prints a value: at tally_write, sizeof(len) is 8 and len a line's part. */
Test(clicontrol, eval_prints_a_value)
{
	char	 ids[32], num[16], *v;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	cli_control_at_tally_write(ids, num, sizeof num);
	v = cli_control_line(H_ARGS("eval", ids, "sizeof", "(len)"));
	cr_assert_str_eq(v, "8", "eval %s sizeof (len)", ids);
	free(v);
	v = cli_control_line(H_ARGS("eval", ids, "len", "+", "0"));
	cr_assert(*v != '\0' && strspn(v, "0123456789") == strlen(v) &&
	    atol(v) > 0, "eval %s len + 0: expected a count, got \"%s\"", ids,
	    v);
	free(v);
}

/* The bytes of a little-endian 64-bit n as hex, into buf. */
static const char *
cli_control_hex_le(unsigned long long n, char *buf, size_t len)
{
	size_t	i;

	for (i = 0; i < 8 && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, len - 2 * i, "%02llx", (n >> (8 * i)) &
		    0xff);
	return buf;
}

/*
 * mem reads the bytes of len as eval sees it (dump and --json's hex);
 * mem --write changes them, and both mem and eval read the new value.
 */
Test(clicontrol, mem_reads_and_writes_a_variable)
{
	char		 ids[32], num[16], hex[32], want[64], *v, *dump;
	json_t		*j;
	unsigned long	 len;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	cli_control_at_tally_write(ids, num, sizeof num);
	v = cli_control_line(H_ARGS("eval", ids, "len"));
	len = strtoul(v, NULL, 10);
	free(v);
	j = h_cli_json(H_ARGS("mem", ids, "&len", "8"));
	cli_control_hex_le(len, hex, sizeof hex);
	cr_assert_str_eq(h_jstr(j, "hex") != NULL ? h_jstr(j, "hex") : "",
	    hex, "mem --json %s &len 8: the hex of len %lu", ids, len);
	cr_assert_eq(h_jint(j, "length", -1), 8, "mem --json: length");
	json_decref(j);
	dump = cli_control_line(H_ARGS("mem", ids, "&len", "8"));
	snprintf(want, sizeof want, ": %.4s %.4s %.4s %.4s  ", hex, hex + 4,
	    hex + 8, hex + 12);
	cr_assert(strstr(dump, want) != NULL, "mem %s &len 8: expected "
	    "\"ADDR%s........\", got \"%s\"", ids, want, dump);
	free(dump);

	v = cli_control_line(H_ARGS("mem", "--write", ids, "&len",
	    "2a00000000000000"));
	cr_assert(strstr(v, "wrote 8 bytes") != NULL, "mem --write: \"%s\"",
	    v);
	free(v);
	v = cli_control_line(H_ARGS("eval", ids, "len"));
	cr_assert_str_eq(v, "42", "eval %s len after mem --write", ids);
	free(v);
	j = h_cli_json(H_ARGS("mem", ids, "&len", "8"));
	cr_assert_str_eq(h_jstr(j, "hex") != NULL ? h_jstr(j, "hex") : "",
	    "2a00000000000000", "mem after mem --write");
	json_decref(j);
}

/* regs lists pc and sp by the architecture's names; regs NAME only that, aligned. */
Test(clicontrol, regs_shows_pc_and_sp)
{
	char		 ids[32], want[32], *line;
	struct h_res	 r;
	json_t		*j;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	free(cli_control_line(H_ARGS("halt", "--timeout", CLI_CONTROL_BOUND,
	    ids)));
	h_cli_exit(&r, 0, H_ARGS("regs", ids));
	snprintf(want, sizeof want, "\n%s ", CLI_CONTROL_PC);
	cr_assert(strncmp(r.out, want + 1, strlen(want) - 1) == 0 ||
	    strstr(r.out, want) != NULL, "regs %s: no %s line in \"%s\"", ids,
	    CLI_CONTROL_PC, h_shown(r.out, r.out_len, 800));
	snprintf(want, sizeof want, "\n%s ", CLI_CONTROL_SP);
	cr_assert(strstr(r.out, want) != NULL, "regs %s: no %s line in "
	    "\"%s\"", ids, CLI_CONTROL_SP, h_shown(r.out, r.out_len, 800));
	h_run_free(&r);
	line = cli_control_line(H_ARGS("regs", ids, CLI_CONTROL_PC));
	snprintf(want, sizeof want, "%s 0x", CLI_CONTROL_PC);
	cr_assert(strncmp(line, want, strlen(want)) == 0, "regs %s %s: "
	    "expected \"%s...\", got \"%s\"", ids, CLI_CONTROL_PC, want, line);
	free(line);
	j = h_cli_json(H_ARGS("regs", ids, CLI_CONTROL_PC, CLI_CONTROL_SP));
	snprintf(want, sizeof want, "registers.%s", CLI_CONTROL_SP);
	cr_assert(h_jstr(j, want) != NULL && strncmp(h_jstr(j, want), "0x", 2)
	    == 0, "regs --json: no hex %s", want);
	json_decref(j);
}

/*
 * where prints the halted target's frame: at tally_write, its function,
 * file and line and its address, and --json the same as numbers and
 * strings; on a running target it exits 1 saying so, as it does on an
 * lldb session, which cannot say.
 */
Test(clicontrol, where_prints_the_frame_of_a_halted_target)
{
	char		 ids[32], num[16], *line;
	struct h_res	 r;
	json_t		*j;
	long		 id;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	cli_control_at_tally_write(ids, num, sizeof num);
	line = cli_control_line(H_ARGS("where", ids));
	cr_assert(strncmp(line, "tally_write at /", 16) == 0 && strstr(line,
	    "/tally.c:") != NULL && strstr(line, ", 0x") != NULL, "where at "
	    "the breakpoint: expected \"tally_write at /.../tally.c:N, 0x...\","
	    " got \"%s\"", line);
	free(line);
	j = h_cli_json(H_ARGS("where", ids));
	cr_assert_str_eq(h_jstr(j, "frame.func") ? h_jstr(j, "frame.func") :
	    "(none)", "tally_write", "where --json: %s", json_dumps(j,
	    JSON_COMPACT));
	cr_assert_gt(h_jint(j, "frame.line", 0), 0, "where --json: no line");
	json_decref(j);
	/* No breakpoint left to stop it: the target runs until halted. */
	free(cli_control_line(H_ARGS("break", "--delete", ids, num)));
	free(cli_control_line(H_ARGS("resume", ids)));
	h_cli_exit(&r, 1, H_ARGS("where", ids));
	cr_assert(strstr(r.err, "is running, not halted") != NULL, "where on "
	    "a running target: expected \"is running, not halted\", got "
	    "\"%s\"", r.err);
	h_run_free(&r);
	id = h_cli_launch(H_ARGS("--kind", "lldb", "--",
	    h_ctx_fixture("FIX_TALLY")));
	h_idstr(id, ids, sizeof ids);
	h_cli_exit(&r, 1, H_ARGS("where", ids));
	cr_assert(strstr(r.err, "is an lldb session: where needs the gdb "
	    "family") != NULL, "where on an lldb session: got \"%s\"", r.err);
	h_run_free(&r);
}

/*
 * bt prints the halted target's frames innermost first, tally_write called
 * from main; --limit 1 says the stack goes on; a running target is refused.
 */
Test(clicontrol, bt_prints_the_frames_of_a_halted_target)
{
	char		 ids[32], num[16];
	struct h_res	 r;
	json_t		*j, *f;
	pid_t		 d;

	d = h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	cli_control_at_tally_write(ids, num, sizeof num);
	h_cli_exit(&r, 0, H_ARGS("bt", ids));
	cr_assert(strncmp(r.out, "#0  tally_write at ", 19) == 0 &&
	    strstr(r.out, "tally.c:") != NULL && strstr(r.out,
	    "\n#1  main at ") != NULL && strstr(r.out, "stack goes on") ==
	    NULL, "bt at the breakpoint: expected #0 tally_write, #1 main, "
	    "got \"%s\"", r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("bt", "--limit", "1", ids));
	cr_assert(strncmp(r.out, "#0  tally_write at ", 19) == 0 &&
	    strstr(r.out, "#1") == NULL && strstr(r.out, "\n(the stack goes "
	    "on: --limit more than 1 lists more)\n") != NULL, "bt --limit 1: "
	    "got \"%s\"", r.out);
	h_run_free(&r);
	j = h_cli_json(H_ARGS("bt", ids));
	f = json_array_get(json_object_get(j, "frames"), 1);
	cr_assert(h_jstr(f, "func") != NULL && strcmp(h_jstr(f, "func"),
	    "main") == 0 && h_jint(f, "level", 0) == 1 && h_jint(f, "line", 0) >
	    0 && json_is_false(json_object_get(j, "more")), "bt --json: %s",
	    json_dumps(j, JSON_COMPACT));
	json_decref(j);
	/* gdb answers after these time out: the daemon builds no answer. */
	h_cli(&r, H_ARGS("bt", "--timeout", "0", ids));
	h_run_free(&r);
	h_cli(&r, H_ARGS("where", "--timeout", "0", ids));
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("bt", "--limit", "1", ids));
	cr_assert(strncmp(r.out, "#0  tally_write at ", 19) == 0 && kill(d,
	    0) == 0 && h_daemon_pid() == d, "after bt and where timed out: "
	    "the daemon %ld is gone, or bt printed \"%s\"", (long)d, r.out);
	h_run_free(&r);
	free(cli_control_line(H_ARGS("break", "--delete", ids, num)));
	free(cli_control_line(H_ARGS("resume", ids)));
	h_cli_exit(&r, 1, H_ARGS("bt", ids));
	cr_assert(strstr(r.err, "is running, not halted") != NULL, "bt on a "
	    "running target: got \"%s\"", r.err);
	h_run_free(&r);
}

/* --json prints the result object, one line that parses, with the target's seq. */
Test(clicontrol, json_output_has_seq)
{
	char		 ids[32], num[16];
	json_t		*j;
	long long	 seq;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	j = h_cli_json(H_ARGS("halt", "--timeout", CLI_CONTROL_BOUND, ids));
	cr_assert_str_eq(h_jstr(j, "target.state") ? h_jstr(j,
	    "target.state") : "", "stopped", "halt --json: target.state");
	seq = h_jint(j, "target.seq", -1);
	cr_assert_gt(seq, 0, "halt --json: no target.seq");
	json_decref(j);
	j = h_cli_json(H_ARGS("break", ids, "tally_write"));
	snprintf(num, sizeof num, "%s", h_jstr(j, "breakpoint.number") ?
	    h_jstr(j, "breakpoint.number") : "");
	cr_assert(*num != '\0', "break --json: no breakpoint.number");
	json_decref(j);
	j = h_cli_json(H_ARGS("resume", "--wait", "--timeout",
	    CLI_CONTROL_BOUND, ids));
	cr_assert_gt(h_jint(j, "target.seq", -1), seq, "resume --wait "
	    "--json: target.seq not after the halt's %lld", seq);
	cr_assert_eq(h_jint(j, "target.stop.bkptno", -1), atol(num), "resume "
	    "--wait --json: target.stop.bkptno");
	json_decref(j);
	j = h_cli_json(H_ARGS("wait-stop", ids));
	cr_assert_gt(h_jint(j, "seq", -1), seq, "wait-stop --json: seq");
	json_decref(j);
	j = h_cli_json(H_ARGS("eval", ids, "1", "+", "1"));
	cr_assert_str_eq(h_jstr(j, "value") ? h_jstr(j, "value") : "", "2",
	    "eval --json: value");
	cr_assert_gt(h_jint(j, "target.seq", -1), 0, "eval --json: target");
	json_decref(j);
}

/*
 * reset --halt re-runs a native program and leaves it stopped by the
 * reset, a later seq; reset without it leaves it running; load is
 * refused on a host program (exit 1, the daemon's words).
 */
Test(clicontrol, reset_and_load_on_native_gdb)
{
	struct h_res	 r;
	char		 ids[32], *halt, *reset, *run;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	halt = cli_control_line(H_ARGS("halt", "--timeout", CLI_CONTROL_BOUND,
	    ids));
	reset = cli_control_line(H_ARGS("reset", "--halt", "--timeout",
	    CLI_CONTROL_BOUND, ids));
	cli_control_says(reset, ids, ": stopped (", "reset --halt");
	cli_control_says(reset, ids, "by reset", "reset --halt");
	cr_assert_gt(cli_control_seq(reset, "reset --halt"),
	    cli_control_seq(halt, "halt"), "reset --halt: \"%s\" is no later "
	    "than \"%s\"", reset, halt);
	run = cli_control_line(H_ARGS("reset", "--timeout", CLI_CONTROL_BOUND,
	    ids));
	cli_control_says(run, ids, ": running, seq ", "reset");
	h_cli_exit(&r, 1, H_ARGS("load", ids));
	cr_assert(strstr(r.err, "cannot load") != NULL, "load on gdb: "
	    "expected the daemon's \"cannot load\", got \"%s\"", r.err);
	h_run_free(&r);
	free(run);
	free(reset);
	free(halt);
}

/*
 * wait-stop prints the fault's stop; resume --wait after it prints the
 * exit, naming the signal the target died of.
 */
Test(clicontrol, an_exit_by_a_signal_names_it)
{
	char	 ids[32], *stop, *exit;
	long	 id;

	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "gdb", "-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	h_idstr(id, ids, sizeof ids);
	stop = cli_control_line(H_ARGS("wait-stop", "--timeout",
	    CLI_CONTROL_BOUND, ids));
	cli_control_says(stop, ids, ": stopped (signal-received, SIGSEGV) at "
	    "crash_here (fault.c:", "wait-stop");
	exit = cli_control_line(H_ARGS("resume", "--wait", "--timeout",
	    CLI_CONTROL_BOUND, ids));
	cli_control_says(exit, ids, ": exited (", "resume --wait");
	cr_assert(strstr(exit, "SIGSEGV") != NULL, "resume --wait after the "
	    "fault: \"%s\" does not name SIGSEGV (the exited record has no "
	    "reason or signal)", exit);
	free(exit);
	free(stop);
}

/* The bad command lines, one a verb, and what each must say. */
static const struct {
	const char	*args[8];
	const char	*says;
} cli_control_bad[] = {
	{ { "halt", NULL }, "missing SESSION" },
	{ { "halt", "1", "2", NULL }, "too many arguments" },
	{ { "halt", "--timeout", "soon", "1", NULL }, "bad --timeout" },
	{ { "resume", "--step", "--next", "1", NULL }, "are exclusive" },
	{ { "resume", "--halt-on-timeout", "1", NULL }, "needs --wait" },
	{ { "resume", "--until", NULL }, "requires an argument" },
	{ { "break", "1", NULL }, "missing LOCATION" },
	{ { "break", "--list", "--delete", "1", NULL }, "are exclusive" },
	{ { "break", "--delete", "1", "two", NULL }, "bad breakpoint number" },
	{ { "break", "1", "main", "--bogus", NULL }, "unknown option" },
	{ { "eval", "1", NULL }, "missing EXPR" },
	{ { "mem", "1", "&x", NULL }, "missing LEN" },
	{ { "mem", "1", "&x", "0", NULL }, "bad LEN" },
	{ { "mem", "1", "&x", "2097152", NULL }, "bad LEN" },
	{ { "mem", "--write", "1", "&x", "0a0", NULL }, "bad HEXBYTES" },
	{ { "mem", "--raw", "--write", "1", "&x", "0a", NULL },
	    "are exclusive" },
	{ { "regs", NULL }, "missing SESSION" },
	{ { "bt", "--limit", "0", "1", NULL }, "bad --limit" },
	{ { "reset", "--hard", "1", NULL }, "unknown option" },
	{ { "load", "--file", "", "1", NULL }, "needs a path" },
	{ { "wait-stop", "--after", "x", "1", NULL }, "bad --after" },
};

/* Each verb's usage error exits 2, says why with its usage line, and starts no daemon. */
Test(clicontrol, usage_errors_exit_2_without_a_daemon)
{
	struct h_res	r;
	pid_t		d[4];
	char		line[256], usage[64];
	size_t		i;

	for (i = 0; i < sizeof cli_control_bad / sizeof cli_control_bad[0];
	    i++) {
		h_join_args(cli_control_bad[i].args, line, sizeof line);
		h_cli_exit(&r, 2, cli_control_bad[i].args);
		snprintf(usage, sizeof usage, "usage: dbgctl %s ",
		    cli_control_bad[i].args[0]);
		cr_assert(strstr(r.err, cli_control_bad[i].says) != NULL &&
		    strstr(r.err, usage) != NULL, "dbgctl %s: expected \"%s\" "
		    "and \"%s...\" on stderr, got \"%s\"", line,
		    cli_control_bad[i].says, usage, r.err);
		cr_assert_eq(r.out_len, 0, "dbgctl %s: stdout \"%s\"", line,
		    r.out);
		h_run_free(&r);
	}
	cr_assert_eq(h_daemon_list(d, 4), 0, "a usage error started a daemon");
}

/* Every verb, well formed, on session ID. */
static const char *const cli_control_verbs[][8] = {
	{ "halt", "ID", NULL },
	{ "resume", "--wait", "ID", NULL },
	{ "break", "ID", "main", NULL },
	{ "break", "--list", "ID", NULL },
	{ "break", "--delete", "ID", NULL },
	{ "eval", "ID", "1", NULL },
	{ "mem", "ID", "0x1000", "4", NULL },
	{ "mem", "--write", "ID", "0x1000", "00", NULL },
	{ "regs", "ID", NULL },
	{ "where", "ID", NULL },
	{ "bt", "ID", NULL },
	{ "reset", "--halt", "ID", NULL },
	{ "load", "ID", NULL },
	{ "wait-stop", "ID", NULL },
};

#define CLI_CONTROL_NVERBS \
	(sizeof cli_control_verbs / sizeof cli_control_verbs[0])

/* Verb i of the list with ids for its session, into v. */
static void
cli_control_verb(size_t i, const char *ids, const char *v[8])
{
	size_t	k;

	for (k = 0; cli_control_verbs[i][k] != NULL; k++)
		v[k] = strcmp(cli_control_verbs[i][k], "ID") == 0 ? ids :
		    cli_control_verbs[i][k];
	v[k] = NULL;
}

/* With no daemon, each verb exits 3 saying so, and starts none. */
Test(clicontrol, no_daemon_exits_3_and_starts_none)
{
	const char	*v[8];
	struct h_res	 r;
	pid_t		 d[4];
	char		 line[256];
	size_t		 i;

	for (i = 0; i < CLI_CONTROL_NVERBS; i++) {
		cli_control_verb(i, "1", v);
		h_join_args(v, line, sizeof line);
		h_cli_exit(&r, 3, v);
		cr_assert(strstr(r.err, "no daemon is running") != NULL,
		    "dbgctl %s: expected \"no daemon is running\", got \"%s\"",
		    line, r.err);
		h_run_free(&r);
	}
	cr_assert_eq(h_daemon_list(d, 4), 0, "a verb started a daemon");
}

/* On an exec session each verb exits 1 with the daemon's not_supported words. */
Test(clicontrol, exec_session_refuses_each_verb)
{
	const char	*v[8];
	struct h_res	 r;
	char		 ids[32], line[256], want[128];
	size_t		 i;
	long		 id;

	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	h_idstr(id, ids, sizeof ids);
	for (i = 0; i < CLI_CONTROL_NVERBS; i++) {
		cli_control_verb(i, ids, v);
		h_join_args(v, line, sizeof line);
		h_cli_exit(&r, 1, v);
		snprintf(want, sizeof want, "session %s is an exec session: ",
		    ids);
		cr_assert(strstr(r.err, want) != NULL && (strstr(r.err,
		    "needs a debugger") != NULL || strstr(r.err,
		    "no debugged target") != NULL), "dbgctl %s: expected "
		    "\"%s... needs a debugger\", got \"%s\"", line, want, r.err);
		cr_assert_eq(r.out_len, 0, "dbgctl %s: stdout \"%s\"", line,
		    r.out);
		h_run_free(&r);
	}
}

/*
 * resume --wait with no stop to come exits 4 after its --timeout, saying
 * so and where the target is (running); wait-stop --after the last stop
 * too; with --halt-on-timeout the target is left halted.
 */
Test(clicontrol, timeout_exits_4)
{
	struct h_res	 r;
	char		 ids[32], after[32], *halt;
	long long	 seq;

	h_daemon_fg();
	cli_control_gdb(ids, sizeof ids);
	h_cli_exit(&r, 4, H_ARGS("resume", "--wait", "--timeout", "500",
	    ids));
	cr_assert(strstr(r.err, "running") != NULL && r.out_len == 0,
	    "resume --wait --timeout 500: expected the running target on "
	    "stderr, got stdout \"%s\", stderr \"%s\"", r.out, r.err);
	h_run_free(&r);
	halt = cli_control_line(H_ARGS("halt", "--timeout", CLI_CONTROL_BOUND,
	    ids));
	seq = cli_control_seq(halt, "halt");
	free(halt);
	free(cli_control_line(H_ARGS("resume", ids)));
	snprintf(after, sizeof after, "%lld", seq);
	h_cli_exit(&r, 4, H_ARGS("wait-stop", "--after", after,
	    "--timeout", "500", ids));
	h_run_free(&r);
	h_cli_exit(&r, 4, H_ARGS("resume", "--wait", "--timeout", "500",
	    "--halt-on-timeout", ids));
	cr_assert(strstr(r.err, "stopped") != NULL, "resume --wait "
	    "--halt-on-timeout: expected the stop on stderr, got \"%s\"",
	    r.err);
	h_run_free(&r);
	cr_assert(h_cli_wait_status(atol(ids), "target.state", "stopped",
	    H_WAIT_BOUND), "after --halt-on-timeout: the target is not "
	    "stopped");
}
