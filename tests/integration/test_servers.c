/*
 * Managed servers: ready when one of their processes listens (seen in
 * /proc, never by connecting), on the port given or the one they picked,
 * run without a shell where one is not needed, and failing with the stage
 * they reached and what they printed. Real gdbserver and gdb; real
 * lldb-server and lldb for the lldb-server kind.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(servers, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 90);

/* The port in "Listening on port N" in the session's log; -1 if none. */
static long
listening_port(const char *ids)
{
	char *log = h_cli_logs(ids), *p;
	long port = -1;

	if ((p = strstr(log, "Listening on port ")) != NULL)
		port = strtol(p + 18, NULL, 10);
	free(log);
	return port;
}

/*
 * A server that serves exactly one connection (gdbserver --once) works:
 * the daemon never connects to it, so gdb's connection is its only one.
 */
Test(servers, a_once_server_serves_gdb)
{
	char server[1024], ids[32], *log;
	struct h_bytes b = { calloc(1, 1), 0 };
	long id;

	snprintf(server, sizeof server, "gdbserver --once 127.0.0.1:{port} %s",
	    h_ctx_fixture("FIX_ECHO"));
	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--server", server,
	    "--transport", "-x", "continue", "--", h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_cli_recv_until(ids, "arg0=[", &b, H_WAIT_BOUND), 0,
	    "the target never ran under gdbserver --once: got \"%s\"", b.p);
	free(b.p);
	log = h_cli_logs(ids);
	cr_assert_eq(h_count(log, strlen(log), "Remote debugging from host"),
	    1, "the server saw other connections than gdb's:\n%s",
	    h_shown(log, strlen(log), 800));
	free(log);
}

/*
 * A server that picks its own port (gdbserver HOST:0, no {port}) is seen
 * listening on it: status says the port it printed, and the server ran
 * without a shell (its pid is gdbserver's).
 */
Test(servers, a_port_the_server_picked_is_discovered)
{
	char server[1024], ids[32], comm[64];
	json_t *st;
	long id, port;

	snprintf(server, sizeof server, "gdbserver 127.0.0.1:0 %s",
	    h_ctx_fixture("FIX_ECHO"));
	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--server", server,
	    "--", h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	st = h_cli_status(id);
	port = listening_port(ids);
	cr_assert_gt(port, 0, "gdbserver printed no port");
	cr_assert_eq(h_jint(st, "port", -1), port, "status port %lld, the "
	    "server listens on %ld", h_jint(st, "port", -1), port);
	cr_assert_eq(h_jint(st, "server.port", -1), port, "server.port");
	cr_assert_str_eq(json_string_value(json_array_get(h_jpath(st,
	    "server.argv"), 0)), "gdbserver", "server.argv[0]");
	h_pid_comm((pid_t)h_jint(st, "server_pid", -1), comm, sizeof comm);
	cr_assert_str_eq(comm, "gdbserver", "the server's pid is not "
	    "gdbserver's: a shell in between?");
	cr_assert_str_eq(h_jstr(st, "state"), "running");
	json_decref(st);
}

/* The gdbserver kind without --port lets gdbserver pick, and finds it. */
Test(servers, the_default_server_picks_its_port)
{
	char ids[32];
	long id, port;

	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--",
	    h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	port = listening_port(ids);
	cr_assert_gt(port, 0, "gdbserver printed no port");
	cr_assert_eq(h_cli_status_pid(id, "port"), port, "status port");
}

/* A server that dies first fails the launch with its status and words. */
Test(servers, a_dead_server_fails_with_its_words)
{
	struct h_res r;

	h_cli(&r, H_ARGS("launch", "--kind", "gdbserver", "--server",
	    "sh -c 'echo no board on this bench; exit 3'", "--",
	    h_ctx_fixture("FIX_ECHO")));
	cr_assert_eq(r.code, 1, "exit %d (%s)", r.code, r.err);
	cr_assert(strstr(r.err, "exited with code 3 before the session ran") !=
	    NULL && strstr(r.err, "no board on this bench") != NULL,
	    "stderr: %s", r.err);
	h_run_free(&r);
}

