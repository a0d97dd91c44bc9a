"""The reading side of a :class:`dbgctl.Client`'s connection: the reader
thread that matches each reply to its call, the notifications it holds for
:meth:`Client.notifications` within their bound (dropping the oldest when a
call is stuck behind them), and the connection's end for every call
waiting."""

import json
import socket
import threading
import time

from .errors import ConnectionLost, Error, ProtocolError, from_reply, \
    hide_frames

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

#: Bytes of the longest line the daemon sends, not counting its CR LF
#: (dbgctl-protocol(7): replies and notifications alike stay within it).
LINE_MAX = 1024 * 1024

#: Seconds a call waits behind a full queue that no one takes from before
#: the reader reads on to its reply, dropping the oldest notifications.
STALL_WAIT = 0.5

#: The method of the notice that counts notifications the client dropped.
DROPPED = "dbgctl.dropped"


def _line_body(line):
    """The length of a line read, without its LF and the CR before it."""
    n = len(line)
    if line.endswith(b"\n"):
        n -= 1
        if line.endswith(b"\r\n"):
            n -= 1
    return n


def _data_bytes(text):
    """The length of the bytes a base64 string holds."""
    if not isinstance(text, str):
        return 0
    return len(text) // 4 * 3 - len(text[-2:]) + len(text[-2:].rstrip("="))


class _Dropped:
    """The notice of notifications the client dropped, oldest first: how
    many, their bytes, and the span of output each session and stream
    lost (output notices of the daemon's among them), for logs."""

    __slots__ = ("count", "bytes", "spans")

    def __init__(self):
        self.count = 0
        self.bytes = 0
        self.spans = {}

    def add(self, msg, size):
        """Count one dropped notification of ``size`` bytes."""
        self.count += 1
        self.bytes += size
        params = msg.get("params")
        if not isinstance(params, dict):
            return
        offset = params.get("offset")
        if msg.get("method") == "session.output":
            n = _data_bytes(params.get("data"))
        elif msg.get("method") == "session.output.dropped":
            n = params.get("bytes")
        else:
            return
        if not isinstance(offset, int) or not isinstance(n, int):
            return
        key = (params.get("session"), params.get("stream", "console"))
        span = self.spans.setdefault(key, [offset, offset])
        span[1] = max(span[1], offset + n)

    def message(self):
        """The notice, as a notification of the daemon's looks."""
        output = [{"session": k[0], "stream": k[1], "offset": v[0],
                   "bytes": v[1] - v[0]} for k, v in self.spans.items()]
        return {"jsonrpc": "2.0", "method": DROPPED,
                "params": {"notifications": self.count,
                           "bytes": self.bytes, "output": output}}


