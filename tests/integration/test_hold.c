/*
 * Holds (issue 23): a held session outlives its lease's connection with
 * its target halted and ends, every process of it, when its time runs
 * out; a release keeps a session whose client lives and stops one whose
 * lease has ended; holds are bounded in number and total time; dbgctl
 * wait exits with the verdict that ended a session. Issue 32: a reset by
 * the lease's client puts a verdict-held session back in service; a
 * release stops a verdict-held session only when no lease holds it.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(hold, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* Bound for one reply (ms). */
#define HD_BOUND	(30000 * H_SLOW)

/* Launch params on connection c (kept open); the session's id. */
static long
hd_launch(struct h_conn *c, const char *params)
{
	json_t	*r;
	long	 id;

	r = h_conn_call(c, "launch", params, HD_BOUND);
	id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "launch %s: got %s", params, json_dumps(r,
	    JSON_COMPACT));
	json_decref(r);
	return id;
}

/* dbgctl hold ARGS... ID, asserted to exit want; its stdout (malloc'd). */
static char *
hd_hold(long id, int want, const char *a1, const char *a2)
{
	struct h_res	 r;
	char		 ids[32], *out;

	h_idstr(id, ids, sizeof(ids));
	if (a1 == NULL)
		h_cli(&r, H_ARGS("hold", ids));
	else if (a2 == NULL)
		h_cli(&r, H_ARGS("hold", a1, ids));
	else
		h_cli(&r, H_ARGS("hold", a1, a2, ids));
	cr_assert_eq(r.code, want, "dbgctl hold %s %s %s: exit %d, not %d "
	    "(%s%s)", a1 ? a1 : "", a2 ? a2 : "", ids, r.code, want, r.out,
	    r.err);
	out = strdup(want == 0 ? r.out : r.err);
	h_run_free(&r);
	return out;
}

/* Predicate: the hold of session *(long *)arg says its lease has ended. */
static bool
hd_lease_ended(void *arg)
{
	json_t	*st = h_cli_status(*(long *)arg);
	bool	 ended = json_is_true(h_jpath(st, "hold.lease_ended"));

	json_decref(st);
	return ended;
}

/*
 * Hold session id again, close its lease's connection c, and release it
 * once the daemon saw the lease end: asserted to stop it.
 */
static void
hd_release_after_lease(struct h_conn *c, long id)
{
	json_t *end;

	free(hd_hold(id, 0, "--ttl", "600"));
	h_conn_close(c);
	cr_assert(h_wait_for(hd_lease_ended, &id, HD_BOUND), "the daemon "
	    "never saw the lease end");
	free(hd_hold(id, 0, "--ttl", "0"));
	end = h_cli_wait_ended(id, HD_BOUND);
	cr_assert_not_null(end, "a released session whose lease had ended "
	    "runs on");
	json_decref(end);
}

/* The list's row of session id, as dbgctl list prints it (malloc'd). */
static char *
hd_list_row(long id)
{
	struct h_res	 r;
	char		 head[32], *line, *end, *row = NULL;

	cr_assert_eq(h_cli(&r, H_ARGS("list")), 0);
	snprintf(head, sizeof(head), "%ld ", id);
	for (line = r.out; line != NULL && *line != '\0'; line = end) {
		end = strchr(line, '\n');
		if (end != NULL)
			*end++ = '\0';
		if (strncmp(line, head, strlen(head)) == 0)
			row = strdup(line);
	}
	h_run_free(&r);
	cr_assert_not_null(row, "list has no row %ld", id);
	return row;
}

