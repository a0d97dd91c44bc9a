/*
 * exec: debugger commands over gdb's MI with structured results, and the
 * target's run/stop state as status and notifications. Real gdb against
 * the echo and spinner fixtures, each test on its own daemon.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(exec, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 90);

/* Launch gdb on a fixture (not run); the id, also as a string in ids. */
static long
launch_gdb(const char *fixture, char *ids, size_t len)
{
	long id = h_cli_launch(H_ARGS("--", h_ctx_fixture(fixture)));

	h_idstr(id, ids, len);
	return id;
}

/* Run dbgctl exec [opts] ID -- words; the result in r. */
static int
exec_cmd(struct h_res *r, const char *ids, const char *const words[])
{
	const char *v[32] = { "exec", ids, "--" };
	size_t i = 3, k;

	for (k = 0; words[k] != NULL && i < 31; k++)
		v[i++] = words[k];
	v[i] = NULL;
	return h_cli(r, v);
}

/* A console command's output comes back from exec and is not in the log. */
Test(exec, console_output_comes_back_and_stays_off_the_console)
{
	char ids[32], *log;
	struct h_res r;

	launch_gdb("FIX_ECHO", ids, sizeof ids);
	exec_cmd(&r, ids, H_ARGS("print", "123457*2"));
	cr_assert_eq(r.code, 0, "exec print: exit %d, stderr %s", r.code,
	    r.err);
	cr_assert_not_null(strstr(r.out, "= 246914"), "exec print: expected "
	    "\"$N = 246914\", got \"%s\"", r.out);
	h_run_free(&r);
	log = h_cli_logs(ids);
	cr_assert_null(strstr(log, "246914"), "the console log shows exec's "
	    "output:\n%s", h_shown(log, strlen(log), 400));
	free(log);
}

/* An MI command's result is JSON: -break-insert main names main. */
Test(exec, break_insert_main_is_json)
{
	char ids[32];
	json_t *r;

	launch_gdb("FIX_ECHO", ids, sizeof ids);
	r = h_cli_json(H_ARGS("exec", ids, "--", "-break-insert", "main"));
	cr_assert_str_eq(h_jstr(r, "class") ? h_jstr(r, "class") : "", "done");
	cr_assert_str_eq(h_jstr(r, "results.bkpt.func") ?
	    h_jstr(r, "results.bkpt.func") : "", "main",
	    "bkpt.func in %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
}

/* An unknown MI command exits 1 with gdb's own message. */
Test(exec, unknown_mi_command_is_gdbs_error)
{
	char ids[32];
	struct h_res r;

	launch_gdb("FIX_ECHO", ids, sizeof ids);
	exec_cmd(&r, ids, H_ARGS("-no-such-command"));
	cr_assert_eq(r.code, 1, "exit %d (stderr %s)", r.code, r.err);
	cr_assert_not_null(strstr(r.err, "Undefined MI command"), "stderr: "
	    "expected gdb's message, got \"%s\"", r.err);
	h_run_free(&r);
}

/*
 * An exec that times out exits 4; gdb's late answer to it is dropped, so
 * the next console and MI commands get their own answers.
 */
Test(exec, a_timed_out_exec_leaves_the_next_their_answers)
{
	char ids[32];
	struct h_res r;
	json_t *j;

	launch_gdb("FIX_ECHO", ids, sizeof ids);
	h_cli(&r, H_ARGS("exec", "--timeout", "200", ids, "--", "shell",
	    "sleep", "1"));
	cr_assert_eq(r.code, 4, "exec of a slow command: exit %d (stderr %s)",
	    r.code, r.err);
	h_run_free(&r);
	exec_cmd(&r, ids, H_ARGS("print", "6*7"));
	cr_assert_eq(r.code, 0, "exec after a timeout: exit %d (%s)", r.code,
	    r.err);
	cr_assert_not_null(strstr(r.out, "= 42"), "exec after a timeout: got "
	    "\"%s\"", r.out);
	h_run_free(&r);
	j = h_cli_json(H_ARGS("exec", ids, "--",
	    "-data-evaluate-expression", "40+2"));
	cr_assert_str_eq(h_jstr(j, "results.value") ?
	    h_jstr(j, "results.value") : "", "42", "%s",
	    json_dumps(j, JSON_COMPACT));
	json_decref(j);
}


/*
 * -exec-interrupt stops a spinning target: status says stopped, a
 * subscriber gets session.target, and status prints it for a person.
 */
Test(exec, interrupt_stops_the_target_and_says_so)
{
	struct h_conn c;
	char ids[32], line[128];
	struct h_res r;
	json_t *st;
	long id;

	id = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_SPINNER")));
	h_idstr(id, ids, sizeof ids);
	h_cli_wait_log(ids, "spinning", H_WAIT_BOUND);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "target.state") ? h_jstr(st,
	    "target.state") : "", "running", "a spinning target");
	json_decref(st);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(line, sizeof line, "{\"session\":%ld,\"output\":false}", id);
	json_decref(h_conn_call(&c, "subscribe", line, 10000));
	exec_cmd(&r, ids, H_ARGS("-exec-interrupt"));
	cr_assert_eq(r.code, 0, "-exec-interrupt: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	cr_assert(h_cli_wait_status(id, "target.state", "stopped", H_WAIT_BOUND),
	    "status never said the target stopped");
	cr_assert(h_conn_wait_note(&c, "session.target", "params.target.state",
	    "stopped", H_WAIT_BOUND), "no session.target notification said "
	    "stopped");
	h_conn_close(&c);
	h_cli(&r, H_ARGS("status", ids));
	cr_assert_not_null(strstr(r.out, "target: stopped"), "status text: %s",
	    r.out);
	h_run_free(&r);
}

