"""Where a debugged target stopped: :class:`Stop`.

The daemon numbers every target record of a gdb-family session (``seq``,
1 for the first, one more for each later one; see dbgctl-protocol(7)).
A :class:`Stop` is such a record for a target that stopped or exited, as
``halt``, ``resume(until_stop=True)``, ``wait_stop`` and the other run
control calls of :class:`dbgctl.Session` return it: the dict the daemon
sent, with its members also as attributes.
"""

__all__ = ["Stop", "target_record"]

#: The target states a Stop is made for.
STOPPED = ("stopped", "exited")


class Stop(dict):
    """A target record of state ``stopped`` or ``exited``: the dict as the
    daemon sent it (``state``, ``seq``, ``stop`` ...), with attributes.

    ``seq`` is the record's number in its session; pass it as ``after``
    to :meth:`Session.wait_stop` or :meth:`Session.wait_fault` to wait
    for what comes after it.  ``reason`` (``"breakpoint-hit"``,
    ``"signal-received"``, ``"end-stepping-range"``, ``"function-finished"``,
    ``"reset"``, ``"exited-normally"``...), ``bkptno`` (an int, for a
    breakpoint hit), ``signal``, ``func``, ``file``, ``line``, ``addr``,
    ``thread``, ``frame`` and ``by`` (``"target"``, ``"halt"``,
    ``"dbgctl"`` or ``"reset"``) come from the record's ``stop``; a member
    the record lacks is ``None``.  ``exited`` is true for a target that
    exited, whose ``exit_code`` (a string, as gdb says it) is then set.
    ``already`` is true when a ``halt`` found the target stopped already.
    """

    def __init__(self, record=(), already=False):
        """A Stop holding the members of ``record``, a target record."""
        super().__init__(record)
        self.already = bool(already)

    def __repr__(self):
        """``Stop({...})``: the record, named as a Stop."""
        return "Stop(%s)" % dict.__repr__(self)

    def _member(self, name):
        """A member of the record's stop, else of the record itself."""
        stop = self.get("stop")
        if isinstance(stop, dict) and stop.get(name) is not None:
            return stop[name]
        return self.get(name)

    @property
    def state(self):
        """``"stopped"`` or ``"exited"``."""
        return self.get("state")

    @property
    def seq(self):
        """The record's number in its session (an int), or ``None``."""
        return self.get("seq")

    @property
    def exited(self):
        """Whether the target exited rather than stopped."""
        return self.get("state") == "exited"

    @property
    def exit_code(self):
        """The exit code of a target that exited (a string), or ``None``."""
        return self.get("exit_code")

    @property
    def reason(self):
        """Why it stopped (gdb's reason), or why it exited."""
        return self._member("reason")

    @property
    def bkptno(self):
        """The number of the breakpoint it stopped at (an int), or None."""
        n = self._member("bkptno")
        if isinstance(n, str) and n.isdigit():
            return int(n)
        return n

    @property
    def signal(self):
        """The signal it stopped on (``"SIGINT"``), or ``None``."""
        return self._member("signal")

    @property
    def func(self):
        """The function it stopped in, or ``None``."""
        return self._member("func")

    @property
    def file(self):
        """The source file it stopped in, or ``None``."""
        return self._member("file")

    @property
    def line(self):
        """The source line it stopped at (an int), or ``None``."""
        return self._member("line")

    @property
    def addr(self):
        """The address it stopped at (``"0x..."``), or ``None``."""
        return self._member("addr")

    @property
    def thread(self):
        """The thread that stopped, as gdb numbers it, or ``None``."""
        return self._member("thread")

    @property
    def frame(self):
        """The frame it stopped in (``func``, ``file``, ``line``,
        ``addr``), or ``None``."""
        return self._member("frame")

    @property
    def by(self):
        """Who stopped it: ``"target"``, ``"halt"``, ``"dbgctl"`` or
        ``"reset"``; ``None`` when the record does not say."""
        return self._member("by")


def target_record(record, already=False):
    """A :class:`Stop` for a stopped or exited target record; any other
    record (running, unknown) as the plain dict it is."""
    if isinstance(record, dict) and record.get("state") in STOPPED:
        return Stop(record, already=already)
    return record
