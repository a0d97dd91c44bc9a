/*
 * Joined MI clients (the mi method, issue 22) against a running native
 * gdb session of tests/fixtures' loop: each client has its own token
 * space while exec works beside it, a result gdb gives another UI comes
 * back to its client, a client's leave resumes what it halted, and
 * joining and leaving twenty times leaves gdb's fd count flat, a client
 * joining the running QEMU board is seeded all the same, and a client's
 * stdin and stdout passed with its join are served by the daemon itself.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(join, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* Bound for one line or reply (ms). */
#define JOIN_BOUND	(30000 * H_SLOW)

/* The launched session and the control connection. */
struct jt {
	struct h_conn	 c;
	long		 id;
	char		 ids[32];
};

/* Read lines until one starts with prefix; it is returned (malloc'd). */
static char *
jt_until(struct h_conn *m, const char *prefix, const char *when)
{
	double	 end = h_now() + JOIN_BOUND / 1000.0;
	char	*line;

	for (;;) {
		cr_assert(h_now() < end, "%s: lines came for %d ms, none "
		    "starting \"%s\"", when, JOIN_BOUND, prefix);
		line = h_conn_line(m, JOIN_BOUND);
		cr_assert_not_null(line, "%s: no line starting \"%s\" within %d "
		    "ms", when, prefix, JOIN_BOUND);
		if (strncmp(line, prefix, strlen(prefix)) == 0)
			return line;
		free(line);
	}
}

/* Start the daemon and a gdb session of the loop with extra launch params. */
static void
jt_native_with(struct jt *t, const char *extra)
{
	char	 params[1024];
	json_t	*r;

	memset(t, 0, sizeof(*t));
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&t->c, H->sock), 0, "connect to %s",
	    H->sock);
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"]%s}", h_ctx_fixture("FIX_LOOP"), extra);
	r = h_conn_call(&t->c, "launch", params, JOIN_BOUND);
	t->id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(t->id, 0, "launch %s: got %s", params,
	    json_dumps(r, JSON_COMPACT));
	json_decref(r);
	h_idstr(t->id, t->ids, sizeof(t->ids));
	cr_assert(h_cli_wait_status(t->id, "target.state", "running",
	    H_WAIT_BOUND), "session %s: its target never ran", t->ids);
}

/* Start the daemon and a gdb session running the loop fixture. */
static void
jt_native(struct jt *t)
{
	jt_native_with(t, "");
}

/* Join session id on a new connection m with extra params; the seed read. */
static void
jt_join(struct jt *t, struct h_conn *m, const char *extra)
{
	char	 req[512], *line;
	json_t	*r;

	cr_assert_eq(h_conn_open(m, H->sock), 0);
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"mi\",\"params\":{\"session\":%ld%s}}\n", t->id, extra);
	cr_assert_eq(h_conn_send(m, req, strlen(req), JOIN_BOUND), 0);
	r = h_conn_recv(m, JOIN_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.raw")), "mi: expected a raw "
	    "stream, got %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	line = jt_until(m, "=thread-group-started", "the seed");
	free(line);
	line = jt_until(m, "(gdb)", "the seed's prompt");
	free(line);
}

/* Send one MI line. */
static void
jt_send(struct h_conn *m, const char *line)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s\n", line);
	cr_assert_eq(h_conn_send(m, buf, strlen(buf), JOIN_BOUND), 0,
	    "write %s", line);
}

/*
 * How many terminals a process holds open: a UI gdb kept for a channel
 * is one. Other fds come and go with what gdb does to its program.
 */
static int
jt_fds(pid_t pid)
{
	static char	targets[256][PATH_MAX];
	int		fds[256], n, i, ttys = 0;

	n = h_pid_fds(pid, fds, targets, 256);
	cr_assert_geq(n, 0, "the fds of %d", (int)pid);
	for (i = 0; i < n; i++)
		ttys += strncmp(targets[i], "/dev/pts/", 9) == 0 ||
		    strcmp(targets[i], "/dev/ptmx") == 0;
	return ttys;
}

