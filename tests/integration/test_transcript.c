/*
 * The target's transcript: every byte the target writes is kept, whoever
 * reads it, so a target nobody reads is not held back, and a reader that
 * comes late still gets every byte; past the transcript's size limit, a
 * slow reader still loses nothing, the target waiting for it instead; a
 * managed server's stream ends when the server does; and a pipe whose
 * reader stops holds the target back. The input's transcript is
 * test_transcript_in.c's.
 */
#include "b64.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

TestSuite(transcript, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 180);

/* The target's output: 800,000 records of ten bytes, "%09d\n". */
#define TRANSCRIPT_RECORDS	800000
#define TRANSCRIPT_BYTES	(TRANSCRIPT_RECORDS * 10)
#define TRANSCRIPT_PROGRAM	"exec seq -f %09g 0 799999"

/* The bytes the target prints. */
static char *
transcript_records(void)
{
	char	*want = malloc(TRANSCRIPT_BYTES + 1);
	size_t	 i;

	for (i = 0; i < TRANSCRIPT_RECORDS; i++)
		snprintf(want + i * 10, 11, "%09zu\n", i);
	return want;
}

/*
 * Take the target's whole output with read, checking each reply's offset
 * and bytes against want; returns how many bytes came.
 */
static size_t
transcript_read_all(struct h_conn *c, long id, const char *want)
{
	char		 params[128];
	unsigned char	*bytes;
	size_t		 got = 0, len;
	json_t		*r;

	snprintf(params, sizeof params, "{\"session\":%ld,\"timeout\":%d}",
	    id, H_WAIT_BOUND);
	for (;;) {
		r = h_conn_call(c, "read", params, H_WAIT_BOUND + 5000);
		cr_assert_not_null(r, "no reply to read at %zu", got);
		cr_assert_null(json_object_get(r, "error"), "read at %zu: %s",
		    got, h_jstr(r, "error.message"));
		if (json_is_true(json_object_get(json_object_get(r, "result"),
		    "eof"))) {
			json_decref(r);
			return got;
		}
		cr_assert_eq(h_jint(r, "result.offset", -1), (long long)got,
		    "a read at %lld where %zu was next",
		    h_jint(r, "result.offset", -1), got);
		bytes = b64_decode(h_jstr(r, "result.data"),
		    strlen(h_jstr(r, "result.data")), &len);
		cr_assert_leq(got + len, TRANSCRIPT_BYTES, "more than was "
		    "written");
		cr_assert(memcmp(bytes, want + got, len) == 0, "%zu bytes at "
		    "%zu differ from what the target wrote", len, got);
		cr_assert_eq(h_jint(r, "result.next_offset", -1),
		    (long long)(got + len), "next_offset");
		got += len;
		free(bytes);
		json_decref(r);
	}
}

/* The state directory's sessions/ (beside the console log the launch names). */
static void
transcript_file(long id, const char *suffix, char *buf, size_t len)
{
	char	 ids[32], *slash;
	json_t	*st = h_cli_json(H_ARGS("status", h_idstr(id, ids,
		    sizeof ids)));

	snprintf(buf, len, "%s", h_jstr(st, "log"));
	json_decref(st);
	slash = strrchr(buf, '/');
	cr_assert_not_null(slash, "a log path without a directory");
	snprintf(slash + 1, len - (slash + 1 - buf), "%ld%s", id, suffix);
}

/*
 * 8 MB with nobody reading: the target writes it all and exits (before,
 * it waited in its write once 1 MiB was unread), then read gets every
 * byte in order, and the transcript file holds them, mode 0600.
 */
Test(transcript, a_target_nobody_reads_is_not_held_back)
{
	char		*want = transcript_records(), path[4200];
	struct h_conn	 c;
	struct stat	 st;
	long		 id;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", TRANSCRIPT_PROGRAM));
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "with nobody reading");
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	cr_assert_eq(transcript_read_all(&c, id, want), TRANSCRIPT_BYTES);
	transcript_file(id, ".target.log", path, sizeof path);
	cr_assert_eq(stat(path, &st), 0, "%s", path);
	cr_assert_eq(st.st_size, TRANSCRIPT_BYTES, "the transcript has %lld "
	    "bytes", (long long)st.st_size);
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	h_conn_close(&c);
	free(want);
}

/*
 * With the transcript's log limited to 1 MB, a reader that starts late
 * still gets all 8 MB exactly: the target is held back once 1 MiB is
 * only in memory; logs names the bytes its file lacks as missing.
 */
