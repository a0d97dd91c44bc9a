/*
 * Sessions outlive the daemon: after a SIGKILL of dbgctld, a new daemon on
 * the same socket adopts what the old one left (same id, the streams going
 * on at their offsets with no byte lost or repeated, input and stop
 * working), with cursors, silences, holds and deadlines going on; with no
 * new daemon, the grace period ends everything; a replace hands it all
 * over (the kinds: test_adopt_kinds.c; who and when: test_adopt_serve.c).
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(adopt, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 150);

/* Lines the adopted target prints before it echoes its input. */
#define ADOPT_LINES 3000

/* What `dbgctl logs --stream NAME ID` prints, asserted to succeed. */
static char *
adopt_stream(long id, const char *name, size_t *len)
{
	struct h_res r;
	char s[32];

	h_cli_exit(&r, 0, H_ARGS("logs", "--stream", name, h_idstr(id, s,
	    sizeof s)));
	*len = r.out_len;
	free(r.err);
	return r.out;
}

/* Arguments of a wait for text in one stream of a session. */
struct adopt_wait {
	long		 id;
	const char	*stream;
	const char	*text;
};

/* Predicate: the stream holds the text; a miss waits a little. */
static bool
adopt_stream_has(void *arg)
{
	struct adopt_wait *w = arg;
	size_t len;
	char *out = adopt_stream(w->id, w->stream, &len);
	bool ok = strstr(out, w->text) != NULL;

	free(out);
	if (!ok)
		h_nap(50);
	return ok;
}

/* Assert that the target stream of id holds its lines once, in order. */
static void
adopt_expect_lines(long id, const char *after)
{
	char	*want = malloc(ADOPT_LINES * 12), *out;
	size_t	 wlen = 0, len;
	int	 i;

	for (i = 0; i < ADOPT_LINES; i++)
		wlen += (size_t)sprintf(want + wlen, "line%d\n", i);
	out = adopt_stream(id, "target", &len);
	cr_assert(len == wlen && memcmp(out, want, len) == 0, "the target "
	    "stream after %s (%zu bytes) is not its %zu bytes once, in order: "
	    "%s", after, len, wlen, h_shown(out, len, 400));
	free(out);
	free(want);
}




/* Predicate: no file is at the path. */
static bool
adopt_no_file(void *arg)
{
	struct stat st;

	if (lstat(arg, &st) != 0)
		return true;
	h_nap(20);
	return false;
}

/* Predicate: no process named sh carries the marker (its keeper may). */
static bool
adopt_sh_gone(void *arg)
{
	if (h_marker_pid(arg, "sh") == -1)
		return true;
	h_nap(20);
	return false;
}

/* Predicate: no process carries the marker. */
static bool
adopt_marker_gone(void *arg)
{
	if (h_marker_gone(arg))
		return true;
	h_nap(20);
	return false;
}

/* The session's row in `list --json`, or NULL (a new reference). */
static json_t *
adopt_row(long id)
{
	json_t *l = h_cli_json(H_ARGS("list")), *row, *found = NULL;
	size_t i;

	json_array_foreach(json_object_get(l, "sessions"), i, row)
		if (json_integer_value(json_object_get(row, "id")) == id)
			found = json_incref(row);
	json_decref(l);
	return found;
}

/*
 * A target streaming output through its transport when the daemon is
 * killed goes on writing into its pipe; the next daemon adopts it under
 * its id and name, and the target stream holds every line once, in order.
 */
Test(adopt, an_exec_session_outlives_a_sigkill_of_its_daemon)
{
	char m[96], script[256], id_s[32];
	struct adopt_wait w = { 0, "target", "line20\n" };
	struct h_res r;
	json_t *row;
	pid_t cat;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT", m, sizeof m);
	snprintf(script, sizeof script, "i=0; while [ $i -lt %d ]; do echo "
	    "line$i; i=$((i+1)); done; exec cat", ADOPT_LINES);
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--name",
	    "kept", "--env", m, "--", "sh", "-c", script));
	w.id = id;
	cr_assert(h_wait_for(adopt_stream_has, &w, H_WAIT_BOUND),
	    "the target's first lines never came");
	h_daemon_fg_kill();
	/* With no daemon, the target goes on: its cat comes to read. */
	h_marker_wait(m, "cat", 1);
	cat = h_marker_pid(m, "cat");
	h_daemon_fg();
	row = adopt_row(id);
	cr_assert_not_null(row, "the new daemon does not list session %ld", id);
	cr_assert_str_eq(json_string_value(json_object_get(row, "name")),
	    "kept", "the adopted session's name");
	cr_assert_str_eq(json_string_value(json_object_get(row, "state")),
	    "running", "the adopted session's state");
	json_decref(row);
	w.text = "line2999\n";
	cr_assert(h_wait_for(adopt_stream_has, &w, H_WAIT_BOUND),
	    "the lines written while no daemon ran never came");
	adopt_expect_lines(id, "the adoption");
	/* Input reaches the same target, and its answer comes back. */
	h_idstr(id, id_s, sizeof id_s);
	h_cli_exit(&r, 0, H_ARGS("send", id_s, "after the adoption\n"));
	h_run_free(&r);
	w.text = "after the adoption\n";
	cr_assert(h_wait_for(adopt_stream_has, &w, H_WAIT_BOUND),
	    "what was sent after the adoption never came back");
	cr_assert_eq(h_marker_pid(m, "cat"), cat, "the target is not the one "
	    "that ran before the SIGKILL");
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted session are "
	    "alive after stop --all");
}

