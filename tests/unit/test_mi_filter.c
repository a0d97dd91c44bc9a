/*
 * Unit tests of the filter a joined MI client's commands go through: what
 * would end or replace the shared program is refused or answered here,
 * no-ops are answered ^done, and what passes carries the flags the bridge
 * acts on (who resumed, breakpoints and varobjs to clean up).
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* The verdict on one command, in a context. */
static struct mi_filter
decide(const struct mi_filter_ctx *ctx, const char *cmd)
{
	struct mi_filter f;

	mi_filter_decide(ctx, cmd, &f);
	if (f.verdict == MIF_ERROR)
		cr_assert_neq(f.why[0], '\0', "%s: refused without a reason",
		    cmd);
	return f;
}

/* A native session of /bin/true with pid 4242. */
static struct mi_filter_ctx
native(void)
{
	static char		 prog[PATH_MAX];
	struct mi_filter_ctx	 ctx = { 0 };

	cr_assert_not_null(realpath("/bin/true", prog));
	ctx.program = prog;
	ctx.pid = 4242;
	return ctx;
}

Test(mi_filter, what_would_end_the_shared_program_is_refused)
{
	struct mi_filter_ctx	ctx = native();
	const char *const	cmds[] = { "-exec-run", "-exec-abort",
	    "-target-detach", "-target-attach 99", "-target-select remote :1",
	    "-file-exec-and-symbols /bin/sh", "kill", "k", "run", "r",
	    "start", "detach", "-interpreter-exec console \"kill\"",
	    "-interpreter-exec console \"run\"", "target remote :2",
	    "file /bin/sh", "new-ui mi3 /dev/pts/9", NULL };
	size_t			i;

	for (i = 0; cmds[i] != NULL; i++)
		cr_assert_eq(decide(&ctx, cmds[i]).verdict, MIF_ERROR,
		    "%s passed", cmds[i]);
	cr_assert(strstr(decide(&ctx, "-exec-run").why, "new copy") != NULL);
	cr_assert(strstr(decide(&ctx, "-target-attach 99").why, "4242") !=
	    NULL, "the refusal names the session's pid");
}

Test(mi_filter, no_ops_on_the_session_itself_are_answered_done)
{
	struct mi_filter_ctx	ctx = native();
	const char *const	cmds[] = { "-target-attach 4242",
	    "-target-select native", "-file-exec-and-symbols /bin/true",
	    "-file-exec-and-symbols \"/bin/true\"", "-gdb-set mi-async on",
	    "-gdb-set mi-async 1", "-gdb-set target-async on",
	    "-gdb-set non-stop off", "attach 4242", "-target-attach",
	    "-target-attach undefined", NULL };
	size_t			i;

	for (i = 0; cmds[i] != NULL; i++)
		cr_assert_eq(decide(&ctx, cmds[i]).verdict, MIF_DONE,
		    "%s not answered ^done", cmds[i]);
	cr_assert_eq(decide(&ctx, "-gdb-set mi-async off").verdict, MIF_ERROR);
	cr_assert_eq(decide(&ctx, "-gdb-set non-stop on").verdict, MIF_ERROR);
	cr_assert_eq(decide(&ctx, "-gdb-set print pretty on").verdict,
	    MIF_PASS, "other settings are the client's to change");
}

Test(mi_filter, a_remote_sessions_own_target_is_a_no_op_in_any_spelling)
{
	struct mi_filter_ctx ctx = { .remote = "localhost:3333" };

	cr_assert_eq(decide(&ctx, "-target-select remote :3333").verdict,
	    MIF_DONE);
	cr_assert_eq(decide(&ctx, "-target-select extended-remote "
	    "127.0.0.1:3333").verdict, MIF_DONE);
	cr_assert_eq(decide(&ctx, "-target-select remote :3334").verdict,
	    MIF_ERROR);
	cr_assert_eq(decide(&ctx, "-target-select native").verdict, MIF_ERROR);
	cr_assert(strstr(decide(&ctx, "target remote :1").why,
	    "localhost:3333") != NULL);
	/* No program of its own: a front end may load the symbols. */
	cr_assert_eq(decide(&ctx, "-file-exec-and-symbols /bin/sh").verdict,
	    MIF_PASS);
}

