"""Run control from Python on native gdb (see conftest.py): halt, resume
until the next stop, breakpoints, eval, memory, registers, reset and the
sequenced waits, each over the Session's own connection."""

import os
import struct

import pytest

import dbgctl

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def _line_of(text, source="spinner.c"):
    """The line of ``source`` (a fixture's) that holds ``text``."""
    path = os.path.join(TOP, "tests", "fixtures", source)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise AssertionError("no %r in %s" % (text, path))


#: The spinner's loop body, where a breakpoint is hit every 50 ms.
LOOP = "spinner.c:%d" % _line_of("turns++;")


@pytest.fixture
def spinner(client, fixtures):
    """The spinner running under native gdb."""
    s = client.launch([fixtures["spinner"]], commands=["run"])
    try:
        assert s.wait_target("running", timeout=20)["state"] == "running"
        yield s
    finally:
        s.stop()


@pytest.fixture
def looping(spinner):
    """The spinner stopped at the breakpoint in its loop; the Session and
    the breakpoint's record."""
    spinner.halt(timeout=20)
    bkpt = spinner.break_insert(LOOP)
    stop = spinner.resume(until_stop=True, timeout=20)
    assert stop.bkptno == int(bkpt["number"]), stop
    return spinner, bkpt


def test_stop_is_the_record_with_attributes():
    rec = {"state": "stopped", "seq": 7,
           "stop": {"reason": "breakpoint-hit", "bkptno": 2,
                    "func": "uart_putc", "file": "board.c", "line": 41,
                    "addr": "0x1f4", "thread": "1", "by": "target",
                    "frame": {"func": "uart_putc"}}}
    stop = dbgctl.Stop(rec)
    assert stop == rec and isinstance(stop, dict)
    assert (stop.seq, stop.reason, stop.bkptno, stop.func, stop.file,
            stop.line, stop.addr, stop.thread, stop.by) == \
        (7, "breakpoint-hit", 2, "uart_putc", "board.c", 41, "0x1f4", "1",
         "target")
    assert stop.frame == {"func": "uart_putc"} and stop.signal is None
    assert not stop.exited and stop.exit_code is None
    gone = dbgctl.Stop({"state": "exited", "seq": 9,
                        "reason": "exited-normally", "exit_code": "03"})
    assert gone.exited and gone.exit_code == "03"
    assert gone.reason == "exited-normally" and gone.bkptno is None


def test_halt_returns_a_stop_with_seq(spinner):
    running = spinner.target_seq
    stop = spinner.halt(timeout=20)
    assert isinstance(stop, dbgctl.Stop)
    assert stop.state == "stopped" and stop.by == "halt"
    assert stop.seq > running and not stop.already
    assert spinner.target_seq == stop.seq
    again = spinner.halt(timeout=20)
    assert again.already and again.seq == stop.seq


def test_resume_until_stop_is_never_stale(looping):
    s, bkpt = looping
    last = s.target_seq
    for _ in range(50):
        stop = s.resume(until_stop=True, timeout=20)
        assert stop.seq > last, (stop, last)
        assert stop.reason == "breakpoint-hit", stop
        assert stop.bkptno == int(bkpt["number"]), stop
        assert stop.line == int(bkpt["line"]), stop
        last = stop.seq


def test_resume_without_wait_then_wait_stop_after(looping):
    s, bkpt = looping
    before = s.target_seq
    running = s.resume()
    assert running["state"] == "running" and running["seq"] > before
    # The stop may well come before the wait is asked: after= finds it.
    stop = s.wait_stop(after=before, timeout=20)
    assert stop.seq > running["seq"] and stop.bkptno == int(bkpt["number"])


def test_wait_stop_after_skips_the_current_stop(looping):
    s, _ = looping
    now = s.target_seq
    assert s.wait_stop(timeout=5).seq == now
    with pytest.raises(dbgctl.Timeout) as e:
        s.wait_stop(after=now, timeout=0.5)
    assert e.value.kind == "timeout" and e.value.code == 5
    assert isinstance(e.value.target, dbgctl.Stop)
    assert e.value.target.seq == now


