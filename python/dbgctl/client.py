"""The client of the dbgctld daemon: a connection and the sessions on it.

One :class:`Client` is one connection to the daemon, over its Unix socket or
over TCP with a token.  Requests may be made from several threads at once: a
reader thread matches every reply to its request by id and queues the
daemon's notifications, up to a bound, for :meth:`Client.notifications`.
A :class:`Session` is a handle on one session of the daemon, as
:meth:`Client.launch` returns.
The protocol is described in dbgctl-protocol(7).
"""

import base64
import collections
import errno
import itertools
import json
import os
import shutil
import socket
import subprocess
import threading
import time

from .errors import Error, Timeout, from_reply

__all__ = ["Client", "Session", "default_socket"]

#: Bytes of one write request, before base64.
WRITE_CHUNK = 256 * 1024

#: Seconds a request may take beyond the daemon's own timeout.
MARGIN = 10.0

#: Seconds to wait for a socket bound by another process to listen.
BOUND_WAIT = 5.0

#: Seconds to wait for an auto-started daemon's socket.
AUTOSTART_TIMEOUT = 10.0

#: Notifications a client holds for :meth:`Client.notifications` by default.
MAX_NOTIFICATIONS = 4096

#: Bytes (as the lines came) of the notifications it holds, by default.
MAX_NOTIFICATION_BYTES = 16 * 1024 * 1024

#: Seconds a call waits behind a full queue that no one takes from before
#: the reader reads on to its reply, dropping the oldest notifications.
STALL_WAIT = 0.5

#: Seconds a call that could not be sent waits for the reader to find why.
SEND_LOST_WAIT = 2.0

#: The method of the notice that counts notifications the client dropped.
DROPPED = "dbgctl.dropped"

_FOREVER = None


def default_socket():
    """The daemon's socket path, by the rules of dbgctl(1).

    ``DBGCTL_SOCKET``, else ``$XDG_RUNTIME_DIR/dbgctl/sock``, else
    ``/tmp/dbgctl-UID/sock``.
    """
    path = os.environ.get("DBGCTL_SOCKET")
    if path:
        return path
    run = os.environ.get("XDG_RUNTIME_DIR")
    if run:
        return os.path.join(run, "dbgctl", "sock")
    return "/tmp/dbgctl-%d/sock" % os.getuid()


def _daemon_path():
    path = os.environ.get("DBGCTL_DAEMON")
    if path:
        return path
    return shutil.which("dbgctld") or "dbgctld"


class _Slot:
    """Where the reader thread leaves one reply, and who waits for it."""

    __slots__ = ("event", "reply", "thread")

    def __init__(self):
        self.event = threading.Event()
        self.reply = None
        self.thread = threading.get_ident()


def _data_bytes(text):
    """The length of the bytes a base64 string holds."""
    if not isinstance(text, str):
        return 0
    return len(text) // 4 * 3 - len(text[-2:]) + len(text[-2:].rstrip("="))


class _Dropped:
    """The notice of notifications the client dropped, oldest first: how
    many, their bytes, and the span of output each session and stream
    lost (output notices of the daemon's among them), for logs."""

    __slots__ = ("count", "bytes", "spans")

    def __init__(self):
        self.count = 0
        self.bytes = 0
        self.spans = {}

    def add(self, msg, size):
        """Count one dropped notification of ``size`` bytes."""
        self.count += 1
        self.bytes += size
        params = msg.get("params")
        if not isinstance(params, dict):
            return
        offset = params.get("offset")
        if msg.get("method") == "session.output":
            n = _data_bytes(params.get("data"))
        elif msg.get("method") == "session.output.dropped":
            n = params.get("bytes")
        else:
            return
        if not isinstance(offset, int) or not isinstance(n, int):
            return
        key = (params.get("session"), params.get("stream", "console"))
        span = self.spans.setdefault(key, [offset, offset])
        span[1] = max(span[1], offset + n)

    def message(self):
        """The notice, as a notification of the daemon's looks."""
        output = [{"session": k[0], "stream": k[1], "offset": v[0],
                   "bytes": v[1] - v[0]} for k, v in self.spans.items()]
        return {"jsonrpc": "2.0", "method": DROPPED,
                "params": {"notifications": self.count,
                           "bytes": self.bytes, "output": output}}


