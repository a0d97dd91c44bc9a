/*
 * dbgctl expect and logs --stream/--timestamps as a shell script sees
 * them: the match on stdout, exit 0, 4 at a timeout and 1 at the stream's
 * end with what came on stderr, 2 for usage and a pattern the daemon
 * refuses (its words verbatim), 3 with no daemon; --json, --from to go on
 * where the last call ended, Ctrl-C; the target's transcript byte for byte
 * and its arrival times.
 */
#include "b64.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

TestSuite(cliexpect, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 180);

/* A generous timeout for a match that is there already (ms, as text). */
#define CLI_EXPECT_BOUND	"20000"

/* Launch sh -c script as an exec session with a transport; its id in ids. */
static long
cli_expect_launch(const char *script, char *ids, size_t len)
{
	long	id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", script));
	h_idstr(id, ids, len);
	return id;
}

/* Run dbgctl --json ARGS..., assert exit 0, and parse its one line. */
static json_t *
cli_expect_json(const char *const args[])
{
	struct h_res	 r;
	json_error_t	 e;
	json_t		*j;
	const char	**v;
	size_t		 n = 0;

	while (args[n] != NULL)
		n++;
	v = calloc(n + 2, sizeof *v);
	v[0] = "--json";
	memcpy(v + 1, args, (n + 1) * sizeof *v);
	h_cli_exit(&r, 0, v);
	free(v);
	cr_assert(r.out_len > 0 && r.out[r.out_len - 1] == '\n' &&
	    memchr(r.out, '\n', r.out_len) == r.out + r.out_len - 1,
	    "expect --json: expected one line, got \"%s\"", r.out);
	j = json_loads(r.out, 0, &e);
	cr_assert_not_null(j, "expect --json: not JSON (%s): %s", e.text,
	    r.out);
	h_run_free(&r);
	return j;
}

/* A match is printed, text and a newline, and exit 0. */
Test(cliexpect, a_match_prints_its_text)
{
	struct h_res	r;
	char		ids[32];

	h_daemon_fg();
	cli_expect_launch("printf 'U-Boot 1.0\\nboot ok\\n'; exec sleep 300",
	    ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", "--timeout",
	    CLI_EXPECT_BOUND, ids, "boot ok"));
	cr_assert_str_eq(r.out, "boot ok\n", "expect 'boot ok': stdout");
	cr_assert_eq(r.err_len, 0, "expect: stderr \"%s\"", r.err);
	h_run_free(&r);
	/* -i: either case. */
	h_cli_exit(&r, 0, H_ARGS("expect", "-i", "--from", "0", ids,
	    "BOOT OK"));
	cr_assert_str_eq(r.out, "boot ok\n", "expect -i 'BOOT OK': stdout");
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("expect", "--ignore-case", "--from", "0",
	    ids, "u-boot \\d"));
	cr_assert_str_eq(r.out, "U-Boot 1\n", "expect --ignore-case: stdout");
	h_run_free(&r);
}

/* A regex with a group: the match on stdout, the group in --json. */
Test(cliexpect, a_regex_with_a_group)
{
	struct h_res	 r;
	json_t		*j;
	char		 ids[32];

	h_daemon_fg();
	cli_expect_launch("printf 'tick\\ncounter=14390\\r\\nname=fw\\n'; "
	    "exec sleep 300", ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", ids,
	    "counter=(\\d+)\\r\\n"));
	cr_assert_str_eq(r.out, "counter=14390\r\n\n", "stdout: \"%s\"",
	    h_shown(r.out, r.out_len, 200));
	h_run_free(&r);
	j = cli_expect_json(H_ARGS("expect", "--from", "0", ids,
	    "counter=(\\d+)", "name=(?P<name>\\w+)"));
	cr_assert_eq(h_jint(j, "index", -1), 0, "index");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(j,
	    "groups"), 0)) ?: "", "14390", "group 1 of counter=(\\d+)");
	cr_assert_eq(h_jint(j, "offset", -1), 5, "offset of counter=");
	cr_assert_eq(h_jint(j, "next", -1), 18, "next after counter=14390");
	json_decref(j);
	/* From the match's next on, the second pattern; its named group. */
	j = cli_expect_json(H_ARGS("expect", "--from", "18", ids,
	    "counter=(\\d+)", "name=(?P<name>\\w+)"));
	cr_assert_eq(h_jint(j, "index", -1), 1, "index of name=");
	cr_assert_str_eq(h_jstr(j, "named.name") ?: "", "fw", "named group");
	json_decref(j);
}

