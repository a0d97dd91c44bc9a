/*
 * Record and replay (issue 37): a qemu board recorded (QEMU's
 * record/replay on mps2-an385), its bundle holding the recording, and
 * that bundle replayed under gdb, where the target runs backwards.
 *
 * What a user checks: a run whose firmware stores a bad value and faults
 * later is recorded; its automatic bundle holds the recording; a replay
 * stops at the fault, and from there a watchpoint and a reverse resume
 * reach the line that wrote the bad value, at the same place on every
 * replay; eval, regs, mem and dbgctl mi work there, and a reverse
 * finish, next and step; a recording is bounded in time
 * and in size (the run is stopped at its bound, the recording whole and
 * small); bad inputs (a bundle without a recording, a machine
 * that cannot record, a relative path, an image that is a link or names
 * a backing file, a recording QEMU cannot read) are refused and leave
 * nothing running. How a recording's files live and are bundled:
 * test_replay_life.c.
 */
#include "harness.h"
#include "replay-check.h"

#include <criterion/criterion.h>

#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(replay, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);


/* The line of board.c that stores the bad hook (board_corrupt_hook). */
static long
rp_writer_line(void)
{
	char	 path[PATH_MAX], line[512];
	FILE	*f;
	long	 n = 0;

	snprintf(path, sizeof path, "%s/examples/board/board.c",
	    getenv("DBGCTL_SOURCE_ROOT"));
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	while (fgets(line, sizeof line, f) != NULL) {
		n++;
		if (strstr(line, "board_hook = (void (*)(void))BAD_HOOK") !=
		    NULL)
			break;
	}
	fclose(f);
	return n;
}

/*
 * Record the board with params added to the launch's, send it input,
 * and wait for its automatic bundle; its path in bundle. The session is
 * stopped.
 */
static void
rp_record(const char *input, json_t *more, char *bundle, size_t len)
{
	struct h_sess	 t;
	struct h_res	 r;
	char		 art[PATH_MAX];
	json_t		*st;

	h_ctx_path(art, sizeof art, "art");
	cr_assert_eq(mkdir(art, 0700), 0, "mkdir %s", art);
	if (more == NULL)
		more = json_object();
	json_object_set_new(more, "artifacts", json_string(art));
	rp_launch(&t, more);
	if (input != NULL) {
		cr_assert_eq(h_cli_input(&r, input, (const char *const[]){
		    "send", t.ids, NULL }), 0, "send %s", input);
		h_run_free(&r);
	}
	cr_assert(h_cli_wait_status(t.id, "bundle.path", NULL,
	    RP_REVERSE_BOUND), "session %ld: no automatic bundle", t.id);
	st = h_cli_status(t.id);
	snprintf(bundle, len, "%s", h_jstr(st, "bundle.path"));
	cr_assert_null(h_jpath(st, "bundle.error"), "bundle: %s",
	    h_sess_shown(st));
	json_decref(st);
	/* A fault's session runs on; one at its bound stops on its own. */
	json_decref(h_sess_call(&t, "stop", NULL));
	json_decref(h_cli_wait_ended(t.id, H_WAIT_BOUND));
	h_conn_close(&t.c);
}

/* The bundle's replay.json names the bound that stopped the recording. */
static void
rp_bound_was(const char *bundle, const char *want)
{
	char		 path[PATH_MAX + 16];
	json_t		*meta;
	json_error_t	 err;

	snprintf(path, sizeof path, "%s/replay.json", bundle);
	meta = json_load_file(path, 0, &err);
	cr_assert_not_null(meta, "%s: %s", path, err.text);
	cr_assert_str_eq(h_jstr(meta, "bound") ? h_jstr(meta, "bound") : "?",
	    want, "%s", h_sess_shown(meta));
	json_decref(meta);
}

/* dbgctl replay BUNDLE: the new session's id, asserted. */
static long
rp_replay(const char *bundle)
{
	struct h_res	r;
	long		id;

	cr_assert_eq(h_cli(&r, (const char *const[]){ "replay", bundle,
	    NULL }), 0, "dbgctl replay %s: %s", bundle, r.err);
	id = strtol(r.out, NULL, 10);
	cr_assert_gt(id, 0, "dbgctl replay printed \"%s\"", r.out);
	h_run_free(&r);
	return id;
}

