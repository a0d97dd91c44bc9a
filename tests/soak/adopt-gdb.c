/*
 * The adoption soak's gdb session: a program stopped at a breakpoint when
 * the daemon is killed is adopted stopped there, its breakpoint listed;
 * it evaluates, and a resume stops at the breakpoint again.
 */
#include "harness.h"
#include "adopt-soak.h"

#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

/* Resume gdb until its breakpoint: it stops there again, seq past the last. */
void
sa_gdb_hit(struct sa *s)
{
	char ids[32];
	json_t *hit = h_cli_json(H_ARGS("resume", "--wait", h_idstr(s->gdb,
	    ids, sizeof ids)));
	const char *func = h_jstr(hit, "target.stop.func");
	long seq = (long)h_jint(hit, "target.seq", -1);

	cr_assert(func != NULL && strcmp(func, "loop_tick") == 0 &&
	    seq > s->gdb_seq, "%s: a resume of gdb (%ld) stopped in %s, seq "
	    "%ld after %ld", s->where, s->gdb, func ? func : "(none)", seq,
	    s->gdb_seq);
	json_decref(hit);
	s->gdb_seq = seq;
	s->hits++;
}

/* A gdb session running a program stopped at its breakpoint. */
void
sa_gdb_start(struct sa *s)
{
	char ids[32];
	json_t *st;

	s->gdb = sa_launch(H_ARGS("--kind", "gdb", "--name", "gdb", "-x",
	    "run", "--", h_ctx_fixture("FIX_LOOP")));
	h_idstr(s->gdb, ids, sizeof ids);
	cr_assert(h_cli_wait_status(s->gdb, "target.state", "running",
	    H_WAIT_BOUND), "gdb (%ld) never ran its program", s->gdb);
	json_decref(h_cli_json(H_ARGS("break", ids, "loop_tick")));
	cr_assert(h_cli_wait_status(s->gdb, "target.state", "stopped",
	    H_WAIT_BOUND), "gdb's breakpoint was never hit");
	st = h_cli_status(s->gdb);
	s->gdb_seq = (long)h_jint(st, "target.seq", -1);
	json_decref(st);
}

/*
 * The adopted gdb is as it was: stopped at its breakpoint, which is
 * listed, its seq past the last; exec evaluates, and a resume hits again.
 */
void
sa_gdb_check(struct sa *s)
{
	char ids[32];
	struct h_res r;
	json_t *st, *list;
	char *text;

	h_idstr(s->gdb, ids, sizeof ids);
	cr_assert(h_cli_wait_status(s->gdb, "state", "running", H_WAIT_BOUND),
	    "%s: the adopted gdb (%ld) never ran again; the daemons' logs: %s",
	    s->where, s->gdb, sa_logs(s));
	st = h_cli_status(s->gdb);
	cr_assert(h_jstr(st, "target.state") != NULL && strcmp(h_jstr(st,
	    "target.state"), "stopped") == 0 && h_jstr(st,
	    "target.stop.frame.func") != NULL && strcmp(h_jstr(st,
	    "target.stop.frame.func"), "loop_tick") == 0 && h_jint(st,
	    "target.seq", -1) >= s->gdb_seq, "%s: the adopted gdb is not "
	    "stopped at its breakpoint, seq at least %ld", s->where,
	    s->gdb_seq);
	s->gdb_seq = (long)h_jint(st, "target.seq", -1);
	json_decref(st);
	list = h_cli_json(H_ARGS("break", "--list", ids));
	text = json_dumps(list, 0);
	cr_assert(text != NULL && strstr(text, "loop_tick") != NULL, "%s: "
	    "gdb's breakpoint is not listed after the adoption: %s", s->where,
	    text ? text : "");
	free(text);
	json_decref(list);
	h_cli(&r, H_ARGS("exec", ids, "--", "print", "6*7"));
	cr_assert(r.code == 0 && strstr(r.out, "42") != NULL, "%s: exec in "
	    "the adopted gdb: exit %d: %s%s", s->where, r.code, r.out, r.err);
	h_run_free(&r);
	sa_gdb_hit(s);
}
