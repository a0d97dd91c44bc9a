/*
 * The soak's hostile phase of joined clients: six controllers and six
 * observers joined to one running gdb session pipeline every bypass of
 * the join filter (issue 31) for ten seconds: nested -interpreter-exec of
 * either interpreter, python, shell and their kin, commands that run
 * commands, an observer's assignments, calls and interrupts, and joins
 * past the cap. Meanwhile the owner pings: every ping is answered within
 * the bound dbgctld(8) LIMITS documents, every bypass is refused, and
 * afterwards nothing of the session changed: it runs, its target never
 * stopped (its seq is the same), gdb and the program live, a variable
 * keeps its value and no breakpoint appeared.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <sys/socket.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long the clients try (s), and how many of each kind. */
#define JH_SECONDS	10
#define JH_CONTROLLERS	6
#define JH_OBSERVERS	6
#define JH_CLIENTS	(JH_CONTROLLERS + JH_OBSERVERS)
/* The daemon's default cap on a session's joined clients. */
#define JH_CAP		16
/* Bound for one line or reply (ms). */
#define JH_BOUND	(30000 * H_SLOW)
/* What scratch[0] of the loop fixture holds through the phase. */
#define JH_MARK		"42"

/*
 * The longest an owner's ping may take (ms): the bound test_hostile.c
 * holds its phase to (HOSTILE_PING_BOUND), as dbgctld(8) LIMITS says.
 */
#ifdef __SANITIZE_ADDRESS__
#define JH_PING_BOUND	5000
#else
#define JH_PING_BOUND	2000
#endif

/* What a controller tries: each would end, take or run code in the session. */
static const char *const jh_controller[] = {
	"-interpreter-exec mi \"-target-detach\"",
	"-interpreter-exec mi \"\\055target-detach\"",
	"-interpreter-exec console \"interpreter-exec mi \\\"-exec-abort\\\"\"",
	"-interpreter-exec --thread 1 console \"p 1\" \"kill\"",
	"-interpreter-exec mi \"-interpreter-exec mi \\\"-interpreter-exec "
	    "console \\\\\\\"kill\\\\\\\"\\\"\"",
	"python gdb.execute(\"kill\")", "pyt gdb.execute(\"detach\")",
	"pi", "guile", "source /dev/null", "shell kill -9 $PPID", "!true",
	"| p 1 | sh", "pipe p 1 | sh", "define hook-stop", "alias k2 = kill",
	"eval \"kill\"", "while 1", "make", "with confirm off -- kill",
	"thread apply all kill", "frame apply all -q py 1", "tfaas detach",
	"-break-commands 1 \"kill\"", "-var-set-visualizer v None",
	"-exec-abort", "-exec-run", "-target-select remote :1",
	"-file-exec-and-symbols /bin/sh", "core-file /dev/null",
	"new-ui mi3 /dev/null", NULL
};

/* What an observer tries: each would change the target or the session. */
static const char *const jh_observer[] = {
	"-data-evaluate-expression scratch[0]=-1000000",
	"-data-evaluate-expression scratch[0]++",
	"-data-evaluate-expression --scratch[0]",
	"-data-evaluate-expression scratch[0]|=1",
	"-data-evaluate-expression loop_tick()",
	"-var-create - * scratch[0]=0",
	"-interpreter-exec mi \"-exec-interrupt\"",
	"-interpreter-exec mi \"-data-evaluate-expression scratch[0]=0\"",
	"-interpreter-exec console \"set var scratch[0]=0\"",
	"-exec-interrupt", "-break-insert loop_tick",
	"-data-write-memory-bytes &scratch 00", "-gdb-set var scratch[0]=0",
	"-dprintf-insert loop_tick \"x\"", "-catch-load x",
	"-dbgctl-interrupt", NULL
};

/* One joined client and what came of what it sent. */
struct jh_client {
	struct h_conn	 c;
	bool		 observe;
	long		 sent;
	long		 answered;	/* its lines answered */
	char		 bad[512];	/* the first answer that was not ^error */
};

/* Join session id on a new connection; the program's pid from the seed. */
static long
jh_join(struct h_conn *m, long id, const char *extra)
{
	char	 req[512], *line;
	long	 pid = 0;
	json_t	*r;

	cr_assert_eq(h_conn_open(m, H->sock), 0);
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"mi\",\"params\":{\"session\":%ld%s}}\n", id, extra);
	cr_assert_eq(h_conn_send(m, req, strlen(req), JH_BOUND), 0);
	r = h_conn_recv(m, JH_BOUND);
	cr_assert(json_is_true(h_jpath(r, "result.raw")), "mi: %s",
	    r ? json_dumps(r, JSON_COMPACT) : "no reply");
	json_decref(r);
	while ((line = h_conn_line(m, JH_BOUND)) != NULL &&
	    strncmp(line, "(gdb)", 5) != 0) {
		if (strncmp(line, "=thread-group-started", 21) == 0 &&
		    strstr(line, "pid=\"") != NULL)
			pid = strtol(strstr(line, "pid=\"") + 5, NULL, 10);
		free(line);
	}
	cr_assert_not_null(line, "no prompt after the seed");
	free(line);
	return pid;
}

