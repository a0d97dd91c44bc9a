"""The Python client against a real daemon (see conftest.py)."""

import os
import threading
import time

import pytest

import dbgctl
import dbgctl.connection
from dbgctl.pytest_plugin import alive


def _read_past(s, want, timeout=10):
    """Take the target's output with read until ``want`` has come (read
    and read_until keep positions of their own)."""
    got, deadline = b"", time.monotonic() + timeout
    while want not in got:
        got += s.read(timeout=max(0.0, deadline - time.monotonic()))
    return got



def test_ping(client):
    assert client.ping() == {"pong": True}
    assert client.hello()["protocol"] == 1


def test_exec_transport_round_trip(client, fixtures):
    with client.launch([fixtures["echo"], "one"], kind="exec",
                       transport=True, name="py-echo") as s:
        assert isinstance(s.id, int) and s.name == "py-echo"
        assert s.status()["transport"] is True
        assert _read_past(s, b"arg1=[one]\n").endswith(b"arg1=[one]\n")
        payload = bytes(range(256)) * 2048   # 512 KiB: two write requests
        writer = threading.Thread(target=s.write, args=(payload,))
        writer.start()
        got = b""
        while len(got) < len(payload):
            chunk = s.read(max=65536, timeout=10)
            assert chunk
            got += chunk
        writer.join(10)
        assert got == payload


def test_read_timeout_then_end_of_stream(client, fixtures):
    with client.launch([fixtures["echo"]], kind="exec", transport=True) as s:
        _read_past(s, b"]\n")
        with pytest.raises(dbgctl.Timeout) as e:
            s.read(timeout=0.2)
        assert e.value.kind == "timeout" and e.value.code == 5
        s.write(b"last\n", eof=True)
        assert _read_past(s, b"last\n") == b"last\n"
        assert s.read(timeout=10) == b""
        assert s.wait(timeout=10)["exit"] == {"code": 3, "by": "exit"}


def test_gdb_exec_break_insert(client, fixtures):
    with client.launch([fixtures["echo"]]) as s:
        res = s.exec("-break-insert main")
        assert res["class"] == "done"
        assert res["results"]["bkpt"]["func"] == "main"


def test_gdb_exec_unknown_command(client, fixtures):
    with client.launch([fixtures["echo"]]) as s:
        with pytest.raises(dbgctl.DebuggerError) as e:
            s.exec("-no-such-command")
        assert e.value.kind == "debugger_error" and e.value.code == 11
        assert "Undefined MI command: no-such-command" in str(e.value)


def test_remove_and_prune_ended_sessions(client, fixtures):
    live = client.launch([fixtures["spinner"]], kind="exec")
    try:
        with pytest.raises(dbgctl.Error) as e:
            live.remove()
        assert e.value.kind == "busy" and "stop" in str(e.value)
        done = client.launch(["/bin/true"], kind="exec")
        done.wait(timeout=10)
        log = done.status()["log"]
        assert done.remove() == [done.id]
        assert not os.path.exists(log)
        with pytest.raises(dbgctl.NoSuchSession):
            done.status()
        other = client.launch(["/bin/true"], kind="exec")
        other.wait(timeout=10)
        assert other.id in client.prune(keep_files=True)
        assert os.path.exists(other.record["log"])
        assert live.status()["state"] == "running"
    finally:
        live.stop()


def test_wait_target_after_interrupt(client, fixtures):
    with client.launch([fixtures["spinner"]], commands=["run"]) as s:
        assert s.wait_target("running", timeout=20)["state"] == "running"
        with pytest.raises(dbgctl.Timeout):
            s.wait_target("stopped", timeout=0.2)
        s.exec("-exec-interrupt")
        target = s.wait_target("stopped", timeout=20)
        assert target["state"] == "stopped"
        assert target["stop"]["reason"] == "signal-received"


def test_fault_record(client, fixtures):
    with client.launch([fixtures["fault"]], commands=["run"]) as s:
        fault = s.wait_fault(timeout=20)
        assert fault["signal"] == "SIGSEGV"
        assert fault["frames"][0]["func"] == "crash_here"


def test_notifications_session_state(client, fixtures):
    notes = client.notifications(timeout=5.0)
    client.subscribe(output=False)
    s = client.launch([fixtures["echo"]], kind="exec")
    states = []
    for n in notes:
        p = n.get("params", {})
        if n.get("method") == "session.state" and p.get("session") == s.id:
            states.append(p["state"])
            if p["state"] == "exited":
                break
        if "running" in states and not s.record.get("ended_at"):
            s.record = s.stop()
    assert states[:2] == ["starting", "running"]
    assert states[-1] == "exited"


def test_no_such_session(client):
    with pytest.raises(dbgctl.NoSuchSession) as e:
        client.session(999999)
    assert e.value.code == 1 and e.value.kind == "no_such_session"
    assert str(e.value) == "no session 999999"
    assert isinstance(e.value, dbgctl.Error)


