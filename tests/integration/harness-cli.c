/*
 * The client as a script runs it: dbgctl -s SOCK ARGS... with its output
 * captured, and the commands the tests repeat (launch, status, list, logs)
 * with their success asserted.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Build "dbgctl -s SOCK ARGS..." into a malloc'd argv. */
static const char **
h_cli_build(const char *const args[], const char *extra)
{
	const char **v;
	size_t n = 0, i = 0;

	while (args[n] != NULL)
		n++;
	v = calloc(n + 5, sizeof(char *));
	v[i++] = H->dbgctl;
	v[i++] = "-s";
	v[i++] = H->sock;
	if (extra != NULL)
		v[i++] = extra;
	for (n = 0; args[n] != NULL; n++)
		v[i++] = args[n];
	v[i] = NULL;
	return v;
}

/* Run the client: dbgctl -s SOCK ARGS... Returns the exit code. */
int
h_cli(struct h_res *r, const char *const args[])
{
	const char **v = h_cli_build(args, NULL);
	int code = h_run(r, H_RUN_BOUND, v);

	free(v);
	return code;
}

/* Start the client in the background: dbgctl -s SOCK ARGS... */
int
h_cli_start(struct h_proc *p, const char *const args[])
{
	const char **v = h_cli_build(args, NULL);
	int e = h_run_start(p, v);

	free(v);
	return e;
}

/* The argv "dbgctl -s SOCK ARGS..." (malloc'd; free the array only). */
const char **
h_cli_argv(const char *const args[])
{
	return h_cli_build(args, NULL);
}

/* Run the client with input on a pipe as its stdin (SIGPIPE at default). */
int
h_cli_input(struct h_res *r, const char *input, const char *const args[])
{
	const char **v = h_cli_build(args, NULL);
	int code = h_run_input(r, H_RUN_BOUND, input, v);

	free(v);
	return code;
}

/* Run dbgctl -s SOCK --json ARGS..., assert exit 0, return the parsed JSON. */
json_t *
h_cli_json(const char *const args[])
{
	const char **v = h_cli_build(args, "--json");
	struct h_res r;
	json_error_t je;
	json_t *j;
	char cmd[1024];

	h_run(&r, H_RUN_BOUND, v);
	free(v);
	h_join_args(args, cmd, sizeof(cmd));
	cr_assert_eq(r.code, 0, "dbgctl --json %s: expected exit 0, got %d "
	    "(stderr: %s)", cmd, r.code, r.err);
	j = json_loads(r.out, JSON_DECODE_ANY, &je);
	cr_assert_not_null(j, "dbgctl --json %s: stdout is not JSON (%s): %s",
	    cmd, je.text, r.out);
	h_run_free(&r);
	return j;
}

/* Run dbgctl launch ARGS...; assert exit 0 and an id on stdout; return it. */
long
h_cli_launch(const char *const args[])
{
	const char *v[80];
	struct h_res r;
	char cmd[2048], *end;
	size_t i = 0;
	long id;
	int k;

	v[i++] = "launch";
	for (k = 0; args[k] != NULL && i < 79; k++)
		v[i++] = args[k];
	v[i] = NULL;
	h_join_args(v, cmd, sizeof(cmd));
	h_cli(&r, v);
	cr_assert_eq(r.code, 0, "dbgctl %s: expected exit 0, got %d "
	    "(stderr: %s)", cmd, r.code, r.err);
	id = strtol(r.out, &end, 10);
	cr_assert(end != r.out && id > 0 && (*end == '\n' || *end == '\0'),
	    "dbgctl %s: expected an id on stdout, got \"%s\"", cmd, r.out);
	h_run_free(&r);
	return id;
}

/* launch --kind exec [--env MARKER] -- PROG...; asserted; returns the id. */
long
h_cli_launch_exec(const char *marker, const char *const prog[])
{
	const char *v[64];
	size_t i = 0;
	int k;

	v[i++] = "--kind";
	v[i++] = "exec";
	if (marker != NULL) {
		v[i++] = "--env";
		v[i++] = marker;
	}
	v[i++] = "--";
	for (k = 0; prog[k] != NULL && i < 63; k++)
		v[i++] = prog[k];
	v[i] = NULL;
	return h_cli_launch(v);
}

/* launch --kind exec [--env MARKER] -- sh -c SCRIPT; asserted; the id. */
long
h_cli_launch_sh(const char *marker, const char *script)
{
	return h_cli_launch_exec(marker, H_ARGS("sh", "-c", script));
}

/* status --json of a session (asserts success). */
json_t *
h_cli_status(long id)
{
	char s[32];

	snprintf(s, sizeof(s), "%ld", id);
	return h_cli_json(H_ARGS("status", s));
}