/* Numbers the flooding target prints, and how many times its daemon dies. */
#define ADOPT_FLOOD_LINES 3000000
#define ADOPT_FLOOD_KILLS 10

/* Arguments of a wait for a log file to reach a size. */
struct adopt_grow {
	const char	*path;
	off_t		 size;
};

/* Predicate: the file has reached the size. */
static bool
adopt_grown(void *arg)
{
	struct adopt_grow *g = arg;
	struct stat st;

	if (stat(g->path, &st) == 0 && st.st_size >= g->size)
		return true;
	h_nap(5);
	return false;
}

/* Assert that the file holds seq 1 N's output exactly. */
static void
adopt_expect_seq(const char *path, long n)
{
	FILE	*f = fopen(path, "r");
	char	 line[64];
	long	 want = 1, got;

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof line, f) != NULL) {
		got = strtol(line, NULL, 10);
		cr_assert_eq(got, want, "%s: line %ld is \"%.20s\": a line "
		    "was lost or repeated when a daemon was killed", path,
		    want, line);
		want++;
	}
	fclose(f);
	cr_assert_eq(want - 1, n, "%s has %ld of %ld lines", path, want - 1, n);
}

/*
 * Kill the daemon ADOPT_FLOOD_KILLS times while a session floods the
 * stream whose log ends in suffix with seq's lines (each eol bytes longer
 * than seq's own, a terminal's \r), a new daemon adopting it each time;
 * then the log holds every line once, in order.
 */
static void
adopt_flood(const char *suffix, off_t eol, const char *const launch[])
{
	char script[64], path[PATH_MAX + 64];
	struct adopt_grow g = { path, 0 };
	const char *args[16];
	struct h_res r;
	off_t all = 0;
	long id, k;
	int i, n;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	/* It stays, so the session is there to be adopted to the end. */
	snprintf(script, sizeof script, "seq 1 %d; exec sleep 1000",
	    ADOPT_FLOOD_LINES);
	for (k = 1; k <= ADOPT_FLOOD_LINES; k *= 10)
		all += (off_t)(ADOPT_FLOOD_LINES - k + 1);
	all += ADOPT_FLOOD_LINES * (1 + eol);
	for (n = 0; launch[n] != NULL; n++)
		args[n] = launch[n];
	args[n++] = "sh";
	args[n++] = "-c";
	args[n++] = script;
	args[n] = NULL;
	id = h_cli_launch(args);
	snprintf(path, sizeof path, "%s/sessions/%ld%s", H->state, id,
	    suffix);
	for (i = 1; i <= ADOPT_FLOOD_KILLS; i++) {
		/* Killed while the flood is read: the log is still growing. */
		g.size = i * (all / (ADOPT_FLOOD_KILLS + 1));
		/* Short of it, bytes were lost: the lines below say which. */
		if (!h_wait_for(adopt_grown, &g, H_WAIT_BOUND))
			break;
		h_daemon_fg_kill();
		h_daemon_fg();
	}
	g.size = all;
	(void)h_wait_for(adopt_grown, &g, H_WAIT_BOUND);
	adopt_expect_seq(path, ADOPT_FLOOD_LINES);
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
}

/*
 * A daemon killed while a target floods its pipe, again and again, loses
 * no byte and repeats none: the pipe gives a byte up only once the
 * transcript has it, so each is in the log or still in the pipe for the
 * next daemon, wherever in its reading the kill came.
 */
Test(adopt, a_flood_survives_daemons_killed_while_reading)
{
	adopt_flood(".target.log", 0, H_ARGS("--kind", "exec", "--transport",
	    "--"));
}

