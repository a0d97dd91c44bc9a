/*
 * qemu: QEMU runs the firmware halted (-S) with its gdb stub on a loopback
 * socket the daemon listens on and hands it, and its serial port on the
 * session's transport; gdb-multiarch starts beside it and connects, the
 * fault breaks go in and the target runs. Its QMP monitor, and the
 * machine's RAM where it can be shared, give live memory (live.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "argv.h"
#include "gdb.h"
#include "live.h"
#include "method.h"
#include "replay.h"
#include "semihost.h"

/* What a qemu launch takes beside the family's params. */
static const struct method_param backend_qemu_params[] = {
	{ "machine", PT_STRING, true, 0, 0 },
	{ "cpu", PT_STRING, false, 0, 0 },
	{ "qemu", PT_STRING, false, 0, 0 },
	{ "qemu_args", PT_STRINGS, false, 0, 0 },
	{ "port", PT_INT, false, 1, 65535 },
	{ "semihosting", PT_BOOL, false, 0, 0 },
	{ "shared_ram", PT_BOOL, false, 0, 0 },
	{ "record", PT_BOOL, false, 0, 0 },
	{ "record_bytes", PT_INT, false, 4096, 1LL << 40 },
	{ "record_seconds", PT_INT, false, 1, 86400 * 365 },
	{ "replay", PT_STRING, false, 0, 0 },
	{ NULL, 0, false, 0, 0 }
};

/* The firmware is QEMU's -kernel and gdb's file: one ELF, no arguments. */
static int
backend_qemu_check(const struct launch *l, struct rpc_error *err)
{
	const char *machine = launch_get_str(l, "machine");

	/* Launch's check has required it; a launch parsed unchecked has not. */
	if (machine == NULL) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"machine\" is required "
		    "by kind qemu");
		return -1;
	}
	if (json_array_size(l->argv) > 1) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "a qemu session's "
		    "PROGRAM is the firmware alone; QEMU's own arguments go in "
		    "\"qemu_args\"");
		return -1;
	}
	/* QEMU reads "-M a,b=c" as options of the machine: one name only. */
	if (*machine == '\0' || strcspn(machine, ", \t\n") != strlen(machine)) {
		rpc_error_set(err, RPC_INVALID_PARAMS, "\"machine\" must be one "
		    "machine name, as qemu -M help lists them (give its "
		    "options in \"qemu_args\")");
		return -1;
	}
	return replay_check(l, err);
}

/*
 * The board's serial port on QEMU's stdio (the transport); with
 * semihosting, stdio is the semihosting console's socket instead
 * (semihost.c) and the serial port a pipe chardev on the transport.
 */
static void
backend_qemu_serial(struct session *s, struct argv *av)
{
	char *uart = semihost_uart_chardev(s);

	if (uart == NULL) {
		argv_push(av, "-serial");
		argv_push(av, "stdio");
		return;
	}
	argv_push(av, "-chardev");
	argv_push(av, uart);
	argv_push(av, "-serial");
	argv_push(av, "chardev:dbgctl-uart");
	argv_push(av, "-chardev");
	argv_push(av, "stdio,id=dbgctl-semihost");
	argv_push(av, "-semihosting-config");
	argv_push(av, "enable=on,target=native,chardev=dbgctl-semihost");
	free(uart);
}

/*
 * QEMU's argv: the board halted at its reset vector, the serial port on
 * stdio (the transport) or beside semihosting's console, no monitor
 * there, the gdb stub on the loopback socket the daemon listens on for
 * it (server_bind), QMP and shared RAM for live memory, then the
 * launch's own arguments.
 */
static char **
backend_qemu_server_argv(struct session *s)
{
	struct argv	 av = { 0 };
	const char	*qemu = launch_get_str(&s->l, "qemu");
	const char	*cpu = launch_get_str(&s->l, "cpu");

	argv_push(&av, qemu != NULL ? qemu : "qemu-system-arm");
	argv_push(&av, "-M");
	argv_push(&av, launch_get_str(&s->l, "machine"));
	if (cpu != NULL) {
		argv_push(&av, "-cpu");
		argv_push(&av, cpu);
	}
	argv_push(&av, "-nographic");
	argv_push(&av, "-kernel");
	argv_push(&av, json_string_value(json_array_get(s->l.argv, 0)));
	backend_qemu_serial(s, &av);
	argv_push(&av, "-monitor");
	argv_push(&av, "none");
	argv_push(&av, "-chardev");
	/* What -gdb tcp: sets itself: Nagle would hold each small packet. */
	argv_pushf(&av, "socket,id=dbgctl-gdb,fd=%d,server=on,wait=off,"
	    "nodelay=on", PROC_FD_LISTEN);
	argv_push(&av, "-gdb");
	argv_push(&av, "chardev:dbgctl-gdb");
	argv_push(&av, "-S");
	replay_args(s, &av);
	live_qemu_args(s, &av);
	argv_push_json(&av, json_object_get(s->l.kind_params, "qemu_args"), 0);
	return av.v;
}

