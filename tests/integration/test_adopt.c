/*
 * Sessions outlive the daemon: after a SIGKILL of dbgctld, a new daemon on
 * the same socket adopts what the old one left (same id, the streams going
 * on at their offsets with no byte lost or repeated, input and stop
 * working); with no new daemon, the grace period ends everything; a forged
 * or foreign keeper socket is never adopted.
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

/* Assert that a resume of session ids stops at loop_tick again; its seq. */
static long
adopt_resume_hits(const char *ids, const char *after)
{
	json_t	*hit = h_cli_json(H_ARGS("resume", "--wait", ids));
	long	 seq = (long)h_jint(hit, "target.seq", -1);

	cr_assert_str_eq(h_jstr(hit, "target.stop.func") ? h_jstr(hit,
	    "target.stop.func") : "(none)", "loop_tick", "the resume after "
	    "%s did not stop at the breakpoint", after);
	json_decref(hit);
	return seq;
}

/*
 * SIGKILL the daemon and start the next; assert that session id runs again
 * under it with the same managed server, at the same port; what: messages.
 */
static void
adopt_keeps_server(long id, const char *what)
{
	json_t	*st = h_cli_status(id);
	pid_t	 srv = (pid_t)h_jint(st, "server_pid", -1);
	long	 port = (long)h_jint(st, "port", -1);

	json_decref(st);
	cr_assert(srv > 0 && port > 0, "the %s session's server and port", what);
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted %s session never ran again", what);
	st = h_cli_status(id);
	cr_assert_eq((pid_t)h_jint(st, "server_pid", -1), srv, "the %s "
	    "session has another server", what);
	cr_assert_eq((long)h_jint(st, "port", -1), port, "the %s session has "
	    "another port", what);
	json_decref(st);
}

/* The path of the socket keeper n of session id waits at. */
static void
adopt_keeper_sock(long id, int n, char *buf, size_t len)
{
	snprintf(buf, len, "%s.k%ld.%d", H->sock, id, n);
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
	adopt_keeper_sock(id, 0, sock, sizeof sock);
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
	adopt_keeper_sock(id, 0, sock, sizeof sock);
	cr_assert(!adopt_no_file(sock), "no keeper socket at %s", sock);
	h_daemon_fg_kill();
	cr_assert(h_wait_for(adopt_marker_gone, m, 15000), "15 s after the "
	    "SIGKILL, with a grace of 1 s, processes of the session live");
	cr_assert(h_wait_for(adopt_no_file, sock, 5000), "the keeper's socket "
	    "%s outlived it", sock);
}

/* A keeper of the socket's name that lies about itself is not adopted. */
static void
adopt_forger(const char *path, int ready)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[64];
	int l, c;

	if (strlen(path) >= sizeof sun.sun_path)
		_exit(1);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(l, (struct sockaddr *)&sun, sizeof sun) != 0 ||
	    listen(l, 4) != 0)
		_exit(1);
	(void)write(ready, "r", 1);
	while ((c = accept(l, NULL, NULL)) != -1) {
		(void)read(c, buf, sizeof buf);
		/* Not its own pid, a descriptor it does not send. */
		dprintf(c, "keeper 1\nhold console\nstarted 1\nadopted\n");
		close(c);
	}
	_exit(0);
}

/*
 * A socket at a keeper's name that another process of the user made and
 * that lies, and one of another user, are left alone: the daemon starts,
 * serves, and lists no such session.
 */
Test(adopt, a_forged_or_foreign_keeper_socket_is_not_adopted)
{
	char forged[PATH_MAX + 32], foreign[PATH_MAX + 32], c;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int p[2], fd, st;
	pid_t forger;
	json_t *rows;

	cr_assert_eq(mkdir(H->dir, 0700) == 0 || errno == EEXIST, 1);
	adopt_keeper_sock(77, 0, forged, sizeof forged);
	adopt_keeper_sock(78, 0, foreign, sizeof foreign);
	cr_assert_eq(pipe(p), 0);
	if ((forger = fork()) == 0) {
		close(p[0]);
		adopt_forger(forged, p[1]);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &c, 1), 1, "the forger did not listen");
	close(p[0]);
	cr_assert_lt(strlen(foreign), sizeof sun.sun_path);
	memcpy(sun.sun_path, foreign, strlen(foreign) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	cr_assert_eq(listen(fd, 4), 0);
	if (getuid() == 0)
		cr_assert_eq(chown(foreign, 65534, 65534), 0);
	h_daemon_fg();
	rows = h_cli_json(H_ARGS("list"));
	cr_assert_eq(json_array_size(json_object_get(rows, "sessions")), 0,
	    "the daemon listed sessions from forged keeper sockets");
	json_decref(rows);
	h_daemon_wait_log("not adopted", H_WAIT_BOUND);
	kill(forger, SIGKILL);
	waitpid(forger, &st, 0);
	close(fd);
}