def test_next_and_step_then_delete_every_breakpoint(looping):
    s, bkpt = looping
    stop = s.next()
    assert stop.reason == "end-stepping-range"
    assert stop.line == int(bkpt["line"]) + 1 and stop.func == "main"
    # Into nanosleep where libc has line information (else over it), and
    # out of it again.
    stop = s.step()
    assert stop.reason == "end-stepping-range" and stop.seq > 0
    if stop.func != "main":
        stop = s.finish()
        assert stop.reason == "function-finished"
    assert stop.func == "main"
    assert s.break_delete() == [bkpt["number"]]
    assert [b for b in s.break_list() if not b.get("internal")] == []


def test_halt_on_timeout_leaves_it_halted(spinner):
    with pytest.raises(dbgctl.Timeout) as e:
        spinner.resume(until_stop=True, timeout=0.5, halt_on_timeout=True)
    assert e.value.target.state == "stopped" and e.value.target.by == "halt"
    assert spinner.target["state"] == "stopped"


def test_memory_round_trip_and_eval(looping):
    s, _ = looping
    size = int(s.eval("sizeof(turns)"))
    assert s.eval("1 + 41") == "42"
    old = s.read_memory("&turns", size)
    assert len(old) == size
    assert struct.unpack("=%s" % {4: "I", 8: "Q"}[size], old)[0] == \
        int(s.eval("turns"))
    new = struct.pack("=%s" % {4: "I", 8: "Q"}[size], 424242)
    assert s.write_memory("&turns", new) == size
    assert s.read_memory("&turns", size) == new
    assert s.eval("turns") == "424242"
    with pytest.raises(dbgctl.DebuggerError) as e:
        s.eval("no_such_variable_here")
    assert "no_such_variable_here" in str(e.value)


def test_registers_have_the_architectures_names(looping):
    s, _ = looping
    regs = s.registers()
    pc = next(n for n in ("pc", "rip", "eip") if n in regs)
    assert regs[pc].startswith("0x") and len(regs) > 8
    assert list(s.registers(pc)) == [pc]
    with pytest.raises(dbgctl.Error) as e:
        s.registers("no_such_register")
    assert e.value.kind == "invalid_params"
    assert '"no_such_register"' in str(e.value)


def test_where_backtrace_and_threads_of_a_halted_target(spinner):
    spinner.halt(timeout=20)
    spinner.break_insert("nanosleep")
    stop = spinner.resume(until_stop=True, timeout=20)
    bt = spinner.backtrace()
    assert [f["level"] for f in bt] == list(range(len(bt))) and not bt.more
    assert len(bt) >= 2 and bt[0]["func"] == stop.func, bt
    assert bt[-1]["func"] == "main" and bt[-1]["line"] > 0, bt
    cut = spinner.backtrace(limit=1)
    assert list(cut) == bt[:1] and cut.more
    assert spinner.where()["addr"] == bt[0]["addr"]
    threads = spinner.threads()
    assert [t["current"] for t in threads].count(True) == 1, threads
    assert next(t for t in threads if t["current"])["frame"] == \
        spinner.where(), threads
    spinner.break_delete()
    spinner.resume()
    with pytest.raises(dbgctl.Error) as e:
        spinner.backtrace()
    assert e.value.kind == "not_ready" and "halt it first" in str(e.value)


def test_wait_fault_after_a_reset(client, fixtures):
    with client.launch([fixtures["fault"]], commands=["run"]) as s:
        first = s.wait_fault(timeout=20)
        assert first["signal"] == "SIGSEGV" and isinstance(first["seq"], int)
        assert s.wait_fault(timeout=5)["seq"] == first["seq"]
        with pytest.raises(dbgctl.Timeout):
            s.wait_fault(after=first["seq"], timeout=0.5)
        res = s.reset(halt=True, timeout=20)
        assert res["target"].state == "stopped" and res["target"].seq > \
            first["seq"]
        assert s.fault is None and s.faults[-1]["seq"] == first["seq"]
        s.resume()
        second = s.wait_fault(after=res["target"].seq, timeout=20)
        assert second["seq"] > res["target"].seq
        assert second["frames"][0]["func"] == "crash_here"