/*
 * A person attached to the console sees nothing of a script's exec: what
 * the attached terminal shows after the exec holds none of its output.
 */
Test(exec, an_attached_console_sees_nothing_of_exec)
{
	struct h_pty p;
	char ids[32];
	struct h_res r;
	size_t at;

	launch_gdb("FIX_ECHO", ids, sizeof ids);
	h_pty_open(&p, 24, 80);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	h_pty_expect_raw(&p, H_WAIT_BOUND, "attach");
	h_pty_type(&p, "echo before\\n\n", 14);
	at = h_pty_expect(&p, 0, "before", H_WAIT_BOUND);
	exec_cmd(&r, ids, H_ARGS("print", "987654+1"));
	cr_assert_not_null(strstr(r.out, "987655"), "exec: got \"%s\"", r.out);
	h_run_free(&r);
	h_pty_type(&p, "echo after\\n\n", 13);
	h_pty_expect(&p, at, "after", H_WAIT_BOUND);
	cr_assert_null(strstr(p.seen.p, "987655"), "the attached console "
	    "shows exec's output: %s", h_pty_screen(&p));
	h_pty_close(&p);
}

/* An exec session takes no debugger commands. */
Test(exec, an_exec_session_is_not_supported)
{
	char ids[32];
	struct h_res r;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "30"));
	h_idstr(id, ids, sizeof ids);
	exec_cmd(&r, ids, H_ARGS("info", "frame"));
	cr_assert_eq(r.code, 1, "exit %d", r.code);
	cr_assert_not_null(strstr(r.err, "takes no debugger commands"),
	    "stderr: %s", r.err);
	h_run_free(&r);
}


/*
 * A native program that dies of SIGSEGV in a named function: the fault
 * record names the signal, that frame and the pc register; a subscriber
 * hears session.fault; status text and the log say so; with --core, a core
 * file is saved; the target is left stopped.
 */