/* Take one line a client read: an answer to a bypass is ^error. */
static void
jh_take(struct jh_client *k, const char *line)
{
	const char *rest = line + strspn(line, "0123456789");

	if (rest[0] != '^')
		return;
	if (strncmp(rest, "^error,msg=", 11) == 0) {
		k->answered++;
		return;
	}
	if (k->bad[0] == '\0')
		snprintf(k->bad, sizeof(k->bad), "%s", line);
	k->answered++;
}

/* Read what a client has, without waiting. */
static void
jh_drain(struct jh_client *k)
{
	char	*line;
	ssize_t	 r;

	for (;;) {
		if (k->c.cap - k->c.len < 65536) {
			k->c.cap = k->c.cap ? k->c.cap * 2 : 131072;
			k->c.buf = realloc(k->c.buf, k->c.cap);
			cr_assert_not_null(k->c.buf);
		}
		r = recv(k->c.fd, k->c.buf + k->c.len, k->c.cap - k->c.len,
		    MSG_DONTWAIT);
		if (r <= 0)
			break;
		k->c.len += (size_t)r;
	}
	cr_assert(r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
	    "a joined client's channel closed");
	while ((line = h_conn_line(&k->c, -1)) != NULL) {
		jh_take(k, line);
		free(line);
	}
}

/* Write a client's whole list once, each line with its index as token. */
static void
jh_send(struct jh_client *k)
{
	const char *const	*list = k->observe ? jh_observer :
				    jh_controller;
	char			 buf[16384];
	size_t			 n = 0;
	int			 i;

	for (i = 0; list[i] != NULL; i++, k->sent++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s\n",
		    list[i][0] == '-' && strcmp(list[i], "-dbgctl-interrupt")
		    == 0 ? "" : "1", list[i]);
	cr_assert_lt(n, sizeof(buf));
	cr_assert_eq(h_conn_send(&k->c, buf, n, JH_BOUND), 0, "write");
}

/* Run an MI command of the owner's (exec); its value, or NULL (malloc'd). */
static char *
jh_exec(struct h_conn *own, long id, const char *cmd)
{
	char	 req[256];
	json_t	*r;
	char	*v = NULL;

	snprintf(req, sizeof(req), "{\"session\":%ld,\"command\":\"%s\"}", id,
	    cmd);
	r = h_conn_call(own, "exec", req, JH_BOUND);
	if (h_jstr(r, "result.results.value") != NULL)
		v = strdup(h_jstr(r, "result.results.value"));
	else if (h_jstr(r, "result.results.BreakpointTable.nr_rows") != NULL)
		v = strdup(h_jstr(r, "result.results.BreakpointTable.nr_rows"));
	json_decref(r);
	return v;
}

/* Halt the target (owner), or run it again, and wait for it. */
static void
jh_target(struct h_conn *own, long id, bool halt)
{
	free(jh_exec(own, id, halt ? "-exec-interrupt" : "-exec-continue"));
	cr_assert(h_cli_wait_status(id, "target.state", halt ? "stopped" :
	    "running", H_WAIT_BOUND), "the owner's %s", halt ? "halt" :
	    "continue");
}

/* Joins past the cap get limit; the ones below it are let in. */
static void
jh_cap(long id)
{
	struct h_conn	 extra[JH_CAP - JH_CLIENTS + 1];
	char		 req[256];
	json_t		*r;
	int		 i;

	for (i = 0; i < JH_CAP - JH_CLIENTS; i++)
		jh_join(&extra[i], id, "");
	cr_assert_eq(h_conn_open(&extra[i], H->sock), 0);
	snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"
	    "\"mi\",\"params\":{\"session\":%ld}}\n", id);
	cr_assert_eq(h_conn_send(&extra[i], req, strlen(req), JH_BOUND), 0);
	r = h_conn_recv(&extra[i], JH_BOUND);
	cr_assert_str_eq(h_jkind(r), "limit", "joiner %d: %s", JH_CAP + 1,
	    r ? json_dumps(r, JSON_COMPACT) : "no reply");
	json_decref(r);
	for (i = 0; i <= JH_CAP - JH_CLIENTS; i++)
		h_conn_close(&extra[i]);
}