/* --exact takes regex metacharacters literally; as a regex it is refused. */
Test(cliexpect, exact_takes_metacharacters_literally)
{
	struct h_res	 r;
	json_t		*j;
	char		 ids[32];

	h_daemon_fg();
	cli_expect_launch("printf 'aXbbc(d [x]\\na.b*c(d [x]\\n'; "
	    "exec sleep 300", ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--exact", "--from", "0", ids,
	    "a.b*c(d [x]"));
	cr_assert_str_eq(r.out, "a.b*c(d [x]\n", "expect --exact: stdout");
	h_run_free(&r);
	j = cli_expect_json(H_ARGS("expect", "--exact", "--from", "0", ids,
	    "b*c(d"));
	cr_assert_eq(h_jint(j, "offset", -1), 14, "--exact b*c(d matched at "
	    "%lld, not at the literal (14)", h_jint(j, "offset", -1));
	json_decref(j);
	/* Without --exact the same words are a regex with an open group. */
	h_cli_exit(&r, 2, H_ARGS("expect", "--from", "0", "--timeout",
	    "100", ids, "a.b*c(d [x]"));
	cr_assert(strstr(r.err, "parenthesis") != NULL, "a regex with an "
	    "open group: stderr \"%s\"", r.err);
	h_run_free(&r);
}

/* A timeout exits 4 and stderr shows every byte that came, escaped. */
Test(cliexpect, timeout_exits_4_with_what_came)
{
	struct h_res	r;
	char		ids[32];

	h_daemon_fg();
	cli_expect_launch("printf 'boot ok\\r\\nx\\001y\\\\z\\n'; "
	    "exec sleep 300", ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", ids, "z\\n"));
	h_run_free(&r);
	h_cli_exit(&r, 4, H_ARGS("expect", "--from", "0", "--timeout",
	    "300", ids, "login:"));
	cr_assert_geq(r.elapsed, 0.29, "timed out after %.3f s, not 300 ms",
	    r.elapsed);
	cr_assert_eq(r.out_len, 0, "stdout at a timeout: \"%s\"", r.out);
	cr_assert(strstr(r.err, "dbgctl: no match for login: in session ") ==
	    r.err, "stderr starts with the daemon's reason: \"%s\"", r.err);
	cr_assert(strstr(r.err, "; received:\nboot ok\\r\nx\\x01y\\\\z\n") !=
	    NULL, "stderr holds what came, escaped: \"%s\"",
	    h_shown(r.err, r.err_len, 400));
	h_run_free(&r);
	/* Nothing after --from: said so. */
	h_cli_exit(&r, 4, H_ARGS("expect", "--timeout", "100", ids,
	    "login:"));
	cr_assert(strstr(r.err, "received nothing") != NULL, "stderr: \"%s\"",
	    r.err);
	h_run_free(&r);
}

/* Over 512 KiB received: the last 512 KiB, and where the rest is. */
Test(cliexpect, a_long_got_is_its_last_512_kib)
{
	struct h_res	r;
	char		ids[32], script[PATH_MAX + 64], want[256];
	const char	*tail;

	h_daemon_fg();
	snprintf(script, sizeof script, "'%s' 600000; exec sleep 300",
	    h_ctx_fixture("FIX_BLAST"));
	cli_expect_launch(script, ids, sizeof ids);
	/* Its last bytes, 599992 to 599999: "01234567" (37-byte alphabet). */
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "599990", ids,
	    "01234567"));
	h_run_free(&r);
	h_cli_exit(&r, 4, H_ARGS("expect", "--from", "0", "--timeout",
	    "200", ids, "never"));
	snprintf(want, sizeof want, "; received (the last 524288 bytes, from "
	    "offset 75712; all from 0 on: dbgctl logs --stream target %s):\n",
	    ids);
	cr_assert(strstr(r.err, want) != NULL, "stderr: \"%s\"",
	    h_shown(r.err, 300, 300));
	tail = strchr(r.err, '\n') + 1;
	cr_assert_eq(r.err_len - (size_t)(tail - r.err), 524288 + 1,
	    "the last 512 KiB and a newline");
	h_run_free(&r);
}

