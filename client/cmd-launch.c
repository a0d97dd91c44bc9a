/* The launch command: its options, params, --wait and --attach. */
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

static int	cmd_launch_error(struct client *);

/* Add an --env K=V entry to the launch's env object; -1 if malformed. */
static int
cmd_launch_env(json_t *params, const char *arg)
{
	const char	*eq;
	json_t		*env;
	char		*key;
	int		 rv;

	if ((eq = strchr(arg, '=')) == NULL || eq == arg)
		return -1;
	if ((env = json_object_get(params, "env")) == NULL) {
		env = json_object();
		json_object_set_new(params, "env", env);
	}
	if ((key = strndup(arg, eq - arg)) == NULL)
		return -1;
	rv = json_object_set_new(env, key, json_string(eq + 1));
	free(key);
	return rv;
}

/*
 * The session's TERM and COLORTERM are this command's, as ssh, dtach and
 * abduco pass them on, not the daemon's (those of whatever started it, or
 * none under socket activation); --env still sets either.
 */
static void
cmd_launch_term_env(json_t *params)
{
	static const char *const names[] = { "TERM", "COLORTERM", NULL };
	json_t		*t = json_object();
	const char	*v;
	size_t		 i;

	for (i = 0; names[i] != NULL; i++)
		if ((v = getenv(names[i])) != NULL)
			json_object_set_new(t, names[i], json_string(v));
	json_object_set_new(params, "term_env", t);
}

/* Append one -x debugger command to the launch's commands array. */
static void
cmd_launch_command(json_t *params, const char *key, const char *cmd)
{
	json_t	*commands;

	if ((commands = json_object_get(params, key)) == NULL) {
		commands = json_array();
		json_object_set_new(params, key, commands);
	}
	json_array_append_new(commands, json_string(cmd));
}

/* Set "cwd" to dir made absolute, or to our own directory; -1 on error. */
static int
cmd_launch_cwd(json_t *params, const char *dir)
{
	char	here[PATH_MAX], *path;
	int	rv;

	if (dir != NULL && *dir == '/')
		return json_object_set_new(params, "cwd", json_string(dir));
	if (getcwd(here, sizeof here) == NULL) {
		client_warn("getcwd: %s", strerror(errno));
		return -1;
	}
	if (dir == NULL)
		return json_object_set_new(params, "cwd", json_string(here));
	if (asprintf(&path, "%s%s%s", here, strcmp(here, "/") == 0 ? "" :
	    "/", dir) == -1)
		return -1;
	rv = json_object_set_new(params, "cwd", json_string(path));
	free(path);
	return rv;
}

/*
 * Set "replay" to the bundle made absolute: the daemon wants it so, as
 * QEMU opens it from the launch's directory; -1 after saying why.
 */
static int
cmd_launch_replay(json_t *params, const char *bundle)
{
	char	dir[PATH_MAX];

	if (bundle == NULL)
		return 0;
	if (realpath(bundle, dir) == NULL) {
		client_warn("--replay %s: %s", bundle, strerror(errno));
		return -1;
	}
	return json_object_set_new(params, "replay", json_string(dir));
}


/* The session of a launch --wait runs: print its id at once, as without. */
static void
cmd_launch_noted(struct client *c, json_t *msg)
{
	json_t *params = json_object_get(msg, "params");

	if (!json_is_string(json_object_get(msg, "method")) ||
	    strcmp(json_string_value(json_object_get(msg, "method")),
	    "session.launched") != 0 ||
	    json_integer_value(json_object_get(params, "request")) !=
	    c->want_id)
		return;
	*(bool *)c->note_arg = true;
	if (c->json)
		return;
	printf("%lld\n", (long long)json_integer_value(json_object_get(
	    json_object_get(params, "session"), "id")));
	fflush(stdout);
}

/* Whether a session object is of an ended session. */
static bool
cmd_launch_ended(json_t *session)
{
	const char *state = json_string_value(json_object_get(session,
	    "state"));

	return state != NULL && (strcmp(state, "exited") == 0 ||
	    strcmp(state, "failed") == 0);
}

/*
 * launch --wait, in one request: the id comes in a session.launched
 * notification, the ended session as the answer; exit with its status.
 */
