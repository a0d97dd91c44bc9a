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
#include "mi.h"
#include "mi-filter.h"

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
	cr_assert_eq(decide(&ctx, "exi").verdict, MIF_EXIT, "gdb's exit");
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

/* cmd as one quoted argument, backslashes and quotes escaped (malloc'd). */
static char *
quoted(const char *cmd)
{
	char	*q = malloc(2 * strlen(cmd) + 3), *o = q;

	cr_assert_not_null(q);
	*o++ = '"';
	for (; *cmd != '\0'; cmd++) {
		if (*cmd == '"' || *cmd == '\\')
			*o++ = '\\';
		*o++ = *cmd;
	}
	*o++ = '"';
	*o = '\0';
	return q;
}

/*
 * cmd inside how many levels of interpreter-exec, each of the form
 * chosen by form's bits from the inside out (1: the console's
 * interpreter-exec, else the MI operation; 2: the console interpreter for
 * a command that is not an operation, else mi). malloc'd.
 */
static char *
nest(const char *cmd, int levels, unsigned form)
{
	char	*line = strdup(cmd), *q;
	bool	 cli = cmd[0] != '-';
	int	 k;

	cr_assert_not_null(line);
	for (k = 0; k < levels; k++, form >>= 2) {
		q = quoted(line);
		free(line);
		cr_assert_gt(asprintf(&line, "%sinterpreter-exec %s %s",
		    (form & 1) ? "" : "-", cli && (form & 2) ? "console" :
		    "mi", q), 0);
		free(q);
		cli = (form & 1) != 0;
	}
	return line;
}

/* What would end or take the shared session, and what runs code. */
static const char *const bypasses[] = { "-target-detach", "-exec-abort",
    "-exec-run", "-target-select remote :1", "-gdb-exit", "kill", "k",
    "detach", "quit", "disconnect", "python gdb.execute(\"kill\")",
    "pyt print(1)", "py print(1)", "pi", "python-interactive", "guile",
    "gu (display 1)", "source /tmp/x", "so /tmp/x", "sou /tmp/x",
    "shell true", "she true", "!true", "| p 1 | cat", "pipe p 1 | cat",
    "define foo", "document foo", "alias k2 = kill", "eval \"kill\"",
    "make", "compile code x = 1", "while 1", "new-ui mi3 /dev/null",
    "core-file /tmp/core", "with confirm off -- kill",
    "thread apply all kill", "t a all detach", "frame apply all py 1",
    "tfaas python 1", "-break-commands 1 \"kill\"",
    "-break-commands 1 \"p 1\" \"python 1\"",
    "-var-set-visualizer v \"__import__('os')\"", "signal SIGKILL",
    "sig 9", "queue-signal 9", "que SIGTERM", "monitor quit",
    "mo migrate \"exec:touch /tmp/x\"", NULL };

Test(mi_filter, every_bypass_is_refused_at_every_depth_in_every_form)
{
	struct mi_filter_ctx	 ctx = native();
	struct mi_filter	 f;
	char			*line;
	unsigned		 form;
	size_t			 i;
	int			 depth;

	for (i = 0; bypasses[i] != NULL; i++) {
		cr_assert_neq(decide(&ctx, bypasses[i]).verdict, MIF_PASS,
		    "%s passed", bypasses[i]);
		for (depth = 1; depth <= MI_FILTER_DEPTH; depth++)
			for (form = 0; form < 1u << (2 * depth); form++) {
				line = nest(bypasses[i], depth, form);
				f = decide(&ctx, line);
				cr_assert_neq(f.verdict, MIF_PASS, "%s passed",
				    line);
				free(line);
			}
	}
}

