/*
 * The target's input and its transcript: a large pipe is in both
 * transcripts byte for byte; past the input transcript's limit piped
 * input still reaches the target once; input a target does not read
 * waits in its transcript and holds the client back, and still comes
 * before its EOF; an input transcript cut short behind the daemon's back
 * loses nothing memory still holds, and what it does lose ends that
 * session's input alone, said in the daemon's log; `dbgctl pipe` widens
 * the pipes it is given.
 */
#include "b64.h"
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A feeder of ours still running, killed and reaped however a test ends. */
static pid_t transcript_in_feeder = -1;

/* Criterion .fini: no feeder outlives its test, then the usual teardown. */
static void
transcript_in_fini(void)
{
	int st;

	if (transcript_in_feeder > 0) {
		kill(transcript_in_feeder, SIGKILL);
		waitpid(transcript_in_feeder, &st, 0);
		transcript_in_feeder = -1;
	}
	h_ctx_teardown();
}

TestSuite(transcript_in, .init = h_ctx_setup, .fini = transcript_in_fini,
    .timeout = 180);

/* Session id's stream file in the state directory: suffix e.g. ".target.log". */
static void
transcript_in_file(long id, const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%s/sessions/%ld%s", H->state, id, suffix);
}

/* n bytes of a pattern that repeats only after far more than a pipe holds. */
static char *
transcript_in_data(size_t n)
{
	char	*data = malloc(n);
	size_t	 i;

	cr_assert_not_null(data, "malloc");
	for (i = 0; i < n; i++)
		data[i] = (char)(i * 7 + i / 251);
	return data;
}

/* Assert that the file at path holds exactly the n bytes of want. */
static void
transcript_in_same(const char *path, const char *want, size_t n)
{
	size_t	 len, i;
	char	*got = h_read_file(path, &len);

	cr_assert_not_null(got, "read %s", path);
	cr_assert_eq(len, n, "%s: %zu bytes of %zu", path, len, n);
	if (memcmp(got, want, n) != 0) {
		for (i = 0; got[i] == want[i]; i++)
			;
		cr_assert_fail("%s: differs at byte %zu", path, i);
	}
	free(got);
}

/*
 * Pipe n bytes of the pattern from a file through `dbgctl pipe` to a cat
 * launched for it, into a file, and check what came back; the session's
 * id, the bytes in *data (malloc'd).
 */
static long
transcript_in_piped(size_t n, char **data)
{
	char		 in[PATH_MAX], out[PATH_MAX], ids[32];
	struct h_res	 r;
	FILE		*f;
	long		 id;

	h_ctx_path(in, sizeof in, "in.bin");
	h_ctx_path(out, sizeof out, "out.bin");
	*data = transcript_in_data(n);
	f = fopen(in, "w");
	cr_assert_not_null(f, "create %s", in);
	cr_assert_eq(fwrite(*data, 1, n, f), n, "write %s", in);
	fclose(f);
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "cat"));
	h_idstr(id, ids, sizeof ids);
	h_run(&r, 120000, H_ARGS("/bin/sh", "-c",
	    "cat \"$1\" | \"$0\" -s \"$2\" pipe \"$3\" | cat >\"$4\"",
	    H->dbgctl, in, H->sock, ids, out));
	cr_assert_eq(r.code, 0, "pipe: exit %d (%s)", r.code, r.err);
	h_run_free(&r);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "(cat) after its input ended");
	transcript_in_same(out, *data, n);
	return id;
}

/*
 * 48 MiB through `dbgctl pipe` to a cat: three times what a transcript
 * keeps in the page cache, so that its older pages are written back and
 * dropped from the cache as it goes. What came back, the target's
 * transcript and its stdin's each hold every byte in order, and logs
 * still reads the first bytes, long gone from the cache, from the file.
 */
Test(transcript_in, a_large_pipe_is_in_both_transcripts_byte_for_byte)
{
	enum { N = 48 * 1024 * 1024 };
	char		 path[4200], *data, params[160];
	unsigned char	*bytes;
	struct h_conn	 c;
	size_t		 len;
	json_t		*l;
	long		 id;

	id = transcript_in_piped(N, &data);
	transcript_in_file(id, ".target.log", path, sizeof path);
	transcript_in_same(path, data, N);
	transcript_in_file(id, ".target-in.log", path, sizeof path);
	transcript_in_same(path, data, N);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	snprintf(params, sizeof params, "{\"session\":%ld,\"stream\":"
	    "\"target\",\"offset\":0,\"max\":65536}", id);
	l = h_conn_call(&c, "logs", params, H_WAIT_BOUND);
	cr_assert_null(json_object_get(l, "error"), "logs: %s",
	    h_jstr(l, "error.message"));
	bytes = b64_decode(h_jstr(l, "result.data"),
	    strlen(h_jstr(l, "result.data")), &len);
	cr_assert(len == 65536 && memcmp(bytes, data, len) == 0, "logs from "
	    "offset 0 gave %zu bytes, not the first 64 KiB piped", len);
	free(bytes);
	json_decref(l);
	h_conn_close(&c);
	free(data);
}