/* Bytes that are not UTF-8: matched and printed raw, escaped on stderr. */
Test(cliexpect, bytes_that_are_not_utf8)
{
	struct h_res	r;
	char		ids[32];

	h_daemon_fg();
	cli_expect_launch("printf 'A\\377B\\n'; exec sleep 300", ids,
	    sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", ids,
	    "A\\xffB"));
	cr_assert(r.out_len == 4 && memcmp(r.out, "A\377B\n", 4) == 0,
	    "stdout: \"%s\"", h_shown(r.out, r.out_len, 100));
	h_run_free(&r);
	h_cli_exit(&r, 4, H_ARGS("expect", "--from", "0", "--timeout",
	    "100", ids, "nothing"));
	cr_assert(strstr(r.err, "A\\xffB\n") != NULL, "stderr: \"%s\"",
	    h_shown(r.err, r.err_len, 400));
	h_run_free(&r);
}

/* The stream's end with no match exits 1, with what came on stderr. */
Test(cliexpect, eof_exits_1_once_the_program_ended)
{
	struct h_proc	p;
	struct h_res	r;
	char		ids[32];

	h_daemon_fg();
	cli_expect_launch("printf 'first\\n'; read x; printf 'last\\n'", ids,
	    sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", ids, "first"));
	h_run_free(&r);
	/* Waiting while the program runs, then it ends. */
	cr_assert_eq(h_cli_start(&p, H_ARGS("expect", "--from", "0", ids,
	    "never")), 0, "start dbgctl expect");
	h_cli_exit(&r, 0, H_ARGS("send", ids, "go\n"));
	h_run_free(&r);
	h_run_wait(&p, H_RUN_BOUND);
	cr_assert_eq(p.res.code, 1, "expect at the end of the stream: exit "
	    "%d, not 1 (stderr: %s)", p.res.code, p.res.err);
	cr_assert(strstr(p.res.err, "ended with no match for never") != NULL &&
	    strstr(p.res.err, "; received:\nfirst\nlast\n") != NULL,
	    "stderr: \"%s\"", p.res.err);
	h_run_free(&p.res);
	/* And after it ended, at once. */
	h_cli_exit(&r, 1, H_ARGS("expect", "--from", "6", ids, "never"));
	cr_assert(strstr(r.err, "; received:\nlast\n") != NULL,
	    "stderr: \"%s\"", r.err);
	h_run_free(&r);
}

/* Usage errors exit 2 and start no daemon. */
Test(cliexpect, usage_errors_exit_2)
{
	const char *const *bad[] = {
		H_ARGS("expect"),
		H_ARGS("expect", "1"),
		H_ARGS("expect", "--stream", "uart", "1", "x"),
		H_ARGS("expect", "--timeout", "soon", "1", "x"),
		H_ARGS("expect", "--timeout", "2147483648", "1", "x"),
		H_ARGS("expect", "--from", "-1", "1", "x"),
		H_ARGS("expect", "--regex", "1", "x"),
		H_ARGS("logs", "--stream", "uart", "1"),
	};
	struct h_res	r;
	char		usage[64];
	pid_t		d[4];
	size_t		i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		h_cli_exit(&r, 2, bad[i]);
		snprintf(usage, sizeof usage, "usage: dbgctl %s [", bad[i][0]);
		cr_assert(strstr(r.err, usage) != NULL, "no usage line of %s: "
		    "\"%s\"", bad[i][0], r.err);
		h_run_free(&r);
	}
	cr_assert_eq(h_daemon_list(d, 4), 0, "a usage error started a daemon");
}

/* A pattern the daemon refuses exits 2 with the daemon's words verbatim. */
Test(cliexpect, a_bad_pattern_exits_2_with_the_daemons_words)
{
	struct h_conn	 c;
	struct h_res	 r;
	json_t		*reply;
	char		 ids[32], params[256], want[1024];
	long		 id;

	h_daemon_fg();
	id = cli_expect_launch("exec sleep 300", ids, sizeof ids);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(params, sizeof params, "{\"session\":%ld,\"patterns\":"
	    "[\"ok\",\"a(b\"],\"timeout\":0}", id);
	reply = h_conn_call(&c, "expect", params, H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(reply), "invalid_params", "the daemon's kind");
	snprintf(want, sizeof want, "dbgctl: %s\n",
	    h_jstr(reply, "error.message"));
	json_decref(reply);
	h_conn_close(&c);
	h_cli_exit(&r, 2, H_ARGS("expect", "--timeout", "0", ids, "ok",
	    "a(b"));
	cr_assert_str_eq(r.err, want, "stderr is the daemon's message");
	h_run_free(&r);
}