Test(hold, a_held_session_outlives_its_lease_and_ends_at_its_ttl)
{
	struct h_conn	 c;
	struct h_tracked tracked[4] = { 0 };
	char		 params[1024], *out, *row, left[256];
	json_t		*st, *end;
	double		 held, ended;
	long		 id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"lease\":true}",
	    h_ctx_fixture("FIX_SPINNER"));
	id = hd_launch(&c, params);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the spinner never ran");
	h_pid_track(&tracked[0], "gdb", h_cli_status_pid(id, "pid"));
	h_pid_track(&tracked[1], "the spinner", h_cli_status_pid(id,
	    "inferior_pid"));
	h_pid_track(&tracked[2], "the keeper", h_cli_status_pid(id,
	    "keeper_pid"));
	out = hd_hold(id, 0, "--ttl", "6");
	held = h_now();
	cr_assert_not_null(strstr(out, "hold: held, 6s left, by pid "), "%s",
	    out);
	free(out);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "target.state"), "stopped", "hold did "
	    "not halt the target: %s", json_dumps(st, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "hold.by.name"), "dbgctl");
	json_decref(st);
	row = hd_list_row(id);
	cr_assert_not_null(strstr(row, "held, "), "list: %s", row);
	free(row);

	/* The client goes: the hold, not the lease, decides now. */
	h_conn_close(&c);
	cr_assert(h_wait_for(hd_lease_ended, &id, HD_BOUND), "the daemon "
	    "never saw the lease end");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "running", "the lease's end "
	    "stopped a held session: %s", json_dumps(st, JSON_COMPACT));
	json_decref(st);
	cr_assert(!h_pid_tracked_gone(tracked), "a process of the held "
	    "session is gone");

	end = h_cli_wait_ended(id, HD_BOUND);
	ended = h_now();
	cr_assert_not_null(end, "the held session did not end at its ttl");
	json_decref(end);
	cr_assert_geq(ended - held, 5.0, "the session ended %.2f s after the "
	    "hold, before its 6 s", ended - held);
	cr_assert(h_wait_for(h_pid_tracked_gone, tracked, HD_BOUND),
	    "left after the hold ran out: %s", h_pid_tracked_left(tracked,
	    left, sizeof(left)));
	cr_assert(h_cli_log_has("1", "hold: its time ran out"), "the console "
	    "does not say why the session ended");
}

Test(hold, a_release_stops_only_a_session_whose_lease_has_ended)
{
	struct h_conn	 c;
	char		*out;
	json_t		*st;
	long		 id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	id = hd_launch(&c, "{\"kind\":\"exec\",\"argv\":[\"sleep\",\"1000\"],"
	    "\"lease\":true}");
	out = hd_hold(id, 0, "--note", "test_x failed");
	cr_assert_not_null(strstr(out, ": test_x failed"), "%s", out);
	free(out);
	out = hd_hold(id, 0, "--ttl", "0");
	cr_assert_str_eq(out, "released\n");
	free(out);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "running", "a release stopped "
	    "a session whose client lives: %s", json_dumps(st, JSON_COMPACT));
	cr_assert_null(h_jpath(st, "hold"));
	json_decref(st);

	hd_release_after_lease(&c, id);
}

Test(hold, holds_are_bounded_in_number_and_total_time)
{
	char	*out, *row;
	json_t	*st;
	long	 a, b, c3;

	h_ctx_env_add("DBGCTLD_HOLDS_MAX=2");
	h_ctx_env_add("DBGCTLD_HOLD_TOTAL=100");
	h_ctx_env_add("DBGCTLD_HOLD_TTL=42");
	h_daemon_fg();
	a = h_cli_launch_exec(NULL, H_ARGS("sleep", "1000"));
	b = h_cli_launch_exec(NULL, H_ARGS("sleep", "1000"));
	c3 = h_cli_launch_exec(NULL, H_ARGS("sleep", "1000"));
	/* Without --ttl, the daemon's default. */
	free(hd_hold(a, 0, NULL, NULL));
	st = h_cli_status(a);
	cr_assert(h_jint(st, "hold.left_ms", -1) > 40000 && h_jint(st,
	    "hold.left_ms", -1) <= 42000, "the default ttl is not 42 s: %s",
	    json_dumps(st, JSON_COMPACT));
	json_decref(st);
	row = hd_list_row(a);
	cr_assert_not_null(strstr(row, "held, 42s left"), "list: %s", row);
	free(row);
	free(hd_hold(b, 0, "--ttl", "30"));
	out = hd_hold(c3, 1, "--ttl", "10");
	cr_assert_not_null(strstr(out, "DBGCTLD_HOLDS_MAX"), "%s", out);
	free(out);
	/* 42 + 30 held: a's 80 would take the total to 110. */
	out = hd_hold(a, 1, "--ttl", "80");
	cr_assert_not_null(strstr(out, "DBGCTLD_HOLD_TOTAL"), "%s", out);
	free(out);
	free(hd_hold(a, 0, "--ttl", "70"));
	/* A released hold makes room. */
	free(hd_hold(b, 0, "--ttl", "0"));
	free(hd_hold(c3, 0, "--ttl", "10"));
	cr_assert(h_daemon_ping(), "the daemon serves on");
}