/*
 * Live memory for the session: opened anew, or taken from QEMU's keeper
 * when adopted (a session that cannot have it again runs on without).
 * Shared RAM unless "shared_ram" is false or qemu_args size the RAM.
 * None for a recording or a replay, whose runs must match.
 */
static int
backend_qemu_live(struct session *s, char *err, size_t errlen)
{
	json_t	*p = json_object_get(s->l.kind_params, "shared_ram");
	bool	 shm = !json_is_false(p);
	char	 why[256];
	json_t	*v;
	size_t	 i;

	/* QMP's input is recorded too, and a replay's QMP is not the record's. */
	if (json_is_true(json_object_get(s->l.kind_params, "record")) ||
	    launch_get_str(&s->l, "replay") != NULL)
		return 0;
	if (dmn.adopting != NULL) {
		if (live_qemu_adopt(s, why, sizeof why) != 0)
			log_warn("session %lu: no live memory: %s", s->id, why);
		return 0;
	}
	json_array_foreach(json_object_get(s->l.kind_params, "qemu_args"), i,
	    v)
		if (strcmp(json_string_value(v), "-m") == 0 || strstr(
		    json_string_value(v), "memory-backend") != NULL)
			shm = false;
	return live_qemu_open(s, launch_get_str(&s->l, "machine"), shm, err,
	    errlen);
}

/* Start QEMU under its keeper, and gdb beside it, on port's socket. */
static int
backend_qemu_spawn(struct session *s, int port, char *err, size_t errlen)
{
	struct gdb_data	 *g = s->bdata;
	char		**av;
	int		  rc;

	live_qemu_fds(s, g->server.extra_fds);
	av = backend_qemu_server_argv(s);
	rc = backend_gdb_server_start(s, av, port, err, errlen);
	argv_free(av);
	return rc;
}

/*
 * A recording's or a replay's file is copied, or not: QEMU starts, unless
 * the session was stopped meanwhile, which it can finish now.
 */
static void
backend_qemu_copied(struct session *s, int error, const char *why)
{
	struct gdb_data	*g = s->bdata;
	char		 msg[1024];

	if (s->state != S_STARTING) {
		session_check_gone(s);
		return;
	}
	/* Nothing is adopted while it copies: the port is the one bound. */
	if (why == NULL && backend_qemu_spawn(s, server_port(&g->server), msg,
	    sizeof msg) == 0)
		return;
	session_start_fail(s, why != NULL ? error : errno, "%s", why != NULL ?
	    why : msg);
}

/*
 * Open what QEMU and gdb need, on a socket of ours, and start them; a
 * recording's or a replay's file is copied first (backend_qemu_copied).
 */
static int
backend_qemu_start(struct session *s, char *err, size_t errlen)
{
	int rc, port;

	if (backend_gdb_open(s, NULL, err, errlen) != 0 ||
	    semihost_open(s, err, errlen) != 0 ||
	    (port = backend_gdb_server_bind(s, s->l.port, err, errlen)) == -1 ||
	    backend_qemu_live(s, err, errlen) != 0 ||
	    (rc = replay_open(s, backend_qemu_copied, err, errlen)) == -1)
		return -1;
	return rc == 1 ? 0 : backend_qemu_spawn(s, port, err, errlen);
}

/* QEMU's monitor resets the board; gdb forgets the registers it had. */
static const char *const backend_qemu_reset[] = {
	"monitor system_reset", "flushregs", NULL
};
static const char *const backend_qemu_load[] = { "load", NULL };
/* QEMU halts at reset (-S): once the fault breaks are in, it runs. */
static const char *const backend_qemu_run[] = { "continue", NULL };

const struct backend backend_qemu = {
	.name = "qemu",
	.debugger = "gdb-multiarch",
	.stop_target = "detach",
	.flags = BACKEND_SERVER | BACKEND_PROGRAM | BACKEND_TRANSPORT |
	    BACKEND_ADOPT,
	.reset_commands = backend_qemu_reset,
	.fault_defaults = fault_cortex_m,
	.load_commands = backend_qemu_load,
	.run_commands = backend_qemu_run,
	.params = backend_qemu_params,
	.check = backend_qemu_check,
	.start = backend_qemu_start,
	BACKEND_GDB_FAMILY
};
