/*
 * Verdicts (issue 23): a deadline that runs out with no client connected
 * halts a spinning native program and the QEMU board and records where
 * every thread is; a silent program gets a silent verdict; a deadline
 * moved before it runs out fires at its new time; on_deadline hold keeps
 * the session with its target halted; bad params are refused.
 * Issue 32: a verdict ends the expect and wait that wait on its session
 * at once, with the verdict; a reset ends a fault's verdict, which the
 * history keeps.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

TestSuite(verdict, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* Bound for one reply (ms). */
#define VD_BOUND	(30000 * H_SLOW)

/* Wait until the session has a verdict; the status. */
static json_t *
vd_wait_verdict(long id, int bound_ms)
{
	cr_assert(h_cli_wait_status(id, "verdict", NULL, bound_ms), "session "
	    "%ld: no verdict within %d ms", id, bound_ms);
	return h_cli_status(id);
}

/* Whether a frame of some thread of the verdict is func in file. */
static bool
vd_has_frame(json_t *v, const char *func, const char *file)
{
	json_t		*t, *f;
	size_t		 i, k;
	const char	*fn, *fl;

	json_array_foreach(json_object_get(v, "threads"), i, t)
		json_array_foreach(json_object_get(t, "frames"), k, f) {
			fn = json_string_value(json_object_get(f, "func"));
			fl = json_string_value(json_object_get(f, "file"));
			if (fn != NULL && strcmp(fn, func) == 0 && (file == NULL ||
			    (fl != NULL && strstr(fl, file) != NULL)))
				return true;
		}
	return false;
}

/* A realtime clock in seconds, as the verdict's time is. */
static double
vd_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

Test(verdict, a_spinning_program_gets_a_deadline_verdict_naming_main)
{
	char	 params[1024];
	json_t	*st, *v, *end;
	double	 t0, t1, at;
	pid_t	 pid, inferior;
	long	 id;

	h_daemon_fg();
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"deadline\":2500}",
	    h_ctx_fixture("FIX_SPINNER"));
	t0 = vd_realtime();
	id = h_conn_launch_once(params, VD_BOUND);
	t1 = vd_realtime();
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the spinner never ran");
	pid = h_cli_status_pid(id, "pid");
	inferior = h_cli_status_pid(id, "inferior_pid");
	st = vd_wait_verdict(id, VD_BOUND);
	v = h_jpath(st, "verdict");
	cr_assert_str_eq(h_jstr(v, "kind"), "deadline", "%s", json_dumps(v,
	    JSON_COMPACT));
	at = json_real_value(json_object_get(v, "time"));
	cr_assert(at >= t0 + 2.5 && at <= t1 + 2.5 + 1.0, "the verdict came "
	    "%.3f s after the launch, not within 1 s of its 2.5 s deadline",
	    at - t0);
	cr_assert(vd_has_frame(v, "main", "spinner.c"), "no thread of the "
	    "verdict is in the spinner's main: %s", json_dumps(v,
	    JSON_COMPACT));
	cr_assert_str_eq(h_jstr(v, "target_before.state"), "running");
	cr_assert_not_null(h_jpath(v, "registers"), "no registers: %s",
	    json_dumps(v, JSON_COMPACT));
	cr_assert_not_null(h_jpath(v, "streams.console.offset"));
	json_decref(st);
	/* on_deadline stop (the default): then the session ends, all of it. */
	end = h_cli_wait_ended(id, VD_BOUND);
	cr_assert_not_null(end, "session %ld did not end after its verdict",
	    id);
	cr_assert_str_eq(h_jstr(end, "exit.verdict") ? h_jstr(end,
	    "exit.verdict") : "", "deadline", "the exit record: %s",
	    json_dumps(end, JSON_COMPACT));
	json_decref(end);
	cr_assert(h_pid_gone(pid), "gdb %d outlived its session", pid);
	cr_assert(h_pid_gone(inferior), "the spinner %d outlived its session",
	    inferior);
}