/* A session of ours over the test's connection, for an id already launched. */
static void
rp_sess(struct h_sess *t, long id)
{
	memset(t, 0, sizeof(*t));
	cr_assert_eq(h_conn_open(&t->c, H->sock), 0, "connect to %s",
	    H->sock);
	t->id = id;
	h_idstr(id, t->ids, sizeof(t->ids));
}

/* Where a replay stops, and where its reverse watch takes it. */
struct rp_stops {
	char	fault[64];	/* func:line:addr of the first stop */
	char	writer[64];	/* the same after the reverse watch */
};

/* func:line:addr of a stop record. */
static void
rp_place(json_t *stop, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%lld:%s", h_jstr(stop, "func") ?
	    h_jstr(stop, "func") : "?", h_jint(stop, "line", -1),
	    h_jstr(stop, "addr") ? h_jstr(stop, "addr") : "?");
}

/*
 * The watchpoint on board_hook and the reverse resume, through the
 * client (break --watch, resume --reverse --wait): the stop's record.
 */
static json_t *
rp_cli_reverse_watch(struct h_sess *t)
{
	json_t *st;

	st = h_cli_json((const char *const[]){ "break", "--watch", t->ids,
	    "board_hook", NULL });
	cr_assert_str_eq(h_jstr(st, "breakpoint.type"), "watchpoint", "%s",
	    h_sess_shown(st));
	json_decref(st);
	return h_cli_json((const char *const[]){ "resume", "--reverse",
	    "--wait", "--timeout", "120000", t->ids, NULL });
}

/* A resume of t's replay in reverse, how: the stop's function. */
static char *
rp_reverse(struct h_sess *t, const char *how)
{
	json_t	*res;
	char	*func;

	res = h_sess_ok(t, "resume", json_pack("{s:s, s:b, s:b, s:i}", "how",
	    how, "reverse", 1, "until_stop", 1, "timeout", RP_REVERSE_BOUND));
	func = strdup(h_jstr(res, "target.stop.func") ?
	    h_jstr(res, "target.stop.func") : "?");
	json_decref(res);
	return func;
}

/*
 * From the writing line, reverse finish, next and step: finish leaves
 * board_corrupt_hook for its caller, main's loop, where a reverse next
 * and a reverse step stay.
 */
static void
rp_reverse_out_to_main(struct h_sess *t)
{
	static const char *const hows[] = { "finish", "next", "step", NULL };
	json_t	*res;
	char	*func;
	int	 i;

	for (i = 0; hows[i] != NULL; i++) {
		func = rp_reverse(t, hows[i]);
		cr_assert_str_eq(func, "main", "a reverse %s stops in %s, not "
		    "in main", hows[i], func);
		free(func);
		/* Forward, the store would have run: the hook is still unset. */
		res = h_sess_ok(t, "eval", json_pack("{s:s}", "expression",
		    "(unsigned)board_hook"));
		cr_assert_str_eq(h_jstr(res, "value"), "0", "after a reverse "
		    "%s: %s", hows[i], h_sess_shown(res));
		json_decref(res);
	}
}

/* A front end's MI through dbgctl mi on the replay: the hook, not yet stored. */
static void
rp_mi_sees_the_hook_unset(struct h_sess *t)
{
	struct h_proc	 p;
	struct h_bytes	 out = { calloc(1, 1), 0 };
	const char	**v = h_cli_argv(H_ARGS("mi", t->ids));
	const char	*line = "-data-evaluate-expression (unsigned)board_hook\n";
	int		 in;

	cr_assert_eq(h_run_start_fed(&p, &in, v), 0, "start dbgctl mi %s",
	    t->ids);
	free(v);
	cr_assert_neq(h_run_out_until(&p, &out, 0, "(gdb) \n",
	    H_WAIT_BOUND), 0, "dbgctl mi: no first prompt: %s",
	    h_shown(out.p, out.len, 2000));
	cr_assert_eq(write(in, line, strlen(line)), (ssize_t)strlen(line),
	    "write to dbgctl mi");
	cr_assert_neq(h_run_out_until(&p, &out, 0, "^done,value=\"0\"",
	    H_WAIT_BOUND), 0, "dbgctl mi on a replay: %s",
	    h_shown(out.p, out.len, 2000));
	close(in);
	h_run_wait(&p, H_WAIT_BOUND);
	cr_assert_eq(p.res.code, 0, "dbgctl mi after stdin's end: %s",
	    p.res.err);
	free(out.p);
}

