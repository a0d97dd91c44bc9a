/* Unit tests of daemon parts that need no loop: the ring and the argv builders. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "ring.h"
#include "argv.h"
#include "capbuf.h"
#include "gdb.h"
#include "session.h"

/* The daemon context the parts refer to; unused by these tests. */
/* Fill a session with what the argv builders read. */
static void
fill_session(struct session *s, const char *kind, json_t *argv)
{
	memset(s, 0, sizeof *s);
	s->backend = backend_find(kind);
	cr_assert_not_null(s->backend, "kind %s", kind);
	s->l.argv = argv;
	s->l.commands = json_pack("[s, s]", "break main", "run");
}

Test(ring, keeps_the_last_bytes_in_order)
{
	struct ring	r;
	char		out[16];
	size_t		n;

	ring_init(&r, 8);
	ring_write(&r, "abcdef", 6);
	ring_write(&r, "ghij", 4);
	cr_assert_eq(r.end, 10);
	cr_assert_eq(ring_start(&r), 2);
	n = ring_read(&r, 2, out, sizeof out);
	cr_assert_eq(n, 8);
	cr_assert_arr_eq(out, "cdefghij", 8);
	cr_assert_eq(ring_read(&r, 1, out, sizeof out), 0, "offset 1 is gone");
	cr_assert_eq(ring_read(&r, 10, out, sizeof out), 0, "nothing at end");
	n = ring_read(&r, 7, out, 2);
	cr_assert_eq(n, 2);
	cr_assert_arr_eq(out, "hi", 2);
	ring_free(&r);
}

Test(ring, write_larger_than_capacity)
{
	struct ring	r;
	char		out[4];

	ring_init(&r, 4);
	ring_write(&r, "0123456789", 10);
	cr_assert_eq(r.end, 10);
	cr_assert_eq(ring_read(&r, 6, out, 4), 4);
	cr_assert_arr_eq(out, "6789", 4);
	ring_free(&r);
}

Test(ring, a_skip_lets_go_of_what_was_held)
{
	struct ring	r;
	char		out[8];

	ring_init(&r, 8);
	ring_write(&r, "abcdef", 6);
	ring_skip(&r, 5);
	cr_assert_eq(r.end, 11);
	cr_assert_eq(ring_start(&r), 11, "nothing before the skip is held");
	cr_assert_eq(ring_read(&r, 6, out, sizeof out), 0, "offset 6 is gone");
	ring_write(&r, "xy", 2);
	cr_assert_eq(ring_start(&r), 11);
	cr_assert_eq(ring_read(&r, 11, out, sizeof out), 2);
	cr_assert_arr_eq(out, "xy", 2);
	ring_free(&r);
}

Test(backend, exec_argv_is_the_program)
{
	struct session	  s;
	char		**av, err[64];

	fill_session(&s, "exec", json_pack("[s, s]", "sleep", "5"));
	av = s.backend->argv(&s, err, sizeof err);
	cr_assert_str_eq(av[0], "sleep");
	cr_assert_str_eq(av[1], "5");
	cr_assert_null(av[2]);
	argv_free(av);
}

Test(backend, gdb_quotes_every_argument_for_the_shell)
{
	struct session	  s;
	char		**av, err[64];

	fill_session(&s, "gdb", json_pack("[s, s, s, s]", "./fw.elf",
	    "$(touch x)", "it's", "a b"));
	av = s.backend->argv(&s, err, sizeof err);
	cr_assert_str_eq(av[0], "gdb");
	cr_assert_str_eq(av[1], "-q");
	cr_assert_str_eq(av[2], "-ex");
	cr_assert_str_eq(av[3], "set args '$(touch x)' 'it'\\''s' 'a b'");
	cr_assert_str_eq(av[4], "-ex");
	cr_assert_str_eq(av[5], "break main");
	cr_assert_str_eq(av[6], "-ex");
	cr_assert_str_eq(av[7], "run");
	cr_assert_str_eq(av[8], "--");
	cr_assert_str_eq(av[9], "./fw.elf");
	cr_assert_null(av[10]);
	argv_free(av);
}