Test(join, two_clients_and_exec_each_get_their_own_answers)
{
	struct jt	 t;
	struct h_conn	 a, b;
	char		*line, req[256];
	json_t		*r;

	jt_native(&t);
	jt_join(&t, &a, "");
	jt_join(&t, &b, ",\"mi\":\"mi2\"");
	/* The same token on both: each hears only its own answer. */
	jt_send(&a, "5-data-evaluate-expression 20+1");
	jt_send(&b, "5-data-evaluate-expression 20+2");
	snprintf(req, sizeof(req), "{\"session\":%ld,\"command\":"
	    "\"-data-evaluate-expression 20+3\"}", t.id);
	r = h_conn_call(&t.c, "exec", req, JOIN_BOUND);
	cr_assert_str_eq(h_jstr(r, "result.results.value"), "23");
	json_decref(r);
	line = jt_until(&a, "5^", "a's evaluate");
	cr_assert_str_eq(line, "5^done,value=\"21\"");
	free(line);
	line = jt_until(&b, "5^", "b's evaluate");
	cr_assert_str_eq(line, "5^done,value=\"22\"");
	free(line);
	/* a halts; b resumes: gdb gives b's ^running to another UI. */
	jt_send(&a, "6-exec-interrupt");
	free(jt_until(&a, "*stopped", "a's interrupt"));
	cr_assert(h_cli_wait_status(t.id, "target.stop.by", "mi",
	    H_WAIT_BOUND), "the stop is not said to be by mi");
	jt_send(&b, "7-exec-continue");
	line = jt_until(&b, "7^", "b's continue");
	cr_assert_str_eq(line, "7^running");
	free(line);
	cr_assert(h_cli_wait_status(t.id, "target.by", "mi", H_WAIT_BOUND),
	    "the running record is not said to be by mi");
	free(jt_until(&a, "*running", "a hears b's resume"));
	h_conn_close(&a);
	h_conn_close(&b);
	h_conn_close(&t.c);
}

Test(join, a_client_that_halted_the_target_leaves_it_running)
{
	struct jt	 t;
	struct h_conn	 a;
	char		*line;

	jt_native(&t);
	jt_join(&t, &a, "");
	jt_send(&a, "1-exec-run");
	line = jt_until(&a, "1^", "-exec-run");
	cr_assert(strstr(line, "^error,msg=") != NULL &&
	    strstr(line, "new copy") != NULL, "-exec-run: got %s", line);
	free(line);
	jt_send(&a, "2-exec-interrupt");
	free(jt_until(&a, "*stopped", "the interrupt"));
	cr_assert(h_cli_wait_status(t.id, "target.state", "stopped",
	    H_WAIT_BOUND));
	jt_send(&a, "3-gdb-exit");
	line = jt_until(&a, "3^", "-gdb-exit");
	cr_assert_str_eq(line, "3^exit");
	free(line);
	cr_assert_null(h_conn_line(&a, JOIN_BOUND), "the channel stays open "
	    "after ^exit");
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND), "the target the client halted was not resumed "
	    "when it left");
	cr_assert_str_eq(h_jstr(h_cli_status(t.id), "state"), "running",
	    "the session itself ended with the client");
	h_conn_close(&a);
	h_conn_close(&t.c);
}

Test(join, twenty_joins_and_leaves_leave_gdbs_fd_count_flat)
{
	struct jt	 t;
	struct h_conn	 a;
	pid_t		 gdb;
	int		 i, before, after;

	jt_native(&t);
	gdb = h_cli_status_pid(t.id, "pid");
	cr_assert_gt(gdb, 0);
	jt_join(&t, &a, "");
	h_conn_close(&a);
	before = jt_fds(gdb);
	for (i = 0; i < 20; i++) {
		jt_join(&t, &a, "");
		jt_send(&a, "9-gdb-version");
		free(jt_until(&a, "9^done", "-gdb-version"));
		h_conn_close(&a);
	}
	after = jt_fds(gdb);
	cr_assert_eq(after, before, "gdb held %d terminals after one join and "
	    "%d after twenty more", before, after);
	h_conn_close(&t.c);
}

