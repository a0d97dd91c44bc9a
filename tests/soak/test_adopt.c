/*
 * The adoption soak: exec sessions that stream numbered lines on their
 * console and transport, echo what is sent to them and run out their
 * deadlines, and a gdb session stopping at a breakpoint, while their
 * daemon is killed with SIGKILL at random moments, twenty times over, a
 * new daemon taking them over each time. After each round every session
 * is listed under its id; every stream is the numbered sequence with no
 * byte lost or repeated, a prefix of what the old daemon had logged; a
 * read of the transport starts at or past where the last one ended;
 * expect and send answer; a deadline launched before the kill gets its
 * verdict, and a session its verdict holds is still held; gdb is stopped
 * at its breakpoint, which is listed, and evaluates and resumes. At the
 * end every stream holds its whole sequence and stop --all leaves
 * nothing. And with no new daemon, the grace period ends everything and
 * no keeper's socket is left.
 *
 * The delays come from a seeded generator whose seed is printed: set
 * SOAK_SEED to replay a failing soak. Nothing here asserts on timing.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "b64.h"
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

/* The last of the killed daemons' logs and the live one's, for messages. */
const char *
sa_logs(struct sa *s)
{
	char *now = h_daemon_log();
	struct h_bytes b = { NULL, 0 };
	const char *shown;

	if (s->logs.len > 0)
		h_bytes_add(&b, s->logs.p, s->logs.len);
	if (now != NULL)
		h_bytes_add(&b, now, strlen(now));
	free(now);
	shown = h_shown(b.p != NULL ? b.p : "", b.len, 3000);
	free(b.p);
	return shown;
}

/* What `dbgctl logs --stream NAME ID` prints (asserted to succeed). */
static char *
sa_stream_read(struct sa *s, long id, const char *name, size_t *len)
{
	struct h_res r;
	char ids[32];

	h_cli(&r, H_ARGS("logs", "--stream", name, h_idstr(id, ids,
	    sizeof ids)));
	cr_assert_eq(r.code, 0, "%s: logs --stream %s %ld: exit %d: %s; the "
	    "daemons' logs: %s", s->where, name, id, r.code, r.err,
	    sa_logs(s));
	free(r.err);
	*len = r.out_len;
	return r.out;
}

/*
 * Check data from where st's whole lines end against the numbered lines,
 * the last possibly cut, and an "end" line after a whole batch; NULL if
 * it is that, else what is wrong.
 */
static const char *
sa_stream_lines(struct sa_stream *st, const char *data, size_t len)
{
	char	line[64], end[16];
	size_t	n, e;

	e = (size_t)snprintf(end, sizeof end, "end%s", st->eol);
	while (st->whole < len && !st->ended) {
		n = (size_t)snprintf(line, sizeof line, "%c%ld%s", st->tag,
		    st->lines, st->eol);
		if (len - st->whole >= n &&
		    memcmp(data + st->whole, line, n) == 0) {
			st->whole += n;
			st->lines++;
		} else if (st->lines % SA_BATCH == 0 && len - st->whole >= e &&
		    memcmp(data + st->whole, end, e) == 0) {
			st->whole += e;
			st->ended = true;
		} else if (len - st->whole < n &&
		    (memcmp(data + st->whole, line, len - st->whole) == 0 ||
		    (st->lines % SA_BATCH == 0 && len - st->whole < e &&
		    memcmp(data + st->whole, end, len - st->whole) == 0)))
			return NULL;
		else
			return "not the next line";
	}
	return st->whole == len ? NULL : "bytes after the end line";
}

/*
 * Read st's stream again: what was read before is its unchanged prefix,
 * and what follows goes on with the numbered lines; asserted.
 */
