/* Unit tests of daemon parts that need no loop: the ring and the argv builders. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "daemon.h"

/* The daemon context the parts refer to; unused by these tests. */
/* Fill a session with what the argv builders read. */
static void
fill_session(struct session *s, const char *kind, json_t *argv)
{
	memset(s, 0, sizeof *s);
	s->backend = backend_find(kind);
	cr_assert_not_null(s->backend, "kind %s", kind);
	s->argv = argv;
	s->commands = json_pack("[s, s]", "break main", "run");
}

Test(ring, keeps_the_last_bytes_in_order)
{
	struct ring	r;
	char		out[16];
	size_t		n;

	ring_init(&r, 8);
	ring_write(&r, "abcdef", 6);
	ring_write(&r, "ghij", 4);
	cr_assert_eq(r.end, 10);
	cr_assert_eq(ring_start(&r), 2);
	n = ring_read(&r, 2, out, sizeof out);
	cr_assert_eq(n, 8);
	cr_assert_arr_eq(out, "cdefghij", 8);
	cr_assert_eq(ring_read(&r, 1, out, sizeof out), 0, "offset 1 is gone");
	cr_assert_eq(ring_read(&r, 10, out, sizeof out), 0, "nothing at end");
	n = ring_read(&r, 7, out, 2);
	cr_assert_eq(n, 2);
	cr_assert_arr_eq(out, "hi", 2);
	ring_free(&r);
}

Test(ring, write_larger_than_capacity)
{
	struct ring	r;
	char		out[4];

	ring_init(&r, 4);
	ring_write(&r, "0123456789", 10);
	cr_assert_eq(r.end, 10);
	cr_assert_eq(ring_read(&r, 6, out, 4), 4);
	cr_assert_arr_eq(out, "6789", 4);
	ring_free(&r);
}

Test(backend, exec_argv_is_the_program)
{
	struct session	  s;
	char		**av, err[64];

	fill_session(&s, "exec", json_pack("[s, s]", "sleep", "5"));
	av = s.backend->argv(&s, err, sizeof err);
	cr_assert_str_eq(av[0], "sleep");
	cr_assert_str_eq(av[1], "5");
	cr_assert_null(av[2]);
	backend_argv_free(av);
}

Test(backend, gdb_quotes_every_argument_for_the_shell)
{
	struct session	  s;
	char		**av, err[64];

	fill_session(&s, "gdb", json_pack("[s, s, s, s]", "./fw.elf",
	    "$(touch x)", "it's", "a b"));
	av = s.backend->argv(&s, err, sizeof err);
	cr_assert_str_eq(av[0], "gdb");
	cr_assert_str_eq(av[1], "-q");
	cr_assert_str_eq(av[2], "-ex");
	cr_assert_str_eq(av[3], "set args '$(touch x)' 'it'\\''s' 'a b'");
	cr_assert_str_eq(av[4], "-ex");
	cr_assert_str_eq(av[5], "break main");
	cr_assert_str_eq(av[6], "-ex");
	cr_assert_str_eq(av[7], "run");
	cr_assert_str_eq(av[8], "--");
	cr_assert_str_eq(av[9], "./fw.elf");
	cr_assert_null(av[10]);
	backend_argv_free(av);
}

Test(backend, gdb_debugger_override_and_no_args)
{
	struct session	  s;
	char		**av, err[64];

	fill_session(&s, "gdb", json_pack("[s]", "prog"));
	s.debugger = "/opt/gdb-multiarch";
	json_array_clear(s.commands);
	av = s.backend->argv(&s, err, sizeof err);
	cr_assert_str_eq(av[0], "/opt/gdb-multiarch");
	cr_assert_str_eq(av[1], "-q");
	cr_assert_str_eq(av[2], "--");
	cr_assert_str_eq(av[3], "prog");
	cr_assert_null(av[4]);
	backend_argv_free(av);
}

Test(backend, unknown_kind_is_not_found)
{
	cr_assert_null(backend_find("lldb-nope"));
	cr_assert_not_null(backend_find("exec"));
}

/* A session fit for state changes, with an empty daemon around it. */
static void
state_session(struct session *s)
{
	memset(s, 0, sizeof *s);
	TAILQ_INIT(&dmn.pendings);
	TAILQ_INIT(&dmn.sessions);
	s->id = 1;
	s->state = S_STARTING;
}

Test(state, the_normal_life_of_a_session)
{
	struct session s;

	state_session(&s);
	session_set_state(&s, S_RUNNING);
	session_set_state(&s, S_STOPPING);
	session_set_state(&s, S_EXITED);
	cr_assert(session_ended(&s));
	cr_assert_str_eq(session_state_name(s.state), "exited");
}

Test(state, a_stop_while_starting_and_a_failed_start)
{
	struct session s;

	state_session(&s);
	session_set_state(&s, S_STOPPING);
	cr_assert_not(session_ended(&s));
	state_session(&s);
	session_set_state(&s, S_FAILED);
	cr_assert(session_ended(&s));
}

Test(state, an_ended_session_never_runs_again, .signal = SIGABRT)
{
	struct session s;

	state_session(&s);
	session_set_state(&s, S_FAILED);
	session_set_state(&s, S_RUNNING);
}

Test(state, running_cannot_skip_stopping, .signal = SIGABRT)
{
	struct session s;

	state_session(&s);
	session_set_state(&s, S_RUNNING);
	session_set_state(&s, S_EXITED);
}

Test(backend, lldb_escapes_what_its_interpreter_would_expand)
{
	struct session	  s;
	char		**av, err[64];

	fill_session(&s, "lldb", json_pack("[s, s, s]", "./fw", "`touch x`",
	    "a\\\"b"));
	json_array_clear(s.commands);
	av = s.backend->argv(&s, err, sizeof err);
	cr_assert_str_eq(av[0], "lldb");
	cr_assert_str_eq(av[1], "-o");
	cr_assert_str_eq(av[2], "settings set -- target.run-args "
	    "\"\\`touch x\\`\" \"a\\\\\\\"b\"");
	cr_assert_str_eq(av[3], "--");
	cr_assert_str_eq(av[4], "./fw");
	cr_assert_null(av[5]);
	backend_argv_free(av);
}
