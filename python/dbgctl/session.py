"""A :class:`Session`, the handle on one session of the daemon that a
:class:`dbgctl.Client` gives: its launch's answer, its target's input and
output, the expects on its streams, its debugger, and its end."""

import base64
import os
import threading

from .errors import Error, Timeout, hide_frames
from .hooks import _touched
from .match import Match, expect_params
from .request import MARGIN, _ms
from .run_control import RunControl
from .stream import Semihost

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

#: Bytes of one write request, before base64.
WRITE_CHUNK = 256 * 1024


class Session(RunControl):
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
        """A request about this session, once its launch has answered."""
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
