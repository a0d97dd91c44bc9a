/*
 * Who and when a new daemon adopts: a socket at a keeper's name that lies
 * or is another user's is never adopted; the daemon serves while it adopts
 * (a keeper that never hands over delays a ping not, a list until its
 * bound); a SIGTERM while it adopts still ends every session.
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

TestSuite(adopt_serve, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 150);

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
Test(adopt_serve, a_forged_or_foreign_keeper_socket_is_not_adopted)
{
	char forged[PATH_MAX + 32], foreign[PATH_MAX + 32], c;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int p[2], fd, st;
	pid_t forger;
	json_t *rows;

	cr_assert_eq(mkdir(H->dir, 0700) == 0 || errno == EEXIST, 1);
	h_adopt_keeper_sock(77, 0, forged, sizeof forged);
	h_adopt_keeper_sock(78, 0, foreign, sizeof foreign);
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
Test(adopt_serve, a_keeper_slow_to_hand_over_delays_a_ping_not)
{
	char path[PATH_MAX + 32], buf[16] = { 0 };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct pollfd pfd;
	json_t *rows;
	int l, c;

	cr_assert_eq(mkdir(H->dir, 0700) == 0 || errno == EEXIST, 1);
	h_adopt_keeper_sock(79, 0, path, sizeof path);
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

	h_adopt_keeper_sock(id, 0, path, sizeof path);
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
Test(adopt_serve, a_sigterm_while_adopting_ends_every_session)
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

