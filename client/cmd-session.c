/* Session commands: status, signal, and the exit status an ended session gives. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dbgctl.h"
#include "kinds.h"
#include "signame.h"

/*
 * The firmware's own status, where its target exited by semihosting
 * (the session's exit is gdb's, which quit after it); -1 otherwise.
 */
static int
cmd_session_semihost_status(json_t *session)
{
	json_t		*target = json_object_get(session, "target");
	const char	*by = json_string_value(json_object_get(target, "by"));
	json_t		*code = json_object_get(target, "code");

	if (by == NULL || strcmp(by, "semihosting") != 0 ||
	    !json_is_integer(code))
		return -1;
	return (int)json_integer_value(code) & 0xff;
}

/* The exit status a launch --wait (or attach) ends with, from the ended session. */
int
cmd_session_status(json_t *session)
{
	const char	*state, *error;
	json_t		*rec, *code, *sig;
	int		 firmware;

	if ((firmware = cmd_session_semihost_status(session)) != -1)
		return firmware;
	state = json_string_value(json_object_get(session, "state"));
	rec = json_object_get(session, "exit");
	code = json_object_get(rec, "code");
	sig = json_object_get(rec, "signal");
	if (state != NULL && strcmp(state, "exited") == 0) {
		if (json_is_integer(code))
			return (int)json_integer_value(code) & 0xff;
		if (json_is_integer(sig))
			return (128 + (int)json_integer_value(sig)) & 0xff;
	}
	error = json_string_value(json_object_get(session, "error"));
	client_warn("session %lld %s: %s",
	    json_integer_value(json_object_get(session, "id")),
	    state != NULL ? state : "ended",
	    error != NULL ? error : "no exit status");
	return EXIT_FAILED;
}


/* Print "key: value" for field of s: strings as is, numbers, "-" for null. */
static void
cmd_status_field(json_t *s, const char *label, const char *field,
    int optional)
{
	json_t	*v;

	v = json_object_get(s, field);
	if (optional && (v == NULL || json_is_null(v)))
		return;
	if (json_is_string(v))
		printf("%s: %s\n", label, json_string_value(v));
	else if (json_is_integer(v))
		printf("%s: %lld\n", label, (long long)json_integer_value(v));
	else
		printf("%s: -\n", label);
}

/* Print "label: code N, by quit" for an exit record of s, if it has one. */
static void
cmd_status_exit(json_t *s, const char *label, const char *field)
{
	json_t		*rec = json_object_get(s, field);
	const char	*by = json_string_value(json_object_get(rec, "by"));
	char		 buf[64];

	if (rec == NULL)
		return;
	fmt_exit(rec, buf, sizeof buf);
	if (by != NULL)
		printf("%s: %s, by %s\n", label, buf, by);
	else
		printf("%s: %s\n", label, buf);
}

/* Print a fault record: what and where, its decoded names, the top frames. */
void
cmd_status_fault(json_t *f)
{
	json_t		*cm = json_object_get(f, "cortex_m"), *e;
	const char	*what = json_string_value(json_object_get(f, "signal"));
	size_t		 i;

	if (what == NULL)
		what = json_string_value(json_object_get(f, "location"));
	printf("fault: %s", what != NULL ? what : "?");
	json_array_foreach(json_object_get(cm, "decoded"), i, e)
		printf("%s%s", i == 0 ? " " : ",", json_string_value(e));
	e = json_object_get(cm, "faulting");
	if (e != NULL)
		printf(" in %s", json_string_value(json_object_get(e, "func")));
	if (json_object_get(f, "incomplete") != NULL)
		printf(" (record incomplete: see status --json)");
	printf("\n");
	cmd_deadline_frames(json_object_get(f, "frames"), 5, "  ");
}

/* A suspended session: what stopped it and how to resume it. */
static void
cmd_status_suspended(json_t *s)
{
	const char *name = json_string_value(json_object_get(json_object_get(s,
	    "suspended"), "name"));

	if (name != NULL)
		printf("suspended: %s (dbgctl signal %lld CONT resumes it)\n",
		    name, json_integer_value(json_object_get(s, "id")));
}

