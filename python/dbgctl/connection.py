"""The socket to the daemon: where it is (:func:`default_socket`), a
connection over a Unix socket or TCP, a daemon started on demand as
dbgctl(1) starts one, and the next daemon's socket after one was lost."""

import errno
import glob
import os
import shutil
import socket
import subprocess
import time

from .errors import ConnectionLost, Error, hide_frames

# Under pytest, a failed call's traceback ends at the caller's line.
__tracebackhide__ = hide_frames

#: Seconds to wait for a socket bound by another process to listen.
BOUND_WAIT = 5.0

#: Seconds to wait for an auto-started daemon's socket.
AUTOSTART_TIMEOUT = 10.0

#: Seconds a client waits for the next daemon after losing its own, unless
#: ``DBGCTLD_ADOPT_GRACE`` (the sessions' own wait) or ``reconnect`` says.
RECONNECT_GRACE = 30.0

#: Seconds between two connects while the next daemon comes up.
RECONNECT_NAP = 0.02

#: Seconds from a start of the next daemon that failed to the next try.
START_AGAIN = 0.5


def default_socket():
    """The daemon's socket path, by the rules of dbgctl(1).

    ``DBGCTL_SOCKET``, else ``$XDG_RUNTIME_DIR/dbgctl/sock``, else
    ``/tmp/dbgctl-UID/sock``.
    """
    path = os.environ.get("DBGCTL_SOCKET")
    if path:
        return path
    run = os.environ.get("XDG_RUNTIME_DIR")
    if run:
        return os.path.join(run, "dbgctl", "sock")
    return "/tmp/dbgctl-%d/sock" % os.getuid()


def _daemon_path():
    """The dbgctld to start: ``DBGCTL_DAEMON``, else the one on PATH."""
    path = os.environ.get("DBGCTL_DAEMON")
    if path:
        return path
    return shutil.which("dbgctld") or "dbgctld"


def _read_token(path):
    """The token a TCP hello presents: the first line of ``path``, else
    of ``DBGCTL_TOKEN_FILE``."""
    path = path or os.environ.get("DBGCTL_TOKEN_FILE")
    if not path:
        raise ValueError("a TCP connection needs token_file "
                         "(or DBGCTL_TOKEN_FILE)")
    with open(path, encoding="utf-8") as f:
        return f.readline().rstrip("\r\n")


def _socket_tcp(address):
    """A blocking TCP connection to ``address``, bounded in its connect."""
    s = socket.create_connection(address, timeout=AUTOSTART_TIMEOUT)
    s.settimeout(None)
    return s


def _try_unix(path):
    """One connect to the Unix socket ``path``, raising its OSError."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError:
        s.close()
        raise
    return s


def _socket_bound(path):
    """Whether some process has a socket bound at ``path`` (from
    /proc/net/unix): one that refuses connections then is about to
    listen, as a socket-activating manager's is between bind and listen,
    not a dead daemon's."""
    try:
        with open("/proc/net/unix") as f:
            next(f, None)
            for line in f:
                cols = line.split(None, 7)
                if len(cols) == 8 and cols[7].rstrip("\n") == path:
                    return True
    except OSError:
        pass
    return False


def _socket_unix(path, autostart):
    """Connect to the daemon at ``path``, waiting while a socket there is
    bound but not listening yet, else starting one if ``autostart``."""
    deadline = time.monotonic() + BOUND_WAIT
    while True:
        try:
            return _try_unix(path)
        except OSError as e:
            refused = e.errno == errno.ECONNREFUSED
            if refused and _socket_bound(path):
                # Bound by a process that is about to listen: no daemon
                # of ours may start beside it.
                if time.monotonic() >= deadline:
                    raise Error("connect %s: bound but not listening "
                                "after %g s" % (path, BOUND_WAIT)) from e
                time.sleep(0.01)
                continue
            if not autostart or e.errno not in (errno.ENOENT,
                                                errno.ECONNREFUSED):
                raise Error("connect %s: %s" % (path, e.strerror)) from e
            return _autostart(path)


def _autostart(path):
    """Start dbgctld on ``path`` and connect, as dbgctl(1) does."""
    daemon = _daemon_path()
    deadline = time.monotonic() + AUTOSTART_TIMEOUT
    said = b""
    try:
        # The daemon's first process exits once the socket listens, or
        # non-zero when another daemon holds the start lock: either way,
        # connecting is what tells.
        proc = subprocess.run([daemon, "--listen", "unix:" + path],
                              stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE,
                              start_new_session=True,
                              timeout=AUTOSTART_TIMEOUT)
        said = proc.stderr or b""
    except OSError as e:
        raise Error("cannot start the daemon: %s: %s"
                    % (daemon, e.strerror)) from e
    except subprocess.TimeoutExpired as e:
        said = e.stderr or b""
    delay = 0.005
    while True:
        try:
            return _try_unix(path)
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ECONNREFUSED) or \
                    time.monotonic() >= deadline:
                msg = "could not start a daemon at %s" % path
                text = said.decode(errors="replace").strip()
                if text:
                    msg += ": " + text
                raise Error(msg) from e
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _reconnect_bound(reconnect):
    """The seconds to wait for the next daemon: ``reconnect``, else
    ``DBGCTLD_ADOPT_GRACE``'s (the sessions wait that long), else 30."""
    if reconnect is not None:
        return max(0.0, float(reconnect))
    try:
        grace = float(os.environ.get("DBGCTLD_ADOPT_GRACE", ""))
    except ValueError:
        grace = 0.0
    return grace if grace > 0 else RECONNECT_GRACE


def _sessions_wait(path):
    """Whether sessions of a daemon that died wait at ``path`` for the
    next one: their keepers' sockets, ``PATH.kID.N``, beside it."""
    return any(os.path.basename(p).startswith(os.path.basename(path) + ".k")
               for p in glob.glob(glob.escape(path) + ".k*"))


def _socket_again(path, bound):
    """Connect to the next daemon at ``path`` after one was lost: start
    it when sessions wait to be adopted (again, ``START_AGAIN`` seconds
    after a start that failed), else wait for one a service manager
    starts while it has the socket bound; raises :class:`ConnectionLost`
    when none can come or none came in time."""
    deadline = time.monotonic() + bound
    next_start = 0.0
    while True:
        try:
            return _try_unix(path)
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ECONNREFUSED):
                raise ConnectionLost("lost connection to the daemon; "
                                     "connect %s: %s"
                                     % (path, e.strerror)) from e
        waiting, bound_now = _sessions_wait(path), _socket_bound(path)
        if not waiting and not bound_now:
            raise ConnectionLost("lost connection to the daemon, and no "
                                 "session waits for another one at %s"
                                 % path)
        # A start fails while the dead daemon's lock or socket is still
        # being let go of (its exit, on a loaded machine): tried again.
        if waiting and not bound_now and time.monotonic() >= next_start:
            next_start = time.monotonic() + START_AGAIN
            try:
                return _autostart(path)
            except Error:
                pass    # a service manager's daemon may still come
        if time.monotonic() >= deadline:
            raise ConnectionLost("lost connection to the daemon, and no "
                                 "daemon came back at %s within %g s"
                                 % (path, bound))
        time.sleep(RECONNECT_NAP)
