/*
 * Bundles (issue 23): a bundle holds every file its manifest names and,
 * of a native program, a core gdb loads; --tar writes one archive; an
 * ended session's bundle has what is left; bad paths are refused; a
 * daemon SIGKILLed mid-bundle leaves no half bundle after the next start;
 * launch --artifacts writes a bundle on its own at a deadline verdict, a
 * fault and a lease's end, before the teardown. A board's core is
 * test_bundle_core.c's.
 */
#include "harness.h"
#include "bundle-check.h"

#include <criterion/criterion.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(bundle, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/* gdb -batch loads the core with the program: its backtrace holds func. */
static void
bd_core_loads(const char *prog, const char *dir, const char *func)
{
	char		 core[PATH_MAX], gdb[PATH_MAX];
	struct h_res	 r;

	snprintf(core, sizeof core, "%s/core", dir);
	cr_assert_not_null(h_which("gdb", gdb, sizeof gdb), "no gdb");
	h_run(&r, BD_BOUND, H_ARGS(gdb, "-nx", "-batch", "-ex", "bt", prog,
	    core));
	cr_assert(strstr(r.out, func) != NULL, "gdb's bt of %s does not name "
	    "%s: %s %s", core, func, r.out, r.err);
	h_run_free(&r);
}

/* The bundle's MI transcript has a line starting dir that holds text. */
static void
bd_mi_has(const char *dir, const char *way, const char *text)
{
	char	 path[PATH_MAX + 32], *log, *line;
	bool	 found = false;

	snprintf(path, sizeof path, "%s/mi.log", dir);
	cr_assert_not_null(log = h_read_file(path, NULL), "no %s", path);
	for (line = strtok(log, "\n"); line != NULL && !found;
	    line = strtok(NULL, "\n"))
		found = strncmp(line, way, 2) == 0 && strstr(line, text) != NULL;
	free(log);
	cr_assert(found, "%s has no line \"%s...%s\"", path, way, text);
}