/* Print a session object as "key: value" lines. */
static void
cmd_status_print(json_t *s)
{
	char	*command, buf[1024];

	cmd_status_field(s, "id", "id", 0);
	cmd_status_field(s, "name", "name", 0);
	cmd_status_field(s, "kind", "kind", 0);
	cmd_status_field(s, "state", "state", 0);
	cmd_status_suspended(s);
	if (json_object_get(s, "target") != NULL) {
		fmt_target(json_object_get(s, "target"), buf, sizeof buf);
		printf("target: %s\n", buf);
	}
	cmd_status_field(s, "pid", "pid", 0);
	cmd_status_field(s, "keeper_pid", "keeper_pid", 0);
	cmd_status_field(s, "debugger", "debugger", 1);
	cmd_status_field(s, "inferior_pid", "inferior_pid", 1);
	cmd_status_field(s, "remote", "remote", 1);
	cmd_status_field(s, "server_pid", "server_pid", 1);
	cmd_status_field(s, "port", "port", 1);
	if (json_is_true(json_object_get(s, "transport")))
		printf("transport: yes\n");
	/* Attached to a process (--pid): that process's command line. */
	command = fmt_argv(json_object_get(s, json_array_size(json_object_get(s,
	    "pid_argv")) > 0 ? "pid_argv" : "argv"));
	printf("command: %s\n", command != NULL ? command : "?");
	free(command);
	cmd_status_field(s, "cwd", "cwd", 0);
	cmd_status_field(s, "started", "started_at", 0);
	cmd_status_field(s, "ended", "ended_at", 1);
	cmd_status_exit(s, "exit", "exit");
	cmd_status_exit(s, "server exit", "server_exit");
	cmd_status_field(s, "error", "error", 1);
	if (json_object_get(s, "fault") != NULL)
		cmd_status_fault(json_object_get(s, "fault"));
	/* Where gdb wrote the core file of the fault, once it has. */
	cmd_status_field(json_object_get(s, "fault"), "core", "core", 1);
	cmd_deadline_status(s);
	cmd_hold_status(s);
	cmd_bundle_status(s);
	cmd_status_field(s, "stop_timeout", "stop_timeout", 1);
	cmd_status_field(s, "stop_target", "stop_target", 1);
	cmd_status_field(s, "log", "log", 1);
}

/* status: print everything known about one session. */
static int
cmd_status_exec(struct cmd *self, struct client *c)
{
	json_t	*session;

	session = client_call(c, "status", json_pack("{s:O}", "session",
	    self->session));
	if (session == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(session);
	else
		cmd_status_print(session);
	json_decref(session);
	return EXIT_OK;
}

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.usage = "SESSION",
	.args = { "", 1, 1 },
	.flags = CMD_SESSION,	/* read-only: never starts a daemon */
	.exec = cmd_status_exec,
	.summary = "print everything known about a session",
};

/* signal: send a signal to the foreground process group of a session. */
static int
cmd_signal_exec(struct cmd *self, struct client *c)
{
	json_t		*params, *result;
	const char	*sig;
	long long	 n;

	if ((sig = args_operand(&self->args, 1)) == NULL)
		sig = "INT";
	/* The names are proto/signame.c's, as the daemon's: check here. */
	if (args_strtonum(sig, &n) == 0 ? n <= 0 || n >= NSIG :
	    signame_parse(sig) <= 0)
		return cmd_usage(self, "bad signal: %s (a name such as INT, "
		    "SIGTERM or RTMIN+1, or a number from 1 to %d)", sig,
		    NSIG - 1);
	params = json_pack("{s:O}", "session", self->session);
	if (args_strtonum(sig, &n) == 0)
		json_object_set_new(params, "signal", json_integer(n));
	else
		json_object_set_new(params, "signal", json_string(sig));
	if ((result = client_call(c, "signal", params)) == NULL)
		return client_error(c);
	if (c->json)
		cmd_print_json(result);
	json_decref(result);
	return EXIT_OK;
}

const struct cmd_entry cmd_signal_entry = {
	.name = "signal",
	.usage = "SESSION [SIG]",
	.args = { "", 1, 2 },
	.flags = CMD_AUTOSTART | CMD_SESSION,
	.exec = cmd_signal_exec,
	.summary = "send a signal (default: INT) to the foreground of a session's terminal",
};
