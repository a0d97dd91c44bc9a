/*
 * The target stream ends when the program ends: under gdb, lldb and
 * gdbserver, `pipe`, `recv` and a target subscriber get every byte the
 * program wrote and then the EOF once it exits, while the debugger (which
 * holds the transport pipes) stays; a program run again writes a new run
 * of the same stream, at the offsets after the old; and input sent to a
 * program that has exited is refused as closed, not queued.
 */
#include "b64.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(eof, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 180);

/* What the blast fixture writes, byte i: its alphabet at i % 37. */
#define EOF_ALPHABET	"0123456789abcdefghijklmnopqrstuvwxyz\n"
/* The block it writes just before it exits, unless told another size. */
#define EOF_BLOCK	(256 * 1024)
#define EOF_BLOCK_TEXT	"262144"

/* Assert that len bytes at stream offset off are what blast wrote there. */
static void
eof_expect_blast(const char *what, const char *data, size_t len, uint64_t off)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (data[i] != EOF_ALPHABET[(off + i) % 37])
			cr_assert_fail("%s: byte %llu is 0x%02x, expected 0x%02x",
			    what, (unsigned long long)(off + i),
			    (unsigned char)data[i],
			    (unsigned char)EOF_ALPHABET[(off + i) % 37]);
}

/*
 * Launch the blast fixture (size bytes) with a transport under kind, run
 * at once; the command that runs it is gdb's and lldb's "run", and for a
 * gdbserver, whose program waits at its start, "continue".
 */
static long
eof_launch(const char *kind, const char *size, char *ids, size_t len)
{
	const char *blast = h_ctx_fixture("FIX_BLAST");
	long id;

	id = h_cli_launch(H_ARGS("--kind", kind, "--transport", "-x",
	    strcmp(kind, "gdbserver") == 0 ? "continue" : "run", "--", blast,
	    size));
	h_idstr(id, ids, len);
	return id;
}

/* Assert that the session runs still and its debugger is alive. */
static void
eof_expect_debugger(long id, const char *when)
{
	json_t	*st = h_cli_status(id);
	pid_t	 pid = (pid_t)h_jint(st, "pid", -1);

	cr_assert_str_eq(h_jstr(st, "state") ? h_jstr(st, "state") : "(none)",
	    "running", "session %ld %s: expected it still running with its "
	    "debugger, got state %s (error: %s)", id, when, h_jstr(st, "state"),
	    h_jstr(st, "error") ? h_jstr(st, "error") : "none");
	cr_assert(pid > 0 && !h_pid_gone(pid), "session %ld %s: its debugger "
	    "(pid %d) is gone", id, when, (int)pid);
	json_decref(st);
}

/*
 * `printf 'x\n' | dbgctl pipe S` returns by itself, exit 0, once the
 * program has exited, with every byte of the block it wrote at its end.
 */
static void
eof_pipe(const char *kind)
{
	char		ids[32];
	struct h_res	r;
	long		id;

	id = eof_launch(kind, EOF_BLOCK_TEXT, ids, sizeof ids);
	h_cli_input(&r, "x\n", H_ARGS("pipe", ids));
	cr_assert_eq(r.code, 0, "%s: dbgctl pipe %s: expected exit 0 once the "
	    "program exited, got %d%s after %.1f s, %zu bytes (stderr: %s)",
	    kind, ids, r.code, r.timed_out ? " (killed at the bound: it hung)" :
	    "", r.elapsed, r.out_len, r.err);
	cr_assert_eq(r.out_len, EOF_BLOCK, "%s: dbgctl pipe %s: expected the "
	    "%d bytes the program wrote before it exited, got %zu", kind, ids,
	    EOF_BLOCK, r.out_len);
	eof_expect_blast("dbgctl pipe", r.out, r.out_len, 0);
	h_run_free(&r);
	eof_expect_debugger(id, "after its program exited");
}

Test(eof, pipe_ends_with_program_gdb)
{
	eof_pipe("gdb");
}

Test(eof, pipe_ends_with_program_lldb)
{
	eof_pipe("lldb");
}

Test(eof, pipe_ends_with_program_gdbserver)
{
	eof_pipe("gdbserver");
}

static void	eof_recv_run(const char *, long long, uint64_t, size_t);

/*
 * `dbgctl recv S`, again and again, gets every byte at its offset and then
 * the end, at the offset after the last; plain recv then exits 5 with
 * "the target's output has ended", as at a pipe's EOF.
 */
