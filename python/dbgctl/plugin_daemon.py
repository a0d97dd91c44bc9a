"""The pytest plugin's private dbgctld: its binary, its start under the
lifeline in a directory of its own, the first connection to it, and its
shutdown (:func:`private_daemon`, which rigs may use too)."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from .client import Client
from .errors import Error

#: Seconds a private daemon has to start listening.
START_TIMEOUT = 10.0

#: The longest socket path put under basetemp (sun_path holds 108 bytes).
SOCKET_PATH_MAX = 100

#: The watcher a private daemon runs under (see its docstring).
LIFELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "lifeline.py")


def _daemon_binary(opt):
    """The dbgctld a private daemon runs, from ``--dbgctl`` or PATH."""
    if opt and os.path.isdir(opt):
        opt = os.path.join(opt, "dbgctld")
    path = opt or shutil.which("dbgctld")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("dbgctl: no dbgctld binary (%s); give --dbgctl PATH"
                    % (opt or "not in PATH"), pytrace=False)
    return path


def _socket_dir(tmp):
    """Where the socket goes: ``tmp``, unless the path would be too long
    for a Unix socket, as under a deep basetemp; then a short directory
    of its own (the caller removes it)."""
    if len(os.path.join(tmp, "sock").encode()) <= SOCKET_PATH_MAX:
        return tmp, None
    short = tempfile.mkdtemp(prefix="dbgctl-")
    return short, short


def _start(binary, tmp, argv):
    """Start dbgctld in ``tmp`` under the lifeline; return (process, socket
    path, log path, the lifeline's write end, a socket directory to
    remove)."""
    where, extra = _socket_dir(tmp)
    sock = os.path.join(where, "sock")
    run = os.path.join(where, "run")
    os.makedirs(run, mode=0o700)
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"),
               XDG_RUNTIME_DIR=run, DBGCTL_SOCKET=sock)
    # Without TERM the daemon gives its sessions TERM=dumb, so programs
    # do not colour what the report shows; a launch's env still sets it.
    env.pop("TERM", None)
    log = os.path.join(tmp, "dbgctld.log")
    r, w = os.pipe()
    try:
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable or "python3", LIFELINE, str(r), binary,
                 "--foreground", "--listen", "unix:" + sock] + list(argv),
                env=env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, pass_fds=(r,),
                start_new_session=True)
    except BaseException:
        os.close(w)
        raise
    finally:
        os.close(r)
    return proc, sock, log, w, extra


def _connect(proc, sock, log):
    """Connect to a starting daemon, bounded by START_TIMEOUT."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            return Client(socket=sock, autostart=False)
        except Error:
            if proc.poll() is not None or time.monotonic() > deadline:
                with open(log, errors="replace") as f:
                    said = f.read()[-2000:].strip()
                raise RuntimeError("dbgctl: the private dbgctld did not "
                                   "come up: %s" % (said or "no output"))
            time.sleep(0.02)


def _reap(proc, lifeline):
    """Wait for the daemon's lifeline to exit, killing it (and so the
    daemon) if it will not go, then let go of its pipe."""
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    os.close(lifeline)


def _end(client, proc, lifeline):
    """Shut a daemon down and reap it; kill it if it will not go."""
    try:
        client.shutdown()
    except (Error, OSError):
        pass
    client.close()
    _reap(proc, lifeline)


@contextlib.contextmanager
def private_daemon(binary, tmp, argv=(), keep=None):
    """Run dbgctld with its socket and state in the directory ``tmp``.

    ``argv`` is added to its command line (more ``--listen`` addresses, a
    ``--token-file``).  Yields a :class:`dbgctl.Client` on its Unix socket
    (``client.address``); on leaving, the daemon is shut down, or killed if
    it will not go.  It also goes if this process dies, and its sessions
    get ``TERM=dumb`` unless their launch's ``env`` sets it.  For rigs
    that want a daemon of their own beside the fixtures'.

    ``keep(client, socket, lifeline)``, if given, is asked on leaving
    whether the daemon stays: true when it took the lifeline (a write
    end it passes on) to end the daemon later itself.
    """
    proc, sock, log, lifeline, extra = _start(binary, tmp, argv)
    kept = False
    try:
        try:
            client = _connect(proc, sock, log)
        except BaseException:
            proc.kill()
            _reap(proc, lifeline)
            raise
        try:
            yield client
        finally:
            kept = keep is not None and keep(client, sock, lifeline)
            if kept:
                client.close()
                os.close(lifeline)
            else:
                _end(client, proc, lifeline)
    finally:
        if extra is not None and not kept:
            shutil.rmtree(extra, ignore_errors=True)