Test(exec, a_segfault_gives_a_fault_record)
{
	struct h_conn c;
	char ids[32], *log;
	struct h_res r;
	json_t *st, *f;
	const char *core;
	long id;

	json_decref(h_cli_json(H_ARGS("version")));	/* starts the daemon */
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	json_decref(h_conn_call(&c, "subscribe", "{\"output\":false}", 10000));
	id = h_cli_launch(H_ARGS("--core", "-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "fault", NULL, H_WAIT_BOUND), "no fault record "
	    "in status %s", ids);
	st = h_cli_status(id);
	f = json_object_get(st, "fault");
	cr_assert_str_eq(h_jstr(f, "signal") ? h_jstr(f, "signal") : "",
	    "SIGSEGV", "%s", json_dumps(f, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(json_array_get(json_object_get(f, "frames"),
	    0), "func") ? h_jstr(json_array_get(json_object_get(f, "frames"),
	    0), "func") : "", "crash_here", "frame 0");
	cr_assert(h_jstr(f, "registers.rip") != NULL || h_jstr(f,
	    "registers.pc") != NULL, "no pc register in the record");
	core = h_jstr(f, "core");
	cr_assert_not_null(core, "--core: no core in the record");
	cr_assert_eq(access(core, R_OK), 0, "core file %s: %s", core,
	    strerror(errno));
	cr_assert_str_eq(h_jstr(st, "target.state"), "stopped");
	json_decref(st);
	cr_assert(h_conn_wait_note(&c, "session.fault", "params.fault.signal",
	    "SIGSEGV", H_WAIT_BOUND), "no session.fault notification");
	h_conn_close(&c);
	h_cli(&r, H_ARGS("status", ids));
	cr_assert(strstr(r.out, "fault: SIGSEGV") != NULL &&
	    strstr(r.out, "crash_here") != NULL, "status text: %s", r.out);
	h_run_free(&r);
	log = h_cli_logs(ids);
	cr_assert_not_null(strstr(log, "[dbgctl] fault: SIGSEGV"), "log:\n%s",
	    h_shown(log, strlen(log), 600));
	free(log);
}

/* Launch lldb on a fixture and wait until its exec answers; its id in ids. */
static void
lldb_ready(const char *fixture, char *ids, size_t len)
{
	long id = h_cli_launch(H_ARGS("--kind", "lldb", "--",
	    h_ctx_fixture(fixture)));

	h_idstr(id, ids, len);
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND),
	    "lldb exec of session %s never answered \"version\"", ids);
}

/*
 * lldb has no machine interface: exec types the command on its console and
 * answers what lldb prints up to its next prompt; with a person attached,
 * exec is refused so that nothing is typed among their keys.
 */
Test(exec, lldb_exec_types_on_the_console_unless_attached)
{
	struct h_pty p;
	char ids[32];
	struct h_res r;

	lldb_ready("FIX_ECHO", ids, sizeof ids);
	exec_cmd(&r, ids, H_ARGS("breakpoint", "set", "-n", "main"));
	cr_assert_eq(r.code, 0, "exit %d (%s)", r.code, r.err);
	cr_assert(strncmp(r.out, "Breakpoint 1:", 13) == 0, "the answer is "
	    "what lldb printed, without the command or the prompt: \"%s\"",
	    r.out);
	h_run_free(&r);
	h_pty_open(&p, 24, 80);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	h_pty_expect_raw(&p, H_WAIT_BOUND, "attach");
	exec_cmd(&r, ids, H_ARGS("version"));
	cr_assert_eq(r.code, 1, "exec with a person attached: exit %d",
	    r.code);
	cr_assert_not_null(strstr(r.err, "attached"), "stderr: %s", r.err);
	h_run_free(&r);
	h_pty_close(&p);
}

/*
 * Console commands that run the target go to the background, so gdb's MI
 * is still read: after "continue", -exec-interrupt stops the target; after
 * "next", the source line gdb prints at the stop is not the next exec's.
 */
Test(exec, running_commands_leave_mi_free)
{
	char ids[32];
	struct h_res r;
	long id;

	id = h_cli_launch(H_ARGS("-x", "break main", "-x", "run", "--",
	    h_ctx_fixture("FIX_SPINNER")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "target.stop.reason", "breakpoint-hit",
	    H_WAIT_BOUND), "never stopped at main");
	exec_cmd(&r, ids, H_ARGS("next"));
	cr_assert_eq(r.code, 0, "next: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	cr_assert(h_cli_wait_status(id, "target.stop.reason",
	    "end-stepping-range", H_WAIT_BOUND), "next never stopped");
	exec_cmd(&r, ids, H_ARGS("print", "40+2"));
	cr_assert_eq(r.code, 0, "print: exit %d (%s)", r.code, r.err);
	cr_assert(strncmp(r.out, "$", 1) == 0 && strstr(r.out, "= 42\n") !=
	    NULL && strchr(r.out, '\n') == r.out + strlen(r.out) - 1,
	    "print's answer is one line of its own: \"%s\"", r.out);
	h_run_free(&r);
	exec_cmd(&r, ids, H_ARGS("continue"));
	cr_assert_eq(r.code, 0, "continue: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "continue never ran the target");
	exec_cmd(&r, ids, H_ARGS("-exec-interrupt"));
	cr_assert_eq(r.code, 0, "-exec-interrupt after continue: exit %d (%s)",
	    r.code, r.err);
	h_run_free(&r);
	cr_assert(h_cli_wait_status(id, "target.stop.signal", "SIGINT",
	    H_WAIT_BOUND), "the interrupt never stopped the target");
}