static void
eof_recv(const char *kind, const char *size, size_t bytes)
{
	char		ids[32];
	struct h_res	r;
	long		id;

	id = eof_launch(kind, size, ids, sizeof ids);
	eof_recv_run(ids, 1, 0, bytes);
	/* The end is a state: asked again, recv says it again at once. */
	cr_assert_eq(h_cli(&r, H_ARGS("recv", ids)), 5, "%s: dbgctl recv %s "
	    "again: expected exit 5, got %d (stderr: %s)", kind, ids, r.code,
	    r.err);
	cr_assert(strstr(r.err, "ended") != NULL, "%s: dbgctl recv %s: "
	    "expected \"the target's output has ended\", got: %s", kind, ids,
	    r.err);
	h_run_free(&r);
	eof_expect_debugger(id, "after its program exited");
}

/* 3 MiB: more than the pipe and the daemon's held output together. */
Test(eof, recv_ends_with_program_gdb)
{
	eof_recv("gdb", "3145728", 3 * 1024 * 1024);
}

Test(eof, recv_ends_with_program_lldb)
{
	eof_recv("lldb", EOF_BLOCK_TEXT, EOF_BLOCK);
}

Test(eof, recv_ends_with_program_gdbserver)
{
	eof_recv("gdbserver", EOF_BLOCK_TEXT, EOF_BLOCK);
}

/* A target subscriber's view: bytes checked by offset, ends by run. */
struct eof_sub {
	struct h_conn	 c;
	uint64_t	 next;		/* the offset the next piece must name */
	uint64_t	 run_from;	/* where the run being read began */
	long		 run;		/* the run the pieces must name */
	bool		 replied;	/* the subscribe was answered */
};

/*
 * Subscribe a new connection to the target output of session id; the
 * reply is taken among the pieces, which held output may put ahead of it.
 */
static void
eof_subscribe(struct eof_sub *g, long id)
{
	char line[256];

	memset(g, 0, sizeof *g);
	g->run = 1;
	cr_assert_eq(h_conn_open(&g->c, H->sock), 0, "connect");
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":9000,"
	    "\"method\":\"subscribe\",\"params\":{\"session\":%ld,"
	    "\"streams\":[\"target\"]}}\n", id);
	cr_assert_eq(h_conn_send(&g->c, line, strlen(line), 10000), 0,
	    "subscribe");
}

/*
 * Take session.output pieces of the target until the one that says eof:
 * bytes bytes of the run g->run, in order at their offsets, then the end
 * at the offset after them.
 */
static void
eof_sub_run(struct eof_sub *g, size_t bytes, const char *when)
{
	unsigned char	*data;
	const char	*text;
	json_t		*m;
	size_t		 len;
	double		 end = h_now() + H_WAIT_BOUND / 1000.0;

	for (;;) {
		m = h_conn_recv(&g->c, 1000);
		if (m == NULL) {
			cr_assert(!g->c.eof && h_now() < end, "subscriber %s: "
			    "no eof piece within %d ms, %llu of %zu bytes of run "
			    "%ld came", when, H_WAIT_BOUND, (unsigned long long)
			    (g->next - g->run_from), bytes, g->run);
			continue;
		}
		if (h_jint(m, "id", -1) == 9000) {
			cr_assert(json_is_true(h_jpath(m, "result.subscribed")),
			    "subscribe: expected subscribed, got %s",
			    json_dumps(m, 0));
			g->replied = true;
		}
		if (strcmp(h_jstr(m, "method") ? h_jstr(m, "method") : "",
		    "session.output") != 0 || strcmp(h_jstr(m,
		    "params.stream") ? h_jstr(m, "params.stream") : "",
		    "target") != 0) {
			json_decref(m);
			continue;
		}
		cr_assert_eq(h_jint(m, "params.offset", -1), (long long)g->next,
		    "subscriber %s: a piece at offset %lld where %llu was next",
		    when, h_jint(m, "params.offset", -1),
		    (unsigned long long)g->next);
		/* The end must name its run; a piece, if it does, the same. */
		cr_assert(h_jint(m, "params.run", g->run) == g->run &&
		    (!json_is_true(h_jpath(m, "params.eof")) ||
		    h_jint(m, "params.run", -1) == g->run), "subscriber %s: a "
		    "piece at offset %llu names run %lld, expected %ld", when,
		    (unsigned long long)g->next, h_jint(m, "params.run", -1),
		    g->run);
		text = h_jstr(m, "params.data");
		data = b64_decode(text ? text : "", text ? strlen(text) : 0,
		    &len);
		cr_assert_not_null(data, "subscriber %s: data not base64", when);
		eof_expect_blast("a subscriber's piece", (char *)data, len,
		    g->next - g->run_from);
		free(data);
		g->next += len;
		if (json_is_true(h_jpath(m, "params.eof"))) {
			json_decref(m);
			break;
		}
		json_decref(m);
	}
	cr_assert_eq(g->next - g->run_from, bytes, "subscriber %s: run %ld "
	    "ended after %llu bytes, expected %zu", when, g->run,
	    (unsigned long long)(g->next - g->run_from), bytes);
	g->run++;
	g->run_from = g->next;
}

