/*
 * Throughput to and from an exec session running `cat` with a transport:
 * through `dbgctl pipe` (a whole client process, the raw pipe mode), and
 * through write and read requests on two held connections, each beside a
 * raw chain of three cats carrying the same bytes from the same writer to
 * the same reader.
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Bytes of one write: to a pipe, and in one write request. */
#define FIG_PIPE_CHUNK (256 * 1024)
/* The most bytes one read request asks for (the daemon's cap). */
#define FIG_PIPE_READ_MAX 524288
/* send/recv carries a quarter of BENCH_MIB, in whole chunks: it is slower. */
#define FIG_PIPE_RPC_BYTES(b) \
	(((size_t)(b)->mib * 1048576 / 4 + FIG_PIPE_CHUNK - 1) / \
	    FIG_PIPE_CHUNK * FIG_PIPE_CHUNK)

/* What the writer thread writes where. */
struct fig_pipe_writer {
	int	fd;
	size_t	bytes;
};

/* The writer: bytes of zeros to fd, then close it for the reader's EOF. */
static void *
fig_pipe_writer_main(void *arg)
{
	static const char	 zeros[FIG_PIPE_CHUNK];
	struct fig_pipe_writer	*w = arg;
	size_t			 left = w->bytes;
	ssize_t			 n;

	while (left > 0) {
		n = write(w->fd, zeros, left < sizeof zeros ? left :
		    sizeof zeros);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		left -= n;
	}
	close(w->fd);
	return NULL;
}

/*
 * Feed wfd and drain rfd to its end: MiB/s, or NA if bytes were lost.
 * from_first: the clock starts at the first bytes back, which are not
 * counted, and stops at the last one (the reader does not wait for an
 * end): a debugger's start of its target is not the transport's time.
 */
