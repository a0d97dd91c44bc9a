"""dbgctl: drive debugger sessions of the dbgctld daemon from Python.

A :class:`Client` is a connection to the daemon (its Unix socket, started on
demand as dbgctl(1) does, or TCP with a token); :meth:`Client.launch` starts
a session and returns a :class:`Session`, through which a test rig writes to
and reads from the target, runs debugger commands, waits for the target to
stop, reads its fault record and stops it::

    import dbgctl

    with dbgctl.Client() as c:
        with c.launch(["./fw.elf"], transport=True, commands=["run"]) as s:
            s.expect(rb"ready\\r\\n")
            s.write(b"ping\\n")
            print(s.expect(rb"pong (\\d+)").group(1))
            s.break_insert("handle_ping")
            stop = s.resume(until_stop=True, timeout=10)
            print(stop.seq, stop.reason, stop.func, s.eval("count"))

Errors are :class:`Error`, with the daemon's ``code``, ``kind`` and
``data``; :class:`Timeout`, :class:`EOF`, :class:`DebuggerError`,
:class:`Unauthorized`, :class:`NoSuchSession` and :class:`Verdict` (a
call the session's verdict ended) are its subclasses by kind;
:class:`ProtocolError` is what every call raises once the client has closed
a connection whose daemon sent what it cannot take (a line over 1 MiB);
:class:`ConnectionLost` what a call raises when the daemon went away under
it and the call could not be carried on with the next daemon (a client on
a Unix socket connects to that one, which adopts the sessions that outlive
a daemon, and sends the waiting calls again: see :class:`Client`).
:meth:`Session.expect` waits for a pattern on one of a session's streams
and returns a :class:`Match`; :attr:`Session.semihost` reads a firmware's
semihosting console the same way and gives its exit status.  Run control (gdb family: ``halt``,
``resume``, ``break_insert``, ``eval``, ``read_memory``, ``registers``,
``reset``, ``load``, ``wait_stop``, ``wait_fault``) goes over the same
connection and answers with the target's record, a :class:`Stop` once it
has stopped; its ``seq`` passed as ``after`` makes a wait race-free.  The
protocol is dbgctl-protocol(7).
"""

from .client import Client, Session, default_socket
from .errors import (EOF, ConnectionLost, DebuggerError, Error,
                     NoSuchSession, ProtocolError, Timeout, Unauthorized,
                     Verdict)
from .match import Match
from .run_control import Frames
from .stop import Stop

__version__ = "0.1.0"

__all__ = ["Client", "Session", "Match", "Stop", "Frames", "default_socket",
           "Error",
           "Timeout", "EOF", "Verdict", "DebuggerError", "Unauthorized",
           "NoSuchSession", "ProtocolError", "ConnectionLost"]
