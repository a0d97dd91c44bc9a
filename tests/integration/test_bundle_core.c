/*
 * A board's bundle (issue 23): of the QEMU board, an ELF core of its RAM
 * and registers that gdb-multiarch opens with the manifest's command, in
 * main, or at a HardFault with the fault's registers in it; cut short,
 * gdb refuses it; asked without a core, with its program gone or over the
 * bundle's bound, there is none and the manifest says why.
 */
#include "harness.h"
#include "bundle-check.h"

#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(bundle_core, .init = h_ctx_setup, .fini = h_ctx_teardown,
    .timeout = 300);

/*
 * The bundle's core at dir cut short: opened by the manifest's command,
 * gdb says the core is cut and its frames stop short of the faulting
 * function; cut to less than its headers, gdb says it is no core.
 */
static void
bd_core_cut(json_t *m, const char *dir)
{
	static const struct {
		long		 keep;
		const char	*says;
	} cuts[] = {
		{ 33000, "extending past end of file" },
		{ 100, "not a core dump" },
	};
	char		 core[PATH_MAX * 2];
	struct h_res	 r;
	size_t		 i;

	snprintf(core, sizeof core, "%s/core", dir);
	for (i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		cr_assert_eq(truncate(core, cuts[i].keep), 0, "%s: %s", core,
		    strerror(errno));
		bd_core_open(&r, m, H_ARGS("bt"));
		cr_assert(strstr(r.err, cuts[i].says) != NULL && strstr(r.out,
		    "fault_undefined_instruction ()") == NULL, "gdb on the "
		    "core cut to %ld bytes: %s %s", cuts[i].keep, r.out, r.err);
		h_run_free(&r);
	}
}

/* The board's launch params: the firmware at fw under QEMU, bundled to art if set. */
static void
bd_board_params(char *buf, size_t len, const char *fw, const char *art)
{
	snprintf(buf, len, "{\"kind\":\"qemu\",\"machine\":\"lm3s6965evb\","
	    "\"argv\":[\"%s\"]%s%s%s}", fw, art != NULL ? ",\"artifacts\":\"" :
	    "", art != NULL ? art : "", art != NULL ? "\"" : "");
}

/* Wait until the board of session id is in main: its banner is out. */
static void
bd_board_in_main(long id)
{
	struct h_bytes	got = { 0 };
	char		ids[32];

	cr_assert_eq(h_cli_recv_until(h_idstr(id, ids, sizeof ids),
	    "dbgctl board ready", &got, BD_BOUND), 0, "no banner from the "
	    "board: \"%.*s\"", (int)got.len, got.p);
	free(got.p);
}

/* Whether the board core's regions in manifest m hold one that is what. */
static bool
bd_core_region(json_t *m, const char *what)
{
	return bd_lists(json_object_get(m, "board_core"), "regions", "what",
	    what);
}

/*
 * A running board's bundle holds a core of its RAM and registers that
 * the manifest's command opens in gdb-multiarch, in main's loop; the
 * board runs on.
 */
Test(bundle_core, a_board_bundle_holds_a_core_its_command_opens_in_main)
{
	const char	*fw = h_board_firmware("FIX_BOARD");
	char		 params[PATH_MAX * 3], out[PATH_MAX], req[PATH_MAX + 64];
	struct h_conn	 c;
	struct h_res	 r;
	json_t		*res, *m;
	long		 id;

	h_daemon_fg();
	bd_board_params(params, sizeof params, fw, NULL);
	id = h_conn_launch_once(params, BD_BOUND);
	bd_board_in_main(id);
	bd_path(out, sizeof out, "board");
	snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s\"}", id, out);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	res = h_conn_call(&c, "bundle", req, BD_BOUND);
	cr_assert_str_eq(h_jstr(res, "result.core") ? h_jstr(res,
	    "result.core") : "", "core", "%s", json_dumps(res, JSON_COMPACT));
	json_decref(res);
	h_conn_close(&c);
	m = bd_check(out);
	cr_assert_str_eq(h_jstr(m, "core"), "core");
	cr_assert(bd_core_region(m, "ram") && bd_core_region(m, "scb"),
	    "the core's regions: %s", json_dumps(json_object_get(m,
	    "board_core"), JSON_COMPACT));
	cr_assert_not_null(strstr(h_jstr(m, "core_command"), "gdb-multiarch "),
	    "core_command: %s", h_jstr(m, "core_command"));
	bd_core_open(&r, m, H_ARGS("set backtrace past-main on", "bt",
	    "p counter"));
	/* Reset_Handler, main's caller, is found on the stack in the core. */
	cr_assert(strstr(r.out, " main () at ") != NULL && strstr(r.out,
	    " Reset_Handler () at ") != NULL && strstr(r.out, "$1 = ") != NULL,
	    "gdb on the board's core: %s %s", r.out, r.err);
	h_run_free(&r);
	cr_assert(bd_names(m, "server.log") && bd_names(m, "backtrace.txt"),
	    "files: %s", json_dumps(json_object_get(m, "files"), JSON_COMPACT));
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the board was left halted");
	json_decref(m);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/*
 * At a HardFault, the automatic bundle's core opens with its command at
 * the fault: gdb's backtrace names the handler and the faulting function,
 * and the fault status registers it reads from the core are the ones the
 * fault record decoded (CFSR UNDEFINSTR, HFSR FORCED). Cut short, the
 * core is refused by gdb, which says so.
 */