static double
fig_pipe_pump(int wfd, int rfd, size_t bytes, bool from_first)
{
	static char		buf[FIG_PIPE_CHUNK];
	struct fig_pipe_writer	w = { wfd, bytes };
	pthread_t		th;
	size_t			got = 0, first = 0;
	double			t0 = stat_now_ms(), ms;
	ssize_t			n;

	if (pthread_create(&th, NULL, fig_pipe_writer_main, &w) != 0)
		abort();
	while (!(from_first && got >= bytes) &&
	    (n = read(rfd, buf, sizeof buf)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		if (from_first && got == 0) {
			t0 = stat_now_ms();
			first = (size_t)n;
		}
		got += n;
	}
	ms = stat_now_ms() - t0;
	pthread_join(th, NULL);
	close(rfd);
	if (got != bytes || ms <= 0)
		return NA;
	return (bytes - first) / 1048576.0 / (ms / 1000);
}

/* Spawn argv between in and out, and close both here: the child has them. */
static pid_t
fig_pipe_spawn(const char *const argv[], char *const envp[], int in, int out)
{
	pid_t pid = proc_spawn(argv, envp, in, out, -1);

	close(in);
	close(out);
	return pid;
}

/* One sample of the raw chain: writer | cat | cat | cat | reader. */
static double
fig_pipe_raw(size_t bytes)
{
	const char	*cat[] = { "cat", NULL };
	int		 p[4][2], i;
	pid_t		 pid[3];
	double		 rate;

	for (i = 0; i < 4; i++)
		if (pipe2(p[i], O_CLOEXEC) == -1)
			abort();
	for (i = 0; i < 3; i++)
		pid[i] = fig_pipe_spawn(cat, NULL, p[i][0], p[i + 1][1]);
	rate = fig_pipe_pump(p[0][1], p[3][0], bytes, false);
	for (i = 0; i < 3; i++)
		if (pid[i] <= 0 || proc_wait(pid[i], -1) != 0)
			rate = NA;
	return rate;
}

/*
 * A stage of the floor: in to out through a buffer of one chunk, each read
 * written to a new file at path first, as a transcript is; then exit.
 */
static void
fig_pipe_tee(int in, int out, const char *path)
{
	static char	buf[FIG_PIPE_CHUNK];
	off_t		off = 0;
	ssize_t		n;
	int		fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		_exit(1);
	while ((n = read(in, buf, sizeof buf)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 || pwrite(fd, buf, n, off) != n ||
		    proc_write_all(out, buf, n) != 0)
			_exit(1);
		off += n;
	}
	_exit(0);
}

/* Fork a stage of the floor from p[i] to p[i + 1]; the rest closed in it. */
static pid_t
fig_pipe_tee_fork(int p[4][2], int i, const char *path)
{
	pid_t	pid = fork();
	int	j;

	if (pid != 0)
		return pid;
	for (j = 0; j < 4; j++) {
		if (j != i)
			close(p[j][0]);
		if (j != i + 1)
			close(p[j][1]);
	}
	fig_pipe_tee(p[i][0], p[i + 1][1], path);
	return -1;
}

/*
 * One sample of the floor of a transcribed pipe, the least work `dbgctl
 * pipe` must do by hand: writer | tee to a file | cat | tee to a file |
 * reader, every byte written to a file each way before it goes on.
 */
static double
fig_pipe_floor(struct bench *b, size_t bytes)
{
	const char	*cat[] = { "cat", NULL };
	char		 path[2][sizeof b->dir + 16];
	int		 p[4][2], i;
	pid_t		 pid[3];
	double		 rate;

	for (i = 0; i < 4; i++)
		if (pipe2(p[i], O_CLOEXEC) == -1)
			abort();
	for (i = 0; i < 2; i++) {
		snprintf(path[i], sizeof path[i], "%s/floor-%d", b->dir, i);
		pid[i * 2] = fig_pipe_tee_fork(p, i * 2, path[i]);
		close(p[i * 2][0]);
		close(p[i * 2 + 1][1]);
	}
	pid[1] = fig_pipe_spawn(cat, NULL, p[1][0], p[2][1]);
	rate = fig_pipe_pump(p[0][1], p[3][0], bytes, false);
	for (i = 0; i < 3; i++)
		if (pid[i] <= 0 || proc_wait(pid[i], -1) != 0)
			rate = NA;
	for (i = 0; i < 2; i++)
		unlink(path[i]);
	return rate;
}

/* Launch `cat` with a transport, as kind (under gdb: run); its id, or -1. */
static json_int_t
fig_pipe_cat_as(struct rpc *r, const char *kind)
{
	json_int_t	 id;
	json_t		*res, *params;

	params = json_pack("{s:s, s:[s], s:s, s:b}", "kind", kind, "argv",
	    "cat", "cwd", "/", "transport", 1);
	if (strcmp(kind, "gdb") == 0)
		json_object_set_new(params, "commands", json_pack("[s]",
		    "run"));
	res = rpc_call(r, "launch", params);
	if (res == NULL)
		return -1;
	id = json_integer_value(json_object_get(res, "id"));
	json_decref(res);
	return id;
}

/*
 * One sample through `dbgctl pipe ID` to a `cat` of kind exec, or that
 * gdb runs: MiB/s, or NA. gdb holds the target's stdout, so its output
 * does not end with cat: that sample is timed from the target's first
 * output to its last byte, and the session is then stopped.
 */
static double
fig_pipe_client(struct bench *b, struct rpc *r, size_t bytes,
    const char *kind)
{
	const char	*argv[] = { b->dbgctl, "-s", b->sock, "pipe", NULL,
			    NULL };
	char		 id[32];
	json_int_t	 session;
	int		 in[2], out[2], code;
	bool		 gdb = strcmp(kind, "gdb") == 0;
	pid_t		 pid;
	double		 rate;

	if ((session = fig_pipe_cat_as(r, kind)) == -1)
		return NA;
	snprintf(id, sizeof id, "%lld", (long long)session);
	argv[4] = id;
	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1)
		abort();
	pid = fig_pipe_spawn(argv, b->envp, in[0], out[1]);
	rate = fig_pipe_pump(in[1], out[0], bytes, gdb);
	if (gdb)
		(void)rpc_stop(r, session);
	/* However a stop ends it (its stdout closed), it must end. */
	code = pid > 0 ? proc_wait(pid, gdb ? 30000 : -1) : -1;
	if (code == -1 || (!gdb && code != 0))
		rate = NA;
	return rate;
}