Test(transcript, past_its_limit_a_late_reader_still_gets_every_byte)
{
	char		*want = transcript_records(), params[128];
	struct h_conn	 c;
	json_t		*r;
	long		 id;

	h_ctx_env_add("DBGCTLD_TRANSCRIPT_MAX=1000000");
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", "read go; " TRANSCRIPT_PROGRAM));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(params, sizeof params, "{\"session\":%ld,\"data\":\"Z28K\"}",
	    id);
	json_decref(h_conn_call(&c, "write", params, H_WAIT_BOUND));
	/* Past the 1 MB the log keeps, 1 MiB more may wait in memory. */
	snprintf(params, sizeof params, "{\"session\":%ld,\"stream\":"
	    "\"target\",\"offset\":1999999,\"max\":1,\"wait\":true}", id);
	r = h_conn_call(&c, "logs", params, H_WAIT_BOUND);
	cr_assert_eq(h_jint(r, "result.next_offset", -1), 2000000, "the "
	    "target never wrote 2 MB: %s", json_dumps(r, 0));
	json_decref(r);
	cr_assert_eq(transcript_read_all(&c, id, want), TRANSCRIPT_BYTES);
	snprintf(params, sizeof params, "{\"session\":%ld,\"stream\":"
	    "\"target\",\"offset\":3000000}", id);
	r = h_conn_call(&c, "logs", params, H_WAIT_BOUND);
	cr_assert_eq(h_jint(r, "result.missing.offset", -1), 3000000,
	    "logs does not name what the capped log lacks: %s",
	    json_dumps(r, 0));
	json_decref(r);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "once read");
	h_conn_close(&c);
	free(want);
}

/* Milliseconds on the monotonic clock. */
static long long
transcript_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * A gdbserver whose program exits ends with it while gdb stays: an expect
 * waiting on the server stream hears that the stream ended, at once, not
 * at its timeout.
 */
Test(transcript, an_expect_on_the_server_stream_ends_when_the_server_does)
{
	char		 server[1024], params[256];
	struct h_conn	 c;
	long long	 t0;
	json_t		*r;
	long		 id;

	h_daemon_fg();
	snprintf(server, sizeof server, "gdbserver 127.0.0.1:{port} "
	    "/bin/sleep 2");
	id = h_cli_launch(H_ARGS("--kind", "gdbserver", "--server", server,
	    "-x", "continue", "--", "/bin/sleep"));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(params, sizeof params, "{\"session\":%ld,\"stream\":"
	    "\"server\",\"patterns\":\"never printed\",\"from\":0,"
	    "\"timeout\":%d}", id, H_WAIT_BOUND);
	t0 = transcript_ms();
	r = h_conn_call(&c, "expect", params, H_WAIT_BOUND + 5000);
	cr_assert_not_null(r, "no reply to expect");
	cr_assert_str_eq(h_jkind(r), "eof", "the server stream's end was not "
	    "heard: %s after %lld ms", h_jkind(r), transcript_ms() - t0);
	cr_assert_lt(transcript_ms() - t0, H_WAIT_BOUND / 2, "eof only after "
	    "%lld ms", transcript_ms() - t0);
	json_decref(r);
	h_conn_close(&c);
}

/*
 * Ended sessions whose target output nobody read are forgotten past
 * DBGCTLD_KEEP_ENDED as others are (before, unread output kept each one in
 * the table, so a rig that only expects kept them all): the output stays
 * in the forgotten session's transcript file.
 */
Test(transcript, unread_output_in_the_file_keeps_no_session)
{
	struct h_res	 r;
	json_t		*l;
	char		 path[PATH_MAX + 64], buf[64];
	FILE		*f;
	size_t		 n;
	int		 k;

	h_ctx_env_add("DBGCTLD_KEEP_ENDED=2");
	h_daemon_fg();
	for (k = 0; k < 4; k++) {
		cr_assert_eq(h_cli(&r, H_ARGS("launch", "--kind", "exec",
		    "--transport", "--wait", "--", "sh", "-c",
		    "echo unread")), 0, "launch #%d: exit %d (%s)", k + 1,
		    r.code, r.err);
		h_run_free(&r);
	}
	l = h_cli_json(H_ARGS("list"));
	cr_assert_eq(json_array_size(json_object_get(l, "sessions")), 2,
	    "4 ended sessions with unread output, keeping 2: %zu listed",
	    json_array_size(json_object_get(l, "sessions")));
	json_decref(l);
	snprintf(path, sizeof path, "%s/sessions/1.target.log", H->state);
	cr_assert_not_null(f = fopen(path, "r"), "%s is gone", path);
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	cr_assert(n == 7 && memcmp(buf, "unread\n", 7) == 0, "%s holds %zu "
	    "bytes, not the unread line", path, n);
}

/*
 * A connection may keep 256 expects waiting (each holds its compiled
 * patterns and a window of bytes); the next is refused with limit. A
 * close with 256 waiting loses nothing the connection wrote before it:
 * the write sent last still reaches the program, as a new connection's
 * expect sees.
 */
