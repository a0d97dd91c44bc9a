/*
 * The adoption soak's sessions of the gdb family, each stopped at its
 * breakpoint when the daemon is killed: gdb and gdbserver running the
 * beat fixture on a transport (a resume prints its next numbered line),
 * remote, gdb against a gdbserver the test runs, and qemu, the board
 * firmware stopped where it takes in a byte of its UART, which the resume
 * echoes. Each is adopted stopped there, its breakpoint listed; exec
 * evaluates; a resume (run control) stops at the breakpoint again, seq
 * past the last, and expect finds what it printed.
 */
#include "harness.h"
#include "adopt-soak.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The board's line where a byte came in from the UART, found by its text. */
#define SA_BOARD_LINE	"if (c == FAULT_BYTE)"
/* What the board prints at reset. */
#define SA_BOARD_BANNER	"dbgctl board ready\r\n"

/* "board.c:N", N the line of the board's source that holds SA_BOARD_LINE. */
static const char *
sa_gdb_board_line(void)
{
	static char where[64];
	char path[PATH_MAX], *src, *at, *p;
	const char *root = getenv("DBGCTL_SOURCE_ROOT");
	int line = 1;

	cr_assert_not_null(root, "DBGCTL_SOURCE_ROOT is not set");
	snprintf(path, sizeof path, "%s/examples/board/board.c", root);
	src = h_read_file(path, NULL);
	cr_assert_not_null(src, "cannot read %s", path);
	at = strstr(src, SA_BOARD_LINE);
	cr_assert_not_null(at, "%s holds no \"%s\"", path, SA_BOARD_LINE);
	for (p = src; p < at; p++)
		line += *p == '\n';
	free(src);
	snprintf(where, sizeof where, "board.c:%d", line);
	return where;
}

/* The next byte for the board to echo: a to z, over and over. */
static char
sa_gdb_board_byte(struct sa_dbg *d)
{
	return (char)('a' + (d->hits + 1) % 26);
}

/* Send the board one byte; asserted. */
static void
sa_gdb_send(struct sa *s, struct sa_dbg *d, char c)
{
	char ids[32], text[2] = { c, '\0' };
	struct h_res r;

	h_cli(&r, H_ARGS("send", h_idstr(d->id, ids, sizeof ids), text));
	cr_assert_eq(r.code, 0, "%s: send to the board (%ld): exit %d: %s; "
	    "the daemons' logs: %s", s->where, d->id, r.code, r.err,
	    sa_logs(s));
	h_run_free(&r);
}

/* Where d's streams stood before a resume: what it prints comes after. */
struct sa_gdb_from {
	size_t	target;
	size_t	console;
};

/*
 * Before a resume of d: where its streams stand; the board gets the byte
 * its next stop holds, and the one it holds now is what it must echo.
 */
static void
sa_gdb_ready(struct sa *s, struct sa_dbg *d, struct sa_gdb_from *f)
{
	char echoed[2] = { d->pending, '\0' };

	sa_stream_check(s, d->target != NULL ? d->target : d->console);
	f->target = d->target != NULL ? d->target->whole : 0;
	f->console = d->console->seen.len;
	if (d->pending == '\0')
		return;
	d->pending = sa_gdb_board_byte(d);
	sa_gdb_send(s, d, d->pending);
	h_bytes_add(&d->target->want, echoed, 1);
}

/* The reply of a resume of d: stopped at its breakpoint, seq past the last. */
static void
sa_gdb_took(struct sa *s, struct sa_dbg *d, json_t *hit)
{
	const char *func = h_jstr(hit, "target.stop.func");
	long seq = (long)h_jint(hit, "target.seq", -1);

	cr_assert(func != NULL && strcmp(func, d->func) == 0 && seq > d->seq,
	    "%s: a resume of %s (%ld) stopped in %s, seq %ld after %ld; the "
	    "daemons' logs: %s", s->where, d->what, d->id, func ? func :
	    "(none)", seq, d->seq, sa_logs(s));
	d->seq = seq;
	d->hits++;
}

/*
 * Run control: resume d until its breakpoint; it stops there again, seq
 * past the last, and expect finds what the run printed: the beat's next
 * line, a byte the board echoed (which one, a run lost with a daemon may
 * have changed: the stream's form says), the stop on remote's console.
 */
