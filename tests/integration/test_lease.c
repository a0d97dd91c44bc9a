/*
 * Leases claimed again: a leased session whose connection is gone (closed,
 * or gone with a daemon killed with SIGKILL and adopted by the next) lives
 * on if a connection claims it with its lease token within the grace, and
 * ends as before if none does; a wrong token, a session without a lease, a
 * lease a live connection holds and a lease already over are refused, each
 * saying why; the token shows nowhere but in the launch's answer.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(lease, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 150);

/*
 * Graces (ms): the claimed session's is the shorter, so that once the
 * unclaimed one has ended at its own, the claimed one's is over too. Both
 * leave a loaded machine ample time to reconnect and claim.
 */
#define LS_GRACE_CLAIMED	(6000 * H_SLOW)
#define LS_GRACE_LEFT		(2 * LS_GRACE_CLAIMED)
/* Bound for a session to end at its grace (ms). */
#define LS_BOUND		(H_WAIT_BOUND + LS_GRACE_LEFT)

/*
 * Launch `sleep 1000` on c, leased with grace_ms, carrying marker kv; its
 * id, and its lease token into tok (asserted to be 32 hex digits).
 */
static long
ls_launch(struct h_conn *c, const char *kv, long grace_ms, char *tok,
    size_t len)
{
	const char	*eq = strchr(kv, '='), *t;
	char		 params[512];
	json_t		*r;
	long		 id;

	snprintf(params, sizeof(params), "{\"kind\":\"exec\",\"argv\":"
	    "[\"sleep\",\"1000\"],\"env\":{\"%.*s\":\"%s\"},\"lease\":true,"
	    "\"lease_grace\":%ld}", (int)(eq - kv), kv, eq + 1, grace_ms);
	r = h_conn_call(c, "launch", params, H_WAIT_BOUND);
	id = (long)h_jint(r, "result.id", -1);
	t = h_jstr(r, "result.lease_token");
	cr_assert(id > 0 && t != NULL && strlen(t) == 32 && strspn(t,
	    "0123456789abcdef") == 32, "launch %s: got %s", params,
	    json_dumps(r, JSON_COMPACT));
	snprintf(tok, len, "%s", t);
	json_decref(r);
	h_marker_wait(kv, "sleep", 1);
	return id;
}

/* The reply to a claim of session id with token on c. */
static json_t *
ls_claim(struct h_conn *c, long id, const char *token)
{
	char params[256];

	snprintf(params, sizeof(params), "{\"session\":%ld,\"token\":\"%s\"}",
	    id, token);
	return h_conn_call(c, "lease", params, H_WAIT_BOUND);
}

/* Assert that claiming session id with token on c succeeds. */
static void
ls_claimed(struct h_conn *c, long id, const char *token, const char *when)
{
	json_t *r = ls_claim(c, id, token);

	cr_assert_eq(h_jint(r, "result.id", -1), id, "the claim %s: %s", when,
	    json_dumps(r, JSON_COMPACT));
	cr_assert_null(h_jpath(r, "result.lease_token"), "a claim's answer "
	    "shows the token");
	json_decref(r);
}

/* Assert that a claim of id with token on c fails as kind, saying text. */
static void
ls_refused(struct h_conn *c, long id, const char *token, const char *kind,
    const char *text)
{
	json_t		*r = ls_claim(c, id, token);
	const char	*msg = h_jstr(r, "error.message");

	cr_assert(h_jstr(r, "error.data.kind") != NULL && strcmp(h_jstr(r,
	    "error.data.kind"), kind) == 0 && msg != NULL && strstr(msg,
	    text) != NULL, "a claim of session %ld: want %s (\"%s\"), got %s",
	    id, kind, text, json_dumps(r, JSON_COMPACT));
	json_decref(r);
}

/* Predicate: no live process carries the marker; a miss waits a little. */
static bool
ls_gone(void *kv)
{
	if (h_marker_gone(kv))
		return true;
	h_nap(20);
	return false;
}

/* Assert that session id ends, and that nothing carrying kv is left. */
static void
ls_ends(long id, const char *kv, const char *what)
{
	char	 report[1024];
	json_t	*end = h_cli_wait_ended(id, LS_BOUND);

	cr_assert_not_null(end, "%s did not end", what);
	json_decref(end);
	if (!h_wait_for(ls_gone, (void *)kv, H_WAIT_BOUND)) {
		h_marker_describe(kv, report, sizeof(report));
		cr_assert_fail("%s ended, but left: %s", what, report);
	}
}

/* Assert that session id runs, its process alive. */
static void
ls_runs(long id, const char *kv, const char *what)
{
	json_t *st = h_cli_status(id);

	cr_assert_str_eq(h_jstr(st, "state"), "running", "%s: %s", what,
	    json_dumps(st, JSON_COMPACT));
	json_decref(st);
	cr_assert_gt(h_marker_pid(kv, "sleep"), 0, "%s: its process is gone",
	    what);
}