def test_load_refused_on_native_gdb(spinner):
    with pytest.raises(dbgctl.Error) as e:
        spinner.load()
    assert e.value.kind == "not_supported" and "cannot load" in str(e.value)


def test_waits_use_the_sessions_own_connection(spinner, monkeypatch):
    made = []
    real = dbgctl.Client.__init__

    def counting(self, *a, **kw):
        made.append(kw)
        real(self, *a, **kw)
    monkeypatch.setattr(dbgctl.Client, "__init__", counting)
    spinner.halt(timeout=20)
    assert spinner.wait_target("stopped", timeout=5)["state"] == "stopped"
    spinner.resume()
    assert spinner.wait_target("running", timeout=5)["state"] == "running"
    assert made == []


VERBS = [
    ("halt", lambda s: s.halt()),
    ("resume", lambda s: s.resume(until_stop=True)),
    ("break", lambda s: s.break_insert("main")),
    ("break", lambda s: s.break_list()),
    ("break", lambda s: s.break_delete()),
    ("eval", lambda s: s.eval("1")),
    ("memory", lambda s: s.read_memory(0x1000, 4)),
    ("memory", lambda s: s.write_memory(0x1000, b"\0")),
    ("registers", lambda s: s.registers()),
    ("where", lambda s: s.where()),
    ("backtrace", lambda s: s.backtrace()),
    ("threads", lambda s: s.threads()),
    ("reset", lambda s: s.reset()),
    ("load", lambda s: s.load()),
    (None, lambda s: s.wait_stop(timeout=1)),
    (None, lambda s: s.wait_fault(timeout=1)),
]


@pytest.mark.parametrize("verb,call", VERBS, ids=[
    "halt", "resume", "break_insert", "break_list", "break_delete", "eval",
    "read_memory", "write_memory", "registers", "where", "backtrace",
    "threads", "reset", "load",
    "wait_stop", "wait_fault"])
def test_verbs_refused_on_exec_sessions(client, fixtures, verb, call):
    with client.launch([fixtures["spinner"]], kind="exec") as s:
        with pytest.raises(dbgctl.Error) as e:
            call(s)
        assert (e.value.kind, e.value.code) == ("not_supported", 9)
        assert "session %d is an exec session" % s.id in str(e.value)
        if verb is not None:
            assert "%s needs a debugger" % verb in str(e.value)


def test_an_exited_target(client, fixtures):
    with client.launch([fixtures["fault"]], commands=["run"]) as s:
        s.wait_fault(timeout=20)
        s.exec("kill")
        gone = s.wait_stop(timeout=20)
        assert gone.exited, gone
        with pytest.raises(dbgctl.Error) as e:
            s.resume(until_stop=True)
        assert e.value.kind == "not_running"
        assert "reset or launch it again" in str(e.value)


def test_delete_all_keeps_the_fault_breaks(client, fixtures):
    with client.launch([fixtures["fault"]], fault_breaks=["crash_here"],
                       commands=["break main", "run"]) as s:
        first = s.wait_stop(timeout=20)
        assert first.func == "main"
        ours = s.break_insert("crash_here")
        internal = [b for b in s.break_list() if b.get("internal")]
        assert len(internal) == 1 and internal[0]["func"] == "crash_here"
        deleted = s.break_delete()
        assert ours["number"] in deleted
        assert internal[0]["number"] not in deleted
        with pytest.raises(dbgctl.Error) as e:
            s.break_delete(internal[0]["number"])
        assert e.value.kind == "invalid_params"
        assert "fault breakpoint" in str(e.value)
        assert s.status()["fault_breaks"]["armed"] is True
        stop = s.resume(until_stop=True, timeout=20)
        assert stop.func == "crash_here"
        fault = s.wait_fault(after=first.seq, timeout=20)
        assert fault["seq"] == stop.seq
