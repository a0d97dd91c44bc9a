"""The run control of a gdb-family :class:`dbgctl.Session`: halt, resume
and steps, breakpoints, expressions, memory, live watches and RTT,
registers, reset and load, and the waits for the target's next stop or
fault."""

import base64
import os

from .errors import Error, hide_frames
from .request import MARGIN, _ms
from .stop import target_record

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames


class Frames(list):
    """A backtrace's frames, innermost first; ``more`` is true when the
    stack goes on past them (past the limit asked)."""

    def __init__(self, frames, more):
        super().__init__(frames)
        self.more = more


class RunControl:
    """The run control verbs of a :class:`dbgctl.Session` (a mixin of
    Session, whose requests they are; see :class:`Session`)."""

    def _verb(self, method, params=None, timeout=None, default=10.0):
        """Send a run control request whose ``timeout`` (seconds; ``None``:
        ``default``, the daemon's own) bounds the daemon's work, and wait
        for its answer that long plus a margin."""
        p = dict(params or {})
        p["timeout"] = _ms(timeout)
        bound = timeout if timeout is not None else default
        return self._call(method, p, timeout=bound + MARGIN)

    def wait_target(self, state="stopped", timeout=10.0, after=None):
        """Wait until the debugged target is in ``state``; return its
        record.

        ``state`` is ``"stopped"`` (the default), ``"running"``,
        ``"exited"`` or ``"any"``.  Without ``after``, the current record
        if it is in ``state``, else the first later one; with ``after`` (a
        ``seq``, as :attr:`target_seq` or a :class:`Stop` gives it), the
        first record numbered above it that is in ``state``, so a stop
        from before is never taken for a new one.  A target that exits
        satisfies a wait for ``"stopped"``.  The daemon's transient
        records (its own halts to serve a verb) are skipped.  A stopped or
        exited target's record comes as a :class:`Stop`, any other as a
        dict.

        The daemon waits, on this Session's connection.  Raises
        :class:`Timeout` after ``timeout`` seconds and :class:`Error` of
        kind ``not_running`` if the session ends first, both with the
        current record in ``target``; kind ``not_supported`` for a session
        with no debugged target (``exec``, ``lldb``).
        """
        res = self._verb("wait_target", {"state": state, "after": after},
                         timeout)
        return target_record(res)

    def wait_stop(self, after=None, timeout=10.0):
        """Wait for the target to stop (or exit) after record ``after``;
        return the :class:`Stop`.  :meth:`wait_target` for ``"stopped"``:
        ``after=None`` takes the current stop if the target is stopped."""
        return self.wait_target("stopped", timeout=timeout, after=after)

    def wait_fault(self, after=None, timeout=20.0):
        """Wait for the session's fault record; return it, as soon as the
        daemon has gathered it.

        Without ``after``, the current fault if there is one, else the
        next; with ``after`` (a target ``seq``), the first fault gathered
        at a stop numbered above it, so the fault of an earlier test is
        never taken again (a reset or a load also clears the current one;
        ``faults`` in :meth:`status` keeps the last 16).  The record has
        ``seq`` (its stop's) and ``time``.  Raises :class:`Timeout` after
        ``timeout`` seconds, and errors as :meth:`wait_target`.
        """
        return self._verb("wait_fault", {"after": after}, timeout,
                          default=20.0)

    @property
    def target_seq(self):
        """The ``seq`` of the session's current target record (from
        :meth:`status`): pass it as ``after`` to wait for what comes
        next.  0 for a session whose status has none."""
        target = self.status().get("target") or {}
        return target.get("seq", 0)

    @property
    def faults(self):
        """The last fault records of the session, oldest first (``[]``
        when none)."""
        return self.status().get("faults") or []

    def halt(self, timeout=10.0):
        """Interrupt the running target; return the :class:`Stop` (``by``
        ``"halt"``).  A target stopped already is answered with its
        current record and ``already`` true.  Raises :class:`Timeout`
        (with ``target``) when it did not stop within ``timeout`` seconds.
        """
        res = self._verb("halt", timeout=timeout)
        return target_record(res.get("target"), already=res.get("already"))

    def resume(self, how="continue", until_stop=False, location=None,
               timeout=10.0, halt_on_timeout=False):
        """Resume the target; return the record it left.

        ``how`` is ``"continue"`` (the default), ``"step"``, ``"next"``,
        ``"finish"``, ``"until"`` (to ``location``, then required),
        ``"stepi"`` or ``"nexti"``.  Without ``until_stop``, the
        ``running`` record (a dict) once gdb has resumed it.  With
        ``until_stop=True``, the :class:`Stop` of the first stop (or exit)
        after the resume, never one from before it, however fast it
        comes: there is no window between resuming and waiting.

        ``timeout`` (seconds) bounds the whole call; at it
        :class:`Timeout` is raised with the current record in ``target``
        and the target left running, or halted first with
        ``halt_on_timeout=True`` (``target`` is then that stop).  A target
        that exited, or native gdb's before ``run``, raises :class:`Error`
        of kind ``not_running``.
        """
        res = self._verb("resume", {
            "how": how, "location": location,
            "until_stop": True if until_stop else None,
            "halt_on_timeout": True if halt_on_timeout else None}, timeout)
        return target_record(res.get("target"), already=res.get("already"))

    def step(self, timeout=10.0):
        """Step one source line, into calls; return the :class:`Stop`."""
        return self.resume("step", until_stop=True, timeout=timeout)

    def next(self, timeout=10.0):
        """Step one source line, over calls; return the :class:`Stop`."""
        return self.resume("next", until_stop=True, timeout=timeout)

    def finish(self, timeout=10.0):
        """Run until the current function returns; return the
        :class:`Stop`."""
        return self.resume("finish", until_stop=True, timeout=timeout)

    def break_insert(self, location, condition=None, temporary=False,
                     hardware=False, timeout=None):
        """Insert a breakpoint at ``location`` (``"uart_putc"``,
        ``"board.c:41"``, ``"*0x1f4"``); return gdb's breakpoint record as
        a dict of MI's strings (``number``, ``func``, ``file``, ``line``,
        ``addr``, ``times``...).  A running target is halted for it and
        resumed.  Raises :class:`DebuggerError` with gdb's message for a
        location gdb refuses."""
        res = self._verb("break", {
            "action": "insert", "location": location,
            "condition": condition,
            "temporary": True if temporary else None,
            "hardware": True if hardware else None}, timeout)
        return res["breakpoint"]

    def break_list(self, timeout=None):
        """Every breakpoint of the session, as gdb lists them; the
        session's own fault breakpoints have ``internal`` true."""
        return self._verb("break", {"action": "list"},
                          timeout)["breakpoints"]

    def break_delete(self, *numbers, timeout=None):
        """Delete the breakpoints ``numbers`` (str or int), or with none
        every user breakpoint; return the numbers deleted.  The session's
        fault breakpoints are never deleted: naming one raises
        :class:`Error` of kind ``invalid_params``."""
        return self._verb("break", {
            "action": "delete",
            "numbers": list(numbers) if numbers else None},
            timeout)["deleted"]

    def eval(self, expression, timeout=None):
        """The value of ``expression`` in the target, as gdb prints it (a
        str, such as ``"42"``)."""
        return self._verb("eval", {"expression": expression},
                          timeout)["value"]

    def read_memory(self, address, length, timeout=None, live=False):
        """``length`` bytes of the target's memory from ``address`` (an
        int, or an expression such as ``"&counter"``).  A running target
        is halted for the read and resumed, unless ``live``: then the qemu
        kind reads while it runs (shared RAM or QMP), never halting it,
        and other kinds halt and resume as without (dbgctl-protocol(7),
        memory)."""
        res = self._verb("memory", {"action": "read", "address": address,
                                    "length": length,
                                    "live": True if live else None},
                         timeout)
        return base64.b64decode(res.get("base64") or "")

    def write_memory(self, address, data, timeout=None, live=False):
        """Write ``data`` (bytes) to the target's memory at ``address``;
        return the number of bytes written.  ``live`` as for
        :meth:`read_memory`: only a machine whose RAM the daemon shares
        (mps2-an385, ...) takes a live write, inside that RAM."""
        res = self._verb("memory", {
            "action": "write", "address": address,
            "data": {"base64": base64.b64encode(bytes(data)).decode()},
            "live": True if live else None},
            timeout)
        return res.get("length", len(data))

    def watch(self, *expressions, hz=None, timeout=None):
        """Sample ``expressions`` (names of variables: ``"counter"``,
        ``"state.ticks"``) ``hz`` times a second (the daemon's default 10;
        at most 1000 through shared RAM, 200 through QEMU's monitor) while
        the target runs, never halting it; return a
        :class:`dbgctl.watch.Watch`, an iterator of samples and a context
        manager that stops the watch.  gdb resolves each expression once;
        one that is not an lvalue, or of a type watch does not decode,
        raises :class:`Error` of kind ``invalid_params``.  Only the qemu
        kind has live memory to watch (dbgctl-protocol(7), watch)."""
        from .watch import Watch
        return Watch(self, self._verb("watch", {
            "expressions": list(expressions), "hz": hz}, timeout))

    def rtt(self, channel=0, poll_hz=None, address=None, timeout=None):
        """RTT channel ``channel`` of the running target, as a
        :class:`dbgctl.rtt.Rtt` with ``expect``/``read``/``write`` like the
        target's UART.  The first call starts RTT: the daemon finds the
        control block at ``address`` (a number or an expression), else at
        the symbol ``_SEGGER_RTT``, else by its id in RAM, and polls it
        ``poll_hz`` times a second (100 by default, at most 1000) over the
        shared RAM, never halting the target (the qemu kind on machines
        such as mps2-an385; dbgctl-protocol(7), rtt).  A later call with
        ``poll_hz`` changes the rate.  Raises :class:`Error`
        (``invalid_params``) when the control block has no such up-channel.
        """
        from .rtt import Rtt
        res = self._verb("rtt", {"poll_hz": poll_hz, "address": address},
                         timeout)
        up = res.get("up") or []
        if not 0 <= channel < len(up):
            raise Error("session %s's RTT control block has %d up-channel%s;"
                        " %d is not one" % (self.id, len(up),
                                            "" if len(up) == 1 else "s",
                                            channel),
                        kind="invalid_params")
        return Rtt(self, channel, up[channel])

    def registers(self, *names, timeout=None):
        """The target's registers as ``{name: value}``, by the names gdb
        gives them on this architecture (``pc``, ``sp``, ``xpsr``, ``rip``
        ...), integer registers in hex; ``names`` picks some.  An unknown
        name raises :class:`Error` of kind ``invalid_params`` that lists
        the target's."""
        return self._verb("registers", {
            "names": list(names) if names else None}, timeout)["registers"]

    def where(self, timeout=None):
        """The halted target's current frame, ``{"func", "file", "line",
        "addr"}`` as far as gdb knows them.  It halts nothing: a running
        target raises :class:`Error` of kind ``not_ready``."""
        return self._verb("where", None, timeout)["frame"]

    def backtrace(self, limit=None, timeout=None):
        """The halted target's frames, innermost first, each ``{"level",
        "func", "file", "line", "addr"}`` as a fault record's; at most
        ``limit`` (the daemon's 64 unless given), and a list that was cut
        there has ``more`` true.  It halts nothing, as :meth:`where`."""
        res = self._verb("backtrace", {"limit": limit}, timeout)
        return Frames(res["frames"], res["more"])

    def threads(self, timeout=None):
        """The halted target's threads in gdb's order, each ``{"id",
        "target_id", "name", "state", "current", "frame"}`` as far as gdb
        knows them, ``frame`` as :meth:`where` answers it.  It halts
        nothing, as :meth:`where`."""
        return self._verb("threads", None, timeout)["threads"]

    def reset(self, halt=False, timeout=None):
        """Reset the target by its kind's recipe (or the launch's
        ``reset_commands``) and clear the fault record.

        Returns the answer: ``target``, the record it left (a
        :class:`Stop` with reason ``"reset"`` when ``halt``, else the
        ``running`` record) and ``fault_cleared`` (whether there was a
        fault record to clear; absent when native gdb ran the program
        again).  A kind with no recipe raises :class:`Error` of kind
        ``not_supported``.
        """
        res = self._verb("reset", {"halt": True if halt else None}, timeout)
        res["target"] = target_record(res.get("target"))
        return res

    def load(self, path=None, timeout=60.0, halt=False):
        """Write a program to the target (``path``, another build, or by
        default the session's own), then reset it, as :meth:`reset` does.

        Returns the answer: ``target``, ``file`` and ``fault_cleared``.
        A session that runs a host program (native gdb) raises
        :class:`Error` of kind ``not_supported``.
        """
        res = self._verb("load", {
            "file": os.path.abspath(path) if path is not None else None,
            "halt": True if halt else None}, timeout, default=60.0)
        res["target"] = target_record(res.get("target"))
        return res
