"""The exceptions of the dbgctl client.

Every error the daemon answers becomes an :class:`Error` (or one of its
subclasses, chosen by the error's ``data.kind``), carrying the daemon's code,
kind, data and message as they were sent (an expect's ``got`` decoded to
bytes).  Errors of the client itself, such
as a lost connection or a reply that did not come in time, are errors too.
"""

import base64

from .stop import target_record

#: The most bytes of an expect's ``got`` that ``str(e)`` shows (its end).
GOT_SHOWN = 512

__all__ = ["Error", "Timeout", "EOF", "Verdict", "DebuggerError",
           "Unauthorized", "NoSuchSession", "ProtocolError", "ConnectionLost",
           "from_reply"]


class Error(Exception):
    """An error from the daemon, or of the connection to it.

    ``str(e)`` is the daemon's message, verbatim, as is ``message``; an
    error that carries an expect's ``got`` (:class:`Timeout`,
    :class:`EOF`) adds what came to ``str(e)``.  ``code`` is the JSON-RPC
    error code (``None`` for an error of the client itself), ``kind`` the
    stable ``data.kind`` string (such as ``"not_running"``), which programs
    should test, and ``data`` the whole data object (``{}`` if none).
    ``target`` is the target record the daemon sent with a run control
    error (a :class:`dbgctl.Stop` for a stopped or exited target; a
    ``timeout`` or ``not_running`` of a wait or a verb carries it), else
    ``None``.
    """

    def __init__(self, message, code=None, kind=None, data=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.kind = kind
        self.data = dict(data) if data else {}
        self.target = target_record(self.data.get("target"))

    def __str__(self):
        """The message, and what came when the error carries an expect's
        ``got`` (see :class:`Timeout`)."""
        got = getattr(self, "got", None)
        if "got" not in self.data or not isinstance(got, bytes):
            return self.message
        if len(got) > GOT_SHOWN:
            return "%s; got %d bytes, the last %d: ...%r" % (
                self.message, len(got), GOT_SHOWN, got[-GOT_SHOWN:])
        return "%s; got %r" % (self.message, got)

    def __repr__(self):
        return "%s(%r, code=%r, kind=%r)" % (type(self).__name__,
                                             self.message, self.code,
                                             self.kind)


class _Got:
    """What came on a stream before an expect gave up: ``got`` (bytes:
    everything from ``from_`` to ``next``, or when that was over 512 KiB
    the last 512 KiB, from ``got_offset``), ``next`` (the stream's end
    then) and ``from_`` (where matching began); ``got`` is ``b""`` and the
    offsets ``None`` for an error that says nothing of a stream.

    ``str(e)`` of an expect's error is the daemon's message followed by
    what came (``; got b'...'``, its last ``GOT_SHOWN`` bytes), so that a
    test report's one line, a JUnit failure's message, shows it;
    ``message`` stays the daemon's words alone."""

    def _take_got(self):
        got = self.data.get("got")
        if isinstance(got, dict):
            got = base64.b64decode(got.get("base64") or "")
        elif isinstance(got, str):
            got = got.encode("utf-8", "surrogateescape")
        if got is not None:
            self.data["got"] = bytes(got)
        self.got = self.data.get("got", b"")
        self.got_offset = self.data.get("got_offset", self.data.get("from"))
        self.next = self.data.get("next")
        self.from_ = self.data.get("from")


class Timeout(Error, _Got):
    """A wait ran out of time (kind ``timeout``).

    Raised for the daemon's own timeouts (a read with no output, an exec gdb
    did not answer, a wait, an expect with no match) and when a reply does
    not come within the client's bound.  An expect's carries what came:
    ``got``, ``got_offset``, ``next``, ``from_`` (also in ``data``).
    """

    def __init__(self, message, code=None, kind=None, data=None):
        super().__init__(message, code=code, kind=kind, data=data)
        self._take_got()


class EOF(Error, _Got):
    """The stream an expect waited on ended with no match (kind ``eof``,
    code 13).  Carries what came, as :class:`Timeout` does: ``got``,
    ``got_offset``, ``next``, ``from_``.
    """

    def __init__(self, message, code=None, kind=None, data=None):
        super().__init__(message, code=code, kind=kind, data=data)
        self._take_got()


class Verdict(Error, _Got):
    """The session's verdict (a deadline's or a silence's) ended a call
    that waited on it (kind ``verdict``, code 16): an expect, a read, a
    write, a wait for the target or, when the verdict holds the session, a
    wait for its end.  ``verdict`` is the verdict (see :meth:`Session.verdict`);
    an expect's also carries what came, as :class:`Timeout` does.
    """

    def __init__(self, message, code=None, kind=None, data=None):
        super().__init__(message, code=code, kind=kind, data=data)
        self._take_got()
        self.verdict = self.data.get("verdict")


class DebuggerError(Error):
    """The debugger refused an exec command (kind ``debugger_error``).

    The message is the debugger's own, such as gdb's ``^error`` text.
    """


class Unauthorized(Error):
    """The daemon refused this peer or token (kind ``unauthorized``)."""


class NoSuchSession(Error):
    """No session has that id or name (kind ``no_such_session``)."""


class ProtocolError(Error):
    """The client could not take what the daemon sent (kind ``protocol``,
    no code): a line over the protocol's 1 MiB limit, a reply whose
    ``id`` is neither a number, a string nor null, JSON nested deeper
    than Python's parser goes, or any other failure of the reader.  The
    client then closes the connection: every call waiting raises this
    error once, and so does every later call.  ``str(e)`` says what came.
    """

    def __init__(self, message):
        super().__init__(message, kind="protocol")


class ConnectionLost(Error):
    """The connection to the daemon ended under a call (kind
    ``connection_lost``, no code): the daemon closed it, died, or could
    not be written to.  A :class:`dbgctl.Client` on a Unix socket makes
    the connection again to the next daemon (see its ``reconnect``) and
    sends again the calls that can be: this is what a call raises when it
    could not be sent again, or no daemon came back in time.
    """

    def __init__(self, message):
        super().__init__(message, kind="connection_lost")
        #: True when no daemon came back to carry on with.
        self.final = False


def hide_frames(excinfo):
    """pytest's ``__tracebackhide__`` of the package's modules: a test's
    traceback leaves out their frames when what it ends in is the
    daemon's answer (an :class:`Error`), so that it ends at the caller's
    line; a failure of the package's own code keeps them."""
    return excinfo is not None and excinfo.errisinstance(Error)


_BY_KIND = {
    "timeout": Timeout,
    "eof": EOF,
    "verdict": Verdict,
    "debugger_error": DebuggerError,
    "unauthorized": Unauthorized,
    "no_such_session": NoSuchSession,
}


def from_reply(error):
    """Build the exception for a JSON-RPC error object ``error``.

    The class is chosen by ``error["data"]["kind"]``; unknown kinds give a
    plain :class:`Error`.
    """
    if not isinstance(error, dict):
        return Error(str(error))
    data = error.get("data")
    if not isinstance(data, dict):
        data = {}
    kind = data.get("kind")
    cls = _BY_KIND.get(kind, Error)
    return cls(str(error.get("message", "")), code=error.get("code"),
               kind=kind, data=data)