static int
cmd_launch_wait(struct client *c, json_t *params)
{
	json_t		*session;
	json_int_t	 id;
	bool		 told = false;
	int		 rv;

	json_object_set_new(params, "wait", json_true());
	c->note = cmd_launch_noted;
	c->note_arg = &told;
	session = client_call(c, "launch", params);
	c->note = NULL;
	if (session == NULL)
		return cmd_launch_error(c);
	/* A daemon older than launch's wait answers as the session runs. */
	if (!told && !cmd_launch_ended(session)) {
		id = json_integer_value(json_object_get(session, "id"));
		if (!c->json)
			printf("%lld\n", (long long)id);
		fflush(stdout);
		json_decref(session);
		if ((session = client_call(c, "wait", json_pack("{s:I}",
		    "session", id))) == NULL)
			return client_error(c);
	}
	if (c->json)
		cmd_print_json(session);
	rv = cmd_session_status(session);
	json_decref(session);
	return rv;
}

/* Attach to the launched session id; exit with its status when it ends. */
static int
cmd_launch_attach(struct client *c, json_int_t id, int key, int quiet)
{
	json_t	*ref = json_integer(id);
	int	 rv;

	rv = cmd_attach_session(c, ref, key, quiet);
	json_decref(ref);
	return rv;
}


/* The launch options that only set one parameter of the request. */
static const struct {
	const char	*name;		/* the option */
	const char	*key;		/* the launch parameter */
	char		 type;		/* 's' string, 'n' count, 'b' true */
} cmd_launch_params[] = {
	{ "kind", "kind", 's' },
	{ "name", "name", 's' },
	{ "debugger", "debugger", 's' },
	{ "remote", "remote", 's' },
	{ "server", "server", 's' },
	{ "machine", "machine", 's' },
	{ "cpu", "cpu", 's' },
	{ "qemu", "qemu", 's' },
	{ "stop-timeout", "stop_timeout", 'n' },
	{ "stop-target", "stop_target", 's' },
	{ "pid", "pid", 'n' },
	{ "port", "port", 'n' },
	{ "connect-timeout", "connect_timeout", 'n' },
	{ "transport", "transport", 'b' },
	{ "semihosting", "semihosting", 'b' },
	{ "record", "record", 'b' },
	{ "record-bytes", "record_bytes", 'n' },
	{ "record-seconds", "record_seconds", 'n' },
	{ "replay", "replay", 's' },
	{ "core", "core", 'b' },
	{ "lease", "lease", 'b' },
	{ "deadline", "deadline", 'n' },
	{ "silence-timeout", "silence_timeout", 'n' },
	{ "on-deadline", "on_deadline", 's' },
	{ "artifacts", "artifacts", 's' },
};

/*
 * Set the parameters the options of cmd_launch_params stand for. Without
 * --kind, the later of --remote and --server implies its kind.
 */
static void
cmd_launch_params_set(const struct args *a, json_t *params)
{
	json_t	*v;
	size_t	 i;
	int	 remote, server;

	for (i = 0; i < sizeof cmd_launch_params / sizeof *cmd_launch_params;
	    i++) {
		if (!args_has(a, cmd_launch_params[i].name))
			continue;
		if (cmd_launch_params[i].type == 'b')
			v = json_true();
		else if (cmd_launch_params[i].type == 's')
			v = json_string(args_get(a, cmd_launch_params[i].name));
		else
			v = json_integer(args_number(a,
			    cmd_launch_params[i].name, 0));
		json_object_set_new(params, cmd_launch_params[i].key, v);
	}
	remote = args_last(a, "remote");
	server = args_last(a, "server");
	if (args_has(a, "kind") || remote == server)
		return;
	json_object_set_new(params, "kind", json_string(remote > server ?
	    "remote" : "gdbserver"));
}

/*
 * Whether value is one of the words of set: the kinds the daemon's
 * backends register and --stop-target's values are fixed, so a bad one is
 * a usage error found before any daemon is asked (or started).
 */
static bool
cmd_launch_word(const char *value, const char *set)
{
	size_t	len = strlen(value);
	const char *p;

	for (p = set; (p = strstr(p, value)) != NULL; p += len) {
		if ((p == set || p[-1] == ' ') && (p[len] == ' ' ||
		    p[len] == '\0') && len > 0)
			return true;
	}
	return false;
}

