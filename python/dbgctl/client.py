"""The client of the dbgctld daemon: a connection and the sessions on it.

One :class:`Client` is one connection to the daemon, over its Unix socket or
over TCP with a token.  Requests may be made from several threads at once: a
reader thread matches every reply to its request by id and queues the
daemon's notifications, up to a bound, for :meth:`Client.notifications`.
A :class:`Session` is a handle on one session of the daemon, as
:meth:`Client.launch` returns.
The protocol is described in dbgctl-protocol(7).
"""

import collections
import itertools
import json
import os
import socket
import threading
import time

from . import ssh
from .connection import _read_token, _reconnect_bound, _socket_tcp, \
    _socket_unix, default_socket
from .errors import ConnectionLost, Error, NoSuchSession, from_reply, \
    hide_frames
from .hooks import _LAUNCH_HOOKS, _touched, drives
from .reader import Reader
from .reconnect import Reconnect
from .request import SEND_LOST_WAIT, _Call, _ms, _Slot
from .session import Session

# What the modules above took from this one is still importable from it.
from .connection import (AUTOSTART_TIMEOUT, BOUND_WAIT,  # noqa: F401
                         RECONNECT_GRACE, RECONNECT_NAP, _autostart,
                         _daemon_path, _sessions_wait, _socket_again,
                         _socket_bound, _try_unix)
from .errors import ProtocolError, Timeout  # noqa: F401
from .hooks import (DRIVING, DRIVING_ACTIONS,  # noqa: F401
                    _SESSION_HOOKS, watch_launches, watch_sessions)
from .match import Match, expect_params  # noqa: F401
from .reader import DROPPED, LINE_MAX, STALL_WAIT, _Dropped, \
    _data_bytes, _line_body  # noqa: F401
from .reconnect import RESUMABLE  # noqa: F401
from .request import MARGIN  # noqa: F401
from .session import WRITE_CHUNK  # noqa: F401
from .stop import target_record  # noqa: F401
from .stream import Semihost  # noqa: F401

__all__ = ["Client", "Session", "default_socket"]

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

#: The protocol this client speaks (hello's ``protocol``).
PROTOCOL = 1

#: Notifications a client holds for :meth:`Client.notifications` by default.
MAX_NOTIFICATIONS = 4096

#: Bytes (as the lines came) of the notifications it holds, by default.
MAX_NOTIFICATION_BYTES = 16 * 1024 * 1024

_FOREVER = None


class Client(Reader, Reconnect):
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