/*
 * Replay bundle: it stops at the fault; a watchpoint on board_hook and a
 * reverse resume (by the protocol, or with cli by the client's options)
 * reach the line that stored the bad hook, where eval, regs and mem
 * answer.
 */
static void
rp_replay_to_writer(const char *bundle, bool cli, struct rp_stops *out)
{
	struct h_sess	 t;
	json_t		*res, *st;
	char		 want[64];

	rp_sess(&t, rp_replay(bundle));
	/* The recorded fault: an INVSTATE HardFault, its record gathered. */
	cr_assert(h_cli_wait_status(t.id, "fault.cortex_m.cfsr", "0x00020000",
	    RP_REVERSE_BOUND), "the replay never stopped at the recorded "
	    "fault");
	st = h_cli_status(t.id);
	rp_place(h_jpath(st, "target.stop"), out->fault, sizeof out->fault);
	json_decref(st);
	if (cli)
		res = rp_cli_reverse_watch(&t);
	else {
		res = h_sess_ok(&t, "break", json_pack("{s:s, s:s}",
		    "location", "board_hook", "watch", "write"));
		cr_assert_str_eq(h_jstr(res, "breakpoint.type"), "watchpoint",
		    "%s", h_sess_shown(res));
		json_decref(res);
		res = h_sess_ok(&t, "resume", json_pack("{s:b, s:b, s:i}",
		    "reverse", 1, "until_stop", 1, "timeout",
		    RP_REVERSE_BOUND));
	}
	cr_assert_str_eq(h_jstr(res, "target.stop.func") ? h_jstr(res,
	    "target.stop.func") : "?", "board_corrupt_hook", "the reverse "
	    "watch stops in the function that stored the bad hook: %s",
	    h_sess_shown(res));
	json_decref(res);
	/*
	 * QEMU's stub says a watchpoint's hit as a SIGTRAP just past the
	 * store: one instruction back is the store, on the writing line.
	 */
	res = h_sess_ok(&t, "resume", json_pack("{s:s, s:b, s:b, s:i}", "how",
	    "stepi", "reverse", 1, "until_stop", 1, "timeout",
	    RP_REVERSE_BOUND));
	rp_place(h_jpath(res, "target.stop"), out->writer, sizeof out->writer);
	snprintf(want, sizeof want, "board_corrupt_hook:%ld:",
	    rp_writer_line());
	cr_assert(strncmp(out->writer, want, strlen(want)) == 0, "the reverse "
	    "watch and a reverse stepi stop at the line that stored the bad "
	    "hook (%s), not %s: %s", want, out->writer, h_sess_shown(res));
	json_decref(res);
	/* Before the store, the hook is still unset: eval, regs, mem say so. */
	res = h_sess_ok(&t, "eval", json_pack("{s:s}", "expression",
	    "(unsigned)board_hook"));
	cr_assert_str_eq(h_jstr(res, "value"), "0", "%s", h_sess_shown(res));
	json_decref(res);
	res = h_sess_ok(&t, "registers", json_pack("{s:[s]}", "names", "pc"));
	cr_assert_not_null(h_jpath(res, "registers"), "%s", h_sess_shown(res));
	json_decref(res);
	res = h_sess_ok(&t, "memory", json_pack("{s:s, s:i}", "address",
	    "&board_hook", "length", 4));
	cr_assert_str_eq(h_jstr(res, "hex") ? h_jstr(res, "hex") : "?",
	    "00000000", "%s", h_sess_shown(res));
	json_decref(res);
	if (cli)
		rp_mi_sees_the_hook_unset(&t);
	rp_reverse_out_to_main(&t);
	h_sess_end(&t);
}