/*
 * Whether name is one a session may have (the daemon's rule): a name made
 * only of digits would be read as an id, so it is a usage error here.
 */
static bool
cmd_launch_name_ok(const char *name)
{
	size_t	len = strlen(name);

	return len >= 1 && len <= 64 && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789._-") == len &&
	    strspn(name, "0123456789") != len;
}

/* Parse the options of launch into params; 0, or the exit status. */
static int
cmd_launch_options(struct cmd *self, json_t *params, int *wait, int *key)
{
	const struct args	*a = &self->args;
	const char		*v;
	char			*dir;
	int			 pos;

	if ((v = args_get(a, "kind")) != NULL && !cmd_launch_word(v,
	    CMD_KINDS_WORDS))
		return cmd_usage(self, "bad --kind %s: want one of %s", v,
		    CMD_KINDS_WORDS);
	if ((v = args_get(a, "on-deadline")) != NULL && !cmd_launch_word(v,
	    "stop hold"))
		return cmd_usage(self, "bad --on-deadline %s: want stop or hold",
		    v);
	if ((v = args_get(a, "stop-target")) != NULL && !cmd_launch_word(v,
	    "auto detach kill"))
		return cmd_usage(self, "bad --stop-target %s: want auto, detach "
		    "or kill", v);

	if ((v = args_get(a, "name")) != NULL && !cmd_launch_name_ok(v))
		return cmd_usage(self, "bad --name %s: use 1 to 64 of A-Z a-z "
		    "0-9 . _ - and not only digits", v);
	if (args_has(a, "attach") && args_has(a, "wait"))
		return cmd_usage(self, "--attach and --wait exclude each "
		    "other");
	*wait = args_has(a, "attach") ? 2 : args_has(a, "wait") ? 1 : 0;
	/* A lease ends with this process: only one that stays makes sense. */
	if (args_has(a, "lease") && *wait == 0)
		return cmd_usage(self, "--lease goes with --wait or --attach");
	if (cmd_attach_key(self, key) != 0)
		return EXIT_USAGE;
	cmd_launch_params_set(a, params);
	for (pos = 0; (v = args_next(a, "env", &pos)) != NULL;) {
		if (cmd_launch_env(params, v) != 0)
			return cmd_usage(self, "bad --env %s: want NAME=VALUE",
			    v);
	}
	cmd_launch_term_env(params);
	for (pos = 0; (v = args_next(a, "x", &pos)) != NULL;)
		cmd_launch_command(params, "commands", v);
	for (pos = 0; (v = args_next(a, "fault-break", &pos)) != NULL;)
		cmd_launch_command(params, "fault_breaks", v);
	for (pos = 0; (v = args_next(a, "qemu-arg", &pos)) != NULL;)
		cmd_launch_command(params, "qemu_args", v);
	for (pos = 0; (v = args_next(a, "reset-command", &pos)) != NULL;)
		cmd_launch_command(params, "reset_commands", v);
	for (pos = 0; (v = args_next(a, "load-command", &pos)) != NULL;)
		cmd_launch_command(params, "load_commands", v);
	if (args_has(a, "no-fault-break"))
		json_object_set_new(params, "fault_break_defaults",
		    json_false());
	/* A remote target, a server command or a pid needs no PROGRAM. */
	if (args_count(a) == 0 && !args_has(a, "remote") &&
	    !args_has(a, "server") && !args_has(a, "pid"))
		return cmd_usage(self, "missing PROGRAM (or --pid, --remote, "
		    "--server)");
	if (cmd_launch_cwd(params, args_get(a, "cwd")) != 0)
		return EXIT_FAILED;
	/* The daemon wants the bundles' directory absolute. */
	if (args_has(a, "artifacts")) {
		if ((dir = cmd_bundle_path(args_get(a, "artifacts"))) == NULL)
			return EXIT_FAILED;
		json_object_set_new(params, "artifacts", json_string(dir));
		free(dir);
	}
	if (cmd_launch_replay(params, args_get(a, "replay")) != 0)
		return EXIT_FAILED;
	return 0;
}

/*
 * The launch parameters whose options are not named after them (the rest
 * client_error names as typed, --stop-timeout for "stop_timeout").
 */