Test(verdict, a_silent_program_gets_a_silent_verdict)
{
	json_t	*st, *v, *p, *end;
	size_t	 i;
	bool	 sleeping = false;
	long	 id;

	h_daemon_fg();
	id = h_conn_launch_once("{\"kind\":\"exec\",\"argv\":[\"sh\",\"-c\","
	    "\"echo said; exec sleep 1000\"],\"silence_timeout\":1000}", VD_BOUND);
	st = vd_wait_verdict(id, VD_BOUND);
	v = h_jpath(st, "verdict");
	cr_assert_str_eq(h_jstr(v, "kind"), "silent", "%s", json_dumps(v,
	    JSON_COMPACT));
	cr_assert_geq(h_jint(v, "streams.console.idle_ms", -1), 1000,
	    "%s", json_dumps(v, JSON_COMPACT));
	cr_assert_geq(h_jint(v, "streams.console.offset", -1), 5,
	    "the console's offset is past \"said\\r\\n\": %s", json_dumps(v,
	    JSON_COMPACT));
	cr_assert_not_null(strstr(h_jstr(v, "console_tail") ?: "", "said"),
	    "the console's last lines: %s", json_dumps(v, JSON_COMPACT));
	json_array_foreach(json_object_get(v, "processes"), i, p)
		sleeping = sleeping || strcmp(h_jstr(p, "name") ?: "",
		    "sleep") == 0;
	cr_assert(sleeping, "the processes name no sleep: %s", json_dumps(v,
	    JSON_COMPACT));
	cr_assert_null(h_jpath(v, "threads"), "an exec session has no "
	    "threads to list");
	json_decref(st);
	end = h_cli_wait_ended(id, VD_BOUND);
	cr_assert_not_null(end);
	cr_assert_str_eq(h_jstr(end, "exit.verdict") ?: "", "silent");
	json_decref(end);
}

Test(verdict, a_deadline_moved_before_it_runs_out_fires_at_its_new_time)
{
	struct h_res	 r;
	char		 ids[32];
	json_t		*st;
	double		 moved, at, until;
	long		 id;

	h_daemon_fg();
	id = h_conn_launch_once("{\"kind\":\"exec\",\"argv\":[\"sleep\",\"1000\"],"
	    "\"deadline\":1500}", VD_BOUND);
	h_idstr(id, ids, sizeof(ids));
	moved = vd_realtime();
	cr_assert_eq(h_cli(&r, H_ARGS("deadline", ids, "4000")), 0,
	    "dbgctl deadline %s 4000: exit %d (%s)", ids, r.code, r.err);
	cr_assert_not_null(strstr(r.out, "deadline: in 4.0 s"), "%s", r.out);
	h_run_free(&r);
	/* Past the first deadline, and a second more: still no verdict. */
	until = vd_realtime() + 2.5;
	while (vd_realtime() < until) {
		st = h_cli_status(id);
		cr_assert_null(h_jpath(st, "verdict"), "the moved deadline "
		    "fired at its first time: %s", json_dumps(st,
		    JSON_COMPACT));
		cr_assert_not_null(h_jpath(st, "deadline.in_ms"));
		json_decref(st);
		h_nap(100);
	}
	st = vd_wait_verdict(id, VD_BOUND);
	at = json_real_value(json_object_get(h_jpath(st, "verdict"), "time"));
	cr_assert(at >= moved + 4.0, "the verdict came %.3f s after the move, "
	    "before its 4 s", at - moved);
	json_decref(st);

	/* Cleared, a deadline never fires; the status has none. */
	id = h_conn_launch_once("{\"kind\":\"exec\",\"argv\":[\"sleep\",\"1000\"],"
	    "\"deadline\":1000}", VD_BOUND);
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("deadline", ids, "off")), 0);
	cr_assert_str_eq(r.out, "no deadline\n");
	h_run_free(&r);
	until = vd_realtime() + 2.0;
	while (vd_realtime() < until) {
		st = h_cli_status(id);
		cr_assert_null(h_jpath(st, "verdict"), "a cleared deadline "
		    "fired");
		cr_assert_null(h_jpath(st, "deadline"));
		json_decref(st);
		h_nap(100);
	}
}