Test(backend, gdb_debugger_override_and_no_args)
{
	struct session	  s;
	char		**av, err[64];

	fill_session(&s, "gdb", json_pack("[s]", "prog"));
	s.l.debugger = "/opt/gdb-multiarch";
	json_array_clear(s.l.commands);
	av = s.backend->argv(&s, err, sizeof err);
	cr_assert_str_eq(av[0], "/opt/gdb-multiarch");
	cr_assert_str_eq(av[1], "-q");
	cr_assert_str_eq(av[2], "--");
	cr_assert_str_eq(av[3], "prog");
	cr_assert_null(av[4]);
	argv_free(av);
}

/*
 * A gdb-family kind runs gdb with the family's hooks, and the daemon's
 * death hangs gdb up so that it detaches; no other kind is hung up.
 */
Test(backend, every_gdb_kind_shares_the_family_and_is_hung_up)
{
	const struct backend	*be;
	size_t			 i, n = 0;

	for (i = 0; (be = backend_at(i)) != NULL; i++) {
		if (!gdb_family_kind(be, NULL)) {
			cr_assert(!be->hangup, "%s is hung up", be->name);
			continue;
		}
		n++;
		cr_assert(be->hangup, "%s is not hung up", be->name);
		cr_assert(be->argv == backend_gdb.argv && be->ready ==
		    backend_gdb.ready && be->quit == backend_gdb.quit &&
		    be->status == backend_gdb.status && be->close ==
		    backend_gdb.close, "%s has hooks of its own", be->name);
		cr_assert_not_null(be->start, "%s", be->name);
	}
	cr_assert_geq(n, 4, "gdb, remote, gdbserver, qemu");
}

Test(backend, unknown_kind_is_not_found)
{
	cr_assert_null(backend_find("lldb-nope"));
	cr_assert_not_null(backend_find("exec"));
}

/* The states a sink saw, in order. */
static char seen[256];

/* Record each state a session enters. */
static void
record_state(struct sink *k, struct session *s, const struct session_event *ev)
{
	(void)k;
	(void)ev;
	strlcat(seen, session_state_name(s->state), sizeof seen);
	strlcat(seen, " ", sizeof seen);
}

/* A session fit for the state table: no processes, an empty daemon around it. */
static void
state_session(struct session *s)
{
	memset(s, 0, sizeof *s);
	memset(&dmn, 0, sizeof dmn);
	dmn.loop = uv_default_loop();
	TAILQ_INIT(&dmn.sessions);
	TAILQ_INIT(&dmn.sinks);
	TAILQ_INIT(&s->sinks);
	dmn.keep_ended = 100;
	s->id = 1;
	s->refs = 1;
	s->backend = backend_find("exec");
	session_stream_init(s);
	s->stop_ms = -1;
	s->state = S_STARTING;
	seen[0] = '\0';
	session_sink_add(NULL, SE_STATE, record_state, NULL);
}

Test(state, the_normal_life_of_a_session)
{
	struct session s;

	state_session(&s);
	session_feed(&s, SI_READY);
	session_feed(&s, SI_STOP);
	session_feed(&s, SI_GONE);
	cr_assert(session_ended(&s));
	cr_assert_str_eq(seen, "running stopping exited ");
	cr_assert_null(s.why.msg, "a clean end has no error: %s", s.why.msg);
}

Test(state, a_program_that_ends_on_its_own_passes_through_stopping)
{
	struct session s;

	state_session(&s);
	session_feed(&s, SI_READY);
	session_feed(&s, SI_GONE);
	cr_assert_str_eq(seen, "running stopping exited ");
}

Test(state, a_stop_while_starting_fails_the_launch_with_not_running)
{
	struct session s;

	state_session(&s);
	session_stop(&s, 100);
	cr_assert_not(session_ended(&s));
	cr_assert_str_eq(session_state_name(s.state), "stopping");
	session_feed(&s, SI_READY);
	cr_assert_str_eq(session_state_name(s.state), "stopping",
	    "ready after a stop must not make it run");
	session_feed(&s, SI_GONE);
	cr_assert_str_eq(seen, "stopping failed ");
	cr_assert_eq(s.why.code, RPC_NOT_RUNNING);
	cr_assert_not_null(strstr(s.why.msg, "stopped while starting"));
}

