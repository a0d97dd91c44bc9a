/*
 * The adoption soak: sessions of every kind while their daemon is killed
 * with SIGKILL at random moments, twenty times over, a new daemon taking
 * them over each time. Exec sessions stream numbered lines on their
 * console and transport, echo what is sent to them and run out their
 * deadlines; gdb, gdbserver, remote and qemu sessions sit at their
 * breakpoints, and each resume prints what its stream must hold next
 * (adopt-gdb.c); lldb sits at its prompt (adopt-lldb.c); a board held
 * for an hour and a gdb due in an hour keep what they had left
 * (adopt-hold.c); an attach and a logs -f ride out every kill
 * (adopt-client.c). After each round every session is listed under its
 * id; every stream is what it was with more after it, in its form, no
 * byte lost or repeated; reads of the targets start at or past where the
 * last one ended; expect, send, exec and run control answer. At the end
 * every stream holds its whole sequence and stop --all leaves nothing
 * (adopt-end.c). And with no new daemon, the grace period ends
 * everything and no keeper's socket is left.
 *
 * The delays come from a seeded generator whose seed is printed: set
 * SOAK_SEED to replay a failing soak, and SOAK_LOGS to a file for all
 * its daemons' logs on a failure. Nothing here asserts on timing.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adopt-soak.h"

/* The next number of the soak's generator (xorshift32). */
static unsigned
sa_rand(struct sa *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 17;
	s->rng ^= s->rng << 5;
	return s->rng;
}

/* The seed from SOAK_SEED, or a fresh one; printed for a replay. */
static void
sa_seed(struct sa *s)
{
	const char *e = getenv("SOAK_SEED");

	s->seed = e != NULL ? (unsigned)strtoul(e, NULL, 0) :
	    (unsigned)time(NULL) ^ (unsigned)getpid() << 16;
	if (s->seed == 0)
		s->seed = 1;
	s->rng = s->seed;
	fprintf(stderr, "soak adopt: SOAK_SEED=%u\n", s->seed);
	h_note("soak adopt: seed %u (SOAK_SEED=%u replays it)", s->seed,
	    s->seed);
}

/*
 * The last of the killed daemons' logs and the live one's, for messages;
 * all of them into the file SOAK_LOGS names, if set.
 */
const char *
sa_logs(struct sa *s)
{
	char *now = h_daemon_log();
	struct h_bytes b = { NULL, 0 };
	const char *shown, *path = getenv("SOAK_LOGS");
	FILE *f;

	if (s->logs.len > 0)
		h_bytes_add(&b, s->logs.p, s->logs.len);
	if (now != NULL)
		h_bytes_add(&b, now, strlen(now));
	free(now);
	if (path != NULL && b.p != NULL && (f = fopen(path, "w")) != NULL) {
		fwrite(b.p, 1, b.len, f);
		fclose(f);
	}
	shown = h_shown(b.p != NULL ? b.p : "", b.len, 3000);
	free(b.p);
	return shown;
}

/* A launch of ARGS (asserted); its id. */
long
sa_launch(const char *const args[])
{
	return h_cli_launch(args);
}

/*
 * The exec sessions: tx streams t lines on its transport and c lines on
 * its console, con c lines on its console, echo echoes its transport.
 */
static void
sa_sessions(struct sa *s)
{
	char tx[PATH_MAX + 256], con[PATH_MAX + 256];
	struct sa_stream *st;
	long txid, conid;

	h_ctx_path(s->flag, sizeof s->flag, "end");
	snprintf(tx, sizeof tx, "i=0; while [ ! -e %s ]; do seq -f t%%.0f "
	    "$i $((i+%d)); seq -f c%%.0f $i $((i+%d)) >&2; i=$((i+%d)); "
	    "sleep 0.05; done; echo end; echo end >&2; exec sleep 1000",
	    s->flag, SA_BATCH - 1, SA_BATCH - 1, SA_BATCH);
	snprintf(con, sizeof con, "i=0; while [ ! -e %s ]; do seq -f c%%.0f "
	    "$i $((i+%d)); i=$((i+%d)); sleep 0.05; done; echo end; exec "
	    "sleep 1000", s->flag, SA_BATCH - 1, SA_BATCH);
	txid = sa_launch(H_ARGS("--kind", "exec", "--transport", "--name",
	    "tx", "--", "sh", "-c", tx));
	conid = sa_launch(H_ARGS("--kind", "exec", "--name", "con", "--",
	    "sh", "-c", con));
	s->echo = sa_launch(H_ARGS("--kind", "exec", "--transport", "--name",
	    "echo", "--", "cat"));
	st = sa_stream_add(s, txid, "target", SA_LINES);
	st->tag = 't', st->eol = "\n";
	st = sa_stream_add(s, txid, "console", SA_LINES);
	st->tag = 'c', st->eol = "\r\n";
	st = sa_stream_add(s, conid, "console", SA_LINES);
	st->tag = 'c', st->eol = "\r\n";
}