static const struct {
	const char	*name;		/* the option */
	const char	*key;		/* the launch parameter */
} cmd_launch_lists[] = {
	{ "x", "commands" },
	{ "fault-break", "fault_breaks" },
	{ "no-fault-break", "fault_break_defaults" },
	{ "qemu-arg", "qemu_args" },
	{ "reset-command", "reset_commands" },
	{ "load-command", "load_commands" },
};

/*
 * Report a refused launch as the client's options name it: the daemon
 * names its parameters ("commands" must be ...), a person typed -x.
 */
static int
cmd_launch_error(struct client *c)
{
	size_t	i;

	for (i = 0; i < sizeof cmd_launch_lists / sizeof *cmd_launch_lists; i++)
		args_param_to_option(c->error.message, sizeof c->error.message,
		    cmd_launch_lists[i].key, cmd_launch_lists[i].name);
	return client_error(c);
}

/* launch: start a session, print its id, and with --wait its exit status. */
static int
cmd_launch_exec(struct cmd *self, struct client *c)
{
	json_t		*params, *args, *session;
	json_int_t	 id;
	int		 i, wait = 0, rv, key = CMD_DETACH_KEY;

	params = json_pack("{s:s}", "kind", "gdb");
	if ((rv = cmd_launch_options(self, params, &wait, &key)) != 0) {
		json_decref(params);
		return rv;
	}
	args = json_array();
	for (i = 0; i < args_count(&self->args); i++)
		json_array_append_new(args,
		    json_string(args_operand(&self->args, i)));
	if (json_array_size(args) > 0)
		json_object_set_new(params, "argv", args);
	else
		json_decref(args);

	if (wait == 1)
		return cmd_launch_wait(c, params);
	if ((session = client_call(c, "launch", params)) == NULL)
		return cmd_launch_error(c);
	id = json_integer_value(json_object_get(session, "id"));
	if (c->json && !wait)
		cmd_print_json(session);
	else if (!c->json && wait != 2) {
		printf("%lld\n", (long long)id);
		fflush(stdout);
	}
	json_decref(session);
	if (wait == 2)
		return cmd_launch_attach(c, id, key, args_has(&self->args,
		    "q") || args_has(&self->args, "quiet"));
	return EXIT_OK;
}