Test(mi_filter, the_issues_own_lines_are_refused_with_their_reason)
{
	struct mi_filter_ctx	ctx = native();
	struct mi_filter	f;

	f = decide(&ctx, "-interpreter-exec mi \"-target-detach\"");
	cr_assert_eq(f.verdict, MIF_ERROR);
	cr_assert(strstr(f.why, "detaching") != NULL, "%s", f.why);
	f = decide(&ctx, "python gdb.execute(\"kill\")");
	cr_assert_eq(f.verdict, MIF_ERROR);
	cr_assert(strstr(f.why, "full control") != NULL, "%s", f.why);
	/* An escape of gdb's c-strings spells the same operation. */
	cr_assert_eq(decide(&ctx, "-interpreter-exec mi "
	    "\"\\055target-detach\"").verdict, MIF_ERROR);
	cr_assert_eq(decide(&ctx, "-interpreter-exec mi \"12-target-detach\"")
	    .verdict, MIF_ERROR, "a token of the inner line hides nothing");
	cr_assert_eq(decide(&ctx, "-interpreter-exec --thread 1 console "
	    "\"kill\"").verdict, MIF_ERROR, "gdb's options hide nothing");
	cr_assert_eq(decide(&ctx, "-interpreter-exec console \"p 1\" \"kill\"")
	    .verdict, MIF_ERROR, "every command of the line is looked at");
	cr_assert_eq(decide(&ctx, "-interpreter-exec console \"p 1\" "
	    "\"quit\"").verdict, MIF_ERROR, "a leave among others would quit "
	    "gdb");
	cr_assert_eq(decide(&ctx, "-interpreter-exec mi \"-gdb-exit\"")
	    .verdict, MIF_EXIT, "a leave alone is the channel's");
	cr_assert_eq(decide(&ctx, "-interpreter-exec console \"\"").verdict,
	    MIF_ERROR, "an empty command repeats another's");
	cr_assert_eq(decide(&ctx, "-interpreter-exec mi \"-target-detach")
	    .verdict, MIF_ERROR, "an unclosed c-string");
	cr_assert_eq(decide(&ctx, "-interpreter-exec tui \"kill\"").verdict,
	    MIF_ERROR);
	cr_assert_eq(decide(&ctx, "-interpreter-exec console \"p 1\\nkill\"")
	    .verdict, MIF_ERROR, "a line break inside a command");
	f = decide(&ctx, "-interpreter-exec mi \"-break-insert main\"");
	cr_assert_eq(f.verdict, MIF_ERROR, "a breakpoint nobody would clean up");
	cr_assert(strstr(f.why, "line of its own") != NULL, "%s", f.why);
	cr_assert_eq(decide(&ctx, "-interpreter-exec mi \"-var-create - * x\"")
	    .verdict, MIF_ERROR);
	cr_assert_eq(decide(&ctx, "-interpreter-exec console \"break main\"")
	    .verdict, MIF_PASS, "gdb tells every UI of a console break");
}

Test(mi_filter, nesting_is_seen_through_to_its_limit_and_refused_past_it)
{
	struct mi_filter_ctx	 ctx = native();
	struct mi_filter	 f;
	char			*line;
	int			 depth;

	for (depth = 1; depth <= MI_FILTER_DEPTH; depth++) {
		line = nest("-data-evaluate-expression 1", depth, 0);
		cr_assert_eq(decide(&ctx, line).verdict, MIF_PASS, "%s", line);
		free(line);
		line = nest("next", depth, 0xaaaa);
		f = decide(&ctx, line);
		cr_assert_eq(f.verdict, MIF_PASS, "%s", line);
		cr_assert_eq(f.flags, MIF_RESUMES, "%s", line);
		free(line);
	}
	line = nest("-data-evaluate-expression 1", MI_FILTER_DEPTH + 1, 0);
	f = decide(&ctx, line);
	cr_assert_eq(f.verdict, MIF_ERROR, "%s", line);
	cr_assert(strstr(f.why, "nested") != NULL, "%s", f.why);
	free(line);
}

Test(mi_filter, abbreviations_resolve_as_gdb_resolves_them)
{
	struct mi_filter_ctx	ctx = native();
	const char *const	passes[] = { "s", "sh", "p 1", "print sizeof(x)",
	    "thread 1", "thread apply all bt", "frame apply all p x",
	    "with print pretty -- p x", "info frame", "echo python\\n",
	    "if 1", "sharedlibrary", "show version", "sho confirm", NULL };
	const char *const	refused[] = { "disc", "new mi3 x",
	    "at 99", "exe /bin/sh", "shel true", "sour x", "python-i",
	    "guile-r", "gr", "ev \"p 1\"", "doc x", "mak", "compi code 1",
	    "expr 1", "whi 1", "interp mi \"-target-detach\"",
	    "w confirm off -- k", "fa kill", "taa kill", "tfa kill",
	    "pyt(1)", "!", "|", NULL };
	size_t			i;

	for (i = 0; passes[i] != NULL; i++)
		cr_assert_eq(decide(&ctx, passes[i]).verdict, MIF_PASS,
		    "%s refused: %s", passes[i], decide(&ctx, passes[i]).why);
	for (i = 0; refused[i] != NULL; i++)
		cr_assert_eq(decide(&ctx, refused[i]).verdict, MIF_ERROR,
		    "%s not refused", refused[i]);
}