Test(join, an_lldb_session_cannot_be_joined)
{
	struct jt	 t;
	char		 params[512], lldb[256];
	json_t		*r;

	if (h_which("lldb", lldb, sizeof(lldb)) == NULL)
		cr_skip_test("lldb is not installed");
	memset(&t, 0, sizeof(t));
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&t.c, H->sock), 0);
	snprintf(params, sizeof(params), "{\"kind\":\"lldb\",\"argv\":[\"%s\"]}",
	    h_ctx_fixture("FIX_LOOP"));
	r = h_conn_call(&t.c, "launch", params, JOIN_BOUND);
	t.id = (long)h_jint(r, "result.id", -1);
	json_decref(r);
	cr_assert_gt(t.id, 0);
	snprintf(params, sizeof(params), "{\"session\":%ld}", t.id);
	r = h_conn_call(&t.c, "mi", params, JOIN_BOUND);
	cr_assert_str_eq(h_jkind(r), "not_supported");
	cr_assert(strstr(h_jstr(r, "error.message"), "lldb") != NULL);
	json_decref(r);
	h_conn_close(&t.c);
}

/* The number of breakpoints exec's -break-list shows. */
static long long
jt_breaks(struct jt *t)
{
	char	 req[256];
	json_t	*r;
	long long n;

	snprintf(req, sizeof(req), "{\"session\":%ld,\"command\":"
	    "\"-break-list\"}", t->id);
	r = h_conn_call(&t->c, "exec", req, JOIN_BOUND);
	n = strtoll(h_jstr(r, "result.results.BreakpointTable.nr_rows") ?
	    h_jstr(r, "result.results.BreakpointTable.nr_rows") : "-1", NULL,
	    10);
	json_decref(r);
	return n;
}

Test(join, a_leave_deletes_every_breakpoint_the_client_made)
{
	struct jt	 t;
	struct h_conn	 a;

	jt_native(&t);
	jt_join(&t, &a, "");
	jt_send(&a, "1-exec-interrupt");
	free(jt_until(&a, "*stopped", "the interrupt"));
	/* loop_tick is hit at once on a resume if it is left behind. */
	jt_send(&a, "2-break-insert main");
	free(jt_until(&a, "2^done", "the first breakpoint"));
	jt_send(&a, "3-break-insert loop_tick");
	free(jt_until(&a, "3^done", "the second breakpoint"));
	cr_assert_eq(jt_breaks(&t), 2);
	h_conn_close(&a);
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND), "the target the client halted was not resumed");
	cr_assert_eq(jt_breaks(&t), 0, "the client's breakpoints outlived it");
	/* Running still, not stopped at a breakpoint left behind. */
	cr_assert_str_eq(h_jstr(h_cli_status(t.id), "target.state"),
	    "running");
	h_conn_close(&t.c);
}

Test(join, answers_in_flight_reach_a_leaving_client_before_its_exit)
{
	struct jt	 t;
	struct h_conn	 a;
	const char	 both[] = "5-data-evaluate-expression 40+2\n6-gdb-exit\n";
	char		*line;

	jt_native(&t);
	jt_join(&t, &a, "");
	cr_assert_eq(h_conn_send(&a, both, strlen(both), JOIN_BOUND), 0);
	line = jt_until(&a, "5^", "the evaluate sent before -gdb-exit");
	cr_assert_str_eq(line, "5^done,value=\"42\"");
	free(line);
	line = jt_until(&a, "6^", "-gdb-exit");
	cr_assert_str_eq(line, "6^exit");
	free(line);
	/* Stdin's end, too, waits for the answer. */
	jt_join(&t, &a, "");
	cr_assert_eq(h_conn_send(&a, "7-data-evaluate-expression 1+2\n", 31,
	    JOIN_BOUND), 0);
	shutdown(a.fd, SHUT_WR);
	line = jt_until(&a, "7^", "the evaluate sent before EOF");
	cr_assert_str_eq(line, "7^done,value=\"3\"");
	free(line);
	cr_assert_null(h_conn_line(&a, JOIN_BOUND), "the channel stays open "
	    "after the client's EOF");
	h_conn_close(&a);
	h_conn_close(&t.c);
}