/* No daemon: exit 3, and none is started. */
Test(cliexpect, no_daemon_exits_3)
{
	struct h_res	r;
	pid_t		d[4];

	h_cli_exit(&r, 3, H_ARGS("expect", "--timeout", "100", "1", "x"));
	cr_assert(strstr(r.err, "no daemon is running") != NULL,
	    "stderr: \"%s\"", r.err);
	h_run_free(&r);
	h_cli_exit(&r, 3, H_ARGS("logs", "--stream", "target", "1"));
	h_run_free(&r);
	cr_assert_eq(h_daemon_list(d, 4), 0, "expect started a daemon");
}

/* --json: the whole answer on one line, index, offsets, next, text. */
Test(cliexpect, json_has_index_offset_next)
{
	json_t	*j;
	char	 ids[32];

	h_daemon_fg();
	cli_expect_launch("printf 'alpha beta gamma\\n'; exec sleep 300",
	    ids, sizeof ids);
	j = cli_expect_json(H_ARGS("expect", "--from", "0", ids, "gamma",
	    "b(e)ta"));
	cr_assert_eq(h_jint(j, "index", -1), 1, "index: the earliest match");
	cr_assert_eq(h_jint(j, "offset", -1), 6, "offset");
	cr_assert_eq(h_jint(j, "end", -1), 10, "end");
	cr_assert_eq(h_jint(j, "next", -1), 10, "next");
	cr_assert_eq(h_jint(j, "from", -1), 0, "from");
	cr_assert_str_eq(h_jstr(j, "text") ?: "", "beta", "text");
	cr_assert_str_eq(h_jstr(j, "before") ?: "", "alpha ", "before");
	cr_assert_str_eq(h_jstr(j, "stream") ?: "", "target", "stream");
	json_decref(j);
}

/*
 * Two invocations in sequence are two connections: the second goes on
 * from the first's next with --from; without it, it starts at the
 * stream's end and sees nothing.
 */
Test(cliexpect, successive_expects_go_on_where_the_last_matched)
{
	struct h_res	 r;
	json_t		*j;
	char		 ids[32], next[32];

	h_daemon_fg();
	cli_expect_launch("printf 'step 1\\nstep 2\\nstep 3\\n'; "
	    "exec sleep 300", ids, sizeof ids);
	j = cli_expect_json(H_ARGS("expect", "--from", "0", ids, "step \\d"));
	cr_assert_str_eq(h_jstr(j, "text") ?: "", "step 1", "first match");
	snprintf(next, sizeof next, "%lld", h_jint(j, "next", -1));
	json_decref(j);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", next, ids,
	    "step \\d"));
	cr_assert_str_eq(r.out, "step 2\n", "from the first's next (%s)", next);
	h_run_free(&r);
	/* Without --from, the session's cli cursor: after the last match. */
	h_cli_exit(&r, 0, H_ARGS("expect", "--timeout", "20000", ids,
	    "step \\d"));
	cr_assert_str_eq(r.out, "step 3\n", "the cli cursor goes on");
	h_run_free(&r);
	/* What came after step 3 is its line feed alone. */
	h_cli_exit(&r, 4, H_ARGS("expect", "--timeout", "200", ids,
	    "step \\d"));
	cr_assert(strstr(r.err, "received:\n\n") != NULL, "stderr: \"%s\"",
	    r.err);
	h_run_free(&r);
	/* A cursor of its own starts at the session's first byte. */
	h_cli_exit(&r, 0, H_ARGS("expect", "--cursor", "mine", ids,
	    "step \\d"));
	cr_assert_str_eq(r.out, "step 1\n", "a new named cursor");
	h_run_free(&r);
	h_cli_exit(&r, 2, H_ARGS("expect", "--cursor", "no/slash", ids,
	    "step"));
	h_run_free(&r);
}

/* The console and a stream the session has not. */
Test(cliexpect, console_and_a_missing_stream)
{
	struct h_res	r;
	char		ids[32];
	long		id;

	h_daemon_fg();
	id = h_cli_launch_sh(NULL, "echo hello console; exec sleep 300");
	h_idstr(id, ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", ids,
	    "hello (\\w+)"));
	cr_assert_str_eq(r.out, "hello console\n", "console by default");
	h_run_free(&r);
	h_cli_exit(&r, 1, H_ARGS("expect", "--stream", "target", ids, "x"));
	cr_assert(strstr(r.err, "no target stream") != NULL, "stderr: \"%s\"",
	    r.err);
	h_run_free(&r);
	h_cli_exit(&r, 1, H_ARGS("logs", "--stream", "target", ids));
	cr_assert(strstr(r.err, "no target stream") != NULL, "stderr: \"%s\"",
	    r.err);
	h_run_free(&r);
}