Test(mi_filter, full_control_runs_code_but_keeps_the_session)
{
	struct mi_filter_ctx	ctx = native();
	const char *const	passes[] = { "python print(1)", "pi", "shell true",
	    "source /tmp/x", "define foo", "| p 1 | cat",
	    "-interpreter-exec console \"python print(1)\"",
	    "-var-set-visualizer v None", "monitor system_reset", NULL };
	const char *const	refused[] = { "kill", "-target-detach",
	    "-interpreter-exec mi \"-target-detach\"",
	    "thread apply all kill", NULL };
	size_t			i;

	ctx.full = true;
	for (i = 0; passes[i] != NULL; i++)
		cr_assert_eq(decide(&ctx, passes[i]).verdict, MIF_PASS,
		    "%s refused with full control", passes[i]);
	for (i = 0; refused[i] != NULL; i++)
		cr_assert_eq(decide(&ctx, refused[i]).verdict, MIF_ERROR,
		    "%s passed with full control", refused[i]);
}

Test(mi_filter, an_observer_evaluates_nothing_that_writes)
{
	struct mi_filter_ctx	ctx = native();
	const char *const	refused[] = {
	    "-data-evaluate-expression counter=-1000000",
	    "-data-evaluate-expression \"counter = 1\"",
	    "-data-evaluate-expression counter++",
	    "-data-evaluate-expression --counter",
	    "-data-evaluate-expression counter+=1",
	    "-data-evaluate-expression counter<<=1",
	    "-data-evaluate-expression counter>>=1",
	    "-data-evaluate-expression counter|=1",
	    "-data-evaluate-expression loop_tick()",
	    "-data-evaluate-expression \"loop_tick ()\"",
	    "-data-evaluate-expression (*fp)(1)",
	    "-data-evaluate-expression $pc=0",
	    "-data-evaluate-expression --thread 1 x=1",
	    "-var-create - * counter=1",
	    "-data-read-memory-bytes \"x=1\" 4",
	    "-interpreter-exec mi \"-data-evaluate-expression x=1\"",
	    "-interpreter-exec mi \"-exec-interrupt\"",
	    "-exec-interrupt", "-catch-load x", "-add-inferior",
	    "-environment-cd /", "-var-set-visualizer v None",
	    "-data-write-register-values x 0 1", "-trace-start",
	    "-break-commands 1 \"p 1\"", "-target-download", NULL };
	const char *const	passes[] = {
	    "-data-evaluate-expression counter==1",
	    "-data-evaluate-expression \"counter != 1\"",
	    "-data-evaluate-expression \"counter <= 1 && x >= 2\"",
	    "-data-evaluate-expression sizeof(counter)",
	    "-data-evaluate-expression \"a - -1\"",
	    "-stack-list-locals --all-values", "-var-create - * counter",
	    "-data-read-memory-bytes &counter 4",
	    "-interpreter-exec mi \"-data-evaluate-expression x\"",
	    "-file-list-exec-source-files", "-break-list", NULL };
	struct mi_filter	f;
	size_t			i;

	ctx.observe = true;
	for (i = 0; refused[i] != NULL; i++) {
		f = decide(&ctx, refused[i]);
		cr_assert_eq(f.verdict, MIF_ERROR, "an observer ran %s",
		    refused[i]);
		cr_assert(strstr(f.why, "observer") != NULL, "%s: %s",
		    refused[i], f.why);
	}
	for (i = 0; passes[i] != NULL; i++)
		cr_assert_eq(decide(&ctx, passes[i]).verdict, MIF_PASS,
		    "an observer may not %s: %s", passes[i],
		    decide(&ctx, passes[i]).why);
}