void
sa_gdb_hit(struct sa *s, struct sa_dbg *d)
{
	struct sa_gdb_from f;
	char ids[32], line[64];
	json_t *hit;

	sa_gdb_ready(s, d, &f);
	hit = h_cli_json(H_ARGS("resume", "--wait", h_idstr(d->id, ids,
	    sizeof ids)));
	sa_gdb_took(s, d, hit);
	json_decref(hit);
	if (d->pending != '\0')
		sa_stream_expect_re(s, d->target, f.target, "[a-z]");
	else if (d->target != NULL) {
		snprintf(line, sizeof line, "beat %ld twice", d->target->lines +
		    1);
		sa_stream_expect(s, d->target, f.target, line);
	} else
		sa_stream_expect(s, d->console, f.console, d->func);
}

/* A resume of d in flight across the kill: started, not waited for. */
void
sa_gdb_hit_start(struct sa *s, struct sa_dbg *d, struct h_proc *p)
{
	struct sa_gdb_from f;
	char ids[32];

	sa_gdb_ready(s, d, &f);
	cr_assert_eq(h_cli_start(p, H_ARGS("--json", "resume", "--wait",
	    h_idstr(d->id, ids, sizeof ids))), 0, "start resume --wait");
}

/*
 * The resume in flight ended: with its stop, if its daemon answered
 * before the kill; or lost with its daemon (exit 3), the run done or
 * not, which the adopted session's state says.
 */
void
sa_gdb_hit_end(struct sa *s, struct sa_dbg *d, struct h_proc *p)
{
	json_t *hit;

	h_run_wait(p, H_RUN_BOUND);
	cr_assert(p->res.code == 0 || p->res.code == 3, "%s: a resume of %s "
	    "(%ld) across the kill exited %d: %s%s", s->where, d->what, d->id,
	    p->res.code, p->res.out, p->res.err);
	if (p->res.code == 0) {
		hit = json_loads(p->res.out, 0, NULL);
		cr_assert_not_null(hit, "%s: resume --json printed %s",
		    s->where, p->res.out);
		sa_gdb_took(s, d, hit);
		json_decref(hit);
	} else
		s->lost++;
	h_run_free(&p->res);
}

/* Wait until d's target is stopped; its seq then. */
static void
sa_gdb_stopped(struct sa_dbg *d)
{
	json_t *st;

	cr_assert(h_cli_wait_status(d->id, "target.state", "stopped",
	    H_WAIT_BOUND), "%s's breakpoint was never hit", d->what);
	st = h_cli_status(d->id);
	d->seq = (long)h_jint(st, "target.seq", -1);
	json_decref(st);
}

/* Set d's breakpoint at d->where; asserted. */
static void
sa_gdb_break(struct sa_dbg *d)
{
	char ids[32];

	json_decref(h_cli_json(H_ARGS("break", h_idstr(d->id, ids, sizeof ids),
	    d->where)));
}

/* The next of the soak's gdb-family sessions, its console followed. */
static struct sa_dbg *
sa_gdb_new(struct sa *s, const char *what, long id, const char *func)
{
	struct sa_dbg *d = &s->dbg[s->ndbg++];

	*d = (struct sa_dbg){ .what = what, .id = id, .func = func,
	    .where = func };
	d->console = sa_stream_add(s, id, "console", SA_FREE);
	return d;
}

/* gdb running the beat fixture on a transport, stopped at beat_count. */
static void
sa_gdb_start_gdb(struct sa *s)
{
	long id = sa_launch(H_ARGS("--kind", "gdb", "--transport", "--name",
	    "gdb", "-x", "run", "--", h_ctx_fixture("FIX_BEAT")));
	struct sa_dbg *d = sa_gdb_new(s, "gdb", id, "beat_count");

	d->target = sa_stream_add(s, id, "target", SA_BEAT);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "gdb (%ld) never ran its program", id);
	sa_gdb_break(d);
	sa_gdb_stopped(d);
}

/* gdbserver running the beat fixture on a transport, at beat_count. */
static void
sa_gdb_start_gdbserver(struct sa *s)
{
	char ids[32];
	long id = sa_launch(H_ARGS("--kind", "gdbserver", "--transport",
	    "--name", "gdbserver", "--", h_ctx_fixture("FIX_BEAT")));
	struct sa_dbg *d = sa_gdb_new(s, "gdbserver", id, "beat_count");

	d->target = sa_stream_add(s, id, "target", SA_BEAT);
	sa_gdb_break(d);
	/* From the program's entry: to its first beat, nothing printed. */
	json_decref(h_cli_json(H_ARGS("resume", "--wait", h_idstr(id, ids,
	    sizeof ids))));
	sa_gdb_stopped(d);
}

