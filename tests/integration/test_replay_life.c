/*
 * How a recording's files live and are bundled (record/replay, issue
 * 37): its state files are there while it runs and go with its session;
 * its bundle ends QEMU even when gdb is stopped; a recording the
 * bundle's size bound would cut is left out whole, the manifest saying
 * why; an adopted recording keeps its snapshot.
 */
#include "harness.h"
#include "replay-check.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(replay_life, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* The pid of the test's daemon's process named comm, asserted to be one. */
static pid_t
rp_pid_of(const char *comm)
{
	pid_t	 p[H_MAXPIDS];
	char	 name[64];
	int	 i, n;

	n = h_marker_pids(H->marker, p, H_MAXPIDS);
	for (i = 0; i < n; i++) {
		h_pid_comm(p[i], name, sizeof(name));
		if (strcmp(name, comm) == 0)
			return p[i];
	}
	cr_assert_fail("no %s among the test daemon's processes", comm);
	return -1;
}

/* Whether the daemon no longer knows t's session (its status says so). */
static bool
rp_forgotten(void *arg)
{
	struct h_sess	*t = arg;
	char		 params[64];
	json_t		*rep;
	bool		 gone;

	snprintf(params, sizeof params, "{\"session\":%ld}", t->id);
	rep = h_conn_call(&t->c, "status", params, H_SESS_BOUND);
	gone = h_jstr(rep, "error.message") != NULL && strstr(h_jstr(rep,
	    "error.message"), "no session") != NULL;
	json_decref(rep);
	return gone;
}

/* Whether any of the session's recording files is in the state dir. */
static bool
rp_rr_files_left(long id)
{
	static const char *const ext[] = { "bin", "qcow2", "elf", NULL };
	char		 path[PATH_MAX];
	struct stat	 st;
	int		 i;

	for (i = 0; ext[i] != NULL; i++) {
		snprintf(path, sizeof path, "%s/sessions/%ld.rr.%s", H->state,
		    id, ext[i]);
		if (lstat(path, &st) == 0)
			return true;
	}
	return false;
}

/* Bundle t's session at the test's path name within bound_ms; its reply. */
static json_t *
rp_bundle(struct h_sess *t, const char *name, char *path, size_t len,
    int bound_ms)
{
	char	 params[2 * PATH_MAX];
	json_t	*rep;

	h_ctx_path(path, len, name);
	snprintf(params, sizeof params, "{\"session\":%ld,\"path\":\"%s\"}",
	    t->id, path);
	rep = h_conn_call(&t->c, "bundle", params, bound_ms);
	cr_assert_not_null(rep, "bundle of the recording session: no answer "
	    "within %d ms", bound_ms);
	cr_assert_not_null(h_jpath(rep, "result"), "bundle: %s",
	    h_sess_shown(rep));
	return rep;
}

/*
 * A recording's files in the state dir (its log, image and firmware's
 * copy) are there while it runs, and go with the session: with
 * DBGCTLD_KEEP_ENDED_SECONDS=0 a stopped recording leaves list at once.
 */
Test(replay_life, a_stopped_recording_is_forgotten_with_its_files)
{
	struct h_sess	 t;

	h_ctx_env_add("DBGCTLD_KEEP_ENDED_SECONDS=0");
	rp_launch(&t, NULL);
	cr_assert(rp_rr_files_left(t.id), "a running recording has no "
	    "files in %s/sessions", H->state);
	json_decref(h_sess_call(&t, "stop", NULL));
	cr_assert(h_wait_for(rp_forgotten, &t, H_WAIT_BOUND), "session "
	    "%s, a stopped recording, is still known keeping ended sessions "
	    "0 s", t.ids);
	cr_assert(!rp_rr_files_left(t.id), "the forgotten recording's "
	    "%s/sessions/%ld.rr.* files are still there", H->state, t.id);
	rp_assert_none_left("the forgotten recording");
	h_conn_close(&t.c);
}