Test(replay, corrupted_then_faulted_run_replays_back_to_the_writer)
{
	char		 bundle[PATH_MAX];
	struct rp_stops	 a, b;

	rp_record("%", NULL, bundle, sizeof bundle);
	(void)rp_file_size(bundle, "replay.bin");
	(void)rp_file_size(bundle, "replay.qcow2");
	(void)rp_file_size(bundle, "firmware.elf");
	(void)rp_file_size(bundle, "replay.json");
	rp_assert_none_left("the recording session");
	rp_replay_to_writer(bundle, false, &a);
	rp_replay_to_writer(bundle, true, &b);
	cr_assert_str_eq(a.fault, b.fault, "two replays stop at the fault "
	    "at different places");
	cr_assert_str_eq(a.writer, b.writer, "two reverse watches stop at "
	    "different places");
	rp_assert_none_left("the replays");
}

Test(replay, a_recording_is_stopped_whole_at_its_time_bound)
{
	char		 bundle[PATH_MAX];
	long long	 size;
	struct h_sess	 t;

	/* Ten seconds of the board, ended by the bound (an event, no sleep). */
	rp_record(NULL, json_pack("{s:i}", "record_seconds", 10), bundle,
	    sizeof bundle);
	cr_assert(strstr(bundle, "-record-bound") != NULL, "the bundle at "
	    "the bound is named so: %s", bundle);
	rp_bound_was(bundle, "time");
	size = rp_file_size(bundle, "replay.bin");
	/* The documented default bound is 16 MiB; ten idle seconds are KiB. */
	cr_assert_lt(size, 16LL * 1024 * 1024, "a 10 s recording is %lld "
	    "bytes, over its bound", size);
	rp_assert_none_left("the bounded recording");
	/* Whole: it replays, running to its recorded end (no fault). */
	rp_sess(&t, rp_replay(bundle));
	cr_assert(h_cli_wait_status(t.id, "target.state", "exited",
	    RP_REVERSE_BOUND), "the bounded recording does not replay to "
	    "its end");
	h_sess_end(&t);
}

Test(replay, a_recording_is_stopped_whole_at_its_size_bound)
{
	char		 bundle[PATH_MAX];
	long long	 size;

	/* 4096 bytes: the first of QEMU's writes of its log reaches it. */
	rp_record(NULL, json_pack("{s:i}", "record_bytes", 4096), bundle,
	    sizeof bundle);
	cr_assert(strstr(bundle, "-record-bound") != NULL, "%s", bundle);
	rp_bound_was(bundle, "size");
	size = rp_file_size(bundle, "replay.bin");
	/* Over by what QEMU had not written yet (4 KiB) and a look's growth. */
	cr_assert(size >= 4096 && size < 4096 + 8192, "a recording bounded "
	    "at 4096 bytes is %lld", size);
	rp_assert_none_left("the bounded recording");
}

/*
 * Write at path a qcow2 header QEMU reads: version 3, 64 KiB clusters,
 * the rest of its first cluster zero; naming a backing file if asked.
 */
static void
rp_write_image(const char *path, bool backing)
{
	unsigned char	 img[65536] = { 'Q', 'F', 'I', 0xfb, 0, 0, 0, 3 };
	FILE		*f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	img[23] = 16;				/* cluster_bits */
	if (backing) {
		img[15] = 104;			/* backing file at byte 104 */
		img[19] = 4;			/* of 4 bytes */
		memcpy(img + 104, "/etc", 4);
	}
	cr_assert_eq(fwrite(img, sizeof img, 1, f), 1);
	fclose(f);
}

