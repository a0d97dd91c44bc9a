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
import glob
import itertools
import json
import os
import shutil
import socket
import subprocess
import threading
import time

from . import ssh
from .errors import (ConnectionLost, Error, NoSuchSession, ProtocolError,
                     Timeout, from_reply, hide_frames)
from .match import Match, expect_params
from .stop import target_record
from .stream import Semihost

__all__ = ["Client", "Session", "default_socket"]

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

#: Bytes of one write request, before base64.
WRITE_CHUNK = 256 * 1024

#: Seconds a request may take beyond the daemon's own timeout.
MARGIN = 10.0

#: Seconds to wait for a socket bound by another process to listen.
BOUND_WAIT = 5.0

#: Seconds to wait for an auto-started daemon's socket.
AUTOSTART_TIMEOUT = 10.0

#: The protocol this client speaks (hello's ``protocol``).
PROTOCOL = 1

#: Bytes of the longest line the daemon sends, not counting its CR LF
#: (dbgctl-protocol(7): replies and notifications alike stay within it).
LINE_MAX = 1024 * 1024

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

#: Seconds a client waits for the next daemon after losing its own, unless
#: ``DBGCTLD_ADOPT_GRACE`` (the sessions' own wait) or ``reconnect`` says.
RECONNECT_GRACE = 30.0

#: Seconds between two connects while the next daemon comes up.
RECONNECT_NAP = 0.02

#: The methods a call sends again to the next daemon when the connection
#: is lost under it: those that only read or wait, and say where from
#: (``expect`` only with its ``from``, as :meth:`Session.expect` sends it).
RESUMABLE = frozenset(("logs", "wait", "status", "list", "ping", "hello",
                       "expect"))

_FOREVER = None

#: Callables told of each session a Client of this process drives, as
#: ``hook(client, session)`` (an id, or a name as the caller gave it); see
#: :func:`watch_sessions`.
_SESSION_HOOKS = []

#: Callables that may add to the params of every launch a Client of this
#: process sends, as ``hook(client, params)``; see :func:`watch_launches`.
_LAUNCH_HOOKS = []

#: The methods that drive a session: its input, its expects, its
#: debugger, its run control, its signals and its end.  Requests that only
#: read it (``status``, ``logs``, ``list``, ``wait``, ``subscribe``,
#: ``registers``, ``eval``, a ``bundle`` or ``hold`` of a report) are not
#: heard by watch_sessions; nor are the reading actions of the methods in
#: :data:`DRIVING_ACTIONS`.
DRIVING = frozenset((
    "launch", "write", "read", "pipe", "expect", "exec", "signal", "resize",
    "stop", "deadline", "halt", "resume", "break", "memory", "reset",
    "load", "wait_target", "wait_fault"))

#: The methods of :data:`DRIVING` that also read, by their ``action``:
#: the actions that drive, and the one a request without ``action`` is
#: (dbgctl-protocol(7)).  A memory read or a breakpoint list only looks.
DRIVING_ACTIONS = {
    "break": (("insert", "delete"), "insert"),
    "memory": (("write",), "read"),
}


def watch_sessions(hook):
    """Have ``hook(client, session)`` called, in the calling thread, for
    every request that drives a session (see :func:`drives`: launch,
    write, read, expect, exec, run control, breakpoints set or deleted,
    a memory write, signal, stop) and
    every :class:`Session` a launch makes, by any Client of this process;
    returns a function that ends it.  Reading a session (``status``,
    ``logs``, :meth:`Client.session`, registers, eval, a memory read, a
    breakpoint list) is not heard.  The pytest plugin's
    failure reports learn which sessions a test drove so."""
    _SESSION_HOOKS.append(hook)
    return lambda: _SESSION_HOOKS.remove(hook)


def watch_launches(hook):
    """Have ``hook(client, params)`` called, in the calling thread, with
    the params of every launch any Client of this process is about to
    send; the hook may add to them (``params.setdefault(...)``).  Returns
    a function that ends it.  The pytest plugin gives every session its
    run's ``artifacts`` and its test's deadline so."""
    _LAUNCH_HOOKS.append(hook)
    return lambda: _LAUNCH_HOOKS.remove(hook)


def drives(method, params):
    """Whether a request of ``method`` with ``params`` drives the session
    it names (see :data:`DRIVING`)."""
    if method not in DRIVING:
        return False
    if method not in DRIVING_ACTIONS:
        return True
    actions, default = DRIVING_ACTIONS[method]
    return ((params or {}).get("action") or default) in actions


def _touched(client, session):
    """Tell every hook of watch_sessions that ``session`` was touched."""
    for hook in list(_SESSION_HOOKS):
        hook(client, session)


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
    """Where the reader thread leaves one reply, and who waits for it
    (``None`` while no thread does, for a request sent ahead)."""

    __slots__ = ("event", "reply", "thread", "lost")

    def __init__(self, thread=True):
        self.event = threading.Event()
        self.reply = None
        # Why the connection ended under it, kept with it: the client's
        # own may be a later connection's by the time it is looked at.
        self.lost = None
        self.thread = threading.get_ident() if thread else None


class _Call:
    """A request sent, whose reply :meth:`result` waits for."""

    def __init__(self, client, method, rid, slot):
        self.client = client
        self.method = method
        self.rid = rid
        self.slot = slot

    def done(self):
        """Whether the reply (or the connection's end) has come."""
        return self.slot.event.is_set()

    def result(self, timeout=None, keep=False):
        """The request's result, a dict, waiting up to ``timeout`` seconds
        (``None``: as long as it takes); raises the daemon's error, or
        :class:`Timeout` when no reply came in time, after which the
        request is given up unless ``keep``."""
        slot, state = self.slot, self.client._state
        if not slot.event.is_set():
            with state:
                # A reader paused at the bound sees this thread wait.
                slot.thread = threading.get_ident()
                state.notify_all()
            if not slot.event.wait(timeout):
                with state:
                    late = slot.event.is_set()
                    if not late and keep:
                        slot.thread = None
                    elif not late:
                        self.client._pending.pop(self.rid, None)
                if not late:
                    raise Timeout("no reply to %s within %g s"
                                  % (self.method, timeout), kind="timeout")
        msg = slot.reply
        if msg is None:
            raise slot.lost or self.client._lost or \
                Error("the connection was closed")
        if "error" in msg:
            raise from_reply(msg["error"])
        return msg.get("result") or {}