Test(bundle_core, a_faulted_boards_core_opens_at_the_fault_with_its_fault_registers)
{
	const char	*fw = h_board_firmware("FIX_BOARD");
	char		 params[PATH_MAX * 3], art[PATH_MAX], want[PATH_MAX + 32];
	char		 ids[32], cfsr[64], hfsr[64];
	struct h_res	 r;
	json_t		*b, *m;
	long		 id;

	h_daemon_fg();
	bd_path(art, sizeof art, "art");
	bd_board_params(params, sizeof params, fw, art);
	id = h_conn_launch_once(params, BD_BOUND);
	bd_board_in_main(id);
	cr_assert_eq(h_cli_input(&r, "!", H_ARGS("send", h_idstr(id, ids,
	    sizeof ids))), 0, "send !: %s", r.err);
	h_run_free(&r);
	b = bd_wait_auto(id);
	snprintf(want, sizeof want, "%s/%ld-fault", art, id);
	cr_assert_str_eq(h_jstr(b, "path"), want);
	m = bd_check(want);
	cr_assert_str_eq(h_jstr(m, "fault.cortex_m.cfsr"), "0x00010000", "%s",
	    json_dumps(json_object_get(m, "fault"), JSON_COMPACT));
	cr_assert_str_eq(h_jstr(m, "core"), "core", "no core: %s",
	    json_dumps(json_object_get(m, "missing"), JSON_COMPACT));
	bd_core_open(&r, m, H_ARGS("bt", "x/wx 0xE000ED28", "x/wx 0xE000ED2C",
	    "p/x $xpsr"));
	cr_assert(strstr(r.out, "HardFault_Handler") != NULL && strstr(r.out,
	    "<signal handler called>") != NULL && strstr(r.out,
	    "fault_undefined_instruction ()") != NULL, "gdb's backtrace of the "
	    "board's core does not reach the faulting function: %s %s", r.out,
	    r.err);
	snprintf(cfsr, sizeof cfsr, "0xe000ed28:\t%s", h_jstr(m,
	    "fault.cortex_m.cfsr"));
	snprintf(hfsr, sizeof hfsr, "0xe000ed2c:\t%s", h_jstr(m,
	    "fault.cortex_m.hfsr"));
	cr_assert(strstr(r.out, cfsr) != NULL && strstr(r.out, hfsr) != NULL,
	    "the core's CFSR and HFSR are not the fault record's (%s, %s): %s",
	    cfsr, hfsr, r.out);
	/* xpsr, named as on the live board: its exception number is 3. */
	cr_assert_not_null(strstr(r.out, "$1 = 0x"), "no xpsr: %s %s", r.out,
	    r.err);
	cr_assert_eq(strtoul(strstr(r.out, "$1 = 0x") + 5, NULL, 0) & 0x1ff, 3,
	    "xpsr's exception number is not HardFault's: %s", r.out);
	h_run_free(&r);
	bd_core_cut(m, want);
	json_decref(m);
	json_decref(b);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/*
 * A board bundle asked without a core has none and says so, with no
 * command to open one; a board whose program cannot be read any more has
 * none either, and the manifest says why.
 */
Test(bundle_core, a_board_bundle_without_a_core_or_its_program_says_why)
{
	const char	*fw = h_board_firmware("FIX_BOARD");
	char		 params[PATH_MAX * 3], out[PATH_MAX], req[PATH_MAX + 80];
	char		 copy[PATH_MAX];
	struct h_conn	 c;
	struct h_res	 r;
	json_t		*res, *m, *e;
	size_t		 i;
	bool		 said = false;
	long		 id;

	h_daemon_fg();
	bd_path(copy, sizeof copy, "board.elf");
	h_run(&r, BD_BOUND, H_ARGS("/bin/cp", fw, copy));
	cr_assert_eq(r.code, 0, "cp: %s", r.err);
	h_run_free(&r);
	bd_board_params(params, sizeof params, copy, NULL);
	id = h_conn_launch_once(params, BD_BOUND);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the board never ran");
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	bd_path(out, sizeof out, "nocore");
	snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s\","
	    "\"core\":false}", id, out);
	res = h_conn_call(&c, "bundle", req, BD_BOUND);
	cr_assert(json_is_null(h_jpath(res, "result.core")), "%s",
	    json_dumps(res, JSON_COMPACT));
	json_decref(res);
	m = bd_check(out);
	cr_assert(json_is_null(json_object_get(m, "core")) && json_is_null(
	    json_object_get(m, "core_command")) && bd_missing(m, "core"),
	    "%s", json_dumps(m, JSON_COMPACT));
	json_decref(m);
	/* The program is gone: no load map, no core. */
	cr_assert_eq(unlink(copy), 0);
	bd_path(out, sizeof out, "noprog");
	snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s\"}", id, out);
	json_decref(h_conn_call(&c, "bundle", req, BD_BOUND));
	h_conn_close(&c);
	m = bd_check(out);
	cr_assert(json_is_null(json_object_get(m, "core")), "%s",
	    json_dumps(m, JSON_COMPACT));
	json_array_foreach(json_object_get(m, "missing"), i, e)
		said |= strcmp(h_jstr(e, "what"), "core") == 0 && strstr(
		    h_jstr(e, "why"), "cannot be read") != NULL;
	cr_assert(said, "the manifest does not say the program cannot be "
	    "read: %s", json_dumps(json_object_get(m, "missing"),
	    JSON_COMPACT));
	json_decref(m);
	json_decref(h_cli_stop(id, NULL, NULL));
}