class Client:
    """A connection to dbgctld.

    ``Client()`` connects to the daemon's Unix socket (``socket``, else
    :func:`default_socket`), starting a daemon there if nothing answers and
    ``autostart`` is true, as dbgctl(1) does: ``dbgctld`` is run from
    ``DBGCTL_DAEMON``, else from PATH.

    ``Client(connect="tcp:HOST:PORT", token_file=PATH)`` connects over TCP
    and presents the token (the first line of ``token_file``, else of
    ``DBGCTL_TOKEN_FILE``) with hello first.  ``connect="unix:PATH"`` names a
    socket path.

    ``request_timeout`` bounds, in seconds, the wait for a reply to a
    request that has no timeout of its own; requests that carry a timeout
    for the daemon wait that long plus a margin.

    ``max_notifications`` (4096) and ``max_notification_bytes`` (16 MiB)
    bound the notifications held for :meth:`notifications`.  Once either is
    reached the client stops reading the connection until some are taken,
    so the daemon's own limits apply, as for any slow subscriber (see
    dbgctl-protocol(7)): it holds a target back, so no target output is
    lost, and it skips console output, saying so with one
    ``session.output.dropped`` notice whose range ``Session.logs`` still
    reads; other notifications it keeps, up to 64 MiB, then closes the
    connection.  A subscriber must therefore keep taking its
    notifications.  This is chosen over dropping the oldest here because
    it loses nothing the daemon cannot give again (a drop in the client
    would lose target output for good), and the daemon's caps, not a
    second set, decide.  Replies come behind those notifications on
    the same connection, so a call may not wait for a queue no one takes
    from: when the only threads taking notifications are themselves
    waiting for replies (or there are none), or none has been taken for
    ``STALL_WAIT`` (0.5 s), the reader reads on to the reply and drops the
    oldest notifications to keep the bound.  The next one taken is then a
    ``dbgctl.dropped`` notice: ``{"notifications": N, "bytes": B,
    "output": [{"session", "stream", "offset", "bytes"}, ...]}``, counting
    what was dropped and the span of output each session and stream lost.

    An error the daemon sends without an id (a line over its limit, no
    descriptors left, a reply it could not send) is the answer of every
    call waiting when it comes, each raising it once; the client stays
    usable, and if the daemon then closes the connection, later calls
    raise that error.

    The client is a context manager: leaving it closes the connection.
    """

    def __init__(self, socket=None, connect=None, token_file=None,
                 autostart=True, request_timeout=60.0,
                 max_notifications=MAX_NOTIFICATIONS,
                 max_notification_bytes=MAX_NOTIFICATION_BYTES):
        if max_notifications < 1 or max_notification_bytes < 1:
            raise ValueError("max_notifications and max_notification_bytes "
                             "must be at least 1")
        self.request_timeout = request_timeout
        self.max_notifications = max_notifications
        self.max_notification_bytes = max_notification_bytes
        self._ids = itertools.count(1)
        self._send_lock = threading.Lock()
        # One lock for the replies awaited, the notifications held and
        # the threads taking them; the reader waits on it for room.
        self._state = threading.Condition(threading.Lock())
        self._pending = {}
        self._notes = collections.deque()
        self._note_bytes = 0
        self._dropped = None
        self._takers = {}
        self._taken_at = time.monotonic()
        self._ended = False
        self._cause = None
        self._subscribed = False
        self._sub_lock = threading.Lock()
        self._closed = False
        self._lost = None
        self._sock = None
        self.address = None
        tcp = None
        if connect is not None:
            if connect.startswith("tcp:"):
                tcp = connect[4:]
            elif connect.startswith("unix:"):
                socket = connect[5:]
            else:
                raise ValueError("connect must be tcp:HOST:PORT or "
                                 "unix:PATH, not %r" % connect)
        if tcp is not None:
            host, sep, port = tcp.rpartition(":")
            if not sep or not port.isdigit():
                raise ValueError("connect must be tcp:HOST:PORT, not %r"
                                 % connect)
            host = host.strip("[]") or "127.0.0.1"
            self.address = (host, int(port))
            self._sock = _socket_tcp(self.address)
        else:
            self.address = socket or default_socket()
            self._sock = _socket_unix(self.address, autostart)
        # How to open another connection like this one (see _watch).
        self._again = {"socket": None if tcp is not None else self.address,
                       "connect": connect if tcp is not None else None,
                       "token_file": token_file, "autostart": False,
                       "request_timeout": request_timeout,
                       "max_notifications": max_notifications,
                       "max_notification_bytes": max_notification_bytes}
        self._reader = threading.Thread(target=self._read_loop,
                                        name="dbgctl-reader", daemon=True)
        self._reader.start()
        if tcp is not None:
            token = _read_token(token_file)
            try:
                self.hello(token=token)
            except BaseException:
                self.close()
                raise

    # The connection.

    def _read_loop(self):
        f = self._sock.makefile("rb")
        lost = None
        try:
            while self._room():
                line = f.readline()
                if not line:
                    break
                size = len(line)
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                self._dispatch(msg, size)
        except (OSError, ValueError) as e:
            lost = e
        finally:
            try:
                f.close()
            except OSError:
                pass
        self._end(lost)

    def _full(self):
        """Whether the notifications held reach the bound (lock held)."""
        held = len(self._notes) + (self._dropped is not None)
        return held >= self.max_notifications or \
            self._note_bytes >= self.max_notification_bytes

    def _stuck(self, now):
        """Whether a call waits behind a full queue that no one else will
        take from (lock held): every thread taking notifications waits
        for a reply itself, or none has taken one for STALL_WAIT."""
        if not self._pending:
            return False
        waiting = {slot.thread for slot in self._pending.values()}
        if all(t in waiting for t in self._takers.values()):
            return True
        return now - self._taken_at >= STALL_WAIT

    def _room(self):
        """Wait, before reading a line, while the notifications held are
        at the bound, so that the daemon's flow control applies, unless a
        call is stuck behind them; false once the client is closed."""
        with self._state:
            while not self._closed and self._full():
                now = time.monotonic()
                if self._stuck(now):
                    break
                wait = None
                if self._pending:
                    wait = max(0.0, self._taken_at + STALL_WAIT - now)
                self._state.wait(wait)
            return not self._closed

    def _dispatch(self, msg, size=0):
        if isinstance(msg, list):
            for m in msg:
                self._dispatch(m, size // max(len(msg), 1))
            return
        if not isinstance(msg, dict):
            return
        if "id" not in msg:
            self._hold(msg, size)
            return
        rid = msg["id"]
        if rid is None:
            if "error" in msg:
                self._answer_all(msg)
            return
        with self._state:
            self._cause = None
            slot = self._pending.pop(rid, None)
        if slot is not None:
            slot.reply = msg
            slot.event.set()

    def _answer_all(self, msg):
        """Take an error without an id (a limit, no descriptors, a reply
        the daemon could not send) as the answer of every call waiting: of
        the one it belongs to when one waits, of all when several do, as
        it cannot tell which. None waits any longer, and nothing of it
        stays to fail later calls, unless the daemon closes the
        connection next: then it is why."""
        with self._state:
            self._cause = msg["error"]
            slots = list(self._pending.values())
            self._pending.clear()
        for slot in slots:
            slot.reply = msg
            slot.event.set()

    def _hold(self, msg, size):
        """Queue a notification for notifications(); at the bound (when a
        call is stuck behind it) drop the oldest instead, counted in the
        dropped notice that comes before the rest."""
        with self._state:
            self._cause = None
            while self._full() and self._notes:
                old, old_size = self._notes.popleft()
                self._note_bytes -= old_size
                self._drop(old, old_size)
            if self._full():
                self._drop(msg, size)
            else:
                self._notes.append((msg, size))
                self._note_bytes += size
            self._state.notify_all()

    def _drop(self, msg, size):
        """Count one notification dropped in the notice (lock held)."""
        if self._dropped is None:
            self._dropped = _Dropped()
        self._dropped.add(msg, size)

    def _take(self, timeout):
        """The next notification, oldest first, waiting up to ``timeout``
        seconds; None when none came or the connection has ended (lock
        held). Taking one lets a paused reader go on."""
        if not self._state.wait_for(lambda: self._notes or self._dropped
                                    or self._ended, timeout):
            return None
        if self._dropped is not None:
            msg, self._dropped = self._dropped.message(), None
        elif self._notes:
            msg, size = self._notes.popleft()
            self._note_bytes -= size
        else:
            return None
        self._taken_at = time.monotonic()
        self._state.notify_all()
        return msg

    def _end(self, cause):
        with self._state:
            if self._lost is None:
                if self._closed:
                    self._lost = Error("the connection was closed")
                elif self._cause is not None:
                    self._lost = from_reply(self._cause)
                else:
                    self._lost = Error("the daemon closed the connection"
                                       + (": %s" % cause if cause else ""))
            slots = list(self._pending.values())
            self._pending.clear()
            self._ended = True
            self._state.notify_all()
        for slot in slots:
            slot.event.set()

    def call(self, method, params=None, timeout=_FOREVER, default=True):
        """Send one request and return its result, a dict.

        ``params`` is the params object; members that are ``None`` are left
        out.  ``timeout`` bounds the wait for the reply, in seconds; when it
        is not given, ``request_timeout`` does (``default=False`` waits for
        as long as it takes).  Raises :class:`Error` (or a subclass) with
        the daemon's error, or :class:`Timeout` when no reply came in time.
        An error the daemon sends without an id ends every call waiting
        when it comes, with that error.
        """
        if timeout is None and default:
            timeout = self.request_timeout
        rid = next(self._ids)
        req = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            req["params"] = {k: v for k, v in params.items()
                             if v is not None}
        line = (json.dumps(req, separators=(",", ":")) + "\n").encode()
        slot = _Slot()
        with self._state:
            if self._lost is not None:
                raise self._lost
            self._pending[rid] = slot
            # A reader paused at the bound sees whether this call is
            # stuck behind it.
            self._state.notify_all()
        try:
            with self._send_lock:
                self._sock.sendall(line)
        except OSError as e:
            # A daemon that closed after saying why (a limit, no
            # descriptors left) left its reason for the reader to find:
            # that, rather than the broken pipe.
            slot.event.wait(SEND_LOST_WAIT)
            with self._state:
                self._pending.pop(rid, None)
                cause = self._cause if self._ended else None
            if slot.reply is not None and "error" in slot.reply:
                raise from_reply(slot.reply["error"]) from e
            if cause is not None:
                raise from_reply(cause) from e
            raise Error("cannot send to the daemon: %s" % e) from e
        if not slot.event.wait(timeout):
            with self._state:
                self._pending.pop(rid, None)
            raise Timeout("no reply to %s within %g s" % (method, timeout),
                          kind="timeout")
        msg = slot.reply
        if msg is None:
            raise self._lost or Error("the connection was closed")
        if "error" in msg:
            raise from_reply(msg["error"])
        return msg.get("result") or {}

    def close(self):
        """Close the connection; requests still waiting get an Error.

        Sessions launched with ``lease=True`` on this connection are then
        stopped by the daemon.
        """
        if self._closed:
            return
        with self._state:
            self._closed = True
            self._state.notify_all()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if self._reader.is_alive() and \
                self._reader is not threading.current_thread():
            self._reader.join(5)
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # The daemon.

    def hello(self, token=None):
        """Who the daemon is; on TCP, present ``token``.  Returns the result."""
        return self.call("hello", {"token": token})

    def ping(self):
        """Proof of life: returns ``{"pong": True}``."""
        return self.call("ping")

    def list(self):
        """Every session of the daemon's life, as a list of dicts.

        The daemon answers in pages that fit its line limit; this fetches
        them all.  A row's ``argv`` may be cut (``argv_cut``); ``status``
        has it whole.
        """
        rows, offset = [], 0
        while True:
            page = self.call("list", {"offset": offset})
            rows.extend(page["sessions"])
            nxt = page.get("next_offset")
            if not isinstance(nxt, int) or nxt <= offset:
                return rows
            offset = nxt

    def remove(self, *sessions, keep_files=False):
        """Remove ended sessions (ids or names) from the daemon's table.

        All or none: a session that has not ended raises :class:`Error`
        of kind ``busy`` (stop it first), an unknown one
        :class:`NoSuchSession`.  Their log and core files go too unless
        ``keep_files``.  Returns the ids removed.
        """
        return self.call("remove", {"sessions": list(sessions),
                                    "keep_files": bool(keep_files)}
                         )["removed"]

    def prune(self, keep_files=False):
        """Remove every ended session, as :meth:`remove` does; returns
        the ids removed (``[]`` when none had ended)."""
        return self.call("prune", {"keep_files": bool(keep_files)}
                         )["removed"]

    def shutdown(self, timeout=None):
        """Stop every session, then have the daemon exit.

        ``timeout`` (seconds) replaces every session's stop timeout.
        Returns the result, ``{"stopped": N}``.
        """
        ms = _ms(timeout)
        return self.call("shutdown", {"timeout": ms},
                         timeout=self.request_timeout + (ms or 0) / 1000)

    # Sessions.

    def launch(self, argv, kind="gdb", transport=False, commands=None,
               name=None, lease=False, **params):
        """Start a session and return its :class:`Session` once it runs.

        ``argv`` is the program and its arguments, ``kind`` one of ``gdb``
        (the default), ``lldb``, ``remote``, ``gdbserver`` or ``exec``.
        ``transport=True`` gives the target's standard input and output to
        :meth:`Session.write` and :meth:`Session.read`; ``commands`` are
        debugger commands, such as ``["run"]``; ``lease=True`` has the
        daemon stop the session when this connection closes.  Every other
        launch parameter of the protocol is passed by its own name
        (``env``, ``cwd``, ``stop_timeout``, ``remote``, ``connect_timeout``,
        ``server``, ``port``, ``lease_grace``, ``fault_breaks``, ...);
        ``cwd`` defaults to the current directory, as dbgctl(1) sends it.
        Raises :class:`Error` if the session cannot be started.
        """
        p = dict(params)
        p.update({"argv": list(argv) if argv is not None else None,
                  "kind": kind, "transport": bool(transport),
                  "commands": list(commands) if commands else None,
                  "name": name, "lease": bool(lease)})
        if p.get("cwd") is None:
            p["cwd"] = os.getcwd()
        bound = self.request_timeout
        bound += (p.get("connect_timeout") or 10000) / 1000
        bound += (p.get("stop_timeout") or 5000) / 1000
        obj = self.call("launch", p, timeout=bound)
        return Session(self, obj)

    def session(self, session):
        """A :class:`Session` for an existing session, by id or name."""
        return Session(self, self.call("status", {"session": session}))

    def subscribe(self, session=None, output=None, streams=None):
        """Ask for notifications (see :meth:`notifications`).

        Returns the result, with ``sessions`` as they are now.
        """
        res = self.call("subscribe", {"session": session, "output": output,
                                      "streams": streams})
        self._subscribed = True
        return res

    def _watch(self, session):
        """A connection of its own subscribed to one session's news (not
        its output), and the session as the subscription found it: a wait
        hears of changes as they come, and takes nothing from the
        notifications this client's user reads."""
        watch = Client(**self._again)
        try:
            res = watch.subscribe(session=session, output=False)
        except BaseException:
            watch.close()
            raise
        return watch, res["sessions"][0]

    def notifications(self, timeout=1.0):
        """Yield the daemon's notifications, as dicts, as they come.

        Subscribes to every session the first time.  Each item is the whole
        message: ``{"jsonrpc": "2.0", "method": "session.state",
        "params": {...}}``.  The iteration ends once ``timeout`` seconds
        pass with none (``None`` waits forever), or once the connection
        ends.

        At most ``max_notifications`` wait to be taken; while that many
        do, the client reads nothing more from the daemon, which then
        skips console output (one ``session.output.dropped`` notice says
        what, for :meth:`Session.logs`) and holds target output back.  A
        call that would wait behind them (made from the thread iterating,
        or with no notification taken for ``STALL_WAIT`` seconds) makes
        the client drop the oldest instead; the next item is then a
        ``dbgctl.dropped`` notice counting them (see :class:`Client`).
        """
        with self._sub_lock:
            if not self._subscribed:
                self.subscribe()
        me = object()
        try:
            while True:
                with self._state:
                    # This thread takes notifications: a call of another
                    # may wait for it to make room.
                    self._takers[me] = threading.get_ident()
                    msg = self._take(timeout)
                if msg is None:
                    return
                yield msg
        finally:
            with self._state:
                self._takers.pop(me, None)


class Session:
    """One session of the daemon, on the :class:`Client` that made it.

    ``id`` and ``name`` are the session's; :meth:`status` asks the daemon
    for the rest.  A session is a context manager: leaving it stops it.
    """

    def __init__(self, client, obj):
        self.client = client
        self.id = obj["id"]
        self.name = obj.get("name")
        self.record = obj

    def __repr__(self):
        return "<dbgctl.Session %d%s>" % (
            self.id, " %r" % self.name if self.name else "")

    def _call(self, method, params=None, **kw):
        p = {"session": self.id}
        if params:
            p.update(params)
        return self.client.call(method, p, **kw)

    def status(self):
        """The session object, as a dict (see dbgctl-protocol(7))."""
        self.record = self._call("status")
        return self.record

    @property
    def fault(self):
        """The fault record of the session, or ``None`` if it has none."""
        return self.status().get("fault")

    @property
    def target(self):
        """The ``target`` member of the session object, or ``None``."""
        return self.status().get("target")

    def write(self, data, eof=False, timeout=None, stream=None):
        """Write all of ``data`` (bytes) to the target's standard input.

        The bytes go in requests of 256 KiB, each waiting for room in the
        target's queue; ``eof=True`` closes its input after them.
        ``timeout`` bounds the wait for each request (seconds; by default
        the client's ``request_timeout``).  ``stream="console"`` types at
        the session's terminal instead.  Returns the number of bytes.
        """
        data = bytes(data)
        done = 0
        while True:
            chunk = data[done:done + WRITE_CHUNK]
            last = done + len(chunk) >= len(data)
            self._call("write", {
                "data": base64.b64encode(chunk).decode("ascii"),
                "eof": True if (eof and last) else None,
                "stream": stream}, timeout=timeout)
            done += len(chunk)
            if last:
                return done

    def read(self, max=4096, timeout=2.0):
        """Take up to ``max`` bytes of the target's output.

        Returns as soon as there are any; ``b""`` once the output has ended
        and all of it has been read.  ``timeout`` is in seconds (``0`` does
        not wait, ``None`` waits for as long as it takes); raises
        :class:`Timeout` when no output came within it.
        """
        ms = _ms(timeout)
        if ms is None:
            res = self._call("read", {"max": max}, default=False)
        else:
            res = self._call("read", {"max": max, "timeout": ms},
                             timeout=ms / 1000 + MARGIN)
        if res.get("eof"):
            return b""
        return base64.b64decode(res.get("data") or "")

    def read_until(self, want, timeout=10.0):
        """Read the target's output until ``want`` has come.

        Returns everything read, which ends with ``want`` or runs a little
        past it (bytes are never put back).  Raises :class:`Timeout`, with
        what came so far in ``data["got"]``, after ``timeout`` seconds, and
        :class:`Error` if the output ends first.
        """
        got = b""
        deadline = time.monotonic() + timeout
        while want not in got:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("no %r from session %d within %g s; it said %r"
                              % (want, self.id, timeout, got),
                              kind="timeout", data={"got": got})
            chunk = self.read(timeout=left)
            if not chunk:
                raise Error("the output of session %d ended before %r; it "
                            "said %r" % (self.id, want, got),
                            data={"got": got})
            got += chunk
        return got

    def exec(self, command, timeout=None):
        """Run a debugger command and return the result, a dict.

        ``{"class": ..., "results": {...}, "output": "..."}``: a command
        beginning with ``-`` goes to gdb/MI as it is, any other is run as a
        console command.  ``timeout`` is gdb's time to answer, in seconds
        (10 by default).  Raises :class:`DebuggerError` with the debugger's
        message when it refuses the command, :class:`Timeout` when it does
        not answer in time.
        """
        ms = _ms(timeout)
        return self._call("exec", {"command": command, "timeout": ms},
                          timeout=(ms or 10000) / 1000 + MARGIN)

    def _wait(self, check, timeout, timed_out):
        """Return what ``check`` finds in the session object, asked as a
        subscription first finds it and again at each of its target, fault
        and state notifications; no polling.  ``timed_out(obj)`` is the
        exception raised once ``timeout`` seconds pass."""
        watch, obj = self.client._watch(self.id)
        news = {"session.target": "target", "session.fault": "fault"}
        try:
            deadline = time.monotonic() + timeout
            found = check(obj)
            while found is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise timed_out(obj)
                for msg in watch.notifications(timeout=left):
                    params = msg.get("params") or {}
                    if params.get("session") != self.id:
                        continue
                    if msg.get("method") in news:
                        key = news[msg["method"]]
                        obj[key] = params.get(key)
                    elif msg.get("method") == "session.state":
                        obj.update(params)
                    found = check(obj)
                    if found is not None:
                        break
                if found is None and watch._lost is not None and \
                        time.monotonic() < deadline:
                    raise watch._lost
            return found
        finally:
            watch.close()

    def wait_target(self, state, timeout=10.0):
        """Wait until the debugged target is in ``state``; return it.

        ``state`` is one of the target states of dbgctl-protocol(7):
        ``running``, ``stopped``, ``exited``.  The target dict (with
        ``stop`` for a stopped target) is returned as soon as the daemon
        says its state is ``state``.  Raises :class:`Timeout` after
        ``timeout`` seconds, and :class:`Error` if the session ends first
        in another state.
        """
        def check(obj):
            target = obj.get("target") or {}
            if target.get("state") == state:
                return target
            if obj.get("state") in ("exited", "failed"):
                raise Error("session %d is %s; its target is %s, not %s"
                            % (self.id, obj["state"],
                               target.get("state", "unknown"), state),
                            kind="not_running", data={"session": obj})
            return None

        def timed_out(obj):
            target = obj.get("target") or {}
            return Timeout("the target of session %d is %s, not %s, after "
                           "%g s" % (self.id, target.get("state", "unknown"),
                                     state, timeout),
                           kind="timeout", data={"target": target})
        return self._wait(check, timeout, timed_out)

    def wait_fault(self, timeout=20.0):
        """Wait for the session's fault record; return it, as soon as the
        daemon has gathered it.  Raises :class:`Timeout` after ``timeout``
        seconds.
        """
        return self._wait(lambda obj: obj.get("fault"), timeout,
                          lambda obj: Timeout("session %d has no fault record "
                                              "after %g s" % (self.id,
                                                              timeout),
                                              kind="timeout"))

    def signal(self, signal="INT"):
        """Send ``signal`` (a name or number) to the terminal's foreground.

        Returns ``{"signal": N, "pgrp": P}``.
        """
        return self._call("signal", {"signal": signal})

    def wait(self, timeout=None):
        """Wait for the session to end, without stopping it.

        Returns the session object; :class:`Timeout` after ``timeout``
        seconds (``None``: as long as it takes).
        """
        ms = _ms(timeout)
        if ms is None:
            self.record = self._call("wait", default=False)
        else:
            self.record = self._call("wait", {"timeout": ms},
                                     timeout=ms / 1000 + MARGIN)
        return self.record

    def stop(self, timeout=None):
        """Stop the session; return its object once every process is gone.

        ``timeout`` is the seconds from SIGTERM to SIGKILL (by default the
        session's stop timeout).  Stopping an ended session returns its
        record unchanged.
        """
        ms = _ms(timeout)
        stop_ms = ms if ms is not None else \
            self.record.get("stop_timeout", 5000)
        res = self._call("stop", {"timeout": ms},
                         timeout=self.client.request_timeout
                         + stop_ms / 1000)
        self.record = res["sessions"][0]
        return self.record

    def remove(self, keep_files=False):
        """Remove the ended session from the daemon's table (see
        :meth:`Client.remove`); its id is never used again."""
        return self.client.remove(self.id, keep_files=keep_files)

    def logs(self, offset=None, lines=None, max=None):
        """Read the session's console output; returns the result dict.

        ``data`` is decoded to bytes.  See ``logs`` in dbgctl-protocol(7).
        """
        res = self._call("logs", {"offset": offset, "lines": lines,
                                  "max": max})
        res["data"] = base64.b64decode(res.get("data") or "")
        return res

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.stop()
        except Error:
            if exc[0] is None:
                raise
        return False


def _ms(seconds):
    if seconds is None:
        return None
    return int(round(seconds * 1000))


def _read_token(path):
    path = path or os.environ.get("DBGCTL_TOKEN_FILE")
    if not path:
        raise ValueError("a TCP connection needs token_file "
                         "(or DBGCTL_TOKEN_FILE)")
    with open(path, encoding="utf-8") as f:
        return f.readline().rstrip("\r\n")


def _socket_tcp(address):
    s = socket.create_connection(address, timeout=AUTOSTART_TIMEOUT)
    s.settimeout(None)
    return s


def _try_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError:
        s.close()
        raise
    return s


def _socket_bound(path):
    """Whether some process has a socket bound at ``path`` (from
    /proc/net/unix): one that refuses connections then is about to
    listen, as a socket-activating manager's is between bind and listen,
    not a dead daemon's."""
    try:
        with open("/proc/net/unix") as f:
            next(f, None)
            for line in f:
                cols = line.split(None, 7)
                if len(cols) == 8 and cols[7].rstrip("\n") == path:
                    return True
    except OSError:
        pass
    return False


def _socket_unix(path, autostart):
    deadline = time.monotonic() + BOUND_WAIT
    while True:
        try:
            return _try_unix(path)
        except OSError as e:
            refused = e.errno == errno.ECONNREFUSED
            if refused and _socket_bound(path):
                # Bound by a process that is about to listen: no daemon
                # of ours may start beside it.
                if time.monotonic() >= deadline:
                    raise Error("connect %s: bound but not listening "
                                "after %g s" % (path, BOUND_WAIT)) from e
                time.sleep(0.01)
                continue
            if not autostart or e.errno not in (errno.ENOENT,
                                                errno.ECONNREFUSED):
                raise Error("connect %s: %s" % (path, e.strerror)) from e
            return _autostart(path)


def _autostart(path):
    """Start dbgctld on ``path`` and connect, as dbgctl(1) does."""
    daemon = _daemon_path()
    deadline = time.monotonic() + AUTOSTART_TIMEOUT
    said = b""
    try:
        # The daemon's first process exits once the socket listens, or
        # non-zero when another daemon holds the start lock: either way,
        # connecting is what tells.
        proc = subprocess.run([daemon, "--listen", "unix:" + path],
                              stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE,
                              start_new_session=True,
                              timeout=AUTOSTART_TIMEOUT)
        said = proc.stderr or b""
    except OSError as e:
        raise Error("cannot start the daemon: %s: %s"
                    % (daemon, e.strerror)) from e
    except subprocess.TimeoutExpired as e:
        said = e.stderr or b""
    delay = 0.005
    while True:
        try:
            return _try_unix(path)
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ECONNREFUSED) or \
                    time.monotonic() >= deadline:
                msg = "could not start a daemon at %s" % path
                text = said.decode(errors="replace").strip()
                if text:
                    msg += ": " + text
                raise Error(msg) from e
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