/* gdb connected to a gdbserver the test runs, at loop_tick. */
static void
sa_gdb_start_remote(struct sa *s)
{
	const char *loop = h_ctx_fixture("FIX_LOOP");
	char remote[64];
	struct sa_dbg *d;
	long id;

	snprintf(remote, sizeof remote, "127.0.0.1:%d",
	    h_run_gdbserver(&s->server, &s->server_err, loop));
	id = sa_launch(H_ARGS("--remote", remote, "--name", "remote", "--",
	    loop));
	d = sa_gdb_new(s, "remote", id, "loop_tick");
	sa_gdb_break(d);
	sa_gdb_hit(s, d);
}

/*
 * The board under qemu, its banner out, stopped where it took in its
 * first byte (a breakpoint on a line of main: the function is main).
 */
static void
sa_gdb_start_qemu(struct sa *s)
{
	const char *fw = h_board_firmware("FIX_BOARD");
	struct h_bytes got = { calloc(1, 1), 0 };
	struct sa_dbg *d;
	char ids[32];
	long id;

	id = sa_launch(H_ARGS("--kind", "qemu", "--machine", "lm3s6965evb",
	    "--name", "qemu", "--", fw));
	cr_assert_eq(h_cli_recv_until(h_idstr(id, ids, sizeof ids),
	    SA_BOARD_BANNER, &got, H_WAIT_BOUND), 0, "no banner from the board");
	free(got.p);
	d = sa_gdb_new(s, "qemu", id, "main");
	d->where = sa_gdb_board_line();
	d->target = sa_stream_add(s, id, "target", SA_EXACT);
	d->target->read_next = (long)strlen(SA_BOARD_BANNER);
	h_bytes_add(&d->target->want, SA_BOARD_BANNER,
	    strlen(SA_BOARD_BANNER));
	sa_gdb_break(d);
	d->pending = 'a';
	sa_gdb_send(s, d, d->pending);
	sa_gdb_stopped(d);
}

/* The gdb family's sessions, each stopped at its breakpoint. */
void
sa_gdb_start(struct sa *s)
{
	sa_gdb_start_gdb(s);
	sa_gdb_start_gdbserver(s);
	sa_gdb_start_remote(s);
	sa_gdb_start_qemu(s);
}

/*
 * The adopted d is as it was: stopped at its breakpoint, which is listed,
 * its seq past the last; exec evaluates, and a resume hits again.
 */
void
sa_gdb_check(struct sa *s, struct sa_dbg *d)
{
	const char *func;
	char ids[32];
	struct h_res r;
	json_t *st, *list;
	char *text;

	h_idstr(d->id, ids, sizeof ids);
	cr_assert(h_cli_wait_status(d->id, "state", "running", H_WAIT_BOUND),
	    "%s: the adopted %s (%ld) never ran again; the daemons' logs: %s",
	    s->where, d->what, d->id, sa_logs(s));
	st = h_cli_status(d->id);
	func = h_jstr(st, "target.stop.frame.func");
	cr_assert(h_jstr(st, "target.state") != NULL && strcmp(h_jstr(st,
	    "target.state"), "stopped") == 0 && func != NULL && strcmp(func,
	    d->func) == 0 && h_jint(st, "target.seq", -1) >= d->seq, "%s: the "
	    "adopted %s (%ld) is not stopped at its breakpoint, seq at least "
	    "%ld, but %s in %s, seq %lld; the daemons' logs: %s", s->where,
	    d->what, d->id, d->seq, h_jstr(st, "target.state"), func,
	    h_jint(st, "target.seq", -1), sa_logs(s));
	d->seq = (long)h_jint(st, "target.seq", -1);
	json_decref(st);
	list = h_cli_json(H_ARGS("break", "--list", ids));
	text = json_dumps(list, 0);
	cr_assert(text != NULL && strstr(text, d->where) != NULL, "%s: %s's "
	    "breakpoint at %s is not listed after the adoption: %s", s->where,
	    d->what, d->where, text ? text : "");
	free(text);
	json_decref(list);
	h_cli(&r, H_ARGS("exec", ids, "--", "print", "6*7"));
	cr_assert(r.code == 0 && strstr(r.out, "42") != NULL, "%s: exec in "
	    "the adopted %s: exit %d: %s%s", s->where, d->what, r.code, r.out,
	    r.err);
	h_run_free(&r);
	sa_gdb_hit(s, d);
}