/* What help says of each option of launch. */
static const struct cmd_option cmd_launch_options_help[] = {
	{ "kind", "KIND",
	    CMD_KINDS_OR " (default: gdb; remote with --remote, gdbserver with --server)" },
	{ "name", "NAME",
	    "a name for the session, usable as SESSION" },
	{ "debugger", "PATH",
	    "the debugger to run (default: gdb; lldb for lldb, gdb-multiarch for qemu)" },
	{ "remote", "HOST:PORT",
	    "the target for gdb to connect to; implies --kind remote" },
	{ "server", "'CMD {port}'",
	    "the command that starts the server, {port} its port; implies --kind gdbserver" },
	{ "port", "PORT",
	    "the server's port (default: a free one)" },
	{ "machine", "MACHINE",
	    "qemu: the board QEMU emulates, as qemu -M help names it (required)" },
	{ "cpu", "CPU",
	    "qemu: the CPU QEMU emulates (default: the machine's)" },
	{ "qemu", "PATH",
	    "qemu: the QEMU to run (default: qemu-system-arm)" },
	{ "qemu-arg", "ARG",
	    "qemu: one more argument for QEMU, repeatable, in order" },
	{ "semihosting", NULL,
	    "qemu: the firmware's semihosting console is the stream semihost, its exit the session's status; remote: turn on OpenOCD's semihosting" },
	{ "record", NULL,
	    "qemu: record the run (QEMU's record/replay, on mps2-an385); bundles hold the recording, dbgctl replay runs it again" },
	{ "record-bytes", "N",
	    "qemu: the recording's bound in bytes; at it the board stops, the recording kept whole (default: 16 MiB)" },
	{ "record-seconds", "S",
	    "qemu: the recording's bound in seconds, the same way (default: 3600)" },
	{ "replay", "BUNDLE",
	    "qemu: replay the recording of BUNDLE (a bundle directory) under gdb, running to its first fault break or its end (what dbgctl replay launches)" },
	{ "reset-command", "CMD",
	    "a debugger command of the target's reset, repeatable, in order (default: the kind's)" },
	{ "load-command", "CMD",
	    "a debugger command that writes the program to the target, repeatable (default: the kind's)" },
	{ "connect-timeout", "MS",
	    "how long a remote session, or a managed server, may take to connect or listen (default: 10000)" },
	{ "transport", NULL,
	    "give the target's stdin and stdout to send, recv and pipe (default: the terminal)" },
	{ "x", "CMD",
	    "a debugger command to run at start, repeatable, in order" },
	{ "cwd", "DIR",
	    "the working directory (default: the current one)" },
	{ "env", "K=V",
	    "set K to V in the program's environment, repeatable" },
	{ "stop-timeout", "MS",
	    "how long a stop may take before SIGKILL (default: 5000)" },
	{ "stop-target", "auto|detach|kill",
	    "what gdb does to its targets on stop; auto kills what the session started and detaches what gdb attached to (default: auto; detach for remote)" },
	{ "pid", "PID",
	    "attach gdb (or gdbserver) to this running process instead of starting a PROGRAM; stop detaches from it" },
	{ "attach", NULL,
	    "attach to the console once it runs, instead of printing the id" },
	{ "detach-key", "KEY",
	    "with --attach, the key that detaches, as ^X (default: ^\\, Ctrl-\\)" },
	{ "q", NULL,
	    "with --attach, print no line of its own" },
	{ "quiet", NULL, "the same as -q" },
	{ "wait", NULL,
	    "wait for the session to end and exit with its status" },
	{ "fault-break", "LOCATION",
	    "a breakpoint whose hit is a fault, repeatable" },
	{ "no-fault-break", NULL,
	    "no default fault breaks at the Cortex-M fault handlers" },
	{ "core", NULL,
	    "save a core file at a fault of a native target" },
	{ "lease", NULL,
	    "stop the session when this command ends (with --wait or --attach)" },
	{ "deadline", "MS",
	    "MS after it runs, halt the target, record a verdict of where it is, then stop (or hold) the session" },
	{ "silence-timeout", "MS",
	    "the same once no stream has had a byte for MS" },
	{ "on-deadline", "stop|hold",
	    "after the verdict, stop the session or keep it running, its target halted (default: stop)" },
	{ "artifacts", "DIR",
	    "write a bundle to DIR/ID-REASON when a verdict, a fault or the lease's end comes, before the teardown" },
	{ NULL, NULL, NULL }
};

const struct cmd_entry cmd_launch_entry = {
	.name = "launch",
	.usage = "[--kind " CMD_KINDS_BAR "] [--name NAME]\n"
	    "\t[--debugger PATH] [--remote HOST:PORT] [--server 'CMD {port}']\n"
	    "\t[--machine MACHINE [--cpu CPU] [--qemu PATH] [--qemu-arg ARG]...]\n"
	    "\t[--semihosting] [--record [--record-bytes N] [--record-seconds S]]\n"
	    "\t[--replay BUNDLE]\n"
	    "\t[--port N] [--connect-timeout MS] [--transport] [-x CMD]...\n"
	    "\t[--reset-command CMD]... [--load-command CMD]...\n"
	    "\t[--cwd DIR] [--env K=V]... [--stop-timeout MS]\n"
	    "\t[--stop-target auto|detach|kill] [--pid PID]\n"
	    "\t[--fault-break LOCATION]... [--no-fault-break] [--core]\n"
	    "\t[--lease] [--deadline MS] [--silence-timeout MS] [--on-deadline stop|hold]\n"
	    "\t[--artifacts DIR]\n"
	    "\t[--attach [--detach-key KEY] [-q | --quiet] | --wait]\n"
	    "\t[--] [PROGRAM [ARG...]]   (PROGRAM unless --pid, --remote or --server)",
	.args = { "kind: name: debugger: remote: server: machine: cpu: "
	    "qemu: qemu-arg: reset-command: load-command: port# "
	    "connect-timeout# transport semihosting record record-bytes# "
	    "record-seconds# replay: x: cwd: env: "
	    "stop-timeout# "
	    "stop-target: pid# attach "
	    "detach-key: wait fault-break: no-fault-break core lease q quiet "
	    "deadline# silence-timeout# on-deadline: artifacts:",
	    0, -1 },
	.flags = CMD_AUTOSTART,
	.exec = cmd_launch_exec,
	.summary = "start a session: a debugger or a program on a terminal of its own; print its id",
	.options = cmd_launch_options_help,
};