/* Whether fd has nothing to read and no hang-up waiting: still open. */
static bool
adopt_quiet(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 0;
}

/*
 * The daemon serves while it adopts: with a keeper socket whose owner
 * takes the daemon's call and never hands over, a ping is answered at
 * once, while a list waits for the adoption, which gives that keeper up
 * at its bound; then the list has no such session.
 */
Test(adopt, a_keeper_slow_to_hand_over_delays_a_ping_not)
{
	char path[PATH_MAX + 32], buf[16] = { 0 };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct pollfd pfd;
	json_t *rows;
	int l, c;

	cr_assert_eq(mkdir(H->dir, 0700) == 0 || errno == EEXIST, 1);
	adopt_keeper_sock(79, 0, path, sizeof path);
	cr_assert_lt(strlen(path), sizeof sun.sun_path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&sun, sizeof sun), 0);
	cr_assert_eq(listen(l, 4), 0);
	h_daemon_fg();
	pfd = (struct pollfd){ .fd = l, .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, H_WAIT_BOUND), 1, "the daemon never "
	    "called at the keeper's socket");
	cr_assert_neq(c = accept(l, NULL, NULL), -1);
	pfd = (struct pollfd){ .fd = c, .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, H_WAIT_BOUND), 1);
	cr_assert_eq(read(c, buf, 6), 6);
	cr_assert_str_eq(buf, "adopt\n");
	cr_assert(adopt_quiet(c), "the daemon gave the keeper up at once");
	cr_assert(h_daemon_ping(), "no pong while a keeper hands over");
	cr_assert(adopt_quiet(c), "the ping waited for the keeper's bound");
	rows = h_cli_json(H_ARGS("list"));
	cr_assert(!adopt_quiet(c) && read(c, buf, sizeof buf) == 0, "the "
	    "list was answered before the adoption gave the keeper up");
	cr_assert_eq(json_array_size(json_object_get(rows, "sessions")), 0);
	json_decref(rows);
	h_daemon_wait_log("keeper 0 not adopted: no hand-over", H_WAIT_BOUND);
	close(c);
	close(l);
}

/* Listen at keeper n of session id's socket, and never answer; the fd. */
static int
adopt_mute_keeper(long id)
{
	char path[PATH_MAX + 32];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int l;

	adopt_keeper_sock(id, 0, path, sizeof path);
	cr_assert_lt(strlen(path), sizeof sun.sun_path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(bind(l, (struct sockaddr *)&sun, sizeof sun), 0);
	cr_assert_eq(listen(l, 4), 0);
	return l;
}

/*
 * A SIGTERM while the daemon adopts still ends every session: sixteen
 * keepers that never hand over hold the adoption's places until their
 * bound, so a real session (its id after theirs) is adopted only after
 * the SIGTERM; the daemon stops it, exits once the adoption is over, and
 * then nothing of it is alive.
 */
Test(adopt, a_sigterm_while_adopting_ends_every_session)
{
	char m[96];
	struct h_res r;
	pid_t daemon;
	int mute[16], i;
	long id = 0;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	/* Ids are never reused: the real session's comes after the mute ones. */
	for (i = 0; i < 16; i++) {
		h_cli_exit(&r, 0, H_ARGS("launch", "--kind", "exec", "--wait",
		    "--", "true"));
		h_run_free(&r);
	}
	h_marker_new("DBGI_ADOPT_TERM", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "exec", "--env", m, "--",
	    h_ctx_fixture("FIX_LOOP")));
	cr_assert_gt(id, 16);
	h_marker_wait(m, NULL, 1);
	h_daemon_fg_kill();
	for (i = 0; i < 16; i++)
		mute[i] = adopt_mute_keeper(i + 1);
	daemon = h_daemon_fg();
	cr_assert_eq(kill(daemon, SIGTERM), 0);
	cr_assert_neq(h_daemon_fg_wait(H_WAIT_BOUND), -1, "the daemon did "
	    "not exit after SIGTERM");
	cr_assert(h_marker_gone(m), "a session adopted while the daemon "
	    "shut down outlived it");
	for (i = 0; i < 16; i++)
		close(mute[i]);
}

/*
 * A gdb session stopped at a breakpoint when its daemon is killed is
 * adopted as gdb left it: stopped there, the breakpoint listed, its seq
 * past every one before; it resumes to the next hit, evaluates, and a
 * stop ends it whole.
 */