/* What the sending thread of send/recv sends, and on which connection. */
struct fig_pipe_sender {
	struct rpc	r;
	json_int_t	session;
	size_t		bytes;
	const char	*text;	/* FIG_PIPE_CHUNK zeros in base64 */
	int		failed;
};

/*
 * Write line through r and read its reply line: the reply, or NULL if it
 * is none or no result. Requests and replies are written and read as text,
 * as a rig's JSON library would at its own speed: jansson here, a byte at
 * a time, would measure this program instead of the daemon.
 */
static const char *
fig_pipe_call(struct rpc *r, const char *line, size_t len)
{
	const char *reply;

	if (rpc_write(r, line, len) == -1 || (reply = rpc_line(r)) == NULL)
		return NULL;
	return strstr(reply, "\"result\":") != NULL ? reply : NULL;
}

/* The sender: write requests of a chunk each, one in flight, then eof. */
static void *
fig_pipe_sender_main(void *arg)
{
	struct fig_pipe_sender	*s = arg;
	size_t			 sent;
	char			*line;
	int			 len;

	for (sent = 0; sent < s->bytes; sent += FIG_PIPE_CHUNK) {
		len = asprintf(&line, "{\"jsonrpc\":\"2.0\",\"id\":%zu,"
		    "\"method\":\"write\",\"params\":{\"session\":%lld,"
		    "\"data\":\"%s\",\"eof\":%s}}\n", sent / FIG_PIPE_CHUNK + 1,
		    (long long)s->session, s->text, sent + FIG_PIPE_CHUNK >=
		    s->bytes ? "true" : "false");
		if (len < 0)
			abort();
		if (fig_pipe_call(&s->r, line, (size_t)len) == NULL) {
			free(line);
			s->failed = 1;
			break;
		}
		free(line);
	}
	return NULL;
}

/* The receiver: read requests until eof; the bytes, or -1. */
static long long
fig_pipe_receive(struct rpc *r, json_int_t session)
{
	const char	*reply, *data, *end;
	char		 line[256];
	long long	 got = 0, id = 0;
	int		 eof = 0, len;

	while (!eof) {
		len = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\","
		    "\"id\":%lld,\"method\":\"read\",\"params\":{"
		    "\"session\":%lld,\"max\":%d}}\n", ++id, (long long)session,
		    FIG_PIPE_READ_MAX);
		if ((reply = fig_pipe_call(r, line, (size_t)len)) == NULL ||
		    (data = strstr(reply, "\"data\":\"")) == NULL ||
		    (end = strchr(data + 8, '"')) == NULL)
			return -1;
		got += b64_size(data + 8, (size_t)(end - data - 8));
		eof = strstr(end, "\"eof\":true") != NULL;
	}
	return got;
}

/* One sample through write and read requests: MiB/s, or NA. */
static double
fig_pipe_rpc(struct bench *b, struct rpc *r, const char *text, size_t bytes)
{
	struct fig_pipe_sender	s = { .bytes = bytes, .text = text };
	pthread_t		th;
	long long		got;
	double			t0, ms;

	if ((s.session = fig_pipe_cat_as(r, "exec")) == -1 ||
	    rpc_open(&s.r, b->sock) == -1)
		return NA;
	t0 = stat_now_ms();
	if (pthread_create(&th, NULL, fig_pipe_sender_main, &s) != 0)
		abort();
	got = fig_pipe_receive(r, s.session);
	ms = stat_now_ms() - t0;
	pthread_join(th, NULL);
	rpc_close(&s.r);
	if (s.failed || got != (long long)bytes)
		return NA;
	return bytes / 1048576.0 / (ms / 1000);
}

/* The samples of the figure. */
struct fig_pipe_samples {
	struct samples pipe, pipe_raw, floor, rpc, rpc_raw, gdb;
};