/* Every session that runs is listed under its id. */
static void
sa_list(struct sa *s)
{
	bool held;
	int i;

	for (i = 0; i < s->nst; i++)
		cr_assert(sa_end_listed(s->st[i].id, &held), "%s: session %ld "
		    "is not listed after the adoption; the daemons' logs: %s",
		    s->where, s->st[i].id, sa_logs(s));
	cr_assert(sa_end_listed(s->echo, &held), "%s: echo (%ld) is not "
	    "listed after the adoption; the daemons' logs: %s", s->where,
	    s->echo, sa_logs(s));
	cr_assert(sa_end_listed(s->cl.attached, &held), "%s: the attached "
	    "session (%ld) is not listed after the adoption; the daemons' "
	    "logs: %s", s->where, s->cl.attached, sa_logs(s));
}

/* SIGKILL the daemon, keeping its log, and leave none for a moment. */
static void
sa_kill(struct sa *s)
{
	char out[PATH_MAX], *log;

	h_daemon_fg_kill();
	h_ctx_path(out, sizeof out, "daemon.out");
	if ((log = h_read_file(out, NULL)) != NULL)
		h_bytes_add(&s->logs, log, strlen(log));
	free(log);
	h_nap((int)(sa_rand(s) % SA_ABSENT_MS));
}

/*
 * The checks after an adoption: the list, every stream, reads at the
 * targets' offsets, expects, echo, the debuggers, holds and deadlines,
 * and the clients.
 */
static void
sa_after(struct sa *s)
{
	char line[32];
	int i;

	sa_list(s);
	for (i = 0; i < s->nst; i++)
		sa_stream_check(s, &s->st[i]);
	sa_stream_read_at(s, &s->st[0]);
	for (i = 0; i < 3; i++)
		sa_stream_expect_next(s, &s->st[i]);
	snprintf(line, sizeof line, "after %d\n", s->round);
	sa_stream_echo(s, line);
	for (i = 0; i < s->ndbg; i++)
		sa_gdb_check(s, &s->dbg[i]);
	for (i = 0; i < s->ndbg; i++)
		if (s->dbg[i].target != NULL)
			sa_stream_read_at(s, s->dbg[i].target);
	sa_lldb_check(s);
	sa_hold_check(s);
	sa_client_check(s);
}

/*
 * One round: a deadline session launched, a line echoed, each debugger
 * resumed to its breakpoint but one, whose resume, an expect and an exec
 * of lldb are in flight as the kill comes at a random moment; a new
 * daemon, and the checks.
 */
static void
sa_round(struct sa *s)
{
	struct h_proc run, exp, lldb;
	char line[32];
	int i, k = (int)(sa_rand(s) % (unsigned)s->ndbg);

	snprintf(s->where, sizeof s->where, "seed %u round %d", s->seed,
	    s->round);
	sa_hold_round(s);
	snprintf(line, sizeof line, "before %d\n", s->round);
	sa_stream_echo(s, line);
	for (i = 0; i < s->ndbg; i++)
		if (i != k)
			sa_gdb_hit(s, &s->dbg[i]);
	sa_gdb_hit_start(s, &s->dbg[k], &run);
	sa_stream_expect_start(s, &s->st[1], &exp);
	sa_lldb_exec_start(s, &lldb);
	/* Every other kill, likely while the resume runs. */
	h_nap((int)(sa_rand(s) % (sa_rand(s) % 2 ? SA_KILL_MS : SA_RUN_MS)));
	sa_kill(s);
	h_daemon_fg();
	sa_gdb_hit_end(s, &s->dbg[k], &run);
	sa_stream_expect_end(s, &exp);
	sa_lldb_exec_end(s, &lldb);
	sa_after(s);
	cr_assert_eq(h_daemon_pid(), H->fg_daemon, "%s: the daemon died after "
	    "the adoption; its log: %s", s->where, sa_logs(s));
}

