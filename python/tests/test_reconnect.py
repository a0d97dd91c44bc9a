"""The Python client rides out a restart of the daemon.

A daemon of the test's own (auto-started on a socket in a temporary
directory, its sessions waiting DBGCTLD_ADOPT_GRACE=60 s for the next one)
is SIGKILLed while a session streams numbered lines; the client connects
to the next daemon, which it starts and which adopts the session, and its
waiting calls carry on: a stream read by offset gets every line once, a
wait the program's status, an expect its match from its cursor; a read,
which takes output, raises ConnectionLost and the next call works.  The
target paces itself and waits for a file before its second half, so the
kill comes mid-stream; the test never sleeps a fixed time.
"""

import fcntl
import os
import signal
import threading
import time

import pytest

import dbgctl
from dbgctl import connection

#: Lines before the target waits for the go file, and in all.
FIRST = 30
LINES = 90

#: The target's exit code.
EXIT = 7


@pytest.fixture
def own_daemon(tmp_path, monkeypatch):
    """A socket whose daemon clients start (DBGCTLD_ADOPT_GRACE=60), and
    a way to find it; every daemon there is shut down at the end."""
    dbgctld = os.environ.get("DBGCTLD_BIN")
    if not dbgctld:
        pytest.skip("DBGCTLD_BIN is not set")
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    monkeypatch.setenv("DBGCTL_DAEMON", dbgctld)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("DBGCTLD_ADOPT_GRACE", "60")
    sock = str(tmp_path / "sock")
    pids = []
    yield sock, pids
    try:
        # A daemon adopts what a killed one left, and stops it all.
        with dbgctl.Client(socket=sock, reconnect=0) as c:
            pids.append(c.hello()["pid"])
            c.shutdown(timeout=0)
    except dbgctl.Error:
        pass
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _launch(c, go):
    """The streaming session: lineN on its transport, FIRST of them, then
    (once go exists) the rest; it exits EXIT."""
    line = "echo line$i; i=$((i+1)); sleep 0.01"
    script = ("i=0; while [ $i -lt %d ]; do %s; done; "
              "while [ ! -e %s ]; do sleep 0.01; done; "
              "while [ $i -lt %d ]; do %s; done; exit %d"
              % (FIRST, line, go, LINES, line, EXIT))
    return c.launch(["sh", "-c", script], kind="exec", transport=True)


def _follow(s, out, until):
    """Read the target stream by offset, waiting, into out until it ends."""
    offset = 0
    while True:
        res = s.logs(offset=offset, stream="target", wait=True)
        out.append(res["data"])
        offset = res["next_offset"]
        if res.get("ended") and offset >= res["size"]:
            return
        if until is not None and b"line%d\n" % (FIRST - 1) in b"".join(out):
            until.set()


def _want():
    return b"".join(b"line%d\n" % i for i in range(LINES))


def test_waiting_calls_carry_on_with_the_next_daemon(own_daemon, tmp_path):
    sock, pids = own_daemon
    go = str(tmp_path / "go")
    c = dbgctl.Client(socket=sock)
    try:
        first = c.hello()["pid"]
        pids.append(first)
        s = _launch(c, go)
        # The cursor past line0: the expect below waits for line FIRST.
        assert s.expect_exact(b"line0\n", timeout=20).group(0) == b"line0\n"
        out, seen, results = [], threading.Event(), {}

        def run(name, fn):
            try:
                results[name] = fn()
            except BaseException as e:      # reported by the test below
                results[name] = e

        threads = [
            threading.Thread(target=run, args=("follow", lambda: _follow(
                s, out, seen))),
            threading.Thread(target=run, args=("wait", lambda: s.wait())),
            threading.Thread(target=run, args=("expect", lambda: s.expect(
                rb"line(0|%d)\n" % FIRST, timeout=60))),
        ]
        for t in threads:
            t.start()
        assert seen.wait(20), "the first half never came: %r" % out
        os.kill(first, signal.SIGKILL)
        open(go, "w").close()
        for t in threads:
            t.join(60)
            assert not t.is_alive(), "a call never came back: %r" % results
        for name, r in results.items():
            assert not isinstance(r, BaseException), "%s: %r" % (name, r)
        assert b"".join(out) == _want()
        assert results["wait"]["exit"]["code"] == EXIT
        m = results["expect"]
        assert m.group(0) == b"line%d\n" % FIRST and m.start() > 6
        second = c.hello()["pid"]
        pids.append(second)
        assert second != first
        assert s.status()["name"] == s.name
    finally:
        c.close()