class Reader:
    """What a :class:`dbgctl.Client` reads: its reader thread, the replies
    it hands to their calls and the notifications it holds (a mixin of
    Client, whose state it shares)."""

    def _read_loop(self):
        """Read the daemon's lines until the connection ends; whatever
        stops it (the daemon's close, a line it cannot take, a failure of
        its own) ends every waiting call through _end."""
        f = self._sock.makefile("rb")
        lost = None
        try:
            while self._room():
                # Read no more than a line may hold: a longer one is never
                # held whole, however long it goes on.
                line = f.readline(LINE_MAX + 2)
                if not line:
                    break
                size = len(line)
                if _line_body(line) > LINE_MAX:
                    raise ProtocolError(
                        "the daemon sent a line over the protocol's limit "
                        "of %d bytes; the connection was closed" % LINE_MAX)
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                except RecursionError:
                    raise ProtocolError(
                        "the daemon sent JSON nested too deep to parse; "
                        "the connection was closed") from None
                except ValueError:
                    continue
                self._dispatch(msg, size)
        except ProtocolError as e:
            lost = e
        except (OSError, ValueError) as e:
            lost = e
        except Exception as e:
            # A failure of the reader itself must still end every call.
            lost = ProtocolError("the client could not take the daemon's "
                                 "reply (%s: %s); the connection was closed"
                                 % (type(e).__name__, e))
        finally:
            try:
                f.close()
            except OSError:
                pass
        gen = self._generation
        self._end(lost)
        # Leases wait only their grace: reconnect now to claim them, not
        # at the next call, which may come too late.
        if self._leases and self._reconnect and not self._closed and \
                isinstance(self._lost, ConnectionLost):
            threading.Thread(target=self._keep_leases, args=(gen,),
                             name="dbgctl-leases", daemon=True).start()

    def _full(self):
        """Whether the notifications held reach the bound (lock held)."""
        held = len(self._notes) + (self._dropped is not None)
        return held >= self.max_notifications or \
            self._note_bytes >= self.max_notification_bytes

    def _stuck(self, now):
        """Whether a call waits behind a full queue that no one else will
        take from (lock held): every thread taking notifications waits
        for a reply itself, or none has taken one for STALL_WAIT."""
        waiting = self._waiting()
        if not waiting:
            return False
        if all(t in waiting for t in self._takers.values()):
            return True
        return now - self._taken_at >= STALL_WAIT

    def _waiting(self):
        """The threads waiting for replies (lock held)."""
        return {slot.thread for slot in self._pending.values()
                if slot.thread is not None}

    def _room(self):
        """Wait, before reading a line, while the notifications held are
        at the bound, so that the daemon's flow control applies, unless a
        call is stuck behind them; false once the client is closed."""
        with self._state:
            while not self._closed and self._full():
                now = time.monotonic()
                if self._stuck(now):
                    break
                wait = None
                if self._waiting():
                    wait = max(0.0, self._taken_at + STALL_WAIT - now)
                self._state.wait(wait)
            return not self._closed

    def _dispatch(self, msg, size=0):
        """Hand a message read (a batch's, one by one) to its place: a
        notification to the queue, a reply to its call, an error without
        an id to every call waiting."""
        if isinstance(msg, list):
            for m in msg:
                self._dispatch(m, size // max(len(msg), 1))
            return
        if not isinstance(msg, dict):
            return
        if "id" not in msg:
            self._hold(msg, size)
            return
        rid = msg["id"]
        if not isinstance(rid, (int, float, str, type(None))):
            raise ProtocolError("the daemon sent a reply whose id is %s, "
                                "not a number or string; the connection "
                                "was closed" % type(rid).__name__)
        if rid is None:
            if "error" in msg:
                self._answer_all(msg)
            return
        with self._state:
            self._cause = None
            slot = self._pending.pop(rid, None)
        if slot is not None:
            self._note_lease(msg)
            slot.reply = msg
            slot.event.set()

    def _note_lease(self, msg):
        """Keep the lease token of a launch's answer, whoever waits for
        it (a launch sent with ``wait=False`` too), for a reconnect."""
        res = msg.get("result")
        if isinstance(res, dict) and isinstance(res.get("id"), int) and \
                isinstance(res.get("lease_token"), str):
            self._leases[res["id"]] = res["lease_token"]

    def _answer_all(self, msg):
        """Take an error without an id (a limit, no descriptors, a reply
        the daemon could not send) as the answer of every call waiting: of
        the one it belongs to when one waits, of all when several do, as
        it cannot tell which. None waits any longer, and nothing of it
        stays to fail later calls, unless the daemon closes the
        connection next: then it is why."""
        with self._state:
            self._cause = msg["error"]
            slots = list(self._pending.values())
            self._pending.clear()
        for slot in slots:
            slot.reply = msg
            slot.event.set()

    def _hold(self, msg, size):
        """Queue a notification for notifications(); at the bound (when a
        call is stuck behind it) drop the oldest instead, counted in the
        dropped notice that comes before the rest."""
        with self._state:
            self._cause = None
            while self._full() and self._notes:
                old, old_size = self._notes.popleft()
                self._note_bytes -= old_size
                self._drop(old, old_size)
            if self._full():
                self._drop(msg, size)
            else:
                self._notes.append((msg, size))
                self._note_bytes += size
            self._state.notify_all()

    def _drop(self, msg, size):
        """Count one notification dropped in the notice (lock held)."""
        if self._dropped is None:
            self._dropped = _Dropped()
        self._dropped.add(msg, size)

    def _take(self, timeout):
        """The next notification, oldest first, waiting up to ``timeout``
        seconds; None when none came or the connection has ended (lock
        held). Taking one lets a paused reader go on."""
        if not self._state.wait_for(lambda: self._notes or self._dropped
                                    or self._ended, timeout):
            return None
        if self._dropped is not None:
            msg, self._dropped = self._dropped.message(), None
        elif self._notes:
            msg, size = self._notes.popleft()
            self._note_bytes -= size
        else:
            return None
        self._taken_at = time.monotonic()
        self._state.notify_all()
        return msg

    def _end(self, cause):
        """End the connection for every call waiting and every later one,
        with why: the close, a line the client could not take (cause, a
        ProtocolError), the daemon's last error, or ssh's words."""
        refused = isinstance(cause, ProtocolError)
        if refused:
            # Nothing more is read: the daemon (or ssh) must see the close,
            # its leases end, and a send must fail rather than wait.
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        # Over ssh, why it ended is ssh's to say, once it has exited: found
        # before taking the lock, as ssh may take a moment.
        link = None
        if self._ssh is not None and not self._closed and not refused:
            link = self._ssh.error()
        with self._state:
            if self._lost is None:
                if self._closed:
                    self._lost = Error("the connection was closed")
                elif refused:
                    self._lost = cause
                elif self._cause is not None:
                    self._lost = from_reply(self._cause)
                elif link is not None:
                    self._lost = link
                else:
                    self._lost = ConnectionLost(
                        "the daemon closed the connection"
                        + (": %s" % cause if cause else ""))
            slots = list(self._pending.values())
            self._pending.clear()
            self._ended = True
            self._state.notify_all()
        for slot in slots:
            slot.lost = self._lost
            slot.event.set()