def _line_body(line):
    """The length of a line read, without its LF and the CR before it."""
    n = len(line)
    if line.endswith(b"\n"):
        n -= 1
        if line.endswith(b"\r\n"):
            n -= 1
    return n


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

    ``Client(connect="ssh://[user@]host[:port][/path/to/socket]")`` reaches
    the daemon of a rig host through ssh, as dbgctl(1) does: it runs
    ``ssh -o BatchMode=yes ... -- dbgctl dial-stdio`` there (see
    :mod:`dbgctl.ssh`; ``DBGCTL_SSH`` and ``DBGCTL_SSH_COMMAND`` apply) and
    says hello first; SSH authenticates, no token is needed.  ``autostart``
    lets dial-stdio start the daemon there.  A daemon of another protocol
    is refused.  Closing the client, or the death of its ssh, is the
    connection's close: leased sessions end.  When ssh fails (no ssh, host
    unreachable, authentication refused, host key unknown or changed,
    dbgctl missing there) the :class:`Error` says which, with ssh's words.

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

    What the client cannot take ends the connection instead: a line over
    the protocol's limit (``LINE_MAX``, 1 MiB, as dbgctl-protocol(7) bounds
    replies and notifications alike; it is read in bounded pieces and
    never held whole), a reply whose ``id`` is a list or an object, JSON
    nested deeper than Python's parser goes, or any other failure of the
    reader thread.  The client then closes the connection (leased
    sessions end) and every call waiting, one without a timeout included,
    and every later call raise :class:`ProtocolError` once each, saying
    what came.  A mature client of a line protocol does this rather than
    skip the line: a reply skipped would leave its call waiting forever,
    and after one broken line nothing that follows can be trusted.  Over
    ``ssh://`` the same reader reads ssh's end of the connection.

    A client on a Unix socket rides out a restart of the daemon: when the
    daemon dies (a crash, SIGKILL) its sessions of the kinds that can be
    adopted wait for the next daemon (see ADOPTION in dbgctld(8)), and the
    client connects to that one, starting it, as dbgctl(1) does, when
    those sessions' keepers wait beside the socket, or waiting for one a
    service manager restarts, for up to ``reconnect`` seconds (by default
    ``DBGCTLD_ADOPT_GRACE``'s, else 30; 0 turns this off).  Calls waiting
    when the connection was lost that only read or wait (``wait``,
    ``logs``, ``status``, ``list``, ``ping``, and ``expect`` with its
    ``from``, as :meth:`Session.expect` and :meth:`Session.logs` send
    them) are sent again, with what is left of their timeouts, and carry
    on where they were: a stream read goes on at its offset, an expect
    from its cursor.  Any other call waiting then (``write``, ``read``,
    ``launch``, ``exec``, ...) raises :class:`ConnectionLost`, as it may
    or may not have been carried out; the next call goes to the next
    daemon.  A session that did not outlive the daemon (one the next
    could not adopt) is then unknown: :class:`NoSuchSession` says the
    daemon restarted.
    A subscription is made again with the same params.  The leases this
    client holds (of its launches with ``lease=True``, and those it took
    with :meth:`claim`) are claimed again with their tokens on the new
    connection before anything is sent again, and as soon as the
    connection is lost, not at the next call: a lease waits only its
    ``lease_grace`` (after a restart, from when the next daemon has
    adopted its session).  A lease that cannot be claimed then (its grace
    ran out, its session was not adopted) is forgotten, and its session
    ends as its lease said.  Over TCP and ``ssh://`` a lost connection
    stays lost.

    ``address`` is where the client connected: the socket's path,
    ``(host, port)`` over TCP, or the ``ssh://`` address.

    The client is a context manager: leaving it closes the connection.
    """

    def __init__(self, socket=None, connect=None, token_file=None,
                 autostart=True, request_timeout=60.0,
                 max_notifications=MAX_NOTIFICATIONS,
                 max_notification_bytes=MAX_NOTIFICATION_BYTES,
                 reconnect=None):
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
        self._sub_params = None
        self._sub_lock = threading.Lock()
        # Which connection this is (one more at each reconnect), and the
        # lock that lets one thread make the next.
        self._generation = 0
        self._reconnect_lock = threading.RLock()
        # The artifacts directory (or None) of each session this client
        # launched, by id: the pytest plugin waits for their automatic
        # bundles.
        self._artifacts = {}
        # The token of each lease this client holds, by session id: those
        # of its leased launches, and those it claimed; claimed again at
        # each reconnect.
        self._leases = {}
        self._closed = False
        self._lost = None
        self._sock = None
        self._ssh = None
        self.address = None
        tcp = None
        if connect is not None:
            if connect.startswith("tcp:"):
                tcp = connect[4:]
            elif connect.startswith("unix:"):
                socket = connect[5:]
            elif ssh.is_url(connect):
                ssh.parse(connect)
            else:
                raise ValueError("connect must be ssh://[USER@]HOST[:PORT]"
                                 "[/SOCKET], tcp:HOST:PORT or unix:PATH, "
                                 "not %r" % connect)
        remote = tcp is not None or ssh.is_url(connect)
        if ssh.is_url(connect):
            self.address = connect
            self._ssh = ssh.Link(connect, autostart)
            self._sock = self._ssh.sock
        elif tcp is not None:
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
        self._reconnect = 0.0 if remote else _reconnect_bound(reconnect)
        # How to open another connection like this one (the pytest plugin's
        # failure reports do).
        self._again = {"socket": None if remote else self.address,
                       "connect": connect if remote else None,
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
        if self._ssh is not None:
            self._hello_ssh()

    def _hello_ssh(self):
        """Say hello over a new ssh link: the daemon there must speak this
        client's protocol (its version may differ; hello's features tell
        what it has).  Closes the client and raises if not."""
        try:
            res = self.hello()
            if res.get("protocol") != PROTOCOL:
                raise Error("%s: the daemon there (dbgctl %s) speaks "
                            "protocol %s, this client protocol %d"
                            % (self.address, res.get("version", "?"),
                               res.get("protocol"), PROTOCOL))
        except BaseException:
            self.close()
            raise

    # The connection.

    def _read_loop(self):
        """Read the daemon's lines until the connection ends; whatever
        stops it (the daemon's close, a line it cannot take, a failure of
        its own) ends every waiting call through _end."""
        f = self._sock.makefile("rb")
        lost = None
        try:
            while self._room():
                # Read no more than a line may hold: a longer one is never
                # held whole, however long it goes on.
                line = f.readline(LINE_MAX + 2)
                if not line:
                    break
                size = len(line)
                if _line_body(line) > LINE_MAX:
                    raise ProtocolError(
                        "the daemon sent a line over the protocol's limit "
                        "of %d bytes; the connection was closed" % LINE_MAX)
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                except RecursionError:
                    raise ProtocolError(
                        "the daemon sent JSON nested too deep to parse; "
                        "the connection was closed") from None
                except ValueError:
                    continue
                self._dispatch(msg, size)
        except ProtocolError as e:
            lost = e
        except (OSError, ValueError) as e:
            lost = e
        except Exception as e:
            # A failure of the reader itself must still end every call.
            lost = ProtocolError("the client could not take the daemon's "
                                 "reply (%s: %s); the connection was closed"
                                 % (type(e).__name__, e))
        finally:
            try:
                f.close()
            except OSError:
                pass
        gen = self._generation
        self._end(lost)
        # Leases wait only their grace: reconnect now to claim them, not
        # at the next call, which may come too late.
        if self._leases and self._reconnect and not self._closed and \
                isinstance(self._lost, ConnectionLost):
            threading.Thread(target=self._keep_leases, args=(gen,),
                             name="dbgctl-leases", daemon=True).start()

    def _keep_leases(self, gen):
        """Reconnect after connection ``gen`` was lost, for the leases
        to be claimed; a failure is the next call's to raise."""
        try:
            self._reconnect_from(gen)
        except Error:
            pass

    def _full(self):
        """Whether the notifications held reach the bound (lock held)."""
        held = len(self._notes) + (self._dropped is not None)
        return held >= self.max_notifications or \
            self._note_bytes >= self.max_notification_bytes

    def _stuck(self, now):
        """Whether a call waits behind a full queue that no one else will
        take from (lock held): every thread taking notifications waits
        for a reply itself, or none has taken one for STALL_WAIT."""
        waiting = self._waiting()
        if not waiting:
            return False
        if all(t in waiting for t in self._takers.values()):
            return True
        return now - self._taken_at >= STALL_WAIT

    def _waiting(self):
        """The threads waiting for replies (lock held)."""
        return {slot.thread for slot in self._pending.values()
                if slot.thread is not None}

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
                if self._waiting():
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
        if not isinstance(rid, (int, float, str, type(None))):
            raise ProtocolError("the daemon sent a reply whose id is %s, "
                                "not a number or string; the connection "
                                "was closed" % type(rid).__name__)
        if rid is None:
            if "error" in msg:
                self._answer_all(msg)
            return
        with self._state:
            self._cause = None
            slot = self._pending.pop(rid, None)
        if slot is not None:
            self._note_lease(msg)
            slot.reply = msg
            slot.event.set()

    def _note_lease(self, msg):
        """Keep the lease token of a launch's answer, whoever waits for
        it (a launch sent with ``wait=False`` too), for a reconnect."""
        res = msg.get("result")
        if isinstance(res, dict) and isinstance(res.get("id"), int) and \
                isinstance(res.get("lease_token"), str):
            self._leases[res["id"]] = res["lease_token"]

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
        """End the connection for every call waiting and every later one,
        with why: the close, a line the client could not take (cause, a
        ProtocolError), the daemon's last error, or ssh's words."""
        refused = isinstance(cause, ProtocolError)
        if refused:
            # Nothing more is read: the daemon (or ssh) must see the close,
            # its leases end, and a send must fail rather than wait.
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        # Over ssh, why it ended is ssh's to say, once it has exited: found
        # before taking the lock, as ssh may take a moment.
        link = None
        if self._ssh is not None and not self._closed and not refused:
            link = self._ssh.error()
        with self._state:
            if self._lost is None:
                if self._closed:
                    self._lost = Error("the connection was closed")
                elif refused:
                    self._lost = cause
                elif self._cause is not None:
                    self._lost = from_reply(self._cause)
                elif link is not None:
                    self._lost = link
                else:
                    self._lost = ConnectionLost(
                        "the daemon closed the connection"
                        + (": %s" % cause if cause else ""))
            slots = list(self._pending.values())
            self._pending.clear()
            self._ended = True
            self._state.notify_all()
        for slot in slots:
            slot.lost = self._lost
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
        start = time.monotonic()
        restarted = False
        while True:
            gen = self._generation
            try:
                return self._send(method, params).result(timeout)
            except ConnectionLost as e:
                if e.final or not self._resumable(method, params):
                    raise
                self._reconnect_from(gen)
            except NoSuchSession as e:
                if not restarted:
                    raise
                raise NoSuchSession("the daemon restarted, and the session "
                                    "did not outlive it: %s" % e.message,
                                    code=e.code, kind=e.kind,
                                    data=e.data) from None
            restarted = True
            # Sent again with what is left of the waits.
            spent = time.monotonic() - start
            if timeout is not None:
                timeout = max(0.0, timeout - spent)
            if params and isinstance(params.get("timeout"), int):
                params = dict(params, timeout=max(
                    0, params["timeout"] - int(spent * 1000)))
            start = time.monotonic()

    def _resumable(self, method, params):
        """Whether a call whose connection was lost is sent again."""
        if not self._reconnect or self._closed or method not in RESUMABLE:
            return False
        return method != "expect" or (params or {}).get("from") is not None

    def _reconnect_from(self, gen):
        """Connect to the next daemon after connection ``gen`` was lost,
        unless another thread has already, and subscribe again; raises
        :class:`ConnectionLost` if no daemon comes back within
        ``reconnect`` seconds."""
        with self._reconnect_lock:
            deadline = time.monotonic() + self._reconnect
            while self._generation == gen and not self._closed:
                self._connect_next(deadline)
                try:
                    self._claim_leases()
                    if self._subscribed:
                        self.call("subscribe", self._sub_params)
                    return
                except ConnectionLost as e:
                    # A dying daemon's socket took the connect: the next.
                    if e.final:
                        raise
                    gen = self._generation

    def _claim_leases(self):
        """Claim every lease this client holds on the new connection,
        before any call is sent again; a lease that cannot be claimed
        (its grace ran out, its session was not adopted) is forgotten: its
        session ends as its lease said.  One the daemon still sees held
        (it has not yet seen the old connection's close) is asked again,
        for ``SEND_LOST_WAIT`` seconds."""
        for sid, token in list(self._leases.items()):
            until = time.monotonic() + SEND_LOST_WAIT
            while True:
                try:
                    self.call("lease", {"session": sid, "token": token})
                except ConnectionLost:
                    raise
                except Error as e:
                    if e.kind == "busy" and time.monotonic() < until:
                        time.sleep(RECONNECT_NAP)
                        continue
                    self._leases.pop(sid, None)
                break

    def _connect_next(self, deadline):
        """Make the connection again, to the daemon that answers now at
        the socket, with a reader of its own (reconnect lock held)."""
        if self._reader.is_alive():
            self._reader.join(SEND_LOST_WAIT)
        try:
            sock = _socket_again(self.address,
                                 max(0.0, deadline - time.monotonic()))
        except ConnectionLost as e:
            # No daemon to carry on with: this call ends with why.
            e.final = True
            raise
        old = self._sock
        with self._state:
            self._sock = sock
            self._lost = None
            self._cause = None
            self._ended = False
            self._generation += 1
            self._state.notify_all()
        try:
            old.close()
        except OSError:
            pass
        self._reader = threading.Thread(target=self._read_loop,
                                        name="dbgctl-reader", daemon=True)
        self._reader.start()

    def _send(self, method, params, waited=True):
        """Send one request; return the :class:`_Call` its reply comes to.
        ``waited=False``: no thread waits for it until one asks for its
        result, so the reader does not take this thread for one stuck."""
        if params and params.get("session") is not None and \
                drives(method, params):
            _touched(self, params["session"])
        rid = next(self._ids)
        req = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            req["params"] = {k: v for k, v in params.items()
                             if v is not None}
        line = (json.dumps(req, separators=(",", ":")) + "\n").encode()
        slot = _Slot(waited)
        with self._state:
            lost, gen = self._lost, self._generation
        # The next call after a lost connection goes to the next daemon.
        if isinstance(lost, ConnectionLost) and self._reconnect and \
                not self._closed:
            self._reconnect_from(gen)
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
            raise ConnectionLost("cannot send to the daemon: %s" % e) from e
        return _Call(self, method, rid, slot)

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
        if self._ssh is not None:
            self._ssh.close()

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

    def launch(self, argv, kind="gdb", transport=None, commands=None,
               name=None, lease=False, wait=True, **params):
        """Start a session and return its :class:`Session` once it runs.

        ``argv`` is the program and its arguments, ``kind`` one of the
        kinds :meth:`hello` lists in ``capabilities`` and dbgctl(1)
        describes (``gdb`` by default; ``qemu`` runs a board's firmware
        under QEMU, with ``machine``, ``cpu``, ``qemu`` and ``qemu_args``).
        ``transport=True`` gives the target's standard input and output to
        :meth:`Session.write` and :meth:`Session.read` (``None``, the
        default: as the kind has it, on for ``qemu``); ``commands`` are
        debugger commands, such as ``["run"]``; ``lease=True`` has the
        daemon stop the session when this connection closes (after
        ``lease_grace`` milliseconds, within which this client, reconnecting,
        or another given :attr:`Session.lease_token`, may claim it: see
        :meth:`claim`; with the default of 0 a lease outlives neither a lost
        connection nor the daemon's restart).  Every other
        launch parameter of the protocol is passed by its own name
        (``env``, ``cwd``, ``stop_timeout``, ``remote``, ``connect_timeout``,
        ``server``, ``port``, ``lease_grace``, ``fault_breaks``, ...);
        ``cwd`` defaults to the current directory, as dbgctl(1) sends it.
        Raises :class:`Error` if the session cannot be started.

        ``wait=False`` returns the Session at once, its launch sent but not
        answered, so that several sessions (two boards) start at the same
        time: the daemon answers a launch only once the session runs, so
        until then the Session's ``id`` is ``None`` and its ``record`` says
        ``"state": "starting"``.  :meth:`Session.wait_ready` waits for the
        answer (and raises the launch's error); any other call of the
        Session waits for it first.  (The protocol's own ``wait``, which
        answers once the session has ended, is ``launch --wait`` of
        dbgctl(1); it is not this.)
        """
        p = dict(params)
        p.update({"argv": list(argv) if argv is not None else None,
                  "kind": kind, "transport": transport,
                  "commands": list(commands) if commands else None,
                  "name": name, "lease": bool(lease)})
        if p.get("cwd") is None:
            p["cwd"] = os.getcwd()
        for hook in list(_LAUNCH_HOOKS):
            hook(self, p)
        bound = self.request_timeout
        bound += (p.get("connect_timeout") or 10000) / 1000
        bound += (p.get("stop_timeout") or 5000) / 1000
        art = p.get("artifacts")
        if wait:
            return Session(self, self.call("launch", p, timeout=bound),
                           launched=True, artifacts=art)
        starting = {"id": None, "name": name, "state": "starting",
                    "kind": kind, "transport": transport}
        return Session(self, starting, launched=True,
                       launching=(self._send("launch", p, waited=False),
                                  bound), artifacts=art)

    def claim(self, session, token):
        """Claim the lease of a leased session (id or name) whose
        connection has gone, with the ``lease_token`` its launch answered
        (:attr:`Session.lease_token`), within its ``lease_grace``: the
        lease is this connection's from then on, as if it had launched
        the session, and is claimed again after a reconnect.  Another
        process may claim it so, given the id and the token.  Returns the
        :class:`Session`.  Raises :class:`Error` of kind ``unauthorized``
        (a wrong token), ``busy`` (a live connection holds the lease),
        ``not_running`` (the lease has ended) or ``invalid_params`` (the
        session has no lease).
        """
        res = self.call("lease", {"session": session, "token": token})
        self._leases[res["id"]] = token
        s = Session(self, res)
        s.lease_token = token
        return s

    def session(self, session):
        """A :class:`Session` for an existing session, by id or name.

        Its expect cursors start at the end of each stream, when first
        used (see :meth:`Session.expect`).
        """
        return Session(self, self.call("status", {"session": session}))

    def subscribe(self, session=None, output=None, streams=None):
        """Ask for notifications (see :meth:`notifications`).

        ``streams`` lists the streams whose output comes as
        ``session.output``: ``"console"`` (the default), ``"target"``,
        ``"semihost"``, ``"watch"`` and ``"rtt0"`` to ``"rtt3"`` (see
        dbgctl-protocol(7), ``subscribe``).  Returns
        the result, with ``sessions`` as they are now.
        """
        self._sub_params = {"session": session, "output": output,
                            "streams": streams}
        res = self.call("subscribe", self._sub_params)
        self._subscribed = True
        return res

    def notifications(self, timeout=1.0):
        """Yield the daemon's notifications, as dicts, as they come.

        Subscribes to every session the first time.  Each item is the whole
        message: ``{"jsonrpc": "2.0", "method": "session.state",
        "params": {...}}``.  The iteration ends once ``timeout`` seconds
        pass with none (``None`` waits forever), or once the connection
        ends; iterating again after a lost connection goes on with the
        next daemon, subscribed again (see :class:`Client`).

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
        with self._state:
            lost, gen = self._lost, self._generation
        # Iterating again after a lost connection goes on with the next
        # daemon, subscribed again.
        if isinstance(lost, ConnectionLost) and self._reconnect and \
                not self._closed:
            self._reconnect_from(gen)
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

    ``client`` is that :class:`Client`: every call of the session is a
    request on its connection.  ``id`` and ``name`` are the session's,
    ``record`` the session object as last seen; :meth:`status` asks the
    daemon for the rest.  A session is a context manager: leaving it
    stops it.

    The session keeps a cursor for :meth:`expect` on each stream, its
    own, whatever other Session objects or connections match on the same
    stream, and apart from the one position :meth:`read` takes from.

    A gdb-family session (gdb, remote, gdbserver, qemu) has run control:
    :meth:`halt`, :meth:`resume` (``until_stop=True`` answers with the next
    stop), :meth:`step`, :meth:`next`, :meth:`finish`,
    :meth:`break_insert`, :meth:`break_list`, :meth:`break_delete`,
    :meth:`eval`, :meth:`read_memory`, :meth:`write_memory`,
    :meth:`registers`, :meth:`reset`, :meth:`load`, and the waits
    :meth:`wait_target`, :meth:`wait_stop` and :meth:`wait_fault`, all
    requests on the same connection.  Verbs that need a stopped target
    halt a running one for their work and resume it.  Each answers with
    the target's record (a :class:`dbgctl.Stop` once it has stopped),
    numbered by ``seq``; pass a ``seq`` as ``after`` to a wait to take only
    what comes after it.  On an exec or lldb session they raise
    :class:`Error` of kind ``not_supported``; a verb the debugger refuses
    raises :class:`DebuggerError` with its message.
    """

    def __init__(self, client, obj, launched=False, launching=None,
                 artifacts=None):
        self.client = client
        self.id = obj["id"]
        self.name = obj.get("name")
        self.record = obj
        #: The token of the session's lease, from a leased launch's answer
        #: (None otherwise): :meth:`Client.claim` takes the lease with it.
        self.lease_token = obj.get("lease_token")
        self._launched = launched
        self._launching = launching
        self._artifacts = artifacts
        self._failed = None
        self._cursors = {}
        self._cursor_lock = threading.Lock()
        self._semihost = None
        if self.id is not None and launched:
            self._launched_now()

    def _launched_now(self):
        """The launch answered: note the session's artifacts on its
        client, and tell watch_sessions."""
        self.client._artifacts[self.id] = self._artifacts
        _touched(self.client, self.id)

    def __repr__(self):
        if self.id is None:
            return "<dbgctl.Session starting%s>" % (
                " %r" % self.name if self.name else "")
        return "<dbgctl.Session %d%s>" % (
            self.id, " %r" % self.name if self.name else "")

    def _call(self, method, params=None, **kw):
        self._ready()
        p = {"session": self.id}
        if params:
            p.update(params)
        return self.client.call(method, p, **kw)

    def _ready(self):
        """Wait for the answer of a launch sent with ``wait=False``; raise
        its error again for a session that never had an id."""
        if self._launching is not None:
            self.wait_ready()
        if self.id is None and self._failed is not None:
            raise self._failed

    def wait_ready(self, timeout=None):
        """Wait until a session launched with ``wait=False`` runs; return
        its object.

        ``timeout`` in seconds (``None``: the launch's own bound, as
        :meth:`Client.launch` waits).  Raises the launch's :class:`Error`
        when the session failed to start (it is then ``failed``), and
        :class:`Timeout` when it did not answer within ``timeout``, after
        which it may be waited for again.  For a session that runs
        already, returns its record at once.
        """
        if self._launching is None:
            return self.record
        call, bound = self._launching
        try:
            obj = call.result(bound if timeout is None else timeout,
                              keep=True)
        except Error as e:
            if isinstance(e, Timeout) and not call.done():
                raise
            # The launch's answer: the session failed (its id, if it got
            # one, still names its record and log).
            self._launching, self._failed = None, e
            self.record = dict(self.record, state="failed")
            if isinstance(e.data.get("session"), int):
                self.id = self.record["id"] = e.data["session"]
            raise
        self._launching = None
        self.id = obj["id"]
        self.name = obj.get("name")
        self.record = obj
        self.lease_token = obj.get("lease_token")
        self._launched_now()
        return obj

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

    @property
    def semihost(self):
        """The firmware's semihosting console, a :class:`dbgctl.stream.Semihost`
        with the target stream's ``expect``, ``expect_exact``,
        ``read_until`` and ``read``, and the firmware's ``exit_code`` and
        ``wait_exit()``: for a ``qemu`` session launched with
        ``semihosting=True`` (its calls raise :class:`Error` of kind
        ``not_supported`` for another)."""
        self._ready()
        if self._semihost is None:
            self._semihost = Semihost(self)
        return self._semihost

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
        :class:`Timeout` when no output came within it.  The position it
        takes from is the session's one for every reader; :meth:`expect`
        and :meth:`read_until` neither move it nor are moved by it.
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
        """Wait until ``want`` (bytes) has come on the target's output.

        Returns every byte from this Session's target cursor through the
        first ``want`` after it, and moves the cursor just past it, so the
        bytes after ``want`` are the next call's: it is
        :meth:`expect_exact` on the ``target`` stream, returning ``before``
        and the match together.  It does not take from the position that
        :meth:`read` takes from (nor does read move it): a rig reads the
        output with one or the other.  Raises :class:`Timeout` after
        ``timeout`` seconds and :class:`EOF` if the output ends first (a
        kind of :class:`Error`), both with what came after the cursor in
        ``got`` and ``data["got"]`` (its last 512 KiB when more came; the
        rest is in ``logs(stream="target")``).
        """
        start = self._cursor("target")
        m = self.expect_exact(want, timeout=timeout, stream="target")
        head = m.before
        if m.before_offset > start:
            # More than the daemon puts in one before: the rest from the
            # transcript.
            head = self._stream_bytes("target", start, m.before_offset) \
                + head
        return head + m.group(0)

    def _stream_bytes(self, stream, start, end):
        """The bytes of ``stream`` in [start, end), from its transcript."""
        out = []
        while start < end:
            res = self.logs(offset=start, max=end - start, stream=stream)
            if res["next_offset"] <= start:
                break
            out.append(res["data"])
            start = res["next_offset"]
        return b"".join(out)

    def _stream(self, stream):
        """The stream an expect with no stream matches on: the target's
        output for a session with a transport, else its console."""
        if stream is not None:
            return stream
        self._ready()
        return "target" if self.record.get("transport") else "console"

    def _cursor(self, stream):
        """Where this Session's next expect on ``stream`` begins: from the
        first byte for a session its client launched, else from the
        stream's end when first asked."""
        with self._cursor_lock:
            if stream in self._cursors:
                return self._cursors[stream]
        at = 0
        if not self._launched:
            at = self.logs(max=1, stream=stream)["size"]
        with self._cursor_lock:
            return self._cursors.setdefault(stream, at)

    def cursor(self, stream=None):
        """The offset in ``stream`` where this Session's next
        :meth:`expect` begins (see :meth:`expect`)."""
        return self._cursor(self._stream(stream))

    def expect(self, pattern, timeout=30.0, stream=None, exact=False,
               flags=0, from_=None):
        """Wait until ``pattern`` matches on one of the session's streams;
        return the :class:`Match`.

        ``pattern`` is a regular expression, str or bytes, a compiled
        ``re.Pattern``, or a list of them (the earliest match wins, a tie
        going to the first; ``Match.index`` tells which).  The daemon
        matches PCRE2 expressions on the stream's bytes, Python's ``re``
        syntax as far as PCRE2 has it (``(?P<name>...)``, ``\\d``, lazy
        quantifiers): a str pattern matches its UTF-8, a bytes one's
        non-ASCII bytes are sent as ``\\xHH``.  ``exact=True`` takes
        literals instead (see :meth:`expect_exact`).

        ``flags`` are ``re`` flags (``re.I``, ``re.M``, ``re.S``,
        ``re.X``; ``re.A`` and ``re.U`` change nothing), or a list of the
        protocol's names (``"caseless"``, ...); a compiled pattern brings
        its own.  Any other flag (``re.L``, ``re.DEBUG``) raises
        ValueError naming it.  Without ``re.M``, ``^`` matches only where
        matching begins.

        ``stream`` is ``"target"`` (the default for a session launched
        with ``transport``), ``"console"`` (the default otherwise),
        ``"server"`` or ``"semihost"`` (see :attr:`semihost`).  Matching begins at this Session's cursor on the
        stream: the stream's first byte for a session its client
        launched, else the stream's end when this Session first expects
        on it; a match moves the cursor past itself, so a number of
        expects in a row see every byte once, and other Sessions and
        connections keep cursors of their own.  A match that more bytes
        could still lengthen (``counter=(\\d+)`` at the end of what came)
        is taken only once a byte after it comes, or the stream ends, or
        at the timeout.  ``from_`` (a stream offset, as ``Match.start()``,
        ``Match.next`` or :meth:`logs`' ``size`` give one) matches from there
        instead of the cursor, earlier or later; a match still moves the
        cursor past itself if it ends beyond it.

        ``timeout`` is in seconds (``None``: until a match or the
        stream's end).  Raises :class:`Timeout` when no match came within
        it, and :class:`EOF` when the stream ended with none, each with
        what came in ``got`` (see :class:`Timeout`); neither moves the
        cursor.  Raises :class:`Error` of kind ``invalid_params`` for a
        pattern PCRE2 refuses (with its reason), ``not_supported`` for a
        stream the session has not.
        """
        stream = self._stream(stream)
        params, index = expect_params(pattern, exact=exact, flags=flags)
        params.update({"stream": stream, "from": self._cursor(stream)
                       if from_ is None else from_})
        ms = _ms(timeout)
        if ms is None:
            res = self._call("expect", params, default=False)
        else:
            params["timeout"] = ms
            res = self._call("expect", params, timeout=ms / 1000 + MARGIN)
        which = res.get("index", 0)
        given = pattern if isinstance(pattern, (list, tuple)) else [pattern]
        known = 0 <= which < len(index)
        m = Match(res, index[which] if known else None,
                  given[which] if known else None)
        with self._cursor_lock:
            self._cursors[stream] = max(self._cursors.get(stream, 0), m.next)
        return m

    def expect_exact(self, literal, timeout=30.0, stream=None, flags=0,
                     from_=None):
        """:meth:`expect` for a literal, str or bytes, or a list of them:
        every byte matches itself."""
        return self.expect(literal, timeout=timeout, stream=stream,
                           exact=True, flags=flags, from_=from_)

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

    def _verb(self, method, params=None, timeout=None, default=10.0):
        """Send a run control request whose ``timeout`` (seconds; ``None``:
        ``default``, the daemon's own) bounds the daemon's work, and wait
        for its answer that long plus a margin."""
        p = dict(params or {})
        p["timeout"] = _ms(timeout)
        bound = timeout if timeout is not None else default
        return self._call(method, p, timeout=bound + MARGIN)

    def wait_target(self, state="stopped", timeout=10.0, after=None):
        """Wait until the debugged target is in ``state``; return its
        record.

        ``state`` is ``"stopped"`` (the default), ``"running"``,
        ``"exited"`` or ``"any"``.  Without ``after``, the current record
        if it is in ``state``, else the first later one; with ``after`` (a
        ``seq``, as :attr:`target_seq` or a :class:`Stop` gives it), the
        first record numbered above it that is in ``state``, so a stop
        from before is never taken for a new one.  A target that exits
        satisfies a wait for ``"stopped"``.  The daemon's transient
        records (its own halts to serve a verb) are skipped.  A stopped or
        exited target's record comes as a :class:`Stop`, any other as a
        dict.

        The daemon waits, on this Session's connection.  Raises
        :class:`Timeout` after ``timeout`` seconds and :class:`Error` of
        kind ``not_running`` if the session ends first, both with the
        current record in ``target``; kind ``not_supported`` for a session
        with no debugged target (``exec``, ``lldb``).
        """
        res = self._verb("wait_target", {"state": state, "after": after},
                         timeout)
        return target_record(res)

    def wait_stop(self, after=None, timeout=10.0):
        """Wait for the target to stop (or exit) after record ``after``;
        return the :class:`Stop`.  :meth:`wait_target` for ``"stopped"``:
        ``after=None`` takes the current stop if the target is stopped."""
        return self.wait_target("stopped", timeout=timeout, after=after)

    def wait_fault(self, after=None, timeout=20.0):
        """Wait for the session's fault record; return it, as soon as the
        daemon has gathered it.

        Without ``after``, the current fault if there is one, else the
        next; with ``after`` (a target ``seq``), the first fault gathered
        at a stop numbered above it, so the fault of an earlier test is
        never taken again (a reset or a load also clears the current one;
        ``faults`` in :meth:`status` keeps the last 16).  The record has
        ``seq`` (its stop's) and ``time``.  Raises :class:`Timeout` after
        ``timeout`` seconds, and errors as :meth:`wait_target`.
        """
        return self._verb("wait_fault", {"after": after}, timeout,
                          default=20.0)

    @property
    def target_seq(self):
        """The ``seq`` of the session's current target record (from
        :meth:`status`): pass it as ``after`` to wait for what comes
        next.  0 for a session whose status has none."""
        target = self.status().get("target") or {}
        return target.get("seq", 0)

    @property
    def faults(self):
        """The last fault records of the session, oldest first (``[]``
        when none)."""
        return self.status().get("faults") or []

    def halt(self, timeout=10.0):
        """Interrupt the running target; return the :class:`Stop` (``by``
        ``"halt"``).  A target stopped already is answered with its
        current record and ``already`` true.  Raises :class:`Timeout`
        (with ``target``) when it did not stop within ``timeout`` seconds.
        """
        res = self._verb("halt", timeout=timeout)
        return target_record(res.get("target"), already=res.get("already"))

    def resume(self, how="continue", until_stop=False, location=None,
               timeout=10.0, halt_on_timeout=False):
        """Resume the target; return the record it left.

        ``how`` is ``"continue"`` (the default), ``"step"``, ``"next"``,
        ``"finish"``, ``"until"`` (to ``location``, then required),
        ``"stepi"`` or ``"nexti"``.  Without ``until_stop``, the
        ``running`` record (a dict) once gdb has resumed it.  With
        ``until_stop=True``, the :class:`Stop` of the first stop (or exit)
        after the resume, never one from before it, however fast it
        comes: there is no window between resuming and waiting.

        ``timeout`` (seconds) bounds the whole call; at it
        :class:`Timeout` is raised with the current record in ``target``
        and the target left running, or halted first with
        ``halt_on_timeout=True`` (``target`` is then that stop).  A target
        that exited, or native gdb's before ``run``, raises :class:`Error`
        of kind ``not_running``.
        """
        res = self._verb("resume", {
            "how": how, "location": location,
            "until_stop": True if until_stop else None,
            "halt_on_timeout": True if halt_on_timeout else None}, timeout)
        return target_record(res.get("target"), already=res.get("already"))

    def step(self, timeout=10.0):
        """Step one source line, into calls; return the :class:`Stop`."""
        return self.resume("step", until_stop=True, timeout=timeout)

    def next(self, timeout=10.0):
        """Step one source line, over calls; return the :class:`Stop`."""
        return self.resume("next", until_stop=True, timeout=timeout)

    def finish(self, timeout=10.0):
        """Run until the current function returns; return the
        :class:`Stop`."""
        return self.resume("finish", until_stop=True, timeout=timeout)

    def break_insert(self, location, condition=None, temporary=False,
                     hardware=False, timeout=None):
        """Insert a breakpoint at ``location`` (``"uart_putc"``,
        ``"board.c:41"``, ``"*0x1f4"``); return gdb's breakpoint record as
        a dict of MI's strings (``number``, ``func``, ``file``, ``line``,
        ``addr``, ``times``...).  A running target is halted for it and
        resumed.  Raises :class:`DebuggerError` with gdb's message for a
        location gdb refuses."""
        res = self._verb("break", {
            "action": "insert", "location": location,
            "condition": condition,
            "temporary": True if temporary else None,
            "hardware": True if hardware else None}, timeout)
        return res["breakpoint"]

    def break_list(self, timeout=None):
        """Every breakpoint of the session, as gdb lists them; the
        session's own fault breakpoints have ``internal`` true."""
        return self._verb("break", {"action": "list"},
                          timeout)["breakpoints"]

    def break_delete(self, *numbers, timeout=None):
        """Delete the breakpoints ``numbers`` (str or int), or with none
        every user breakpoint; return the numbers deleted.  The session's
        fault breakpoints are never deleted: naming one raises
        :class:`Error` of kind ``invalid_params``."""
        return self._verb("break", {
            "action": "delete",
            "numbers": list(numbers) if numbers else None},
            timeout)["deleted"]

    def eval(self, expression, timeout=None):
        """The value of ``expression`` in the target, as gdb prints it (a
        str, such as ``"42"``)."""
        return self._verb("eval", {"expression": expression},
                          timeout)["value"]

    def read_memory(self, address, length, timeout=None, live=False):
        """``length`` bytes of the target's memory from ``address`` (an
        int, or an expression such as ``"&counter"``).  A running target
        is halted for the read and resumed, unless ``live``: then the qemu
        kind reads while it runs (shared RAM or QMP), never halting it,
        and other kinds halt and resume as without (dbgctl-protocol(7),
        memory)."""
        res = self._verb("memory", {"action": "read", "address": address,
                                    "length": length,
                                    "live": True if live else None},
                         timeout)
        return base64.b64decode(res.get("base64") or "")

    def write_memory(self, address, data, timeout=None, live=False):
        """Write ``data`` (bytes) to the target's memory at ``address``;
        return the number of bytes written.  ``live`` as for
        :meth:`read_memory`: only a machine whose RAM the daemon shares
        (mps2-an385, ...) takes a live write, inside that RAM."""
        res = self._verb("memory", {
            "action": "write", "address": address,
            "data": {"base64": base64.b64encode(bytes(data)).decode()},
            "live": True if live else None},
            timeout)
        return res.get("length", len(data))

    def watch(self, *expressions, hz=None, timeout=None):
        """Sample ``expressions`` (names of variables: ``"counter"``,
        ``"state.ticks"``) ``hz`` times a second (the daemon's default 10;
        at most 1000 through shared RAM, 200 through QEMU's monitor) while
        the target runs, never halting it; return a
        :class:`dbgctl.watch.Watch`, an iterator of samples and a context
        manager that stops the watch.  gdb resolves each expression once;
        one that is not an lvalue, or of a type watch does not decode,
        raises :class:`Error` of kind ``invalid_params``.  Only the qemu
        kind has live memory to watch (dbgctl-protocol(7), watch)."""
        from .watch import Watch
        return Watch(self, self._verb("watch", {
            "expressions": list(expressions), "hz": hz}, timeout))

    def rtt(self, channel=0, poll_hz=None, address=None, timeout=None):
        """RTT channel ``channel`` of the running target, as a
        :class:`dbgctl.rtt.Rtt` with ``expect``/``read``/``write`` like the
        target's UART.  The first call starts RTT: the daemon finds the
        control block at ``address`` (a number or an expression), else at
        the symbol ``_SEGGER_RTT``, else by its id in RAM, and polls it
        ``poll_hz`` times a second (100 by default, at most 1000) over the
        shared RAM, never halting the target (the qemu kind on machines
        such as mps2-an385; dbgctl-protocol(7), rtt).  A later call with
        ``poll_hz`` changes the rate.  Raises :class:`Error`
        (``invalid_params``) when the control block has no such up-channel.
        """
        from .rtt import Rtt
        res = self._verb("rtt", {"poll_hz": poll_hz, "address": address},
                         timeout)
        up = res.get("up") or []
        if not 0 <= channel < len(up):
            raise Error("session %s's RTT control block has %d up-channel%s;"
                        " %d is not one" % (self.id, len(up),
                                            "" if len(up) == 1 else "s",
                                            channel),
                        kind="invalid_params")
        return Rtt(self, channel, up[channel])

    def registers(self, *names, timeout=None):
        """The target's registers as ``{name: value}``, by the names gdb
        gives them on this architecture (``pc``, ``sp``, ``xpsr``, ``rip``
        ...), integer registers in hex; ``names`` picks some.  An unknown
        name raises :class:`Error` of kind ``invalid_params`` that lists
        the target's."""
        return self._verb("registers", {
            "names": list(names) if names else None}, timeout)["registers"]

    def reset(self, halt=False, timeout=None):
        """Reset the target by its kind's recipe (or the launch's
        ``reset_commands``) and clear the fault record.

        Returns the answer: ``target``, the record it left (a
        :class:`Stop` with reason ``"reset"`` when ``halt``, else the
        ``running`` record) and ``fault_cleared`` (whether there was a
        fault record to clear; absent when native gdb ran the program
        again).  A kind with no recipe raises :class:`Error` of kind
        ``not_supported``.
        """
        res = self._verb("reset", {"halt": True if halt else None}, timeout)
        res["target"] = target_record(res.get("target"))
        return res

    def load(self, path=None, timeout=60.0, halt=False):
        """Write a program to the target (``path``, another build, or by
        default the session's own), then reset it, as :meth:`reset` does.

        Returns the answer: ``target``, ``file`` and ``fault_cleared``.
        A session that runs a host program (native gdb) raises
        :class:`Error` of kind ``not_supported``.
        """
        res = self._verb("load", {
            "file": os.path.abspath(path) if path is not None else None,
            "halt": True if halt else None}, timeout, default=60.0)
        res["target"] = target_record(res.get("target"))
        return res

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

    def deadline(self, seconds):
        """Give the running session a deadline ``seconds`` from now, moving
        the one it has, or clear it (``None`` or 0).  When it runs out the
        daemon records a verdict (see ``verdict`` in dbgctl-protocol(7))
        and stops or holds the session, whether or not a client is there.
        Returns the session object's ``deadline`` (or None)."""
        ms = _ms(seconds) or 0
        return self._call("deadline", {"ms": ms}).get("deadline")

    def verdict(self):
        """Why the session is ending, once it has a verdict (a deadline, a
        silence or a fault), else None: a reset, a load or a new run ends
        it, as it ends the fault (``status()["verdicts"]`` keeps it).  A
        deadline's or a silence's verdict ends the calls waiting on the
        session (expect, read, wait_target ...) with :class:`Verdict`."""
        self.record = self.status()
        return self.record.get("verdict")

    def hold(self, ttl=None, note=None, halt=True):
        """Hold the running session for ``ttl`` seconds (the daemon's
        default when None): it outlives its lease's connection, its
        gdb-family target halted unless ``halt=False``, and is stopped
        when the time runs out.  ``ttl=0`` releases it.  ``note`` says who
        holds it and why.  Returns the result: ``hold`` (None after a
        release) and, for the gdb family, ``target``."""
        return self._call("hold", {"ttl": ttl, "note": note,
                                   "halt": None if halt else False})

    def bundle(self, path, tar=False, timeout=60.0):
        """Have the daemon write the session's bundle (manifest, logs,
        transcripts, backtraces, registers and a core where cheap) to the
        absolute ``path``, a directory, or a ``.tar.gz`` file with
        ``tar=True``.  Returns the result (``path``, ``files``, ...)."""
        return self._call("bundle", {"path": os.path.abspath(path),
                                     "tar": True if tar else None},
                          timeout=timeout)

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
        # Ended: its lease has nothing left to claim.
        self.client._leases.pop(self.id, None)
        return self.record

    def remove(self, keep_files=False):
        """Remove the ended session from the daemon's table (see
        :meth:`Client.remove`); its id is never used again."""
        self._ready()
        return self.client.remove(self.id, keep_files=keep_files)

    def logs(self, offset=None, lines=None, max=None, stream="console",
             timestamps=False, wait=False):
        """Read a stream's transcript; returns the result dict.

        ``stream`` is ``"console"`` (the default), ``"target"``,
        ``"target-in"``, ``"server"``, ``"semihost"`` or ``"watch"``;
        ``timestamps=True`` adds
        ``times``, ``[[offset, unix_time], ...]``: a byte at offset X came
        at the time of the last entry at or before X.  ``wait=True``
        waits, as long as it takes, for a byte at ``offset`` or the
        stream's end.  ``data`` is decoded to bytes.  See ``logs`` in
        dbgctl-protocol(7).
        """
        res = self._call("logs", {
            "offset": offset, "lines": lines, "max": max,
            "stream": None if stream == "console" else stream,
            "timestamps": True if timestamps else None,
            "wait": True if wait else None}, default=not wait)
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


