"""The client against a peer that misbehaves on purpose, and a flood.

A fake daemon (a socket server in the test speaking the protocol) sends
what the real one is fixed not to: errors without an id for requests it
read, more notifications than anyone takes, and lines the client cannot
take (an id that is a list or an object, JSON nested 100,000 deep, a line
over 1 MiB, one of 256 MiB; over ssh:// too, from a stand-in for ssh).  The last test floods a
subscriber from the real daemon (see conftest.py).
"""

import base64
import contextlib
import json
import os
import socket
import threading
import time

import pytest

import dbgctl

#: The documented default bounds of the notifications a client holds.
MAX_NOTIFICATIONS = 4096
MAX_NOTIFICATION_BYTES = 16 * 1024 * 1024

INTERNAL = {"code": -32603, "message": "the reply would exceed the 1 MiB "
            "line limit", "data": {"kind": "internal_error"}}
LIMIT = {"code": 7, "message": "request line exceeds 1048576 bytes",
         "data": {"kind": "limit"}}
FDS = {"code": 7, "message": "the daemon is out of file descriptors (19937 "
       "of 20000 in use): close idle connections", "data": {"kind": "limit"}}


class FakeDaemon:
    """A Unix socket server that runs ``handler(peer)`` for its first
    client in a thread of its own; ``peer`` reads requests and writes
    lines."""

    def __init__(self, path, handler):
        self.path = path
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(1)
        self.handler = handler
        self.peer = None
        self.error = None
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            conn, _ = self.srv.accept()
            if self.stopping:
                conn.close()
                return
            self.peer = _Peer(conn)
            self.handler(self.peer)
        except OSError as e:
            if self.peer is None or not self.peer.closed:
                self.error = e

    def stop(self):
        if self.peer is None:
            # Nothing connected: end the accept that waits.
            self.stopping = True
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                try:
                    s.connect(self.path)
                except OSError:
                    pass
                self.thread.join(10)
        if self.peer is not None:
            self.peer.close()
        self.srv.close()
        self.thread.join(10)
        assert not self.thread.is_alive(), "the fake daemon hung"


class _Peer:
    """The fake daemon's end of one connection."""

    def __init__(self, conn):
        self.conn = conn
        self.rfile = conn.makefile("rb")
        self.closed = False

    def request(self):
        line = self.rfile.readline()
        if not line:
            return None
        return json.loads(line)

    def send(self, *msgs):
        self.conn.sendall(b"".join(json.dumps(m).encode() + b"\n"
                                   for m in msgs))

    def answer(self, req, result=None):
        self.send({"jsonrpc": "2.0", "id": req["id"],
                   "result": result if result is not None else {}})

    def serve(self):
        """Answer every request as a healthy daemon answers ping."""
        while True:
            req = self.request()
            if req is None:
                return
            self.answer(req, {"pong": True})

    def close(self):
        self.closed = True
        try:
            self.conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


@pytest.fixture
def fake(tmp_path):
    """Start a fake daemon with a handler; always stopped."""
    made = []

    def start(handler):
        d = FakeDaemon(str(tmp_path / "sock"), handler)
        made.append(d)
        return d
    yield start
    for d in made:
        d.stop()


def _idless(error):
    return {"jsonrpc": "2.0", "id": None, "error": error}


def test_idless_error_ends_the_waiting_call_and_the_client_recovers(fake):
    """A launch answered with an error without an id raises that error at
    once, not Timeout; the next ping on the same client is answered."""
    def handler(peer):
        req = peer.request()
        assert req["method"] == "launch"
        peer.send(_idless(INTERNAL))
        peer.serve()

    d = fake(handler)
    with dbgctl.Client(socket=d.path, autostart=False,
                       request_timeout=5) as c:
        t0 = time.monotonic()
        with pytest.raises(dbgctl.Error) as e:
            c.launch(["/bin/true"], kind="exec", connect_timeout=100,
                     stop_timeout=100)
        took = time.monotonic() - t0
        assert not isinstance(e.value, dbgctl.Timeout), e.value
        assert str(e.value) == INTERNAL["message"]
        assert e.value.code == -32603 and e.value.kind == "internal_error"
        assert took < 3, "the error took %.1f s" % took
        assert c.ping() == {"pong": True}
        assert c.ping() == {"pong": True}