def test_a_read_under_the_restart_raises_and_the_next_call_works(
        own_daemon, tmp_path):
    sock, pids = own_daemon
    go = str(tmp_path / "go")
    c = dbgctl.Client(socket=sock)
    try:
        first = c.hello()["pid"]
        pids.append(first)
        s = _launch(c, go)
        s.expect_exact(b"line%d\n" % (FIRST - 1), timeout=20)
        # Take the first half: the read below waits for the second.
        got = b""
        while b"line%d\n" % (FIRST - 1) not in got:
            got += s.read(max=65536, timeout=20)
        res = {}

        def read():
            try:
                res["read"] = s.read(timeout=60)
            except dbgctl.Error as e:
                res["read"] = e

        t = threading.Thread(target=read)
        t.start()
        deadline = time.monotonic() + 20
        while not c._pending and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(first, signal.SIGKILL)
        t.join(60)
        assert isinstance(res.get("read"), dbgctl.ConnectionLost), res
        open(go, "w").close()
        # The next call goes to the next daemon, which has the session.
        assert s.wait(timeout=60)["exit"]["code"] == EXIT
        pids.append(c.hello()["pid"])
        assert pids[-1] != first
    finally:
        c.close()


def test_a_start_that_fails_is_tried_again(own_daemon, tmp_path,
                                           monkeypatch):
    """The next daemon's first start fails on its start lock, as it does
    while a killed daemon's exit lags on a loaded machine (the lock is
    held here instead): the client starts it again, and the waiting call
    carries on with the adopted session."""
    sock, pids = own_daemon
    go = str(tmp_path / "go")
    starts = []
    real = connection._autostart
    monkeypatch.setattr(connection, "AUTOSTART_TIMEOUT", 1.0)
    c = dbgctl.Client(socket=sock)
    try:
        first = c.hello()["pid"]
        pids.append(first)
        s = _launch(c, go)
        s.expect_exact(b"line0\n", timeout=20)
        lock = os.open(sock + ".pid", os.O_RDWR)

        def start(path):
            starts.append(path)
            try:
                return real(path)
            except dbgctl.Error:
                # The first start has failed: the lock goes.
                if len(starts) == 1:
                    os.close(lock)
                raise

        monkeypatch.setattr(connection, "_autostart", start)
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, "the lock stays held"
                time.sleep(0.01)
        open(go, "w").close()
        assert s.wait(timeout=60)["exit"]["code"] == EXIT
        assert len(starts) == 2, starts
        pids.append(c.hello()["pid"])
        assert pids[-1] != first
    finally:
        c.close()


def test_without_reconnect_a_lost_connection_stays_lost(own_daemon):
    sock, pids = own_daemon
    with dbgctl.Client(socket=sock, reconnect=0) as c:
        first = c.hello()["pid"]
        pids.append(first)
        s = c.launch(["sh", "-c", "sleep 60"], kind="exec")
        os.kill(first, signal.SIGKILL)
        with pytest.raises(dbgctl.ConnectionLost):
            s.wait(timeout=30)
        with pytest.raises(dbgctl.ConnectionLost):
            c.ping()


def test_notifications_go_on_with_the_next_daemon(own_daemon, tmp_path):
    sock, pids = own_daemon
    go = str(tmp_path / "go")
    with dbgctl.Client(socket=sock) as c:
        first = c.hello()["pid"]
        pids.append(first)
        s = _launch(c, go)
        c.subscribe(session=s.id, output=False)
        os.kill(first, signal.SIGKILL)
        # The iteration ends with the connection ...
        for _ in c.notifications(timeout=30):
            pass
        open(go, "w").close()
        # ... and goes on, subscribed again, with the next daemon.
        for m in c.notifications(timeout=30):
            p = m.get("params") or {}
            if m.get("method") == "session.state" and \
                    p.get("session") == s.id and p.get("state") == "exited":
                assert p["exit"]["code"] == EXIT
                break
        else:
            pytest.fail("no exit of session %d came from the next daemon"
                        % s.id)
        pids.append(c.hello()["pid"])
        assert pids[-1] != first