Test(bundle, a_native_bundle_holds_every_file_it_names_and_a_core_gdb_loads)
{
	char		 out[PATH_MAX], id[32];
	struct h_res	 rr;
	json_t		*r, *m;
	long		 sid;

	h_daemon_fg();
	sid = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_LOOP")));
	/* Running is not yet in main (the loader runs first): its own words are. */
	h_cli_wait_log(h_idstr(sid, id, sizeof id), "looping", H_WAIT_BOUND);
	bd_path(out, sizeof out, "b1");
	r = h_cli_json(H_ARGS("bundle", h_idstr(sid, id, sizeof id), out));
	cr_assert_str_eq(h_jstr(r, "path"), out);
	cr_assert_str_eq(h_jstr(r, "core") ? h_jstr(r, "core") : "", "core",
	    "no core: %s", json_dumps(r, JSON_COMPACT));
	m = bd_check(out);
	cr_assert_str_eq(h_jstr(m, "reason"), "asked");
	cr_assert_str_eq(h_jstr(m, "core"), "core");
	cr_assert(bd_names(m, "backtrace.txt") && bd_names(m, "registers.txt") &&
	    bd_names(m, "console.log") && bd_names(m, "mi.log"), "files: %s",
	    json_dumps(json_object_get(m, "files"), JSON_COMPACT));
	cr_assert_not_null(h_jstr(m, "versions.gdb"), "no gdb version");
	cr_assert_not_null(h_jstr(m, "versions.dbgctl"));
	cr_assert_eq(h_jint(m, "session.id", -1), sid);
	bd_core_loads(h_ctx_fixture("FIX_LOOP"), out, "main");
	/* The manifest's command opens it too. */
	bd_core_open(&rr, m, H_ARGS("bt"));
	cr_assert(strstr(rr.out, " main ") != NULL, "%s: %s %s", h_jstr(m,
	    "core_command"), rr.out, rr.err);
	h_run_free(&rr);
	bd_mi_has(out, "> ", "thread apply all bt full");
	bd_mi_has(out, "< ", "^done");
	/* Left as it was found: the target runs again. */
	cr_assert(h_cli_wait_status(sid, "target.state", "running",
	    H_WAIT_BOUND), "the target was left halted");
	json_decref(m);
	json_decref(r);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

Test(bundle, tar_writes_one_private_archive_holding_the_manifest_in_one_directory)
{
	char		 out[PATH_MAX], id[32], tar[PATH_MAX];
	struct stat	 st;
	struct h_res	 r;
	long		 sid;

	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "echo hello-bundle; exec sleep 1000");
	h_cli_wait_log(h_idstr(sid, id, sizeof id), "hello-bundle",
	    H_WAIT_BOUND);
	bd_path(out, sizeof out, "b.tar.gz");
	h_cli_exit(&r, 0, H_ARGS("bundle", "--tar", id, out));
	cr_assert(strstr(r.out, out) != NULL, "it did not print the path: %s",
	    r.out);
	h_run_free(&r);
	cr_assert_eq(lstat(out, &st), 0, "no archive at %s", out);
	cr_assert(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600,
	    "mode %o", st.st_mode);
	cr_assert_not_null(h_which("tar", tar, sizeof tar));
	h_run(&r, BD_BOUND, H_ARGS(tar, "-tzf", out));
	cr_assert(strstr(r.out, "manifest.json") && strstr(r.out,
	    "console.log"), "the archive holds: %s", r.out);
	h_run_free(&r);
	/* One top-level directory, named as the archive: tar -x makes b/. */
	h_run(&r, BD_BOUND, H_ARGS("/bin/sh", "-c", "\"$0\" -tzf \"$1\" | "
	    "grep -v '^b/' | grep -vx b", tar, out));
	cr_assert_eq(r.out_len, 0, "members outside one top-level directory "
	    "b/: %s", r.out);
	h_run_free(&r);
	h_run(&r, BD_BOUND, H_ARGS("/bin/sh", "-c", "\"$0\" -xzOf \"$1\" "
	    "b/manifest.json", tar, out));
	cr_assert(strstr(r.out, "dbgctl-bundle 1") != NULL, "no "
	    "b/manifest.json in the archive: %s %s", r.out, r.err);
	h_run_free(&r);
	/* Nothing temporary is left beside it. */
	h_run(&r, BD_BOUND, H_ARGS("/bin/sh", "-c", "ls -a \"$0\" | grep -c "
	    "partial", H->dir));
	cr_assert_eq(atoi(r.out), 0, "temporary files are left in %s", H->dir);
	h_run_free(&r);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

Test(bundle, an_ended_session_gets_what_is_left_and_bad_paths_are_refused)
{
	char		 out[PATH_MAX], id[32], req[PATH_MAX + 64];
	struct h_conn	 c;
	struct h_res	 r;
	json_t		*reply, *m;
	long		 sid;

	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "echo gone-soon");
	cr_assert_not_null(h_cli_wait_ended(sid, H_WAIT_BOUND));
	h_idstr(sid, id, sizeof id);
	/* Relative: the client makes it absolute from its directory. */
	cr_assert_eq(chdir(H->dir), 0);
	h_cli_exit(&r, 0, H_ARGS("bundle", id, "ended"));
	h_run_free(&r);
	m = bd_check(bd_path(out, sizeof out, "ended"));
	cr_assert(bd_missing(m, "backtrace") && bd_missing(m, "core"),
	    "%s", json_dumps(m, JSON_COMPACT));
	cr_assert_str_eq(h_jstr(m, "session.state"), "exited");
	cr_assert_not_null(h_jpath(m, "session.exit.by"), "no exit record "
	    "with by: %s", json_dumps(m, JSON_COMPACT));
	json_decref(m);
	/* The same path again, a relative one, a missing parent: refused. */
	h_cli_exit(&r, 1, H_ARGS("bundle", id, out));
	cr_assert(strstr(r.err, "exists already"), "%s", r.err);
	h_run_free(&r);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"rel/x\"}", sid);
	reply = h_conn_call(&c, "bundle", req, BD_BOUND);
	cr_assert_str_eq(h_jkind(reply), "invalid_params");
	cr_assert(strstr(h_jstr(reply, "error.message"), "absolute"), "%s",
	    h_jstr(reply, "error.message"));
	json_decref(reply);
	snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s/no/x\"}",
	    sid, H->dir);
	reply = h_conn_call(&c, "bundle", req, BD_BOUND);
	cr_assert_str_eq(h_jkind(reply), "invalid_params");
	json_decref(reply);
	h_conn_close(&c);
	cr_assert(h_daemon_ping(), "the daemon stopped serving");
}