def test_idless_error_with_two_calls_waiting_fails_both_once(fake):
    """With two calls waiting, an error without an id fails each of them
    once; their real replies, coming after it, are ignored and the client
    goes on answering later calls."""
    def handler(peer):
        a, b = peer.request(), peer.request()
        peer.send(_idless(INTERNAL))
        peer.answer(a, {"late": True})
        peer.answer(b, {"late": True})
        peer.serve()

    d = fake(handler)
    with dbgctl.Client(socket=d.path, autostart=False,
                       request_timeout=5) as c:
        got = []

        def call():
            try:
                got.append(("result", c.call("status", {"session": 1})))
            except dbgctl.Error as e:
                got.append(("error", e))

        threads = [threading.Thread(target=call) for _ in range(2)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        took = time.monotonic() - t0
        assert len(got) == 2, got
        for how, e in got:
            assert how == "error", got
            assert not isinstance(e, dbgctl.Timeout), e
            assert str(e) == INTERNAL["message"]
        assert took < 3, "the error took %.1f s" % took
        for _ in range(3):
            assert c.ping() == {"pong": True}


@pytest.mark.parametrize("when", ["after a request", "at once"])
def test_idless_error_then_close_fails_at_once_with_its_message(fake, when):
    """An error without an id that the daemon sends before it closes the
    connection (a line over its limit, no descriptors left) is what the
    waiting call and every later one raise, at once."""
    error = LIMIT if when == "after a request" else FDS

    def handler(peer):
        if when == "after a request":
            peer.request()
        peer.send(_idless(error))
        peer.close()

    d = fake(handler)
    with dbgctl.Client(socket=d.path, autostart=False,
                       request_timeout=20) as c:
        t0 = time.monotonic()
        for _ in range(2):
            with pytest.raises(dbgctl.Error) as e:
                c.ping()
            assert not isinstance(e.value, dbgctl.Timeout), e.value
            assert str(e.value) == error["message"]
            assert e.value.kind == "limit"
        assert time.monotonic() - t0 < 10


def _note(i):
    """The i-th of a fake flood: two bytes of console output."""
    return {"jsonrpc": "2.0", "method": "session.output",
            "params": {"session": 1, "stream": "console",
                       "data": base64.b64encode(b"%02d" % (i % 100)).decode(),
                       "offset": 2 * i}}


class _Flood:
    """A handler that answers subscribe, then sends ``n`` notifications
    (counting them as the socket takes them), then answers pings."""

    def __init__(self, n):
        self.n = n
        self.sent = 0
        self.done = threading.Event()

    def __call__(self, peer):
        req = peer.request()
        assert req["method"] == "subscribe"
        peer.answer(req, {"subscribed": True, "sessions": [],
                          "truncated": False})
        step = 100
        for i in range(0, self.n, step):
            peer.send(*[_note(j) for j in range(i, min(i + step, self.n))])
            self.sent = min(i + step, self.n)
        self.done.set()
        peer.serve()


def _held(c):
    """How many notifications the client holds, its notice included."""
    if hasattr(c._notes, "qsize"):
        return c._notes.qsize()     # the unbounded queue of old
    return len(c._notes) + (c._dropped is not None)


def _wait_full(c, bound):
    deadline = time.monotonic() + 30
    while _held(c) < bound:
        assert _held(c) <= bound
        assert time.monotonic() < deadline, "only %d notifications came" \
            % _held(c)
        time.sleep(0.005)


@contextlib.contextmanager
def _flooded(fake, n, bound, **kw):
    """A client of a fake daemon sending n notifications, subscribed and
    with its queue filled to its bound of bound."""
    d = fake(_Flood(n))
    with dbgctl.Client(socket=d.path, autostart=False,
                       max_notifications=bound, **kw) as c:
        c.subscribe()
        _wait_full(c, bound)
        yield c


def _drain(c, timeout=5.0):
    """Every notification held, as (dropped notices, offsets of the
    output notifications)."""
    notices, offsets = [], []
    for m in c.notifications(timeout=timeout):
        if m["method"] == "dbgctl.dropped":
            notices.append(m["params"])
        else:
            offsets.append(m["params"]["offset"])
        if not c._notes and c._dropped is None:
            break
    return notices, offsets


def test_a_flood_no_one_takes_stays_bounded_and_a_call_is_answered(fake):
    """100,000 notifications no one takes: the client holds at most its
    bound (4096 by default) and stops reading, so the daemon's send
    blocks; a ping behind them is answered, the oldest dropped and
    counted in one dbgctl.dropped notice before the newest."""
    n = 100000
    flood = _Flood(n)
    d = fake(flood)
    with dbgctl.Client(socket=d.path, autostart=False,
                       request_timeout=30) as c:
        c.subscribe()
        _wait_full(c, MAX_NOTIFICATIONS)
        # The client reads no more: the rest cannot fit in the sockets.
        assert _held(c) == MAX_NOTIFICATIONS
        assert not flood.done.is_set() and flood.sent < n / 2, flood.sent
        assert (c.max_notifications, c.max_notification_bytes) == \
            (MAX_NOTIFICATIONS, MAX_NOTIFICATION_BYTES)
        t0 = time.monotonic()
        assert c.ping() == {"pong": True}
        assert time.monotonic() - t0 < 20
        assert flood.done.is_set()
        assert _held(c) <= MAX_NOTIFICATIONS
        assert c._note_bytes <= MAX_NOTIFICATION_BYTES
        notices, offsets = _drain(c)
        assert len(notices) == 1, notices
        dropped = notices[0]["notifications"]
        assert dropped + len(offsets) == n
        assert len(offsets) == MAX_NOTIFICATIONS - 1
        # The newest are kept, in order; the notice says what went.
        assert offsets == [2 * i for i in range(dropped, n)]
        assert notices[0]["output"] == [{"session": 1, "stream": "console",
                                         "offset": 0, "bytes": 2 * dropped}]
        assert notices[0]["bytes"] > 0
        assert c.ping() == {"pong": True}


def test_a_flood_taken_slowly_loses_nothing(fake):
    """A subscriber that takes every notification, however slowly, gets
    all of them in order: the client pauses, never drops, and never holds
    more than its bound."""
    n, bound = 20000, 100
    with _flooded(fake, n, bound) as c:
        got = []
        for m in c.notifications(timeout=10):
            assert _held(c) <= bound
            assert m["method"] == "session.output", m
            got.append(m["params"]["offset"])
            if len(got) == n:
                break
        assert got == [2 * i for i in range(n)]
        assert c.ping() == {"pong": True}


def test_a_call_from_the_taking_thread_is_not_deadlocked(fake):
    """The thread iterating notifications may make calls while the queue
    is full: it cannot make room itself, so the reply is read at once
    behind the flood (the oldest dropped), not after a timeout."""
    n, bound = 20000, 50
    with _flooded(fake, n, bound, request_timeout=60) as c:
        notes = c.notifications(timeout=10)
        first = next(notes)
        assert first["params"]["offset"] == 0
        t0 = time.monotonic()
        assert c.ping() == {"pong": True}
        assert time.monotonic() - t0 < 20
        notices, offsets = _drain(c, timeout=10)
        dropped = sum(x["notifications"] for x in notices)
        assert dropped > 0
        assert 1 + dropped + len(offsets) == n
        assert offsets[-1] == 2 * (n - 1)


def test_a_call_waits_no_longer_for_a_taker_that_stopped(fake):
    """A thread that took a notification and then stopped taking holds a
    call of another thread back for STALL_WAIT at most, not until its
    timeout."""
    n, bound = 20000, 50
    with _flooded(fake, n, bound, request_timeout=60) as c:
        notes = c.notifications(timeout=10)
        next(notes)
        got = {}
        t = threading.Thread(target=lambda: got.update(r=c.ping()))
        t0 = time.monotonic()
        t.start()
        t.join(30)
        assert got.get("r") == {"pong": True}
        assert time.monotonic() - t0 < 20
        assert _held(c) <= bound
        notes.close()


def _tiles(pieces, size):
    """Whether (offset, bytes) pieces cover [0, size) exactly once."""
    at = 0
    for off, n in sorted(pieces):
        if off != at:
            return False
        at += n
    return at == size


def test_a_console_flood_from_the_daemon_stays_bounded(daemon):
    """A subscriber to a session printing 12 MiB to its console that does
    not read: the client holds at most its bound, the daemon skips what
    does not fit and says so with session.output.dropped; the output
    taken and the ranges dropped make up the whole log."""
    bound = 64
    sub = dbgctl.Client(socket=daemon, autostart=False,
                        max_notifications=bound)
    other = dbgctl.Client(socket=daemon, autostart=False)
    try:
        sub.subscribe()
        s = other.launch(["/bin/sh", "-c", "yes | head -c 8388608"],
                         kind="exec")
        rec = s.wait(timeout=60)
        assert rec["state"] == "exited", rec
        size = s.logs(max=1)["size"]
        assert size >= 8388608
        assert _held(sub) <= bound
        assert sub._note_bytes <= sub.max_notification_bytes
        pieces, notices = [], 0
        deadline = time.monotonic() + 30
        for m in sub.notifications(timeout=10):
            assert _held(sub) <= bound
            p = m.get("params") or {}
            assert m["method"] != "dbgctl.dropped", m
            if p.get("session") == s.id:
                if m["method"] == "session.output":
                    data = base64.b64decode(p["data"])
                    pieces.append((p["offset"], len(data)))
                elif m["method"] == "session.output.dropped":
                    notices += 1
                    pieces.append((p["offset"], p["bytes"]))
            if _tiles(pieces, size) or time.monotonic() > deadline:
                break
        assert notices >= 1, "the daemon never said it dropped output"
        assert _tiles(pieces, size), "output lost without a notice"
    finally:
        sub.close()
        other.close()


def test_max_notifications_must_be_positive():
    with pytest.raises(ValueError):
        dbgctl.Client(socket=os.devnull, autostart=False,
                      max_notifications=0)


#: Bytes of the longest line the protocol allows (dbgctl-protocol(7)).
LINE_MAX = 1024 * 1024

#: Lines the client cannot take, each of which must end the connection.
BAD_LINES = {
    "an id that is a list":
        b'{"jsonrpc":"2.0","id":[1],"result":{}}\n',
    "an id that is an object":
        b'{"jsonrpc":"2.0","id":{"a":1},"result":{}}\n',
    "JSON nested 100,000 deep":
        b'{"jsonrpc":"2.0","method":"session.output","params":'
        + b"[" * 100000 + b"]" * 100000 + b"}\n",
    "a notification over 1 MiB":
        b'{"jsonrpc":"2.0","method":"session.output","params":{"data":"'
        + b"A" * (2 * LINE_MAX) + b'"}}\n',
}


def _waiting_calls(c, n=3):
    """Start, each in a thread of its own, a ping bounded by the client's
    request_timeout, a call with no timeout and a Session.expect with
    timeout=None; returns a list that gets ``(what, exception or
    result, seconds)`` for each as it ends, and the threads."""
    got = []
    s = dbgctl.Session(c, {"id": 1, "name": "s", "kind": "exec"},
                       launched=True)
    calls = {
        "ping": lambda: c.ping(),
        "call with no timeout": lambda: c.call("wait", {"session": 1},
                                               default=False),
        "expect with timeout=None": lambda: s.expect(b"never", timeout=None,
                                                     stream="console"),
    }

    def run(what, fn):
        t0 = time.monotonic()
        try:
            r = fn()
        except Exception as e:     # noqa: BLE001 (what it raised is checked)
            r = e
        got.append((what, r, time.monotonic() - t0))

    threads = [threading.Thread(target=run, args=kv, daemon=True)
               for kv in list(calls.items())[:n]]
    for t in threads:
        t.start()
    return got, threads


@pytest.mark.parametrize("bad", list(BAD_LINES))
def test_a_line_the_client_cannot_take_ends_every_waiting_call(fake, bad):
    """A reply whose id is a list or an object, JSON nested 100,000 deep
    or a line over 1 MiB, sent while three calls wait (one bounded by
    request_timeout, one without a timeout, an expect with timeout=None):
    each raises ProtocolError at once, saying what came, and so does a
    later call; the client closes the connection."""
    closed = threading.Event()

    def handler(peer):
        for _ in range(3):
            peer.request()
        try:
            peer.conn.sendall(BAD_LINES[bad])
        except OSError:
            pass                    # the client closed on the line's start
        while peer.request() is not None:
            pass
        closed.set()

    d = fake(handler)
    with dbgctl.Client(socket=d.path, autostart=False,
                       request_timeout=60) as c:
        got, threads = _waiting_calls(c)
        for t in threads:
            t.join(15)
        assert len(got) == 3, "calls still waiting: %s" % (
            sorted({"ping", "call with no timeout",
                    "expect with timeout=None"} - {g[0] for g in got}))
        for what, e, took in got:
            assert isinstance(e, dbgctl.ProtocolError), (what, e)
            assert e.kind == "protocol"
            assert "connection was closed" in str(e), str(e)
            assert took < 10, "%s took %.1f s" % (what, took)
        words = {"an id that is a list": "id is list",
                 "an id that is an object": "id is dict",
                 "JSON nested 100,000 deep": "nested too deep",
                 "a notification over 1 MiB": "over the protocol's limit"}
        assert words[bad] in str(got[0][1]), str(got[0][1])
        with pytest.raises(dbgctl.ProtocolError):
            c.ping()
        assert closed.wait(10), "the client did not close the connection"


#: A child that connects to the fake daemon at argv[1], waits for a call
#: with no timeout, and prints its VmHWM (KiB) before and after, and what
#: the call raised.
_RSS_CHILD = r'''
import json, sys, threading
import dbgctl

def hwm():
    with open("/proc/self/status") as f:
        for ln in f:
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1])

c = dbgctl.Client(socket=sys.argv[1], autostart=False)
before = hwm()
got = []

def call():
    try:
        got.append(repr(c.call("ping", default=False)))
    except dbgctl.Error as e:
        got.append(type(e).__name__ + ": " + str(e))

t = threading.Thread(target=call, daemon=True)
t.start()
t.join(float(sys.argv[2]))
print(json.dumps({"before": before, "after": hwm(), "got": got}))
sys.stdout.flush()
import os
os._exit(0)
'''


def test_a_256_mib_line_is_refused_without_being_held(fake):
    """A 256 MiB notification line, sent in 1 MiB pieces while a call
    with no timeout waits: the call raises ProtocolError and the client's
    peak RSS grows by less than 64 MiB (the line is never held whole)."""
    import subprocess
    import sys

    piece = b"A" * LINE_MAX
    sent = [0]

    def handler(peer):
        peer.request()
        try:
            peer.conn.sendall(b'{"jsonrpc":"2.0","method":"session.output",'
                              b'"params":{"data":"')
            for _ in range(256):
                peer.conn.sendall(piece)
                sent[0] += len(piece)
            peer.conn.sendall(b'"}}\n')
        except OSError:
            pass
        while peer.request() is not None:
            pass

    d = fake(handler)
    out = subprocess.run([sys.executable, "-c", _RSS_CHILD, d.path, "30"],
                         capture_output=True, timeout=120, text=True)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    grew = (r["after"] - r["before"]) / 1024
    assert r["got"] and r["got"][0].startswith("ProtocolError:"), r
    assert grew < 64, "the client's peak RSS grew by %.0f MiB" % grew
    assert sent[0] < 256 * LINE_MAX, "the client read the whole line"


#: A stand-in for ssh (DBGCTL_SSH): its stdio is the client's connection,
#: and it answers the client's hello with a reply whose id is a list.
_HOSTILE_SSH = r'''
import sys
sys.stdin.buffer.readline()
sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":[1],"result":{}}\n')
sys.stdout.buffer.flush()
while sys.stdin.buffer.read(65536):
    pass
'''


def test_over_ssh_a_reply_the_client_cannot_take_ends_the_hello(
        tmp_path, monkeypatch):
    """Over ssh:// the same reader reads: a hello answered with an id that
    is a list raises ProtocolError at once, not after request_timeout."""
    import sys
    script = tmp_path / "ssh.py"
    script.write_text(_HOSTILE_SSH)
    monkeypatch.setenv("DBGCTL_SSH", "%s %s" % (sys.executable, script))
    t0 = time.monotonic()
    with pytest.raises(dbgctl.ProtocolError) as e:
        dbgctl.Client(connect="ssh://rig-host", request_timeout=60)
    assert "id is list" in str(e.value)
    assert time.monotonic() - t0 < 10