def test_threads_get_their_own_replies(client, fixtures):
    with client.launch([fixtures["spinner"]], kind="exec") as s:
        errors = []

        def pinger():
            try:
                for _ in range(100):
                    assert client.ping() == {"pong": True}
            except BaseException as e:  # noqa: B902
                errors.append(e)

        def statuser():
            try:
                for _ in range(100):
                    assert s.status()["id"] == s.id
            except BaseException as e:  # noqa: B902
                errors.append(e)

        threads = [threading.Thread(target=f)
                   for f in (pinger, statuser, pinger, statuser)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not [t for t in threads if t.is_alive()], "a thread hung"
        assert not errors


def test_session_context_manager_leaves_nothing(client, fixtures):
    with client.launch([fixtures["spinner"]], kind="exec") as s:
        pid = s.status()["pid"]
        assert alive(pid)
    assert s.status()["state"] == "exited"
    assert not alive(pid)


def test_stop_returns_the_record(client, fixtures):
    s = client.launch([fixtures["spinner"]], kind="exec")
    rec = s.stop(timeout=1)
    assert rec["id"] == s.id and rec["state"] == "exited"
    assert rec["exit"] == {"signal": 15, "by": "term"}


def test_lease_ends_with_the_connection(daemon, client, fixtures):
    other = dbgctl.Client(socket=daemon, autostart=False)
    s = other.launch([fixtures["spinner"]], kind="exec", lease=True)
    other.close()
    rec = client.session(s.id).wait(timeout=20)
    assert rec["state"] == "exited"


def test_tcp_with_token(tcp_daemon, fixtures):
    connect, token = tcp_daemon
    with dbgctl.Client(connect=connect, token_file=token) as c:
        assert c.hello()["authentication"]["authenticated"] is True
        with c.launch([fixtures["echo"]], kind="exec",
                      transport=True) as s:
            s.read_until(b"arg0=")
            s.write(b"over tcp\n")
            s.read_until(b"over tcp\n")


def test_tcp_wrong_token(tcp_daemon, tmp_path):
    connect, _ = tcp_daemon
    bad = tmp_path / "bad"
    bad.write_text("not the token\n")
    with pytest.raises(dbgctl.Unauthorized) as e:
        dbgctl.Client(connect=connect, token_file=str(bad))
    assert e.value.code == 6 and str(e.value) == "wrong token"


_KILLED_CLIENT = r"""
import json, sys, time
import dbgctl
c = dbgctl.Client(socket=sys.argv[1], autostart=False)
s = c.launch([sys.argv[2]], kind="exec", lease=True)
rec = s.status()
print(json.dumps({"id": s.id, "pids": [rec["pid"], rec["keeper_pid"]]}),
      flush=True)
time.sleep(600)
"""


def test_lease_ends_with_a_killed_client(daemon, client, fixtures):
    import json
    import signal
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.dirname(
        os.path.dirname(os.path.abspath(dbgctl.__file__))))
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_CLIENT, daemon,
                             fixtures["spinner"]], env=env,
                            stdout=subprocess.PIPE)
    try:
        noted = json.loads(proc.stdout.readline())
        assert all(alive(p) for p in noted["pids"])
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    rec = client.session(noted["id"]).wait(timeout=20)
    assert rec["state"] == "exited"
    deadline = time.monotonic() + 10
    while any(alive(p) for p in noted["pids"]):
        assert time.monotonic() < deadline, "a leased process outlived it"
        time.sleep(0.02)


def test_autostart_runs_a_daemon(tmp_path, monkeypatch):
    dbgctld = os.environ.get("DBGCTLD_BIN")
    if not dbgctld:
        pytest.skip("DBGCTLD_BIN is not set")
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    monkeypatch.setenv("DBGCTL_DAEMON", dbgctld)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    sock = str(tmp_path / "sock")
    with dbgctl.Client(socket=sock) as c:
        assert c.ping() == {"pong": True}
        pid = c.hello()["pid"]
        assert alive(pid)
        c.shutdown(timeout=0)
    deadline = time.monotonic() + 10
    while alive(pid):
        assert time.monotonic() < deadline, "the daemon did not exit"
        time.sleep(0.02)
    with pytest.raises(dbgctl.Error):
        dbgctl.Client(socket=sock, autostart=False)


def test_a_bound_socket_is_waited_for_not_replaced(tmp_path, monkeypatch):
    """A socket another process has bound but not yet listens on (as a
    socket-activating manager's, between bind and listen) refuses
    connections; the client waits for it to listen rather than start a
    daemon of its own beside it."""
    import socket as socketmod
    dbgctld = os.environ.get("DBGCTLD_BIN")
    if not dbgctld:
        pytest.skip("DBGCTLD_BIN is not set")
    monkeypatch.setenv("DBGCTL_DAEMON", dbgctld)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = str(tmp_path / "sock")
    srv = socketmod.socket(socketmod.AF_UNIX, socketmod.SOCK_STREAM)
    srv.bind(path)
    got = {}
    tries = []
    real_try = dbgctl.connection._try_unix

    def counted(p):
        tries.append(p)
        return real_try(p)

    monkeypatch.setattr(dbgctl.connection, "_try_unix", counted)
    started = []
    real_autostart = dbgctl.connection._autostart

    def autostart(p):
        started.append(p)
        return real_autostart(p)

    monkeypatch.setattr(dbgctl.connection, "_autostart", autostart)

    def connect():
        try:
            got["client"] = dbgctl.Client(socket=path)
        except dbgctl.Error as e:
            got["error"] = e

    t = threading.Thread(target=connect)
    t.start()
    # Refused twice over, the client must still be waiting, not gone.
    deadline = time.monotonic() + 10
    while len(tries) < 2 and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(tries) >= 2, "the client tried %d times" % len(tries)
    assert t.is_alive(), "the client gave up or started a daemon: %r" % got
    srv.listen(1)
    peer, _ = srv.accept()
    t.join(10)
    assert "client" in got, got
    assert started == [], "a daemon was started beside the bound socket"
    # Ours is still the socket there: nothing replaced it.
    probe = socketmod.socket(socketmod.AF_UNIX, socketmod.SOCK_STREAM)
    probe.connect(path)
    mine, _ = srv.accept()
    probe.close()
    mine.close()
    got["client"].close()
    peer.close()
    srv.close()