/*
 * And a flood of its terminal, which cannot be spliced: the keeper copies
 * the pty into a pipe that the daemon splices, so a kill anywhere in a
 * read leaves each byte in the log, the pipe, the keeper or the pty.
 */
Test(adopt, a_terminal_flood_survives_daemons_killed_while_reading)
{
	adopt_flood(".log", 1, H_ARGS("--kind", "exec", "--"));
}

/* Run dbgctl ARGS..., assert exit 0 and that it printed exactly want. */
static void
adopt_cli_prints(const char *want, const char *const args[])
{
	struct h_res r;

	h_cli_exit(&r, 0, args);
	cr_assert(r.out_len == strlen(want) && memcmp(r.out, want,
	    r.out_len) == 0, "dbgctl %s %s printed %s, not %s", args[0],
	    args[1], h_shown(r.out, r.out_len, 200), want);
	h_run_free(&r);
}

/*
 * Where readers stood goes on after the adoption: the command line's
 * expect cursor ("cli") past what it matched, so an expect without
 * --from does not match that again; recv at the byte after what it took,
 * so the bytes held for it are neither skipped nor given twice.
 */
Test(adopt, expect_cursors_and_recv_go_on_where_they_were)
{
	struct adopt_wait w = { 0, "target", "first\n" };
	struct h_res r;
	char ids[32];

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	w.id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "sh", "-c", "echo first; exec cat"));
	h_idstr(w.id, ids, sizeof ids);
	cr_assert(h_wait_for(adopt_stream_has, &w, H_WAIT_BOUND),
	    "the target never printed its first line");
	adopt_cli_prints("first\n", H_ARGS("expect", "--stream", "target",
	    ids, "first|second"));
	adopt_cli_prints("fir", H_ARGS("recv", "--max", "3", ids));
	h_daemon_fg_kill();
	h_daemon_fg();
	h_cli_exit(&r, 0, H_ARGS("send", ids, "second\n"));
	h_run_free(&r);
	adopt_cli_prints("second\n", H_ARGS("expect", "--stream", "target",
	    ids, "first|second"));
	/* The expect saw the echo: recv has it, after what it had left. */
	adopt_cli_prints("st\nsecond\n", H_ARGS("recv", ids));
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
}

/* Lines the target below prints, and how many of them expects match. */
#define ADOPT_CURSOR_LINES 2000
#define ADOPT_CURSOR_MOVES 1500

/*
 * A named cursor moved many times keeps a small file (one line a move,
 * written again with one line a name as it grows), and the adoption goes
 * on from its last place.
 */
Test(adopt, a_cursor_moved_often_keeps_a_small_file_and_its_last_place)
{
	char script[128], params[160], want[32], path[PATH_MAX + 64];
	struct h_conn c;
	struct stat st;
	json_t *r;
	long id;
	int i;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	snprintf(script, sizeof script, "seq -f n%%g 0 %d; exec sleep 1000",
	    ADOPT_CURSOR_LINES - 1);
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", script));
	snprintf(params, sizeof params, "{\"session\":%ld,\"stream\":"
	    "\"target\",\"patterns\":\"n\\\\d+\\n\",\"cursor\":\"k\"}", id);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	for (i = 0; i < ADOPT_CURSOR_MOVES; i++) {
		r = h_conn_call(&c, "expect", params, H_WAIT_BOUND);
		snprintf(want, sizeof want, "n%d\n", i);
		cr_assert_str_eq(h_jstr(r, "result.text") ?: "", want,
		    "expect %d: %s", i, json_dumps(r, JSON_COMPACT));
		json_decref(r);
	}
	h_conn_close(&c);
	snprintf(path, sizeof path, "%s/sessions/%ld.cursors", H->state, id);
	cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert_leq(st.st_size, 16 * 1024 + 64, "%s has %lld bytes after "
	    "%d moves", path, (long long)st.st_size, ADOPT_CURSOR_MOVES);
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	r = h_conn_call(&c, "expect", params, H_WAIT_BOUND);
	snprintf(want, sizeof want, "n%d\n", ADOPT_CURSOR_MOVES);
	cr_assert_str_eq(h_jstr(r, "result.text") ?: "", want, "the cursor "
	    "after the adoption: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	h_conn_close(&c);
}

/* The silence of the test below, and how long it waits with no daemon. */
#define ADOPT_SILENCE_MS 5000
#define ADOPT_SILENT_MS (ADOPT_SILENCE_MS + 2000)

/* Predicate: the test's clock has passed the time it points at. */
static bool
adopt_past(void *arg)
{
	if (h_now() >= *(double *)arg)
		return true;
	h_nap(50);
	return false;
}

/*
 * A silence goes on across the adoption from the last output, as the old
 * daemon logged it, not from the adoption: a session that has been
 * silent longer than its silence while no daemon ran gets its verdict
 * once adopted, and the verdict says how long it has been silent.
 */
Test(adopt, a_silence_goes_on_from_the_last_output)
{
	char ids[32], silence[32];
	double until;
	json_t *st;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	snprintf(silence, sizeof silence, "%d", ADOPT_SILENCE_MS);
	id = h_cli_launch(H_ARGS("--kind", "exec", "--silence-timeout",
	    silence, "--", "sh", "-c", "echo said; exec sleep 1000"));
	h_idstr(id, ids, sizeof ids);
	h_cli_wait_log(ids, "said", H_WAIT_BOUND);
	h_daemon_fg_kill();
	/* Silent for longer than its silence, with no daemon to see it. */
	until = h_now() + ADOPT_SILENT_MS / 1000.0;
	cr_assert(h_wait_for(adopt_past, &until, ADOPT_SILENT_MS * 2),
	    "the clock stood still");
	h_daemon_fg();
	cr_assert(h_cli_wait_status(id, "verdict", NULL, H_WAIT_BOUND),
	    "session %ld: no verdict after the adoption", id);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "verdict.kind") ?: "", "silent", "%s",
	    json_dumps(st, JSON_COMPACT));
	cr_assert_geq(h_jint(st, "verdict.streams.console.idle_ms", -1),
	    ADOPT_SILENT_MS, "the silence began again at the adoption: %s",
	    json_dumps(h_jpath(st, "verdict"), JSON_COMPACT));
	json_decref(st);
}