/* replay of dir by the client fails (exit 1) with want in its error. */
static void
rp_refused(const char *dir, const char *want, const char *what)
{
	struct h_res r;

	cr_assert_eq(h_cli(&r, (const char *const[]){ "replay", dir, NULL }),
	    1, "replay of %s", what);
	cr_assert(strstr(r.err, want) != NULL, "replay of %s: no \"%s\" in "
	    "\"%s\"", what, want, r.err);
	h_run_free(&r);
}

Test(replay, bad_inputs_are_refused_and_leave_nothing_running)
{
	char		 dir[PATH_MAX], path[4 * PATH_MAX + 256];
	const char	*fw = h_board_firmware("FIX_BOARD_AN385");
	struct h_sess	 t;
	struct h_res	 r;
	json_t		*rep;
	FILE		*f;

	h_daemon_fg();
	cr_assert_eq(h_conn_open(&t.c, H->sock), 0, "connect");
	/* A machine that cannot record, named. */
	snprintf(path, sizeof path, "{\"kind\":\"qemu\",\"machine\":"
	    "\"lm3s6965evb\",\"record\":true,\"argv\":[\"%s\"]}", fw);
	rep = h_conn_call(&t.c, "launch", path, H_SESS_BOUND);
	cr_assert(h_jstr(rep, "error.message") != NULL && strstr(h_jstr(rep,
	    "error.message"), "machine lm3s6965evb cannot record") != NULL,
	    "%s", h_sess_shown(rep));
	json_decref(rep);
	/* A bundle without a recording. */
	h_ctx_path(dir, sizeof dir, "bundle");
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(h_cli(&r, (const char *const[]){ "replay", dir, NULL }),
	    1, "replay of a bundle without a recording");
	cr_assert(strstr(r.err, "holds no recording") != NULL, "%s",
	    r.err);
	h_run_free(&r);
	/* A recording QEMU cannot read: its log is not one. */
	snprintf(path, sizeof path, "%s/replay.json", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\"machine\": \"mps2-an385\"}\n");
	fclose(f);
	snprintf(path, sizeof path, "cp %s %s/firmware.elf && head -c 4096 "
	    "/dev/zero | tr '\\0' '\\345' > %s/replay.bin && head -c 262144 "
	    "/dev/zero > %s/replay.qcow2", fw, dir, dir, dir);
	cr_assert_eq(system(path), 0, "%s", path);
	/* An image that is no qcow2 image. */
	rp_refused(dir, "is not a qcow2 image", "a bundle whose image is "
	    "zeros");
	snprintf(path, sizeof path, "%s/replay.qcow2", dir);
	rp_write_image(path, false);
	cr_assert_eq(h_cli(&r, (const char *const[]){ "replay", dir, NULL }),
	    1, "replay of a corrupt recording");
	cr_assert(strstr(r.err, "Replay") != NULL || strstr(r.err,
	    "replay") != NULL, "the error names the replay: %s", r.err);
	h_run_free(&r);
	/* An image that names a backing file, which QEMU would open. */
	rp_write_image(path, true);
	rp_refused(dir, "names a backing file", "an image naming a backing "
	    "file");
	/* An image that is a link (to a good one). */
	snprintf(path, sizeof path, "%s/image", dir);
	rp_write_image(path, false);
	snprintf(path, sizeof path, "cd %s && rm replay.qcow2 && ln -s image "
	    "replay.qcow2", dir);
	cr_assert_eq(system(path), 0, "%s", path);
	rp_refused(dir, "symbolic link", "an image that is a link");
	/* A relative path: QEMU and the daemon would read different files. */
	rep = h_conn_call(&t.c, "launch", "{\"kind\":\"qemu\",\"machine\":"
	    "\"mps2-an385\",\"replay\":\"bundle\",\"argv\":[\"fw\"]}",
	    H_SESS_BOUND);
	cr_assert(h_jstr(rep, "error.message") != NULL && strstr(h_jstr(rep,
	    "error.message"), "must be an absolute path") != NULL, "%s",
	    h_sess_shown(rep));
	cr_assert_eq(h_jint(rep, "error.code", 0), -32602, "%s",
	    h_sess_shown(rep));
	json_decref(rep);
	rp_assert_none_left("the refused launches");
	h_conn_close(&t.c);
}