Test(verdict, hold_keeps_the_session_with_its_target_halted)
{
	char	 params[1024], ids[32];
	json_t	*st;
	long	 id;

	h_daemon_fg();
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"deadline\":2500,\"on_deadline\":"
	    "\"hold\"}", h_ctx_fixture("FIX_SPINNER"));
	id = h_conn_launch_once(params, VD_BOUND);
	h_idstr(id, ids, sizeof(ids));
	st = vd_wait_verdict(id, VD_BOUND);
	json_decref(st);
	cr_assert(h_cli_wait_status(id, "target.stop.by", "verdict", H_WAIT_BOUND),
	    "the target's stop is not the verdict's");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "running", "a held session "
	    "ended: %s", json_dumps(st, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "target.state"), "stopped");
	cr_assert(!h_pid_gone(h_cli_status_pid(id, "inferior_pid")),
	    "the held program is gone");
	json_decref(st);
	json_decref(h_cli_stop(id, NULL, NULL));
}

Test(verdict, the_board_in_its_loop_gets_a_deadline_verdict_naming_main)
{
	const char	*fw = h_board_firmware("FIX_BOARD");
	char		 params[1024];
	json_t		*st, *end;
	long		 id;

	h_daemon_fg();
	snprintf(params, sizeof(params), "{\"kind\":\"qemu\",\"machine\":"
	    "\"lm3s6965evb\",\"argv\":[\"%s\"],\"deadline\":3000}", fw);
	id = h_conn_launch_once(params, VD_BOUND);
	st = vd_wait_verdict(id, VD_BOUND);
	cr_assert_str_eq(h_jstr(st, "verdict.kind"), "deadline");
	cr_assert(vd_has_frame(h_jpath(st, "verdict"), "main", "board.c"),
	    "the board's verdict is not in its main: %s", json_dumps(
	    h_jpath(st, "verdict"), JSON_COMPACT));
	cr_assert_not_null(h_jpath(st, "verdict.registers.pc"), "no pc: %s",
	    json_dumps(h_jpath(st, "verdict"), JSON_COMPACT));
	json_decref(st);
	end = h_cli_wait_ended(id, VD_BOUND);
	cr_assert_not_null(end, "the board's session did not end");
	json_decref(end);
}

Test(verdict, bad_params_are_refused)
{
	struct h_conn	 c;
	struct h_res	 r;
	json_t		*reply;
	long		 id;
	char		 ids[32], params[128];

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	reply = h_conn_call(&c, "launch", "{\"kind\":\"exec\",\"argv\":"
	    "[\"true\"],\"on_deadline\":\"later\"}", VD_BOUND);
	cr_assert_str_eq(h_jkind(reply), "invalid_params", "%s",
	    json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	cr_assert_eq(h_cli(&r, H_ARGS("launch", "--on-deadline", "later",
	    "--", "true")), 2, "--on-deadline later: exit %d", r.code);
	h_run_free(&r);
	id = h_conn_launch_once("{\"kind\":\"exec\",\"argv\":[\"true\"]}", VD_BOUND);
	json_decref(h_cli_wait_ended(id, VD_BOUND));
	snprintf(params, sizeof(params), "{\"session\":%ld,\"ms\":1000}", id);
	reply = h_conn_call(&c, "deadline", params, VD_BOUND);
	cr_assert_str_eq(h_jkind(reply), "not_running", "%s",
	    json_dumps(reply, JSON_COMPACT));
	json_decref(reply);
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("deadline", ids, "soon")), 2);
	h_run_free(&r);
	h_conn_close(&c);
	cr_assert(h_daemon_ping(), "the daemon serves on");
}

/* Send method with params on c as request id, without reading its reply. */
static void
vd_send(struct h_conn *c, long id, const char *method, const char *params)
{
	char line[1024];

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"%s\",\"params\":%s}\n", id, method, params);
	cr_assert_eq(h_conn_send(c, line, strlen(line), VD_BOUND), 0);
}