/* The name of a temporary bundle in dir (.NAME.partial-...), into buf. */
static bool
bd_partial(const char *dir, char *buf, size_t len)
{
	struct dirent	*e;
	DIR		*d;
	bool		 found = false;

	if ((d = opendir(dir)) == NULL)
		return false;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, ".partial-") != NULL) {
			snprintf(buf, len, "%s/%s", dir, e->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

/* Whether the session's console log has at least *(off_t *)arg bytes. */
static char bd_log_path[PATH_MAX];
static bool
bd_log_grown(void *arg)
{
	struct stat st;

	return stat(bd_log_path, &st) == 0 && st.st_size >= *(off_t *)arg;
}

Test(bundle, a_daemon_killed_mid_bundle_leaves_no_half_bundle_after_restart)
{
	char		 out[PATH_MAX], part[PATH_MAX], req[PATH_MAX + 256];
	char		 recdir[PATH_MAX];
	off_t		 want = 256 << 20;
	struct h_conn	 c;
	struct stat	 st;
	double		 t0;
	long		 id;
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	/* A big console log under a big bound: the copy takes a while, for real. */
	h_ctx_env_add("DBGCTLD_BUNDLE_MAX=1073741824");
	h_daemon_fg();
	id = h_cli_launch_sh(NULL, "head -c 268435456 /dev/zero | tr '\\0' x; "
	    "exec sleep 1000");
	snprintf(bd_log_path, sizeof bd_log_path, "%s/sessions/%ld.log",
	    H->state, id);
	cr_assert(h_wait_for(bd_log_grown, &want, BD_BOUND * 2), "the log "
	    "never reached %lld bytes", (long long)want);
	bd_path(out, sizeof out, "killed");
	snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"bundle\",\"params\":{\"session\":%ld,\"path\":\"%s\"}}\n", id,
	    out);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	cr_assert_eq(h_conn_send(&c, req, strlen(req), BD_BOUND), 0);
	/* Kill it as soon as its temporary directory is there. */
	t0 = h_now();
	while (!bd_partial(H->dir, part, sizeof part)) {
		cr_assert(h_now() - t0 < BD_BOUND / 1000.0, "no temporary "
		    "bundle appeared in %s", H->dir);
		h_nap(1);
	}
	h_daemon_fg_kill();
	h_conn_close(&c);
	cr_assert_neq(lstat(out, &st), 0, "the bundle was complete before the "
	    "kill: this test needs a slower bundle");
	cr_assert_eq(lstat(part, &st), 0, "%s went before the kill", part);
	/* The next daemon removes it and says so. */
	h_daemon_fg();
	h_daemon_wait_log("removed the half-written bundle", H_WAIT_BOUND);
	cr_assert_neq(lstat(part, &st), 0, "%s is still there", part);
	cr_assert_neq(lstat(out, &st), 0, "%s appeared", out);
	snprintf(recdir, sizeof recdir, "%s/bundles", H->state);
	cr_assert_not_null(d = opendir(recdir), "%s", recdir);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	cr_assert_eq(n, 0, "records are left in %s", recdir);
}

Test(bundle, artifacts_at_a_deadline_verdict_come_before_the_stop)
{
	char		 params[PATH_MAX * 3], art[PATH_MAX], want[PATH_MAX + 32];
	struct h_conn	 c;
	json_t		*b, *m, *end;
	long		 id;

	h_daemon_fg();
	bd_path(art, sizeof art, "art");
	/* A subscriber hears of it. */
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	json_decref(h_conn_call(&c, "subscribe", "{}", BD_BOUND));
	snprintf(params, sizeof params, "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"deadline\":2000,\"artifacts\":\"%s\"}",
	    h_ctx_fixture("FIX_SPINNER"), art);
	id = h_conn_launch_once(params, BD_BOUND);
	cr_assert(h_conn_wait_note(&c, "session.bundle", "params.reason",
	    "deadline", BD_BOUND), "no session.bundle notification");
	h_conn_close(&c);
	b = bd_wait_auto(id);
	snprintf(want, sizeof want, "%s/%ld-deadline", art, id);
	cr_assert_str_eq(h_jstr(b, "path"), want);
	cr_assert_str_eq(h_jstr(b, "reason"), "deadline");
	m = bd_check(want);
	/* Written before the teardown: the session still ran, its verdict in. */
	cr_assert_str_eq(h_jstr(m, "session.state"), "running");
	cr_assert_str_eq(h_jstr(m, "verdict.kind"), "deadline");
	cr_assert_str_eq(h_jstr(m, "core"), "core");
	bd_core_loads(h_ctx_fixture("FIX_SPINNER"), want, "main");
	end = h_cli_wait_ended(id, BD_BOUND);
	cr_assert_not_null(end, "the session was not stopped after its bundle");
	json_decref(end);
	json_decref(m);
	json_decref(b);
}

Test(bundle, artifacts_at_a_fault_leave_the_target_stopped)
{
	char		 params[PATH_MAX * 3], art[PATH_MAX], want[PATH_MAX + 32];
	json_t		*b, *m;
	long		 id;

	h_daemon_fg();
	bd_path(art, sizeof art, "art");
	snprintf(params, sizeof params, "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"artifacts\":\"%s\"}",
	    h_ctx_fixture("FIX_FAULT"), art);
	id = h_conn_launch_once(params, BD_BOUND);
	b = bd_wait_auto(id);
	snprintf(want, sizeof want, "%s/%ld-fault", art, id);
	cr_assert_str_eq(h_jstr(b, "path"), want);
	m = bd_check(want);
	cr_assert_str_eq(h_jstr(m, "fault.signal"), "SIGSEGV", "%s",
	    json_dumps(m, JSON_COMPACT));
	bd_core_loads(h_ctx_fixture("FIX_FAULT"), want, "crash_here");
	h_cli_expect_state(id, "running", "after the fault's bundle");
	cr_assert(h_cli_wait_status(id, "target.state", "stopped",
	    H_WAIT_BOUND), "the faulted target was not left stopped");
	json_decref(m);
	json_decref(b);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/* How many registers of every "registers" object in j have a vector's value. */
static int
bd_vectors(json_t *j, int *general)
{
	const char	*key, *v;
	json_t		*e, *r;
	size_t		 i;
	int		 n = 0;

	if (json_is_array(j)) {
		json_array_foreach(j, i, e)
			n += bd_vectors(e, general);
		return n;
	}
	json_object_foreach(j, key, e) {
		if (strcmp(key, "registers") != 0 || !json_is_object(e)) {
			n += bd_vectors(e, general);
			continue;
		}
		json_object_foreach(e, key, r) {
			v = json_string_value(r);
			n += v != NULL && *v == '{';
			*general += strcmp(key, "rip") == 0;
		}
	}
	return n;
}

/*
 * A faulted x86-64 target's bundle: the manifest's fault records (the
 * session's, its history's, its verdict's) keep the general registers and
 * leave the vector ones out, which each would repeat (100-245 KB).
 */
Test(bundle, the_manifest_keeps_the_general_registers_without_the_vector_ones)
{
	char		 out[PATH_MAX], path[PATH_MAX + 32], id[32];
	struct stat	 st;
	json_t		*m, *f;
	long		 sid;
	int		 general = 0;

	h_daemon_fg();
	sid = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_FAULT")));
	cr_assert(h_cli_wait_status(sid, "faulted", "SIGSEGV", H_WAIT_BOUND),
	    "the target never faulted");
	/* Live, status has them all: the manifest is where they go. */
	f = h_cli_json(H_ARGS("status", h_idstr(sid, id, sizeof id)));
	cr_assert(bd_vectors(f, &general) > 0, "no vector register in the "
	    "fault record to leave out: %.300s", json_dumps(f, JSON_COMPACT));
	json_decref(f);
	bd_path(out, sizeof out, "b-fault");
	json_decref(h_cli_json(H_ARGS("bundle", id, out)));
	m = bd_check(out);
	general = 0;
	cr_assert_eq(bd_vectors(m, &general), 0, "the manifest holds vector "
	    "registers");
	cr_assert(general >= 2, "the manifest's fault records lost their "
	    "general registers (rip in %d)", general);
	cr_assert_not_null(h_jstr(m, "fault.registers.rip"), "fault.registers "
	    "has no rip");
	snprintf(path, sizeof path, "%s/manifest.json", out);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_lt(st.st_size, 64 * 1024, "the manifest is %lld bytes",
	    (long long)st.st_size);
	json_decref(m);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

Test(bundle, artifacts_when_a_leased_connection_closes_come_before_the_stop)
{
	char		 params[PATH_MAX * 3], art[PATH_MAX], want[PATH_MAX + 32];
	struct h_conn	 c;
	json_t		*r, *b, *m, *end;
	long		 id;

	h_daemon_fg();
	bd_path(art, sizeof art, "art");
	snprintf(params, sizeof params, "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"lease\":true,\"artifacts\":\"%s\"}",
	    h_ctx_fixture("FIX_LOOP"), art);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	r = h_conn_call(&c, "launch", params, BD_BOUND);
	id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "%s", json_dumps(r, JSON_COMPACT));
	json_decref(r);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the loop never ran");
	h_conn_close(&c);
	b = bd_wait_auto(id);
	snprintf(want, sizeof want, "%s/%ld-lease", art, id);
	cr_assert_str_eq(h_jstr(b, "path"), want);
	m = bd_check(want);
	cr_assert_str_eq(h_jstr(m, "session.state"), "running");
	cr_assert_str_eq(h_jstr(m, "reason"), "lease");
	end = h_cli_wait_ended(id, BD_BOUND);
	cr_assert_not_null(end, "the leased session was not stopped");
	json_decref(end);
	json_decref(m);
	json_decref(b);
}

Test(bundle, a_held_session_gets_its_bundle_and_stays_held_and_halted)
{
	char		 params[PATH_MAX * 3], art[PATH_MAX], want[PATH_MAX + 32];
	json_t		*b, *m;
	long		 id;

	h_daemon_fg();
	bd_path(art, sizeof art, "art");
	snprintf(params, sizeof params, "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"deadline\":1500,\"on_deadline\":\"hold\","
	    "\"artifacts\":\"%s\"}", h_ctx_fixture("FIX_SPINNER"), art);
	id = h_conn_launch_once(params, BD_BOUND);
	b = bd_wait_auto(id);
	snprintf(want, sizeof want, "%s/%ld-deadline", art, id);
	cr_assert_str_eq(h_jstr(b, "path"), want);
	m = bd_check(want);
	cr_assert_str_eq(h_jstr(m, "core"), "core");
	/* Held: still running, its target halted as the verdict left it. */
	h_cli_expect_state(id, "running", "after the held session's bundle");
	cr_assert(h_cli_wait_status(id, "target.state", "stopped",
	    H_WAIT_BOUND), "the held target was resumed");
	json_decref(m);
	json_decref(b);
	json_decref(h_cli_stop(id, NULL, NULL));
}

Test(bundle, a_gdb_that_does_not_answer_gives_a_bundle_that_says_what_is_missing)
{
	char		 out[PATH_MAX], id[32];
	struct h_res	 r;
	json_t		*res, *m;
	double		 t0;
	long		 sid;

	h_daemon_fg();
	sid = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_LOOP")));
	cr_assert(h_cli_wait_status(sid, "target.state", "running",
	    H_WAIT_BOUND), "the loop never ran");
	h_idstr(sid, id, sizeof id);
	/* gdb's MI waits for the shell command: it answers nothing meanwhile. */
	h_cli(&r, H_ARGS("exec", "--timeout", "500", id, "shell", "sleep",
	    "40"));
	h_run_free(&r);
	bd_path(out, sizeof out, "mute");
	t0 = h_now();
	res = h_cli_json(H_ARGS("bundle", id, out));
	cr_assert(h_now() - t0 < 20 * H_SLOW, "the bundle took %.1f s",
	    h_now() - t0);
	m = bd_check(out);
	cr_assert(bd_missing(m, "backtrace") && bd_missing(m, "registers"),
	    "%s", json_dumps(json_object_get(m, "missing"), JSON_COMPACT));
	cr_assert(bd_names(m, "console.log") && bd_names(m, "mi.log"),
	    "files: %s", json_dumps(json_object_get(m, "files"),
	    JSON_COMPACT));
	json_decref(m);
	json_decref(res);
	json_decref(h_cli_stop(sid, "2000", NULL));
}

Test(bundle, the_size_bound_keeps_a_logs_last_bytes_and_lists_the_cut)
{
	char		 out[PATH_MAX], id[32], path[PATH_MAX + 32], *log;
	struct stat	 st;
	json_t		*r, *m, *cut;
	size_t		 len;
	long		 sid;

	h_ctx_env_add("DBGCTLD_BUNDLE_MAX=100000");
	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "head -c 300000 /dev/zero | tr '\\0' x; "
	    "echo; echo the-last-line; exec sleep 1000");
	h_idstr(sid, id, sizeof id);
	h_cli_wait_log(id, "the-last-line", H_WAIT_BOUND);
	bd_path(out, sizeof out, "bounded");
	r = h_cli_json(H_ARGS("bundle", id, out));
	cut = json_array_get(json_object_get(r, "cut"), 0);
	cr_assert_str_eq(h_jstr(cut, "name") ? h_jstr(cut, "name") : "",
	    "console.log", "%s", json_dumps(r, JSON_COMPACT));
	cr_assert_eq(h_jint(cut, "kept", -1), 100000);
	cr_assert_gt(h_jint(cut, "size", -1), 300000);
	m = bd_check(out);
	cr_assert_eq(h_jint(json_array_get(json_object_get(m, "cut"), 0),
	    "kept", -1), 100000, "the manifest does not list the cut");
	bd_stat(out, "console.log", &st);
	cr_assert_eq(st.st_size, 100000);
	snprintf(path, sizeof path, "%s/console.log", out);
	cr_assert_not_null(log = h_read_file(path, &len));
	cr_assert(strstr(log, "the-last-line") != NULL, "the cut log lost its "
	    "end");
	free(log);
	json_decref(m);
	json_decref(r);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

Test(bundle, a_daemon_sent_sigterm_bundles_its_sessions_before_it_stops_them)
{
	struct h_tracked tracked[3] = { 0 };
	char		 params[PATH_MAX * 3], art[PATH_MAX], want[PATH_MAX + 32];
	char		 left[256];
	json_t		*m;
	pid_t		 daemon;
	long		 id;

	daemon = h_daemon_fg();
	bd_path(art, sizeof art, "art");
	snprintf(params, sizeof params, "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"artifacts\":\"%s\"}",
	    h_ctx_fixture("FIX_LOOP"), art);
	id = h_conn_launch_once(params, BD_BOUND);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the loop never ran");
	h_pid_track(&tracked[0], "gdb", h_cli_status_pid(id, "pid"));
	h_pid_track(&tracked[1], "the loop", h_cli_status_pid(id,
	    "inferior_pid"));
	/* As a CI runner cancels a job: SIGTERM, and the daemon goes. */
	cr_assert_eq(kill(daemon, SIGTERM), 0);
	cr_assert_eq(h_daemon_fg_wait(BD_BOUND), 0, "the daemon did not exit "
	    "0 after SIGTERM");
	snprintf(want, sizeof want, "%s/%ld-signal", art, id);
	m = bd_check(want);
	cr_assert_str_eq(h_jstr(m, "reason"), "signal");
	cr_assert_str_eq(h_jstr(m, "session.state"), "running", "the bundle "
	    "was not written before the stop");
	json_decref(m);
	cr_assert(h_wait_for(h_pid_tracked_gone, tracked, BD_BOUND),
	    "left after the daemon exited: %s", h_pid_tracked_left(tracked,
	    left, sizeof(left)));
}

/* The replies to requests 1..n on c, by id, whatever their order; asserted. */
static void
bd_replies(struct h_conn *c, json_t **out, int n)
{
	double	 end = h_now() + BD_BOUND / 1000.0;
	json_t	*j;
	long	 id;
	int	 got = 0;

	memset(out, 0, sizeof *out * (size_t)n);
	while (got < n && h_now() < end && (j = h_conn_recv(c, (int)((end -
	    h_now()) * 1000) + 1)) != NULL) {
		id = (long)h_jint(j, "id", 0);
		if (id < 1 || id > n || out[id - 1] != NULL) {
			json_decref(j);
			continue;
		}
		out[id - 1] = j;
		got++;
	}
	cr_assert_eq(got, n, "%d of %d replies within %d ms", got, n,
	    BD_BOUND);
}

/* A reply's error kind, or "written". */
static const char *
bd_kind(json_t *reply)
{
	return h_jkind(reply)[0] != '\0' ? h_jkind(reply) : "written";
}

/* Send one line holding the requests of reqs (each a whole JSON-RPC line). */
static void
bd_send(struct h_conn *c, const char *lines)
{
	cr_assert_eq(h_conn_send(c, lines, strlen(lines), BD_BOUND), 0);
}

/* The names in dir, but . and .., joined with spaces into buf; how many. */
static int
bd_ls(const char *dir, char *buf, size_t len)
{
	struct dirent	*e;
	DIR		*d;
	size_t		 used;
	int		 n = 0;

	buf[0] = '\0';
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		used = strlen(buf);
		snprintf(buf + used, len - used, "%s ", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * An attacker in a child: as uid (or root, uid 0), it watches dir for
 * the daemon's temporary bundle directory and, at once, renames it to
 * "moved" and puts there a link to victim. It exits 0 once it did, 1 if
 * it never could within the bound.
 */
static pid_t
bd_attacker(const char *dir, uid_t uid, const char *victim)
{
	struct dirent	*e;
	DIR		*d;
	double		 end = h_now() + BD_BOUND / 1000.0;
	pid_t		 pid;
	int		 dfd, fd;

	cr_assert_neq(dfd = open(dir, O_RDONLY | O_DIRECTORY), -1);
	cr_assert_neq(pid = fork(), -1);
	if (pid > 0) {
		close(dfd);
		return pid;
	}
	if (uid != 0 && (setgid(uid) != 0 || setuid(uid) != 0))
		_exit(2);
	while (h_now() < end) {
		if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY)) == -1 ||
		    (d = fdopendir(fd)) == NULL)
			_exit(2);
		while ((e = readdir(d)) != NULL)
			if (strstr(e->d_name, ".partial-") != NULL &&
			    renameat(dfd, e->d_name, dfd, "moved") == 0 &&
			    symlinkat(victim, dfd, e->d_name) == 0)
				_exit(0);
		closedir(d);
		usleep(200);
	}
	_exit(1);
}

/* Stop the attacker if it still watches; its exit status. */
static int
bd_attacker_end(pid_t pid)
{
	int st = 0;

	(void)kill(pid, SIGKILL);
	cr_assert(h_run_waitpid(pid, BD_BOUND, &st), "the attacker %d did not "
	    "end", (int)pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A bundle request for session id at path, as a line with id n. */
static void
bd_req(char *buf, size_t len, int n, long id, const char *path, bool tar)
{
	snprintf(buf, len, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
	    "\"bundle\",\"params\":{\"session\":%ld,\"path\":\"%s\"%s}}\n", n,
	    id, path, tar ? ",\"tar\":true" : "");
}

/* A gdb session whose program runs: a bundle of it halts it and runs gcore. */
static long
bd_gdb_loop(void)
{
	long sid = h_cli_launch(H_ARGS("-x", "run", "--",
	    h_ctx_fixture("FIX_LOOP")));

	cr_assert(h_cli_wait_status(sid, "target.state", "running",
	    H_WAIT_BOUND), "the loop never ran");
	return sid;
}

/*
 * Bundle session sid at dir/b while an attacker as uid swaps the
 * temporary directory for a link to a victim directory; asserted: nothing
 * is written through the link. The reply; *swapped: whether it swapped.
 */
static json_t *
bd_attacked(long sid, const char *dir, uid_t uid, bool *swapped)
{
	char		 victim[PATH_MAX], out[PATH_MAX + 8];
	char		 req[PATH_MAX * 2], left[1024], moved[PATH_MAX + 8];
	struct h_conn	 c;
	struct stat	 st;
	json_t		*r;
	pid_t		 attacker;

	bd_path(victim, sizeof victim, "victim");
	cr_assert_eq(mkdir(victim, 0700), 0);
	snprintf(out, sizeof out, "%s/b", dir);
	attacker = bd_attacker(dir, uid, victim);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	bd_req(req, sizeof req, 1, sid, out, false);
	bd_send(&c, req);
	bd_replies(&c, &r, 1);
	h_conn_close(&c);
	/*
	 * Renamed is swapped: the daemon may refuse on seeing the rename, and
	 * the attacker be stopped, before its link is made or it exits.
	 */
	snprintf(moved, sizeof moved, "%s/moved", dir);
	*swapped = bd_attacker_end(attacker) == 0 || lstat(moved, &st) == 0;
	cr_assert_eq(bd_ls(victim, left, sizeof left), 0, "the bundle was "
	    "written through the link into %s: %s", victim, left);
	return r;
}

Test(bundle, a_parent_another_user_owns_or_may_write_is_refused_and_steers_nothing)
{
	char		 evil[PATH_MAX], out[PATH_MAX + 8], req[PATH_MAX * 2];
	struct h_conn	 c;
	json_t		*r;
	long		 sid;
	bool		 swapped;

	h_daemon_fg();
	sid = bd_gdb_loop();
	/* nobody owns the parent, and does what its owner may. */
	bd_path(evil, sizeof evil, "evil");
	cr_assert_eq(mkdir(evil, 0755), 0);
	cr_assert_eq(chown(evil, 65534, 65534), 0, "%s", strerror(errno));
	r = bd_attacked(sid, evil, 65534, &swapped);
	cr_assert_str_eq(bd_kind(r), "invalid_params",
	    "%s", json_dumps(r, JSON_COMPACT));
	cr_assert(strstr(h_jstr(r, "error.message"), "owned by uid 65534"),
	    "the refusal does not say why: %s", h_jstr(r, "error.message"));
	json_decref(r);
	snprintf(out, sizeof out, "%s/b", evil);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	/* Writable by its group, not sticky: refused; sticky and world-writable: used. */
	cr_assert_eq(chown(evil, 0, 0), 0);
	cr_assert_eq(chmod(evil, 0775), 0);
	snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s\"}", sid,
	    out);
	r = h_conn_call(&c, "bundle", req, BD_BOUND);
	cr_assert_str_eq(bd_kind(r), "invalid_params",
	    "%s", json_dumps(r, JSON_COMPACT));
	cr_assert(strstr(h_jstr(r, "error.message"), "not sticky"), "%s",
	    h_jstr(r, "error.message"));
	json_decref(r);
	cr_assert_eq(chmod(evil, 01777), 0);
	r = h_conn_call(&c, "bundle", req, BD_BOUND);
	cr_assert_str_eq(bd_kind(r), "written", "%s", json_dumps(r,
	    JSON_COMPACT));
	json_decref(r);
	json_decref(bd_check(out));
	h_conn_close(&c);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

Test(bundle, a_temporary_directory_swapped_for_a_link_gets_nothing_written_through_it)
{
	char		 dir[PATH_MAX], out[PATH_MAX + 8], moved[PATH_MAX + 8];
	char		 left[1024];
	struct stat	 st;
	json_t		*r;
	long		 sid;
	bool		 swapped;

	h_daemon_fg();
	sid = bd_gdb_loop();
	/* A /tmp-like parent, and one who may rename in it all the same. */
	bd_path(dir, sizeof dir, "shared");
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(chmod(dir, 01777), 0);
	snprintf(out, sizeof out, "%s/b", dir);
	snprintf(moved, sizeof moved, "%s/moved", dir);
	r = bd_attacked(sid, dir, 0, &swapped);
	if (!swapped) {
		/* Too late to swap: the bundle is there, whole. */
		cr_assert_str_eq(bd_kind(r), "written", "%s", json_dumps(r,
		    JSON_COMPACT));
		json_decref(bd_check(out));
	} else {
		cr_assert_str_eq(bd_kind(r), "io_error", "%s", json_dumps(r,
		    JSON_COMPACT));
		cr_assert(strstr(h_jstr(r, "error.message"), "moved or "
		    "replaced"), "%s", h_jstr(r, "error.message"));
		cr_assert_neq(lstat(out, &st), 0, "%s is there", out);
		cr_assert_eq(bd_ls(moved, left, sizeof left), 0, "the failed "
		    "bundle left files in the directory moved away: %s", left);
	}
	json_decref(r);
	json_decref(h_cli_stop(sid, NULL, NULL));
}

Test(bundle, of_two_bundles_to_one_path_one_lands_and_the_other_gets_exists)
{
	char		 out[PATH_MAX], reqs[PATH_MAX * 4], *p, tar[PATH_MAX];
	json_t		*r[2];
	struct h_conn	 c;
	struct h_res	 res;
	long		 a, b;
	int		 round, won;

	h_daemon_fg();
	a = h_cli_launch_sh(NULL, "echo first; exec sleep 1000");
	b = h_cli_launch_sh(NULL, "echo second; exec sleep 1000");
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	/* Both asked at once: both find the path free, only one may take it. */
	for (round = 0; round < 2; round++) {
		bd_path(out, sizeof out, round == 0 ? "one.tar.gz" : "one");
		bd_req(reqs, sizeof reqs, 1, a, out, round == 0);
		p = reqs + strlen(reqs);
		bd_req(p, sizeof reqs - (size_t)(p - reqs), 2, b, out,
		    round == 0);
		bd_send(&c, reqs);
		bd_replies(&c, r, 2);
		won = strcmp(bd_kind(r[0]), "written") == 0 ? 0 : 1;
		cr_assert_str_eq(bd_kind(r[won]), "written", "neither landed: "
		    "%s %s", json_dumps(r[0], JSON_COMPACT), json_dumps(r[1],
		    JSON_COMPACT));
		cr_assert_str_eq(bd_kind(r[1 - won]), "exists", "both were "
		    "answered: %s", json_dumps(r[1 - won], JSON_COMPACT));
		cr_assert_eq(h_jint(r[1 - won], "error.code", 0), 14);
		json_decref(r[0]);
		json_decref(r[1]);
		/* Renamed over nothing: the winner's is there. */
		if (round == 0) {
			cr_assert_not_null(h_which("tar", tar, sizeof tar));
			h_run(&res, BD_BOUND, H_ARGS("/bin/sh", "-c", "\"$0\" "
			    "-xzOf \"$1\" one/manifest.json", tar, out));
			cr_assert(strstr(res.out, won == 0 ? "first" :
			    "second") != NULL, "the archive is not the "
			    "winner's: %s %s", res.out, res.err);
			h_run_free(&res);
		} else
			json_decref(bd_check(out));
	}
	h_conn_close(&c);
	json_decref(h_cli_stop(a, NULL, NULL));
	json_decref(h_cli_stop(b, NULL, NULL));
}

Test(bundle, a_stop_right_after_a_bundle_leaves_only_what_its_manifest_names)
{
	char		 out[PATH_MAX], reqs[PATH_MAX * 2], name[32], *p;
	json_t		*r[2], *m;
	struct h_conn	 c;
	long		 sid;
	int		 round;

	h_daemon_fg();
	for (round = 0; round < 4; round++) {
		sid = bd_gdb_loop();
		snprintf(name, sizeof name, "stopped-%d", round);
		bd_path(out, sizeof out, name);
		cr_assert_eq(h_conn_open(&c, H->sock), 0);
		bd_req(reqs, sizeof reqs, 1, sid, out, false);
		p = reqs + strlen(reqs);
		snprintf(p, sizeof reqs - (size_t)(p - reqs), "{\"jsonrpc\":"
		    "\"2.0\",\"id\":2,\"method\":\"stop\",\"params\":"
		    "{\"session\":%ld}}\n", sid);
		bd_send(&c, reqs);
		bd_replies(&c, r, 2);
		h_conn_close(&c);
		cr_assert_str_eq(bd_kind(r[0]), "written", "%s",
		    json_dumps(r[0], JSON_COMPACT));
		/* Every file named, nothing else: no core the manifest lacks. */
		m = bd_check(out);
		if (json_is_null(json_object_get(m, "core")))
			cr_assert(bd_missing(m, "core"), "no core and no why: "
			    "%s", json_dumps(json_object_get(m, "missing"),
			    JSON_COMPACT));
		json_decref(m);
		json_decref(r[0]);
		json_decref(r[1]);
	}
}

/* Fill the filesystem at dir: a file written until no byte fits, then files until no inode is left. */
static void
bd_fill(const char *dir)
{
	char	 path[PATH_MAX + 16], buf[4096];
	int	 fd, i;

	snprintf(path, sizeof path, "%s/filler", dir);
	cr_assert_neq(fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600), -1);
	memset(buf, 'f', sizeof buf);
	while (write(fd, buf, sizeof buf) > 0)
		;
	close(fd);
	for (i = 0; i < 1000; i++) {
		snprintf(path, sizeof path, "%s/inode-%d", dir, i);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) == -1)
			break;
		close(fd);
	}
}