/* A target that ends is "exited", not "stopped", even after its last *stopped. */
Test(exec, an_ended_target_is_exited)
{
	long id;

	id = h_cli_launch(H_ARGS("-x", "run", "--", "/bin/true"));
	cr_assert(h_cli_wait_status(id, "target.state", "exited",
	    H_WAIT_BOUND), "the target of /bin/true never became exited");
	cr_assert(h_cli_wait_status(id, "target.reason", "exited-normally",
	    H_WAIT_BOUND), "exited, but not normally");
}

/* A fault break on an unknown symbol asks nothing: the fault still comes. */
Test(exec, an_unknown_fault_break_does_not_hang_gdb)
{
	long id;

	id = h_cli_launch(H_ARGS("--fault-break", "no_such_function", "-x",
	    "run", "--", h_ctx_fixture("FIX_FAULT")));
	cr_assert(h_cli_wait_status(id, "fault.signal", "SIGSEGV",
	    H_WAIT_BOUND), "no fault record: gdb waits on a question?");
}

/*
 * lldb's prompt must end what it printed: a prompt inside the output is
 * kept, and while lldb runs a process (no prompt) exec is refused.
 */
Test(exec, lldb_exec_waits_for_the_prompt)
{
	char ids[32];
	struct h_res r;

	lldb_ready("FIX_SPINNER", ids, sizeof ids);
	exec_cmd(&r, ids, H_ARGS("settings", "show", "prompt"));
	cr_assert_eq(r.code, 0, "exit %d (%s)", r.code, r.err);
	cr_assert_not_null(strstr(r.out, "(lldb) \""), "the prompt setting "
	    "was cut: \"%s\"", r.out);
	h_run_free(&r);
	h_cli(&r, H_ARGS("exec", "--timeout", "1000", ids, "--", "process",
	    "launch"));
	cr_assert_eq(r.code, 4, "process launch shows no prompt: exit %d (%s)",
	    r.code, r.err);
	h_run_free(&r);
	exec_cmd(&r, ids, H_ARGS("version"));
	cr_assert_eq(r.code, 1, "exec while lldb runs a process: exit %d",
	    r.code);
	cr_assert_not_null(strstr(r.err, "not at its prompt"), "%s", r.err);
	h_run_free(&r);
}

/*
 * dbgctl pipe moves bytes whole however its stdin and stdout are made:
 * pipes (which it splices) and files (which it reads and writes), 4 MiB
 * of every byte value through a cat target each way.
 */
Test(exec, pipe_moves_every_byte_by_splice_and_by_copy)
{
	static const char *const ways[] = {
		"cat \"$1\" | \"$0\" -s \"$2\" pipe \"$3\" | cat >\"$4\"",
		"\"$0\" -s \"$2\" pipe \"$3\" <\"$1\" >\"$4\"",
		"cat \"$1\" | \"$0\" -s \"$2\" pipe \"$3\" >\"$4\"",
		"\"$0\" -s \"$2\" pipe \"$3\" <\"$1\" | cat >\"$4\"",
	};
	enum { N = 4 * 1024 * 1024 };
	char		 in[PATH_MAX], out[PATH_MAX], ids[32], *data, *got;
	size_t		 i, len;
	struct h_res	 r;
	FILE		*f;
	long		 id;

	h_ctx_path(in, sizeof in, "in.bin");
	h_ctx_path(out, sizeof out, "out.bin");
	data = malloc(N);
	for (i = 0; i < N; i++)
		data[i] = (char)(i * 7 + i / 251);
	f = fopen(in, "w");
	cr_assert_not_null(f, "create %s", in);
	cr_assert_eq(fwrite(data, 1, N, f), N, "write %s", in);
	fclose(f);
	for (i = 0; i < sizeof ways / sizeof ways[0]; i++) {
		id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
		    "cat"));
		h_idstr(id, ids, sizeof ids);
		h_run(&r, 60000, H_ARGS("/bin/sh", "-c", ways[i], H->dbgctl, in,
		    H->sock, ids, out));
		cr_assert_eq(r.code, 0, "%s: exit %d (%s)", ways[i], r.code,
		    r.err);
		h_run_free(&r);
		got = h_read_file(out, &len);
		cr_assert_not_null(got, "read %s", out);
		cr_assert_eq(len, N, "%s: %zu bytes came back of %d", ways[i],
		    len, N);
		cr_assert(memcmp(got, data, N) == 0, "%s: the bytes differ",
		    ways[i]);
		free(got);
		h_cli_expect_exit(id, 0, 10000, ways[i]);
	}
	free(data);
}