Test(adopt, a_gdb_session_outlives_a_sigkill_of_its_daemon)
{
	char m[96], ids[32];
	json_t *st, *list;
	struct h_res r;
	long id, seq, seq2;
	pid_t gdb;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_GDB", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "gdb", "--env", m, "-x", "run",
	    "--", h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "session %ld never ran its program", id);
	json_decref(h_cli_json(H_ARGS("break", ids, "loop_tick")));
	cr_assert(h_cli_wait_status(id, "target.state", "stopped",
	    H_WAIT_BOUND), "the breakpoint was never hit");
	st = h_cli_status(id);
	seq = (long)h_jint(st, "target.seq", -1);
	gdb = (pid_t)h_jint(st, "pid", -1);
	json_decref(st);
	h_daemon_fg_kill();
	cr_assert(!h_pid_gone(gdb), "gdb died with its daemon");
	h_daemon_fg();
	/* It runs once gdb has said again what it knows. */
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted session never ran again");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "target.state"), "stopped", "the adopted "
	    "session's target");
	cr_assert_str_eq(h_jstr(st, "target.stop.frame.func"), "loop_tick",
	    "where the adopted target is stopped");
	cr_assert_gt(h_jint(st, "target.seq", -1), seq, "the seq after the "
	    "adoption is not past the one before");
	cr_assert_eq((pid_t)h_jint(st, "pid", -1), gdb, "another gdb");
	json_decref(st);
	list = h_cli_json(H_ARGS("break", "--list", ids));
	cr_assert_not_null(strstr(json_dumps(list, 0), "loop_tick"),
	    "the breakpoint is not listed after the adoption");
	json_decref(list);
	seq2 = adopt_resume_hits(ids, "the adoption");
	st = h_cli_status(id);
	cr_assert_eq(h_jint(st, "target.seq", -1), seq2);
	json_decref(st);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted gdb session "
	    "live after its stop");
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
 * A remote session (gdb connected to a server the test runs) is adopted
 * with gdb still connected: the server's program is where it was, and a
 * breakpoint set before the SIGKILL is hit after the adoption.
 */
Test(adopt, a_remote_session_stays_connected_across_its_adoption)
{
	const char *loop = h_ctx_fixture("FIX_LOOP");
	struct h_bytes b = { calloc(1, 1), 0 };
	char ids[32], remote[64];
	struct h_proc srv;
	struct h_res r;
	json_t *st;
	pid_t gdb;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	snprintf(remote, sizeof(remote), "127.0.0.1:%d",
	    h_run_gdbserver(&srv, &b, loop));
	id = h_cli_launch(H_ARGS("--remote", remote, "--", loop));
	h_idstr(id, ids, sizeof(ids));
	json_decref(h_cli_json(H_ARGS("break", ids, "loop_tick")));
	gdb = h_cli_status_pid(id, "pid");
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted remote session never ran again");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "kind"), "remote");
	cr_assert_eq((pid_t)h_jint(st, "pid", -1), gdb, "another gdb");
	json_decref(st);
	adopt_resume_hits(ids, "the adoption");
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_pid_gone(gdb), "gdb lives after its session's stop");
	kill(srv.pid, SIGKILL);
	h_run_wait(&srv, 60000);
	free(b.p);
}

/*
 * A board under the qemu kind is adopted with QEMU and gdb-multiarch as
 * they were: the same server at the same port, its UART going on, and
 * its fault breaks known again, so a HardFault after the adoption is a
 * fault record at the handler.
 */
Test(adopt, a_qemu_board_keeps_its_fault_breaks_across_its_adoption)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	struct h_bytes got = { calloc(1, 1), 0 };
	char ids[32], m[96];
	struct h_res r;
	json_t *st;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_QEMU", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--env", m, "--", fw));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_cli_recv_until(ids, "dbgctl board ready", &got,
	    H_WAIT_BOUND), 0, "no banner from the board");
	adopt_keeps_server(id, "board");
	h_cli_exit(&r, 0, H_ARGS("send", ids, "!"));
	h_run_free(&r);
	cr_assert(h_cli_wait_status(id, "fault", NULL, H_WAIT_BOUND), "no "
	    "fault record after a HardFault on the adopted board");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "fault.location") ? h_jstr(st,
	    "fault.location") : "", "*HardFault_Handler", "the fault of the "
	    "adopted board");
	json_decref(st);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted board live "
	    "after its stop");
	free(got.p);
}

/* A live read of the board's counter (mem --live --json): via, value. */
static unsigned long
adopt_live_counter(const char *ids, const char *addr, const char *via)
{
	json_t		*res = h_cli_json(H_ARGS("mem", "--live", ids, addr,
			    "4"));
	const char	*hex = h_jstr(res, "hex");
	unsigned	 b[4];

	cr_assert_str_eq(h_jstr(res, "via") ? h_jstr(res, "via") : "", via,
	    "a live read at %s of the adopted board: expected via %s", addr,
	    via);
	cr_assert(hex != NULL && sscanf(hex, "%2x%2x%2x%2x", &b[0], &b[1],
	    &b[2], &b[3]) == 4, "a live read of 4 bytes");
	json_decref(res);
	return (unsigned long)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
}