/*
 * Past the input transcript's limit (64 KiB here) what `dbgctl pipe`
 * sends goes to the target as a copy, each byte once and in order, 4 MiB
 * of it; the transcript keeps the first 64 KiB.
 */
Test(transcript_in, past_its_limit_piped_input_reaches_the_target_once)
{
	enum { N = 4 * 1024 * 1024, MAX = 65536 };
	char	path[4200], *data;
	long	id;

	h_ctx_env_add("DBGCTLD_TRANSCRIPT_MAX=65536");
	id = transcript_in_piped(N, &data);
	transcript_in_file(id, ".target-in.log", path, sizeof path);
	transcript_in_same(path, data, MAX);
	free(data);
}

/* A held client: its stdin's write end, the input's transcript, its size. */
struct transcript_in_held {
	int		 in;
	const char	*path;
	long long	 size;	/* at the last look, or -1 */
};

/*
 * Predicate: the client (a struct transcript_in_held *) is held: its
 * stdin's pipe is full (64 KiB) at two looks in a row, with the input's
 * transcript no bigger at the second than at the first, so nothing moves.
 */
static bool
transcript_in_client_held(void *arg)
{
	struct transcript_in_held	*h = arg;
	struct stat			 st;
	long long			 was = h->size;
	int				 n = 0;

	h->size = -1;
	if (ioctl(h->in, FIONREAD, &n) != 0 || n < 65536 ||
	    stat(h->path, &st) != 0)
		return false;
	h->size = (long long)st.st_size;
	return h->size == was;
}

/*
 * Write n bytes of data to fd in a child of ours, then close it there;
 * the suite's .fini kills and reaps it if the test ends first.
 */
static pid_t
transcript_in_feed(int fd, const char *data, size_t n)
{
	size_t	done = 0;
	ssize_t	w;
	pid_t	pid = fork();

	cr_assert_neq(pid, -1, "fork: %s", strerror(errno));
	if (pid != 0)
		return transcript_in_feeder = pid;
	while (done < n) {
		w = write(fd, data + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(1);
		done += (size_t)w;
	}
	_exit(0);
}

/* Reap the feeder within the bound: its exit code, asserted 0. */
static void
transcript_in_feed_done(void)
{
	int code = h_run_reap(transcript_in_feeder, H_WAIT_BOUND);

	transcript_in_feeder = -1;
	cr_assert_eq(code, 0, "the feeder: exit %d", code);
}

/*
 * Read n bytes from the non-blocking fd into buf, or what comes before its
 * end, or before nothing has come for H_WAIT_BOUND: a stall fails the
 * test, not hangs it; how many came.
 */
static size_t
transcript_in_read(int fd, char *buf, size_t n)
{
	size_t	got = 0;
	ssize_t	r;

	while (got < n && (r = read(fd, buf + got, n - got)) != 0) {
		if (r < 0 && errno == EAGAIN) {
			if (poll(&(struct pollfd){ fd, POLLIN, 0 }, 1,
			    H_WAIT_BOUND) == 0)
				break;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		cr_assert_gt(r, 0, "read: %s", strerror(errno));
		got += (size_t)r;
	}
	return got;
}

/*
 * A target that reads its stdin once the fifo (made here) says go: a
 * shell that reads a line from it, then cat.
 */
static long
transcript_in_launch_held(char *fifo, size_t len)
{
	h_ctx_path(fifo, len, "go.fifo");
	cr_assert_eq(mkfifo(fifo, 0600), 0, "mkfifo: %s", strerror(errno));
	return h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "sh", "-c", "read go <\"$0\"; exec cat", fifo));
}

/* Let the held target go on: it reads its stdin from now on. */
static void
transcript_in_go(const char *fifo)
{
	int go;

	cr_assert_neq(go = open(fifo, O_WRONLY | O_CLOEXEC), -1, "open fifo");
	cr_assert_eq(write(go, "go\n", 3), 3, "write go");
	close(go);
}