/*
 * One MI record over 1 MiB (gdb prints 2.2 MB as one console record) is
 * that command's alone: its output comes back cut at 512 KiB with the mark,
 * and the commands queued behind it from another connection get their own
 * answers, not "longer than 1 MiB".
 */
Test(exec, an_overlong_record_is_cut_for_its_own_command)
{
	static const char big[] = "{\"jsonrpc\":\"2.0\",\"id\":1000,"
	    "\"method\":\"exec\",\"params\":{\"session\":%ld,\"timeout\":"
	    "80000,\"command\":\"python print('x'*2200000)\"}}\n";
	const char *mark = "\n[output cut]\n", *out;
	struct h_conn a, b;
	char line[512], params[256];
	json_t *j;
	double t0;
	size_t n;
	long id;
	int i;

	id = launch_gdb("FIX_ECHO", line, sizeof line);
	cr_assert_eq(h_conn_open(&a, H->sock), 0, "connect");
	cr_assert_eq(h_conn_open(&b, H->sock), 0, "connect");
	n = (size_t)snprintf(line, sizeof line, big, id);
	cr_assert_eq(h_conn_send(&a, line, n, 10000), 0, "send the big exec");
	/* Answered in order: once ping is, the big command is gdb's. */
	j = h_conn_call(&a, "ping", NULL, 10000);
	cr_assert_not_null(j, "no pong");
	json_decref(j);
	snprintf(params, sizeof params, "{\"session\":%ld,\"timeout\":80000,"
	    "\"command\":\"-data-evaluate-expression 1+1\"}", id);
	for (i = 0; i < 3; i++) {
		t0 = h_now();
		j = h_conn_call(&b, "exec", params, 80000);
		cr_assert_not_null(j, "eval %d: no answer", i);
		cr_assert_str_eq(h_jstr(j, "result.results.value") ?
		    h_jstr(j, "result.results.value") : "", "2", "eval %d after "
		    "the long record: %s", i, json_dumps(j, JSON_COMPACT));
		json_decref(j);
		h_note("eval %d answered in %.2f s", i, h_now() - t0);
	}
	j = h_conn_recv(&a, 80000);
	cr_assert_not_null(j, "the big exec was never answered");
	cr_assert_eq(h_jint(j, "id", 0), 1000, "not the big exec's reply");
	out = h_jstr(j, "result.output");
	cr_assert_not_null(out, "the big exec: %.300s", json_dumps(j,
	    JSON_COMPACT));
	n = strlen(out);
	cr_assert_eq(n, 512 * 1024 + strlen(mark), "output of %zu bytes", n);
	cr_assert_eq(strspn(out, "x"), 512 * 1024, "512 KiB of the x's");
	cr_assert_str_eq(out + 512 * 1024, mark, "ends with the cut mark");
	json_decref(j);
	h_conn_close(&a);
	h_conn_close(&b);
}

/*
 * Text that says "(lldb) " is not lldb's prompt: a target that prints it
 * and pauses, and a command whose output ends with it, are answered whole,
 * and the next exec is lldb's own at once (not refused as not at its
 * prompt, nor answered with the rest of the last one).
 */