/* A server that never listens fails at the connect timeout, saying so. */
Test(servers, a_server_that_never_listens_times_out)
{
	struct h_res r;

	h_cli(&r, H_ARGS("launch", "--kind", "gdbserver", "--connect-timeout",
	    "300", "--server", "sleep 30", "--", h_ctx_fixture("FIX_ECHO")));
	cr_assert_eq(r.code, 4, "exit %d (%s)", r.code, r.err);
	cr_assert_not_null(strstr(r.err, "did not listen within 300 ms"),
	    "stderr: %s", r.err);
	h_run_free(&r);
}

/* Launch a gdbserver session with server; it must run on the port the server names. */
static void
runs_on_the_named_port(const char *server, const char *what)
{
	char	ids[32];
	long	id, port;

	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--server", server,
	    "--", h_ctx_fixture("FIX_ECHO")));
	h_idstr(id, ids, sizeof ids);
	port = listening_port(ids);
	cr_assert_gt(port, 0, "%s: gdbserver printed no port", what);
	cr_assert_eq(h_cli_status_pid(id, "port"), port, "%s: status port %d, "
	    "gdbserver's %ld", what, (int)h_cli_status_pid(id, "port"), port);
	h_cli_expect_state(id, "running", what);
}

/*
 * A server that listens on more than one port (as OpenOCD does) is
 * connected on the one its output names, and one that its launcher left
 * behind (re-parented to the keeper) is still seen.
 */
Test(servers, the_port_the_server_names_and_a_server_left_behind)
{
	char server[2048];

	snprintf(server, sizeof server, "sh -c 'python3 -c \"import socket,"
	    "time; s=socket.socket(); s.bind((\\\"127.0.0.1\\\", 0)); "
	    "s.listen(); time.sleep(60)\" & exec gdbserver 127.0.0.1:0 %s'",
	    h_ctx_fixture("FIX_ECHO"));
	runs_on_the_named_port(server, "with two listening ports");
	snprintf(server, sizeof server, "sh -c '(exec gdbserver 127.0.0.1:0 "
	    "%s &); exec sleep 100'", h_ctx_fixture("FIX_ECHO"));
	runs_on_the_named_port(server, "a server left behind");
}

/* While session id starts: gdb's pid once it runs, else 0; -1 after. */
static pid_t
servers_starting_gdb(long id)
{
	json_t		*st = h_cli_status(id);
	const char	*state = h_jstr(st, "state");
	pid_t		 pid = -1;

	if (state != NULL && strcmp(state, "starting") == 0)
		pid = (pid_t)h_jint(st, "pid", 0);
	json_decref(st);
	return pid;
}

/*
 * gdb starts beside its server, not once the server listens: while a
 * server that takes 2 s to listen has not, the session is starting and
 * gdb runs already; the launch answers once gdb has connected.
 */
/* h_wait_for's test: the first session list shows, its id in *arg. */
static bool
servers_listed(void *arg)
{
	long	*id = arg;
	json_t	*list = h_cli_json(H_ARGS("list"));

	*id = h_jint(json_array_get(h_jpath(list, "sessions"), 0), "id", -1);
	json_decref(list);
	return *id > 0;
}

/* A starting session, and gdb's pid once it runs (-1: it started). */
struct servers_start {
	long	id;
	pid_t	gdb;
};

/* h_wait_for's test: gdb runs, or the session is no longer starting. */
static bool
servers_gdb_or_started(void *arg)
{
	struct servers_start *w = arg;

	return (w->gdb = servers_starting_gdb(w->id)) != 0;
}

