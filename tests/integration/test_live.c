/*
 * Live memory (issue 36): memory with "live" reads and writes the target
 * while it runs, on the QEMU board: mps2-an385, whose RAM the daemon
 * shares with QEMU (via shm), and lm3s6965evb, read through QEMU's
 * monitor (via qmp); native gdb, which has no live way, halts and
 * resumes and says intrusive.
 *
 * What a user checks: a live read never halts the target (the target's
 * seq and state stay, the firmware's counter goes on between reads); a
 * live write reaches the running firmware; a write QMP cannot do, an
 * address outside the shared RAM, a read over the bound and an address
 * gdb cannot work out while the target runs are refused, saying why.
 */
#include "harness.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(live, .init = h_ctx_setup, .fini = h_ctx_teardown, .timeout = 240);

/* A little-endian word of a read's hex. */
static unsigned long
live_word(json_t *res)
{
	const char	*hex = h_jstr(res, "hex");
	unsigned long	 v = 0;
	unsigned	 b;
	int		 i;

	cr_assert(hex != NULL && strlen(hex) == 8, "expected 4 bytes of hex, "
	    "got %s", h_sess_shown(res));
	for (i = 3; i >= 0; i--) {
		cr_assert_eq(sscanf(hex + 2 * i, "%2x", &b), 1, "hex %s", hex);
		v = v << 8 | b;
	}
	return v;
}

/* A live read of the counter: by way of want, no halt, the seq kept. */
static unsigned long
live_counter(struct h_sess *t, const char *want, long long *seq)
{
	json_t		*res;
	unsigned long	 v;

	res = h_sess_ok(t, "memory", json_pack("{s:s, s:i, s:b}", "address",
	    "&counter", "length", 4, "live", 1));
	cr_assert_str_eq(h_jstr(res, "via") ? h_jstr(res, "via") : "", want,
	    "live read of counter: expected via %s: %s", want,
	    h_sess_shown(res));
	cr_assert(json_is_false(json_object_get(res, "intrusive")) &&
	    json_object_get(res, "halted_for") == NULL, "live read of "
	    "counter: expected intrusive false and no halted_for: %s",
	    h_sess_shown(res));
	cr_assert_str_eq(h_jstr(res, "target.state") ? h_jstr(res,
	    "target.state") : "", "running", "live read: the target must "
	    "still run: %s", h_sess_shown(res));
	if (*seq == -1)
		*seq = h_jint(res, "target.seq", -1);
	cr_assert_eq(h_jint(res, "target.seq", -2), *seq, "live read: the "
	    "target's seq must not move (no stop): %s", h_sess_shown(res));
	v = live_word(res);
	json_decref(res);
	return v;
}

/*
 * The counter's first live value other than from (bounded, as the
 * firmware may not get the CPU at once on a loaded host); from if none.
 */
static unsigned long
live_counter_next(struct h_sess *t, unsigned long from, long long *seq)
{
	double		 until = h_now() + H_WAIT_BOUND / 1000.0;
	unsigned long	 v;

	while ((v = live_counter(t, "shm", seq)) == from && h_now() < until)
		h_nap(5);
	return v;
}

/*
 * The counter read live moves on between reads (bounded: the firmware
 * may not get the CPU at once on a loaded host), and no read halts it.
 */
static void
live_counter_advances(struct h_sess *t, const char *via)
{
	long long	 seq = -1;
	unsigned long	 first, v;
	double		 until = h_now() + H_WAIT_BOUND / 1000.0;
	int		 reads = 0;

	first = live_counter(t, via, &seq);
	do {
		h_nap(5);
		v = live_counter(t, via, &seq);
		reads++;
	} while (v == first && h_now() < until);
	cr_assert_neq(v, first, "the counter stayed at %lu over %d live "
	    "reads: the firmware does not run", first, reads);
	json_decref(h_sess_ok(t, "status", NULL));
}

/* mps2-an385: the counter is in the shared RAM; reads never halt it. */
Test(live, an385_read_via_shm_never_halts)
{
	struct h_sess t;

	h_sess_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	live_counter_advances(&t, "shm");
	h_sess_end(&t);
}

/* How often a live write of the counter is tried against the core's own. */
#define LIVE_WRITE_TRIES 20
/* What the live write stores in the counter (hex 00000070, little-endian). */
#define LIVE_WRITTEN 0x70000000ul

/*
 * A live write of the running counter: the firmware counts on from the
 * value written, which the first read that moves shows (a value no count
 * from 0 reaches within the test). The firmware's own counter++ (load,
 * add, store) stores over a write that lands between its load and its
 * store, which that read shows too (the count from before): then the
 * write is tried again. Only once the count has moved on from the
 * written value can no such store be pending.
 */
Test(live, an385_write_reaches_running_firmware)
{
	struct h_sess	 t;
	json_t		*res;
	long long	 seq = -1;
	unsigned long	 v = 0;
	int		 tries;

	h_sess_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	(void)live_counter(&t, "shm", &seq);
	for (tries = 0; tries < LIVE_WRITE_TRIES && !(v > LIVE_WRITTEN &&
	    v < 0x7f000000ul); tries++) {
		res = h_sess_ok(&t, "memory", json_pack("{s:s, s:s, s:{s:s}, "
		    "s:b}", "action", "write", "address", "&counter", "data",
		    "hex", "00000070", "live", 1));
		cr_assert(h_jint(res, "length", -1) == 4 && json_is_false(
		    json_object_get(res, "intrusive")), "live write: %s",
		    h_sess_shown(res));
		cr_assert_eq(h_jint(res, "target.seq", -2), seq, "live write: "
		    "the target's seq must not move: %s", h_sess_shown(res));
		json_decref(res);
		v = live_counter_next(&t, LIVE_WRITTEN, &seq);
	}
	cr_assert(v > LIVE_WRITTEN && v < 0x7f000000ul, "after the live "
	    "write of 0x%lx the counter should count on from there, got "
	    "0x%lx (%d writes)", LIVE_WRITTEN, v, tries);
	cr_assert_geq(live_counter(&t, "shm", &seq), v, "the counter went "
	    "back after the write");
	h_sess_end(&t);
}