/*
 * Input a target does not read waits in its transcript, and holds the
 * client back: 32 MiB piped to a target that has not begun to read leaves
 * `dbgctl pipe` no longer reading its stdin with a small part of it taken;
 * once the target reads, it gets every byte in order and then its EOF,
 * and the input's transcript holds every byte.
 */
Test(transcript_in, input_a_target_does_not_read_waits_in_its_transcript)
{
	enum { N = 32 * 1024 * 1024 };
	char				 fifo[PATH_MAX], ids[32], path[4200];
	char				*data, *got;
	struct transcript_in_held	 held;
	struct h_proc			 p;
	size_t				 n;
	long				 id;
	int				 in;

	data = transcript_in_data(N);
	got = malloc(N);
	cr_assert_not_null(got, "malloc");
	id = transcript_in_launch_held(fifo, sizeof fifo);
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_run_start_fed(&p, &in, H_ARGS(H->dbgctl, "-s", H->sock,
	    "pipe", ids)), 0, "start dbgctl pipe");
	transcript_in_feed(in, data, N);
	transcript_in_file(id, ".target-in.log", path, sizeof path);
	held = (struct transcript_in_held){ in, path, -1 };
	cr_assert(h_wait_for(transcript_in_client_held, &held, H_WAIT_BOUND),
	    "dbgctl pipe never stopped reading its stdin");
	cr_assert_lt(held.size, N / 4, "%lld of %d bytes were taken for a "
	    "target that reads none", held.size, N);
	transcript_in_go(fifo);
	n = transcript_in_read(p.outfd, got, N);
	cr_assert_eq(n, (size_t)N, "%zu bytes of %d came back", n, N);
	cr_assert(memcmp(got, data, N) == 0, "the bytes came back changed");
	transcript_in_feed_done();
	close(in);
	h_run_wait(&p, H_WAIT_BOUND);
	cr_assert_eq(p.res.code, 0, "pipe: exit %d (%s)", p.res.code,
	    p.res.err);
	h_run_free(&p.res);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "(cat) after its input ended");
	transcript_in_same(path, data, N);
	free(got);
	free(data);
}

/* A file's path and the size it should reach, for transcript_in_size_is. */
struct transcript_in_size {
	const char	*path;
	size_t		 size;
};

/* Predicate: the file (a struct transcript_in_size *) has its size. */
static bool
transcript_in_size_is(void *arg)
{
	struct transcript_in_size	*t = arg;
	struct stat			 st;

	return stat(t->path, &st) == 0 && (size_t)st.st_size == t->size;
}

/*
 * Input that waits in the transcript when its client's EOF comes still
 * goes to the target before the EOF does: 1.5 MiB, more than the target's
 * pipe holds, all taken and the client's stdin closed before the target
 * reads any; the target then gets every byte and its end.
 */
Test(transcript_in, input_waiting_in_the_transcript_comes_before_its_eof)
{
	enum { N = 3 * 512 * 1024 };
	char				 fifo[PATH_MAX], ids[32], path[4200];
	char				*data;
	struct transcript_in_size	 want;
	struct h_proc			 p;
	long				 id;
	int				 in;

	data = transcript_in_data(N);
	id = transcript_in_launch_held(fifo, sizeof fifo);
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_run_start_fed(&p, &in, H_ARGS(H->dbgctl, "-s", H->sock,
	    "pipe", ids)), 0, "start dbgctl pipe");
	transcript_in_feed(in, data, N);
	transcript_in_feed_done();
	close(in);
	transcript_in_file(id, ".target-in.log", path, sizeof path);
	want = (struct transcript_in_size){ path, N };
	cr_assert(h_wait_for(transcript_in_size_is, &want, H_WAIT_BOUND),
	    "the input never all went into its transcript");
	transcript_in_go(fifo);
	h_run_wait(&p, H_WAIT_BOUND);
	cr_assert_eq(p.res.code, 0, "pipe: exit %d (%s)", p.res.code,
	    p.res.err);
	cr_assert_eq(p.res.out_len, (size_t)N, "%zu bytes of %d came back",
	    p.res.out_len, N);
	cr_assert(memcmp(p.res.out, data, N) == 0, "the bytes came back "
	    "changed");
	h_run_free(&p.res);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "(cat) after its input ended");
	transcript_in_same(path, data, N);
	free(data);
}