/*
 * The next line from the client's channel that is not an async or stream
 * record (gdb's own notifications, a library the program loaded, may
 * come between any two); NULL at the bound.
 */
static char *
jt_next_answer(struct h_conn *a)
{
	char *line;

	while ((line = h_conn_line(a, JOIN_BOUND)) != NULL &&
	    strchr("=*~&@", line[0]) != NULL && line[0] != '\0')
		free(line);
	return line;
}

/*
 * Commands sent at once are answered in order, each answer followed by
 * its prompt and nothing lost, however gdb's lines fall into reads: the
 * daemon holds a read's lines for a client and sends them together.
 */
Test(join, pipelined_commands_get_each_answer_then_its_prompt_in_order)
{
	struct jt	 t;
	struct h_conn	 a;
	char		 all[64 * 48], want[64], *line;
	size_t		 len = 0;
	int		 i;

	jt_native(&t);
	jt_join(&t, &a, "");
	for (i = 1; i <= 64; i++)
		len += snprintf(all + len, sizeof all - len,
		    "%d-data-evaluate-expression %d+1\n", i, i);
	cr_assert_eq(h_conn_send(&a, all, len, JOIN_BOUND), 0);
	for (i = 1; i <= 64; i++) {
		snprintf(want, sizeof want, "%d^done,value=\"%d\"", i, i + 1);
		line = jt_next_answer(&a);
		cr_assert_not_null(line, "no answer %d within %d ms", i,
		    JOIN_BOUND);
		cr_assert_str_eq(line, want, "answer %d: got \"%s\"", i,
		    line);
		free(line);
		line = jt_next_answer(&a);
		cr_assert_not_null(line, "no prompt after answer %d", i);
		cr_assert_str_eq(line, "(gdb) ", "after answer %d", i);
		free(line);
	}
	h_conn_close(&a);
	h_conn_close(&t.c);
}

Test(join, the_sessions_fault_breaks_stay)
{
	struct jt	 t;
	struct h_conn	 a;
	json_t		*st;
	const char	*num;
	char		 cmd[64], *line;

	jt_native_with(&t, ",\"fault_breaks\":[\"abort\"]");
	st = h_cli_status(t.id);
	num = json_string_value(json_array_get(h_jpath(st,
	    "fault_breaks.numbers"), 0));
	cr_assert_not_null(num, "no fault break number in %s",
	    json_dumps(st, JSON_COMPACT));
	jt_join(&t, &a, "");
	snprintf(cmd, sizeof(cmd), "4-break-delete %s", num);
	jt_send(&a, cmd);
	line = jt_until(&a, "4^", "deleting the fault break");
	cr_assert(strstr(line, "^error") != NULL && strstr(line,
	    "fault break") != NULL, "got %s", line);
	free(line);
	jt_send(&a, "5-interpreter-exec console \"delete\"");
	line = jt_until(&a, "5^", "delete with no numbers");
	cr_assert(strstr(line, "^error") != NULL, "got %s", line);
	free(line);
	json_decref(st);
	st = h_cli_status(t.id);
	cr_assert(json_is_true(h_jpath(st, "fault_breaks.armed")),
	    "fault triage was disarmed: %s", json_dumps(st, JSON_COMPACT));
	json_decref(st);
	h_conn_close(&a);
	h_conn_close(&t.c);
}

