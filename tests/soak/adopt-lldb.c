/*
 * The adoption soak's lldb session, at its prompt whenever the daemon is
 * killed: the same lldb is adopted at its prompt, exec types there and is
 * answered at once, and expect finds the answer on its console.
 */
#include "harness.h"
#include "adopt-soak.h"

#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

/* The lldb's console, the soak's stream of it. */
static struct sa_stream *
sa_lldb_console(struct sa *s)
{
	int i;

	for (i = 0; i < s->nst; i++)
		if (s->st[i].id == s->lldb)
			return &s->st[i];
	cr_assert_fail("lldb's console is not followed");
	return NULL;
}

/* An lldb session at its prompt, its console followed. */
void
sa_lldb_start(struct sa *s)
{
	char ids[32];

	s->lldb = sa_launch(H_ARGS("--kind", "lldb", "--name", "lldb", "--",
	    h_ctx_fixture("FIX_LOOP")));
	s->lldb_pid = h_cli_status_pid(s->lldb, "pid");
	sa_stream_add(s, s->lldb, "console", SA_FREE);
	/* lldb's first prompt may need a settle; later ones come at once. */
	h_idstr(s->lldb, ids, sizeof ids);
	cr_assert(h_wait_for(h_cli_lldb_answers, ids, H_WAIT_BOUND), "lldb "
	    "(%ld) never answered", s->lldb);
}

/*
 * The adopted lldb is the same one, at its prompt: exec answers at once,
 * and the answer is on its console after where it stood.
 */
void
sa_lldb_check(struct sa *s)
{
	struct sa_stream *con = sa_lldb_console(s);
	char ids[32];
	struct h_res r;
	size_t from;

	h_idstr(s->lldb, ids, sizeof ids);
	cr_assert(h_cli_wait_status(s->lldb, "state", "running", H_WAIT_BOUND),
	    "%s: the adopted lldb (%ld) never ran again; the daemons' logs: %s",
	    s->where, s->lldb, sa_logs(s));
	cr_assert_eq(h_cli_status_pid(s->lldb, "pid"), s->lldb_pid, "%s: "
	    "another lldb after the adoption", s->where);
	sa_stream_check(s, con);
	from = con->seen.len;
	h_cli(&r, H_ARGS("exec", ids, "--", "target", "list"));
	cr_assert(r.code == 0 && strstr(r.out, "fix-loop") != NULL, "%s: exec "
	    "in the adopted lldb: exit %d: %s%s; the daemons' logs: %s",
	    s->where, r.code, r.out, r.err, sa_logs(s));
	h_run_free(&r);
	sa_stream_expect(s, con, from, "fix-loop");
	s->lldb_answers++;
}

/* An exec of lldb in flight across the kill: started, not waited for. */
void
sa_lldb_exec_start(struct sa *s, struct h_proc *p)
{
	char ids[32];

	cr_assert_eq(h_cli_start(p, H_ARGS("exec", h_idstr(s->lldb, ids,
	    sizeof ids), "--", "target", "list")), 0, "start exec");
}

/*
 * The exec in flight ended: answered, if its daemon answered before the
 * kill, or lost with it (exit 3); lldb is at its prompt either way.
 */
void
sa_lldb_exec_end(struct sa *s, struct h_proc *p)
{
	h_run_wait(p, H_RUN_BOUND);
	cr_assert(p->res.code == 3 || (p->res.code == 0 && strstr(p->res.out,
	    "fix-loop") != NULL), "%s: an exec of lldb across the kill "
	    "exited %d: %s%s", s->where, p->res.code, p->res.out, p->res.err);
	s->lost += p->res.code == 3;
	h_run_free(&p->res);
}