/* Whether client pid is blocked with its connection open (arg: the pid). */
static bool
cli_expect_waiting(void *arg)
{
	pid_t	pid = *(pid_t *)arg;
	char	fds[4096];

	return h_pid_state(pid) == 'S' && h_pid_fds_text(pid, fds,
	    sizeof fds) > 0 && strstr(fds, "socket:") != NULL;
}

/* Ctrl-C while waiting: the client dies of SIGINT (130), the daemon serves on. */
Test(cliexpect, ctrl_c_while_waiting_exits_130)
{
	struct sigaction	 dfl, old;
	struct h_proc		 p;
	struct h_res		 r;
	char			 ids[32];

	h_daemon_fg();
	cli_expect_launch("printf 'ready\\n'; exec sleep 300", ids,
	    sizeof ids);
	/* A worker that ignores SIGINT would hand that on to the client. */
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGINT, &dfl, &old);
	cr_assert_eq(h_cli_start(&p, H_ARGS("expect", ids, "never")), 0,
	    "start dbgctl expect");
	sigaction(SIGINT, &old, NULL);
	cr_assert(h_wait_for(cli_expect_waiting, &p.pid, H_WAIT_BOUND),
	    "dbgctl expect never waited on its connection");
	kill(p.pid, SIGINT);
	h_run_wait(&p, H_RUN_BOUND);
	cr_assert_eq(p.res.code, 130, "expect after SIGINT: exit %d, not 130",
	    p.res.code);
	cr_assert_eq(p.res.out_len + p.res.err_len, 0, "output after SIGINT: "
	    "\"%s\" \"%s\"", p.res.out, p.res.err);
	h_run_free(&p.res);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", ids, "ready"));
	h_run_free(&r);
}

/* logs --stream target prints exactly the bytes the program wrote. */
Test(cliexpect, logs_stream_target_is_every_byte)
{
	static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz\n";
	struct h_res	 r;
	json_t		*st;
	char		 ids[32], *want;
	size_t		 i, n = 300000;
	long		 id;

	h_daemon_fg();
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    h_ctx_fixture("FIX_BLAST"), "300000"));
	h_idstr(id, ids, sizeof ids);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	cr_assert_not_null(st, "the blast session did not end");
	json_decref(st);
	want = malloc(n);
	for (i = 0; i < n; i++)
		want[i] = alphabet[i % 37];
	h_cli_exit(&r, 0, H_ARGS("logs", "--stream", "target", ids));
	cr_assert_eq(r.out_len, n, "logs --stream target: %zu bytes, not %zu",
	    r.out_len, n);
	cr_assert(memcmp(r.out, want, n) == 0, "logs --stream target differs "
	    "from what the program wrote");
	h_run_free(&r);
	free(want);
	/* What was sent to it is a stream of its own. */
	id = cli_expect_launch("exec cat >/dev/null", ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("send", "--eof", ids, "in\001put\n"));
	h_run_free(&r);
	st = h_cli_wait_ended(id, H_WAIT_BOUND);
	json_decref(st);
	h_cli_exit(&r, 0, H_ARGS("logs", "--stream", "target-in", ids));
	cr_assert_str_eq(r.out, "in\001put\n", "logs --stream target-in");
	h_run_free(&r);
}