/*
 * A board on mps2-an385 keeps its live memory across its adoption: QEMU's
 * keeper held the daemon's end of QMP and the shared RAM, so the next
 * daemon reads the running counter through both, and writes it.
 */
Test(adopt, a_qemu_board_keeps_its_live_memory_across_its_adoption)
{
	const char	*fw = h_board_firmware("FIX_BOARD_AN385");
	struct h_bytes	 got = { calloc(1, 1), 0 };
	char		 ids[32];
	struct h_res	 r;
	unsigned long	 v;
	long		 id;
	int		 i;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "qemu", "--machine", "mps2-an385",
	    "--", fw));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_cli_recv_until(ids, "ready", &got, H_WAIT_BOUND), 0,
	    "no banner from the board");
	(void)adopt_live_counter(ids, "&counter", "shm");
	adopt_keeps_server(id, "an385 board");
	cr_assert_eq(adopt_live_counter(ids, "0", "qmp"), 0x21010000ul,
	    "the adopted board's initial SP, read through QMP");
	/* The firmware's counter++ may store over a write: write again. */
	for (i = 0, v = 0; i < 20 && v < 0x70000000ul; i++) {
		h_cli_exit(&r, 0, H_ARGS("mem", "--write", "--live", ids,
		    "&counter", "00000070"));
		h_run_free(&r);
		v = adopt_live_counter(ids, "&counter", "shm");
	}
	cr_assert(v >= 0x70000000ul && v < 0x7f000000ul, "the adopted board's "
	    "counter after a live write of 0x70000000: 0x%lx", v);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	free(got.p);
}

/*
 * A gdbserver session, whose server picked its own port, is adopted with
 * the port its record kept once it was seen, and its breakpoint works.
 */
Test(adopt, a_gdbserver_session_keeps_its_server_and_port)
{
	char ids[32], m[96];
	struct h_res r;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_GDBSRV", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--env", m, "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	json_decref(h_cli_json(H_ARGS("break", ids, "loop_tick")));
	adopt_keeps_server(id, "gdbserver");
	adopt_resume_hits(ids, "the adoption");
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted gdbserver "
	    "session live after its stop");
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
	adopt_resume_hits(gids, "the replace");
	w.text = "line2999\n";
	cr_assert(h_wait_for(adopt_stream_has, &w, H_WAIT_BOUND),
	    "the last lines never came after the replace");
	adopt_expect_lines(id, "the replace");
	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the sessions live after "
	    "stop --all");
}

/*
 * An lldb session, at its prompt when its daemon is killed, is adopted at
 * its prompt (its console log's last bytes draw it): exec types there and
 * is answered at once.
 */
Test(adopt, an_lldb_session_is_adopted_at_its_prompt)
{
	const char *loop = h_ctx_fixture("FIX_LOOP");
	char ids[32], m[96];
	struct h_res r;
	pid_t lldb;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_LLDB", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "lldb", "--env", m, "--", loop));
	h_idstr(id, ids, sizeof ids);
	/* An exec answered says lldb sat at its prompt before the kill. */
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "lldb "
	    "of session %s never answered", ids);
	lldb = h_cli_status_pid(id, "pid");
	h_daemon_fg_kill();
	h_daemon_fg();
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted lldb session never ran again");
	cr_assert_eq(h_cli_status_pid(id, "pid"), lldb, "another lldb");
	h_cli_exit(&r, 0, H_ARGS("exec", ids, "--", "target", "list"));
	cr_assert_not_null(strstr(r.out, "fix-loop"), "lldb's answer after "
	    "the adoption: %s", r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted lldb session "
	    "live after its stop");
}

/*
 * An lldb-server session is adopted with its server and lldb as they were:
 * the same server at the same port, lldb at its prompt and answering.
 */
Test(adopt, an_lldb_server_session_keeps_its_server_and_prompt)
{
	char ids[32], m[96];
	struct h_res r;
	long id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("DBGI_ADOPT_LLDBSRV", m, sizeof m);
	id = h_cli_launch(H_ARGS("--kind", "lldb-server", "--env", m, "--",
	    h_ctx_fixture("FIX_LOOP")));
	h_idstr(id, ids, sizeof ids);
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "lldb "
	    "of session %s never answered", ids);
	adopt_keeps_server(id, "lldb-server");
	h_cli_exit(&r, 0, H_ARGS("exec", ids, "--", "target", "list"));
	cr_assert_not_null(strstr(r.out, "fix-loop"), "lldb's answer after "
	    "the adoption: %s", r.out);
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("stop", ids));
	h_run_free(&r);
	cr_assert(h_marker_gone(m), "processes of the adopted lldb-server "
	    "session live after its stop");
}