/* Assert that the token shows neither in list, nor in status, nor in the log. */
static void
ls_untold(long id, const char *token)
{
	json_t	*st = h_cli_status(id);
	char	*text = json_dumps(st, JSON_COMPACT), *log;

	cr_assert_null(strstr(text, token), "status shows the token: %s",
	    text);
	free(text);
	json_decref(st);
	st = h_cli_json(H_ARGS("list"));
	text = json_dumps(st, JSON_COMPACT);
	cr_assert_null(strstr(text, token), "list shows the token: %s", text);
	free(text);
	json_decref(st);
	log = h_daemon_log();
	cr_assert_null(strstr(log, token), "the daemon's log shows the token");
	free(log);
}

/* The token being looked for in a bundle's files, and whether it was. */
static const char	*ls_token;
static char		 ls_found[PATH_MAX];

/* nftw: a regular file that holds ls_token is noted in ls_found. */
static int
ls_file_has(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	size_t	 len;
	char	*data;

	(void)st;
	(void)ftw;
	if (flag != FTW_F || (data = h_read_file(path, &len)) == NULL)
		return 0;
	if (memmem(data, len, ls_token, strlen(ls_token)) != NULL)
		snprintf(ls_found, sizeof(ls_found), "%s", path);
	free(data);
	return 0;
}

/* Assert that no file of a bundle of session id holds the token. */
static void
ls_bundle_untold(long id, const char *token)
{
	char		dir[PATH_MAX], ids[32];
	struct h_res	r;

	h_ctx_path(dir, sizeof(dir), "bundle");
	h_cli_exit(&r, 0, H_ARGS("bundle", h_idstr(id, ids, sizeof(ids)),
	    dir));
	h_run_free(&r);
	ls_token = token;
	ls_found[0] = '\0';
	cr_assert_eq(nftw(dir, ls_file_has, 16, FTW_PHYS), 0, "nftw %s", dir);
	cr_assert_str_eq(ls_found, "", "the bundle shows the token in %s",
	    ls_found);
}

/*
 * Two leased sessions lose their connection (closed, or with restart,
 * gone with the daemon, SIGKILLed, and the next one adopting them); one
 * is claimed within its grace, the other not. The other ends at its
 * grace, nothing of it left, while the claimed one, whose grace was the
 * shorter, runs on; then the claim's connection closes and a new claim
 * takes it again; once that one closes too, it ends at its grace.
 */
static void
ls_claim_outlives(bool restart)
{
	struct h_conn	c, c2, c3;
	char		ka[128], kb[128], ta[64], tb[64];
	long		a, b;

	h_marker_new("LEASE_A", ka, sizeof(ka));
	h_marker_new("LEASE_B", kb, sizeof(kb));
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	a = ls_launch(&c, ka, LS_GRACE_CLAIMED, ta, sizeof(ta));
	b = ls_launch(&c, kb, LS_GRACE_LEFT, tb, sizeof(tb));
	ls_untold(a, ta);
	if (restart) {
		h_daemon_fg_kill();
		h_conn_close(&c);
		h_daemon_fg();
	} else
		h_conn_close(&c);

	cr_assert_eq(h_conn_open(&c2, H->sock), 0);
	ls_claimed(&c2, a, ta, restart ? "after the daemon's restart" :
	    "after the connection closed");
	ls_ends(b, kb, "the session no one claimed");
	ls_runs(a, ka, "the claimed session, past its grace");
	ls_untold(a, ta);

	/* Its new connection closes: the grace again, and a claim again. */
	h_conn_close(&c2);
	cr_assert_eq(h_conn_open(&c3, H->sock), 0);
	ls_claimed(&c3, a, ta, "after the claiming connection closed");
	ls_runs(a, ka, "the session claimed twice");
	h_conn_close(&c3);
	ls_ends(a, ka, "the claimed session, its connection closed");
}

Test(lease, a_claim_after_a_daemon_restart_keeps_the_session_past_its_grace)
{
	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	ls_claim_outlives(true);
}

Test(lease, a_claim_after_a_dropped_connection_keeps_the_session)
{
	h_daemon_fg();
	ls_claim_outlives(false);
}

/*
 * After a restart, claims with a wrong token (of the right length, or
 * not) are refused as unauthorized and the session still ends at its
 * grace; then the right token is told the lease has ended. A session
 * without a lease, and one that is not there, are refused too.
 */