/*
 * Outside the shared RAM a read goes through QMP (the vector table's
 * initial SP, the top of board-an385.ld's RAM); a write there, a QMP read
 * over its bound, no memory, and an address needing the target's memory
 * are refused.
 */
Test(live, an385_outside_shm_qmp_and_refusals)
{
	struct h_sess	 t;
	json_t		*res;

	h_sess_board(&t, "FIX_BOARD_AN385", "mps2-an385",
	    "dbgctl board an385 ready\r\n");
	res = h_sess_ok(&t, "memory", json_pack("{s:s, s:i, s:b}", "address",
	    "0x0", "length", 4, "live", 1));
	cr_assert_str_eq(h_jstr(res, "via") ? h_jstr(res, "via") : "", "qmp",
	    "live read of flash: %s", h_sess_shown(res));
	cr_assert_eq(live_word(res), 0x21010000ul, "the vector table's "
	    "initial SP: %s", h_sess_shown(res));
	json_decref(res);
	h_sess_fail(&t, "invalid_params", "outside", "memory", json_pack(
	    "{s:s, s:s, s:{s:s}, s:b}", "action", "write", "address", "0x0",
	    "data", "hex", "00", "live", 1));
	h_sess_fail(&t, "invalid_params", "at most 4096", "memory", json_pack(
	    "{s:s, s:i, s:b}", "address", "0x0", "length", 4097, "live", 1));
	h_sess_fail(&t, "invalid_params", "no memory at", "memory", json_pack(
	    "{s:s, s:i, s:b}", "address", "0x90000000", "length", 16, "live",
	    1));
	h_sess_fail(&t, "invalid_params", "without the target's memory",
	    "memory", json_pack("{s:s, s:i, s:b}", "address",
	    "*(unsigned *)&counter", "length", 4, "live", 1));
	live_counter_advances(&t, "shm");
	h_sess_end(&t);
}

/* lm3s6965evb shares no RAM: reads go through QMP, never halting. */
Test(live, lm3s_read_via_qmp_never_halts)
{
	struct h_sess t;

	h_sess_board(&t, "FIX_BOARD", "lm3s6965evb", "dbgctl board ready\r\n");
	live_counter_advances(&t, "qmp");
	h_sess_fail(&t, "not_supported", "QEMU's monitor cannot write memory",
	    "memory", json_pack("{s:s, s:s, s:{s:s}, s:b}", "action", "write",
	    "address", "&counter", "data", "hex", "00000000", "live", 1));
	h_sess_end(&t);
}

/* shared_ram false: mps2-an385 read through QMP, the same bytes. */
Test(live, an385_shared_ram_off_reads_via_qmp)
{
	const char	*fw = h_board_firmware("FIX_BOARD_AN385");
	struct h_bytes	 got = { calloc(1, 1), 0 };
	struct h_sess	 t;

	h_sess_launch(&t, json_pack("{s:s, s:s, s:[s], s:b}", "kind", "qemu",
	    "machine", "mps2-an385", "argv", fw, "shared_ram", 0));
	cr_assert_eq(h_cli_recv_until(t.ids, "ready\r\n", &got,
	    H_WAIT_BOUND), 0, "no banner: \"%s\"", h_shown(got.p, got.len,
	    300));
	free(got.p);
	live_counter_advances(&t, "qmp");
	h_sess_end(&t);
}

/*
 * Native gdb has no live way: a live read halts, reads and resumes, and
 * says intrusive; on a target halted already it is not.
 */
Test(live, native_gdb_falls_back_intrusive)
{
	const char	*prog = h_ctx_fixture("FIX_LOOP");
	struct h_sess	 t;
	json_t		*res;

	h_sess_launch(&t, json_pack("{s:s, s:[s], s:[s]}", "kind", "gdb",
	    "argv", prog, "commands", "run"));
	cr_assert(h_cli_wait_status(t.id, "target.state", "running",
	    H_WAIT_BOUND), "session %s: the target never ran", t.ids);
	res = h_sess_ok(&t, "memory", json_pack("{s:s, s:i, s:b}", "address",
	    "&ticks", "length", 4, "live", 1));
	cr_assert(json_is_true(json_object_get(res, "intrusive")) &&
	    strcmp(h_jstr(res, "via") ? h_jstr(res, "via") : "", "halt") == 0,
	    "live read on native gdb: expected via halt, intrusive true: %s",
	    h_sess_shown(res));
	json_decref(res);
	json_decref(h_sess_ok(&t, "halt", NULL));
	res = h_sess_ok(&t, "memory", json_pack("{s:s, s:i, s:b}", "address",
	    "&ticks", "length", 4, "live", 1));
	cr_assert(json_is_false(json_object_get(res, "intrusive")),
	    "live read of a halted target: expected intrusive false: %s",
	    h_sess_shown(res));
	json_decref(res);
	h_sess_end(&t);
}