Test(hold, a_deadline_hold_lasts_the_default_ttl)
{
	char	 params[1024];
	json_t	*st, *end;
	long	 id;

	h_ctx_env_add("DBGCTLD_HOLD_TTL=3");
	h_daemon_fg();
	snprintf(params, sizeof(params), "--deadline=1500");
	id = h_cli_launch(H_ARGS(params, "--on-deadline", "hold", "-x", "run",
	    "--", h_ctx_fixture("FIX_SPINNER")));
	cr_assert(h_cli_wait_status(id, "hold", NULL, HD_BOUND), "the "
	    "deadline's verdict did not hold the session");
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "hold.by.verdict"), "deadline", "%s",
	    json_dumps(st, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "state"), "running");
	json_decref(st);
	end = h_cli_wait_ended(id, HD_BOUND);
	cr_assert_not_null(end, "the deadline's hold never ran out");
	cr_assert_str_eq(h_jstr(end, "exit.verdict") ?: "", "deadline");
	json_decref(end);
}

Test(hold, wait_exits_with_what_ended_the_session)
{
	struct h_res	 r;
	char		 ids[32];
	long		 id;

	h_daemon_fg();
	/* A program's own end: its status. */
	id = h_cli_launch_sh(NULL, "exit 3");
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("wait", ids)), 3, "wait: exit %d (%s)",
	    r.code, r.err);
	h_run_free(&r);

	/* A deadline's verdict: 6, and the verdict said. */
	id = h_cli_launch(H_ARGS("--kind", "exec", "--deadline", "500", "--",
	    "sleep", "1000"));
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("wait", ids)), 6, "wait: exit %d (%s)",
	    r.code, r.err);
	cr_assert_not_null(strstr(r.out, "verdict: deadline"), "%s", r.out);
	h_run_free(&r);

	/* Not ended within its timeout: 4. */
	id = h_cli_launch_exec(NULL, H_ARGS("sleep", "1000"));
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("wait", "--timeout", "300", ids)), 4,
	    "wait --timeout: exit %d (%s)", r.code, r.err);
	h_run_free(&r);

	/* A fault's verdict: 7, once the session has ended. */
	id = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	cr_assert(h_cli_wait_status(id, "verdict.kind", "fault", HD_BOUND),
	    "the fault gave no verdict");
	json_decref(h_cli_stop(id, NULL, NULL));
	h_idstr(id, ids, sizeof(ids));
	cr_assert_eq(h_cli(&r, H_ARGS("wait", ids)), 7, "wait: exit %d (%s)",
	    r.code, r.err);
	h_run_free(&r);
}

/* Launch the spinner under gdb on c, leased, held by its deadline's verdict. */
static long
hd_launch_held_spinner(struct h_conn *c)
{
	char	 params[1024];
	long	 id;

	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"lease\":true,\"deadline\":1500,"
	    "\"on_deadline\":\"hold\"}", h_ctx_fixture("FIX_SPINNER"));
	id = hd_launch(c, params);
	cr_assert(h_cli_wait_status(id, "hold.by.verdict", "deadline",
	    HD_BOUND), "the deadline's verdict did not hold the session");
	cr_assert(h_cli_wait_status(id, "target.stop.by", "verdict",
	    HD_BOUND), "the verdict did not halt the target");
	return id;
}

Test(hold, a_reset_by_its_lease_holder_puts_a_verdict_held_session_back)
{
	struct h_conn	 c;
	char		 params[256];
	json_t		*r, *st;
	long		 id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	id = hd_launch_held_spinner(&c);
	snprintf(params, sizeof(params), "{\"session\":%ld,\"timeout\":%d}",
	    id, HD_BOUND);
	r = h_conn_call(&c, "reset", params, HD_BOUND);
	cr_assert_not_null(h_jpath(r, "result"), "reset: %s", json_dumps(r,
	    JSON_COMPACT));
	json_decref(r);
	st = h_cli_status(id);
	cr_assert_null(h_jpath(st, "hold"), "the verdict's hold outlived its "
	    "lease holder's reset: %s", json_dumps(h_jpath(st, "hold"),
	    JSON_COMPACT));
	cr_assert_null(h_jpath(st, "verdict"), "the verdict outlived the "
	    "reset");
	cr_assert_str_eq(h_jstr(json_array_get(h_jpath(st, "verdicts"), 0),
	    "ended.by") ?: "", "reset",
	    "%s", json_dumps(h_jpath(st, "verdicts"), JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "state"), "running");
	json_decref(st);
	cr_assert(h_cli_wait_status(id, "target.state", "running", HD_BOUND),
	    "the target does not run after the reset");
	/* In service again: a new deadline is taken, and its verdict holds. */
	snprintf(params, sizeof(params), "{\"session\":%ld,\"ms\":1000}", id);
	r = h_conn_call(&c, "deadline", params, HD_BOUND);
	cr_assert_not_null(h_jpath(r, "result.deadline"), "deadline after the "
	    "reset: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	cr_assert(h_cli_wait_status(id, "verdict.kind", "deadline", HD_BOUND),
	    "the new deadline gave no verdict");
	cr_assert(h_cli_wait_status(id, "hold.by.verdict", "deadline",
	    HD_BOUND), "the new verdict did not hold the session");
	st = h_cli_status(id);
	cr_assert_eq(json_array_size(h_jpath(st, "verdicts")), 2, "%s",
	    json_dumps(h_jpath(st, "verdicts"), JSON_COMPACT));
	json_decref(st);
	h_conn_close(&c);
	json_decref(h_cli_stop(id, NULL, NULL));
}