Test(lease, a_wrong_token_is_refused_and_the_session_ends_on_schedule)
{
	struct h_conn	c, c2;
	char		ka[128], ta[64], wrong[64];
	long		a, plain;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	h_marker_new("LEASE_A", ka, sizeof(ka));
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	a = ls_launch(&c, ka, 3000, ta, sizeof(ta));
	plain = h_conn_launch_once("{\"kind\":\"exec\",\"argv\":[\"sleep\","
	    "\"1000\"]}", H_WAIT_BOUND);
	h_daemon_fg_kill();
	h_conn_close(&c);
	h_daemon_fg();

	cr_assert_eq(h_conn_open(&c2, H->sock), 0);
	snprintf(wrong, sizeof(wrong), "%s", ta);
	wrong[31] = wrong[31] == '0' ? '1' : '0';
	ls_refused(&c2, a, wrong, "unauthorized", "wrong lease token");
	ls_refused(&c2, a, "0123", "unauthorized", "wrong lease token");
	ls_refused(&c2, a, "", "unauthorized", "wrong lease token");
	ls_refused(&c2, plain, ta, "invalid_params", "is not leased");
	ls_refused(&c2, 999, ta, "no_such_session", "999");
	ls_ends(a, ka, "the session claimed with wrong tokens");
	ls_refused(&c2, a, ta, "not_running", "lease has ended");
	h_conn_close(&c2);
}

/*
 * A lease its connection still holds is refused to another connection
 * with the right token (and with a wrong one, only the token is
 * spoken of); the holder's own claim is answered, and changes nothing.
 */
Test(lease, a_claim_of_a_lease_a_live_connection_holds_is_refused)
{
	struct h_conn	c, c2;
	char		ka[128], ta[64];
	long		a;

	h_daemon_fg();
	h_marker_new("LEASE_A", ka, sizeof(ka));
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	a = ls_launch(&c, ka, 0, ta, sizeof(ta));
	cr_assert_eq(h_conn_open(&c2, H->sock), 0);
	ls_refused(&c2, a, ta, "busy", "held by a live connection");
	ls_refused(&c2, a, "00000000000000000000000000000000",
	    "unauthorized", "wrong lease token");
	ls_claimed(&c, a, ta, "by its own connection");
	ls_runs(a, ka, "the session claimed by its holder");
	ls_bundle_untold(a, ta);
	/* The holder goes: the lease, still its, ends the session. */
	h_conn_close(&c);
	ls_ends(a, ka, "the session whose holder closed");
	h_conn_close(&c2);
}

/*
 * A leased gdb session is claimed at once after the restart, while the
 * next daemon may still be asking gdb where it is: the claim holds, the
 * session runs on under the claiming connection, and once that closes it
 * ends at its grace, gdb and its program with it.
 */
Test(lease, a_leased_gdb_session_is_claimed_as_it_is_adopted)
{
	struct h_tracked tracked[4] = { 0 };
	struct h_conn	 c, c2;
	char		 params[1024], left[256], tok[64];
	const char	*t;
	json_t		*r, *end;
	long		 id;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
	h_daemon_fg();
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"],\"lease\":true,\"lease_grace\":%d}",
	    h_ctx_fixture("FIX_SPINNER"), LS_GRACE_CLAIMED);
	r = h_conn_call(&c, "launch", params, H_WAIT_BOUND);
	id = (long)h_jint(r, "result.id", -1);
	t = h_jstr(r, "result.lease_token");
	cr_assert(id > 0 && t != NULL, "launch: %s", json_dumps(r,
	    JSON_COMPACT));
	snprintf(tok, sizeof(tok), "%s", t);
	json_decref(r);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the spinner never ran");
	h_pid_track(&tracked[0], "gdb", h_cli_status_pid(id, "pid"));
	h_pid_track(&tracked[1], "the spinner", h_cli_status_pid(id,
	    "inferior_pid"));
	h_pid_track(&tracked[2], "the keeper", h_cli_status_pid(id,
	    "keeper_pid"));
	h_daemon_fg_kill();
	h_conn_close(&c);
	h_daemon_fg();

	cr_assert_eq(h_conn_open(&c2, H->sock), 0);
	ls_claimed(&c2, id, tok, "as the gdb session is adopted");
	cr_assert(h_cli_wait_status(id, "state", "running", H_WAIT_BOUND),
	    "the adopted gdb session never ran again");
	cr_assert(!h_pid_tracked_gone(tracked), "a process of the claimed "
	    "session is gone");
	ls_refused(&c2, id, "ffffffffffffffffffffffffffffffff", "unauthorized",
	    "wrong lease token");
	h_conn_close(&c2);
	end = h_cli_wait_ended(id, LS_BOUND);
	cr_assert_not_null(end, "the claimed gdb session did not end once its "
	    "connection closed");
	json_decref(end);
	cr_assert(h_wait_for(h_pid_tracked_gone, tracked, H_WAIT_BOUND),
	    "left after the lease's end: %s", h_pid_tracked_left(tracked, left,
	    sizeof(left)));
}
