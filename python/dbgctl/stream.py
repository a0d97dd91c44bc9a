"""A session's stream by name, with the UART's reading API.

:attr:`Session.semihost` is a :class:`Semihost`: the firmware's
semihosting console of a ``qemu`` session launched with
``semihosting=True`` (see dbgctl(1), "Semihosting"), with the same
:meth:`Stream.expect`, :meth:`Stream.expect_exact`,
:meth:`Stream.read_until` and :meth:`Stream.read` as the session's
target stream, and the firmware's exit status.
"""

from .errors import EOF, Error
from .match import expect_params

#: Seconds a reply may take beyond the daemon's own bound.
MARGIN = 10.0


def _ms(seconds):
    """Seconds as the protocol's milliseconds (None stays None)."""
    return None if seconds is None else max(0, int(seconds * 1000))


class Stream:
    """One of a session's streams, read as the UART is: ``stream`` (and,
    unless a subclass names it otherwise, ``name``) is its protocol name
    (``"semihost"``, ``"target"``, ``"rtt0"``, ...).

    :meth:`expect` and :meth:`expect_exact` are the :class:`Session`'s on
    this stream, sharing its cursor; :meth:`read` takes from a position
    of this object's own, from the stream's first byte.
    """

    def __init__(self, session, name):
        self.session = session
        self.stream = name
        self.name = name
        self._at = 0

    def expect(self, pattern, timeout=30.0, exact=False, flags=0,
               from_=None):
        """:meth:`Session.expect` on this stream; returns the
        :class:`Match`."""
        return self.session.expect(pattern, timeout=timeout,
                                   stream=self.stream, exact=exact,
                                   flags=flags, from_=from_)

    def expect_exact(self, literal, timeout=30.0, flags=0, from_=None):
        """:meth:`expect` for a literal, str or bytes, or a list of them."""
        return self.expect(literal, timeout=timeout, exact=True,
                           flags=flags, from_=from_)

    def read_until(self, want, timeout=10.0):
        """Every byte from the expect cursor through the first ``want``
        (bytes), moving the cursor past it, as
        :meth:`Session.read_until` does on the target stream."""
        start = self.session.cursor(self.stream)
        m = self.expect_exact(want, timeout=timeout)
        head = m.before
        if m.before_offset > start:
            head = self.session._stream_bytes(self.stream, start,
                                              m.before_offset) + head
        return head + m.group(0)

    def read(self, max=4096, timeout=2.0):
        """Up to ``max`` bytes after the last read, as soon as there are
        any; ``b""`` once the stream has ended and all of it was read.

        ``timeout`` is in seconds (``None``: as long as it takes); raises
        :class:`Timeout` when nothing came within it.  Reading moves no
        expect cursor.
        """
        res = self.session.logs(offset=self._at, max=max,
                                stream=self.stream)
        if not res["data"] and not res.get("ended"):
            self._wait_byte(timeout)
            res = self.session.logs(offset=self._at, max=max,
                                    stream=self.stream)
        self._at = res.get("next_offset", self._at)
        return res["data"]

    def _wait_byte(self, timeout):
        """Wait until the stream has a byte at the read position or has
        ended (the daemon's expect of any one byte, from there)."""
        params, _ = expect_params(r"(?s).")
        params.update({"session": self.session.id, "stream": self.stream,
                       "from": self._at})
        ms = _ms(timeout)
        if ms is not None:
            params["timeout"] = ms
        try:
            if ms is None:
                self.session.client.call("expect", params, default=False)
            else:
                self.session.client.call("expect", params,
                                         timeout=ms / 1000 + MARGIN)
        except EOF:
            pass

    def text(self):
        """The whole stream so far, as bytes, from its transcript."""
        size = self.session.logs(max=1, stream=self.stream)["size"]
        return self.session._stream_bytes(self.stream, 0, size)

    def logs(self, **kw):
        """:meth:`Session.logs` of this stream."""
        return self.session.logs(stream=self.stream, **kw)


class Semihost(Stream):
    """The firmware's semihosting console (the stream ``semihost``) and
    its exit: a firmware's ``SYS_EXIT`` ends its session, and
    :attr:`exit_code` is then its status."""

    def __init__(self, session):
        super().__init__(session, "semihost")

    @property
    def exit_code(self):
        """The firmware's status once it has exited by semihosting (the
        target's record ``{"by": "semihosting", "code": N}``), else
        None."""
        target = self.session.status().get("target") or {}
        if target.get("by") != "semihosting":
            return None
        return target.get("code")

    def wait_exit(self, timeout=None):
        """Wait for the session to end; return the firmware's status.

        Raises :class:`Error` (kind ``not_running``) with the session's
        ``error`` when it ended otherwise (QEMU killed or failing, a stop),
        and :class:`Timeout` after ``timeout`` seconds.
        """
        record = self.session.wait(timeout)
        target = record.get("target") or {}
        if target.get("by") == "semihosting":
            return target.get("code")
        raise Error("session %s ended without a semihosting exit: %s" % (
            record.get("id"), record.get("error") or record.get("state")),
            kind="not_running", data={"session": record})