/*
 * A session whose program ended while no daemon ran is adopted ended:
 * its exit status is the one its program exited with.
 */
Test(adopt, an_exit_while_no_daemon_ran_is_told_to_the_next)
{
	char m[96], sock[PATH_MAX + 32], flag[PATH_MAX], script[PATH_MAX + 64];
	long id;
	int fd;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_EXIT", m, sizeof m);
	h_ctx_path(flag, sizeof flag, "go");
	/* The target's own wait for the file: the test never sleeps. */
	snprintf(script, sizeof script, "while [ ! -e %s ]; do sleep 0.05; "
	    "done; exit 7", flag);
	id = h_cli_launch_sh(m, script);
	h_marker_wait(m, "sh", 1);
	h_daemon_fg_kill();
	/* The program ends with no daemon to hear it: its keeper waits. */
	fd = open(flag, O_WRONLY | O_CREAT, 0600);
	cr_assert_neq(fd, -1, "%s: %s", flag, strerror(errno));
	close(fd);
	cr_assert(h_wait_for(adopt_sh_gone, m, H_WAIT_BOUND),
	    "the program did not end");
	h_adopt_keeper_sock(id, 0, sock, sizeof sock);
	cr_assert(!adopt_no_file(sock), "its keeper did not wait at %s", sock);
	h_daemon_fg();
	h_cli_expect_exit(id, 7, 20000, "adopted after its exit");
	cr_assert(h_wait_for(adopt_no_file, sock, H_WAIT_BOUND),
	    "the keeper's socket %s is still there", sock);
	cr_assert(h_marker_gone(m), "processes of the session are alive");
}

/* With no new daemon, the grace period ends the whole tree, as before. */
Test(adopt, the_grace_period_ends_a_tree_nobody_adopts)
{
	char m[96], sock[PATH_MAX + 32];
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=1");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_GRACE", m, sizeof m);
	id = h_cli_launch_sh(m, H_ESCAPING_TREE);
	h_marker_wait(m, "sleep", 2);
	h_adopt_keeper_sock(id, 0, sock, sizeof sock);
	cr_assert(!adopt_no_file(sock), "no keeper socket at %s", sock);
	h_daemon_fg_kill();
	cr_assert(h_wait_for(adopt_marker_gone, m, 15000), "15 s after the "
	    "SIGKILL, with a grace of 1 s, processes of the session live");
	cr_assert(h_wait_for(adopt_no_file, sock, 5000), "the keeper's socket "
	    "%s outlived it", sock);
}

/*
 * What a session's record keeps beyond its launch comes back with it: a
 * hold, for the time it had left and by whom; a deadline set later, for
 * what it had left; a launch's deadline cleared since, not at all; and a
 * leased session whose lease ended while its hold kept it is kept still.
 */