Test(servers, gdb_starts_beside_a_server_that_listens_late)
{
	char			 server[1024], *req, comm[64];
	struct h_conn		 c;
	json_t			*reply, *params;
	long			 id = -1;
	struct servers_start	 w = { 0 };
	pid_t			 gdb;

	h_daemon_fg();
	snprintf(server, sizeof server, "sh -c 'sleep 2; exec gdbserver "
	    "127.0.0.1:{port} %s'", h_ctx_fixture("FIX_ECHO"));
	params = json_pack("{s:s, s:s, s:[s]}", "kind", "gdbserver", "server",
	    server, "argv", h_ctx_fixture("FIX_ECHO"));
	req = json_dumps(json_pack("{s:s, s:i, s:s, s:o}", "jsonrpc", "2.0",
	    "id", 1, "method", "launch", "params", params), JSON_COMPACT);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(h_conn_send(&c, req, strlen(req), H_WAIT_BOUND), 0);
	cr_assert_eq(h_conn_send(&c, "\n", 1, H_WAIT_BOUND), 0);
	free(req);
	cr_assert(h_wait_for(servers_listed, &id, H_WAIT_BOUND), "the launch "
	    "never showed in list");
	w.id = id;
	(void)h_wait_for(servers_gdb_or_started, &w, H_WAIT_BOUND);
	gdb = w.gdb;
	cr_assert_gt(gdb, 0, "session %ld was no longer starting before gdb "
	    "ran: gdb waited for the server", id);
	h_pid_comm(gdb, comm, sizeof comm);
	cr_assert_str_eq(comm, "gdb", "the starting session's pid");
	reply = h_conn_reply(&c, 1, H_WAIT_BOUND);
	cr_assert_str_eq(h_jstr(reply, "result.state") ? h_jstr(reply,
	    "result.state") : "(none)", "running", "the launch's answer: %s",
	    json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	h_conn_close(&c);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/*
 * gdb starts beside its server, so a debugger that cannot be started
 * fails the launch while the server may already run: the launch says
 * why, and nothing of the session is left, the server included.
 */
Test(servers, a_debugger_that_cannot_start_leaves_no_server)
{
	char		 marker[96], report[4096], server[1024];
	struct h_res	 r;

	h_marker_new("DBGI_SERVERS", marker, sizeof marker);
	snprintf(server, sizeof server, "gdbserver 127.0.0.1:{port} %s",
	    h_ctx_fixture("FIX_ECHO"));
	h_cli(&r, H_ARGS("launch", "--kind", "gdbserver", "--env", marker,
	    "--debugger", "/nonexistent/gdb", "--server", server, "--",
	    h_ctx_fixture("FIX_ECHO")));
	cr_assert_eq(r.code, 1, "launch with a debugger that is not there: "
	    "exit %d (stdout: %s, stderr: %s)", r.code, r.out, r.err);
	cr_assert(strstr(r.err, "/nonexistent/gdb") != NULL, "the error does "
	    "not name the debugger: %s", r.err);
	h_run_free(&r);
	cr_assert(h_marker_describe(marker, report, sizeof report) == 0,
	    "after the failed launch, processes are left: %s", report);
}

/* Run dbgctl exec SESSION -- CMD; assert exit 0 and want in what it prints. */
static void
servers_lldb_exec(const char *ids, const char *cmd, const char *want)
{
	struct h_res r;

	h_cli(&r, H_ARGS("exec", ids, "--", cmd));
	cr_assert(r.code == 0 && strstr(r.out, want) != NULL, "dbgctl exec %s "
	    "-- %s: expected exit 0 and \"%s\", got %d: %s%s", ids, cmd, want,
	    r.code, r.out, r.err);
	h_run_free(&r);
}

/*
 * The lldb-server kind: lldb-server runs the program, lldb connects to it
 * once it listens; a breakpoint set by exec is hit after "process continue"
 * answered (a stop lldb prints on its own, then its prompt drawn again),
 * exec answers after it, the program goes on and what it prints comes on
 * lldb's console; status shows the server; stop leaves no process of the
 * session alive.
 */
Test(servers, lldb_server_breaks_continues_and_stop_leaves_nothing)
{
	struct h_tracked t[5] = { { 0 } };
	char marker[96], ids[32];
	struct h_res r;
	json_t *st;
	pid_t srv;
	long id;

	h_marker_new("DBGI_LLDBSRV", marker, sizeof(marker));
	id = h_cli_launch(H_ARGS("--kind", "lldb-server", "--env", marker,
	    "--", h_ctx_fixture("FIX_ECHO"), "hello"));
	h_idstr(id, ids, sizeof(ids));
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "lldb "
	    "of session %s never answered \"version\"", ids);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "kind") ? h_jstr(st, "kind") : "",
	    "lldb-server");
	cr_assert_str_eq(h_jstr(st, "debugger") ? h_jstr(st, "debugger") : "",
	    "lldb");
	srv = (pid_t)h_jint(st, "server_pid", -1);
	cr_assert_gt(srv, 0, "status %s: no server_pid", ids);
	h_pid_expect_comm(srv, "server_pid", "lldb-server");
	cr_assert_gt(h_jint(st, "port", 0), 0, "status %s: no port", ids);
	cr_assert(h_jhas(h_jpath(st, "server.argv"), "gdbserver"),
	    "server.argv: %s", json_dumps(h_jpath(st, "server.argv"),
	    JSON_COMPACT));
	h_pid_track(&t[0], "lldb", (pid_t)h_jint(st, "pid", -1));
	h_pid_track(&t[1], "lldb's keeper", (pid_t)h_jint(st, "keeper_pid",
	    -1));
	h_pid_track(&t[2], "lldb-server", srv);
	h_pid_track(&t[3], "lldb-server's keeper", h_pid_ppid(srv));
	json_decref(st);
	servers_lldb_exec(ids, "breakpoint set --name main", "Breakpoint 1");
	servers_lldb_exec(ids, "process continue", "resuming");
	/* The stop at main comes after the prompt: exec answers again. */
	h_cli_wait_log(ids, "`main(", H_WAIT_BOUND);
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "after "
	    "the stop at main, lldb of session %s never answered: not at its "
	    "prompt?", ids);
	servers_lldb_exec(ids, "thread backtrace", "main");
	servers_lldb_exec(ids, "process continue", "resuming");
	cr_assert_eq(h_cli(&r, H_ARGS("expect", "--timeout", "20000",
	    "--stream", "console", ids, "arg1=\\[hello\\]")), 0, "dbgctl "
	    "expect %s: the program's output never came on lldb's console: "
	    "%d %s%s", ids, r.code, r.out, r.err);
	h_run_free(&r);
	h_cli_stop_leaves_nothing(id, t, marker);
}