/*
 * Every bypass of the join filter, pipelined by twelve joined clients for
 * ten seconds: all refused, the owner's pings within the bound, and the
 * session exactly as it was.
 */
Test(soak, joined_clients_trying_every_bypass_change_nothing)
{
	static struct jh_client	 k[JH_CLIENTS];
	struct h_conn		 own;
	char			 params[1024], *v;
	double			 t0, dt, end, worst = 0;
	long			 id, pings = 0, seq, prog = 0, refused = 0;
	pid_t			 gdb;
	json_t			*st, *r;
	int			 i;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&own, H->sock), 0, "connect");
	snprintf(params, sizeof(params), "{\"kind\":\"gdb\",\"argv\":[\"%s\"],"
	    "\"commands\":[\"run\"]}", h_ctx_fixture("FIX_LOOP"));
	r = h_conn_call(&own, "launch", params, JH_BOUND);
	id = (long)h_jint(r, "result.id", -1);
	cr_assert_gt(id, 0, "launch: %s", r ? json_dumps(r, JSON_COMPACT) :
	    "no reply");
	json_decref(r);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the target never ran");
	gdb = h_cli_status_pid(id, "pid");
	jh_target(&own, id, true);
	free(jh_exec(&own, id, "-data-evaluate-expression scratch[0]="
	    JH_MARK));
	jh_target(&own, id, false);
	st = h_cli_status(id);
	seq = (long)h_jint(st, "target.seq", -1);
	json_decref(st);

	for (i = 0; i < JH_CLIENTS; i++) {
		k[i].observe = i >= JH_CONTROLLERS;
		prog = jh_join(&k[i].c, id, k[i].observe ?
		    ",\"observe\":true" : "");
	}
	cr_assert_gt(prog, 0, "no program pid in the seed");
	jh_cap(id);
	end = h_now() + JH_SECONDS;
	while (h_now() < end) {
		for (i = 0; i < JH_CLIENTS; i++)
			if (k[i].sent - k[i].answered < 100)
				jh_send(&k[i]);
		t0 = h_now();
		r = h_conn_call(&own, "ping", "{}", H_WAIT_BOUND);
		dt = (h_now() - t0) * 1000;
		cr_assert(json_is_true(h_jpath(r, "result.pong")), "a ping: %s "
		    "after %.0f ms", r ? json_dumps(r, JSON_COMPACT) :
		    "no reply", dt);
		json_decref(r);
		worst = dt > worst ? dt : worst;
		pings++;
		for (i = 0; i < JH_CLIENTS; i++)
			jh_drain(&k[i]);
	}
	for (i = 0; i < JH_CLIENTS; i++) {
		t0 = h_now() + JH_BOUND / 1000.0;
		while (k[i].answered < k[i].sent && h_now() < t0) {
			v = h_conn_line(&k[i].c, JH_BOUND);
			cr_assert_not_null(v, "client %d: %ld answers of %ld", i,
			    k[i].answered, k[i].sent);
			jh_take(&k[i], v);
			free(v);
		}
		cr_assert_eq(k[i].answered, k[i].sent, "client %d", i);
		cr_assert_str_eq(k[i].bad, "", "client %d (%s) got past the "
		    "filter: %s", i, k[i].observe ? "observer" : "controller",
		    k[i].bad);
		refused += k[i].answered;
	}
	h_note("soak hostile join: %ld bypasses refused, %ld pings in %d s: "
	    "max %.2f ms (bound %d)", refused, pings, JH_SECONDS, worst,
	    JH_PING_BOUND);
	cr_assert_leq(worst, JH_PING_BOUND, "the slowest of %ld pings took "
	    "%.0f ms", pings, worst);

	st = h_cli_status(id);
	cr_assert_str_eq(h_jstr(st, "state"), "running");
	cr_assert_str_eq(h_jstr(st, "target.state"), "running");
	cr_assert_eq(h_jint(st, "target.seq", -1), seq, "the target stopped "
	    "or ran again: %s", json_dumps(st, JSON_COMPACT));
	json_decref(st);
	cr_assert_eq(kill(gdb, 0), 0, "gdb is gone");
	cr_assert_eq(kill((pid_t)prog, 0), 0, "the program is gone");
	for (i = 0; i < JH_CLIENTS; i++)
		h_conn_close(&k[i].c);
	jh_target(&own, id, true);
	v = jh_exec(&own, id, "-data-evaluate-expression (int)scratch[0]");
	cr_assert_str_eq(v, JH_MARK, "scratch[0] changed");
	free(v);
	v = jh_exec(&own, id, "-break-list");
	cr_assert_str_eq(v, "0", "breakpoints appeared");
	free(v);
	json_decref(h_conn_call(&own, "stop", "{\"all\":true}", H_WAIT_BOUND));
	h_conn_close(&own);
}