/*
 * A bundle of a recording ends its QEMU even when gdb cannot let the
 * board go (stopped): it answers within its bounds, with the recording.
 */
Test(replay_life, a_recording_is_bundled_while_its_gdb_is_stopped)
{
	struct h_sess	 t;
	char		 path[PATH_MAX];
	pid_t		 gdb;
	json_t		*rep;

	rp_launch(&t, NULL);
	gdb = rp_pid_of("gdb-multiarch");
	cr_assert_eq(kill(gdb, SIGSTOP), 0);
	/* Gathering's 10 s, gdb's 10 s to let go, QEMU's end, the copies. */
	rep = rp_bundle(&t, "stuck", path, sizeof path, 60000 * H_SLOW);
	kill(gdb, SIGCONT);
	json_decref(rep);
	(void)rp_file_size(path, "replay.bin");
	(void)rp_file_size(path, "firmware.elf");
	h_sess_end(&t);
}

/*
 * A recording the bundle's size bound would cut is left out whole, the
 * manifest saying why, rather than bundled unreplayable.
 */
Test(replay_life, a_recording_over_the_bundle_bound_is_left_out_whole)
{
	struct h_sess	 t;
	char		 path[PATH_MAX], file[PATH_MAX + 32];
	struct stat	 st;
	json_t		*rep, *man, *miss;
	size_t		 i;
	bool		 said = false;

	/* Under the recording's image alone (256 KiB). */
	h_ctx_env_add("DBGCTLD_BUNDLE_MAX=131072");
	rp_launch(&t, NULL);
	rep = rp_bundle(&t, "cut", path, sizeof path, 60000 * H_SLOW);
	json_decref(rep);
	snprintf(file, sizeof file, "%s/replay.bin", path);
	cr_assert_neq(lstat(file, &st), 0, "%s is in the bundle, cut", file);
	snprintf(file, sizeof file, "%s/replay.qcow2", path);
	cr_assert_neq(lstat(file, &st), 0, "%s is in the bundle", file);
	snprintf(file, sizeof file, "%s/manifest.json", path);
	man = json_load_file(file, 0, NULL);
	cr_assert_not_null(man, "%s", file);
	json_array_foreach(json_object_get(man, "missing"), i, miss)
		if (h_jstr(miss, "why") != NULL && strstr(h_jstr(miss, "why"),
		    "whole or not at all") != NULL)
			said = true;
	cr_assert(said, "the manifest does not say why the recording is "
	    "left out: %s", h_sess_shown(man));
	json_decref(man);
	h_sess_end(&t);
}

/* The size of the session's recording image in the state dir. */
static long long
rp_image_size(long id)
{
	char		 path[PATH_MAX];
	struct stat	 st;

	snprintf(path, sizeof path, "%s/sessions/%ld.rr.qcow2", H->state, id);
	cr_assert_eq(lstat(path, &st), 0, "%s", path);
	return (long long)st.st_size;
}

/*
 * A recording adopted by the next daemon keeps its snapshot's image as
 * its QEMU wrote it (not made anew under it), and its bundle holds it.
 */
Test(replay_life, an_adopted_recording_keeps_its_snapshot)
{
	struct h_sess	 t;
	char		 path[PATH_MAX];
	long long	 before;
	json_t		*rep;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	rp_launch(&t, NULL);
	/* QEMU saved the snapshot at its start, before the banner. */
	before = rp_image_size(t.id);
	h_conn_close(&t.c);
	h_adopt_keeps_server(t.id, "recording board");
	cr_assert_eq(rp_image_size(t.id), before, "the adopted recording's "
	    "image is %lld bytes, %lld before its adoption",
	    rp_image_size(t.id), before);
	cr_assert_eq(h_conn_open(&t.c, H->sock), 0, "connect");
	rep = rp_bundle(&t, "adopted", path, sizeof path, 60000 * H_SLOW);
	json_decref(rep);
	cr_assert_eq(rp_file_size(path, "replay.qcow2"), before, "the "
	    "adopted recording's bundled image");
	(void)rp_file_size(path, "replay.bin");
	h_sess_end(&t);
}