/*
 * A remote target that runs answers neither -list-thread-groups nor
 * -thread-info: the seed of a client joining the running QEMU board is
 * told from what the daemon heard, so the client knows the target runs
 * and which thread it has, and its interrupt and continue work.
 */
Test(join, a_running_board_is_seeded_from_what_the_daemon_heard)
{
	const char	*fw = h_board_firmware("FIX_BOARD");
	struct jt	 t;
	struct h_conn	 m;
	char		 params[1024], req[256], *line;
	bool		 thread = false, running = false;
	json_t		*r;

	memset(&t, 0, sizeof(t));
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&t.c, H->sock), 0);
	snprintf(params, sizeof(params), "{\"kind\":\"qemu\",\"machine\":"
	    "\"lm3s6965evb\",\"argv\":[\"%s\"]}", fw);
	r = h_conn_call(&t.c, "launch", params, JOIN_BOUND);
	t.id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(t.id, 0, "launch %s: %s", params, json_dumps(r,
	    JSON_COMPACT));
	json_decref(r);
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND), "the board never ran");

	cr_assert_eq(h_conn_open(&m, H->sock), 0);
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"mi\",\"params\":{\"session\":%ld,\"mi\":\"mi2\"}}\n", t.id);
	cr_assert_eq(h_conn_send(&m, req, strlen(req), JOIN_BOUND), 0);
	r = h_conn_recv(&m, JOIN_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.raw")), "mi: %s",
	    json_dumps(r, JSON_COMPACT));
	json_decref(r);
	line = jt_until(&m, "=thread-group-started", "the seed");
	cr_assert_str_eq(line, "=thread-group-started,id=\"i1\",pid=\"1\"",
	    "QEMU's one process");
	free(line);
	for (;;) {
		line = jt_until(&m, "", "the seed");
		if (strncmp(line, "(gdb)", 5) == 0)
			break;
		thread = thread || strcmp(line, "=thread-created,id=\"1\","
		    "group-id=\"i1\"") == 0;
		running = running || strcmp(line, "*running,thread-id=\"all\"")
		    == 0;
		free(line);
	}
	free(line);
	cr_assert(thread, "the seed named no thread 1 of i1");
	cr_assert(running, "the seed did not say the board runs");

	jt_send(&m, "7-exec-interrupt");
	free(jt_until(&m, "7^done", "the interrupt's answer"));
	line = jt_until(&m, "*stopped", "the interrupt's stop");
	cr_assert_not_null(strstr(line, "thread-id=\"1\""), "%s", line);
	free(line);
	jt_send(&m, "8-exec-continue");
	free(jt_until(&m, "8^running", "the continue's answer"));
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND), "the board did not run again");
	h_conn_close(&m);
	json_decref(h_conn_call(&t.c, "stop", "{}", JOIN_BOUND));
	h_conn_close(&t.c);
}

/* Send line on m and read its answer (line starts with tok): malloc'd. */
static char *
jt_ask(struct h_conn *m, const char *tok, const char *line)
{
	jt_send(m, line);
	return jt_until(m, tok, line);
}

/* The answer to line is a refusal whose reason has why in it. */
static void
jt_refused(struct h_conn *m, const char *line, const char *why)
{
	char *got = jt_ask(m, "9^", line);

	cr_assert(strncmp(got, "9^error,msg=\"", 13) == 0 && strstr(got, why)
	    != NULL, "%s: got %s, not a refusal naming \"%s\"", line, got, why);
	free(got);
}

/* The session, its gdb and its program run on, the target not halted. */
static void
jt_unharmed(struct jt *t, pid_t gdb)
{
	json_t *st = h_cli_status(t->id);

	cr_assert_str_eq(h_jstr(st, "state"), "running", "the session: %s",
	    json_dumps(st, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "target.state"), "running",
	    "the target: %s", json_dumps(st, JSON_COMPACT));
	cr_assert_eq(kill(gdb, 0), 0, "gdb %d is gone", (int)gdb);
	json_decref(st);
}