/* Whether line (len bytes, from its start) begins with a timestamp; its time. */
static bool
cli_expect_stamp(const char *line, time_t *when)
{
	regex_t		re;
	struct tm	tm;
	bool		ok;

	cr_assert_eq(regcomp(&re, "^\\[[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:"
	    "[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\] ", REG_EXTENDED | REG_NOSUB), 0);
	ok = regexec(&re, line, 0, NULL, 0) == 0;
	regfree(&re);
	memset(&tm, 0, sizeof tm);
	if (ok && strptime(line + 1, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		ok = false;
	*when = timegm(&tm);
	return ok;
}

/* logs --timestamps: every line starts with its UTC arrival time. */
Test(cliexpect, logs_timestamps_prefix_every_line)
{
	struct h_res	 r;
	json_t		*j, *times, *rec;
	unsigned char	*data;
	char		 ids[32], *line, *save = NULL;
	time_t		 now = time(NULL), when, first = 0;
	double		 three;
	size_t		 len, k;
	int		 n = 0;

	h_daemon_fg();
	cli_expect_launch("printf 'one\\ntwo\\n'; sleep 1; printf 'three\\n';"
	    " printf 'four' >&2; exec sleep 300", ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", ids, "three"));
	h_run_free(&r);
	h_cli_exit(&r, 0, H_ARGS("logs", "--stream", "target",
	    "--timestamps", ids));
	for (line = strtok_r(r.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save), n++) {
		cr_assert(cli_expect_stamp(line, &when), "line %d without a "
		    "timestamp: \"%s\"", n, line);
		cr_assert(when >= now - 120 && when <= time(NULL) + 1,
		    "line %d's time is not now, in UTC: \"%s\"", n, line);
		if (n == 0)
			first = when;
		cr_assert_str_eq(line + 26, n == 0 ? "one" : n == 1 ? "two" :
		    "three", "line %d", n);
	}
	cr_assert_eq(n, 3, "three lines");
	cr_assert_geq(when, first, "times go forward");
	h_run_free(&r);
	/* --json: the bytes as they are, and the times beside them. */
	j = h_cli_json(H_ARGS("logs", "--stream", "target", "--timestamps",
	    ids));
	data = b64_decode(h_jstr(j, "data"), strlen(h_jstr(j, "data")), &len);
	cr_assert(data != NULL && len == 14 && memcmp(data, "one\ntwo\nthree\n",
	    14) == 0, "logs --json --timestamps: data \"%s\"", h_jstr(j,
	    "data"));
	free(data);
	times = json_object_get(j, "times");
	cr_assert(json_array_size(times) >= 2 && json_integer_value(
	    json_array_get(json_array_get(times, 0), 0)) == 0 &&
	    json_number_value(json_array_get(json_array_get(times, 0), 1)) >=
	    (double)now - 120, "logs --json --timestamps: times from offset 0 "
	    "on");
	/* "three" (at 8) came a second after the first line, as written. */
	three = -1;
	json_array_foreach(times, k, rec)
		if (json_integer_value(json_array_get(rec, 0)) == 8)
			three = json_number_value(json_array_get(rec, 1)) -
			    json_number_value(json_array_get(json_array_get(
			    times, 0), 1));
	cr_assert(three >= 0.9, "logs --json --timestamps: no chunk at offset "
	    "8 a second after the first (%.3f s): %s", three, json_dumps(times,
	    JSON_COMPACT));
	json_decref(j);
	/* The console too, a last line without its newline as well. */
	h_cli_wait_log(ids, "four", H_WAIT_BOUND);
	h_cli_exit(&r, 0, H_ARGS("logs", "--timestamps", "--plain", ids));
	cr_assert(cli_expect_stamp(r.out, &when) && strstr(r.out, "] four") !=
	    NULL, "logs --timestamps --plain: \"%s\"", r.out);
	h_run_free(&r);
}

/* logs -f --timestamps --stream target: lines that come later are stamped too. */
Test(cliexpect, logs_follow_with_timestamps)
{
	struct h_proc	 p;
	struct h_res	 r;
	char		 ids[32], *line, *save = NULL;
	time_t		 when;
	int		 n = 0;

	h_daemon_fg();
	cli_expect_launch("printf 'early\\npart'; read x; printf 'ial\\nlate\\n'",
	    ids, sizeof ids);
	h_cli_exit(&r, 0, H_ARGS("expect", "--from", "0", ids, "part"));
	h_run_free(&r);
	cr_assert_eq(h_cli_start(&p, H_ARGS("logs", "-f", "--timestamps",
	    "--stream", "target", ids)), 0, "start logs -f");
	h_cli_exit(&r, 0, H_ARGS("send", ids, "go\n"));
	h_run_free(&r);
	h_run_wait(&p, H_RUN_BOUND);
	cr_assert_eq(p.res.code, 0, "logs -f: exit %d (stderr %s)",
	    p.res.code, p.res.err);
	for (line = strtok_r(p.res.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save), n++) {
		cr_assert(cli_expect_stamp(line, &when), "line %d without a "
		    "timestamp: \"%s\"", n, line);
		cr_assert_str_eq(line + 26, n == 0 ? "early" : n == 1 ?
		    "partial" : "late", "line %d", n);
	}
	cr_assert_eq(n, 3, "three lines");
	h_run_free(&p.res);
}
