"""dbgctl: drive debugger sessions of the dbgctld daemon from Python.

A :class:`Client` is a connection to the daemon (its Unix socket, started on
demand as dbgctl(1) does, or TCP with a token); :meth:`Client.launch` starts
a session and returns a :class:`Session`, through which a test rig writes to
and reads from the target, runs debugger commands, waits for the target to
stop, reads its fault record and stops it::

    import dbgctl

    with dbgctl.Client() as c:
        with c.launch(["./fw.elf"], transport=True, commands=["run"]) as s:
            s.write(b"ping\\n")
            print(s.read(timeout=2.0))
            print(s.exec("-break-insert main")["results"]["bkpt"])

Errors are :class:`Error`, with the daemon's ``code``, ``kind`` and
``data``; :class:`Timeout`, :class:`DebuggerError`, :class:`Unauthorized`
and :class:`NoSuchSession` are its subclasses by kind.  The protocol is
dbgctl-protocol(7).
"""

from .client import Client, Session, default_socket
from .errors import (DebuggerError, Error, NoSuchSession, Timeout,
                     Unauthorized)

__version__ = "0.1.0"

__all__ = ["Client", "Session", "default_socket", "Error", "Timeout",
           "DebuggerError", "Unauthorized", "NoSuchSession"]