/* Run an MI command of the owner's (exec); its result's value, or NULL. */
static char *
jt_exec(struct jt *t, const char *cmd)
{
	char	 req[256];
	json_t	*r;
	char	*v;

	snprintf(req, sizeof(req), "{\"session\":%ld,\"command\":\"%s\"}",
	    t->id, cmd);
	r = h_conn_call(&t->c, "exec", req, JOIN_BOUND);
	v = h_jstr(r, "result.results.value") != NULL ?
	    strdup(h_jstr(r, "result.results.value")) : NULL;
	json_decref(r);
	return v;
}

Test(join, nested_commands_and_code_of_a_client_are_refused_the_session_runs)
{
	struct jt	 t;
	struct h_conn	 a, full;
	pid_t		 gdb;
	char		*line;

	jt_native(&t);
	gdb = h_cli_status_pid(t.id, "pid");
	jt_join(&t, &a, "");
	/* gdb 13.1 dies of this one from a second UI. */
	jt_refused(&a, "9-interpreter-exec mi \"-target-detach\"", "detach");
	jt_refused(&a, "9-interpreter-exec console \"interpreter-exec mi "
	    "\\\"-target-detach\\\"\"", "detach");
	jt_refused(&a, "9-interpreter-exec console \"p 1\" \"kill\"",
	    "killing");
	jt_refused(&a, "9python gdb.execute(\"kill\")", "full control");
	jt_refused(&a, "9pyt gdb.execute(\"kill\")", "full control");
	jt_refused(&a, "9-interpreter-exec console \"python "
	    "gdb.execute('kill')\"", "full control");
	jt_refused(&a, "9thread apply all kill", "killing");
	jt_refused(&a, "9shell true", "full control");
	jt_refused(&a, "9-break-commands 1 \"kill\"", "killing");
	jt_unharmed(&t, gdb);
	/* Full control runs code in gdb, and still keeps the session. */
	jt_join(&t, &full, ",\"full\":true");
	line = jt_ask(&full, "~\"42", "7python print(6*7)");
	free(line);
	free(jt_until(&full, "7^done", "python's answer"));
	jt_refused(&full, "9-interpreter-exec mi \"-target-detach\"",
	    "detach");
	jt_unharmed(&t, gdb);
	h_conn_close(&a);
	h_conn_close(&full);
	h_conn_close(&t.c);
}

Test(join, an_observer_changes_no_variable_and_halts_nothing)
{
	struct jt	 t;
	struct h_conn	 o;
	pid_t		 gdb;
	char		*before, *after, *line;

	jt_native(&t);
	gdb = h_cli_status_pid(t.id, "pid");
	jt_join(&t, &o, ",\"observe\":true");
	jt_refused(&o, "9-interpreter-exec mi \"-exec-interrupt\"",
	    "observer");
	jt_send(&o, "-dbgctl-interrupt");
	line = jt_until(&o, "^", "-dbgctl-interrupt");
	cr_assert(strncmp(line, "^error,msg=\"", 12) == 0 &&
	    strstr(line, "observer") != NULL, "-dbgctl-interrupt: %s", line);
	free(line);
	jt_unharmed(&t, gdb);
	/* Halted by the owner, it keeps its values. */
	free(jt_exec(&t, "-exec-interrupt"));
	cr_assert(h_cli_wait_status(t.id, "target.state", "stopped",
	    H_WAIT_BOUND), "the owner's interrupt");
	before = jt_exec(&t, "-data-evaluate-expression ticks");
	cr_assert_not_null(before);
	jt_refused(&o, "9-data-evaluate-expression ticks=-1000000",
	    "observer");
	jt_refused(&o, "9-data-evaluate-expression ticks++", "observer");
	jt_refused(&o, "9-data-evaluate-expression loop_tick()", "observer");
	jt_refused(&o, "9-interpreter-exec mi \"-data-evaluate-expression "
	    "ticks=0\"", "observer");
	jt_refused(&o, "9-var-create - * ticks=0", "observer");
	line = jt_ask(&o, "8^", "8-data-evaluate-expression ticks");
	cr_assert(strstr(line, before) != NULL, "an observer reads: %s",
	    line);
	free(line);
	after = jt_exec(&t, "-data-evaluate-expression ticks");
	cr_assert_str_eq(after, before, "ticks changed under an observer");
	free(before);
	free(after);
	free(jt_exec(&t, "-exec-continue"));
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND));
	jt_unharmed(&t, gdb);
	h_conn_close(&o);
	h_conn_close(&t.c);
}