/*
 * Fill the held target's stdin pipe (through /proc, as the daemon holds
 * its write end) with bytes of 'f' until it takes no more, so that all
 * the daemon is given next waits in the input's transcript; how many.
 */
static size_t
transcript_in_fill(long id)
{
	char	 ids[32], path[64], page[4096];
	size_t	 n = 0;
	json_t	*s = h_cli_json(H_ARGS("status", h_idstr(id, ids,
		    sizeof ids)));
	int	 fd;

	snprintf(path, sizeof path, "/proc/%lld/fd/0", h_jint(s, "pid", -1));
	json_decref(s);
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	cr_assert_neq(fd, -1, "open %s: %s", path, strerror(errno));
	memset(page, 'f', sizeof page);
	while (write(fd, page, sizeof page) == (ssize_t)sizeof page)
		n += sizeof page;
	cr_assert_eq(errno, EAGAIN, "fill %s: %s", path, strerror(errno));
	close(fd);
	return n;
}

/* Write len bytes to the session's input with the write method; its reply. */
static json_t *
transcript_in_write(struct h_conn *c, long id, const char *data, size_t len,
    bool eof)
{
	char	*b64 = b64_encode((const unsigned char *)data, len), *params;
	json_t	*r;

	cr_assert(asprintf(&params, "{\"session\":%ld,\"data\":\"%s\","
	    "\"eof\":%s}", id, b64, eof ? "true" : "false") > 0, "asprintf");
	r = h_conn_call(c, "write", params, H_WAIT_BOUND);
	free(params);
	free(b64);
	return r;
}

/* Write pieces of piece bytes of data, n in all; each must be taken. */
static void
transcript_in_write_all(struct h_conn *c, long id, const char *data,
    size_t n, size_t piece)
{
	size_t	 at;
	json_t	*r;

	for (at = 0; at < n; at += piece) {
		r = transcript_in_write(c, id, data + at, piece, false);
		cr_assert_not_null(r, "no reply to the write at %zu", at);
		cr_assert_null(json_object_get(r, "error"), "the write at %zu: "
		    "%s", at, h_jstr(r, "error.message"));
		json_decref(r);
	}
}

/*
 * An input transcript cut short behind the daemon's back while input
 * waits in it loses nothing memory still holds: 96 KiB written in small
 * pieces (kept in memory too) wait behind a full pipe, the file is cut
 * to nothing, and once the target reads, it gets every byte in order from
 * memory, the daemon's log says why, and its input still takes more.
 */
Test(transcript_in, a_cut_input_transcript_loses_nothing_memory_holds)
{
	enum { N = 96 * 1024, PIECE = 16 * 1024 };
	char				 fifo[PATH_MAX], path[4200], out[4200];
	char				*data, *want;
	struct transcript_in_size	 size;
	struct h_conn			 c;
	size_t				 fill;
	json_t				*r;
	long				 id;

	data = transcript_in_data(N);
	id = transcript_in_launch_held(fifo, sizeof fifo);
	fill = transcript_in_fill(id);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	transcript_in_write_all(&c, id, data, N, PIECE);
	transcript_in_file(id, ".target-in.log", path, sizeof path);
	cr_assert_eq(truncate(path, 0), 0, "truncate %s: %s", path,
	    strerror(errno));
	transcript_in_go(fifo);
	transcript_in_file(id, ".target.log", out, sizeof out);
	size = (struct transcript_in_size){ out, fill + N };
	cr_assert(h_wait_for(transcript_in_size_is, &size, H_WAIT_BOUND),
	    "the target never got the %d bytes that waited", N);
	want = malloc(fill + N + 5);
	cr_assert_not_null(want, "malloc");
	memset(want, 'f', fill);
	memcpy(want + fill, data, N);
	transcript_in_same(out, want, fill + N);
	h_daemon_wait_log("cannot be sent from the file", H_WAIT_BOUND);
	r = transcript_in_write(&c, id, "tail\n", 5, true);
	cr_assert_null(json_object_get(r, "error"), "a write after: %s",
	    json_dumps(r, 0));
	json_decref(r);
	h_cli_expect_exit(id, 0, H_WAIT_BOUND, "(cat) after its input ended");
	memcpy(want + fill + N, "tail\n", 5);
	transcript_in_same(out, want, fill + N + 5);
	h_conn_close(&c);
	free(want);
	free(data);
}

/*
 * What an input transcript cut short has lost ends that session's input
 * alone: 192 KiB written in large pieces (not kept in memory) wait
 * behind a full pipe, the file is cut to nothing, and a write past the
 * transcript's limit (192 KiB) must send them first. It is refused; the
 * daemon's log names the bytes lost; the daemon goes on, another
 * session's input still works, and so does the session's status.
 */
