/*
 * attach over ssh://, on a pty of the test's own: raw mode, the window
 * size and its changes, typed bytes, the detach key, and the terminal
 * restored when the ssh processes that carry the attach are killed.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(ssh_attach, .init = h_ctx_setup, .fini = h_ssh_teardown,
    .timeout = 120);

/* The detach key of attach (^\). */
#define KEY_DETACH	"\x1c"

/* What ssh_attach_children looks for: the client's pid. */
static bool
ssh_attach_is_ssh(pid_t pid, void *arg)
{
	char comm[64];

	if (h_pid_ppid(pid) != *(pid_t *)arg)
		return false;
	h_pid_comm(pid, comm, sizeof comm);
	return strcmp(comm, "ssh") == 0;
}

/*
 * The daemon, sshd, clients through it, and an exec session that prints
 * its window size at start, on SIGWINCH (which cuts a read short, so
 * the loop reads again), and each line typed at it.
 */
static void
ssh_attach_session(char *ids, size_t len)
{
	struct h_ssh *s;
	long id;

	h_daemon_fg();
	s = h_ssh_start(NULL);
	h_ssh_use(s);
	id = h_cli_launch_sh(NULL, "trap 'echo size=$(stty size)' WINCH; "
	    "echo start=$(stty size); while :; do read line && "
	    "echo got=$line; done");
	h_idstr(id, ids, len);
	h_cli_wait_log(ids, "start=", H_WAIT_BOUND);
}

/* Raw mode, the size and its changes, typed input, ^\ detaches and restores. */
Test(ssh_attach, raw_resize_type_detach)
{
	struct h_pty p;
	char ids[32];
	size_t off;

	ssh_attach_session(ids, sizeof ids);
	h_pty_open(&p, 37, 101);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	off = h_pty_expect(&p, 0, "size=37 101", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "attached over ssh");
	h_pty_winsize(&p, 45, 120);
	off = h_pty_expect(&p, off, "size=45 120", H_WAIT_BOUND);
	h_pty_type(&p, "typed-over-ssh\r", 15);
	off = h_pty_expect(&p, off, "got=typed-over-ssh", H_WAIT_BOUND);
	h_pty_type(&p, KEY_DETACH, 1);
	h_pty_expect_exit(&p, 0, H_WAIT_BOUND, "after ^\\ over ssh");
	h_pty_expect_restored(&p, "after ^\\ over ssh");
	h_pty_close(&p);
	h_cli_expect_state(strtol(ids, NULL, 10), "running", "after a detach "
	    "over ssh");
}

/* ssh killed mid-attach: the client says so, exits 3, the terminal is restored. */
Test(ssh_attach, ssh_killed_mid_attach_restores)
{
	struct h_pty p;
	char ids[32], ws[96];
	pid_t ssh[4];
	int n, i;

	ssh_attach_session(ids, sizeof ids);
	h_pty_open(&p, 30, 100);
	h_pty_spawn(&p, H_ARGS("attach", ids));
	h_pty_expect(&p, 0, "start=", H_WAIT_BOUND);
	h_pty_expect_raw(&p, H_WAIT_BOUND, "attached over ssh");
	n = h_pid_scan(ssh_attach_is_ssh, &p.pid, ssh, 4);
	cr_assert_eq(n, 2, "the attach (pid %d) has %d ssh processes, not its "
	    "two connections'", p.pid, n);
	for (i = 0; i < n; i++)
		kill(ssh[i], SIGKILL);
	cr_assert(h_pty_wait_exit(&p, H_WAIT_BOUND), "dbgctl %s: still "
	    "running after its ssh was killed; its terminal shows:\n%s", p.cmd,
	    h_pty_screen(&p));
	cr_assert(WIFEXITED(p.status) && WEXITSTATUS(p.status) == 3,
	    "dbgctl %s after ssh was killed: %s; its terminal shows:\n%s",
	    p.cmd, h_run_wstatus(p.status, ws, sizeof ws), h_pty_screen(&p));
	cr_assert(strstr(h_pty_screen(&p), "ssh was killed by signal 9") !=
	    NULL, "no word of ssh's death: %s", h_pty_screen(&p));
	h_pty_expect_restored(&p, "after ssh was killed mid-attach");
	h_pty_close(&p);
	h_cli_expect_state(strtol(ids, NULL, 10), "running", "after the "
	    "attach's ssh was killed");
}
