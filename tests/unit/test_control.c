/*
 * Unit tests of run control that need no gdb: who a stop is by (so that a
 * breakpoint hit racing a transient halt is never skipped), which commands
 * may delete breakpoints, and the fault breaks' bookkeeping on MI answers.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "gdb.h"
#include "mi.h"

/* Parse one MI line, asserting it parses. */
static void
parse(const char *line, struct mi_record *r)
{
	char err[256];

	cr_assert_eq(mi_parse(line, strlen(line), r, err, sizeof err), 0,
	    "%s: %s", line, err);
}

Test(control, a_stop_is_by_who_asked_only_when_it_is_an_interrupt)
{
	struct gdb_data	g;
	bool		t;

	memset(&g, 0, sizeof g);
	cr_assert_str_eq(gdb_control_stop_by(&g, "breakpoint-hit", NULL, &t),
	    "target");
	cr_assert(!t);
	g.halting = GDB_HALT_TRANSIENT;
	cr_assert_str_eq(gdb_control_stop_by(&g, "signal-received", "SIGINT",
	    &t), "dbgctl");
	cr_assert(t, "the daemon's own halt is transient");
	cr_assert_eq(g.halting, GDB_HALT_NONE, "a halt is told once");
	/* The program hit a breakpoint before the interrupt: a real stop. */
	g.halting = GDB_HALT_TRANSIENT;
	cr_assert_str_eq(gdb_control_stop_by(&g, "breakpoint-hit", NULL, &t),
	    "target");
	cr_assert(!t, "a breakpoint hit during a transient halt is not "
	    "skipped");
	g.halting = GDB_HALT_USER;
	cr_assert_str_eq(gdb_control_stop_by(&g, "signal-received", "SIGINT",
	    &t), "halt");
	cr_assert(!t);
	g.halting = GDB_HALT_USER;
	cr_assert_str_eq(gdb_control_stop_by(&g, "signal-received", "SIGSEGV",
	    &t), "target", "a fault during a halt is the target's");
	g.halting = GDB_HALT_RESET;
	cr_assert_str_eq(gdb_control_stop_by(&g, "breakpoint-hit", NULL, &t),
	    "reset");
	g.resuming = true;
	cr_assert(gdb_control_running_transient(&g));
	cr_assert(!gdb_control_running_transient(&g), "told once");
}

Test(control, commands_that_may_delete_breakpoints)
{
	const char *yes[] = { "-break-delete", "-break-delete 3", "delete",
	    "d 2", "del", "clear main", NULL };
	const char *no[] = { "-break-list", "-break-insert main", "detach",
	    "disable 1", "display x", "-data-evaluate-expression d", NULL };
	size_t i;

	for (i = 0; yes[i] != NULL; i++)
		cr_assert(gdb_breaks_deletes(yes[i]), "%s", yes[i]);
	for (i = 0; no[i] != NULL; i++)
		cr_assert(!gdb_breaks_deletes(no[i]), "%s", no[i]);
}

Test(control, fault_breaks_are_known_by_number_and_listed)
{
	struct gdb_data		g;
	struct session		s;
	struct mi_record	r;
	json_t			*listed;

	memset(&g, 0, sizeof g);
	memset(&s, 0, sizeof s);
	g.s = &s;
	parse("5^done,bkpt={number=\"1\",type=\"breakpoint\",addr=\"0x9e\","
	    "original-location=\"*HardFault_Handler\"}", &r);
	gdb_breaks_inserted(&g, &r);
	mi_record_free(&r);
	/* gdb's answer for a location of several places. */
	parse("6^done,bkpt={number=\"2\",addr=\"<MULTIPLE>\",original-location"
	    "=\"Fault\"},{number=\"2.1\",addr=\"0x10\"},{number=\"2.2\",addr="
	    "\"0x20\"}", &r);
	gdb_breaks_inserted(&g, &r);
	mi_record_free(&r);
	cr_assert(gdb_breaks_internal(&g, "1"));
	cr_assert(gdb_breaks_internal(&g, "2"));
	cr_assert(!gdb_breaks_internal(&g, "3"));
	cr_assert(!gdb_breaks_internal(&g, NULL));
	cr_assert_str_eq(gdb_breaks_location(&g, "1"), "*HardFault_Handler");
	parse("7^done,BreakpointTable={nr_rows=\"2\",nr_cols=\"6\",hdr=[],"
	    "body=[bkpt={number=\"1\",type=\"breakpoint\"},bkpt={number=\"3\","
	    "type=\"breakpoint\"}]}", &r);
	listed = gdb_breaks_listed(r.results);
	cr_assert_eq(json_array_size(listed), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
	    listed, 1), "number")), "3");
	json_decref(listed);
	mi_record_free(&r);
	json_decref(g.fault_bkpts);
}