Test(hold, a_verdict_hold_released_while_its_lease_lives_runs_on)
{
	struct h_conn	 c;
	struct h_res	 r;
	char		 ids[32], *out;
	json_t		*st;
	long		 id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	id = hd_launch_held_spinner(&c);
	h_idstr(id, ids, sizeof(ids));
	/* A reset by another client ends the verdict; the hold stays. */
	cr_assert_eq(h_cli(&r, H_ARGS("reset", ids)), 0, "reset: exit %d (%s)",
	    r.code, r.err);
	h_run_free(&r);
	st = h_cli_status(id);
	cr_assert_null(h_jpath(st, "verdict"));
	cr_assert_not_null(h_jpath(st, "hold"), "another client's reset let "
	    "go of the hold");
	json_decref(st);
	out = hd_hold(id, 0, "--ttl", "0");
	free(out);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "running", "a release stopped "
	    "a session its lease holds: %s", json_dumps(st, JSON_COMPACT));
	json_decref(st);
	h_conn_close(&c);
	json_decref(h_cli_stop(id, NULL, NULL));
}

Test(hold, a_verdict_hold_released_with_its_verdict_and_lease_stops_only_without_the_lease)
{
	struct h_conn	 c;
	json_t		*st;
	long		 id;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	id = hd_launch_held_spinner(&c);
	free(hd_hold(id, 0, "--ttl", "0"));
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "running", "a release stopped "
	    "a session its lease holds: %s", json_dumps(st, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "verdict.kind") ?: "", "deadline");
	json_decref(st);
	/* Held again, its lease ended: a release stops it. */
	hd_release_after_lease(&c, id);
}

/* Copy the file from to the new file to, executable. */
static void
hd_copy(const char *from, const char *to)
{
	char	 buf[65536];
	FILE	*in, *out;
	size_t	 n;

	in = fopen(from, "rb");
	cr_assert_not_null(in, "%s", from);
	out = fopen(to, "wb");
	cr_assert_not_null(out, "%s", to);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		cr_assert_eq(fwrite(buf, 1, n, out), n);
	fclose(in);
	cr_assert_eq(fclose(out), 0);
	cr_assert_eq(chmod(to, 0755), 0);
}

/*
 * A native reset whose new run gdb cannot start (the program is gone)
 * fails, and leaves the verdict and the hold it made as they were.
 */
Test(hold, a_reset_whose_run_fails_leaves_the_verdict_and_its_hold)
{
	struct h_conn	 c;
	char		 params[PATH_MAX + 256], prog[PATH_MAX];
	json_t		*r, *st;
	long		 id;

	h_daemon_fg();
	h_ctx_path(prog, sizeof prog, "spinner");
	hd_copy(h_ctx_fixture("FIX_SPINNER"), prog);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"lease\":true,\"deadline\":1500,"
	    "\"on_deadline\":\"hold\"}", prog);
	id = hd_launch(&c, params);
	cr_assert(h_cli_wait_status(id, "hold.by.verdict", "deadline",
	    HD_BOUND), "the deadline's verdict did not hold the session");
	cr_assert(h_cli_wait_status(id, "target.stop.by", "verdict",
	    HD_BOUND), "the verdict did not halt the target");
	cr_assert_eq(unlink(prog), 0);
	snprintf(params, sizeof(params), "{\"session\":%ld,\"timeout\":%d}",
	    id, HD_BOUND);
	r = h_conn_call(&c, "reset", params, HD_BOUND);
	cr_assert_not_null(h_jpath(r, "error"), "a reset of a program that is "
	    "gone: %s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "verdict.kind") ?: "", "deadline", "a "
	    "failed reset ended the verdict: %s", json_dumps(h_jpath(st,
	    "verdicts"), JSON_COMPACT));
	cr_assert_str_eq(h_jstr(st, "hold.by.verdict") ?: "", "deadline",
	    "a failed reset let go of the verdict's hold: %s", json_dumps(
	    h_jpath(st, "hold"), JSON_COMPACT));
	json_decref(st);
	h_conn_close(&c);
	json_decref(h_cli_stop(id, NULL, NULL));
}