def _reconnect_bound(reconnect):
    """The seconds to wait for the next daemon: ``reconnect``, else
    ``DBGCTLD_ADOPT_GRACE``'s (the sessions wait that long), else 30."""
    if reconnect is not None:
        return max(0.0, float(reconnect))
    try:
        grace = float(os.environ.get("DBGCTLD_ADOPT_GRACE", ""))
    except ValueError:
        grace = 0.0
    return grace if grace > 0 else RECONNECT_GRACE


def _sessions_wait(path):
    """Whether sessions of a daemon that died wait at ``path`` for the
    next one: their keepers' sockets, ``PATH.kID.N``, beside it."""
    return any(os.path.basename(p).startswith(os.path.basename(path) + ".k")
               for p in glob.glob(glob.escape(path) + ".k*"))


def _socket_again(path, bound):
    """Connect to the next daemon at ``path`` after one was lost: start
    it (once) when sessions wait to be adopted, else wait for one a
    service manager starts while it has the socket bound; raises
    :class:`ConnectionLost` when none can come or none came in time."""
    deadline = time.monotonic() + bound
    started = False
    while True:
        try:
            return _try_unix(path)
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ECONNREFUSED):
                raise ConnectionLost("lost connection to the daemon; "
                                     "connect %s: %s"
                                     % (path, e.strerror)) from e
        waiting, bound_now = _sessions_wait(path), _socket_bound(path)
        if not waiting and not bound_now:
            raise ConnectionLost("lost connection to the daemon, and no "
                                 "session waits for another one at %s"
                                 % path)
        if waiting and not bound_now and not started:
            started = True
            try:
                return _autostart(path)
            except Error:
                pass    # a service manager's daemon may still come
        if time.monotonic() >= deadline:
            raise ConnectionLost("lost connection to the daemon, and no "
                                 "daemon came back at %s within %g s"
                                 % (path, bound))
        time.sleep(RECONNECT_NAP)