/* The replies to requests 1..n on c (any order), within bound_ms each. */
static void
vd_replies(struct h_conn *c, json_t **out, size_t n, int bound_ms)
{
	json_t		*j;
	size_t		 got = 0;
	long long	 id;

	while (got < n) {
		j = h_conn_recv(c, bound_ms);
		cr_assert_not_null(j, "%zu of %zu replies came within %d ms",
		    got, n, bound_ms);
		id = json_integer_value(json_object_get(j, "id"));
		if (id < 1 || id > (long long)n || out[id - 1] != NULL) {
			json_decref(j);
			continue;
		}
		out[id - 1] = j;
		got++;
	}
}

/* Assert reply is the error of a verdict of kind, naming the session. */
static void
vd_assert_verdict_error(json_t *reply, const char *kind, long id)
{
	cr_assert_str_eq(h_jkind(reply) ?: "", "verdict", "not ended by the "
	    "verdict: %s", json_dumps(reply, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(reply, "error.data.verdict.kind") ?: "", kind,
	    "%s", json_dumps(reply, JSON_COMPACT));
	cr_assert_eq(h_jint(reply, "error.data.session", -1), id);
}

Test(verdict, a_hold_verdict_ends_a_waiting_expect_and_wait_at_once)
{
	struct h_conn	 c;
	struct h_res	 r;
	json_t		*rep[2] = { NULL, NULL }, *st;
	char		 params[256], ids[32];
	double		 t0, took;
	long		 id;

	h_daemon_fg();
	id = h_conn_launch_once("{\"kind\":\"exec\",\"argv\":[\"sh\",\"-c\","
	    "\"echo said-before; exec sleep 1000\"],\"deadline\":2000,"
	    "\"on_deadline\":\"hold\"}", VD_BOUND);
	h_idstr(id, ids, sizeof(ids));
	h_cli_wait_log(ids, "said-before", VD_BOUND);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	t0 = h_now();
	/* An expect that would wait 60 s, and a wait for the end: both pending. */
	snprintf(params, sizeof(params), "{\"session\":%ld,\"patterns\":"
	    "\"never-said\",\"from\":0,\"timeout\":60000}", id);
	vd_send(&c, 1, "expect", params);
	snprintf(params, sizeof(params), "{\"session\":%ld}", id);
	vd_send(&c, 2, "wait", params);
	vd_replies(&c, rep, 2, VD_BOUND);
	took = h_now() - t0;
	cr_assert_lt(took, 20.0, "the waits ended %.1f s after they began, "
	    "not at the 2 s deadline's verdict", took);
	vd_assert_verdict_error(rep[0], "deadline", id);
	cr_assert_not_null(strstr(h_jstr(rep[0], "error.data.got") ?: "",
	    "said-before"), "the expect's error has not what came: %s",
	    json_dumps(rep[0], JSON_COMPACT));
	vd_assert_verdict_error(rep[1], "deadline", id);
	json_decref(rep[0]);
	json_decref(rep[1]);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "running", "the held session "
	    "ended: %s", json_dumps(st, JSON_COMPACT));
	cr_assert_not_null(h_jpath(st, "hold"));
	json_decref(st);
	/* dbgctl wait on a held session: at once, 6, with the verdict. */
	cr_assert_eq(h_cli(&r, H_ARGS("wait", ids)), 6, "wait: exit %d (%s)",
	    r.code, r.err);
	cr_assert_not_null(strstr(r.out, "verdict: deadline"), "%s", r.out);
	h_run_free(&r);
	/* A hold a client sets since is waited out, as any other. */
	cr_assert_eq(h_cli(&r, H_ARGS("hold", "--ttl", "60", ids)), 0);
	h_run_free(&r);
	cr_assert_eq(h_cli(&r, H_ARGS("wait", "--timeout", "500", ids)), 4,
	    "wait under a client's hold: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	h_conn_close(&c);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/* Bytes each write of the test below sends, and how many writes. */
#define VD_CHUNK	(3 * 87381)
#define VD_WRITES	32

/*
 * Send a write of VD_CHUNK bytes to session id's target on c, as request
 * rid, without reading its reply.
 */
static void
vd_send_chunk(struct h_conn *c, long rid, long id)
{
	char	*line, *p;
	size_t	 i, len = VD_CHUNK / 3 * 4 + 256;

	line = malloc(len);
	cr_assert_not_null(line);
	p = line + snprintf(line, len, "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"write\",\"params\":{\"session\":%ld,\"data\":\"",
	    rid, id);
	for (i = 0; i < VD_CHUNK / 3; i++, p += 4)
		memcpy(p, "QUFB", 4);
	p += snprintf(p, len - (size_t)(p - line), "\"}}\n");
	cr_assert_eq(h_conn_send(c, line, (size_t)(p - line), VD_BOUND), 0);
	free(line);
}

/*
 * Once a verdict holds the session, a wait_target for a record past the
 * last, a wait_fault and a write that must wait for room are each ended
 * at once with the verdict, not at their own time (or never).
 */
Test(verdict, wait_target_wait_fault_and_write_on_a_held_session_end_at_once)
{
	struct h_conn	 c;
	json_t		*rep[2 + VD_WRITES] = { NULL }, *st;
	char		 params[1024];
	double		 t0, took;
	size_t		 i, written = 0, ended = 0;
	long		 id, seq;

	h_daemon_fg();
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"transport\":true,\"commands\":[\"run\"],\"deadline\":1500,"
	    "\"on_deadline\":\"hold\"}", h_ctx_fixture("FIX_SPINNER"));
	id = h_conn_launch_once(params, VD_BOUND);
	cr_assert(h_cli_wait_status(id, "hold.by.verdict", "deadline",
	    VD_BOUND), "the deadline's verdict did not hold the session");
	cr_assert(h_cli_wait_status(id, "target.stop.by", "verdict",
	    VD_BOUND), "the verdict did not halt the target");
	st = h_cli_status(id);
	seq = (long)h_jint(st, "target.seq", -1);
	cr_assert_geq(seq, 0, "no target record: %s", json_dumps(st,
	    JSON_COMPACT));
	json_decref(st);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	t0 = h_now();
	snprintf(params, sizeof(params), "{\"session\":%ld,\"after\":%ld,"
	    "\"timeout\":60000}", id, seq);
	vd_send(&c, 1, "wait_target", params);
	snprintf(params, sizeof(params), "{\"session\":%ld,\"timeout\":60000}",
	    id);
	vd_send(&c, 2, "wait_fault", params);
	/* The halted target reads nothing: past 1 MiB queued, writes wait. */
	for (i = 0; i < VD_WRITES; i++)
		vd_send_chunk(&c, 3 + (long)i, id);
	vd_replies(&c, rep, 2 + VD_WRITES, VD_BOUND);
	took = h_now() - t0;
	cr_assert_lt(took, 20.0, "the calls ended %.1f s after they began, "
	    "not at once", took);
	vd_assert_verdict_error(rep[0], "deadline", id);
	vd_assert_verdict_error(rep[1], "deadline", id);
	for (i = 2; i < 2 + VD_WRITES; i++) {
		if (h_jint(rep[i], "result.written", -1) == VD_CHUNK)
			written++;
		else {
			vd_assert_verdict_error(rep[i], "deadline", id);
			ended++;
		}
	}
	cr_assert_gt(ended, 0, "no write waited: %zu written", written);
	for (i = 0; i < 2 + VD_WRITES; i++)
		json_decref(rep[i]);
	h_conn_close(&c);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/*
 * An expect of session id for what never comes, which its deadline
 * verdict must end: the reply, asserted to be the verdict's error.
 */
static json_t *
vd_expect_at_deadline(long id)
{
	struct h_conn	 c;
	json_t		*rep[1] = { NULL };
	char		 params[256];

	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(params, sizeof(params), "{\"session\":%ld,\"patterns\":"
	    "\"never-said\",\"timeout\":60000}", id);
	vd_send(&c, 1, "expect", params);
	vd_replies(&c, rep, 1, VD_BOUND);
	vd_assert_verdict_error(rep[0], "deadline", id);
	h_conn_close(&c);
	return rep[0];
}

Test(verdict, a_stop_verdict_ends_a_waiting_expect_with_the_verdict)
{
	long	id;

	h_daemon_fg();
	id = h_conn_launch_once("{\"kind\":\"exec\",\"argv\":[\"sleep\","
	    "\"1000\"],\"deadline\":1500}", VD_BOUND);
	json_decref(vd_expect_at_deadline(id));
	json_decref(h_cli_wait_ended(id, VD_BOUND));
}

/*
 * With artifacts, the waiting expect ends once the verdict's automatic
 * bundle is on disk, and its error names the bundle: what a rig does on
 * the error (reset, stop) cannot change the evidence.
 */
Test(verdict, a_verdict_ends_a_waiting_expect_after_its_bundle_is_written)
{
	json_t		*rep;
	char		 params[PATH_MAX + 256], art[PATH_MAX], manifest[PATH_MAX];
	const char	*path;
	long		 id;

	h_daemon_fg();
	h_ctx_path(art, sizeof art, "art");
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"deadline\":2000,\"artifacts\":\"%s\"}",
	    h_ctx_fixture("FIX_SPINNER"), art);
	id = h_conn_launch_once(params, VD_BOUND);
	rep = vd_expect_at_deadline(id);
	path = h_jstr(rep, "error.data.bundle.path");
	cr_assert_not_null(path, "the verdict error names no bundle: %s",
	    h_jstr(rep, "error.message"));
	snprintf(manifest, sizeof manifest, "%s/manifest.json", path);
	cr_assert_eq(access(manifest, F_OK), 0, "%s is not there when the "
	    "expect ends", manifest);
	json_decref(rep);
	json_decref(h_cli_wait_ended(id, VD_BOUND));
}

/*
 * The daemon, a connection c subscribed to it (no output), and a spinner
 * launched with artifacts and a 1.5 s deadline whose verdict does
 * on_deadline ("stop" or "hold"): its id.
 */
static long
vd_spinner_subscribed(struct h_conn *c, const char *on_deadline)
{
	char	params[PATH_MAX + 256], art[PATH_MAX];

	h_daemon_fg();
	h_ctx_path(art, sizeof art, "art");
	cr_assert_eq(h_conn_open(c, H->sock), 0);
	json_decref(h_conn_call(c, "subscribe", "{\"output\":false}",
	    VD_BOUND));
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"deadline\":1500,\"on_deadline\":\"%s\","
	    "\"artifacts\":\"%s\"}", h_ctx_fixture("FIX_SPINNER"), on_deadline,
	    art);
	return h_conn_launch_once(params, VD_BOUND);
}