/* A pid of status --json ("pid", "inferior_pid", ...), -1 if absent. */
pid_t
h_cli_status_pid(long id, const char *field)
{
	json_t *st = h_cli_status(id);
	pid_t pid = (pid_t)h_jint(st, field, -1);

	json_decref(st);
	return pid;
}

/*
 * dbgctl --json stop [--timeout MS] ID, asserted to succeed: the session as
 * the stop's reply has it; *elapsed (if not NULL) the seconds it took.
 */
json_t *
h_cli_stop(long id, const char *timeout_ms, double *elapsed)
{
	char ids[32];
	double t0 = h_now();
	json_t *reply, *s;

	h_idstr(id, ids, sizeof(ids));
	reply = timeout_ms != NULL ? h_cli_json(H_ARGS("stop", "--timeout",
	    timeout_ms, ids)) : h_cli_json(H_ARGS("stop", ids));
	if (elapsed != NULL)
		*elapsed = h_now() - t0;
	s = json_array_get(json_object_get(reply, "sessions"), 0);
	cr_assert(json_array_size(json_object_get(reply, "sessions")) == 1 &&
	    h_jint(s, "id", -1) == id, "dbgctl stop %s: expected the one "
	    "session in the reply, got %s", ids, json_dumps(reply,
	    JSON_COMPACT));
	json_incref(s);
	json_decref(reply);
	return s;
}

/*
 * Poll status until the member at path holds want (a string), or is there
 * at all when want is NULL; false at bound_ms.
 */
bool
h_cli_wait_status(long id, const char *path, const char *want, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	const char *v;
	json_t *st;
	bool ok;

	for (;;) {
		st = h_cli_status(id);
		v = h_jstr(st, path);
		ok = want == NULL ? h_jpath(st, path) != NULL :
		    v != NULL && strcmp(v, want) == 0;
		json_decref(st);
		if (ok || h_now() >= end)
			return ok;
		h_nap(20);
	}
}

/* Poll status until the state is "exited" or "failed"; it, or NULL. */
json_t *
h_cli_wait_ended(long id, int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	const char *state;
	json_t *j;

	for (;;) {
		j = h_cli_status(id);
		state = h_jstr(j, "state");
		if (state != NULL && (strcmp(state, "exited") == 0 ||
		    strcmp(state, "failed") == 0))
			return j;
		json_decref(j);
		if (h_now() > end)
			return NULL;
		h_nap(50);
	}
}

/* Assert the session ends within bound_ms, exit.code want; when: messages. */
void
h_cli_expect_exit(long id, int want, int bound_ms, const char *when)
{
	json_t *st = h_cli_wait_ended(id, bound_ms);

	cr_assert_not_null(st, "session %ld did not end %s", id, when);
	cr_assert_eq(h_jint(st, "exit.code", -1), want, "session %ld %s: "
	    "expected exit.code %d, got %lld (exit.signal %lld)", id, when,
	    want, h_jint(st, "exit.code", -1), h_jint(st, "exit.signal", -1));
	json_decref(st);
}

/* Assert the session's state is want (e.g. "running"); when: messages. */
void
h_cli_expect_state(long id, const char *want, const char *when)
{
	json_t *st = h_cli_status(id);
	const char *state = h_jstr(st, "state");

	cr_assert(state != NULL && strcmp(state, want) == 0, "dbgctl status "
	    "%ld %s: expected state %s, got %s (error: %s)", id, when, want,
	    state ? state : "(none)", h_jstr(st, "error") ?
	    h_jstr(st, "error") : "none");
	json_decref(st);
}

/* Assert `list` shows n sessions, each in state (NULL: any); when: messages. */
void
h_cli_expect_list(size_t n, const char *state, const char *when)
{
	json_t *l = h_cli_json(H_ARGS("list"));
	json_t *all = json_object_get(l, "sessions"), *s;
	const char *got;
	size_t i;

	cr_assert_eq(json_array_size(all), n, "list %s: expected %zu sessions, "
	    "got %zu", when, n, json_array_size(all));
	json_array_foreach(all, i, s) {
		got = h_jstr(s, "state");
		cr_assert(state == NULL || (got != NULL && strcmp(got, state) ==
		    0), "list %s: session %lld: expected state %s, got %s",
		    when, h_jint(s, "id", -1), state, got ? got : "(none)");
	}
	json_decref(l);
}

/* The session's console log as `dbgctl logs ID` prints it (malloc'd). */
char *
h_cli_logs(const char *id)
{
	struct h_res r;
	char *out;

	h_cli(&r, H_ARGS("logs", id));
	out = r.code == 0 ? r.out : strdup("");
	if (r.code != 0)
		free(r.out);
	free(r.err);
	return out;
}

