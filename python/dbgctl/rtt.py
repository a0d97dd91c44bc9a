"""An RTT channel of a session (:meth:`dbgctl.Session.rtt`): the
up-channel's stream ``rttN`` read and matched as the UART is
(:class:`dbgctl.stream.Stream`), the down-channel of the same number
written."""

from .stream import Stream


class Rtt(Stream):
    """RTT channel ``channel`` of ``session``: its up-channel is the stream
    ``rtt<channel>`` (transcript, :meth:`expect`, :meth:`read`, ``logs``,
    bundles), its down-channel takes :meth:`write`.  ``name`` is the
    channel's name in the firmware (``None`` if the daemon could not read
    it), ``info`` the up-channel's entry of the session's ``rtt``
    status."""

    def __init__(self, session, channel, info):
        super().__init__(session, "rtt%d" % channel)
        self.channel = channel
        self.info = info
        self.name = info.get("name")

    def __repr__(self):
        return "<dbgctl.Rtt session %s %s %r>" % (
            self.session.id, self.stream, self.name)

    def write(self, data, timeout=None):
        """Write ``data`` (bytes) to the down-channel: queued in the
        daemon and moved into the target's buffer as it makes room.
        Returns the number of bytes."""
        return self.session.write(bytes(data), timeout=timeout,
                                  stream=self.stream)