/* Criterion .init: the test's world; keepers wait a minute for a daemon. */
static void
sa_init(void)
{
	h_ctx_setup();
	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
}

TestSuite(soak_adopt, .init = sa_init, .fini = h_ctx_teardown,
    .timeout = 300 * H_SLOW);

/* What the soak's streams and sessions went through, for the TAP output. */
static void
sa_summary(struct sa *s, double t0)
{
	int i, hits = 0;

	for (i = 0; i < s->ndbg; i++)
		hits += s->dbg[i].hits;
	h_note("soak adopt: %d SIGKILLs and adoptions in %.1f s; streams of "
	    "%ld, %ld and %ld lines whole; %d reads at their offsets; %zu bytes "
	    "echoed; %d of %d deadlines fired before their kill; %d holds kept "
	    "by an adoption; %d breakpoint hits of gdb, gdbserver, remote and "
	    "qemu, %d resumes and execs lost with their daemon; %d expects "
	    "rode out a kill; %d answers of lldb; attach again %d times; logs "
	    "-f %zu bytes; session cgroups checked: %s", SA_ROUNDS, h_now() -
	    t0, s->st[0].lines, s->st[1].lines, s->st[2].lines, s->reads, s->sent.len, s->early, SA_ROUNDS,
	    s->held, hits, s->lost, s->rode, s->lldb_answers, s->cl.again,
	    s->cl.out.len, s->cgroups ? "yes" : "no (none)");
}

/*
 * Twenty SIGKILLs of the daemon at random moments while sessions of
 * every kind stream, echo, answer, sit at breakpoints and run out their
 * deadlines: nothing is lost, repeated or left behind.
 */
Test(soak_adopt, sigkill_at_random_moments)
{
	static struct sa s;
	double t0 = h_now();
	int i;

	sa_seed(&s);
	h_daemon_fg();
	sa_sessions(&s);
	sa_gdb_start(&s);
	sa_lldb_start(&s);
	sa_hold_start(&s);
	sa_client_start(&s, &s.st[2]);
	for (s.round = 0; s.round < SA_ROUNDS; s.round++)
		sa_round(&s);
	sa_end_streams(&s);
	sa_end_stop_all(&s);
	sa_summary(&s, t0);
	for (i = 0; i < s.nst; i++) {
		free(s.st[i].seen.p);
		free(s.st[i].want.p);
	}
	free(s.sent.p);
	free(s.server_err.p);
	free(s.logs.p);
}

/*
 * With a grace of 1 s and no new daemon, every process of every session
 * ends and every keeper's socket goes; the next daemon has nothing to
 * adopt.
 */
Test(soak_adopt, the_grace_ends_what_nobody_adopts)
{
	static struct sa s;
	char report[8192] = "", names[1024];
	json_t *l;

	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=1");
	sa_seed(&s);
	snprintf(s.where, sizeof s.where, "seed %u", s.seed);
	h_daemon_fg();
	sa_sessions(&s);
	sa_launch(H_ARGS("--kind", "exec", "--", "sh", "-c", H_ESCAPING_TREE));
	sa_stream_echo(&s, "before\n");
	h_nap((int)(sa_rand(&s) % SA_KILL_MS));
	sa_kill(&s);
	if (!h_wait_for(sa_end_no_procs, NULL, 15000 * H_SLOW)) {
		sa_end_procs(report, sizeof report);
		cr_assert_fail("%s: 15 s after the SIGKILL, with a grace of 1 s, "
		    "processes of sessions live: %s", s.where, report);
	}
	cr_assert(h_wait_for(sa_end_no_socks, NULL, H_WAIT_BOUND), "%s: keeper "
	    "sockets outlived their keepers: %s", s.where,
	    (sa_end_keeper_socks(names, sizeof names), names));
	h_daemon_fg();
	l = h_cli_json(H_ARGS("list"));
	cr_assert_eq(json_array_size(json_object_get(l, "sessions")), 0,
	    "%s: the next daemon lists sessions nobody adopted", s.where);
	json_decref(l);
	free(s.sent.p);
	free(s.logs.p);
}