/* Mount a small tmpfs at dir, or skip (fail under DBGCTL_CI=1). */
static void
bd_tmpfs(const char *dir, const char *opts)
{
	const char *ci = getenv("DBGCTL_CI");

	cr_assert_eq(mkdir(dir, 0700), 0);
	if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) == 0)
		return;
	if (ci != NULL && strcmp(ci, "1") == 0)
		cr_assert_fail("DBGCTL_CI=1: cannot mount a tmpfs at %s: %s",
		    dir, strerror(errno));
	cr_skip_test("cannot mount a tmpfs (a full disk is made so): %s",
	    strerror(errno));
}

Test(bundle, a_full_disk_fails_the_bundle_as_an_io_error_with_its_errno)
{
	/* Out of bytes (a directory fits, files do not), then out of inodes. */
	static const char *const opts[] = { "size=64k,mode=0700",
	    "size=4m,nr_inodes=8,mode=0700" };
	char		 full[PATH_MAX], out[PATH_MAX + 8], req[PATH_MAX * 2];
	char		 left[4096], name[16];
	struct h_conn	 c;
	json_t		*r;
	long		 sid;
	size_t		 i;

	h_daemon_fg();
	sid = h_cli_launch_sh(NULL, "echo some-output; exec sleep 1000");
	h_cli_wait_log(h_idstr(sid, name, sizeof name), "some-output",
	    H_WAIT_BOUND);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	for (i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		snprintf(name, sizeof name, "full%zu", i);
		bd_path(full, sizeof full, name);
		bd_tmpfs(full, opts[i]);
		bd_fill(full);
		snprintf(out, sizeof out, "%s/b", full);
		snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s\"}",
		    sid, out);
		r = h_conn_call(&c, "bundle", req, BD_BOUND);
		bd_ls(full, left, sizeof left);
		/* Unmounted before any assertion can end the test. */
		(void)umount2(full, MNT_DETACH);
		cr_assert_str_eq(bd_kind(r),
		    "io_error", "%s: %s", opts[i], json_dumps(r,
		    JSON_COMPACT));
		cr_assert_eq(h_jint(r, "error.data.errno", -1), ENOSPC, "%s",
		    json_dumps(r, JSON_COMPACT));
		cr_assert(strstr(left, "partial") == NULL, "the failed bundle "
		    "left %s", left);
		json_decref(r);
	}
	h_conn_close(&c);
	cr_assert(h_daemon_ping(), "the daemon stopped serving");
	json_decref(h_cli_stop(sid, NULL, NULL));
}
