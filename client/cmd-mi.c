/*
 * mi: this process's stdin and stdout become a joined MI channel of a
 * session's gdb, for a front end that takes dbgctl for its gdb; and gdb's
 * own version text, which such a front end asks for first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"

/* What a join asks of the daemon besides the session. */
struct cmd_mi_opts {
	int	mi2;			/* else mi3 */
	int	keep_breakpoints;
	int	leave_halted;
	int	observe;
	int	full;			/* may run code of its own in gdb */
};

/*
 * The session a joining command names: its operand, else $DBGCTL_SESSION
 * (set in every session's own environment); NULL if neither is there.
 */
static json_t *
cmd_mi_session(const char *operand)
{
	const char *env = getenv("DBGCTL_SESSION");

	if (operand != NULL)
		return cmd_session_ref(operand);
	if (env != NULL && *env != '\0')
		return cmd_session_ref(env);
	return NULL;
}

/*
 * Ask to join with stdin and stdout handed to the daemon: the result, or
 * NULL after an error reply (in c->error) or with *again set, connected
 * anew, when the daemon is older than stdio (it drops a client that passes
 * descriptors), for a join it bridges.
 */
static json_t *
cmd_mi_hand(struct client *c, json_t *params, bool *again)
{
	static const int	 stdio[2] = { STDIN_FILENO, STDOUT_FILENO };
	json_t			*r;
	int			 lost;

	json_object_set_new(params, "stdio", json_true());
	c->pass_fds = stdio;
	c->npass = 2;
	r = client_raw_try(c, "mi", json_incref(params), &lost);
	json_object_del(params, "stdio");
	if ((*again = r == NULL && lost != 0)) {
		client_close(c);
		client_connect(c);
	}
	return r;
}

/*
 * Join session over MI with what o asks, stdin and stdout handed to the
 * daemon when they can be (no process copies a front end's lines then),
 * else bridged to the channel, until the daemon closes it; the exit
 * status.
 */
static int
cmd_mi_join(struct client *c, json_t *session, const struct cmd_mi_opts *o)
{
	json_t	*params, *r = NULL;
	bool	 again = true, handed;
	int	 rv;

	params = json_pack("{s:O, s:s}", "session", session, "mi",
	    o->mi2 ? "mi2" : "mi3");
	if (o->keep_breakpoints)
		json_object_set_new(params, "keep_breakpoints", json_true());
	if (o->leave_halted)
		json_object_set_new(params, "leave_halted", json_true());
	if (o->observe)
		json_object_set_new(params, "observe", json_true());
	if (o->full)
		json_object_set_new(params, "full", json_true());
	if (c->fd == -1)
		client_connect(c);
	bridge_catch();
	if (handover_possible(c))
		r = cmd_mi_hand(c, params, &again);
	if (again)
		r = client_raw_call(c, "mi", params);
	else
		json_decref(params);
	if (r == NULL)
		return client_error(c);
	handed = json_is_true(json_object_get(r, "stdio"));
	json_decref(r);
	rv = handed ? bridge_handed(c->fd) : bridge_run(c->fd);
	ssh_end(c);
	return rv;
}

/* gdb's own --version, run here: $DBGCTL_GDB, else gdb on PATH. */
static int
cmd_mi_local_version(void)
{
	const char *gdb = getenv("DBGCTL_GDB");

	if (gdb == NULL || *gdb == '\0')
		gdb = "gdb";
	fflush(stdout);
	execvp(gdb, (char *[]){ (char *)gdb, "--version", NULL });
	client_warn("%s --version: %s (no session named either: give one, "
	    "or set DBGCTL_SESSION)", gdb, strerror(errno));
	return EXIT_FAILED;
}

/*
 * Print gdb's version text: the session's gdb's answer to "show version"
 * when session is known, else what the local gdb --version prints.
 */
static int
cmd_mi_version(struct client *c, json_t *session)
{
	json_t *r;

	if (session == NULL)
		return cmd_mi_local_version();
	if ((r = client_call(c, "exec", json_pack("{s:O, s:s}", "session",
	    session, "command", "show version"))) == NULL)
		return client_error(c);
	cmd_exec_print("show version", r);
	json_decref(r);
	return EXIT_OK;
}

/*
 * mi [--mi2] [--keep-breakpoints] [--leave-halted] [--observe | --full]
 * [--version] [SESSION]: join the session, or print its gdb's version.
 */
static int
cmd_mi_exec(struct cmd *self, struct client *c)
{
	const struct args	*a = &self->args;
	struct cmd_mi_opts	 o;
	json_t			*session;
	int			 rv;

	session = cmd_mi_session(args_operand(a, 0));
	if (args_has(a, "version")) {
		rv = cmd_mi_version(c, session);
		json_decref(session);
		return rv;
	}
	if (session == NULL)
		return cmd_usage(self, "missing SESSION: name one, or set "
		    "DBGCTL_SESSION");
	memset(&o, 0, sizeof o);
	o.mi2 = args_has(a, "mi2");
	o.keep_breakpoints = args_has(a, "keep-breakpoints");
	o.leave_halted = args_has(a, "leave-halted");
	o.observe = args_has(a, "observe");
	o.full = args_has(a, "full");
	if (o.observe && o.full) {
		json_decref(session);
		return cmd_usage(self, "--observe and --full exclude each "
		    "other");
	}
	rv = cmd_mi_join(c, session, &o);
	json_decref(session);
	return rv;
}

/* What help says of each option of mi. */
static const struct cmd_option cmd_mi_options_help[] = {
	{ "mi2", NULL, "speak MI version 2 (default: mi3)" },
	{ "keep-breakpoints", NULL,
	    "leave the breakpoints made here in place when leaving (default: "
	    "they are deleted)" },
	{ "leave-halted", NULL,
	    "leave a target halted from here halted when leaving (default: "
	    "resumed if it ran when joined)" },
	{ "observe", NULL,
	    "read only: run control, breakpoints, writes and settings are "
	    "refused" },
	{ "full", NULL,
	    "full control: python, guile, source, shell, pipe, define and "
	    "the like are let through (default: refused)" },
	{ "version", NULL,
	    "print gdb's version text, the session's gdb's, or with no "
	    "SESSION the local gdb's, and exit" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_mi_entry = {
	.name = "mi",
	.usage = "[--mi2] [--keep-breakpoints] [--leave-halted] [--observe | "
	    "--full] [--version] [SESSION]",
	.args = { "mi2 keep-breakpoints leave-halted observe full version", 0,
	    1 },
	.flags = 0,
	.exec = cmd_mi_exec,
	.summary = "be a gdb/MI channel of a session's gdb on stdin and "
	    "stdout, for a front end",
	.options = cmd_mi_options_help,
};