static void
sa_stream_check(struct sa *s, struct sa_stream *st)
{
	const char *wrong;
	size_t len;
	char *data = sa_stream_read(s, st->id, st->name, &len);

	cr_assert(len >= st->seen.len && memcmp(data, st->seen.p,
	    st->seen.len) == 0, "%s: session %ld's %s stream (%zu bytes) does "
	    "not start with the %zu bytes it had before: now %s; the daemons' "
	    "logs: %s", s->where, st->id, st->name, len, st->seen.len,
	    h_shown(data, len, 600), sa_logs(s));
	wrong = sa_stream_lines(st, data, len);
	cr_assert_null(wrong, "%s: session %ld's %s stream: %s at offset %zu "
	    "(line %ld): %s; the daemons' logs: %s", s->where, st->id,
	    st->name, wrong, st->whole, st->lines, h_shown(data + st->whole,
	    len - st->whole, 300), sa_logs(s));
	h_bytes_add(&st->seen, data + st->seen.len, len - st->seen.len);
	free(data);
}

/*
 * Read what is there of tx's transport: it starts at or past where the
 * last read ended (no byte read twice) and is the stream's bytes at its
 * offsets, as the log holds them once it has caught up.
 */
static void
sa_read(struct sa *s, struct sa_stream *target)
{
	unsigned char *data;
	size_t len = 0;
	long off, next;
	json_t *r;
	char ids[32];

	r = h_cli_json(H_ARGS("recv", "--max", "65536", "--timeout", "20000",
	    h_idstr(target->id, ids, sizeof ids)));
	off = (long)h_jint(r, "offset", -1);
	next = (long)h_jint(r, "next_offset", -1);
	data = b64_decode(h_jstr(r, "data") != NULL ? h_jstr(r, "data") : "",
	    strlen(h_jstr(r, "data") != NULL ? h_jstr(r, "data") : ""), &len);
	json_decref(r);
	cr_assert(data != NULL && off >= s->read_next && next == off +
	    (long)len, "%s: a read of session %ld after the last one ended at "
	    "%ld gave %zu bytes at %ld to %ld", s->where, target->id,
	    s->read_next, len, off, next);
	/* The log may not hold yet what the read took: it soon does. */
	while (target->seen.len < (size_t)next) {
		sa_stream_check(s, target);
		if (target->seen.len < (size_t)next)
			h_nap(20);
	}
	cr_assert(memcmp(target->seen.p + off, data, len) == 0, "%s: the read "
	    "of session %ld at %ld gave %s, its log there holds %s", s->where,
	    target->id, off, h_shown((char *)data, len, 200),
	    h_shown(target->seen.p + off, len, 200));
	free(data);
	s->read_next = next;
	s->reads++;
}

/* A launch of ARGS (asserted); its id. */
long
sa_launch(const char *const args[])
{
	return h_cli_launch(args);
}

/*
 * The sessions: tx streams t lines on its transport and c lines on its
 * console, con c lines on its console, echo echoes its transport.
 */
static void
sa_sessions(struct sa *s)
{
	char tx[PATH_MAX + 256], con[PATH_MAX + 256];
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
	s->st[0] = (struct sa_stream){ .id = txid, .name = "target",
	    .tag = 't', .eol = "\n" };
	s->st[1] = (struct sa_stream){ .id = txid, .name = "console",
	    .tag = 'c', .eol = "\r\n" };
	s->st[2] = (struct sa_stream){ .id = conid, .name = "console",
	    .tag = 'c', .eol = "\r\n" };
}