Test(adopt, holds_and_deadlines_come_back_as_they_were)
{
	char a[32], b[32], c[32];
	struct h_res r;
	json_t *st;
	long ia, ib, ic;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	ia = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	ib = h_cli_launch(H_ARGS("--kind", "exec", "--deadline", "600000",
	    "--", "sleep", "300"));
	ic = h_cli_launch(H_ARGS("--kind", "exec", "--", "sleep", "300"));
	h_idstr(ia, a, sizeof a);
	h_idstr(ib, b, sizeof b);
	h_idstr(ic, c, sizeof c);
	h_cli_exit(&r, 0, H_ARGS("hold", "--ttl", "500", "--note", "kept "
	    "for the night", a));
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("deadline", b, "off"));
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("deadline", c, "400000"));
	h_run_free(&r);
	h_daemon_fg_kill();
	h_daemon_fg();
	st = h_cli_status(ia);
	cr_assert_eq(h_jint(st, "hold.left_ms", -1) > 0 &&
	    h_jint(st, "hold.left_ms", -1) <= 500000, 1, "session %s: its "
	    "hold after the adoption: %s", a, json_dumps(st, 0));
	cr_assert_not_null(strstr(json_dumps(json_object_get(st, "hold"), 0),
	    "kept for the night"), "session %s: who held it", a);
	json_decref(st);
	st = h_cli_status(ib);
	cr_assert_null(json_object_get(st, "deadline"), "session %s: the "
	    "deadline cleared before is back", b);
	json_decref(st);
	st = h_cli_status(ic);
	cr_assert(h_jint(st, "deadline.in_ms", -1) > 0 &&
	    h_jint(st, "deadline.in_ms", -1) <= 400000, "session %s: its "
	    "deadline after the adoption: in_ms %lld", c,
	    h_jint(st, "deadline.in_ms", -1));
	json_decref(st);
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
}

/*
 * dbgctl daemon --replace hands every session to the new daemon: an exec
 * session streaming output and a gdb session stopped at a breakpoint go
 * on under the new one, with their ids, every byte once, the stop where
 * it was; the old daemon exits 0 and stops nothing.
 */
Test(adopt, a_replace_hands_over_its_sessions)
{
	char m[96], script[256], ids[32], gids[32];
	struct adopt_wait w = { 0, "target", "line20\n" };
	struct h_res r;
	json_t *st;
	long id, gid;
	pid_t gdb;
	int code;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_REPLACE", m, sizeof m);
	snprintf(script, sizeof script, "i=0; while [ $i -lt %d ]; do echo "
	    "line$i; i=$((i+1)); done; exec cat", ADOPT_LINES);
	id = w.id = h_cli_launch(H_ARGS("--kind", "exec", "--transport",
	    "--env", m, "--", "sh", "-c", script));
	h_idstr(id, ids, sizeof ids);
	gid = h_cli_launch(H_ARGS("--kind", "gdb", "--env", m, "-x", "run",
	    "--", h_ctx_fixture("FIX_LOOP")));
	h_idstr(gid, gids, sizeof gids);
	cr_assert(h_cli_wait_status(gid, "target.state", "running",
	    H_WAIT_BOUND), "session %s never ran its program", gids);
	json_decref(h_cli_json(H_ARGS("break", gids, "loop_tick")));
	cr_assert(h_cli_wait_status(gid, "target.state", "stopped",
	    H_WAIT_BOUND), "the breakpoint was never hit");
	gdb = h_cli_status_pid(gid, "pid");
	cr_assert(h_wait_for(adopt_stream_has, &w, H_WAIT_BOUND),
	    "the target's first lines never came");
	h_cli_exit(&r, 0, H_ARGS("daemon", "--replace"));
	h_run_free(&r);
	code = h_daemon_fg_wait(H_WAIT_BOUND);
	cr_assert(code != -1 && WIFEXITED(code) && WEXITSTATUS(code) == 0,
	    "the old daemon did not exit 0 after the replace");
	cr_assert(h_cli_wait_status(gid, "state", "running", H_WAIT_BOUND),
	    "the gdb session never ran under the new daemon");
	st = h_cli_status(gid);
	cr_assert_eq((pid_t)h_jint(st, "pid", -1), gdb, "another gdb");
	cr_assert_str_eq(h_jstr(st, "target.stop.func") ? h_jstr(st,
	    "target.stop.func") : "(none)", "loop_tick", "where the target "
	    "is after the replace");
	json_decref(st);
	h_adopt_resume_hits(gids, "the replace");
	w.text = "line2999\n";
	cr_assert(h_wait_for(adopt_stream_has, &w, H_WAIT_BOUND),
	    "the last lines never came after the replace");
	adopt_expect_lines(id, "the replace");
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the sessions live after "
	    "stop --all");
}