/* A subscriber hears the end of the output: a piece with eof true. */
static void
eof_sub(const char *kind)
{
	struct eof_sub	g;
	char		ids[32];
	long		id;

	id = eof_launch(kind, EOF_BLOCK_TEXT, ids, sizeof ids);
	eof_subscribe(&g, id);
	eof_sub_run(&g, EOF_BLOCK, "of the first run");
	h_conn_close(&g.c);
	eof_expect_debugger(id, "after its program exited");
}

Test(eof, subscriber_gets_eof_gdb)
{
	eof_sub("gdb");
}

Test(eof, subscriber_gets_eof_lldb)
{
	eof_sub("lldb");
}

Test(eof, subscriber_gets_eof_gdbserver)
{
	eof_sub("gdbserver");
}

/*
 * recv --json once (exit 0 with data, 5 at the end): the reply's data
 * (appended to b), offset and run; whether it is the end.
 */
static bool
eof_recv_json(const char *ids, struct h_bytes *b, long long *off,
    long long *run)
{
	unsigned char	*data;
	const char	*text;
	struct h_res	 res;
	json_error_t	 je;
	json_t		*r;
	size_t		 len;
	bool		 eof;

	h_cli(&res, H_ARGS("--json", "recv", "--max", "1048576", "--timeout",
	    "2000", ids));
	cr_assert(res.code == 0 || res.code == 5 || res.code == 4, "dbgctl "
	    "--json recv %s: expected exit 0, 4 or 5, got %d (stderr: %s)", ids,
	    res.code, res.err);
	if (res.code == 4) {
		h_run_free(&res);
		*off = *run = -1;
		return false;
	}
	r = json_loads(res.out, 0, &je);
	cr_assert_not_null(r, "dbgctl --json recv %s: not JSON: %s", ids,
	    res.out);
	h_run_free(&res);
	text = h_jstr(r, "data");
	data = b64_decode(text ? text : "", text ? strlen(text) : 0, &len);
	cr_assert_not_null(data, "dbgctl --json recv %s: data not base64", ids);
	h_bytes_add(b, data, len);
	free(data);
	*off = h_jint(r, "offset", -1);
	*run = h_jint(r, "run", -1);
	eof = json_is_true(json_object_get(r, "eof"));
	json_decref(r);
	return eof;
}

/*
 * Read run `run` of the blast program to its end with recv --json: it
 * begins at offset from, each reply names the run, and the EOF comes at
 * the offset after its bytes.
 */
static void
eof_recv_run(const char *ids, long long run, uint64_t from, size_t bytes)
{
	struct h_bytes	b = { NULL, 0 };
	long long	off, got_run;
	uint64_t	next = from;
	double		end = h_now() + H_WAIT_BOUND / 1000.0;

	for (;;) {
		cr_assert(h_now() < end, "run %lld of session %s: no EOF within "
		    "%d ms, %zu of %zu bytes", run, ids, H_WAIT_BOUND, b.len,
		    bytes);
		if (eof_recv_json(ids, &b, &off, &got_run)) {
			cr_assert_eq(off, (long long)(from + bytes), "run %lld "
			    "of session %s: EOF at offset %lld, expected %llu",
			    run, ids, off, (unsigned long long)(from + bytes));
			cr_assert_eq(got_run, run, "session %s: the EOF names "
			    "run %lld, expected %lld", ids, got_run, run);
			break;
		}
		if (off == -1)
			continue;
		cr_assert_eq(off, (long long)next, "run %lld of session %s: "
		    "bytes at offset %lld, expected %llu", run, ids, off,
		    (unsigned long long)next);
		/* The end must name its run (above); bytes, if they do. */
		cr_assert(got_run == -1 || got_run == run, "session %s: bytes "
		    "at offset %lld name run %lld, expected %lld", ids, off,
		    got_run, run);
		next = from + b.len;
	}
	cr_assert_eq(b.len, bytes, "run %lld of session %s: %zu bytes, "
	    "expected %zu", run, ids, b.len, bytes);
	eof_expect_blast("recv", b.p, b.len, 0);
	free(b.p);
}

/*
 * Run the program again through exec; asserted. The stream's end can come
 * before lldb is back at its prompt after the exit, and an exec until
 * then is refused as not ready: that is waited out, bounded.
 */
