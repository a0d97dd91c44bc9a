"""How a :class:`dbgctl.Client` on a Unix socket carries on with the next
daemon after losing its own: the calls it sends again, the new connection
with a reader of its own, and the leases claimed again on it."""

import threading
import time

from .connection import RECONNECT_NAP, _socket_again
from .errors import ConnectionLost, Error, hide_frames
from .request import SEND_LOST_WAIT

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

#: The methods a call sends again to the next daemon when the connection
#: is lost under it: those that only read or wait, and say where from
#: (``expect`` only with its ``from``, as :meth:`Session.expect` sends it).
RESUMABLE = frozenset(("logs", "wait", "status", "list", "ping", "hello",
                       "expect"))


class Reconnect:
    """What a :class:`dbgctl.Client` does when its connection is lost (a
    mixin of Client, whose state it shares; see :class:`Client`)."""

    def _keep_leases(self, gen):
        """Reconnect after connection ``gen`` was lost, for the leases
        to be claimed; a failure is the next call's to raise."""
        try:
            self._reconnect_from(gen)
        except Error:
            pass

    def _resumable(self, method, params):
        """Whether a call whose connection was lost is sent again."""
        if not self._reconnect or self._closed or method not in RESUMABLE:
            return False
        return method != "expect" or (params or {}).get("from") is not None

    def _reconnect_from(self, gen):
        """Connect to the next daemon after connection ``gen`` was lost,
        unless another thread has already, and subscribe again; raises
        :class:`ConnectionLost` if no daemon comes back within
        ``reconnect`` seconds."""
        with self._reconnect_lock:
            deadline = time.monotonic() + self._reconnect
            while self._generation == gen and not self._closed:
                self._connect_next(deadline)
                try:
                    self._claim_leases()
                    if self._subscribed:
                        self.call("subscribe", self._sub_params)
                    return
                except ConnectionLost as e:
                    # A dying daemon's socket took the connect: the next.
                    if e.final:
                        raise
                    gen = self._generation

    def _claim_leases(self):
        """Claim every lease this client holds on the new connection,
        before any call is sent again; a lease that cannot be claimed
        (its grace ran out, its session was not adopted) is forgotten: its
        session ends as its lease said.  One the daemon still sees held
        (it has not yet seen the old connection's close) is asked again,
        for ``SEND_LOST_WAIT`` seconds."""
        for sid, token in list(self._leases.items()):
            until = time.monotonic() + SEND_LOST_WAIT
            while True:
                try:
                    self.call("lease", {"session": sid, "token": token})
                except ConnectionLost:
                    raise
                except Error as e:
                    if e.kind == "busy" and time.monotonic() < until:
                        time.sleep(RECONNECT_NAP)
                        continue
                    self._leases.pop(sid, None)
                break

    def _connect_next(self, deadline):
        """Make the connection again, to the daemon that answers now at
        the socket, with a reader of its own (reconnect lock held)."""
        if self._reader.is_alive():
            self._reader.join(SEND_LOST_WAIT)
        try:
            sock = _socket_again(self.address,
                                 max(0.0, deadline - time.monotonic()))
        except ConnectionLost as e:
            # No daemon to carry on with: this call ends with why.
            e.final = True
            raise
        old = self._sock
        with self._state:
            self._sock = sock
            self._lost = None
            self._cause = None
            self._ended = False
            self._generation += 1
            self._state.notify_all()
        try:
            old.close()
        except OSError:
            pass
        self._reader = threading.Thread(target=self._read_loop,
                                        name="dbgctl-reader", daemon=True)
        self._reader.start()