/* Link dir/as to name found in the lldb kind's PATH; assert it worked. */
static void
servers_link(const char *name, const char *as, char *link, size_t len)
{
	static const char *const dirs[] = { "/usr/local/bin", "/usr/bin",
	    "/bin", NULL };
	char real[512];
	size_t i;

	for (i = 0; dirs[i] != NULL; i++) {
		snprintf(real, sizeof real, "%s/%s", dirs[i], name);
		if (access(real, X_OK) == 0)
			break;
	}
	cr_assert_not_null(dirs[i], "no %s in the lldb kind's PATH", name);
	snprintf(link, len, "%s/%s", H->dir, as);
	cr_assert_eq(symlink(real, link), 0, "symlink %s %s", real, link);
}

/*
 * The server follows --debugger: an lldb named by path with a version
 * (DIR/lldb-77) runs DIR/lldb-server-77 beside it, as a distribution's
 * versioned lldb and lldb-server go together.
 */
Test(servers, lldb_server_follows_a_versioned_debugger)
{
	char lldb[512], server[512], ids[32];
	json_t *st, *argv0;
	long id;

	servers_link("lldb", "lldb-77", lldb, sizeof lldb);
	servers_link("lldb-server", "lldb-server-77", server, sizeof server);
	id = h_cli_launch(H_ARGS("--kind", "lldb-server", "--debugger", lldb,
	    "--", h_ctx_fixture("FIX_ECHO"), "hello"));
	h_idstr(id, ids, sizeof(ids));
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "lldb "
	    "of session %s never answered \"version\"", ids);
	st = h_cli_status(id);
	argv0 = json_array_get(h_jpath(st, "server.argv"), 0);
	cr_assert_str_eq(json_is_string(argv0) ? json_string_value(argv0) :
	    "(none)", server, "--debugger %s: the server is not the one "
	    "beside it", lldb);
	json_decref(st);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/* An lldb-server session has no transport: the program's output is lldb's. */
Test(servers, lldb_server_refuses_a_transport)
{
	struct h_res r;

	h_cli(&r, H_ARGS("launch", "--kind", "lldb-server", "--transport",
	    "--", h_ctx_fixture("FIX_ECHO")));
	cr_assert(r.code == 1 && strstr(r.err, "no transport") != NULL,
	    "launch --kind lldb-server --transport: expected exit 1 naming "
	    "the transport, got %d: %s", r.code, r.err);
	h_run_free(&r);
}