/* True if `dbgctl logs ID` holds text now. */
bool
h_cli_log_has(const char *id, const char *text)
{
	char *log = h_cli_logs(id);
	bool ok = strstr(log, text) != NULL;

	free(log);
	return ok;
}

/* Arguments of a wait for text in a session's log. */
struct h_cli_log_arg {
	const char	*id;
	const char	*text;
};

/* Predicate: the log holds the text; a miss waits a little (a client run). */
static bool
h_cli_log_poll(void *arg)
{
	struct h_cli_log_arg *a = arg;
	bool ok = h_cli_log_has(a->id, a->text);

	if (!ok)
		h_nap(50);
	return ok;
}

/* Wait until the session's log holds text; assert it does within bound_ms. */
void
h_cli_wait_log(const char *id, const char *text, int bound_ms)
{
	struct h_cli_log_arg a = { id, text };
	char *log;

	if (h_wait_for(h_cli_log_poll, &a, bound_ms))
		return;
	log = h_cli_logs(id);
	cr_assert_fail("dbgctl logs %s: no \"%s\" within %d ms; log ends "
	    "with:\n%s", id, text, bound_ms, h_shown(log, strlen(log), 1500));
}

/*
 * Collect target output with `recv --timeout 1000` until want is in it,
 * the stream ends (exit 5) or bound_ms passes. Returns 0 (found), 5 (end
 * of stream) or -1 (bound passed).
 */
int
h_cli_recv_until(const char *id, const char *want, struct h_bytes *b,
    int bound_ms)
{
	double end = h_now() + bound_ms / 1000.0;
	struct h_res r;
	int code;

	for (;;) {
		if (want != NULL && b->p != NULL && strstr(b->p, want) != NULL)
			return 0;
		if (h_now() > end)
			return -1;
		code = h_cli(&r, H_ARGS("recv", "--timeout", "1000", id));
		if (code == 0) {
			cr_assert_gt(r.out_len, 0, "dbgctl recv %s: exit 0 "
			    "with no bytes", id);
			h_bytes_add(b, r.out, r.out_len);
		}
		h_run_free(&r);
		if (code == 5)
			return 5;
		cr_assert(code == 0 || code == 4, "dbgctl recv --timeout 1000 "
		    "%s: expected exit 0 (data) or 4 (timeout), got %d", id,
		    code);
	}
}

/* Run dbgctl ARGS... and assert it exits want; the caller frees r. */
void
h_cli_exit(struct h_res *r, int want, const char *const args[])
{
	char line[1024];

	h_cli(r, args);
	cr_assert_eq(r->code, want, "dbgctl %s: expected exit %d, got %d "
	    "(stdout: \"%s\", stderr: \"%s\")", h_join_args(args, line,
	    sizeof line), want, r->code, h_shown(r->out, r->out_len, 600),
	    h_shown(r->err, r->err_len, 600));
}

/* No daemon was started: no socket file, no dbgctld of this test. */
void
h_cli_expect_no_daemon(const char *cmd)
{
	pid_t d[4];

	cr_assert(access(H->sock, F_OK) != 0, "dbgctl %s: the socket %s exists "
	    "afterwards", cmd, H->sock);
	cr_assert_eq(h_daemon_list(d, 4), 0, "dbgctl %s started a daemon", cmd);
}

/* Whether an lldb exec answers (lldb has shown its prompt). */
bool
h_cli_lldb_answers(void *ids)
{
	struct h_res	r;
	bool		ok;

	h_cli(&r, H_ARGS("exec", (const char *)ids, "--", "version"));
	ok = r.code == 0 && strstr(r.out, "lldb version") != NULL;
	h_run_free(&r);
	return ok;
}

/*
 * Stop a session; right after the stop's answer none of its processes
 * is left: the tracked ones, and any that carries marker.
 */
void
h_cli_stop_leaves_nothing(long id, struct h_tracked *t,
    const char *marker)
{
	struct h_snap	 snap;
	struct h_res	 r;
	char		 ids[32], report[4096];
	int		 left;

	h_idstr(id, ids, sizeof ids);
	h_snap_take(&snap, marker);
	cr_assert_eq(h_cli(&r, H_ARGS("stop", ids)), 0, "dbgctl stop %s: "
	    "expected exit 0, got %d (stderr: %s)", ids, r.code, r.err);
	h_run_free(&r);
	cr_assert(h_pid_tracked_gone(t), "right after stop %s: "
	    "processes of the session exist: %s", ids, h_pid_tracked_left(t,
	    report, sizeof report));
	left = h_snap_leftovers(&snap, marker, false, report, sizeof report);
	cr_assert_eq(left, 0, "right after stop %s: expected no process of the "
	    "session, got %d: %s", ids, left, report);
	h_cli_expect_state(id, "exited", "after stop");
}