/* Send a line to echo and wait for it to come back; asserted. */
static void
sa_echo(struct sa *s, const char *line)
{
	char ids[32], from[32];
	struct h_res r;
	size_t len;
	char *out;

	h_idstr(s->echo, ids, sizeof ids);
	snprintf(from, sizeof from, "%zu", s->sent.len);
	h_cli(&r, H_ARGS("send", ids, line));
	cr_assert_eq(r.code, 0, "%s: send to echo: exit %d: %s; the daemons' "
	    "logs: %s", s->where, r.code, r.err, sa_logs(s));
	h_run_free(&r);
	h_cli(&r, H_ARGS("expect", "--exact", "--stream", "target", "--from",
	    from, "--timeout", "20000", ids, line));
	cr_assert_eq(r.code, 0, "%s: expect %s from %s on echo: exit %d: %s; "
	    "the daemons' logs: %s", s->where, line, from, r.code, r.err,
	    sa_logs(s));
	h_run_free(&r);
	h_bytes_add(&s->sent, line, strlen(line));
	out = sa_stream_read(s, s->echo, "target", &len);
	cr_assert(len == s->sent.len && memcmp(out, s->sent.p, len) == 0,
	    "%s: echo's target stream is not what it was sent, once, in order: "
	    "%s", s->where, h_shown(out, len, 400));
	free(out);
}

/* A line of the stream after what it has shown comes: expect answers. */
static void
sa_expect(struct sa *s, struct sa_stream *st)
{
	char ids[32], from[32], pat[64];
	struct h_res r;

	snprintf(from, sizeof from, "%zu", st->whole);
	snprintf(pat, sizeof pat, "%c%ld%s", st->tag, st->lines + SA_BATCH,
	    st->eol);
	h_cli(&r, H_ARGS("expect", "--exact", "--stream", st->name, "--from",
	    from, "--timeout", "20000", h_idstr(st->id, ids, sizeof ids), pat));
	cr_assert_eq(r.code, 0, "%s: expect %s on session %ld's %s from %s: "
	    "exit %d: %s; the daemons' logs: %s", s->where, pat, st->id,
	    st->name, from, r.code, r.err, sa_logs(s));
	h_run_free(&r);
}

/* Whether list shows session id, and its row's hold into *held. */
static bool
sa_listed(long id, bool *held)
{
	json_t *l = h_cli_json(H_ARGS("list")), *row;
	bool found = false;
	size_t i;

	json_array_foreach(json_object_get(l, "sessions"), i, row)
		if (h_jint(row, "id", -1) == id) {
			found = true;
			*held = json_is_object(json_object_get(row, "hold"));
		}
	json_decref(l);
	return found;
}

/* Whether the killed daemons logged text. */
static bool
sa_logged(struct sa *s, const char *text)
{
	return s->logs.p != NULL && strstr(s->logs.p, text) != NULL;
}

/*
 * The round's deadline session gets its verdict: wait exits 6, at its
 * end, or at once if the verdict holds it. Unless its deadline fired
 * before the kill, as the killed daemon's log says: then it ended, or
 * its verdict went with that daemon.
 */
static void
sa_deadline(struct sa *s, long id)
{
	char ids[32], fired[64];
	struct h_res r;

	h_cli(&r, H_ARGS("wait", "--timeout", "30000", h_idstr(id, ids,
	    sizeof ids)));
	snprintf(fired, sizeof fired, "session %ld: deadline", id);
	if (r.code != 6 && sa_logged(s, fired)) {
		s->early++;
		h_run_free(&r);
		return;
	}
	cr_assert_eq(r.code, 6, "%s: wait for deadline session %ld: exit %d, "
	    "not its verdict's 6: %s; the daemons' logs: %s", s->where, id,
	    r.code, r.err, sa_logs(s));
	h_run_free(&r);
}

