/*
 * Bundles (issue 23): a bundle holds every file its manifest names and,
 * of a native program, a core gdb loads; --tar writes one archive; an
 * ended session's bundle has what is left; bad paths are refused; a
 * daemon SIGKILLed mid-bundle leaves no half bundle after the next start;
 * launch --artifacts writes a bundle on its own at a deadline verdict, a
 * fault and a lease's end, before the teardown, and a held session stays
 * held; the manifest keeps the general registers, not the vector ones; a
 * gdb that does not answer gives a bundle that says what is missing; the
 * size bound keeps a log's last bytes; a daemon sent SIGTERM bundles its
 * sessions first. A board's core is test_bundle_core.c's, hostile and
 * raced paths test_bundle_paths.c's.
 */
#include "harness.h"
#include "bundle-check.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <dirent.h>
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

/*
 * A running program's bundle holds every file its manifest names, a core
 * that gdb and the manifest's command both load in main, and an MI log of
 * what was sent and what came back, and it leaves the target running.
 */
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

/*
 * --tar writes one 0600 archive whose members sit under one directory named
 * as the archive, and leaves nothing temporary beside it.
 */
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

/*
 * An ended session's bundle, asked with a relative path, holds what is left
 * and lists the rest as missing; the same path again, a relative path over
 * the protocol and a missing parent are refused.
 */
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

/*
 * A daemon SIGKILLed while it copies a big log into a bundle leaves a
 * temporary directory that the next daemon removes, says so, and keeps no
 * record of.
 */
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

/*
 * At a deadline verdict the artifacts directory gets a bundle with a core
 * gdb loads, written while the session still ran and told to a subscriber,
 * and then the session is stopped.
 */
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

/*
 * At a fault the artifacts bundle's core loads at the faulting function,
 * and the session runs on with its target left stopped.
 */
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

/*
 * When a leased session's connection closes, its bundle (reason lease) is
 * written while it still runs, and then it is stopped.
 */
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

/*
 * A deadline verdict that holds the session gets its bundle with a core,
 * and the session stays running with its target halted.
 */
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

/*
 * A gdb busy with a shell command still gives a bundle within 20 s, with
 * the console and MI logs, and the backtrace and registers listed as
 * missing.
 */
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

/*
 * Under DBGCTLD_BUNDLE_MAX a console log of 300 KB is cut to its last
 * 100000 bytes, and both the reply and the manifest list the cut.
 */
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

/*
 * A daemon sent SIGTERM, as a CI runner cancels a job, bundles a session
 * with artifacts while it still runs, exits 0 and leaves no process of it
 * behind.
 */
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