Test(state, an_end_before_running_fails_with_the_first_cause)
{
	struct session s;

	state_session(&s);
	session_why(&s, RPC_SPAWN_FAILED, 2, "exec nope: No such file");
	session_feed(&s, SI_EXIT);
	session_feed(&s, SI_GONE);
	cr_assert_str_eq(seen, "failed ");
	cr_assert_str_eq(s.why.msg, "exec nope: No such file");
	cr_assert_eq(s.why.err, 2);
}

Test(state, a_failure_while_running_stops_and_keeps_its_cause)
{
	struct session s;

	state_session(&s);
	session_feed(&s, SI_READY);
	session_fail(&s, RPC_NOT_READY, "the server %s exited", "gdbserver");
	session_fail(&s, RPC_TIMEOUT, "a later cause");
	session_feed(&s, SI_GONE);
	cr_assert_str_eq(seen, "running stopping exited ");
	cr_assert_str_eq(s.why.msg, "the server gdbserver exited");
}

Test(state, an_ended_session_stays_ended)
{
	struct session s;

	state_session(&s);
	session_feed(&s, SI_GONE);
	session_feed(&s, SI_READY);
	session_feed(&s, SI_STOP);
	session_feed(&s, SI_GONE);
	cr_assert_str_eq(seen, "failed ");
}

Test(state, a_process_that_starts_after_a_stop_makes_nothing_ready)
{
	struct session s;

	state_session(&s);
	session_input(&s, SI_STARTED, &s.procs[0]);
	cr_assert_str_eq(seen, "running ", "exec runs once its program did");
	state_session(&s);
	session_stop(&s, 100);
	session_input(&s, SI_STARTED, &s.procs[0]);
	cr_assert_str_eq(seen, "stopping ", "a start after a stop: %s", seen);
}

Test(state, an_input_outside_the_table_aborts, .signal = SIGABRT)
{
	struct session s;

	state_session(&s);
	session_feed(&s, SI_NINPUTS);
}

/* A sink that removes itself when it hears the first event. */
static void
remove_self(struct sink *k, struct session *s, const struct session_event *ev)
{
	int *calls = k->arg;

	(void)s;
	(void)ev;
	(*calls)++;
	session_sink_remove(k);
}

Test(sinks, a_sink_removed_while_firing_hears_no_more)
{
	struct session	s;
	int		calls = 0;

	state_session(&s);
	session_sink_add(&s, SE_STATE, remove_self, &calls);
	cr_assert_eq(s.refs, 2, "a sink holds its session");
	session_feed(&s, SI_READY);
	cr_assert_eq(calls, 1);
	cr_assert_eq(s.refs, 1, "the removed sink let go of its session");
	session_feed(&s, SI_STOP);
	cr_assert_eq(calls, 1);
	cr_assert_str_eq(seen, "running stopping ");
}

/* A step of the teardown, which sink heard it, and whether the log was open. */
static void
record_teardown(struct sink *k, struct session *s,
    const struct session_event *ev)
{
	strlcat(seen, ev->kind == SE_STOP ? "stop:" : ev->kind == SE_ENDING ?
	    "ending:" : "ended:", sizeof seen);
	strlcat(seen, k->arg, sizeof seen);
	strlcat(seen, output_ended(&s->output) ? ":closed " : ":open ",
	    sizeof seen);
}

Test(sinks, the_teardown_is_heard_in_order_while_the_log_is_open)
{
	struct session s;

	state_session(&s);
	session_sink_add(NULL, SE_STOP | SE_ENDING | SE_ENDED, record_teardown,
	    "first");
	session_sink_add(NULL, SE_ENDED, record_teardown, "second");
	session_feed(&s, SI_READY);
	session_stop(&s, 100);
	session_feed(&s, SI_GONE);
	cr_assert_str_eq(seen, "running stop:first:open stopping "
	    "ending:first:open ended:first:closed ended:second:closed exited ",
	    "the teardown heard: %s", seen);
}

Test(backend, lldb_escapes_what_its_interpreter_would_expand)
{
	struct session	  s;
	char		**av, err[64];

	fill_session(&s, "lldb", json_pack("[s, s, s]", "./fw", "`touch x`",
	    "a\\\"b"));
	json_array_clear(s.l.commands);
	av = s.backend->argv(&s, err, sizeof err);
	cr_assert_str_eq(av[0], "lldb");
	cr_assert_str_eq(av[1], "-o");
	cr_assert_str_eq(av[2], "settings set -- target.run-args "
	    "\"\\`touch x\\`\" \"a\\\\\\\"b\"");
	cr_assert_str_eq(av[3], "--");
	cr_assert_str_eq(av[4], "./fw");
	cr_assert_null(av[5]);
	argv_free(av);
}