/* The replies to ids 1 to n on c, in any order, into rep[id - 1]. */
static void
rp_replies(struct h_conn *c, json_t **rep, int n)
{
	json_t	*m;
	long	 id;
	int	 got = 0;

	while (got < n) {
		m = h_conn_recv(c, H_SESS_BOUND);
		cr_assert_not_null(m, "%d of %d replies came", got, n);
		id = h_jint(m, "id", 0);
		if (id < 1 || id > n || rep[id - 1] != NULL) {
			json_decref(m);
			continue;
		}
		rep[id - 1] = m;
		got++;
	}
}

/*
 * A recording's firmware (here 60 MB) is copied off the loop, the session
 * there meanwhile, starting: its name is taken, and a stop while it
 * copies ends it once the copy is done, with nothing started and its
 * files gone with it.
 */
Test(replay_life, a_stop_while_the_firmware_is_copied_leaves_nothing)
{
	const char	*fw = h_board_firmware("FIX_BOARD_AN385");
	char		 big[PATH_MAX], cmd[3 * PATH_MAX], req[4 * PATH_MAX];
	json_t		*rep[3] = { NULL, NULL, NULL };
	struct h_sess	 t;

	h_ctx_env_add("DBGCTLD_KEEP_ENDED_SECONDS=0");
	h_daemon_fg();
	h_ctx_path(big, sizeof big, "big.elf");
	snprintf(cmd, sizeof cmd, "cp %s %s && truncate -s 60M %s", fw, big,
	    big);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert_eq(h_conn_open(&t.c, H->sock), 0, "connect");
	/* In one write: the three are read while the copy runs. */
	snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"launch\",\"params\":{\"kind\":\"qemu\",\"machine\":"
	    "\"mps2-an385\",\"record\":true,\"name\":\"copying\",\"argv\":"
	    "[\"%s\"]}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"launch\","
	    "\"params\":{\"kind\":\"exec\",\"name\":\"copying\",\"argv\":"
	    "[\"true\"]}}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"stop\","
	    "\"params\":{\"session\":\"copying\",\"timeout\":2000}}\n", big);
	cr_assert_eq(h_conn_send(&t.c, req, strlen(req), H_WAIT_BOUND), 0);
	rp_replies(&t.c, rep, 3);
	cr_assert_str_eq(h_jstr(rep[1], "error.data.kind") ?: "(none)",
	    "name_in_use", "a second launch of the name: %s",
	    h_sess_shown(rep[1]));
	cr_assert_str_eq(h_jstr(rep[0], "error.data.kind") ?: "(none)",
	    "not_running", "the stopped launch: %s", h_sess_shown(rep[0]));
	cr_assert(strstr(h_jstr(rep[0], "error.message") ?: "",
	    "stopped while starting") != NULL, "%s", h_sess_shown(rep[0]));
	cr_assert_not_null(h_jpath(rep[2], "result"), "stop: %s",
	    h_sess_shown(rep[2]));
	t.id = h_jint(rep[0], "error.data.session", 0);
	cr_assert_gt(t.id, 0, "%s", h_sess_shown(rep[0]));
	cr_assert(h_wait_for(rp_forgotten, &t, H_WAIT_BOUND), "the stopped "
	    "session is still known keeping ended sessions 0 s");
	cr_assert(!rp_rr_files_left(t.id), "the stopped recording's "
	    "%s/sessions/%ld.rr.* files are still there", H->state, t.id);
	rp_assert_none_left("a stop while the firmware was copied");
	json_decref(rep[0]);
	json_decref(rep[1]);
	json_decref(rep[2]);
	h_conn_close(&t.c);
}