Test(mi_filter, leaving_is_an_exit_of_the_channel_only)
{
	struct mi_filter_ctx ctx = native();

	cr_assert_eq(decide(&ctx, "-gdb-exit").verdict, MIF_EXIT);
	cr_assert_eq(decide(&ctx, "quit").verdict, MIF_EXIT);
	cr_assert_eq(decide(&ctx, "q").verdict, MIF_EXIT);
	cr_assert_eq(decide(&ctx, "-interpreter-exec console quit").verdict,
	    MIF_EXIT);
	ctx.observe = true;
	cr_assert_eq(decide(&ctx, "-gdb-exit").verdict, MIF_EXIT,
	    "an observer may leave");
}

Test(mi_filter, passing_commands_carry_what_the_bridge_acts_on)
{
	struct mi_filter_ctx	ctx = native();
	struct mi_filter	f;

	f = decide(&ctx, "-exec-continue --thread 1");
	cr_assert_eq(f.verdict, MIF_PASS);
	cr_assert_eq(f.flags, MIF_RESUMES);
	cr_assert_eq(decide(&ctx, "c").flags, MIF_RESUMES);
	cr_assert_eq(decide(&ctx, "-interpreter-exec console \"next\"").flags,
	    MIF_RESUMES);
	cr_assert_eq(decide(&ctx, "-exec-interrupt").flags, MIF_INTERRUPT);
	cr_assert_eq(decide(&ctx, "-break-insert main").flags,
	    MIF_BREAK_INSERT);
	cr_assert_eq(decide(&ctx, "-var-create - * x").flags, MIF_VAR_CREATE);
	cr_assert_eq(decide(&ctx, "-var-delete var1").flags, MIF_VAR_DELETE);
	f = decide(&ctx, "-data-evaluate-expression x");
	cr_assert_eq(f.verdict, MIF_PASS);
	cr_assert_eq(f.flags, 0);
	/* cont is continue; con could be more than one command to gdb. */
	cr_assert_eq(decide(&ctx, "cont").flags, MIF_RESUMES);
}

Test(mi_filter, the_sessions_fault_breaks_stay)
{
	struct mi_filter_ctx	ctx = native();
	json_t			*internal = json_pack("{s:s}", "3",
				    "HardFault_Handler");

	ctx.internal = internal;
	cr_assert_eq(decide(&ctx, "-break-delete 3").verdict, MIF_ERROR);
	cr_assert_eq(decide(&ctx, "-break-delete 2 3").verdict, MIF_ERROR);
	cr_assert_eq(decide(&ctx, "-break-delete 2").verdict, MIF_PASS);
	cr_assert_eq(decide(&ctx, "-break-delete 2").flags, MIF_BREAK_DELETE);
	cr_assert_eq(decide(&ctx, "delete").verdict, MIF_ERROR,
	    "delete with no numbers would take the fault breaks");
	cr_assert_eq(decide(&ctx, "delete 2").verdict, MIF_PASS);
	json_decref(internal);
}

Test(mi_filter, an_observer_reads_and_changes_nothing)
{
	struct mi_filter_ctx	ctx = native();
	const char *const	refused[] = { "-exec-continue",
	    "-break-insert main", "-data-write-memory-bytes 0x0 00",
	    "-var-assign var1 3", "-gdb-set var x=1", "print x=1",
	    "-interpreter-exec console \"set var x=1\"", NULL };
	size_t			i;

	ctx.observe = true;
	for (i = 0; refused[i] != NULL; i++)
		cr_assert_eq(decide(&ctx, refused[i]).verdict, MIF_ERROR,
		    "an observer ran %s", refused[i]);
	cr_assert_eq(decide(&ctx, "-data-evaluate-expression x").verdict,
	    MIF_PASS);
	cr_assert_eq(decide(&ctx, "-stack-list-frames").verdict, MIF_PASS);
	cr_assert_eq(decide(&ctx, "-thread-info").verdict, MIF_PASS);
}