/* An output with a log in a temporary directory, `len` bytes of `fill`. */
static void
output_filled(struct output *o, char *dir, char fill, size_t len)
{
	char	 path[4200], err[256], *buf = malloc(len);

	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof path, "%s/log", dir);
	cr_assert_eq(output_open(o, path, OUTPUT_RING_SIZE, err, sizeof err), 0, "%s", err);
	memset(buf, fill, len);
	output_add(o, buf, len);
	free(buf);
}

/* Drop an output and its temporary directory. */
static void
output_gone(struct output *o, const char *dir)
{
	char	path[4200];

	snprintf(path, sizeof path, "%s", o->log_path);
	output_free(o);
	unlink(path);
	rmdir(dir);
}

Test(output, tail_offset_counts_lines_from_the_end)
{
	struct output	o;
	char		dir[] = "/tmp/dbgctl-unit-XXXXXX";

	memset(&o, 0, sizeof o);
	output_filled(&o, dir, 'x', 10);
	output_add(&o, "\none\ntwo\nthree\n", 15);
	cr_assert_eq(output_lines_tail(&o, 1, OUTPUT_TAIL_SCAN_MAX), 19);
	cr_assert_eq(output_lines_tail(&o, 3, OUTPUT_TAIL_SCAN_MAX), 11);
	cr_assert_eq(output_lines_tail(&o, 0, OUTPUT_TAIL_SCAN_MAX), 25);
	cr_assert_eq(output_lines_tail(&o, 100, OUTPUT_TAIL_SCAN_MAX), 0,
	    "fewer lines than asked: from the start");
	output_gone(&o, dir);
}

/* With no line breaks the scan stops at its bound, not at the start. */
Test(output, tail_offset_never_looks_back_past_its_bound)
{
	struct output	o;
	char		dir[] = "/tmp/dbgctl-unit-XXXXXX";
	uint64_t	size = 3 * OUTPUT_RING_SIZE + 12345;

	memset(&o, 0, sizeof o);
	output_filled(&o, dir, 'y', size);
	cr_assert_eq(output_size(&o), size);
	cr_assert_eq(output_lines_tail(&o, 200, OUTPUT_RING_SIZE),
	    size - OUTPUT_RING_SIZE);
	cr_assert_eq(output_lines_tail(&o, 200, 1000), size - 1000);
	cr_assert_eq(output_lines_tail(&o, 200, OUTPUT_TAIL_SCAN_MAX), 0);
	output_gone(&o, dir);
}

/*
 * A long log adopted again is indexed from its last OUTPUT_TAIL_SCAN_MAX
 * bytes only (no tail lookup looks further back), so an adoption does not
 * read all of it, and its tail is found as before.
 */