/*
 * An expect sent as soon as a hold verdict is told, while its automatic
 * bundle is still being written, waits for the bundle: its error comes
 * after the session.bundle notification, the bundle on disk.
 */
Test(verdict, an_expect_sent_before_a_hold_verdicts_bundle_is_written_waits_for_it)
{
	struct h_conn	 c;
	json_t		*j, *reply = NULL;
	char		 params[256], manifest[PATH_MAX];
	const char	*m, *path;
	bool		 bundled = false;
	long		 id;

	id = vd_spinner_subscribed(&c, "hold");
	cr_assert(h_conn_wait_note(&c, "session.verdict", "params.verdict.kind",
	    "deadline", VD_BOUND), "no session.verdict notification");
	/* At once: the bundle (its core, from gcore) takes a while yet. */
	snprintf(params, sizeof(params), "{\"session\":%ld,\"patterns\":"
	    "\"never-said\",\"timeout\":60000}", id);
	vd_send(&c, 1, "expect", params);
	while (reply == NULL) {
		j = h_conn_recv(&c, VD_BOUND);
		cr_assert_not_null(j, "the expect was not answered");
		m = h_jstr(j, "method");
		if (m != NULL && strcmp(m, "session.bundle") == 0)
			bundled = true;
		else if (h_jint(j, "id", -1) == 1) {
			reply = j;
			break;
		}
		json_decref(j);
	}
	cr_assert(bundled, "the expect ended before the bundle was written: "
	    "%s", h_jstr(reply, "error.message") ?: "(no error)");
	vd_assert_verdict_error(reply, "deadline", id);
	path = h_jstr(reply, "error.data.bundle.path");
	cr_assert_not_null(path, "the verdict error names no bundle: %s",
	    h_jstr(reply, "error.message"));
	snprintf(manifest, sizeof manifest, "%s/manifest.json", path);
	cr_assert_eq(access(manifest, F_OK), 0, "%s is not there when the "
	    "expect ends", manifest);
	json_decref(reply);
	h_conn_close(&c);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/*
 * A reset sent as soon as a verdict that stops the session is told, while
 * its automatic bundle is still being written, does not end the verdict:
 * the expect waiting on the session ends with it, and the exit record
 * names it.
 */
Test(verdict, a_reset_during_a_stop_verdicts_bundle_leaves_the_verdict)
{
	struct h_conn	 c;
	json_t		*rep[2] = { NULL, NULL }, *end;
	char		 params[256];
	long		 id;

	id = vd_spinner_subscribed(&c, "stop");
	snprintf(params, sizeof(params), "{\"session\":%ld,\"patterns\":"
	    "\"never-said\",\"timeout\":60000}", id);
	vd_send(&c, 1, "expect", params);
	cr_assert(h_conn_wait_note(&c, "session.verdict", "params.verdict.kind",
	    "deadline", VD_BOUND), "no session.verdict notification");
	/* At once: the bundle (its core, from gcore) takes a while yet. */
	snprintf(params, sizeof(params), "{\"session\":%ld}", id);
	vd_send(&c, 2, "reset", params);
	vd_replies(&c, rep, 2, VD_BOUND);
	vd_assert_verdict_error(rep[0], "deadline", id);
	json_decref(rep[0]);
	json_decref(rep[1]);
	h_conn_close(&c);
	end = h_cli_wait_ended(id, VD_BOUND);
	cr_assert_not_null(end, "the session was not stopped after its verdict");
	cr_assert_str_eq(h_jstr(end, "exit.verdict") ?: "", "deadline",
	    "the exit record lost its verdict: %s", json_dumps(h_jpath(end,
	    "exit"), JSON_COMPACT));
	json_decref(end);
}

Test(verdict, a_reset_ends_the_fault_verdict_and_the_history_keeps_it)
{
	struct h_conn	 c;
	json_t		*r, *st, *end, *old;
	char		 params[1024];
	long		 id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"]}", h_ctx_fixture("FIX_FAULT"));
	r = h_conn_call(&c, "launch", params, VD_BOUND);
	id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "%s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	cr_assert(h_cli_wait_status(id, "verdict.kind", "fault", VD_BOUND),
	    "the fault gave no verdict");
	snprintf(params, sizeof(params), "{\"session\":%ld,\"halt\":true,"
	    "\"timeout\":%d}", id, VD_BOUND);
	r = h_conn_call(&c, "reset", params, VD_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.fault_cleared")), "%s",
	    json_dumps(r, JSON_COMPACT));
	json_decref(r);
	st = h_cli_status(id);
	cr_assert_null(h_jpath(st, "fault"));
	cr_assert_null(h_jpath(st, "verdict"), "the fault's verdict outlived "
	    "the reset: %s", json_dumps(h_jpath(st, "verdict"), JSON_COMPACT));
	cr_assert_eq(json_array_size(h_jpath(st, "verdicts")), 1, "%s",
	    json_dumps(st, JSON_COMPACT));
	old = json_array_get(h_jpath(st, "verdicts"), 0);
	cr_assert_str_eq(h_jstr(old, "kind") ?: "", "fault");
	cr_assert_str_eq(h_jstr(old, "ended.by") ?: "", "reset", "%s",
	    json_dumps(old, JSON_COMPACT));
	cr_assert_not_null(h_jpath(old, "fault.seq"), "the history's verdict "
	    "lost its fault record");
	json_decref(st);
	/* The session's end names no verdict: its program's own, or stop's. */
	end = h_cli_stop(id, NULL, NULL);
	cr_assert_null(h_jpath(end, "exit.verdict"), "%s", json_dumps(end,
	    JSON_COMPACT));
	json_decref(end);
	h_conn_close(&c);
}