Test(transcript_in, a_cut_input_transcript_ends_that_input_alone)
{
	enum { N = 192 * 1024, PIECE = 64 * 1024 };
	char		 fifo[PATH_MAX], path[4200], ids[32], *data;
	struct h_conn	 c;
	json_t		*r;
	long		 id, other;

	h_ctx_env_add("DBGCTLD_TRANSCRIPT_MAX=196608");
	data = transcript_in_data(N + PIECE);
	other = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--",
	    "cat"));
	id = transcript_in_launch_held(fifo, sizeof fifo);
	transcript_in_fill(id);
	cr_assert_eq(h_conn_open(&c, H->sock), 0, "connect");
	transcript_in_write_all(&c, id, data, N, PIECE);
	transcript_in_file(id, ".target-in.log", path, sizeof path);
	cr_assert_eq(truncate(path, 0), 0, "truncate %s: %s", path,
	    strerror(errno));
	r = transcript_in_write(&c, id, data + N, PIECE, false);
	cr_assert_not_null(r, "no reply to the write past the limit: did "
	    "the daemon end?");
	cr_assert_not_null(json_object_get(r, "error"), "a write after input "
	    "was lost was taken: %s", json_dumps(r, 0));
	json_decref(r);
	h_daemon_wait_log("cannot be read back from it: they are lost",
	    H_WAIT_BOUND);
	cr_assert(h_daemon_ping(), "the daemon does not answer");
	json_decref(h_cli_json(H_ARGS("status", h_idstr(id, ids,
	    sizeof ids))));
	r = transcript_in_write(&c, other, "other\n", 6, true);
	cr_assert_null(json_object_get(r, "error"), "another session's "
	    "input: %s", json_dumps(r, 0));
	json_decref(r);
	h_cli_expect_exit(other, 0, H_WAIT_BOUND, "(cat) after its input "
	    "ended");
	transcript_in_file(other, ".target.log", path, sizeof path);
	transcript_in_same(path, "other\n", 6);
	h_conn_close(&c);
	free(data);
}

/* Predicate: the pipe (an int * of one end) is 1 MiB large. */
static bool
transcript_in_pipe_wide(void *arg)
{
	return fcntl(*(int *)arg, F_GETPIPE_SZ) == 1024 * 1024;
}

/*
 * `dbgctl pipe` makes the pipes it is given as stdin and stdout 1 MiB
 * large, so that each splice moves as much and the programs at their
 * other ends wake a sixteenth as often; bytes still go through unchanged.
 * Where a fresh pipe of the test's own cannot be made that large (the
 * user's pipe pages are used up), there is nothing to check.
 */
Test(transcript_in, pipe_widens_the_pipes_it_is_given)
{
	struct h_proc	p;
	char		ids[32];
	long		id;
	int		in, fds[2], wide;

	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0, "pipe: %s", strerror(errno));
	wide = fcntl(fds[1], F_SETPIPE_SZ, 1024 * 1024);
	close(fds[0]);
	close(fds[1]);
	if (wide < 1024 * 1024)
		cr_skip_test("a pipe cannot be made 1 MiB large here: %s",
		    strerror(errno));
	id = h_cli_launch(H_ARGS("--kind", "exec", "--transport", "--", "cat"));
	h_idstr(id, ids, sizeof ids);
	cr_assert_eq(h_run_start_fed(&p, &in, H_ARGS(H->dbgctl, "-s", H->sock,
	    "pipe", ids)), 0, "start dbgctl pipe");
	cr_assert(h_wait_for(transcript_in_pipe_wide, &in, H_WAIT_BOUND),
	    "stdin's pipe stayed %d bytes", fcntl(in, F_GETPIPE_SZ));
	cr_assert(h_wait_for(transcript_in_pipe_wide, &p.outfd, H_WAIT_BOUND),
	    "stdout's pipe stayed %d bytes", fcntl(p.outfd, F_GETPIPE_SZ));
	cr_assert_eq(write(in, "hello\n", 6), 6, "write");
	close(in);
	h_run_wait(&p, H_WAIT_BOUND);
	cr_assert_eq(p.res.code, 0, "pipe: exit %d (%s)", p.res.code,
	    p.res.err);
	cr_assert_str_eq(p.res.out, "hello\n", "pipe gave \"%s\"", p.res.out);
	h_run_free(&p.res);
}