Test(transcript, a_connection_keeps_at_most_256_expects_waiting)
{
	char		 line[256], params[128];
	struct h_conn	 c;
	json_t		*r;
	long		 id;
	int		 i;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", "read go; echo released; exec sleep 300"));
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	for (i = 0; i < 256; i++) {
		snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"expect\",\"params\":{\"session\":%ld,"
		    "\"patterns\":\"never %d\"}}\n", 1000 + i, id, i);
		cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0);
	}
	snprintf(params, sizeof params, "{\"session\":%ld,\"patterns\":"
	    "\"one too many\"}", id);
	r = h_conn_call(&c, "expect", params, H_WAIT_BOUND);
	cr_assert_str_eq(h_jkind(r), "limit", "the 257th expect: %s",
	    json_dumps(r, 0));
	json_decref(r);
	/* Let the program go on, and leave with 256 expects waiting. */
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":999,"
	    "\"method\":\"write\",\"params\":{\"session\":%ld,\"data\":"
	    "\"Z28K\"}}\n", id);
	cr_assert_eq(h_conn_send(&c, line, strlen(line), 10000), 0);
	h_conn_close(&c);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect again");
	snprintf(params, sizeof params, "{\"session\":%ld,\"patterns\":"
	    "\"released\",\"from\":0,\"timeout\":%d}", id, H_WAIT_BOUND);
	r = h_conn_call(&c, "expect", params, H_WAIT_BOUND + 5000);
	cr_assert_null(json_object_get(r, "error"), "a new connection's "
	    "expect: %s", json_dumps(r, 0));
	json_decref(r);
	h_conn_close(&c);
}

/* The target of the slow-reader test: 4 Mi records of 16 bytes. */
#define TRANSCRIPT_SLOW_RECORDS	(4 * 1024 * 1024)
#define TRANSCRIPT_SLOW_BYTES	((size_t)TRANSCRIPT_SLOW_RECORDS * 16)

/* Predicate: the process (a pid_t *) sleeps in a write to a full pipe. */
static bool
transcript_blocked_in_write(void *arg)
{
	char	path[64], *wchan;
	bool	blocked;

	snprintf(path, sizeof path, "/proc/%d/wchan", *(pid_t *)arg);
	wchan = h_read_file(path, NULL);
	/* pipe_write here; pipe_wait on kernels before 5.5. */
	blocked = wchan != NULL && strstr(wchan, "pipe_w") != NULL;
	free(wchan);
	return blocked;
}

/*
 * Read fd to its end, checking it is the slow target's records in order;
 * the bytes that came, up to where nothing came for H_WAIT_BOUND: a stall
 * fails the test, not hangs it.
 */
static size_t
transcript_read_records(int fd)
{
	static char	buf[1 << 16];
	char		rec[32];
	size_t		got = 0, i;
	ssize_t		n;

	while ((n = read(fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EAGAIN) {
			if (poll(&(struct pollfd){ fd, POLLIN, 0 }, 1,
			    H_WAIT_BOUND) == 0)
				break;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		cr_assert_gt(n, 0, "read: %s", strerror(errno));
		for (i = 0; i < (size_t)n; i++, got++) {
			if (got % 16 == 0)
				snprintf(rec, sizeof rec, "%015zu\n", got / 16);
			if (buf[i] != rec[got % 16])
				cr_assert_fail("byte %zu differs", got);
		}
	}
	return got;
}

/*
 * A pipe whose reader stops holds the target back: 64 MiB printed with
 * nobody reading `dbgctl pipe`'s output leaves the target asleep in its
 * write with most of it unwritten, rather than in the transcript; once
 * read, every byte comes, in order, and the transcript holds them all.
 */
Test(transcript, a_pipe_whose_reader_stops_holds_the_target_back)
{
	struct h_proc	 p;
	struct stat	 st;
	char		 ids[32], path[4200];
	json_t		*s;
	pid_t		 target;
	long		 id;
	int		 in;

	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "sh",
	    "-c", "read go; exec seq -f %015.0f 0 4194303"));
	h_idstr(id, ids, sizeof ids);
	s = h_cli_json(H_ARGS("status", ids));
	target = (pid_t)h_jint(s, "pid", -1);
	json_decref(s);
	cr_assert_gt(target, 0, "no target pid");
	cr_assert_eq(h_run_start_fed(&p, &in, H_ARGS(H->dbgctl, "-s", H->sock,
	    "pipe", ids)), 0, "start dbgctl pipe");
	cr_assert_eq(write(in, "go\n", 3), 3, "write go");
	cr_assert(h_wait_for(transcript_blocked_in_write, &target,
	    H_WAIT_BOUND), "the target was never held in its write");
	transcript_file(id, ".target.log", path, sizeof path);
	cr_assert_eq(stat(path, &st), 0, "%s", path);
	cr_assert_lt((size_t)st.st_size, TRANSCRIPT_SLOW_BYTES / 4, "%lld of "
	    "%zu bytes were taken from a target whose reader stopped",
	    (long long)st.st_size, TRANSCRIPT_SLOW_BYTES);
	cr_assert_eq(transcript_read_records(p.outfd), TRANSCRIPT_SLOW_BYTES,
	    "not every byte came");
	close(in);
	h_run_wait(&p, H_WAIT_BOUND);
	h_run_free(&p.res);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "once read");
	cr_assert_eq(stat(path, &st), 0, "%s", path);
	cr_assert_eq((size_t)st.st_size, TRANSCRIPT_SLOW_BYTES, "the "
	    "transcript has %lld bytes", (long long)st.st_size);
}