static void
eof_again(const char *kind, const char *ids, const char *again)
{
	double		end = h_now() + H_WAIT_BOUND / 1000.0;
	struct h_res	r;

	while (h_cli(&r, H_ARGS("exec", ids, "--", again)) != 0 &&
	    strstr(r.err, "is not at its prompt") != NULL && h_now() < end) {
		h_run_free(&r);
		h_nap(20);
	}
	cr_assert_eq(r.code, 0, "%s: dbgctl exec %s -- %s: expected exit 0, "
	    "got %d (stderr: %s)", kind, ids, again, r.code, r.err);
	h_run_free(&r);
}

/*
 * The program run again (`exec -- run`) writes a fresh run of the stream:
 * recv, which got the first run's end, reads the second's bytes at the
 * offsets after the first's, named run 2, and then its end.
 */
static void
eof_rerun(const char *kind, const char *again)
{
	char	ids[32];
	long	id;

	id = eof_launch(kind, EOF_BLOCK_TEXT, ids, sizeof ids);
	eof_recv_run(ids, 1, 0, EOF_BLOCK);
	eof_again(kind, ids, again);
	eof_recv_run(ids, 2, EOF_BLOCK, EOF_BLOCK);
	eof_expect_debugger(id, "after its program's second run");
}

/*
 * A subscriber stays across runs: the first run's pieces and end, then
 * the second's, at the offsets after, named run 2; and one that comes at
 * the end of a run hears that end at once.
 */
static void
eof_rerun_sub(const char *kind, const char *again)
{
	struct eof_sub	g, late;
	char		ids[32];
	long		id;

	id = eof_launch(kind, EOF_BLOCK_TEXT, ids, sizeof ids);
	eof_subscribe(&g, id);
	eof_sub_run(&g, EOF_BLOCK, "of the first run");
	h_conn_close(&g.c);
	eof_subscribe(&late, id);
	late.next = late.run_from = EOF_BLOCK;
	eof_sub_run(&late, 0, "that came at the end of the first run");
	eof_again(kind, ids, again);
	eof_sub_run(&late, EOF_BLOCK, "of the second run");
	cr_assert(late.replied, "subscribe: no reply");
	h_conn_close(&late.c);
	eof_expect_debugger(id, "after its program's second run");
}

Test(eof, rerun_fresh_run_gdb)
{
	eof_rerun("gdb", "run");
}

Test(eof, rerun_fresh_run_lldb)
{
	eof_rerun("lldb", "run");
}

/* The same with MI's -exec-run. */
Test(eof, rerun_fresh_run_gdb_mi)
{
	eof_rerun("gdb", "-exec-run");
}

Test(eof, rerun_subscriber_gdb)
{
	eof_rerun_sub("gdb", "run");
}

Test(eof, rerun_subscriber_lldb)
{
	eof_rerun_sub("lldb", "run");
}

/* Whether lldb's log has the line of its program's exit, to its end. */
static bool
eof_lldb_exited(void *ids)
{
	return h_cli_log_has(ids, "exited with status = 0 (0x00000000)\r") ||
	    h_cli_log_has(ids, "exited with status = 0 (0x00000000) \r");
}

/*
 * Input for a program that has exited is refused as closed (exit 5), at
 * once: the debugger still holds the pipe, so it would only fill it.
 */
static void
eof_send_closed(const char *kind)
{
	char		ids[32];
	struct h_res	r;
	long		id;

	id = eof_launch(kind, "10", ids, sizeof ids);
	/*
	 * gdb says the program exited in status; lldb only on its console,
	 * where the line counts once it has ended.
	 */
	if (strcmp(kind, "gdb") == 0)
		cr_assert(h_cli_wait_status(id, "target.state", "exited",
		    H_WAIT_BOUND), "session %s: the program did not exit", ids);
	else
		cr_assert(h_wait_for(eof_lldb_exited, ids, H_WAIT_BOUND),
		    "session %s: lldb did not say the program exited", ids);
	cr_assert_eq(h_cli(&r, H_ARGS("send", ids, "late\n")), 5, "%s: dbgctl "
	    "send %s after its program exited: expected exit 5 (closed), got "
	    "%d after %.1f s (stderr: %s)", kind, ids, r.code, r.elapsed,
	    r.err);
	cr_assert(strstr(r.err, "exited") != NULL, "%s: dbgctl send %s: "
	    "expected a message that the program exited, got: %s", kind, ids,
	    r.err);
	h_run_free(&r);
	eof_expect_debugger(id, "after a refused send");
}

Test(eof, send_after_exit_closed_gdb)
{
	eof_send_closed("gdb");
}

Test(eof, send_after_exit_closed_lldb)
{
	eof_send_closed("lldb");
}
