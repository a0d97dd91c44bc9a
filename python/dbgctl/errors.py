"""The exceptions of the dbgctl client.

Every error the daemon answers becomes an :class:`Error` (or one of its
subclasses, chosen by the error's ``data.kind``), carrying the daemon's code,
kind, data and message as they were sent.  Errors of the client itself, such
as a lost connection or a reply that did not come in time, are errors too.
"""

__all__ = ["Error", "Timeout", "DebuggerError", "Unauthorized",
           "NoSuchSession", "from_reply"]


class Error(Exception):
    """An error from the daemon, or of the connection to it.

    ``str(e)`` is the daemon's message, verbatim.  ``code`` is the JSON-RPC
    error code (``None`` for an error of the client itself), ``kind`` the
    stable ``data.kind`` string (such as ``"not_running"``), which programs
    should test, and ``data`` the whole data object (``{}`` if none).
    """

    def __init__(self, message, code=None, kind=None, data=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.kind = kind
        self.data = dict(data) if data else {}

    def __repr__(self):
        return "%s(%r, code=%r, kind=%r)" % (type(self).__name__,
                                             self.message, self.code,
                                             self.kind)


class Timeout(Error):
    """A wait ran out of time (kind ``timeout``).

    Raised for the daemon's own timeouts (a read with no output, an exec gdb
    did not answer, a wait) and when a reply does not come within the
    client's bound.
    """


class DebuggerError(Error):
    """The debugger refused an exec command (kind ``debugger_error``).

    The message is the debugger's own, such as gdb's ``^error`` text.
    """


class Unauthorized(Error):
    """The daemon refused this peer or token (kind ``unauthorized``)."""


class NoSuchSession(Error):
    """No session has that id or name (kind ``no_such_session``)."""


_BY_KIND = {
    "timeout": Timeout,
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