/* Ask to join on a new connection m; the reply (m stays open). */
static json_t *
jt_try_join(struct jt *t, struct h_conn *m)
{
	char req[256];

	cr_assert_eq(h_conn_open(m, H->sock), 0);
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"mi\",\"params\":{\"session\":%ld}}\n", t->id);
	cr_assert_eq(h_conn_send(m, req, strlen(req), JOIN_BOUND), 0);
	return h_conn_recv(m, JOIN_BOUND);
}

Test(join, joiners_past_the_cap_are_refused_and_a_leave_makes_room)
{
	struct jt	 t;
	struct h_conn	 a, b, c;
	double		 end;
	json_t		*r;

	h_ctx_env_add("DBGCTLD_JOINS_MAX=2");
	jt_native(&t);
	jt_join(&t, &a, "");
	jt_join(&t, &b, "");
	r = jt_try_join(&t, &c);
	cr_assert_str_eq(h_jkind(r), "limit", "a third joiner: %s",
	    json_dumps(r, JSON_COMPACT));
	cr_assert(strstr(h_jstr(r, "error.message"), "DBGCTLD_JOINS_MAX") !=
	    NULL);
	json_decref(r);
	h_conn_close(&c);
	/* a leaves; its channel is the next joiner's, soon. */
	h_conn_close(&a);
	end = h_now() + JOIN_BOUND / 1000.0;
	for (;;) {
		r = jt_try_join(&t, &c);
		if (json_is_true(h_jpath(r, "result.raw")))
			break;
		cr_assert_str_eq(h_jkind(r), "limit", "%s", json_dumps(r,
		    JSON_COMPACT));
		cr_assert(h_now() < end, "a's channel was not given back");
		json_decref(r);
		h_conn_close(&c);
	}
	json_decref(r);
	h_conn_close(&b);
	h_conn_close(&c);
	h_conn_close(&t.c);
}

/* Whether fd reaches its end within the bound, reading what comes first. */
static bool
jt_fd_ends(int fd)
{
	double	end = h_now() + JOIN_BOUND / 1000.0;
	char	buf[4096];
	ssize_t	n;

	while (h_now() < end) {
		poll(&(struct pollfd){ fd, POLLIN, 0 }, 1, 100);
		if ((n = read(fd, buf, sizeof(buf))) == 0)
			return true;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return false;
	}
	return false;
}

/*
 * Join with fds passed beside the request and stdio asked; the reply's
 * stdio is returned, the connection in m.
 */
static bool
jt_join_stdio(struct jt *t, struct h_conn *m, const int fds[2])
{
	char	 req[512];
	json_t	*r;
	bool	 stdio;

	cr_assert_eq(h_conn_open(m, H->sock), 0);
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"mi\",\"params\":{\"session\":%ld,\"stdio\":true}}\n", t->id);
	h_conn_send_fds(m->fd, req, fds, 2);
	r = h_conn_recv(m, JOIN_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.raw")), "mi with stdio: "
	    "got %s", r != NULL ? json_dumps(r, JSON_COMPACT) : "nothing");
	stdio = json_is_true(h_jpath(r, "result.stdio"));
	json_decref(r);
	return stdio;
}