Test(output, a_reopened_long_log_is_indexed_from_its_tail_only)
{
	struct output	o;
	char		dir[] = "/tmp/dbgctl-unit-XXXXXX", path[4200], err[256];
	uint64_t	hole = 2 * (uint64_t)OUTPUT_TAIL_SCAN_MAX + 17, size;
	int		fd;

	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(path, sizeof path, "%s/log", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_neq(fd, -1, "%s: %s", path, strerror(errno));
	/* A sparse stretch of zero bytes, then three lines. */
	cr_assert_eq(pwrite(fd, "one\ntwo\nthree\n", 14, (off_t)hole), 14);
	close(fd);
	size = hole + 14;
	output_init(&o);
	cr_assert_eq(output_reopen(&o, path, OUTPUT_RING_SIZE, err,
	    sizeof err), 0, "%s", err);
	cr_assert_eq(output_size(&o), size);
	cr_assert_eq(output_lines_tail(&o, 2, OUTPUT_TAIL_SCAN_MAX), hole + 4);
	cr_assert_eq(output_lines_tail(&o, 100, OUTPUT_TAIL_SCAN_MAX),
	    size - OUTPUT_TAIL_SCAN_MAX, "fewer lines than asked: as far "
	    "back as a lookup goes");
	cr_assert_leq(o.nmarks, OUTPUT_TAIL_SCAN_MAX / 65536 + 2, "%zu marks: "
	    "the whole log was indexed again", o.nmarks);
	output_gone(&o, dir);
}

/* Where the last `lines` lines of data begin, by a plain backward scan. */
static uint64_t
tail_reference(const char *data, uint64_t len, unsigned long lines,
    uint64_t max)
{
	uint64_t floor = len > max ? len - max : 0, i;

	if (lines == 0)
		return len;
	for (i = len; i > floor; i--) {
		if (data[i - 1] != '\n' || i == len)
			continue;
		if (--lines == 0)
			return i;
	}
	return floor;
}

/*
 * The line feed index agrees with a plain scan on output of lines of
 * every length, written in pieces that cross its marks, from the ring and
 * from the log, at every count asked and every bound.
 */
Test(output, tail_offset_from_the_index_matches_a_scan)
{
	struct output	 o;
	char		 dir[] = "/tmp/dbgctl-unit-XXXXXX";
	size_t		 len = 0, cap = 3 * OUTPUT_RING_SIZE, i, piece;
	char		*data = malloc(cap);
	unsigned long	 lines;
	uint64_t	 maxes[] = { 1000, OUTPUT_RING_SIZE, OUTPUT_TAIL_SCAN_MAX };
	unsigned	 seed = 7, m;

	/* Lines of 0 to 200000 bytes: some far longer than a mark's span. */
	while (len < cap) {
		seed = seed * 1103515245 + 12345;
		piece = (seed >> 8) % ((seed & 0x10000) ? 200000 : 60);
		for (i = 0; i < piece && len < cap - 1; i++)
			data[len++] = 'a' + (char)(i % 26);
		data[len++] = '\n';
	}
	memset(&o, 0, sizeof o);
	output_filled(&o, dir, 'z', 0);
	for (i = 0; i < len; i += piece) {
		seed = seed * 1103515245 + 12345;
		piece = 1 + (seed >> 8) % 70000;
		if (piece > len - i)
			piece = len - i;
		output_add(&o, data + i, piece);
	}
	for (m = 0; m < sizeof maxes / sizeof maxes[0]; m++)
		for (lines = 0; lines < 200; lines += 1 + lines / 8)
			cr_assert_eq(output_lines_tail(&o, lines, maxes[m]),
			    tail_reference(data, len, lines, maxes[m]),
			    "lines %lu, max %llu", lines,
			    (unsigned long long)maxes[m]);
	/* And once the ring is gone, from the log alone. */
	output_close(&o);
	for (lines = 1; lines < 200; lines += 7)
		cr_assert_eq(output_lines_tail(&o, lines, OUTPUT_TAIL_SCAN_MAX),
		    tail_reference(data, len, lines, OUTPUT_TAIL_SCAN_MAX),
		    "closed: lines %lu", lines);
	output_gone(&o, dir);
	free(data);
}

/* A command's output is kept to the cap, then ends with the cut mark once. */
Test(capbuf, output_is_capped_and_says_it_was_cut)
{
	struct capbuf	 b = { 0 };
	char		*chunk = malloc(100000);
	size_t		 i, n = strlen(CAPBUF_CUT_MARK);

	memset(chunk, 'x', 100000);
	capbuf_add(&b, "ab", 2);
	cr_assert_str_eq(b.p, "ab");
	capbuf_mark(&b);
	cr_assert_str_eq(b.p, "ab", "an uncut buffer is not marked");
	for (i = 0; i < 6; i++)
		capbuf_add(&b, chunk, 100000);
	cr_assert(b.cut);
	cr_assert_eq(b.len, EXEC_OUTPUT_MAX);
	capbuf_mark(&b);
	cr_assert_eq(b.len, EXEC_OUTPUT_MAX + n);
	cr_assert_str_eq(b.p + EXEC_OUTPUT_MAX, CAPBUF_CUT_MARK);
	capbuf_free(&b);
	cr_assert_null(b.p);
	free(chunk);
}

/*
 * What only memory holds starts at the first gap of the log from an
 * offset: past a size limit, and for a gap the log came back from too.
 */
Test(output, unkept_names_the_first_byte_the_log_lacks)
{
	struct output	o;
	char		dir[] = "/tmp/dbgctl-unit-XXXXXX";

	memset(&o, 0, sizeof o);
	output_filled(&o, dir, 'x', 10);
	cr_assert_eq(output_unkept(&o, 0), 10, "all of it is in the log");
	o.max = 16;
	output_add(&o, "0123456789", 10);
	cr_assert_eq(output_unkept(&o, 0), 16, "past the limit at 16");
	cr_assert_eq(output_unkept(&o, 18), 18, "inside the gap");
	o.max = 0;
	o.failing = false;
	output_add(&o, "abcd", 4);
	cr_assert_eq(output_unkept(&o, 0), 16, "the gap is still unkept after "
	    "the log came back");
	cr_assert_eq(output_unkept(&o, 20), 24, "nothing is lacking after it");
	output_gone(&o, dir);
}

/*
 * A bulk the log took whole is not copied into memory: it is read back
 * from the log, and a small piece after it is held in memory again.
 */
Test(output, a_bulk_the_log_took_is_read_from_the_log)
{
	enum { N = 1024 * 1024 };
	struct output	o;
	char		dir[] = "/tmp/dbgctl-unit-XXXXXX", *buf = malloc(N);

	output_init(&o);
	output_filled(&o, dir, 'a', N);
	cr_assert_eq(ring_start(&o.ring), N, "the bulk was kept in memory");
	cr_assert_eq(output_read(&o, 1000, buf, N), N - 1000);
	cr_assert_eq(memchr(buf, 'a' ^ 1, N - 1000) == NULL &&
	    buf[0] == 'a' && buf[N - 1001] == 'a', 1, "not the bulk's bytes");
	output_add(&o, "tail\n", 5);
	cr_assert_eq(ring_start(&o.ring), N, "a small piece is held");
	cr_assert_eq(output_read(&o, N - 1, buf, 16), 6);
	cr_assert_arr_eq(buf, "atail\n", 6);
	output_gone(&o, dir);
	free(buf);
}

/*
 * Bytes past the log's limit are held in memory however big they come,
 * and a bulk the log took after it came back does not push them out:
 * only memory has them.
 */
Test(output, bytes_the_log_lacks_stay_in_memory_behind_a_bulk)
{
	enum { N = 64 * 1024 };
	struct output	o;
	char		dir[] = "/tmp/dbgctl-unit-XXXXXX", *buf = malloc(N);

	output_init(&o);
	output_filled(&o, dir, 'x', 10);
	o.max = 100;
	memset(buf, 'b', N);
	output_add(&o, buf, N);
	cr_assert_eq(output_unkept(&o, 0), 100, "past the limit at 100");
	o.max = 0;
	/* One after the limit is lifted, then one taken as if none were. */
	memset(buf, 'c', N);
	output_add(&o, buf, N);
	output_add(&o, buf, N);
	cr_assert(!o.failing, "the log is written again");
	memset(buf, 0, N);
	cr_assert_eq(output_read(&o, 200, buf, 16), 16, "the bytes only "
	    "memory had are gone");
	cr_assert_arr_eq(buf, "bbbbbbbbbbbbbbbb", 16);
	output_gone(&o, dir);
	free(buf);
}

/*
 * The index counts every line feed: in a megabyte of line feeds (every
 * byte of a word one, run after run) and of bytes a bit away from one.
 */
Test(output, the_line_feed_count_is_exact)
{
	enum { N = 1024 * 1024 + 13 };
	struct output	o;
	char		dir[] = "/tmp/dbgctl-unit-XXXXXX", *buf = malloc(N);
	uint64_t	want = 0;
	size_t		i;

	/* Two megabytes in, the log's cache is trimmed on the thread pool. */
	dmn.loop = uv_default_loop();
	output_init(&o);
	output_filled(&o, dir, '\n', N);
	cr_assert_eq(o.nl, N, "%llu line feeds of %d", (unsigned long long)o.nl,
	    N);
	for (i = 0; i < N; i++) {
		buf[i] = (char)("\n\x0b\x8a\x08\x0a\xff"[(i * 7 + i / 5) % 6]);
		want += buf[i] == '\n';
	}
	output_add(&o, buf, N);
	cr_assert_eq(o.nl - N, want, "%llu line feeds of %llu",
	    (unsigned long long)(o.nl - N), (unsigned long long)want);
	uv_run(dmn.loop, UV_RUN_DEFAULT);
	output_gone(&o, dir);
	free(buf);
}