Test(exec, lldb_output_saying_lldb_is_not_its_prompt)
{
	char ids[32];
	struct h_res r;
	long id;

	id = h_cli_launch(H_ARGS("--kind", "lldb", "--", "/bin/sh", "-c",
	    "printf 'x (lldb) '; sleep 1; echo done"));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND),
	    "lldb exec of session %s never answered \"version\"", ids);
	h_cli(&r, H_ARGS("exec", "--timeout", "30000", ids, "--", "process",
	    "launch"));
	cr_assert_eq(r.code, 0, "process launch: exit %d (%s)", r.code, r.err);
	/* lldb may say the process stopped for SIGCHLD between the two. */
	cr_assert(strstr(r.out, "x (lldb) ") != NULL && strstr(r.out,
	    "done\n") != NULL, "the target's output was cut at \"(lldb) \": "
	    "\"%s\"", r.out);
	cr_assert_not_null(strstr(r.out, "exited with status = 0"), "the "
	    "answer ends before the process did: \"%s\"", r.out);
	h_run_free(&r);
	exec_cmd(&r, ids, H_ARGS("version"));
	cr_assert_eq(r.code, 0, "the next exec: exit %d (%s)", r.code, r.err);
	cr_assert(strncmp(r.out, "lldb version", 12) == 0, "the next exec's "
	    "answer is not its own: \"%s\"", r.out);
	h_run_free(&r);
	exec_cmd(&r, ids, H_ARGS("platform", "shell", "printf", "'a (lldb) '"));
	cr_assert_eq(r.code, 0, "platform shell: exit %d (%s)", r.code, r.err);
	cr_assert_str_eq(r.out, "a (lldb) ", "output ending with \"(lldb) \"");
	h_run_free(&r);
	exec_cmd(&r, ids, H_ARGS("version"));
	cr_assert(r.code == 0 && strncmp(r.out, "lldb version", 12) == 0,
	    "the exec after it: exit %d \"%s\" (%s)", r.code, r.out, r.err);
	h_run_free(&r);
}

/*
 * A stop lldb prints on its own, after an exec's prompt came back (with a
 * transport the program's output is not lldb's, so "process continue"
 * answers at once), ends at a prompt editline draws again its own way:
 * exec answers after it, stop after stop; and the exit lldb prints after
 * that prompt, nothing typed (the program killed), ends the program's run.
 */
Test(exec, lldb_exec_answers_after_a_stop_of_its_own)
{
	struct h_bytes b = { calloc(1, 1), 0 };
	char ids[32], stop[32];
	struct h_res r;
	pid_t pid;
	long id;
	int n;

	id = h_cli_launch(H_ARGS("--kind", "lldb", "--transport", "-x",
	    "breakpoint set -n beat_count", "-x", "run", "--",
	    h_ctx_fixture("FIX_BEAT")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND),
	    "lldb exec of session %s never answered \"version\"", ids);
	for (n = 2; n <= 3; n++) {
		exec_cmd(&r, ids, H_ARGS("process", "continue"));
		cr_assert(r.code == 0 && strstr(r.out, "resuming") != NULL,
		    "process continue: exit %d \"%s\" (%s)", r.code, r.out,
		    r.err);
		h_run_free(&r);
		snprintf(stop, sizeof stop, "beat_count(n=%d)", n);
		h_cli_wait_log(ids, stop, H_WAIT_BOUND);
		cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND),
		    "after the stop at %s, lldb exec never answered: not at "
		    "its prompt?", stop);
		exec_cmd(&r, ids, H_ARGS("thread", "backtrace"));
		cr_assert(r.code == 0 && strstr(r.out, stop) != NULL, "thread "
		    "backtrace after the stop at %s: exit %d \"%s\" (%s)", stop,
		    r.code, r.out, r.err);
		h_run_free(&r);
	}
	pid = h_cli_status_pid(id, "inferior_pid");
	cr_assert_gt(pid, 0, "status %s: no inferior_pid", ids);
	exec_cmd(&r, ids, H_ARGS("process", "continue"));
	cr_assert_eq(r.code, 0, "process continue: exit %d (%s)", r.code,
	    r.err);
	h_run_free(&r);
	/* Nothing typed after the stop: lldb's exit line follows its redraw. */
	h_cli_wait_log(ids, "beat_count(n=4)", H_WAIT_BOUND);
	kill(pid, SIGKILL);
	cr_assert_eq(h_cli_recv_until(ids, NULL, &b, H_WAIT_BOUND), 5, "after "
	    "the program was killed at a stop of its own, its output never "
	    "ended (lldb's exit line missed?); got \"%s\"", b.p);
	free(b.p);
}