/* One run: each way beside a raw chain of its own; -1 if one failed. */
static int
fig_pipe_sample(struct bench *b, struct rpc *r, const char *text,
    struct fig_pipe_samples *s)
{
	size_t	bytes = (size_t)b->mib * 1048576;
	double	v[5];
	int	i;

	v[0] = fig_pipe_client(b, r, bytes, "exec");
	v[1] = fig_pipe_raw(bytes);
	v[2] = fig_pipe_rpc(b, r, text, FIG_PIPE_RPC_BYTES(b));
	v[3] = fig_pipe_raw(FIG_PIPE_RPC_BYTES(b));
	v[4] = fig_pipe_floor(b, bytes);
	for (i = 0; i < 5; i++)
		if (!(v[i] >= 0))
			return bench_fail(b, "%s lost bytes or failed (%s)",
			    i == 0 ? "dbgctl pipe" : i == 2 ? "write/read" :
			    i == 4 ? "the floor" : "the raw chain", r->err);
	stat_add(&s->pipe, v[0]);
	stat_add(&s->pipe_raw, v[1]);
	stat_add(&s->rpc, v[2]);
	stat_add(&s->rpc_raw, v[3]);
	stat_add(&s->floor, v[4]);
	if (!proc_exists("gdb"))
		return 0;
	if (!((v[0] = fig_pipe_client(b, r, bytes, "gdb")) >= 0))
		return bench_fail(b, "dbgctl pipe through gdb lost bytes or "
		    "failed (%s)", r->err);
	stat_add(&s->gdb, v[0]);
	return 0;
}

/* Figure: pipe and send/recv throughput beside the raw chain. */
int
fig_pipe_run(struct bench *b)
{
	static const char	 zeros[FIG_PIPE_CHUNK];
	struct fig_pipe_samples	 s = { 0 };
	struct rpc		 r;
	char			*text, note[64], rnote[64];
	int			 run, rv = 0;

	if (rpc_open(&r, b->sock) == -1)
		return bench_fail(b, "%s", r.err);
	text = b64_encode(zeros, sizeof zeros);
	for (run = 0; run < b->runs && rv == 0; run++)
		rv = fig_pipe_sample(b, &r, text, &s);
	free(text);
	rpc_close(&r);
	snprintf(note, sizeof note, "%d MiB a sample (BENCH_MIB)", b->mib);
	snprintf(rnote, sizeof rnote, "%zu MiB; 256 KiB writes, one in "
	    "flight, as text", FIG_PIPE_RPC_BYTES(b) >> 20);
	if (rv == 0) {
		table_row("MiB/s", stat_median(&s.pipe),
		    stat_median(&s.pipe_raw), TARGET(RATIO_MIN, 0.75), note,
		    "dbgctl pipe through exec cat [vs cat|cat|cat]");
		table_row("MiB/s", stat_median(&s.floor),
		    stat_median(&s.pipe_raw), NO_TARGET, "each byte written "
		    "to a file both ways", "floor: a hand relay with both "
		    "transcripts [vs cat|cat|cat]");
		if (s.gdb.n > 0)
			table_row("MiB/s", stat_median(&s.gdb),
			    stat_median(&s.pipe_raw), NO_TARGET, "clock from "
			    "the target's first output",
			    "dbgctl pipe, cat under gdb [vs cat|cat|cat]");
		else
			table_na(NO_TARGET, "gdb is not installed",
			    "dbgctl pipe, cat under gdb [vs cat|cat|cat]");
		/* The 75% is pipe's: base64 in JSON lines is a third more
		 * bytes, encoded and parsed on both sides. */
		table_row("MiB/s", stat_median(&s.rpc), stat_median(&s.rpc_raw),
		    NO_TARGET, rnote,
		    "send/recv (write/read) through exec cat [vs "
		    "cat|cat|cat]");
	}
	stat_free(&s.pipe);
	stat_free(&s.pipe_raw);
	stat_free(&s.floor);
	stat_free(&s.rpc);
	stat_free(&s.rpc_raw);
	stat_free(&s.gdb);
	return rv;
}
