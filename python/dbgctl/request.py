"""A request on the daemon's connection: where the reader leaves its reply,
the call that waits for it, and how a wait is put to the daemon (in
milliseconds) and bounded here (with a margin)."""

import threading

from .errors import Error, Timeout, from_reply, hide_frames

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

#: Seconds a request may take beyond the daemon's own timeout.
MARGIN = 10.0

#: Seconds a call that could not be sent waits for the reader to find why.
SEND_LOST_WAIT = 2.0


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


def _ms(seconds):
    """Seconds as the protocol's whole milliseconds (``None`` stays)."""
    if seconds is None:
        return None
    return int(round(seconds * 1000))