/*
 * Under a bundle's size bound the logs have taken, a board's core is left
 * out whole, never cut into a file gdb cannot load: the manifest lists
 * it as cut, and names no core nor a command to open one.
 */
Test(bundle_core, a_board_core_over_the_bundles_bound_is_left_out_whole)
{
	const char	*fw = h_board_firmware("FIX_BOARD");
	char		 params[PATH_MAX * 3], out[PATH_MAX], req[PATH_MAX + 64];
	struct h_conn	 c;
	json_t		*m, *e;
	size_t		 i;
	bool		 listed = false;
	long		 id;

	h_ctx_env_add("DBGCTLD_BUNDLE_MAX=50000");
	h_daemon_fg();
	bd_board_params(params, sizeof params, fw, NULL);
	id = h_conn_launch_once(params, BD_BOUND);
	cr_assert(h_cli_wait_status(id, "target.state", "running",
	    H_WAIT_BOUND), "the board never ran");
	bd_path(out, sizeof out, "bounded");
	snprintf(req, sizeof req, "{\"session\":%ld,\"path\":\"%s\"}", id, out);
	cr_assert_eq(h_conn_open(&c, H->sock), 0);
	json_decref(h_conn_call(&c, "bundle", req, BD_BOUND));
	h_conn_close(&c);
	m = bd_check(out);
	json_array_foreach(json_object_get(m, "cut"), i, e)
		listed |= strcmp(h_jstr(e, "name"), "core") == 0 &&
		    h_jint(e, "kept", -1) == 0 && h_jint(e, "size", -1) > 65536;
	cr_assert(listed, "the core is not listed as left out: %s",
	    json_dumps(json_object_get(m, "cut"), JSON_COMPACT));
	cr_assert(json_is_null(json_object_get(m, "core")) && json_is_null(
	    json_object_get(m, "core_command")) && !bd_names(m, "core"), "%s",
	    json_dumps(m, JSON_COMPACT));
	json_decref(m);
	json_decref(h_cli_stop(id, NULL, NULL));
}