/* Every session that runs is listed; the held ones still held. */
static void
sa_list(struct sa *s)
{
	bool held;
	int i;

	for (i = 0; i < 3; i++)
		cr_assert(sa_listed(s->st[i].id, &held), "%s: session %ld is "
		    "not listed after the adoption; the daemons' logs: %s",
		    s->where, s->st[i].id, sa_logs(s));
	cr_assert(sa_listed(s->echo, &held), "%s: echo (%ld) is not listed "
	    "after the adoption; the daemons' logs: %s", s->where, s->echo,
	    sa_logs(s));
	cr_assert(sa_listed(s->gdb, &held), "%s: gdb (%ld) is not listed "
	    "after the adoption; the daemons' logs: %s", s->where, s->gdb,
	    sa_logs(s));
	/* Odd rounds' sessions were held by their verdicts. */
	for (i = 1; i < s->round; i += 2) {
		cr_assert(sa_listed(s->deadline[i], &held), "%s: held session "
		    "%ld is not listed after the adoption; the daemons' logs: "
		    "%s", s->where, s->deadline[i], sa_logs(s));
		cr_assert(held, "%s: session %ld, held by its deadline's "
		    "verdict, is not held after the adoption; the daemons' "
		    "logs: %s", s->where, s->deadline[i], sa_logs(s));
		s->held++;
	}
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

/* The checks after an adoption. */
static void
sa_after(struct sa *s)
{
	char line[32];
	int i;

	sa_list(s);
	for (i = 0; i < 3; i++)
		sa_stream_check(s, &s->st[i]);
	sa_read(s, &s->st[0]);
	for (i = 0; i < 3; i++)
		sa_expect(s, &s->st[i]);
	snprintf(line, sizeof line, "after %d\n", s->round);
	sa_echo(s, line);
	sa_gdb_check(s);
	sa_deadline(s, s->deadline[s->round]);
}

/*
 * One round: a deadline session launched, a line echoed, then the kill at
 * a random moment, a new daemon, and the checks.
 */
static void
sa_round(struct sa *s)
{
	char ms[32], name[32], line[32];

	snprintf(s->where, sizeof s->where, "seed %u round %d", s->seed,
	    s->round);
	snprintf(ms, sizeof ms, "%d", SA_DEADLINE_MS);
	snprintf(name, sizeof name, "deadline%d", s->round);
	s->deadline[s->round] = sa_launch(H_ARGS("--kind", "exec", "--name",
	    name, "--deadline", ms, "--on-deadline", s->round % 2 ? "hold" :
	    "stop", "--", "sleep", "1000"));
	snprintf(line, sizeof line, "before %d\n", s->round);
	sa_echo(s, line);
	sa_gdb_hit(s);
	h_nap((int)(sa_rand(s) % SA_KILL_MS));
	sa_kill(s);
	h_daemon_fg();
	sa_after(s);
	cr_assert_eq(h_daemon_pid(), H->fg_daemon, "%s: the daemon died after "
	    "the adoption; its log: %s", s->where, sa_logs(s));
}

/* Sessions' processes alive: those carrying the marker but the daemon. */
static int
sa_procs(char *report, size_t len)
{
	pid_t p[H_MAXPIDS];
	int i, n, k = 0;

	n = h_marker_pids(H->marker, p, H_MAXPIDS);
	for (i = 0; i < n; i++)
		if (p[i] != H->fg_daemon) {
			h_pid_describe(report, len, "alive", p[i]);
			k++;
		}
	return k;
}

/* Predicate: no process of any session is alive. */
static bool
sa_no_procs(void *arg)
{
	char report[4096] = "";

	(void)arg;
	if (sa_procs(report, sizeof report) == 0)
		return true;
	h_nap(20);
	return false;
}

/* Keeper sockets beside the daemon's (SOCK.k*), named into buf. */
static int
sa_keeper_socks(char *buf, size_t len)
{
	struct dirent *de;
	DIR *d = opendir(H->dir);
	int n = 0;

	buf[0] = '\0';
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "sock.k", 6) == 0) {
			snprintf(buf + strlen(buf), len - strlen(buf), "%s ",
			    de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

/* Predicate: no keeper socket is left. */
static bool
sa_no_socks(void *arg)
{
	char names[1024];

	(void)arg;
	if (sa_keeper_socks(names, sizeof names) == 0)
		return true;
	h_nap(20);
	return false;
}

/* The streamers end: every stream holds its whole sequence, then "end". */
static void
sa_end_streams(struct sa *s)
{
	int fd, i;

	snprintf(s->where, sizeof s->where, "seed %u at the end", s->seed);
	fd = open(s->flag, O_WRONLY | O_CREAT, 0600);
	cr_assert_neq(fd, -1, "%s", s->flag);
	close(fd);
	for (i = 0; i < 3; i++) {
		while (!s->st[i].ended) {
			sa_stream_check(s, &s->st[i]);
			if (!s->st[i].ended)
				h_nap(50);
		}
		cr_assert_eq(s->st[i].lines % SA_BATCH, 0, "%s: session %ld's "
		    "%s stream ended after %ld lines", s->where, s->st[i].id,
		    s->st[i].name, s->st[i].lines);
	}
}

/* stop --all leaves no process of any session and no keeper socket. */
static void
sa_stop_all(struct sa *s)
{
	char report[8192] = "", names[1024];
	struct h_res r;

	h_cli_exit(&r, 0, H_ARGS("stop", "--all"));
	h_run_free(&r);
	if (!h_wait_for(sa_no_procs, NULL, H_WAIT_BOUND)) {
		sa_procs(report, sizeof report);
		cr_assert_fail("%s: after stop --all, processes of sessions "
		    "live: %s", s->where, report);
	}
	cr_assert(h_wait_for(sa_no_socks, NULL, H_WAIT_BOUND), "%s: keeper "
	    "sockets left after stop --all: %s", s->where,
	    (sa_keeper_socks(names, sizeof names), names));
}

/* Criterion .init: the test's world; keepers wait a minute for a daemon. */
static void
sa_init(void)
{
	h_ctx_setup();
	h_ctx_env_add("DBGCTLD_ADOPT_GRACE=60");
}

TestSuite(soak_adopt, .init = sa_init, .fini = h_ctx_teardown,
    .timeout = 180 * H_SLOW);

/*
 * Twenty SIGKILLs of the daemon at random moments while exec sessions
 * stream, echo and run out their deadlines: nothing is lost, repeated or
 * left behind.
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
	for (s.round = 0; s.round < SA_ROUNDS; s.round++)
		sa_round(&s);
	sa_end_streams(&s);
	sa_stop_all(&s);
	h_note("soak adopt: %d SIGKILLs and adoptions in %.1f s; streams of "
	    "%ld, %ld and %ld lines whole; %d reads at their offsets; %zu bytes "
	    "echoed; %d of %d deadlines fired before their kill; %d holds kept "
	    "by an adoption; %d breakpoint hits of gdb", SA_ROUNDS, h_now() -
	    t0, s.st[0].lines, s.st[1].lines, s.st[2].lines, s.reads,
	    s.sent.len, s.early, SA_ROUNDS, s.held, s.hits);
	for (i = 0; i < 3; i++)
		free(s.st[i].seen.p);
	free(s.sent.p);
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
	sa_echo(&s, "before\n");
	h_nap((int)(sa_rand(&s) % SA_KILL_MS));
	sa_kill(&s);
	if (!h_wait_for(sa_no_procs, NULL, 15000 * H_SLOW)) {
		sa_procs(report, sizeof report);
		cr_assert_fail("%s: 15 s after the SIGKILL, with a grace of 1 s, "
		    "processes of sessions live: %s", s.where, report);
	}
	cr_assert(h_wait_for(sa_no_socks, NULL, H_WAIT_BOUND), "%s: keeper "
	    "sockets outlived their keepers: %s", s.where,
	    (sa_keeper_socks(names, sizeof names), names));
	h_daemon_fg();
	l = h_cli_json(H_ARGS("list"));
	cr_assert_eq(json_array_size(json_object_get(l, "sessions")), 0,
	    "%s: the next daemon lists sessions nobody adopted", s.where);
	json_decref(l);
	free(s.sent.p);
	free(s.logs.p);
}
