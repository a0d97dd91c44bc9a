"""An RTT channel of a session (:meth:`dbgctl.Session.rtt`): the
up-channel's stream ``rttN`` read and matched, the down-channel of the
same number written, with the ``expect``/``read``/``write`` of the
target's UART on :class:`dbgctl.Session`."""

import base64

from .errors import EOF, Timeout

# Bytes one read asks the daemon for at most.
RTT_READ_MAX = 64 * 1024
# Seconds a call may take beyond its own timeout.
RTT_MARGIN = 10.0


class Rtt:
    """RTT channel ``channel`` of ``session``: its up-channel is the stream
    ``rtt<channel>`` (transcript, :meth:`expect`, ``logs``, bundles), its
    down-channel takes :meth:`write`.  ``name`` is the channel's name in
    the firmware (``None`` if the daemon could not read it), ``info`` the
    up-channel's entry of the session's ``rtt`` status.  :meth:`read`
    takes from a position of this object's own, from the stream's first
    byte; :meth:`expect` from the session's cursor on the stream, as
    :meth:`dbgctl.Session.expect` does."""

    def __init__(self, session, channel, info):
        self.session = session
        self.channel = channel
        self.stream = "rtt%d" % channel
        self.info = info
        self.name = info.get("name")
        self.offset = 0

    def __repr__(self):
        return "<dbgctl.Rtt session %s %s %r>" % (
            self.session.id, self.stream, self.name)

    def expect(self, pattern, timeout=30.0, exact=False, flags=0,
               from_=None):
        """:meth:`dbgctl.Session.expect` on the up-channel's stream."""
        return self.session.expect(pattern, timeout=timeout,
                                   stream=self.stream, exact=exact,
                                   flags=flags, from_=from_)

    def expect_exact(self, literal, timeout=30.0, flags=0, from_=None):
        """:meth:`expect` for a literal, str or bytes."""
        return self.expect(literal, timeout=timeout, exact=True,
                           flags=flags, from_=from_)

    def _take(self, max):
        """What the stream has from this object's position, moving past
        it; ``None`` once the stream has ended and all was read."""
        res = self.session.logs(offset=self.offset, max=max,
                                stream=self.stream)
        data = res["data"]
        self.offset = res.get("next_offset", self.offset + len(data))
        if not data and res.get("ended"):
            return None
        return data

    def read(self, max=4096, timeout=2.0):
        """Take up to ``max`` bytes the target wrote on the up-channel.

        Returns as soon as there are any; ``b""`` once the stream has
        ended and all of it was read.  ``timeout`` in seconds (``0`` does
        not wait); raises :class:`dbgctl.Timeout` when none came within it.
        """
        max = min(max, RTT_READ_MAX)
        data = self._take(max)
        if data is None:
            return b""
        if data or timeout == 0:
            if not data:
                raise Timeout("no RTT output on %s" % self.stream)
            return data
        ms = None if timeout is None else max_(1, int(timeout * 1000))
        params = {"session": self.session.id, "stream": self.stream,
                  "patterns": ".", "flags": ["dotall"], "from": self.offset}
        try:
            if ms is None:
                self.session.client.call("expect", params)
            else:
                params["timeout"] = ms
                self.session.client.call("expect", params,
                                         timeout=ms / 1000 + RTT_MARGIN)
        except EOF:
            return b""
        data = self._take(max)
        return data if data is not None else b""

    def read_until(self, want, timeout=10.0):
        """Wait until ``want`` (bytes) came on the up-channel; every byte
        from the session's cursor on the stream through it."""
        start = self.session.cursor(self.stream)
        m = self.expect_exact(want, timeout=timeout)
        head = m.before
        if m.before_offset > start:
            head = self.session._stream_bytes(self.stream, start,
                                              m.before_offset) + head
        return head + m.group(0)

    def write(self, data, timeout=None):
        """Write ``data`` (bytes) to the down-channel: queued in the
        daemon and moved into the target's buffer as it makes room.
        Returns the number of bytes."""
        return self.session.write(bytes(data), timeout=timeout,
                                  stream=self.stream)


def max_(a, b):
    """The larger of a and b (``max`` is a parameter's name above)."""
    return a if a > b else b