/*
 * Pipes passed as stdin and stdout with the join (stdio) are the daemon's:
 * the seed and answers come on the one, commands go in on the other, the
 * socket carries the client's interrupts, and anything else on it ends
 * the join: the daemon closes the socket and both pipes, and resumes the
 * target the client halted.
 */
Test(join, stdio_passed_with_the_join_is_served_by_the_daemon)
{
	static const char eval[] = "5-data-evaluate-expression 2+3\n";
	static const char intr[] = "-dbgctl-interrupt\n";
	struct jt	 t;
	struct h_conn	 m;
	struct h_bytes	 out = { NULL, 0 };
	int		 in[2], op[2], fds[2];
	size_t		 at;

	jt_native(&t);
	cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(op, O_CLOEXEC | O_NONBLOCK), 0);
	fds[0] = in[0];
	fds[1] = op[1];
	cr_assert(jt_join_stdio(&t, &m, fds), "pipes were not taken");
	close(in[0]);
	close(op[1]);
	at = h_run_fd_until(op[0], &out, 0, "(gdb) \n", JOIN_BOUND);
	cr_assert_neq(at, 0, "no seed on the stdout pipe: %s",
	    h_shown(out.p, out.len, 2000));
	cr_assert(strstr(out.p, "=thread-group-started") != NULL, "the seed "
	    "has no thread group: %s", out.p);
	cr_assert_eq(write(in[1], eval, strlen(eval)), (ssize_t)strlen(eval));
	at = h_run_fd_until(op[0], &out, at, "5^done,value=\"5\"\n", JOIN_BOUND);
	cr_assert_neq(at, 0, "no answer on the stdout pipe: %s",
	    h_shown(out.p, out.len, 2000));
	cr_assert_eq(h_conn_send(&m, intr, strlen(intr), JOIN_BOUND), 0);
	at = h_run_fd_until(op[0], &out, at, "*stopped,", JOIN_BOUND);
	cr_assert_neq(at, 0, "the socket's interrupt stopped nothing: %s",
	    h_shown(out.p, out.len, 2000));
	cr_assert(h_cli_wait_status(t.id, "target.state", "stopped",
	    H_WAIT_BOUND), "the target is not stopped after the interrupt");
	cr_assert_eq(h_conn_send(&m, "ping\n", 5, JOIN_BOUND), 0);
	cr_assert(jt_fd_ends(op[0]), "the stdout pipe stays open after the "
	    "socket carried more than interrupts");
	cr_assert_null(h_conn_line(&m, JOIN_BOUND), "the socket stays open");
	cr_assert(m.eof, "the socket did not end");
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND), "the target the client halted was not resumed");
	h_conn_close(&m);
	close(in[1]);
	close(op[0]);
	free(out.p);
	h_conn_close(&t.c);
}

/*
 * stdio passed as what the daemon cannot serve (a terminal, a device) is
 * let go of, and the join goes on the socket, as for a bridging client.
 */
Test(join, stdio_the_daemon_cannot_serve_is_joined_on_the_socket)
{
	struct jt	 t;
	struct h_conn	 m;
	char		*line;
	int		 fds[2];

	jt_native(&t);
	fds[0] = fds[1] = open("/dev/null", O_RDWR | O_CLOEXEC);
	cr_assert_geq(fds[0], 0);
	cr_assert(!jt_join_stdio(&t, &m, fds), "/dev/null was taken as stdio");
	close(fds[0]);
	line = jt_until(&m, "(gdb)", "the seed on the socket");
	free(line);
	jt_send(&m, "6-data-evaluate-expression 3+4");
	line = jt_until(&m, "6^", "an answer on the socket");
	cr_assert_str_eq(line, "6^done,value=\"7\"");
	free(line);
	h_conn_close(&m);
	h_conn_close(&t.c);
}
